// Every figure's text stays readable (issue #29): over the figure corpus (support/figure_corpus.hpp)
// in English and Chinese, no two labels on one line overlap and no text runs past its figure's
// width, by the writer's own width estimate (svg::text_width, which the layout uses: a test with
// another estimate would test another layout).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "../support/cli.hpp"
#include "../support/figure_corpus.hpp"
#include "../support/svg_check.hpp"
#include "inferlab/draw/svg.hpp"

using namespace inferlab::test;

namespace {

// Where a <text> lies on its line: from x0 to x1 at baseline y.
struct Box {
    double x0 = 0, x1 = 0, y = 0;
    std::string cls, text;
};

// One <svg> (the root or a panel nested in it) and the text drawn directly in it.
struct Panel {
    double width = 0;
    std::vector<Box> boxes;
};

void collect(const pugi::xml_node& n, Panel& panel, std::vector<Panel>& out) {
    for (const pugi::xml_node& c : n.children()) {
        const std::string tag = c.name();
        if (tag == "svg") {
            Panel inner{c.attribute("width").as_double(), {}};
            collect(c, inner, out);
            out.push_back(inner);
        } else if (tag == "text") {
            const double size = c.attribute("font-size").as_double(), x = c.attribute("x").as_double();
            const std::string text = c.child_value(), anchor = c.attribute("text-anchor").value();
            const double w = inferlab::svg::text_width(text, size);
            const double x0 = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
            panel.boxes.push_back({x0, x0 + w, c.attribute("y").as_double(), c.attribute("class").value(), text});
        } else {
            collect(c, panel, out);
        }
    }
}

std::vector<Panel> panels_of(const std::string& svg) {
    pugi::xml_document doc;
    REQUIRE(doc.load_string(svg.c_str()));
    const pugi::xml_node root = doc.child("svg");
    Panel top{root.attribute("width").as_double(), {}};
    std::vector<Panel> out;
    collect(root, top, out);
    out.push_back(top);
    return out;
}

std::string describe(const Box& b) {
    return "\"" + b.text + "\" (class " + b.cls + ", x " + std::to_string(b.x0) + " to " + std::to_string(b.x1) + ")";
}

// The pairs of labels on one baseline whose boxes overlap (a shared edge is no overlap).
std::vector<std::string> overlaps(const std::string& svg) {
    std::vector<std::string> found;
    for (const Panel& p : panels_of(svg)) {
        std::map<double, std::vector<Box>> lines;
        for (const Box& b : p.boxes) lines[b.y].push_back(b);
        for (auto& [y, boxes] : lines) {
            std::sort(boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.x0 < b.x0; });
            for (std::size_t i = 1; i < boxes.size(); ++i)
                if (boxes[i].x0 < boxes[i - 1].x1 - 0.01) found.push_back(describe(boxes[i - 1]) + " and " + describe(boxes[i]));
        }
    }
    return found;
}

// The labels that begin left of the figure or end past its width (1 px of rounding allowed).
std::vector<std::string> outside(const std::string& svg) {
    std::vector<std::string> found;
    for (const Panel& p : panels_of(svg))
        for (const Box& b : p.boxes)
            if (b.x0 < -1 || b.x1 > p.width + 1) found.push_back(describe(b) + " in a figure " + std::to_string(p.width) + " wide");
    return found;
}

}  // namespace

TEST_CASE("no text of a figure runs past its width, in English and Chinese", "[cli][figure][svg]") {
    for (const char* lang : {"en", "zh"})
        for (const auto& f : figure_corpus(lang)) {
            INFO(f.command);
            CHECK(outside(f.svg) == std::vector<std::string>{});
        }
}

TEST_CASE("no two labels on one line of a figure overlap, in English and Chinese", "[cli][figure][svg]") {
    for (const char* lang : {"en", "zh"})
        for (const auto& f : figure_corpus(lang)) {
            INFO(f.command);
            CHECK(overlaps(f.svg) == std::vector<std::string>{});
        }
}

TEST_CASE("the layout check finds two labels on one line that overlap", "[cli][svg]") {
    const std::string svg =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\">"
        "<text x=\"50\" y=\"10\" font-size=\"11\" text-anchor=\"middle\">q (draft)</text>"
        "<text x=\"80\" y=\"10\" font-size=\"11\" text-anchor=\"middle\">p (target)</text>"
        "<text x=\"80\" y=\"30\" font-size=\"11\" text-anchor=\"middle\">output</text></svg>";
    CHECK(overlaps(svg).size() == 1);
}

TEST_CASE("the layout check finds a text that runs past the figure's width", "[cli][svg]") {
    const std::string svg =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\">"
        "<text x=\"16\" y=\"10\" font-size=\"11\">W: 9,241,705,984 parameters</text>"
        "<text x=\"16\" y=\"30\" font-size=\"11\">fits</text></svg>";
    CHECK(outside(svg).size() == 1);
}
