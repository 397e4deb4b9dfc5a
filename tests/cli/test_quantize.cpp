#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;

TEST_CASE("quantize must-show: level 4, dequantized 0.4, error 0.03", "[cli][quantize]") {
    auto j = parse_json(run_inferlab({"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7", "--json"}));
    CHECK(j["level"] == 4);
    // 1e-12 absolute: §4.1's 0.4 and 0.03 are exact in decimal; x/Δ and Δ·4 round in double.
    CHECK_THAT(j["dequantized"].get<double>(), WithinAbs(0.4, 1e-12));
    CHECK_THAT(j["error"].get<double>(), WithinAbs(0.03, 1e-12));
    CHECK(j["clipped"] == false);
    auto h = run_inferlab({"quantize", "--x", "0.37", "--step", "0.1", "--bits", "4"});
    CHECK(h.status == 0);
    CHECK(h.out.find("lands on o = level 4") != std::string::npos);
    auto x = run_inferlab({"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7", "--explain"});
    CHECK(x.out.find("x̂ = 0.1 × 4 = 0.4") != std::string::npos);
}

TEST_CASE("quantize must-show: per-channel K beats per-token K on outlier channels", "[cli][quantize]") {
    auto j = parse_json(run_inferlab({"quantize", "--kv-gen", "256x64", "--outlier-channels", "4", "--bits", "4", "--json"}));
    CHECK(j["k_per_channel_better"] == true);
    CHECK(j["k_per_channel"]["mse"].get<double>() < j["k_per_token"]["mse"].get<double>());
    auto h = run_inferlab({"quantize", "--kv-gen", "256x64", "--outlier-channels", "4", "--bits", "4"});
    CHECK(h.out.find("K per channel beats K per token") != std::string::npos);
}

TEST_CASE("quantize: values, files, groups, both schemes, storage, a model's KV", "[cli][quantize]") {
    auto v = parse_json(run_inferlab({"quantize", "--values", "0.1,-0.5,0.25", "--bits", "4", "--json"}));
    CHECK(v["results"][0]["report"]["bound_violations"] == 0);
    auto f = parse_json(run_inferlab({"quantize", "--file", data_path("matrix.csv"), "--granularity", "row", "--scheme",
                                      "both", "--json"}));
    CHECK(f["input"]["rows"] == 2);
    CHECK(f["results"].size() == 2);
    auto s = parse_json(run_inferlab({"quantize", "--elements", "32", "--bits", "8", "--group-size", "32", "--json"}));
    CHECK(s["total_bytes"] == 34);
    CHECK(s["bits_per_element"] == 8.5);
    auto m = parse_json(run_inferlab({"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64", "--json"}));
    CHECK(m["rows"][0]["total_bytes"] == 1073741824ULL);
    CHECK(m["rows"][1]["data_bytes"] == 536870912ULL);
    auto g = parse_json(run_inferlab({"quantize", "--gen", "normal:8x64", "--group-size", "16", "--seed", "4", "--json"}));
    auto g2 = parse_json(run_inferlab({"quantize", "--gen", "normal:8x64", "--group-size", "16", "--seed", "4", "--json"}));
    CHECK(g == g2);
    CHECK(g["results"][0]["storage"]["groups"] == 32);
}

TEST_CASE("quantize: bad input exits 2 with one clear line", "[cli][quantize][errors]") {
    expect_error({"quantize", "--x", "0.37", "--step", "0", "--qmax", "7"}, "--step '0': must be greater than 0");
    expect_error({"quantize", "--x", "0.37", "--step", "-0.1", "--qmax", "7"}, "--step '-0.1'");
    expect_error({"quantize", "--x", "0.37", "--step", "0.1", "--bits", "1"}, "--bits '1': must be between 2 and 16");
    expect_error({"quantize", "--values", "1,2,3", "--bits", "17"}, "--bits '17': must be between 2 and 16");
    expect_error({"quantize", "--gen", "normal:4x10", "--group-size", "4"}, "--group-size '4': must divide the row length 10");
    expect_error({"quantize", "--file", data_path("empty.txt")}, "holds no numbers");
    expect_error({"quantize", "--file", data_path("nonnumeric.csv")}, "--file line 2 'x': is not a number");
    expect_error({"quantize", "--file", data_path("missing.txt")}, "cannot be opened");
    expect_error({"quantize", "--values", "1,,2"}, "empty item");
    expect_error({"quantize", "--x", "0.3", "--step", "0.1", "--qmax", "7", "--rounding", "up"}, "--rounding 'up'");
}

