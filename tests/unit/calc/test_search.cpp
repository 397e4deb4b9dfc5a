// Step-wise search with a process scorer (calc/search.hpp): the exact chain against the closed forms
// it must reduce to (issue #32's "exact limits"), against an independent closed form of its kernel,
// and against its own Monte Carlo on a grid of (q, k, w, T, noise).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "inferlab/base/stats.hpp"
#include "inferlab/calc/best_of_n.hpp"
#include "inferlab/calc/search.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
SearchSpec rates(double q, std::uint64_t k, std::uint64_t w, double tpr, double fpr) {
    SearchSpec s;
    s.q = q, s.branch = k, s.beam = w;
    s.scorer.kind = ProcessScorer::Kind::rates;
    s.scorer.tpr = tpr, s.scorer.fpr = fpr;
    return s;
}
SearchSpec gaussian(double q, std::uint64_t k, std::uint64_t w, double gap, double sigma) {
    SearchSpec s = rates(q, k, w, 1, 0);
    s.scorer.kind = ProcessScorer::Kind::gaussian;
    s.scorer.gap = gap, s.scorer.sigma = sigma;
    return s;
}
double phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
// Whether p lies in the Wilson interval of hits/n at z (written here, not the library's).
bool in_wilson(double p, double hits, double n, double z) {
    const double ph = hits / n, z2 = z * z;
    const double centre = (ph + z2 / (2 * n)) / (1 + z2 / n);
    const double half = z * std::sqrt(ph * (1 - ph) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return p >= centre - half && p <= centre + half;
}
}  // namespace

TEST_CASE("a noiseless scorer with beam 1 succeeds with (1 - (1 - q)^k)^T", "[search]") {
    for (double q : {0.3, 0.8, 0.95})
        for (std::uint64_t k : {1u, 2u, 5u}) {
            for (const SearchSpec& s : {rates(q, k, 1, 1, 0), gaussian(q, k, 1, 2, 0), gaussian(q, k, 1, 50, 1)}) {
                const std::vector<double> got = search_success(s, 12);
                for (std::uint64_t t = 1; t <= 12; ++t) {
                    INFO("q " << q << " k " << k << " T " << t);
                    CHECK_THAT(got[t - 1], WithinRel(std::pow(1 - std::pow(1 - q, double(k)), double(t)), 1e-12));
                }
            }
        }
}

TEST_CASE("a scorer that carries no information succeeds with q^T at every beam width", "[search]") {
    for (double q : {0.5, 0.9})
        for (std::uint64_t w : {1u, 3u, 8u})
            for (const SearchSpec& s : {rates(q, 4, w, 0.6, 0.6), rates(q, 4, w, 0, 0), gaussian(q, 4, w, 0, 1.5),
                                        gaussian(q, 4, w, 0, 0)}) {
                const std::vector<double> got = search_success(s, 9);
                for (std::uint64_t t = 1; t <= 9; ++t) {
                    INFO("q " << q << " w " << w << " T " << t);
                    CHECK_THAT(got[t - 1], WithinRel(std::pow(q, double(t)), 1e-10));
                }
            }
}

TEST_CASE("with one step the search is best-of-k with the scorer as the verifier", "[search]") {
    for (double q : {0.2, 0.7})
        for (std::uint64_t k : {1u, 3u, 8u})
            for (std::uint64_t w : {1u, 2u, 16u}) {
                const double tpr = 0.85, fpr = 0.25;
                INFO("q " << q << " k " << k << " w " << w);
                CHECK_THAT(search_success(rates(q, k, w, tpr, fpr), 1)[0],
                           WithinAbs(verifier_selection(q, k, Verifier{tpr, fpr, true}), 1e-13));
            }
}

TEST_CASE("the gaussian kernel keeps the correct one of two with probability Phi(d over sqrt 2)", "[search]") {
    // P(d + Z1 > Z2) = Φ(d/√2): an identity independent of the kernel's quadrature.
    for (double gap : {0.1, 0.5, 1.0, 3.0}) {
        ProcessScorer sc;
        sc.kind = ProcessScorer::Kind::gaussian;
        sc.gap = gap, sc.sigma = 0.7;
        const std::vector<double> d = kept_correct_distribution(sc, 2, 1, 1);
        CHECK_THAT(d[1], WithinAbs(phi(gap / 0.7 / std::sqrt(2.0)), 1e-9));
        CHECK_THAT(d[0] + d[1], WithinAbs(1, 1e-15));
    }
}

