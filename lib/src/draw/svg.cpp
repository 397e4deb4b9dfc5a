#include "inferlab/draw/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "inferlab/base/i18n.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of the style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::svg {
namespace {

// Coordinates with two decimals: enough for a pixel grid, and the text stays short.
std::string c(double v) { return fmt::format("{:.2f}", v); }

std::string attrs(const ShapeStyle& s) {
    std::string a = fmt::format(" fill=\"{}\" stroke=\"{}\"", escape(s.fill), escape(s.stroke));
    if (s.stroke != "none") a += fmt::format(" stroke-width=\"{}\"", c(s.stroke_width));
    if (s.dashed) a += " stroke-dasharray=\"6 4\"";
    if (!s.cls.empty()) a += fmt::format(" class=\"{}\"", escape(s.cls));
    if (s.value) a += fmt::format(" data-value=\"{:.17g}\"", *s.value);
    return a;
}

// Self-closing, or with a <title> child when there is a tooltip.
std::string close(const ShapeStyle& s, const char* tag) {
    if (s.tooltip.empty()) return "/>\n";
    return fmt::format("><title>{}</title></{}>\n", escape(s.tooltip), tag);
}

void require_finite(double v, const char* what) {
    if (!std::isfinite(v)) throw std::invalid_argument(fmt::format("svg: {} is not finite", what));
}

// Lines of the inputs block at the foot: 15 px each, plus a margin.
double foot_height(const std::vector<std::string>& inputs) {
    return inputs.empty() ? 12 : 16 + 15.0 * static_cast<double>(inputs.size());
}

// Maps data to pixels along one axis.
struct Scale {
    double lo, hi, p0, p1;
    bool log;
    double operator()(double v) const {
        const double t = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
        return p0 + t * (p1 - p0);
    }
};

// The data's range on one axis, widened so ticks and points do not sit on the frame.
std::pair<double, double> range_of(const std::vector<double>& values, const Axis& axis) {
    double lo = INFINITY, hi = -INFINITY;
    for (double v : values) {
        require_finite(v, "a plotted value");
        if (axis.log && v <= 0) throw std::invalid_argument("svg: a value on a log axis must be positive");
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    if (values.empty()) lo = axis.log ? 1 : 0, hi = axis.log ? 10 : 1;
    if (axis.min) lo = *axis.min;
    if (axis.max) hi = *axis.max;
    if (axis.log) {
        if (!(lo > 0)) throw std::invalid_argument("svg: a log axis needs a positive minimum");
        if (hi <= lo) hi = lo * 10;
        if (!axis.min) lo /= 1.25;
        if (!axis.max) hi *= 1.25;
    } else {
        if (hi <= lo) hi = lo + 1;
        const double pad = (hi - lo) * 0.05;
        // A range that starts at zero keeps zero as its floor (bars and counts start there).
        if (!axis.min && lo != 0) lo -= pad;
        if (!axis.max) hi += pad;
    }
    return {lo, hi};
}

std::vector<double> ticks_for(const Axis& axis, double lo, double hi) {
    std::vector<double> t = axis.log ? log_ticks(lo, hi) : nice_ticks(lo, hi);
    std::erase_if(t, [&](double v) { return v < lo * (1 - 1e-12) - 1e-300 || v > hi * (1 + 1e-12) + 1e-300; });
    return t;
}

// One bar at [bx, bx + w): a block of its colour, or its segments stacked inside an outline that
// carries the total.
void draw_bar(Document& doc, const Bar& b, double bx, double w, const Scale& sy, double bottom) {
    const double by = sy(b.value);
    if (b.segments.empty()) {
        doc.rect(bx, by, w, bottom - by, ShapeStyle{.fill = b.color, .cls = "bar", .value = b.value, .tooltip = b.label});
        return;
    }
    double base = 0;
    for (const auto& s : b.segments) {
        require_finite(s.value, "a segment's value");
        doc.rect(bx, sy(base + s.value), w, sy(base) - sy(base + s.value),
                 ShapeStyle{.fill = s.color, .stroke = "#ffffff", .stroke_width = 0.5, .cls = "segment", .value = s.value,
                            .tooltip = s.name});
        base += s.value;
    }
    doc.rect(bx, by, w, bottom - by, ShapeStyle{.stroke = kInk, .cls = "bar", .value = b.value, .tooltip = b.label});
}

}  // namespace

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default:
            if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') break;
            out += ch;
        }
    }
    return out;
}

