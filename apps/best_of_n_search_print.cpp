// best-of-n --search's printers (best_of_n_print.hpp): one SearchResult as text, --json, --csv
// tables and --explain. Every number comes from the library (answer/search.hpp).
#include <fmt/format.h>

#include "best_of_n_print.hpp"
#include "inferlab/answer/search.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/text/table.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;

std::string pr(double v) { return format_short(v, 6); }
std::string r6(double v) { return format_real(v, 6); }
std::string note(const std::string& text) { return wrap(text, "  ", "  "); }

bool is_rates(const ProcessScorer& sc) { return sc.kind == ProcessScorer::Kind::rates; }

json scorer_json(const ProcessScorer& sc) {
    const bool rates = is_rates(sc);
    return {{"kind", rates ? "rates" : "gaussian"}, {"tpr", rates ? json(sc.tpr) : json(nullptr)},
            {"fpr", rates ? json(sc.fpr) : json(nullptr)}, {"gap", rates ? json(nullptr) : json(sc.gap)},
            {"sigma", rates ? json(nullptr) : json(sc.sigma)}};
}

json row_json(const SearchRow& r) {
    json b = nullptr;
    if (r.best_of_n) b = {{"n", r.best_of_n->n}, {"p_trajectory", r.best_of_n->p_trajectory}, {"success", r.best_of_n->success}};
    return {{"steps", r.steps}, {"success", r.success}, {"generated_steps", r.cost.generated_steps},
            {"scorer_calls", r.cost.scorer_calls}, {"verifier_calls", r.cost.verifier_calls},
            {"final_beam", r.cost.final_beam}, {"best_of_n", b}, {"ahead", r.ahead.empty() ? json(nullptr) : json(r.ahead)}};
}

json simulation_json(const SearchResult& res) {
    if (res.trials == 0) return nullptr;
    json j = {{"trials", res.trials}, {"seed", res.seed}, {"rows", json::array()},
              {"all_agree", res.undecided == res.rows.size() ? json(nullptr) : json(res.all_agree)},
              {"undecided", res.undecided}};
    for (const auto& r : res.rows)
        j["rows"].push_back({{"steps", r.steps}, {"exact", r.success}, {"estimate", r.estimate->mean},
                             {"interval_99", {r.estimate->interval_99.lo, r.estimate->interval_99.hi}},
                             {"agrees", r.agrees ? json(*r.agrees) : json(nullptr)}});
    return j;
}

json plans_json(const std::vector<StrategyCost>& plans) {
    json a = json::array();
    for (const auto& c : plans)
        a.push_back({{"strategy", strategy_name(c.kind)}, {"width", c.width}, {"tokens", c.tokens},
                     {"verifier_calls", c.verifier_calls}, {"scorer_calls", c.scorer_calls}, {"calls", c.calls},
                     {"accuracy", c.accuracy}, {"capped", c.capped}, {"by_class", c.by_class},
                     {"batched_s", or_null(c.batched_s)}, {"flat_s", or_null(c.flat_s)}});
    return a;
}

json classes_json(const std::vector<ProblemClass>& mix, const std::vector<ClassOutcome>& classes) {
    if (mix.empty()) return nullptr;
    json a = json::array();
    for (const ClassOutcome& c : classes)
        a.push_back({{"share", c.of.share}, {"q", c.of.q}, {"single", c.single}, {"best", strategy_name(c.best)},
                     {"best_accuracy", c.best_accuracy}, {"best_tokens", c.best_tokens}});
    return a;
}

