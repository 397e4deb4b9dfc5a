// model pitfall: each of the documents' warnings as an experiment. The correct path must match
// the no-cache logits, the broken one must not, and the first document's §4.3 check named for
// it must fire on the broken path only.
#include <catch2/catch.hpp>

#include "../../../support/small_model.hpp"

#include "inferlab/base/error.hpp"
#include "inferlab/model/run/pitfall.hpp"

using namespace inferlab;
using namespace inferlab::model;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

const CheckOutcome& check(const PitfallResult& r, const std::string& name) {
    for (const auto& c : r.checks)
        if (c.name == name) return c;
    FAIL("no check " << name);
    return r.checks.front();
}

// The broken path differs from `from` on (and not before), and `catcher` is the first check to fire.
PitfallResult expect_caught(const std::string& name, int from, const std::string& catcher) {
    Transformer m(inferlab::test::small_gqa_weights(7));
    PitfallResult r = run_pitfall(name, &m, 1);
    INFO(name);
    REQUIRE(r.positions.size() == r.tokens.size());
    // Correct path: the no-cache logits within the stated tolerance (1e-4 absolute, see pitfall.cpp).
    CHECK(r.correct_max_err <= r.tolerance);
    // Broken path: well past the tolerance, and first wrong at the position the bug reaches.
    CHECK(r.broken_max_err > 100 * r.tolerance);
    REQUIRE(r.first_wrong_pos.has_value());
    CHECK(*r.first_wrong_pos == from);
    for (const auto& p : r.positions)
        if (p.pos < from) CHECK(p.broken_err <= r.tolerance);
    CHECK(r.caught_by.text() == catcher);
    for (const auto& c : r.checks) CHECK_FALSE(c.fired_on_correct);
    CHECK(check(r, catcher).broken_step.has_value());
    // What it ran on and how it is measured, for the text and --explain.
    CHECK_FALSE(r.inputs.empty());
    CHECK_FALSE(r.derivation.empty());
    return r;
}

}  // namespace

TEST_CASE("pitfall stale-cache: an edited prompt with its old cache is wrong from the edit (first document, Figure 5)", "[pitfall]") {
    // Token 3 is edited: positions 3..7 keep the old prompt's logits.
    expect_caught("stale-cache", 3, "logits");
}

TEST_CASE("pitfall wrong-layer-cache: layer 0's cache read by every layer breaks the first decode step (first document, Figure 5)", "[pitfall]") {
    expect_caught("wrong-layer-cache", 8, "logits");
}

TEST_CASE("pitfall top-left-mask: a chunk after history masked top-left is wrong from its first row (first document, 1.3.1)", "[pitfall]") {
    expect_caught("top-left-mask", 4, "logits");
}

TEST_CASE("pitfall position-restart: RoPE from 0 in decode is caught by the positions check (first document, 4.3)", "[pitfall]") {
    expect_caught("position-restart", 8, "positions");
}

TEST_CASE("pitfall unmasked-padding: a batch of two lengths, the padded row's visible padding caught by the padding check (first document, 4.3)", "[pitfall]") {
    // The short row (5 tokens, 3 pads on the left) is wrong from its first real position; the
    // long row of the same batch has no padding and stays right on both paths.
    const PitfallResult r = expect_caught("unmasked-padding", 0, "padding");
    CHECK(r.prompt_len == 5);
    REQUIRE(r.other_row_correct_err.has_value());
    CHECK(*r.other_row_correct_err <= r.tolerance);
    CHECK(*r.other_row_broken_err <= r.tolerance);
    CHECK(check(r, "padding").broken_step == 0);  // the prefill: both rows in one pass
}

TEST_CASE("pitfall skipped-cache-update: a layer not extended in decode is caught by the cache-length check (first document, 4.3)", "[pitfall]") {
    // The prefill (step 0) writes every layer; the first decode step (step 1, position 8) skips the last.
    const PitfallResult r = expect_caught("skipped-cache-update", 8, "cache_length");
    CHECK(check(r, "cache_length").broken_step == 1);
    CHECK(check(r, "cache_length").broken_position == 8);
    CHECK(check(r, "logits").broken_step == 1);
}

TEST_CASE("pitfall cache-then-window: a window model whose cache keeps old positions differs once the context passes the window", "[pitfall]") {
    // Window 5: the row at position 5 is the first with a sixth position to (wrongly) see.
    expect_caught("cache-then-window", 5, "logits");
}

