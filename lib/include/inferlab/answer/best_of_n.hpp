#pragma once
// best-of-n's whole answer as one value (issue #15): coverage and every selection strategy asked
// for, per N; the inverse (smallest N for a target); strategies at equal cost; and a Monte Carlo
// beside the exact values. One call, best_of_n(), that a unit test reaches; the app prints it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/calc/best_of_n.hpp"

namespace inferlab {

// What best_of_n's errors call each input: the library's own terms by default; a caller that
// reads them from flags passes the flags' names, and the errors say those (no mapping back).
struct BestOfNNames {
    std::string p = "p", n = "N", wrong_answers = "wrong answers", budget = "budget", cost_sample = "cost of a sample",
                cost_judge = "cost of a judgement", hard_fraction = "hard fraction", rho = "rho", trials = "trials";
};

struct BestOfNRequest {
    double p = 0;                                  // one candidate correct
    std::vector<std::uint64_t> ns;                 // candidate counts, one row each
    std::optional<Verifier> verifier;              // selection by a verifier
    std::optional<std::vector<double>> answer_dist;  // majority vote: correct answer first
    std::optional<double> judge_bias;              // a judge biased to wrong answers
    std::optional<double> hard_fraction;           // correlated errors: share of unsolvable problems
    std::optional<double> rho;                     // correlated errors: beta spread of p
    std::optional<double> target;                  // smallest N whose coverage reaches it
    struct Budget {
        double budget = 0, cost_sample = 1, cost_judge = 0;
    };
    std::optional<Budget> budget;                  // strategies at equal total cost
    struct Simulation {
        std::uint64_t trials = 0, seed = 1;
    };
    std::optional<Simulation> simulation;          // Monte Carlo beside the exact values
    BestOfNNames names;                            // how errors name the inputs
};

// Every strategy asked for under one distribution of p across problems (calc/problems.hpp): the
// same figures as the row's, with correlated errors, so that a table of them is one model's.
struct ModelFigures {
    double coverage = 0;
    std::optional<double> verifier_selection, majority_vote, biased_judge;
    // The hard fraction's terms of the verifier's figure: its value on a solvable problem (at
    // p/(1 − h)) and on a hard one (at p = 0), for --explain to substitute.
    std::optional<double> verifier_on_solvable, verifier_on_hard;
};

// One N: coverage and each strategy that was asked for (empty: not asked).
struct BestOfNRow {
    std::uint64_t n = 0;
    double coverage = 0;  // 1 − (1 − p)^N
    double none_correct = 0;  // 1 − coverage, for showing the subtraction (rounds to 1 for tiny p)
    std::optional<double> verifier_selection, majority_vote, biased_judge, coverage_hard_fraction, coverage_beta;
    std::optional<double> all_correct;  // p^N, with a biased judge: the candidates it cannot pick wrong among
    std::optional<ModelFigures> hard_fraction, beta;  // the strategies under each correlated model asked for
};

struct VerifierFacts {
    double accept_rate = 0;    // q = p·TPR + (1−p)·FPR
    double limit_large_n = 0;  // selection as N → ∞ (the fallback's value when q = 0)
};

// The first consecutive pair of N where the biased judge's accuracy falls as N grows.
struct BiasedJudgeDrop {
    std::uint64_t from_n = 0, to_n = 0;
    double from_p = 0, to_p = 0;
};

struct TargetAnswer {
    double target = 0;
    std::optional<std::uint64_t> min_n;   // none: no N reaches it (p = 0, or target 1 with p < 1)
    double coverage_at_min_n = 0;
};

struct BudgetAnswer {
    BestOfNRequest::Budget costs;
    std::vector<BudgetPlan> plans;        // compare_at_budget
    std::uint64_t samples_bought = 0;     // floor(budget / cost_sample)
};

struct SimulationRow {
    std::uint64_t n = 0;
    std::string strategy;                 // coverage, verifier, majority, biased judge (msgids)
    double exact = 0;
    Estimate estimate;
    std::optional<bool> agrees;           // exact inside the 99% interval; none: too few trials to tell
};
struct SimulationAnswer {
    std::uint64_t trials = 0, seed = 0;
    std::vector<SimulationRow> rows;
    bool all_agree = true;                // every row that can tell agrees
    std::uint64_t untold = 0;             // rows with too few trials to tell
};

struct BestOfNResult {
    double p = 0;
    double p_wrong = 0;                   // 1 − p
    std::vector<BestOfNRow> rows;
    std::optional<VerifierFacts> verifier;
    std::optional<BiasedJudgeDrop> biased_judge_drop;
    std::optional<double> p_on_solvable;  // hard fraction h: p / (1 − h) on the problems that are not hard
    std::optional<BetaShape> beta;        // ρ > 0: the Beta(a, b) that p follows across problems (ρ = 0: none)
    std::optional<TargetAnswer> target;
    std::optional<BudgetAnswer> budget;
    std::optional<SimulationAnswer> simulation;
};

// Every figure best-of-n prints. Throws InputError whose where() is req.names' name of the input
// that broke: N (majority vote past its exact limit), the wrong answers, the budget, the hard
// fraction, rho, the trials (the library's terms unless the caller names them).
// The rule of every error is a msgid with its arguments, so the caller's printer translates it.
BestOfNResult best_of_n(const BestOfNRequest& req);

// The largest Monte Carlo best_of_n runs: trials, and trials × ΣN candidates over the N asked for
// (the work: a few seconds on a slow core; the memory does not grow with N).
inline constexpr std::uint64_t kMaxSimulationTrials = 10000000;
inline constexpr std::uint64_t kMaxSimulatedCandidates = 250000000;

}  // namespace inferlab
