// best-of-n's printers (best_of_n_print.hpp): one BestOfNResult as text, --json, --csv tables and
// --explain.
#include <fmt/format.h>

#include <cmath>

#include "best_of_n_print.hpp"
#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/text/table.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;

// Probabilities in tables: the shortest exact form when short (0.3, 0.7599, 1e-16), else 6 digits.
std::string pr(double v) { return format_short(v, 6); }

// ---------------------------------------------------------------- printers
// Every number below comes from the BestOfNResult; these functions only choose what to show.

json row_json(const BestOfNRow& r) {
    json j = {{"n", r.n}, {"coverage", r.coverage}, {"verifier_selection", or_null(r.verifier_selection)},
              {"majority_vote", or_null(r.majority_vote)}, {"biased_judge", or_null(r.biased_judge)},
              {"coverage_hard_fraction", or_null(r.coverage_hard_fraction)}, {"coverage_beta", or_null(r.coverage_beta)}};
    // Each strategy under each correlated model: "<strategy>_hard_fraction", "<strategy>_beta".
    for (const auto& [suffix, m] : {std::pair{"_hard_fraction", &r.hard_fraction}, std::pair{"_beta", &r.beta}}) {
        const ModelFigures none;
        const ModelFigures& f = *m ? **m : none;
        j[std::string("verifier_selection") + suffix] = or_null(f.verifier_selection);
        j[std::string("majority_vote") + suffix] = or_null(f.majority_vote);
        j[std::string("biased_judge") + suffix] = or_null(f.biased_judge);
    }
    return j;
}

json sections_json(const BestOfNFlags& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    json j = {{"verifier", nullptr}, {"budget", nullptr}, {"simulation", nullptr}};
    if (res.verifier)
        j["verifier"] = {{"tpr", rq.verifier->tpr}, {"fpr", rq.verifier->fpr}, {"fallback", o.fallback},
                         {"accept_rate", res.verifier->accept_rate}, {"limit_large_n", res.verifier->limit_large_n}};
    if (const auto& b = res.budget) {
        j["budget"] = {{"budget", b->costs.budget}, {"cost_sample", b->costs.cost_sample},
                       {"cost_judge", b->costs.cost_judge}, {"plans", json::array()}};
        for (const auto& pl : b->plans)
            j["budget"]["plans"].push_back(
                {{"strategy", pl.strategy}, {"n", pl.n}, {"cost", pl.cost}, {"p_correct", pl.p_correct}, {"capped", pl.capped},
                 {"p_correct_hard_fraction", or_null(pl.p_correct_hard_fraction)}, {"p_correct_beta", or_null(pl.p_correct_beta)}});
    }
    if (const auto& s = res.simulation) {
        j["simulation"] = {{"trials", s->trials}, {"seed", s->seed}, {"rows", json::array()},
                           // null where no row could tell: "all agree" would be vacuous
                           {"all_agree", s->untold == s->rows.size() && !s->rows.empty() ? json(nullptr) : json(s->all_agree)},
                           {"undecided", s->untold}};
        for (const auto& r : s->rows)
            j["simulation"]["rows"].push_back({{"n", r.n}, {"strategy", r.strategy}, {"exact", r.exact},
                                               {"estimate", r.estimate.mean},
                                               {"interval_99", {r.estimate.interval_99.lo, r.estimate.interval_99.hi}},
                                               {"agrees", r.agrees ? json(*r.agrees) : json(nullptr)}});
    }
    return j;
}

// The whole document: every key in every run, null where there is no value. With one N its
// row's values also stand at the top level (null with several).
json result_json(const BestOfNFlags& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    json j = {{"p", res.p}, {"rows", json::array()}};
    for (const auto& r : res.rows) j["rows"].push_back(row_json(r));
    const json single = res.rows.size() == 1 ? row_json(res.rows.front()) : json(nullptr);
    for (const char* key : {"coverage", "verifier_selection", "majority_vote", "biased_judge", "coverage_hard_fraction",
                            "coverage_beta"})
        j[key] = single.is_null() ? json(nullptr) : single[key];
    j.update(sections_json(o, rq, res));
    j["answer_distribution"] = or_null(rq.answer_dist);
    j["judge_bias"] = or_null(rq.judge_bias);
    j["hard_fraction"] = or_null(rq.hard_fraction);
    j["rho"] = or_null(rq.rho);
    j["target"] = res.target ? json(res.target->target) : json(nullptr);
    j["min_n_for_target"] = res.target ? or_null(res.target->min_n) : json(nullptr);
    return j;
}

