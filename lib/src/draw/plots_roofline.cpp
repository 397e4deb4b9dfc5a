// decode-roofline's and best-of-n's figures (--svg FILE): drawn from their result values, the
// same ones the text, JSON and CSV printers render. Every plotted number is a field of the result
// or a rate the result's library (roofline_result.hpp) derives from it; nothing is recomputed here.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/plots.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

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
    std::string over_list;
    for (const DecodeStep* s : by_batch(res)) {
        const double b = static_cast<double>(s->batch);
        agg.x.push_back(b), agg.y.push_back(s->aggregate_tokens_per_s);
        if (s->fits && !*s->fits) {
            over.x.push_back(b), over.y.push_back(s->aggregate_tokens_per_s);
            over_list += (over_list.empty() ? "" : ", ") + std::to_string(s->batch);
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
    if (!over_list.empty())
        pl.inputs.insert(pl.inputs.begin(), trf("does not fit the memory (weights + KV), shown in red: B = {0}", over_list));
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

// A log N axis past a 64-fold range: on a linear one the small N, where the curves bend, crowd the left.
bool wide(const std::vector<BestOfNRow>& rows) {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& r : rows) lo = std::min(lo, r.n), hi = std::max(hi, r.n);
    return hi >= 64 * lo;
}

}  // namespace

std::string decode_roofline_svg(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources) {
    std::vector<svg::LinePlot> panels = {throughput_panel(res, roofline_inputs(req, sources))};
    if (auto r = roofline_panel(req, res)) panels.push_back(std::move(*r));
    return svg::stacked_plots(tr("decode-roofline: tokens/s against batch, and the roofline"), panels);
}

std::string best_of_n_svg(const BestOfNRequest& req, const BestOfNResult& res, const std::vector<std::string>& sources) {
    std::vector<BestOfNRow> rows = res.rows;
    std::stable_sort(rows.begin(), rows.end(), [](const BestOfNRow& a, const BestOfNRow& b) { return a.n < b.n; });
    svg::LinePlot pl;
    pl.title = tr("best-of-n: coverage against selection");
    pl.subtitle = tr("Coverage 1 − (1 − p)^N: a correct candidate is present; the strategies: one is chosen");
    pl.x = {tr("N, candidates"), wide(rows), std::nullopt, std::nullopt};
    pl.y = {tr("probability"), false, 0.0, 1.0};
    svg::Series cov{tr("coverage (present)"), {}, {}, svg::kGreen}, one{tr("one sample (p)"), {}, {}, svg::kGrey, true, false};
    svg::Series ver{tr("verifier selection"), {}, {}, svg::kBlue}, maj{tr("majority vote"), {}, {}, svg::kAmber},
        judge{tr("biased judge"), {}, {}, svg::kRed}, hard{tr("coverage, hard fraction"), {}, {}, svg::kTeal, true},
        beta{tr("coverage, correlated (ρ)"), {}, {}, svg::kOrange, true};
    const auto add = [](svg::Series& s, double x, const std::optional<double>& y) {
        if (y) s.x.push_back(x), s.y.push_back(*y);
    };
    for (const auto& r : rows) {
        const double x = static_cast<double>(r.n);
        add(cov, x, r.coverage), add(one, x, res.p);
        add(ver, x, r.verifier_selection), add(maj, x, r.majority_vote), add(judge, x, r.biased_judge);
        add(hard, x, r.coverage_hard_fraction), add(beta, x, r.coverage_beta);
    }
    pl.series = {cov};
    for (svg::Series* s : {&ver, &maj, &judge, &hard, &beta})
        if (!s->x.empty()) pl.series.push_back(*s);
    pl.series.push_back(one);
    if (const auto& t = res.target) {
        svg::Series line{trf("target {0}", svg::number(t->target, 6)), {cov.x.front(), cov.x.back()}, {t->target, t->target},
                         svg::kInk, true, false};
        pl.series.push_back(line);
        if (t->min_n)
            pl.markers.push_back({static_cast<double>(*t->min_n),
                                  trf("N = {0} reaches it: coverage {1}", *t->min_n, svg::number(t->coverage_at_min_n, 6)),
                                  svg::kInk});
    }
    pl.inputs.push_back(trf("p = {0} per independent candidate", svg::number(res.p, 6)));
    if (req.verifier)
        pl.inputs.push_back(trf("verifier TPR = {0}, FPR = {1}; when it accepts none: {2}", svg::number(req.verifier->tpr, 6),
                                svg::number(req.verifier->fpr, 6), req.verifier->fallback_random ? tr("a random pick") : tr("abstain")));
    if (req.answer_dist) {
        std::vector<std::string> d;
        for (double v : *req.answer_dist) d.push_back(svg::number(v, 6));
        pl.inputs.push_back(trf("answers (correct first): {0}", fmt::format("{}", fmt::join(d, ", "))));
    }
    if (req.judge_bias) pl.inputs.push_back(trf("judge bias = {0}", svg::number(*req.judge_bias, 6)));
    if (req.hard_fraction) pl.inputs.push_back(trf("hard fraction h = {0}", svg::number(*req.hard_fraction, 6)));
    if (req.rho) pl.inputs.push_back("ρ = " + svg::number(*req.rho, 6));
    pl.inputs.insert(pl.inputs.end(), sources.begin(), sources.end());
    pl.inputs.push_back(tr("Source: first document §3.2 (coverage is not selection); inferlab best-of-n"));
    pl.height = 440 + 15.0 * static_cast<double>(pl.inputs.size());
    return svg::line_plot(pl);
}

}  // namespace inferlab::plots
