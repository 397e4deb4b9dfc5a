// Every kernel of lib/cuda/ops.cu against a plain double-precision reference written here, on the
// shapes that matter for indexing: head widths 16, 48, 64, 80, 128, 130 and 256 (d > 128 takes a
// second pass of the d-loops; 130 is not a multiple of 4 and takes the scalar path), H_kv = 1 and
// MHA, windows longer than a split, paged block sizes that do not divide the split, the matvec
// scalar path, batches of rows of different lengths and caches, and prefill. Then the model
// through the CUDA backend against the CPU backend.
//
// The same source runs twice: under the host emulation (tests/cuda/emu, label cuda-emu, every
// build, no GPU) and on a real GPU (cuda_tests, label cuda). Device memory starts as NaN (all-ones
// bytes) in both, so an output nothing wrote, or a read of a cache slot nothing stored, shows up as
// NaN and fails the comparison. Sizes are kept small: the emulation runs a host thread per CUDA thread.
//
// Tolerances: the reference sums in double; the kernels in float32 in another order (warp
// shuffles, split softmax merged by its statistics), so 1e-4 of the output's scale (max(1, |ref|))
// for reductions and 1e-5 for elementwise ops. K/V stores are copies and compared exactly.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
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

namespace {

using namespace inferlab::cuda::test;

// ---- attention: a logical K/V [H_kv, S, d] placed in a device cache, contiguous or paged ----

struct Cache {
    int h_kv, d, len;
    int block = 0;  // 0: contiguous [H_kv, S_max, d]; else paged [blocks, L = 2, H_kv, block, d], layer 1
    std::vector<float> k, v;  // logical [H_kv, len, d]
    std::vector<int> table;
    DeviceBuffer dk, dv, dtable;
    KvLayout layout;
    int seq_max = 0;