json budget_json(const SearchRequest& rq, const SearchResult& res) {
    if (!res.budget) return nullptr;
    const SearchRequest::Budget& b = *rq.budget;
    const SearchBudgetAnswer& a = *res.budget;
    const auto& pr = b.pricing;
    return {{"tokens", or_null(b.tokens)}, {"seconds", or_null(b.seconds)}, {"steps", a.steps},
            {"step_tokens", b.step_tokens}, {"prompt_tokens", pr ? json(pr->prompt_tokens) : json(nullptr)},
            {"call_seconds", pr ? json(pr->call_seconds) : json(nullptr)}, {"plans", plans_json(a.plans)},
            {"winner", strategy_name(a.winner)},
            {"unaffordable", plans_json(a.unaffordable)},
            {"flat_plans", b.seconds ? plans_json(a.flat_plans) : json(nullptr)},
            {"flat_unaffordable", b.seconds ? plans_json(a.flat_unaffordable) : json(nullptr)},
            {"flat_winner", a.flat_winner ? json(strategy_name(*a.flat_winner)) : json(nullptr)},
            {"pricing_changes_winner", b.seconds ? json(a.pricing_changes_winner) : json(nullptr)},
            {"mix", classes_json(b.mix, a.classes)}};
}

json result_json(const SearchRequest& rq, const SearchResult& res) {
    const SearchSpec& s = rq.spec;
    json j = {{"q", s.q}, {"branch", s.branch}, {"beam", s.beam}, {"scorer", scorer_json(s.scorer)},
              {"final_check", s.outcome.has_value()}, {"rows", json::array()}};
    j["outcome_verifier"] = rq.best_of_n ? json{{"tpr", rq.best_of_n->tpr}, {"fpr", rq.best_of_n->fpr}, {"fallback", rq.best_of_n->fallback_random ? "random" : "abstain"}}
                                         : json(nullptr);
    for (const auto& r : res.rows) j["rows"].push_back(row_json(r));
    j["crossing"] = res.crossing ? json{{"last_steps", res.crossing->last_steps}, {"first_steps", res.crossing->first_steps},
                                        {"before", res.crossing->before}, {"after", res.crossing->after}}
                                 : json(nullptr);
    j["limit"] = res.limit ? json{{"form", res.limit->form}, {"steps", res.limit->steps}, {"value", res.limit->value}}
                           : json(nullptr);
    j["simulation"] = simulation_json(res);
    j["budget"] = budget_json(rq, res);
    return j;
}

std::vector<Column<SearchRow>> row_columns(const SearchRequest& rq) {
    using R = SearchRow;
    auto count = [](const char* key, const char* header, std::uint64_t SearchCost::*field) {
        return Column<R>{key, header, [field](const R& r) { return std::to_string(r.cost.*field); },
                         [field](const R& r) { return group_thousands(r.cost.*field); }};
    };
    std::vector<Column<R>> c = {{"steps", "T", [](const R& r) { return std::to_string(r.steps); }}};
    c.push_back(figure_column<R>("success", N_("search"), [](const R& r) { return r.success; }, pr));
    c.push_back(count("generated_steps", N_("generated"), &SearchCost::generated_steps));
    c.push_back(count("scorer_calls", N_("scored"), &SearchCost::scorer_calls));
    if (rq.spec.outcome) c.push_back(count("verifier_calls", N_("verified"), &SearchCost::verifier_calls));
    if (!rq.best_of_n) return c;
    c.push_back({"best_of_n/n", "N", [](const R& r) { return std::to_string(r.best_of_n->n); },
                 [](const R& r) { return group_thousands(r.best_of_n->n); }});
    c.push_back(figure_column<R>("best_of_n/success", N_("best-of-N"), [](const R& r) { return r.best_of_n->success; }, pr));
    c.push_back({"ahead", N_("ahead"), [](const R& r) { return r.ahead; }});
    return c;
}

std::vector<Column<SearchRow>> simulation_columns() {
    using R = SearchRow;
    const std::vector<Column<R>> c = {
        {"steps", "T", [](const R& r) { return std::to_string(r.steps); }},
        figure_column<R>("exact", N_("exact"), [](const R& r) { return r.success; }, pr),
        figure_column<R>("estimate", N_("Monte Carlo"), [](const R& r) { return r.estimate->mean; }, pr),
        figure_column<R>("interval_99/0", N_("99% low"), [](const R& r) { return r.estimate->interval_99.lo; }, pr),
        figure_column<R>("interval_99/1", N_("99% high"), [](const R& r) { return r.estimate->interval_99.hi; }, pr),
        {"agrees", N_("agrees"), [](const R& r) { return csv_flag(r.agrees); },
         [](const R& r) { return std::string(!r.agrees ? N_("too few trials") : *r.agrees ? N_("yes") : N_("NO")); }}};
    return c;
}

