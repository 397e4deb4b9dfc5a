#include "inferlab/calc/best_of_n.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {

double coverage(double p, std::uint64_t n) {
    if (n == 0 || p <= 0) return 0;
    if (p >= 1) return 1;
    if (n == 1) return p;
    return -std::expm1(static_cast<double>(n) * std::log1p(-p));
}

std::optional<std::uint64_t> min_n_for_coverage(double p, double target) {
    if (target <= 0) return 1;
    if (p >= 1) return 1;
    if (p <= 0 || target >= 1) return std::nullopt;
    double guess = std::ceil(std::log1p(-target) / std::log1p(-p));
    // Past 2^64 the count does not fit (and the cast below would be undefined): say so rather
    // than search from a wrapped value. (The message is a fixed msgid, so it translates.)
    if (!(guess < 1.8e19)) throw OverflowError(N_("the smallest N with coverage ≥ target"));
    std::uint64_t n = static_cast<std::uint64_t>(std::max(1.0, guess));
    while (n > 1 && coverage(p, n - 1) >= target) --n;
    while (coverage(p, n) < target) ++n;
    return n;
}

double verifier_accept_rate(double p, const Verifier& v) { return p * v.tpr + (1 - p) * v.fpr; }

double verifier_selection(double p, std::uint64_t n, const Verifier& v) {
    const double q = verifier_accept_rate(p, v);
    const double none = std::pow(1 - q, static_cast<double>(n));
    // 1 − (1−q)^N is coverage() at q: the same cancellation-free form.
    double picked = q > 0 ? coverage(q, n) * (p * v.tpr / q) : 0;
    if (v.fallback_random && q < 1) picked += none * (p * (1 - v.tpr) / (1 - q));
    return picked;
}

double verifier_selection_limit(double p, const Verifier& v) {
    const double q = verifier_accept_rate(p, v);
    if (q > 0) return p * v.tpr / q;
    return v.fallback_random ? p : 0.0;
}

std::vector<double> spread_wrong(double p, std::uint64_t k) {
    std::vector<double> d(1 + k, k ? (1 - p) / static_cast<double>(k) : 0);
    d[0] = p;
    return d;
}

std::uint64_t majority_vote_max_n(std::uint64_t wrong_answers) {
    // N³·k² ≤ 2·10^9: the DP's work (seconds on a slow core), and N ≤ 200.
    std::uint64_t n = 200;
    const double k2 = static_cast<double>(wrong_answers) * static_cast<double>(wrong_answers);
    while (n > 1 && static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * k2 > 2e9) --n;
    return n;
}

double majority_vote(const std::vector<double>& dist, std::uint64_t n) {
    if (n > 200) throw InputError("N", std::to_string(n), N_("majority vote is computed exactly for N ≤ 200"));
    if (dist.size() < 2 || dist.size() > 33)
        throw InputError("wrong answers", std::to_string(dist.size() - 1), N_("must be between 1 and 32 wrong answers"));
    const std::size_t k = dist.size() - 1;
    const int N = static_cast<int>(n);
    if (n > majority_vote_max_n(k))
        throw InputError("N", std::to_string(n),
                         N_("with {0} wrong answers is too large for the exact majority-vote DP (N³·k² must stay "
                            "under 2·10^9)"),
                         {std::to_string(k)});
    // Every weight below is a probability: the correct answer's votes c ~ Bin(N, p), then wrong answer j's
    // share of the votes still unassigned ~ Bin(r, q_j / (q_j + … + q_k)). (The multinomial written
    // as N!/(c!·Π n_j!)·p^c·Π q_j^{n_j} overflowed: 172! is past a double, and every N ≥ 172 came out 1.)
    const std::vector<double> correct_votes = binomial_pmf(n, dist[0]);
    // tail[j]: the probability mass of wrong answers j..k, so that answer j takes its conditional share.
    std::vector<double> tail(k + 2, 0);
    for (std::size_t j = k; j >= 1; --j) tail[j] = tail[j + 1] + dist[j];
    double total = 0;
    for (int c = 1; c <= N; ++c) {  // c = 0 votes for the correct answer never wins
        const int rest = N - c;
        const double lead = correct_votes[static_cast<std::size_t>(c)];
        if (lead == 0) continue;
        // dp[s][t]: the probability that the first j wrong answers took s of the `rest` votes, t of
        // them tied at c, every one at most c.
        std::vector<std::vector<double>> dp(rest + 1, std::vector<double>(k + 1, 0));
        dp[0][0] = 1;
        for (std::size_t j = 1; j <= k; ++j) {
            std::vector<std::vector<double>> nx(rest + 1, std::vector<double>(k + 1, 0));
            const double share = tail[j] > 0 ? dist[j] / tail[j] : 0;
            // share_of[left][m] = Bin(left, share)(m) for m ≤ c, for every count of votes still unassigned.
            std::vector<std::vector<double>> share_of(rest + 1);
            for (int left = 0; left <= rest; ++left) {
                share_of[left] = binomial_pmf(static_cast<std::uint64_t>(left), share);
                share_of[left].resize(static_cast<std::size_t>(std::min(c, left)) + 1);
            }
            for (int s = 0; s <= rest; ++s)
                for (std::size_t t = 0; t < j; ++t) {
                    if (dp[s][t] == 0) continue;
                    const std::vector<double>& w = share_of[rest - s];
                    for (int m = 0; m < static_cast<int>(w.size()); ++m)
                        nx[s + m][t + (m == c ? 1 : 0)] += dp[s][t] * w[m];
                }
            dp.swap(nx);
        }
        for (std::size_t t = 0; t <= k; ++t) total += lead * dp[rest][t] / static_cast<double>(t + 1);
    }
    return std::min(1.0, total);  // the sum of probabilities can pass 1 by rounding, never by more
}

