#pragma once
// Small statistics shared by the simulations and the measured-against-predicted reports.
#include <cstdint>
#include <optional>
#include <vector>

namespace inferlab {

// The normal's two-sided 99% quantile: the z of every 99% interval below (and of the messages that
// write the formulas out).
inline constexpr double kZ99 = 2.576;

// Half-width of the 99% normal-approximation interval of a proportion p estimated from n
// Bernoulli trials: 2.576·sqrt(p(1 − p)/n).
double proportion_half_width_99(double p, double n);

// A closed interval of probabilities.
struct Interval {
    double lo = 0, hi = 0;
    bool contains(double x) const { return x >= lo && x <= hi; }
};

// The 99% Wilson score interval of a proportion seen `hits` times in `trials` Bernoulli trials
// (z = 2.576): (p̂ + z²/2n ± z·sqrt(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n). It lies inside [0, 1]
// at every count and is not empty at p̂ = 0 or 1, where the normal approximation p̂ ± z·sqrt(p̂(1 −
// p̂)/n) is ±1.3 at one trial, or a point. `trials` > 0.
Interval wilson_interval_99(double hits, double trials);

// Whether `trials` trials can tell the proportion p apart at 99%: some count of hits would put p
// outside its Wilson interval. The intervals move up with the count, so the two extremes decide:
// p is outside (0 of n)'s interval when p > z²/(n + z²), outside (n of n)'s when p < n/(n + z²).
// One trial tells nothing of 0.131 < p < 0.869: every outcome's interval holds it.
bool wilson_can_tell(double p, double trials);

// Whether p agrees with `hits` of `trials` at 99%: inside their Wilson interval; none where the
// trials cannot tell (wilson_can_tell), so that agreement would say nothing.
std::optional<bool> wilson_agrees(double p, double hits, double trials);

// Bin(n, p) as n + 1 probabilities, each through lgamma (no factorial overflows: 172! is past a
// double); p = 0 and p = 1 exactly.
std::vector<double> binomial_pmf(std::uint64_t n, double p);

// Two probabilities equal within rounding (relative 10^−12): one value reached by two routes that
// differ in the last bits is a tie, not a win.
bool equal_within_rounding(double a, double b);

// KL(p ‖ q) = Σ p(x)·ln(p(x)/q(x)) over p(x) > 0, in nats; q(x) = 0 where p(x) > 0 counts
// with q clamped to 1e-300 (a large, finite value, never infinity).
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q);

}  // namespace inferlab