// The tables are built in English (--csv prints them so in every language); the text shows them
// through in_words(). Each column once: its JSON key (row_json, sections_json), header and cell.
std::vector<Column<BestOfNRow>> row_columns(const BestOfNRequest& rq) {
    auto optional = [](const char* key, const char* header, std::optional<double> BestOfNRow::*field) {
        return figure_column<BestOfNRow>(key, header, [field](const BestOfNRow& r) { return r.*field; }, pr);
    };
    std::vector<Column<BestOfNRow>> c = {{"n", "N", [](const BestOfNRow& r) { return std::to_string(r.n); }}};
    c.push_back(figure_column<BestOfNRow>("coverage", N_("coverage P≥1"), [](const BestOfNRow& r) { return r.coverage; }, pr));
    if (rq.verifier) c.push_back(optional("verifier_selection", N_("verifier picks correct"), &BestOfNRow::verifier_selection));
    if (rq.answer_dist) c.push_back(optional("majority_vote", N_("majority vote correct"), &BestOfNRow::majority_vote));
    if (rq.judge_bias) c.push_back(optional("biased_judge", N_("biased judge correct"), &BestOfNRow::biased_judge));
    return c;
}

// The same strategies under one correlated model (`suffix` "_hard_fraction" or "_beta"): a table of
// its own, so that no table sets one model's figures beside another's.
std::vector<Column<BestOfNRow>> model_columns(const BestOfNRequest& rq, std::optional<ModelFigures> BestOfNRow::*model,
                                              const std::string& suffix) {
    auto figure = [model](const std::string& key, const char* header, std::optional<double> ModelFigures::*field) {
        return figure_column<BestOfNRow>(key, header, [model, field](const BestOfNRow& r) { return (*(r.*model)).*field; }, pr);
    };
    std::vector<Column<BestOfNRow>> c = {{"n", "N", [](const BestOfNRow& r) { return std::to_string(r.n); }}};
    c.push_back(figure_column<BestOfNRow>("coverage" + suffix, N_("coverage P≥1"),
                                          [model](const BestOfNRow& r) { return (*(r.*model)).coverage; }, pr));
    if (rq.verifier) c.push_back(figure("verifier_selection" + suffix, N_("verifier picks correct"), &ModelFigures::verifier_selection));
    if (rq.answer_dist) c.push_back(figure("majority_vote" + suffix, N_("majority vote correct"), &ModelFigures::majority_vote));
    if (rq.judge_bias) c.push_back(figure("biased_judge" + suffix, N_("biased judge correct"), &ModelFigures::biased_judge));
    return c;
}

Table rows_table(const BestOfNRequest& rq, const BestOfNResult& res, CellForm form = CellForm::csv) {
    return columns_table(row_columns(rq), res.rows, form);
}

// Strategy names are the library's msgids (BudgetPlan::strategy, SimulationRow::strategy).
std::vector<Column<BudgetPlan>> budget_columns(const BestOfNRequest& rq) {
    std::vector<Column<BudgetPlan>> c = {
        {"strategy", N_("strategy"), [](const BudgetPlan& p) { return p.strategy; }},
        {"n", "N", [](const BudgetPlan& p) { return std::to_string(p.n); }},
        {"cost", N_("cost"), [](const BudgetPlan& p) { return csv_number(p.cost); },
         [](const BudgetPlan& p) { return format_real(p.cost, 6); }},
        figure_column<BudgetPlan>("p_correct", N_("P(correct)"), [](const BudgetPlan& p) { return p.p_correct; }, pr)};
    // Each correlated model asked for in a column that names it.
    if (rq.hard_fraction)
        c.push_back(figure_column<BudgetPlan>("p_correct_hard_fraction", N_("P(correct), hard fraction"),
                                              [](const BudgetPlan& p) { return p.p_correct_hard_fraction; }, pr));
    if (rq.rho)
        c.push_back(figure_column<BudgetPlan>("p_correct_beta", N_("P(correct), beta spread"),
                                              [](const BudgetPlan& p) { return p.p_correct_beta; }, pr));
    return c;
}

