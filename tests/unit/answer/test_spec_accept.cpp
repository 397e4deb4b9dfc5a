// spec-accept's result (answer/spec_accept.hpp), reached through its one library call, checked
// against values worked by hand from the first document's §3.1.
#include <catch2/catch.hpp>

#include "inferlab/answer/quantize.hpp"
#include "inferlab/answer/spec_accept.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/data/model_config.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
TEST_CASE("spec_accept: first document §3.1.2, p = (0.6, 0.3, 0.1), q = (0.4, 0.4, 0.2), exactly", "[unit][spec-accept]") {
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

TEST_CASE("spec_accept: the sweep marks the best γ, and the simulation's verdict is in the result", "[unit][spec-accept]") {
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
    CHECK(sim.simulation->speculative_passes == true);  // the rule keeps p: this seed's counts pass (every cell ≥ 2000)
    // The shortcut's exact distribution, by hand: drafts with q ≥ 0.3 kept (0.4 + 0.4), the rest from p.
    CHECK_THAT(sim.simulation->threshold_shortcut_exact[0], WithinAbs(0.4 + 0.2 * 0.6, 1e-15));  // 1e-15: two roundings
    CHECK(sim.simulation->threshold_shortcut_passes == false);  // 20000 samples separate 0.52 from 0.6 by far
}

TEST_CASE("spec_accept: errors name the caller's inputs", "[unit][spec-accept]") {
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
