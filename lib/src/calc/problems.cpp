#include "inferlab/calc/problems.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace inferlab {

Quadrature beta_quadrature(double a, double b, std::size_t n) {
    if (!(a > 0 && b > 0) || n == 0) throw std::invalid_argument("beta_quadrature: need a, b > 0 and n ≥ 1");
    // The Beta density on [0, 1] is the Jacobi weight (1 − x)^α (1 + x)^β on [−1, 1] with x = 2p − 1,
    // α = b − 1 (the factor of 1 − p) and β = a − 1 (of p). Its orthonormal polynomials' recurrence:
    // diagonal d_k, off-diagonal e_k (Golub & Welsch 1969).
    // The first terms are written in a and b themselves: through α = b − 1 they would cancel when
    // a or b is small (ρ near 1, p near 0).
    const double al = b - 1, be = a - 1, s = al + be;
    Eigen::VectorXd d(static_cast<Eigen::Index>(n)), e(static_cast<Eigen::Index>(n > 1 ? n - 1 : 1));
    d(0) = (a - b) / (a + b);
    for (std::size_t k = 1; k < n; ++k) {
        const double kk = static_cast<double>(k), t = 2 * kk + s;
        d(static_cast<Eigen::Index>(k)) = (a - b) * s / (t * (t + 2));  // (β² − α²)/(t(t + 2)), factored
        // k = 1 with its factor (s + 1) cancelled: at a + b = 1 the general form is 0/0.
        const double e2 = k == 1 ? 4 * a * b / ((a + b) * (a + b) * (a + b + 1))
                                 : 4 * kk * (kk + al) * (kk + be) * (kk + s) / (t * t * (t + 1) * (t - 1));
        e(static_cast<Eigen::Index>(k - 1)) = std::sqrt(e2);
    }
    Quadrature q;
    if (n == 1) {
        q.p = {(1 + d(0)) / 2};
        q.w = {1};
        return q;
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver;
    solver.computeFromTridiagonal(d, e.head(static_cast<Eigen::Index>(n - 1)), Eigen::ComputeEigenvectors);
    if (solver.info() != Eigen::Success) throw std::runtime_error("beta_quadrature: the eigenvalues did not converge");
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<Eigen::Index>(i);
        // The nodes lie in (0, 1); clamped against the last bit of rounding at the ends.
        q.p.push_back(std::clamp((1 + solver.eigenvalues()(k)) / 2, 0.0, 1.0));
        const double v0 = solver.eigenvectors()(0, k);
        q.w.push_back(v0 * v0);  // the weight's total mass is 1: a density
    }
    return q;
}

std::uint64_t problems_evaluations(const ProblemMix& mix, std::uint64_t degree) {
    if (mix.kind == ProblemMix::Kind::hard_fraction) return 2;
    return mix.rho <= 0 || mix.p <= 0 || mix.p >= 1 ? 1 : degree / 2 + 1;
}

double solvable_p(const ProblemMix& mix) {
    return mix.kind == ProblemMix::Kind::hard_fraction && mix.h < 1 ? mix.p / (1 - mix.h) : mix.p;
}

double over_problems(const ProblemMix& mix, std::uint64_t degree, const std::function<double(double)>& at) {
    if (mix.kind == ProblemMix::Kind::hard_fraction) {
        if (mix.h >= 1) return at(0);  // every problem hard (the callers' p ≤ 1 − h leaves only p = 0 here)
        return (1 - mix.h) * at(solvable_p(mix)) + mix.h * at(0);
    }
    // No spread, or a mean of 0 or 1 (every problem the same): the independent value; and a function of
    // degree ≤ 1 (one candidate) averages to its value at the mean, exactly, with no nodes to round.
    if (mix.rho <= 0 || mix.p <= 0 || mix.p >= 1 || degree <= 1) return at(mix.p);
    const double scale = (1 - mix.rho) / mix.rho;
    if (degree / 2 + 1 > kMaxBetaNodes) throw std::invalid_argument("over_problems: degree past the Beta quadrature's limit");
    const Quadrature q = beta_quadrature(mix.p * scale, (1 - mix.p) * scale, static_cast<std::size_t>(degree / 2 + 1));
    double sum = 0;
    for (std::size_t i = 0; i < q.p.size(); ++i) sum += q.w[i] * at(q.p[i]);
    return std::clamp(sum, 0.0, 1.0);  // a mean of probabilities: only rounding takes it past [0, 1]
}

std::vector<double> answers_at(const std::vector<double>& dist, double p_problem) {
    std::vector<double> out(dist.size(), 0);
    out[0] = p_problem;
    const double wrong = 1 - dist[0];
    for (std::size_t j = 1; j < dist.size(); ++j)
        out[j] = wrong > 0 ? dist[j] * (1 - p_problem) / wrong : (1 - p_problem) / static_cast<double>(dist.size() - 1);
    return out;
}

}  // namespace inferlab
