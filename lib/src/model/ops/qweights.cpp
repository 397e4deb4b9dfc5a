// Quantized weights: the quantizer, the packing, the byte accounting and the reference kernel.
// The fast kernels live with the other AVX-512 products in kernels_quant.cpp.
#include "inferlab/model/ops/qweights.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"

namespace inferlab::model {

WeightDtype parse_weight_dtype(const std::string& where, const std::string& text) {
    if (text == "fp32") return WeightDtype::F32;
    if (text == "bf16") return WeightDtype::BF16;
    if (text == "int8") return WeightDtype::Int8;
    if (text == "int4") return WeightDtype::Int4;
    throw InputError(where, text, N_("must be fp32, bf16, int8 or int4"));
}

std::string to_string(WeightDtype t) {
    switch (t) {
        case WeightDtype::F32: return "fp32";
        case WeightDtype::BF16: return "bf16";
        case WeightDtype::Int8: return "int8";
        case WeightDtype::Int4: return "int4";
    }
    return "?";
}

unsigned weight_dtype_bits(WeightDtype t) {
    switch (t) {
        case WeightDtype::F32: return 32;
        case WeightDtype::BF16: return 16;
        case WeightDtype::Int8: return 8;
        case WeightDtype::Int4: return 4;
    }
    return 0;
}

std::uint16_t float_to_fp16(float f) {
    // Normal range only (the caller checks 2^−14 ≤ |f| ≤ 65504): rebias the exponent, round the
    // 23-bit mantissa to 10 bits, ties to even; a carry out of the mantissa bumps the exponent.
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (u >> 16) & 0x8000u;
    const std::uint32_t exp = ((u >> 23) & 0xFFu) - 127u + 15u;
    std::uint32_t mant = u & 0x7FFFFFu;
    std::uint32_t h = (exp << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

float fp16_to_float(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0) {  // zero or subnormal: mant · 2^−24
        const float v = std::ldexp(static_cast<float>(mant), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp - 15u + 127u) << 23) | (mant << 13));
}

QArith default_quant_arith() { return quant_arith_or(cpu_has_avx512_vnni() ? QArith::Int8Dot : QArith::Float); }

QArith quant_arith_or(QArith fallback) {
    const char* env = std::getenv("INFERLAB_QUANT_ARITH");
    if (env && *env) {
        const std::string t = env;
        if (t == "float") return QArith::Float;
        if (t == "int8") return QArith::Int8Dot;
        throw InputError("INFERLAB_QUANT_ARITH", t, N_("must be float or int8"));
    }
    return fallback;
}

std::string to_string(QArith a) { return a == QArith::Float ? "float" : "int8"; }

namespace ref {
void quantize_activations(const float* x, int rows, int in, QActivations& out) {
    const int groups = in / kQGroup;
    out.rows = rows;
    out.in = in;
    out.q.resize(std::size_t(rows) * std::size_t(in));
    out.scale.resize(std::size_t(rows) * std::size_t(groups));
    for (int b = 0; b < rows; ++b)
        for (int g = 0; g < groups; ++g) {
            const float* v = x + std::size_t(b) * std::size_t(in) + std::size_t(g) * kQGroup;
            std::int8_t* q = out.q.data() + std::size_t(b) * std::size_t(in) + std::size_t(g) * kQGroup;
            float mx = 0;
            bool finite = true;
            for (int j = 0; j < kQGroup; ++j) {
                finite = finite && std::isfinite(v[j]);
                mx = std::max(mx, std::fabs(v[j]));
            }
            // A non-finite value: d = NaN and every level 0, so the outputs are NaN as the float
            // path's would be (an inf times a nonzero weight can be ±inf or NaN; NaN names both).
            float d = finite ? mx / 127.0f : NAN;
            // A group too small for 1/d to be a float (max |x| below about 127/FLT_MAX = 3.7e−37)
            // quantizes as a zero group: d = 0, every level 0 (else 0·(1/d) would be 0·inf = NaN).
            if (finite && !(d > 0 && std::isfinite(1.0f / d))) d = 0;
            const float id = finite && d > 0 ? 1.0f / d : 0.0f;
            out.scale[std::size_t(b) * std::size_t(groups) + std::size_t(g)] = d;
            for (int j = 0; j < kQGroup; ++j) {
                // x·(1/d) can land a rounding step above 127: clip (never more than one level).
                const float t = std::nearbyint(v[j] * id);  // ties to even, the default rounding mode
                q[j] = finite ? static_cast<std::int8_t>(std::clamp(t, -127.0f, 127.0f)) : std::int8_t{0};
            }
        }
}
}  // namespace ref

int QMatrix::level(int r, int i) const {
    const std::uint8_t* row = levels + std::size_t(r) * row_bytes();
    if (bits == 8) return static_cast<std::int8_t>(row[i]);
    const int g = i / kQGroup, j = i % kQGroup;
    const std::uint8_t byte = row[std::size_t(g) * (kQGroup / 2) + std::size_t(j % 16)];
    return (j < 16 ? (byte & 0xF) : (byte >> 4)) - 8;
}

float QMatrix::dequantized(int r, int i) const {
    return fp16_to_float(scales[std::size_t(r) * std::size_t(in / kQGroup) + std::size_t(i / kQGroup)]) * static_cast<float>(level(r, i));
}

void quantize_rows(const float* w, int out, int in, unsigned bits, std::uint8_t* levels, std::uint16_t* scales, int threads) {
    if (in % kQGroup != 0)
        throw InputError("weight matrix width", std::to_string(in), N_("must be a multiple of {0} to quantize in groups of {0}"), {std::to_string(kQGroup)});
    const std::int64_t Q = symmetric_qmax(bits);
    const int groups = in / kQGroup;
    const std::size_t row_bytes = std::size_t(in) * bits / 8;
    bool bad = false;
    float bad_max = 0;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int r = 0; r < out; ++r) {
        for (int g = 0; g < groups; ++g) {
            const float* x = w + std::size_t(r) * std::size_t(in) + std::size_t(g) * kQGroup;
            float mx = 0;
            for (int j = 0; j < kQGroup; ++j) mx = std::max(mx, std::fabs(x[j]));
            // The quantize library's convention: a group of zeros gets Δ = 1 (every level 0).
            const float step = mx > 0 ? mx / static_cast<float>(Q) : 1.0f;
            if (!(step >= 0x1p-14f && step <= 65504.0f)) {  // outside fp16's normal range
#pragma omp critical
                {
                    bad = true;
                    bad_max = mx;
                }
                continue;
            }
            const std::uint16_t h = float_to_fp16(step);
            scales[std::size_t(r) * std::size_t(groups) + std::size_t(g)] = h;
            const double delta = fp16_to_float(h);  // quantize with the scale that is stored
            std::uint8_t* dst = levels + std::size_t(r) * row_bytes + std::size_t(g) * (kQGroup * bits / 8);
            for (int j = 0; j < kQGroup; ++j) {
                const auto q = quantize_scalar(x[j], delta, Q, Rounding::HalfAwayFromZero, nullptr).level;
                if (bits == 8) dst[j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q));
                else if (j < 16) dst[j] = static_cast<std::uint8_t>(q + 8);
                else dst[j - 16] = static_cast<std::uint8_t>(dst[j - 16] | ((q + 8) << 4));
            }
        }
    }
    if (bad)
        throw InputError("weight group max |w|", fmt::format("{:g}", bad_max),
                         N_("gives an int{0} scale max|w|/{1} outside fp16's normal range [2^-14, 65504]"),
                         {std::to_string(bits), std::to_string(Q)});
}

