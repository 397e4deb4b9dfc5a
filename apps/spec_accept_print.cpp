// Printers of `inferlab spec-accept`, one per section, each writing text, JSON, CSV and the
// explanation side by side. They choose what to print; the numbers come from spec_accept().
#include "spec_accept_print.hpp"

#include <fmt/format.h>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/spec_accept.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;
using app::wrap;

std::string show(double v) { return format_real(v, 6); }
std::string show(const Rational& r) { return r.str(); }
// A fraction inside a formula gets parentheses so "3/5 / 2/5" reads as (3/5)/(2/5).
std::string term(double v) { return show(v); }
std::string term(const Rational& r) { return r.den() == 1 ? r.str() : "(" + r.str() + ")"; }

template <typename T>
std::string show_list(const std::vector<T>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + show(v[i]);
    return s + "]";
}
template <typename T>
json strs(const std::vector<T>& v) {
    json j = json::array();
    for (const auto& x : v) j.push_back(show(x));
    return j;
}

// Every key of the document, null until a section fills it: one schema whatever was asked.
json empty_document() {
    json j = json::object();
    for (const char* k : {"exact_arithmetic", "p", "q", "sampling", "alpha", "accepted_mass", "accept_prob",
                          "reject_prob", "positive_residual", "residual", "residual_empty", "output", "max_abs_error",
                          "never_proposed", "exact", "alpha_rate", "alpha_from", "gamma", "expected_tokens_per_round",
                          "accepted_count_distribution", "cost_ratio", "speedup", "gamma_table", "best_gamma",
                          "best_gamma_at_table_edge", "round", "simulation"})
        j[k] = nullptr;
    return j;
}

// The rows of a table whose columns are the document's arrays: one per token, by its index.
std::vector<std::size_t> token_rows(std::size_t n) {
    std::vector<std::size_t> rows(n);
    for (std::size_t x = 0; x < n; ++x) rows[x] = x;
    return rows;
}

// The token table, a row per token over the document's arrays: fractions (or 6 digits) in text; in
// CSV the doubles, and α empty where q = 0. The symbols' headers are the same in every language.
template <typename T>
std::vector<Column<std::size_t>> tokens_columns(const std::vector<T>& p, const std::vector<T>& q, const Acceptance<T>& a,
                                                const SpecPosition& pos) {
    // The cells hold pointers to the result's arrays, which outlive the table.
    const Acceptance<double>* d = &pos.a;
    const Acceptance<T>* exact = &a;
    auto figure = [](const std::vector<double>& csv, const std::vector<T>& text) {
        return std::pair{[v = &csv](std::size_t x) { return csv_number((*v)[x]); }, [v = &text](std::size_t x) { return show((*v)[x]); }};
    };
    const auto fp = figure(pos.p, p), fq = figure(pos.q, q), accepted = figure(d->accepted, a.accepted),
               positive = figure(d->positive_residual, a.positive_residual), residual = figure(d->residual, a.residual),
               output = figure(d->output, a.output);
    const std::vector<Column<std::size_t>> c = {
        {"#token", "token", [](std::size_t x) { return std::to_string(x); }, {}, "token"},
        {"p", "p", fp.first, fp.second, "p"},
        {"q", "q", fq.first, fq.second, "q"},
        {"alpha", "α = min(1, p/q)", [d](std::size_t x) { return d->never_proposed[x] ? "" : csv_number(d->alpha[x]); },
         [exact](std::size_t x) { return exact->never_proposed[x] ? tr("never drafted") : show(exact->alpha[x]); },
         "α = min(1, p/q)"},
        {"accepted_mass", N_("accepted q·α"), accepted.first, accepted.second},
        {"positive_residual", "[p − q]₊", positive.first, positive.second, "[p − q]₊"},
        {"residual", N_("residual r"), residual.first, residual.second},
        {"output", N_("output"), output.first, output.second}};
    return c;
}

