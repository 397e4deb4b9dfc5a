// spec-accept's drawings (draw/spec_accept.hpp): each SVG parses with a real XML parser and the
// numbers written in it (data-value) are the result's, element by element.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../../support/svg_check.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/draw/spec_accept.hpp"

using namespace inferlab;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

// Values are compared exactly: data-value is written with enough digits to read back the double
// (svg.hpp), and the figure copies the result's numbers without arithmetic.
TEST_CASE("plots: spec-accept sweep draws E[tokens] and speedup for each γ and marks γ and the best", "[unit][draw]") {
    SpecAcceptInputs in;
    in.alpha = 0.8;
    in.gamma = 4;
    in.cost_ratio = 0.1;
    const SpecAcceptResult r = spec_accept(in);
    REQUIRE(r.expected);
    const SpecExpected& e = *r.expected;
    REQUIRE(e.sweep.size() == 8);  // γ = 1..max(4, 8)
    const std::string s = plots::spec_accept_figure(r);
    REQUIRE(test::svg_parse_error(s).empty());
    std::vector<double> want;
    for (const auto& g : e.sweep) want.push_back(g.expected_tokens_per_round);
    for (const auto& g : e.sweep) want.push_back(*g.speedup);
    CHECK(test::svg_values(s, "point") == want);
    // The sweep and the γ table come from the same formulas: equal where both exist.
    for (std::size_t i = 0; i < e.gamma_table.size(); ++i) {
        CHECK(e.sweep[i].expected_tokens_per_round == e.gamma_table[i].expected_tokens_per_round);
        CHECK(*e.sweep[i].speedup == e.gamma_table[i].speedup);
    }
    REQUIRE(e.choice->best);
    CHECK(test::svg_values(s, "marker") == std::vector<double>{4, static_cast<double>(*e.choice->best)});
    CHECK(has(test::svg_all_text(s), "α = 0.8"));
}

TEST_CASE("plots: spec-accept without a cost ratio draws tokens per round only, past max γ when γ is larger",
          "[unit][draw]") {
    SpecAcceptInputs in;
    in.alpha = 0.5;
    in.gamma = 12;
    const SpecAcceptResult r = spec_accept(in);
    REQUIRE(r.expected->sweep.size() == 12);
    const std::string s = plots::spec_accept_figure(r);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto pts = test::svg_values(s, "point");
    REQUIRE(pts.size() == 12);
    CHECK(pts.back() == r.expected->expected_tokens_per_round);  // γ = 12 is the γ asked for
    CHECK(test::svg_values(s, "marker") == std::vector<double>{12});
}

// First document (000_5f2b20623495609b.txt) §3.1.2, Figure 13: p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2].
TEST_CASE("plots: spec-accept with p and q draws p, q, min(p, q) and the residual per token (first document 3.1.2)",
          "[unit][draw]") {
    SpecAcceptInputs in;
    in.source = PositionSource::Float;
    in.p = {0.6, 0.3, 0.1};
    in.q = {0.4, 0.4, 0.2};
    const SpecAcceptResult r = spec_accept(in);
    const std::string s = plots::spec_accept_figure(r);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto& a = r.position->a;
    std::vector<double> want;
    for (std::size_t v = 0; v < 3; ++v) want.insert(want.end(), {r.position->p[v], r.position->q[v], a.accepted[v], a.residual[v]});
    CHECK(test::svg_values(s, "bar") == want);
    CHECK(test::svg_values(s, "bar-value") == want);
    CHECK(a.residual == std::vector<double>{1, 0, 0});  // the document: all the rejected mass goes to token 0
}

TEST_CASE("plots: spec-accept with a scripted round draws each draft's fate", "[unit][draw]") {
    SpecAcceptInputs in;
    in.gamma = 4;
    in.outcomes = std::vector<std::string>{"accept", "accept", "reject"};
    const SpecAcceptResult r = spec_accept(in);
    REQUIRE(r.round);
    const std::string s = plots::spec_accept_figure(r);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(test::svg_values(s, "draft") == std::vector<double>{1, 2, 3, 4});
    CHECK(test::svg_values(s, "tokens-advanced") == std::vector<double>{3});
    CHECK_THROWS_AS(plots::spec_accept_figure(SpecAcceptResult{}), Error);
}

TEST_CASE("plots: spec-accept refuses to draw more than 64 tokens one by one", "[unit][draw]") {
    SpecAcceptInputs in;
    in.source = PositionSource::Float;
    in.p.assign(65, 1.0 / 65);
    in.q.assign(65, 1.0 / 65);
    const SpecAcceptResult r = spec_accept(in);
    CHECK_THROWS_WITH(plots::spec_accept_figure(r), Catch::Matchers::Contains("at most 64 tokens"));
    in.p.assign(64, 1.0 / 64), in.q.assign(64, 1.0 / 64);
    CHECK(test::svg_parse_error(plots::spec_accept_figure(spec_accept(in))).empty());
}

TEST_CASE("plots: spec-accept with a simulation adds the simulated output frequency per token", "[unit][draw]") {
    SpecAcceptInputs in;
    in.source = PositionSource::Float;
    in.p = {0.6, 0.3, 0.1};
    in.q = {0.4, 0.4, 0.2};
    in.samples = 1000;
    in.seed = 7;
    const SpecAcceptResult r = spec_accept(in);
    REQUIRE(r.simulation);
    const std::string s = plots::spec_accept_figure(r);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto bars = test::svg_values(s, "bar");
    REQUIRE(bars.size() == 15);  // p, q, min, r, simulated for each of 3 tokens
    for (std::size_t v = 0; v < 3; ++v) CHECK(bars[5 * v + 4] == r.simulation->speculative[v]);
}
