// The SVG writer (draw/svg.hpp): escaping, labels, ticks, and plots that a real XML parser reads.
#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include "../../support/svg_check.hpp"
#include "inferlab/draw/svg.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("svg: escape turns markup characters into entities and drops control characters", "[unit][svg]") {
    CHECK(svg::escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
    CHECK(svg::escape(std::string("x\x01y\tz")) == "xy\tz");
    CHECK(svg::escape("Δ·clip(x̂)") == "Δ·clip(x̂)");  // UTF-8 passes through
}

TEST_CASE("svg: number gives short labels without exponent in ordinary ranges", "[unit][svg]") {
    CHECK(svg::number(0.7599) == "0.7599");
    CHECK(svg::number(1024) == "1024");
    CHECK(svg::number(0.4) == "0.4");
    CHECK(svg::number(0) == "0");
    CHECK(svg::number(-0.03) == "-0.03");
    CHECK(svg::number(2.5e-6) == "2.5e-06");
    CHECK(svg::number(15.074741824, 5) == "15.075");
}

TEST_CASE("svg: nice ticks are 1, 2 or 5 times a power of ten and cover the range", "[unit][svg]") {
    CHECK(svg::nice_ticks(0, 23.5) == std::vector<double>{0, 5, 10, 15, 20});
    const auto t = svg::nice_ticks(0, 1);
    REQUIRE(t.size() == 6);
    for (std::size_t i = 0; i < t.size(); ++i)
        CHECK_THAT(t[i], WithinAbs(0.2 * static_cast<double>(i), 1e-12));  // 1e-12: k·0.2 in binary
    CHECK(svg::log_ticks(1, 16) == std::vector<double>{1, 2, 4, 8, 16});
    CHECK(svg::log_ticks(1, 1e6) == std::vector<double>{1, 10, 100, 1000, 1e4, 1e5, 1e6});
    CHECK_THROWS_AS(svg::nice_ticks(1, 1), std::invalid_argument);
    CHECK_THROWS_AS(svg::nice_ticks(0, NAN), std::invalid_argument);
    CHECK_THROWS_AS(svg::log_ticks(0, 10), std::invalid_argument);
}

TEST_CASE("svg: a document is well-formed, titled and self-contained, with escaped text", "[unit][svg]") {
    svg::Document d(200, 100, "Title <with> & \"marks\"");
    d.heading("sub");
    d.text(10, 50, "a < b", {.cls = "t", .value = 1.5});
    d.inputs({"S = 8,192"});
    const std::string s = d.str();
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(test::svg_title(s) == "Title <with> & \"marks\"");
    const auto t = test::svg_items(s, "t");
    REQUIRE(t.size() == 1);
    CHECK(t[0].text == "a < b");
    CHECK(t[0].value == 1.5);
    CHECK(test::svg_all_text(s).find("S = 8,192") != std::string::npos);
    for (const char* external : {"href", "<script", "url(", "@font-face", "<image", "@import"})
        CHECK(s.find(external) == std::string::npos);
}

TEST_CASE("svg: bar heights are proportional to the values, labels carry them", "[unit][svg]") {
    svg::BarChart ch;
    ch.title = "bars";
    ch.bars.resize(2);
    ch.bars[0].label = "a", ch.bars[0].value = 2;
    ch.bars[1].label = "b", ch.bars[1].value = 5, ch.bars[1].value_label = "five";
    const std::string s = svg::bar_chart(ch);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto bars = test::svg_items(s, "bar");
    REQUIRE(bars.size() == 2);
    CHECK(bars[0].value == 2);
    CHECK(bars[1].value == 5);
    // The rects' heights, read back through the parser.
    pugi::xml_document doc;
    doc.load_string(s.c_str());
    std::vector<double> h;
    for (auto x : doc.select_nodes("//rect[@class='bar']")) h.push_back(x.node().attribute("height").as_double());
    REQUIRE(h.size() == 2);
    CHECK_THAT(h[1] / h[0], WithinRel(2.5, 1e-3));  // 1e-3 relative: coordinates are written with two decimals
    const auto labels = test::svg_items(s, "bar-value");
    REQUIRE(labels.size() == 2);
    CHECK(labels[0].text == "2");
    CHECK(labels[1].text == "five");
}