    Cache(int h_kv_, int d_, int len_, int block_, std::uint64_t seed) : h_kv(h_kv_), d(d_), len(len_), block(block_) {
        k = random_vec(std::size_t(h_kv) * len * d, seed);
        v = random_vec(k.size(), seed + 1);
        layout.n_kv_heads = h_kv;
        layout.head_dim = d;
        if (block == 0) {
            seq_max = len + 7;  // room past the length: those slots stay NaN
            std::vector<float> hk(std::size_t(h_kv) * seq_max * d, NAN), hv(hk.size(), NAN);
            for (int h = 0; h < h_kv; ++h)
                for (int p = 0; p < len; ++p)
                    for (int i = 0; i < d; ++i) {
                        hk[(std::size_t(h) * seq_max + p) * d + i] = k[(std::size_t(h) * len + p) * d + i];
                        hv[(std::size_t(h) * seq_max + p) * d + i] = v[(std::size_t(h) * len + p) * d + i];
                    }
            dk = to_device(hk), dv = to_device(hv);
            layout.seq_max = seq_max;
        } else {
            // Physical blocks in a shuffled order, two spare ones, two layers (this is layer 1).
            const int logical = (len + block - 1) / block, physical = logical + 2, layers = 2;
            table.resize(std::size_t(logical));
            std::iota(table.begin(), table.end(), 0);
            Rng rng(seed + 2);
            for (int i = logical - 1; i > 0; --i) std::swap(table[std::size_t(i)], table[rng.below(std::uint64_t(i) + 1)]);
            for (auto& t : table) t = physical - 1 - t;  // and away from block 0
            std::vector<float> hk(std::size_t(physical) * layers * h_kv * block * d, NAN), hv(hk.size(), NAN);
            for (int h = 0; h < h_kv; ++h)
                for (int p = 0; p < len; ++p)
                    for (int i = 0; i < d; ++i) {
                        const std::size_t at =
                            (((std::size_t(table[std::size_t(p / block)]) * layers + 1) * h_kv + h) * block + p % block) * d + i;
                        hk[at] = k[(std::size_t(h) * len + p) * d + i];
                        hv[at] = v[(std::size_t(h) * len + p) * d + i];
                    }
            dk = to_device(hk), dv = to_device(hv), dtable = to_device(table);
            layout.block_table = dtable.i();
            layout.block_size = block;
            layout.n_layers = layers;
            layout.layer = 1;
        }
        layout.k = dk.f();
        layout.v = dv.f();
    }
    float kat(int h, int p, int i) const { return k[(std::size_t(h) * len + p) * d + i]; }
    float vat(int h, int p, int i) const { return v[(std::size_t(h) * len + p) * d + i]; }
};

// One query [H_q, d] over positions [lo, hi) of a cache, in double.
std::vector<double> attention_ref(const float* q, const Cache& c, int h_q, int lo, int hi) {
    const int d = c.d, g = h_q / c.h_kv;
    std::vector<double> out(std::size_t(h_q) * d, 0.0);
    for (int h = 0; h < h_q; ++h) {
        const int kvh = h / g;
        std::vector<double> s;
        for (int p = lo; p < hi; ++p) {
            double dot = 0;
            for (int i = 0; i < d; ++i) dot += double(q[h * d + i]) * c.kat(kvh, p, i);
            s.push_back(dot / std::sqrt(double(d)));
        }
        const double m = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (auto& x : s) sum += (x = std::exp(x - m));
        for (int p = lo; p < hi; ++p)
            for (int i = 0; i < d; ++i) out[std::size_t(h) * d + i] += s[std::size_t(p - lo)] / sum * c.vat(kvh, p, i);
    }
    return out;
}

struct DecodeCase {
    int d, h_q, h_kv;
    std::vector<int> lens;  // one row per entry, each with its own cache
    int window = 0;
    int block = 0;
    std::uint64_t seed = 1;
};

void check_decode(const DecodeCase& t) {
    const int B = int(t.lens.size());
    std::vector<std::unique_ptr<Cache>> caches;
    std::vector<DecodeRow> rows;
    int max_len = 0;
    for (int b = 0; b < B; ++b) {
        // Rows alternate contiguous and paged when the case is paged: one launch serves both.
        const int block = t.block > 0 && b % 2 == 0 ? t.block : 0;
        caches.push_back(
            std::make_unique<Cache>(t.h_kv, t.d, t.lens[std::size_t(b)], block, t.seed + 10 * std::uint64_t(b)));
        DecodeRow r;
        r.kv = caches.back()->layout;
        r.hi = t.lens[std::size_t(b)];
        r.lo = t.window > 0 ? std::max(0, r.hi - t.window) : 0;
        max_len = std::max(max_len, r.hi - r.lo);
        rows.push_back(r);
    }
    const auto q = random_vec(std::size_t(B) * t.h_q * t.d, t.seed + 99);
    DeviceBuffer dq = to_device(q), drows = to_device(rows);
    const std::size_t sf = decode_attention_scratch(B, max_len, t.h_q, t.h_kv, t.d);
    DeviceBuffer scratch(sf * sizeof(float));
    // Both pass-1 kernels where the warp kernel fits (G in {1, 2, 4, 8}, d ≤ 128, d % 4 = 0).
    const int g = t.h_q / t.h_kv;
    const bool warps_fit = t.d % 4 == 0 && t.d <= 128 && (g == 1 || g == 2 || g == 4 || g == 8);
    for (DecodeKernel kernel : {DecodeKernel::Block, DecodeKernel::Warps}) {
        if (kernel == DecodeKernel::Warps && !warps_fit) continue;
        DeviceBuffer dout(q.size() * sizeof(float));  // NaN again: every output must be written
        decode_attention(dq.f(), static_cast<const DecodeRow*>(drows.data()), B, max_len, t.h_q, t.h_kv, t.d, dout.f(),
                         scratch.f(), sf, kernel);
        const auto got = to_host(dout, q.size());
        for (int b = 0; b < B; ++b) {
            INFO((kernel == DecodeKernel::Warps ? "warp kernel" : "block kernel")
                 << ", row " << b << " of " << B << ", d " << t.d << ", H_q " << t.h_q << ", H_kv " << t.h_kv
                 << ", len " << t.lens[std::size_t(b)] << ", window " << t.window << ", block "
                 << caches[std::size_t(b)]->block);
            const std::size_t n = std::size_t(t.h_q) * t.d;
            const auto ref = attention_ref(q.data() + b * n, *caches[std::size_t(b)], t.h_q, rows[std::size_t(b)].lo,
                                           rows[std::size_t(b)].hi);
            const std::vector<float> row(got.begin() + std::ptrdiff_t(b * n),
                                         got.begin() + std::ptrdiff_t((b + 1) * n));
            CHECK(rel_err(row, ref) <= 1e-4);  // 1e-4 of scale: float32 sums in split and warp order
        }
    }
}

}  // namespace