Table budget_table(const BestOfNRequest& rq, const BudgetAnswer& b, CellForm form = CellForm::csv) {
    Table t = columns_table(budget_columns(rq), b.plans, form);
    t.right_align = std::vector<bool>(t.columns.size(), true);
    t.right_align[0] = false;
    return t;
}

std::vector<Column<SimulationRow>> simulation_columns() {
    using R = SimulationRow;
    const std::vector<Column<R>> c = {
        {"n", "N", [](const R& r) { return std::to_string(r.n); }},
        {"strategy", N_("strategy"), [](const R& r) { return r.strategy; }},
        figure_column<R>("exact", N_("exact"), [](const R& r) { return r.exact; }, pr),
        figure_column<R>("estimate", N_("Monte Carlo"), [](const R& r) { return r.estimate.mean; }, pr),
        figure_column<R>("interval_99/0", N_("99% low"), [](const R& r) { return r.estimate.interval_99.lo; }, pr),
        figure_column<R>("interval_99/1", N_("99% high"), [](const R& r) { return r.estimate.interval_99.hi; }, pr),
        {"agrees", N_("agrees"), [](const R& r) { return csv_flag(r.agrees); },
         [](const R& r) { return std::string(!r.agrees ? N_("too few trials") : *r.agrees ? N_("yes") : N_("NO")); }}};
    return c;
}

// The text's form: "too few trials" where CSV's cell is empty; in_words() translates its words.
Table simulation_table(const SimulationAnswer& s, CellForm form = CellForm::csv) {
    Table t = columns_table(simulation_columns(), s.rows, form);
    t.right_align = {true, false};
    return t;
}

// One note under the table, wrapped with the notes' indent.
std::string note(const std::string& text) { return wrap(text, "  ", "  "); }

std::string verifier_text(const BestOfNFlags& o, const BestOfNRequest& rq, const VerifierFacts& v) {
    std::string h = note(trf(N_("Verifier: TPR {0}, FPR {1}; picks uniformly among accepted candidates (or the first: "
                                "same probability); none accepted → {2}."),
                             format_short(rq.verifier->tpr), format_short(rq.verifier->fpr),
                             o.fallback == "random" ? tr(N_("pick any candidate")) : tr(N_("abstain"))));
    if (v.accept_rate > 0)
        return h + note(rq.p > 0 ? trf(N_("As N grows selection tends to p·TPR/q = {0}, while coverage tends to 1."),
                                       pr(v.limit_large_n))
                                 : trf(N_("As N grows selection tends to p·TPR/q = {0}; coverage stays 0: no candidate is "
                                          "correct (p = 0)."),
                                       pr(v.limit_large_n)));
    return h + note(rq.verifier->fallback_random
                        ? trf(N_("The verifier accepts no candidate (q = p·TPR + (1−p)·FPR = 0), so every N gives the "
                                 "fallback: a random candidate, correct with probability p = {0}."),
                              pr(v.limit_large_n))
                        : tr(N_("The verifier accepts no candidate (q = p·TPR + (1−p)·FPR = 0), so every N gives the "
                                "fallback: abstain, never correct (0).")));
}