double coverage_hard_fraction(double p, double h, std::uint64_t n) {
    if (h >= 1) return 0;
    const double p_easy = p / (1 - h);
    return (1 - h) * coverage(p_easy, n);
}

double coverage_beta(double p, double rho, std::uint64_t n) {
    if (rho <= 0) return coverage(p, n);
    if (p <= 0) return 0;
    if (p >= 1) return 1;
    const auto [a, b] = beta_shape(p, rho);
    // Π_{i<N} (b + i)/(a + b + i), term by term up to 2^20 (the figures the documents' N give),
    // beyond that as Γ(b + N)·Γ(a + b) / (Γ(b)·Γ(a + b + N)) through lgamma: the loop once ran
    // for minutes at N = 10^12.
    constexpr std::uint64_t kTermByTerm = std::uint64_t{1} << 20;
    if (n > kTermByTerm) {
        const double N = static_cast<double>(n);
        return 1 - std::exp(std::lgamma(b + N) - std::lgamma(b) + std::lgamma(a + b) - std::lgamma(a + b + N));
    }
    double all_fail = 1;
    for (std::uint64_t i = 0; i < n; ++i) all_fail *= (b + static_cast<double>(i)) / (a + b + static_cast<double>(i));
    return 1 - all_fail;
}

double all_correct_beta(double p, double rho, std::uint64_t n) {
    if (rho <= 0) return all_correct(p, n);
    if (p <= 0 || p >= 1) return p >= 1 ? 1 : 0;
    const auto [a, b] = beta_shape(p, rho);
    double all = 1;
    for (std::uint64_t i = 0; i < n && all > 0; ++i) all *= (a + static_cast<double>(i)) / (a + b + static_cast<double>(i));
    return all;
}

BetaShape beta_shape(double p, double rho) { return {p * (1 - rho) / rho, (1 - p) * (1 - rho) / rho}; }

double all_correct(double p, std::uint64_t n) { return std::pow(p, static_cast<double>(n)); }

double biased_judge_selection(double p, std::uint64_t n, double bias) {
    const double all_right = all_correct(p, n);
    return all_right + (1 - bias) * (coverage(p, n) - all_right);
}

std::vector<BudgetPlan> compare_at_budget(double p, double budget, double cost_sample, double cost_judge,
                                          const Verifier& v, const std::vector<double>& dist) {
    if (budget < cost_sample)
        throw InputError("budget", format_real(budget, 10), N_("is smaller than one sample (cost {0})"),
                         {format_real(cost_sample, 10)});
    std::vector<BudgetPlan> out;
    out.push_back({BudgetPlan::Kind::single, N_("single sample"), 1, cost_sample, p});
    const double per_verified = cost_sample + cost_judge;
    std::uint64_t nv = static_cast<std::uint64_t>(std::floor(budget / per_verified));
    if (nv >= 1)
        out.push_back({BudgetPlan::Kind::verifier, N_("best-of-N + verifier"), nv, static_cast<double>(nv) * per_verified,
                       verifier_selection(p, nv, v)});
    if (!dist.empty()) {
        const std::uint64_t affordable = static_cast<std::uint64_t>(std::floor(budget / cost_sample));
        const std::uint64_t nm = std::min<std::uint64_t>(200, affordable);
        out.push_back({BudgetPlan::Kind::majority, N_("majority vote"), nm, static_cast<double>(nm) * cost_sample,
                       majority_vote(dist, nm), nm < affordable});
    }
    return out;
}