TEST_CASE("kernel decode attention: head widths 16 to 256", "[cuda][kernels]") {
    for (int d : {16, 48, 64, 80, 128, 130, 256}) check_decode({d, 4, 2, {150}, 0, 0, std::uint64_t(d)});
}

TEST_CASE("kernel decode attention: H_kv = 1 and MHA", "[cuda][kernels]") {
    check_decode({64, 8, 1, {200}, 0, 0, 3});  // every query head on one K/V head
    check_decode({48, 3, 3, {90}, 0, 0, 4});   // MHA: one query head per K/V head
    // 32 query heads of d = 256 on one K/V head need 70 KiB of shared memory: the opt-in path.
    check_decode({256, 32, 1, {40}, 0, 0, 5});
}

TEST_CASE("kernel decode attention: windows longer than a split and lengths that are not tiles", "[cuda][kernels]") {
    check_decode({64, 4, 2, {700}, 300, 0, 6});  // with few multiprocessors a split is about 96 keys
    check_decode({80, 4, 2, {1}, 0, 0, 7});
    check_decode({16, 2, 1, {33}, 0, 0, 8});
    check_decode({128, 4, 2, {65}, 64, 0, 9});
}

TEST_CASE("kernel decode attention: paged blocks that do not divide the split", "[cuda][kernels]") {
    check_decode({64, 4, 2, {500}, 0, 5, 10});
    check_decode({130, 4, 2, {260}, 0, 24, 11});
    check_decode({128, 8, 2, {400}, 200, 48, 12});
}

TEST_CASE("kernel decode attention: a batch of rows of different lengths and caches in one launch", "[cuda][kernels]") {
    check_decode({64, 4, 2, {37, 300, 1, 129}, 0, 16, 13});
    check_decode({48, 6, 3, {90, 20, 250}, 64, 7, 14});
}

TEST_CASE("kernel store_kv writes each row at its position and nothing else", "[cuda][kernels]") {
    for (int block : {0, 5}) {
        const int h_kv = 2, d = 48, B = 3;
        std::vector<std::unique_ptr<Cache>> caches;
        std::vector<DecodeRow> rows;
        const std::vector<int> pos = {3, 17, 0};
        for (int b = 0; b < B; ++b) {
            caches.push_back(std::make_unique<Cache>(h_kv, d, 20, b == 1 ? 0 : block, 50 + std::uint64_t(b)));
            DecodeRow r;
            r.kv = caches.back()->layout;
            r.hi = pos[std::size_t(b)] + 1;
            rows.push_back(r);
        }
        const auto k = random_vec(std::size_t(B) * h_kv * d, 60), v = random_vec(k.size(), 61);
        DeviceBuffer dk = to_device(k), dv = to_device(v), drows = to_device(rows);
        store_kv(dk.f(), dv.f(), static_cast<const DecodeRow*>(drows.data()), B, h_kv, d);
        for (int b = 0; b < B; ++b) {
            Cache& c = *caches[std::size_t(b)];
            // The expected logical cache: as made, with row b's K/V at its position.
            for (int h = 0; h < h_kv; ++h)
                for (int i = 0; i < d; ++i) {
                    c.k[(std::size_t(h) * c.len + pos[std::size_t(b)]) * d + i] = k[(std::size_t(b) * h_kv + h) * d + i];
                    c.v[(std::size_t(h) * c.len + pos[std::size_t(b)]) * d + i] = v[(std::size_t(b) * h_kv + h) * d + i];
                }
            const std::size_t n = c.dk.bytes() / sizeof(float);
            const auto gk = to_host(c.dk, n), gv = to_host(c.dv, n);
            std::size_t differ = 0;
            for (int h = 0; h < h_kv; ++h)
                for (int p = 0; p < 20; ++p)
                    for (int i = 0; i < d; ++i) {
                        const std::size_t at = c.block == 0
                                                   ? (std::size_t(h) * c.seq_max + p) * d + i
                                                   : (((std::size_t(c.table[std::size_t(p / c.block)]) * 2 + 1) * h_kv + h) * c.block +
                                                      p % c.block) * d + i;
                        if (gk[at] != c.kat(h, p, i) || gv[at] != c.vat(h, p, i)) ++differ;
                    }
            INFO("row " << b << ", block " << c.block);
            CHECK(differ == 0);
            // Every slot outside the cache's positions is still NaN: nothing was written there.
            std::size_t finite = 0;
            for (float x : gk) finite += std::isfinite(x) ? 1 : 0;
            CHECK(finite == std::size_t(h_kv) * 20 * d);
        }
    }
}

