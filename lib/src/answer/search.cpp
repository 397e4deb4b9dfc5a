#include "inferlab/answer/search.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {
namespace {

void check_probability(const std::string& name, double v) {
    if (!(v >= 0 && v <= 1)) throw InputError(name, format_real(v, 10), N_("must be a probability in [0, 1]"));
}

void check_scorer(const ProcessScorer& sc, const SearchNames& nm) {
    if (sc.kind == ProcessScorer::Kind::rates) {
        check_probability(nm.step_tpr, sc.tpr);
        check_probability(nm.step_fpr, sc.fpr);
        return;
    }
    if (!(sc.gap >= 0 && std::isfinite(sc.gap)))
        throw InputError(nm.gap, format_real(sc.gap, 10), N_("must be a finite number ≥ 0 (the mean score of a correct step "
                                                              "above a wrong one)"));
    if (!(sc.sigma >= 0 && std::isfinite(sc.sigma)))
        throw InputError(nm.sigma, format_real(sc.sigma, 10), N_("must be a finite number ≥ 0"));
}

void check_request(const SearchRequest& r) {
    const SearchNames& nm = r.names;
    const SearchSpec& s = r.spec;
    check_probability(nm.q, s.q);
    check_scorer(s.scorer, nm);
    if (s.branch == 0) throw InputError(nm.branch, "0", N_("must be at least 1"));
    if (s.beam == 0) throw InputError(nm.beam, "0", N_("must be at least 1"));
    if (s.branch > kMaxSearchCandidates || s.beam > kMaxSearchCandidates / s.branch)
        throw InputError(nm.beam, std::to_string(s.beam),
                         N_("with {0} continuations per branch gives more than {1} candidates per step (w·k ≤ {1}: the "
                            "exact chain's limit)"),
                         {std::to_string(s.branch), std::to_string(kMaxSearchCandidates)});
    if (r.steps.empty()) throw InputError(N_("no step count {0} given"), {nm.steps});
    for (std::uint64_t t : r.steps)
        if (t == 0 || t > kMaxSearchSteps)
            throw InputError(nm.steps, std::to_string(t), N_("must be from 1 to {0} steps"), {std::to_string(kMaxSearchSteps)});
    if (!r.simulation) return;
    const std::uint64_t trials = r.simulation->trials;
    if (trials == 0) throw InputError(nm.trials, "0", N_("must be at least 1"));
    const std::uint64_t longest = *std::max_element(r.steps.begin(), r.steps.end());
    const std::uint64_t per_trial = search_cost(s, longest).generated_steps;  // ≤ 128 × 1000: no overflow
    if (trials > kMaxSearchSimulatedCandidates / per_trial)
        throw InputError(nm.trials, std::to_string(trials),
                         N_("would simulate more than {0} candidate steps ({1} per trial of {2} steps): fewer trials or "
                            "fewer steps"),
                         {group_thousands(kMaxSearchSimulatedCandidates), group_thousands(per_trial), std::to_string(longest)});
}

bool noiseless(const ProcessScorer& sc) {
    return sc.kind == ProcessScorer::Kind::rates ? sc.tpr == 1 && sc.fpr == 0 : sc.gap > 0 && sc.sigma == 0;
}
bool uninformative(const ProcessScorer& sc) {
    return sc.kind == ProcessScorer::Kind::rates ? sc.tpr == sc.fpr : sc.gap == 0;
}

// The closed form this search is a case of, if any (none with an outcome check: the forms pick by
// the scorer alone).
std::optional<SearchLimit> limit_of(const SearchRequest& r) {
    const SearchSpec& s = r.spec;
    if (s.outcome) return std::nullopt;
    const std::uint64_t last = r.steps.back();
    const double T = static_cast<double>(last);
    if (noiseless(s.scorer) && s.beam == 1)
        return SearchLimit{N_("(1 − (1 − q)^k)^T"), last, std::pow(coverage(s.q, s.branch), T)};
    if (uninformative(s.scorer)) return SearchLimit{N_("q^T"), last, std::pow(s.q, T)};
    if (s.scorer.kind == ProcessScorer::Kind::rates && std::find(r.steps.begin(), r.steps.end(), 1) != r.steps.end())
        return SearchLimit{N_("best-of-k with the scorer as verifier"), 1,
                           verifier_selection(s.q, s.branch, Verifier{s.scorer.tpr, s.scorer.fpr, true})};
    return std::nullopt;
}

// Equal within rounding is a tie: at T = 1 a search with --final-check is best-of-k with the outcome
// verifier, the same value reached by two routes that differ in the last bits.
const char* ahead_of(double search, double best_of_n) {
    if (equal_within_rounding(search, best_of_n)) return N_("tie");
    return search > best_of_n ? N_("search") : N_("best-of-N");
}

// The first change of the strategy ahead, rows taken by T ascending (ties pass over).
std::optional<SearchCrossing> crossing_of(std::vector<SearchRow> rows) {
    std::sort(rows.begin(), rows.end(), [](const SearchRow& a, const SearchRow& b) { return a.steps < b.steps; });
    const SearchRow* leader = nullptr;
    for (const SearchRow& row : rows) {
        if (row.ahead.empty() || row.ahead == "tie") continue;
        if (leader && row.ahead != leader->ahead) return SearchCrossing{leader->steps, row.steps, leader->ahead, row.ahead};
        leader = &row;
    }
    return std::nullopt;
}

void add_simulation(const SearchRequest& r, SearchResult& res) {
    res.trials = r.simulation->trials;
    res.seed = r.simulation->seed;
    const std::uint64_t longest = *std::max_element(r.steps.begin(), r.steps.end());
    const std::vector<std::uint64_t> hits = simulate_search(r.spec, longest, res.trials, res.seed);
    for (SearchRow& row : res.rows) {
        row.estimate = make_estimate(hits[row.steps - 1], res.trials);
        row.agrees = row.estimate->agrees_with(row.success);
        res.all_agree = res.all_agree && row.agrees.value_or(true);
        res.undecided += !row.agrees;
    }
}

// A difficulty mix: shares that sum to 1, each class's q a probability, at most 8 classes.
void check_mix(const std::vector<ProblemClass>& mix, const SearchNames& nm) {
    if (mix.empty()) return;
    if (mix.size() > 8) throw InputError(nm.mix, std::to_string(mix.size()), N_("must have at most 8 classes"));
    double total = 0;
    for (const ProblemClass& c : mix) {
        if (!(c.share > 0 && c.share <= 1))
            throw InputError(nm.mix, format_real(c.share, 10), N_("a class's share must be in (0, 1]"));
        if (!(c.q >= 0 && c.q <= 1)) throw InputError(nm.mix, format_real(c.q, 10), N_("a class's q must be in [0, 1]"));
        total += c.share;
    }
    if (std::fabs(total - 1) > 1e-9)
        throw InputError(nm.mix, format_real(total, 10), N_("the shares must sum to 1"));
}

void split_fitting(std::vector<StrategyCost> all, std::vector<StrategyCost>& fit, std::vector<StrategyCost>& left_out) {
    for (StrategyCost& c : all) (c.fits ? fit : left_out).push_back(std::move(c));
}

// Strategies at one cost on the task of the last T listed.
SearchBudgetAnswer budget_of(const SearchRequest& r) {
    const SearchRequest::Budget& b = *r.budget;
    if (!r.best_of_n)
        throw InputError(N_("a budget compares best-of-N with an outcome verifier: give {0}"), {r.names.outcome});
    if (b.seconds && !b.pricing)
        throw InputError(r.names.budget_seconds, format_real(*b.seconds, 6),
                         N_("needs a model and a machine to price the time"));
    if (b.step_tokens == 0) throw InputError(N_("a budget needs at least one token a step"));
    if (b.wrong_answers && (*b.wrong_answers == 0 || *b.wrong_answers > 32))
        throw InputError("wrong answers", std::to_string(*b.wrong_answers), N_("must be between 1 and 32 wrong answers"));
    check_mix(b.mix, r.names);
    StrategyTask task{r.spec, b.mix, r.steps.back(), b.step_tokens, *r.best_of_n, b.wrong_answers};
    SearchBudgetAnswer out;
    out.steps = task.steps;
    // The narrowest plan, one sample: a budget under it buys nothing to compare.
    const StrategyCost one = strategy_cost(task, StrategyKind::single, 1, b.pricing);
    if (b.tokens && *b.tokens < one.tokens)
        throw InputError(r.names.budget_tokens, std::to_string(*b.tokens),
                         N_("buys no complete sample: one trajectory of {0} steps is {1} tokens"),
                         {std::to_string(task.steps), group_thousands(one.tokens)});
    if (b.seconds && *b.seconds < *one.batched_s)
        throw InputError(r.names.budget_seconds, format_real(*b.seconds, 6),
                         N_("buys no complete sample: one trajectory of {0} steps takes {1} s"),
                         {std::to_string(task.steps), format_real(*one.batched_s, 6)});
    split_fitting(strategies_at_budget(task, StrategyBudget{b.tokens, b.seconds, false}, b.pricing), out.plans,
                  out.unaffordable);
    out.winner = best_plan(out.plans).kind;
    for (std::size_t i = 0; i < b.mix.size(); ++i) {
        const StrategyCost& one_sample = out.plans.front();
        ClassOutcome c{b.mix[i], one_sample.by_class[i], StrategyKind::single, one_sample.by_class[i], one_sample.tokens};
        for (const StrategyCost& p : out.plans)
            if (p.by_class[i] > c.best_accuracy && !equal_within_rounding(p.by_class[i], c.best_accuracy)) {
                c.best = p.kind;
                c.best_accuracy = p.by_class[i];
                c.best_tokens = p.tokens;
            }
        out.classes.push_back(c);
    }
    if (b.seconds) {
        split_fitting(strategies_at_budget(task, StrategyBudget{std::nullopt, b.seconds, true}, b.pricing), out.flat_plans,
                      out.flat_unaffordable);
        if (!out.flat_plans.empty()) {
            out.flat_winner = best_plan(out.flat_plans).kind;
            out.pricing_changes_winner = *out.flat_winner != out.winner;
        }
    }
    return out;
}

}  // namespace

