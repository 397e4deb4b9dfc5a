#pragma once
// best-of-n --search's whole answer as one value (issue #32): the step-wise search's success after
// T steps (exact), what it generated and how often it was judged, best-of-N over whole trajectories
// spending the same generated steps, which of the two is ahead and where that changes, and a Monte
// Carlo beside the exact values. One call, search_answer(), that a unit test reaches.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/calc/search.hpp"
#include "inferlab/calc/strategies.hpp"

namespace inferlab {

// What search_answer's errors call each input (the caller's flags, or these terms).
struct SearchNames {
    std::string q = "q", branch = "k", beam = "w", steps = "T", step_tpr = "scorer TPR", step_fpr = "scorer FPR",
                gap = "score gap", sigma = "score sigma", trials = "trials", budget_tokens = "budget in tokens",
                budget_seconds = "budget in seconds", outcome = "outcome verifier", mix = "difficulty mix";
};

struct SearchRequest {
    SearchSpec spec;
    std::vector<std::uint64_t> steps;         // T for each row, in the order given
    std::optional<Verifier> best_of_n;        // the outcome verifier best-of-N is compared with (none: no comparison)
    struct Simulation {
        std::uint64_t trials = 0, seed = 1;
    };
    std::optional<Simulation> simulation;
    // Strategies at one cost on the task of the last T listed: a budget in tokens, or in seconds
    // priced by the roofline (then also with every token at its batch-1 cost, beside).
    struct Budget {
        std::optional<std::uint64_t> tokens;
        std::optional<double> seconds;
        std::uint64_t step_tokens = 1;               // L
        std::optional<std::uint64_t> wrong_answers;  // majority vote's k
        std::optional<StrategyPricing> pricing;      // needed for seconds; with tokens it adds the times
        std::vector<ProblemClass> mix;               // a difficulty mix (empty: every problem at q)
    };
    std::optional<Budget> budget;
    SearchNames names;
};

struct SearchRow {
    std::uint64_t steps = 0;                  // T
    double success = 0;                       // exact
    SearchCost cost;
    std::optional<BestOfNAtSteps> best_of_n;  // with the same generated steps
    std::string ahead;                        // msgid: "search", "best-of-N", "tie"; empty without a comparison
    std::optional<Estimate> estimate;         // Monte Carlo
    std::optional<bool> agrees;               // exact inside the 99% interval; none: too few trials to tell
};

// Where the strategy ahead changes, between two consecutive rows (by T ascending).
struct SearchCrossing {
    std::uint64_t last_steps = 0, first_steps = 0;  // `before` is ahead at last_steps, `after` from first_steps
    std::string before, after;                      // msgids
};

// The closed forms the chain must reproduce, where this search is one of their cases.
struct SearchLimit {
    // msgid: "(1 − (1 − q)^k)^T" (noiseless scorer, beam 1, no outcome check), "q^T" (a scorer with no
    // information), or "best-of-k with the scorer as verifier" (T = 1, rates)
    std::string form;
    std::uint64_t steps = 0; // the last row's T
    double value = 0;        // the closed form at that T
};

// One class of a difficulty mix under the budget's plans: what one sample gets there, and the best
// plan for that class alone (claim 3 of §3.2: where more samples stop helping, where they add cost).
struct ClassOutcome {
    ProblemClass of;
    double single = 0;                        // one sample's accuracy on the class
    StrategyKind best = StrategyKind::single; // the plan most accurate on the class
    double best_accuracy = 0;
    std::uint64_t best_tokens = 0;
};

struct SearchBudgetAnswer {
    std::uint64_t steps = 0;                  // T of the task compared
    std::vector<StrategyCost> plans;          // the best affordable plan of each strategy (calc/strategies.hpp)
    std::vector<StrategyCost> unaffordable;   // the narrowest plan of each strategy that does not fit
    std::vector<ClassOutcome> classes;        // with a difficulty mix, one per class
    StrategyKind winner = StrategyKind::single;
    // A budget in seconds: the same budget with every token priced at its batch-1 cost, and whether
    // that pricing picks another winner.
    std::vector<StrategyCost> flat_plans, flat_unaffordable;
    std::optional<StrategyKind> flat_winner;
    bool pricing_changes_winner = false;
};

struct SearchResult {
    std::vector<SearchRow> rows;
    std::optional<SearchCrossing> crossing;   // none: no comparison, or one strategy ahead (or tied) throughout
    std::optional<SearchLimit> limit;
    std::uint64_t trials = 0, seed = 0;       // the Monte Carlo's, 0 trials: none
    bool all_agree = true;                    // every row that can tell agrees
    std::uint64_t undecided = 0;              // rows with too few trials to tell
    std::optional<SearchBudgetAnswer> budget;
};

// The Monte Carlo's largest: trials × the candidates of the longest search.
inline constexpr std::uint64_t kMaxSearchSimulatedCandidates = 250000000;

// Throws InputError naming req.names' input that broke its rule (q, the scorer's rates, gap and σ
// in range; k, w, T at least 1; w·k ≤ kMaxSearchCandidates; T ≤ kMaxSearchSteps; the Monte Carlo's
// size). The rule is a msgid with its arguments.
SearchResult search_answer(const SearchRequest& req);

// The search that shows the accumulation (Figure 14's panel, verify's claim): q = 0.8, k = 4, w = 4,
// a step scorer of TPR 0.9 and FPR 0.3, T = 1..12, best-of-N against it picked by `outcome`.
SearchRequest accumulation_search(const Verifier& outcome);

}  // namespace inferlab
