#pragma once
// Step-wise search with a process scorer (first document §3.2: "search expands, revises or drops
// branches on intermediate feedback", and "lets scoring errors accumulate over steps").
//
// A task of T steps. The beam starts as one branch, the prompt, which is correct. At each step every
// live branch proposes k continuations: a continuation of a correct branch is correct with
// probability q, a continuation of a wrong branch is wrong (a wrong step is never repaired). A
// process scorer judges each new step and the search keeps the w best of the m·k candidates (all of
// them when there are fewer). The answer is the best-scored candidate of step T; or, with an outcome
// verifier, one picked uniformly among the final beam's answers it accepts (none accepted: a random
// member of the beam, or abstain).
//
// Exact, by a Markov chain over the number of correct branches in the beam: given X correct among M
// candidates, how many correct ones the scorer keeps depends on X and M only (each candidate's score
// depends on its own correctness), so one kernel per (M, kept) serves every step.
#include <cstdint>
#include <optional>
#include <vector>

#include "inferlab/calc/best_of_n.hpp"

namespace inferlab {

// The process scorer's noise model.
struct ProcessScorer {
    enum class Kind { rates, gaussian };
    Kind kind = Kind::rates;
    // rates: a correct step is judged good with probability tpr, a wrong one with fpr; the good ones
    // are kept first, ties broken uniformly at random.
    double tpr = 1, fpr = 0;
    // gaussian: a step's score is gap·[correct] + σ·Z with Z standard normal; the highest are kept.
    double gap = 1, sigma = 0;
};

struct SearchSpec {
    double q = 1;                   // a continuation of a correct branch is correct
    std::uint64_t branch = 1;       // k: continuations per live branch
    std::uint64_t beam = 1;         // w: branches kept
    ProcessScorer scorer;
    std::optional<Verifier> outcome;  // checks the final beam's answers; none: the scorer's best is the answer
};

// The limits of the exact chain (and of the Monte Carlo): w·k candidates per step at most, T steps.
inline constexpr std::uint64_t kMaxSearchCandidates = 128;
inline constexpr std::uint64_t kMaxSearchSteps = 1000;

// What one search of T steps generates and how often it is judged.
struct SearchCost {
    std::uint64_t generated_steps = 0;  // Σ_t m_{t−1}·k: every candidate step proposed
    std::uint64_t scorer_calls = 0;     // one per proposed step
    std::uint64_t verifier_calls = 0;   // the final beam's size with an outcome verifier, else 0
    std::uint64_t final_beam = 0;       // m_T
};
SearchCost search_cost(const SearchSpec& s, std::uint64_t steps);
// The beam's size before each step and after the last: m_0 = 1, m_t = min(w, m_{t−1}·k), t ≤ steps.
std::vector<std::uint64_t> search_beams(const SearchSpec& s, std::uint64_t steps);

// The probability that the search's answer is correct after each of T = 1..steps steps
// (element t−1 for T = t): one pass of the chain. Every input in range (search_spec_rule).
std::vector<double> search_success(const SearchSpec& s, std::uint64_t steps);

// The kernel: with `correct` correct among `candidates`, the probability that exactly j correct
// ones are among the `kept` best-scored (j = 0..kept). Public for its tests.
std::vector<double> kept_correct_distribution(const ProcessScorer& sc, std::uint64_t candidates, std::uint64_t correct,
                                              std::uint64_t kept);

// Monte Carlo of the same search: for T = 1..steps, the count of trials whose answer was correct.
// Each trial runs all T steps once and records its answer at every step (the answer at step t is
// the best candidate of step t, or the outcome verifier's pick over the beam after step t).
std::vector<std::uint64_t> simulate_search(const SearchSpec& s, std::uint64_t steps, std::uint64_t trials,
                                           std::uint64_t seed);

// Best-of-N over whole trajectories spending the same generated steps as a search of T steps:
// N = floor(generated / T) trajectories, each correct with probability q^T, picked by `outcome`.
// q^T: a whole trajectory of T steps is correct only if every step is.
double trajectory_correct(double q, std::uint64_t steps);

struct BestOfNAtSteps {
    std::uint64_t n = 0;
    double p_trajectory = 0;  // q^T
    double accept_rate = 0;   // q' = q^T·TPR + (1 − q^T)·FPR: a trajectory accepted by the verifier
    double success = 0;       // verifier_selection(q^T, N, outcome)
};
BestOfNAtSteps best_of_n_at_steps(double q, std::uint64_t steps, std::uint64_t generated, const Verifier& outcome);

}  // namespace inferlab
