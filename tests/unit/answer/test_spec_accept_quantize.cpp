// The results of spec-accept and quantize, reached through their one library call each
// (issue #15), checked against values worked by hand from the first document's §3.1 and §4.1.
#include <catch2/catch.hpp>

#include "inferlab/answer/quantize.hpp"
#include "inferlab/answer/spec_accept.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/data/model_config.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("spec_accept: first document §3.1.2, p = (0.6, 0.3, 0.1), q = (0.4, 0.4, 0.2), exactly", "[unit][spec]") {
    SpecAcceptInputs in;
    in.source = PositionSource::Exact;
    in.p_exact = {Rational(3, 5), Rational(3, 10), Rational(1, 10)};
    in.q_exact = {Rational(2, 5), Rational(2, 5), Rational(1, 5)};
    in.gamma = 4;
    const SpecAcceptResult r = spec_accept(in);
    REQUIRE(r.position);
    REQUIRE(r.position->exact);
    // By hand: α = min(1, p/q) = (1, 3/4, 1/2); accepted Σ min(p, q) = 2/5 + 3/10 + 1/10 = 4/5.
    CHECK(r.position->exact->a.alpha[1] == Rational(3, 4));
    CHECK(r.position->exact->a.accept_prob == Rational(4, 5));
    CHECK(r.position->exact->a.max_abs_error == Rational(0));
    // α for the round comes from Σ min(p, q); E = (1 − 0.8^5)/(1 − 0.8) = 3.3616 (first document §3.1).
    REQUIRE(r.expected);
    CHECK(r.expected->alpha_from_pq);
    // 1e-12 absolute: five products and a division of doubles near 3.
    CHECK_THAT(r.expected->expected_tokens_per_round, WithinAbs(3.3616, 1e-12));
    CHECK_FALSE(r.expected->choice);  // no cost ratio, no sweep
    CHECK_FALSE(r.simulation);
}

TEST_CASE("spec_accept: the sweep marks the best γ, and the simulation's verdict is in the result", "[unit][spec]") {
    SpecAcceptInputs in;
    in.alpha = 0.8;
    in.gamma = 4;
    in.cost_ratio = 0.1;
    const SpecAcceptResult r = spec_accept(in);
    REQUIRE(r.expected);
    REQUIRE(r.expected->gamma_table.size() == 8);
    // By hand: speedup(γ) = (1 − 0.8^(γ+1)) / (0.2·(0.1γ + 1)); E = (1 − 0.8^7)/0.2 = 3.951424, /1.6 = 2.46964, the largest.
    CHECK(r.expected->gamma_table[5].best);
    CHECK_THAT(r.expected->gamma_table[5].speedup, WithinRel(3.951424 / 1.6, 1e-12));  // 1e-12: 0.8^7 and two divisions in doubles

    SpecAcceptInputs s;
    s.source = PositionSource::Float;
    s.p = {0.6, 0.3, 0.1};
    s.q = {0.4, 0.4, 0.2};
    s.samples = 20000;
    s.seed = 1;
    const SpecAcceptResult sim = spec_accept(s);
    REQUIRE(sim.simulation);
    CHECK(sim.simulation->speculative_passes == (sim.simulation->speculative_fit.p_value >= kFitLevel));
    // The shortcut's exact distribution, by hand: drafts with q ≥ 0.3 kept (0.4 + 0.4), the rest from p.
    CHECK_THAT(sim.simulation->threshold_shortcut_exact[0], WithinAbs(0.4 + 0.2 * 0.6, 1e-15));  // 1e-15: two roundings
    CHECK_FALSE(sim.simulation->threshold_shortcut_passes);  // 20000 samples separate 0.52 from 0.6 by far
}

