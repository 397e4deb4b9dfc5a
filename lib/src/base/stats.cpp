#include "inferlab/base/stats.hpp"

#include <algorithm>
#include <cmath>

namespace inferlab {

std::vector<double> binomial_pmf(std::uint64_t n, double p) {
    std::vector<double> out(n + 1, 0);
    if (p <= 0) return out[0] = 1, out;
    if (p >= 1) return out[n] = 1, out;
    const double lp = std::log(p), lq = std::log1p(-p), N = static_cast<double>(n);
    for (std::uint64_t i = 0; i <= n; ++i) {
        const double k = static_cast<double>(i);
        out[i] = std::exp(std::lgamma(N + 1) - std::lgamma(k + 1) - std::lgamma(N - k + 1) + k * lp + (N - k) * lq);
    }
    return out;
}

bool equal_within_rounding(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)); }

double proportion_half_width_99(double p, double n) {
    if (!(n > 0)) return 0;
    return kZ99 * std::sqrt(std::max(p * (1 - p), 0.0) / n);
}

Interval wilson_interval_99(double hits, double trials) {
    const double n = trials, z2 = kZ99 * kZ99, ph = hits / n;
    const double centre = (ph + z2 / (2 * n)) / (1 + z2 / n);
    const double half = kZ99 * std::sqrt(std::max(ph * (1 - ph), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    // At 0 hits the low end is exactly 0, at every hit the high end exactly 1; centre ∓ half misses
    // them by a rounding (1.1e-16 at 0 of 3), which would refute an exact 0 or 1.
    return {hits <= 0 ? 0.0 : std::max(0.0, centre - half), hits >= trials ? 1.0 : std::min(1.0, centre + half)};
}

std::optional<bool> wilson_agrees(double p, double hits, double trials) {
    if (!wilson_can_tell(p, trials)) return std::nullopt;
    return wilson_interval_99(hits, trials).contains(p);
}

bool wilson_can_tell(double p, double trials) {
    const double z2 = kZ99 * kZ99;
    return p > z2 / (trials + z2) || p < trials / (trials + z2);
}

double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
    double kl = 0;
    for (std::size_t x = 0; x < p.size() && x < q.size(); ++x)
        if (p[x] > 0) kl += p[x] * std::log(p[x] / std::max(q[x], 1e-300));
    return kl;
}

}  // namespace inferlab
