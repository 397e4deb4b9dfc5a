// --svg FILE on spec-accept and quantize through the real binary: the file is written and is
// well-formed SVG (pugixml) that rsvg-convert renders to a PNG that is not blank, the normal
// output still goes to stdout, and the numbers in the figure are the ones --json prints.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "../support/cli.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;
namespace fs = std::filesystem;

namespace {


// Runs `args` plus --svg FILE, checks the exit status, that stdout equals the run without --svg
// (when `same_as_plain`: a flag that only --svg gives an effect fails without it), and that FILE
// parses and renders; returns the SVG text.
std::string draw(const Scratch& s, const std::string& name, const std::vector<std::string>& args,
                 bool same_as_plain = true) {
    const fs::path svg = s.path / (name + ".svg");
    std::vector<std::string> with = args;
    with.insert(with.end(), {"--svg", svg.string()});
    const CliResult plain = run_inferlab(args), drawn = run_inferlab(with);
    INFO(name << "\nstderr: " << drawn.err);
    REQUIRE(drawn.status == 0);
    CHECK(drawn.err.empty());
    if (same_as_plain) CHECK(drawn.out == plain.out);  // --svg adds a file and changes nothing printed
    CHECK_FALSE(drawn.out.empty());
    const std::string text = slurp(svg);
    REQUIRE(svg_parse_error(text).empty());
    CHECK_FALSE(svg_title(text).empty());
    CHECK(text.find("href") == std::string::npos);  // self-contained
    check_renders(svg);
    return text;
}

}  // namespace

TEST_CASE("spec-accept --svg draws the γ sweep with the numbers --json prints", "[cli][svg]") {
    const Scratch s("spec");
    const std::vector<std::string> args = {"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1"};
    const std::string svg = draw(s, "sweep", args);
    auto with_json = args;
    with_json.push_back("--json");
    const auto j = parse_json(run_inferlab(with_json));
    std::vector<double> want;
    for (const auto& row : j["gamma_table"]) want.push_back(row["expected_tokens_per_round"].get<double>());
    for (const auto& row : j["gamma_table"]) want.push_back(row["speedup"].get<double>());
    CHECK(svg_values(svg, "point") == want);  // exact: the same doubles, 17 digits each way
    CHECK(svg_values(svg, "marker") == std::vector<double>{4, j["best_gamma"].get<double>()});
}