namespace {
// The product matrices in forward's order, with their float views.
std::vector<MatMap> product_matrices(const Weights& w) {
    std::vector<MatMap> m;
    for (int l = 0; l < w.dims().n_layers; ++l)
        for (const MatMap& x : {w.wq(l), w.wk(l), w.wv(l), w.wo(l), w.w1(l), w.w2(l), w.w3(l)}) m.push_back(x);
    m.push_back(w.classifier());
    return m;
}
}  // namespace

void require_quantizable(const Dims& d, const std::string& where) {
    for (int width : {d.dim, d.hidden_dim})
        if (width % kQGroup != 0)
            throw InputError(where, std::to_string(width),
                             N_("is a product's input width (dim or hidden); int8/int4 weights need multiples of {0}"),
                             {std::to_string(kQGroup)});
}

QWeights::QWeights(const Weights& w, WeightDtype dtype, int threads, QArith arith)
    : dtype_(dtype), bits_(weight_dtype_bits(dtype)), arith_(arith) {
    if (dtype != WeightDtype::Int8 && dtype != WeightDtype::Int4) throw std::logic_error("QWeights: int8 or int4 only");
    // Commands check this first with their flag's name (require_quantizable(d, "--weight-dtype ...")).
    require_quantizable(w.dims(), to_string(dtype) + " weights: width");
    const auto mats = product_matrices(w);
    std::uint64_t level_bytes = 0, groups = 0;
    for (const auto& m : mats) {
        elements_ += std::uint64_t(m.rows()) * std::uint64_t(m.cols());
        level_bytes += std::uint64_t(m.rows()) * std::uint64_t(m.cols()) * bits_ / 8;
        groups += std::uint64_t(m.rows()) * std::uint64_t(m.cols()) / kQGroup;
    }
    mem_ = HugePageBuffer(level_bytes + groups * sizeof(std::uint16_t));
    auto* levels = static_cast<std::uint8_t*>(mem_.data());
    auto* scales = reinterpret_cast<std::uint16_t*>(levels + level_bytes);  // level_bytes is a multiple of 16: aligned
    for (const auto& m : mats) {
        QMatrix q;
        q.out = static_cast<int>(m.rows());
        q.in = static_cast<int>(m.cols());
        q.bits = bits_;
        q.levels = levels;
        q.scales = scales;
        quantize_rows(m.data(), q.out, q.in, bits_, levels, scales, threads);
        levels += std::size_t(q.out) * q.row_bytes();
        scales += std::size_t(q.out) * std::size_t(q.in / kQGroup);
        by_float_.emplace(m.data(), q);
    }
}

