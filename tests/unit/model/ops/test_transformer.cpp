// The reference transformer: cache paths, run.c conventions, checkpoints, layer ownership.
#include <catch2/catch.hpp>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "../../../support/test_backend.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/memory.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/ops/weights.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/compare.hpp"
#include "inferlab/model/run/init_estimate.hpp"

using namespace inferlab;
using namespace inferlab::model;
using inferlab::test::test_cpu;

namespace {

Dims small(int heads, int kv_heads, bool shared = true) {
    Dims d;
    d.dim = 64;
    d.hidden_dim = 96;
    d.n_layers = 2;
    d.n_heads = heads;
    d.n_kv_heads = kv_heads;
    d.vocab_size = 50;
    d.seq_len = 96;
    d.shared_classifier = shared;
    return d;
}

std::vector<int> random_tokens(int n, int vocab, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<int> t;
    for (int i = 0; i < n; ++i) t.push_back(static_cast<int>(rng.below(std::uint64_t(vocab))));
    return t;
}

// Largest |a − b| relative to each row's largest |b| (floored at 1): the library's one comparison.
double rel_diff(const MatrixRM& a, const MatrixRM& b) { return compare_logits(a, b).max_rel; }

// A separately written forward pass in the manner of llama2.c's run.c: plain loops over a
// full history, used as independent golden data for the Eigen model (one token at a time).
std::vector<float> naive_logits(const Weights& w, const std::vector<int>& tokens) {
    const Dims& d = w.dims();
    const int D = d.dim, hd = d.head_dim(), kvd = d.kv_dim(), H = d.hidden_dim;
    std::vector<std::vector<std::vector<float>>> kc(d.n_layers), vc(d.n_layers);
    std::vector<float> x(D), xb(D), q(D), k(kvd), v(kvd), att(D), h1(H), h3(H), out(D), logits(d.vocab_size);
    auto rms = [&](const std::vector<float>& in, const VecMap& g, std::vector<float>& o) {
        double ss = 0;
        for (float f : in) ss += double(f) * f;
        float s = 1.0f / std::sqrt(float(ss / D) + d.norm_eps);
        for (int i = 0; i < D; ++i) o[i] = g[i] * in[i] * s;
    };
    auto mv = [](const MatMap& W, const std::vector<float>& in, std::vector<float>& o) {
        for (Eigen::Index r = 0; r < W.rows(); ++r) {
            double s = 0;
            for (Eigen::Index c = 0; c < W.cols(); ++c) s += double(W(r, c)) * in[std::size_t(c)];
            o[std::size_t(r)] = float(s);
        }
    };
    for (std::size_t pos = 0; pos < tokens.size(); ++pos) {
        for (int i = 0; i < D; ++i) x[i] = w.token_embedding()(tokens[pos], i);
        for (int l = 0; l < d.n_layers; ++l) {
            rms(x, w.rms_att(l), xb);
            mv(w.wq(l), xb, q);
            mv(w.wk(l), xb, k);
            mv(w.wv(l), xb, v);
            for (int i = 0; i < D; i += 2) {
                int j = i % hd;
                float a = float(pos) * (1.0f / std::pow(10000.0f, float(j) / float(hd)));
                float c = std::cos(a), s = std::sin(a);
                for (std::vector<float>* vec : {&q, &k}) {
                    if (vec == &k && i >= kvd) continue;
                    float v0 = (*vec)[i], v1 = (*vec)[i + 1];
                    (*vec)[i] = v0 * c - v1 * s;
                    (*vec)[i + 1] = v0 * s + v1 * c;
                }
            }
            kc[l].push_back(k);
            vc[l].push_back(v);
            for (int h = 0; h < d.n_heads; ++h) {
                int kvh = h / (d.n_heads / d.n_kv_heads);
                std::vector<double> sc(pos + 1);
                double mx = -1e300;
                for (std::size_t t = 0; t <= pos; ++t) {
                    double s = 0;
                    for (int i = 0; i < hd; ++i) s += double(q[h * hd + i]) * kc[l][t][kvh * hd + i];
                    sc[t] = s / std::sqrt(double(hd));
                    mx = std::max(mx, sc[t]);
                }
                double sum = 0;
                for (auto& s : sc) sum += s = std::exp(s - mx);
                for (int i = 0; i < hd; ++i) {
                    double o = 0;
                    for (std::size_t t = 0; t <= pos; ++t) o += sc[t] / sum * vc[l][t][kvh * hd + i];
                    att[h * hd + i] = float(o);
                }
            }
            mv(w.wo(l), att, out);
            for (int i = 0; i < D; ++i) x[i] += out[i];
            rms(x, w.rms_ffn(l), xb);
            mv(w.w1(l), xb, h1);
            mv(w.w3(l), xb, h3);
            for (int i = 0; i < H; ++i) h1[i] = h1[i] / (1.0f + std::exp(-h1[i])) * h3[i];
            std::vector<float> down(D);
            mv(w.w2(l), h1, down);
            for (int i = 0; i < D; ++i) x[i] += down[i];
        }
        rms(x, w.rms_final(), xb);
        mv(w.classifier(), xb, logits);
    }
    return logits;
}

}  // namespace