// What each strategy asked for assumes (text).
std::string strategies_text(const BestOfNFlags& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string h;
    if (res.verifier) h += verifier_text(o, rq, *res.verifier);
    if (rq.answer_dist)
        h += note(trf(N_("Majority vote over {0} answers (correct one at p); ties broken uniformly at random."),
                      rq.answer_dist->size()));
    if (rq.judge_bias)
        h += note(trf(N_("Biased judge: picks a wrong candidate with probability {0} whenever one is present."),
                      format_real(*rq.judge_bias, 6)));
    if (const auto& d = res.biased_judge_drop)
        h += note(trf(N_("More candidates lower the biased judge's accuracy: N = {0} → {1} gives {2} → {3}."), d->from_n,
                      d->to_n, pr(d->from_p), pr(d->to_p)));
    return h;
}

// Each correlated model asked for: its own table of every strategy (one model per table), under a
// heading that says the model.
void model_sections(const BestOfNRequest& rq, const BestOfNResult& res, Report& r) {
    if (rq.hard_fraction) {
        const auto cols = model_columns(rq, &BestOfNRow::hard_fraction, "_hard_fraction");
        r.add_table("hard_fraction", columns_table(cols, res.rows), "/rows");
        r.human += "\n" + wrap(trf(N_("Correlated errors, one model for every column: a hard fraction h = {0} of problems "
                                      "no sample solves (p = 0 there, {1} on the rest; the same mean p):"),
                                   format_real(*rq.hard_fraction, 6), format_real(*res.p_on_solvable, 6))) +
                   render_table(in_words(columns_table(cols, res.rows, CellForm::text)));
    }
    if (rq.rho) {
        const auto cols = model_columns(rq, &BestOfNRow::beta, "_beta");
        r.add_table("beta", columns_table(cols, res.rows), "/rows");
        r.human += "\n" + wrap(trf(N_("Correlated errors, one model for every column: p spread across problems as a "
                                      "Beta with the same mean (correlation ρ = {0} between samples of a problem):"),
                                   format_real(*rq.rho, 6))) +
                   render_table(in_words(columns_table(cols, res.rows, CellForm::text)));
    }
}

std::string budget_text(const BestOfNRequest& rq, const BudgetAnswer& b) {
    const std::string cost = format_real(b.costs.budget, 6), sample = format_real(b.costs.cost_sample, 6),
                      judge = format_real(b.costs.cost_judge, 6);
    std::string h = "\n" + wrap(rq.verifier ? trf(N_("At equal total cost {0} (sample {1}, judgement {2}):"), cost, sample, judge)
                                            : trf(N_("At equal total cost {0} (sample {1}, judgement {2}); verifier assumed "
                                                     "perfect (give --tpr/--fpr):"),
                                                  cost, sample, judge));
    h += render_table(in_words(budget_table(rq, b, CellForm::text)));
    if (!rq.answer_dist)
        h += note(tr(N_("Majority vote not compared: give --alternatives k or --answer-dist (how many wrong answers "
                        "split the votes decides it).")));
    for (const auto& pl : b.plans)
        if (pl.capped)
            h += note(trf(N_("{0}: exact up to N = {1}; the budget buys {2} samples."), tr(pl.strategy), pl.n,
                          group_thousands(b.samples_bought)));
    return h;
}

std::string simulation_text(const SimulationAnswer& s) {
    const std::string head = s.trials == 1 ? trf(N_("Monte Carlo (1 trial, seed {0}), beside the exact values:"), s.seed)
                                           : trf(N_("Monte Carlo ({0} trials, seed {1}), beside the exact values:"),
                                                 group_thousands(s.trials), s.seed);
    std::string h = "\n" + wrap(head) + render_table(in_words(simulation_table(s, CellForm::text)));
    if (s.untold > 0)
        h += note(trf(N_("too few trials: with {0} no count of hits would put that exact value outside its 99% interval "
                         "(the Wilson interval), so agreement would say nothing; raise --simulate"),
                      counted(s.trials, "{0} trial", N_("{0} trials"))));
    return h;
}

