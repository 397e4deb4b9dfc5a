// Output contracts of `inferlab quantize` (issue #15), mode by mode: every table as CSV, JSON keys
// the README documents with one schema per mode, text within 80 columns.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {
const std::vector<std::string> kValue = {"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7"};
const std::vector<std::string> kValues = {"quantize", "--gen", "normal:8x64", "--bits", "4", "--group-size", "16",
                                          "--scheme", "both"};
const std::vector<std::string> kKv = {"quantize", "--kv-gen", "64x32", "--outlier-channels", "2"};
const std::vector<std::string> kElements = {"quantize", "--elements", "32", "--bits", "8", "--group-size", "32"};
const std::vector<std::string> kModel = {"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64"};
// A model with sliding layers prints one more note.
const std::vector<std::string> kSliding = {"quantize", "--model", "gemma-2-9b", "--seq-len", "8192", "--scheme", "asymmetric"};
}  // namespace

TEST_CASE("quantize --csv: every table of every mode parses, by name", "[cli][contract]") {
    for (const auto& [args, table] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {kValues, "values"}, {kValues, "storage"}, {kKv, "kv"}, {kModel, "precisions"}}) {
        const auto r = run_inferlab(with(args, {"--csv", "--table", table}));
        REQUIRE(r.status == 0);
        check_csv(r.out, "quantize --table " + table);
    }
    // Values quantized exactly have no SNR: an empty cell.
    const auto exact = run_inferlab({"quantize", "--values", "0,1,-1", "--bits", "2", "--csv"});
    check_csv(exact.out, "quantize exact values");
    CHECK(exact.out.find("exact") == std::string::npos);
    // One value and --elements print prose, not a table: --csv is an error.
    expect_error(with(kValue, {"--csv"}), "has no table");
    expect_error(with(kElements, {"--csv"}), "has no table");
}

TEST_CASE("quantize --json: documented keys, one schema per mode", "[cli][contract]") {
    const auto doc = documented_keys("quantize");
    for (const auto& args : {kValue, kValues, kKv, kElements, kModel}) {
        const auto j = parse_json(run_inferlab(with(args, {"--json"})));
        INFO(j.dump());
        CHECK(undocumented_keys(j, doc).empty());
    }
    // With and without an optional part: exact arithmetic, listed values, a zero point.
    CHECK(key_paths(parse_json(run_inferlab(with(kValue, {"--json"})))) ==
          key_paths(parse_json(run_inferlab({"quantize", "--x", "1.5e-1", "--step", "0.1", "--bits", "4", "--json"}))));
    CHECK(key_paths(parse_json(run_inferlab(with(kValues, {"--json"})))) ==
          key_paths(parse_json(run_inferlab({"quantize", "--gen", "normal:64x64", "--json"}))));
    CHECK(key_paths(parse_json(run_inferlab(with(kElements, {"--json"})))) ==
          key_paths(parse_json(run_inferlab(with(kElements, {"--scheme", "asymmetric", "--json"})))));
    CHECK(key_paths(parse_json(run_inferlab(with(kModel, {"--json"})))) ==
          key_paths(parse_json(run_inferlab({"quantize", "--model", "gemma-2-9b", "--seq-len", "100", "--json"}))));
}

TEST_CASE("quantize: text and --explain fit 80 columns in every mode", "[cli][contract]") {
    for (const auto& args : {kValue, kValues, kKv, kElements, kModel, kSliding}) {
        for (const auto& form : {std::vector<std::string>{}, std::vector<std::string>{"--explain"}}) {
            const auto r = run_inferlab(with(args, form), "", {"COLUMNS=80"});
            REQUIRE(r.status == 0);
            INFO(r.out);
            CHECK(widest_line(r.out) <= 80);
        }
    }
}

TEST_CASE("quantize: a flag that changes nothing is refused, naming both flags", "[cli][contract][errors]") {
    expect_error(with(kValue, {"--scheme", "asymmetric"}), "--scheme has no effect with --x");
    expect_error(with(kModel, {"--bits", "4"}), "--bits has no effect with --model/--config");
    expect_error(with(kKv, {"--group-size", "8"}), "--group-size has no effect with --kv-gen");
    expect_error({"quantize", "--values", "1,2", "--zero-bits", "4"}, "--zero-bits has no effect with --scheme symmetric");
    expect_error({"quantize", "--values", "1,2", "--outliers", "0.1:2"}, "--outliers applies only to --gen");
    expect_error(with(kElements, {"--scheme", "both"}), "--scheme 'both': must be symmetric or asymmetric");
}