TEST_CASE("no cache, contiguous and paged give the same logits (H_q/H_kv = 1, 4, 8)", "[model]") {
    for (int kv : {8, 2, 1}) {
        INFO("H_kv = " << kv);
        auto w = random_weights(small(8, kv), 11);
        Transformer m(*w, test_cpu());
        auto tokens = random_tokens(64, 50, 5);
        MatrixRM none = logits_without_cache(m, tokens);
        ContiguousCache c(w->dims());
        MatrixRM cont = m.forward(tokens, c);
        BlockPool pool(w->dims(), 8, 12, 3);
        PagedCache pc(pool, w->dims());
        MatrixRM paged = m.forward(tokens, pc);
        // 1e-5 relative: float32 sums over different row counts (matrix against vector products).
        CHECK(rel_diff(cont, none) <= 1e-5);
        CHECK(rel_diff(paged, none) <= 1e-5);
    }
}

TEST_CASE("the Eigen model matches a separately written run.c-style forward pass", "[model]") {
    for (bool shared : {true, false}) {
        auto w = random_weights(small(8, 2, shared), 21);
        Transformer m(*w, test_cpu());
        auto tokens = random_tokens(12, 50, 6);
        ContiguousCache c(w->dims());
        MatrixRM ours = m.forward(tokens, c);
        auto golden = naive_logits(*w, tokens);
        double worst = 0, scale = 1;
        for (int i = 0; i < 50; ++i) {
            scale = std::max(scale, double(std::fabs(golden[std::size_t(i)])));
            worst = std::max(worst, double(std::fabs(ours(11, i) - golden[std::size_t(i)])));
        }
        // 1e-4 relative: the golden pass accumulates in double, ours in float.
        CHECK(worst / scale <= 1e-4);
    }
}

TEST_CASE("decode one token at a time, chunked prefill and prefill at once agree", "[model]") {
    auto w = random_weights(small(8, 2), 12);
    Transformer m(*w, test_cpu());
    auto tokens = random_tokens(40, 50, 7);
    ContiguousCache all(w->dims());
    MatrixRM once = m.forward(tokens, all);
    ContiguousCache chunked(w->dims());
    MatrixRM pieces(40, 50);
    for (int s = 0; s < 40; s += 7) {
        std::vector<int> part(tokens.begin() + s, tokens.begin() + std::min(40, s + 7));
        pieces.middleRows(s, Eigen::Index(part.size())) = m.forward(part, chunked);
    }
    // 1e-5 relative, here and below: float32 sums over different row counts (chunks against one prefill).
    CHECK(rel_diff(pieces, once) <= 1e-5);
    ContiguousCache single(w->dims());
    MatrixRM steps(40, 50);
    for (int s = 0; s < 40; ++s) steps.row(s) = m.forward(std::vector<int>{tokens[std::size_t(s)]}, single).row(0);
    CHECK(rel_diff(steps, once) <= 1e-5);
}

TEST_CASE("online-softmax attention equals the plain form, a sliding window changes the relation set", "[model]") {
    auto w = random_weights(small(8, 4), 13);
    Transformer m(*w, test_cpu());
    auto tokens = random_tokens(48, 50, 8);
    ContiguousCache a(w->dims()), b(w->dims()), c(w->dims());
    MatrixRM plain = m.forward(tokens, a);
    ForwardOptions online;
    online.attention = AttentionKind::Online;
    online.online_block = 5;
    // 1e-5 relative: the online form rescales its running sums block by block, in float32.
    CHECK(rel_diff(m.forward(tokens, b, online), plain) <= 1e-5);
    ForwardOptions window;
    window.window = 16;
    MatrixRM sparse = m.forward(tokens, c, window);
    // Inside the window: the same keys in the same order (1e-6: at most a different blocking of the sums).
    CHECK(rel_diff(sparse.topRows(16), plain.topRows(16)) <= 1e-6);
    // Past it: a different relation set, so a change 100× larger than any rounding difference above.
    CHECK(rel_diff(sparse.bottomRows(8), plain.bottomRows(8)) > 1e-3);
}

