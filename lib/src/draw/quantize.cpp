// quantize's drawings (quantize.hpp).
#include "inferlab/draw/quantize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::plots {

std::string quant_grid_figure(const ScalarQuant& q, const GridNotes& notes) {
    // At most 17 levels: the whole grid when Q ≤ 8, else 17 around the level chosen.
    const std::int64_t hi = std::min(q.qmax, std::max(-q.qmax, q.level - 8) + 16), lo = std::max(-q.qmax, hi - 16);
    const double left = 60, right = 700, y = 150;
    const double span = static_cast<double>(hi - lo);
    auto px = [&](double k) { return left + (k - static_cast<double>(lo)) / (span == 0 ? 1 : span) * (right - left); };
    svg::Document doc(760, 300 + 16 + 15.0 * static_cast<double>(notes.inputs.size()), notes.title);
    doc.heading(trf("x̂ = Δ·clip(round(x/Δ), −Q, Q): x = {0} lands on level {1}, x̂ = {2}", svg::number(q.x, 6), q.level,
                    svg::number(q.dequantized, 6)));
    doc.line(left - 20, y, right + 20, y, svg::ShapeStyle{.stroke = svg::kInk, .stroke_width = 1.5});
    for (std::int64_t l = lo; l <= hi; ++l) {
        const double x = px(static_cast<double>(l));
        const double val = static_cast<double>(l) * q.step;
        doc.circle(x, y, l == q.level ? 7 : 5, svg::ShapeStyle{.fill = svg::kBlue, .cls = "level", .value = val});
        doc.text(x, y + 24, svg::number(val, 6), {.size = 11, .anchor = "middle"});
        doc.text(x, y + 40, std::to_string(l), {.size = 9, .anchor = "middle", .fill = "#777777"});
    }
    const double xx = std::clamp(px(q.scaled), left - 20, right + 20);
    doc.circle(xx, y - 50, 6, svg::ShapeStyle{.fill = svg::kRed, .cls = "input-x", .value = q.x});
    doc.text(xx, y - 64, "x = " + svg::number(q.x, 6), {.size = 12, .anchor = "middle", .fill = svg::kRed});
    doc.arrow(xx, y - 44, px(static_cast<double>(q.level)), y - 9, svg::kRed);
    doc.text(px(static_cast<double>(q.level)) + 10, y - 20, "x̂ = " + svg::number(q.dequantized, 6),
             {.size = 12, .fill = svg::kBlue, .cls = "dequantized", .value = q.dequantized});
    const std::string note = q.clipped ? tr(" (clipped to ±Q·Δ)") : notes.within_half_step ? tr("; within Δ/2") : "";
    doc.text(left, y + 80, trf("error x̂ − x = {0}{1}", svg::number(q.error, 4), note),
             {.size = 13, .bold = true, .cls = "error", .value = q.error});
    doc.text(left, y + 100, trf("level index k below each grid point; rounding {0}", tr(notes.rounding)),
             {.size = 11, .fill = "#555555"});
    doc.inputs(notes.inputs);
    return doc.str();
}

std::string quantize_value_figure(const ValueQuant& v) {
    const ScalarQuant& q = v.q;
    return quant_grid_figure(
        q, {tr("quantize: the value on the uniform grid"), to_string(v.rounding), v.within_half_step,
            {trf("x = {0}, Δ = {1}, Q = {2}{3} (inferlab quantize)", svg::number(q.x, 6),
                 svg::number(q.step, 6), q.qmax, q.exact ? tr(", in exact fractions") : ""),
             tr("first document §4.1, Figure 15")}});
}