TEST_CASE("pitfall window-on-dense: a dense model whose cache drops old positions differs once the context passes the window", "[pitfall]") {
    // The reverse: the row at position 5 is the first that should still see position 0.
    expect_caught("window-on-dense", 5, "logits");
}

TEST_CASE("reusable_prefix compares tokens, the stale shortcut only lengths", "[pitfall]") {
    CHECK(reusable_prefix({1, 2, 3, 4}, {1, 2, 9, 4}, false) == 2);
    CHECK(reusable_prefix({1, 2, 3, 4}, {1, 2, 9, 4}, true) == 4);
    CHECK(reusable_prefix({1, 2}, {1, 2, 3}, false) == 2);
    CHECK(reusable_prefix({}, {1}, false) == 0);
}

TEST_CASE("pitfall gib-as-gb: first document 2.1.3's 1 GiB shown as 1.073741824 when divided by 10^9", "[pitfall]") {
    // A calculator: no model.
    const PitfallResult r = run_pitfall("gib-as-gb", nullptr, 1);
    REQUIRE(r.quantities.size() == 4);
    CHECK(r.quantities[0].correct == 1073741824.0);        // 2·32·1·8192·8·128·2 B, the document's sum
    CHECK(r.quantities[1].correct == 1.0);                 // exactly 1 GiB
    CHECK_THAT(r.quantities[1].broken, WithinRel(1.073741824, 1e-12));  // 1e-12 relative: one double division
    CHECK(r.quantities[3].broken != r.quantities[3].correct);  // the round trip gives other bytes
}

TEST_CASE("pitfall mean-length: B × blocks(mean) undercounts the pool (first document, 2.1.2)", "[pitfall]") {
    const PitfallResult r = run_pitfall("mean-length", nullptr, 1);
    REQUIRE(r.quantities.size() == 3);
    CHECK(r.quantities[0].correct == r.quantities[0].broken);  // the same tokens in total
    CHECK(r.quantities[1].correct == 10);                      // 1 + 2 + 3 + 4 blocks of 16
    CHECK(r.quantities[1].broken == 8);                        // 4 × ceil(25/16)
    CHECK(r.quantities[2].correct > r.quantities[2].broken);
}

TEST_CASE("pitfall threshold-accept: the shortcut's distribution is not p, min(1, p/q) is (first document, 3.1.2)", "[pitfall]") {
    const PitfallResult r = run_pitfall("threshold-accept", nullptr, 1);
    REQUIRE(r.quantities.size() == 3);
    const double p[] = {0.5, 0.3, 0.2};
    for (std::size_t x = 0; x < 3; ++x) CHECK_THAT(r.quantities[x].correct, WithinAbs(p[x], 1e-12));  // 1e-12: double rounding of p/q
    // q(x) ≥ 0.3 keeps tokens 1 and 2 (mass 0.8); 0.2 falls to p: token 0 gets 0.2·0.5 = 0.1.
    CHECK_THAT(r.quantities[0].broken, WithinAbs(0.1, 1e-12));  // 1e-12: double rounding
    REQUIRE(r.fit_p_correct.has_value());
    CHECK(*r.fit_p_correct > 1e-3);  // fixed seed: the exact rule fits p
    CHECK(*r.fit_p_broken < 1e-12);  // 20000 draws against a total variation of 0.4
}

TEST_CASE("same distribution, different text: one seed's tokens differ, many seeds' first tokens fit p (first document, 3.1.2)", "[pitfall]") {
    Transformer m(inferlab::test::small_gqa_weights(7));
    const PitfallResult r = run_pitfall("same-distribution", &m, 1);
    REQUIRE(r.same.has_value());
    const SameDistribution& s = *r.same;
    CHECK(s.plain_text != s.speculative_text);
    CHECK(s.cells.size() == s.plain_counts.size());
    std::uint64_t n = 0;
    for (auto c : s.speculative_counts) n += c;
    CHECK(n == s.seeds);
    CHECK(s.plain_p_value > 1e-3);        // fixed seeds: a fit, not a fluke threshold
    CHECK(s.speculative_p_value > 1e-3);
}

TEST_CASE("an unknown pitfall is an input error naming it", "[pitfall]") {
    Transformer m(inferlab::test::small_gqa_weights(7));
    CHECK_THROWS_AS(run_pitfall("nope", &m, 1), InputError);
    CHECK(pitfall_list().size() == 12);
    // A model pitfall without a model is the caller's bug, not an input error.
    CHECK_THROWS_AS(run_pitfall("stale-cache", nullptr, 1), std::logic_error);
}
