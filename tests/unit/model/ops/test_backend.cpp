// The model's ops go through one Backend interface: a backend that wraps the CPU's and records
// every call sees the whole forward pass, gives the same logits, and owns the caches it reads.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "../../../support/test_backend.hpp"
#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/compare.hpp"

using namespace inferlab::model;
using inferlab::test::test_cpu;

namespace {

// Every op forwarded to the CPU backend, counted by name; its memory is the host's, but it is a
// different backend, so CPU caches are not its caches.
class Recording final : public Backend {
public:
    std::map<std::string, int> calls;
    std::string name() const override { return "recording"; }
    float* allocate(std::size_t n) override { return cpu().allocate(n); }
    void release(float* p, std::size_t n) noexcept override { cpu().release(p, n); }
    void upload(float* d, const float* h, std::size_t n) override { cpu().upload(d, h, n); }
    void download(float* h, const float* s, std::size_t n) override { cpu().download(h, s, n); }
    void embed(const MatMap& t, const std::vector<int>& tok, Tensor& x) override {
        ++calls["embed"];
        cpu().embed(t, tok, x);
    }
    void rmsnorm(const Tensor& x, const VecMap& w, float eps, Tensor& y) override {
        ++calls["rmsnorm"];
        cpu().rmsnorm(x, w, eps, y);
    }
    void matmul(const Tensor& x, const MatMap& w, Tensor& y, const ForwardOptions& o) override {
        ++calls["matmul"];
        cpu().matmul(x, w, y, o);
    }
    void rope(Tensor& v, const std::vector<int>& pos, int hd, float th) override {
        ++calls["rope"];
        cpu().rope(v, pos, hd, th);
    }
    void store_kv(const Tensor& k, const Tensor& v, const StepRows& s, int l) override {
        ++calls["store_kv"];
        cpu().store_kv(k, v, s, l);
    }
    void attention(const Tensor& q, const StepRows& s, int l, const ForwardOptions& o, Tensor& out) override {
        ++calls["attention"];
        cpu().attention(q, s, l, o, out);
    }
    void swiglu(Tensor& a, const Tensor& b) override {
        ++calls["swiglu"];
        cpu().swiglu(a, b);
    }
    void add(Tensor& y, const Tensor& x) override {
        ++calls["add"];
        cpu().add(y, x);
    }
    void to_host(const Tensor& t, MatrixRM& out) override {
        ++calls["to_host"];
        cpu().to_host(t, out);
    }

private:
    static Backend& cpu() { return test_cpu(); }  // the same kernels as the model it is compared with
};

Dims small() {
    Dims d;
    d.dim = 32;
    d.hidden_dim = 64;
    d.n_layers = 3;
    d.n_heads = 4;
    d.n_kv_heads = 2;
    d.vocab_size = 40;
    d.seq_len = 32;
    return d;
}

}  // namespace

TEST_CASE("the forward pass runs entirely through the Backend interface", "[backend]") {
    const Dims d = small();
    auto w = random_weights(d, 3);
    Recording rec;
    Transformer cpu(*w, test_cpu()), recorded(*w, rec);
    ContiguousCache cc(d), rc(d, rec);
    const std::vector<int> prompt = {1, 5, 9, 2, 7};
    const MatrixRM a = cpu.forward(prompt, cc), b = recorded.forward(prompt, rc);
    CHECK(a == b);  // the same ops in the same order: bit-identical
    const int L = d.n_layers;
    CHECK(rec.calls["embed"] == 1);
    CHECK(rec.calls["matmul"] == 7 * L + 1);  // Q, K, V, O, gate, up, down per layer; the LM head
    CHECK(rec.calls["rmsnorm"] == 2 * L + 1);
    CHECK(rec.calls["rope"] == 2 * L);
    CHECK(rec.calls["store_kv"] == L);
    CHECK(rec.calls["attention"] == L);
    CHECK(rec.calls["swiglu"] == L);
    CHECK(rec.calls["add"] == 2 * L);
    CHECK(rec.calls["to_host"] == 1);
    // The no-cache path takes its throw-away caches from the model's backend too.
    rec.calls.clear();
    const MatrixRM n = logits_without_cache(recorded, prompt);
    CHECK(rec.calls["embed"] == static_cast<int>(prompt.size()));
    // 1e-5 of each position's largest logit: float32 sums over different row counts (the no-cache
    // path recomputes the prefix).
    CHECK(compare_logits(n, a).max_rel <= 1e-5);
}

TEST_CASE("CPU backends with other options share the host's memory and read each other's caches", "[backend]") {
    const Dims d = small();
    auto w = random_weights(d, 3);
    CpuBackend two_threads({.threads = 2, .kernels = Kernels::Reference});
    const Transformer m(*w, two_threads), one(*w, test_cpu());
    ContiguousCache made_by_default(d);  // allocated by cpu_backend(), read by two_threads
    REQUIRE(&made_by_default.backend() == &cpu_backend());
    const std::vector<int> prompt = {4, 8, 15, 16, 23};
    const MatrixRM a = m.forward(prompt, made_by_default);
    ContiguousCache c(d);
    const MatrixRM b = one.forward(prompt, c);
    // 1e-5 relative to each row's largest logit: reference and fast kernels sum in different orders.
    CHECK(compare_logits(a, b).max_rel <= 1e-5);
    CHECK(made_by_default.length(0) == static_cast<int>(prompt.size()));
    // The options are the backend's, asked of any backend: nullptr off the CPU.
    REQUIRE(cpu_options(two_threads) != nullptr);
    CHECK(cpu_options(two_threads)->threads == 2);
    CHECK(cpu_options(two_threads)->kernels == Kernels::Reference);
    Recording rec;
    CHECK(cpu_options(rec) == nullptr);
    CHECK(two_threads.memory_space() == cpu_backend().memory_space());
    CHECK(rec.memory_space() != cpu_backend().memory_space());
}

TEST_CASE("a cache belongs to the backend that allocated it", "[backend]") {
    const Dims d = small();
    auto w = random_weights(d, 3);
    Recording rec;
    Transformer recorded(*w, rec), cpu(*w, test_cpu());
    ContiguousCache host_cache(d);
    BlockPool pool(d, 4, 8, 1, rec);
    PagedCache rec_cache(pool, d);
    CHECK(&host_cache.backend() == &cpu_backend());
    CHECK(&rec_cache.backend() == &rec);
    CHECK_THROWS_WITH(recorded.forward(std::vector<int>{1}, host_cache),
                      "a KV cache in cpu memory was passed to the recording backend; make the cache with the model's backend");
    CHECK_THROWS_WITH(cpu.forward(std::vector<int>{1}, rec_cache), Catch::Contains("recording memory was passed to the cpu backend"));
    // Placement: where a kernel finds a layer's K/V.
    ContiguousCache c(d);
    const KvPlacement p = c.placement(2);
    CHECK(p.k == c.key(2, 0, 0));
    CHECK(p.block_table == nullptr);
    rec_cache.reserve(6);
    const KvPlacement q = rec_cache.placement(1);
    REQUIRE(q.block_table != nullptr);
    CHECK(q.block_table->size() == 2);
    CHECK(q.block_size == 4);
    CHECK(q.k + ((((std::size_t((*q.block_table)[1]) * d.n_layers + 1) * d.n_kv_heads + 1) * 4 + 1) * d.head_dim()) ==
          rec_cache.key(1, 1, 5));
}
