// The figures of model bench and model check-cache (--svg FILE): drawn from the results the
// printers render (BenchResult::contexts, CheckCacheResult::rows), never re-measured.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "inferlab/base/i18n.hpp"
#include "inferlab/draw/plots.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/runs.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::plots {

namespace {

// A log axis only where it helps and is possible: every value positive, spanning `factor` or more.
bool wants_log(const std::vector<double>& v, double factor) {
    if (v.empty()) return false;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return *lo > 0 && *hi >= *lo * factor;
}

}  // namespace

std::string model_bench(const model::BenchResult& r, const std::vector<std::string>& inputs) {
    svg::LinePlot p;
    p.title = tr("model bench: one decode step against the context S");
    p.subtitle = tr("The cached step reads S positions; without a cache each step recomputes all S + 1 tokens");
    svg::Series cached{.name = tr("cached step"), .color = svg::kBlue};
    svg::Series nocache{.name = tr("no-cache step"), .color = svg::kOrange};
    for (const auto& c : r.contexts) {
        cached.x.push_back(static_cast<double>(c.seq_len));
        cached.y.push_back(c.cached_step_s * 1e3);
        if (c.nocache_step_s) {
            nocache.x.push_back(static_cast<double>(c.seq_len));
            nocache.y.push_back(*c.nocache_step_s * 1e3);
        }
    }
    std::vector<double> all_y = cached.y;
    all_y.insert(all_y.end(), nocache.y.begin(), nocache.y.end());
    p.x = {.label = tr("context S (tokens)"), .log = wants_log(cached.x, 4)};
    // Cached and no-cache steps differ by orders of magnitude at long contexts: log scale then.
    p.y = {.label = tr("step time (ms)"), .log = wants_log(all_y, 10)};
    const bool timed_nocache = !nocache.x.empty();
    p.series.push_back(std::move(cached));
    if (timed_nocache) p.series.push_back(std::move(nocache));
    p.inputs = inputs;
    p.inputs.push_back(trf("cached: the best of {0} steps after a prefill of S tokens; {1}", model::kContextTimedSteps,
                           timed_nocache ? tr("no cache: one forward over S + 1 tokens") : tr("no-cache steps not timed")));
    p.width = 760;
    return svg::line_plot(p);
}

