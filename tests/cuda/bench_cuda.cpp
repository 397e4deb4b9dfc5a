// GPU benchmark for scripts/gpu-check.sh: each kernel's achieved GB/s (the bytes its comment in
// inferlab/cuda/ops.hpp states, over its time) against the card's measured device-to-device copy
// bandwidth (bytes read plus bytes written), and whole-model decode time beside decode-roofline's
// bound at that same bandwidth. Targets (docs/cuda.md): matvec and decode attention ≥ 70% of the
// copy bandwidth; a decode step within 1.5× of the bound.
//
// Every operand set is replicated until the copies together exceed 4× the L2 (50 MB on an H200),
// and repetitions rotate through them, so a 64 MiB matrix or a 33 MB cache is read from HBM, not L2.
// Inputs are random (never zeros: they can run faster than real data).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "inferlab/base/rng.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/cuda/backend.hpp"
#include "inferlab/cuda/ops.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/bench.hpp"

using namespace inferlab;
using namespace inferlab::cuda;

namespace {

double g_copy = 0;        // GB/s, read + write
std::size_t g_l2 = 0;     // bytes

DeviceBuffer random_device(std::size_t floats, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<float> h(floats);
    for (auto& x : h) x = static_cast<float>(rng.uniform() - 0.5);  // uniform: gigabytes of inputs, Box–Muller would dominate
    DeviceBuffer b(floats * sizeof(float));
    b.upload(h.data(), floats * sizeof(float));
    return b;
}
// Copies of an operand set so that all of them together exceed 4× L2 (at least 2).
int copies_for(std::size_t bytes_per_set) { return int(std::max<std::size_t>(2, 4 * g_l2 / std::max<std::size_t>(bytes_per_set, 1) + 1)); }

void row(const std::string& name, double ms, double bytes, double target) {
    const double gbs = bytes / (ms * 1e-3) / 1e9;
    std::printf("%-52s %9.4f ms %9.1f GB/s %7.1f%% of copy%s\n", name.c_str(), ms, gbs, 100 * gbs / g_copy,
                target > 0 ? (gbs / g_copy >= target ? "   target met" : "   BELOW target") : "");
}

struct Rotating {
    std::vector<std::function<void()>> calls;
    std::size_t next = 0;
    static void run(void* p) {
        auto* r = static_cast<Rotating*>(p);
        r->calls[r->next++ % r->calls.size()]();
    }
};

void bench_matvec(int rows, int cols) {
    const std::size_t set = (std::size_t(rows) * cols + cols + rows) * 4;
    const int n = copies_for(set);
    std::vector<DeviceBuffer> w, x, y;
    Rotating r;
    for (int i = 0; i < n; ++i) {
        w.push_back(random_device(std::size_t(rows) * cols, 10 + i));
        x.push_back(random_device(std::size_t(cols), 20 + i));
        y.emplace_back(std::size_t(rows) * 4);
    }
    for (int i = 0; i < n; ++i) r.calls.push_back([&, i] { matvec(w[i].f(), x[i].f(), y[i].f(), rows, cols); });
    row(fmt::format("matvec {}x{} fp32 ({} sets)", rows, cols, n), time_ms(Rotating::run, &r, 60), double(set), 0.7);
    // matmul_rows: 8 rows reading W once.
    std::vector<DeviceBuffer> x8, y8;
    for (int i = 0; i < n; ++i) x8.push_back(random_device(std::size_t(cols) * 8, 30 + i)), y8.emplace_back(std::size_t(rows) * 8 * 4);
    Rotating r8;
    for (int i = 0; i < n; ++i) r8.calls.push_back([&, i] { matmul_rows(w[i].f(), x8[i].f(), y8[i].f(), 8, rows, cols); });
    row(fmt::format("matmul_rows n=8 {}x{} fp32", rows, cols), time_ms(Rotating::run, &r8, 60),
        (double(rows) * cols + 8.0 * (cols + rows)) * 4, 0);
}

// The fused decode-step products (Llama-3-8B's shapes): Q, K, V with RoPE in one launch
// (4096 + 1024 + 1024 rows of 4096), and W1, W3 with SwiGLU (2 × 14336 rows of 4096).
void bench_fused() {
    const int dim = 4096, dq = 4096, dkv = 1024, hidden = 14336;
    {
        const std::size_t set = (std::size_t(dq + 2 * dkv) * dim + dim + dq + 2 * dkv) * 4;
        const int n = copies_for(set);
        std::vector<DeviceBuffer> wq, wk, wv, x, q, k, v;
        DeviceBuffer pos(sizeof(int));
        const int p = 1000;
        pos.upload(&p, sizeof p);
        Rotating r;
        for (int i = 0; i < n; ++i) {
            wq.push_back(random_device(std::size_t(dq) * dim, 200 + i));
            wk.push_back(random_device(std::size_t(dkv) * dim, 300 + i));
            wv.push_back(random_device(std::size_t(dkv) * dim, 400 + i));
            x.push_back(random_device(std::size_t(dim), 500 + i));
            q.emplace_back(std::size_t(dq) * 4), k.emplace_back(std::size_t(dkv) * 4), v.emplace_back(std::size_t(dkv) * 4);
        }
        for (int i = 0; i < n; ++i)
            r.calls.push_back([&, i] {
                qkv_rope(wq[i].f(), wk[i].f(), wv[i].f(), x[i].f(), q[i].f(), k[i].f(), v[i].f(), dq, dkv, dim, pos.i(), 128, 500000.0f);
            });
        row("qkv_rope (4096+1024+1024)x4096 fp32", time_ms(Rotating::run, &r, 60), double(set), 0.7);
    }
    {
        const std::size_t set = (2 * std::size_t(hidden) * dim + dim + 2 * std::size_t(hidden)) * 4;
        const int n = copies_for(set);
        std::vector<DeviceBuffer> w1, w3, x, h1, h3;
        Rotating r;
        for (int i = 0; i < n; ++i) {
            w1.push_back(random_device(std::size_t(hidden) * dim, 600 + i));
            w3.push_back(random_device(std::size_t(hidden) * dim, 700 + i));
            x.push_back(random_device(std::size_t(dim), 800 + i));
            h1.emplace_back(std::size_t(hidden) * 4), h3.emplace_back(std::size_t(hidden) * 4);
        }
        for (int i = 0; i < n; ++i)
            r.calls.push_back([&, i] { swiglu_matvec(w1[i].f(), w3[i].f(), x[i].f(), h1[i].f(), h3[i].f(), hidden, dim); });
        row("swiglu_matvec 2x14336x4096 fp32", time_ms(Rotating::run, &r, 40), double(set), 0.7);
    }
}

// Decode attention: B rows of length len each, H_q = 32, H_kv = 8, d = 128 (Llama-3-8B's heads),
// contiguous caches or a paged pool with blocks of 16.
void bench_decode(int B, int len, bool paged) {
    const int hq = 32, hkv = 8, d = 128, block = 16;
    const std::size_t kv_floats = std::size_t(B) * hkv * len * d;
    const double bytes = 2.0 * double(kv_floats) * 4 + 2.0 * B * hq * d * 4;  // K and V once, q in, out
    const int n = copies_for(std::size_t(bytes));
    struct Set {
        DeviceBuffer q, k, v, out, rows, table, scratch;
        std::size_t sf = 0;
    };
    std::vector<Set> sets(static_cast<std::size_t>(n));
    Rotating r;
    for (int s = 0; s < n; ++s) {
        Set& S = sets[std::size_t(s)];
        S.q = random_device(std::size_t(B) * hq * d, 40 + s);
        S.k = random_device(kv_floats, 50 + s);
        S.v = random_device(kv_floats, 60 + s);
        S.out = DeviceBuffer(std::size_t(B) * hq * d * 4);
        std::vector<DecodeRow> rows(static_cast<std::size_t>(B));
        std::vector<int> table;
        const int per_row_blocks = (len + block - 1) / block;
        for (int b = 0; b < B; ++b)
            for (int i = 0; i < per_row_blocks; ++i) table.push_back(b * per_row_blocks + (i * 7) % per_row_blocks);
        if (paged) {
            S.table = DeviceBuffer(table.size() * sizeof(int));
            S.table.upload(table.data(), table.size() * sizeof(int));
        }
        for (int b = 0; b < B; ++b) {
            KvLayout& kv = rows[std::size_t(b)].kv;
            kv.n_kv_heads = hkv;
            kv.head_dim = d;
            if (paged) {  // the pool [B·len/16, 1, H_kv, 16, d]; this row's blocks shuffled within its range
                kv.k = S.k.f();
                kv.v = S.v.f();
                kv.block_table = S.table.i() + b * per_row_blocks;
                kv.block_size = block;
                kv.n_layers = 1;
            } else {
                kv.k = S.k.f() + std::size_t(b) * hkv * len * d;
                kv.v = S.v.f() + std::size_t(b) * hkv * len * d;
                kv.seq_max = len;
            }
            rows[std::size_t(b)].lo = 0;
            rows[std::size_t(b)].hi = len;
        }
        S.rows = DeviceBuffer(rows.size() * sizeof(DecodeRow));
        S.rows.upload(rows.data(), rows.size() * sizeof(DecodeRow));
        S.sf = decode_attention_scratch(B, len, hq, hkv, d);
        S.scratch = DeviceBuffer(S.sf * 4);
    }
    for (int s = 0; s < n; ++s)
        r.calls.push_back([&, s] {
            Set& S = sets[std::size_t(s)];
            decode_attention(S.q.f(), static_cast<const DecodeRow*>(S.rows.data()), B, len, hq, hkv, d, S.out.f(), S.scratch.f(), S.sf);
        });
    row(fmt::format("decode attn B={} S={} H_q=32 H_kv=8 d=128 {}", B, len, paged ? "paged/16" : "contig"),
        time_ms(Rotating::run, &r, 40), bytes, 0.7);
}

// Prefill attention is compute-bound: reported in TFLOP/s (4·H_q·d per query-key pair, causal).
void bench_prefill(int T) {
    const int hq = 32, hkv = 8, d = 128;
    DeviceBuffer q = random_device(std::size_t(T) * hq * d, 100), k = random_device(std::size_t(hkv) * T * d, 101),
                 v = random_device(std::size_t(hkv) * T * d, 102), out(std::size_t(T) * hq * d * 4);
    KvLayout kv;
    kv.k = k.f();
    kv.v = v.f();
    kv.n_kv_heads = hkv;
    kv.head_dim = d;
    kv.seq_max = T;
    Rotating r;
    r.calls.push_back([&] { prefill_attention(q.f(), kv, 0, T, hq, 0, out.f()); });
    const double ms = time_ms(Rotating::run, &r, 5);
    const double flops = 4.0 * hq * d * (double(T) * (T + 1) / 2);
    std::printf("%-52s %9.4f ms %9.2f TFLOP/s (fp32 CUDA cores: about 67 by the datasheet)\n",
                fmt::format("prefill attn T={} H_q=32 H_kv=8 d=128 causal", T).c_str(), ms, flops / (ms * 1e-3) / 1e12);
}

void bench_elementwise() {
    const int rows = 64, n = 4096;
    const std::size_t f = std::size_t(rows) * n;
    const int c = copies_for(f * 4 * 3);
    std::vector<DeviceBuffer> a, b, o;
    for (int i = 0; i < c; ++i) a.push_back(random_device(f, 70 + i)), b.push_back(random_device(f, 80 + i)), o.emplace_back(f * 4);
    DeviceBuffer g = random_device(std::size_t(n), 90);
    Rotating rn, rs, ra;
    for (int i = 0; i < c; ++i) {
        rn.calls.push_back([&, i] { rmsnorm(a[i].f(), g.f(), o[i].f(), rows, n, 1e-5f); });
        rs.calls.push_back([&, i] { swiglu(o[i].f(), b[i].f(), int(f)); });
        ra.calls.push_back([&, i] { add(o[i].f(), b[i].f(), int(f)); });
    }
    row("rmsnorm 64x4096", time_ms(Rotating::run, &rn, 50), (2.0 * f + n) * 4, 0);
    row("swiglu 64x4096", time_ms(Rotating::run, &rs, 50), 3.0 * f * 4, 0);
    row("add 64x4096", time_ms(Rotating::run, &ra, 50), 3.0 * f * 4, 0);
}

}  // namespace

