#include "inferlab/draw/serve_sim.hpp"

#include <algorithm>

#include "inferlab/base/i18n.hpp"
#include "inferlab/draw/svg.hpp"

namespace inferlab::plots {

namespace {

// The fraction of requests at or below each value (an empirical CDF), in milliseconds.
svg::Series cdf(const std::string& name, std::vector<double> v, const std::string& color) {
    std::sort(v.begin(), v.end());
    svg::Series s{name, {}, {}, color, false, false};
    const std::size_t step = std::max<std::size_t>(1, v.size() / kMaxTimePoints);
    for (std::size_t i = 0; i < v.size(); i += step) {
        s.x.push_back(v[i] * 1e3);
        s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(v.size()));
    }
    s.x.push_back(v.back() * 1e3);
    s.y.push_back(1);
    return s;
}

svg::LinePlot distribution(const std::string& title, const std::string& what, const std::vector<double>& v,
                           std::optional<double> slo, const std::vector<std::string>& inputs) {
    svg::LinePlot p;
    p.title = title;
    p.subtitle = tr("Fraction of requests at or below each time");
    p.x = {what, false, 0.0, std::nullopt};
    p.y = {tr("fraction of requests"), false, 0.0, 1.0};
    p.series = {cdf(title, v, svg::kBlue)};
    if (slo) p.markers.push_back({*slo * 1e3, trf(N_("SLO {0} ms"), svg::number(*slo * 1e3, 4)), svg::kRed});
    p.inputs = inputs;
    return p;
}

svg::LinePlot over_time(const ServeResult& run, const std::vector<std::string>& inputs, bool blocks) {
    svg::LinePlot p;
    p.title = blocks ? tr("KV blocks in use over time") : tr("Running requests and queue over time");
    p.subtitle = blocks ? tr("Blocks held at each step's fullest") : tr("Requests a step feeds, and requests waiting after it");
    p.x = {tr("time (s)"), false, 0.0, std::nullopt};
    p.y = {blocks ? tr("blocks") : tr("requests"), false, 0.0, std::nullopt};
    svg::Series a{blocks ? tr("blocks in use") : tr("running"), {}, {}, svg::kBlue, false, false};
    svg::Series q{tr("waiting"), {}, {}, svg::kRed, false, false};
    const std::size_t step = std::max<std::size_t>(1, run.steps.size() / kMaxTimePoints);
    for (std::size_t i = 0; i < run.steps.size(); i += step) {
        const ServeStepRow& r = run.steps[i];
        a.x.push_back(r.start_s);
        a.y.push_back(static_cast<double>(blocks ? r.used_blocks : r.running));
        q.x.push_back(r.start_s);
        q.y.push_back(static_cast<double>(r.waiting));
    }
    p.series = {a};
    if (!blocks) p.series.push_back(q);
    p.inputs = inputs;
    return p;
}

std::vector<svg::LinePlot> sweep_panels(const ServeSimResult& res, std::optional<double> slo_ttft_s,
                                        std::optional<double> slo_tpot_s, const std::vector<std::string>& inputs) {
    svg::LinePlot thr, lat;
    thr.title = tr("Output tokens/s against the arrival rate");
    thr.subtitle = tr("The same requests at every rate");
    lat.title = tr("p99 TTFT and TPOT against the arrival rate");
    lat.subtitle = tr("Dashed: the SLOs");
    thr.x = lat.x = {tr("arrival rate (req/s)"), true, std::nullopt, std::nullopt};
    thr.y = {tr("output tokens/s"), false, 0.0, std::nullopt};
    lat.y = {tr("p99 (ms)"), true, std::nullopt, std::nullopt};
    svg::Series tok{tr("output tokens/s"), {}, {}, svg::kBlue}, ttft{tr("p99 TTFT"), {}, {}, svg::kBlue},
        tpot{tr("p99 TPOT"), {}, {}, svg::kGreen};
    for (const SweepPoint& p : res.sweep) {
        tok.x.push_back(p.rate), tok.y.push_back(p.summary.output_tokens_per_s);
        ttft.x.push_back(p.rate), ttft.y.push_back(std::max(p.summary.ttft.p99 * 1e3, 1e-6));
        if (p.summary.tpot.count) tpot.x.push_back(p.rate), tpot.y.push_back(std::max(p.summary.tpot.p99 * 1e3, 1e-6));
    }
    thr.series = {tok};
    lat.series = {ttft};
    if (!tpot.x.empty()) lat.series.push_back(tpot);
    const double lo = res.sweep.front().rate, hi = res.sweep.back().rate;
    if (slo_ttft_s) lat.series.push_back({tr("TTFT SLO"), {lo, hi}, {*slo_ttft_s * 1e3, *slo_ttft_s * 1e3}, svg::kBlue, true, false});
    if (slo_tpot_s) lat.series.push_back({tr("TPOT SLO"), {lo, hi}, {*slo_tpot_s * 1e3, *slo_tpot_s * 1e3}, svg::kGreen, true, false});
    if (res.best_rate)
        for (auto* p : {&thr, &lat})
            p->markers.push_back({*res.best_rate, trf(N_("highest rate within the SLOs: {0}"), svg::number(*res.best_rate, 4)), svg::kRed});
    thr.inputs = lat.inputs = inputs;
    return {thr, lat};
}

}  // namespace

std::string serve_sim_svg(const ServeSimResult& res, std::optional<double> slo_ttft_s, std::optional<double> slo_tpot_s,
                          const std::vector<std::string>& inputs) {
    std::vector<double> ttft, tpot;
    for (const auto& q : res.run.requests) {
        ttft.push_back(q.ttft_s);
        if (q.tpot_s) tpot.push_back(*q.tpot_s);
    }
    std::vector<svg::LinePlot> panels;
    if (!res.sweep.empty())
        for (auto& p : sweep_panels(res, slo_ttft_s, slo_tpot_s, inputs)) panels.push_back(std::move(p));
    if (!ttft.empty()) panels.push_back(distribution(tr("TTFT distribution"), tr("TTFT (ms)"), ttft, slo_ttft_s, inputs));
    if (!tpot.empty()) panels.push_back(distribution(tr("TPOT distribution"), tr("TPOT (ms)"), tpot, slo_tpot_s, inputs));
    if (!res.run.steps.empty()) {
        panels.push_back(over_time(res.run, inputs, false));
        panels.push_back(over_time(res.run, inputs, true));
    }
    return svg::stacked_plots(tr("serve-sim: a server under load, step by step"), panels);
}

}  // namespace inferlab::plots
