// Output contracts of `inferlab model init|logits|check-cache|generate|bench` (issue #15): every
// table as CSV that a real parser reads, --json keys that the README documents with one schema per
// mode (a key without a value is null, never absent), and text within 80 columns.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {

// Text and --explain of `args` fit 80 columns under COLUMNS=80, and exit 0.
void check_text_width(const std::vector<std::string>& args) {
    for (const char* mode : {"", "--explain"}) {
        auto a = args;
        if (*mode) a.push_back(mode);
        const auto r = run_inferlab(a, "", {"COLUMNS=80"});
        INFO(a.back() << "\n" << r.out << r.err);
        REQUIRE(r.status == 0);
        CHECK(!r.out.empty());
        CHECK(widest_line(r.out) <= 80);
    }
}

// --csv (the first table) and --csv --table NAME for each name pass the CSV contract.
void check_tables(const std::vector<std::string>& args, const std::vector<std::string>& tables) {
    auto plain = run_inferlab(with(args, {"--csv"}));
    REQUIRE(plain.status == 0);
    check_csv(plain.out, args[1] + " --csv");
    for (const auto& t : tables) {
        auto r = run_inferlab(with(args, {"--csv", "--table", t}));
        INFO(args[1] << " --table " << t << "\n" << r.err);
        REQUIRE(r.status == 0);
        check_csv(r.out, args[1] + " --table " + t);
    }
    auto bad = run_inferlab(with(args, {"--csv", "--table", "bogus"}));
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
}

nlohmann::json json_of(const std::vector<std::string>& args, const std::string& sub) {
    auto j = parse_json(run_inferlab(with(args, {"--json"})));
    INFO(sub);
    CHECK(undocumented_keys(j, documented_keys(sub)).empty());
    return j;
}

}  // namespace

TEST_CASE("model init: documented JSON keys, text in 80 columns, no table for --csv", "[cli][contract][model]") {
    const std::string dir = std::filesystem::temp_directory_path() / "inferlab-contract-init";
    std::filesystem::create_directories(dir);
    const std::vector<std::string> args = {"model", "init", "--model", "demo-gqa", "--out", dir + "/m.bin"};
    const auto j = json_of(args, "model init");
    CHECK(key_paths(j) == std::set<std::string>{"out", "parameters", "bytes", "source"});
    check_text_width(args);
    std::filesystem::remove_all(dir);
}

TEST_CASE("model logits: one schema for every path, its table as CSV, text in 80 columns", "[cli][contract][model]") {
    const std::vector<std::string> args = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,2,3"};
    const auto a = json_of(args, "model logits");
    const auto b = json_of(with(args, {"--path", "paged", "--block-size", "2"}), "model logits");
    CHECK(key_paths(a) == key_paths(b));
    check_tables(args, {"positions"});
    check_text_width(args);
}

TEST_CASE("model check-cache: one schema with and without --tokens, its table as CSV, text in 80 columns",
          "[cli][contract][model]") {
    const std::vector<std::string> args = {"model", "check-cache", "--model", "demo-gqa", "--seq-len", "6"};
    const auto a = json_of(args, "model check-cache");
    const auto b = json_of({"model", "check-cache", "--model", "demo-gqa", "--tokens", "5,6,7", "--attention", "online"},
                           "model check-cache");
    CHECK(key_paths(a) == key_paths(b));
    CHECK(a["worst_path"].is_string());
    check_tables(args, {"positions"});
    check_text_width(args);
}

TEST_CASE("model generate: one schema greedy and sampled, the trace as CSV, text in 80 columns", "[cli][contract][model]") {
    const std::vector<std::string> args = {"model", "generate", "--model", "demo-gqa", "--steps", "3", "--trace"};
    const auto a = json_of(args, "model generate");
    const auto b = json_of({"model", "generate", "--model", "demo-gqa", "--steps", "2", "--temperature", "0.7", "--top-k", "5"},
                           "model generate");
    CHECK(key_paths(a) == key_paths(b));
    check_tables(args, {"trace"});
    check_text_width(args);
}

TEST_CASE("model bench: one schema per mode, every table as CSV, text in 80 columns", "[cli][contract][model]") {
    // The smallest run that fills every table: tiny-model.json (S_max = 8), a 4 MiB probe.
    const std::vector<std::string> args = {"model", "bench", "--config", data_path("tiny-model.json"), "--prompt-len", "2",
                                           "--steps", "2", "--probe-mib", "4", "--contexts", "1", "--batch", "1,2"};
    const auto a = json_of(args, "model bench");
    const auto b = json_of(with(args, {"--weight-dtype", "bf16", "--skip-nocache"}), "model bench");
    CHECK(key_paths(a) == key_paths(b));  // the same keys; bf16's figures null for fp32 alone
    CHECK(a["bf16_speedup"].is_null());
    CHECK(b["context_scaling"][0]["nocache_step_s"].is_null());
    REQUIRE(a["batch"].size() == 2);
    CHECK(b["batch"].size() == 4);  // float32 beside bf16, two batches each
    check_tables(args, {"batch", "context-scaling"});
    check_text_width(args);
    expect_error(with(args, {"--csv", "--table", "dtypes"}), "--table 'dtypes': no such table in this output");
}

TEST_CASE("model bench --weight-dtype all: the dtype table as CSV and the same keys", "[cli][contract][model][bench]") {
    const std::vector<std::string> args = {"model", "bench", "--model", "demo-gqa", "--weight-dtype", "all", "--prompt-len", "4",
                                           "--steps", "2", "--probe-mib", "4", "--contexts", "4", "--batch", "1,8", "--skip-nocache"};
    const auto j = json_of(args, "model bench");
    REQUIRE(j["batch"].size() == 8);  // batch 8 ÷ batch 1 for each of the four dtypes
    for (std::size_t i = 1; i < 8; i += 2) {
        INFO(j["batch"][i]["weight_dtype"]);
        CHECK(j["batch"][i]["batch"] == 8);
        CHECK(j["batch"][i]["ratio_to_batch_1"].get<double>() > 0);
        CHECK(j["batch"][i]["bound_ratio_to_batch_1"].get<double>() >= 1 - 1e-12);  // 1e-12: a quotient of equal doubles
    }
    CHECK(j["bf16_speedup"].get<double>() > 0);
    check_tables(args, {"batch", "context-scaling", "dtypes"});
}
