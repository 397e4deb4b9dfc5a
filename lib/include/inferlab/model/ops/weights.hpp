#pragma once
// The reference transformer's dimensions and weights, and llama2.c's legacy checkpoint format
// (version 0): seven int32 header fields, then float32 weights in run.c's fixed order.
//
// Letters as in the documents: L layers, H_q query heads, H_kv K/V heads, d = dim / H_q.
// All weights live in one float buffer (like run.c), placed on transparent huge pages where the
// kernel allows it; the matrices below are views into it, row-major [out, in], y = W·x.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace inferlab {

struct ModelConfig;

namespace model {

using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<const MatrixRM, Eigen::Unaligned>;
using VecMap = Eigen::Map<const Eigen::VectorXf, Eigen::Unaligned>;

// Memory read once per decode step (the weights, their bf16 copy, the bandwidth probe): 2 MiB
// aligned and madvise(MADV_HUGEPAGE)'d, because this machine's transparent-huge-page mode is
// `madvise` and TLB misses on 4 KiB pages cost real bandwidth; zeroed. huge() says whether the
// kernel accepted the advice.
class HugePageBuffer {
public:
    HugePageBuffer() = default;
    explicit HugePageBuffer(std::size_t bytes);
    void* data() const { return p_.get(); }
    std::size_t bytes() const { return bytes_; }
    bool huge() const { return huge_; }

private:
    struct Free {
        void operator()(void* p) const;
    };
    std::unique_ptr<void, Free> p_;
    std::size_t bytes_ = 0;
    bool huge_ = false;
};

struct Dims {
    int dim = 0;          // model width
    int hidden_dim = 0;   // FFN width
    int n_layers = 0;     // L
    int n_heads = 0;      // H_q
    int n_kv_heads = 0;   // H_kv
    int vocab_size = 0;
    int seq_len = 0;      // S_max
    bool shared_classifier = true;  // LM head tied to the embedding
    float rope_theta = 10000.0f;    // run.c's convention
    float norm_eps = 1e-5f;         // run.c's convention
    int head_dim() const { return dim / n_heads; }       // d
    int kv_dim() const { return n_kv_heads * head_dim(); }  // H_kv·d
};

// Throws InputError naming `where` when dims are impossible (≤ 0, H_q not divisible by H_kv,
// dim not divisible by H_q, odd head width for RoPE, too large).
void validate(const Dims& d, const std::string& where);

// Dims from a Hugging Face style config (the keys kv-mem reads).
Dims dims_from_config(const ModelConfig& c);

// Whether the reference implements the config's own architecture: llama2.c's Llama (RMSNorm,
// SwiGLU, RoPE, no biases), model_type "llama". Any other dense type (gpt2's LayerNorm, GELU and
// learned positions; qwen2's biases; gemma's GeGLU) runs with only its dimensions borrowed, and
// the output must say so: its parameter count and its numbers are not that model's.
bool reference_architecture(const ModelConfig& c);

// Number of floats of each tensor, in the checkpoint's order.
std::uint64_t weight_floats(const Dims& d);

class Weights {
public:
    explicit Weights(const Dims& d);  // zeroed
    const Dims& dims() const { return d_; }

    // Views, all row-major [out, in]:
    MatMap token_embedding() const;     // [vocab, dim]
    VecMap rms_att(int l) const;        // [dim]
    MatMap wq(int l) const;             // [H_q·d, dim]
    MatMap wk(int l) const;             // [H_kv·d, dim]
    MatMap wv(int l) const;             // [H_kv·d, dim]
    MatMap wo(int l) const;             // [dim, H_q·d]
    VecMap rms_ffn(int l) const;        // [dim]
    MatMap w1(int l) const;             // [hidden, dim]  (gate)
    MatMap w2(int l) const;             // [dim, hidden]  (down)
    MatMap w3(int l) const;             // [hidden, dim]  (up)
    VecMap rms_final() const;           // [dim]
    MatMap classifier() const;          // [vocab, dim]

    float* data() { return static_cast<float*>(mem_.data()); }
    const float* data() const { return static_cast<const float*>(mem_.data()); }
    std::uint64_t floats() const { return n_; }
    std::uint64_t bytes() const { return n_ * sizeof(float); }
    bool huge_pages() const { return mem_.huge(); }
    friend std::unique_ptr<Weights> derive_draft(const Weights& target, int layers, double perturb, std::uint64_t seed);

private:
    Dims d_;
    std::uint64_t n_ = 0;
    HugePageBuffer mem_;
    // Offsets (in floats) of each tensor group.
    std::uint64_t o_emb_, o_rms_att_, o_wq_, o_wk_, o_wv_, o_wo_, o_rms_ffn_, o_w1_, o_w2_, o_w3_, o_rms_final_, o_cls_;
};

// Seeded random weights: the embedding ~ N(0, 0.02²) (GPT-2's scale), other matrices ~ N(0, 1/in)
// (so activations keep their scale), norm weights 1 + N(0, 0.1). The same seed gives the same weights on every machine.
// `progress`, when set, hears (values filled, total) every 2^24 values and at the end.
std::unique_ptr<Weights> random_weights(const Dims& d, std::uint64_t seed,
                                        const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

// A draft for speculative decoding made from a target: its first `layers` layers (embedding,
// final norm and LM head shared), every weight scaled by (1 + perturb·N(0, 1)) with `seed`.
// InputError named in the library's terms ("draft layers", "perturbation"; the caller maps them
// to its flags by InputError::where()) for layers outside 1..L or a negative perturbation.
std::unique_ptr<Weights> derive_draft(const Weights& target, int layers, double perturb, std::uint64_t seed);

// llama2.c version-0 checkpoint. read_checkpoint throws FileError/InputError on a missing,
// truncated, oversized or corrupt file (impossible header, non-finite weights); `where` names the
// file's role in those errors (a command passes its flag, "--checkpoint").
void write_checkpoint(const Weights& w, const std::string& path);
std::unique_ptr<Weights> read_checkpoint(const std::string& path, const std::string& where = "checkpoint");
// The same from a stream of `size` bytes positioned at the header; `path` names it in errors.
std::unique_ptr<Weights> read_checkpoint(std::istream& in, std::uint64_t size, const std::string& path,
                                         const std::string& where = "checkpoint");

}  // namespace model
}  // namespace inferlab
