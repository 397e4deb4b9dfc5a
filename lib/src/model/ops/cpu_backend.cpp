#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "inferlab/base/error.hpp"
#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/transformer.hpp"

// The CPU backend: hand-written AVX-512 kernels for the products and the attention decode is bound
// by, OpenMP over rows and heads. Each has a plain reference beside it (kernels_ref.cpp, same
// signature) that CpuBackendOptions::kernels selects on any CPU, and that runs where the CPU lacks
// AVX-512 (Eigen's products there for float32 weights).
namespace inferlab::model {
namespace {

// Up to this many rows (a decode batch, a short draft) go through matmul_few_rows, which reads
// each weight row once for all of them; more rows (a prefill) go through matmul_many_rows where
// the CPU has AVX-512, Eigen's blocked GEMM otherwise.
constexpr Eigen::Index kFewRows = 16;

using TMap = Eigen::Map<MatrixRM>;
using CTMap = Eigen::Map<const MatrixRM>;
TMap map(Tensor& t) { return TMap(t.data(), t.rows(), t.cols()); }
CTMap cmap(const Tensor& t) { return CTMap(t.data(), t.rows(), t.cols()); }

void rmsnorm_rows(TMap out, const CTMap& x, const VecMap& weight, float eps) {
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
        const float ss = x.row(r).squaredNorm() / static_cast<float>(x.cols()) + eps;
        out.row(r) = x.row(r).cwiseProduct(weight.transpose()) / std::sqrt(ss);
    }
}

// Y [rows, out] = X [rows, in] · Wᵀ, W row-major [out, in].
void project(TMap y, const CTMap& x, const MatMap& w, const CpuBackendOptions& opt) {
    // Quantized weights: every product reads the packed levels in place (16 rows at a time), so
    // that prefill and decode run the same int8/int4 model.
    if (opt.qweights)
        if (const QMatrix* q = opt.qweights->find(w.data())) {
            const bool reference = opt.kernels == Kernels::Reference, int8dot = opt.qweights->arith() == QArith::Int8Dot;
            const int rows = static_cast<int>(x.rows());
            if (int8dot) (reference ? ref::matmul_quantized_int8dot : matmul_quantized_int8dot)(*q, x.data(), rows, y.data(), opt.threads);
            else (reference ? ref::matmul_quantized : matmul_quantized)(*q, x.data(), rows, y.data(), opt.threads);
            return;
        }
    if (opt.kernels == Kernels::Reference) {
        // The same choice of weights as below (bf16 for up to 16 rows), through the plain loops.
        if (opt.bf16 && x.rows() <= kFewRows) {
            const std::uint16_t* wb = opt.bf16->data() + (w.data() - opt.bf16->float_base);
            ref::matmul_few_rows_bf16(wb, w.rows(), static_cast<int>(w.cols()), x.data(), static_cast<int>(x.rows()),
                                      y.data(), opt.threads);
        } else {
            ref::matmul_few_rows(w, x.data(), static_cast<int>(x.rows()), y.data(), opt.threads);
        }
        return;
    }
    if (opt.bf16 && x.rows() <= kFewRows) {
        const std::uint16_t* wb = opt.bf16->data() + (w.data() - opt.bf16->float_base);
        matmul_few_rows_bf16(wb, w.rows(), static_cast<int>(w.cols()), x.data(), static_cast<int>(x.rows()), y.data(),
                             opt.threads);
    } else if (x.rows() == 1) {
        matvec(w, x.data(), y.data(), opt.threads);
    } else if (x.rows() <= kFewRows) {
        matmul_few_rows(w, x.data(), static_cast<int>(x.rows()), y.data(), opt.threads);
    } else if (matmul_many_rows(w, x.data(), static_cast<int>(x.rows()), y.data(), opt.threads)) {
        // prefill, a long chunk: the same tiles, blocked so each block of W stays in cache
    } else {
        y.noalias() = x * w.transpose();
    }
}

// run.c's RoPE: within each head, rotate the pair (2i, 2i+1) by pos · θ^(−2i/d). The cos and sin
// of each position are computed once (the same float steps each time, so the values do not
// depend on the cache) and reused by Q and K of every layer.
const float* rope_cos_sin(int pos, int head_dim, float theta) {
    struct Table {
        int head_dim = 0, positions = 0;
        float theta = 0;
        std::vector<float> cs;  // [position][head_dim]: cos, sin of each pair
    };
    thread_local Table t;
    if (t.head_dim != head_dim || t.theta != theta) t = Table{head_dim, 0, theta, {}};
    if (pos >= t.positions) {
        const int grow = std::max(pos + 1, 2 * t.positions);
        t.cs.resize(std::size_t(grow) * std::size_t(head_dim));
        for (int p = t.positions; p < grow; ++p)
            for (int j = 0; j < head_dim; j += 2) {
                const float freq = 1.0f / std::pow(theta, static_cast<float>(j) / static_cast<float>(head_dim));
                const float a = static_cast<float>(p) * freq;
                t.cs[std::size_t(p) * std::size_t(head_dim) + std::size_t(j)] = std::cos(a);
                t.cs[std::size_t(p) * std::size_t(head_dim) + std::size_t(j) + 1] = std::sin(a);
            }
        t.positions = grow;
    }
    return t.cs.data() + std::size_t(pos) * std::size_t(head_dim);
}

void rope_row(float* v, int width, int head_dim, int pos, float theta) {
    const float* cs = rope_cos_sin(pos, head_dim, theta);
    for (int i = 0; i < width; i += 2) {
        const int j = i % head_dim;
        const float c = cs[j], s = cs[j + 1];
        const float v0 = v[i], v1 = v[i + 1];
        v[i] = v0 * c - v1 * s;
        v[i + 1] = v0 * s + v1 * c;
    }
}

// AVX-512F, and BW for the bf16 unpacking (every AVX-512 CPU since Skylake-SP has both). The
// int8/int4 kernels also use F16C for their scales, which every AVX-512 CPU has (clang 14's
// __builtin_cpu_supports does not know "f16c", so it is not asked).
bool has_avx512() {
#if defined(__x86_64__)
    static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    return yes;
#else
    return false;
#endif
}

#if defined(__x86_64__)

// Horizontal reductions by halving, 512 → 256 → 128 → 64 → 32 bits, with Op's add or max (the
// extracts through the maskz forms: GCC 12's plain ones trip -Wuninitialized in its own header).
struct AddLanes {
    __attribute__((target("avx512f"))) __m256 operator()(__m256 a, __m256 b) const { return _mm256_add_ps(a, b); }
    __attribute__((target("avx512f"))) __m128 operator()(__m128 a, __m128 b) const { return _mm_add_ps(a, b); }
};
struct MaxLanes {  // of lanes that are not NaN
    __attribute__((target("avx512f"))) __m256 operator()(__m256 a, __m256 b) const { return _mm256_max_ps(a, b); }
    __attribute__((target("avx512f"))) __m128 operator()(__m128 a, __m128 b) const { return _mm_max_ps(a, b); }
};
template <class Op>
__attribute__((target("avx512f"))) inline float reduce512(__m512 v) {
    const Op op;
    const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 0));
    const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 1));
    const __m256 r8 = op(lo, hi);
    __m128 r4 = op(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    r4 = op(r4, _mm_movehl_ps(r4, r4));
    r4 = op(r4, _mm_movehdup_ps(r4));
    return _mm_cvtss_f32(r4);
}
__attribute__((target("avx512f"))) inline float hsum512(__m512 v) { return reduce512<AddLanes>(v); }
__attribute__((target("avx512f"))) inline float hmax512(__m512 v) { return reduce512<MaxLanes>(v); }

