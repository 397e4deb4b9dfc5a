// model check-cache --svg and model bench --svg: the real binary writes the figure of the result
// it prints (pugixml reads it back, rsvg-convert renders it), and the output it prints is the
// same as without --svg.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/cli.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
namespace fs = std::filesystem;


TEST_CASE("model check-cache --svg writes the per-position differences and prints the same table", "[cli][model][svg]") {
    Scratch s("inferlab-cc-svg");
    const fs::path file = s.path / "check-cache.svg";
    const std::vector<std::string> base = {"model", "check-cache", "--model", "demo-gqa", "--seq-len", "16"};
    const auto plain = run_inferlab(base);
    auto args = base;
    args.insert(args.end(), {"--svg", file.string()});
    const auto r = run_inferlab(args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out == plain.out);  // the text output is unchanged by --svg
    const std::string svg = slurp(file);
    REQUIRE(svg_parse_error(svg).empty());
    CHECK(svg_all_text(svg).find("exactly 0") != std::string::npos);
    check_renders(file);

    // With --json the figure's numbers are the printed rows' numbers (both written with 17 digits).
    args.push_back("--json");
    const auto j = parse_json(run_inferlab(args));
    const std::string svg2 = slurp(file);
    const auto contiguous = svg_values(svg2, "diff-contiguous"), paged = svg_values(svg2, "diff-paged"),
               other = svg_values(svg2, "diff-other_attention"), chunked = svg_values(svg2, "diff-chunked");
    REQUIRE(j["rows"].size() == 16);
    REQUIRE(contiguous.size() == 16);
    REQUIRE(chunked.size() == 16);
    for (std::size_t i = 0; i < 16; ++i) {
        // 0 absolute: the same double, written with 17 significant digits in both.
        CHECK_THAT(contiguous[i], WithinAbs(j["rows"][i]["contiguous"].get<double>(), 0));
        CHECK_THAT(paged[i], WithinAbs(j["rows"][i]["paged"].get<double>(), 0));
        CHECK_THAT(other[i], WithinAbs(j["rows"][i]["other_attention"].get<double>(), 0));
        CHECK_THAT(chunked[i], WithinAbs(j["rows"][i]["chunked"].get<double>(), 0));
    }
}

TEST_CASE("model bench --svg writes cached against no-cache step time and prints the usual tables", "[cli][model][svg]") {
    Scratch s("inferlab-bench-svg");
    const fs::path file = s.path / "bench.svg";
    // Small settings so the test is quick: the timings are read back, never judged.
    const std::vector<std::string> base = {"model", "bench", "--model", "demo-gqa", "--prompt-len", "8", "--steps", "2",
                                           "--probe-mib", "8", "--contexts", "16,64", "--batch", "1", "--svg", file.string()};
    const auto r = run_inferlab(base);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("One decode step at context S") != std::string::npos);
    CHECK(r.out.find("Batch decode at context") != std::string::npos);
    const std::string svg = slurp(file);
    REQUIRE(svg_parse_error(svg).empty());
    CHECK(svg_title(svg).find("model bench") != std::string::npos);
    check_renders(file);

    auto args = base;
    args.push_back("--json");
    const auto j = parse_json(run_inferlab(args));
    const auto points = svg_values(slurp(file), "point");
    REQUIRE(j["context_scaling"].size() == 2);
    REQUIRE(points.size() == 4);  // cached at S = 16 and 64, then no-cache at both
    for (std::size_t i = 0; i < 2; ++i) {
        // 1e-15 relative: seconds × 1e3 in double on both sides.
        CHECK_THAT(points[i], WithinRel(j["context_scaling"][i]["cached_step_s"].get<double>() * 1e3, 1e-15));
        CHECK_THAT(points[2 + i], WithinRel(j["context_scaling"][i]["nocache_step_s"].get<double>() * 1e3, 1e-15));
    }
}

TEST_CASE("model check-cache --svg into a missing folder is a bad-input error with nothing on stdout", "[cli][model][svg]") {
    expect_error({"model", "check-cache", "--model", "demo-gqa", "--seq-len", "2", "--svg", "/nonexistent-inferlab/x.svg"},
                 "/nonexistent-inferlab/x.svg");
}
