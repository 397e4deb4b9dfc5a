#include "inferlab/calc/spec.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/rng.hpp"

namespace inferlab {

template <typename T>
Acceptance<T> acceptance(const std::vector<T>& p, const std::vector<T>& q) {
    const std::size_t n = p.size();
    Acceptance<T> a;
    a.alpha.assign(n, T(1));
    a.never_proposed.assign(n, false);
    a.accepted.assign(n, T(0));
    a.positive_residual.assign(n, T(0));
    a.residual.assign(n, T(0));
    a.output.assign(n, T(0));
    const T zero(0), one(1);
    for (std::size_t x = 0; x < n; ++x) {
        if (q[x] == zero) {
            a.never_proposed[x] = true;  // x is never drafted; only the residual can produce it
        } else {
            T ratio = p[x] / q[x];
            a.alpha[x] = ratio < one ? ratio : one;
            a.accepted[x] = q[x] * a.alpha[x];
        }
        a.accept_prob += a.accepted[x];
        T diff = p[x] - q[x];
        if (diff > zero) {
            a.positive_residual[x] = diff;
            a.residual_mass += diff;
        }
    }
    a.reject_prob = one - a.accept_prob;
    a.residual_empty = !(a.residual_mass > zero);
    for (std::size_t x = 0; x < n; ++x) {
        if (!a.residual_empty) a.residual[x] = a.positive_residual[x] / a.residual_mass;
        a.output[x] = a.accepted[x] + a.reject_prob * a.residual[x];
        T err = a.output[x] > p[x] ? a.output[x] - p[x] : p[x] - a.output[x];
        if (err > a.max_abs_error) a.max_abs_error = err;
    }
    return a;
}

template Acceptance<double> acceptance(const std::vector<double>&, const std::vector<double>&);
template Acceptance<Rational> acceptance(const std::vector<Rational>&, const std::vector<Rational>&);

std::vector<double> sampling_distribution(const std::vector<double>& logits, double temperature, std::size_t top_k,
                                          double top_p) {
    if (logits.empty()) throw InputError(N_("logits: the list is empty"));
    if (!(temperature >= 0) || !std::isfinite(temperature))
        throw InputError("temperature", std::to_string(temperature), N_("must be 0 (greedy) or a finite positive number"));
    if (!(top_p > 0 && top_p <= 1)) throw InputError("top-p", std::to_string(top_p), N_("must be in (0, 1]"));
    const auto top = std::max_element(logits.begin(), logits.end());
    if (temperature == 0) {
        // The limit T → 0: all mass on the argmax (the first one when several tie), which every
        // top-k and top-p keeps.
        std::vector<double> onehot(logits.size(), 0.0);
        onehot[static_cast<std::size_t>(top - logits.begin())] = 1.0;
        return onehot;
    }
    const double mx = *top;
    std::vector<double> pr(logits.size());
    double sum = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) sum += pr[i] = std::exp((logits[i] - mx) / temperature);
    for (auto& v : pr) v /= sum;
    std::vector<std::size_t> order(pr.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return pr[a] > pr[b]; });
    std::vector<bool> keep(pr.size(), false);
    double cum = 0;
    for (std::size_t r = 0; r < order.size(); ++r) {
        if (top_k && r >= top_k) break;
        keep[order[r]] = true;
        cum += pr[order[r]];
        if (cum >= top_p) break;  // the smallest prefix whose mass reaches top_p
    }
    double kept = 0;
    for (std::size_t i = 0; i < pr.size(); ++i) kept += keep[i] ? pr[i] : 0;
    for (std::size_t i = 0; i < pr.size(); ++i) pr[i] = keep[i] ? pr[i] / kept : 0;
    return pr;
}

