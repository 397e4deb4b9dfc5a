// The figures of model bench and model check-cache (draw/model.hpp): each SVG parses (pugixml),
// renders with rsvg-convert to a PNG that is not blank, and the numbers written in it (data-value)
// are the result's numbers.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "../../support/small_model.hpp"
#include "../../support/svg_check.hpp"
#include "inferlab/draw/model.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/runs.hpp"

using namespace inferlab;
using namespace inferlab::model;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
namespace fs = std::filesystem;

namespace {

// The cy of every circle of class `cls`, in document order.
std::vector<double> circle_ys(const std::string& svg, const std::string& cls) {
    pugi::xml_document doc;
    REQUIRE(doc.load_string(svg.c_str()));
    std::vector<double> out;
    for (const auto& n : doc.select_nodes(("//*[@class='" + cls + "']").c_str())) out.push_back(n.node().attribute("cy").as_double());
    return out;
}

// Well-formed, no NaN or inf written anywhere, and rsvg-convert draws it with ink on over 1% of it.
void check_svg(const std::string& svg, const std::string& name) {
    REQUIRE(test::svg_parse_error(svg).empty());
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
    CHECK(svg.find("href") == std::string::npos);  // self-contained: nothing linked
    const test::Scratch dir("plots");
    const fs::path svg_path = dir.path / (name + ".svg");
    std::ofstream(svg_path) << svg;
    test::check_renders(svg_path, 700);
}

}  // namespace

TEST_CASE("plots: model check-cache draws each path's differences, zeros in their own strip, and the tolerance",
          "[unit][draw][model]") {
    auto w = random_weights(inferlab::test::tiny_dims(), 5);
    Transformer m(*w);
    CheckCacheInputs in;
    in.tokens = random_tokens(inferlab::test::tiny_dims(), 12, 3);
    in.block_size = 4;
    ForwardOptions opt;
    const CheckCacheResult ok = check_cache(m, in, opt);
    REQUIRE(ok.rows.size() == 12);

    // Each position's scale is max(1, max |l_ref|) of the no-cache logits, computed here on its own.
    const LogitsResult ref = logits_along(m, in.tokens, {CachePath::NoCache, 4, 1}, opt);
    for (std::size_t i = 0; i < ok.rows.size(); ++i) {
        double peak = 1;
        for (Eigen::Index c = 0; c < ref.logits.cols(); ++c) peak = std::max(peak, std::fabs(double(ref.logits(Eigen::Index(i), c))));
        CHECK_THAT(ok.rows[i].scale, WithinAbs(peak, 0));  // 0: the same float32 values, the same max
    }

    const std::string s = plots::model_check_cache(ok, {"a tiny model"});
    check_svg(s, "check-cache");
    CHECK(test::svg_title(s).find("check-cache") != std::string::npos);
    const std::string text = test::svg_all_text(s);
    CHECK(text.find("exactly 0") != std::string::npos);
    CHECK(text.find("a tiny model") != std::string::npos);
    CHECK(text.find("all paths agree") != std::string::npos);
    // data-value is written with 17 significant digits: a double reads back exactly (0 tolerance).
    const auto contiguous = test::svg_values(s, "diff-contiguous"), paged = test::svg_values(s, "diff-paged"),
               other = test::svg_values(s, "diff-other_attention"), chunked = test::svg_values(s, "diff-chunked"), tol = test::svg_values(s, "tolerance");
    REQUIRE(contiguous.size() == 12);
    REQUIRE(paged.size() == 12);
    REQUIRE(other.size() == 12);
    REQUIRE(chunked.size() == 12);
    REQUIRE(tol.size() == 12);
    for (std::size_t i = 0; i < 12; ++i) {
        CHECK_THAT(contiguous[i], WithinAbs(ok.rows[i].contiguous, 0));
        CHECK_THAT(paged[i], WithinAbs(ok.rows[i].paged, 0));
        CHECK_THAT(other[i], WithinAbs(ok.rows[i].other_attention, 0));
        CHECK_THAT(chunked[i], WithinAbs(ok.rows[i].chunked, 0));
        CHECK_THAT(tol[i], WithinRel(ok.rel_tolerance * ok.rows[i].scale, 1e-15));  // 1e-15: one product of doubles
    }
    // Position 0 is one identical forward on every cached path: exactly 0, drawn in the strip
    // under the log region, below every positive point.
    REQUIRE(ok.rows[0].contiguous == 0);
    const auto ys = circle_ys(s, "diff-contiguous");
    const auto tol_ys = circle_ys(s, "tolerance");
    for (std::size_t i = 1; i < 12; ++i)
        if (ok.rows[i].contiguous > 0) CHECK(ys[0] > ys[i]);
    CHECK(ys[0] > *std::max_element(tol_ys.begin(), tol_ys.end()));

    // A broken path: its points above the tolerance line where it fails, the verdict in the heading.
    opt.pitfall = Pitfall::WrongLayerCache;
    const CheckCacheResult bad = check_cache(m, in, opt);
    REQUIRE_FALSE(bad.agree);
    const std::string b = plots::model_check_cache(bad, {});
    check_svg(b, "check-cache-bad");
    CHECK(test::svg_all_text(b).find("PATHS DISAGREE") != std::string::npos);
    const auto bad_ys = circle_ys(b, "diff-chunked"), bad_tol_ys = circle_ys(b, "tolerance");
    int above = 0;
    for (std::size_t i = 0; i < bad.rows.size(); ++i) {
        const bool fails = bad.rows[i].chunked > bad.rel_tolerance * bad.rows[i].scale;
        CHECK((bad_ys[i] < bad_tol_ys[i]) == fails);  // SVG y grows downwards: above is smaller
        above += fails;
    }
    CHECK(above > 0);
}