namespace {

std::string gb(std::uint64_t bytes) { return fmt::format("{:.3f} GB", static_cast<double>(bytes) / 1e9); }

std::string scheme_label(Scheme s) { return s == Scheme::Symmetric ? tr("symmetric") : tr("asymmetric"); }

// One scheme's histogram in the band [y0, y0 + h): bars of class "hist-bin" with the count.
void histogram_panel(svg::Document& doc, const SchemeQuant& r, double y0, double h) {
    const ErrorHistogram& hg = r.histogram;
    const double left = 70, right = 700, bottom = y0 + h - 34, top = y0 + 22;
    const std::uint64_t most = *std::max_element(hg.counts.begin(), hg.counts.end());
    doc.text(left, y0 + 12,
             trf("{0}: error x̂ − x of {1} values in [{2}, {3}]", scheme_label(r.scheme), group_thousands(r.quant.report.count),
                 svg::number(hg.lo, 4), svg::number(hg.hi, 4)),
             {.size = 12, .bold = true});
    doc.line(left, bottom, right, bottom, svg::ShapeStyle{.stroke = svg::kInk});
    const double w = (right - left) / static_cast<double>(hg.counts.size());
    for (std::size_t b = 0; b < hg.counts.size(); ++b) {
        const double bh = most ? (bottom - top) * static_cast<double>(hg.counts[b]) / static_cast<double>(most) : 0;
        const double lo = hg.lo + (hg.hi - hg.lo) * static_cast<double>(b) / static_cast<double>(hg.counts.size());
        doc.rect(left + w * static_cast<double>(b) + 1, bottom - bh, w - 2, bh,
                 svg::ShapeStyle{.fill = svg::kBlue, .cls = "hist-bin", .value = static_cast<double>(hg.counts[b]),
                                 .tooltip = trf("from {0}: {1}", svg::number(lo, 4), hg.counts[b])});
    }
    doc.text(left, bottom + 14, svg::number(hg.lo, 4), {.size = 10, .anchor = "middle"});
    doc.text((left + right) / 2, bottom + 14, "0", {.size = 10, .anchor = "middle"});
    doc.text(right, bottom + 14, svg::number(hg.hi, 4), {.size = 10, .anchor = "middle"});
    doc.text(right, y0 + 12, trf("tallest bin {0}", group_thousands(most)), {.size = 10, .anchor = "end", .fill = "#555555"});
}

// The first group's values (red, above) and their grid points (blue, on the line) in [y0, y0 + h).
void grid_panel(svg::Document& doc, const SchemeQuant& r, double y0) {
    const GridSample& g = r.grid;
    const double left = 70, right = 700, y = y0 + 70;
    double kmin = static_cast<double>(g.k_max), kmax = static_cast<double>(g.k_min);
    for (std::size_t i = 0; i < g.x.size(); ++i) {
        kmin = std::min({kmin, std::floor(g.x[i] / g.scale), g.xhat[i] / g.scale});
        kmax = std::max({kmax, std::ceil(g.x[i] / g.scale), g.xhat[i] / g.scale});
    }
    kmin = std::max(kmin - 1, static_cast<double>(g.k_min));
    kmax = std::min(kmax + 1, static_cast<double>(g.k_max));
    if (kmax <= kmin) kmax = kmin + 1;
    auto px = [&](double k) { return left + (k - kmin) / (kmax - kmin) * (right - left); };
    // One line over the panel (the values drawn rise to just under it), smaller where it would run past.
    const std::string what = trf("{0}: the first {1} of the first group's {2} values on its grid, Δ = {3}, x̂ = Δ·k, k in [{4}, {5}]",
                                 scheme_label(r.scheme), g.x.size(), group_thousands(g.group_values), svg::number(g.scale, 6),
                                 g.k_min, g.k_max);
    doc.text(left, y0 + 12, what,
             {.size = svg::fitting_size(what, doc.width() - left - 16, 12), .bold = true, .cls = "grid-scale", .value = g.scale});
    doc.line(left - 10, y, right + 10, y, svg::ShapeStyle{.stroke = svg::kInk});
    // Grid points: at most about 40 drawn, else every n-th (the line would be solid).
    const double stride = std::max(1.0, std::ceil((kmax - kmin) / 40));
    for (double k = std::ceil(kmin / stride) * stride; k <= kmax; k += stride) {
        doc.circle(px(k), y, 3, svg::ShapeStyle{.fill = svg::kGrey, .cls = "grid-point", .value = k * g.scale});
        if (std::fmod(k, stride * 5) == 0) doc.text(px(k), y + 18, svg::number(k * g.scale, 4), {.size = 10, .anchor = "middle"});
    }
    for (std::size_t i = 0; i < g.x.size(); ++i) {
        const double xv = px(std::clamp(g.x[i] / g.scale, kmin, kmax)), xq = px(g.xhat[i] / g.scale);
        const double up = y - 22 - 8 * static_cast<double>(i % 4);
        doc.circle(xv, up, 3.5, svg::ShapeStyle{.fill = svg::kRed, .cls = "grid-value", .value = g.x[i]});
        doc.line(xv, up, xq, y, svg::ShapeStyle{.stroke = svg::kRed, .stroke_width = 0.8});
        doc.circle(xq, y, 4, svg::ShapeStyle{.fill = svg::kBlue, .cls = "grid-dequantized", .value = g.xhat[i]});
    }
}

}  // namespace

