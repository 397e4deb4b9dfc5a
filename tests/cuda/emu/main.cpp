// The cuda-emu tests' runner: the kernels run under the host emulation, so there is always a
// "device". Prints nothing of its own: catch_discover_tests reads test names from stdout.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
