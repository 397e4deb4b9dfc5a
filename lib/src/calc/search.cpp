#include "inferlab/calc/search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <stdexcept>
#include <utility>

#include "inferlab/base/rng.hpp"
#include "inferlab/base/stats.hpp"

namespace inferlab {
namespace {

double log_choose(std::uint64_t n, std::uint64_t k) {
    return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
           std::lgamma(static_cast<double>(n - k) + 1);
}

// Hypergeometric: j successes in `draws` from a population of `pop` holding `succ` successes.
double hypergeometric(std::uint64_t pop, std::uint64_t succ, std::uint64_t draws, std::uint64_t j) {
    if (j > succ || j > draws || draws - j > pop - succ) return 0;
    return std::exp(log_choose(succ, j) + log_choose(pop - succ, draws - j) - log_choose(pop, draws));
}

// rates: a ~ Bin(X, tpr) correct steps judged good, g ~ Bin(M − X, fpr) wrong ones. The G = a + g
// good ones come first: with G ≥ kept the kept are a uniform subset of them; otherwise all of them
// and a uniform subset of the M − G others, X − a of which are correct.
std::vector<double> kept_by_rates(const ProcessScorer& sc, std::uint64_t m, std::uint64_t x, std::uint64_t kept) {
    std::vector<double> out(kept + 1, 0);
    const std::vector<double> good_correct = binomial_pmf(x, sc.tpr), good_wrong = binomial_pmf(m - x, sc.fpr);
    for (std::uint64_t a = 0; a <= x; ++a) {
        if (good_correct[a] == 0) continue;
        for (std::uint64_t g = 0; g <= m - x; ++g) {
            const double w = good_correct[a] * good_wrong[g];
            if (w == 0) continue;
            const std::uint64_t goods = a + g;
            if (goods >= kept) {
                for (std::uint64_t j = 0; j <= kept; ++j) out[j] += w * hypergeometric(goods, a, kept, j);
            } else {
                const std::uint64_t rest = kept - goods;
                for (std::uint64_t j = 0; j <= rest; ++j) out[a + j] += w * hypergeometric(m - goods, x - a, rest, j);
            }
        }
    }
    return out;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }
double log_normal_pdf(double z) { return -0.5 * z * z - 0.5 * std::log(2 * std::numbers::pi); }

// gaussian, σ > 0: in units of σ a correct step scores d + Z, a wrong one Z (d = gap/σ). Exactly j
// correct among the top `kept`: integrate over t, the kept-th highest score, which is either a
// correct candidate's (with j − 1 correct and kept − j wrong above it) or a wrong one's (j correct
// and kept − j − 1 wrong above). Simpson's rule over [−10, d + 10] in steps of at most 1/64.
std::vector<double> kept_by_gaussian(double d, std::uint64_t m, std::uint64_t x, std::uint64_t kept) {
    std::vector<double> out(kept + 1, 0);
    const double lo = -10, hi = d + 10;
    const std::uint64_t intervals = 2 * static_cast<std::uint64_t>(std::ceil((hi - lo) * 32));
    const double h = (hi - lo) / static_cast<double>(intervals);
    const std::uint64_t wrong = m - x;
    // log of p^e, with 0^0 = 1 (a factor that is not there).
    auto lpow = [](double lp, std::uint64_t e) { return e == 0 ? 0.0 : static_cast<double>(e) * lp; };
    // The counting factors of each j, the same at every t: x·C(x−1, j−1)·C(wrong, kept−j) when the
    // kept-th is correct, wrong·C(x, j)·C(wrong−1, kept−j−1) when it is wrong (logs; unused: 0).
    std::vector<double> ways_correct(kept + 1, 0), ways_wrong(kept + 1, 0);
    for (std::uint64_t j = 0; j <= kept; ++j) {
        if (j >= 1 && j <= x && kept - j <= wrong)
            ways_correct[j] = std::log(static_cast<double>(x)) + log_choose(x - 1, j - 1) + log_choose(wrong, kept - j);
        if (j < kept && j <= x && kept - j <= wrong)
            ways_wrong[j] = std::log(static_cast<double>(wrong)) + log_choose(x, j) + log_choose(wrong - 1, kept - j - 1);
    }
    for (std::uint64_t i = 0; i <= intervals; ++i) {
        const double t = lo + h * static_cast<double>(i);
        const double simpson = (i == 0 || i == intervals) ? 1 : (i % 2 ? 4 : 2);
        const double f1 = log_normal_pdf(t - d), f0 = log_normal_pdf(t);
        // Each tail from erfc itself: 1 − Φ(z) through log1p(−Φ) loses its digits past z ≈ 5.
        const double lF1 = std::log(normal_cdf(t - d)), lS1 = std::log(normal_cdf(d - t));
        const double lF0 = std::log(normal_cdf(t)), lS0 = std::log(normal_cdf(-t));
        for (std::uint64_t j = 0; j <= kept; ++j) {
            double v = 0;
            // The kept-th is correct: j ≥ 1 correct at or above t, kept − j wrong above.
            if (j >= 1 && j <= x && kept - j <= wrong)
                v += std::exp(ways_correct[j] + f1 + lpow(lS1, j - 1) + lpow(lF1, x - j) + lpow(lS0, kept - j) +
                              lpow(lF0, wrong - (kept - j)));
            // The kept-th is wrong: j correct above, kept − j − 1 wrong above.
            if (j < kept && j <= x && kept - j <= wrong)
                v += std::exp(ways_wrong[j] + f0 + lpow(lS1, j) + lpow(lF1, x - j) + lpow(lS0, kept - j - 1) +
                              lpow(lF0, wrong - (kept - j)));
            out[j] += simpson * h / 3 * v;
        }
    }
    // The quadrature's error (far below 10^−9 at this step) is spread so the row sums to 1.
    double sum = 0;
    for (double v : out) sum += v;
    for (double& v : out) v /= sum;
    return out;
}

// The kernel over every X = 0..M for one (M, kept), cached: the chain asks for few distinct pairs.
using Kernel = std::vector<std::vector<double>>;
const Kernel& kernel_for(std::map<std::pair<std::uint64_t, std::uint64_t>, Kernel>& cache, const ProcessScorer& sc,
                         std::uint64_t m, std::uint64_t kept) {
    auto [it, fresh] = cache.try_emplace({m, kept});
    if (fresh)
        for (std::uint64_t x = 0; x <= m; ++x) it->second.push_back(kept_correct_distribution(sc, m, x, kept));
    return it->second;
}

// With j correct among a beam of m, the outcome verifier's pick is correct: a1 ~ Bin(j, tpr) correct
// and a0 ~ Bin(m − j, fpr) wrong answers accepted, a uniform one of them picked; none accepted, a
// uniform member of the beam (fallback) or nothing.
double outcome_pick(const Verifier& v, std::uint64_t m, std::uint64_t j) {
    const std::vector<double> right = binomial_pmf(j, v.tpr), wrong = binomial_pmf(m - j, v.fpr);
    double p = 0;
    for (std::uint64_t a1 = 0; a1 <= j; ++a1)
        for (std::uint64_t a0 = 0; a0 <= m - j; ++a0) {
            const double w = right[a1] * wrong[a0];
            if (a1 + a0 > 0) p += w * static_cast<double>(a1) / static_cast<double>(a1 + a0);
            else if (v.fallback_random) p += w * static_cast<double>(j) / static_cast<double>(m);
        }
    return p;
}

}  // namespace

std::vector<double> kept_correct_distribution(const ProcessScorer& sc, std::uint64_t candidates, std::uint64_t correct,
                                              std::uint64_t kept) {
    if (correct > candidates || kept == 0 || kept > candidates)
        throw std::invalid_argument("kept_correct_distribution: need correct ≤ candidates and 1 ≤ kept ≤ candidates");
    std::vector<double> out(kept + 1, 0);
    if (kept == candidates) return out[correct] = 1, out;
    if (sc.kind == ProcessScorer::Kind::rates) return kept_by_rates(sc, candidates, correct, kept);
    // Past a gap of 40σ a wrong step outscores a correct one with probability Φ(−40/√2) ≈ 3·10^−176,
    // far below a double's rounding of the kept counts: noiseless.
    const bool separated = sc.sigma == 0 || sc.gap / sc.sigma > 40;
    if (!separated) return kept_by_gaussian(sc.gap / sc.sigma, candidates, correct, kept);
    if (sc.gap > 0) return out[std::min(correct, kept)] = 1, out;  // noiseless: the correct ones first
    for (std::uint64_t j = 0; j <= kept; ++j) out[j] = hypergeometric(candidates, correct, kept, j);  // all tie
    return out;
}

std::vector<std::uint64_t> search_beams(const SearchSpec& s, std::uint64_t steps) {
    std::vector<std::uint64_t> m = {1};
    for (std::uint64_t t = 0; t < steps; ++t) m.push_back(std::min(s.beam, m.back() * s.branch));
    return m;
}

SearchCost search_cost(const SearchSpec& s, std::uint64_t steps) {
    SearchCost c;
    const std::vector<std::uint64_t> m = search_beams(s, steps);
    for (std::uint64_t t = 0; t < steps; ++t) c.generated_steps += m[t] * s.branch;
    c.scorer_calls = c.generated_steps;
    c.final_beam = m.back();
    c.verifier_calls = s.outcome ? m.back() : 0;
    return c;
}

std::vector<double> search_success(const SearchSpec& s, std::uint64_t steps) {
    std::map<std::pair<std::uint64_t, std::uint64_t>, Kernel> cache;
    std::vector<double> beam = {0, 1};  // P(c correct branches): the prompt, one correct branch
    std::uint64_t m = 1;
    std::vector<double> success;
    for (std::uint64_t t = 0; t < steps; ++t) {
        const std::uint64_t cand = m * s.branch, kept = std::min(s.beam, cand);
        const Kernel& keep = kernel_for(cache, s.scorer, cand, kept);
        const Kernel& best = kernel_for(cache, s.scorer, cand, 1);
        std::vector<double> next(kept + 1, 0);
        double top_correct = 0;
        for (std::uint64_t c = 0; c <= m; ++c) {
            if (beam[c] == 0) continue;
            const std::vector<double> born = binomial_pmf(c * s.branch, s.q);  // X correct candidates
            for (std::uint64_t x = 0; x < born.size(); ++x) {
                const double w = beam[c] * born[x];
                if (w == 0) continue;
                for (std::uint64_t j = 0; j <= kept; ++j) next[j] += w * keep[x][j];
                top_correct += w * best[x][1];
            }
        }
        beam.swap(next);
        m = kept;
        if (!s.outcome) {
            success.push_back(std::min(1.0, top_correct));
            continue;
        }
        double picked = 0;
        for (std::uint64_t j = 0; j <= m; ++j) picked += beam[j] * outcome_pick(*s.outcome, m, j);
        success.push_back(std::min(1.0, picked));
    }
    return success;
}

namespace {

struct Candidate {
    double score, tie;
    bool correct;
};

// One trial: every step's answer recorded into `hits`.
void search_trial(const SearchSpec& s, std::uint64_t steps, Rng& rng, std::vector<std::uint64_t>& hits,
                  std::vector<char>& beam, std::vector<Candidate>& cand) {
    beam.assign(1, 1);
    for (std::uint64_t t = 0; t < steps; ++t) {
        cand.clear();
        for (char parent : beam)
            for (std::uint64_t i = 0; i < s.branch; ++i) {
                const bool ok = parent && rng.bernoulli(s.q);
                const double score = s.scorer.kind == ProcessScorer::Kind::rates
                                         ? (rng.bernoulli(ok ? s.scorer.tpr : s.scorer.fpr) ? 1.0 : 0.0)
                                         : s.scorer.gap * (ok ? 1.0 : 0.0) + s.scorer.sigma * rng.normal();
                cand.push_back({score, rng.uniform(), ok});
            }
        const std::size_t kept = std::min<std::size_t>(s.beam, cand.size());
        std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(kept), cand.end(),
                          [](const Candidate& a, const Candidate& b) {
                              return a.score != b.score ? a.score > b.score : a.tie > b.tie;
                          });
        beam.resize(kept);
        for (std::size_t i = 0; i < kept; ++i) beam[i] = cand[i].correct;
        if (!s.outcome) {
            hits[t] += cand[0].correct;
            continue;
        }
        std::vector<std::size_t> accepted;
        for (std::size_t i = 0; i < kept; ++i)
            if (rng.bernoulli(beam[i] ? s.outcome->tpr : s.outcome->fpr)) accepted.push_back(i);
        if (!accepted.empty()) hits[t] += beam[accepted[rng.below(accepted.size())]];
        else if (s.outcome->fallback_random) hits[t] += beam[rng.below(kept)];
    }
}

}  // namespace

std::vector<std::uint64_t> simulate_search(const SearchSpec& s, std::uint64_t steps, std::uint64_t trials,
                                           std::uint64_t seed) {
    Rng rng(seed);
    std::vector<std::uint64_t> hits(steps, 0);
    std::vector<char> beam;
    std::vector<Candidate> cand;
    for (std::uint64_t i = 0; i < trials; ++i) search_trial(s, steps, rng, hits, beam, cand);
    return hits;
}

double trajectory_correct(double q, std::uint64_t steps) { return std::pow(q, static_cast<double>(steps)); }

BestOfNAtSteps best_of_n_at_steps(double q, std::uint64_t steps, std::uint64_t generated, const Verifier& outcome) {
    BestOfNAtSteps b;
    b.n = generated / steps;
    b.p_trajectory = trajectory_correct(q, steps);
    b.accept_rate = verifier_accept_rate(b.p_trajectory, outcome);
    b.success = b.n == 0 ? 0 : verifier_selection(b.p_trajectory, b.n, outcome);
    return b;
}

}  // namespace inferlab