RoundWalkthrough walk_round(std::size_t gamma, const std::vector<std::string>& outcomes, const std::string& where,
                            const std::string& gamma_name) {
    if (gamma == 0) throw InputError(gamma_name, "0", N_("must be a positive integer"));
    // The count is the value shown, in the reader's language ("3 outcomes", "3 个结果").
    const std::string given = trf(N_("{0} outcomes"), outcomes.size());
    if (outcomes.size() > gamma)
        throw InputError(where, given, N_("is longer than {0} {1}"), {gamma_name, std::to_string(gamma)});
    RoundWalkthrough w;
    w.gamma = gamma;
    bool rejected = false;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const std::string& o = outcomes[i];
        if (o != "accept" && o != "reject")
            throw InputError(where, o, N_("each outcome must be 'accept' or 'reject'"));
        if (rejected)
            throw InputError(where, o,
                             N_("follows a rejection: drafts after the first rejection are discarded without a judgement"));
        if (o == "accept") {
            w.steps.push_back({i + 1, N_("accepted"), N_("u < α(x): output as drafted"), true, true});
            ++w.accepted;
        } else {
            w.steps.push_back({i + 1, N_("rejected: resampled from the residual"),
                               N_("u ≥ α(x): the draft is replaced by a token drawn from r = [p − q]₊ / Σ[p − q]₊"), true,
                               true});
            rejected = true;
        }
    }
    if (!rejected && outcomes.size() < gamma)
        throw InputError(where, given, N_("must end with a 'reject' or give all {0} outcomes"), {std::to_string(gamma)});
    for (std::size_t i = outcomes.size(); i < gamma; ++i) {
        w.steps.push_back({i + 1, N_("discarded"),
                           N_("its target distribution was computed on a prefix that contained the rejected draft; "
                              "that prefix changed, so the probability no longer applies"),
                           true, true});
        ++w.discarded;
    }
    if (!rejected) {
        w.bonus = true;
        w.steps.push_back({gamma + 1, N_("bonus"),
                           N_("all drafts accepted: the target's distribution after the last draft (already computed in "
                              "the same pass) gives one more token"),
                           false, false});
    }
    w.tokens_advanced = w.accepted + 1;  // the resampled token, or the bonus token
    // The costs are counted from the walk, not restated from γ: the draft paid for every position
    // it proposed, and the target's one pass computed all of them, discarded ones included.
    for (const auto& s : w.steps) {
        w.draft_proposals += s.drafted ? 1 : 0;
        w.target_positions += s.target_verified ? 1 : 0;
    }
    return w;
}

double expected_tokens_per_round(double alpha, std::size_t gamma) {
    if (alpha >= 1) return static_cast<double>(gamma + 1);
    return (1 - std::pow(alpha, static_cast<double>(gamma + 1))) / (1 - alpha);
}

double speedup(double alpha, std::size_t gamma, double cost_ratio) {
    return expected_tokens_per_round(alpha, gamma) / (static_cast<double>(gamma) * cost_ratio + 1);
}

GammaChoice choose_gamma(double alpha, double cost_ratio, std::size_t max_gamma) {
    if (max_gamma == 0) throw InputError("the largest γ", "0", N_("must be a positive integer"));
    GammaChoice c;
    std::size_t best = 1;
    for (std::size_t g = 2; g <= max_gamma; ++g)
        if (speedup(alpha, g, cost_ratio) > speedup(alpha, best, cost_ratio)) best = g;
    c.best_speedup = speedup(alpha, best, cost_ratio);
    if (!(c.best_speedup > 1)) return c;  // a slowdown, or no gain, at every γ
    c.best = best;
    c.at_edge = best == max_gamma && speedup(alpha, max_gamma + 1, cost_ratio) > c.best_speedup;
    return c;
}

std::vector<double> accepted_count_distribution(double alpha, std::size_t gamma) {
    std::vector<double> d(gamma + 1);
    for (std::size_t k = 0; k < gamma; ++k) d[k] = std::pow(alpha, static_cast<double>(k)) * (1 - alpha);
    d[gamma] = std::pow(alpha, static_cast<double>(gamma));
    return d;
}

std::vector<double> threshold_shortcut_distribution(const std::vector<double>& p, const std::vector<double>& q,
                                                    double threshold) {
    std::vector<double> out(p.size(), 0);
    double taken = 0;
    for (std::size_t x = 0; x < p.size(); ++x)
        if (q[x] >= threshold) {
            out[x] = q[x];
            taken += q[x];
        }
    for (std::size_t x = 0; x < p.size(); ++x) out[x] += (1 - taken) * p[x];
    return out;
}

