// Each CUDA op against the CPU implementation on fresh random inputs, and full-model logits.
// Tolerances: float32, 1e-5 relative for elementwise ops, 1e-4 for reductions (the GPU sums in
// a different order: warp shuffles and split softmax).
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "inferlab/base/rng.hpp"
#include "inferlab/cuda/backend.hpp"
#include "inferlab/cuda/ops.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/compare.hpp"
#include "support.hpp"

using namespace inferlab;
using namespace inferlab::cuda;

using namespace inferlab::cuda::test;

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

// Each op of the Backend interface, CPU against CUDA, on the same fresh random inputs.
namespace {
struct Pair {
    model::Backend& cpu;
    model::Backend& gpu;
    model::Tensor c, g;
    Pair(model::Backend& a, model::Backend& b) : cpu(a), gpu(b), c(a), g(b) {}
    void set(const std::vector<float>& host, int rows, int cols) {
        c.resize(rows, cols);
        g.resize(rows, cols);
        cpu.upload(c.data(), host.data(), host.size());
        gpu.upload(g.data(), host.data(), host.size());
    }
};
std::vector<float> host_of(model::Backend& b, const model::Tensor& t) {
    std::vector<float> v(t.size());
    b.download(v.data(), t.data(), t.size());
    return v;
}
double op_err(Pair& p) { return rel_err(host_of(p.gpu, p.g), host_of(p.cpu, p.c)); }
}  // namespace

TEST_CASE("cuda backend: every op equals the CPU backend's", "[cuda]") {
    model::Dims d;
    d.dim = 96;
    d.hidden_dim = 160;
    d.n_layers = 2;
    d.n_heads = 6;
    d.n_kv_heads = 3;
    d.vocab_size = 50;
    d.seq_len = 600;
    auto w = model::random_weights(d, 21);
    auto gb = make_backend(*w);
    model::Backend& cb = model::cpu_backend();
    const model::ForwardOptions opt;
    Pair x(cb, *gb), y(cb, *gb), z(cb, *gb);
    SECTION("embed (exact), rmsnorm (a reduction: 1e-4), add and swiglu (elementwise: 1e-5)") {
        cb.embed(w->token_embedding(), {3, 0, 49, 7}, x.c);
        gb->embed(w->token_embedding(), {3, 0, 49, 7}, x.g);
        CHECK(op_err(x) == 0);
        cb.rmsnorm(x.c, w->rms_att(1), d.norm_eps, y.c);
        gb->rmsnorm(x.g, w->rms_att(1), d.norm_eps, y.g);
        CHECK(op_err(y) <= 1e-4);
        y.set(random_vec(4 * 96, 21), 4, 96);
        z.set(random_vec(4 * 96, 22), 4, 96);
        cb.add(y.c, z.c);
        gb->add(y.g, z.g);
        CHECK(op_err(y) <= 1e-5);
        cb.swiglu(y.c, z.c);
        gb->swiglu(y.g, z.g);
        CHECK(op_err(y) <= 1e-5);
    }
    SECTION("matmul with 1, 5 and 40 rows (reductions: 1e-4)") {
        for (int rows : {1, 5, 40}) {
            INFO("rows " << rows);
            x.set(random_vec(std::size_t(rows) * 96, 23 + rows), rows, 96);
            cb.matmul(x.c, w->w1(0), y.c, opt);
            gb->matmul(x.g, w->w1(0), y.g, opt);
            CHECK(y.g.rows() == rows);
            CHECK(y.g.cols() == 160);
            CHECK(op_err(y) <= 1e-4);
        }
    }
    SECTION("rope at several positions (elementwise: 1e-5)") {
        x.set(random_vec(3 * 96, 30), 3, 96);
        const std::vector<int> pos = {0, 17, 599};
        cb.rope(x.c, pos, d.head_dim(), d.rope_theta);
        gb->rope(x.g, pos, d.head_dim(), d.rope_theta);
        CHECK(op_err(x) <= 1e-5);
    }
    SECTION("store_kv then attention over contiguous and paged caches (reductions: 1e-4)") {
        for (bool paged : {false, true}) {
            std::unique_ptr<model::BlockPool> cpool, gpool;
            std::unique_ptr<model::KvCache> cc, gc;
            if (paged) {
                cpool = std::make_unique<model::BlockPool>(d, 16, 40, 5);
                gpool = std::make_unique<model::BlockPool>(d, 16, 40, 5, *gb);
                cc = std::make_unique<model::PagedCache>(*cpool, d);
                gc = std::make_unique<model::PagedCache>(*gpool, d);
            } else {
                cc = std::make_unique<model::ContiguousCache>(d);
                gc = std::make_unique<model::ContiguousCache>(d, *gb);
            }
            // 520 positions written in chunks of 130 rows (longer than two flash-decoding splits).
            for (int start = 0; start < 520; start += 130) {
                std::vector<model::Row> cr, gr;
                std::vector<int> pos;
                for (int r = 0; r < 130; ++r) {
                    cr.push_back({0, cc.get()});
                    gr.push_back({0, gc.get()});
                    pos.push_back(start + r);
                }
                cc->reserve(130);
                gc->reserve(130);
                const model::StepRows cs{cr, pos, d.head_dim(), d.n_kv_heads}, gs{gr, pos, d.head_dim(), d.n_kv_heads};
                const auto kv = random_vec(130 * std::size_t(d.kv_dim()), 40 + start);
                x.set(kv, 130, d.kv_dim());
                y.set(random_vec(kv.size(), 41 + start), 130, d.kv_dim());
                cb.store_kv(x.c, y.c, cs, 1);
                gb->store_kv(x.g, y.g, gs, 1);
                for (auto* c : {cc.get(), gc.get()}) c->set_length(1, start + 130);
                z.set(random_vec(130 * 96, 42 + start), 130, 96);
                for (auto kind : {model::AttentionKind::Plain, model::AttentionKind::Online})
                    for (int window : {0, 50}) {
                        INFO("paged " << paged << ", start " << start << ", online " << (kind == model::AttentionKind::Online)
                                      << ", window " << window);
                        model::ForwardOptions o;
                        o.attention = kind;
                        o.window = window;
                        cb.attention(z.c, cs, 1, o, x.c);
                        gb->attention(z.g, gs, 1, o, x.g);
                        CHECK(op_err(x) <= 1e-4);
                    }
            }
        }
    }
}

