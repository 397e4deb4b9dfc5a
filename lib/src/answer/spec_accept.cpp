#include "inferlab/answer/spec_accept.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/text/table.hpp"

namespace inferlab {

template <typename T>
std::vector<T> checked_distribution(const std::string& where, std::vector<T> v, bool normalize,
                                    const std::string& normalize_name) {
    if (v.empty()) throw InputError(where, "", N_("is an empty list"));
    T s(0);
    for (const auto& x : v) {
        if (x < T(0)) throw InputError(where, fmt::format("{}", to_double(x)), N_("entries must not be negative"));
        s += x;
    }
    if (!(s > T(0))) throw InputError(where, "0", N_("entries sum to zero"));
    if (!std::isfinite(to_double(s)))
        throw InputError(where, "sum > 1.8e308", N_("entries must sum to a finite number (the largest double is about 1.8e308): scale them down"));
    if (normalize) {
        for (auto& x : v) x = x / s;
    } else if (std::fabs(to_double(s) - 1) > kDistributionSumTolerance) {
        std::string tol = fmt::format("{:.0e}", kDistributionSumTolerance);  // "1e-09", written "1e-9"
        if (const auto z = tol.find("e-0"); z != std::string::npos) tol.erase(z + 2, 1);
        throw InputError(where, trf(N_("sum {0}"), format_real(to_double(s), 10)),
                         N_("must sum to 1 within {0} (or ask for {1})"), {tol, normalize_name});
    }
    return v;
}
template std::vector<double> checked_distribution(const std::string&, std::vector<double>, bool, const std::string&);
template std::vector<Rational> checked_distribution(const std::string&, std::vector<Rational>, bool,
                                                    const std::string&);

namespace {

std::vector<double> doubles(const std::vector<Rational>& v) {
    std::vector<double> out;
    out.reserve(v.size());
    for (const auto& x : v) out.push_back(x.to_double());
    return out;
}

// The exact acceptance, read as doubles (each fraction rounded once, not recomputed in floating point).
Acceptance<double> as_doubles(const Acceptance<Rational>& e) {
    Acceptance<double> a;
    a.alpha = doubles(e.alpha);
    a.never_proposed = e.never_proposed;
    a.accepted = doubles(e.accepted);
    a.accept_prob = e.accept_prob.to_double();
    a.reject_prob = e.reject_prob.to_double();
    a.positive_residual = doubles(e.positive_residual);
    a.residual_mass = e.residual_mass.to_double();
    a.residual_empty = e.residual_empty;
    a.residual = doubles(e.residual);
    a.output = doubles(e.output);
    a.max_abs_error = e.max_abs_error.to_double();
    return a;
}

SpecPosition position(const SpecAcceptInputs& in) {
    SpecPosition pos;
    pos.source = in.source;
    if (in.source == PositionSource::Exact) {
        require_same_vocabulary(in.where.p, in.p_exact.size(), in.where.q, in.q_exact.size());
        SpecPosition::Exact e;
        e.p = checked_distribution(in.where.p, in.p_exact, in.normalize, in.where.normalize);
        e.q = checked_distribution(in.where.q, in.q_exact, in.normalize, in.where.normalize);
        e.a = acceptance(e.p, e.q);
        pos.p = doubles(e.p);
        pos.q = doubles(e.q);
        pos.a = as_doubles(e.a);
        pos.exact = std::move(e);
        return pos;
    }
    require_same_vocabulary(in.where.p, in.p.size(), in.where.q, in.q.size());
    if (in.source == PositionSource::Logits) {
        pos.temperature = in.temperature;
        pos.top_k = in.top_k;
        pos.top_p = in.top_p;
        pos.p = sampling_distribution(in.p, in.temperature, in.top_k, in.top_p);
        pos.q = sampling_distribution(in.q, in.temperature, in.top_k, in.top_p);
    } else {
        pos.p = checked_distribution(in.where.p, in.p, in.normalize, in.where.normalize);
        pos.q = checked_distribution(in.where.q, in.q, in.normalize, in.where.normalize);
    }
    pos.a = acceptance(pos.p, pos.q);
    return pos;
}

SpecExpected expected(double alpha, bool from_pq, std::size_t gamma, const SpecAcceptInputs& in) {
    SpecExpected e;
    e.alpha = alpha;
    e.alpha_from_pq = from_pq;
    e.gamma = gamma;
    e.expected_tokens_per_round = expected_tokens_per_round(alpha, gamma);
    e.accepted_count_distribution = accepted_count_distribution(alpha, gamma);
    for (std::size_t k = 0; k <= gamma; ++k) e.tokens_if_accepted.push_back(k + 1);
    // The table reaches the round's γ when that is past --max-gamma: the round just computed is a row.
    const std::size_t last = std::max(gamma, in.max_gamma);
    e.max_gamma = last;
    e.next_gamma = last + 1;
    for (std::size_t g = 1; g <= last; ++g) {
        e.sweep.push_back({g, expected_tokens_per_round(alpha, g), std::nullopt});
        if (in.cost_ratio) e.sweep.back().speedup = speedup(alpha, g, *in.cost_ratio);
    }
    if (!in.cost_ratio) return e;
    e.cost_ratio = in.cost_ratio;
    e.speedup = speedup(alpha, gamma, *in.cost_ratio);
    e.choice = choose_gamma(alpha, *in.cost_ratio, last);
    for (std::size_t g = 1; g <= last; ++g)
        e.gamma_table.push_back({g, expected_tokens_per_round(alpha, g), speedup(alpha, g, *in.cost_ratio),
                                 e.choice->best && *e.choice->best == g});
    return e;
}

SpecSimulation simulation(const SpecPosition& pos, const SpecAcceptInputs& in) {
    // Each sample draws from the vocabulary by a linear scan: the work is samples × vocabulary
    // (a 200,000-token vocabulary at 10,000 samples once took a minute), bounded up front.
    if (*in.samples > kMaxSimulatedDraws / std::max<std::size_t>(pos.p.size(), 1))
        throw InputError(in.where.samples, std::to_string(*in.samples),
                         N_("times the {0}-token vocabulary is more than {1} draws in one run: fewer samples"),
                         {group_thousands(pos.p.size()), group_thousands(kMaxSimulatedDraws)});
    SpecSimulation s;
    s.samples = *in.samples;
    s.seed = in.seed;
    s.threshold = in.threshold;
    const SimulationCounts c = simulate_speculative(pos.p, pos.q, in.threshold, s.samples, in.seed);
    const double n = static_cast<double>(s.samples);
    auto freq = [n](const std::vector<std::uint64_t>& counts) {
        std::vector<double> f;
        for (auto k : counts) f.push_back(static_cast<double>(k) / n);
        return f;
    };
    s.speculative = freq(c.speculative);
    s.threshold_shortcut = freq(c.threshold_shortcut);
    s.greedy = freq(c.greedy);
    s.threshold_shortcut_exact = threshold_shortcut_distribution(pos.p, pos.q, in.threshold);
    for (double px : pos.p) s.half_width_99.push_back(proportion_half_width_99(px, n));
    s.speculative_fit = fit_test(c.speculative, pos.p);
    s.threshold_shortcut_fit = fit_test(c.threshold_shortcut, pos.p);
    s.speculative_passes = s.speculative_fit.passes(kFitLevel);
    s.threshold_shortcut_passes = s.threshold_shortcut_fit.passes(kFitLevel);
    return s;
}

}  // namespace

namespace {
// "1 entry", "3 entries": a clause of an error, said in the error's language when it is printed.
Prose entries(std::size_t n) { return {n == 1 ? N_("{0} entry") : N_("{0} entries"), {group_thousands(n)}}; }
}  // namespace

void require_same_vocabulary(const std::string& where_p, std::size_t p_size, const std::string& where_q, std::size_t q_size) {
    if (p_size != q_size)
        throw InputError(Prose{N_("{0} has {2} and {1} has {3}: p and q must cover the same vocabulary"),
                               {where_q, where_p},
                               {},
                               {entries(q_size), entries(p_size)}});
}

SpecAcceptResult spec_accept(const SpecAcceptInputs& in) {
    SpecAcceptResult r;
    if (in.source != PositionSource::None) r.position = position(in);
    r.gamma = in.gamma;
    if (in.alpha && r.position)
        throw InputError(N_("α given and {0}/{1} given: α comes from Σ min(p, q)"), {in.where.p, in.where.q});
    if (in.gamma && in.outcomes) r.round = walk_round(*in.gamma, *in.outcomes, in.where.outcomes, in.where.gamma);
    if (in.gamma && in.alpha) r.expected = expected(*in.alpha, false, *in.gamma, in);
    else if (in.gamma && r.position) r.expected = expected(r.position->a.accept_prob, true, *in.gamma, in);
    if (in.samples) {
        if (!r.position) throw InputError(N_("a simulation needs {0} and {1}"), {in.where.p, in.where.q});
        r.simulation = simulation(*r.position, in);
    }
    return r;
}

}  // namespace inferlab