std::string quantize_values_figure(const ValuesQuant& v, const std::string& origin) {
    const double hist_h = 170, grid_h = 110;
    const double band = hist_h + grid_h;
    svg::Document doc(760, 60 + band * static_cast<double>(v.results.size()) + 16 + 15.0 * 2,
                      tr("quantize: error histogram and the grid"));
    doc.heading(trf("{0} bits, scale per {1}, rounding {2}", v.config.bits,
                    tr(to_string(v.config.granularity).substr(4)) +
                        (v.config.granularity == Granularity::Group ? trf(" of {0}", v.config.group_size) : ""),
                    tr(to_string(v.config.rounding))));
    for (std::size_t i = 0; i < v.results.size(); ++i) {
        const double y0 = 60 + band * static_cast<double>(i);
        histogram_panel(doc, v.results[i], y0, hist_h);
        grid_panel(doc, v.results[i], y0 + hist_h);
    }
    doc.inputs({trf("{0}, a {1} × {2} matrix (inferlab quantize)", origin, v.rows, v.cols),
                tr("first document §4.1: x̂ = Δ·clip(round(x/Δ), −Q, Q), asymmetric x̂ = Δ·(q − z)")});
    return doc.str();
}

std::string quantize_kv_figure(const KvQuantComparison& c, unsigned bits, const std::string& origin) {
    svg::BarChart ch;
    ch.title = tr("quantize: K per channel against per token (KIVI)");
    ch.subtitle = trf("{0}-bit MSE: K's outlier channels want a scale per channel; K per channel is {1}", bits,
                      c.k_per_channel_better ? tr("better") : tr("not better here"));
    ch.y_label = "MSE";
    ch.bars = {{.label = tr("per channel"), .value = c.k_per_channel.mse, .color = svg::kTeal, .group = "K"},
               {.label = tr("per token"), .value = c.k_per_token.mse, .color = svg::kGrey, .group = "K"},
               {.label = tr("per channel"), .value = c.v_per_channel.mse, .color = svg::kGrey, .group = "V"},
               {.label = tr("per token"), .value = c.v_per_token.mse, .color = svg::kAmber, .group = "V"}};
    for (auto& b : ch.bars) b.value_label = svg::number(b.value, 4);
    ch.inputs = {origin + " (inferlab quantize)"};
    return svg::bar_chart(ch);
}

