// The fast CPU kernels (AVX-512 tiles, register-held attention) against the reference kernels
// (plain loops, kernels_ref.cpp) on random inputs, called directly so that both run on this
// machine whatever INFERLAB_KERNELS says; then whole forward passes through each path.
#include <catch2/catch.hpp>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/compare.hpp"

using namespace inferlab;
using namespace inferlab::model;
using Catch::Matchers::WithinAbs;

namespace {

std::vector<float> normal(Rng& rng, std::size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(rng.normal());
    return v;
}

// Σ_i |w[r, i]·x[b, i]| for each output: the size of the sum whose rounding the tolerance scales with.
std::vector<double> abs_sums(const std::vector<float>& w, int out, int in, const std::vector<float>& x, int rows) {
    std::vector<double> s(std::size_t(rows) * std::size_t(out), 0.0);
    for (int b = 0; b < rows; ++b)
        for (int r = 0; r < out; ++r)
            for (int i = 0; i < in; ++i)
                s[std::size_t(b) * std::size_t(out) + std::size_t(r)] +=
                    std::abs(double(w[std::size_t(r) * std::size_t(in) + std::size_t(i)]) * x[std::size_t(b) * std::size_t(in) + std::size_t(i)]);
    return s;
}

Dims dims_with_head(int d, int n_heads, int n_kv_heads) {
    Dims dm;
    dm.dim = d * n_heads;
    dm.hidden_dim = 2 * dm.dim;
    dm.n_layers = 2;
    dm.n_heads = n_heads;
    dm.n_kv_heads = n_kv_heads;
    dm.vocab_size = 50;
    dm.seq_len = 160;
    return dm;
}

}  // namespace

TEST_CASE("fast products equal the reference loops: float32 and bf16, every row count, tails of every length", "[kernels]") {
    Rng rng(11);
    for (int in : {1, 7, 16, 31, 32, 33, 100, 768})
        for (int out : {1, 3, 4, 5, 37})
            for (int rows : {1, 2, 3, 4, 5, 8, 15, 16, 17, 33}) {
                const auto w = normal(rng, std::size_t(out) * std::size_t(in));
                const auto x = normal(rng, std::size_t(rows) * std::size_t(in));
                std::vector<std::uint16_t> wb(w.size());
                for (std::size_t i = 0; i < w.size(); ++i) wb[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(w[i]) >> 16);
                std::vector<float> wbf(w.size());  // the bf16 weights widened: what both bf16 kernels multiply by
                for (std::size_t i = 0; i < w.size(); ++i) wbf[i] = bf16_to_float(wb[i]);
                const MatMap view(w.data(), out, in);
                const double tol = 2.0 * in * FLT_EPSILON;
                const auto scale = abs_sums(w, out, in, x, rows), scale_b = abs_sums(wbf, out, in, x, rows);
                // Two threads split the weight rows; one case in four is enough to check the split.
                for (int threads : {1, 2}) {
                    if (threads == 2 && (in + out + rows) % 4 != 0) continue;
                    INFO("in " << in << ", out " << out << ", rows " << rows << ", threads " << threads);
                    std::vector<float> fast(scale.size(), NAN), plain(scale.size(), NAN), fast_b(scale.size(), NAN),
                        plain_b(scale.size(), NAN);
                    matmul_few_rows(view, x.data(), rows, fast.data(), threads);
                    ref::matmul_few_rows(view, x.data(), rows, plain.data(), threads);
                    matmul_few_rows_bf16(wb.data(), out, in, x.data(), rows, fast_b.data(), threads);
                    ref::matmul_few_rows_bf16(wb.data(), out, in, x.data(), rows, plain_b.data(), threads);
                    for (std::size_t i = 0; i < scale.size(); ++i) {
                        // 2·n·ε·Σ|w·x|: the bound on recursive float32 summation, (n − 1)·ε·Σ|terms|, for
                        // each of the two orders (16-lane tiles and one running sum). A wrong index or a
                        // lost tail moves a result by O(Σ|w·x|), far outside it.
                        REQUIRE_THAT(fast[i], WithinAbs(plain[i], tol * scale[i]));
                        REQUIRE_THAT(fast_b[i], WithinAbs(plain_b[i], tol * scale_b[i]));
                    }
                    if (rows == 1) {
                        std::vector<float> mv(static_cast<std::size_t>(out)), mv_ref(static_cast<std::size_t>(out));
                        matvec(view, x.data(), mv.data(), threads);
                        ref::matvec(view, x.data(), mv_ref.data(), threads);
                        for (int r = 0; r < out; ++r)
                            REQUIRE_THAT(mv[std::size_t(r)], WithinAbs(mv_ref[std::size_t(r)], tol * scale[std::size_t(r)]));  // as above
                    }
                }
            }
}