TEST_CASE("svg: a line plot refuses NaN, non-positive values on a log axis and ragged series", "[unit][svg]") {
    svg::LinePlot p;
    p.series = {{"s", {1, 2}, {1, NAN}}};
    CHECK_THROWS_AS(svg::line_plot(p), std::invalid_argument);
    p.series = {{"s", {1, 2}, {0, 1}}};
    p.y.log = true;
    CHECK_THROWS_AS(svg::line_plot(p), std::invalid_argument);
    p.series = {{"s", {1, 2}, {1}}};
    CHECK_THROWS_AS(svg::line_plot(p), std::invalid_argument);
}

TEST_CASE("svg: a log-log line plot puts its points and ticks where the data says", "[unit][svg]") {
    svg::LinePlot p;
    p.title = "plot";
    p.x = {"batch", true, std::nullopt, std::nullopt};
    p.y = {"tokens/s", true, std::nullopt, std::nullopt};
    p.series = {{"aggregate", {1, 2, 4, 8, 16}, {66.34, 130, 250, 354.14, 420}}};
    p.markers = {{8, "B = 8"}};
    const std::string s = svg::line_plot(p);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto pts = test::svg_items(s, "point");
    REQUIRE(pts.size() == 5);
    CHECK(pts[0].value == 66.34);
    CHECK(pts[3].value == 354.14);
    // Equal ratios on a log axis are equal distances: x of 1, 2, 4 are evenly spaced.
    pugi::xml_document doc;
    doc.load_string(s.c_str());
    std::vector<double> cx;
    for (auto x : doc.select_nodes("//circle[@class='point']")) cx.push_back(x.node().attribute("cx").as_double());
    CHECK_THAT(cx[2] - cx[1], WithinAbs(cx[1] - cx[0], 0.02));  // 0.02 px: two-decimal coordinates
    const auto ticks = test::svg_items(s, "tick");
    CHECK(ticks.size() >= 4);
    CHECK(test::svg_items(s, "marker").size() == 1);
}

// Chinese labels (issue #18): a CJK character is about twice as wide as a Latin one, and layout
// that measures text (legend boxes, the legend column) must count it so.
TEST_CASE("svg: text width counts a CJK character as two Latin ones", "[unit][svg][i18n]") {
    // 1e-12 relative: products of small doubles
    CHECK_THAT(svg::text_width("权重", 11), WithinRel(2 * svg::text_width("ab", 11), 1e-12));
    CHECK_THAT(svg::text_width("abcd", 10), WithinRel(4 * svg::text_width("a", 10), 1e-12));
    CHECK(svg::text_width("", 12) == 0);
    // Multi-byte Latin-script symbols are one column each, as they print.
    CHECK_THAT(svg::text_width("α·β", 11), WithinRel(svg::text_width("abc", 11), 1e-12));
}

TEST_CASE("svg: the root names a CJK-capable family before the generic one", "[unit][svg][i18n]") {
    const std::string s = svg::Document(100, 50, "t").str();
    pugi::xml_document doc;
    REQUIRE(doc.load_string(s.c_str()));
    const std::string family = doc.child("svg").attribute("font-family").value();
    CHECK(family.find("Noto Sans CJK SC") < family.find("sans-serif"));
    CHECK(family.substr(family.size() - 10) == "sans-serif");
}

namespace {
// x of each element of class `cls` (its "x" attribute, for text and rect).
std::vector<double> xs_of(const std::string& svg, const std::string& cls) {
    pugi::xml_document doc;
    doc.load_string(svg.c_str());
    std::vector<double> out;
    for (const auto& n : doc.select_nodes(("//*[@class='" + cls + "']").c_str())) out.push_back(n.node().attribute("x").as_double());
    return out;
}
}  // namespace

