#pragma once
// Small statistics shared by the simulations and the measured-against-predicted reports.
#include <vector>

namespace inferlab {

// Half-width of the 99% normal-approximation interval of a proportion p estimated from n
// Bernoulli trials: 2.576·sqrt(p(1 − p)/n).
double proportion_half_width_99(double p, double n);

// KL(p ‖ q) = Σ p(x)·ln(p(x)/q(x)) over p(x) > 0, in nats; q(x) = 0 where p(x) > 0 counts
// with q clamped to 1e-300 (a large, finite value, never infinity).
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q);

}  // namespace inferlab