__attribute__((target("avx512f"))) float dot_avx512(const float* a, const float* b, int n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    float s = hsum512(_mm512_add_ps(s0, s1));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

// y += a·x
__attribute__((target("avx512f"))) void axpy_avx512(float a, const float* x, float* y, int n) {
    const __m512 av = _mm512_set1_ps(a);
    int i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(av, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += a * x[i];
}
#endif

#if defined(__x86_64__)
// The plain form for a head width D known at compile time: the query and the output row stay
// in registers (D/16 vectors each), so a cached position costs D/16 loads and fused multiply-adds
// for its score and as many for its share of the output; no per-position calls.
template <int D>
__attribute__((target("avx512f"))) void attend_plain_avx512(const float* q, KvCache& cache, int layer, int kvh, int lo, int hi,
                                                            float* out, std::vector<float>& scratch) {
    constexpr int C = D / 16;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    __m512 qv[C], o[C];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
        qv[c] = _mm512_loadu_ps(q + 16 * c);
        o[c] = _mm512_setzero_ps();
    }
    scratch.resize(static_cast<std::size_t>(hi - lo));
    float mx = -INFINITY;
    for (int p = lo; p < hi;) {
        const int run = cache.run_length(p, hi);
        const float* k = cache.key(layer, kvh, p);
        for (int t = 0; t < run; ++t) {
            const float* kt = k + std::size_t(t) * D;
            __m512 acc = _mm512_mul_ps(qv[0], _mm512_loadu_ps(kt));
#pragma GCC unroll 16
            for (int c = 1; c < C; ++c) acc = _mm512_fmadd_ps(qv[c], _mm512_loadu_ps(kt + 16 * c), acc);
            const float sc = hsum512(acc) * scale;
            scratch[std::size_t(p - lo + t)] = sc;
            mx = std::max(mx, sc);
        }
        p += run;
    }
    float sum = 0;
    for (auto& sc : scratch) sum += sc = std::exp(sc - mx);
    for (int p = lo; p < hi;) {
        const int run = cache.run_length(p, hi);
        const float* v = cache.value(layer, kvh, p);
        for (int t = 0; t < run; ++t) {
            const __m512 wgt = _mm512_set1_ps(scratch[std::size_t(p - lo + t)] / sum);
            const float* vt = v + std::size_t(t) * D;
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) o[c] = _mm512_fmadd_ps(wgt, _mm512_loadu_ps(vt + 16 * c), o[c]);
        }
        p += run;
    }
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(out + 16 * c, o[c]);
}
#endif

// One query head over keys [lo, hi) of its K/V head, read in place from the cache.
void attend(const float* q, KvCache& cache, int layer, int kvh, int lo, int hi, int d, const ForwardOptions& opt,
            Kernels kernels, float* out, std::vector<float>& scratch) {
    if (kernels == Kernels::Reference || !has_avx512())
        return ref::attend(q, cache, layer, kvh, lo, hi, d, opt, out, scratch);
#if defined(__x86_64__)
    if (opt.attention == AttentionKind::Plain) {
        switch (d) {
            case 32: return attend_plain_avx512<32>(q, cache, layer, kvh, lo, hi, out, scratch);
            case 48: return attend_plain_avx512<48>(q, cache, layer, kvh, lo, hi, out, scratch);
            case 64: return attend_plain_avx512<64>(q, cache, layer, kvh, lo, hi, out, scratch);
            case 96: return attend_plain_avx512<96>(q, cache, layer, kvh, lo, hi, out, scratch);
            case 128: return attend_plain_avx512<128>(q, cache, layer, kvh, lo, hi, out, scratch);
            default: break;  // other widths: the loops below
        }
    }
    // Any head width, plain or online: the reference's loops with AVX-512 dot products and axpys.
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::fill(out, out + d, 0.0f);
    if (opt.attention == AttentionKind::Plain) {
        scratch.resize(static_cast<std::size_t>(hi - lo));
        float mx = -INFINITY;
        for (int p = lo; p < hi;) {
            const int run = cache.run_length(p, hi);
            const float* k = cache.key(layer, kvh, p);
            for (int t = 0; t < run; ++t) {
                const float s = dot_avx512(q, k + std::size_t(t) * d, d) * scale;
                scratch[std::size_t(p - lo + t)] = s;
                mx = std::max(mx, s);
            }
            p += run;
        }
        float sum = 0;
        for (auto& s : scratch) sum += s = std::exp(s - mx);
        for (int p = lo; p < hi;) {
            const int run = cache.run_length(p, hi);
            const float* v = cache.value(layer, kvh, p);
            for (int t = 0; t < run; ++t) {
                const float wgt = scratch[std::size_t(p - lo + t)] / sum;
                const float* vt = v + std::size_t(t) * d;
                axpy_avx512(wgt, vt, out, d);
            }
            p += run;
        }
        return;
    }
    // Online softmax: keep m (running max), l (running sum) and an unnormalised output.
    float m = -INFINITY, l = 0;
    const int B = std::max(1, opt.online_block);
    scratch.resize(static_cast<std::size_t>(B));
    for (int b0 = lo; b0 < hi; b0 += B) {
        const int b1 = std::min(hi, b0 + B);
        float bm = -INFINITY;
        for (int p = b0; p < b1; ++p) {
            const float s = dot_avx512(q, cache.key(layer, kvh, p), d) * scale;
            scratch[std::size_t(p - b0)] = s;
            bm = std::max(bm, s);
        }
        const float m_new = std::max(m, bm);
        const float correction = std::exp(m - m_new);  // 0 on the first block (m = −inf)
        l *= correction;
        for (int i = 0; i < d; ++i) out[i] *= correction;
        for (int p = b0; p < b1; ++p) {
            const float e = std::exp(scratch[std::size_t(p - b0)] - m_new);
            l += e;
            axpy_avx512(e, cache.value(layer, kvh, p), out, d);
        }
        m = m_new;
    }
    for (int i = 0; i < d; ++i) out[i] /= l;
#endif
}

}  // namespace