TEST_CASE("each layer owns its cache: reading layer 0's K/V in layer 1 changes the logits", "[model]") {
    auto w = random_weights(small(8, 2), 14);
    Transformer m(*w, test_cpu());
    const Dims& d = w->dims();
    auto tokens = random_tokens(10, 50, 9);
    ContiguousCache right(d), wrong(d);
    m.forward(tokens, right);
    m.forward(tokens, wrong);
    for (int h = 0; h < d.n_kv_heads; ++h)
        for (int p = 0; p < 10; ++p) {
            std::copy_n(wrong.key(0, h, p), d.head_dim(), wrong.key(1, h, p));
            std::copy_n(wrong.value(0, h, p), d.head_dim(), wrong.value(1, h, p));
        }
    MatrixRM a = m.forward(std::vector<int>{3}, right), b = m.forward(std::vector<int>{3}, wrong);
    CHECK(rel_diff(b, a) > 1e-3);  // 100× the float32 rounding differences these tests allow: a real change
}

TEST_CASE("batch decode: one step for several sequences equals each on its own", "[model]") {
    auto w = random_weights(small(8, 2), 15);
    Transformer m(*w, test_cpu());
    const Dims& d = w->dims();
    ContiguousCache c1(d), c2(d), s1(d), s2(d);
    m.forward(random_tokens(9, 50, 1), c1);
    m.forward(random_tokens(4, 50, 2), c2);
    m.forward(random_tokens(9, 50, 1), s1);
    m.forward(random_tokens(4, 50, 2), s2);
    MatrixRM both = m.forward(std::vector<Row>{{7, &c1}, {8, &c2}});
    // 1e-5 relative: float32 sums over two rows at once against one.
    CHECK(rel_diff(both.row(0), m.forward(std::vector<int>{7}, s1)) <= 1e-5);
    CHECK(rel_diff(both.row(1), m.forward(std::vector<int>{8}, s2)) <= 1e-5);
    CHECK(c1.length(0) == 10);
    CHECK(c2.length(0) == 5);
}

TEST_CASE("the cache's allocated bytes equal kv-mem's formula", "[model][kv]") {
    const Dims d = small(8, 2);
    ContiguousCache c(d);
    CHECK(c.allocated_bytes() == kv_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32), {std::uint64_t(d.seq_len)}).total_bytes);
    BlockPool pool(d, 16, 6, 1);
    CHECK(pool.allocated_bytes() ==
          kv_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32), {std::uint64_t(16 * 6)}).total_bytes);
    // One decode step at S = 10 reads every float32 weight once (the tied LM head is the embedding)
    // and the K/V of 10 positions. Weights: embedding 50·64 = 3200; per layer two norms 2·64, W_q
    // and W_o 2·64·64, W_k and W_v 2·16·64, the FFN 3·96·64: 28,800; final norm 64.
    const std::uint64_t weights = 3200 + 2 * 28800 + 64;
    CHECK(weight_floats(d) == weights);
    // K/V: 2·L·S·H_kv·d·4 B = 2·2·10·2·8·4 B = 2560 B.
    CHECK(decode_step_bytes(d, 10) == weights * 4 + 2560);
}

TEST_CASE("contiguous cache: sized to the positions asked for, seq_len by default and at most", "[model]") {
    const Dims d = small(8, 2);  // seq_len 96, L = 2, H_kv·d = 2·8 = 16
    auto w = random_weights(d, 3);
    Transformer m(*w);
    ContiguousCache full(d), five(d, cpu_backend(), 5), more(d, cpu_backend(), 1000);
    CHECK(full.allocated_bytes() == 2u * 2 * 16 * 96 * 4);
    CHECK(ContiguousCache::bytes_for(d, 96) == full.allocated_bytes());
    CHECK(five.allocated_bytes() == 2u * 2 * 16 * 5 * 4);
    CHECK(more.allocated_bytes() == full.allocated_bytes());  // held to seq_len
    // Five positions give the logits the full cache gives; a sixth is a bug of the caller.
    const std::vector<int> t = {1, 2, 3, 4, 5};
    CHECK((m.forward(t, five) - m.forward(t, full)).cwiseAbs().maxCoeff() == 0);
    CHECK_THROWS_AS(m.forward({6}, five), std::logic_error);
    // At seq_len the model's own limit speaks, as before.
    ContiguousCache at_max(d, cpu_backend(), 96);
    CHECK_THROWS_WITH(m.forward(std::vector<int>(97, 1), at_max), Catch::Contains("exceed the model's maximum sequence length 96"));
}

