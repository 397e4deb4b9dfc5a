#include <catch2/catch.hpp>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rational.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/calc/spec.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("fractions: exact arithmetic and parsing", "[rational]") {
    CHECK(parse_rational("--p", "0.6") == Rational(3, 5));
    CHECK((Rational(3, 10) / Rational(4, 10)).str() == "3/4");
    CHECK((Rational(1, 3) + Rational(1, 6)).str() == "1/2");
    CHECK((Rational(1) - Rational(1, 5)).str() == "4/5");
    CHECK(Rational(-2, 4).str() == "-1/2");
    CHECK(Rational(1, 3) < Rational(1, 2));
    CHECK(is_short_decimal("0.125"));
    CHECK_FALSE(is_short_decimal("1e-3"));
    CHECK_FALSE(is_short_decimal("0.1234567891"));
    CHECK_THROWS_AS(Rational(INT64_MAX, 1) + Rational(INT64_MAX, 1), OverflowError);
}

TEST_CASE("acceptance is exact in fractions and equals p for random pairs in doubles", "[spec]") {
    auto a = acceptance(std::vector<Rational>{Rational(3, 5), Rational(3, 10), Rational(1, 10)},
                        std::vector<Rational>{Rational(2, 5), Rational(2, 5), Rational(1, 5)});
    CHECK(a.max_abs_error == Rational(0));
    CHECK(a.accept_prob == Rational(4, 5));
    Rng rng(9);
    for (int trial = 0; trial < 200; ++trial) {
        std::size_t n = 2 + rng.below(20);
        std::vector<double> p(n), q(n);
        double sp = 0, sq = 0;
        for (std::size_t i = 0; i < n; ++i) {
            sp += p[i] = rng.uniform();
            sq += q[i] = rng.below(4) == 0 ? 0.0 : rng.uniform();  // some tokens the draft never proposes
        }
        if (sq == 0) continue;
        for (auto& v : p) v /= sp;
        for (auto& v : q) v /= sq;
        auto d = acceptance(p, q);
        // 1e-12 absolute: sums of at most 21 terms below 1.
        CHECK(d.max_abs_error < 1e-12);
    }
}

TEST_CASE("p = q: nothing is rejected and the residual branch is empty", "[spec]") {
    auto a = acceptance(std::vector<double>{0.5, 0.5}, std::vector<double>{0.5, 0.5});
    CHECK(a.residual_empty);
    CHECK(a.reject_prob == 0);
    CHECK(a.residual == std::vector<double>{0, 0});
}

TEST_CASE("q(x) = 0 where p(x) > 0: the residual supplies x", "[spec]") {
    auto a = acceptance(std::vector<Rational>{Rational(1, 2), Rational(1, 2)}, std::vector<Rational>{Rational(1), Rational(0)});
    CHECK(a.never_proposed[1]);
    CHECK(a.residual[1] == Rational(1));
    CHECK(a.output[1] == Rational(1, 2));
    CHECK(a.max_abs_error == Rational(0));
}

TEST_CASE("sampling distribution: temperature, top-k, top-p", "[spec]") {
    auto d = sampling_distribution({2, 1, 0}, 1, 0, 1);
    double z = std::exp(2) + std::exp(1) + 1;
    CHECK_THAT(d[0], WithinRel(std::exp(2) / z, 1e-12));  // 1e-12 relative: exp and a sum of three, in double
    auto k = sampling_distribution({2, 1, 0}, 1, 2, 1);
    CHECK(k[2] == 0);
    CHECK_THAT(k[0] + k[1], WithinAbs(1, 1e-15));  // 1e-15 absolute: two renormalised terms
    auto p = sampling_distribution({2, 1, 0}, 1, 0, 0.5);  // the top token alone has 0.665 ≥ 0.5
    CHECK(p[0] == 1);
    auto cold = sampling_distribution({2, 1, 0}, 0.01, 0, 1);
    CHECK(cold[0] > 0.999999);  // T = 0.01: e^-100 of the mass left on the others
}

TEST_CASE("round walkthrough and its validation", "[spec]") {
    auto w = walk_round(4, {"accept", "accept", "reject"});
    CHECK(w.tokens_advanced == 3);
    CHECK(w.discarded == 1);
    CHECK(w.draft_proposals == 4);
    CHECK(w.target_positions == 4);
    auto all = walk_round(2, {"accept", "accept"});
    CHECK(all.bonus);
    CHECK(all.tokens_advanced == 3);
    CHECK_THROWS_WITH(walk_round(4, {"accept", "reject", "accept"}), Catch::Contains("follows a rejection"));
    CHECK_THROWS_WITH(walk_round(2, {"accept", "accept", "accept"}), Catch::Contains("longer than γ 2"));
    CHECK_THROWS_WITH(walk_round(4, {"accept"}), Catch::Contains("must end with a 'reject'"));
    CHECK_THROWS_WITH(walk_round(4, {"maybe"}), Catch::Contains("'accept' or 'reject'"));
}