int main() {
    std::string why;
    if (!available(&why)) {
        std::printf("no CUDA device: %s\n", why.c_str());
        return 77;
    }
    int dev = 0, l2 = 0, driver = 0, runtime = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    g_l2 = std::size_t(l2);
    std::printf("device: %s, %d multiprocessors, L2 %.1f MB, driver API %d, runtime %d\n", device_name().c_str(),
                multiprocessor_count(), l2 / 1e6, driver, runtime);
    g_copy = copy_bandwidth_gbs(std::size_t(1) << 31, 20);  // 2 GiB each way: far past L2
    std::printf("device-to-device copy: %.1f GB/s (bytes read + bytes written; the 100%% below)\n\n", g_copy);

    for (auto [rows, cols] : std::vector<std::pair<int, int>>{{4096, 4096}, {14336, 4096}, {4096, 14336}, {1024, 4096}})
        bench_matvec(rows, cols);
    bench_fused();
    for (int len : {4096, 32768}) bench_decode(1, len, false);
    bench_decode(1, 32768, true);
    bench_decode(16, 2048, true);
    bench_decode(64, 512, false);
    bench_elementwise();
    bench_prefill(2048);

    // Whole model, batch 1: decode steps of ref-110m (float32 weights on the device) timed with a
    // synchronize at each end, beside decode-roofline's bound at the measured copy bandwidth.
    for (const char* name : {"ref-110m"}) {
        auto cfg = load_named_model(name);
        auto w = model::random_weights(model::dims_from_config(cfg), 1);
        auto backend = make_backend(*w);
        model::Transformer gpu(*w, *backend);
        model::ContiguousCache cache(w->dims(), *backend);
        std::vector<int> prompt(128, 5);
        gpu.forward(prompt, cache);
        for (int i = 0; i < 4; ++i) gpu.forward(std::vector<int>{i}, cache);  // warm-up: buffers pooled
        const int steps = 64;
        synchronize();
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        cudaEventRecord(a);
        const std::uint64_t launches0 = launch_count();
        for (int i = 0; i < steps; ++i) gpu.forward(std::vector<int>{(i * 7) % 32000}, cache);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        const double launches = double(launch_count() - launches0) / steps;
        Machine hw;
        hw.bandwidth = g_copy * 1e9;  // the measured copy bandwidth itself, as the bound's memory rate
        const DecodeStep bound = decode_step(model::reference_decode_model(w->dims()), {std::uint64_t(128 + 4 + steps / 2)}, hw);
        const double tps = steps / (ms * 1e-3);
        std::printf("\n%s decode, batch 1: %.3f ms/step (%.0f kernel launches a step), %.1f tokens/s; decode-roofline bound %.1f tokens/s; bound/measured %.2fx %s\n",
                    name, ms / steps, launches, tps, bound.aggregate_tokens_per_s, bound.aggregate_tokens_per_s / tps,
                    bound.aggregate_tokens_per_s / tps <= 1.5 ? "(target met)" : "(BELOW target: over 1.5x)");
    }
    return 0;
}
