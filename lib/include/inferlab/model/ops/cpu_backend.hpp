#pragma once
// The CPU backend and what it is made with: OpenMP threads, which kernels run (the hand-written
// AVX-512 ones or the plain reference loops, kernels.hpp) and which copy of the weights the
// products read (float32, bf16, or int8/int4 levels). These are facts about how the CPU computes,
// not about the pass, so they are fixed when the backend is made and ForwardOptions does not
// carry them:
//
//   CpuBackend reference({.threads = 2, .kernels = Kernels::Reference});
//   Transformer m(weights, reference);   // every pass of m runs the plain loops on two threads
//
// All CPU backends share the host's memory, so caches made with cpu_backend() (the default)
// serve a model on any of them.
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

class QWeights;

// bf16 copies of the weights (same offsets as the float buffer): decode reads half the bytes,
// the arithmetic stays float32.
struct Bf16Weights {
    const float* float_base = nullptr;   // Weights::data() of the model these were made from
    HugePageBuffer mem;                  // one bf16 per float, round to nearest even, on huge pages like the weights
    const std::uint16_t* data() const { return static_cast<const std::uint16_t*>(mem.data()); }
};

// Which CPU kernels run (kernels.hpp): the fast ones (AVX-512 tiles where the CPU has them) or
// the plain reference loops, on any CPU.
enum class Kernels { Fast, Reference };
// The INFERLAB_KERNELS environment variable ("fast" or "reference"; unset or empty: fast), read
// at each call; InputError naming INFERLAB_KERNELS for any other value. The library never calls
// it on its own: the app calls it once where it makes the backend (apps/model_common.cpp), and the
// tests' harness where it makes theirs.
Kernels default_kernels();

// The widest instruction set the fast kernels use: what the CPU has (AVX-512, else AVX2 + FMA,
// else the plain loops), capped by the INFERLAB_ISA environment variable: "avx512" (or unset or
// empty: no cap), "avx2" (the AVX2 kernels even on an AVX-512 CPU) or "scalar" (the plain loops
// only). A cap never adds what the CPU lacks. It lets one machine run the paths another CPU takes
// (the tests run the int8/int4 and float kernels both ways). Read once, at the first kernel call;
// InputError naming INFERLAB_ISA for another value, which the app asks first (model_common.cpp).
enum class Isa { Scalar, Avx2, Avx512 };
Isa isa_cap();
std::string to_string(Isa isa);

struct CpuBackendOptions {
    int threads = 1;                      // OpenMP threads over rows and heads
    Kernels kernels = Kernels::Fast;      // fast or reference kernels
    const Bf16Weights* bf16 = nullptr;    // products of up to 16 rows read these bf16 weights
    const QWeights* qweights = nullptr;   // every product reads these int8/int4 weights (qweights.hpp)
};

// Eigen and the kernels of kernels.hpp / transformer.hpp; stateless apart from its options, so
// one backend may serve several models and threads of the caller.
class CpuBackend final : public Backend {
public:
    explicit CpuBackend(const CpuBackendOptions& options = {});
    const CpuBackendOptions& options() const { return o_; }

    std::string name() const override { return "cpu"; }
    float* allocate(std::size_t floats) override;
    void release(float* p, std::size_t floats) noexcept override;
    void upload(float* dst, const float* host, std::size_t floats) override;
    void download(float* host, const float* src, std::size_t floats) override;
    void embed(const MatMap& table, const std::vector<int>& tokens, Tensor& x) override;
    void rmsnorm(const Tensor& x, const VecMap& w, float eps, Tensor& y) override;
    void matmul(const Tensor& x, const MatMap& w, Tensor& y, const ForwardOptions& opt) override;
    void rope(Tensor& v, const std::vector<int>& pos, int head_dim, float theta) override;
    void store_kv(const Tensor& k, const Tensor& v, const StepRows& step, int layer) override;
    void attention(const Tensor& q, const StepRows& step, int layer, const ForwardOptions& opt, Tensor& out) override;
    void swiglu(Tensor& a, const Tensor& b) override;
    void add(Tensor& y, const Tensor& x) override;
    void to_host(const Tensor& t, MatrixRM& out) override;
    const void* memory_space() const override;

private:
    CpuBackendOptions o_;
};

// The options of `b` when it is a CPU backend; nullptr for any other (CUDA, a test's wrapper).
const CpuBackendOptions* cpu_options(const Backend& b);

}  // namespace inferlab::model