std::string chart(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::vector<std::string> labels;
    ChartSeries cov{tr(N_("coverage")), {}};
    // The selection drawn beside coverage: the verifier, else the vote, else the biased judge.
    ChartSeries sel{tr(rq.verifier ? N_("verifier selection") : (rq.answer_dist ? N_("majority vote") : N_("biased judge"))),
                    {}};
    for (const auto& r : res.rows) {
        labels.push_back("N=" + std::to_string(r.n));
        cov.values.push_back(r.coverage);
        const auto& s = r.verifier_selection ? r.verifier_selection : (r.majority_vote ? r.majority_vote : r.biased_judge);
        if (s) sel.values.push_back(*s);
    }
    std::vector<ChartSeries> series = {cov};
    if (!sel.values.empty()) series.push_back(sel);
    return "\n" + render_bar_chart(labels, series, 50);
}

std::string coverage_explain(const BestOfNResult& res) {
    const std::string p = format_short(res.p, 10);
    std::string x = tr(N_("Coverage (first document §3.2): P≥1 = 1 − (1 − p)^N")) + "\n";
    // 1 − p that prints as 1 (p = 1e-17): only the log form keeps the digits, and (1 − p)^N printed
    // from it would read 1^N.
    const bool log_form = format_short(res.p_wrong, 10) == "1" && res.p > 0;
    for (const auto& r : res.rows) {
        const std::string none = format_short(r.none_correct, 10);
        if (r.none_correct == 0 && r.coverage == 1 && res.p < 1)  // (1 − p)^N below the smallest double
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = 1 − {}^{} ≈ 1 − 0 = 1", r.n, p, r.n,
                                  format_short(res.p_wrong, 10), r.n), "  ", "    ");
        else if (log_form || (none == "1" && r.coverage > 0))
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = −expm1({}·log1p(−{})) = {}", r.n, p, r.n, r.n, p,
                                  format_short(r.coverage, 10)), "  ", "    ");
        else
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = 1 − {}^{} = 1 − {} = {}", r.n, p, r.n,
                                  format_short(res.p_wrong, 10), r.n, none, format_short(r.coverage, 10)), "  ", "    ");
    }
    return x + note(tr(N_("This is the probability that a correct candidate is present, not that it is chosen.")));
}

std::string verifier_explain(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string x = "\n" + wrap(trf(N_("Verifier selection: q = p·TPR + (1−p)·FPR = {0}·{1} + {2}·{3} = {4}"),
                                    format_real(rq.p, 6), format_real(rq.verifier->tpr, 6), format_real(res.p_wrong, 6),
                                    format_real(rq.verifier->fpr, 6), format_real(res.verifier->accept_rate, 10)));
    x += wrap("P = (1 − (1−q)^N)·p·TPR/q" + std::string(rq.verifier->fallback_random ? " + (1−q)^N·p·(1−TPR)/(1−q)" : ""),
              "  ", "      ");
    for (const auto& r : res.rows) x += fmt::format("  N = {}: P = {}\n", r.n, format_real(*r.verifier_selection, 10));
    return x;
}

// The first rows an --explain substitutes into a strategy's formula (the table holds them all).
constexpr std::size_t kExplainedRows = 4;

// Each of the first rows' value of one strategy, substituted: `line(row)` writes the row's terms.
template <class Line>
std::string substituted(const BestOfNResult& res, Line line) {
    std::string x;
    for (std::size_t i = 0; i < res.rows.size() && i < kExplainedRows; ++i) x += wrap(line(res.rows[i]), "  ", "    ");
    return x;
}

std::string r6(double v) { return format_real(v, 6); }