namespace {

// The check-cache figure's frame: positions on x, a log y axis over [lo, hi] above a strip for
// the exact zeros.
struct CheckFrame {
    double left, right, top, bottom;  // the log region's pixels
    double zero_y;                    // the strip of exact zeros, under the log region
    double x0, x1;                    // positions shown
    double lo, hi;                    // the log axis' range, whole decades (lo > 0)
    double x(double pos) const { return left + (pos - x0) / (x1 - x0) * (right - left); }
    double y(double v) const {
        if (v == 0) return zero_y;
        if (!std::isfinite(v)) return top - 6;  // off the scale, above the frame (never a NaN coordinate)
        return bottom + (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) * (top - bottom);
    }
};

struct PathLine {
    const char* key;  // the class suffix and the JSON name
    std::string name;
    const char* color;
    double radius;    // drawn largest first, so coinciding points stay visible as rings
    double model::CheckCacheRow::*diff;
};

// Whole decades around the positive differences and the tolerance line (zeros go to the strip),
// at least two apart so the ticks are powers of 10.
std::pair<double, double> log_range(const model::CheckCacheResult& r, const std::vector<double>& tolerance,
                                    const std::array<PathLine, 4>& paths) {
    double lo = INFINITY, hi = -INFINITY;
    auto take = [&](double v) {
        if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    };
    for (const auto& row : r.rows)
        for (const auto& pl : paths) take(row.*pl.diff);
    for (double t : tolerance) take(t);
    if (!(lo <= hi)) lo = 1e-8, hi = 1;  // nothing positive at all: a range to draw the zeros under
    const double min = lo;
    lo = std::pow(10.0, std::floor(std::log10(lo)));
    if (min < lo * 1.5) lo /= 10;  // a point on the frame's edge would hide in it: one decade of room
    hi = std::max(std::pow(10.0, std::ceil(std::log10(hi))), lo * 100);
    return {lo, hi};
}

// The frame, the zero strip, the decades on y and the whole positions on x, with their labels.
void draw_check_axes(svg::Document& doc, const CheckFrame& f) {
    doc.rect(f.left, f.top, f.right - f.left, f.bottom - f.top, svg::ShapeStyle{.fill = "#fafafa", .stroke = "#cccccc", .cls = "frame"});
    // The zero strip, set apart from the log region: zero is not a point of a log scale.
    doc.rect(f.left, f.zero_y - 10, f.right - f.left, 20, svg::ShapeStyle{.fill = "#f1f1f1", .stroke = "#cccccc", .cls = "zero-strip"});
    doc.text(f.left - 6, f.zero_y + 4, tr("exactly 0"), {.size = 11, .anchor = "end", .cls = "tick", .value = 0.0});
    for (double e = std::log10(f.lo); e <= std::log10(f.hi) + 1e-9; e += 1) {
        const double t = std::pow(10.0, e);
        doc.line(f.left, f.y(t), f.right, f.y(t), svg::ShapeStyle{.stroke = "#e4e4e4"});
        doc.text(f.left - 6, f.y(t) + 4, svg::number(t), {.size = 11, .anchor = "end", .cls = "tick", .value = t});
    }
    const double last = f.x1 - 0.5;
    for (double t : svg::nice_ticks(0, last > 0 ? last : 1)) {
        if (t != std::floor(t) || t > last) continue;  // positions are whole numbers
        doc.text(f.x(t), f.zero_y + 26, svg::number(t), {.size = 11, .anchor = "middle", .cls = "tick", .value = t});
    }
    doc.text((f.left + f.right) / 2, f.zero_y + 44, tr("position t (its logits predict token t + 1)"),
             {.size = 12, .anchor = "middle", .cls = "axis-label"});
    doc.text(f.left - 70, f.top - 8, tr("max |logit − no-cache logit| (log scale)"), {.size = 12, .cls = "axis-label"});
}

// The tolerance per position (a point above it fails the check), then each path's points.
void draw_check_series(svg::Document& doc, const CheckFrame& f, const model::CheckCacheResult& r,
                       const std::vector<double>& tolerance, const std::array<PathLine, 4>& paths) {
    if (r.rel_tolerance > 0) {
        std::vector<std::pair<double, double>> tol;
        for (std::size_t i = 0; i < r.rows.size(); ++i) tol.emplace_back(f.x(r.rows[i].pos), f.y(tolerance[i]));
        doc.polyline(tol, svg::ShapeStyle{.stroke = svg::kRed, .stroke_width = 1.5, .dashed = true, .cls = "tolerance-line"});
        for (std::size_t i = 0; i < r.rows.size(); ++i)
            doc.circle(tol[i].first, tol[i].second, 1.2, svg::ShapeStyle{.fill = svg::kRed, .cls = "tolerance", .value = tolerance[i]});
    }
    double ly = f.top + 8;
    for (const auto& pl : paths) {
        std::vector<std::pair<double, double>> pts;
        for (const auto& row : r.rows) pts.emplace_back(f.x(row.pos), f.y(row.*pl.diff));
        doc.polyline(pts, svg::ShapeStyle{.stroke = pl.color, .stroke_width = 1.2, .cls = "series"});
        for (std::size_t i = 0; i < r.rows.size(); ++i) {
            const double v = r.rows[i].*pl.diff;
            const std::string shown = v == 0 ? tr("exactly 0") : std::isfinite(v) ? svg::number(v, 6) : tr("not a finite number");
            doc.circle(pts[i].first, pts[i].second, pl.radius,
                       svg::ShapeStyle{.fill = pl.color, .stroke = "#ffffff", .stroke_width = 0.5, .cls = std::string("diff-") + pl.key,
                                       .value = std::isfinite(v) ? std::optional<double>(v) : std::nullopt,
                                       .tooltip = trf("{0}, position {1}: {2}", pl.name, r.rows[i].pos, shown)});
        }
        doc.circle(f.right + 26, ly, pl.radius, svg::ShapeStyle{.fill = pl.color});
        doc.text(f.right + 40, ly + 4, pl.name, {.size = 11, .cls = "legend"});
        ly += 18;
    }
    doc.line(f.right + 14, ly, f.right + 38, ly, svg::ShapeStyle{.stroke = svg::kRed, .stroke_width = 1.5, .dashed = true});
    doc.text(f.right + 44, ly + 4, trf("tolerance {0}", svg::number(r.rel_tolerance)),
             {.size = 11, .cls = "legend", .value = r.rel_tolerance});
    doc.text(f.right + 44, ly + 19, "× max(1, max |l_ref|)", {.size = 11, .cls = "legend"});
}

}  // namespace

