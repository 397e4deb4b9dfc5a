// Catch2's runner for the property tests, with RapidCheck's seed fixed so CI sees the same cases
// on every run. RC_PARAMS set by hand (another seed, or the "reproduce=..." string RapidCheck
// prints after a failure) takes precedence.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>

int main(int argc, char* argv[]) {
    setenv("RC_PARAMS", "seed=20261129", /*overwrite=*/0);
    return Catch::Session().run(argc, argv);
}