double text_width(std::string_view text, double size) {
    // display_width counts a CJK character as two columns; a column of a sans-serif face is
    // about 0.6 em wide on average, so a CJK glyph (one em) comes out near 1.2 em: a slight
    // overestimate, which leaves room rather than overlap.
    return 0.6 * size * static_cast<double>(display_width(std::string(text)));
}

namespace {

// The bytes of the UTF-8 code point starting at s[i] (a stray byte counts as one).
std::size_t code_point_length(std::string_view s, std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return i + n <= s.size() ? n : 1;
}

// CJK punctuation that must not begin a line (，。、：；）」』！？) or end one (（「『).
bool no_break_before(std::string_view cp) {
    for (std::string_view p : {"，", "。", "、", "：", "；", "）", "」", "』", "！", "？"})
        if (cp == p) return true;
    return false;
}
bool no_break_after(std::string_view cp) { return cp == "（" || cp == "「" || cp == "『"; }

}  // namespace

std::vector<std::string> wrap_to_width(std::string_view text, double room, double size) {
    if (text_width(text, size) <= room) return {std::string(text)};
    // Pieces that are never cut: each ends after a space, or before or after a wide character.
    std::vector<std::string> pieces(1);
    std::string_view prev;
    for (std::size_t i = 0, n = 0; i < text.size(); i += n) {
        n = code_point_length(text, i);
        const std::string_view cp = text.substr(i, n);
        const bool wide = display_width(std::string(cp)) == 2, prev_wide = !prev.empty() && display_width(std::string(prev)) == 2;
        const bool cjk_break = (wide || prev_wide) && !no_break_before(cp) && !no_break_after(prev) && prev != " ";
        if (!pieces.back().empty() && (prev == " " || cjk_break) && cp != " ") pieces.emplace_back();
        pieces.back() += cp;
        prev = cp;
    }
    std::vector<std::string> lines;
    std::string line;
    for (const auto& p : pieces) {
        std::string longer = line + p;
        while (!longer.empty() && longer.back() == ' ') longer.pop_back();  // a space that ends a line takes no room
        if (!line.empty() && text_width(longer, size) > room) {
            lines.push_back(line);
            line = p;
        } else {
            line += p;
        }
    }
    lines.push_back(line);
    return lines;
}

double fitting_size(std::string_view text, double room, double size) {
    const double w = text_width(text, size);
    return w <= room || w == 0 ? size : size * room / w;
}

std::string number(double v, int sig) {
    if (v == 0) return "0";
    const double a = std::fabs(v);
    if (a >= 1e-4 && a < 1e9) {
        const int digits = std::max(0, sig - 1 - static_cast<int>(std::floor(std::log10(a))));
        std::string s = fmt::format("{:.{}f}", v, digits);
        if (s.find('.') != std::string::npos) {
            while (s.back() == '0') s.pop_back();
            if (s.back() == '.') s.pop_back();
        }
        return s;
    }
    return fmt::format("{:.{}g}", v, sig);
}

Document::Document(double width, double height, std::string title)
    : width_(width), height_(height), title_(std::move(title)) {}

void Document::rect(double x, double y, double w, double h, const ShapeStyle& s) {
    body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}", c(x), c(y), c(std::max(0.0, w)),
                         c(std::max(0.0, h)), attrs(s)) +
             close(s, "rect");
}

void Document::rect(double x, double y, double w, double h, const std::string& fill) {
    ShapeStyle s;
    s.fill = fill;
    rect(x, y, w, h, s);
}

void Document::line(double x1, double y1, double x2, double y2, const ShapeStyle& s) {
    ShapeStyle t = s;
    if (t.stroke == "none") t.stroke = kInk;
    body_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"{}", c(x1), c(y1), c(x2), c(y2), attrs(t)) +
             close(t, "line");
}

