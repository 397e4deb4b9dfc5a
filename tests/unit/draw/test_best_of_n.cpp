// best-of-n's drawings (draw/best_of_n.hpp): each SVG parses, and the numbers drawn in it
// (data-value) are the result's, which are checked here against the documents' values.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../../support/svg_check.hpp"
#include "inferlab/draw/best_of_n.hpp"
#include "inferlab/draw/svg.hpp"

using namespace inferlab;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

// First document §3.2: coverage 1 − 0.7^4 = 0.7599 at N = 4; N = 9 is the first to reach 0.95.
TEST_CASE("plots: best-of-n draws coverage, verifier selection and the target (first document 3.2)",
          "[unit][draw][textbook]") {
    BestOfNRequest req;
    req.p = 0.3;
    req.ns = {1, 2, 3, 4, 5, 6, 7, 8};
    req.verifier = Verifier{0.9, 0.2, true};
    req.target = 0.95;
    const BestOfNResult res = best_of_n(req);
    const std::string s = plots::best_of_n_svg(req, res);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto pts = test::svg_values(s, "point");
    REQUIRE(pts.size() == 16);  // coverage, then verifier selection; the baseline and target carry no points
    for (std::size_t i = 0; i < 8; ++i) {
        CHECK_THAT(pts[i], WithinRel(1 - std::pow(0.7, static_cast<double>(i + 1)), 1e-12));  // 1e-12: pow in double
        CHECK(pts[8 + i] == *res.rows[i].verifier_selection);
    }
    CHECK(svg::number(pts[3], 4) == "0.7599");
    const auto markers = test::svg_values(s, "marker");
    REQUIRE(markers.size() == 1);
    CHECK(markers[0] == 9);
    CHECK_THAT(test::svg_all_text(s), Contains("target 0.95") && Contains("verifier TPR = 0.9, FPR = 0.2"));
}

TEST_CASE("plots: best-of-n draws every strategy the result holds and nothing else", "[unit][draw]") {
    BestOfNRequest req;
    req.p = 0.6;
    req.ns = {1, 3, 5, 9};
    req.answer_dist = spread_wrong(0.6, 3);
    req.judge_bias = 0.3;
    const BestOfNResult res = best_of_n(req);
    const std::string s = plots::best_of_n_svg(req, res);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto pts = test::svg_values(s, "point");
    REQUIRE(pts.size() == 12);  // coverage, majority vote, biased judge
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(pts[4 + i] == *res.rows[i].majority_vote);
        CHECK(pts[8 + i] == *res.rows[i].biased_judge);
    }
    const std::string all = test::svg_all_text(s);
    CHECK_THAT(all, Contains("majority vote") && Contains("biased judge"));
    CHECK(all.find("verifier selection") == std::string::npos);
    CHECK(test::svg_items(s, "marker").empty());  // no target
}