#if defined(__x86_64__)
// AVX-512 products, chosen at run time (the default build has no -march): 16 floats per
// instruction, float32 fused multiply-adds, bf16 weights widened to float32 as they are loaded.
// One kernel for one row (decode) and for a few rows (a decode batch, a draft to verify): a tile
// of NW weight rows × NB input rows keeps NW·NB ≤ 16 accumulators in registers; per slice it
// loads NW weight vectors and NB input vectors for NW·NB fused multiply-adds (4×4: 8 loads, 16
// FMAs), so at NB ≥ 4 the loop is bound by the FMA units, not by loads, and at NB = 1 by memory.

static inline float widen(float v) { return v; }
static inline float widen(std::uint16_t v) { return bf16_to_float(v); }

// Prefetch the same slice of the weight rows this many tiles ahead (past the matrix's end near
// its last rows: a prefetch is a hint and never faults).
constexpr int kPrefetchGroups = 1;

// y[b·ldy + i] = Σ_k w[i·n + k]·x[b·n + k] for i < NW, b < NB.
template <int NW, int NB, typename WT>
__attribute__((target("avx512f,avx512bw"))) static void tile_avx512(const WT* w, int n, const float* x, float* y, std::size_t ldy) {
    __m512 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
    int k = 0;
    if constexpr (std::is_same_v<WT, float>) {
        for (; k + 16 <= n; k += 16) {
            __m512 wv[NW];
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) {
                // The weights stream from memory once: ask for them a tile ahead (at NB ≥ 4 the loop
                // is compute-bound, and the hardware prefetcher alone falls behind).
                _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(i + kPrefetchGroups * NW) * std::size_t(n) + k), _MM_HINT_T0);
                wv[i] = _mm512_loadu_ps(w + std::size_t(i) * std::size_t(n) + k);
            }
#pragma GCC unroll 16
            for (int b = 0; b < NB; ++b) {
                __m512 xv = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + k);
                __asm__("" : "+v"(xv));  // one load into a register, not one memory operand per FMA
#pragma GCC unroll 16
                for (int i = 0; i < NW; ++i) acc[i][b] = _mm512_fmadd_ps(wv[i], xv, acc[i][b]);
            }
        }
    } else {
        // bf16: one 64-byte load holds 32 weights; interleaving zeros below each (unpack lo/hi)
        // makes them two float32 vectors, in the element order permute_for_bf16 gave x.
        const __m512i zero = _mm512_setzero_si512();
        for (; k + 32 <= n; k += 32) {
            __m512 lo[NW], hi[NW];
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) {
                _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(i + kPrefetchGroups * NW) * std::size_t(n) + k), _MM_HINT_T0);
                const __m512i h = _mm512_loadu_si512(w + std::size_t(i) * std::size_t(n) + k);
                lo[i] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, h));
                hi[i] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, h));
            }
#pragma GCC unroll 16
            for (int b = 0; b < NB; ++b) {
                __m512 xl = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + k);
                __m512 xh = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + k + 16);
                __asm__("" : "+v"(xl), "+v"(xh));
#pragma GCC unroll 16
                for (int i = 0; i < NW; ++i) acc[i][b] = _mm512_fmadd_ps(hi[i], xh, _mm512_fmadd_ps(lo[i], xl, acc[i][b]));
            }
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            float s = hsum512(acc[i][b]);
            for (int t = k; t < n; ++t) s += widen(w[std::size_t(i) * std::size_t(n) + t]) * x[std::size_t(b) * std::size_t(n) + t];
            y[std::size_t(b) * ldy + std::size_t(i)] = s;
        }
}

// Prefetch distance of the one-row decode stream, in bytes ahead of the slice being read.
constexpr std::size_t kRowPrefetchBytes = 1024;

// The longest float32 x (bf16: its widened copy) the one-row stream reads. Measured on a Zen 4
// with a 32 KiB L1: x of 2,048 (8 KiB) stays in L1 beside the stream; 5,632 (22 KiB) does not
// and reads faster through the tiles; widths between were not measured. See
// few_rows_avx512_threads and docs/bench-cpu.md.
constexpr std::size_t kRowStreamMaxXBytes = 12 * 1024;

// One weight row against one input row (decode): the weights read as one sequential stream.
// The sum runs in the tiles' order (one accumulator of 16 lanes, slice after slice; bf16's low
// half before its high half), so a decode step's logits equal the no-cache pass's bit for bit.
template <typename WT>
__attribute__((target("avx512f,avx512bw"))) static float row_avx512(const WT* w, int n, const float* x) {
    __m512 acc = _mm512_setzero_ps();
    const char* ahead = reinterpret_cast<const char*>(w) + kRowPrefetchBytes;
    int k = 0;
    if constexpr (std::is_same_v<WT, float>) {
        for (; k + 16 <= n; k += 16) {
            _mm_prefetch(ahead + std::size_t(k) * sizeof(float), _MM_HINT_T0);
            acc = _mm512_fmadd_ps(_mm512_loadu_ps(w + k), _mm512_loadu_ps(x + k), acc);
        }
    } else {
        const __m512i zero = _mm512_setzero_si512();
        for (; k + 32 <= n; k += 32) {
            _mm_prefetch(ahead + std::size_t(k) * sizeof(WT), _MM_HINT_T0);
            const __m512i h = _mm512_loadu_si512(w + k);
            acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, h)), _mm512_loadu_ps(x + k), acc);
            acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, h)), _mm512_loadu_ps(x + k + 16), acc);
        }
    }
    float s = hsum512(acc);
    for (; k < n; ++k) s += widen(w[k]) * x[k];
    return s;
}

// The order the bf16 tile reads x in: within each 32 elements, lane L (of four) of the "lo"
// vector holds elements 8L..8L+3 and of the "hi" vector 8L+4..8L+7 (what unpacklo/hi_epi16 make
// of 32 packed bf16). Elements past the last whole 32 stay in place.
void permute_for_bf16(const float* x, int n, float* xp) {
    int k = 0;
    for (; k + 32 <= n; k += 32)
        for (int lane = 0; lane < 4; ++lane)
            for (int j = 0; j < 4; ++j) {
                xp[k + 4 * lane + j] = x[k + 8 * lane + j];
                xp[k + 16 + 4 * lane + j] = x[k + 8 * lane + 4 + j];
            }
    for (; k < n; ++k) xp[k] = x[k];
}

// The last K < NB input rows of a block: tile<NW, K>, K chosen at run time.
template <int NW, int K, typename WT>
static void tail_avx512(const WT* w, int n, const float* x, int k, float* y, std::size_t ldy) {
    if constexpr (K >= 1) {
        if (k == K) tile_avx512<NW, K>(w, n, x, y, ldy);
        else tail_avx512<NW, K - 1>(w, n, x, k, y, ldy);
    }
}

