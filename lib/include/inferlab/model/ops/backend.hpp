#pragma once
// The ops of one forward pass behind one interface. Transformer::forward calls only these and does
// not know which backend runs them: the CPU backend (Eigen, and hand-written kernels tested
// against Eigen) or the CUDA backend (lib/cuda, built with -DINFERLAB_CUDA=ON).
//
// Activations are Tensors [rows, cols] of float32 in the backend's memory: host memory for the
// CPU, device memory for CUDA. KV caches allocate their storage from a backend too, so a cache
// made for the CUDA backend lives on the GPU and its attention reads it there, in place.
// Weights are named by their host views (MatMap/VecMap into Weights' one buffer); a backend
// that keeps its own copy (CUDA) maps a view to the same offset in that copy.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/model/ops/buffer.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

enum class AttentionKind {
    Plain,   // scores for every key, then one softmax
    Online,  // FlashAttention's order: key blocks, a running max and sum, rescaled partial outputs
};

// Deliberate deviations, for `inferlab model pitfall` only (the documents' warnings, shown
// failing); None everywhere else. Each changes one thing in Transformer::forward.
enum class Pitfall {
    None,
    WrongLayerCache,  // a step after history reads layer 0's K/V in every layer (first document, Figure 5)
    TopLeftMask,      // row r of a step sees positions ≤ r, as if the step began at 0 (first document, §1.3.1)
    PositionRestart,  // RoPE rotates row r by its offset within the step, restarting at 0 (cache slots stay right)
    SkippedCacheUpdate,  // a step after history neither writes the last layer's K/V nor extends its length (§4.3)
};

// What one forward pass is, on any backend: the attention's order and mask, and the deviations
// of `model pitfall`. How a backend computes it (threads, kernels, the weights' dtype) is given
// when the backend is made (CpuBackendOptions in cpu_backend.hpp), so a default-constructed
// ForwardOptions is the plain causal pass and reads nothing from the environment.
struct ForwardOptions {
    AttentionKind attention = AttentionKind::Plain;
    int online_block = 16;   // keys per block in the online form
    int window = 0;          // 0: dense; W: each query sees only the last W positions (sparse)
    Pitfall pitfall = Pitfall::None;    // model pitfall's broken paths only
    // Per row of the step: the first cache position its attention may see (a left-padded row of a
    // batch masks its padding this way; a padding row sees only itself); nullptr: 0 for every row.
    // It belongs to the pass, not the backend: like `window` it is part of this step's mask, and it
    // changes with every batch of rows, so it cannot be fixed when a backend is made. Only the CPU
    // backend implements it; the CUDA backend refuses a pass that sets it.
    const std::vector<int>* visible_from = nullptr;
};

// One row of a forward pass: a token at a position of a sequence whose cache it extends.
// Rows of the same sequence must be consecutive positions starting at the cache's length.
struct Row {
    int token = 0;
    KvCache* cache = nullptr;
};

// A row-major [rows, cols] activation in a backend's memory; resize keeps the allocation when it fits.
class Tensor {
public:
    explicit Tensor(Backend& b) : b_(&b) {}
    void resize(int rows, int cols);
    float* data() const { return buf_.data(); }
    float* row(int r) const { return buf_.data() + std::size_t(r) * std::size_t(cols_); }
    int rows() const { return rows_; }
    int cols() const { return cols_; }
    std::size_t size() const { return std::size_t(rows_) * std::size_t(cols_); }

private:
    Backend* b_;
    Buffer buf_;
    int rows_ = 0, cols_ = 0;
};

// What the attention and cache ops need to know of a step: each row's cache and position, and
// the head shapes (d, H_kv).
struct StepRows {
    const std::vector<Row>& rows;
    const std::vector<int>& pos;
    int head_dim = 0;
    int n_kv_heads = 0;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;

    // Memory: zeroed floats, and copies between the host and this backend's memory.
    virtual float* allocate(std::size_t floats) = 0;
    virtual void release(float* p, std::size_t floats) noexcept = 0;
    virtual void upload(float* dst, const float* host, std::size_t floats) = 0;
    virtual void download(float* host, const float* src, std::size_t floats) = 0;