const QMatrix* QWeights::find(const float* float_matrix) const {
    auto it = by_float_.find(float_matrix);
    return it == by_float_.end() ? nullptr : &it->second;
}

StorageCost QWeights::storage() const { return weight_storage(elements_, parse_dtype("weight dtype", to_string(dtype_))); }

std::uint64_t product_weight_bytes(const Dims& d, WeightDtype t) {
    const std::uint64_t L = std::uint64_t(d.n_layers), D = std::uint64_t(d.dim), KV = std::uint64_t(d.kv_dim()),
                        H = std::uint64_t(d.hidden_dim), V = std::uint64_t(d.vocab_size);
    const std::uint64_t n = L * (2 * D * D + 2 * D * KV + 3 * D * H) + V * D;
    return weight_storage(n, parse_dtype("weight dtype", to_string(t))).total_bytes;
}

void WeightsAt::apply(CpuBackendOptions& opt) const {
    opt.bf16 = dtype == WeightDtype::BF16 ? &bf16 : nullptr;
    opt.qweights = q.get();
}

std::unique_ptr<CpuBackend> WeightsAt::cpu_backend_like(const Backend& like) const {
    const CpuBackendOptions* base = cpu_options(like);
    if (!base)
        throw std::logic_error("weights at " + to_string(dtype) + ": the model runs on the " + like.name() +
                               " backend; the weights' dtype is an option of the CPU backend");
    CpuBackendOptions o = *base;
    apply(o);
    return std::make_unique<CpuBackend>(o);
}

