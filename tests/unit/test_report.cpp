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

TEST_CASE("short numbers print as typed, long ones at six digits", "[report][issue14]") {
    CHECK(format_short(0.1 + 0.2) == "0.3");  // 0.30000000000000004: 17 digits, so 6
    CHECK(format_short(0.3) == "0.3");
    CHECK(format_short(0.7599) == "0.7599");
    CHECK(format_short(1e-16) == "1e-16");
    CHECK(format_short(1.0000000000000001e-16) == "1e-16");
    CHECK(format_short(1.0 / 3) == "0.333333");
    CHECK(format_short(100) == "100");
    CHECK(format_short(0) == "0");
    CHECK(format_short(-0.25) == "-0.25");
    CHECK(format_short(std::numeric_limits<double>::quiet_NaN()) == "n/a");
}

TEST_CASE("counts take the noun's number", "[report][issue14]") {
    CHECK(count_noun(1, "device") == "1 device");
    CHECK(count_noun(8, "device") == "8 devices");
    CHECK(count_noun(0, "token") == "0 tokens");
    CHECK(count_noun(1024, "token") == "1,024 tokens");
    CHECK(count_noun(2, "entry", "entries") == "2 entries");
    CHECK(count_noun(1, "entry", "entries") == "1 entry");
}
