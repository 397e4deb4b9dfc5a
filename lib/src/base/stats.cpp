#include "inferlab/base/stats.hpp"

#include <algorithm>
#include <cmath>

namespace inferlab {

double proportion_half_width_99(double p, double n) {
    if (!(n > 0)) return 0;
    return 2.576 * std::sqrt(std::max(p * (1 - p), 0.0) / n);
}

namespace {
constexpr double kZ99 = 2.576;
}

Interval wilson_interval_99(double hits, double trials) {
    const double n = trials, z2 = kZ99 * kZ99, ph = hits / n;
    const double centre = (ph + z2 / (2 * n)) / (1 + z2 / n);
    const double half = kZ99 * std::sqrt(std::max(ph * (1 - ph), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
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
