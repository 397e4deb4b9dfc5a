#include "inferlab/answer/best_of_n.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/problems.hpp"

namespace inferlab {
namespace {

void check_request(const BestOfNRequest& r) {
    const BestOfNNames& nm = r.names;
    if (!(r.p >= 0 && r.p <= 1)) throw InputError(nm.p, fmt::format("{}", r.p), N_("must be a probability in [0, 1]"));
    if (r.ns.empty()) throw InputError(N_("no candidate count {0} given"), {nm.n});
    if (r.hard_fraction && (*r.hard_fraction >= 1 || r.p > 1 - *r.hard_fraction))
        throw InputError(nm.hard_fraction, format_real(*r.hard_fraction, 10),
                         N_("must leave room for mean p: need p ≤ 1 − h (p = {0})"), {format_real(r.p, 10)});
    if (r.rho && (*r.rho >= 1 || *r.rho < 0))
        throw InputError(nm.rho, format_real(*r.rho, 10), N_("must be in [0, 1) (1 means every sample of a problem is the same)"));
    if (r.simulation && (r.simulation->trials == 0 || r.simulation->trials > kMaxSimulationTrials))
        throw InputError(nm.trials, std::to_string(r.simulation->trials),
                         N_("must be from 1 to {0}"), {group_thousands(kMaxSimulationTrials)});
    if (r.simulation) {
        // Draws per candidate: its correctness and the verifier's verdict, and with an answer
        // distribution a vote over its answers (a linear scan). Summed with a cap: a single N near
        // 2^64 must not wrap the count back under the limit.
        const std::uint64_t per_candidate = r.answer_dist ? std::max<std::uint64_t>(1, r.answer_dist->size()) : 1;
        const std::uint64_t cap = kMaxSimulatedCandidates + 1;
        auto times = [cap](std::uint64_t a, std::uint64_t b) { return b != 0 && a > cap / b ? cap : std::min(cap, a * b); };
        std::uint64_t work = 0;
        for (std::uint64_t n : r.ns) work = std::min(cap, work + times(times(n, r.simulation->trials), per_candidate));
        if (work > kMaxSimulatedCandidates)
            throw InputError(nm.trials, std::to_string(r.simulation->trials),
                             N_("with the N asked for would simulate more than {0} candidate draws (trials × the sum "
                                "of N, × the answers with a distribution): fewer trials or a smaller N"),
                             {group_thousands(kMaxSimulatedCandidates)});
    }
}

// The correlated models asked for, as distributions of p across problems.
std::optional<ProblemMix> hard_mix(const BestOfNRequest& r) {
    if (!r.hard_fraction) return std::nullopt;
    return ProblemMix{ProblemMix::Kind::hard_fraction, r.p, *r.hard_fraction, 0};
}
std::optional<ProblemMix> beta_mix(const BestOfNRequest& r) {
    if (!r.rho) return std::nullopt;
    return ProblemMix{ProblemMix::Kind::beta, r.p, 0, *r.rho};
}

// The exact majority vote under a beta spread evaluates the vote at many p: bounded as the vote's
// own work is (N³·k² per evaluation, 4·10^9 in all).
void check_vote_work(const BestOfNRequest& r, std::uint64_t n) {
    if (!r.answer_dist || !r.rho) return;
    const double k = static_cast<double>(r.answer_dist->size() - 1), N = static_cast<double>(n);
    const double evaluations = static_cast<double>(problems_evaluations(*beta_mix(r), n));
    if (evaluations * N * N * N * k * k > 4e9)
        throw InputError(r.names.rho, format_real(*r.rho, 10),
                         N_("with majority vote at N = {0} needs the exact vote at {1} values of p (N³·k² each, 4·10^9 "
                            "in all): a smaller N, fewer wrong answers, or no --rho"),
                         {std::to_string(n), std::to_string(static_cast<std::uint64_t>(evaluations))});
}

// The quadrature against the coverage's closed form at this N: a spread whose mass crowds at 0 or 1
// (p = 10^−9 with ρ near 1) takes nodes that double cannot place to seven digits; said, not printed.
void check_quadrature(const BestOfNRequest& r, const ProblemMix& mix, std::uint64_t n, double coverage_value) {
    const double quad = over_problems(mix, n, [n](double p) { return coverage(p, n); });
    if (std::fabs(quad - coverage_value) <= 1e-7 * coverage_value + 1e-300) return;
    const BetaShape s = beta_shape(r.p, mix.rho);
    throw InputError(r.names.rho, format_real(mix.rho, 10),
                     N_("with p = {0}: Beta({1}, {2}) crowds its mass too near 0 or 1 for the quadrature to keep seven "
                        "digits at N = {3}: a p further from 0 and 1, or a smaller ρ"),
                     {format_short(r.p, 6), format_short(s.a, 6), format_short(s.b, 6), std::to_string(n)});
}

// Every strategy asked for, averaged over the problems of `mix`; `coverage` its closed form.
ModelFigures model_row(const BestOfNRequest& r, const ProblemMix& mix, std::uint64_t n, double coverage_value) {
    ModelFigures m;
    m.coverage = coverage_value;
    // The verifier and the vote under the beta spread take the quadrature (coverage and the judge
    // have closed forms): bounded, and checked to hold its digits at this N.
    if (mix.kind == ProblemMix::Kind::beta && (r.verifier || r.answer_dist)) {
        if (n / 2 + 1 > kMaxBetaNodes)
            throw InputError(r.names.rho, format_real(mix.rho, 10),
                             N_("at N = {0}: the beta spread is averaged exactly for at most {1} candidates (a smaller "
                                "N, or no --rho)"),
                             {group_thousands(n), group_thousands(2 * (kMaxBetaNodes - 1))});
        check_quadrature(r, mix, n, coverage_value);
    }
    if (r.verifier) {
        const Verifier v = *r.verifier;
        auto at = [&](double p) { return verifier_selection(p, n, v); };
        m.verifier_selection = over_problems(mix, n, at);
        if (mix.kind == ProblemMix::Kind::hard_fraction) {
            m.verifier_on_solvable = at(solvable_p(mix));
            m.verifier_on_hard = at(0);
        }
    }
    if (r.answer_dist)
        m.majority_vote = over_problems(mix, n, [&](double p) { return majority_vote(answers_at(*r.answer_dist, p), n); });
    if (r.judge_bias) {
        // The judge is linear in p^N and the coverage: under the beta spread both have closed forms.
        if (mix.kind == ProblemMix::Kind::beta) {
            const double all = all_correct_beta(r.p, mix.rho, n);
            m.biased_judge = all + (1 - *r.judge_bias) * (coverage_value - all);
        } else {
            m.biased_judge = over_problems(mix, n, [&](double p) { return biased_judge_selection(p, n, *r.judge_bias); });
        }
    }
    return m;
}

BestOfNRow row_of(const BestOfNRequest& r, std::uint64_t n) {
    BestOfNRow row;
    row.n = n;
    row.coverage = coverage(r.p, n);
    row.none_correct = 1 - row.coverage;
    if (r.verifier) row.verifier_selection = verifier_selection(r.p, n, *r.verifier);
    if (r.answer_dist) row.majority_vote = majority_vote(*r.answer_dist, n);
    if (r.judge_bias) {
        row.biased_judge = biased_judge_selection(r.p, n, *r.judge_bias);
        row.all_correct = all_correct(r.p, n);
    }
    if (r.hard_fraction) {
        row.coverage_hard_fraction = coverage_hard_fraction(r.p, *r.hard_fraction, n);
        row.hard_fraction = model_row(r, *hard_mix(r), n, *row.coverage_hard_fraction);
    }
    if (r.rho) {
        check_vote_work(r, n);
        row.coverage_beta = coverage_beta(r.p, *r.rho, n);
        row.beta = model_row(r, *beta_mix(r), n, *row.coverage_beta);
    }
    return row;
}

std::optional<BiasedJudgeDrop> biased_drop(const std::vector<BestOfNRow>& rows) {
    for (std::size_t i = 1; i < rows.size(); ++i)
        if (rows[i].biased_judge && *rows[i].biased_judge < *rows[i - 1].biased_judge)
            return BiasedJudgeDrop{rows[i - 1].n, rows[i].n, *rows[i - 1].biased_judge, *rows[i].biased_judge};
    return std::nullopt;
}

BudgetAnswer budget_of(const BestOfNRequest& r) {
    const BestOfNRequest::Budget& b = *r.budget;
    BudgetAnswer out{b, {}, 0};
    if (!(b.cost_sample > 0)) throw InputError(r.names.cost_sample, format_real(b.cost_sample, 10), N_("must be positive"));
    if (b.cost_judge < 0) throw InputError(r.names.cost_judge, format_real(b.cost_judge, 10), N_("must not be negative"));
    // Voting depends on how many wrong answers split the votes: never guessed (empty: left out).
    out.plans = compare_at_budget(r.p, b.budget, b.cost_sample, b.cost_judge, r.verifier ? *r.verifier : Verifier{},
                                  r.answer_dist ? *r.answer_dist : std::vector<double>{});
    out.samples_bought = static_cast<std::uint64_t>(std::floor(b.budget / b.cost_sample));
    // Each plan under the correlated models asked for: one sample is p on average under any of them.
    const Verifier v = r.verifier ? *r.verifier : Verifier{};
    for (BudgetPlan& pl : out.plans) {
        auto at = [&](double p) {
            switch (pl.kind) {
                case BudgetPlan::Kind::verifier: return verifier_selection(p, pl.n, v);
                case BudgetPlan::Kind::majority: return majority_vote(answers_at(*r.answer_dist, p), pl.n);
                case BudgetPlan::Kind::single: break;
            }
            return p;
        };
        if (const auto mix = hard_mix(r)) pl.p_correct_hard_fraction = over_problems(*mix, pl.n, at);
        if (const auto mix = beta_mix(r)) {
            if (pl.kind == BudgetPlan::Kind::majority) check_vote_work(r, pl.n);
            // N candidates are a polynomial of degree N: the Beta quadrature averages up to its node limit.
            if (pl.n / 2 + 1 > kMaxBetaNodes)
                throw InputError(r.names.rho, format_real(*r.rho, 10),
                                 N_("with a budget that buys {0} candidates: the beta spread is averaged exactly for at "
                                    "most {1} candidates (a smaller budget, or no --rho)"),
                                 {group_thousands(pl.n), group_thousands(2 * (kMaxBetaNodes - 1))});
            if (pl.n > 1) check_quadrature(r, *mix, pl.n, coverage_beta(r.p, mix->rho, pl.n));
            pl.p_correct_beta = over_problems(*mix, pl.n, at);
        }
    }
    return out;
}

SimulationAnswer simulation_of(const BestOfNRequest& r) {
    SimulationAnswer out{r.simulation->trials, r.simulation->seed, {}, true, 0};
    const Verifier v = r.verifier ? *r.verifier : Verifier{};
    // No answer distribution: majority vote is not simulated (nobody asked for it).
    const std::vector<double> d = r.answer_dist ? *r.answer_dist : std::vector<double>{};
    for (std::uint64_t n : r.ns) {
        const SimulationResult s = simulate_best_of_n(r.p, n, v, d, r.judge_bias.value_or(0), out.trials, out.seed);
        const BestOfNRow exact = row_of(r, n);
        auto add = [&](const char* name, const std::optional<double>& value, const Estimate& e) {
            if (!value) return;
            const std::optional<bool> ok = e.agrees_with(*value);
            out.all_agree = out.all_agree && ok.value_or(true);
            out.untold += !ok;
            out.rows.push_back({n, name, *value, e, ok});
        };
        add(N_("coverage"), exact.coverage, s.coverage);
        add(N_("verifier"), exact.verifier_selection, s.verifier);
        add(N_("majority"), exact.majority_vote, s.majority);
        add(N_("biased judge"), exact.biased_judge, s.biased_judge);
    }
    return out;
}


// calc/best_of_n.hpp's functions name their inputs in its terms ("N", "wrong answers", "budget": the
// where() of their errors, a documented part of their contract); said again in req.names'. The
// rule keeps its msgid and arguments (renamed), so the error still translates.
[[noreturn]] void rethrow_named(const InputError& e, const BestOfNNames& nm) {
    const std::pair<const char*, const std::string*> terms[] = {{"N", &nm.n}, {"wrong answers", &nm.wrong_answers}, {"budget", &nm.budget}};
    for (const auto& [term, name] : terms)
        if (e.where() == term) throw e.renamed(*name);
    throw;  // not one of calc/best_of_n.hpp's terms: already named by this library
}

BestOfNResult best_of_n_in_library_terms(const BestOfNRequest& req) {
    check_request(req);
    BestOfNResult res;
    res.p = req.p;
    res.p_wrong = 1 - req.p;
    for (std::uint64_t n : req.ns) res.rows.push_back(row_of(req, n));
    if (req.verifier)
        res.verifier = VerifierFacts{verifier_accept_rate(req.p, *req.verifier), verifier_selection_limit(req.p, *req.verifier)};
    if (req.judge_bias) res.biased_judge_drop = biased_drop(res.rows);
    if (req.hard_fraction) res.p_on_solvable = solvable_p(*hard_mix(req));
    if (req.rho && *req.rho > 0) res.beta = beta_shape(req.p, *req.rho);  // ρ = 0: no spread, no Beta to name
    if (req.target) {
        TargetAnswer t{*req.target, min_n_for_coverage(req.p, *req.target), 0};
        if (t.min_n) t.coverage_at_min_n = coverage(req.p, *t.min_n);
        res.target = t;
    }
    if (req.budget) res.budget = budget_of(req);
    if (req.simulation) res.simulation = simulation_of(req);
    return res;
}

}  // namespace

BestOfNResult best_of_n(const BestOfNRequest& req) {
    try {
        return best_of_n_in_library_terms(req);
    } catch (const InputError& e) {
        rethrow_named(e, req.names);
    }
}

}  // namespace inferlab