// NW weight rows against `rows` input rows in blocks of NB = 16/NW (the group's NW·n weights
// stay in L1 from one block to the next; the input rows stay in L1 throughout).
template <int NW, typename WT>
static void group_avx512(const WT* w, int n, const float* x, int rows, float* y, std::size_t ldy) {
    constexpr int NB = 16 / NW;
    int b = 0;
    for (; b + NB <= rows; b += NB) tile_avx512<NW, NB>(w, n, x + std::size_t(b) * n, y + std::size_t(b) * ldy, ldy);
    if (b < rows) tail_avx512<NW, NB - 1>(w, n, x + std::size_t(b) * n, rows - b, y + std::size_t(b) * ldy, ldy);
}

template <typename WT>
static void few_rows_avx512(const WT* w, Eigen::Index out, int n, const float* x, int rows, float* y, Eigen::Index r0,
                            Eigen::Index r1) {
    const std::size_t ldy = std::size_t(out);
    Eigen::Index r = r0;
    for (; r + 4 <= r1; r += 4) group_avx512<4>(w + r * n, n, x, rows, y + r, ldy);
    for (; r < r1; ++r) group_avx512<1>(w + r * n, n, x, rows, y + r, ldy);
}

// Splits the weight rows over threads in even chunks of whole 4-row tiles.
template <typename WT>
static void few_rows_avx512_threads(const WT* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
    if constexpr (std::is_same_v<WT, std::uint16_t>) {
        thread_local std::vector<float> xp;
        xp.resize(std::size_t(rows) * std::size_t(n));
        for (int b = 0; b < rows; ++b) permute_for_bf16(x + std::size_t(b) * n, n, xp.data() + std::size_t(b) * n);
        x = xp.data();
    }
    // Each thread takes whole tiles of four rows.
    const Eigen::Index chunk = ((out + threads - 1) / threads + 3) / 4 * 4;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
        const Eigen::Index r0 = std::min(out, Eigen::Index(t) * chunk), r1 = std::min(out, r0 + chunk);
        // One input row (decode): the weight rows one after another, one sequential stream (as
        // the quantized kernels read them; see docs/bench-cpu.md), while x fits in L1 beside the
        // stream. A longer x is reloaded from L2 on every row; the 4-row tiles share each of its
        // loads between four rows (the same sums, bit for bit).
        if (rows == 1 && std::size_t(n) * sizeof(float) <= kRowStreamMaxXBytes)
            for (Eigen::Index r = r0; r < r1; ++r) y[r] = row_avx512(w + std::size_t(r) * std::size_t(n), n, x);
        else if (r0 < r1)
            few_rows_avx512(w, out, n, x, rows, y, r0, r1);
    }
}

// Many input rows (a prefill): W in blocks of 64 rows (192 KiB of float32, kept in L2 while every
// block of 16 input rows passes over it), each block through the tiles above; blocks split over threads.
static void many_rows_avx512_threads(const float* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
    constexpr Eigen::Index kBlock = 64;
    const Eigen::Index blocks = (out + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index blk = 0; blk < blocks; ++blk) {
        const Eigen::Index r0 = blk * kBlock, r1 = std::min(out, r0 + kBlock);
        for (int b0 = 0; b0 < rows; b0 += 16)
            few_rows_avx512(w, out, n, x + std::size_t(b0) * std::size_t(n), std::min(16, rows - b0),
                            y + std::size_t(b0) * std::size_t(out), r0, r1);
    }
}

#endif

bool matmul_many_rows(const MatMap& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (has_avx512()) {
        many_rows_avx512_threads(w.data(), w.rows(), static_cast<int>(w.cols()), x, rows, y, threads);
        return true;
    }
#endif
    (void)w, (void)x, (void)rows, (void)y, (void)threads;
    return false;
}

#if defined(__x86_64__)
// Any number of input rows through the tiles, 16 at a time (the most a tile holds).
template <typename WT>
static void rows_avx512(const WT* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
    for (int b0 = 0; b0 < rows; b0 += 16)
        few_rows_avx512_threads(w, out, n, x + std::size_t(b0) * std::size_t(n), std::min(16, rows - b0),
                                y + std::size_t(b0) * std::size_t(out), threads);
}
#endif

void matvec(const MatMap& w, const float* x, float* y, int threads) {
    matmul_few_rows(w, x, 1, y, threads);
}

void matmul_few_rows(const MatMap& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (has_avx512()) {
        rows_avx512(w.data(), w.rows(), static_cast<int>(w.cols()), x, rows, y, threads);
        return;
    }
#endif
    // No AVX-512: Eigen's product (vectorised for what the CPU has), Y [rows, out] = X·Wᵀ.
    (void)threads;
    Eigen::Map<MatrixRM> ym(y, rows, w.rows());
    ym.noalias() = Eigen::Map<const MatrixRM>(x, rows, w.cols()) * w.transpose();
}

#if defined(__x86_64__)
// How far ahead the quantized kernels prefetch their weight rows (same slice): four rows, one
// 4-row tile with batches and four rows of the one-row decode stream (1–16 measured: within the
// noise of a shared machine, see docs/bench-cpu.md).
constexpr std::size_t kQPrefetchRows = 4;
#endif

#if defined(__x86_64__)
// Quantized weights (qweights.hpp): per group of 32, each of the NW rows' levels widened to two
// float32 vectors (int8: 16 bytes sign-extended, twice; int4: one 16-byte load, low nibbles for
// weights 0–15 and high nibbles for 16–31, minus 8) and multiplied by the group's fp16 scale
// (Δ·q is exact in float32: 11 bits of Δ times at most 7 of q); then NW·NB fused multiply-adds
// per 16 lanes, as in tile_avx512. The packed bytes are all that is read from memory. (The
// conversions use their maskz forms with every lane set: GCC 12's plain ones trip
// -Wmaybe-uninitialized in its own header.)
template <unsigned BITS, int NW, int NB>
__attribute__((target("avx512f,avx512bw,f16c"))) static void qtile_avx512(const QMatrix& w, int r0, const float* x, float* y,
                                                                           std::size_t ldy) {
    const int n = w.in, groups = n / kQGroup;
    constexpr int kGroupBytes = kQGroup * int(BITS) / 8;
    const std::size_t rb = w.row_bytes();
    const std::uint8_t* lv = w.levels + std::size_t(r0) * rb;
    const std::uint16_t* sc = w.scales + std::size_t(r0) * std::size_t(groups);
    __m512 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
    for (int g = 0; g < groups; ++g) {
        __m512 lo[NW], hi[NW];
#pragma GCC unroll 16
        for (int i = 0; i < NW; ++i) {
            const std::uint8_t* q = lv + std::size_t(i) * rb + std::size_t(g) * kGroupBytes;
            // The next tile's rows, same slice (a hint: past the matrix's end it never faults).
            _mm_prefetch(reinterpret_cast<const char*>(q + kQPrefetchRows * rb), _MM_HINT_T0);
            const __m512 s = _mm512_set1_ps(_cvtsh_ss(sc[std::size_t(i) * std::size_t(groups) + std::size_t(g)]));
            if constexpr (BITS == 8) {
                lo[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
                hi[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16))));
            } else {
                const __m512i v = _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
                const __m512i eight = _mm512_set1_epi32(8);
                lo[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_sub_epi32(_mm512_and_si512(v, _mm512_set1_epi32(15)), eight));
                hi[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_sub_epi32(_mm512_maskz_srli_epi32(0xFFFF, v, 4), eight));
            }
            lo[i] = _mm512_mul_ps(lo[i], s);
            hi[i] = _mm512_mul_ps(hi[i], s);
        }
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            __m512 xl = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + std::size_t(g) * kQGroup);
            __m512 xh = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + std::size_t(g) * kQGroup + 16);
            __asm__("" : "+v"(xl), "+v"(xh));  // one load into a register, not one memory operand per FMA
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) acc[i][b] = _mm512_fmadd_ps(hi[i], xh, _mm512_fmadd_ps(lo[i], xl, acc[i][b]));
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) y[std::size_t(b) * ldy + std::size_t(i)] = hsum512(acc[i][b]);
}

