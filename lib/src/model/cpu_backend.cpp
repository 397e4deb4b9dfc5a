#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "inferlab/error.hpp"
#include "inferlab/model/backend.hpp"
#include "inferlab/model/transformer.hpp"

// The CPU backend: Eigen for the reference arithmetic, hand-written kernels (each tested against
// Eigen) for the products decode is bound by, OpenMP over rows and heads.
namespace inferlab::model {
namespace {

// Up to this many rows (a decode batch, a short draft) go through matmul_few_rows, which reads
// each weight row once for all of them; more rows go to Eigen's blocked GEMM.
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
void project(TMap y, const CTMap& x, const MatMap& w, const ForwardOptions& opt) {
    if (opt.bf16 && x.rows() <= kFewRows) {
        const std::uint16_t* wb = opt.bf16->values.data() + (w.data() - opt.bf16->float_base);
        matmul_few_rows_bf16(wb, w.rows(), static_cast<int>(w.cols()), x.data(), static_cast<int>(x.rows()), y.data(),
                             opt.threads);
    } else if (x.rows() == 1 && opt.fast_matvec) {
        matvec(w, x.data(), y.data(), opt.threads);
    } else if (x.rows() <= kFewRows && opt.fast_matvec) {
        matmul_few_rows(w, x.data(), static_cast<int>(x.rows()), y.data(), opt.threads);
    } else {
        y.noalias() = x * w.transpose();
    }
}

// run.c's RoPE: within each head, rotate the pair (2i, 2i+1) by pos · θ^(−2i/d).
void rope_row(float* v, int width, int head_dim, int pos, float theta) {
    for (int i = 0; i < width; i += 2) {
        const int j = i % head_dim;
        const float freq = 1.0f / std::pow(theta, static_cast<float>(j) / static_cast<float>(head_dim));
        const float a = static_cast<float>(pos) * freq;
        const float c = std::cos(a), s = std::sin(a);
        const float v0 = v[i], v1 = v[i + 1];
        v[i] = v0 * c - v1 * s;
        v[i + 1] = v0 * s + v1 * c;
    }
}

float dot(const float* a, const float* b, int n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; ++i) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

// One query head over keys [lo, hi) of its K/V head, read in place from the cache.
void attend(const float* q, KvCache& cache, int layer, int kvh, int lo, int hi, int d, const ForwardOptions& opt,
            float* out, std::vector<float>& scratch) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::fill(out, out + d, 0.0f);
    if (opt.attention == AttentionKind::Plain) {
        scratch.resize(static_cast<std::size_t>(hi - lo));
        float mx = -INFINITY;
        for (int p = lo; p < hi;) {
            const int run = cache.run_length(p, hi);
            const float* k = cache.key(layer, kvh, p);
            for (int t = 0; t < run; ++t) {
                const float s = dot(q, k + std::size_t(t) * d, d) * scale;
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
                for (int i = 0; i < d; ++i) out[i] += wgt * vt[i];
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
            const float s = dot(q, cache.key(layer, kvh, p), d) * scale;
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
            const float* v = cache.value(layer, kvh, p);
            for (int i = 0; i < d; ++i) out[i] += e * v[i];
        }
        m = m_new;
    }
    for (int i = 0; i < d; ++i) out[i] /= l;
}

}  // namespace

#if defined(__x86_64__)
// AVX-512F versions of the one-row dot products, chosen at run time (the default build has no
// -march): 16 floats per instruction, bf16 widened by a shift, float32 fused multiply-adds.
// Horizontal sum through memory (GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its header).
__attribute__((target("avx512f"))) static float hsum512(__m512 v) {
    alignas(64) float t[16];
    _mm512_store_ps(t, v);
    float s = 0;
    for (float f : t) s += f;
    return s;
}

__attribute__((target("avx512f"))) static float dot_f32_avx512(const float* w, const float* x, int n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i), _mm512_loadu_ps(x + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 16), _mm512_loadu_ps(x + i + 16), a1);
    }
    float s = hsum512(_mm512_add_ps(a0, a1));
    for (; i < n; ++i) s += w[i] * x[i];
    return s;
}

