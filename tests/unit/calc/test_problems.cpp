// Correlated errors as a distribution of p across problems (calc/problems.hpp): the Beta quadrature
// against the Beta's moments in closed form, and every strategy's mean against what it must be.
#include <catch2/catch.hpp>
#include <cmath>

#include "inferlab/calc/best_of_n.hpp"
#include "inferlab/calc/problems.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
// E[p^k] for p ~ Beta(a, b): Π_{i<k} (a + i)/(a + b + i), written here.
double beta_moment(double a, double b, int k) {
    double m = 1;
    for (int i = 0; i < k; ++i) m *= (a + i) / (a + b + i);
    return m;
}
}  // namespace

TEST_CASE("the Beta quadrature on n nodes is exact for every moment up to 2n - 1", "[best-of-n][problems]") {
    // a + b = 1 (ρ = 0.5) is the recurrence's 0/0 case; a < 1 a density that is infinite at 0;
    // a, b in the thousands a narrow spread (ρ ≈ 10^−4).
    for (auto [a, b] : {std::pair{0.3, 0.7}, {0.05, 2.0}, {2.5, 4.0}, {3000.0, 7000.0}, {1.0, 1.0}})
        for (std::size_t n : {1u, 2u, 5u, 33u}) {
            const Quadrature q = beta_quadrature(a, b, n);
            REQUIRE(q.p.size() == n);
            double mass = 0;
            for (double w : q.w) mass += w;
            CHECK_THAT(mass, WithinAbs(1, 1e-12));
            for (int k = 0; k <= static_cast<int>(2 * n - 1); ++k) {
                double sum = 0;
                for (std::size_t i = 0; i < n; ++i) sum += q.w[i] * std::pow(q.p[i], k);
                INFO("a " << a << " b " << b << " n " << n << " k " << k);
                CHECK_THAT(sum, WithinRel(beta_moment(a, b, k), 1e-9));
            }
        }
}

TEST_CASE("coverage averaged over problems is each model's closed form", "[best-of-n][problems]") {
    for (std::uint64_t n : {1u, 4u, 17u, 128u}) {
        const ProblemMix beta{ProblemMix::Kind::beta, 0.3, 0, 0.2};
        CHECK_THAT(over_problems(beta, n, [n](double p) { return coverage(p, n); }),
                   WithinAbs(coverage_beta(0.3, 0.2, n), 1e-10));
        const ProblemMix hard{ProblemMix::Kind::hard_fraction, 0.3, 0.4, 0};
        CHECK_THAT(over_problems(hard, n, [n](double p) { return coverage(p, n); }),
                   WithinAbs(coverage_hard_fraction(0.3, 0.4, n), 1e-15));
    }
}

TEST_CASE("a single sample is right with the mean p under every model", "[best-of-n][problems]") {
    for (double rho : {0.01, 0.5, 0.99}) {
        const ProblemMix beta{ProblemMix::Kind::beta, 0.37, 0, rho};
        CHECK_THAT(over_problems(beta, 1, [](double p) { return p; }), WithinAbs(0.37, 1e-12));
    }
    const ProblemMix hard{ProblemMix::Kind::hard_fraction, 0.37, 0.5, 0};
    CHECK_THAT(over_problems(hard, 1, [](double p) { return p; }), WithinAbs(0.37, 1e-15));
}

TEST_CASE("a problem's answers keep the wrong answers' shares", "[best-of-n][problems]") {
    const std::vector<double> d = answers_at({0.4, 0.45, 0.15}, 0.8);
    CHECK_THAT(d[0], WithinAbs(0.8, 1e-15));
    CHECK_THAT(d[1], WithinAbs(0.2 * 0.75, 1e-15));
    CHECK_THAT(d[2], WithinAbs(0.2 * 0.25, 1e-15));
    const std::vector<double> z = answers_at({0.4, 0.45, 0.15}, 0);
    CHECK_THAT(z[1] + z[2], WithinAbs(1, 1e-15));
}