void Document::polyline(const std::vector<std::pair<double, double>>& points, const ShapeStyle& s) {
    std::string pts;
    for (const auto& [x, y] : points) {
        // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "" + string chains here.
        if (!pts.empty()) pts += ' ';
        pts += c(x);
        pts += ',';
        pts += c(y);
    }
    body_ += fmt::format("<polyline points=\"{}\"{}", pts, attrs(s)) + close(s, "polyline");
}

void Document::circle(double cx, double cy, double r, const ShapeStyle& s) {
    body_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\"{}", c(cx), c(cy), c(r), attrs(s)) + close(s, "circle");
}

void Document::arrow(double x1, double y1, double x2, double y2, const std::string& color, double width) {
    const double len = std::hypot(x2 - x1, y2 - y1);
    if (len == 0) return;
    const double ux = (x2 - x1) / len, uy = (y2 - y1) / len;
    const double head = 8;
    // The shaft stops at the head's base so its end does not poke through the point.
    line(x1, y1, x2 - ux * head, y2 - uy * head, ShapeStyle{.stroke = color, .stroke_width = width, .cls = "arrow"});
    const double bx = x2 - ux * head, by = y2 - uy * head;
    body_ += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"/>\n", c(x2), c(y2), c(bx - uy * head * 0.45),
                         c(by + ux * head * 0.45), c(bx + uy * head * 0.45), c(by - ux * head * 0.45), escape(color));
}

void Document::text(double x, double y, std::string_view content, const TextStyle& s) {
    std::string a = fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\"", c(x), c(y), c(s.size), escape(s.fill));
    if (s.anchor != "start") a += fmt::format(" text-anchor=\"{}\"", escape(s.anchor));
    if (s.bold) a += " font-weight=\"bold\"";
    if (!s.cls.empty()) a += fmt::format(" class=\"{}\"", escape(s.cls));
    if (s.value) a += fmt::format(" data-value=\"{:.17g}\"", *s.value);
    body_ += a + ">" + escape(content) + "</text>\n";
}

double Document::heading(std::string_view subtitle) {
    const double room = width_ - 32;  // 16 px each side
    text(16, 26, title_, {.size = fitting_size(title_, room, 16), .bold = true, .cls = "title"});
    if (subtitle.empty()) return 0;
    const std::vector<std::string> lines = wrap_to_width(subtitle, room, 12);
    for (std::size_t i = 0; i < lines.size(); ++i)
        text(16, 45 + 14 * static_cast<double>(i), lines[i],
             {.size = 12, .fill = "#555555", .cls = i == 0 ? "subtitle" : "subtitle-continued"});
    return 14 * static_cast<double>(lines.size() - 1);
}

void Document::inputs(const std::vector<std::string>& lines) {
    double y = height_ - foot_height(lines) + 18;
    std::size_t drawn = 0;
    for (const auto& l : lines) {
        // A line that does not fit goes on under itself, indented 12 px.
        const std::vector<std::string> parts =
            text_width(l, 11) <= width_ - 32 ? std::vector<std::string>{l} : wrap_to_width(l, width_ - 44, 11);
        for (std::size_t i = 0; i < parts.size(); ++i, ++drawn, y += 15)
            text(i == 0 ? 16 : 28, y, parts[i], {.size = 11, .fill = "#555555", .cls = i == 0 ? "input" : "input-continued"});
    }
    height_ += 15 * static_cast<double>(drawn - lines.size());
}

std::string Document::str() const {
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"{4}\">\n"
        "<title>{2}</title>\n"
        "{5}"
        "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n"
        "{3}</svg>\n",
        c(width_), c(height_), escape(title_), body_, kFontFamily,
        caption_.empty() ? std::string() : "<desc>" + escape(caption_) + "</desc>\n");
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo) || target < 1)
        throw std::invalid_argument("svg: ticks need a finite range with hi > lo");
    const double rough = (hi - lo) / target;
    const double mag = std::pow(10.0, std::floor(std::log10(rough)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= rough) {
            step = m * mag;
            break;
        }
    std::vector<double> t;
    for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1) {
        const double v = k * step;
        t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);  // -0 and 1e-17 shown as 0
    }
    return t;
}