template <unsigned BITS, int NW, int K>
static void qtail_avx512(const QMatrix& w, int r0, const float* x, int k, float* y, std::size_t ldy) {
    if constexpr (K >= 1) {
        if (k == K) qtile_avx512<BITS, NW, K>(w, r0, x, y, ldy);
        else qtail_avx512<BITS, NW, K - 1>(w, r0, x, k, y, ldy);
    }
}

// NW weight rows from r0 against `rows` ≤ 16 input rows, in blocks of NB = 16/NW.
template <unsigned BITS, int NW>
static void qgroup_avx512(const QMatrix& w, int r0, const float* x, int rows, float* y, std::size_t ldy) {
    constexpr int NB = 16 / NW;
    const std::size_t n = std::size_t(w.in);
    int b = 0;
    for (; b + NB <= rows; b += NB) qtile_avx512<BITS, NW, NB>(w, r0, x + std::size_t(b) * n, y + std::size_t(b) * ldy, ldy);
    if (b < rows) qtail_avx512<BITS, NW, NB - 1>(w, r0, x + std::size_t(b) * n, rows - b, y + std::size_t(b) * ldy, ldy);
}

// Up to 16 input rows; the weight rows split over threads in whole tiles of four.
template <unsigned BITS>
static void qrows_avx512(const QMatrix& w, const float* x, int rows, float* y, int threads) {
    const std::size_t ldy = std::size_t(w.out);
    const int chunk = ((w.out + threads - 1) / threads + 3) / 4 * 4;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
        const int r0 = std::min(w.out, t * chunk), r1 = std::min(w.out, r0 + chunk);
        int r = r0;
        if (rows == 1)  // decode: one sequential stream, as in qdot_rows_avx512
            for (; r < r1; ++r) qtile_avx512<BITS, 1, 1>(w, r, x, y + r, ldy);
        for (; r + 4 <= r1; r += 4) qgroup_avx512<BITS, 4>(w, r, x, rows, y + r, ldy);
        for (; r < r1; ++r) qgroup_avx512<BITS, 1>(w, r, x, rows, y + r, ldy);
    }
}
#endif

void matmul_quantized(const QMatrix& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (has_avx512()) {
        for (int b0 = 0; b0 < rows; b0 += 16) {
            const float* xb = x + std::size_t(b0) * std::size_t(w.in);
            float* yb = y + std::size_t(b0) * std::size_t(w.out);
            if (w.bits == 8) qrows_avx512<8>(w, xb, std::min(16, rows - b0), yb, threads);
            else qrows_avx512<4>(w, xb, std::min(16, rows - b0), yb, threads);
        }
        return;
    }
#endif
    ref::matmul_quantized(w, x, rows, y, threads);  // no AVX-512: the plain loops
}

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
    static const bool yes = has_avx512() && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    return yes;
#else
    return false;
#endif
}

#if defined(__x86_64__)
// Int8Dot (qweights.hpp), llama.cpp's Q8_0 × Q8_0 / Q4_0 × Q8_0 dot products in AVX-512 VNNI.
// vpdpbusd multiplies UNSIGNED bytes (first operand) by SIGNED bytes (second) and adds each four
// products into one of 16 int32 lanes. The activations are signed, so the levels go first as
// unsigned: int8 q + 128 (the sign bit flipped, one XOR), int4 q + 8 (as stored). Then
// Σ (q + K)·x = Σ q·x + K·Σ x, so each step's sums start at −K·Σ x: computed once per activation
// row by qdot_prepare_avx512 (a decode step has one activation row and thousands of weight rows).
// Every lane stays exact in int32: a step adds 4 products of at most 255 · 127 (int8) or 8 of
// at most 15 · 127 (int4) to it.
//
// A step reads one 64-byte load of a row's levels:
//   int8: two groups in order; lanes 0–7 end with group g's partial sums, lanes 8–15 with g + 1's.
//   int4: four groups of 16 bytes. The low nibbles are weights 0–15 of each group and the high
//         nibbles weights 16–31, so the activations are laid out once per row to match (per four
//         groups, 128 bytes: the first 16 of each group, then the last 16 of each): two vpdpbusd,
//         low nibbles then high, end with group g + k's sums in lanes 4k..4k+3, and the levels
//         need one shift and two ANDs, no shuffle (one thread over one large matrix: 25–28
//         against 19–20 GB/s for two groups a step widened by a broadcast and a shuffle,
//         docs/bench-cpu.md).
// Each lane is then converted to float32 and multiplied by its group's Δ_w·d, and the lanes are
// summed once at the end of the row.
//
// Scales: 16 groups' fp16 Δ_w of a row are converted in one instruction, and with one input row
// multiplied by its 16 d's at once; a step then moves its groups' Δ_w·d to their lanes with one
// permute. (Converting the scales each step cost five instructions of the twelve in an int4
// step, so the kernel was bound by instructions before memory on two threads.)
template <unsigned BITS>
constexpr int kStepGroups = BITS == 8 ? 2 : 4;
// An int4 step's activations as laid out: the first 16 of each of its four groups, then the last 16.
constexpr std::size_t kInt4StepBytes = std::size_t(kStepGroups<4>) * kQGroup;  // 128

// The activation rows as the steps read them.
struct QDotRows {
    const std::int8_t* x = nullptr;  // [rows, x_row]: int8 the levels in order; int4 kInt4StepBytes a step
    std::size_t x_row = 0;
    const std::int32_t* start = nullptr;  // [rows, steps, 16]: each step's −K·Σx lanes
    std::size_t start_row = 0;
    const float* scale = nullptr;  // [rows, groups]: the activations' d
};

// The first `bytes` (0–64) lanes of a byte mask.
inline __mmask64 first_bytes(int bytes) { return bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1; }

