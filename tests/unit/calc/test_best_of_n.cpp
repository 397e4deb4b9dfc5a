#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/best_of_n.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;

namespace {
// Brute force over every outcome of N candidates, written independently of the library's
// closed forms: each candidate is (correct?, accepted?), or for voting an answer index.
double brute_verifier(double p, int n, double tpr, double fpr, bool fallback_random) {
    double total = 0;
    const int states = 1 << (2 * n);
    for (int s = 0; s < states; ++s) {
        double prob = 1;
        int acc = 0, acc_correct = 0, correct = 0;
        for (int i = 0; i < n; ++i) {
            bool c = (s >> (2 * i)) & 1, a = (s >> (2 * i + 1)) & 1;
            prob *= c ? p : 1 - p;
            prob *= a ? (c ? tpr : fpr) : (c ? 1 - tpr : 1 - fpr);
            acc += a;
            acc_correct += a && c;
            correct += c;
        }
        if (acc) total += prob * acc_correct / acc;
        else if (fallback_random) total += prob * correct / n;
    }
    return total;
}

double brute_majority(const std::vector<double>& d, int n) {
    const int k = static_cast<int>(d.size());
    double total = 0;
    std::vector<int> idx(n, 0);
    std::function<void(int, double)> rec = [&](int pos, double prob) {
        if (pos == n) {
            std::vector<int> votes(k, 0);
            for (int a : idx) ++votes[a];
            int best = *std::max_element(votes.begin(), votes.end());
            int ties = 0;
            for (int v : votes) ties += v == best;
            if (votes[0] == best) total += prob / ties;
            return;
        }
        for (int a = 0; a < k; ++a) {
            idx[pos] = a;
            rec(pos + 1, prob * d[a]);
        }
    };
    rec(0, 1);
    return total;
}
}  // namespace

TEST_CASE("coverage and its inverse", "[best-of-n]") {
    // 1e-15 absolute: 0.7599 is exact in decimal; 1 − 0.7^4 rounds a few times in double.
    CHECK_THAT(coverage(0.3, 4), WithinAbs(0.7599, 1e-15));
    CHECK(coverage(0, 10) == 0);
    CHECK(coverage(1, 1) == 1);
    CHECK(*min_n_for_coverage(0.3, 0.7599) == 4);
    CHECK(*min_n_for_coverage(0.3, 0.76) == 5);
    CHECK_FALSE(min_n_for_coverage(0, 0.5));
}

TEST_CASE("verifier selection equals brute-force enumeration", "[best-of-n]") {
    for (int n : {1, 2, 3, 5})
        for (double tpr : {1.0, 0.9, 0.5})
            for (double fpr : {0.0, 0.2, 0.7})
                for (bool fb : {true, false}) {
                    INFO("n=" << n << " tpr=" << tpr << " fpr=" << fpr << " fallback=" << fb);
                    // 1e-12 absolute: sums of at most 4^5 products of probabilities.
                    CHECK_THAT(verifier_selection(0.3, static_cast<std::uint64_t>(n), Verifier{tpr, fpr, fb}),
                               WithinAbs(brute_verifier(0.3, n, tpr, fpr, fb), 1e-12));
                }
}

TEST_CASE("imperfect verifier: selection below coverage", "[best-of-n]") {
    for (std::uint64_t n = 2; n <= 32; ++n) CHECK(verifier_selection(0.3, n, Verifier{0.9, 0.2, true}) < coverage(0.3, n));
    // A perfect verifier selects whenever a correct candidate is present (1e-15 absolute: the same
    // probability reached by two expressions in double).
    CHECK_THAT(verifier_selection(0.3, 4, Verifier{1, 0, false}), WithinAbs(coverage(0.3, 4), 1e-15));
}

TEST_CASE("majority vote equals brute-force enumeration, ties split evenly", "[best-of-n]") {
    for (int n : {1, 2, 3, 4, 6})
        for (const auto& d : std::vector<std::vector<double>>{{0.3, 0.7}, {0.4, 0.35, 0.25}, {0.3, 0.35, 0.35}, {0.5, 0.2, 0.2, 0.1}}) {
            INFO("n=" << n);
            CHECK_THAT(majority_vote(d, static_cast<std::uint64_t>(n)), WithinAbs(brute_majority(d, n), 1e-12));
        }
    CHECK_THROWS_AS(majority_vote({0.5, 0.5}, 201), InputError);
}