TEST_CASE("the kernels keep exactly as many correct candidates as can be kept", "[search]") {
    ProcessScorer sc;  // rates, noiseless
    CHECK(kept_correct_distribution(sc, 8, 3, 5) == std::vector<double>{0, 0, 0, 1, 0, 0});
    CHECK(kept_correct_distribution(sc, 8, 6, 5) == std::vector<double>{0, 0, 0, 0, 0, 1});
    CHECK(kept_correct_distribution(sc, 4, 2, 4) == std::vector<double>{0, 0, 1, 0, 0});  // all kept
    sc.kind = ProcessScorer::Kind::gaussian;
    sc.gap = 1, sc.sigma = 1;
    for (std::uint64_t x = 0; x <= 10; ++x) {
        const std::vector<double> d = kept_correct_distribution(sc, 10, x, 4);
        double sum = 0;
        for (std::size_t j = 0; j < d.size(); ++j) {
            sum += d[j];
            if (j > x || 4 - j > 10 - x) CHECK(d[j] == 0);
        }
        CHECK_THAT(sum, WithinAbs(1, 1e-12));
    }
}

TEST_CASE("a search's generated steps are the sum of its beams times k", "[search]") {
    // Beam 1, 4, 4: 1·4 + 4·4 + 4·4 = 36 steps; and beam 1, 3, 9, 10 under w = 10, k = 3.
    const SearchCost c = search_cost(rates(0.8, 4, 4, 0.9, 0.3), 3);
    CHECK(c.generated_steps == 36);
    CHECK(c.scorer_calls == 36);
    CHECK(c.final_beam == 4);
    CHECK(c.verifier_calls == 0);
    SearchSpec s = rates(0.8, 3, 10, 0.9, 0.3);
    s.outcome = Verifier{0.9, 0.1, true};
    const SearchCost d = search_cost(s, 4);
    CHECK(d.generated_steps == 3 + 9 + 27 + 30);
    CHECK(d.verifier_calls == 10);
}

TEST_CASE("best-of-N at the same generated steps buys floor(steps over T) trajectories of q^T", "[search]") {
    const BestOfNAtSteps b = best_of_n_at_steps(0.8, 3, 36, Verifier{0.9, 0.1, true});
    CHECK(b.n == 12);
    CHECK_THAT(b.p_trajectory, WithinRel(0.512, 1e-15));
    // q' = 0.512·0.9 + 0.488·0.1 = 0.5096; (1 − 0.4904^12)·0.4608/0.5096 + 0.4904^12·0.0512/0.4904, in
    // exact fractions: 0.9040838775143075.
    CHECK_THAT(b.accept_rate, WithinRel(0.5096, 1e-14));
    CHECK_THAT(b.success, WithinRel(0.9040838775143075, 1e-13));
}

TEST_CASE("the Monte Carlo agrees with the exact chain on a grid of q, k, w, T and noise", "[search]") {
    // 16 searches × 6 steps = 96 comparisons: each at 99% would fail about once by chance, so the
    // grid asks for agreement at z = 4 (Bonferroni: 1% / 96 is z ≈ 3.9), with each seed fixed.
    const std::uint64_t trials = 20000;
    std::vector<SearchSpec> grid;
    for (double q : {0.6, 0.9})
        for (auto [k, w] : {std::pair<std::uint64_t, std::uint64_t>{2, 1}, {3, 2}, {2, 4}, {4, 8}}) {
            grid.push_back(rates(q, k, w, 0.8, 0.3));
            grid.push_back(gaussian(q, k, w, 1.0, 0.8));
            SearchSpec checked = rates(q, k, w, 0.7, 0.4);
            checked.outcome = Verifier{0.9, 0.2, true};
            grid.push_back(checked);
            checked.outcome->fallback_random = false;
            grid.push_back(checked);
        }
    std::uint64_t seed = 11, inside = 0;
    for (const SearchSpec& s : grid) {
        const std::vector<double> exact = search_success(s, 6);
        const std::vector<std::uint64_t> hits = simulate_search(s, 6, trials, seed++);
        for (std::uint64_t t = 1; t <= 6; ++t) {
            INFO("q " << s.q << " k " << s.branch << " w " << s.beam << " T " << t << " kind "
                      << int(s.scorer.kind) << " outcome " << bool(s.outcome) << ": exact " << exact[t - 1]
                      << ", hits " << hits[t - 1]);
            CHECK(in_wilson(exact[t - 1], double(hits[t - 1]), double(trials), 4.0));
            inside += in_wilson(exact[t - 1], double(hits[t - 1]), double(trials), 2.576);
        }
    }
    // At 99% about 95 of the 96 lie inside; far fewer would be a bias the z = 4 check hides.
    CHECK(inside >= 92);
}

TEST_CASE("the same seed gives the same search draws", "[search]") {
    const SearchSpec s = gaussian(0.8, 3, 3, 1, 1);
    CHECK(simulate_search(s, 5, 500, 9) == simulate_search(s, 5, 500, 9));
    CHECK(simulate_search(s, 5, 500, 9) != simulate_search(s, 5, 500, 10));
}