std::vector<double> log_ticks(double lo, double hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo > 0) || !(hi > lo))
        throw std::invalid_argument("svg: log ticks need 0 < lo < hi, finite");
    std::vector<double> t;
    if (lo >= 0.5 && hi <= 2.0 * (1 << 20) && hi / lo >= 4 && hi / lo <= 4096) {
        for (double v = 1; v <= hi; v *= 2)
            if (v >= lo) t.push_back(v);
        if (t.size() >= 2) return t;
        t.clear();
    }
    for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); e += 1) {
        const double p = std::pow(10.0, e);
        if (p >= lo && p <= hi) t.push_back(p);
    }
    if (t.size() >= 2) return t;
    t.clear();
    for (double e = std::floor(std::log10(lo)); e <= std::ceil(std::log10(hi)); e += 1)
        for (double m : {1.0, 2.0, 5.0}) {
            const double v = m * std::pow(10.0, e);
            if (v >= lo && v <= hi) t.push_back(v);
        }
    return t;
}

std::string line_plot(const LinePlot& p) {
    std::vector<double> xs, ys;
    for (const auto& s : p.series) {
        if (s.x.size() != s.y.size()) throw std::invalid_argument("svg: a series has x and y of different lengths");
        if (!s.values.empty() && s.values.size() != s.y.size())
            throw std::invalid_argument("svg: a series has values and y of different lengths");
        xs.insert(xs.end(), s.x.begin(), s.x.end());
        ys.insert(ys.end(), s.y.begin(), s.y.end());
    }
    for (const auto& m : p.markers) xs.push_back(m.x);
    const auto [x0, x1] = range_of(xs, p.x);
    const auto [y0, y1] = range_of(ys, p.y);

    Document doc(p.width, p.height, p.title);
    doc.caption(p.caption);
    const double head = doc.heading(p.subtitle);
    // Plot frame: room for tick labels on the left, the legend on the right (190 px, or wider for a
    // legend name that needs it: the line sample takes 44 px before the name).
    double legend = 190;
    for (const auto& s : p.series) legend = std::max(legend, 44 + text_width(s.name, 11) + 12);
    legend = std::min(legend, p.width * 0.45);  // the plot keeps more than half the width
    const double left = 84, right = p.width - legend, top = 78 + head, bottom = p.height - foot_height(p.inputs) - 44;
    const Scale sx{x0, x1, left, right, p.x.log}, sy{y0, y1, bottom, top, p.y.log};
    doc.rect(left, top, right - left, bottom - top, ShapeStyle{.fill = "#fafafa", .stroke = "#cccccc", .cls = "frame"});
    for (double t : ticks_for(p.x, x0, x1)) {
        doc.line(sx(t), top, sx(t), bottom, ShapeStyle{.stroke = "#e4e4e4"});
        doc.text(sx(t), bottom + 16, number(t), {.size = 11, .anchor = "middle", .cls = "tick", .value = t});
    }
    for (double t : ticks_for(p.y, y0, y1)) {
        doc.line(left, sy(t), right, sy(t), ShapeStyle{.stroke = "#e4e4e4"});
        doc.text(left - 6, sy(t) + 4, number(t), {.size = 11, .anchor = "end", .cls = "tick", .value = t});
    }
    doc.text((left + right) / 2, bottom + 36, p.x.label + (p.x.log ? tr(" (log scale)") : ""),
             {.size = 12, .anchor = "middle", .cls = "axis-label"});
    // The y label sits above the axis (a rotated label would need a transform some slide tools drop).
    doc.text(left - 70, top - 8, p.y.label + (p.y.log ? tr(" (log scale)") : ""), {.size = 12, .cls = "axis-label"});

    for (const auto& m : p.markers) {
        doc.line(sx(m.x), top, sx(m.x), bottom, ShapeStyle{.stroke = m.color, .stroke_width = 1.5, .dashed = true,
                                                           .cls = "marker", .value = m.x});
        doc.text(sx(m.x) + 4, bottom - 8, m.label, {.size = 11, .fill = m.color, .cls = "marker-label", .value = m.x});
    }
    // Dashed series (bounds, targets) are drawn over the solid ones: a result that meets its bound
    // (a memory-bound step on B·β/D_B) would otherwise hide it under its line and points.
    for (const bool dashed : {false, true})
        for (const auto& s : p.series) {
            if (s.dashed != dashed) continue;
            std::vector<std::pair<double, double>> pts;
            for (std::size_t i = 0; i < s.x.size(); ++i) pts.emplace_back(sx(s.x[i]), sy(s.y[i]));
            doc.polyline(pts, ShapeStyle{.stroke = s.color, .stroke_width = 2, .dashed = s.dashed, .cls = "series"});
            if (s.markers)
                for (std::size_t i = 0; i < s.x.size(); ++i)
                    doc.circle(pts[i].first, pts[i].second, 3.2,
                               ShapeStyle{.fill = s.color, .cls = "point", .value = s.values.empty() ? s.y[i] : s.values[i],
                                          .tooltip = s.name + ": " + number(s.x[i]) + ", " + number(s.y[i], 6)});
        }
    double ly = top + 8;
    for (const auto& s : p.series) {
        doc.line(right + 14, ly, right + 38, ly, ShapeStyle{.stroke = s.color, .stroke_width = 2, .dashed = s.dashed});
        doc.text(right + 44, ly + 4, s.name, {.size = 11, .cls = "legend"});
        ly += 18;
    }
    doc.inputs(p.inputs);
    return doc.str();
}

