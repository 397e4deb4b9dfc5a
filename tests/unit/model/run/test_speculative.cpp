// Speculative decoding and the quantized KV cache on the reference model.
#include <catch2/catch.hpp>
#include <cmath>

#include "../../../support/test_backend.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/model/ops/quant_cache.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/speculative.hpp"

using namespace inferlab;
using namespace inferlab::model;
using inferlab::test::test_cpu;

namespace {
Dims tiny(int vocab, int layers, int seq = 320) {
    Dims d;
    d.dim = 32;
    d.hidden_dim = 48;
    d.n_layers = layers;
    d.n_heads = 4;
    d.n_kv_heads = 2;
    d.vocab_size = vocab;
    d.seq_len = seq;
    return d;
}
}  // namespace

TEST_CASE("greedy speculative decoding equals greedy target decoding over 200 tokens", "[model][speculative]") {
    auto tw = random_weights(tiny(64, 4), 3);
    auto dw = derive_draft(*tw, 2, 0.05, 4);
    Transformer target(*tw, test_cpu()), draft(*dw, test_cpu());
    Sampling greedy;
    greedy.greedy = true;
    auto plain = plain_generate(target, {1, 2, 3}, 200, greedy, 1);
    for (int gamma : {1, 2, 4, 8}) {
        INFO("gamma = " << gamma);
        SpeculateOptions o;
        o.gamma = gamma;
        o.new_tokens = 200;
        o.sampling = greedy;
        SpeculateResult r = speculative_generate(target, draft, {1, 2, 3}, o);
        CHECK(r.tokens == plain);
        CHECK(r.target_passes < 200);  // several tokens per target pass
    }
}

TEST_CASE("sampled first token: speculative matches the target, the threshold shortcut does not", "[model][speculative]") {
    auto tw = random_weights(tiny(8, 2, 32), 5);
    auto dw = derive_draft(*tw, 1, 0.5, 6);
    Transformer target(*tw, test_cpu()), draft(*dw, test_cpu());
    Sampling s;
    s.temperature = 0.5;  // a peaked target, so the shortcut's bias is visible
    const std::vector<int> prompt = {1, 2};
    ContiguousCache c(tw->dims());
    MatrixRM l = target.forward(prompt, c);
    const std::vector<double> p = sampling_distribution(l, 1, s);
    const int runs = 4000;
    std::vector<std::uint64_t> exact(8, 0), shortcut(8, 0);
    for (int seed = 0; seed < runs; ++seed) {
        SpeculateOptions o;
        o.gamma = 3;
        o.new_tokens = 1;
        o.sampling = s;
        o.seed = std::uint64_t(seed);
        exact[std::size_t(speculative_generate(target, draft, prompt, o).tokens[0])]++;
        o.rule = AcceptRule::Threshold;
        o.threshold = 0.1;  // keeps most drafts of this near-uniform draft: visibly biased
        shortcut[std::size_t(speculative_generate(target, draft, prompt, o).tokens[0])]++;
    }
    FitTest fe = fit_test(exact, p), fs = fit_test(shortcut, p);
    INFO("exact p-value " << fe.p_value << ", shortcut p-value " << fs.p_value);
    CHECK(fe.p_value >= 0.01);
    CHECK(fs.p_value < 0.01);
}

TEST_CASE("measured acceptance within its interval of Σ min(p, q)", "[model][speculative]") {
    auto tw = random_weights(tiny(64, 4), 7);
    auto dw = derive_draft(*tw, 2, 0.2, 8);
    Transformer target(*tw, test_cpu()), draft(*dw, test_cpu());
    SpeculateOptions o;
    o.gamma = 4;
    o.new_tokens = 250;
    o.seed = 9;
    SpeculateResult r = speculative_generate(target, draft, {5, 6}, o);
    std::uint64_t judged = 0, accepted = 0;
    double predicted = 0;
    for (int i = 0; i < 4; ++i) {
        judged += r.judged[std::size_t(i)];
        accepted += r.accepted[std::size_t(i)];
        predicted += r.predicted_accept[std::size_t(i)];
    }
    const double a = double(accepted) / double(judged), pa = predicted / double(judged);
    // 99.9% normal interval of a proportion: acceptances are Bernoulli(Σ min(p, q)) given the prefix.
    CHECK(std::fabs(a - pa) <= 3.29 * std::sqrt(pa * (1 - pa) / double(judged)));
    CHECK(r.tokens.size() == 250);
}

