// The cuda-emu tests' runner: the kernels run under the host emulation, so there is always a "device".
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <iostream>

#include "inferlab/cuda/ops.hpp"

int main(int argc, char** argv) {
    std::cout << "CUDA device: " << inferlab::cuda::device_name() << "\n";
    return Catch::Session().run(argc, argv);
}
