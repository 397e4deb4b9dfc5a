// best-of-n's flags read into a BestOfNRequest (best_of_n_flags.hpp): shared by `inferlab best-of-n`
// and `inferlab figure doc1-fig14`, one parser with one set of rules and messages.
#include <fmt/format.h>

#include <cmath>
#include <span>

#include "best_of_n_flags.hpp"
#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab::app {
namespace {

// --tpr/--fpr or --verifier-accuracy, with --fallback; none given: no verifier.
std::optional<Verifier> parse_verifier(const BestOfNFlags& o) {
    std::optional<Verifier> ver;
    if (!o.verifier_accuracy.empty() && (!o.tpr.empty() || !o.fpr.empty()))
        throw InputError(N_("--verifier-accuracy and --tpr/--fpr both given: choose one"));
    if (!o.verifier_accuracy.empty()) {
        double a = parse_probability("--verifier-accuracy", o.verifier_accuracy);
        ver = Verifier{a, 1 - a, true};
    } else if (!o.tpr.empty() || !o.fpr.empty()) {
        if (o.tpr.empty() || o.fpr.empty()) throw InputError(N_("give both --tpr and --fpr (or --verifier-accuracy)"));
        ver = Verifier{parse_probability("--tpr", o.tpr), parse_probability("--fpr", o.fpr), true};
    }
    if (o.fallback != "random" && o.fallback != "abstain")
        throw InputError("--fallback", o.fallback, N_("must be 'random' (pick any candidate) or 'abstain'"));
    if (!ver && o.fallback_given)
        throw InputError("--fallback", o.fallback,
                         N_("has no effect without a verifier: it says what the verifier does when it accepts no "
                            "candidate (give --tpr and --fpr, or --verifier-accuracy)"));
    if (ver) ver->fallback_random = o.fallback == "random";
    return ver;
}

// The answer distribution majority vote needs: --answer-dist, or --alternatives k equally likely
// wrong answers; none given: no vote.
std::optional<std::vector<double>> parse_answer_dist(const BestOfNFlags& o, double p) {
    if (!o.answer_dist.empty() && !o.alternatives.empty())
        throw InputError(N_("--answer-dist and --alternatives both given: choose one"));
    if (!o.answer_dist.empty()) {
        std::vector<double> d;
        double sum = 0;
        for (const auto& item : split_list("--answer-dist", o.answer_dist)) {
            double v = parse_probability("--answer-dist", item);
            d.push_back(v);
            sum += v;
        }
        if (d.size() < 2)
            throw InputError("--answer-dist", o.answer_dist, N_("needs the correct answer and at least one wrong one"));
        if (std::fabs(sum - 1) > 1e-9)
            throw InputError("--answer-dist", o.answer_dist, N_("must sum to 1 (sums to {0})"), {fmt::format("{}", sum)});
        if (std::fabs(d[0] - p) > 1e-12)
            throw InputError("--answer-dist", o.answer_dist, N_("its first entry (the correct answer) must equal --p {0}"),
                             {o.p});
        return d;
    } else if (!o.alternatives.empty()) {
        std::uint64_t k = parse_positive_int("--alternatives", o.alternatives);
        if (k > 32) throw InputError("--alternatives", o.alternatives, N_("must be at most {0}"), {"32"});
        return spread_wrong(p, k);
    }
    return std::nullopt;
}

// --simulate's trials and --seed, for independent candidates and the search alike; none without --simulate.
std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_simulation(const BestOfNFlags& o) {
    if (o.simulate.empty()) return std::nullopt;
    const std::uint64_t trials =
        parse_count_at_most("--simulate", o.simulate, kMaxSimulationTrials, N_("must be at most {0} trials"));
    return std::pair{trials, parse_nonnegative_int("--seed", o.seed)};
}

// The first flag given among `flags` is refused with `rule` (a msgid whose {0} is the flag): a flag that
// would change nothing where it was given.
void refuse_given(std::span<const std::pair<const char*, bool>> flags, const char* rule) {
    for (const auto& [flag, given] : flags)
        if (given) throw InputError(rule, {flag});
}

// A flag whose only job is to tune a section that was not asked for would be silently ignored.
void refuse_without_effect(const BestOfNFlags& o) {
    if (o.budget.empty() && (o.cost_sample_given || !o.cost_judge.empty()))
        throw InputError(N_("{0} has no effect without --budget: costs only price the strategies compared at equal cost"),
                         {o.cost_sample_given ? "--cost-sample" : "--cost-judge"});
    if (o.simulate.empty() && o.seed_given)
        throw InputError(N_("--seed has no effect without --simulate: only the Monte Carlo draws random numbers"));
    const std::pair<const char*, bool> search_only[] = {
        {"--q", !o.q.empty()},           {"--steps", !o.steps.empty()},         {"--branch", !o.branch.empty()},
        {"--beam", !o.beam.empty()},     {"--step-tpr", !o.step_tpr.empty()},   {"--step-fpr", !o.step_fpr.empty()},
        {"--score-gap", !o.score_gap.empty()}, {"--score-sigma", !o.score_sigma.empty()}, {"--final-check", o.final_check},
        {"--budget-tokens", !o.budget_tokens.empty()}, {"--budget-seconds", !o.budget_seconds.empty()}};
    refuse_given(search_only, N_("{0} has no effect without --search: it describes the step-wise search"));
}

// With --search, the flags of independent candidates (the search's candidates are its own).
void refuse_outside_search(const BestOfNFlags& o) {
    const std::pair<const char*, bool> candidates_only[] = {
        {"--p", !o.p.empty()},
        {"--n", o.n_given},
        {"--target", !o.target.empty()},
        {"--answer-dist", !o.answer_dist.empty()},
        {"--hard-fraction", !o.hard_fraction.empty()},
        {"--rho", !o.rho.empty()},
        {"--judge-bias", !o.judge_bias.empty()},
        {"--budget", !o.budget.empty()},
        {"--cost-sample", o.cost_sample_given},
        {"--cost-judge", !o.cost_judge.empty()}};
    refuse_given(candidates_only, N_("{0} has no effect with --search: the search's candidates are its own steps (--q, "
                                     "--branch, --beam, --steps)"));
    if (o.simulate.empty() && o.seed_given)
        throw InputError(N_("--seed has no effect without --simulate: only the Monte Carlo draws random numbers"));
}

// The process scorer: --step-tpr with --step-fpr, or --score-sigma (with --score-gap, default 1).
ProcessScorer parse_scorer(const BestOfNFlags& o) {
    const bool rates = !o.step_tpr.empty() || !o.step_fpr.empty(), gauss = !o.score_gap.empty() || !o.score_sigma.empty();
    if (rates && gauss)
        throw InputError(N_("--step-tpr/--step-fpr and --score-gap/--score-sigma both given: choose one noise model"));
    ProcessScorer sc;
    if (rates) {
        if (o.step_tpr.empty() || o.step_fpr.empty()) throw InputError(N_("give both --step-tpr and --step-fpr"));
        sc.tpr = parse_probability("--step-tpr", o.step_tpr);
        sc.fpr = parse_probability("--step-fpr", o.step_fpr);
        return sc;
    }
    if (!gauss)
        throw InputError(N_("--search needs a process scorer: --step-tpr and --step-fpr (a step judged good or not), or "
                            "--score-sigma with --score-gap (a noisy score)"));
    if (o.score_sigma.empty()) throw InputError(N_("--score-gap needs --score-sigma: the noise of the score"));
    sc.kind = ProcessScorer::Kind::gaussian;
    sc.gap = o.score_gap.empty() ? 1 : parse_real("--score-gap", o.score_gap);
    sc.sigma = parse_real("--score-sigma", o.score_sigma);
    return sc;
}

void parse_sections(const BestOfNFlags& o, BestOfNRequest& rq) {
    // Their rules (p ≤ 1 − h, ρ < 1) are best_of_n's; compute() says them with these flags.
    if (!o.hard_fraction.empty()) rq.hard_fraction = parse_probability("--hard-fraction", o.hard_fraction);
    if (!o.rho.empty()) rq.rho = parse_probability("--rho", o.rho);
    if (!o.judge_bias.empty()) rq.judge_bias = parse_probability("--judge-bias", o.judge_bias);
    if (!o.target.empty()) rq.target = parse_probability("--target", o.target);
    if (!o.budget.empty()) {
        BestOfNRequest::Budget b;
        b.budget = parse_positive_real("--budget", o.budget);
        b.cost_sample = parse_positive_real("--cost-sample", o.cost_sample);
        b.cost_judge = o.cost_judge.empty() ? 0 : parse_real("--cost-judge", o.cost_judge);
        if (b.cost_judge < 0) throw InputError("--cost-judge", o.cost_judge, N_("must not be negative"));
        if (b.budget < b.cost_sample)
            throw InputError("--budget", o.budget, N_("is smaller than one sample (--cost-sample {0})"), {o.cost_sample});
        rq.budget = b;
    }
    if (const auto sim = parse_simulation(o)) rq.simulation = BestOfNRequest::Simulation{sim->first, sim->second};
}

// The budget's flags (budget_only) outside --search, but --alternatives, which votes here too.
void refuse_budget_flags(const BestOfNFlags& o);

BestOfNRequest parse_request(const BestOfNFlags& o) {
    if (o.p.empty()) throw InputError(N_("--p is required: the probability that one candidate is correct (e.g. 0.3)"));
    refuse_without_effect(o);
    refuse_budget_flags(o);
    BestOfNRequest rq;
    rq.p = parse_probability("--p", o.p);
    if (o.n_given && o.n.empty()) throw InputError("--n", "", N_("is an empty list"));
    rq.ns = parse_int_list_or_range("--n", o.n.empty() ? "1" : o.n, 1024);
    rq.verifier = parse_verifier(o);
    rq.answer_dist = parse_answer_dist(o, rq.p);
    parse_sections(o, rq);
    return rq;
}

// best_of_n with this command's flags as the names of its inputs: its errors say the flag.
BestOfNResult compute(const BestOfNFlags& o, const BestOfNRequest& request) {
    BestOfNRequest rq = request;
    rq.names = {"--p", "--n", o.answer_dist.empty() ? "--alternatives" : "--answer-dist", "--budget", "--cost-sample",
                "--cost-judge", "--hard-fraction", "--rho", "--simulate"};
    BestOfNResult res = best_of_n(rq);
    if (res.target && !res.target->min_n)
        throw InputError("--target", o.target,
                         rq.p > 0 ? N_("cannot be reached with p < 1: coverage 1 − (1 − p)^N stays below 1 for every N")
                                  : N_("cannot be reached with p = 0"));
    return res;
}


// The flags that only price a budget: with none of them given they would be silently ignored.
std::vector<std::pair<const char*, bool>> budget_only(const BestOfNFlags& o) {
    const RooflineFlags& f = o.price;
    return {{"--step-tokens", !o.step_tokens.empty()},  {"--call-seconds", !o.call_seconds.empty()},
            {"--mix", !o.mix.empty()},
            {"--prompt-len", !o.prompt_len.empty()},    {"--alternatives", !o.alternatives.empty()},
            {"--model", !f.model.empty()},              {"--config", !f.config.empty()},
            {"--weights-bytes", !f.weights_bytes.empty()}, {"--params", !f.params.empty()},
            {"--weight-dtype", !f.weight_dtype.empty()}, {"--kv-dtype", !f.kv_dtype.empty()},
            {"--hw", !f.hw.empty()},                    {"--bandwidth", !f.bandwidth.empty()},
            {"--peak-flops", !f.peak_flops.empty()}};
}

void refuse_budget_flags(const BestOfNFlags& o) {
    for (const auto& [flag, given] : budget_only(o))
        if (given && std::string(flag) != "--alternatives")
            throw InputError(N_("{0} has no effect without --search: it prices the search's strategies at one cost"), {flag});
}

// The roofline's model and machine for pricing, read by decode-roofline's own rules (one parser);
// none when no model or machine flag is given.
std::optional<StrategyPricing> parse_pricing(const BestOfNFlags& o) {
    const RooflineFlags& f = o.price;
    const bool any = !f.model.empty() || !f.config.empty() || !f.weights_bytes.empty() || !f.params.empty() ||
                     !f.hw.empty() || !f.bandwidth.empty();
    if (!any) {
        // These only tune the pricing: without a model and a machine they would change nothing.
        const std::pair<const char*, bool> pricing_only[] = {
            {"--prompt-len", !o.prompt_len.empty()}, {"--call-seconds", !o.call_seconds.empty()},
            {"--kv-dtype", !f.kv_dtype.empty()},     {"--weight-dtype", !f.weight_dtype.empty()},
            {"--peak-flops", !f.peak_flops.empty()}};
        refuse_given(pricing_only, N_("{0} has no effect without a model and a machine: it tunes the pricing of the "
                                      "time (give --model and --hw)"));
        return std::nullopt;
    }
    // Each step's KV read grows with its context: the geometry comes from a config (decode-roofline
    // takes --kv-bytes-per-request instead, which a budget of growing trajectories cannot use).
    if (f.model.empty() && f.config.empty())
        throw InputError(N_("a budget priced by the roofline needs the model's KV geometry, which grows with each step's "
                            "context: give --model or --config"));
    RooflineFlags g = f;
    g.seq_len = "1";  // the model's KV geometry is what prices the steps; each step's length is the strategy's
    const RooflineInputs in = gather_roofline(g);
    StrategyPricing pr;
    pr.model = in.req.model;
    pr.machine = in.req.machine;
    pr.prompt_tokens = o.prompt_len.empty() ? 0 : parse_tokens("--prompt-len", o.prompt_len);
    pr.call_seconds = o.call_seconds.empty() ? 0 : parse_real("--call-seconds", o.call_seconds);
    if (pr.call_seconds < 0) throw InputError("--call-seconds", o.call_seconds, N_("must not be negative"));
    return pr;
}

std::optional<SearchRequest::Budget> parse_search_budget(const BestOfNFlags& o) {
    if (o.budget_tokens.empty() && o.budget_seconds.empty()) {
        refuse_given(budget_only(o), N_("{0} has no effect without --budget-tokens or --budget-seconds: it prices the "
                                        "strategies compared at one cost"));
        return std::nullopt;
    }
    if (!o.budget_tokens.empty() && !o.budget_seconds.empty())
        throw InputError(N_("--budget-tokens and --budget-seconds both given: choose one budget"));
    if (o.step_tokens.empty())
        throw InputError(N_("a budget needs --step-tokens L: the tokens one step of the task generates"));
    SearchRequest::Budget b;
    b.step_tokens = parse_count_at_most("--step-tokens", o.step_tokens, 1000000, N_("must be at most {0} tokens"));
    if (!o.budget_tokens.empty()) b.tokens = parse_count("--budget-tokens", o.budget_tokens);
    if (!o.budget_seconds.empty()) b.seconds = parse_positive_real("--budget-seconds", o.budget_seconds);
    if (!o.alternatives.empty()) {
        b.wrong_answers = parse_positive_int("--alternatives", o.alternatives);
        if (*b.wrong_answers > 32) throw InputError("--alternatives", o.alternatives, N_("must be at most {0}"), {"32"});
    }
    b.pricing = parse_pricing(o);
    // --mix 0.7:0.99,0.3:0.6: a share of the problems and its per-step q, for each class.
    if (!o.mix.empty())
        for (const std::string& item : split_list("--mix", o.mix)) {
            const auto colon = item.find(':');
            if (colon == std::string::npos)
                throw InputError("--mix", item, N_("each class is share:q (0.7:0.99: 70% of problems at q = 0.99)"));
            b.mix.push_back({parse_probability("--mix", item.substr(0, colon)), parse_probability("--mix", item.substr(colon + 1))});
        }
    double shares = 0;
    for (const ProblemClass& c : b.mix) shares += c.share;
    if (!b.mix.empty() && std::fabs(shares - 1) > 1e-9)  // said with the mix as typed (the library checks it too)
        throw InputError("--mix", o.mix, N_("the shares must sum to 1 (they sum to {0})"), {format_real(shares, 10)});
    if (b.seconds && !b.pricing)
        throw InputError(N_("--budget-seconds needs a model and a machine to price the time: give --model (or --config) "
                            "and --hw (or --bandwidth)"));
    return b;
}

SearchRequest parse_search_request(const BestOfNFlags& o) {
    refuse_outside_search(o);
    if (o.q.empty())
        throw InputError(N_("--search needs --q: the probability that a step continuing a correct branch is correct"));
    SearchRequest rq;
    rq.spec.q = parse_probability("--q", o.q);
    rq.spec.branch = parse_positive_int_at_most("--branch", o.branch.empty() ? "4" : o.branch, kMaxSearchCandidates, "");
    rq.spec.beam = parse_positive_int_at_most("--beam", o.beam.empty() ? "4" : o.beam, kMaxSearchCandidates, "");
    rq.spec.scorer = parse_scorer(o);
    rq.steps = parse_int_list_or_range("--steps", o.steps.empty() ? "1..10" : o.steps, kMaxSearchSteps);
    rq.best_of_n = parse_verifier(o);
    if (o.final_check && !rq.best_of_n)
        throw InputError(N_("--final-check needs an outcome verifier: give --tpr and --fpr (or --verifier-accuracy)"));
    if (o.final_check) rq.spec.outcome = rq.best_of_n;
    if (const auto sim = parse_simulation(o)) rq.simulation = SearchRequest::Simulation{sim->first, sim->second};
    rq.budget = parse_search_budget(o);
    rq.names = {"--q",         "--branch",      "--beam",          "--steps",          "--step-tpr",
                "--step-fpr",  "--score-gap",   "--score-sigma",   "--simulate",       "--budget-tokens",
                "--budget-seconds", "--tpr and --fpr (or --verifier-accuracy)", "--mix"};
    return rq;
}

}  // namespace

SearchRequest parse_search(const BestOfNFlags& f) { return parse_search_request(f); }
SearchResult compute_search(const SearchRequest& rq) { return search_answer(rq); }
BestOfNRequest parse_best_of_n(const BestOfNFlags& f) { return parse_request(f); }
BestOfNResult compute_best_of_n(const BestOfNFlags& f, const BestOfNRequest& rq) { return compute(f, rq); }

}  // namespace inferlab::app