SimulationCounts simulate_speculative(const std::vector<double>& p, const std::vector<double>& q, double threshold,
                                      std::uint64_t samples, std::uint64_t seed) {
    Rng rng(seed);
    const std::size_t n = p.size();
    SimulationCounts c;
    c.samples = samples;
    c.speculative.assign(n, 0);
    c.threshold_shortcut.assign(n, 0);
    c.greedy.assign(n, 0);
    std::vector<double> resid(n, 0);
    for (std::size_t x = 0; x < n; ++x) resid[x] = std::max(0.0, p[x] - q[x]);
    const bool has_resid = std::any_of(resid.begin(), resid.end(), [](double v) { return v > 0; });
    const std::size_t p_max = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
    const std::size_t q_max = static_cast<std::size_t>(std::max_element(q.begin(), q.end()) - q.begin());
    for (std::uint64_t s = 0; s < samples; ++s) {
        // The exact rule: draft x ~ q, accept with probability min(1, p/q), else draw from r.
        std::size_t x = rng.categorical(q);
        if (rng.uniform() * q[x] < p[x]) ++c.speculative[x];
        else ++c.speculative[has_resid ? rng.categorical(resid) : x];
        // The shortcut: keep any draft the draft model is confident in, else sample the target.
        std::size_t y = rng.categorical(q);
        ++c.threshold_shortcut[q[y] >= threshold ? y : rng.categorical(p)];
        // Greedy: the draft's argmax is kept only when it is the target's argmax.
        ++c.greedy[q_max == p_max ? q_max : p_max];
    }
    return c;
}

double gamma_q(double a, double x) {
    if (x <= 0) return 1;
    const double lg = std::lgamma(a);
    if (x < a + 1) {  // series for P(a, x)
        double ap = a, sum = 1 / a, del = sum;
        for (int n = 0; n < 10000; ++n) {
            ap += 1;
            del *= x / ap;
            sum += del;
            if (std::fabs(del) < std::fabs(sum) * 1e-16) break;
        }
        return std::max(0.0, 1 - sum * std::exp(-x + a * std::log(x) - lg));
    }
    // Continued fraction for Q(a, x) (modified Lentz).
    double b = x + 1 - a, c = 1 / 1e-300, d = 1 / b, h = d;
    for (int i = 1; i < 10000; ++i) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (std::fabs(d) < 1e-300) d = 1e-300;
        c = b + an / c;
        if (std::fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (std::fabs(del - 1) < 1e-16) break;
    }
    return std::exp(-x + a * std::log(x) - lg) * h;
}

FitTest fit_test(const std::vector<std::uint64_t>& counts, const std::vector<double>& p) {
    FitTest f;
    std::uint64_t n = std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
    struct Cell {
        double observed, expected;
    };
    std::vector<Cell> cells;
    Cell small{0, 0};
    for (std::size_t i = 0; i < p.size(); ++i) {
        const double obs = static_cast<double>(counts[i]);
        f.total_variation += 0.5 * std::fabs(obs / static_cast<double>(n) - p[i]);
        if (p[i] > 0) {
            const double e = p[i] * static_cast<double>(n);
            if (e >= kMinExpected) {
                cells.push_back({obs, e});
            } else {
                small = {small.observed + obs, small.expected + e};
                ++f.pooled;
            }
        } else if (counts[i] > 0) {
            f.impossible_outcome = true;
        }
    }
    if (f.pooled > 0) {
        if (small.expected < kMinExpected && !cells.empty()) {
            auto least = std::min_element(cells.begin(), cells.end(),
                                          [](const Cell& a, const Cell& b) { return a.expected < b.expected; });
            *least = {least->observed + small.observed, least->expected + small.expected};
            ++f.pooled;  // that outcome is pooled too
        } else {
            cells.push_back(small);
        }
    }
    for (const Cell& c : cells) f.chi_square += (c.observed - c.expected) * (c.observed - c.expected) / c.expected;
    f.dof = cells.size() > 0 ? cells.size() - 1 : 0;
    f.testable = f.impossible_outcome || cells.size() >= 2;
    f.p_value = f.impossible_outcome ? 0 : (f.dof ? gamma_q(static_cast<double>(f.dof) / 2, f.chi_square / 2) : 1);
    return f;
}

}  // namespace inferlab
