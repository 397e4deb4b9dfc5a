#include "inferlab/calc/strategies.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/stats.hpp"

namespace inferlab {
namespace {

// `batch` sequences generating `tokens` tokens together after `start` cached ones: the roofline's sum.
double generation_s(const StrategyPricing& pr, std::uint64_t batch, std::uint64_t start, std::uint64_t tokens) {
    return decode_generation(pr.model, batch, start, tokens, pr.machine).total_time_s;
}

// decode-roofline's accounting of a generation: the first token comes from the prompt's prefill (not
// charged: every strategy shares it), each later one from a decode step, reading S = P+1, P+2, …
// N whole trajectories of T·L tokens: T·L − 1 steps as one batch of N (batched), or N lone ones (flat).
void price_trajectories(StrategyCost& c, const StrategyTask& t, const StrategyPricing& pr) {
    const std::uint64_t tokens = t.steps * t.step_tokens, start = pr.prompt_tokens + 1;
    const double calls = static_cast<double>(c.verifier_calls) * pr.call_seconds;
    c.batched_s = generation_s(pr, c.width, start, tokens - 1) + calls;
    c.flat_s = static_cast<double>(c.width) * generation_s(pr, 1, start, tokens - 1) + calls;
}

// A search, in the same accounting: the k continuations of a branch sample their first token from
// the logits of the branch's last token, one decode step of the m parents (after step 1; step 1's
// come from the prefill), then decode their L − 1 further tokens as one batch of m·k. Every proposed
// step is judged by the scorer, the final beam maybe by the verifier.
void price_search(StrategyCost& c, const StrategyTask& t, const SearchSpec& s, const StrategyPricing& pr) {
    const std::vector<std::uint64_t> m = search_beams(s, t.steps);
    const std::uint64_t L = t.step_tokens;
    double batched = 0, flat = 0;
    for (std::uint64_t i = 0; i < t.steps; ++i) {
        const std::uint64_t context = pr.prompt_tokens + i * L, batch = m[i] * s.branch;
        if (i > 0) {  // the parents' step that gives this step's first tokens
            batched += generation_s(pr, m[i], context, 1);
            flat += static_cast<double>(m[i]) * generation_s(pr, 1, context, 1);
        }
        batched += generation_s(pr, batch, context + 1, L - 1);
        flat += static_cast<double>(batch) * generation_s(pr, 1, context + 1, L - 1);
    }
    const double calls = static_cast<double>(c.verifier_calls + c.scorer_calls) * pr.call_seconds;
    c.batched_s = batched + calls;
    c.flat_s = flat + calls;
}

}  // namespace

// The plan's accuracy on one class of problems, whose steps are correct with probability q.
double accuracy_at(const StrategyTask& t, StrategyKind kind, std::uint64_t width, double q) {
    const double p_trajectory = trajectory_correct(q, t.steps);
    switch (kind) {
        case StrategyKind::single: return p_trajectory;
        case StrategyKind::best_of_n: return verifier_selection(p_trajectory, width, t.outcome);
        case StrategyKind::majority: return majority_vote(spread_wrong(p_trajectory, *t.wrong_answers), width);
        case StrategyKind::search: {
            SearchSpec s = t.search;
            s.q = q;
            s.beam = width;
            return search_success(s, t.steps).back();
        }
    }
    return 0;
}

StrategyCost strategy_cost(const StrategyTask& t, StrategyKind kind, std::uint64_t width,
                           const std::optional<StrategyPricing>& pricing, bool with_accuracy) {
    StrategyCost c;
    c.kind = kind;
    c.width = kind == StrategyKind::single ? 1 : width;
    const std::uint64_t per_trajectory = checked_mul(t.steps, t.step_tokens, N_("tokens of a trajectory"));
    if (kind == StrategyKind::search) {
        SearchSpec s = t.search;
        s.beam = width;
        if (s.beam * s.branch > kMaxSearchCandidates) with_accuracy = false;  // past the chain's limit: cost only
        const SearchCost sc = search_cost(s, t.steps);
        c.tokens = checked_mul(sc.generated_steps, t.step_tokens, N_("tokens generated"));
        c.scorer_calls = sc.scorer_calls;
        c.verifier_calls = sc.verifier_calls;
        if (pricing) price_search(c, t, s, *pricing);
    } else {
        c.tokens = checked_mul(per_trajectory, c.width, N_("tokens generated"));
        if (kind == StrategyKind::best_of_n) c.verifier_calls = c.width;
        if (pricing) price_trajectories(c, t, *pricing);
    }
    c.calls = c.verifier_calls + c.scorer_calls;
    if (!with_accuracy) return c;
    // One class at the search's q, or the mix: each class's accuracy, and their mean by share.
    if (t.mix.empty()) {
        c.accuracy = accuracy_at(t, kind, c.width, t.search.q);
        return c;
    }
    for (const ProblemClass& m : t.mix) {
        c.by_class.push_back(accuracy_at(t, kind, c.width, m.q));
        c.accuracy += m.share * c.by_class.back();
    }
    return c;
}

namespace {

double spent(const StrategyCost& c, const StrategyBudget& b) {
    if (b.tokens) return static_cast<double>(c.tokens);
    return b.flat ? *c.flat_s : *c.batched_s;
}
double limit_of(const StrategyBudget& b) { return b.tokens ? static_cast<double>(*b.tokens) : *b.seconds; }

// The widest width in [1, most] whose cost fits (cost grows with the width), or none.
// The widest width in [1, most] whose cost fits (cost grows with the width), found by its cost alone
// (`cost`), or none.
std::optional<std::uint64_t> widest(const std::function<StrategyCost(std::uint64_t)>& cost, std::uint64_t most,
                                    const StrategyBudget& b) {
    if (spent(cost(1), b) > limit_of(b)) return std::nullopt;
    std::uint64_t good = 1, bad = most + 1;
    while (bad - good > 1) {  // invariant: `good` fits, `bad` does not (or is past the limit)
        const std::uint64_t mid = good + (bad - good) / 2;
        if (spent(cost(mid), b) <= limit_of(b)) good = mid;
        else bad = mid;
    }
    return good;
}

// The most accurate of the affordable widths tried: 1, 2, 4, … below the widest, the widest and the
// one under it (accuracy need not grow with the width: a vote of an even N ties, a wider beam can
// keep more wrong branches); the cheaper of two equally accurate.
StrategyCost most_accurate(const std::function<StrategyCost(std::uint64_t)>& at, std::uint64_t widest_width) {
    std::vector<std::uint64_t> widths;
    for (std::uint64_t w = 1; w < widest_width; w *= 2) widths.push_back(w);
    if (widest_width > 1) widths.push_back(widest_width - 1);
    widths.push_back(widest_width);
    std::optional<StrategyCost> best;
    for (std::uint64_t w : widths) {
        StrategyCost c = at(w);
        if (!best || (c.accuracy > best->accuracy && !equal_within_rounding(c.accuracy, best->accuracy))) best = std::move(c);
    }
    return *best;
}

// How far a beam can grow: min(w, k^T) branches at most, so a wider beam changes nothing (k = 1: 1).
std::uint64_t beam_reach(const StrategyTask& t, std::uint64_t most) {
    std::uint64_t reach = 1;
    for (std::uint64_t i = 0; i < t.steps && reach < most; ++i) reach = std::min(most, reach * t.search.branch);
    return reach;
}

}  // namespace

const char* strategy_name(StrategyKind kind) {
    switch (kind) {
        case StrategyKind::single: return N_("single sample");
        case StrategyKind::best_of_n: return N_("best-of-N + verifier");
        case StrategyKind::majority: return N_("majority vote");
        case StrategyKind::search: return N_("search");
    }
    return "";
}

const StrategyCost& best_plan(const std::vector<StrategyCost>& plans) {
    // A plan that does not fit is no candidate (single sample always fits where any does).
    // Equal within rounding is a tie (two routes to one value differ in the last bits).
    auto better = [](const StrategyCost& a, const StrategyCost& b) {
        if (!equal_within_rounding(a.accuracy, b.accuracy)) return a.accuracy > b.accuracy;
        return a.tokens < b.tokens;
    };
    const StrategyCost* best = &plans.front();
    for (const StrategyCost& p : plans)
        if (p.fits && better(p, *best)) best = &p;
    return *best;
}

std::vector<StrategyCost> strategies_at_budget(const StrategyTask& t, const StrategyBudget& b,
                                               const std::optional<StrategyPricing>& pricing) {
    if (b.seconds && !pricing) throw std::invalid_argument("strategies_at_budget: a budget in seconds needs pricing");
    std::vector<StrategyCost> out;
    // `most`: the exact computation's limit; `reach`: the widest that changes anything (a beam's).
    auto add = [&](StrategyKind kind, std::uint64_t most, std::uint64_t reach) {
        auto cost = [&](std::uint64_t w) { return strategy_cost(t, kind, w, pricing, false); };
        const std::optional<std::uint64_t> w = widest(cost, reach, b);
        if (!w) {  // not even the narrowest plan fits: kept with its cost, marked, for the output to say so
            StrategyCost narrowest = cost(1);
            narrowest.fits = false;
            out.push_back(narrowest);
            return;
        }
        StrategyCost c = most_accurate([&](std::uint64_t x) { return strategy_cost(t, kind, x, pricing); }, *w);
        // At the exact limit while the budget would buy one more (the cost alone: no accuracy past it).
        c.capped = kind != StrategyKind::single && *w == most && spent(cost(most + 1), b) <= limit_of(b);
        out.push_back(c);
    };
    add(StrategyKind::single, 1, 1);
    add(StrategyKind::best_of_n, kMaxBudgetCandidates, kMaxBudgetCandidates);
    if (t.wrong_answers) add(StrategyKind::majority, majority_vote_max_n(*t.wrong_answers), majority_vote_max_n(*t.wrong_answers));
    const std::uint64_t beams = kMaxSearchCandidates / t.search.branch;
    add(StrategyKind::search, beams, beam_reach(t, beams));
    return out;
}

}  // namespace inferlab