TEST_CASE("svg: a legend of long Chinese names gets room, and bar legends do not overlap", "[unit][svg][i18n]") {
    svg::LinePlot p;
    p.series = {{"短", {1, 2}, {1, 2}}};
    const double narrow = xs_of(svg::line_plot(p), "legend").at(0);
    // 16 CJK characters: 32 columns at 11 px, wider than the default 190 px column (and within
    // the cap of 45% of the width).
    p.series = {{"超出显存超出显存超出显存超出显存", {1, 2}, {1, 2}}};
    const std::string wide_svg = svg::line_plot(p);
    const double wide = xs_of(wide_svg, "legend").at(0);
    CHECK(wide < narrow);  // the legend column starts further left
    CHECK(wide + svg::text_width(p.series[0].name, 11) <= p.width);

    svg::BarChart ch;
    ch.bars = {{.label = "a", .value = 1}};
    ch.legend = {{"每个请求的 K", svg::kTeal}, {"每个请求的 V", svg::kAmber}};
    const auto lx = xs_of(svg::bar_chart(ch), "legend");
    REQUIRE(lx.size() == 2);
    CHECK(lx[1] - lx[0] >= svg::text_width("每个请求的 K", 11));
}

// Issue #29: bar_chart dropped sublabels too wide for their bars in silence unless the caller
// had written a sentence for it (only Figure 9 had).
TEST_CASE("svg: a bar chart that leaves its sublabels out says so in the footer, by default too", "[unit][svg]") {
    svg::BarChart ch;
    for (int i = 0; i < 12; ++i) ch.bars.push_back({.label = "b", .sublabels = {{"a sublabel far wider than its bar"}}, .value = 1});
    const std::string quiet = svg::bar_chart(ch);
    CHECK(test::svg_items(quiet, "bar-sublabel").empty());
    const auto foot = test::svg_items(quiet, "input");
    REQUIRE(foot.size() == 1);
    CHECK(foot[0].text == "the second line under each bar is left out: the bars are too narrow for it");
    ch.sublabels_left_out = "each bar's rate: see the table";
    CHECK(test::svg_items(svg::bar_chart(ch), "input").at(0).text == "each bar's rate: see the table");
    ch.bars.resize(2);  // wide enough: drawn, and nothing said
    const std::string drawn = svg::bar_chart(ch);
    CHECK(test::svg_items(drawn, "bar-sublabel").size() == 2);
    CHECK(test::svg_items(drawn, "input").empty());
}

// Issue #29: Figure 13 at four tokens drew "q (draft)p (target)output" run together.
TEST_CASE("svg: a bar chart widens until its labels and group headings fit their slots", "[unit][svg]") {
    svg::BarChart ch;
    for (int g = 0; g < 6; ++g)
        for (const char* l : {"q (draft)", "p (target)", "output"})
            ch.bars.push_back({.label = l, .value = 1, .group = "token " + std::to_string(g)});
    const std::string s = svg::bar_chart(ch);
    pugi::xml_document doc;
    REQUIRE(doc.load_string(s.c_str()));
    const double width = doc.child("svg").attribute("width").as_double();
    CHECK(width > ch.width);
    const auto x = xs_of(s, "bar-label");
    REQUIRE(x.size() == 18);
    for (std::size_t i = 1; i < x.size(); ++i)  // centred labels, the widest 10 columns
        CHECK(x[i] - x[i - 1] >= svg::text_width("p (target)", 11));
    CHECK(x.back() + svg::text_width("output", 11) / 2 <= width);
    ch.bars.resize(3);  // room enough: the width asked for
    pugi::xml_document few;
    REQUIRE(few.load_string(svg::bar_chart(ch).c_str()));
    CHECK(few.child("svg").attribute("width").as_double() == ch.width);
}

