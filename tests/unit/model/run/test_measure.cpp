// The measured experiments of model kv-quant, model speculate and model roofline, called as
// library functions (model/measure.hpp) and checked against values worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "../../../support/small_model.hpp"

#include "inferlab/model/run/measure.hpp"

using namespace inferlab;
using namespace inferlab::model;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("speculate_statistics: rates, the 99% interval and tokens per round from hand-made counts", "[measure]") {
    SpeculateResult r;
    r.judged = {10, 4, 0};
    r.accepted = {8, 1, 0};
    r.predicted_accept = {6.0, 2.0, 0.0};
    r.tokens.assign(12, 1);
    r.produced = 13;  // the last round made one token past the 12 asked for
    r.rounds = 5;
    const SpeculateStats s = speculate_statistics(r, 3, 0.5);
    CHECK(s.judged == 14);
    CHECK(s.accepted == 9);
    CHECK_THAT(s.acceptance_rate, WithinRel(9.0 / 14.0, 1e-12));           // 1e-12: one double division
    CHECK_THAT(s.predicted_acceptance_rate, WithinRel(8.0 / 14.0, 1e-12));  // (6 + 2) / 14
    // The Wilson interval of 9 of 14 at z = 2.576: z² = 6.635776, centre (9/14 + z²/28) / (1 + z²/14)
    // = 0.879849 / 1.473984 = 0.596919; half 2.576·sqrt((9·5/14²)/14 + z²/784) / 1.473984
    // = 2.576 · sqrt(0.016399 + 0.008464) / 1.473984 = 0.275571. Worked to 6 digits, hence 1e-5.
    CHECK_THAT(s.interval_99.lo, WithinAbs(0.321348, 1e-5));
    CHECK_THAT(s.interval_99.hi, WithinAbs(0.872490, 1e-5));
    CHECK(s.within_interval == true);                                      // 8/14 = 0.571 inside
    // What the rounds produced (accepted drafts + 1 each, the last round whole), not the tokens kept.
    CHECK_THAT(s.tokens_per_round, WithinRel(2.6, 1e-12));                 // 13 produced / 5 rounds
    // (1 − α^4)/(1 − α) = 1 + α + α² + α³ at α = 4/7: 1 + 4/7 + 16/49 + 64/343 = 715/343.
    CHECK_THAT(s.predicted_tokens_per_round, WithinRel(715.0 / 343.0, 1e-12));  // 1e-12: a few double operations
    REQUIRE(s.predicted_speedup.has_value());
    CHECK_THAT(*s.predicted_speedup, WithinRel(715.0 / 343.0 / 2.5, 1e-12));      // ÷ (γc + 1) = 3·0.5 + 1
    REQUIRE(s.per_position.size() == 3);
    CHECK_THAT(*s.per_position[0].empirical, WithinRel(0.8, 1e-12));
    CHECK_THAT(*s.per_position[0].predicted, WithinRel(0.6, 1e-12));
    CHECK_THAT(*s.per_position[1].empirical, WithinRel(0.25, 1e-12));
    CHECK_THAT(*s.per_position[1].predicted, WithinRel(0.5, 1e-12));
    // Position 3 was never judged: no rate, rather than 0.
    CHECK_FALSE(s.per_position[2].empirical.has_value());
    CHECK_FALSE(s.per_position[2].predicted.has_value());
    CHECK_FALSE(speculate_statistics(r, 3, std::nullopt).predicted_speedup.has_value());
}

TEST_CASE("run_speculate: greedy speculation gives the target's greedy tokens, at every weight dtype", "[measure]") {
    const Weights& w = inferlab::test::small_gqa_weights(3);
    auto dw = derive_draft(w, 1, 0.05, 2);
    Transformer target(w), draft(*dw);
    SpeculateOptions so;
    so.gamma = 3;
    so.new_tokens = 12;
    so.sampling.greedy = true;
    for (WeightDtype t : {WeightDtype::F32, WeightDtype::BF16}) {
        INFO(to_string(t));
        const WeightsAt at_t = make_weights_at(w, t, 1), at_d = make_weights_at(*dw, t, 1);
        const SpeculateExperiment e = run_speculate(target, draft, {1, 2, 3}, so, &at_t, &at_d, std::nullopt);
        const auto target_cpu = at_t.cpu_backend_like(target.backend());
        const Transformer target_at(w, *target_cpu);  // the target reading its weights at this dtype
        // Greedy verification keeps the target's own greedy continuation (first document, 3.1).
        CHECK(e.run.tokens == plain_generate(target_at, {1, 2, 3}, 12, so.sampling, 1, {}));
        CHECK(e.stats.judged > 0);
        CHECK(e.stats.acceptance_rate >= 0);
        CHECK(e.stats.acceptance_rate <= 1);
    }
}