TEST_CASE("spec_accept: errors name the caller's inputs", "[unit][spec]") {
    SpecAcceptInputs in;
    in.gamma = 2;
    in.outcomes = std::vector<std::string>{"accept", "accept", "accept"};
    in.where.outcomes = "OUT";
    in.where.gamma = "G";
    CHECK_THROWS_WITH(spec_accept(in), "OUT '3 outcomes': is longer than G 2");
    SpecAcceptInputs d;
    d.source = PositionSource::Float;
    d.p = {0.5, 0.6};
    d.q = {0.5, 0.5};
    CHECK_THROWS_WITH(spec_accept(d), "p 'sum 1.1': must sum to 1 within 1e-9 (or ask for normalization)");
}

TEST_CASE("quantize_value: §4.1's 0.37 on step 0.1 with Q = 7, and the tie 0.15/0.1 = 3/2", "[unit][quant]") {
    const ValueQuant v = quantize_value("0.37", "0.1", 7, Rounding::HalfAwayFromZero, nullptr);
    CHECK(v.q.level == 4);
    CHECK(v.q.exact);
    // 1e-12 absolute: 0.4 − 0.37 in doubles.
    CHECK_THAT(v.abs_error, WithinAbs(0.03, 1e-12));
    CHECK(v.within_half_step);
    CHECK_THAT(v.half_step, WithinAbs(0.05, 1e-15));  // 1e-15: one halving of 0.1
    const ValueQuant tie = quantize_value("0.15", "0.1", 7, Rounding::HalfToEven, nullptr);
    CHECK(tie.q.scaled_fraction == "3/2");
    CHECK(tie.q.level == 2);
    CHECK_THROWS_WITH(quantize_value("1e300", "1e-300", 7, Rounding::HalfAwayFromZero, nullptr, "X", "S"),
                      "X '1e300': is too large for this step (x/Δ must stay below 9e15)");
}

TEST_CASE("quantize_values and quantize_storage: bytes by hand", "[unit][quant]") {
    Matrix m{1, 4, {1, -2, 0.5, 4}};
    QuantConfig c;
    c.bits = 8;
    const ValuesQuant v = quantize_values(m, c, {Scheme::Symmetric, Scheme::Asymmetric}, StorageFormat{32, 16, 8}, nullptr);
    REQUIRE(v.results.size() == 2);
    // One group of 4 at int8: 4 B of data; symmetric one fp16 scale (2 B), asymmetric also an 8-bit zero (1 B).
    CHECK(v.results[0].storage.total_bytes == 6);
    CHECK(v.results[1].storage.total_bytes == 7);
    CHECK(v.results[0].storage.source_bytes == 16);
    // 32 int8 elements, one fp16 scale: 32 + 2 = 34 B, 8.5 bits each (README's example).
    const StorageQuant s = quantize_storage(32, 32, 8, StorageFormat{32, 16, 0});
    CHECK(s.cost.total_bytes == 34);
    CHECK(s.record_bits == 16);
}

TEST_CASE("kv_model_quant: Llama 3 8B at S = 8192 by hand", "[unit][quant]") {
    const ModelConfig cfg = load_named_model("llama-3-8b");
    const KvModelQuant k = kv_model_quant(cfg, 8192, 64, DType{"bf16", 16}, 16, 0);
    REQUIRE(k.rows.size() == 3);
    // 2 × 32 layers × 8 KV heads × 128 × 8192 × 2 B = 1 GiB; int8 half of it, plus one fp16 scale per 64:
    // 2 × 32 × 8 × (128/64) × 8192 × 2 B = 16 MiB of scales.
    CHECK(k.rows[0].bytes.total_bytes == 1073741824ULL);
    CHECK(k.rows[1].bytes.data_bytes == 536870912ULL);
    CHECK(k.rows[1].bytes.metadata_bytes == 16777216ULL);
    CHECK_THAT(k.rows[2].ratio_to_base, WithinRel((268435456.0 + 16777216.0) / 1073741824.0, 1e-15));  // one division
    const KvModelQuant d = kv_model_quant(cfg, 8192, std::nullopt, DType{"bf16", 16}, 16, 0);
    CHECK(d.group_size == 128);  // one scale per head vector
    CHECK(d.group_from_config);
}