// Issue #29: Figure 9's "≤ 17.70 tok/s all, 17.70 each" under each bar carried no data-value, so
// no check compared it with the result and figure --json did not hold it.
TEST_CASE("svg: each line under a bar carries the number it shows", "[unit][svg]") {
    svg::BarChart ch;
    ch.bars = {{.label = "B = 1", .sublabels = {{"≤ 66.34 tok/s all", 66.3393}, {"≤ 66.34 each", 66.3393}}, .value = 15},
               {.label = "B = 8", .sublabels = {{"≤ 354.14 tok/s all", 354.1375}, {"≤ 44.27 each", 44.2672}}, .value = 22},
               {.label = "k", .sublabels = {{"all accepted, + bonus"}}, .value = 1}};
    const std::string s = svg::bar_chart(ch);
    const auto subs = test::svg_items(s, "bar-sublabel");
    REQUIRE(subs.size() == 5);
    CHECK(subs[0].text == "≤ 66.34 tok/s all");
    CHECK(subs[3].value == 44.2672);
    CHECK(subs[4].has_value == false);  // a line without a number has none
    const svg::Drawn d = svg::read_back(s);
    std::vector<double> read;
    for (const auto& v : d.values)
        if (v.cls == "bar-sublabel") read.push_back(v.value);
    CHECK(read == std::vector<double>{66.3393, 66.3393, 354.1375, 44.2672});
}

// Issue #29: decode-roofline's inputs ran past the 720 px figure ("… × 2 B (b" cut off).
TEST_CASE("svg: a line too wide for the figure wraps, and reads back whole", "[unit][svg]") {
    const std::string line = "W: 9,241,705,984 parameters (counted from the config; tie_word_embeddings absent: "
                             "Gemma2Config's default (tied)) × 2 B (bf16)";
    const auto parts = svg::wrap_to_width(line, 400, 11);
    REQUIRE(parts.size() >= 2);
    std::string whole;
    for (const auto& p : parts) {
        CHECK(svg::text_width(p, 11) <= 400 + svg::text_width(" ", 11));  // a line's last space takes no room
        whole += p;
    }
    CHECK(whole == line);
    CHECK(svg::wrap_to_width("fits", 400, 11) == std::vector<std::string>{"fits"});
    // Chinese breaks between characters, never before "，".
    for (const auto& p : svg::wrap_to_width("每个请求的历史，各读一次每个请求的历史各读一次", 60, 10)) CHECK(p.rfind("，", 0) != 0);

    svg::Document doc(420, 100, "t");
    doc.inputs({line, "short"});
    const std::string s = doc.str();
    CHECK(test::svg_items(s, "input").size() == 2);
    CHECK(!test::svg_items(s, "input-continued").empty());
    CHECK(svg::read_back(s).inputs == std::vector<std::string>{line, "short"});
    pugi::xml_document x;
    REQUIRE(x.load_string(s.c_str()));
    // The document grows by 15 px a further line: the foot stays under what was drawn above it.
    CHECK(x.child("svg").attribute("height").as_double() == 100 + 15.0 * static_cast<double>(test::svg_items(s, "input-continued").size()));
}

TEST_CASE("svg: a subtitle too wide wraps and moves the plot down, a title too wide is set smaller", "[unit][svg]") {
    svg::LinePlot p;
    p.title = std::string(80, 'T');
    p.subtitle = "Accepted mass Σ min(p, q) = 0.45, rejected 0.55; the residual r puts the rejected mass back where p > q";
    p.series = {{"s", {1, 2}, {1, 2}}};
    const std::string s = svg::line_plot(p);
    REQUIRE(test::svg_items(s, "subtitle-continued").size() == 1);
    pugi::xml_document x;
    REQUIRE(x.load_string(s.c_str()));
    CHECK(x.select_node("//*[@class='frame']").node().attribute("y").as_double() == 78 + 14);
    CHECK(x.select_node("//*[@class='title']").node().attribute("font-size").as_double() < 16);
}

// Issue #29: decode-roofline's memory bound B·β/D_B lay under the aggregate line it equals.
TEST_CASE("svg: dashed series (bounds) are drawn over the solid ones", "[unit][svg]") {
    svg::LinePlot p;
    p.series = {{"bound", {1, 2}, {1, 2}, svg::kGrey, true, false}, {"data", {1, 2}, {1, 2}, svg::kBlue}};
    const std::string s = svg::line_plot(p);
    CHECK(s.find("stroke=\"#8a8f98\" stroke-width=\"2.00\" stroke-dasharray") > s.rfind("class=\"point\""));
    CHECK(s.find(">bound</text>") < s.find(">data</text>"));  // the legend keeps the order given
}
