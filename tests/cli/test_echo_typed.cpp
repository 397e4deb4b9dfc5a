// Errors echo what the user typed and name the level they happened at: `model bogus` lists the
// model subcommands; --budget, --perturb and --draft-layers come back as given, not re-formatted
// by the library (issue #17's small ones, #15's flag names).
#include <catch2/catch.hpp>

#include "../support/cli.hpp"

using namespace inferlab::test;

TEST_CASE("model bogus names the unknown model subcommand and lists them", "[cli][model][errors]") {
    expect_error({"model", "bogus"},
                 "unknown model subcommand 'bogus' (the model subcommands: speculate, kv-quant, roofline, pitfall, paged, init, "
                 "logits, check-cache, generate, bench)");
    expect_error({"bogus"}, "unknown subcommand 'bogus' (the subcommands: kv-mem,");
    // A known subcommand still parses past the check: its own flags, its own errors.
    expect_error({"model", "check-cache", "--chunk", "0"}, "--chunk '0'");
}

TEST_CASE("errors echo values as typed: kv-mem --budget 1B, speculate --perturb -1", "[cli][errors]") {
    expect_error({"kv-mem", "--model", "llama-2-7b", "--seq-len", "4k", "--budget", "1B"},
                 "--budget '1B': leaves no room for the KV cache: the weights alone take 13,476,831,232 B");
    expect_error({"model", "speculate", "--model", "demo-gqa", "--perturb", "-1"}, "--perturb '-1': must not be negative");
    expect_error({"model", "speculate", "--model", "demo-gqa", "--perturb", "-1.50"}, "--perturb '-1.50': must not be negative");
    expect_error({"model", "speculate", "--model", "demo-gqa", "--draft-layers", "9"},
                 "--draft-layers '9': must be between 1 and the target's 6");
    expect_error({"model", "logits", "--checkpoint", "/nonexistent-inferlab.bin", "--tokens", "1"}, "/nonexistent-inferlab.bin");
    expect_error({"model", "logits", "--config", data_path("malformed.json"), "--tokens", "1"}, "--config '");
    expect_error({"model", "logits", "--model", "gpt-5", "--tokens", "1"}, "--model 'gpt-5': is not a shipped model");
}
