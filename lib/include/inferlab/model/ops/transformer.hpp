#pragma once
// The reference transformer: a Llama-style decoder whose ops run on a Backend (the CPU, in Eigen,
// by default; CUDA with -DINFERLAB_CUDA=ON), following run.c's
// conventions (RoPE on adjacent pairs with θ = 10000, RMSNorm ε = 1e-5, d = dim / H_q).
// Per layer: RMSNorm → Q/K/V → RoPE → this layer's cache update → GQA attention read in place
// (query head h reads K/V head h / (H_q/H_kv); no concatenation, no repeat) → output projection →
// residual → RMSNorm → SwiGLU FFN → residual. Then the final RMSNorm and the LM head.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }
Bf16Weights to_bf16(const Weights& w);

// What one step did, for --trace (shapes as the first document's table writes them).
struct StepTrace {
    std::string phase;                 // "prefill" or "decode"
    std::vector<int> tokens;
    int start_pos = 0;                 // S, positions cached before the step
    std::vector<int> cache_len;        // per layer, after the step
    std::string q_shape, kv_new_shape, kv_cached_shape, scores_shape;
};

class Transformer {
public:
    // The model runs on `backend` (the CPU with default options unless given); its caches must be
    // in that backend's memory (any CPU backend's caches serve any other: cpu_backend.hpp).
    explicit Transformer(const Weights& w, Backend& backend = cpu_backend()) : w_(w), b_(backend) {}
    const Dims& dims() const { return w_.dims(); }
    const Weights& weights() const { return w_; }
    Backend& backend() const { return b_; }

    // Logits [rows, vocab] for each row; every row's K/V is appended to its cache.
    MatrixRM forward(const std::vector<Row>& rows, const ForwardOptions& opt = {}) const;
    // Convenience: several tokens of one sequence (prefill, a chunk, or draft verification).
    MatrixRM forward(const std::vector<int>& tokens, KvCache& cache, const ForwardOptions& opt = {},
                     StepTrace* trace = nullptr) const;

private:
    const Weights& w_;
    Backend& b_;
};

// The no-cache path: for each position t, recompute the whole prefix 0..t from scratch (in a
// throw-away cache on the model's backend) and keep the last row. Quadratic in length, and the
// ground truth for the cached paths.
MatrixRM logits_without_cache(const Transformer& m, const std::vector<int>& tokens, const ForwardOptions& opt = {});

// The CPU backend's products (tested against Eigen).
// y = W·x for a row-major W, rows split over threads, several accumulators per row.
void matvec(const MatMap& w, const float* x, float* y, int threads);
// Y [rows, out] = X [rows, in]·Wᵀ for a few rows (row-major X and Y), reading W once.
void matmul_few_rows(const MatMap& w, const float* x, int rows, float* y, int threads);
// Y [rows, out] = X [rows, in]·Wᵀ for many rows (a prefill) with the same tiles, W blocked to stay
// in cache. Returns false (and does nothing) where the CPU has neither AVX-512 nor AVX2 + FMA:
// use Eigen's GEMM then.
bool matmul_many_rows(const MatMap& w, const float* x, int rows, float* y, int threads);
// The same with W stored as bf16 [out, in] (converted to float32 as it is read).
void matmul_few_rows_bf16(const std::uint16_t* w, Eigen::Index out, int in, const float* x, int rows, float* y, int threads);

// What a step's rows rotate by (RoPE) and mask by (row r sees cache positions ≤ mask[r]), and the
// layer whose cache layer l reads, given each row's cache position `pos`: the positions and l
// themselves, except under the pitfall `p` (see Pitfall). The §4.3 checks of `model pitfall` read these.
std::vector<int> rope_positions(const std::vector<Row>& rows, const std::vector<int>& pos, Pitfall p);
std::vector<int> mask_positions(const std::vector<Row>& rows, const std::vector<int>& pos, Pitfall p);
int attention_layer(int layer, const std::vector<int>& pos, Pitfall p);
// False when layer l's K/V are not written this step (the SkippedCacheUpdate pitfall).
bool skips_cache_update(int layer, int n_layers, const std::vector<int>& pos, Pitfall p);

// Checks that every token id is inside the vocabulary (InputError naming `where` otherwise).
void check_tokens(const Dims& d, const std::vector<int>& tokens, const std::string& where);

}  // namespace inferlab::model