template <typename T>
Table tokens_table(const std::vector<T>& p, const std::vector<T>& q, const Acceptance<T>& a, const SpecPosition& pos,
                   bool csv) {
    const auto columns = tokens_columns(p, q, a, pos);
    return csv ? columns_table(columns, token_rows(p.size())) : text_table(columns, token_rows(p.size()));
}

template <typename T>
void position_text(const std::vector<T>& p, const std::vector<T>& q, const Acceptance<T>& a, const SpecPosition& pos,
                   Report& r) {
    std::string& h = r.human;
    if (pos.source == PositionSource::Logits)
        h += wrap(trf(N_("Distributions from logits at temperature {0}, top-k {1}, top-p {2} (the ones actually sampled)"),
                      show(pos.temperature), pos.top_k ? std::to_string(pos.top_k) : tr("off"), show(pos.top_p)));
    h += wrap(trf(N_("Speculative sampling, one position (first document §3.1.2): {0}"),
                  pos.exact ? tr("exact fractions") : tr("floating point")));
    h += render_table(tokens_table(p, q, a, pos, false));
    std::string notes = trf(N_("accept probability Σ min(p, q) = {0};  reject probability = {1}"), show(a.accept_prob),
                            show(a.reject_prob)) + "\n";
    if (a.residual_empty)
        notes += tr("p = q: the positive residual is empty, every draft is accepted and the residual branch is never "
                    "entered.") + "\n";
    else
        notes += trf(N_("on rejection, resample from r = [p − q]₊ / {0} = {1}"), term(a.residual_mass),
                     show_list(a.residual)) + "\n";
    notes += trf(N_("output = accepted + reject·r = {0}; largest difference from p: {1}"), show_list(a.output),
                 show(a.max_abs_error)) + "\n";
    for (std::size_t x = 0; x < p.size(); ++x)
        if (a.never_proposed[x] && p[x] > T(0))
            notes += trf(N_("token {0}: q = 0, so the draft never proposes it; the residual supplies its p = {1}."), x,
                         show(p[x])) + "\n";
    h += wrap(notes, "  ", "    ");
}

template <typename T>
void position_explain(const std::vector<T>& p, const std::vector<T>& q, const Acceptance<T>& a, Report& r) {
    std::string x = tr("α(x) = min(1, p(x)/q(x));  accepted mass q(x)·α(x) = min(p(x), q(x))") + "\n";
    for (std::size_t i = 0; i < p.size(); ++i)
        x += a.never_proposed[i] ? "  " + trf(N_("x = {0}: q = 0, never drafted"), i) + "\n"
                                 : fmt::format("  x = {}: α = min(1, {}/{}) = {};  q·α = {}\n", i, term(p[i]), term(q[i]),
                                               show(a.alpha[i]), show(a.accepted[i]));
    x += trf(N_("accept = Σ q·α = {0};  reject = 1 − accept = {1}"), show(a.accept_prob), show(a.reject_prob)) + "\n";
    x += fmt::format("r(v) = [p(v) − q(v)]₊ / Σ_u [p(u) − q(u)]₊ = {} / {} = {}\n", show_list(a.positive_residual),
                     term(a.residual_mass), a.residual_empty ? tr("(empty: p = q)") : show_list(a.residual));
    x += tr("output = q·α + reject·r:") + "\n";
    for (std::size_t i = 0; i < p.size(); ++i)
        x += fmt::format("  x = {}: {} + {} × {} = {}   (p = {})\n", i, show(a.accepted[i]), term(a.reject_prob),
                         term(a.residual[i]), show(a.output[i]), show(p[i]));
    x += trf(N_("max |output − p| = {0}"), show(a.max_abs_error)) + "\n";
    r.explain += wrap(x, "", "    ");
}