Prose WeightsAt::arithmetic(bool reference_kernels) const {
    switch (dtype) {
        case WeightDtype::F32: return {"float32", {}};
        case WeightDtype::BF16: return {N_("bf16 weights widened to float32, float32 FMAs"), {}};
        default: break;
    }
    const bool vnni = cpu_has_avx512_vnni();
    if (q->arith() == QArith::Int8Dot) {
        if (reference_kernels)
            return {N_("int8 activations (one float32 scale per 32) · {0} levels as exact int32 group sums (plain loops: "
                       "the reference kernels), then × fp16 group scales in float32"),
                    {to_string(dtype)}};
        return {vnni ? N_("int8 activations (one float32 scale per 32) · {0} levels as exact int32 group sums (AVX-512 "
                          "VNNI vpdpbusd), then × fp16 group scales in float32")
                     : N_("int8 activations (one float32 scale per 32) · {0} levels as exact int32 group sums (plain "
                          "loops: this CPU has no AVX-512 VNNI), then × fp16 group scales in float32"),
                {to_string(dtype)}};
    }
    return {vnni ? N_("levels × fp16 group scales widened to float32, float32 FMAs (float32 activations: the VNNI integer "
                      "path is not used)")
                 : N_("levels × fp16 group scales widened to float32, float32 FMAs (this CPU has no AVX-512 VNNI)"),
            {}};
}

WeightsAt make_weights_at(const Weights& w, WeightDtype dtype, int threads, QArith arith) {
    WeightsAt a;
    a.dtype = dtype;
    if (dtype == WeightDtype::BF16) a.bf16 = to_bf16(w);
    if (dtype == WeightDtype::Int8 || dtype == WeightDtype::Int4) a.q = std::make_unique<QWeights>(w, dtype, threads, arith);
    return a;
}

namespace ref {

void matmul_quantized(const QMatrix& w, const float* x, int rows, float* y, int threads) {
    // Each weight row dequantized once into a buffer of the thread's, then one running sum per
    // output in index order: the same values in the same order as dequantizing at every use.
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        std::vector<float> row(static_cast<std::size_t>(w.in));
#pragma omp for schedule(static)
        for (int r = 0; r < w.out; ++r) {
            for (int i = 0; i < w.in; ++i) row[std::size_t(i)] = w.dequantized(r, i);
            for (int b = 0; b < rows; ++b) {
                const float* xb = x + std::size_t(b) * std::size_t(w.in);
                float s = 0;
                for (int i = 0; i < w.in; ++i) s += row[std::size_t(i)] * xb[i];
                y[std::size_t(b) * std::size_t(w.out) + std::size_t(r)] = s;
            }
        }
    }
}

void matmul_quantized_int8dot(const QMatrix& w, const float* x, int rows, float* y, int threads) {
    QActivations a;
    ref::quantize_activations(x, rows, w.in, a);
    const int groups = w.in / kQGroup;
    // Each weight row's levels and scales unpacked once into the thread's buffers.
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        std::vector<std::int32_t> lv(static_cast<std::size_t>(w.in));
        std::vector<float> dw(static_cast<std::size_t>(groups));
#pragma omp for schedule(static)
        for (int r = 0; r < w.out; ++r) {
            for (int i = 0; i < w.in; ++i) lv[std::size_t(i)] = w.level(r, i);
            for (int g = 0; g < groups; ++g) dw[std::size_t(g)] = fp16_to_float(w.scales[std::size_t(r) * std::size_t(groups) + std::size_t(g)]);
            for (int b = 0; b < rows; ++b) {
                const std::int8_t* qb = a.q.data() + std::size_t(b) * std::size_t(w.in);
                float s = 0;
                for (int g = 0; g < groups; ++g) {
                    std::int32_t dot = 0;  // exact: |Σ| ≤ 32 · 127 · 127
                    for (int j = 0; j < kQGroup; ++j) dot += lv[std::size_t(g * kQGroup + j)] * qb[g * kQGroup + j];
                    s += dw[std::size_t(g)] * a.scale[std::size_t(b) * std::size_t(groups) + std::size_t(g)] * static_cast<float>(dot);
                }
                y[std::size_t(b) * std::size_t(w.out) + std::size_t(r)] = s;
            }
        }
    }
}

}  // namespace ref
}  // namespace inferlab::model
