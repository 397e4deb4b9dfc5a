// The reference kernels: plain loops beside the fast ones (cpu_backend.cpp, kernels_float.cpp, kernels_quant.cpp), with the same
// signatures. One accumulator per output, the textbook order of operations; no SIMD, no tiles,
// no prefetch. They run on any CPU and are what the fast kernels are tested against.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "inferlab/base/error.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/transformer.hpp"

namespace inferlab::model {

Kernels parse_kernels(const std::string& where, const std::string& text) {
    if (text == "fast") return Kernels::Fast;
    if (text == "reference") return Kernels::Reference;
    throw InputError(where, text, N_("must be fast or reference"));
}

std::string to_string(Kernels k) { return k == Kernels::Fast ? "fast" : "reference"; }

Kernels default_kernels() {
    const char* env = std::getenv("INFERLAB_KERNELS");
    if (!env || !*env) return Kernels::Fast;
    return parse_kernels("INFERLAB_KERNELS", env);
}

Isa isa_cap() {
    static const Isa cap = [] {
        const char* env = std::getenv("INFERLAB_ISA");
        const std::string t = env ? env : "";
        if (t.empty() || t == "avx512") return Isa::Avx512;
        if (t == "avx2") return Isa::Avx2;
        if (t == "scalar") return Isa::Scalar;
        throw InputError("INFERLAB_ISA", t, N_("must be avx512, avx2 or scalar"));
    }();
    return cap;
}

std::string to_string(Isa isa) {
    switch (isa) {
        case Isa::Avx512: return "avx512";
        case Isa::Avx2: return "avx2";
        case Isa::Scalar: break;
    }
    return "scalar";
}

namespace ref {

void matvec(const MatMap& w, const float* x, float* y, int threads) {
    matmul_few_rows(w, x, 1, y, threads);
}

void matmul_few_rows(const MatMap& w, const float* x, int rows, float* y, int threads) {
    const Eigen::Index out = w.rows(), in = w.cols();
    // Threads split the output columns; each y element is one thread's sum in index order, so
    // the result does not depend on the thread count.
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index r = 0; r < out; ++r)
        for (int b = 0; b < rows; ++b) {
            float s = 0;
            for (Eigen::Index i = 0; i < in; ++i) s += w(r, i) * x[std::size_t(b) * std::size_t(in) + std::size_t(i)];
            y[std::size_t(b) * std::size_t(out) + std::size_t(r)] = s;
        }
}

void matmul_few_rows_bf16(const std::uint16_t* w, Eigen::Index out, int in, const float* x, int rows, float* y,
                          int threads) {
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index r = 0; r < out; ++r)
        for (int b = 0; b < rows; ++b) {
            float s = 0;
            for (int i = 0; i < in; ++i)
                s += bf16_to_float(w[std::size_t(r) * std::size_t(in) + std::size_t(i)]) * x[std::size_t(b) * std::size_t(in) + std::size_t(i)];
            y[std::size_t(b) * std::size_t(out) + std::size_t(r)] = s;
        }
}

namespace {
float dot(const float* a, const float* b, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}
}  // namespace

void attend(const float* q, KvCache& cache, int layer, int kvh, int lo, int hi, int d, const ForwardOptions& opt,
            float* out, std::vector<float>& scratch) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::fill(out, out + d, 0.0f);
    if (opt.attention == AttentionKind::Plain) {
        // Scores for every key [hi − lo], one softmax, then the weighted sum of the values.
        scratch.resize(static_cast<std::size_t>(hi - lo));
        float mx = -INFINITY;
        for (int p = lo; p < hi; ++p) {
            const float s = dot(q, cache.key(layer, kvh, p), d) * scale;
            scratch[std::size_t(p - lo)] = s;
            mx = std::max(mx, s);
        }
        float sum = 0;
        for (auto& s : scratch) sum += s = std::exp(s - mx);
        for (int p = lo; p < hi; ++p) {
            const float wgt = scratch[std::size_t(p - lo)] / sum;
            const float* v = cache.value(layer, kvh, p);
            for (int i = 0; i < d; ++i) out[i] += wgt * v[i];
        }
        return;
    }
    // Online softmax over key blocks [B]: m (running max), l (running sum) and an unnormalised
    // output, rescaled by exp(m_old − m_new) whenever a block raises the max.
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

}  // namespace ref
}  // namespace inferlab::model