TEST_CASE("spec-accept --svg draws p, q, min(p, q) and the residual for --p/--q, and the scripted round",
          "[cli][svg]") {
    const Scratch s("spec-pq");
    const std::string bars = draw(s, "pq", {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"});
    // First document §3.1.2: p, q, min(p, q), r per token; r = [1, 0, 0].
    CHECK(svg_values(bars, "bar") == std::vector<double>{0.6, 0.4, 0.4, 1, 0.3, 0.4, 0.3, 0, 0.1, 0.2, 0.1, 0});
    const std::string round = draw(s, "round", {"spec-accept", "--gamma", "4", "--outcomes", "accept,accept,reject"});
    CHECK(svg_values(round, "tokens-advanced") == std::vector<double>{3});
}

TEST_CASE("quantize --svg draws every mode from its result", "[cli][svg]") {
    const Scratch s("quant");
    const std::string grid = draw(s, "x", {"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7"});
    CHECK(svg_values(grid, "dequantized") == std::vector<double>{0.4});  // first document §4.1: level 4
    const std::string vals = draw(s, "values", {"quantize", "--values", "0.1,-0.5,0.25,1", "--bits", "4", "--json"});
    const auto j = parse_json(run_inferlab({"quantize", "--values", "0.1,-0.5,0.25,1", "--bits", "4", "--json"}));
    CHECK(svg_values(vals, "grid-value") == std::vector<double>{0.1, -0.5, 0.25, 1});
    const auto hist = svg_values(vals, "hist-bin");
    double total = 0;
    for (double c : hist) total += c;
    CHECK(total == 4);
    CHECK_FALSE(j.empty());
    draw(s, "gen", {"quantize", "--gen", "normal:16x64", "--bits", "4", "--group-size", "32", "--scheme", "both"});
    draw(s, "kv", {"quantize", "--kv-gen", "64x32", "--outlier-channels", "2", "--bits", "4"});
    const std::string st = draw(s, "elements", {"quantize", "--elements", "32", "--bits", "8", "--group-size", "32"});
    CHECK(svg_values(st, "bar") == std::vector<double>{128, 34});  // 32 fp32 values; 32 B of levels + a 2-byte scale
    draw(s, "model", {"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64"});
}

TEST_CASE("svg errors: a folder is refused before anything is printed, and nothing is written on bad input",
          "[cli][svg][errors]") {
    const Scratch s("errors");
    expect_error({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--svg", s.path.string()},
                 "--svg '" + s.path.string() + "': is a directory");
    expect_error({"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7", "--svg", (s.path / "no" / "f.svg").string()},
                 "--svg '" + (s.path / "no" / "f.svg").string() + "': cannot be created");
    const fs::path f = s.path / "never.svg";
    expect_error({"quantize", "--values", "1e308,-1e308", "--svg", f.string()}, "--values '1e+308'");
    CHECK_FALSE(fs::exists(f));
}

TEST_CASE("quantize refuses values the source dtype cannot hold, naming the flag, the value and the range",
          "[cli][quantize][errors]") {
    expect_error({"quantize", "--values", "1e308,-1e308"},
                 "--values '1e+308': is outside the range of the source dtype fp32 (--source-dtype): "
                 "[-3.4028235e+38, 3.4028235e+38]");
    expect_error({"quantize", "--values", "70000,1", "--source-dtype", "fp16"}, "[-65504, 65504]");
    expect_error({"quantize", "--values", "1e8,1"}, "--scale-dtype 'fp16': cannot hold the scale");
    // The same values in fp32 with fp32 scales are fine.
    const auto ok = run_inferlab({"quantize", "--values", "1e8,1", "--scale-dtype", "fp32"});
    CHECK(ok.status == 0);
}

TEST_CASE("number files and ROWSxCOLS errors name the flag through the shared readers", "[cli][errors]") {
    const Scratch s("readers");
    const fs::path bad = s.path / "bad.txt";
    std::ofstream(bad) << "0.5\n0.5,nan\n";
    expect_error({"spec-accept", "--p-file", bad.string(), "--q", "0.5,0.5"}, "--p-file line 2 'nan'");
    const fs::path empty = s.path / "empty.csv";
    std::ofstream(empty) << "\n";
    expect_error({"quantize", "--file", empty.string()}, "--file '" + empty.string() + "': holds no numbers");
    expect_error({"quantize", "--kv-gen", "0x128"}, "--kv-gen '0'");
    expect_error({"quantize", "--kv-gen", "4611686018427387904x4"}, "at most 4,000,000 values");
    expect_error({"quantize", "--gen", "normal:64x"}, "--gen");
}

TEST_CASE("spec-accept --max-gamma sets the figure's sweep with --svg, and still needs --cost-ratio without it",
          "[cli][svg]") {
    const Scratch s("maxgamma");
    const std::string svg = draw(s, "sweep12", {"spec-accept", "--alpha", "0.5", "--gamma", "2", "--max-gamma", "12"}, false);
    CHECK(svg_values(svg, "point").size() == 12);  // tokens per round at γ = 1..12, no speedup without c
    expect_error({"spec-accept", "--alpha", "0.5", "--gamma", "2", "--max-gamma", "12"},
                 "--max-gamma has no effect without --cost-ratio");
}

// Four bars a token: a real vocabulary is refused with the way to a readable figure, by the app
// (the flag) before anything is drawn; 64 tokens still draw.
TEST_CASE("spec-accept --svg draws at most 64 tokens per token and says what to give instead", "[cli][svg][errors]") {
    const Scratch s("tokens");
    auto zeros = [](int n) {
        std::string z = "0";
        for (int i = 1; i < n; ++i) z += ",0";
        return z;
    };
    const fs::path f = s.path / "t.svg";
    expect_error({"spec-accept", "--p-logits", zeros(65), "--q-logits", zeros(65), "--svg", f.string()},
                 "--svg '65 tokens': the per-token chart draws at most 64 tokens (give --gamma");
    CHECK_FALSE(fs::exists(f));
    const auto r = run_inferlab({"spec-accept", "--p-logits", zeros(64), "--q-logits", zeros(64), "--svg", f.string()});
    CHECK(r.status == 0);
    CHECK(fs::exists(f));
}

// The advice to raise --max-gamma is given only where it can be followed.
TEST_CASE("spec-accept at the sweep's edge says Raise --max-gamma only below its limit", "[cli][spec-accept]") {
    // One line per paragraph (COLUMNS=1000), so a phrase is not split by the wrapping.
    const auto below = run_inferlab({"spec-accept", "--alpha", "0.99", "--gamma", "8", "--cost-ratio", "0.001"}, "", {"COLUMNS=1000"});
    CHECK(below.status == 0);
    CHECK(below.out.find("Raise --max-gamma (at most 64)") != std::string::npos);
    const auto at = run_inferlab({"spec-accept", "--alpha", "0.99", "--gamma", "64", "--cost-ratio", "0.001", "--max-gamma", "64"}, "",
                                {"COLUMNS=1000"});
    CHECK(at.status == 0);
    CHECK(at.out.find("Raise --max-gamma") == std::string::npos);
    CHECK(at.out.find("64 is the longest sweep printed") != std::string::npos);
}