SearchRequest accumulation_search(const Verifier& outcome) {
    SearchRequest s;
    s.spec.q = 0.8;
    s.spec.branch = 4;
    s.spec.beam = 4;
    s.spec.scorer.tpr = 0.9;
    s.spec.scorer.fpr = 0.3;
    for (std::uint64_t t = 1; t <= 12; ++t) s.steps.push_back(t);
    s.best_of_n = outcome;
    return s;
}

SearchResult search_answer(const SearchRequest& r) {
    check_request(r);
    const std::uint64_t longest = *std::max_element(r.steps.begin(), r.steps.end());
    const std::vector<double> success = search_success(r.spec, longest);
    SearchResult res;
    for (std::uint64_t t : r.steps) {
        SearchRow row;
        row.steps = t;
        row.success = success[t - 1];
        row.cost = search_cost(r.spec, t);
        if (r.best_of_n) {
            row.best_of_n = best_of_n_at_steps(r.spec.q, t, row.cost.generated_steps, *r.best_of_n);
            row.ahead = ahead_of(row.success, row.best_of_n->success);
        }
        res.rows.push_back(row);
    }
    res.crossing = crossing_of(res.rows);
    res.limit = limit_of(r);
    if (r.simulation) add_simulation(r, res);
    if (r.budget) res.budget = budget_of(r);
    return res;
}

}  // namespace inferlab
