// --svg FILE on decode-roofline and best-of-n: the real binary writes the figure and prints its
// usual output; the SVG parses (pugixml), rsvg-convert renders it to a PNG that is not blank, and
// the numbers drawn (data-value) are the ones its --json prints.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "../support/cli.hpp"
#include "../support/svg_check.hpp"
#include "inferlab/draw/svg.hpp"

using namespace inferlab::test;
namespace fs = std::filesystem;

namespace {


// Runs args with and without --svg FILE: the same stdout, exit 0, nothing on stderr; returns the SVG.
std::string run_with_svg(const std::vector<std::string>& args, const fs::path& file) {
    const CliResult plain = run_inferlab(args);
    const CliResult drawn = run_inferlab(with(args, {"--svg", file.string()}));
    INFO("stderr: " << drawn.err);
    REQUIRE(drawn.status == 0);
    CHECK(drawn.err.empty());
    CHECK(drawn.out == plain.out);
    REQUIRE(fs::exists(file));
    const std::string svg = slurp(file);
    REQUIRE(svg_parse_error(svg).empty());
    return svg;
}

}  // namespace

TEST_CASE("decode-roofline --svg draws the rows --json prints and the usual output is unchanged", "[cli][decode-roofline][svg]") {
    Scratch dir("roofline-doc");
    const auto j = parse_json(run_inferlab(with(kDoc1Roofline, {"--json"})));
    const std::string svg = run_with_svg(kDoc1Roofline, dir.path / "doc.svg");
    run_with_svg(with(kDoc1Roofline, {"--json"}), dir.path / "doc-json.svg");
    run_with_svg(with(kDoc1Roofline, {"--csv"}), dir.path / "doc-csv.svg");
    const auto pts = svg_values(svg, "point");
    REQUIRE(pts.size() == 4);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(pts[i] == j["rows"][i]["aggregate_tokens_per_s"].get<double>());
        CHECK(pts[2 + i] == j["rows"][i]["per_request_tokens_per_s"].get<double>());
    }
    check_renders(dir.path / "doc.svg");
}

TEST_CASE("decode-roofline --svg with a model and a preset adds the roofline chart at the ridge", "[cli][decode-roofline][svg]") {
    Scratch dir("roofline-model");
    const std::vector<std::string> args = {"decode-roofline", "--model", "llama-3-8b", "--seq-len", "1", "--hw", "h100-sxm",
                                           "--batch", "1,16,256,4096"};
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    const std::string svg = run_with_svg(args, dir.path / "model.svg");
    const auto markers = svg_values(svg, "marker");
    REQUIRE(markers.size() == 2);  // the switching batch, then the ridge
    CHECK(markers[0] == j["compute_bound_from_batch"].get<double>());
    CHECK(markers[1] == j["inputs"]["ridge_flops_per_byte"].get<double>());
    const auto pts = svg_values(svg, "point");
    REQUIRE(pts.size() == 3 * 4);
    const std::string text = svg_all_text(svg);
    CHECK(text.find("Roofline: arithmetic intensity against FLOP/s") != std::string::npos);
    CHECK(text.find("h100-sxm") != std::string::npos);  // where β came from, among the inputs
    check_renders(dir.path / "model.svg");
}

TEST_CASE("decode-roofline --svg refuses an unwritable file and --list-hw", "[cli][decode-roofline][svg][errors]") {
    expect_error(with(kDoc1Roofline, {"--svg", "/nonexistent-inferlab-dir/r.svg"}), "--svg '/nonexistent-inferlab-dir/r.svg': cannot be created");
    expect_error({"decode-roofline", "--list-hw", "--svg", "hw.svg"}, "--svg 'hw.svg': --list-hw draws no figure");
    CHECK_FALSE(fs::exists("hw.svg"));
}

TEST_CASE("best-of-n --svg draws coverage, selection and the target the --json holds", "[cli][best-of-n][svg]") {
    Scratch dir("bestofn");
    const std::vector<std::string> args = {"best-of-n", "--p", "0.3", "--n", "1..16", "--tpr", "0.9", "--fpr", "0.2",
                                           "--target", "0.95"};
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    const std::string svg = run_with_svg(args, dir.path / "b.svg");
    const auto pts = svg_values(svg, "point");
    REQUIRE(pts.size() == 32);
    for (std::size_t i = 0; i < 16; ++i) {
        CHECK(pts[i] == j["rows"][i]["coverage"].get<double>());
        CHECK(pts[16 + i] == j["rows"][i]["verifier_selection"].get<double>());
    }
    const auto markers = svg_values(svg, "marker");
    REQUIRE(markers.size() == 1);
    CHECK(markers[0] == j["min_n_for_target"].get<double>());
    check_renders(dir.path / "b.svg");
    expect_error(with(args, {"--svg", "/nonexistent-inferlab-dir/b.svg"}), "--svg '/nonexistent-inferlab-dir/b.svg': cannot be created");
}