template <unsigned BITS>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static QDotRows qdot_prepare_avx512(
    const QActivations& a, LineVector<std::int8_t>& xbuf, LineVector<std::int32_t>& starts) {
    constexpr int S = kStepGroups<BITS>;
    const int n = a.in, groups = n / kQGroup, steps = (groups + S - 1) / S;
    QDotRows r;
    r.scale = a.scale.data();
    r.start_row = std::size_t(steps) * 16;
    starts.resize(std::size_t(a.rows) * r.start_row);
    r.start = starts.data();
    if constexpr (BITS == 8) {
        r.x = a.q.data();
        r.x_row = std::size_t(n);
    } else {
        r.x_row = std::size_t(steps) * kInt4StepBytes;
        xbuf.resize(std::size_t(a.rows) * r.x_row);
        r.x = xbuf.data();
    }
    const __m512i K = _mm512_set1_epi8(static_cast<char>(BITS == 8 ? 0x80 : 8));
    const __m512i zero = _mm512_setzero_si512();
    for (int b = 0; b < a.rows; ++b)
        for (int s = 0; s < steps; ++s) {
            const int bytes = std::min(S, groups - s * S) * kQGroup;  // the activations this step covers
            const std::int8_t* p = a.q.data() + std::size_t(b) * std::size_t(n) + std::size_t(s) * S * kQGroup;
            __m512i sum;
            if constexpr (BITS == 8) {
                sum = _mm512_dpbusd_epi32(zero, K, _mm512_maskz_loadu_epi8(first_bytes(bytes), p));
            } else {
                // Groups g..g+3 as 128-bit lanes [g lo, g hi, g+1 lo, g+1 hi] and [g+2 …, g+3 …]:
                // the lo halves gathered into one vector and the hi halves into another (zeros past the row).
                const __m512i v0 = _mm512_maskz_loadu_epi8(first_bytes(std::min(bytes, 64)), p);
                const __m512i v1 = _mm512_maskz_loadu_epi8(first_bytes(std::max(bytes - 64, 0)), p + 64);
                const __m512i lo = _mm512_maskz_shuffle_i64x2(0xFF, v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
                const __m512i hi = _mm512_maskz_shuffle_i64x2(0xFF, v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
                std::int8_t* out = xbuf.data() + std::size_t(b) * r.x_row + std::size_t(s) * kInt4StepBytes;
                _mm512_storeu_si512(out, lo);
                _mm512_storeu_si512(out + 64, hi);
                sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(zero, K, lo), K, hi);
            }
            _mm512_storeu_si512(starts.data() + std::size_t(b) * r.start_row + std::size_t(s) * 16, _mm512_sub_epi32(zero, sum));
        }
    return r;
}

// One step of qdot_tile_avx512: `live` groups from g (all kStepGroups of them when FULL), NW
// weight rows × NB input rows; `in` points at the tile's first input row.
template <unsigned BITS, int NW, int NB, bool FULL>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"), always_inline)) static inline void qdot_step_avx512(
    __m512 (&acc)[NW][NB], const __m512 (&ws)[NW], const __m512 (&xs16)[NB], __m512i idx, const std::uint8_t* lv, std::size_t rb,
    const QDotRows& in, int g, int live) {
    constexpr int kGroupBytes = kQGroup * int(BITS) / 8;
    const int s = g / kStepGroups<BITS>;
    const __mmask64 levels = FULL ? ~__mmask64{0} : first_bytes(live * kGroupBytes);
    __m512i xv[NB], xh[NB], start[NB];
    __m512 xsv[NB] = {};
#pragma GCC unroll 16
    for (int b = 0; b < NB; ++b) {
        if constexpr (BITS == 8) {
            const std::int8_t* p = in.x + std::size_t(b) * in.x_row + std::size_t(g) * kQGroup;
            xv[b] = FULL ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(first_bytes(live * kQGroup), p);
        } else {
            const std::int8_t* p = in.x + std::size_t(b) * in.x_row + std::size_t(s) * kInt4StepBytes;  // zeros past the row
            xv[b] = _mm512_loadu_si512(p);
            xh[b] = _mm512_loadu_si512(p + 64);
        }
        start[b] = _mm512_loadu_si512(in.start + std::size_t(b) * in.start_row + std::size_t(s) * 16);
        if constexpr (NB > 1) xsv[b] = _mm512_maskz_permutexvar_ps(0xFFFF, idx, xs16[b]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i) {
        const std::uint8_t* q = lv + std::size_t(i) * rb + std::size_t(g) * kGroupBytes;
        // The next tile's rows, same slice (a hint: past the matrix's end it never faults). Not
        // in the one-row int8 stream, where the hardware's prefetch alone read 27–30 GB/s on one
        // thread against 19–21 with it (docs/bench-cpu.md).
        if constexpr (BITS == 4 || NW > 1 || NB > 1) _mm_prefetch(reinterpret_cast<const char*>(q + kQPrefetchRows * rb), _MM_HINT_T0);
        const __m512i v = FULL ? _mm512_loadu_si512(q) : _mm512_maskz_loadu_epi8(levels, q);
        __m512i lo, hi = _mm512_setzero_si512();
        if constexpr (BITS == 8) {
            lo = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
        } else {
            lo = _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
            hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
        }
        const __m512 wsv = _mm512_maskz_permutexvar_ps(0xFFFF, idx, ws[i]);
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            __m512i dot = _mm512_dpbusd_epi32(start[b], lo, xv[b]);
            if constexpr (BITS == 4) dot = _mm512_dpbusd_epi32(dot, hi, xh[b]);
            // (Δ_w·d) · float(Σ): the reference's order of the two multiplies
            __m512 scale = wsv;  // NB = 1: ws already holds Δ_w·d
            if constexpr (NB > 1) scale = _mm512_mul_ps(wsv, xsv[b]);
            acc[i][b] = _mm512_fmadd_ps(scale, _mm512_maskz_cvtepi32_ps(0xFFFF, dot), acc[i][b]);
        }
    }
}