std::string stacked_plots(const std::string& title, const std::vector<LinePlot>& panels) {
    if (panels.empty()) throw std::invalid_argument("svg: stacked_plots needs at least one panel");
    double width = 0, height = 0;
    std::string body;
    for (const auto& p : panels) {
        std::string one = line_plot(p);
        // Drop the XML declaration (one per file) and place the panel's root at its offset.
        one.erase(0, one.find("<svg"));
        one.insert(4, fmt::format(" x=\"0\" y=\"{}\"", c(height)));
        body += one;
        width = std::max(width, p.width);
        // The panel's own height: more than p.height where its inputs were wrapped.
        const std::size_t h = one.find(" height=\"") + 9;
        height += std::strtod(one.c_str() + h, nullptr);
    }
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"{4}\">\n"
        "<title>{2}</title>\n"
        "{3}</svg>\n",
        c(width), c(height), escape(title), body, kFontFamily);
}

namespace {

// Each bar's sublabels as the lines drawn within `room` pixels: one a line, one without a number
// that does not fit cut after its last ", " (a number's line is kept whole, with its data-value);
// none at all (an empty result) when a line still does not fit.
std::vector<std::vector<Sublabel>> sublabel_lines(const BarChart& ch, double room) {
    std::vector<std::vector<Sublabel>> out;
    for (const auto& b : ch.bars) {
        std::vector<Sublabel>& lines = out.emplace_back();
        for (const auto& s : b.sublabels) {
            if (text_width(s.text, 10) <= room) {
                lines.push_back(s);
                continue;
            }
            const std::size_t cut = s.value ? std::string::npos : s.text.rfind(", ");
            if (cut == std::string::npos) return {};
            const Sublabel first{s.text.substr(0, cut + 1)}, second{s.text.substr(cut + 2)};
            if (text_width(first.text, 10) > room || text_width(second.text, 10) > room) return {};
            lines.push_back(first);
            lines.push_back(second);
        }
    }
    return out;
}

// The text above a bar.
std::string value_label(const Bar& b) { return b.value_label.empty() ? number(b.value) : b.value_label; }

// The narrowest slot in which no two labels of a row overlap: each bar's label and the value
// above it within its slot, each group's heading within its bars and the empty slot beside them
// (4% kept as a gap).
double label_slot(const BarChart& ch) {
    double need = 0;
    for (std::size_t i = 0, first = 0; i < ch.bars.size(); ++i) {
        need = std::max({need, text_width(ch.bars[i].label, 11) / 0.96, text_width(value_label(ch.bars[i]), 12) / 0.96});
        if (i + 1 == ch.bars.size() || ch.bars[i + 1].group != ch.bars[i].group) {
            const double bars = static_cast<double>(i + 1 - first);
            need = std::max(need, text_width(ch.bars[i].group, 12) / (0.96 * (bars + 1)));
            first = i + 1;
        }
    }
    return need;
}

// Where each legend entry of a bar chart goes: its swatch's corner, left to right from (16, y),
// onto a further row 18 px down where the next entry would run past the width.
std::vector<std::pair<double, double>> legend_places(const std::vector<Key>& legend, double width, double y) {
    std::vector<std::pair<double, double>> out;
    double lx = 16;
    for (const auto& k : legend) {
        const double w = 16 + text_width(k.name, 11);  // the swatch, a gap, the name
        if (lx > 16 && lx + w > width - 16) lx = 16, y += 18;
        out.emplace_back(lx, y);
        lx += w + 12;
    }
    return out;
}

}  // namespace