std::string model_check_cache(const model::CheckCacheResult& r, const std::vector<std::string>& inputs, const std::string& title) {
    const std::string other = r.other_attention == model::AttentionKind::Online ? tr("online attention") : tr("plain attention");
    const std::array<PathLine, 4> paths = {{
        {"chunked", tr("chunked prefill"), svg::kGreen, 5.5, &model::CheckCacheRow::chunked},
        {"other_attention", other, svg::kAmber, 4.3, &model::CheckCacheRow::other_attention},
        {"paged", tr("paged cache"), svg::kTeal, 3.2, &model::CheckCacheRow::paged},
        {"contiguous", tr("contiguous cache"), svg::kBlue, 2.2, &model::CheckCacheRow::contiguous},
    }};
    // Each position's absolute tolerance, rel_tolerance × max(1, max |l_ref|): computed once, drawn
    // as the line and bounding the log axis.
    std::vector<double> tolerance;
    for (const auto& row : r.rows) tolerance.push_back(r.rel_tolerance * row.scale);
    std::vector<std::string> foot = inputs;
    foot.push_back(r.rows.size() == 1 ? tr("1 token; each path compared with the no-cache reference (every prefix recomputed)")
                                       : trf("{0} tokens; each path compared with the no-cache reference (every prefix recomputed)",
                                             r.rows.size()));
    foot.push_back(tr("Source: first document §4.3, Figure 17 (three cache paths compared on fixed inputs)"));
    const double width = 760;
    const double below = 16 + 15.0 * static_cast<double>(foot.size()) + 44;  // the x labels (44 px) and the inputs, 15 px a line
    const double height = 400 + below;
    svg::Document doc(width, height, title.empty() ? tr("model check-cache: each cache path against no cache, per position") : title);
    const std::string worst_path = r.worst_path == "other_attention" ? other
                                   : r.worst_path == "contiguous"    ? tr("contiguous cache")
                                   : r.worst_path == "paged"         ? tr("paged cache")
                                   : r.worst_path == "chunked"       ? tr("chunked prefill")
                                                                     : r.worst_path;
    doc.heading(trf("largest difference {0} ({1} at position {2}), {3} of its position's largest logit: {4}",
                    svg::number(r.worst.max_abs, 3), worst_path, r.worst.rel_row, svg::number(r.worst.max_rel, 3),
                    r.agree ? tr("all paths agree") : tr("PATHS DISAGREE")));
    const double n = static_cast<double>(std::max<std::size_t>(r.rows.size(), 1));
    const auto [lo, hi] = log_range(r, tolerance, paths);
    const CheckFrame f{84, width - 200, 78, height - below - 34, height - below - 12, -0.5, n - 0.5, lo, hi};
    draw_check_axes(doc, f);
    draw_check_series(doc, f, r, tolerance, paths);
    doc.inputs(foot);
    return doc.str();
}

}  // namespace inferlab::plots