Estimate make_estimate(std::uint64_t hits, std::uint64_t trials) {
    Estimate e;
    e.trials = trials;
    e.mean = static_cast<double>(hits) / static_cast<double>(trials);
    e.hits = static_cast<double>(hits);
    e.interval_99 = wilson_interval_99(e.hits, static_cast<double>(trials));
    return e;
}

namespace {

// The correctness of the candidates of one trial, drawn again from a copy of the generator as it
// stood before they were first drawn: the simulation keeps no per-candidate state, so its memory
// does not grow with N (a vector of N once asked for 48 GB), and the draws, hence the results of a
// seed, are the same as a stored vector's.
struct CandidateReplay {
    Rng correct;        // at the trial's first correctness draw
    Rng accept;         // at the trial's first verifier draw
    double p, tpr, fpr;

    // Whether the `j`-th accepted candidate (counting from 0, in candidate order) is correct.
    bool jth_accepted_correct(std::uint64_t j, std::uint64_t n) const {
        Rng c = correct, a = accept;
        for (std::uint64_t i = 0; i < n; ++i) {
            const bool ok = c.bernoulli(p);
            if (a.bernoulli(ok ? tpr : fpr) && j-- == 0) return ok;
        }
        throw std::logic_error("simulate_best_of_n: fewer accepted candidates on replay");
    }
    bool candidate_correct(std::uint64_t index) const {
        Rng c = correct;
        bool ok = false;
        for (std::uint64_t i = 0; i <= index; ++i) ok = c.bernoulli(p);
        return ok;
    }
};

}  // namespace

SimulationResult simulate_best_of_n(double p, std::uint64_t n, const Verifier& v, const std::vector<double>& dist,
                                    double bias, std::uint64_t trials, std::uint64_t seed) {
    Rng rng(seed);
    std::uint64_t cov = 0, ver = 0, maj = 0, judge = 0;
    std::vector<std::uint64_t> votes(dist.size());
    std::vector<std::size_t> tied;
    for (std::uint64_t t = 0; t < trials; ++t) {
        // Coverage, verifier and biased judge share one set of candidates.
        CandidateReplay replay{rng, rng, p, v.tpr, v.fpr};
        std::uint64_t k = 0;
        for (std::uint64_t i = 0; i < n; ++i) k += rng.bernoulli(p);
        cov += k > 0;
        replay.accept = rng;
        Rng correct = replay.correct;
        std::uint64_t accepted = 0;
        for (std::uint64_t i = 0; i < n; ++i) accepted += rng.bernoulli(correct.bernoulli(p) ? v.tpr : v.fpr);
        if (accepted > 0) ver += replay.jth_accepted_correct(rng.below(accepted), n);
        else if (v.fallback_random) ver += replay.candidate_correct(rng.below(n));
        const bool wrong_present = k < n;
        if (k == 0) {
        } else if (wrong_present && rng.bernoulli(bias)) {
        } else {
            ++judge;
        }
        if (dist.empty()) continue;
        // Majority vote draws its own answers from the answer distribution.
        std::fill(votes.begin(), votes.end(), 0);
        for (std::uint64_t i = 0; i < n; ++i) ++votes[rng.categorical(dist)];
        std::uint64_t best = *std::max_element(votes.begin(), votes.end());
        tied.clear();
        for (std::size_t a = 0; a < votes.size(); ++a)
            if (votes[a] == best) tied.push_back(a);
        maj += tied[rng.below(tied.size())] == 0;
    }
    return {make_estimate(cov, trials), make_estimate(ver, trials),
            dist.empty() ? Estimate{} : make_estimate(maj, trials), make_estimate(judge, trials)};
}

}  // namespace inferlab