TEST_CASE("a decode product (one row) equals the same row of a batch bit for bit: float32 and bf16", "[kernels]") {
    // Decode reads each weight row as one stream (x up to 12 KiB) or through the 4-row tiles
    // (longer x: 3,100 and 5,632), batches through the tiles; all sum in the same order, which is
    // what lets a cached step equal the no-cache pass exactly.
    Rng rng(12);
    for (int in : {1, 15, 16, 31, 32, 33, 64, 100, 768, 3100, 5632})
        for (int threads : {1, 2}) {
            const int out = 37, rows = 3;
            const auto w = normal(rng, std::size_t(out) * std::size_t(in));
            const auto x = normal(rng, std::size_t(rows) * std::size_t(in));
            std::vector<std::uint16_t> wb(w.size());
            for (std::size_t i = 0; i < w.size(); ++i) wb[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(w[i]) >> 16);
            const MatMap view(w.data(), out, in);
            std::vector<float> batch(std::size_t(rows) * std::size_t(out)), batch_b(batch.size()), one(static_cast<std::size_t>(out)),
                one_b(one.size());
            matmul_few_rows(view, x.data(), rows, batch.data(), threads);
            matmul_few_rows_bf16(wb.data(), out, in, x.data(), rows, batch_b.data(), threads);
            for (int b = 0; b < rows; ++b) {
                const float* xb = x.data() + std::size_t(b) * std::size_t(in);
                matmul_few_rows(view, xb, 1, one.data(), threads);
                matmul_few_rows_bf16(wb.data(), out, in, xb, 1, one_b.data(), threads);
                INFO("in " << in << ", threads " << threads << ", row " << b);
                for (int r = 0; r < out; ++r) {
                    REQUIRE(std::bit_cast<std::uint32_t>(one[std::size_t(r)]) ==
                            std::bit_cast<std::uint32_t>(batch[std::size_t(b) * std::size_t(out) + std::size_t(r)]));
                    REQUIRE(std::bit_cast<std::uint32_t>(one_b[std::size_t(r)]) ==
                            std::bit_cast<std::uint32_t>(batch_b[std::size_t(b) * std::size_t(out) + std::size_t(r)]));
                }
            }
        }
}

TEST_CASE("fast attention equals the reference at head widths 32, 48, 64, 96, 128 (and 40), odd lengths, GQA, paged", "[kernels]") {
    Rng rng(5);
    for (int d : {32, 48, 64, 96, 128, 40})
        for (int len : {1, 2, 7, 33, 127})
            for (AttentionKind kind : {AttentionKind::Plain, AttentionKind::Online})
                for (int window : {0, 5})
                    for (bool paged : {false, true}) {
                        INFO("d " << d << ", length " << len << (kind == AttentionKind::Plain ? ", plain" : ", online")
                                  << ", window " << window << (paged ? ", paged" : ", contiguous"));
                        const Dims dm = dims_with_head(d, 4, 2);  // H_q/H_kv = 2: heads 0,1 read K/V head 0
                        std::unique_ptr<BlockPool> pool;
                        std::unique_ptr<KvCache> cache;
                        if (paged) {
                            pool = std::make_unique<BlockPool>(dm, 7, 24, 1);  // blocks of 7: runs break mid-sequence
                            cache = std::make_unique<PagedCache>(*pool, dm);
                        } else {
                            cache = std::make_unique<ContiguousCache>(dm);
                        }
                        cache->reserve(len);
                        for (int l = 0; l < dm.n_layers; ++l) {
                            for (int h = 0; h < dm.n_kv_heads; ++h)
                                for (int p = 0; p < len; ++p)
                                    for (int i = 0; i < d; ++i) {
                                        cache->key(l, h, p)[i] = static_cast<float>(rng.normal());
                                        cache->value(l, h, p)[i] = static_cast<float>(rng.uniform() * 2 - 1);
                                    }
                            cache->set_length(l, len);
                        }
                        // Two query rows of this sequence: positions len − 2 and len − 1 (causal: different key counts).
                        const int R = std::min(2, len);
                        std::vector<Row> rows;
                        std::vector<int> pos;
                        for (int r = 0; r < R; ++r) {
                            rows.push_back({0, cache.get()});
                            pos.push_back(len - R + r);
                        }
                        const StepRows step{rows, pos, d, dm.n_kv_heads};
                        Tensor q(cpu_backend()), fast(cpu_backend()), plain(cpu_backend());
                        q.resize(R, dm.dim);
                        for (std::size_t i = 0; i < q.size(); ++i) q.data()[i] = static_cast<float>(rng.normal());
                        ForwardOptions opt;
                        opt.attention = kind;
                        opt.online_block = 4;
                        opt.window = window;
                        const int threads = 1 + (len + d) % 2;  // one or two threads over the heads
                        CpuBackend fast_cpu({.threads = threads, .kernels = Kernels::Fast}),
                            plain_cpu({.threads = threads, .kernels = Kernels::Reference});
                        fast_cpu.attention(q, step, 1, opt, fast);
                        plain_cpu.attention(q, step, 1, opt, plain);
                        for (std::size_t i = 0; i < q.size(); ++i)
                            // 1e-5 absolute (values in [−1, 1], so the output is too): the scores' float32 dot
                            // products are summed in another order, which moves each softmax weight by ~1e-7.
                            REQUIRE_THAT(fast.data()[i], WithinAbs(plain.data()[i], 1e-5));
                    }
}