std::string scorer_text(const ProcessScorer& sc) {
    if (is_rates(sc))
        return trf(N_("Process scorer: a correct step is judged good with probability {0}, a wrong one with {1}; the "
                      "good ones are kept first, ties at random."),
                   r6(sc.tpr), r6(sc.fpr));
    return trf(N_("Process scorer: a step scores {0}·[correct] + {1}·Z (Z standard normal); the highest are kept."),
               r6(sc.gap), r6(sc.sigma));
}

std::string setting_text(const SearchRequest& rq) {
    const SearchSpec& s = rq.spec;
    std::string h = note(scorer_text(s.scorer));
    const bool random = s.outcome ? s.outcome->fallback_random : true;
    const std::string fallback = random ? tr(N_("a random member of the beam")) : tr(N_("abstain"));
    h += note(s.outcome ? trf(N_("Answer: one of the final beam's answers that the outcome verifier (TPR {0}, FPR {1}) "
                                  "accepts, picked uniformly; none accepted: {2}."),
                              r6(s.outcome->tpr), r6(s.outcome->fpr), fallback)
                        : tr(N_("Answer: the best-scored candidate of the last step.")));
    if (rq.best_of_n)
        h += note(trf(N_("Best-of-N: as many whole trajectories of T steps as the search's generated steps buy, each "
                         "correct with probability q^T, one picked by the outcome verifier (TPR {0}, FPR {1})."),
                      r6(rq.best_of_n->tpr), r6(rq.best_of_n->fpr)));
    else
        h += note(tr(N_("Give an outcome verifier (--tpr and --fpr) to compare with best-of-N at the same generated "
                        "steps.")));
    return h;
}

// Where the strategy ahead changes, or that it does not (claim 2 of §3.2 in numbers).
std::string crossing_text(const SearchRequest& rq, const SearchResult& res) {
    if (!rq.best_of_n) return "";
    if (const auto& c = res.crossing)
        return note(trf(N_("{0} is ahead up to T = {1}, {2} from T = {3}: each step the process scorer may drop a "
                           "correct branch or keep a wrong one, and those errors compound over the steps, while "
                           "best-of-N judges once but its trajectories are all correct only with q^T."),
                        tr(c->before), c->last_steps, tr(c->after), c->first_steps));
    for (const auto& r : res.rows)
        if (r.ahead != "tie") return note(trf(N_("{0} is ahead at every T shown (no crossing)."), tr(r.ahead)));
    return note(tr(N_("The two are tied at every T shown.")));
}

std::string limit_text(const SearchResult& res) {
    if (!res.limit) return "";
    const SearchLimit& l = *res.limit;
    double chain = 0;
    for (const auto& r : res.rows)
        if (r.steps == l.steps) chain = r.success;
    return note(trf(N_("This search is a case of {0}: at T = {1} it gives {2}; the chain gives {3}."), tr(l.form), l.steps,
                    fmt::format("{:.10g}", l.value), fmt::format("{:.10g}", chain)));
}

std::string simulation_text(const SearchResult& res, const Table& table) {
    std::string h = "\n" + wrap(trf(N_("Monte Carlo ({0} trials, seed {1}), beside the exact values:"),
                                    group_thousands(res.trials), res.seed)) + render_table(in_words(table));
    if (res.undecided > 0)
        h += note(tr(N_("too few trials: no count of hits would put some exact values outside their 99% interval (the "
                        "Wilson interval); raise --simulate")));
    return h;
}

constexpr std::size_t kExplainedRows = 4;

// Σ_t m_{t−1}·k written out for one T (the library's beams): equal terms in a row grouped, "16 × 9".
std::string generated_sum(const SearchSpec& s, const SearchRow& r) {
    const std::vector<std::uint64_t> m = search_beams(s, r.steps);
    std::vector<std::string> terms;
    for (std::uint64_t t = 0; t < r.steps;) {
        std::uint64_t same = 1;
        while (t + same < r.steps && m[t + same] == m[t]) ++same;
        const std::string term = group_thousands(m[t] * s.branch);
        terms.push_back(same == 1 ? term : term + " × " + std::to_string(same));
        t += same;
    }
    return fmt::format("{}", fmt::join(terms, " + "));
}

