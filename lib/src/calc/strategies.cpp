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

// N whole trajectories of T·L tokens: one batch of N (batched), or N times a lone one (flat).
void price_trajectories(StrategyCost& c, const StrategyTask& t, const StrategyPricing& pr) {
    const std::uint64_t tokens = t.steps * t.step_tokens;
    const double calls = static_cast<double>(c.verifier_calls) * pr.call_seconds;
    c.batched_s = generation_s(pr, c.width, pr.prompt_tokens, tokens) + calls;
    c.flat_s = static_cast<double>(c.width) * generation_s(pr, 1, pr.prompt_tokens, tokens) + calls;
}

// A search: step t decodes its m_{t−1}·k continuations of L tokens as one batch, after the prompt and
// the t − 1 steps before it; every proposed step is judged by the scorer, the final beam maybe by
// the verifier.
void price_search(StrategyCost& c, const StrategyTask& t, const SearchSpec& s, const StrategyPricing& pr) {
    const std::vector<std::uint64_t> m = search_beams(s, t.steps);
    double batched = 0, flat = 0;
    for (std::uint64_t i = 0; i < t.steps; ++i) {
        const std::uint64_t start = pr.prompt_tokens + i * t.step_tokens, batch = m[i] * s.branch;
        batched += generation_s(pr, batch, start, t.step_tokens);
        flat += static_cast<double>(batch) * generation_s(pr, 1, start, t.step_tokens);
    }
    const double calls = static_cast<double>(c.verifier_calls + c.scorer_calls) * pr.call_seconds;
    c.batched_s = batched + calls;
    c.flat_s = flat + calls;
}

}  // namespace

StrategyCost strategy_cost(const StrategyTask& t, StrategyKind kind, std::uint64_t width,
                           const std::optional<StrategyPricing>& pricing, bool with_accuracy) {
    StrategyCost c;
    c.kind = kind;
    c.width = kind == StrategyKind::single ? 1 : width;
    const double p_trajectory = trajectory_correct(t.search.q, t.steps);
    const std::uint64_t per_trajectory = checked_mul(t.steps, t.step_tokens, N_("tokens of a trajectory"));
    switch (kind) {
        case StrategyKind::single:
        case StrategyKind::best_of_n:
        case StrategyKind::majority:
            c.tokens = checked_mul(per_trajectory, c.width, N_("tokens generated"));
            if (kind == StrategyKind::best_of_n) c.verifier_calls = c.width;
            if (!with_accuracy) {
            } else if (kind == StrategyKind::single) {
                c.accuracy = p_trajectory;
            } else if (kind == StrategyKind::best_of_n) {
                c.accuracy = verifier_selection(p_trajectory, c.width, t.outcome);
            } else {
                c.accuracy = majority_vote(spread_wrong(p_trajectory, *t.wrong_answers), c.width);
            }
            if (pricing) price_trajectories(c, t, *pricing);
            break;
        case StrategyKind::search: {
            SearchSpec s = t.search;
            s.beam = width;
            if (s.beam * s.branch > kMaxSearchCandidates) with_accuracy = false;  // past the chain's limit: cost only
            const SearchCost sc = search_cost(s, t.steps);
            c.tokens = checked_mul(sc.generated_steps, t.step_tokens, N_("tokens generated"));
            c.scorer_calls = sc.scorer_calls;
            c.verifier_calls = sc.verifier_calls;
            if (with_accuracy) c.accuracy = search_success(s, t.steps).back();
            if (pricing) price_search(c, t, s, *pricing);
            break;
        }
    }
    c.calls = c.verifier_calls + c.scorer_calls;
    return c;
}

namespace {

double spent(const StrategyCost& c, const StrategyBudget& b) {
    if (b.tokens) return static_cast<double>(c.tokens);
    return b.flat ? *c.flat_s : *c.batched_s;
}
double limit_of(const StrategyBudget& b) { return b.tokens ? static_cast<double>(*b.tokens) : *b.seconds; }

// The widest width in [1, most] whose cost fits (cost grows with the width), or none.
std::optional<StrategyCost> widest(const std::function<StrategyCost(std::uint64_t)>& at, std::uint64_t most,
                                   const StrategyBudget& b) {
    StrategyCost lo = at(1);
    if (spent(lo, b) > limit_of(b)) return std::nullopt;
    std::uint64_t good = 1, bad = most + 1;
    while (bad - good > 1) {  // invariant: `good` fits, `bad` does not (or is past the limit)
        const std::uint64_t mid = good + (bad - good) / 2;
        StrategyCost c = at(mid);
        if (spent(c, b) <= limit_of(b)) good = mid, lo = std::move(c);
        else bad = mid;
    }
    return lo;
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
    // Equal within rounding is a tie (two routes to one value differ in the last bits).
    auto better = [](const StrategyCost& a, const StrategyCost& b) {
        if (!equal_within_rounding(a.accuracy, b.accuracy)) return a.accuracy > b.accuracy;
        return a.tokens < b.tokens;
    };
    const StrategyCost* best = &plans.front();
    for (const StrategyCost& p : plans)
        if (better(p, *best)) best = &p;
    return *best;
}

std::vector<StrategyCost> strategies_at_budget(const StrategyTask& t, const StrategyBudget& b,
                                               const std::optional<StrategyPricing>& pricing) {
    if (b.seconds && !pricing) throw std::invalid_argument("strategies_at_budget: a budget in seconds needs pricing");
    std::vector<StrategyCost> out;
    auto add = [&](StrategyKind kind, std::uint64_t most) {
        if (auto c = widest([&](std::uint64_t w) { return strategy_cost(t, kind, w, pricing); }, most, b)) {
            // At the limit, and the budget would buy one more: its cost alone (no accuracy past the limit).
            c->capped = kind != StrategyKind::single && c->width == most &&
                        spent(strategy_cost(t, kind, most + 1, pricing, false), b) <= limit_of(b);
            out.push_back(*c);
        }
    };
    add(StrategyKind::single, 1);
    add(StrategyKind::best_of_n, kMaxBudgetCandidates);
    if (t.wrong_answers) {
        add(StrategyKind::majority, majority_vote_max_n(*t.wrong_answers));
    }
    add(StrategyKind::search, kMaxSearchCandidates / t.search.branch);
    return out;
}

}  // namespace inferlab
