#include "inferlab/base/stats.hpp"

#include <algorithm>
#include <cmath>

namespace inferlab {

double proportion_half_width_99(double p, double n) {
    if (!(n > 0)) return 0;
    return 2.576 * std::sqrt(std::max(p * (1 - p), 0.0) / n);
}

double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
    double kl = 0;
    for (std::size_t x = 0; x < p.size() && x < q.size(); ++x)
        if (p[x] > 0) kl += p[x] * std::log(p[x] / std::max(q[x], 1e-300));
    return kl;
}

}  // namespace inferlab