template <unsigned BITS, int NW, int NB>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"))) static void qdot_tile_avx512(const QMatrix& w, int r0,
                                                                                                const QDotRows& a, int b0,
                                                                                                float* y, std::size_t ldy) {
    constexpr int S = kStepGroups<BITS>;
    const int groups = w.in / kQGroup;
    const std::size_t rb = w.row_bytes();
    const std::uint8_t* lv = w.levels + std::size_t(r0) * rb;                    // [NW, in·BITS/8]
    const std::uint16_t* sc = w.scales + std::size_t(r0) * std::size_t(groups);  // [NW, groups] fp16
    QDotRows in = a;                                                             // from input row b0
    in.x += std::size_t(b0) * a.x_row;
    in.start += std::size_t(b0) * a.start_row;
    const float* xs = a.scale + std::size_t(b0) * std::size_t(groups);  // [NB, groups]
    // Lane → its group's index within the block of 16: lane / (16 / S), then + S a step.
    const __m512i first = BITS == 8 ? _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)
                                    : _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i next = _mm512_set1_epi32(S);
    __m512 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
    for (int blk = 0; blk < groups; blk += 16) {
        const int end = std::min(groups, blk + 16);
        const __mmask16 live = static_cast<__mmask16>((1u << (end - blk)) - 1u);
        // [16] per row: Δ_w of groups blk.. (0 past the row's end); with NB = 1 already × d.
        __m512 ws[NW], xs16[NB];
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) xs16[b] = _mm512_maskz_loadu_ps(live, xs + std::size_t(b) * std::size_t(groups) + std::size_t(blk));
#pragma GCC unroll 16
        for (int i = 0; i < NW; ++i) {
            ws[i] = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_maskz_loadu_epi16(live, sc + std::size_t(i) * std::size_t(groups) + std::size_t(blk)));
            if constexpr (NB == 1) ws[i] = _mm512_mul_ps(ws[i], xs16[0]);
        }
        __m512i idx = first;
        int g = blk;
        if (end - blk == 16) {  // a whole block: its steps unrolled
#pragma GCC unroll 8
            for (int k = 0; k < 16 / S; ++k, g += S, idx = _mm512_add_epi32(idx, next))
                qdot_step_avx512<BITS, NW, NB, true>(acc, ws, xs16, idx, lv, rb, in, g, S);
            continue;
        }
        for (; g + S <= end; g += S, idx = _mm512_add_epi32(idx, next))
            qdot_step_avx512<BITS, NW, NB, true>(acc, ws, xs16, idx, lv, rb, in, g, S);
        if (g < end) qdot_step_avx512<BITS, NW, NB, false>(acc, ws, xs16, idx, lv, rb, in, g, end - g);  // the row's last groups
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) y[std::size_t(b) * ldy + std::size_t(i)] = hsum512(acc[i][b]);
}

template <unsigned BITS, int NW, int K>
static void qdot_tail_avx512(const QMatrix& w, int r0, const QDotRows& a, int b0, int k, float* y, std::size_t ldy) {
    if constexpr (K >= 1) {
        if (k == K) qdot_tile_avx512<BITS, NW, K>(w, r0, a, b0, y, ldy);
        else qdot_tail_avx512<BITS, NW, K - 1>(w, r0, a, b0, k, y, ldy);
    }
}

// NW weight rows from r0 against the activations' rows [b0, b0 + rows), in blocks of NB = 16/NW.
template <unsigned BITS, int NW>
static void qdot_group_avx512(const QMatrix& w, int r0, const QDotRows& a, int b0, int rows, float* y, std::size_t ldy) {
    constexpr int NB = 16 / NW;
    int b = 0;
    for (; b + NB <= rows; b += NB) qdot_tile_avx512<BITS, NW, NB>(w, r0, a, b0 + b, y + std::size_t(b) * ldy, ldy);
    if (b < rows) qdot_tail_avx512<BITS, NW, NB - 1>(w, r0, a, b0 + b, rows - b, y + std::size_t(b) * ldy, ldy);
}

// Weight rows [r0, r1) against one activation row (decode), one weight row at a time, so that
// the levels are read as one sequential stream (measured faster than four interleaved row
// streams; see docs/bench-cpu.md). Flattened: each row's tile inlined into the loop, its setup
// hoisted (a call per row of 1 KiB cost a fifth of the one-thread speed).
template <unsigned BITS>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"), flatten)) static void qdot_stream_avx512(
    const QMatrix& w, const QDotRows& a, int b0, int r0, int r1, float* y) {
    for (int r = r0; r < r1; ++r) qdot_tile_avx512<BITS, 1, 1>(w, r, a, b0, y + r, 0);
}

// Up to 16 activation rows from b0; the weight rows split over threads in whole tiles of four.
template <unsigned BITS>
static void qdot_rows_avx512(const QMatrix& w, const QDotRows& a, int b0, int rows, float* y, int threads) {
    const std::size_t ldy = std::size_t(w.out);
    const int chunk = ((w.out + threads - 1) / threads + 3) / 4 * 4;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
        const int r0 = std::min(w.out, t * chunk), r1 = std::min(w.out, r0 + chunk);
        if (rows == 1) {
            qdot_stream_avx512<BITS>(w, a, b0, r0, r1, y);
            continue;
        }
        int r = r0;
        for (; r + 4 <= r1; r += 4) qdot_group_avx512<BITS, 4>(w, r, a, b0, rows, y + r, ldy);
        for (; r < r1; ++r) qdot_group_avx512<BITS, 1>(w, r, a, b0, rows, y + r, ldy);
    }
}

// quantize_activations (qweights.hpp) in AVX-512 (the maskz forms with every lane set, as in
// reduce512, for GCC 12's header): a group of 32 is two vectors; its max |x|, d and 1/d are the
// reference's scalars, and each level round-half-to-even(x·(1/d)) clipped to ±127, so the bytes
// and scales equal ref::quantize_activations' bit for bit.
__attribute__((target("avx512f,avx512bw"))) static void quantize_activations_avx512(const float* x, int rows, int in,
                                                                                            QActivations& out) {
    const int groups = in / kQGroup;
    out.rows = rows;
    out.in = in;
    out.q.resize(std::size_t(rows) * std::size_t(in));
    out.scale.resize(std::size_t(rows) * std::size_t(groups));
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f), inf = _mm512_set1_ps(INFINITY);
    for (std::size_t gi = 0; gi < std::size_t(rows) * std::size_t(groups); ++gi) {
        const float* v = x + gi * kQGroup;
        std::int8_t* q = out.q.data() + gi * kQGroup;
        const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16);
        // |x| not below inf (an inf) or unordered (a NaN)
        if (_mm512_cmp_ps_mask(_mm512_abs_ps(v0), inf, _CMP_NLT_UQ) | _mm512_cmp_ps_mask(_mm512_abs_ps(v1), inf, _CMP_NLT_UQ)) {
            out.scale[gi] = NAN;  // as the reference: d = NaN, every level 0
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_setzero_si256());
            continue;
        }
        const float mx = hmax512(_mm512_maskz_max_ps(0xFFFF, _mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        float d = mx / 127.0f;
        if (!(d > 0 && std::isfinite(1.0f / d))) d = 0;  // as the reference: too small for 1/d, a zero group
        const __m512 id = _mm512_set1_ps(d > 0 ? 1.0f / d : 0.0f);
        out.scale[gi] = d;
        for (int h = 0; h < 2; ++h) {
            const __m512 t = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(h ? v1 : v0, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            const __m512i l = _mm512_maskz_cvtps_epi32(0xFFFF, _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, t, lo), hi));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * h), _mm512_maskz_cvtsepi32_epi8(0xFFFF, l));
        }
    }
}
#endif

