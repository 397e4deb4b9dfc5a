#pragma once
// Speculative sampling (first document §3.1): one position's acceptance rule, a draft round,
// the expected speed, and a simulation that shows why the rule is exact.
//   α(x) = min(1, p(x)/q(x)),   r(v) = [p(v) − q(v)]₊ / Σ_u [p(u) − q(u)]₊
//   output = q·α + (1 − Σ_x q(x)α(x))·r  =  p
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/rational.hpp"

namespace inferlab {

template <typename T>
struct Acceptance {
    std::vector<T> alpha;           // min(1, p/q); 1 by convention where q = 0 (never proposed)
    std::vector<bool> never_proposed;  // q(x) = 0
    std::vector<T> accepted;        // q(x)·α(x) = min(p, q)
    T accept_prob{};                // Σ min(p, q)
    T reject_prob{};                // 1 − accept
    std::vector<T> positive_residual;  // [p − q]₊
    T residual_mass{};              // Σ [p − q]₊ (= reject_prob when both sum to 1)
    bool residual_empty = false;    // p = q: the residual branch is never entered
    std::vector<T> residual;        // normalised (all 0 when empty)
    std::vector<T> output;          // accepted + reject·residual
    T max_abs_error{};              // max |output − p|
};

// The same code runs on doubles and on exact fractions.
template <typename T>
Acceptance<T> acceptance(const std::vector<T>& p, const std::vector<T>& q);
extern template Acceptance<double> acceptance(const std::vector<double>&, const std::vector<double>&);
extern template Acceptance<Rational> acceptance(const std::vector<Rational>&, const std::vector<Rational>&);

// Softmax of logits at a temperature, then top-k and top-p (nucleus) truncation, renormalised:
// the distribution actually sampled. temperature 0 is greedy (one-hot at the first argmax);
// top_k = 0 and top_p = 1 disable them.
std::vector<double> sampling_distribution(const std::vector<double>& logits, double temperature, std::size_t top_k,
                                          double top_p);

// A scripted round: γ drafts, outcomes judged left to right until the first rejection.
struct RoundStep {
    std::size_t position = 0;   // 1-based draft position
    // English msgids (JSON and CSV print them as they are; text translates them with tr()).
    std::string fate;           // "accepted", "rejected: resampled from the residual", "discarded", "bonus"
    std::string why;
    bool drafted = false;         // the draft model proposed this position (it paid one proposal)
    bool target_verified = false; // the target's pass computed this draft's distribution (discarded ones too)
};
struct RoundWalkthrough {
    std::size_t gamma = 0;
    std::vector<RoundStep> steps;
    std::size_t accepted = 0, tokens_advanced = 0, draft_proposals = 0, target_positions = 0, discarded = 0;
    bool bonus = false;
};
// outcomes: "accept"/"reject" for positions 1.., ending at the first "reject" or after γ accepts.
// Errors name the outcomes and γ as the caller calls them (`where`, `gamma_name`: "--outcomes", "--gamma").
RoundWalkthrough walk_round(std::size_t gamma, const std::vector<std::string>& outcomes,
                            const std::string& where = "outcomes", const std::string& gamma_name = "γ");

// Expected behaviour at acceptance rate α (i.i.d. positions) and draft length γ.
double expected_tokens_per_round(double alpha, std::size_t gamma);      // (1 − α^(γ+1)) / (1 − α)
double speedup(double alpha, std::size_t gamma, double cost_ratio);     // ... / (γc + 1)
// The draft length worth choosing among 1..max_gamma. `best` is empty when no γ speeds decoding
// up (every speedup ≤ 1: at α = 0 each round costs γc + 1 target passes for one token). `at_edge`
// says the best is max_gamma and γ = max_gamma + 1 would do better still (at α = 1 with c < 1
// the speedup (γ + 1)/(γc + 1) grows with every γ): the table's end, not an optimum.
struct GammaChoice {
    std::optional<std::size_t> best;
    double best_speedup = 0;
    bool at_edge = false;
};
GammaChoice choose_gamma(double alpha, double cost_ratio, std::size_t max_gamma);
std::vector<double> accepted_count_distribution(double alpha, std::size_t gamma);  // P(k drafts accepted), k = 0..γ

// Simulation of the real algorithm and of the shortcut that accepts any draft whose draft
// probability q(x) ≥ threshold (else samples from p): counts of each output token.
struct SimulationCounts {
    std::vector<std::uint64_t> speculative, threshold_shortcut, greedy;
    std::uint64_t samples = 0;
};
SimulationCounts simulate_speculative(const std::vector<double>& p, const std::vector<double>& q, double threshold,
                                      std::uint64_t samples, std::uint64_t seed);
// The shortcut's exact output distribution: q(x)·[q(x) ≥ τ] + (1 − Σ q·[q ≥ τ])·p(x).
std::vector<double> threshold_shortcut_distribution(const std::vector<double>& p, const std::vector<double>& q,
                                                    double threshold);

// Goodness of fit of observed counts against expected probabilities.
// Pearson's χ² needs expected counts of at least kMinExpected in every cell for its χ² tail to
// hold: the outcomes below it are pooled into one cell, and that cell, if still below, into the
// smallest other. Fewer than two cells left: no test (`testable` false, the p-value 1).
constexpr double kMinExpected = 5;
struct FitTest {
    double total_variation = 0;   // ½ Σ |observed/n − p|
    double chi_square = 0;        // Σ (O − E)² / E over the cells, after pooling
    std::size_t dof = 0;          // cells − 1
    double p_value = 1;           // upper tail of χ²(dof)
    bool impossible_outcome = false;  // a count where p = 0 (the p-value 0: p is refuted outright)
    std::size_t pooled = 0;       // outcomes in the pooled cell (those under kMinExpected, and the one merged in)
    bool testable = true;         // at least two cells after pooling (or an impossible outcome)
    // Whether the counts are consistent with p at `level`; none where they are too few to test.
    std::optional<bool> passes(double level) const {
        if (!testable) return std::nullopt;
        return p_value >= level;
    }
};
FitTest fit_test(const std::vector<std::uint64_t>& counts, const std::vector<double>& p);
// Regularized upper incomplete gamma Q(a, x), for the χ² tail.
double gamma_q(double a, double x);

}  // namespace inferlab