TEST_CASE("plots: model bench draws cached and no-cache step times in ms against S, log axes where they span decades",
          "[unit][draw][model]") {
    BenchResult r;
    r.contexts = {{128, 0.0011, 0.040, 0.040 / 0.0011}, {512, 0.0016, 0.31, 0.31 / 0.0016}, {2048, 0.0042, 2.9, 2.9 / 0.0042}};
    const std::string s = plots::model_bench(r, {"ref-110m, 2 threads"});
    check_svg(s, "bench");
    const auto points = test::svg_values(s, "point");
    REQUIRE(points.size() == 6);  // the cached series, then the no-cache one
    for (std::size_t i = 0; i < 3; ++i) {
        // 1e-15 relative: seconds × 1e3 in double, written with 17 digits.
        CHECK_THAT(points[i], WithinRel(r.contexts[i].cached_step_s * 1e3, 1e-15));
        CHECK_THAT(points[3 + i], WithinRel(*r.contexts[i].nocache_step_s * 1e3, 1e-15));
    }
    const std::string text = test::svg_all_text(s);
    CHECK(text.find("context S (tokens) (log scale)") != std::string::npos);  // 128 to 2048: a factor of 16
    CHECK(text.find("step time (ms) (log scale)") != std::string::npos);      // 1.1 ms to 2.9 s
    CHECK(text.find("ref-110m, 2 threads") != std::string::npos);

    // --skip-nocache: one series, said so at the foot; two contexts close together: linear axes.
    BenchResult skip;
    skip.contexts = {{64, 0.0010, std::nullopt, std::nullopt}, {96, 0.0012, std::nullopt, std::nullopt}};
    const std::string k = plots::model_bench(skip, {});
    check_svg(k, "bench-skip");
    CHECK(test::svg_values(k, "point").size() == 2);
    CHECK(test::svg_all_text(k).find("no-cache steps not timed") != std::string::npos);
    CHECK(test::svg_all_text(k).find("log scale") == std::string::npos);
}
