// Output contracts of `inferlab kv-mem` (issue #15): every table as CSV that a real parser reads,
// JSON with only the README's keys and one schema per mode (null where a figure does not apply),
// and text and --explain within 80 columns.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {

using Args = std::vector<std::string>;

const Args kFlags = {"kv-mem", "--layers", "32", "--kv-heads", "8", "--q-heads", "32", "--head-dim", "128", "--kv-dtype", "bf16"};

// One run of each mode: flags with every option, a list of lengths, a sliding-window model,
// an MLA model, the budget question alone, and the list of models.
std::vector<Args> modes() {
    return {with(kFlags, {"--seq-len", "8192", "--batch", "4", "--block-size", "16", "--tp", "4", "--shared-prefix", "100"}),
            with(kFlags, {"--seq-len", "8192,4096,300", "--block-size", "16"}),
            {"kv-mem", "--model", "gemma-2-9b", "--seq-len", "8192,100", "--block-size", "16", "--tp", "2"},
            {"kv-mem", "--model", "deepseek-v3", "--seq-len", "8192", "--tp", "8"},
            {"kv-mem", "--model", "llama-3-8b", "--budget", "80GiB", "--block-size", "16", "--tp", "2"},
            {"kv-mem", "--list-models"}};
}

}  // namespace

TEST_CASE("kv-mem --csv of every table passes the CSV contract", "[cli][contract]") {
    const std::vector<std::pair<Args, std::vector<std::string>>> cases = {
        {modes()[0], {"requests", "layers", "head-sharing", "paged"}},
        {modes()[1], {"requests", "layers", "head-sharing", "paged"}},
        {modes()[2], {"requests", "layers", "paged"}},
        {modes()[4], {"layers"}},
        {modes()[5], {"models"}}};
    for (const auto& [args, tables] : cases) {
        const auto plain = run_inferlab(with(args, {"--csv"}));
        INFO(plain.err);
        REQUIRE(plain.status == 0);
        check_csv(plain.out, "kv-mem --csv");
        for (const auto& name : tables) {
            INFO(name);
            const auto r = run_inferlab(with(args, {"--csv", "--table", name}));
            REQUIRE(r.status == 0);
            CHECK(r.err.empty());
            check_csv(r.out, "kv-mem --csv --table " + name);
        }
    }
    // The first document's request (§2.1.1), as numbers: 8192 tokens, 1 request, 2^30 bytes.
    const auto rows = parse_csv(run_inferlab(with(kFlags, {"--seq-len", "8192", "--csv"})).out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0] == std::vector<std::string>{"seq_len_tokens", "requests", "bytes_per_request"});
    CHECK(rows[1] == std::vector<std::string>{"8192", "1", "1073741824"});
}

TEST_CASE("kv-mem --json has only documented keys, one schema per mode", "[cli][contract]") {
    const auto doc = documented_keys("kv-mem");
    for (const auto& args : modes()) {
        if (args.back() == "--list-models") continue;  // its own row below
        const auto r = run_inferlab(with(args, {"--json"}));
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(undocumented_keys(parse_json(r), doc).empty());
    }
    // Same mode, options given or not: the same keys, null where a figure does not apply.
    const auto bare = parse_json(run_inferlab(with(kFlags, {"--seq-len", "8192", "--json"})));
    const auto full = parse_json(run_inferlab(with(modes()[0], {"--json"})));
    CHECK(bare["paged"].is_null());
    CHECK(bare["budget"].is_null());
    CHECK(bare.contains("tensor_parallel"));
    for (const char* key : {"model", "bytes_per_token", "total_bytes", "head_sharing", "paged", "tensor_parallel",
                            "budget", "mla", "shared_prefix"}) {
        INFO(key);
        CHECK(bare.contains(key));
        CHECK(full.contains(key));
    }
    // With sliding layers bytes per token depend on the length: null, not absent.
    const auto gemma = parse_json(run_inferlab(with(modes()[2], {"--json"})));
    CHECK(gemma["bytes_per_token"].is_null());
    // The budget question with and without blocks: the block figures are null, not absent.
    const Args budget = {"kv-mem", "--model", "llama-3-8b", "--budget", "80GiB", "--json"};
    const auto no_blocks = parse_json(run_inferlab(budget));
    CHECK(no_blocks["budget"]["max_blocks"].is_null());
    CHECK(key_paths(no_blocks) == key_paths(parse_json(run_inferlab(with(budget, {"--block-size", "16"})))));
    // And requests of one length against several: the same keys.
    CHECK(key_paths(bare) == key_paths(parse_json(run_inferlab(with(kFlags, {"--seq-len", "8192,300", "--json"})))));
}

TEST_CASE("kv-mem text and --explain fit 80 columns", "[cli][contract]") {
    for (const auto& args : modes()) {
        for (const Args& form : {Args{}, Args{"--explain"}}) {
            const auto r = run_inferlab(with(args, form), "", {"COLUMNS=80"});
            INFO(r.err);
            REQUIRE(r.status == 0);
            INFO(r.out);
            CHECK(widest_line(r.out) <= 80);
        }
    }
}

TEST_CASE("kv-mem flags that have no effect are errors", "[cli][contract]") {
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--weights-bytes", "14GB"},
                 "--weights-bytes requires --budget");
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--weight-dtype", "int8"},
                 "--weight-dtype requires --budget");
    expect_error(with(kFlags, {"--batch", "4"}), "--batch requires --seq-len");
    expect_error({"kv-mem", "--layer-spec", data_path("layer-spec.json"), "--q-heads", "8", "--seq-len", "10"},
                 "--q-heads has no effect with --layer-spec");
    expect_error({"kv-mem", "--layers", "2", "--kv-heads", "1", "--head-dim", "4", "--dtype", "bf16", "--seq-len", "1"},
                 "--dtype");
}