std::string best_of_n_explain(const SearchRequest& rq, const SearchRow& r) {
    const BestOfNAtSteps& b = *r.best_of_n;
    const Verifier& v = *rq.best_of_n;
    return wrap(fmt::format("T = {}: N = floor({} / {}) = {}; q^T = {}^{} ≈ {}; q' = {}·{} + {}·{} ≈ {}; P ≈ {}", r.steps,
                            group_thousands(r.cost.generated_steps), r.steps, group_thousands(b.n), r6(rq.spec.q),
                            r.steps, r6(b.p_trajectory), r6(b.p_trajectory), r6(v.tpr), r6(1 - b.p_trajectory), r6(v.fpr),
                            r6(b.accept_rate), r6(b.success)),
                "  ", "    ");
}

std::string explain(const SearchRequest& rq, const SearchResult& res) {
    const SearchSpec& s = rq.spec;
    std::string x = wrap(tr(N_("Search (first document §3.2), exact: a chain over c, the correct branches in the beam. "
                               "m_0 = 1 (the prompt), m_t = min(w, m_{t−1}·k). At step t the c correct branches "
                               "propose c·k continuations, X ~ Bin(c·k, q) of them correct (a wrong branch stays "
                               "wrong); of the m_{t−1}·k candidates the scorer keeps m_t, and how many of them are "
                               "correct depends on X alone. The answer after T steps is the best candidate of step T "
                               "(or the outcome verifier's pick over the beam).")));
    for (std::size_t i = 0; i < res.rows.size() && i < kExplainedRows; ++i) {
        const SearchRow& r = res.rows[i];
        const std::string sum = generated_sum(s, r), total = group_thousands(r.cost.generated_steps);
        x += wrap(trf(N_("T = {0}: generated steps Σ_t m_(t−1)·k = {1}; P(correct) = {2}"), r.steps,
                      sum == total ? total : sum + " = " + total, pr(r.success)),
                  "  ", "    ");
    }
    if (rq.best_of_n) {
        x += "\n" + wrap(tr(N_("Best-of-N at the same generated steps: N = floor(generated / T), each trajectory correct "
                               "with q^T; with q' = q^T·TPR + (1 − q^T)·FPR the verifier's pick is correct with "
                               "P = (1 − (1 − q')^N)·q^T·TPR/q', plus (1 − q')^N·q^T·(1 − TPR)/(1 − q') when it picks at random among "
                               "none accepted.")));
        for (std::size_t i = 0; i < res.rows.size() && i < kExplainedRows; ++i) x += best_of_n_explain(rq, res.rows[i]);
    }
    if (res.limit)
        x += "\n" + wrap(trf(N_("Check, the closed form this search is a case of, at T = {0}: {1} ≈ {2}."),
                             res.limit->steps, tr(res.limit->form), fmt::format("{:.10g}", res.limit->value)));
    return x;
}

// The strategies at one cost: width, tokens, calls, time both ways where priced, accuracy.
std::vector<Column<StrategyCost>> plan_columns(bool priced) {
    using C = StrategyCost;
    auto count = [](const char* key, const char* header, std::uint64_t C::*field) {
        return Column<C>{key, header, [field](const C& c) { return std::to_string(c.*field); },
                         [field](const C& c) { return group_thousands(c.*field); }};
    };
    auto seconds = [](const char* key, const char* header, std::optional<double> C::*field) {
        return figure_column<C>(key, header, [field](const C& c) { return c.*field; }, format_seconds);
    };
    std::vector<Column<C>> c = {{"strategy", N_("strategy"), [](const C& p) { return std::string(strategy_name(p.kind)); }},
                                {"width", N_("N or w"), [](const C& p) { return std::to_string(p.width); }}};
    c.push_back(count("tokens", N_("tokens"), &C::tokens));
    Column<C> verified = count("verifier_calls", N_("verified"), &C::verifier_calls),
              scored = count("scorer_calls", N_("scored"), &C::scorer_calls);
    verified.csv_only = scored.csv_only = true;  // the text's "calls" column holds their sum
    c.push_back(verified);
    c.push_back(scored);
    c.push_back(count("calls", N_("calls"), &C::calls));
    if (priced) {
        c.push_back(seconds("batched_s", N_("batched"), &C::batched_s));
        c.push_back(seconds("flat_s", N_("flat"), &C::flat_s));
    }
    c.push_back(figure_column<C>("accuracy", N_("P(correct)"), [](const C& p) { return p.accuracy; }, pr));
    return c;
}

