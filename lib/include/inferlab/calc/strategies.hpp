#pragma once
// Test-time strategies compared at one cost (first document §3.2: "compare strategies at a fixed
// total cost, reporting accuracy, tokens generated, tool calls and time"). A task of T steps of
// L tokens each (calc/search.hpp's task): one sample; best-of-N over whole trajectories with an
// outcome verifier; majority vote over their answers; step-wise search with a process scorer.
//
// Time is priced by the decode roofline (calc/roofline.hpp): N trajectories decoded together are
// one batch whose every step reads the weights once (§2.1.3's argument applied to §3.2), so their
// time grows more slowly than their tokens; a search decodes each step's m·k continuations as one
// batch. Beside it, the same work priced as if every token cost what it costs alone (batch 1): the
// comparison that ignores batching. Each verifier or scorer call costs a fixed time of its own.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/calc/best_of_n.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/search.hpp"

namespace inferlab {

// A class of problems in a difficulty mix: its share of the problems, and its per-step q.
struct ProblemClass {
    double share = 0, q = 0;
};

struct StrategyTask {
    SearchSpec search;               // q, the process scorer, k; search.beam is the largest beam tried
    // A mix of easy and hard problems (first document §3.2: on easy tasks a long trajectory only adds
    // cost, on very hard ones more samples do not help); empty: every problem at search.q.
    std::vector<ProblemClass> mix;
    std::uint64_t steps = 1;         // T
    std::uint64_t step_tokens = 1;   // L: tokens one step generates
    Verifier outcome;                // best-of-N's verifier
    std::optional<std::uint64_t> wrong_answers;  // majority vote: k equally likely wrong answers (none: no vote)
};

// How a strategy's time is priced: by the roofline (a model and a machine), with a fixed time per
// verifier or scorer call, and the prompt the trajectories continue.
struct StrategyPricing {
    DecodeModel model;
    Machine machine;
    std::uint64_t prompt_tokens = 0;
    double call_seconds = 0;         // one verifier or scorer call
};

enum class StrategyKind { single, best_of_n, majority, search };

struct StrategyCost {
    StrategyKind kind = StrategyKind::single;
    std::uint64_t width = 1;          // N trajectories, or the search's beam w
    std::uint64_t tokens = 0;         // generated
    std::uint64_t verifier_calls = 0, scorer_calls = 0;
    std::uint64_t calls = 0;          // verifier_calls + scorer_calls: what the call time is paid for
    double accuracy = 0;              // exact (with a mix: the classes' accuracies weighted by their shares)
    std::vector<double> by_class;     // with a mix: each class's accuracy, in the mix's order
    bool capped = false;              // the budget buys more than the exact computation's limit allows
    bool fits = true;                 // false: even the narrowest plan (shown) is over the budget
    std::optional<double> batched_s;  // the roofline, batches as decoded (with pricing)
    std::optional<double> flat_s;     // every token at its batch-1 cost (with pricing)
};

// One strategy at width `width` (N, or the beam w), with its tokens, calls, accuracy and, with
// `pricing`, its time both ways. `with_accuracy` false: the cost alone, accuracy 0 (a width past
// the exact computation's limit has a cost but no exact accuracy).
StrategyCost strategy_cost(const StrategyTask& task, StrategyKind kind, std::uint64_t width,
                           const std::optional<StrategyPricing>& pricing, bool with_accuracy = true);

// The budget: tokens generated, or seconds (which needs pricing; `flat` prices every token alike).
struct StrategyBudget {
    std::optional<std::uint64_t> tokens;
    std::optional<double> seconds;
    bool flat = false;
};

// The best affordable plan of each strategy: the most accurate of the widths tried up to the widest
// that fits (best-of-N up to N = 1024, majority vote up to majority_vote_max_n, the search up to
// w·k ≤ kMaxSearchCandidates and no wider than its beam can grow, k^T). A strategy whose narrowest
// plan does not fit is kept with that plan's cost and fits = false. In the order single, best-of-N,
// majority (with wrong answers), search.
std::vector<StrategyCost> strategies_at_budget(const StrategyTask& task, const StrategyBudget& budget,
                                               const std::optional<StrategyPricing>& pricing);

// The strategy's name, a msgid ("single sample", "best-of-N + verifier", "majority vote", "search").
const char* strategy_name(StrategyKind kind);

// The best of `plans`: the highest accuracy, then the fewest tokens (a tie at equal accuracy goes to
// the cheaper plan). `plans` not empty.
const StrategyCost& best_plan(const std::vector<StrategyCost>& plans);

// The limits strategies_at_budget searches within.
inline constexpr std::uint64_t kMaxBudgetCandidates = 1024;  // majority vote: majority_vote_max_n

}  // namespace inferlab
