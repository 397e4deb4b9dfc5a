#include "inferlab/model/run/init_estimate.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"

namespace inferlab::model {

RandomInitEstimate estimate_random_init(const Dims& d, double draws_per_second) {
    if (!(draws_per_second > 0)) throw std::logic_error("estimate_random_init: the draw rate must be positive");
    RandomInitEstimate e;
    e.values = weight_floats(d);
    e.weight_bytes = checked_mul(e.values, std::uint64_t{sizeof(float)}, N_("random weight bytes"));
    e.seconds = static_cast<double>(e.values) / draws_per_second;
    return e;
}

double measure_normal_rate() {
    constexpr int kDraws = 1 << 18;
    Rng rng(1);
    volatile double sink = 0;  // stored each draw so the loop cannot be optimised away
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kDraws; ++i) sink = sink + rng.normal();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // A clock too coarse to see 2^18 draws is treated as one microsecond: a rate, never infinity.
    return static_cast<double>(kDraws) / std::max(s, 1e-6);
}

}  // namespace inferlab::model