// `time`: the pricing the budget is in (batched_s or flat_s); none: a budget in tokens.
std::string winner_line(const std::vector<StrategyCost>& plans, StrategyKind winner,
                        const std::vector<StrategyCost>& unaffordable, std::optional<double> StrategyCost::*time) {
    std::string capped;
    for (const auto& p : unaffordable)
        capped += note(trf(N_("{0} does not fit: its narrowest plan (N or w = 1) needs {1}."), tr(strategy_name(p.kind)),
                           time ? format_seconds(*(p.*time)) : trf(N_("{0} tokens"), group_thousands(p.tokens))));
    for (const auto& p : plans)
        if (p.capped)
            capped += note(trf(N_("{0}: at its exact limit (N or w = {1}); the budget would buy more."),
                               tr(strategy_name(p.kind)), p.width));
    for (const auto& p : plans)
        if (p.kind == winner)
            return capped + note(trf(N_("Most accurate: {0} at N or w = {1}, P(correct) = {2} ({3} tokens)."),
                                     tr(strategy_name(winner)), p.width, pr(p.accuracy), group_thousands(p.tokens)));
    return capped;
}

// How each plan's cost was counted, with the widest plan of each strategy substituted.
std::string budget_explain(const SearchBudgetAnswer& a) {
    std::string x = "\n" + wrap(tr(N_("At one cost: each strategy takes its widest plan (N trajectories, or the beam w) "
                                      "whose cost fits. Tokens: N·T·L for whole trajectories, L·Σ_t m_(t−1)·k for the "
                                      "search. Time batched: the roofline's decode steps, N trajectories as one batch "
                                      "(or a search step's m·k continuations), each step max(D_B/β, F_B/π) with "
                                      "D_B = W_B + B·M_KV(S) as the context grows; flat: each sequence's steps at "
                                      "batch 1; plus the verifier and scorer calls at their fixed time.")));
    for (const auto& p : a.plans)
        x += wrap(trf(N_("{0}: N or w = {1}: {2} tokens, {3} calls, P(correct) = {4}"), tr(strategy_name(p.kind)), p.width,
                      group_thousands(p.tokens), group_thousands(p.calls), pr(p.accuracy)) +
                      (p.batched_s ? trf(N_("; batched {0}, flat {1}"), format_seconds(*p.batched_s), format_seconds(*p.flat_s))
                                   : std::string()),
                  "  ", "    ");
    return x;
}

// A difficulty mix: each plan's accuracy on each class, then what more budget does on each.
std::vector<Column<StrategyCost>> class_columns(const std::vector<ProblemClass>& mix) {
    using C = StrategyCost;
    std::vector<Column<C>> c = {{"strategy", N_("strategy"), [](const C& p) { return std::string(strategy_name(p.kind)); }}};
    for (std::size_t i = 0; i < mix.size(); ++i)
        c.push_back(figure_column<C>("by_class/" + std::to_string(i), fmt::format("q={} ({}%)", r6(mix[i].q), r6(100 * mix[i].share)),
                                     [i](const C& p) { return p.by_class[i]; }, pr));
    return c;
}

