#pragma once
// The CPU backend the model tests run on. The library never reads INFERLAB_KERNELS: like the app,
// this harness reads it once where it makes its backend, so that tests/CMakeLists.txt can run the
// model tests a second time through the reference kernels (INFERLAB_KERNELS=reference), and an
// AVX-512 machine runs the paths it would not take. Unset: the fast kernels, one thread.
#include "inferlab/model/ops/cpu_backend.hpp"

namespace inferlab::test {

inline model::Backend& test_cpu() {
    static model::CpuBackend b({.threads = 1, .kernels = model::default_kernels()});
    return b;
}

}  // namespace inferlab::test