// Issue #14, item 7: the decimals as typed, exactly.
TEST_CASE("quantize: 0.15/0.1 is the tie 3/2 and 0.35/0.1 the tie 7/2", "[cli][quantize][edge]") {
    auto away = parse_json(run_inferlab({"quantize", "--x", "0.15", "--step", "0.1", "--qmax", "7", "--json"}));
    CHECK(away["rounded"] == 2);
    CHECK(away["level"] == 2);
    CHECK(away["exact_arithmetic"] == true);
    CHECK(away["scaled_fraction"] == "3/2");
    auto even = parse_json(run_inferlab({"quantize", "--x", "0.15", "--step", "0.1", "--qmax", "7", "--rounding",
                                         "half-even", "--json"}));
    CHECK(even["level"] == 2);
    auto even35 = parse_json(run_inferlab({"quantize", "--x", "0.35", "--step", "0.1", "--qmax", "7", "--rounding",
                                           "half-even", "--json"}));
    CHECK(even35["level"] == 4);
    auto neg = parse_json(run_inferlab({"quantize", "--x", "-0.25", "--step", "0.1", "--qmax", "7", "--rounding",
                                        "half-even", "--json"}));
    CHECK(neg["level"] == -2);
    auto x = run_inferlab({"quantize", "--x", "0.15", "--step", "0.1", "--qmax", "7", "--explain"});
    CHECK(x.out.find("x/Δ = 0.15 / 0.1 = 3/2 = 1.5 (3/2 exactly") != std::string::npos);
    const CliResult y = run_inferlab({"quantize", "--x", "5", "--step", "0.3", "--qmax", "7", "--explain"});
    CHECK(y.out.find("x/Δ = 5 / 0.3 = 50/3 ≈ 16.6667 (50/3 exactly") != std::string::npos);
    CHECK(x.out.find("round(1.5) = 2   (half away from zero)") != std::string::npos);
    // Not a short decimal: the double path, and the output says nothing about exactness.
    auto sci = parse_json(run_inferlab({"quantize", "--x", "1.5e-1", "--step", "0.1", "--qmax", "7", "--json"}));
    CHECK(sci["exact_arithmetic"] == false);
}

TEST_CASE("quantize --csv: values quantized exactly have no SNR, an empty cell", "[cli][quantize]") {
    const auto exact = run_inferlab({"quantize", "--values", "0,1,-1", "--bits", "2", "--csv"});
    REQUIRE(exact.status == 0);
    check_csv(exact.out, "quantize exact values");
    CHECK(exact.out.find("exact") == std::string::npos);
}

TEST_CASE("quantize: a flag that changes nothing is refused, naming both flags", "[cli][quantize][errors]") {
    const std::vector<std::string> value = {"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7"};
    expect_error(with(value, {"--scheme", "asymmetric"}), "--scheme has no effect with --x");
    expect_error({"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64", "--bits", "4"},
                 "--bits has no effect with --model/--config");
    expect_error({"quantize", "--kv-gen", "64x32", "--outlier-channels", "2", "--group-size", "8"},
                 "--group-size has no effect with --kv-gen");
    expect_error({"quantize", "--values", "1,2", "--zero-bits", "4"}, "--zero-bits has no effect with --scheme symmetric");
    expect_error({"quantize", "--values", "1,2", "--outliers", "0.1:2"}, "--outliers applies only to --gen");
    expect_error({"quantize", "--elements", "32", "--bits", "8", "--group-size", "32", "--scheme", "both"},
                 "--scheme 'both': must be symmetric or asymmetric");
}
