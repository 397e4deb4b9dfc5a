// best-of-n's drawings (best_of_n.hpp).
#include "inferlab/draw/best_of_n.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/best_of_n.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::plots {
namespace {

// A log N axis past a 64-fold range: on a linear one the small N, where the curves bend, crowd the left.
bool wide(const std::vector<BestOfNRow>& rows) {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& r : rows) lo = std::min(lo, r.n), hi = std::max(hi, r.n);
    return hi >= 64 * lo;
}

}  // namespace

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
std::string search_svg(const SearchRequest& req, const SearchResult& res) { return svg::line_plot(search_plot(req, res)); }

svg::LinePlot search_plot(const SearchRequest& req, const SearchResult& res) {
    std::vector<SearchRow> rows = res.rows;
    std::stable_sort(rows.begin(), rows.end(), [](const SearchRow& a, const SearchRow& b) { return a.steps < b.steps; });
    const SearchSpec& s = req.spec;
    svg::LinePlot pl;
    pl.title = tr("best-of-n --search: success against the number of steps");
    pl.subtitle = tr("A process scorer judges every step; best-of-N spends the same generated steps on whole trajectories");
    pl.x = {tr("T, steps of the task"), false, std::nullopt, std::nullopt};
    pl.y = {tr("P(correct answer)"), false, 0.0, 1.0};
    svg::Series search{trf("search (k = {0}, w = {1})", s.branch, s.beam), {}, {}, svg::kBlue},
        bon{tr("best-of-N, outcome verifier, same steps"), {}, {}, svg::kAmber};
    for (const auto& r : rows) {
        search.x.push_back(static_cast<double>(r.steps)), search.y.push_back(r.success);
        if (r.best_of_n) bon.x.push_back(static_cast<double>(r.steps)), bon.y.push_back(r.best_of_n->success);
    }
    pl.series = {search};
    if (!bon.x.empty()) pl.series.push_back(bon);
    if (const auto& c = res.crossing)
        pl.markers.push_back({static_cast<double>(c->first_steps),
                              trf("T = {0}: {1} ahead from here", c->first_steps, tr(c->after)), svg::kInk});
    pl.inputs.push_back(trf("q = {0}: a step continuing a correct branch is correct", svg::number(s.q, 6)));
    pl.inputs.push_back(s.scorer.kind == ProcessScorer::Kind::rates
                            ? trf("process scorer: TPR {0}, FPR {1} per step", svg::number(s.scorer.tpr, 6),
                                  svg::number(s.scorer.fpr, 6))
                            : trf("process scorer: score gap {0}, noise σ {1}", svg::number(s.scorer.gap, 6),
                                  svg::number(s.scorer.sigma, 6)));
    if (req.best_of_n)
        pl.inputs.push_back(trf("outcome verifier TPR = {0}, FPR = {1}{2}", svg::number(req.best_of_n->tpr, 6),
                                svg::number(req.best_of_n->fpr, 6), s.outcome ? tr(", also over the final beam") : ""));
    pl.inputs.push_back(tr("Source: first document §3.2 (search lets scoring errors accumulate); inferlab best-of-n --search"));
    pl.height = 440 + 15.0 * static_cast<double>(pl.inputs.size());
    return pl;
}

}  // namespace inferlab::plots