TEST_CASE("whole forward passes through the fast and the reference kernels agree at head widths 32 to 128", "[kernels][model]") {
    for (int d : {32, 48, 64, 96, 128}) {
        const Dims dm = dims_with_head(d, 4, 2);
        auto w = random_weights(dm, 3);
        const Bf16Weights bf16 = to_bf16(*w);
        std::vector<int> prompt;
        for (int i = 0; i < 21; ++i) prompt.push_back((i * 7 + 3) % dm.vocab_size);  // 21 rows: the many-row path
        for (bool use_bf16 : {false, true}) {
            INFO("d " << d << (use_bf16 ? ", bf16 weights" : ", float32 weights"));
            CpuBackendOptions fast_o{.threads = 1, .kernels = Kernels::Fast}, plain_o{.threads = 1, .kernels = Kernels::Reference};
            if (use_bf16) fast_o.bf16 = plain_o.bf16 = &bf16;
            CpuBackend fast_cpu(fast_o), plain_cpu(plain_o);
            const Transformer fast(*w, fast_cpu), plain(*w, plain_cpu);
            ContiguousCache cf(dm), cp(dm);  // host memory: either CPU backend reads them
            const MatrixRM pf = fast.forward(prompt, cf), pp = plain.forward(prompt, cp);
            // 1e-4 of each position's largest logit: two layers of float32 sums in a different order.
            CHECK(compare_logits(pf, pp).max_rel <= 1e-4);
            for (int step = 0; step < 3; ++step) {  // decode: one row, the bf16 weights where given
                const MatrixRM f = fast.forward(std::vector<int>{step + 1}, cf), p = plain.forward(std::vector<int>{step + 1}, cp);
                CHECK(compare_logits(f, p).max_rel <= 1e-4);
            }
        }
    }
}

TEST_CASE("default_kernels reads INFERLAB_KERNELS, default options do not, and a wrong value is an error that names it", "[kernels]") {
    const char* before = std::getenv("INFERLAB_KERNELS");
    const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
    ::unsetenv("INFERLAB_KERNELS");
    CHECK(default_kernels() == Kernels::Fast);
    ::setenv("INFERLAB_KERNELS", "reference", 1);
    CHECK(default_kernels() == Kernels::Reference);
    // Only the app (and the tests' harness) reads the variable, once, where it makes its backend:
    // default options and the default CPU backend stay fast whatever the environment says.
    CHECK(CpuBackendOptions{}.kernels == Kernels::Fast);
    REQUIRE(cpu_options(cpu_backend()) != nullptr);
    CHECK(cpu_options(cpu_backend())->kernels == Kernels::Fast);
    ::setenv("INFERLAB_KERNELS", "fast", 1);
    CHECK(default_kernels() == Kernels::Fast);
    ::setenv("INFERLAB_KERNELS", "avx", 1);
    CHECK_THROWS_WITH(default_kernels(), "INFERLAB_KERNELS 'avx': must be fast or reference");
    CHECK_THROWS_AS(parse_kernels("--kernels", "scalar"), InputError);
    if (saved) ::setenv("INFERLAB_KERNELS", saved->c_str(), 1);
    else ::unsetenv("INFERLAB_KERNELS");
}
