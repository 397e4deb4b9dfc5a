// The reference model's drawings (model.hpp): model bench and check-cache --svg, drawn from the
// results the printers render (BenchResult::contexts, CheckCacheResult::rows), never re-measured,
// and the documents' Figures 4, 8, 10 and 17 drawn from real runs.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/model.hpp"
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
    // Each position's absolute tolerance (the library's rel_tolerance × max(1, max |l_ref|)), drawn
    // as the line and bounding the log axis.
    std::vector<double> tolerance;
    for (const auto& row : r.rows) tolerance.push_back(row.tolerance);
    std::vector<std::string> foot = inputs;
    foot.push_back(r.rows.size() == 1 ? tr("1 token; each path compared with the no-cache reference (every prefix recomputed)")
                                       : trf("{0} tokens; each path compared with the no-cache reference (every prefix recomputed)",
                                             r.rows.size()));
    foot.push_back(tr("Source: first document §4.3, Figure 17 (three cache paths compared on fixed inputs)"));
    const double width = 760;
    const double below = 16 + 15.0 * static_cast<double>(foot.size()) + 44;  // the x labels (44 px) and the inputs, 15 px a line
    const double height = 400 + below;
    svg::Document doc(width, height, title.empty() ? tr("model check-cache: each cache path against no cache, per position") : title);
    // The document compares three paths; this figure draws every path check_cache compares.
    doc.caption(trf("{0} cache paths compared with the no-cache pass on fixed inputs", paths.size()));
    const std::string worst_path = r.worst_path == "other_attention" ? other
                                   : r.worst_path == "contiguous"    ? tr("contiguous cache")
                                   : r.worst_path == "paged"         ? tr("paged cache")
                                   : r.worst_path == "chunked"       ? tr("chunked prefill")
                                                                     : r.worst_path;
    const double head = doc.heading(trf("largest difference {0} ({1} at position {2}), {3} of its position's largest logit: {4}",
                    svg::number(r.worst.max_abs, 3), worst_path, r.worst.rel_row, svg::number(r.worst.max_rel, 3),
                    r.agree ? tr("all paths agree") : tr("PATHS DISAGREE")));
    const double n = static_cast<double>(std::max<std::size_t>(r.rows.size(), 1));
    const auto [lo, hi] = log_range(r, tolerance, paths);
    const CheckFrame f{84, width - 200, 78 + head, height - below - 34, height - below - 12, -0.5, n - 0.5, lo, hi};
    draw_check_axes(doc, f);
    draw_check_series(doc, f, r, tolerance, paths);
    doc.inputs(foot);
    return doc.str();
}

}  // namespace inferlab::plots

namespace inferlab::figures {
namespace {

// One colour per sequence of the paged cache (cycled past eight).
const char* seq_color(int i) {
    static const char* c[] = {svg::kBlue, svg::kOrange, svg::kGreen, "#8e5cb5", svg::kTeal, svg::kRed, "#6b7b2a", "#b5518e"};
    return c[static_cast<std::size_t>(i) % 8];
}

// "1,2,3;4,5": prompts as model paged's --prompts writes them.
std::string prompts_text(const std::vector<std::vector<int>>& prompts) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "" + string chains.
    std::string t;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        if (i) t += ';';
        for (std::size_t j = 0; j < prompts[i].size(); ++j) {
            if (j) t += ',';
            t += std::to_string(prompts[i][j]);
        }
    }
    return t;
}

}  // namespace

std::string fig4_cache_append(const std::vector<model::StepTrace>& steps) {
    if (steps.empty()) throw InputError(N_("the run recorded no step"));
    const int longest = steps.back().cache_len.empty() ? 0 : steps.back().cache_len[0];
    const double cell = std::min(28.0, 520.0 / std::max(1, longest)), left = 200, top = 70, row_h = 62;
    svg::Document doc(760, top + row_h * static_cast<double>(steps.size()) + 16 + 15.0 * 3,
                      tr("Figure 4: the query reads the cached K/V and appends its own"));
    doc.heading(tr("Layer 0's cache after each step of a real run: old entries stay as they are, new ones are appended"));
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const model::StepTrace& st = steps[i];
        const double y = top + row_h * static_cast<double>(i);
        const int after = st.cache_len.empty() ? 0 : st.cache_len[0];
        doc.text(16, y + 18, i == 0 ? tr(st.phase) : trf("{0} step {1}", tr(st.phase), i), {.size = 12, .bold = true});
        doc.text(16, y + 34, trf("Q {0} reads K/V {1}", st.q_shape, st.kv_cached_shape), {.size = 10, .fill = "#555555"});
        for (int p = 0; p < after; ++p) {
            const bool fresh = p >= st.start_pos;
            const double x = left + cell * p;
            // K above V; this step's entries in blue, the history in teal (K) and amber (V).
            doc.rect(x, y + 4, cell - 3, 16, fresh ? svg::kBlue : svg::kTeal);
            doc.rect(x, y + 22, cell - 3, 16, fresh ? svg::kBlue : svg::kAmber);
        }
        doc.text(left + cell * after + 6, y + 26, fmt::format("S = {}", after),
                 {.size = 12, .cls = "cache-length", .value = static_cast<double>(after)});
    }
    const model::StepTrace& first = steps.front();
    doc.inputs({trf("Prompt of {0} tokens, then {1} greedy decode steps; K/V [batch, H_kv, S, d] per layer, every layer alike",
                    first.tokens.size(), steps.size() - 1),
                tr("Lengths read from the cache after each step (Transformer::forward with a StepTrace, lib/model)"),
                source_line("doc1-fig4")});
    return doc.str();
}

