// Every figure labels what it draws (issue #29): over every figure of the catalogue and every
// subcommand's --svg, each number drawn (data-value) is one the result's JSON holds, each label
// beside a drawn number says that number, and each legend entry's colour is drawn.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>

#include "../support/cli.hpp"
#include "../support/equations.hpp"
#include "../support/figure_corpus.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;

namespace {

struct Drawn {
    std::string cls, text;
    double value;
};

// The classes of labels that show a result's number beside what they label: each that shows a
// number carries it (data-value), so the checks below compare it.
const std::set<std::string> kNumberLabels = {"bar-value", "bar-sublabel"};

// Every element with a data-value, and every colour an element other than a legend swatch uses.
struct Figure {
    std::vector<Drawn> drawn;
    std::vector<Drawn> unvalued;  // labels of kNumberLabels without a data-value
    std::vector<std::pair<std::string, std::string>> legend;  // (name, swatch colour)
    std::multiset<std::string> colours;
};

Figure read_figure(const std::string& svg) {
    pugi::xml_document doc;
    REQUIRE(doc.load_string(svg.c_str()));
    Figure f;
    pugi::xml_node previous;
    for (const pugi::xpath_node& x : doc.select_nodes("/svg//*")) {  // every element, in document order
        const pugi::xml_node n = x.node();
        const std::string cls = n.attribute("class").value();
        if (cls == "legend") {
            // The swatch is the element drawn just before the name (a square or a line sample).
            std::string swatch = previous.attribute("fill").value();
            if (swatch.empty() || swatch == "none") swatch = previous.attribute("stroke").value();
            f.legend.push_back({n.child_value(), swatch});
            if (const auto it = f.colours.find(swatch); it != f.colours.end()) f.colours.erase(it);  // the swatch's own
        } else {
            for (const char* a : {"fill", "stroke"})
                if (std::string c = n.attribute(a).value(); !c.empty() && c != "none") f.colours.insert(c);
        }
        if (n.attribute("data-value"))
            f.drawn.push_back({cls, n.child_value(), n.attribute("data-value").as_double()});
        else if (kNumberLabels.count(cls))
            f.unvalued.push_back({cls, n.child_value(), 0});
        previous = n;
    }
    return f;
}

bool near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-300; }

// A label names a drawn number when one of its quantities holds it: with its unit's scale
// ("32 MiB" for 33,554,432) or as the axis's number ("17.134 GB" on a GB axis for 17.134...).
bool label_says(const std::string& text, double value) {
    for (const auto& q : printed_quantities(text)) {
        const double slack = 1e-9 * std::fabs(value) + 1e-300;
        if (value >= q.low - slack && value <= q.high + slack) return true;
        if (q.scale != 1 && value >= q.low / q.scale - slack && value <= q.high / q.scale + slack) return true;
    }
    return false;
}

void numbers_of(const nlohmann::json& j, std::vector<double>& out) {
    if (j.is_object() || j.is_array())
        for (const auto& v : j) numbers_of(v, out);
    else if (j.is_number())
        out.push_back(j.get<double>());
}

// Whether `value` is a number of the JSON, in the unit the figure's axis uses: bytes as GB or
// GiB, seconds as ms, a fraction as a percentage.
bool in_json(double value, const std::vector<double>& numbers) {
    for (double scale : {1.0, 1e-9, 1.0 / 1073741824.0, 1e3, 1e-12, 100.0})
        for (double n : numbers)
            if (near(n * scale, value)) return true;
    return false;
}

void check_labels_and_legend(const std::string& what, const std::string& svg) {
    INFO(what);
    REQUIRE(svg_parse_error(svg).empty());
    const Figure f = read_figure(svg);
    CHECK(!f.drawn.empty());
    for (const auto& d : f.drawn) {
        if (printed_quantities(d.text).empty()) continue;  // no number in the label ("best", a bar)
        INFO("class " << d.cls << ", data-value " << d.value << ", label \"" << d.text << "\"");
        CHECK(label_says(d.text, d.value));
    }
    for (const auto& d : f.unvalued) {
        INFO("class " << d.cls << ", label \"" << d.text << "\" shows a number without its data-value");
        CHECK(printed_quantities(d.text).empty());
    }
    for (const auto& [name, colour] : f.legend) {
        INFO("legend entry \"" << name << "\", colour " << colour);
        CHECK(f.colours.count(colour) > 0);
    }
}

