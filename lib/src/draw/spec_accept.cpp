// spec-accept's drawings (spec_accept.hpp).
#include "inferlab/draw/spec_accept.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::plots {
namespace {

std::string list(const std::vector<double>& v) {
    std::string t;
    for (double x : v) t += (t.empty() ? "" : ", ") + svg::number(x, 6);
    return "[" + t + "]";
}

// The names the library gives the rounding rules and granularities (quant.hpp's to_string, past
// "per ") and a rejected draft's fate before its ':' (spec.hpp's RoundStep::fate), marked for the
// catalogue: the figures print them through tr().
[[maybe_unused]] constexpr const char* kLibraryNames[] = {N_("half away from zero"), N_("half to even"), N_("stochastic"),
                                                          N_("tensor"), N_("group"), N_("row"), N_("column"), N_("rejected")};

std::string sweep_figure(const SpecExpected& e, std::size_t gamma) {
    svg::LinePlot pl;
    pl.title = tr("spec-accept: tokens per round and speedup against γ");
    pl.subtitle = trf("α = {0} ({1}): E[tokens per round] = (1 − α^(γ+1)) / (1 − α){2}", svg::number(e.alpha, 6),
                      e.alpha_from_pq ? "Σ min(p, q)" : tr("given"), e.cost_ratio ? tr("; speedup = E / (γc + 1)") : "");
    pl.x = {tr("γ, drafts per round"), false, 0.0, std::nullopt};
    pl.y = {e.cost_ratio ? tr("tokens per round; speedup (×)") : tr("tokens per round"), false, 0.0, std::nullopt};
    svg::Series tokens{tr("E[tokens per round]"), {}, {}, svg::kBlue}, speed{tr("speedup"), {}, {}, svg::kOrange};
    for (const GammaPoint& g : e.sweep) {
        tokens.x.push_back(static_cast<double>(g.gamma)), tokens.y.push_back(g.expected_tokens_per_round);
        if (g.speedup) speed.x.push_back(static_cast<double>(g.gamma)), speed.y.push_back(*g.speedup);
    }
    pl.series = {tokens};
    if (e.cost_ratio) pl.series.push_back(speed);
    // Short marker labels (they share one line at the foot of the plot); the numbers go below.
    pl.markers.push_back({static_cast<double>(gamma), fmt::format("γ = {}", gamma), svg::kInk});
    const bool best_elsewhere = e.choice && e.choice->best && *e.choice->best != gamma;
    if (best_elsewhere) pl.markers.push_back({static_cast<double>(*e.choice->best), tr("best"), svg::kGreen});
    std::string at = trf("at γ = {0}: {1} tokens per round", gamma, svg::number(e.expected_tokens_per_round, 6));
    if (e.speedup) at += trf(", speedup {0}×", svg::number(*e.speedup, 6));
    if (e.choice) {
        if (!e.choice->best) at += tr("; no γ speeds decoding up");
        else at += trf("; best γ = {0} ({1}×){2}", *e.choice->best, svg::number(e.choice->best_speedup, 6),
                       e.choice->at_edge ? tr(", the sweep's edge, not an optimum") : "");
    }
    pl.inputs = {trf("α = {0}, γ = {1}{2}; γ = 1..{3} (inferlab spec-accept)",
                     svg::number(e.alpha, 6), gamma,
                     e.cost_ratio ? ", c = " + svg::number(*e.cost_ratio, 6) : tr(", no cost ratio (--cost-ratio adds the speedup)"),
                     e.sweep.size()),
                 at, tr("first document §3.1.1 (draft length and acceptance)")};
    return svg::line_plot(pl);
}

std::string position_figure(const SpecPosition& pos, const SpecSimulation* sim) {
    const Acceptance<double>& a = pos.a;
    // Four bars a token: past 64 tokens (a real vocabulary) the chart would be thousands of
    // bars no one can read, so it is refused rather than drawn unreadably.
    if (pos.p.size() > kMaxDrawnTokens)
        throw InputError(tr("per-token chart"), trf("{0} tokens", pos.p.size()), N_("draws at most {0} tokens"),
                         {std::to_string(kMaxDrawnTokens)});  // callers check first
    svg::BarChart ch;
    ch.title = tr("spec-accept: acceptance mass and residual, one position");
    ch.subtitle = trf("accepted Σ min(p, q) = {0}, rejected {1}; the residual r = [p − q]₊ / Σ[p − q]₊ refills p",
                      svg::number(a.accept_prob, 6), svg::number(a.reject_prob, 6));
    ch.y_label = tr("probability");
    const bool many = pos.p.size() > 8;  // past 8 tokens the group headings would overlap
    for (std::size_t v = 0; v < pos.p.size(); ++v) {
        const std::string g = trf("token {0}", v);
        ch.bars.push_back({.label = many ? "" : "p", .value = pos.p[v], .color = svg::kBlue, .group = g});
        ch.bars.push_back({.label = many ? "" : "q", .value = pos.q[v], .color = svg::kGrey, .group = g});
        ch.bars.push_back({.label = many ? "" : "min", .value = a.accepted[v], .color = svg::kGreen, .group = g});
        ch.bars.push_back({.label = many ? "" : "r", .value = a.residual[v], .color = svg::kRed, .group = g});
        if (sim) ch.bars.push_back({.label = many ? "" : tr("sim"), .value = sim->speculative[v], .color = svg::kOrange, .group = g});
    }
    ch.legend = {{tr("p (target)"), svg::kBlue}, {tr("q (draft)"), svg::kGrey}, {tr("accepted q·α = min(p, q)"), svg::kGreen},
                 {tr("residual r"), svg::kRed}};
    if (sim) ch.legend.push_back({tr("simulated output"), svg::kOrange});
    ch.inputs = {"p = " + list(pos.p) + ", q = " + list(pos.q) +
                     (pos.source == PositionSource::Logits
                          ? trf(" (softmax of the logits at temperature {0})", svg::number(pos.temperature))
                          : ""),
                 trf("output = q·α + reject·r = {0} (inferlab spec-accept); first document §3.1.2, Figure 13", list(a.output))};
    if (sim)
        ch.inputs.insert(ch.inputs.begin() + 1,
                         trf("simulated: {0} samples, seed {1}: the speculative rule's output frequencies, "
                             "χ² p-value {2} against p",
                             group_thousands(sim->samples), sim->seed, svg::number(sim->speculative_fit.p_value, 4)));
    ch.width = std::max(720.0, 120 + (sim ? 5 : 4) * 14 * static_cast<double>(pos.p.size()));
    return svg::bar_chart(ch);
}

std::string round_figure(const RoundWalkthrough& w) {
    const double cell = 70, left = 40, top = 90;
    svg::Document doc(std::max(640.0, left * 2 + cell * static_cast<double>(w.steps.size())), 260 + 15.0 * 2,
                      tr("spec-accept: one draft round, judged left to right"));
    const std::string advanced = w.tokens_advanced == 1 ? tr("1 token advanced") : trf("{0} tokens advanced", w.tokens_advanced);
    doc.heading(trf("γ = {0}: {1} accepted, {2} ({3} + 1 {4}), {5} discarded", w.gamma, w.accepted, advanced, w.accepted,
                    w.bonus ? tr("bonus") : tr("resampled"), w.discarded));
    for (std::size_t i = 0; i < w.steps.size(); ++i) {
        const RoundStep& s = w.steps[i];
        const bool ok = s.fate == "accepted" || s.fate == "bonus";
        const bool rej = s.fate.rfind("rejected", 0) == 0;
        const std::string color = ok ? svg::kGreen : rej ? svg::kRed : svg::kGrey;
        const double x = left + cell * static_cast<double>(i);
        doc.rect(x, top, cell - 8, 50,
                 svg::ShapeStyle{.fill = color, .cls = "draft", .value = static_cast<double>(s.position), .tooltip = s.why});
        doc.text(x + (cell - 8) / 2, top + 30, std::to_string(s.position), {.size = 14, .anchor = "middle", .fill = "#ffffff", .bold = true});
        doc.text(x + (cell - 8) / 2, top + 70, tr(s.fate.substr(0, s.fate.find(':'))), {.size = 10, .anchor = "middle", .cls = "fate"});
    }
    doc.text(left, top + 110,
             trf("tokens advanced {0}, draft proposals {1}, target positions verified {2}", w.tokens_advanced,
                 w.draft_proposals, w.target_positions),
             {.size = 13, .bold = true, .cls = "tokens-advanced", .value = static_cast<double>(w.tokens_advanced)});
    doc.inputs({trf("a scripted round of γ = {0} drafts (inferlab spec-accept)", w.gamma),
                tr("first document §3.1.1, Figure 11")});
    return doc.str();
}

}  // namespace