TEST_CASE("kernel prefill attention: causal and windowed over contiguous and paged caches", "[cuda][kernels]") {
    struct P {
        int d, h_q, h_kv, start, t, window, block;
    };
    for (const P& p : {P{80, 4, 2, 30, 20, 0, 0}, P{130, 2, 1, 10, 17, 25, 7}, P{16, 3, 3, 0, 40, 0, 16}, P{256, 4, 2, 5, 9, 8, 0}}) {
        INFO("d " << p.d << ", H_q " << p.h_q << ", H_kv " << p.h_kv << ", start " << p.start << ", T " << p.t << ", window "
                  << p.window << ", block " << p.block);
        Cache c(p.h_kv, p.d, p.start + p.t, p.block, std::uint64_t(p.d + p.t));
        const auto q = random_vec(std::size_t(p.t) * p.h_q * p.d, 70);
        DeviceBuffer dq = to_device(q), dout(q.size() * sizeof(float));
        prefill_attention(dq.f(), c.layout, p.start, p.t, p.h_q, p.window, dout.f());
        const auto got = to_host(dout, q.size());
        std::vector<double> ref;
        for (int t = 0; t < p.t; ++t) {
            const int hi = p.start + t + 1, lo = p.window > 0 ? std::max(0, hi - p.window) : 0;
            const auto r = attention_ref(q.data() + std::size_t(t) * p.h_q * p.d, c, p.h_q, lo, hi);
            ref.insert(ref.end(), r.begin(), r.end());
        }
        CHECK(rel_err(got, ref) <= 1e-4);  // float32 online softmax against double
    }
}

// cols 1184 = 4 × 296: two passes of the four-loads-a-lane loop, then a tail of 40 quads. Split-K
// (few rows: the emulated device has 4 SMs): 8 warps a row at 5 × 1184 and 20 × 4096, 2 at 50 × 512
// (4 rows a block, the last block half full); 1 warp a row at 300 × 256.
TEST_CASE("kernel matvec and matmul_rows: 16-byte and scalar paths", "[cuda][kernels]") {
    for (const auto& shape :
         std::vector<std::pair<int, int>>{{37, 64}, {33, 130}, {9, 7}, {300, 256}, {5, 1184}, {20, 4096}, {50, 512}}) {
        INFO("rows " << shape.first << ", cols " << shape.second);
        const int rows = shape.first, cols = shape.second;  // plain locals: clang 14 does not capture structured bindings
        const auto w = random_vec(std::size_t(rows) * cols, 80), x = random_vec(std::size_t(cols) * 16, 81);
        DeviceBuffer dw = to_device(w), dx = to_device(x), dy(std::size_t(rows) * 16 * sizeof(float));
        auto ref = [&](int n) {
            std::vector<double> r(std::size_t(n) * rows);
            for (int b = 0; b < n; ++b)
                for (int o = 0; o < rows; ++o) {
                    double s = 0;
                    for (int i = 0; i < cols; ++i) s += double(w[std::size_t(o) * cols + i]) * x[std::size_t(b) * cols + i];
                    r[std::size_t(b) * rows + o] = s;
                }
            return r;
        };
        matvec(dw.f(), dx.f(), dy.f(), rows, cols);
        CHECK(rel_err(to_host(dy, std::size_t(rows)), ref(1)) <= 1e-4);  // float32 dot products in warp order
        for (int n : {1, 3, 16}) {
            INFO("n " << n);
            matmul_rows(dw.f(), dx.f(), dy.f(), n, rows, cols);
            CHECK(rel_err(to_host(dy, std::size_t(n) * rows), ref(n)) <= 1e-4);
        }
    }
}