TEST_CASE("correlated errors lower coverage for the same mean p", "[best-of-n]") {
    for (std::uint64_t n = 2; n <= 16; ++n) {
        CHECK(coverage_hard_fraction(0.3, 0.4, n) < coverage(0.3, n));
        CHECK(coverage_beta(0.3, 0.3, n) < coverage(0.3, n));
    }
    // With no correlation (ρ = 0, h = 0) both reduce to the independent case: 1e-15 absolute, the
    // same probability by two expressions in double.
    CHECK_THAT(coverage_beta(0.3, 0, 4), WithinAbs(coverage(0.3, 4), 1e-15));
    CHECK_THAT(coverage_hard_fraction(0.3, 0, 4), WithinAbs(coverage(0.3, 4), 1e-15));
    // Beta(a, b) with N = 1 keeps the mean.
    CHECK_THAT(coverage_beta(0.3, 0.5, 1), WithinAbs(0.3, 1e-15));
}

TEST_CASE("a biased judge: more candidates can lower selection", "[best-of-n]") {
    // 1e-15 absolute here and below: closed forms that reduce to these values, in double.
    CHECK_THAT(biased_judge_selection(0.9, 1, 0.3), WithinAbs(0.9, 1e-15));
    CHECK(biased_judge_selection(0.9, 8, 0.3) < biased_judge_selection(0.9, 2, 0.3));
    CHECK_THAT(biased_judge_selection(0.3, 4, 0), WithinAbs(coverage(0.3, 4), 1e-15));
}

TEST_CASE("fixed budget: candidates the budget buys", "[best-of-n]") {
    auto plans = compare_at_budget(0.3, 16, 1, 1, Verifier{0.9, 0.1, true}, spread_wrong(0.3, 3));
    REQUIRE(plans.size() == 3);
    CHECK(plans[1].n == 8);
    CHECK(plans[2].n == 16);
    CHECK_THROWS_WITH(compare_at_budget(0.3, 0.5, 1, 0, Verifier{}, spread_wrong(0.3, 1)),
                      Catch::Contains("smaller than one sample"));
}

TEST_CASE("simulation agrees with the exact values and is reproducible", "[best-of-n]") {
    Verifier v{0.9, 0.2, true};
    auto d = spread_wrong(0.3, 3);
    auto a = simulate_best_of_n(0.3, 4, v, d, 0.3, 200000, 42);
    auto b = simulate_best_of_n(0.3, 4, v, d, 0.3, 200000, 42);
    CHECK(a.verifier.mean == b.verifier.mean);
    CHECK(a.coverage.agrees_with(coverage(0.3, 4)) == true);
    CHECK(a.verifier.agrees_with(verifier_selection(0.3, 4, v)) == true);
    CHECK(a.majority.agrees_with(majority_vote(d, 4)) == true);
    CHECK(a.biased_judge.agrees_with(biased_judge_selection(0.3, 4, 0.3)) == true);
    auto c = simulate_best_of_n(0.3, 4, v, d, 0.3, 200000, 43);
    CHECK(c.verifier.mean != a.verifier.mean);
}

// Issue #14, item 8: 1 − (1 − p)^N in doubles is 0 for p = 10^−17 (1 − p rounds to 1).
TEST_CASE("coverage keeps its digits for tiny p and is p itself at N = 1", "[best-of-n][edge]") {
    using Catch::Matchers::WithinRel;
    // Independent: N·p − C(N,2)·p² + … = 10^−16 − 4.5·10^−33; 1e-15 relative: a few ulps of log1p/expm1.
    CHECK_THAT(coverage(1e-17, 10), WithinRel(1e-16, 1e-15));
    // N·p − C(N,2)·p² with N = 10^6, p = 10^−12; 1e-12 relative: the series is cut before C(N,3)·p³ ≈ 1.7e-19.
    CHECK_THAT(coverage(1e-12, 1000000), WithinRel(1e-6 - 4.999995e-13, 1e-12));
    CHECK(coverage(0.3, 1) == 0.3);  // exactly: one candidate is correct with probability p
    CHECK_THAT(coverage(0.1, 2), WithinRel(0.19, 1e-15));  // 1e-15 relative: 1 − 0.9² in doubles
    CHECK(coverage(0, 5) == 0);
    CHECK(coverage(1, 5) == 1);
}

