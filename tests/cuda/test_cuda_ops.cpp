// Each CUDA op against the CPU implementation on fresh random inputs, and full-model logits.
// Tolerances: float32, 1e-5 relative for elementwise ops, 1e-4 for reductions (the GPU sums in
// a different order: warp shuffles and split softmax).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "inferlab/cuda/cuda_model.hpp"
#include "inferlab/cuda/ops.hpp"
#include "inferlab/model/kv_cache.hpp"
#include "inferlab/model/transformer.hpp"
#include "inferlab/rng.hpp"

using namespace inferlab;
using namespace inferlab::cuda;

namespace {
std::vector<float> random_vec(std::size_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(rng.normal());
    return v;
}
DeviceBuffer to_device(const std::vector<float>& v) {
    DeviceBuffer b(v.size() * sizeof(float));
    b.upload(v.data(), v.size() * sizeof(float));
    return b;
}
std::vector<float> to_host(const DeviceBuffer& b, std::size_t n) {
    std::vector<float> v(n);
    b.download(v.data(), n * sizeof(float));
    return v;
}
double rel_err(const std::vector<float>& a, const std::vector<float>& b) {
    double worst = 0, scale = 1;
    for (std::size_t i = 0; i < a.size(); ++i) {
        scale = std::max(scale, double(std::fabs(b[i])));
        worst = std::max(worst, double(std::fabs(a[i] - b[i])));
    }
    return worst / scale;
}
}  // namespace

TEST_CASE("cuda matvec and matmul_rows equal the CPU kernels", "[cuda]") {
    const int rows = 777, cols = 516;
    auto w = random_vec(std::size_t(rows) * cols, 1), x = random_vec(std::size_t(cols) * 5, 2);
    model::MatMap wm(w.data(), rows, cols);
    std::vector<float> ref(std::size_t(rows) * 5);
    model::matmul_few_rows(wm, x.data(), 5, ref.data(), 1);
    DeviceBuffer dw = to_device(w), dx = to_device(x), dy(ref.size() * sizeof(float));
    matmul_rows(dw.f(), dx.f(), dy.f(), 5, rows, cols);
    CHECK(rel_err(to_host(dy, ref.size()), ref) <= 1e-4);
    std::vector<float> ref1(rows);
    model::matvec(wm, x.data(), ref1.data(), 1);
    matvec(dw.f(), dx.f(), dy.f(), rows, cols);
    CHECK(rel_err(to_host(dy, rows), ref1) <= 1e-4);
}

TEST_CASE("cuda rmsnorm, rope, swiglu, add, softmax", "[cuda]") {
    const int n = 300;
    auto x = random_vec(n * 3, 3), g = random_vec(n, 4), b = random_vec(n, 5);
    DeviceBuffer dx = to_device(x), dg = to_device(g), dy(x.size() * 4);
    rmsnorm(dx.f(), dg.f(), dy.f(), 3, n, 1e-5f);
    std::vector<float> ref(x.size());
    for (int r = 0; r < 3; ++r) {
        double ss = 0;
        for (int i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
        float s = 1.0f / std::sqrt(float(ss / n) + 1e-5f);
        for (int i = 0; i < n; ++i) ref[r * n + i] = g[i] * x[r * n + i] * s;
    }
    CHECK(rel_err(to_host(dy, x.size()), ref) <= 1e-4);
    // RoPE: position 7, head width 20.
    std::vector<int> pos = {7};
    DeviceBuffer dp(sizeof(int));
    dp.upload(pos.data(), sizeof(int));
    DeviceBuffer dr = to_device(std::vector<float>(x.begin(), x.begin() + n));
    rope(dr.f(), dp.i(), 1, n, 20, 10000.0f);
    std::vector<float> rr(x.begin(), x.begin() + n);
    for (int i = 0; i < n; i += 2) {
        int j = i % 20;
        float a = 7.0f / std::pow(10000.0f, float(j) / 20.0f), c = std::cos(a), s = std::sin(a);
        float v0 = rr[i], v1 = rr[i + 1];
        rr[i] = v0 * c - v1 * s;
        rr[i + 1] = v0 * s + v1 * c;
    }
    CHECK(rel_err(to_host(dr, n), rr) <= 1e-5);
    DeviceBuffer da = to_device(std::vector<float>(x.begin(), x.begin() + n)), db = to_device(b);
    swiglu(da.f(), db.f(), n);
    std::vector<float> sw(n);
    for (int i = 0; i < n; ++i) sw[i] = x[i] / (1.0f + std::exp(-x[i])) * b[i];
    CHECK(rel_err(to_host(da, n), sw) <= 1e-5);
    add(da.f(), db.f(), n);
    for (int i = 0; i < n; ++i) sw[i] += b[i];
    CHECK(rel_err(to_host(da, n), sw) <= 1e-5);
    DeviceBuffer ds = to_device(b);
    softmax(ds.f(), 1, n);
    double m = *std::max_element(b.begin(), b.end()), sum = 0;
    std::vector<float> sm(n);
    for (int i = 0; i < n; ++i) sum += std::exp(b[i] - m);
    for (int i = 0; i < n; ++i) sm[i] = float(std::exp(b[i] - m) / sum);
    CHECK(rel_err(to_host(ds, n), sm) <= 1e-4);
}

TEST_CASE("cuda model logits equal the CPU model's, contiguous and paged", "[cuda]") {
    model::Dims d;
    d.dim = 128;
    d.hidden_dim = 256;
    d.n_layers = 3;
    d.n_heads = 8;
    d.n_kv_heads = 2;
    d.vocab_size = 300;
    d.seq_len = 700;  // long enough for several flash-decoding splits
    auto w = model::random_weights(d, 9);
    model::Transformer cpu(*w);
    std::vector<int> tokens;
    for (int i = 0; i < 600; ++i) tokens.push_back((i * 37 + 11) % 300);
    model::ContiguousCache c(d);
    model::MatrixRM ref = cpu.forward(tokens, c);
    for (bool paged : {false, true}) {
        INFO("paged = " << paged);
        CudaModel gpu(*w, paged, 16, 1);
        model::MatrixRM got = gpu.forward(tokens);
        double worst = 0;
        for (Eigen::Index r = 0; r < ref.rows(); ++r) {
            double scale = std::max(1.0, double(ref.row(r).cwiseAbs().maxCoeff()));
            worst = std::max(worst, double((got.row(r) - ref.row(r)).cwiseAbs().maxCoeff()) / scale);
        }
        CHECK(worst <= 1e-4);
    }
}