// New-user trial: CLI11 takes the next word as an option's value, so "--svg --json" used to write
// a file named --json and print text; "--svg ''" wrote nothing and exited 0.
TEST_CASE("svg and figure out files: --svg and --out refuse a flag, an empty name and a dash as the file", "[cli][svg][errors]") {
    expect_error(with(kDoc1Roofline, {"--svg", "--json"}), "--svg: '--json' is not a file name");
    expect_error(with(kDoc1Roofline, {"--svg", ""}), "--svg '': is empty");
    expect_error(with(kDoc1Roofline, {"--svg", "-"}), "--svg: '-' is not a file name");
    CHECK_FALSE(fs::exists("--json"));
    expect_error({"figure", "doc1-fig9", "--out", "--json"}, "--out: '--json' is not a file name");
    // figure --out - is its documented standard output, and --lang is everyone's flag.
    const auto r = run_inferlab({"figure", "doc1-fig9", "--out", "-", "--lang", "zh"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.rfind("<?xml", 0) == 0);
}

TEST_CASE("decode-roofline --svg prints a list of lengths without thousands separators", "[cli][decode-roofline][svg]") {
    Scratch dir("roofline-lens");
    const std::string svg = run_with_svg({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "100,8192", "--hw",
                                          "h100-sxm"},
                                         dir.path / "lens.svg");
    // "100,8,192" read as three lengths.
    CHECK(svg_all_text(svg).find("S = 100, 8192 (one request each)") != std::string::npos);
}

// New-user trial: the text marked B = 256 "fits: NO" while the figure drew it like the others.
TEST_CASE("decode-roofline --svg marks the batches that do not fit --memory, as the text does", "[cli][decode-roofline][svg]") {
    Scratch dir("roofline-memory");
    const std::vector<std::string> args = {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "4096",
                                           "--batch", "1,8,64,256", "--memory", "80GiB"};
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    std::vector<std::string> over;
    for (const auto& row : j["rows"])
        if (row["fits"] == false) over.push_back(std::to_string(row["batch"].get<std::uint64_t>()));
    REQUIRE(over == std::vector<std::string>{"256"});  // 16 GB of weights + 256 × 0.5 GiB of KV > 80 GiB
    const std::string svg = run_with_svg(args, dir.path / "memory.svg");
    CHECK(svg_all_text(svg).find("shown in red: B = 256") != std::string::npos);
}

// Issue #29, item 16: the batches that do not fit the memory were listed one by one (a 1,139-
// character "B = 29, 30, 31, …, 256" footer), and footers cited source file names. Runs are said
// by their ends, and a footer names the command that computes the figure.
TEST_CASE("decode-roofline --svg says the batches that do not fit as ranges, and names commands, not files",
          "[cli][decode-roofline][svg]") {
    const Scratch scratch("ranges");
    const std::string svg = run_with_svg({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB",
                                          "--bandwidth", "1TB/s", "--memory", "40GB", "--batch", "1..256"},
                                         scratch.path / "ranges.svg");
    const std::string text = svg_all_text(svg);
    // 14 GB + B × 1.073741824 GB > 40 GB from B = 25 (14 + 25 × 1.0737 = 40.84).
    CHECK(text.find("does not fit the memory (weights + KV), shown in red: B = 25–256") != std::string::npos);
    CHECK(text.find("lib/") == std::string::npos);
    CHECK(text.find(".hpp") == std::string::npos);
}

// Issue #29's try-out: the figure never named the KV dtype its M_KV was computed at (fp8), and
// its memory bound, equal to the aggregate at every batch, lay hidden under the aggregate line.
TEST_CASE("decode-roofline --svg names the model and KV dtype of M_KV, and draws the bounds over the rates", "[cli][decode-roofline][svg]") {
    Scratch dir("roofline-kv-dtype");
    const std::string svg = run_with_svg({"decode-roofline", "--model", "gemma-2-9b", "--weight-dtype", "bf16", "--kv-dtype",
                                          "fp8", "--hw", "a100-sxm-80gb", "--seq-len", "20000", "--batch", "1..300"},
                                         dir.path / "dr.svg");
    const auto inputs = inferlab::svg::read_back(svg).inputs;
    CHECK(std::find(inputs.begin(), inputs.end(), "M_KV: gemma-2-9b at fp8 (kv-mem's formula)") != inputs.end());
    // The first panel: the memory bound's dashed line comes after (over) every point of the rates.
    const std::string first = svg.substr(0, svg.find("<svg", svg.find("<svg", svg.find("<svg") + 1) + 1));
    CHECK(first.find("stroke-dasharray") > first.rfind("class=\"point\""));
}