// The classes whose numbers are the figure's own, not the result's, and why: the list only
// shrinks (a class drawn from the result belongs in the JSON).
const std::map<std::string, std::string>& own_numbers() {
    static const std::map<std::string, std::string> m = {
        {"tick", "an axis tick: a round number chosen to label the axis"},
        {"hist-bin", "quantize's histogram of the error: counts of the input's values per bin, a view of "
                     "the errors the JSON summarises (max, MSE, bias)"},
        {"grid-point", "quantize's grid: the levels k·Δ around the values drawn, the grid and not a result"},
        {"grid-value", "quantize's grid: the first group's input values drawn on their grid (--gen makes them)"},
        {"grid-dequantized", "quantize's grid: each drawn input value's level k·Δ"},
        {"level", "quantize's grid around x: the levels k·Δ drawn as the grid, not a result"},
        {"grid-scale", "quantize's grid: the first group's scale Δ = max|x|/Q (its JSON holds the groups' "
                       "errors, not each group's Δ)"}};
    return m;
}

}  // namespace

TEST_CASE("every figure of the catalogue labels what it draws, and its legend names drawn colours", "[cli][figure][svg]") {
    const CliResult list = run_inferlab({"figure", "--list", "--json"});
    REQUIRE(list.status == 0);
    std::size_t figures = 0;
    const nlohmann::json catalogue = parse_json(list);
    for (const auto& fig : catalogue.at("figures")) {
        if (!fig.value("drawn", false)) continue;
        const std::string name = fig.at("name");
        const CliResult r = run_inferlab({"figure", name});
        INFO(name << "\n" << r.err);
        REQUIRE(r.status == 0);
        check_labels_and_legend("figure " + name, r.out);
        ++figures;
    }
    CHECK(figures >= 14);
    for (const auto& args : figure_runs()) {  // the same figures at other inputs
        std::string cmd = "inferlab";
        for (const auto& a : args) cmd += " " + a;
        const CliResult r = run_inferlab(args);
        INFO(cmd << "\n" << r.err);
        REQUIRE(r.status == 0);
        check_labels_and_legend(cmd, r.out);
    }
}

// Each subcommand's figures (support/figure_corpus.hpp), with the JSON of the same run: --json and
// --svg together.
TEST_CASE("every --svg draws the numbers of its run's JSON, labelled as they are", "[cli][svg]") {
    const Scratch dir("figures-truth");
    for (const auto& args : svg_runs()) {
        const std::string file = (dir.path / "f.svg").string();
        const CliResult r = run_inferlab(with(args, {"--json", "--svg", file}));
        std::string cmd = "inferlab";
        for (const auto& a : args) cmd += " " + a;
        INFO(cmd << "\n" << r.err);
        REQUIRE(r.status == 0);
        const std::string svg = slurp(file);
        check_labels_and_legend(cmd, svg);
        std::vector<double> numbers;
        numbers_of(parse_json(r), numbers);
        for (const auto& d : read_figure(svg).drawn) {
            if (own_numbers().count(d.cls)) continue;
            INFO("class " << d.cls << ", data-value " << d.value << " (" << d.text << ") is not a number of the JSON");
            CHECK(in_json(d.value, numbers));
        }
    }
}

TEST_CASE("the figure checks find a label that says another number, and an undrawn legend colour", "[cli][svg]") {
    CHECK(label_says("17.134 GB", 17.13426432));
    CHECK(label_says("32 MiB", 33554432));
    CHECK(label_says("x̂ = 0.4", 0.4));
    CHECK_FALSE(label_says("17.134 GB", 16.06));
    CHECK_FALSE(label_says("K of request 1: 0.537 GB", 68.7));
    const Figure f = read_figure(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect fill=\"#111111\" class=\"segment\" data-value=\"1\"/>"
        "<rect fill=\"#111111\"/><text class=\"legend\">K of each request</text>"
        "<rect fill=\"#222222\"/><text class=\"legend\">V of each request</text></svg>");
    REQUIRE(f.legend.size() == 2);
    CHECK(f.colours.count(f.legend[0].second) == 1);
    CHECK(f.colours.count(f.legend[1].second) == 0);  // V's colour is the swatch's alone: V is not drawn
}