std::string fig8_paged_blocks(const model::PagedSimResult& sim, std::size_t step) {
    if (sim.steps.empty()) throw InputError(N_("the paged simulation recorded no step"));
    const model::PagedStep& st = sim.steps[std::min(step, sim.steps.size() - 1)];
    const int pool = sim.options.blocks;
    const int per_row = std::min(pool, 12);
    const int pool_rows = (pool + per_row - 1) / per_row;
    const double top = 70, seq_h = 40, bw = 40;
    const double pool_y = top + seq_h * static_cast<double>(st.seqs.size()) + 60;
    svg::Document doc(760, pool_y + 50 * pool_rows + 30 + 16 + 15.0 * 3,
                      tr("Figure 8: logical block order, physical block position"));
    doc.heading(trf("Block tables of a real paged cache after step {0}: logical blocks in order, physical blocks anywhere", st.step));
    // Owner of each physical block (the first sequence whose table holds it) and its reference count.
    std::vector<int> owner(static_cast<std::size_t>(pool), -1), refs(static_cast<std::size_t>(pool), 0);
    for (const auto& s : st.seqs)
        for (std::size_t i = 0; i < s.table.size(); ++i) {
            const auto b = static_cast<std::size_t>(s.table[i]);
            if (owner[b] < 0) owner[b] = s.seq;
            refs[b] = s.refs[i];
        }
    auto pool_xy = [&](int b) {
        return std::pair{150 + (bw + 8) * (b % per_row), pool_y + 50.0 * (b / per_row)};
    };
    for (int b = 0; b < pool; ++b) {
        const auto [x, y] = pool_xy(b);
        const int o = owner[static_cast<std::size_t>(b)];
        doc.rect(x, y, bw, 30, svg::ShapeStyle{.fill = o < 0 ? "#f0f0f0" : seq_color(o), .stroke = refs[static_cast<std::size_t>(b)] > 1 ? svg::kInk : "#bbbbbb",
                                               .stroke_width = refs[static_cast<std::size_t>(b)] > 1 ? 2.5 : 1, .cls = "physical",
                                               .value = static_cast<double>(b)});
        doc.text(x + bw / 2, y + 19, fmt::format("#{}", b), {.size = 11, .anchor = "middle", .fill = o < 0 ? "#888888" : "#ffffff"});
        if (refs[static_cast<std::size_t>(b)] > 1)
            doc.text(x + bw / 2, y + 44, trf("refs {0}", refs[static_cast<std::size_t>(b)]), {.size = 9, .anchor = "middle"});
    }
    doc.text(16, pool_y + 20, tr("physical pool"), {.size = 12, .bold = true});
    for (std::size_t r = 0; r < st.seqs.size(); ++r) {
        const auto& s = st.seqs[r];
        const double y = top + seq_h * static_cast<double>(r);
        const char letter = static_cast<char>('A' + s.seq % 26);
        doc.text(16, y + 20, trf("seq {0} ({1}, {2} tokens)", letter, tr(s.state), s.length), {.size = 11});
        for (std::size_t i = 0; i < s.table.size(); ++i) {
            const double x = 230 + (bw + 8) * static_cast<double>(i);
            doc.rect(x, y + 4, bw, 26, svg::ShapeStyle{.fill = "#ffffff", .stroke = seq_color(s.seq), .stroke_width = 2,
                                                       .cls = "logical", .value = static_cast<double>(s.table[i])});
            doc.text(x + bw / 2, y + 22, fmt::format("{}{}", letter, i), {.size = 11, .anchor = "middle"});
            const auto [px, py] = pool_xy(s.table[i]);
            doc.line(x + bw / 2, y + 30, px + bw / 2, py, svg::ShapeStyle{.stroke = seq_color(s.seq), .stroke_width = 1.2});
        }
    }
    doc.inputs({trf("{0} blocks of {1} tokens ({2} each), prompts {3}, prefix sharing {4}", pool, sim.options.block_size,
                    bytes_all_units(sim.block_bytes), prompts_text(sim.options.prompts),
                    sim.options.share_prefix ? tr("on") : tr("off")),
                trf("Step {0}: {1} blocks used, {2} free; a thick border is a block shared (reference count above 1)", st.step,
                    st.used_blocks, st.free_blocks),
                source_line("doc1-fig8")});
    return doc.str();
}