TEST_CASE("kernel rmsnorm and rope and swiglu and add and softmax", "[cuda][kernels]") {
    for (int n : {48, 130, 300}) {
        INFO("n " << n);
        const int rows = 3;
        const auto x = random_vec(std::size_t(rows) * n, 90), g = random_vec(std::size_t(n), 91), b = random_vec(x.size(), 92);
        DeviceBuffer dx = to_device(x), dg = to_device(g), dy(x.size() * sizeof(float));
        rmsnorm(dx.f(), dg.f(), dy.f(), rows, n, 1e-5f);
        std::vector<double> ref(x.size());
        for (int r = 0; r < rows; ++r) {
            double ss = 0;
            for (int i = 0; i < n; ++i) ss += double(x[std::size_t(r * n + i)]) * x[std::size_t(r * n + i)];
            const double s = 1.0 / std::sqrt(ss / n + 1e-5);
            for (int i = 0; i < n; ++i) ref[std::size_t(r * n + i)] = g[std::size_t(i)] * double(x[std::size_t(r * n + i)]) * s;
        }
        CHECK(rel_err(to_host(dy, x.size()), ref) <= 1e-4);  // a block-wide float32 sum of squares
        // Softmax of each row.
        DeviceBuffer ds = to_device(x);
        softmax(ds.f(), rows, n);
        for (int r = 0; r < rows; ++r) {
            double m = -INFINITY, sum = 0;
            for (int i = 0; i < n; ++i) m = std::max(m, double(x[std::size_t(r * n + i)]));
            for (int i = 0; i < n; ++i) sum += std::exp(x[std::size_t(r * n + i)] - m);
            for (int i = 0; i < n; ++i) ref[std::size_t(r * n + i)] = std::exp(x[std::size_t(r * n + i)] - m) / sum;
        }
        CHECK(rel_err(to_host(ds, x.size()), ref) <= 1e-4);  // a block-wide float32 sum of exponentials
        // SwiGLU then the residual add, elementwise.
        DeviceBuffer da = to_device(x), db = to_device(b);
        swiglu(da.f(), db.f(), int(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i) ref[i] = double(x[i]) / (1.0 + std::exp(-double(x[i]))) * b[i];
        CHECK(rel_err(to_host(da, x.size()), ref) <= 1e-5);  // float32 expf against double exp
        add(da.f(), db.f(), int(x.size()));
        for (std::size_t i = 0; i < x.size(); ++i) ref[i] += b[i];
        CHECK(rel_err(to_host(da, x.size()), ref) <= 1e-5);
    }
    // RoPE on head widths 16, 48 and 130 at three positions.
    for (int hd : {16, 48, 130}) {
        INFO("head width " << hd);
        const int rows = 3, width = 2 * hd;
        const std::vector<int> pos = {0, 9, 511};
        const auto x = random_vec(std::size_t(rows) * width, 93);
        DeviceBuffer dx = to_device(x), dp = to_device(pos);
        rope(dx.f(), dp.i(), rows, width, hd, 10000.0f);
        std::vector<double> ref(x.size());
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < width; i += 2) {
                const double a = pos[std::size_t(r)] / std::pow(10000.0, double(i % hd) / hd);
                const double v0 = x[std::size_t(r * width + i)], v1 = x[std::size_t(r * width + i + 1)];
                ref[std::size_t(r * width + i)] = v0 * std::cos(a) - v1 * std::sin(a);
                ref[std::size_t(r * width + i + 1)] = v0 * std::sin(a) + v1 * std::cos(a);
            }
        // 1e-5 of scale: the angle is rounded to float (pos·freq), ~3e-5 rad at position 511 times |v| ≤ 4.
        CHECK(rel_err(to_host(dx, x.size()), ref) <= 2e-4);
    }
}

