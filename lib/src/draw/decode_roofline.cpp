// decode-roofline's drawings (decode_roofline.hpp).
#include "inferlab/draw/decode_roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::plots {
namespace {

// The rows in increasing B (the result keeps the order asked): a line on a log axis must not
// double back.
std::vector<const DecodeStep*> by_batch(const RooflineResult& res) {
    std::vector<const DecodeStep*> rows;
    for (const auto& s : res.rows) rows.push_back(&s);
    std::stable_sort(rows.begin(), rows.end(), [](const DecodeStep* a, const DecodeStep* b) { return a->batch < b->batch; });
    return rows;
}

std::vector<std::string> roofline_inputs(const RooflineRequest& req, const std::vector<std::string>& sources) {
    const DecodeModel& m = req.model;
    std::string kv;
    if (m.kv_bytes_per_request)
        kv = trf("M_KV = {0} per request", bytes_all_units(*m.kv_bytes_per_request));
    else if (!req.seq_lens.empty()) {
        std::string lens;
        for (std::size_t i = 0; i < req.seq_lens.size(); ++i) {
            // Plain digits: "100, 8,192" with thousands separators would read as three lengths.
            if (i > 0) lens += ", ";  // appended apart: GCC 12 warns (-Wrestrict, a false positive) on "" + string
            lens += std::to_string(req.seq_lens[i]);
        }
        kv = req.lens_are_batch ? trf("M_KV from the model at S = {0} (one request each)", lens)
                                : trf("M_KV from the model at S = {0} cached tokens per request", lens);
    }
    std::vector<std::string> lines = {
        fmt::format("W = {}; {}", bytes_all_units(m.weight_bytes), kv),
        "β = " + format_bandwidth(req.machine.bandwidth) +
            (req.machine.peak_flops ? "; π = " + format_flops(*req.machine.peak_flops) : tr("; no π: memory bound only"))};
    lines.insert(lines.end(), sources.begin(), sources.end());
    lines.push_back(tr("Source: first document §2.1.3 (D_B = W + Σ M_KV,i, t_B ≥ D_B/β); inferlab decode-roofline"));
    return lines;
}

svg::LinePlot throughput_panel(const RooflineResult& res, const std::vector<std::string>& inputs) {
    svg::LinePlot pl;
    pl.title = tr("Decode throughput against batch: the weight read is shared");
    pl.subtitle = tr("R_all ≤ B / t_B grows with B; R_one ≤ 1 / t_B falls: no request's next token comes sooner");
    pl.x = {tr("B, requests in the batch"), true, std::nullopt, std::nullopt};
    pl.y = {"tokens/s", true, std::nullopt, std::nullopt};
    svg::Series agg{tr("aggregate R_all"), {}, {}, svg::kBlue}, one{tr("per request R_one"), {}, {}, svg::kTeal},
        mem{tr("memory bound B·β/D_B"), {}, {}, svg::kGrey, true, false},
        comp{tr("compute bound B·π/F_B"), {}, {}, svg::kOrange, true, false};
    // Batches whose weights + KV exceed --memory: drawn again in red, as the text marks them NO.
    svg::Series over{tr("does not fit the memory (weights + KV)"), {}, {}, svg::kRed, false, true};
    std::vector<std::uint64_t> over_batches;  // in increasing B: said as ranges
    for (const DecodeStep* s : by_batch(res)) {
        const double b = static_cast<double>(s->batch);
        agg.x.push_back(b), agg.y.push_back(s->aggregate_tokens_per_s);
        if (s->fits && !*s->fits) {
            over.x.push_back(b), over.y.push_back(s->aggregate_tokens_per_s);
            over_batches.push_back(s->batch);
        }
        one.x.push_back(b), one.y.push_back(s->per_request_tokens_per_s);
        mem.x.push_back(b), mem.y.push_back(memory_bound_tokens_per_s(*s));
        if (const auto c = compute_bound_tokens_per_s(*s)) comp.x.push_back(b), comp.y.push_back(*c);
    }
    pl.series = {agg, one, mem};
    // Only when every row has it: a line through some rows would read as a bound that stops.
    if (comp.x.size() == res.rows.size()) pl.series.push_back(comp);
    if (!over.x.empty()) pl.series.push_back(over);
    if (res.compute_bound_from_batch)
        pl.markers.push_back({static_cast<double>(*res.compute_bound_from_batch),
                              trf("compute-bound from B = {0}", group_thousands(*res.compute_bound_from_batch)), svg::kRed});
    pl.inputs = inputs;
    if (res.compute_limit_searched && !res.compute_bound_from_batch)
        pl.inputs.insert(pl.inputs.begin(), tr("memory-bound at every batch size: no switching batch"));
    if (!over_batches.empty())
        pl.inputs.insert(pl.inputs.begin(),
                         trf("does not fit the memory (weights + KV), shown in red: B = {0}", number_ranges(over_batches)));
    pl.height = 440 + 15.0 * static_cast<double>(pl.inputs.size());
    return pl;
}

// None when a row has no intensity (no FLOPs) or there is no π: no roof to draw against.
std::optional<svg::LinePlot> roofline_panel(const RooflineRequest& req, const RooflineResult& res) {
    if (!req.machine.peak_flops || !res.ridge_flops_per_byte) return std::nullopt;
    svg::Series pts{tr("decode step at B"), {}, {}, svg::kBlue};
    for (const DecodeStep* s : by_batch(res)) {
        const auto f = achieved_flops_per_s(*s);
        if (!s->intensity || !f || !(*s->intensity > 0)) return std::nullopt;
        pts.x.push_back(*s->intensity), pts.y.push_back(*f);
    }
    const double ridge = *res.ridge_flops_per_byte;
    const auto [lo_it, hi_it] = std::minmax_element(pts.x.begin(), pts.x.end());
    // The roof from a quarter of the lowest intensity to four times past the ridge or the highest.
    const double lo = std::min(*lo_it, ridge) / 4, hi = std::max(*hi_it, ridge) * 4;
    svg::Series roof{tr("roof min(π, β·I)"), {}, {}, svg::kInk, false, false};
    for (double i : {lo, ridge, hi}) roof.x.push_back(i), roof.y.push_back(attainable_flops_per_s(req.machine, i));
    svg::LinePlot pl;
    pl.title = tr("Roofline: arithmetic intensity against FLOP/s");
    pl.subtitle = tr("Left of the ridge π/β a step waits on memory; each point is one batch's decode step");
    pl.x = {tr("arithmetic intensity I = F_B / D_B (FLOP/B)"), true, std::nullopt, std::nullopt};
    pl.y = {tr("FLOP/s achieved, F_B / t_B"), true, std::nullopt, std::nullopt};
    pl.series = {pts, roof};
    pl.markers.push_back({ridge, trf("ridge π/β = {0} FLOP/B", svg::number(ridge, 4)), svg::kRed});
    const auto rows = by_batch(res);
    std::vector<std::string> batches;
    for (const DecodeStep* s : rows) batches.push_back(std::to_string(s->batch));
    // A long sweep is named by its ends: a list of 512 batches would run off the figure.
    const std::string b_list = rows.size() <= 12 ? fmt::format("{}", fmt::join(batches, ", "))
                                                 : trf("{0} … {1} ({2} batches)", batches.front(), batches.back(), rows.size());
    pl.inputs = {trf("B = {0} (left to right: intensity grows with B)", b_list),
                 fmt::format("π = {}, β = {}", format_flops(*req.machine.peak_flops), format_bandwidth(req.machine.bandwidth))};
    return pl;
}

}  // namespace