std::string classes_text(const SearchBudgetAnswer& a, const std::vector<ProblemClass>& mix, Report& r) {
    r.add_table("classes", columns_table(class_columns(mix), a.plans), "/budget/plans");
    std::string h = "\n" + wrap(tr(N_("By difficulty, the same plans on each class of the mix (first document §3.2: on "
                                      "easy problems a long trajectory only adds cost, on very hard ones more samples "
                                      "do not help):"))) +
                    render_table(in_words(columns_table(class_columns(mix), a.plans, CellForm::text)));
    for (const ClassOutcome& c : a.classes)
        h += note(c.best == StrategyKind::single
                      ? trf(N_("q = {0}: one sample's {1} is not beaten: more budget buys nothing here."), r6(c.of.q),
                            pr(c.single))
                      : trf(N_("q = {0}: one sample {1}; the most accurate plan, {2}, {3} with {4} tokens."), r6(c.of.q),
                            pr(c.single), tr(strategy_name(c.best)), pr(c.best_accuracy), group_thousands(c.best_tokens)));
    return h;
}

void budget_section(const SearchRequest& rq, const SearchResult& res, Report& r) {
    const SearchRequest::Budget& b = *rq.budget;
    const SearchBudgetAnswer& a = *res.budget;
    const bool priced = b.pricing.has_value();
    const std::string task = trf(N_("the task of T = {0} steps of {1} tokens"), a.steps, group_thousands(b.step_tokens));
    r.add_table("budget", columns_table(plan_columns(priced), a.plans), "/budget/plans");
    r.explain += budget_explain(a);
    r.human += "\n" + wrap(b.tokens ? trf(N_("Strategies at one budget of {0} generated tokens, {1} (first document §3.2):"),
                                          group_thousands(*b.tokens), task)
                                    : trf(N_("Strategies at one budget of {0} of decode time priced by the roofline "
                                             "(batches as decoded), {1} (first document §3.2):"),
                                          format_seconds(*b.seconds), task)) +
               render_table(in_words(columns_table(plan_columns(priced), a.plans, CellForm::text))) +
               winner_line(a.plans, a.winner, a.unaffordable, b.seconds ? &StrategyCost::batched_s : nullptr);
    if (!b.mix.empty()) r.human += classes_text(a, b.mix, r);
    if (!b.seconds) return;
    r.add_table("flat", columns_table(plan_columns(true), a.flat_plans), "/budget/flat_plans");
    r.human += "\n" + wrap(trf(N_("The same {0} with every token priced at its cost alone (batch 1, no batching):"),
                               format_seconds(*b.seconds))) +
               render_table(in_words(columns_table(plan_columns(true), a.flat_plans, CellForm::text))) +
               winner_line(a.flat_plans, *a.flat_winner, a.flat_unaffordable, &StrategyCost::flat_s);
    r.human += note(a.pricing_changes_winner
                        ? trf(N_("Batch pricing changes the winner: {0} with batches priced as decoded, {1} when every "
                                 "token costs the same. N candidates decoded together read the weights once a step, "
                                 "so their time grows more slowly than their tokens."),
                              tr(strategy_name(a.winner)), tr(strategy_name(*a.flat_winner)))
                        : trf(N_("The winner is the same under both pricings: {0}."), tr(strategy_name(a.winner))));
}

}  // namespace

Report search_report(const SearchRequest& rq, const SearchResult& res) {
    Report r;
    r.json = result_json(rq, res);
    r.add_table("rows", columns_table(row_columns(rq), res.rows), "/rows");
    const SearchSpec& s = rq.spec;
    r.human = wrap(trf(N_("Step-wise search: q = {0} per step, k = {1} continuations per branch, beam w = {2} (first "
                          "document §3.2)"),
                       r6(s.q), s.branch, s.beam)) +
              setting_text(rq) + render_table(in_words(columns_table(row_columns(rq), res.rows, CellForm::text))) +
              crossing_text(rq, res) + limit_text(res);
    r.explain = explain(rq, res);
    if (res.trials > 0) {
        r.add_table("simulation", columns_table(simulation_columns(), res.rows), "/simulation/rows");
        r.human += simulation_text(res, columns_table(simulation_columns(), res.rows, CellForm::text));
    }
    if (res.budget) budget_section(rq, res, r);
    return r;
}

}  // namespace inferlab::app
