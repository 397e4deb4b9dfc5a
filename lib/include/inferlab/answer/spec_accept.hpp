#pragma once
// The result of `inferlab spec-accept`: one library call that computes every section the command
// prints (one position's acceptance, the expected round, a scripted round, the simulation), with
// the facts about them (exact or floating arithmetic, where α came from, which γ is best).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/rational.hpp"
#include "inferlab/calc/spec.hpp"

namespace inferlab {

// Names the caller uses for its inputs, so that errors name them ("--p", "--outcomes").
// The longest γ sweep printed: a draft of more than 64 tokens per round is past any deployment
// the documents discuss, and the table stays readable.
inline constexpr std::size_t kMaxSweepGamma = 64;

struct SpecAcceptWhere {
    std::string p = "p", q = "q", outcomes = "outcomes", gamma = "γ", samples = "samples";
    std::string normalize = "normalization";  // how to ask for division by the sum
};

// How the distributions of one position were given.
enum class PositionSource { None, Exact, Float, Logits };

struct SpecAcceptInputs {
    PositionSource source = PositionSource::None;
    std::vector<Rational> p_exact, q_exact;  // Exact: the decimals as typed, as fractions
    std::vector<double> p, q;                // Float: the distributions; Logits: the logits
    bool normalize = false;                  // divide by the sum instead of requiring 1 (within 1e-9)
    double temperature = 1;                  // Logits only (0: greedy), then top-k (0: off), top-p (1: off)
    std::size_t top_k = 0;
    double top_p = 1;
    std::optional<double> alpha;             // α given directly (else Σ min(p, q) when p and q are given)
    std::optional<std::size_t> gamma;        // drafts per round
    std::optional<double> cost_ratio;        // c = draft cost / target cost
    std::size_t max_gamma = 8;               // the γ sweep's last row, at most kMaxSweepGamma
    std::optional<std::vector<std::string>> outcomes;  // a scripted round: "accept"/"reject"
    std::optional<std::uint64_t> samples;    // simulate this many draws
    std::uint64_t seed = 1;
    double threshold = 0.3;                  // the shortcut keeps drafts with q(x) ≥ threshold
    SpecAcceptWhere where;
};

// The most categorical draws one simulation makes, samples × vocabulary (each draw scans the
// vocabulary): a few seconds on a slow core.
inline constexpr std::uint64_t kMaxSimulatedDraws = 200000000;

// Distributions must sum to 1 within this (absolute), unless normalized.
inline constexpr double kDistributionSumTolerance = 1e-9;
// The simulation's fit test passes when its p-value is at least this.
inline constexpr double kFitLevel = 0.01;

// One position: doubles always (for JSON and CSV), fractions too when the inputs were decimals.
struct SpecPosition {
    PositionSource source = PositionSource::None;
    std::vector<double> p, q;  // [V]: the distributions actually compared (after sampling rules)
    Acceptance<double> a;      // a.alpha[x] etc. are [V]; exact values converted when `exact`
    struct Exact {
        std::vector<Rational> p, q;  // [V]
        Acceptance<Rational> a;
    };
    std::optional<Exact> exact;
    double temperature = 1, top_p = 1;  // Logits: the sampling rule applied to both
    std::size_t top_k = 0;
};

struct GammaRow {
    std::size_t gamma = 0;
    double expected_tokens_per_round = 0;
    double speedup = 0;
    bool best = false;
};

// One γ of the sweep the figure draws: the speedup only with a cost ratio.
struct GammaPoint {
    std::size_t gamma = 0;
    double expected_tokens_per_round = 0;
    std::optional<double> speedup;
};

// A round at acceptance rate α: E[tokens] = (1 − α^(γ+1))/(1 − α), and with a cost ratio the
// speedup E/(γc + 1) and the sweep over γ = 1..max_gamma.
struct SpecExpected {
    double alpha = 0;
    bool alpha_from_pq = false;  // α = Σ min(p, q) of the position, not given
    std::size_t gamma = 0;
    double expected_tokens_per_round = 0;
    std::vector<double> accepted_count_distribution;  // [γ + 1]: P(k accepted), k = 0..γ
    std::vector<std::size_t> tokens_if_accepted;      // [γ + 1]: k accepted → k + 1 tokens (a resampled or bonus one)
    std::optional<double> cost_ratio, speedup;
    std::size_t max_gamma = 0;   // the table's last γ: max(γ, --max-gamma), so the round's γ is a row
    std::size_t next_gamma = 0;  // max_gamma + 1: the first γ past the sweep
    std::vector<GammaRow> gamma_table;  // [max_gamma] when a cost ratio is given, else empty
    std::optional<GammaChoice> choice;  // with a cost ratio
    std::vector<GammaPoint> sweep;      // [max(γ, max_gamma)] γ = 1..: the --svg curves, cost ratio or not
};

struct SpecSimulation {
    std::uint64_t samples = 0, seed = 0;
    double threshold = 0;
    std::vector<double> speculative, threshold_shortcut, greedy;  // [V] frequencies: count / samples
    std::vector<double> threshold_shortcut_exact;                 // [V] the shortcut's exact distribution
    std::vector<double> half_width_99;                            // [V] 99% half-width of a frequency of p(x)
    FitTest speculative_fit, threshold_shortcut_fit;
    // p-value ≥ kFitLevel; none: too few samples for the χ² test (FitTest::testable)
    std::optional<bool> speculative_passes, threshold_shortcut_passes;
};

struct SpecAcceptResult {
    std::optional<SpecPosition> position;
    std::optional<std::size_t> gamma;  // as given
    std::optional<SpecExpected> expected;
    std::optional<RoundWalkthrough> round;
    std::optional<SpecSimulation> simulation;
};

// Checks a distribution (non-negative, sums to 1 within kDistributionSumTolerance, or is divided
// by its sum when `normalize`); InputError names `where` and, in its hint, `normalize_name`.
template <typename T>
std::vector<T> checked_distribution(const std::string& where, std::vector<T> v, bool normalize,
                                    const std::string& normalize_name = "normalization");

// Computes every section the inputs ask for. Inputs that do not combine (α given beside p and q,
// a simulation without p and q) are InputErrors naming the inputs by `where`.
SpecAcceptResult spec_accept(const SpecAcceptInputs& in);

// p (given as `where_p`, p_size entries) and q over the same vocabulary; an InputError naming
// both and their sizes otherwise.
void require_same_vocabulary(const std::string& where_p, std::size_t p_size, const std::string& where_q, std::size_t q_size);

}  // namespace inferlab