// The formulas' prose is tr(), not trf(): they write braces ("q_j^{n_j}") that are not placeholders.
// Then each formula with the first rows' values: the terms shown are the printed inputs' powers
// and products, the result is the library's.
std::string strategies_explain(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string x = res.verifier ? verifier_explain(rq, res) : "";
    const double p = res.p;
    if (rq.answer_dist) {
        x += "\n" + wrap(tr(N_("Majority vote: exact sum over vote counts (c for the correct answer, n_j for wrong answer j) "
                               "of N!/(c!·Π n_j!)·p^c·Π q_j^{n_j}, counting a win when c > every n_j and 1/(t+1) when t "
                               "answers tie at c.")));
        x += substituted(res, [](const BestOfNRow& r) { return fmt::format("N = {}: P = {}", r.n, r6(*r.majority_vote)); });
    }
    if (rq.judge_bias) {
        x += "\n" + wrap(tr(N_("Biased judge: P = p^N + (1 − bias)·(1 − (1−p)^N − p^N): more candidates make a wrong one "
                               "present more often, so P can fall as N grows.")));
        const double bias = *rq.judge_bias;
        x += substituted(res, [&](const BestOfNRow& r) {
            const double all = *r.all_correct;
            return fmt::format("N = {}: {}^{} + (1 − {})·({} − {}) ≈ {} + {}·{} ≈ {}", r.n, r6(p), r.n, r6(bias), r6(r.coverage),
                               r6(all), r6(all), r6(1 - bias), r6(r.coverage - all), r6(*r.biased_judge));
        });
    }
    if (rq.hard_fraction) {
        x += "\n" + wrap(tr(N_("Hard fraction h: coverage = (1 − h)·(1 − (1 − p/(1−h))^N) ≤ 1 − (1 − p)^N.")));
        const double h = *rq.hard_fraction, solvable = *res.p_on_solvable;
        x += substituted(res, [&](const BestOfNRow& r) {
            return fmt::format("N = {}: (1 − {})·(1 − (1 − {})^{}) ≈ {} ≤ {}", r.n, r6(h), r6(solvable), r.n,
                               r6(*r.coverage_hard_fraction), r6(r.coverage));
        });
        if (rq.verifier) {
            x += wrap(tr(N_("Every strategy S the same way: (1 − h)·S(p/(1 − h)) + h·S(0); the verifier's:")), "  ", "    ");
            x += substituted(res, [&](const BestOfNRow& r) {
                const ModelFigures& m = *r.hard_fraction;
                return fmt::format("N = {}: (1 − {})·{} + {}·{} ≈ {}", r.n, r6(h), r6(*m.verifier_on_solvable), r6(h),
                                   r6(*m.verifier_on_hard), r6(*m.verifier_selection));
            });
        }
    }
    if (rq.rho) {
        x += "\n" + wrap(tr(N_("Beta spread: p ~ Beta(a, b), a = p(1−ρ)/ρ, b = (1−p)(1−ρ)/ρ; coverage = 1 − Π_{i<N} "
                               "(b+i)/(a+b+i).")));
        const double rho = *rq.rho;
        if (res.beta)
            x += wrap(fmt::format("a = {}·(1 − {})/{} ≈ {}, b = (1 − {})·(1 − {})/{} ≈ {}", r6(p), r6(rho), r6(rho),
                                  r6(res.beta->a), r6(p), r6(rho), r6(rho), r6(res.beta->b)),
                      "  ", "    ");
        else
            x += wrap(tr(N_("ρ = 0: every problem has the same p, no spread, so the coverage is 1 − (1 − p)^N.")), "  ",
                      "    ");
        x += substituted(res, [](const BestOfNRow& r) {
            return fmt::format("N = {}: 1 − {} ≈ {}", r.n, r6(1 - *r.coverage_beta), r6(*r.coverage_beta));
        });
        x += wrap(tr(N_("Every other strategy: its value at one problem's p is a polynomial of degree N in p, so its mean "
                        "over Beta(a, b) is exact by Gauss–Jacobi quadrature on floor(N/2) + 1 nodes.")),
                  "  ", "    ");
    }
    return x;
}

std::string target_text(const BestOfNFlags& o, const TargetAnswer& t) {
    // The target as typed and the coverage to 10 digits: rounding either could make the line false
    // (a target of 0.9999999 is not "≥ 1").
    return note(trf(N_("Smallest N with coverage ≥ {0}: N = {1} (coverage {2})"), o.target, *t.min_n,
                    fmt::format("{:.10g}", t.coverage_at_min_n)));
}

