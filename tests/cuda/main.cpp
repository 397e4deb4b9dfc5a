// The cuda tests' runner: without a GPU it reports the tests as skipped (exit 77, which CTest's
// SKIP_RETURN_CODE turns into "Not Run"), never as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <iostream>

#include "inferlab/cuda/ops.hpp"

int main(int argc, char** argv) {
    std::string why;
    if (!inferlab::cuda::available(&why)) {
        std::cout << "SKIPPED: " << why << "\n";
        return 77;
    }
    std::cout << "CUDA device: " << inferlab::cuda::device_name() << "\n";
    return Catch::Session().run(argc, argv);
}