    // x[r] = table[tokens[r]] (the token embedding).
    virtual void embed(const MatMap& table, const std::vector<int>& tokens, Tensor& x) = 0;
    // y[r] = w ⊙ x[r] / sqrt(mean(x[r]²) + eps).
    virtual void rmsnorm(const Tensor& x, const VecMap& w, float eps, Tensor& y) = 0;
    // Y [rows, out] = X [rows, in]·Wᵀ for W [out, in].
    virtual void matmul(const Tensor& x, const MatMap& w, Tensor& y, const ForwardOptions& opt) = 0;
    // run.c's RoPE on each head of row r at position pos[r]: pairs (2i, 2i+1) rotated by pos·θ^(−2i/d).
    virtual void rope(Tensor& v, const std::vector<int>& pos, int head_dim, float theta) = 0;
    // Writes each row's K and V [H_kv·d] into its cache at (layer, pos[r]).
    virtual void store_kv(const Tensor& k, const Tensor& v, const StepRows& step, int layer) = 0;
    // GQA attention of each row's queries [H_q·d] over its cache's positions ≤ pos[r] (the last
    // `window` of them when window > 0), K/V read in place: query head h reads K/V head h / (H_q/H_kv).
    virtual void attention(const Tensor& q, const StepRows& step, int layer, const ForwardOptions& opt, Tensor& out) = 0;
    // a = silu(a) ⊙ b.
    virtual void swiglu(Tensor& a, const Tensor& b) = 0;
    // y += x.
    virtual void add(Tensor& y, const Tensor& x) = 0;
    // The tensor copied to a host matrix.
    virtual void to_host(const Tensor& t, MatrixRM& out) = 0;

    // Fused forms of ops that follow each other in a layer. The defaults call the ops above (the
    // CPU keeps them); a backend overrides them to save launches and passes over memory (CUDA).
    // q = rope(x·Wqᵀ), k = rope(x·Wkᵀ), v = x·Wvᵀ, RoPE at pos[r] as rope() does.
    virtual void matmul_qkv_rope(const Tensor& x, const MatMap& wq, const MatMap& wk, const MatMap& wv, Tensor& q,
                                 Tensor& k, Tensor& v, const std::vector<int>& pos, int head_dim, float theta,
                                 const ForwardOptions& opt);
    // h3 = x·W3ᵀ, h1 = silu(x·W1ᵀ) ⊙ h3.
    virtual void matmul_swiglu(const Tensor& x, const MatMap& w1, const MatMap& w3, Tensor& h1, Tensor& h3,
                               const ForwardOptions& opt);
    // x += t (the residual add), then y = rmsnorm(x) with gain w; check ≥ 0 also records x's
    // finiteness as record_finite(x, check) would (a backend that defers checks; −1: none).
    virtual void add_rmsnorm(Tensor& x, const Tensor& t, const VecMap& w, float eps, Tensor& y, int check);

    // Finiteness checks of a forward pass. A backend that queues work (CUDA) returns true from
    // defers_finite_checks(): Transformer::forward then records each check with record_finite
    // (on the device, no wait) and reads them all once, at the end of the pass, through
    // first_non_finite() (the smallest index whose tensor held NaN or inf, or −1). Otherwise it
    // checks each tensor at once on the host and names the op that failed.
    virtual bool defers_finite_checks() const { return false; }
    virtual void record_finite(const Tensor& t, int index);
    virtual int first_non_finite() { return -1; }

    // Which memory this backend's buffers live in, as an identity: backends with the same one read
    // each other's buffers and caches in place. Default: this backend's own. Every CPU backend
    // answers the host's, whatever its options, so a cache made with cpu_backend() serves a model
    // on a CPU backend with other threads, kernels or weights.
    virtual const void* memory_space() const { return this; }
};

// The CPU backend with default options (CpuBackendOptions{}: one thread, fast kernels, float32
// weights); cpu_backend.hpp makes CPU backends with other options.
Backend& cpu_backend();

// Checks that a cache's storage is in `b`'s memory (a cache in one backend's memory cannot be read
// by a backend in another).
void require_cache_on(const KvCache& cache, const Backend& b);

}  // namespace inferlab::model
