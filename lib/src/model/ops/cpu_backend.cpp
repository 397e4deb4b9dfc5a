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

#include "avx512.hpp"

#include "inferlab/base/error.hpp"
#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/transformer.hpp"

// The CPU backend: hand-written AVX-512 kernels for the products and the attention decode is bound
// by, OpenMP over rows and heads. Each has a plain reference beside it (kernels_ref.cpp, same
// signature) that CpuBackendOptions::kernels selects on any CPU, and that runs where the CPU lacks
// AVX-512, except for the products: the same sums in AVX2 + FMA there, Eigen's without those.
namespace inferlab::model {
namespace {

// Up to this many rows (a decode batch, a short draft) go through matmul_few_rows, which reads
// each weight row once for all of them; more rows (a prefill) go through matmul_many_rows where
// the CPU has AVX-512 or AVX2 + FMA, Eigen's blocked GEMM otherwise.
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

#if defined(__x86_64__)
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