TEST_CASE("expected tokens per round and speedup", "[spec]") {
    // (1 − 0.8^5)/(1 − 0.8) = 3.3616 exactly in decimal; 1e-12 relative: pow and one division in double.
    CHECK_THAT(expected_tokens_per_round(0.8, 4), WithinRel(3.3616, 1e-12));
    CHECK(expected_tokens_per_round(1, 4) == 5);
    auto d = accepted_count_distribution(0.8, 4);
    double mean = 0, total = 0;
    for (std::size_t k = 0; k < d.size(); ++k) {
        mean += d[k] * static_cast<double>(k + 1);
        total += d[k];
    }
    CHECK_THAT(total, WithinAbs(1, 1e-15));  // 1e-15 absolute: five terms below 1
    CHECK_THAT(mean, WithinRel(3.3616, 1e-12));  // the distribution agrees with the closed form
    CHECK_THAT(speedup(0.8, 4, 0.1), WithinRel(3.3616 / 1.4, 1e-12));  // γc + 1 = 1.4; as above
}

TEST_CASE("simulation: the rule keeps p, the threshold shortcut does not", "[spec]") {
    std::vector<double> p = {0.6, 0.3, 0.1}, q = {0.4, 0.4, 0.2};
    auto c = simulate_speculative(p, q, 0.3, 200000, 11);
    // Fixed seed: a correct sampler passes a 0.1% χ² test; the shortcut's output (0.52, not 0.6, for
    // the first token) is about 70 standard errors away at 200,000 samples, so p < 1e-6 with room.
    CHECK(fit_test(c.speculative, p).p_value > 0.001);
    CHECK(fit_test(c.threshold_shortcut, p).p_value < 1e-6);
    auto s = threshold_shortcut_distribution(p, q, 0.3);
    CHECK_THAT(s[0], WithinAbs(0.52, 1e-15));  // 0.4 + 0.2·0.6, exact in decimal; 1e-15: three roundings
    CHECK(fit_test(c.threshold_shortcut, s).p_value > 0.001);
    CHECK(c.greedy[0] == 200000);
}

// Issue #29, item 11: a χ² verdict on expected counts of 0.1. Outcomes expected fewer than 5 times
// are pooled; counts too few for two cells get no verdict.
TEST_CASE("fit_test pools the outcomes expected fewer than 5 times", "[spec]") {
    // n = 100 over p = (0.5, 0.45, 0.03, 0.02): expected 50, 45, 3, 2; the last two pool into one
    // cell of 5 (observed 4 + 2 = 6). χ² = (48 − 50)²/50 + (46 − 45)²/45 + (6 − 5)²/5
    // = 0.08 + 0.0222… + 0.2 = 0.30222… on 2 dof; the 2-dof tail is exp(−χ²/2).
    const FitTest f = fit_test({48, 46, 4, 2}, {0.5, 0.45, 0.03, 0.02});
    CHECK(f.pooled == 2);
    CHECK(f.dof == 2);
    CHECK_THAT(f.chi_square, WithinRel(0.08 + 1.0 / 45 + 0.2, 1e-12));  // 1e-12: three double divisions
    CHECK_THAT(f.p_value, WithinRel(std::exp(-(0.08 + 1.0 / 45 + 0.2) / 2), 1e-9));  // the series, as above
    CHECK(f.passes(0.01) == true);
    // Pooled and still below 5 (expected 2 + 1 = 3, observed 6): merged into the smallest other cell,
    // expected 47 + 3 = 50, observed 44 + 6 = 50; the cells (50 of 50, 50 of 50) give χ² = 0 on 1 dof.
    const FitTest g = fit_test({50, 44, 4, 2}, {0.5, 0.47, 0.02, 0.01});
    CHECK(g.pooled == 3);  // the two small outcomes and the one they merged into
    CHECK(g.dof == 1);
    CHECK_THAT(g.chi_square, WithinAbs(0, 1e-12));  // 1e-12: 0.47 × 100 is 47 to a few ulps
    // One sample over two outcomes leaves one cell: no test.
    const FitTest one = fit_test({1, 0}, {0.5, 0.5});
    CHECK_FALSE(one.testable);
    CHECK_FALSE(one.passes(0.01).has_value());
    // An outcome p forbids refutes p at any sample size.
    const FitTest bad = fit_test({0, 1}, {1.0, 0.0});
    CHECK(bad.testable);
    CHECK(bad.passes(0.01) == false);
}