TEST_CASE("rollback truncates both caches to the accepted prefix", "[model][speculative]") {
    auto tw = random_weights(tiny(64, 2), 10);
    auto dw = derive_draft(*tw, 1, 1.0, 11);  // a poor draft: many rejections, so many rollbacks
    Transformer target(*tw, test_cpu()), draft(*dw, test_cpu());
    Sampling greedy;
    greedy.greedy = true;
    SpeculateOptions o;
    o.gamma = 4;
    o.new_tokens = 40;
    o.sampling = greedy;
    auto r = speculative_generate(target, draft, {1, 2, 3}, o);
    // Precondition, not the check: drafts were discarded, so the caches were rolled back.
    REQUIRE(r.drafts_discarded > 0);
    // The check: greedy speculative decoding equals the target alone. A discarded draft's K/V
    // left in either cache would shift every later position and change the tokens.
    CHECK(r.tokens == plain_generate(target, {1, 2, 3}, 40, greedy, 1));
}

TEST_CASE("int8 and int4 KV caches: bytes per token counted by hand, int8 logits close to float32", "[model][kv-quant]") {
    auto w = random_weights(tiny(64, 2), 12);
    Transformer m(*w, test_cpu());
    const Dims& d = w->dims();
    QuantizedCache q(d, 8, KvQuantScheme::PerToken);
    // L = 2, H_kv = 2, d = 8: codes 2 (K, V)·L·H_kv·d·1 B = 64 B, scales one fp16 per head vector
    // of K and of V, 2·L·H_kv·2 B = 16 B: 80 B per token.
    const std::uint64_t per_token = 2 * 2 * 2 * 8 + 2 * 2 * 2 * 2;
    CHECK(q.bytes_per_token() == per_token);
    CHECK(q.allocated_bytes() == per_token * std::uint64_t(d.seq_len));  // measured from the buffers
    const KvQuantBytes formula =
        kv_quantized_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 8), {1}, 8, std::uint64_t(d.head_dim()), 16, 0);
    CHECK(formula.bytes_per_token == per_token);
    // KIVI int4, groups of 16 tokens: codes 2·L·H_kv·d·½ B = 32 B, V scales L·H_kv·2 B = 8 B,
    // K scales one fp16 per channel per 16 tokens, L·H_kv·d·2 B / 16 = 4 B: 44 B per token.
    QuantizedCache kivi(d, 4, KvQuantScheme::Kivi, 16);
    CHECK(kivi.bytes_per_token() == 2 * 2 * 2 * 8 / 2 + 2 * 2 * 2 + 2 * 2 * 8 * 2 / 16);
    CHECK(kivi.allocated_bytes() == (2 * 2 * 2 * 8 / 2 + 2 * 2 * 2 + 2 * 2 * 8 * 2 / 16) * std::uint64_t(d.seq_len));
    ContiguousCache f(d);
    std::vector<int> tokens;
    for (int i = 0; i < 64; ++i) tokens.push_back((i * 13 + 5) % 64);
    MatrixRM lf = m.forward(tokens, f), lq = m.forward(tokens, q);
    const double scale = std::max(1.0, double(lf.cwiseAbs().maxCoeff()));
    // 0.02 relative: int8 moves each cached value by at most half a step, 1/254 of its head vector's
    // largest (0.4%); the logits here move by about 0.6%, while a cache decoded with the wrong scale
    // or position moves them by order 1. Not zero: the cache really is quantized.
    CHECK(double((lf - lq).cwiseAbs().maxCoeff()) / scale < 0.02);
    CHECK(double((lf - lq).cwiseAbs().maxCoeff()) > 0);
    QuantizedCache q4(d, 4, KvQuantScheme::Kivi, 16);
    MatrixRM l4 = m.forward(tokens, q4);
    CHECK((lf - l4).cwiseAbs().maxCoeff() > (lf - lq).cwiseAbs().maxCoeff());  // fewer bits, more error
}

TEST_CASE("the reference decode model's bytes equal decode_step_bytes", "[model][roofline]") {
    const Dims d = tiny(64, 2);
    DecodeModel dm = reference_decode_model(d);
    Machine hw{1e10, std::nullopt, std::nullopt};
    CHECK(decode_step(dm, {100}, hw).bytes == decode_step_bytes(d, 100));
    CHECK(decode_step(dm, {100, 100}, hw).bytes == decode_step_bytes(d, 100) + decode_step_bytes(d, 100) - decode_step_bytes(d, 0));
}