std::string quantize_storage_figure(const StorageQuant& s) {
    const StorageCost& c = s.cost;
    svg::BarChart ch;
    ch.title = tr("quantize: bytes before and after");
    ch.subtitle = trf("{0} elements at {1} bits in groups of {2}: {3} bits per element with the metadata",
                      group_thousands(s.elements), s.bits, group_thousands(s.group_size), svg::number(c.bits_per_element, 6));
    ch.y_label = tr("bytes");
    svg::Bar before{.label = trf("source ({0} bits)", s.format.source_bits),
                    .value = static_cast<double>(c.source_bytes), .value_label = group_thousands(c.source_bytes) + " B",
                    .color = svg::kGrey};
    svg::Bar after{.label = trf("{0}-bit levels + metadata", s.bits), .value = static_cast<double>(c.total_bytes),
                   .value_label = group_thousands(c.total_bytes) + " B"};
    after.segments = {{static_cast<double>(c.data_bytes), svg::kBlue, tr("packed levels")},
                      {static_cast<double>(c.metadata_bytes), svg::kOrange, tr("scales and zero points")}};
    ch.bars = {before, after};
    ch.legend = {{tr("source"), svg::kGrey}, {tr("packed levels"), svg::kBlue}, {tr("scales + zero points"), svg::kOrange}};
    ch.inputs = {trf("{0}-bit scales{1} per group (inferlab quantize)", s.format.scale_bits,
                     s.format.zero_bits ? trf(", {0}-bit zero points", s.format.zero_bits) : "")};
    return svg::bar_chart(ch);
}

std::string quantize_model_figure(const KvModelQuant& m) {
    svg::BarChart ch;
    ch.title = trf("quantize: {0} in bytes per precision", m.model);
    ch.subtitle = trf("KV cache at S = {0} tokens (groups of {1}), and the weights; GB = 10^9 bytes", group_thousands(m.seq_len),
                      m.group_size);
    ch.y_label = "GB";
    for (const auto& r : m.rows) {
        svg::Bar b{.label = r.precision, .value = static_cast<double>(r.bytes.total_bytes) / 1e9,
                   .value_label = gb(r.bytes.total_bytes), .group = tr("KV cache")};
        b.segments = {{static_cast<double>(r.bytes.data_bytes) / 1e9, svg::kTeal, tr("data")},
                      {static_cast<double>(r.bytes.metadata_bytes) / 1e9, svg::kOrange, tr("scales and zero points")}};
        ch.bars.push_back(b);
    }
    for (const auto& w : m.weights) {
        svg::Bar b{.label = w.precision, .value = static_cast<double>(w.cost.total_bytes) / 1e9,
                   .value_label = gb(w.cost.total_bytes), .group = tr("weights")};
        b.segments = {{static_cast<double>(w.cost.data_bytes) / 1e9, svg::kBlue, tr("data")},
                      {static_cast<double>(w.cost.metadata_bytes) / 1e9, svg::kOrange, tr("scales")}};
        ch.bars.push_back(b);
    }
    ch.legend = {{tr("KV data"), svg::kTeal}, {tr("weights"), svg::kBlue}, {tr("scales + zero points"), svg::kOrange}};
    ch.inputs = {trf("{0}, base KV precision {1}, {2}-bit scales{3} (inferlab quantize)", m.model,
                     m.base.name, m.scale_bits, m.zero_bits ? trf(", {0}-bit zero points", m.zero_bits) : "")};
    return svg::bar_chart(ch);
}
}  // namespace inferlab::plots

namespace inferlab::figures {

std::string fig15_quant_grid(const GridInputs& in) {
    const std::int64_t Q = symmetric_qmax(in.bits);
    const ScalarQuant q = quantize_scalar(in.x, in.step, Q, Rounding::HalfAwayFromZero, nullptr);
    return plots::quant_grid_figure(
        q, {tr("Figure 15: the uniform grid and the dequantization error"), to_string(Rounding::HalfAwayFromZero), within_half_step(q),
            {trf("x = {0}, Δ = {1}, {2} bits: Q = 2^(b−1) − 1 = {3} (inferlab quantize)", svg::number(in.x, 6),
                 svg::number(in.step, 6), in.bits, Q),
             source_line("doc1-fig15")}});
}

}  // namespace inferlab::figures
