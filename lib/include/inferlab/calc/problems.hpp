#pragma once
// Correlated errors as a distribution of p across problems (first document §3.2: "errors of the same
// pattern break the independence assumption"): every strategy of best-of-n averaged over problems,
// each problem's candidates independent at that problem's p. One model per figure: coverage,
// selection, voting and the budget under the same distribution, so that no table sets a figure of
// one model beside another's.
#include <cstdint>
#include <functional>
#include <vector>

namespace inferlab {

// Gauss–Jacobi quadrature for the mean over p ~ Beta(a, b): nodes p_i in (0, 1) and weights w_i
// summing to 1 with Σ w_i·f(p_i) = E[f(p)] exactly for every polynomial f of degree ≤ 2n − 1
// (Golub–Welsch: the eigenvalues of the Jacobi polynomials' recurrence matrix). a, b > 0, n ≥ 1.
struct Quadrature {
    std::vector<double> p, w;
};
Quadrature beta_quadrature(double a, double b, std::size_t n);

// The distribution of p across problems, with mean p.
struct ProblemMix {
    enum class Kind { hard_fraction, beta };
    Kind kind = Kind::hard_fraction;
    double p = 0;       // the mean over problems
    double h = 0;       // hard_fraction: the share of problems with p = 0 (the rest at p/(1 − h))
    double rho = 0;     // beta: intra-problem correlation ρ in (0, 1); p ~ Beta(p(1−ρ)/ρ, (1−p)(1−ρ)/ρ)
};

// p/(1 − h): the p of a problem that is not hard, under the hard fraction (the mean p otherwise).
double solvable_p(const ProblemMix& mix);

// The most Beta nodes over_problems uses (a polynomial of degree ≤ 2·(this − 1) is averaged exactly):
// the eigenvectors of an n × n matrix cost n² memory and n³ time, milliseconds at this size.
inline constexpr std::uint64_t kMaxBetaNodes = 1025;

// E over problems of at(p_problem), where `at` is a strategy's probability of a correct answer at
// one problem's p, a polynomial in p of degree at most `degree` (N for N candidates): exact for
// the hard fraction, (1 − h)·at(p/(1 − h)) + h·at(0); for the beta spread by beta_quadrature with
// degree/2 + 1 nodes (exact for that degree; std::invalid_argument past kMaxBetaNodes: the caller
// bounds the degree). ρ = 0 (no spread) is at(p).
double over_problems(const ProblemMix& mix, std::uint64_t degree, const std::function<double(double)>& at);

// The number of at() calls over_problems makes for this degree: the caller bounds its work.
std::uint64_t problems_evaluations(const ProblemMix& mix, std::uint64_t degree);

// The answer distribution of one problem whose correct answer has probability `p_problem`, from the
// mean distribution `dist` (correct first): the wrong answers keep their shares of the rest.
std::vector<double> answers_at(const std::vector<double>& dist, double p_problem);

}  // namespace inferlab