std::string spec_accept_figure(const SpecAcceptResult& r) {
    if (r.expected && r.gamma) return sweep_figure(*r.expected, *r.gamma);
    if (r.position) return position_figure(*r.position, r.simulation ? &*r.simulation : nullptr);
    if (r.round) return round_figure(*r.round);
    throw Error(N_("this spec-accept result has nothing to draw (no sweep, position or round)"));
}
}  // namespace inferlab::plots

namespace inferlab::figures {

std::string fig11_round(const RoundInputs& in) {
    const RoundWalkthrough w = walk_round(in.gamma, in.outcomes);
    const double col = std::min(120.0, 560.0 / static_cast<double>(w.steps.size())), left = 170, top = 70;
    svg::Document doc(760, top + 250 + 16 + 15.0 * 3, tr("Figure 11: verified at once, accepted along the prefix"));
    doc.heading(tr("The target computes every draft position in one pass; acceptance still moves left to right"));
    const std::string rows[] = {tr("draft proposes"), tr("target, one pass"), tr("judged in order")};
    for (int r = 0; r < 3; ++r) doc.text(16, top + 30 + 64.0 * r, rows[r], {.size = 12, .bold = true});
    doc.rect(left - 6, top + 66, col * static_cast<double>(std::count_if(w.steps.begin(), w.steps.end(),
                                                                          [](const RoundStep& s) { return s.target_verified; })) + 12,
             48, svg::ShapeStyle{.stroke = svg::kBlue, .dashed = true});
    for (std::size_t i = 0; i < w.steps.size(); ++i) {
        const RoundStep& s = w.steps[i];
        const double x = left + col * static_cast<double>(i);
        if (s.drafted) {
            doc.rect(x, top + 10, col - 12, 30, svg::ShapeStyle{.fill = "#dde6f3", .stroke = svg::kBlue});
            doc.text(x + (col - 12) / 2, top + 30, trf("draft {0}", s.position), {.size = 11, .anchor = "middle"});
        }
        if (s.target_verified) {
            doc.rect(x, top + 74, col - 12, 30, svg::ShapeStyle{.fill = svg::kBlue});
            doc.text(x + (col - 12) / 2, top + 94, trf("p at {0}", s.position), {.size = 11, .anchor = "middle", .fill = "#ffffff"});
        }
        const bool accepted = s.fate == "accepted", bonus = s.fate == "bonus", discarded = s.fate == "discarded";
        const char* color = accepted || bonus ? svg::kGreen : discarded ? svg::kGrey : svg::kRed;
        const std::string word = accepted ? tr("accepted") : bonus ? tr("bonus token") : discarded ? tr("discarded") : tr("rejected");
        doc.rect(x, top + 138, col - 12, 30, svg::ShapeStyle{.fill = color, .cls = "fate", .tooltip = tr(s.why)});
        doc.text(x + (col - 12) / 2, top + 158, word, {.size = 11, .anchor = "middle", .fill = "#ffffff", .cls = "fate-label"});
        if (s.fate.rfind("rejected", 0) == 0)
            doc.text(x + (col - 12) / 2, top + 184, tr("resampled from r"), {.size = 10, .anchor = "middle", .fill = svg::kRed});
        if (i > 0 && !discarded) doc.arrow(x - 12, top + 153, x, top + 153, svg::kInk, 1.2);
    }
    doc.text(16, top + 220,
             trf("{0} drafts proposed, {1} positions verified, {2} accepted, {3} discarded: the round advances {4} tokens",
                 w.draft_proposals, w.target_positions, w.accepted, w.discarded, w.tokens_advanced),
             {.size = 13, .bold = true, .cls = "advanced", .value = static_cast<double>(w.tokens_advanced)});
    std::string outcomes;
    for (const auto& o : in.outcomes) outcomes += (outcomes.empty() ? "" : ",") + o;
    doc.inputs({trf("γ = {0}, outcomes {1} (inferlab spec-accept)", in.gamma, outcomes),
                tr("A draft after a rejection was computed on a prefix that no longer exists, so it is discarded"),
                source_line("doc1-fig11")});
    return doc.str();
}

std::string fig12_accepted_counts(const AcceptedCountInputs& in) {
    const std::vector<double> dist = accepted_count_distribution(in.alpha, in.gamma);
    svg::BarChart ch;
    ch.title = tr("Figure 12: where a round stops");
    ch.subtitle = trf("P(k drafts accepted) at α = {0}, γ = {1}: expected tokens per round {2}", svg::number(in.alpha), in.gamma,
                      svg::number(expected_tokens_per_round(in.alpha, in.gamma), 4));
    ch.y_label = tr("probability");
    for (std::size_t k = 0; k < dist.size(); ++k) {
        svg::Bar b;
        b.label = fmt::format("k = {}", k);
        if (k == in.gamma) b.sublabels = {{tr("all accepted, + bonus")}};
        else b.sublabels = {{k == 0 ? tr("1 token out") : trf("{0} tokens out", k + 1), static_cast<double>(k + 1)}};
        b.value = dist[k];
        b.value_label = svg::number(dist[k], 4);
        b.color = k == in.gamma ? svg::kGreen : svg::kBlue;
        ch.bars.push_back(b);
    }
    ch.sublabels_left_out = tr("the tokens each k gives, k + 1 (all accepted: γ + 1 with the bonus), left out under the bars (too narrow)");
    ch.inputs = {trf("α = {0} per position, independent; γ = {1} (inferlab spec-accept)", svg::number(in.alpha),
                     in.gamma),
                 source_line("doc1-fig12")};
    return svg::bar_chart(ch);
}

std::string fig13_acceptance(const AcceptanceInputs& in) {
    const Acceptance<double> a = acceptance(in.p, in.q);
    svg::BarChart ch;
    ch.title = tr("Figure 13: acceptance mass and residual");
    // The document's "on a three-token vocabulary", of the vocabulary drawn.
    ch.caption = trf("Acceptance mass and residual on a {0}-token vocabulary", in.p.size());
    ch.subtitle = trf("Accepted mass Σ min(p, q) = {0}, rejected {1}; the residual r puts the rejected mass back where p > q",
                      svg::number(a.accept_prob, 4), svg::number(a.reject_prob, 4));
    ch.y_label = tr("probability");
    for (std::size_t v = 0; v < in.p.size(); ++v) {
        const std::string g = trf("token {0}", v);  // numbered from 0, as spec-accept's table, CSV and JSON
        // One letter a bar, named in the legend: "q (draft)" under bars 40 px wide ran into the next label.
        ch.bars.push_back({.label = "q", .value = in.q[v], .color = svg::kGrey, .group = g});
        ch.bars.push_back({.label = "p", .value = in.p[v], .color = svg::kBlue, .group = g});
        // A token q never proposes has no acceptance to show (α = 1 is only the library's convention).
        svg::Bar out{.label = tr("output"), .value = a.output[v], .group = g};
        if (a.never_proposed[v]) out.sublabels = {{tr("never drafted")}};
        else out.sublabels = {{"α = " + svg::number(a.alpha[v], 4), a.alpha[v]}};
        out.segments = {{a.accepted[v], svg::kGreen, tr("accepted q·α")}, {a.reject_prob * a.residual[v], svg::kRed, tr("rejected mass × r")}};
        ch.bars.push_back(out);
    }
    ch.legend = {{tr("q (draft)"), svg::kGrey}, {tr("p (target)"), svg::kBlue}, {tr("accepted min(p, q)"), svg::kGreen},
                 {tr("rejection × residual r"), svg::kRed}};
    ch.sublabels_left_out = tr("α = min(1, p/q) under each output bar left out (the bars are too narrow): inferlab spec-accept prints it");
    auto list = [](const std::vector<double>& v) {
        std::string t;
        for (double x : v) t += (t.empty() ? "" : ", ") + svg::number(x, 6);
        return t;
    };
    ch.inputs = {trf("p = [{0}], q = [{1}]; output = q·α + (1 − Σ q·α)·r = [{2}] (inferlab spec-accept)", list(in.p), list(in.q),
                     list(a.output)),
                 source_line("doc1-fig13")};
    return svg::bar_chart(ch);
}

}  // namespace inferlab::figures
