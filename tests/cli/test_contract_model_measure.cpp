// Output contracts of `inferlab model speculate`, `model kv-quant` and `model roofline` (issue
// #15): documented JSON keys, CSV a real parser reads, text within 80 columns under COLUMNS=80.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

TEST_CASE("model speculate: documented keys, CSV, 80 columns", "[cli][contract]") {
    const std::vector<std::string> args{"model", "speculate", "--model", "demo-gqa", "--gamma", "3", "--steps", "12"};
    auto with = [&](std::vector<std::string> extra) {
        auto a = args;
        a.insert(a.end(), extra.begin(), extra.end());
        return run_inferlab(a, "", {"COLUMNS=80"});
    };
    const auto j = parse_json(with({"--json"}));
    CHECK(undocumented_keys(j, documented_keys("model speculate")).empty());
    CHECK(key_paths(j) == key_paths(parse_json(with({"--json", "--cost-ratio", "0.2"}))));
    check_csv(with({"--csv"}).out, "model speculate");
    CHECK(widest_line(with({}).out) <= 80);
}

TEST_CASE("model kv-quant: documented keys, 80 columns, no CSV (it has no table)", "[cli][contract]") {
    const std::vector<std::string> args{"model", "kv-quant", "--model", "demo-gqa", "--positions", "8", "--steps", "4"};
    auto a = args;
    a.push_back("--json");
    const auto j = parse_json(run_inferlab(a));
    CHECK(undocumented_keys(j, documented_keys("model kv-quant")).empty());
    CHECK(widest_line(run_inferlab(args, "", {"COLUMNS=80"}).out) <= 80);
}

TEST_CASE("model roofline: documented keys, CSV with exact byte counts, 80 columns", "[cli][contract]") {
    const std::vector<std::string> args{"model", "roofline", "--model", "demo-gqa", "--batch", "1,2", "--contexts", "8",
                                        "--probe-mib", "8", "--repeats", "1"};
    auto with = [&](const char* flag) {
        auto a = args;
        if (flag) a.push_back(flag);
        return run_inferlab(a, "", {"COLUMNS=80"});
    };
    const auto j = parse_json(with("--json"));
    CHECK(undocumented_keys(j, documented_keys("model roofline")).empty());
    const auto csv = with("--csv");
    check_csv(csv.out, "model roofline");
    CHECK(parse_csv(csv.out)[0][2] == "bytes/step (B)");
    CHECK(widest_line(with(nullptr).out) <= 80);
}
