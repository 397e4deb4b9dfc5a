#pragma once
// The reference model's weight matrices at 8 or 4 bits (the first document's §4.1: weight
// precision apart from KV and training precision). Each matrix [out, in] is quantized per row in
// groups of kQGroup = 32 consecutive weights, symmetric, with one fp16 scale per group:
//   Δ = fp16(max|w| / Q), q = clip(round(w / Δ), −Q, Q), ŵ = Δ·q,  Q = 2^(b−1) − 1 (127 or 7),
// the quantize library's own quantizer (quantize_scalar, round half away from zero) and its byte
// accounting (storage_cost: elements × b / 8 + groups × 16 / 8). The decode kernels read the
// packed levels and scales directly; no float copy of a quantized matrix is made.
//
// Layout of one row: levels [in] then nothing else; scales live apart, [out, in/32] fp16.
//   int8: one signed byte per weight, in order.
//   int4: 16 bytes per group of 32; byte j holds weight j of the group in its low nibble and
//         weight j + 16 in its high nibble, each stored as q + 8 (1..15), so that a 16-byte load
//         widened to 16 lanes gives weights 0–15 (low nibbles) and 16–31 (high) in x's order.
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "inferlab/base/i18n.hpp"
#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/transformer.hpp"

#include "inferlab/calc/quant.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

constexpr int kQGroup = static_cast<int>(kWeightGroup);  // quant.hpp's weight group

enum class WeightDtype { F32, BF16, Int8, Int4 };
// fp32, bf16, int8 or int4; InputError naming `where` otherwise.
WeightDtype parse_weight_dtype(const std::string& where, const std::string& text);
std::string to_string(WeightDtype t);
unsigned weight_dtype_bits(WeightDtype t);  // 32, 16, 8, 4

// IEEE binary16 conversions (round to nearest even; the scales are finite and in range).
std::uint16_t float_to_fp16(float f);
float fp16_to_float(std::uint16_t h);

// How the int8/int4 products multiply (both read the same packed levels and fp16 scales):
//   Float:   each level widened to float32 and scaled, float32 FMAs against float32 activations.
//   Int8Dot: llama.cpp's Q8_0 way. The activations are quantized too, per group of 32 with
//            their own float32 scale d = max|x|/127 and levels round(x/d); each group's
//            Σ q_w·q_x is an exact int32 (AVX-512 VNNI vpdpbusd), and only then is it scaled by
//            Δ_w·d in float32. This moves the logits by the activations' rounding as well.
enum class QArith { Float, Int8Dot };
// Whether this CPU has AVX-512 VNNI (and F/BW/VL), which the fast Int8Dot kernel needs.
bool cpu_has_avx512_vnni();
// INFERLAB_QUANT_ARITH (float or int8) if set; otherwise Int8Dot where the CPU has VNNI and Float
// where it does not. InputError naming the variable for any other value.
QArith default_quant_arith();
// INFERLAB_QUANT_ARITH if set, else `fallback` (model check-cache: Float).
QArith quant_arith_or(QArith fallback);
std::string to_string(QArith a);

// An allocator of 64-byte (cache line) aligned storage, so that the kernels' 64-byte loads from
// the start of a buffer, and from each 64-byte step after it, never straddle two lines (measured:
// a misaligned activation buffer halved the int4 decode's speed on one thread, docs/bench-cpu.md).
template <class T>
struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <class U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t{64}); }
    template <class U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};
template <class T>
using LineVector = std::vector<T, CacheLineAllocator<T>>;

// Activations X [rows, in] quantized per group of 32 for Int8Dot: d = max|x|/127 in float32,
// q = round-half-to-even(x · (1/d)) (a group of zeros, or one so small that 1/d would overflow,
// max |x| below about 3.7e−37: d = 0, every level 0; a group holding a non-finite value: d = NaN
// and every level 0, so that it reaches the output as NaN). `in` is a multiple of 32.
struct QActivations {
    int rows = 0, in = 0;
    LineVector<std::int8_t> q;  // [rows, in]
    LineVector<float> scale;    // [rows, in/32]
};
// AVX-512 where the CPU has the Int8Dot kernels (cpu_has_avx512_vnni), else the plain loops: the
// same bytes either way.
void quantize_activations(const float* x, int rows, int in, QActivations& out);

