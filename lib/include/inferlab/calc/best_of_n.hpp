#pragma once
// Best-of-N: producing a correct candidate among N (coverage) is not choosing it (selection).
// First document §3.2: P≥1 = 1 − (1 − p)^N is coverage; the strategies below compute the
// probability that the answer finally chosen is correct, exactly.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/stats.hpp"

namespace inferlab {

// 1 − (1 − p)^N, as −expm1(N·log1p(−p)): the direct form loses every digit when p is tiny
// (1 − (1 − 10^−17)^10 is 0 in doubles, truly 10^−16). N = 1 gives p itself, not p through
// a logarithm and back.
double coverage(double p, std::uint64_t n);
// Smallest N with coverage(p, N) ≥ target; nullopt when no N reaches it (p = 0 with a
// positive target, or target 1 with p < 1). Target 1 is reached at N = 1 when p = 1.
std::optional<std::uint64_t> min_n_for_coverage(double p, double target);

// A verifier that accepts a correct candidate with probability tpr and a wrong one with fpr.
// The chooser picks uniformly among accepted candidates (picking the first accepted one gives
// the same probability: candidates are exchangeable). When none is accepted: `fallback_random`
// picks uniformly among all N, otherwise the system abstains (counted as not correct).
struct Verifier {
    double tpr = 1, fpr = 0;
    bool fallback_random = true;
};
// The probability that one candidate is accepted: q = p·tpr + (1−p)·fpr.
double verifier_accept_rate(double p, const Verifier& v);
// Exact: with q = p·tpr + (1−p)·fpr, P = (1 − (1−q)^N)·p·tpr/q + (1−q)^N·[fallback]·p(1−tpr)/(1−q).
double verifier_selection(double p, std::uint64_t n, const Verifier& v);
// verifier_selection as N → ∞: p·tpr/q when q > 0. When q = 0 no candidate is ever accepted,
// so every N gives the fallback's value: p (random pick) or 0 (abstain).
double verifier_selection_limit(double p, const Verifier& v);

// Majority vote: answer 0 is correct with probability dist[0]; dist[1..k] are wrong answers.
// Plurality wins; a tie is broken uniformly at random among the tied answers. Exact, by
// dynamic programming over the wrong answers' vote counts. Limits: N ≤ 200, k ≤ 32.
double majority_vote(const std::vector<double>& dist, std::uint64_t n);
// The largest N majority_vote computes with k wrong answers: N ≤ 200 and N³·k² ≤ 2·10^9.
std::uint64_t majority_vote_max_n(std::uint64_t wrong_answers);
// The answer distribution with the correct answer at p and k equally likely wrong answers.
std::vector<double> spread_wrong(double p, std::uint64_t k);

// Correlated errors, two models with the same mean p:
// a fraction h of problems is hard for every sample (p = 0 there, p/(1−h) elsewhere) ...
double coverage_hard_fraction(double p, double h, std::uint64_t n);
// ... or p varies across problems as Beta(a, b) with mean p and intra-problem correlation ρ:
// a = p(1−ρ)/ρ, b = (1−p)(1−ρ)/ρ; E[(1−p)^N] = Π_{i<N} (b+i)/(a+b+i).
double coverage_beta(double p, double rho, std::uint64_t n);
// E[p^N] under that spread, Π_{i<N} (a+i)/(a+b+i): every candidate correct (the biased judge's term).
double all_correct_beta(double p, double rho, std::uint64_t n);
struct BetaShape {
    double a = 0, b = 0;
};
BetaShape beta_shape(double p, double rho);  // ρ in (0, 1)

// A biased judge: when at least one wrong candidate is present it picks a wrong one with
// probability `bias`, otherwise it picks a correct one if there is one.
// P = p^N + (1 − bias)·(1 − (1−p)^N − p^N).
double biased_judge_selection(double p, std::uint64_t n, double bias);
// p^N: every candidate correct, where no judge can pick wrong.
double all_correct(double p, std::uint64_t n);

// Equal total cost: single sample, best-of-N with a verifier, majority vote. Majority vote is
// compared only when the answer distribution is given (an empty `dist` leaves it out: how many
// wrong answers share the votes decides it), and at most 200 votes are counted exactly.
struct BudgetPlan {
    enum class Kind { single, verifier, majority };
    Kind kind = Kind::single;
    std::string strategy;       // a msgid: English in JSON and CSV, translated by the text printer
    std::uint64_t n = 0;        // candidates the budget buys
    double cost = 0;            // spent
    double p_correct = 0;       // exact probability the final answer is correct
    bool capped = false;        // the budget buys more than the exact computation takes (majority: 200)
    // The same plan under correlated errors (answer/best_of_n.hpp fills them when asked for).
    std::optional<double> p_correct_hard_fraction, p_correct_beta;
};
std::vector<BudgetPlan> compare_at_budget(double p, double budget, double cost_sample, double cost_judge,
                                          const Verifier& v, const std::vector<double>& dist);

// Monte Carlo of each strategy with a fixed seed. An empty `dist` skips majority vote (its
// estimate is then empty, trials = 0).
struct Estimate {
    double mean = 0;
    Interval interval_99;  // the 99% Wilson interval (base/stats.hpp): inside [0, 1] at every count
    std::uint64_t trials = 0;
    // Whether `exact` lies in the interval; none where no count of this many trials could have put it
    // outside (wilson_can_tell: one trial tells nothing of 0.3), so agreement would say nothing.
    std::optional<bool> agrees_with(double exact) const {
        return wilson_agrees(exact, hits, static_cast<double>(trials));
    }
    double hits = 0;       // the count the mean and the interval come from
};
struct SimulationResult {
    Estimate coverage, verifier, majority, biased_judge;
};
SimulationResult simulate_best_of_n(double p, std::uint64_t n, const Verifier& v, const std::vector<double>& dist,
                                    double bias, std::uint64_t trials, std::uint64_t seed);
Estimate make_estimate(std::uint64_t hits, std::uint64_t trials);

}  // namespace inferlab
