#pragma once
// A fixed generator with our own sampling code, so one seed gives the same draws on every
// machine and standard library (std::*_distribution differs between implementations).
// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
#include <cstdint>
#include <vector>

namespace inferlab {

class Rng {
public:
    explicit Rng(std::uint64_t seed);
    std::uint64_t next();                   // 64 random bits
    double uniform();                       // [0, 1), 53 bits
    std::uint64_t below(std::uint64_t n);   // uniform in [0, n), unbiased (rejection)
    double normal();                        // standard normal, Box–Muller (both values used in turn)
    bool bernoulli(double p);               // uniform() < p
    // Index drawn with probabilities proportional to `weights` (need not sum to 1).
    std::size_t categorical(const std::vector<double>& weights);

private:
    std::uint64_t s_[4];
    bool has_spare_ = false;
    double spare_ = 0;
};

}  // namespace inferlab