// The fused ops of a decode step against the unfused double references: Q/K/V with RoPE (the
// 16-byte path at cols 64, the scalar one at 130), W1/W3 with SwiGLU, the residual add with RMSNorm.
TEST_CASE("kernel fused qkv_rope and swiglu_matvec and add_rmsnorm", "[cuda][kernels]") {
    auto dot_ref = [](const std::vector<float>& w, const std::vector<float>& x, int rows, int cols) {
        std::vector<double> r(std::size_t(rows), 0.0);
        for (int o = 0; o < rows; ++o)
            for (int i = 0; i < cols; ++i) r[std::size_t(o)] += double(w[std::size_t(o) * cols + i]) * x[std::size_t(i)];
        return r;
    };
    for (auto [hd, h_q, h_kv, cols] : std::vector<std::tuple<int, int, int, int>>{{16, 4, 2, 64}, {48, 2, 1, 130}, {130, 1, 1, 36}}) {
        INFO("head width " << hd << ", H_q " << h_q << ", H_kv " << h_kv << ", cols " << cols);
        const int dq = h_q * hd, dkv = h_kv * hd, pos = 511;
        const auto wq = random_vec(std::size_t(dq) * cols, 100), wk = random_vec(std::size_t(dkv) * cols, 101),
                   wv = random_vec(std::size_t(dkv) * cols, 102), x = random_vec(std::size_t(cols), 103);
        DeviceBuffer dwq = to_device(wq), dwk = to_device(wk), dwv = to_device(wv), dx = to_device(x),
                     dp = to_device(std::vector<int>{pos});
        DeviceBuffer dq_out(std::size_t(dq) * sizeof(float)), dk_out(std::size_t(dkv) * sizeof(float)),
            dv_out(std::size_t(dkv) * sizeof(float));
        qkv_rope(dwq.f(), dwk.f(), dwv.f(), dx.f(), dq_out.f(), dk_out.f(), dv_out.f(), dq, dkv, cols, dp.i(), hd, 10000.0f);
        const int head = hd;  // a plain local: clang 14 does not capture structured bindings
        auto rotated = [head](std::vector<double> y) {  // pos: a constant, read without capture
            for (std::size_t i = 0; i < y.size(); i += 2) {
                const double a = pos / std::pow(10000.0, double(i % std::size_t(head)) / head), v0 = y[i], v1 = y[i + 1];
                y[i] = v0 * std::cos(a) - v1 * std::sin(a);
                y[i + 1] = v0 * std::sin(a) + v1 * std::cos(a);
            }
            return y;
        };
        // 2e-4 of scale: float32 dots in warp order, and the angle rounded to float at position 511 (as rope).
        CHECK(rel_err(to_host(dq_out, std::size_t(dq)), rotated(dot_ref(wq, x, dq, cols))) <= 2e-4);
        CHECK(rel_err(to_host(dk_out, std::size_t(dkv)), rotated(dot_ref(wk, x, dkv, cols))) <= 2e-4);
        CHECK(rel_err(to_host(dv_out, std::size_t(dkv)), dot_ref(wv, x, dkv, cols)) <= 1e-4);  // float32 dots
    }
    for (auto [rows, cols] : std::vector<std::pair<int, int>>{{37, 64}, {9, 7}, {300, 256}, {6, 1184}}) {
        INFO("SwiGLU rows " << rows << ", cols " << cols);
        const auto w1 = random_vec(std::size_t(rows) * cols, 110), w3 = random_vec(std::size_t(rows) * cols, 111),
                   x = random_vec(std::size_t(cols), 112);
        DeviceBuffer d1 = to_device(w1), d3 = to_device(w3), dx = to_device(x), h1(std::size_t(rows) * sizeof(float)),
                     h3(std::size_t(rows) * sizeof(float));
        swiglu_matvec(d1.f(), d3.f(), dx.f(), h1.f(), h3.f(), rows, cols);
        const auto a = dot_ref(w1, x, rows, cols), b = dot_ref(w3, x, rows, cols);
        std::vector<double> ref(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) ref[i] = a[i] / (1.0 + std::exp(-a[i])) * b[i];
        CHECK(rel_err(to_host(h3, std::size_t(rows)), b) <= 1e-4);    // float32 dots in warp order
        CHECK(rel_err(to_host(h1, std::size_t(rows)), ref) <= 1e-4);  // the same, then expf
    }
    for (int n : {48, 130, 300}) {
        INFO("add_rmsnorm n " << n);
        const int rows = 3;
        const auto x = random_vec(std::size_t(rows) * n, 120), t = random_vec(x.size(), 121), g = random_vec(std::size_t(n), 122);
        DeviceBuffer dx = to_device(x), dt = to_device(t), dg = to_device(g), dy(x.size() * sizeof(float));
        add_rmsnorm(dx.f(), dt.f(), dg.f(), dy.f(), rows, n, 1e-5f);
        std::vector<double> sum(x.size()), ref(x.size());
        for (int r = 0; r < rows; ++r) {
            double ss = 0;
            for (int i = 0; i < n; ++i) {
                const std::size_t at = std::size_t(r) * n + i;
                sum[at] = double(x[at]) + t[at];
                ss += sum[at] * sum[at];
            }
            for (int i = 0; i < n; ++i) ref[std::size_t(r) * n + i] = g[std::size_t(i)] * sum[std::size_t(r) * n + i] / std::sqrt(ss / n + 1e-5);
        }
        CHECK(rel_err(to_host(dx, x.size()), sum) <= 1e-6);  // one float32 addition per element
        CHECK(rel_err(to_host(dy, x.size()), ref) <= 1e-4);  // a block-wide float32 sum of squares
        // With flags: a finite sum leaves check 0 alone; an inf in the last row's t stamps check 1.
        DeviceBuffer dflags = to_device(std::vector<int>{0, 0});
        add_rmsnorm(dx.f(), dt.f(), dg.f(), dy.f(), rows, n, 1e-5f, dflags.i(), 0, 5);
        auto t_inf = t;
        t_inf[t_inf.size() - 2] = INFINITY;
        DeviceBuffer dt_inf = to_device(t_inf);
        add_rmsnorm(dx.f(), dt_inf.f(), dg.f(), dy.f(), rows, n, 1e-5f, dflags.i(), 1, 5);
        CHECK(to_host<int>(dflags, 2) == std::vector<int>{0, 5});
    }
}

