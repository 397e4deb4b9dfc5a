#pragma once
// What seeded random weights will cost before any is drawn: a shipped 8B config is 32 GB of
// float32 and minutes of normal draws, so the model commands say so first, refuse what this
// machine cannot hold, and report progress while they fill.
#include <cstdint>

#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

struct RandomInitEstimate {
    std::uint64_t values = 0;        // floats in the weight buffer (weight_floats), one normal draw each
    std::uint64_t weight_bytes = 0;  // values × 4 B (float32): the weights alone, no KV cache or activations
    double seconds = 0;              // values / the measured draw rate
};
// `draws_per_second` from measure_normal_rate() (or a caller's own figure; must be > 0).
RandomInitEstimate estimate_random_init(const Dims& d, double draws_per_second);

// Times 2^18 draws of the project's own normal sampler on this machine: normals per second.
double measure_normal_rate();

}  // namespace inferlab::model