__attribute__((target("avx512f"))) static float dot_bf16_avx512(const std::uint16_t* w, const float* x, int n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512i h0 = _mm512_maskz_cvtepu16_epi32(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i)));
        const __m512i h1 = _mm512_maskz_cvtepu16_epi32(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 16)));
        a0 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, h0, 16)), _mm512_loadu_ps(x + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, h1, 16)), _mm512_loadu_ps(x + i + 16), a1);
    }
    float s = hsum512(_mm512_add_ps(a0, a1));
    for (; i < n; ++i) s += bf16_to_float(w[i]) * x[i];
    return s;
}

static bool has_avx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}
#endif

void matvec(const MatMap& w, const float* x, float* y, int threads) {
    const Eigen::Index rows = w.rows();
    const int n = static_cast<int>(w.cols());
    const float* base = w.data();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index r = 0; r < rows; ++r) {
        const float* row = base + r * n;
#if defined(__x86_64__)
        if (has_avx512()) {
            y[r] = dot_f32_avx512(row, x, n);
            continue;
        }
#endif
        // Eight independent accumulators: the loop is bound by reading `row`, not by adds.
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int i = 0;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; ++k) acc[k] += row[i + k] * x[i + k];
        float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; i < n; ++i) s += row[i] * x[i];
        y[r] = s;
    }
}

void matmul_few_rows(const MatMap& w, const float* x, int rows, float* y, int threads) {
    const Eigen::Index out = w.rows();
    const int n = static_cast<int>(w.cols());
    const float* base = w.data();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index r = 0; r < out; ++r) {
        // Each weight row is read once and used for every input row (batch decode's point).
        const float* row = base + r * n;
        for (int b = 0; b < rows; ++b) {
            const float* xb = x + std::size_t(b) * std::size_t(n);
            float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int i = 0;
            for (; i + 8 <= n; i += 8)
                for (int k = 0; k < 8; ++k) acc[k] += row[i + k] * xb[i + k];
            float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            for (; i < n; ++i) s += row[i] * xb[i];
            y[std::size_t(b) * std::size_t(out) + std::size_t(r)] = s;
        }
    }
}

Bf16Weights to_bf16(const Weights& w) {
    Bf16Weights b;
    b.float_base = w.data();
    b.values.resize(w.floats());
    for (std::uint64_t i = 0; i < w.floats(); ++i) {
        std::uint32_t u;
        std::memcpy(&u, w.data() + i, sizeof u);
        u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest, ties to even (weights are finite)
        b.values[i] = static_cast<std::uint16_t>(u >> 16);
    }
    return b;
}

void matmul_few_rows_bf16(const std::uint16_t* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index r = 0; r < out; ++r) {
        const std::uint16_t* row = w + r * n;
        if (rows == 1) {
#if defined(__x86_64__)
            if (has_avx512()) {
                y[r] = dot_bf16_avx512(row, x, n);
                continue;
            }
#endif
            // One input row: convert in the dot product itself, no staging buffer.
            float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int i = 0;
            for (; i + 8 <= n; i += 8)
                for (int k = 0; k < 8; ++k) a[k] += bf16_to_float(row[i + k]) * x[i + k];
            for (; i < n; ++i) a[0] += bf16_to_float(row[i]) * x[i];
            y[r] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
            continue;
        }
        float wf[256];
        float acc[16][8] = {};
        // Convert a slice of the row once, then use it for every input row.
        for (int i0 = 0; i0 < n; i0 += 256) {
            const int len = std::min(256, n - i0);
            for (int i = 0; i < len; ++i) wf[i] = bf16_to_float(row[i0 + i]);
            for (int b = 0; b < rows; ++b) {
                const float* xb = x + std::size_t(b) * std::size_t(n) + i0;
                int i = 0;
                for (; i + 8 <= len; i += 8)
                    for (int k = 0; k < 8; ++k) acc[b][k] += wf[i + k] * xb[i + k];
                for (; i < len; ++i) acc[b][0] += wf[i] * xb[i];
            }
        }
        for (int b = 0; b < rows; ++b) {
            const float* a = acc[b];
            y[std::size_t(b) * std::size_t(out) + std::size_t(r)] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
        }
    }
}