TEST_CASE("kernel record_finite stamps a check only when its tensor holds NaN or inf", "[cuda][kernels]") {
    const std::size_t n = 3 * 256 * 16 + 5;  // three blocks, and a tail
    auto x = random_vec(n, 130);
    DeviceBuffer dflags = to_device(std::vector<int>{0, 0, 0, 0});
    DeviceBuffer clean = to_device(x);
    record_finite(clean.f(), n, dflags.i(), 0, 7);
    x[n - 1] = INFINITY;  // the last element of the last block
    DeviceBuffer with_inf = to_device(x);
    record_finite(with_inf.f(), n, dflags.i(), 1, 7);
    x[n - 1] = 1.0f;
    x[4097] = NAN;  // inside the second block's share
    DeviceBuffer with_nan = to_device(x);
    record_finite(with_nan.f(), n, dflags.i(), 2, 9);
    CHECK(to_host<int>(dflags, 4) == std::vector<int>{0, 7, 9, 0});
}

// The model through the CUDA backend against the CPU backend: prefill in chunks, then batched
// decode steps over paged caches of different lengths, plain and online attention, a window.
TEST_CASE("kernel model: prefill and batch decode on paged caches equal the CPU backend", "[cuda][kernels]") {
    model::Dims d;
    d.dim = 64;
    d.hidden_dim = 96;
    d.n_layers = 2;
    d.n_heads = 4;
    d.n_kv_heads = 2;  // d = 16, two query heads per K/V head
    d.vocab_size = 40;
    d.seq_len = 96;
    auto w = model::random_weights(d, 31);
    auto gb = make_backend(*w);
    model::Transformer cpu(*w), gpu(*w, *gb);
    // compare_logits counts a NaN as an infinite difference, so a NaN fails the bounds below.
    auto worst = [](const model::MatrixRM& got, const model::MatrixRM& ref) { return model::compare_logits(got, ref).max_rel; };
    for (auto kind : {model::AttentionKind::Plain, model::AttentionKind::Online}) {
        model::ForwardOptions opt;
        opt.attention = kind;
        opt.window = kind == model::AttentionKind::Online ? 0 : 20;
        INFO("online " << (kind == model::AttentionKind::Online) << ", window " << opt.window);
        model::BlockPool cpool(d, 5, 40, 3), gpool(d, 5, 40, 3, *gb);  // blocks of 5: not a tile, not a split
        std::vector<std::unique_ptr<model::PagedCache>> cc, gc;
        for (int s = 0; s < 3; ++s) {
            cc.push_back(std::make_unique<model::PagedCache>(cpool, d));
            gc.push_back(std::make_unique<model::PagedCache>(gpool, d));
            std::vector<int> prompt;
            for (int i = 0; i < 9 + 13 * s; ++i) prompt.push_back((i * 7 + s) % 40);
            // Prefill in two chunks, so the second sees the first's cache.
            const std::size_t half = prompt.size() / 2;
            for (auto [a, b] : {std::pair{std::size_t(0), half}, std::pair{half, prompt.size()}}) {
                std::vector<int> chunk(prompt.begin() + std::ptrdiff_t(a), prompt.begin() + std::ptrdiff_t(b));
                CHECK(worst(gpu.forward(chunk, *gc.back(), opt), cpu.forward(chunk, *cc.back(), opt)) <= 1e-4);
            }
        }
        for (int step = 0; step < 3; ++step) {
            std::vector<model::Row> cr, gr;
            for (int s = 0; s < 3; ++s) {
                cr.push_back({(step * 11 + s) % 40, cc[std::size_t(s)].get()});
                gr.push_back({(step * 11 + s) % 40, gc[std::size_t(s)].get()});
            }
            CHECK(worst(gpu.forward(gr, opt), cpu.forward(cr, opt)) <= 1e-4);  // float32 in another order, 2 layers
        }
        // One row a step (a single sequence's decode): the fused launches. A layer is 9 launches
        // (Q/K/V-RoPE, store, attention split and merge, Wo, add-RMSNorm with its check, W1/W3-SwiGLU,
        // W2, add-RMSNorm with its check; online attention: one launch, not two), then the first
        // RMSNorm, the classifier and its check.
        for (int step = 0; step < 2; ++step) {
            const std::vector<int> token{(step * 13 + 5) % 40};
            const std::uint64_t before = launch_count();
            const model::MatrixRM got = gpu.forward(token, *gc[1], opt);
            const int per_layer = kind == model::AttentionKind::Online ? 8 : 9;
            CHECK(launch_count() - before == std::uint64_t(per_layer * d.n_layers + 3));
            CHECK(worst(got, cpu.forward(token, *cc[1], opt)) <= 1e-4);
        }
    }
}