std::string bar_chart(const BarChart& ch) {
    double vmax = 0;
    for (const auto& b : ch.bars) {
        require_finite(b.value, "a bar's value");
        if (b.value < 0) throw std::invalid_argument("svg: a bar's value must be non-negative");
        vmax = std::max(vmax, b.value);
    }
    if (vmax == 0) vmax = 1;
    // Groups are separated by one empty slot.
    std::size_t slots = ch.bars.size();
    for (std::size_t i = 1; i < ch.bars.size(); ++i)
        if (ch.bars[i].group != ch.bars[i - 1].group) ++slots;
    const double left = 84, margin = 24;
    const double width = std::max(ch.width, left + margin + static_cast<double>(std::max<std::size_t>(slots, 1)) * label_slot(ch));
    const double right = width - margin;
    const double slot = (right - left) / static_cast<double>(std::max<std::size_t>(slots, 1));
    Document doc(width, ch.height, ch.title);
    doc.caption(ch.caption);
    const double head = doc.heading(ch.subtitle);
    // The legend under the heading, the plot under the legend's last row.
    const std::vector<std::pair<double, double>> keys = legend_places(ch.legend, width, 56 + head);
    const double top = 96 + (keys.empty() ? head : keys.back().second - 56);
    const std::vector<std::vector<Sublabel>> subs = sublabel_lines(ch, slot * 0.96);
    std::size_t rows = 0;  // lines of sublabels under the bars
    for (const auto& lines : subs) rows = std::max(rows, lines.size());
    std::vector<std::string> inputs = ch.inputs;
    bool any_sublabel = false;
    for (const auto& b : ch.bars) any_sublabel = any_sublabel || !b.sublabels.empty();
    // Sublabels left out are always said: a reader would otherwise not know the bars had them.
    if (subs.empty() && any_sublabel)
        inputs.insert(inputs.begin(), ch.sublabels_left_out.empty()
                                          ? tr("the second line under each bar is left out: the bars are too narrow for it")
                                          : ch.sublabels_left_out);
    // Room under the axis for the label, one line of sublabels and the group headings; more lines
    // take it from the plot.
    const double extra = 12 * static_cast<double>(rows > 1 ? rows - 1 : 0);
    const double bottom = ch.height - foot_height(inputs) - 56 - extra;
    const std::vector<double> ticks = nice_ticks(0, vmax * 1.08);
    const double top_value = std::max(ticks.back(), vmax);
    const Scale sy{0, top_value, bottom, top, false};
    for (double t : ticks) {
        doc.line(left, sy(t), right, sy(t), ShapeStyle{.stroke = "#e4e4e4"});
        doc.text(left - 6, sy(t) + 4, number(t), {.size = 11, .anchor = "end", .cls = "tick", .value = t});
    }
    doc.line(left, bottom, right, bottom, ShapeStyle{.stroke = kInk});
    doc.text(left - 70, top - 10, ch.y_label, {.size = 12, .cls = "axis-label"});

    double x = left;
    std::string group;
    double group_start = left;
    auto close_group = [&](double end) {
        if (!group.empty())
            doc.text((group_start + end) / 2, bottom + 44 + extra, group, {.size = 12, .anchor = "middle", .bold = true, .cls = "group"});
    };
    for (std::size_t i = 0; i < ch.bars.size(); ++i) {
        const Bar& b = ch.bars[i];
        if (i > 0 && b.group != ch.bars[i - 1].group) {
            close_group(x);
            x += slot;
        }
        if (i == 0 || b.group != ch.bars[i - 1].group) group = b.group, group_start = x;
        const double w = slot * 0.7, bx = x + slot * 0.15, by = sy(b.value);
        draw_bar(doc, b, bx, w, sy, bottom);
        doc.text(bx + w / 2, by - 6, value_label(b),
                 {.size = 12, .anchor = "middle", .bold = true, .cls = "bar-value", .value = b.value});
        doc.text(bx + w / 2, bottom + 16, b.label, {.size = 11, .anchor = "middle", .cls = "bar-label"});
        if (!subs.empty())
            for (std::size_t l = 0; l < subs[i].size(); ++l)
                doc.text(bx + w / 2, bottom + 30 + 12 * static_cast<double>(l), subs[i][l].text,
                         {.size = 10, .anchor = "middle", .fill = "#555555", .cls = "bar-sublabel", .value = subs[i][l].value});
        x += slot;
    }
    close_group(x);
    for (std::size_t i = 0; i < ch.legend.size(); ++i) {
        const auto [lx, ly] = keys[i];
        doc.rect(lx, ly, 12, 12, ch.legend[i].color);
        doc.text(lx + 16, ly + 10, ch.legend[i].name, {.size = 11, .cls = "legend"});
    }
    doc.inputs(inputs);
    return doc.str();
}