TEST_CASE("a verifier that accepts nothing leaves every N at the fallback", "[best-of-n][edge]") {
    Verifier none{0, 0, true};
    for (std::uint64_t n : {1, 2, 8, 64}) CHECK(verifier_selection(0.3, n, none) == 0.3);
    CHECK(verifier_selection_limit(0.3, none) == 0.3);  // not 0: the random pick is right with p
    Verifier abstain{0, 0, false};
    CHECK(verifier_selection_limit(0.3, abstain) == 0);
    CHECK(verifier_selection(0.3, 4, abstain) == 0);
    using Catch::Matchers::WithinRel;
    Verifier v{0.9, 0.2, true};
    // p·TPR/q with q = 0.3·0.9 + 0.7·0.2 = 0.41; 1e-15 relative: one division.
    CHECK_THAT(verifier_selection_limit(0.3, v), WithinRel(0.27 / 0.41, 1e-15));
}

TEST_CASE("coverage target 1 is reached at N = 1 when p = 1 and never below", "[best-of-n][edge]") {
    CHECK(min_n_for_coverage(1, 1) == std::optional<std::uint64_t>(1));
    CHECK_FALSE(min_n_for_coverage(0.5, 1));
    CHECK_FALSE(min_n_for_coverage(0, 0.5));
}

TEST_CASE("budget mode leaves voting out without an answer distribution and says when it caps N", "[best-of-n][edge]") {
    auto plans = compare_at_budget(0.3, 16, 1, 1, Verifier{0.9, 0.1, true}, {});
    REQUIRE(plans.size() == 2);
    CHECK(plans[0].strategy == "single sample");
    CHECK(plans[1].strategy == "best-of-N + verifier");
    auto big = compare_at_budget(0.6, 500, 1, 0, Verifier{}, spread_wrong(0.6, 2));
    REQUIRE(big.size() == 3);
    CHECK(big[2].n == 200);
    CHECK(big[2].capped);
    CHECK_FALSE(big[1].capped);
}

TEST_CASE("simulation without an answer distribution runs past N = 200", "[best-of-n][edge]") {
    SimulationResult s = simulate_best_of_n(0.3, 300, Verifier{}, {}, 0, 50, 1);
    CHECK(s.coverage.trials == 50);
    CHECK(s.majority.trials == 0);  // not simulated: nobody asked for voting
}

namespace {
// The simulation as it was first written: every candidate's correctness and the accepted ones
// stored for the trial. The library replays the draws instead (memory independent of N); both
// must make the same draws in the same order, so a seed gives the same counts.
SimulationResult stored_simulation(double p, std::uint64_t n, const Verifier& v, const std::vector<double>& dist, double bias,
                                   std::uint64_t trials, std::uint64_t seed) {
    Rng rng(seed);
    std::uint64_t cov = 0, ver = 0, maj = 0, judge = 0;
    std::vector<int> correct(n);
    std::vector<std::uint64_t> votes(dist.size());
    std::vector<std::size_t> accepted, tied;
    for (std::uint64_t t = 0; t < trials; ++t) {
        std::uint64_t k = 0;
        for (std::uint64_t i = 0; i < n; ++i) k += static_cast<std::uint64_t>(correct[i] = rng.bernoulli(p));
        cov += k > 0;
        accepted.clear();
        for (std::uint64_t i = 0; i < n; ++i)
            if (rng.bernoulli(correct[i] ? v.tpr : v.fpr)) accepted.push_back(i);
        if (!accepted.empty()) ver += static_cast<std::uint64_t>(correct[accepted[rng.below(accepted.size())]]);
        else if (v.fallback_random) ver += static_cast<std::uint64_t>(correct[rng.below(n)]);
        if (k > 0 && !(k < n && rng.bernoulli(bias))) ++judge;
        if (dist.empty()) continue;
        std::fill(votes.begin(), votes.end(), 0);
        for (std::uint64_t i = 0; i < n; ++i) ++votes[rng.categorical(dist)];
        const std::uint64_t best = *std::max_element(votes.begin(), votes.end());
        tied.clear();
        for (std::size_t a = 0; a < votes.size(); ++a)
            if (votes[a] == best) tied.push_back(a);
        maj += tied[rng.below(tied.size())] == 0;
    }
    auto mean = [trials](std::uint64_t hits) { return Estimate{static_cast<double>(hits) / static_cast<double>(trials), {}, trials}; };
    return {mean(cov), mean(ver), dist.empty() ? Estimate{} : mean(maj), mean(judge)};
}
}  // namespace