namespace {

class CpuBackend final : public Backend {
public:
    std::string name() const override { return "cpu"; }
    float* allocate(std::size_t floats) override {
        if (floats == 0) return nullptr;
        const std::size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, bytes);
        if (!p) throw Error(fmt::format("cannot allocate {} bytes of host memory", bytes));
        std::memset(p, 0, bytes);
        return static_cast<float*>(p);
    }
    void release(float* p, std::size_t) noexcept override { std::free(p); }
    void upload(float* dst, const float* host, std::size_t floats) override { std::copy_n(host, floats, dst); }
    void download(float* host, const float* src, std::size_t floats) override { std::copy_n(src, floats, host); }

    void embed(const MatMap& table, const std::vector<int>& tokens, Tensor& x) override {
        x.resize(static_cast<int>(tokens.size()), static_cast<int>(table.cols()));
        for (std::size_t r = 0; r < tokens.size(); ++r)
            std::copy_n(table.row(tokens[r]).data(), table.cols(), x.row(static_cast<int>(r)));
    }
    void rmsnorm(const Tensor& x, const VecMap& w, float eps, Tensor& y) override {
        y.resize(x.rows(), x.cols());
        rmsnorm_rows(map(y), cmap(x), w, eps);
    }
    void matmul(const Tensor& x, const MatMap& w, Tensor& y, const ForwardOptions& opt) override {
        y.resize(x.rows(), static_cast<int>(w.rows()));
        project(map(y), cmap(x), w, opt);
    }
    void rope(Tensor& v, const std::vector<int>& pos, int head_dim, float theta) override {
        for (int r = 0; r < v.rows(); ++r) rope_row(v.row(r), v.cols(), head_dim, pos[std::size_t(r)], theta);
    }
    void store_kv(const Tensor& k, const Tensor& v, const StepRows& step, int layer) override {
        const int d = step.head_dim, heads = k.cols() / d;
        for (int r = 0; r < k.rows(); ++r) {
            KvCache& c = *step.rows[std::size_t(r)].cache;
            for (int h = 0; h < heads; ++h) {
                std::copy_n(k.row(r) + h * d, d, c.key(layer, h, step.pos[std::size_t(r)]));
                std::copy_n(v.row(r) + h * d, d, c.value(layer, h, step.pos[std::size_t(r)]));
            }
        }
    }
    void attention(const Tensor& q, const StepRows& step, int layer, const ForwardOptions& opt, Tensor& out) override {
        out.resize(q.rows(), q.cols());
        const int R = q.rows();
        const int d = step.head_dim;
        const int n_heads = q.cols() / d;
        const int group = n_heads / step.n_kv_heads;
        std::vector<std::vector<float>> scratch(static_cast<std::size_t>(std::max(1, opt.threads)));
        // Row r sees positions ≤ pos[r] (causal), read in place from its own cache.
#pragma omp parallel for collapse(2) num_threads(opt.threads) schedule(static) if (opt.threads > 1)
        for (int r = 0; r < R; ++r)
            for (int h = 0; h < n_heads; ++h) {
                int tid = 0;
#ifdef _OPENMP
                tid = omp_get_thread_num();
#endif
                const int hi = step.pos[std::size_t(r)] + 1;
                const int lo = opt.window > 0 ? std::max(0, hi - opt.window) : 0;
                attend(q.row(r) + h * d, *step.rows[std::size_t(r)].cache, layer, h / group, lo, hi, d, opt,
                       out.row(r) + h * d, scratch[static_cast<std::size_t>(tid)]);
            }
    }
    void swiglu(Tensor& a, const Tensor& b) override {
        TMap x = map(a);
        x = (x.array() / (1.0f + (-x.array()).exp())) * cmap(b).array();
    }
    void add(Tensor& y, const Tensor& x) override { map(y) += cmap(x); }
    void to_host(const Tensor& t, MatrixRM& out) override {
        out.resize(t.rows(), t.cols());
        std::copy_n(t.data(), t.size(), out.data());
    }
};

}  // namespace

Backend& cpu_backend() {
    static CpuBackend b;
    return b;
}

}  // namespace inferlab::model