namespace inferlab::figures {

std::string fig14_coverage(const BestOfNRequest& req, const BestOfNResult& res, std::uint64_t marked_n,
                           bool verifier_chosen, const std::optional<SearchPanel>& search) {
    std::vector<BestOfNRow> rows = res.rows;
    std::stable_sort(rows.begin(), rows.end(), [](const BestOfNRow& a, const BestOfNRow& b) { return a.n < b.n; });
    svg::LinePlot pl;
    pl.title = tr("Figure 14: a correct candidate appears; is it chosen?");
    pl.subtitle = req.verifier ? trf("Coverage 1 − (1 − p)^N counts presence; a verifier (TPR {0}, FPR {1}) decides what is chosen",
                                     svg::number(req.verifier->tpr), svg::number(req.verifier->fpr))
                               : tr("Coverage 1 − (1 − p)^N counts presence; a selection step decides what is chosen");
    pl.x = {tr("N, candidates"), false, 0.0, std::nullopt};
    pl.y = {tr("probability"), false, 0.0, 1.0};
    svg::Series cov{tr("coverage (present)"), {}, {}, svg::kGreen}, sel{tr("selected (verifier)"), {}, {}, svg::kBlue},
        maj{tr("selected (majority vote)"), {}, {}, svg::kAmber}, judge{tr("selected (biased judge)"), {}, {}, svg::kRed},
        hard{tr("coverage, hard fraction"), {}, {}, svg::kTeal, true}, beta{tr("coverage, correlated (ρ)"), {}, {}, svg::kOrange, true},
        one{tr("one sample (p)"), {}, {}, svg::kGrey, true, false};
    const auto add = [](svg::Series& s, double x, const std::optional<double>& y) {
        if (y) s.x.push_back(x), s.y.push_back(*y);
    };
    const BestOfNRow* marked = nullptr;
    for (const auto& r : rows) {
        const double x = static_cast<double>(r.n);
        add(cov, x, r.coverage), add(one, x, res.p), add(sel, x, r.verifier_selection), add(maj, x, r.majority_vote);
        add(judge, x, r.biased_judge), add(hard, x, r.coverage_hard_fraction), add(beta, x, r.coverage_beta);
        if (r.n == marked_n) marked = &r;
    }
    pl.series = {cov};
    for (svg::Series* s : {&sel, &maj, &judge, &hard, &beta})
        if (!s->x.empty()) pl.series.push_back(*s);
    pl.series.push_back(one);
    if (marked)
        pl.markers.push_back({static_cast<double>(marked_n),
                              trf("N = {0}: coverage {1}{2}", marked_n, svg::number(marked->coverage, 4),
                                  marked->verifier_selection ? trf(", selected {0}", svg::number(*marked->verifier_selection, 4)) : ""),
                              svg::kInk});
    if (const auto& t = res.target) {
        pl.series.push_back({trf("target {0}", svg::number(t->target, 6)), {cov.x.front(), cov.x.back()}, {t->target, t->target},
                             svg::kInk, true, false});
        if (t->min_n)
            pl.markers.push_back({static_cast<double>(*t->min_n), trf("N = {0} reaches the target", *t->min_n), svg::kRed});
    }
    pl.inputs = {trf("p = {0} per independent candidate", svg::number(res.p))};
    if (req.verifier)
        pl.inputs.push_back(trf("verifier TPR = {0}, FPR = {1}, {2} when it accepts none{3}", svg::number(req.verifier->tpr),
                                svg::number(req.verifier->fpr), req.verifier->fallback_random ? tr("a random pick") : tr("abstains"),
                                verifier_chosen ? tr(" (not the document's: chosen to show the gap)") : ""));
    if (req.answer_dist)
        pl.inputs.push_back(trf("answers (correct first): {0} and {1} wrong", svg::number(req.answer_dist->front()),
                                req.answer_dist->size() - 1));
    if (req.judge_bias) pl.inputs.push_back(trf("judge bias = {0}", svg::number(*req.judge_bias)));
    if (req.hard_fraction) pl.inputs.push_back(trf("hard fraction h = {0}", svg::number(*req.hard_fraction)));
    if (req.rho) pl.inputs.push_back("ρ = " + svg::number(*req.rho));
    pl.inputs.push_back(tr("inferlab best-of-n: coverage and each selection strategy asked for"));
    pl.inputs.push_back(source_line("doc1-fig14"));
    pl.height = 425 + 15.0 * static_cast<double>(pl.inputs.size());
    if (!search) return svg::line_plot(pl);
    // The search panel: §3.2's "search lets scoring errors accumulate over steps", beside the
    // presence-and-choice panel, each with its own axes and inputs.
    svg::LinePlot steps = plots::search_plot(search->req, search->res);
    steps.title = tr("Search: the process scorer's errors accumulate over the steps");
    steps.inputs.insert(steps.inputs.begin(), tr("search panel: q, k, w and the scorer chosen to show the accumulation (the "
                                                 "document gives no numbers)"));
    return svg::stacked_plots(pl.title, {pl, steps});
}

}  // namespace inferlab::figures