// The model through the Backend interface: the same Transformer code on the CPU backend and on
// the CUDA backend, every cache path and both attention forms, a sliding window, and a batch.
namespace {
model::Dims test_dims() {
    model::Dims d;
    d.dim = 128;
    d.hidden_dim = 256;
    d.n_layers = 3;
    d.n_heads = 8;
    d.n_kv_heads = 2;
    d.vocab_size = 300;
    d.seq_len = 700;  // long enough for several flash-decoding splits
    return d;
}
double worst_rel(const model::MatrixRM& got, const model::MatrixRM& ref) { return model::compare_logits(got, ref).max_rel; }
model::MatrixRM run(const model::Transformer& m, const std::vector<int>& tokens, const std::string& path,
                    const model::ForwardOptions& opt) {
    const model::Dims& d = m.dims();
    if (path == "nocache") return model::logits_without_cache(m, tokens, opt);
    if (path == "contiguous") {
        model::ContiguousCache c(d, m.backend());
        return m.forward(tokens, c, opt);
    }
    model::BlockPool pool(d, 16, (d.seq_len + 15) / 16, 1, m.backend());
    model::PagedCache c(pool, d);
    // Prefill in chunks of 100, so the paged path also checks the mask offset by the history.
    model::MatrixRM out(static_cast<Eigen::Index>(tokens.size()), d.vocab_size);
    for (std::size_t i = 0; i < tokens.size(); i += 100) {
        std::vector<int> chunk(tokens.begin() + std::ptrdiff_t(i), tokens.begin() + std::ptrdiff_t(std::min(tokens.size(), i + 100)));
        out.middleRows(Eigen::Index(i), Eigen::Index(chunk.size())) = m.forward(chunk, c, opt);
    }
    return out;
}
}  // namespace

TEST_CASE("cuda model logits equal the CPU model's on every cache path", "[cuda]") {
    const model::Dims d = test_dims();
    auto w = model::random_weights(d, 9);
    auto gpu_backend = make_backend(*w);
    model::Transformer cpu(*w), gpu(*w, *gpu_backend);
    std::vector<int> tokens;
    for (int i = 0; i < 600; ++i) tokens.push_back((i * 37 + 11) % 300);
    for (auto kind : {model::AttentionKind::Plain, model::AttentionKind::Online})
        for (int window : {0, 100}) {
            model::ForwardOptions opt;
            opt.attention = kind;
            opt.window = window;
            for (std::string path : {"contiguous", "paged"}) {
                INFO("path " << path << ", online " << (kind == model::AttentionKind::Online) << ", window " << window);
                CHECK(worst_rel(run(gpu, tokens, path, opt), run(cpu, tokens, path, opt)) <= 1e-4);
            }
        }
    // No cache: quadratic, so a shorter prompt.
    std::vector<int> short_tokens(tokens.begin(), tokens.begin() + 40);
    CHECK(worst_rel(run(gpu, short_tokens, "nocache", {}), run(cpu, short_tokens, "nocache", {})) <= 1e-4);
}

TEST_CASE("cuda batch decode: several sequences in one step equal the CPU's", "[cuda]") {
    const model::Dims d = test_dims();
    auto w = model::random_weights(d, 10);
    auto gpu_backend = make_backend(*w);
    model::Transformer cpu(*w), gpu(*w, *gpu_backend);
    std::vector<std::unique_ptr<model::ContiguousCache>> cc, gc;
    for (int s = 0; s < 5; ++s) {
        cc.push_back(std::make_unique<model::ContiguousCache>(d));
        gc.push_back(std::make_unique<model::ContiguousCache>(d, *gpu_backend));
        std::vector<int> prompt(std::size_t(10 + 7 * s), 3 + s);
        cpu.forward(prompt, *cc.back());
        gpu.forward(prompt, *gc.back());
    }
    for (int step = 0; step < 4; ++step) {
        std::vector<model::Row> cr, gr;
        for (int s = 0; s < 5; ++s) {
            cr.push_back({(step * 11 + s) % 300, cc[std::size_t(s)].get()});
            gr.push_back({(step * 11 + s) % 300, gc[std::size_t(s)].get()});
        }
        CHECK(worst_rel(gpu.forward(gr), cpu.forward(cr)) <= 1e-4);
    }
    // A CPU cache handed to the GPU model is refused, not read through a host pointer.
    CHECK_THROWS_WITH(gpu.forward(std::vector<int>{1}, *cc[0]), Catch::Contains("make the cache with the model's backend"));
}