// A pass whose activations overflow is an error after the pass, naming the layer and block: the
// CUDA backend records each block's check on the device and reads them once (no wait per block).
TEST_CASE("kernel model: non-finite activations through the CUDA backend name the layer and block", "[cuda][kernels]") {
    model::Dims d;
    d.dim = 32;
    d.hidden_dim = 48;
    d.n_layers = 2;
    d.n_heads = 2;
    d.n_kv_heads = 1;
    d.vocab_size = 20;
    d.seq_len = 8;
    auto w = model::random_weights(d, 41);
    // Layer 1's W2 every entry 3e38: its products overflow float32 (largest 3.4e38).
    const model::MatMap w2 = w->w2(1);
    std::fill_n(w->data() + (w2.data() - w->data()), w2.size(), 3e38f);
    auto gb = make_backend(*w);
    model::Transformer gpu(*w, *gb);
    model::ContiguousCache cache(d, *gb);
    CHECK_THROWS_WITH(gpu.forward(std::vector<int>{1}, cache),
                      Catch::Contains("first in layer 1, FFN block") && Catch::Contains("names the block, not the op"));
    // Token 5's embedding NaN: the failure is in layer 0's attention block; then, on the same
    // backend, a pass of finite tokens is not failed by the earlier pass's checks.
    d.shared_classifier = false;  // so the NaN row is not also a row of the LM head
    auto w_nan = model::random_weights(d, 42);
    const model::MatMap emb = w_nan->token_embedding();
    std::fill_n(w_nan->data() + (emb.row(5).data() - w_nan->data()), d.dim, NAN);
    auto gb_nan = make_backend(*w_nan);
    model::Transformer m(*w_nan, *gb_nan);
    model::ContiguousCache c1(d, *gb_nan), c2(d, *gb_nan);
    CHECK_THROWS_WITH(m.forward(std::vector<int>{5}, c1), Catch::Contains("first in layer 0, attention block"));
    CHECK(m.forward(std::vector<int>{1, 2}, c2).allFinite());
    CHECK(m.forward(std::vector<int>{3}, c2).allFinite());
}