void position_json(const SpecPosition& pos, json& j) {
    const auto& a = pos.a;
    j["exact_arithmetic"] = pos.exact.has_value();
    j["p"] = pos.p;
    j["q"] = pos.q;
    if (pos.source == PositionSource::Logits)
        j["sampling"] = {{"temperature", pos.temperature}, {"top_k", pos.top_k}, {"top_p", pos.top_p}};
    json alpha = json::array();
    for (std::size_t x = 0; x < a.alpha.size(); ++x) alpha.push_back(a.never_proposed[x] ? json(nullptr) : json(a.alpha[x]));
    j["alpha"] = alpha;
    j["accepted_mass"] = a.accepted;
    j["accept_prob"] = a.accept_prob;
    j["reject_prob"] = a.reject_prob;
    j["positive_residual"] = a.positive_residual;
    j["residual"] = a.residual;
    j["residual_empty"] = a.residual_empty;
    j["output"] = a.output;
    j["max_abs_error"] = a.max_abs_error;
    j["never_proposed"] = a.never_proposed;
    if (const auto& e = pos.exact) {
        // α of a token the draft never proposes (q = 0) is null here as in "alpha": there is no ratio p/q.
        json exact_alpha = json::array();
        for (std::size_t x = 0; x < e->a.alpha.size(); ++x)
            exact_alpha.push_back(a.never_proposed[x] ? json(nullptr) : json(e->a.alpha[x].str()));
        j["exact"] = {{"alpha", exact_alpha},          {"accepted_mass", strs(e->a.accepted)},
                      {"accept_prob", show(e->a.accept_prob)}, {"reject_prob", show(e->a.reject_prob)},
                      {"residual", strs(e->a.residual)},    {"output", strs(e->a.output)},
                      {"max_abs_error", show(e->a.max_abs_error)}};
    }
}

void position_section(const SpecPosition& pos, Report& r, std::vector<NamedTable>& tables) {
    position_json(pos, r.json);
    if (const auto& e = pos.exact) {
        position_text(e->p, e->q, e->a, pos, r);
        position_explain(e->p, e->q, e->a, r);
        tables.push_back({"tokens", tokens_table(e->p, e->q, e->a, pos, true), ""});
    } else {
        position_text(pos.p, pos.q, pos.a, pos, r);
        position_explain(pos.p, pos.q, pos.a, r);
        tables.push_back({"tokens", tokens_table(pos.p, pos.q, pos.a, pos, true), ""});
    }
}

// The fates and reasons are the library's English msgids: translated in text, kept in CSV.
std::vector<Column<RoundStep>> round_columns() {
    const std::vector<Column<RoundStep>> c = {
        {"position", N_("draft"), [](const RoundStep& s) { return std::to_string(s.position); }},
        {"fate", N_("fate"), [](const RoundStep& s) { return s.fate; }, [](const RoundStep& s) { return tr(s.fate); }},
        {"why", N_("why"), [](const RoundStep& s) { return s.why; }, [](const RoundStep& s) { return tr(s.why); }}};
    return c;
}

Table round_table(const RoundWalkthrough& w, bool csv) {
    Table t = csv ? columns_table(round_columns(), w.steps) : text_table(round_columns(), w.steps);
    t.right_align = {true, false, false};
    return t;
}

void round_section(const RoundWalkthrough& w, Report& r, std::vector<NamedTable>& tables) {
    json& j = r.json["round"];
    j = {{"gamma", w.gamma},           {"accepted", w.accepted},         {"tokens_advanced", w.tokens_advanced},
         {"draft_proposals", w.draft_proposals}, {"target_positions", w.target_positions}, {"discarded", w.discarded},
         {"bonus", w.bonus},           {"steps", json::array()}};
    for (const auto& s : w.steps) j["steps"].push_back({{"position", s.position}, {"fate", s.fate}, {"why", s.why}});
    r.human += "\n" + wrap(w.gamma == 1 ? tr("One draft round, γ = 1 (first document §3.1.1): the target scores the 1 "
                                            "position in one pass; acceptance advances left to right.")
                                        : trf(N_("One draft round, γ = {0} (first document §3.1.1): the target scores all "
                                                 "{0} positions in one pass; acceptance advances left to right."),
                                              w.gamma));
    r.human += render_table(round_table(w, false));
    r.human += wrap(trf(N_("tokens advanced {0} ({1} accepted + 1 {2}); draft proposals {3}; target positions verified "
                           "{4}; discarded {5}"),
                        w.tokens_advanced, w.accepted, w.bonus ? tr("bonus") : tr("resampled"), w.draft_proposals,
                        w.target_positions, w.discarded),
                    "  ", "    ");
    r.explain += "\n" + wrap(trf(N_("Round: {0} accepted, then {1} → {2} advanced from {3}; {4} discarded."), w.accepted,
                                 w.bonus ? tr("the bonus token") : tr("one token resampled from the residual"),
                                 counted(w.tokens_advanced, "{0} token", N_("{0} tokens")),
                                 counted(w.draft_proposals, "{0} draft", N_("{0} drafts")), w.discarded));
    tables.push_back({"round", round_table(w, true), "/round/steps"});
}

