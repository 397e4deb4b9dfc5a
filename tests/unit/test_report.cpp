#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "inferlab/report.hpp"

using namespace inferlab;

TEST_CASE("text tables align by display width", "[report]") {
    Table t{{"name", "value"}, {{"a", "1"}, {"×long", "12345"}}, {}};
    std::string s = render_text(t);
    CHECK(s == "name   value\n─────  ─────\na          1\n×long  12345\n");
    CHECK(display_width("中文") == 4);
    CHECK(display_width("≈1") == 2);
}

TEST_CASE("CSV quotes what needs quoting", "[report]") {
    Table t{{"a", "b"}, {{"1,2", "say \"hi\""}}, {}};
    CHECK(render_csv(t) == "a,b\n\"1,2\",\"say \"\"hi\"\"\"\n");
}

TEST_CASE("NaN and infinity never reach JSON output", "[report]") {
    nlohmann::json ok = {{"x", 1.5}, {"list", {1, 2.5}}};
    CHECK_NOTHROW(require_finite(ok));
    nlohmann::json bad = {{"rows", {{{"v", std::numeric_limits<double>::quiet_NaN()}}}}};
    CHECK_THROWS_WITH(require_finite(bad), Catch::Contains("$.rows[0].v"));
    nlohmann::json inf = {{"v", std::numeric_limits<double>::infinity()}};
    CHECK_THROWS_AS(require_finite(inf), std::logic_error);
}

TEST_CASE("bar charts scale to the largest value", "[report]") {
    std::string s = render_bar_chart({"1", "8"}, {{"agg", {1, 2}}}, 10);
    CHECK(s.find("1 |##### 1\n") != std::string::npos);
    CHECK(s.find("8 |########## 2\n") != std::string::npos);
    CHECK(s.find("legend:  # agg") != std::string::npos);
}