void quantize_activations(const float* x, int rows, int in, QActivations& out) {
#if defined(__x86_64__)
    if (cpu_has_avx512_vnni()) {  // where the Int8Dot kernels that read them run
        quantize_activations_avx512(x, rows, in, out);
        return;
    }
#endif
    ref::quantize_activations(x, rows, in, out);
}

void matmul_quantized_int8dot(const QMatrix& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (cpu_has_avx512_vnni()) {
        thread_local QActivations a;              // [rows, in] levels and [rows, in/32] scales, reused across calls
        thread_local LineVector<std::int8_t> x4;  // int4: the levels as the steps read them
        thread_local LineVector<std::int32_t> starts;
        quantize_activations(x, rows, w.in, a);
        const QDotRows in = w.bits == 8 ? qdot_prepare_avx512<8>(a, x4, starts) : qdot_prepare_avx512<4>(a, x4, starts);
        for (int b0 = 0; b0 < rows; b0 += 16) {
            float* yb = y + std::size_t(b0) * std::size_t(w.out);
            if (w.bits == 8) qdot_rows_avx512<8>(w, in, b0, std::min(16, rows - b0), yb, threads);
            else qdot_rows_avx512<4>(w, in, b0, std::min(16, rows - b0), yb, threads);
        }
        return;
    }
#endif
    ref::matmul_quantized_int8dot(w, x, rows, y, threads);  // no VNNI: the plain loops
}

Bf16Weights to_bf16(const Weights& w) {
    Bf16Weights b;
    b.float_base = w.data();
    b.mem = HugePageBuffer(w.floats() * sizeof(std::uint16_t));
    auto* values = static_cast<std::uint16_t*>(b.mem.data());
    for (std::uint64_t i = 0; i < w.floats(); ++i) {
        std::uint32_t u;
        std::memcpy(&u, w.data() + i, sizeof u);
        u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest, ties to even (weights are finite)
        values[i] = static_cast<std::uint16_t>(u >> 16);
    }
    return b;
}

void matmul_few_rows_bf16(const std::uint16_t* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (has_avx512()) {
        rows_avx512(w, out, n, x, rows, y, threads);
        return;
    }
#endif
    ref::matmul_few_rows_bf16(w, out, n, x, rows, y, threads);  // no AVX-512: the plain loops
}

CpuBackend::CpuBackend(const CpuBackendOptions& options) : o_(options) {}

float* CpuBackend::allocate(std::size_t floats) {
    if (floats == 0) return nullptr;
    const std::size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) throw Error(fmt::format("cannot allocate {} bytes of host memory", bytes));
    std::memset(p, 0, bytes);
    return static_cast<float*>(p);
}
void CpuBackend::release(float* p, std::size_t) noexcept { std::free(p); }
void CpuBackend::upload(float* dst, const float* host, std::size_t floats) { std::copy_n(host, floats, dst); }
void CpuBackend::download(float* host, const float* src, std::size_t floats) { std::copy_n(src, floats, host); }

void CpuBackend::embed(const MatMap& table, const std::vector<int>& tokens, Tensor& x) {
    x.resize(static_cast<int>(tokens.size()), static_cast<int>(table.cols()));  // [R, D]
    for (std::size_t r = 0; r < tokens.size(); ++r)
        std::copy_n(table.row(tokens[r]).data(), table.cols(), x.row(static_cast<int>(r)));
}
void CpuBackend::rmsnorm(const Tensor& x, const VecMap& w, float eps, Tensor& y) {
    y.resize(x.rows(), x.cols());
    rmsnorm_rows(map(y), cmap(x), w, eps);
}
void CpuBackend::matmul(const Tensor& x, const MatMap& w, Tensor& y, const ForwardOptions&) {
    y.resize(x.rows(), static_cast<int>(w.rows()));  // [rows, out]
    project(map(y), cmap(x), w, o_);
}
void CpuBackend::rope(Tensor& v, const std::vector<int>& pos, int head_dim, float theta) {
    for (int r = 0; r < v.rows(); ++r) rope_row(v.row(r), v.cols(), head_dim, pos[std::size_t(r)], theta);
}
void CpuBackend::store_kv(const Tensor& k, const Tensor& v, const StepRows& step, int layer) {
    const int d = step.head_dim, heads = k.cols() / d;
    for (int r = 0; r < k.rows(); ++r) {
        KvCache& c = *step.rows[std::size_t(r)].cache;
        for (int h = 0; h < heads; ++h) {
            std::copy_n(k.row(r) + h * d, d, c.key(layer, h, step.pos[std::size_t(r)]));
            std::copy_n(v.row(r) + h * d, d, c.value(layer, h, step.pos[std::size_t(r)]));
        }
    }
}
void CpuBackend::attention(const Tensor& q, const StepRows& step, int layer, const ForwardOptions& opt, Tensor& out) {
    out.resize(q.rows(), q.cols());  // [R, H_q·d]
    const int R = q.rows();
    const int d = step.head_dim;
    const int n_heads = q.cols() / d;
    const int group = n_heads / step.n_kv_heads;
    const int threads = o_.threads;
    std::vector<std::vector<float>> scratch(static_cast<std::size_t>(std::max(1, threads)));  // [threads][keys]
    // Row r sees positions ≤ pos[r] (causal), read in place from its own cache.
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static) if (threads > 1)
    for (int r = 0; r < R; ++r)
        for (int h = 0; h < n_heads; ++h) {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            const int hi = step.pos[std::size_t(r)] + 1;
            int lo = opt.window > 0 ? std::max(0, hi - opt.window) : 0;
            // A padding row itself (before its first visible position) attends to itself alone:
            // its output is never read, but it must stay finite.
            if (opt.visible_from) lo = std::min(std::max(lo, (*opt.visible_from)[std::size_t(r)]), hi - 1);
            attend(q.row(r) + h * d, *step.rows[std::size_t(r)].cache, layer, h / group, lo, hi, d, opt, o_.kernels,
                   out.row(r) + h * d, scratch[static_cast<std::size_t>(tid)]);
        }
}
void CpuBackend::swiglu(Tensor& a, const Tensor& b) {
    TMap x = map(a);
    x = (x.array() / (1.0f + (-x.array()).exp())) * cmap(b).array();
}
void CpuBackend::add(Tensor& y, const Tensor& x) { map(y) += cmap(x); }
void CpuBackend::to_host(const Tensor& t, MatrixRM& out) {
    out.resize(t.rows(), t.cols());
    std::copy_n(t.data(), t.size(), out.data());
}

const void* CpuBackend::memory_space() const {
    // One identity for the host's memory, whichever CPU backend (options) asks.
    static const char host = 0;
    return &host;
}

const CpuBackendOptions* cpu_options(const Backend& b) {
    const auto* cpu = dynamic_cast<const CpuBackend*>(&b);
    return cpu ? &cpu->options() : nullptr;
}

Backend& cpu_backend() {
    static CpuBackend b;
    return b;
}

}  // namespace inferlab::model