// The γ sweep: in text the best row marked with an arrow under no header; in CSV true in its own
// column, the row of best_gamma (the JSON's best_gamma_at_table_edge says whether it lies at the edge).
std::vector<Column<GammaRow>> gamma_columns(const SpecExpected& e) {
    const bool edge = e.choice && e.choice->at_edge;
    const std::vector<Column<GammaRow>> c = {
        {"gamma", "γ", [](const GammaRow& g) { return std::to_string(g.gamma); }},
        {"expected_tokens_per_round", N_("E[tokens/round]"), [](const GammaRow& g) { return csv_number(g.expected_tokens_per_round); },
         [](const GammaRow& g) { return show(g.expected_tokens_per_round); }},
        {"speedup", N_("speedup"), [](const GammaRow& g) { return csv_number(g.speedup); },
         [](const GammaRow& g) { return show(g.speedup); }},
        {"best", "best", [](const GammaRow& g) { return csv_flag(g.best); },
         [edge](const GammaRow& g) { return !g.best ? "" : edge ? tr("← best shown (table's edge)") : tr("← best"); }}};
    return c;
}

Table gamma_table(const SpecExpected& e, bool csv) {
    if (!csv) return text_table(gamma_columns(e), e.gamma_table);
    Table t = columns_table(gamma_columns(e), e.gamma_table);
    t.right_align = {true, true, true, false};
    return t;
}

void expected_json(const SpecExpected& e, json& j) {
    j["alpha_rate"] = e.alpha;
    j["alpha_from"] = e.alpha_from_pq ? "sum_min_pq" : "given";
    j["expected_tokens_per_round"] = e.expected_tokens_per_round;
    j["accepted_count_distribution"] = e.accepted_count_distribution;
    j["cost_ratio"] = or_null(e.cost_ratio);
    j["speedup"] = or_null(e.speedup);
    if (!e.choice) return;
    j["gamma_table"] = json::array();
    for (const auto& g : e.gamma_table)
        j["gamma_table"].push_back(
            {{"gamma", g.gamma}, {"expected_tokens_per_round", g.expected_tokens_per_round}, {"speedup", g.speedup},
             {"best", g.best}});
    j["best_gamma"] = e.choice->best ? json(*e.choice->best) : json(nullptr);
    j["best_gamma_at_table_edge"] = e.choice->at_edge;
}