TEST_CASE("paged cache: shuffled blocks, returned to the pool, truncation", "[model]") {
    const Dims d = small(8, 2);
    BlockPool pool(d, 4, 20, 99);
    {
        PagedCache c(pool, d);
        c.reserve(17);
        CHECK(c.block_table().size() == 5);
        CHECK(pool.free_blocks() == 15);
        bool contiguous = true;
        for (std::size_t i = 1; i < c.block_table().size(); ++i)
            contiguous = contiguous && c.block_table()[i] == c.block_table()[i - 1] + 1;
        CHECK_FALSE(contiguous);
        for (int l = 0; l < d.n_layers; ++l) c.set_length(l, 17);
        c.truncate(6);
        CHECK(c.block_table().size() == 2);
        CHECK(c.length(0) == 6);
        CHECK(pool.free_blocks() == 18);
    }
    CHECK(pool.free_blocks() == 20);
}

TEST_CASE("checkpoints: written and read back give bit-identical logits", "[model][checkpoint]") {
    for (bool shared : {true, false}) {
        auto w = random_weights(small(8, 2, shared), 16);
        const std::string path = std::string("/tmp/inferlab-ckpt-") + (shared ? "s" : "u") + ".bin";
        write_checkpoint(*w, path);
        auto r = read_checkpoint(path);
        std::remove(path.c_str());
        auto tokens = random_tokens(8, 50, 10);
        ContiguousCache a(w->dims()), b(r->dims());
        MatrixRM la = Transformer(*w).forward(tokens, a), lb = Transformer(*r).forward(tokens, b);
        CHECK((la.array() == lb.array()).all());
        CHECK(r->dims().shared_classifier == shared);
    }
}

TEST_CASE("a hand-made checkpoint: every byte spelled out", "[model][checkpoint]") {
    // dim 2, hidden 2, 1 layer, 1 head, 1 K/V head, vocab 2 (negative: separate classifier), seq 2.
    const std::int32_t header[7] = {2, 2, 1, 1, 1, -2, 2};
    // Weights in run.c's order; value = 0.5 + index so every tensor is recognisable.
    // emb 4, rms_att 2, wq 4, wk 4, wv 4, wo 4, rms_ffn 2, w1 4, w2 4, w3 4, rms_final 2,
    // legacy RoPE tables seq_len × head_size = 4 (skipped), classifier 4.
    std::vector<float> body;
    for (int i = 0; i < 38; ++i) body.push_back(0.5f + float(i));
    std::vector<float> legacy(4, -7.0f), cls = {100, 101, 102, 103};
    const std::string path = "/tmp/inferlab-handmade.bin";
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(header), sizeof(header));
        f.write(reinterpret_cast<const char*>(body.data()), std::streamsize(body.size() * 4));
        f.write(reinterpret_cast<const char*>(legacy.data()), 16);
        f.write(reinterpret_cast<const char*>(cls.data()), 16);
    }
    auto w = read_checkpoint(path);
    CHECK_FALSE(w->dims().shared_classifier);
    CHECK(w->token_embedding()(1, 0) == 2.5f);  // index 2
    CHECK(w->rms_att(0)[1] == 5.5f);            // index 5
    CHECK(w->wq(0)(0, 1) == 7.5f);              // index 7: row-major [out, in]
    CHECK(w->wk(0)(1, 0) == 12.5f);             // index 10 + 2
    CHECK(w->wo(0)(1, 1) == 21.5f);             // index 18 + 3
    CHECK(w->rms_ffn(0)[0] == 22.5f);           // index 22
    CHECK(w->w2(0)(0, 1) == 29.5f);             // index 28 + 1
    CHECK(w->rms_final()[1] == 37.5f);          // index 37
    CHECK(w->classifier()(1, 1) == 103.0f);     // after the skipped tables
    // Truncated by one float: an error, not a silent short read.
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(header), sizeof(header));
        f.write(reinterpret_cast<const char*>(body.data()), std::streamsize(body.size() * 4));
    }
    CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("is truncated"));
    std::remove(path.c_str());
}