TEST_CASE("run_kv_quant: int8 and int4 caches against float32, bytes per token counted by hand", "[measure]") {
    const Weights& w = inferlab::test::small_gqa_weights(5);
    Transformer m(w);
    KvQuantExperiment e;
    e.tokens = {3, 14, 15, 9, 26, 5, 35, 8, 9, 7, 9, 3, 23, 8, 4, 6};
    e.prompt = {1, 2, 3};
    e.generate = 5;
    e.scheme = KvQuantScheme::PerToken;
    e.bits = 8;
    const KvQuantResult r8 = run_kv_quant(m, e);
    e.bits = 4;
    const KvQuantResult r4 = run_kv_quant(m, e);
    CHECK(r8.positions == 16);
    // L = 2, H_kv = 2, d = 8: float32 K and V are 2·2·2·8·4 = 256 B per token; int8 codes 64 B plus
    // one fp16 scale per head vector for K and V (2·2·2·2 = 16 B): 80 B; int4: 32 + 16 = 48 B.
    CHECK(r8.bytes_per_token_fp32 == 256);
    CHECK(r8.bytes_per_token_measured == 80);
    CHECK(r8.bytes_per_token_kv_mem == 80);
    CHECK(r4.bytes_per_token_measured == 48);
    // Rounding error: present, and larger at 4 bits than at 8.
    CHECK(r8.max_abs_logit_error > 0);
    CHECK(r4.max_abs_logit_error > r8.max_abs_logit_error);
    CHECK(r8.mean_kl >= 0);
    CHECK(r8.mean_kl <= r8.max_kl);
    CHECK_THAT(r8.greedy_agreement, WithinRel(r8.greedy_agree / 16.0, 1e-12));
    CHECK(r8.generated == 5);
    // The compared tokens: a fixed stream per seed, inside the vocabulary.
    const auto t = kv_quant_tokens(w.dims(), 64, 1);
    CHECK(t == kv_quant_tokens(w.dims(), 64, 1));
    CHECK(t != kv_quant_tokens(w.dims(), 64, 2));
    for (int x : t) CHECK((x >= 0 && x < 50));
    if (r8.first_divergence) CHECK(*r8.first_divergence < 5);
}

TEST_CASE("run_roofline: one row per context and batch, D_B growing by B·M_KV, measured rates from the step time", "[measure]") {
    const Weights& w = inferlab::test::small_gqa_weights(7);
    Transformer m(w);
    RooflineExperiment e;
    e.batches = {1, 2};
    e.contexts = {4};
    e.repeats = 1;
    e.probe_bytes = 8u << 20;  // small: this test checks the arithmetic, not the machine
    const RooflineResult r = run_roofline(m, e);
    REQUIRE(r.rows.size() == 2);
    // One more sequence of S = 4 adds M_KV = 4 × 256 B (float32 K and V, L = 2, H_kv = 2, d = 8).
    CHECK(r.rows[1].bytes_per_step - r.rows[0].bytes_per_step == 1024);
    CHECK(r.rows[0].bytes_per_step == r.weight_bytes + 1024);
    CHECK(r.max_step_bytes == r.rows[1].bytes_per_step);
    CHECK(r.bandwidth.read_gbs > 0);
    for (const auto& row : r.rows) {
        CHECK(row.measured_step_s > 0);
        // 1e-12 relative: one double division each.
        CHECK_THAT(row.measured_aggregate_tokens_per_s, WithinRel(double(row.batch) / row.measured_step_s, 1e-12));
        CHECK_THAT(row.ratio, WithinRel(row.measured_aggregate_tokens_per_s / row.predicted_aggregate_tokens_per_s, 1e-12));
        // The bytes-only bound: β / D_B steps per second.
        CHECK_THAT(row.predicted_per_request_tokens_per_s,
                   WithinRel(r.bandwidth.read_gbs * 1e9 / double(row.bytes_per_step), 1e-9));  // 1e-9: GB/s scaled back to B/s
    }
    CHECK(r.fits_in_last_level_cache.has_value() == r.last_level_cache_bytes.has_value());
}