// One quantized matrix [out, in], in % 32 == 0, pointing into QWeights' buffer.
struct QMatrix {
    int out = 0, in = 0;
    unsigned bits = 8;                   // 8 or 4
    const std::uint8_t* levels = nullptr;  // [out, in·bits/8], layout above
    const std::uint16_t* scales = nullptr; // fp16 [out, in/32]
    std::size_t row_bytes() const { return std::size_t(in) * bits / 8; }
    // Weight (r, i) as its level q (−Q..Q) and dequantized Δ·q: what the reference kernels read.
    int level(int r, int i) const;
    float dequantized(int r, int i) const;
};

// Quantizes `w` [out, in] (row-major floats) into `levels` and `scales` (sized by the caller:
// out·in·bits/8 bytes and out·in/32 fp16). InputError when in % 32 ≠ 0 or a scale does not fit fp16.
void quantize_rows(const float* w, int out, int in, unsigned bits, std::uint8_t* levels, std::uint16_t* scales, int threads);

// Every product's matrix of a model (Q, K, V, O, gate, up, down per layer; the LM head) quantized,
// found by the float matrix it replaces. The embedding table as a lookup and the RMSNorm weights
// stay float32.
class QWeights {
public:
    QWeights(const Weights& w, WeightDtype dtype, int threads = 1, QArith arith = default_quant_arith());
    WeightDtype dtype() const { return dtype_; }
    QArith arith() const { return arith_; }
    unsigned bits() const { return bits_; }
    // The quantized form of a product's matrix, by the float view's data pointer; nullptr if none.
    const QMatrix* find(const float* float_matrix) const;
    // Elements quantized and their storage (quantize's storage_cost over all of them).
    std::uint64_t elements() const { return elements_; }
    StorageCost storage() const;

private:
    WeightDtype dtype_;
    unsigned bits_;
    QArith arith_;
    HugePageBuffer mem_;   // every matrix's levels, then every matrix's scales
    std::map<const float*, QMatrix> by_float_;
    std::uint64_t elements_ = 0;
};

// The bytes of a model's product matrices at a weight dtype: quant.hpp's weight_storage, the rule
// decode-roofline and quantize --model count by.
std::uint64_t product_weight_bytes(const Dims& d, WeightDtype t);

// Whether the model's product matrices can be quantized in groups of 32 (every input width a
// multiple of 32); InputError naming `where` and the first width that is not.
void require_quantizable(const Dims& d, const std::string& where);

// A model's weights at one dtype for the CPU backend's decode products: nothing for fp32, the
// bf16 copy, or the quantized matrices. apply() points a CPU backend's options at them (call it
// on the object that stays alive: the options hold its address), for the backend made from them.
struct WeightsAt {
    WeightDtype dtype = WeightDtype::F32;
    Bf16Weights bf16;
    std::unique_ptr<QWeights> q;
    void apply(CpuBackendOptions& opt) const;
    // A CPU backend with the threads and kernels of `like` (a CPU backend) reading these weights;
    // std::logic_error for another backend (the dtypes are CPU backend options). It points here:
    // keep this object alive while the backend is used.
    std::unique_ptr<CpuBackend> cpu_backend_like(const Backend& like) const;
    // What the products do, for output (for int8/int4: which QArith ran, and why; with
    // `reference_kernels`, the plain loops of --kernels reference).
    Prose arithmetic(bool reference_kernels = false) const;
};
WeightsAt make_weights_at(const Weights& w, WeightDtype dtype, int threads, QArith arith = default_quant_arith());

namespace ref {
// quantize_activations in plain loops.
void quantize_activations(const float* x, int rows, int in, QActivations& out);
// Float: Y [rows, out] = X [rows, in] · Ŵᵀ with Ŵ = the dequantized weights, one running sum per output.
void matmul_quantized(const QMatrix& w, const float* x, int rows, float* y, int threads);
// Int8Dot: X quantized by ref::quantize_activations, then per output
//   y = Σ_g (Δ_w,g · d_g) · float(Σ_{j∈g} q_w,j · q_x,j)   (the inner sum an exact int32).
void matmul_quantized_int8dot(const QMatrix& w, const float* x, int rows, float* y, int threads);
}  // namespace ref
// The fast forms, any rows. Float: AVX-512, levels widened and scaled in registers, float32 FMAs.
void matmul_quantized(const QMatrix& w, const float* x, int rows, float* y, int threads);
// Int8Dot: AVX-512 VNNI where the CPU has it (the reference loops where it does not).
void matmul_quantized_int8dot(const QMatrix& w, const float* x, int rows, float* y, int threads);

}  // namespace inferlab::model