std::string target_explain(const BestOfNRequest& rq, const TargetAnswer& t) {
    if (rq.p >= 1) return "\n" + tr(N_("Inverse: p = 1: every candidate is correct, so N = 1")) + "\n";
    if (t.target <= 0) return "\n" + tr(N_("Inverse: target ≤ 0, so N = 1")) + "\n";
    return "\n" + trf(N_("Inverse: N = ceil(ln(1 − target) / ln(1 − p)) = {0}"), *t.min_n) + "\n";
}

// The Monte Carlo's arithmetic: each estimate a count of hits over the trials, its 99% Wilson
// interval, and whether the exact value lies in it, for the first rows.
std::string simulation_explain(const SimulationAnswer& s) {
    std::string x = "\n" + wrap(trf(N_("Monte Carlo: each strategy's estimate is p̂ = hits / T over T trials; its 99% "
                                        "interval is Wilson's, (p̂ + z²/2T ± z·sqrt(p̂(1 − p̂)/T + z²/4T²)) / (1 + z²/T) "
                                        "with z = {0}, inside [0, 1] at every count; the exact value agrees when it "
                                        "lies in the interval."),
                                     format_short(kZ99, 6)));
    for (std::size_t i = 0; i < s.rows.size() && i < kExplainedRows; ++i) {
        const SimulationRow& r = s.rows[i];
        const Estimate& e = r.estimate;
        const std::string verdict = !r.agrees ? tr(N_("too few trials to tell")) : *r.agrees ? tr(N_("agrees")) : tr(N_("does not agree"));
        x += wrap(trf(N_("N = {0}, {1}: p̂ = {2}/{3} = {4}, 99% [{5}, {6}], exact {7}: {8}"), r.n, tr(r.strategy),
                      group_thousands(static_cast<std::uint64_t>(e.hits)), group_thousands(e.trials), r6(e.mean),
                      r6(e.interval_99.lo), r6(e.interval_99.hi), r6(r.exact), verdict),
                  "  ", "    ");
    }
    return x;
}

// The text and --explain: the rows with their notes, then each section asked for.
void add_sections(const BestOfNFlags& o, const BestOfNRequest& rq, const BestOfNResult& res, Report& r) {
    if (res.target) {
        r.human += target_text(o, *res.target);
        r.explain += target_explain(rq, *res.target);
    }
    if (res.budget) {
        r.add_table("budget", budget_table(rq, *res.budget), "/budget/plans");
        r.human += budget_text(rq, *res.budget);
        r.explain += "\n" + wrap(tr(N_("Fixed budget: N_verifier = floor(budget / (cost_sample + cost_judge)), "
                                       "N_majority = floor(budget / cost_sample).")));
    }
    if (res.simulation) {
        r.add_table("simulation", simulation_table(*res.simulation), "/simulation/rows");
        r.human += simulation_text(*res.simulation);
        r.explain += simulation_explain(*res.simulation);
    }
}

}  // namespace

Report best_of_n_report(const BestOfNFlags& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    Report r;
    r.json = result_json(o, rq, res);
    r.add_table("rows", rows_table(rq, res), "/rows");
    // With a correlated model beside it, the first table says its own model: independent candidates.
    r.human = wrap(trf(rq.hard_fraction || rq.rho ? N_("Best-of-N with p = {0} per candidate, candidates independent (first "
                                                       "document §3.2)")
                                                  : N_("Best-of-N with p = {0} per candidate (first document §3.2)"),
                       format_short(res.p, 6))) +
              render_table(in_words(rows_table(rq, res, CellForm::text))) +
              note(tr(N_("Coverage P≥1 = 1 − (1 − p)^N is the chance the candidates contain a correct answer, not the "
                         "chance the system answers correctly: that needs a selection step."))) +
              strategies_text(o, rq, res);
    r.explain = coverage_explain(res) + strategies_explain(rq, res);
    model_sections(rq, res, r);
    add_sections(o, rq, res, r);
    if (res.rows.size() >= 3) r.human += chart(rq, res);
    return r;
}

}  // namespace inferlab::app