void expected_text(const SpecExpected& e, Report& r) {
    r.human += "\n" + wrap(trf(N_("A round at acceptance rate α = {0} ({1}), γ = {2} (positions assumed independent):"),
                               show(e.alpha), e.alpha_from_pq ? std::string("Σ min(p, q)") : tr("given"),
                               counted(e.gamma, "{0} draft", N_("{0} drafts"))));
    std::string lines;
    for (std::size_t k = 0; k <= e.gamma; ++k)
        lines += trf(N_("P({0} accepted) = {1}  → {2}"), k, show(e.accepted_count_distribution[k]),
                     counted(e.tokens_if_accepted[k], "{0} token", N_("{0} tokens"))) +
                 (k == e.gamma ? tr(" (the bonus token counted)") : std::string()) + "\n";
    lines += trf(N_("expected tokens per round (1 − α^(γ+1)) / (1 − α) = {0}"), show(e.expected_tokens_per_round)) + "\n";
    if (e.speedup)
        lines += trf(N_("speedup at draft/target cost ratio c = {0}: (1 − α^(γ+1)) / ((1 − α)(γc + 1)) = {1}"),
                     show(*e.cost_ratio), show(*e.speedup)) + "\n";
    r.human += wrap(lines, "  ", "    ");
    // At α = 1 the quotient is 0/0: its value is the limit, the sum it came from.
    r.explain += "\n" + wrap(e.alpha == 1 ? trf(N_("Expected tokens per round = (1 − α^(γ+1)) / (1 − α); at α = 1 that is "
                                                   "0/0, and its value is the sum it comes from: 1 + α + … + α^γ = γ + 1 "
                                                   "= {0}"),
                                               show(e.expected_tokens_per_round))
                                         : trf(N_("Expected tokens per round = (1 − α^(γ+1)) / (1 − α) = (1 − {0}^{1}) / "
                                                  "(1 − {0}) = {2}"),
                                               show(e.alpha), e.tokens_if_accepted.back(), show(e.expected_tokens_per_round)));
    if (e.speedup)
        r.explain += wrap(trf(N_("Speedup = E / (γc + 1) = {0} / ({1} × {2} + 1) = {3}"), show(e.expected_tokens_per_round),
                              e.gamma, show(*e.cost_ratio), show(*e.speedup)));
}

void gamma_sweep_text(const SpecExpected& e, Report& r) {
    r.human += "\n" + render_table(gamma_table(e, false));
    const GammaChoice& c = *e.choice;
    if (!c.best)
        r.human += wrap(trf(N_("No γ helps at α = {0}, c = {1}: every speedup is at most {2} (a round costs γc + 1 target "
                               "passes and gains too few tokens); decode without a draft."),
                            show(e.alpha), show(*e.cost_ratio), show(c.best_speedup)),
                        "  ", "  ");
    else if (c.at_edge)
        r.human += wrap(trf(N_("γ = {0} is the table's edge, not an optimum: γ = {1} would be faster still{2}. {3}"),
                            e.max_gamma, e.next_gamma,
                            e.alpha >= 1 ? tr(" (α = 1 accepts every draft, so (γ + 1)/(γc + 1) grows with every γ)")
                                         : std::string(),
                            e.max_gamma < kMaxSweepGamma ? trf(N_("Raise --max-gamma (at most {0}) to see more."), kMaxSweepGamma)
                                                         : trf(N_("{0} is the longest sweep printed."), kMaxSweepGamma)),
                        "  ", "  ");
}

void expected_section(const SpecExpected& e, Report& r, std::vector<NamedTable>& tables) {
    expected_json(e, r.json);
    expected_text(e, r);
    if (!e.choice) return;
    gamma_sweep_text(e, r);
    tables.push_back({"gamma", gamma_table(e, true), "/gamma_table"});
}

// A row per token over the arrays of /simulation (p from the document's root). Text: frequencies
// with 5 fixed decimals, so the column lines up; CSV: csv_number()'s rule, like every other probability
// of this command.
std::vector<Column<std::size_t>> simulation_columns(const SpecSimulation& s, const std::vector<double>& p) {
    // The cells hold pointers to the result's arrays, which outlive the table.
    auto freq = [](const std::vector<double>& v) {
        return std::pair{[f = &v](std::size_t x) { return csv_number((*f)[x]); },
                         [f = &v](std::size_t x) { return fmt::format("{:.5f}", (*f)[x]); }};
    };
    const std::vector<double>* exact = &s.threshold_shortcut_exact;
    const auto speculative = freq(s.speculative), half_width = freq(s.half_width_99), shortcut = freq(s.threshold_shortcut),
               greedy = freq(s.greedy);
    const std::vector<Column<std::size_t>> c = {
        {"#token", "token", [](std::size_t x) { return std::to_string(x); }, {}, "token"},
        {"/p", "p", [v = &p](std::size_t x) { return csv_number((*v)[x]); }, [v = &p](std::size_t x) { return show((*v)[x]); }, "p"},
        {"speculative", N_("speculative"), speculative.first, speculative.second},
        {"half_width_99", "99% ±", half_width.first, half_width.second, "99% ±"},
        {"threshold_shortcut", N_("shortcut (q ≥ τ)"), shortcut.first, shortcut.second},
        {"threshold_shortcut_exact", N_("shortcut exact"), [exact](std::size_t x) { return csv_number((*exact)[x]); },
         [exact](std::size_t x) { return show((*exact)[x]); }},
        {"greedy", N_("greedy"), greedy.first, greedy.second}};
    return c;
}