TEST_CASE("the 99% Wilson interval stays inside [0, 1] and says when trials can tell", "[stats]") {
    // 0 of 1: [0, z²/(1 + z²)] = [0, 6.635776/7.635776]; 1 of 1: [1/7.635776, 1]. 1e-12: a few operations.
    const Interval none = wilson_interval_99(0, 1), all = wilson_interval_99(1, 1);
    CHECK(none.lo == 0);
    CHECK_THAT(none.hi, WithinRel(6.635776 / 7.635776, 1e-12));
    CHECK_THAT(all.lo, WithinRel(1 / 7.635776, 1e-12));
    CHECK(all.hi == 1);
    CHECK_FALSE(wilson_can_tell(0.3, 1));  // both outcomes' intervals hold 0.3
    CHECK(wilson_can_tell(0.9, 1));        // 0 of 1 excludes 0.9 > 0.869
    CHECK(wilson_can_tell(0.3, 100));
    // A large sample: near the normal approximation's ±2.576·sqrt(0.25/10,000) = ±0.01288, but not it:
    // 2.576·sqrt(0.25/10⁴ + z²/(4·10⁸)) / (1 + z²/10⁴) = 0.0128757 (computed apart, to 9 digits).
    const Interval half = wilson_interval_99(5000, 10000);
    CHECK_THAT(half.hi - 0.5, WithinRel(0.0128757287, 1e-8));
    // The ends at 0 hits and at every hit are exactly 0 and 1 at every n (centre ∓ half misses them by
    // a rounding for thousands of n: 1.1e-16 at 0 of 3), so an exact 0 or 1 is never refuted.
    for (int n = 1; n <= 2000; ++n) {
        INFO("n = " << n);
        CHECK(wilson_interval_99(0, n).lo == 0);
        CHECK(wilson_interval_99(n, n).hi == 1);
        CHECK(wilson_agrees(1.0, n, n) != false);
        CHECK(wilson_agrees(0.0, 0, n) != false);
    }
}

TEST_CASE("chi-square tail against known values", "[spec]") {
    // Q(k/2, x/2) for χ²: 2 dof tail is exp(−x/2).
    // 1e-12 relative: a series or continued fraction converged to double precision.
    CHECK_THAT(gamma_q(1, 2.0), WithinRel(std::exp(-2.0), 1e-12));
    // 1e-9 relative: the table's quantiles are printed to 16 digits, the tail is that sensitive.
    CHECK_THAT(gamma_q(0.5, 0.5 * 3.841458820694124), WithinRel(0.05, 1e-9));  // 95th percentile of χ²(1)
    CHECK_THAT(gamma_q(5, 0.5 * 23.209251158954356), WithinRel(0.01, 1e-9));  // 99th percentile of χ²(10)
}

TEST_CASE("shared statistics: the 99% half-width and KL divergence", "[stats]") {
    CHECK_THAT(proportion_half_width_99(0.5, 10000), WithinRel(2.576 * 0.005, 1e-12));  // z·√(pq/n), one sqrt
    CHECK(proportion_half_width_99(0.5, 0) == 0);
    CHECK(kl_divergence({0.5, 0.5}, {0.5, 0.5}) == 0);
    CHECK_THAT(kl_divergence({1, 0}, {0.5, 0.5}), WithinRel(std::log(2.0), 1e-15));  // one log
    CHECK(std::isfinite(kl_divergence({0.5, 0.5}, {1, 0})));
}

// Issue #14: "best" must not mark a slowdown (α = 0) or the table's last row (α = 1).
TEST_CASE("choosing γ: no γ helps at α = 0, the table's edge at α = 1", "[spec][edge]") {
    GammaChoice none = choose_gamma(0, 0.1, 8);
    CHECK_FALSE(none.best);
    CHECK_THAT(none.best_speedup, WithinRel(1 / 1.1, 1e-15));  // γ = 1: 1 token for 1.1 target passes
    GammaChoice one = choose_gamma(1, 0.1, 8);
    REQUIRE(one.best);
    CHECK(*one.best == 8);
    CHECK(one.at_edge);
    // α = 0.8, c = 0.1: written out independently, (1 − α^(γ+1)) / ((1 − α)(γc + 1)).
    std::size_t best = 0;
    double top = 0;
    for (std::size_t g = 1; g <= 8; ++g) {
        double s = (1 - std::pow(0.8, double(g + 1))) / (0.2 * (0.1 * double(g) + 1));
        if (s > top) top = s, best = g;
    }
    GammaChoice mid = choose_gamma(0.8, 0.1, 8);
    REQUIRE(mid.best);
    CHECK(*mid.best == best);
    CHECK_FALSE(mid.at_edge);
}

TEST_CASE("a round's proposals and verified positions are counted from its steps", "[spec][edge]") {
    RoundWalkthrough w = walk_round(4, {"accept", "accept", "reject"});
    CHECK(w.draft_proposals == 4);   // first document §3.1.1: "draft 花了四项提议成本"
    CHECK(w.target_positions == 4);  // "target 也验证了四个位置", the discarded fourth included
    RoundWalkthrough all = walk_round(3, {"accept", "accept", "accept"});
    CHECK(all.draft_proposals == 3);  // the bonus token costs the draft nothing
    CHECK(all.target_positions == 3);
    CHECK(all.tokens_advanced == 4);
}