TEST_CASE("impossible dims and bad tokens are errors", "[model]") {
    Dims d = small(8, 3);
    CHECK_THROWS_WITH(validate(d, "x"), Catch::Contains("must be divisible by n_kv_heads 3"));
    d = small(8, 2);
    d.dim = 60;
    CHECK_THROWS_WITH(validate(d, "x"), Catch::Contains("must be divisible by n_heads 8"));
    d = small(8, 2);
    d.n_layers = 0;
    CHECK_THROWS_WITH(validate(d, "x"), Catch::Contains("n_layers '0'"));
    auto w = random_weights(small(8, 2), 1);
    Transformer m(*w, test_cpu());
    ContiguousCache c(w->dims());
    CHECK_THROWS_WITH(m.forward(std::vector<int>{50}, c), Catch::Contains("outside the vocabulary"));
    CHECK_THROWS_WITH(m.forward(random_tokens(97, 50, 1), c), Catch::Contains("maximum sequence length 96"));
}

TEST_CASE("bf16 weights: the kernel equals Eigen on the rounded matrix, and the model's logits move little", "[model]") {
    Rng rng(4);
    MatrixRM a(29, 300);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = float(rng.normal());
    auto w = random_weights(small(8, 2), 30);
    Bf16Weights b = to_bf16(*w);
    // bf16 keeps 8 bits of mantissa: relative rounding error at most 2^-8.
    CHECK_THAT(double(bf16_to_float(b.data()[0])), Catch::Matchers::WithinRel(double(w->data()[0]), 1.0 / 256));
    // The kernel against Eigen on the bf16-rounded weights of one matrix.
    const MatMap wq = w->wq(1);
    const std::uint16_t* wb = b.data() + (wq.data() - w->data());
    MatrixRM rounded(wq.rows(), wq.cols());
    for (Eigen::Index i = 0; i < rounded.size(); ++i) rounded.data()[i] = bf16_to_float(wb[i]);
    for (int rows = 1; rows <= 16; ++rows)
        for (int threads : {1, 2}) {
            INFO("rows " << rows << ", threads " << threads);
            MatrixRM x(rows, wq.cols()), y(rows, wq.rows());
            for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = float(rng.normal());
            y.setConstant(NAN);
            matmul_few_rows_bf16(wb, wq.rows(), int(wq.cols()), x.data(), rows, y.data(), threads);
            MatrixRM ref = x * rounded.transpose();
            // 1e-5 relative: float32 sums of 300 terms in another order (the same bf16 values).
            CHECK((y - ref).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, ref.cwiseAbs().maxCoeff()));
        }
    // A matrix with tails: 29 rows (one left over after tiles of 4), 300 columns (12 after slices of 16).
    std::vector<std::uint16_t> ab(std::size_t(a.size()));
    MatrixRM ar(a.rows(), a.cols());
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        ab[std::size_t(i)] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(a.data()[i]) >> 16);  // truncation is fine here
        ar.data()[i] = bf16_to_float(ab[std::size_t(i)]);
    }
    for (int rows : {1, 3, 4, 7, 16}) {
        INFO("tails, rows " << rows);
        MatrixRM x(rows, a.cols()), y(rows, a.rows());
        for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = float(rng.normal());
        matmul_few_rows_bf16(ab.data(), a.rows(), int(a.cols()), x.data(), rows, y.data(), 2);
        MatrixRM ref = x * ar.transpose();
        // 1e-5 relative: as above.
        CHECK((y - ref).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, ref.cwiseAbs().maxCoeff()));
    }
    // Whole model: decode with bf16 weights stays close to float32 (not equal).
    Transformer m(*w, test_cpu());
    CpuBackend bf16_cpu({.kernels = cpu_options(test_cpu())->kernels, .bf16 = &b});  // the harness's kernels
    const Transformer mb(*w, bf16_cpu);
    auto tokens = random_tokens(20, 50, 3);
    ContiguousCache c1(w->dims()), c2(w->dims());
    MatrixRM f32(20, 50), f16(20, 50);
    for (int i = 0; i < 20; ++i) {
        f32.row(i) = m.forward(std::vector<int>{tokens[std::size_t(i)]}, c1).row(0);
        f16.row(i) = mb.forward(std::vector<int>{tokens[std::size_t(i)]}, c2).row(0);
    }
    const double d = rel_diff(f16, f32);
    CHECK(d > 0);
    // 0.02 relative: each bf16 weight moves by up to 2^-9 ≈ 0.2%; through two layers the logits move
    // by about 0.45% here, while a kernel reading the wrong weights moves them by order 1.
    CHECK(d < 0.02);
}