std::string fig10_attention_masks(const AttentionMaskInputs& in) {
    const std::uint64_t S = in.seq_len;
    if (S < 2 || S > 64) throw InputError("S", std::to_string(S), N_("must be between 2 and 64 positions to be drawn"));
    if (in.tile == 0 || in.tile > S)
        throw InputError("tile", std::to_string(in.tile), N_("must be between 1 and S = {0}"), {std::to_string(S)});
    if (in.window == 0 || in.window > S)
        throw InputError("W", std::to_string(in.window), N_("must be between 1 and S = {0}"), {std::to_string(S)});
    const double cell = std::min(16.0, 220.0 / static_cast<double>(S)), top = 90;
    svg::Document doc(760, top + cell * static_cast<double>(S) + 50 + 16 + 15.0 * 2,
                      tr("Figure 10: tiles keep the relations; a window removes some"));
    doc.heading(tr("Rows are queries, columns keys; a filled cell is a relation the attention computes"));
    struct Panel { std::string name; bool tiled; bool windowed; };
    const Panel panels[] = {{tr("dense causal"), false, false}, {tr("FlashAttention tiles"), true, false}, {tr("sliding window"), false, true}};
    for (int p = 0; p < 3; ++p) {
        const double x0 = 16 + 248.0 * p;
        std::uint64_t relations = 0;
        for (std::uint64_t i = 0; i < S; ++i)
            for (std::uint64_t j = 0; j < S; ++j) {
                const bool causal = j <= i;
                const bool kept = causal && (!panels[p].windowed || i - j < in.window);
                if (kept) ++relations;
                doc.rect(x0 + cell * static_cast<double>(j), top + cell * static_cast<double>(i), cell - 1, cell - 1,
                         kept ? svg::kBlue : (causal ? "#f3c6b4" : "#eeeeee"));
            }
        if (panels[p].tiled)
            for (std::uint64_t t = 0; t <= S; t += in.tile) {
                const double o = cell * static_cast<double>(t);
                doc.line(x0 + o, top, x0 + o, top + cell * static_cast<double>(S), svg::ShapeStyle{.stroke = svg::kOrange, .stroke_width = 2});
                doc.line(x0, top + o, x0 + cell * static_cast<double>(S), top + o, svg::ShapeStyle{.stroke = svg::kOrange, .stroke_width = 2});
            }
        doc.text(x0, top - 10, panels[p].name, {.size = 13, .bold = true});
        doc.text(x0, top + cell * static_cast<double>(S) + 20, trf("{0} relations", relations),
                 {.size = 12, .cls = "relations", .value = static_cast<double>(relations)});
    }
    doc.inputs({trf("S = {0} positions, tile = {1}, window W = {2} (a query keeps keys i − W < j ≤ i); pale red: causal relations the window drops",
                    S, in.tile, in.window),
                source_line("doc1-fig10")});
    return doc.str();
}

std::string fig17_cache_paths(const model::CheckCacheResult& r) {
    std::string tokens;
    for (std::size_t i = 0; i < r.tokens.size() && i < 12; ++i) {
        if (i > 0) tokens += ',';  // appended apart: GCC 12 warns (-Wrestrict, a false positive) on "" + string
        tokens += std::to_string(r.tokens[i]);
    }
    if (r.tokens.size() > 12) tokens += "," + trf("… ({0} tokens)", r.tokens.size());
    return plots::model_check_cache(
        r,
        {trf("tokens {0}", tokens),
         trf("tolerance: {0} × max(1, max |logit|) at each position (float32 sums in a different order per path)",
             svg::number(r.rel_tolerance, 3))},
        tr("Figure 17: the cache paths compared on fixed inputs"));
}

}  // namespace inferlab::figures
