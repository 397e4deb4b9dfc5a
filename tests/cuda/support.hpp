#pragma once
// Helpers shared by the CUDA test sources (test_kernels.cpp under the emulation and on a GPU,
// test_cuda_ops.cpp on a GPU): seeded inputs, copies to and from device buffers, and one error
// measure.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "inferlab/base/rng.hpp"
#include "inferlab/cuda/ops.hpp"

namespace inferlab::cuda::test {

// n standard-normal floats from the project's generator (never zeros: they hide unwritten outputs).
inline std::vector<float> random_vec(std::size_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = static_cast<float>(rng.normal());
    return v;
}
template <class T>
DeviceBuffer to_device(const std::vector<T>& v) {
    DeviceBuffer b(std::max<std::size_t>(v.size(), 1) * sizeof(T));
    if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
    return b;
}
template <class T = float>
std::vector<T> to_host(const DeviceBuffer& b, std::size_t n) {
    std::vector<T> v(n);
    b.download(v.data(), n * sizeof(T));
    return v;
}
// Largest |got − ref| over the output's scale max(1, max |ref|); NaN or inf anywhere in got gives +inf.
template <class R>
double rel_err(const std::vector<float>& got, const std::vector<R>& ref) {
    double worst = 0, scale = 1;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(got[i])) return INFINITY;
        scale = std::max(scale, std::fabs(double(ref[i])));
        worst = std::max(worst, std::fabs(double(got[i]) - double(ref[i])));
    }
    return worst / scale;
}

}  // namespace inferlab::cuda::test