TEST_CASE("the hand-written matvec equals Eigen's product", "[model]") {
    Rng rng(2);
    MatrixRM a(37, 103);
    for (Eigen::Index i = 0; i < a.size(); ++i) a.data()[i] = float(rng.normal());
    Eigen::VectorXf x(103), y(37);
    for (int i = 0; i < 103; ++i) x[i] = float(rng.normal());
    MatMap view(a.data(), 37, 103);
    for (int threads : {1, 2}) {
        matvec(view, x.data(), y.data(), threads);
        Eigen::VectorXf ref = a * x;
        // 1e-5 relative: float32 sums of 103 terms in a different order.
        CHECK((y - ref).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, ref.cwiseAbs().maxCoeff()));
    }
    // Every batch size the kernel takes (its tiles are 4 weight rows × up to 4 input rows, or one
    // weight row × up to 16): 37 weight rows leave a single one over, 103 columns a tail of 7.
    for (int rows = 1; rows <= 16; ++rows) {
        MatrixRM xs(rows, 103), ys(rows, 37);
        for (Eigen::Index i = 0; i < xs.size(); ++i) xs.data()[i] = float(rng.normal());
        for (int threads : {1, 2}) {
            INFO("rows " << rows << ", threads " << threads);
            ys.setConstant(NAN);
            matmul_few_rows(view, xs.data(), rows, ys.data(), threads);
            MatrixRM ref = xs * a.transpose();
            // 1e-5 relative: float32 sums of 103 terms in a different order.
            CHECK((ys - ref).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, ref.cwiseAbs().maxCoeff()));
        }
    }
    // Many rows (a prefill): W blocked in 64s (here 130 rows: two blocks and a short one), rows in 16s.
    MatrixRM big(130, 103);
    for (Eigen::Index i = 0; i < big.size(); ++i) big.data()[i] = float(rng.normal());
    MatMap bview(big.data(), 130, 103);
    for (int rows : {17, 40, 100})
        for (int threads : {1, 2}) {
            INFO("many rows " << rows << ", threads " << threads);
            MatrixRM xs(rows, 103), ys(rows, 130);
            for (Eigen::Index i = 0; i < xs.size(); ++i) xs.data()[i] = float(rng.normal());
            ys.setConstant(NAN);
            if (!matmul_many_rows(bview, xs.data(), rows, ys.data(), threads)) continue;  // no AVX-512: Eigen serves
            MatrixRM ref = xs * big.transpose();
            // 1e-5 relative: as above.
            CHECK((ys - ref).cwiseAbs().maxCoeff() <= 1e-5f * std::max(1.0f, ref.cwiseAbs().maxCoeff()));
        }
}

// Issue #14: random weights are estimated before they are drawn, and report their progress.
TEST_CASE("random-weight estimate: values, float32 bytes and time at a given rate", "[model][edge]") {
    Dims d = small(8, 2, false);
    // Counted by hand from the shapes: V·D (embedding) + L·(2·D + 2·D·D + 2·D·KV + 3·D·H) + D + V·D (untied head).
    const std::uint64_t D = 64, H = 96, L = 2, KV = 2 * 8, V = 50;
    const std::uint64_t values = V * D + L * (2 * D + 2 * D * D + 2 * D * KV + 3 * D * H) + D + V * D;
    RandomInitEstimate e = estimate_random_init(d, 1e6);
    CHECK(e.values == values);
    CHECK(e.weight_bytes == 4 * values);
    CHECK_THAT(e.seconds, Catch::Matchers::WithinRel(double(values) / 1e6, 1e-15));  // one division
    const double rate = measure_normal_rate();
    CHECK(std::isfinite(rate));
    CHECK(rate > 0);
    auto avail = available_memory_bytes();
    if (std::ifstream("/proc/meminfo")) {
        REQUIRE(avail);
        CHECK(*avail > 0);
    }
    std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
    auto w = random_weights(d, 1, [&](std::uint64_t done, std::uint64_t total) { calls.emplace_back(done, total); });
    REQUIRE(calls.size() == 1);  // fewer than 2^24 values: only the final report
    CHECK(calls[0].first == w->floats());
    CHECK(calls[0].second == w->floats());
    auto plain = random_weights(d, 1);
    CHECK(std::equal(w->data(), w->data() + w->floats(), plain->data()));  // reporting changes no draw
}