std::string decode_roofline_svg(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources) {
    std::vector<svg::LinePlot> panels = {throughput_panel(res, roofline_inputs(req, sources))};
    if (auto r = roofline_panel(req, res)) panels.push_back(std::move(*r));
    return svg::stacked_plots(tr("decode-roofline: tokens/s against batch, and the roofline"), panels);
}
}  // namespace inferlab::plots

namespace inferlab::figures {

namespace {

std::string gb3(std::uint64_t bytes) { return fmt::format("{:.3f} GB", bytes_in_gb(bytes)); }

}  // namespace

std::string fig9_decode_reads(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources) {
    const DecodeModel& m = req.model;
    svg::BarChart ch;
    ch.title = m.moe ? tr(N_("Figure 9: bytes one decode step reads, D_B = W_B + B·M_KV"))
                     : tr("Figure 9: bytes one decode step reads, D_B = W + B·M_KV");
    ch.subtitle = m.moe ? tr(N_("MoE: W_B is the weights a step reads, once; every request's K/V is read for that request"))
                        : tr("The weights are read once per step; every request's K/V is read for that request");
    ch.y_label = tr("D_B (GB, 10^9 bytes)");
    ch.sublabels_left_out = tr(N_("each bar's tokens/s, too many bars to print under them: inferlab decode-roofline prints them"));
    for (const DecodeStep& step : res.rows) {
        const std::uint64_t b = step.batch;
        svg::Bar bar;
        bar.label = fmt::format("B = {}", b);
        // Two lines, each with the rate it shows (to two decimals, as decode-roofline's table).
        bar.sublabels = {{trf("≤ {0} tok/s all", fmt::format("{:.2f}", step.aggregate_tokens_per_s)), step.aggregate_tokens_per_s},
                         {trf("≤ {0} each", fmt::format("{:.2f}", step.per_request_tokens_per_s)), step.per_request_tokens_per_s}};
        bar.value = bytes_in_gb(step.bytes);
        bar.value_label = gb3(step.bytes);
        // An MoE step reads W_B (the experts its B tokens route to), which grows with B.
        bar.segments.push_back({bytes_in_gb(step.weight_bytes), svg::kBlue,
                                m.moe ? trf(N_("weights read W_B at B = {0}"), b) : tr("weights W")});
        // K and V of each request as a teal and an amber band, while they stay wide enough to see,
        // else K and V of all B requests as one band each; requests of their own lengths (a list of
        // --seq-len) each get their own M_KV. K and V split by their real widths (kv_shares); a
        // fixed --kv-bytes-per-request has no split, and is drawn as one band of K/V.
        // `one`: the K/V of request `who`; else of all `who` requests. Labels by what the band holds.
        auto add_kv = [&](double gb, std::uint64_t len, bool one, std::uint64_t who) {
            const auto label = [&](const char* of_one, const char* of_all) { return trf(one ? of_one : of_all, who); };
            if (!m.kv_spec) {
                bar.segments.push_back({gb, svg::kTeal, label(N_("K/V of request {0}"), N_("K/V of all {0} requests"))});
                return;
            }
            const KvShares sh = kv_shares(*m.kv_spec, len);
            bar.segments.push_back({gb * sh.k, svg::kTeal,
                                    sh.latent ? label(N_("K/V latent of request {0}"), N_("K/V latent of all {0} requests"))
                                              : label(N_("K of request {0}"), N_("K of all {0} requests"))});
            if (sh.v > 0) bar.segments.push_back({gb * sh.v, svg::kAmber, label(N_("V of request {0}"), N_("V of all {0} requests"))});
        };
        const std::uint64_t first_len = req.seq_lens.empty() ? 0 : req.seq_lens.front();
        if (b <= 16) {
            for (std::uint64_t i = 0; i < b; ++i) {
                const std::uint64_t len = req.lens_are_batch ? req.seq_lens[i] : first_len;
                const double per = req.lens_are_batch ? bytes_in_gb(request_kv_bytes(m, len))
                                                      : bytes_in_gb(step.kv_bytes) / static_cast<double>(b);
                add_kv(per, len, true, i + 1);
            }
        } else {
            add_kv(bytes_in_gb(step.kv_bytes), first_len, false, b);
        }
        ch.bars.push_back(bar);
    }
    // The legend names what the bars draw: K and V apart, a latent, or K/V without a split.
    const KvShares sh = m.kv_spec ? kv_shares(*m.kv_spec, req.seq_lens.empty() ? 0 : req.seq_lens.front()) : KvShares{};
    ch.legend = {{m.moe ? tr(N_("weights read W_B (MoE: the always-read part + the experts B tokens route to, once)"))
                        : tr("weights W (once)"),
                  svg::kBlue}};
    if (!m.kv_spec)
        ch.legend.push_back({tr("K/V of each request (one figure: K and V not apart)"), svg::kTeal});
    else if (sh.latent)
        ch.legend.push_back({tr("K/V latent of each request (MLA: one vector for both)"), svg::kTeal});
    else
        ch.legend.push_back({tr("K of each request"), svg::kTeal});
    if (m.kv_spec && sh.v > 0) ch.legend.push_back({tr("V of each request"), svg::kAmber});
    std::string kv;
    if (req.lens_are_batch) {
        kv = tr("M_KV per request from its own length");
    } else {
        const std::uint64_t m_kv = request_kv_bytes(m, req.seq_lens.empty() ? 0 : req.seq_lens.front());
        kv = trf("M_KV = {0} B ({1}) per request", group_thousands(m_kv), binary_size(m_kv));
    }
    ch.inputs = {fmt::format("W = {} B ({}), {}", group_thousands(m.weight_bytes), decimal_size(m.weight_bytes), kv),
                 "β = " + format_bandwidth(req.machine.bandwidth) +
                     (req.machine.peak_flops ? ", π = " + format_flops(*req.machine.peak_flops) : tr(", no π: memory bound only"))};
    ch.inputs.insert(ch.inputs.end(), sources.begin(), sources.end());
    ch.inputs.push_back(tr("t_B ≥ D_B / β; aggregate ≤ B / t_B, each request ≤ 1 / t_B (inferlab decode-roofline)"));
    ch.inputs.push_back(source_line("doc1-fig9"));
    ch.height = 425 + 15.0 * static_cast<double>(sources.size());
    return svg::bar_chart(ch);
}

}  // namespace inferlab::figures