Table simulation_table(const SpecSimulation& s, const std::vector<double>& p, bool csv) {
    const auto columns = simulation_columns(s, p);
    return csv ? columns_table(columns, token_rows(p.size())) : text_table(columns, token_rows(p.size()));
}

// χ², its dof and p-value are null where the counts were too few to test (FitTest::testable).
json fit_json(const FitTest& f, const std::optional<bool>& passes) {
    const bool t = passes.has_value();
    return {{"total_variation", f.total_variation},    {"chi_square", t ? json(f.chi_square) : json(nullptr)},
            {"dof", t ? json(f.dof) : json(nullptr)},   {"p_value", t ? json(f.p_value) : json(nullptr)},
            {"pooled_outcomes", f.pooled},              {"passes_at_1_percent", or_null(passes)}};
}

// A fit's verdict in words: `yes` or `no`, or that the samples are too few for the χ² test.
std::string fit_verdict(const std::optional<bool>& passes, const char* yes, const char* no) {
    return !passes ? trf(N_("too few samples for a χ² test (expected counts under {0})"), kMinExpected)
                   : tr(*passes ? yes : no);
}

// The tokens an --explain substitutes into a formula, from the first (the tables hold them all).
constexpr std::size_t kExplainedTokens = 4;

// --explain of the simulation: what each frequency and its ± are, the first tokens substituted,
// and the χ² statistic the verdicts come from.
std::string simulation_explain(const SpecSimulation& s, const std::vector<double>& p) {
    const std::string z = format_short(kZ99, 6);
    std::string x = "\n" + wrap(trf(N_("Simulation of {0}: each frequency is count(x) / n; its 99% ± around p is the "
                                       "normal approximation {1}·sqrt(p(x)(1 − p(x)) / n); χ² = Σ_x (O_x − n·p(x))² / "
                                       "(n·p(x)) over the tokens (those expected fewer than {2} times pooled into one "
                                       "cell), on cells − 1 dof; a p-value under 1% rejects p."),
                                   counted(s.samples, "{0} sample", N_("{0} samples")), z, format_short(kMinExpected, 6)));
    const std::string n = group_thousands(s.samples);
    for (std::size_t v = 0; v < p.size() && v < kExplainedTokens; ++v)
        x += wrap(trf(N_("x = {0}: {5}·sqrt({1}·(1 − {1}) / {2}) = {3}; speculative {4}"), v, format_short(p[v], 10), n,
                      format_short(s.half_width_99[v], 4), format_short(s.speculative[v], 6), z),
                  "  ", "    ");
    return x;
}