namespace {

// The entities escape() writes, back to characters.
std::string unescape(std::string_view t) {
    static const std::pair<std::string_view, char> entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    std::string out;
    for (std::size_t i = 0; i < t.size();) {
        bool matched = false;
        for (const auto& [e, ch] : entities)
            if (t.substr(i, e.size()) == e) {
                out += ch, i += e.size(), matched = true;
                break;
            }
        if (!matched) out += t[i++];
    }
    return out;
}

// The value of attribute `name` on this line, if present.
std::optional<std::string> attribute(std::string_view line, std::string_view name) {
    const std::string key = " " + std::string(name) + "=\"";
    const std::size_t at = line.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    const std::size_t from = at + key.size(), to = line.find('"', from);
    if (to == std::string_view::npos) return std::nullopt;
    return unescape(line.substr(from, to - from));
}

}  // namespace

Drawn read_back(const std::string& svg) {
    Drawn d;
    std::size_t start = 0;
    while (start < svg.size()) {
        std::size_t end = svg.find('\n', start);
        if (end == std::string::npos) end = svg.size();
        const std::string_view line(svg.data() + start, end - start);
        start = end + 1;
        if (line.rfind("<title>", 0) == 0 && d.title.empty()) {
            d.title = unescape(line.substr(7, line.find("</title>") - 7));
            continue;
        }
        if (line.rfind("<desc>", 0) == 0 && d.caption.empty()) {
            d.caption = unescape(line.substr(6, line.find("</desc>") - 6));
            continue;
        }
        std::string text;
        if (line.rfind("<text", 0) == 0) {
            const std::size_t open = line.find('>'), close = line.rfind("</text>");
            if (open != std::string_view::npos && close != std::string_view::npos && close > open)
                text = unescape(line.substr(open + 1, close - open - 1));
        }
        const auto cls = attribute(line, "class");
        if (cls && *cls == "input") d.inputs.push_back(text);
        if (cls && *cls == "input-continued" && !d.inputs.empty()) d.inputs.back() += text;  // the space is the line's end
        if (const auto v = attribute(line, "data-value"))
            d.values.push_back({cls.value_or(""), std::strtod(v->c_str(), nullptr), text});
    }
    return d;
}

}  // namespace inferlab::svg