TEST_CASE("Monte Carlo best-of-N: the replayed draws give exactly the counts of stored candidates", "[best-of-n][simulation]") {
    const std::vector<Verifier> verifiers = {{0.9, 0.2, true}, {0.9, 0.2, false}, {0, 0, true}, {0, 0, false}, {1, 1, true}};
    const std::vector<double> dist = {0.3, 0.4, 0.3};
    for (std::uint64_t seed : {1u, 7u, 42u})
        for (std::uint64_t n : {1u, 2u, 5u, 17u})
            for (const Verifier& v : verifiers)
                for (const bool vote : {false, true}) {
                    INFO("seed " << seed << ", N " << n << ", tpr " << v.tpr << ", fpr " << v.fpr << ", fallback "
                                 << v.fallback_random << ", vote " << vote);
                    const auto& d = vote ? dist : std::vector<double>{};
                    const SimulationResult fast = simulate_best_of_n(0.35, n, v, d, 0.25, 300, seed);
                    const SimulationResult ref = stored_simulation(0.35, n, v, d, 0.25, 300, seed);
                    CHECK(fast.coverage.mean == ref.coverage.mean);
                    CHECK(fast.verifier.mean == ref.verifier.mean);
                    CHECK(fast.majority.mean == ref.majority.mean);
                    CHECK(fast.biased_judge.mean == ref.biased_judge.mean);
                }
}

TEST_CASE("beta-binomial coverage: past 2^20 candidates the Gamma form equals the product", "[best-of-n]") {
    // The term-by-term product, here written out, against the lgamma form the library switches
    // to past 2^20 (it once looped for minutes at N = 10^12).
    const double p = 0.3, rho = 0.2, a = p * (1 - rho) / rho, b = (1 - p) * (1 - rho) / rho;
    const std::uint64_t n = (std::uint64_t{1} << 20) + 1;
    double all_fail = 1;
    for (std::uint64_t i = 0; i < n; ++i) all_fail *= (b + static_cast<double>(i)) / (a + b + static_cast<double>(i));
    CHECK_THAT(coverage_beta(p, rho, n), Catch::Matchers::WithinRel(1 - all_fail, 1e-9));
    const double far = coverage_beta(p, rho, 1000000000000ull);
    CHECK(far > coverage_beta(p, rho, n));
    CHECK(far < 1);
}

// The Beta spread's shape and the all-correct term, the figures --explain substitutes: p = 0.3 and
// ρ = 0.2 give a = 0.3·0.8/0.2 = 1.2 and b = 0.7·0.8/0.2 = 2.8 (mean a/(a+b) = 0.3); 0.3^4 = 0.0081.
TEST_CASE("beta_shape and all_correct: the substituted figures of the spread and the biased judge", "[best-of-n]") {
    const BetaShape s = beta_shape(0.3, 0.2);
    CHECK_THAT(s.a, Catch::Matchers::WithinRel(1.2, 1e-15));
    CHECK_THAT(s.b, Catch::Matchers::WithinRel(2.8, 1e-15));
    CHECK_THAT(s.a / (s.a + s.b), Catch::Matchers::WithinRel(0.3, 1e-15));
    CHECK_THAT(all_correct(0.3, 4), Catch::Matchers::WithinRel(0.0081, 1e-14));
    CHECK(all_correct(0.3, 0) == 1);
}

// Issue #29 (a new user's try-out): from N = 172 majority vote came out exactly 1 for every answer
// distribution, 172! being past a double. With two answers the vote is a binomial tail, computed here
// in logs: P(c > N/2) + P(c = N/2)/2.
TEST_CASE("majority vote past N = 171 is the binomial tail of two answers, not 1", "[best-of-n][edge]") {
    for (double p : {0.05, 0.45, 0.55})
        for (int n : {171, 172, 200}) {
            double tail = 0;
            for (int c = 0; c <= n; ++c) {
                const double lp = std::lgamma(n + 1.0) - std::lgamma(c + 1.0) - std::lgamma(n - c + 1.0) + c * std::log(p) +
                                  (n - c) * std::log1p(-p);
                if (2 * c > n) tail += std::exp(lp);
                else if (2 * c == n) tail += std::exp(lp) / 2;
            }
            INFO("p " << p << " N " << n);
            CHECK_THAT(majority_vote({p, 1 - p}, static_cast<std::uint64_t>(n)), Catch::Matchers::WithinRel(tail, 1e-9));
        }
}