void simulation_section(const SpecSimulation& s, const std::vector<double>& p, Report& r,
                        std::vector<NamedTable>& tables) {
    r.json["simulation"] = {{"samples", s.samples},
                            {"seed", s.seed},
                            {"threshold", s.threshold},
                            {"speculative", s.speculative},
                            {"speculative_fit", fit_json(s.speculative_fit, s.speculative_passes)},
                            {"threshold_shortcut", s.threshold_shortcut},
                            {"threshold_shortcut_exact", s.threshold_shortcut_exact},
                            {"threshold_shortcut_fit", fit_json(s.threshold_shortcut_fit, s.threshold_shortcut_passes)},
                            {"greedy", s.greedy},
                            {"half_width_99", s.half_width_99}};
    const FitTest &fs = s.speculative_fit, &ft = s.threshold_shortcut_fit;
    r.human += "\n" + trf(N_("Simulation: {0}, seed {1}"), counted(s.samples, "{0} sample", N_("{0} samples")), s.seed) + "\n";
    r.human += render_table(simulation_table(s, p, false));
    // Where the counts are too few for χ², the line gives the TV distance and says so, no χ².
    const std::string speculative =
        s.speculative_passes
            ? trf(N_("speculative rule: TV distance {0}, χ² = {1} on {2} dof, p-value {3} → {4}"),
                  fmt::format("{:.2e}", fs.total_variation), fmt::format("{:.3f}", fs.chi_square), fs.dof,
                  fmt::format("{:.4f}", fs.p_value),
                  fit_verdict(s.speculative_passes, N_("consistent with p at the 1% level"), N_("REJECTED at the 1% level")))
            : trf(N_("speculative rule: TV distance {0} → {1}"), fmt::format("{:.2e}", fs.total_variation),
                  fit_verdict(s.speculative_passes, "", ""));
    const std::string shortcut =
        s.threshold_shortcut_passes
            ? trf(N_("shortcut (accept any draft with q(x) ≥ {0}): TV distance {1}, χ² = {2} on {3} dof, p-value {4} → {5}"),
                  show(s.threshold), fmt::format("{:.2e}", ft.total_variation), fmt::format("{:.3f}", ft.chi_square), ft.dof,
                  fmt::format("{:.4f}", ft.p_value),
                  fit_verdict(s.threshold_shortcut_passes, N_("not distinguishable from p here"),
                              N_("biased: it does not preserve p")))
            : trf(N_("shortcut (accept any draft with q(x) ≥ {0}): TV distance {1} → {2}"), show(s.threshold),
                  fmt::format("{:.2e}", ft.total_variation), fit_verdict(s.threshold_shortcut_passes, "", ""));
    const std::string proof = speculative + "\n" + shortcut +
        "\n" +
        tr("greedy: the draft's argmax is kept only if it is the target's argmax, so the output is always argmax p.");
    r.human += wrap(proof, "  ", "    ");
    r.explain += simulation_explain(s, p) + wrap(proof, "  ", "    ");
    tables.push_back({"simulation", simulation_table(s, p, true), "/simulation"});
}

}  // namespace

Report spec_accept_report(const SpecAcceptResult& res, bool draw) {
    Report r;
    r.json = empty_document();
    std::vector<NamedTable> tables;  // in the order the text shows them
    if (res.position) position_section(*res.position, r, tables);
    if (res.gamma) r.json["gamma"] = *res.gamma;
    if (res.round) round_section(*res.round, r, tables);
    if (res.expected) expected_section(*res.expected, r, tables);
    if (res.simulation) simulation_section(*res.simulation, res.position->p, r, tables);
    // --csv prints first the table of what was asked last: the simulation, the sweep, the round,
    // then the token table they build on.
    for (const char* name : {"simulation", "gamma", "round", "tokens"})
        for (auto& t : tables)
            if (t.name == name) r.tables.push_back(t);
    if (r.explain.empty()) r.explain = r.human;
    // Each section opens with a blank line to part it from the one before; the first has none before it.
    for (std::string* text : {&r.human, &r.explain})
        if (!text->empty() && text->front() == '\n') text->erase(0, 1);
    if (draw) {
        const bool per_token = !(res.expected && res.gamma) && res.position;
        if (per_token && res.position->p.size() > plots::kMaxDrawnTokens)
            throw InputError("--svg", trf(N_("{0} tokens"), res.position->p.size()),
                             N_("the per-token chart draws at most {0} tokens (give --gamma with --p/--q for the γ "
                                "sweep instead)"),
                             {std::to_string(plots::kMaxDrawnTokens)});
        r.svg = plots::spec_accept_figure(res);
    }
    return r;
}

}  // namespace inferlab::app
