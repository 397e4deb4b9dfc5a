// best_of_n(): the whole of best-of-n's answer from one call (issue #15).
#include <catch2/catch.hpp>

#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/base/error.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("best_of_n: coverage and verifier selection, worked by hand", "[best-of-n][answer]") {
    BestOfNRequest rq;
    rq.p = 0.3;
    rq.ns = {2, 4};
    rq.verifier = Verifier{0.9, 0.2, true};
    const BestOfNResult r = best_of_n(rq);
    REQUIRE(r.rows.size() == 2);
    // First document §3.2: 1 − 0.7^4 = 0.7599. 1e-12 absolute: exact in decimal, a double here.
    CHECK_THAT(r.rows[1].coverage, WithinAbs(0.7599, 1e-12));
    // q = 0.3·0.9 + 0.7·0.2 = 0.41; P(N=2) = (1 − 0.59²)·0.27/0.41 + 0.59²·0.03/0.59 = 0.4293 + 0.0177.
    CHECK_THAT(*r.rows[0].verifier_selection, WithinAbs(0.447, 1e-12));
    REQUIRE(r.verifier);
    CHECK_THAT(r.verifier->accept_rate, WithinAbs(0.41, 1e-15));        // two products and a sum
    CHECK_THAT(r.verifier->limit_large_n, WithinRel(0.27 / 0.41, 1e-12));  // p·TPR/q
    CHECK_FALSE(r.rows[0].majority_vote);
    CHECK_FALSE(r.budget);
    CHECK_FALSE(r.simulation);
}

TEST_CASE("best_of_n: the inverse, the biased judge's drop and the hard fraction", "[best-of-n][answer]") {
    BestOfNRequest rq;
    rq.p = 0.9;
    rq.ns = {1, 2, 8};
    rq.judge_bias = 0.3;
    rq.hard_fraction = 0.05;
    rq.target = 0.999;
    const BestOfNResult r = best_of_n(rq);
    // 1 − 0.1^3 = 0.999: N = 3.
    REQUIRE(r.target);
    CHECK(r.target->min_n == 3u);
    // By hand: N = 2 gives 0.81 + 0.7·(1 − 0.01 − 0.81) = 0.936; N = 8 gives
    // 0.9^8 + 0.7·(1 − 10^−8 − 0.9^8) = 0.82914...: the judge falls from N = 2 to 8.
    REQUIRE(r.biased_judge_drop);
    CHECK(r.biased_judge_drop->from_n == 2);
    CHECK(r.biased_judge_drop->to_n == 8);
    CHECK_THAT(r.biased_judge_drop->from_p, WithinAbs(0.936, 1e-12));  // 1e-12: a few roundings of exact decimals
    // p on the solvable problems: 0.9 / 0.95.
    CHECK_THAT(*r.p_on_solvable, WithinRel(0.9 / 0.95, 1e-15));  // one division
}

TEST_CASE("best_of_n: strategies at equal cost, and the simulation is seeded", "[best-of-n][answer]") {
    BestOfNRequest rq;
    rq.p = 0.3;
    rq.ns = {1, 4};
    rq.verifier = Verifier{0.9, 0.1, true};
    rq.answer_dist = spread_wrong(0.3, 3);
    rq.budget = BestOfNRequest::Budget{16, 1, 1};
    rq.simulation = BestOfNRequest::Simulation{20000, 7};
    const BestOfNResult r = best_of_n(rq);
    REQUIRE(r.budget);
    REQUIRE(r.budget->plans.size() == 3);
    CHECK(r.budget->plans[1].n == 8);  // 16 / (1 + 1)
    CHECK(r.budget->samples_bought == 16);
    REQUIRE(r.simulation);
    CHECK(r.simulation->rows.size() == 2 * 3);  // coverage, verifier, majority at each N
    CHECK(r.simulation->all_agree);
    const BestOfNResult again = best_of_n(rq);
    CHECK(again.simulation->rows[5].estimate.mean == r.simulation->rows[5].estimate.mean);
}

TEST_CASE("best_of_n: errors name the library's terms, not flags", "[best-of-n][answer]") {
    BestOfNRequest rq;
    rq.p = 0.3;
    rq.ns = {201};
    rq.answer_dist = spread_wrong(0.3, 2);
    try {
        best_of_n(rq);
        FAIL("majority vote past N = 200 was not refused");
    } catch (const InputError& e) {
        CHECK(e.where() == "N");
        CHECK(e.value() == "201");
    }
    BestOfNRequest b;
    b.p = 0.3;
    b.ns = {1};
    b.budget = BestOfNRequest::Budget{0.5, 1, 0};
    CHECK_THROWS_WITH(best_of_n(b), "budget '0.5': is smaller than one sample (cost 1)");
}

TEST_CASE("best_of_n: errors say the names the caller passes", "[best-of-n][answer]") {
    BestOfNRequest rq;
    rq.p = 0.3;
    rq.ns = {201};
    rq.answer_dist = spread_wrong(0.3, 2);
    rq.names.n = "--n";
    CHECK_THROWS_WITH(best_of_n(rq), "--n '201': majority vote is computed exactly for N ≤ 200");
    rq.ns = {1};
    rq.names.budget = "--budget";
    rq.budget = BestOfNRequest::Budget{0.5, 1, 0};
    CHECK_THROWS_WITH(best_of_n(rq), "--budget '0.5': is smaller than one sample (cost 1)");
    rq.budget.reset();
    rq.rho = 1;
    rq.names.rho = "--rho";
    CHECK_THROWS_WITH(best_of_n(rq), Catch::Matchers::StartsWith("--rho '1': must be in [0, 1)"));
}
