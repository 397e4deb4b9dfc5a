#include "inferlab/base/rng.hpp"

#include <cmath>
#include <stdexcept>

namespace inferlab {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Rng::Rng(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Rng::next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::below(std::uint64_t n) {
    if (n == 0) throw std::logic_error("Rng::below(0)");
    // Reject the top sliver so every residue is equally likely.
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x = 0;
    do x = next();
    while (x >= limit);
    return x % n;
}

double Rng::normal() {
    if (has_spare_) {
        has_spare_ = false;
        return spare_;
    }
    double u1 = 0;
    do u1 = uniform();
    while (u1 <= 0);
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * M_PI * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
}

bool Rng::bernoulli(double p) { return uniform() < p; }

std::size_t Rng::categorical(const std::vector<double>& w) {
    double total = 0;
    for (double v : w) total += v;
    if (!(total > 0)) throw std::logic_error("Rng::categorical: weights sum to zero");
    double u = uniform() * total;
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (u < w[i]) return i;
        u -= w[i];
    }
    // Rounding can leave u just above the last weight: return the last non-zero entry.
    for (std::size_t i = w.size(); i-- > 0;)
        if (w[i] > 0) return i;
    return w.size() - 1;
}

}  // namespace inferlab
