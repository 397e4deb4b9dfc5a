#pragma once
// SVG written by the program: a small document builder and the plot primitives the documents'
// figures need (line plots on linear or log axes with nice ticks, bar charts with value labels,
// boxes and arrows for structures). Pure functions from data to SVG text: no file, no printing.
//
// Every document is self-contained (no external font, script, stylesheet or image: kFontFamily
// names installed families, CJK-capable ones first for Chinese labels, then the generic
// "sans-serif", so each viewer picks its own), keeps text as <text> (searchable, translatable),
// carries a <title> and prints the inputs it was drawn from at its foot. Labels are in the
// language of the run (tr(), i18n.hpp); layout widths count a CJK character as two columns.
// Elements that show a number carry it exactly in a data-value attribute, so tests can compare
// the figure with the library's result without reading pixels.
//
//   svg::Document doc(640, 400, "Figure 9: bytes one decode step reads");
//   doc.rect(10, 10, 50, 80, "#3b6fb6");
//   doc.text(35, 8, "15.074 GB", {.anchor = "middle"});
//   std::string text = doc.str();
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferlab::svg {

// The documents' colours: blue for weights and dense relations, teal and amber for K and V,
// green for accepted, red for rejected, grey for structure.
inline constexpr const char* kBlue = "#3b6fb6";
inline constexpr const char* kTeal = "#2a9d8f";
inline constexpr const char* kAmber = "#e9a23b";
inline constexpr const char* kGreen = "#3a9a4a";
inline constexpr const char* kRed = "#c8453a";
inline constexpr const char* kOrange = "#e76f27";
inline constexpr const char* kGrey = "#8a8f98";
inline constexpr const char* kInk = "#222222";

// The root's font-family: Chinese labels need a face with CJK glyphs (Noto Sans CJK on Debian and
// most Linux desktops, Source Han Sans its Adobe name); Latin text reads the same in either.
inline constexpr const char* kFontFamily = "Noto Sans CJK SC, Source Han Sans SC, sans-serif";

// About how wide `text` is at font size `size` (px), for layout (legend boxes, label spacing): a
// CJK character counts as two columns of a Latin one (text/table.hpp's display_width).
double text_width(std::string_view text, double size);

// `text` as lines no wider than `room` px at font size `size` (by text_width): cut after a space
// (which ends its line) or beside a CJK character, so the lines put together are `text` again.
// One line when it fits; a piece wider than `room` keeps a line of its own.
std::vector<std::string> wrap_to_width(std::string_view text, double room, double size);

// The font size at which `text` fits `room` px: `size`, or smaller when it would run past.
double fitting_size(std::string_view text, double room, double size);

// &, <, >, " and ' as entities; control characters other than tab and newline (not allowed in
// XML 1.0) dropped.
std::string escape(std::string_view text);

// A number for a label: up to `sig` significant digits, no exponent between 1e-4 and 1e9,
// no trailing zeros ("0.76", "1024", "2.5e-06").
std::string number(double v, int sig = 4);

struct TextStyle {
    double size = 12;
    std::string anchor = "start";  // start, middle, end
    std::string fill = kInk;
    bool bold = false;
    std::string cls;               // class attribute, for tests to find kinds of labels
    std::optional<double> value;   // exact number the label shows (data-value)
};

struct ShapeStyle {
    std::string fill = "none";
    std::string stroke = "none";
    double stroke_width = 1;
    bool dashed = false;
    std::string cls;
    std::optional<double> value;   // data-value
    std::string tooltip;           // <title> child: shown on hover in a browser
};

class Document {
public:
    // Width and height in pixels (user units); the title becomes <title> and the heading.
    Document(double width, double height, std::string title);

    void rect(double x, double y, double w, double h, const ShapeStyle& style);
    void rect(double x, double y, double w, double h, const std::string& fill);
    void line(double x1, double y1, double x2, double y2, const ShapeStyle& style);
    void polyline(const std::vector<std::pair<double, double>>& points, const ShapeStyle& style);
    void circle(double cx, double cy, double r, const ShapeStyle& style);
    // A line with a filled arrowhead at (x2, y2).
    void arrow(double x1, double y1, double x2, double y2, const std::string& color, double width = 1.5);
    void text(double x, double y, std::string_view content, const TextStyle& style = {});

    // The heading: the title at the top (at a smaller size if it would run past the width) and
    // the subtitle, wrapped onto more lines 14 px apart where it is wider than the document
    // (class "subtitle", then "subtitle-continued"). Returns the height the extra lines take, for
    // the layout under it.
    double heading(std::string_view subtitle = "");
    // The inputs printed at the foot, one line each: a line wider than the document is wrapped,
    // its further lines indented (class "input-continued", read back as part of the line), and
    // the document grows by 15 px for each.
    void inputs(const std::vector<std::string>& lines);

    // A figure's caption, computed from the inputs drawn: written as the root's <desc> (not drawn;
    // `figure --json` and the gallery read it back). Empty: none.
    void caption(std::string text) { caption_ = std::move(text); }

    double width() const { return width_; }
    double height() const { return height_; }
    const std::string& title() const { return title_; }
    // The whole document, with the XML declaration.
    std::string str() const;

private:
    double width_, height_;
    std::string title_, caption_;
    std::string body_;
};

// What a document written by this writer shows, read back from its text: the root's title and
// caption, the inputs printed at its foot, and each element's class, data-value and text, in
// document order.
// It relies on the writer's layout (one element a line, class before data-value), so it reads
// only documents that Document, line_plot, stacked_plots and bar_chart wrote: `figure --json`
// reports the numbers drawn without every figure function returning them a second way.
struct DrawnValue {
    std::string cls;
    double value = 0;
    std::string text;  // a <text> element's content; empty for shapes
};
struct Drawn {
    std::string title;
    std::string caption;  // the <desc>; empty when the figure has none
    std::vector<std::string> inputs;
    std::vector<DrawnValue> values;
};
Drawn read_back(const std::string& svg);

// Ticks at 1, 2 or 5 × 10^k covering [lo, hi] with about `target` intervals; at least two.
// Throws std::invalid_argument for a non-finite or empty range.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// Ticks for a log axis over [lo, hi] (lo > 0): the powers of 10 inside it, or 1-2-5 steps when
// the range spans too few decades to show two powers of 10, or powers of 2 for ranges of whole
// numbers within 1..2^20 (batch sizes).
std::vector<double> log_ticks(double lo, double hi);

struct Axis {
    std::string label;
    bool log = false;
    std::optional<double> min, max;  // forced ends; otherwise the data's with a margin
};

struct Series {
    std::string name;
    std::vector<double> x, y;        // equal lengths
    std::string color = kBlue;
    bool dashed = false;             // a bound or a target: drawn over the solid series
    bool markers = true;             // a dot at each point (class "point", data-value = y)
    // The exact numbers the points stand for, where they differ from y (a zero drawn at a log
    // axis's floor); empty: y. Same length as y otherwise. (Initialized, so brace lists may stop before it.)
    std::vector<double> values = {};
};

// A vertical marker at x (the switching batch, the ridge point).
struct Marker {
    double x = 0;
    std::string label;
    std::string color = kGrey;
};

struct LinePlot {
    std::string title, subtitle;
    std::string caption;  // Document::caption
    Axis x, y;
    std::vector<Series> series;
    std::vector<Marker> markers;
    std::vector<std::string> inputs;
    double width = 720, height = 440;
};
// Throws std::invalid_argument for a non-finite value, a non-positive one on a log axis, or
// series of unequal length: a figure never shows NaN.
std::string line_plot(const LinePlot& plot);

// Several line plots in one document, one under the other (each a nested <svg> panel), under
// one <title>: decode-roofline's tokens/s against batch above its roofline chart. The width is
// the widest panel's; every panel keeps its own heading, axes and inputs.
std::string stacked_plots(const std::string& title, const std::vector<LinePlot>& panels);

// A part of a stacked bar (weights, then each request's K and V).
struct Segment {
    double value = 0;
    std::string color = kBlue;
    std::string name;                // tooltip
};

// A line under a bar's label, with the number it shows, if any (data-value, exact).
struct Sublabel {
    std::string text;
    std::optional<double> value = std::nullopt;
};

struct Bar {
    std::string label;               // under the bar
    std::vector<Sublabel> sublabels; // lines under it, one each
    double value = 0;                // its height (>= 0)
    std::string value_label;         // above the bar; empty: number(value)
    std::string color = kBlue;
    std::string group;               // bars with the same group sit together under one heading
    std::vector<Segment> segments;   // stacked from the bottom; empty: one block of `color`
};

// A legend entry.
struct Key {
    std::string name;
    std::string color;
};

struct BarChart {
    std::string title, subtitle;
    std::string caption;  // Document::caption
    std::string y_label;
    std::vector<Bar> bars;
    std::vector<Key> legend;
    std::vector<std::string> inputs;
    // The least width: the chart grows past it until every bar's label fits its slot and every
    // group's heading its bars, so no two labels of a row overlap.
    double width = 720, height = 440;
    // Said in the footer when the bars are too narrow for their sublabels, which are then left
    // out (where the figures can be read instead); empty: a general sentence says so. A sublabel
    // without a number that is wider than its bar is first cut into two lines after its last ", ".
    std::string sublabels_left_out;
};
// Bars carry class "bar" and data-value; their labels class "bar-value" with the same value; the
// lines under them class "bar-sublabel", with their numbers as data-value.
std::string bar_chart(const BarChart& chart);

}  // namespace inferlab::svg
