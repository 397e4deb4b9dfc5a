// inferlab best-of-n: coverage is not selection. This file parses the flags into a
// BestOfNRequest, calls best_of_n once, and prints the result (text, --json, --csv, --explain:
// the printers sit together below).
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "best_of_n.hpp"
#include "common.hpp"
#include "inferlab/bestofn_result.hpp"
#include "inferlab/error.hpp"
#include "inferlab/plots.hpp"
#include "inferlab/report.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;

struct BestOfNOptions : BestOfNFlags {
    OutputFlags out;
};

// Probabilities in tables: the shortest exact form when short (0.3, 0.7599, 1e-16), else 6 digits.
std::string pr(double v) { return format_short(v, 6); }

// --tpr/--fpr or --verifier-accuracy, with --fallback; none given: no verifier.
std::optional<Verifier> parse_verifier(const BestOfNFlags& o) {
    std::optional<Verifier> ver;
    if (!o.verifier_accuracy.empty() && (!o.tpr.empty() || !o.fpr.empty()))
        throw InputError("--verifier-accuracy and --tpr/--fpr both given: choose one");
    if (!o.verifier_accuracy.empty()) {
        double a = parse_probability("--verifier-accuracy", o.verifier_accuracy);
        ver = Verifier{a, 1 - a, true};
    } else if (!o.tpr.empty() || !o.fpr.empty()) {
        if (o.tpr.empty() || o.fpr.empty()) throw InputError("give both --tpr and --fpr (or --verifier-accuracy)");
        ver = Verifier{parse_probability("--tpr", o.tpr), parse_probability("--fpr", o.fpr), true};
    }
    if (o.fallback != "random" && o.fallback != "abstain")
        throw InputError("--fallback", o.fallback, "must be 'random' (pick any candidate) or 'abstain'");
    if (!ver && o.fallback_given)
        throw InputError("--fallback", o.fallback,
                         "has no effect without a verifier: it says what the verifier does when it accepts no "
                         "candidate (give --tpr and --fpr, or --verifier-accuracy)");
    if (ver) ver->fallback_random = o.fallback == "random";
    return ver;
}

// The answer distribution majority vote needs: --answer-dist, or --alternatives k equally likely
// wrong answers; none given: no vote.
std::optional<std::vector<double>> parse_answer_dist(const BestOfNFlags& o, double p) {
    if (!o.answer_dist.empty() && !o.alternatives.empty())
        throw InputError("--answer-dist and --alternatives both given: choose one");
    if (!o.answer_dist.empty()) {
        std::vector<double> d;
        double sum = 0;
        for (const auto& item : split_list("--answer-dist", o.answer_dist)) {
            double v = parse_probability("--answer-dist", item);
            d.push_back(v);
            sum += v;
        }
        if (d.size() < 2) throw InputError("--answer-dist", o.answer_dist, "needs the correct answer and at least one wrong one");
        if (std::fabs(sum - 1) > 1e-9) throw InputError("--answer-dist", o.answer_dist, fmt::format("must sum to 1 (sums to {})", sum));
        if (std::fabs(d[0] - p) > 1e-12)
            throw InputError("--answer-dist", o.answer_dist, "its first entry (the correct answer) must equal --p " + o.p);
        return d;
    } else if (!o.alternatives.empty()) {
        std::uint64_t k = parse_positive_int("--alternatives", o.alternatives);
        if (k > 32) throw InputError("--alternatives", o.alternatives, "must be at most 32");
        return spread_wrong(p, k);
    }
    return std::nullopt;
}

// A flag whose only job is to tune a section that was not asked for would be silently ignored.
void refuse_without_effect(const BestOfNFlags& o) {
    if (o.budget.empty() && (o.cost_sample_given || !o.cost_judge.empty()))
        throw InputError(fmt::format("{} has no effect without --budget: costs only price the strategies compared at "
                                     "equal cost", o.cost_sample_given ? "--cost-sample" : "--cost-judge"));
    if (o.simulate.empty() && o.seed_given)
        throw InputError("--seed has no effect without --simulate: only the Monte Carlo draws random numbers");
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
        if (b.cost_judge < 0) throw InputError("--cost-judge", o.cost_judge, "must not be negative");
        if (b.budget < b.cost_sample)
            throw InputError("--budget", o.budget, "is smaller than one sample (--cost-sample " + o.cost_sample + ")");
        rq.budget = b;
    }
    if (!o.simulate.empty()) {
        const std::uint64_t trials = parse_positive_int("--simulate", o.simulate);
        if (trials > kMaxSimulationTrials)
            throw InputError("--simulate", o.simulate, fmt::format("must be at most {} trials", group_thousands(kMaxSimulationTrials)));
        rq.simulation = BestOfNRequest::Simulation{trials, parse_nonnegative_int("--seed", o.seed)};
    }
}

BestOfNRequest parse_request(const BestOfNFlags& o) {
    if (o.p.empty()) throw InputError("--p is required: the probability that one candidate is correct (e.g. 0.3)");
    refuse_without_effect(o);
    BestOfNRequest rq;
    rq.p = parse_probability("--p", o.p);
    if (o.n_given && o.n.empty()) throw InputError("--n", "", "is an empty list");
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
                         rq.p > 0 ? "cannot be reached with p < 1: coverage 1 − (1 − p)^N stays below 1 for every N"
                                  : "cannot be reached with p = 0");
    return res;
}

// ---------------------------------------------------------------- printers
// Every number below comes from the BestOfNResult; these functions only choose what to show.

json row_json(const BestOfNRow& r) {
    return {{"n", r.n}, {"coverage", r.coverage}, {"verifier_selection", or_null(r.verifier_selection)},
            {"majority_vote", or_null(r.majority_vote)}, {"biased_judge", or_null(r.biased_judge)},
            {"coverage_hard_fraction", or_null(r.coverage_hard_fraction)}, {"coverage_beta", or_null(r.coverage_beta)}};
}

json sections_json(const BestOfNOptions& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    json j = {{"verifier", nullptr}, {"budget", nullptr}, {"simulation", nullptr}};
    if (res.verifier)
        j["verifier"] = {{"tpr", rq.verifier->tpr}, {"fpr", rq.verifier->fpr}, {"fallback", o.fallback},
                         {"accept_rate", res.verifier->accept_rate}, {"limit_large_n", res.verifier->limit_large_n}};
    if (const auto& b = res.budget) {
        j["budget"] = {{"budget", b->costs.budget}, {"cost_sample", b->costs.cost_sample},
                       {"cost_judge", b->costs.cost_judge}, {"plans", json::array()}};
        for (const auto& pl : b->plans)
            j["budget"]["plans"].push_back(
                {{"strategy", pl.strategy}, {"n", pl.n}, {"cost", pl.cost}, {"p_correct", pl.p_correct}, {"capped", pl.capped}});
    }
    if (const auto& s = res.simulation) {
        j["simulation"] = {{"trials", s->trials}, {"seed", s->seed}, {"rows", json::array()}, {"all_agree", s->all_agree}};
        for (const auto& r : s->rows)
            j["simulation"]["rows"].push_back({{"n", r.n}, {"strategy", r.strategy}, {"exact", r.exact},
                                               {"estimate", r.estimate.mean}, {"half_width_99", r.estimate.half_width},
                                               {"agrees", r.agrees}});
    }
    return j;
}

// The whole document: every key in every run, null where there is no value. With one N its
// row's values also stand at the top level (null with several).
json result_json(const BestOfNOptions& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    json j = {{"p", res.p}, {"rows", json::array()}};
    for (const auto& r : res.rows) j["rows"].push_back(row_json(r));
    const json single = res.rows.size() == 1 ? row_json(res.rows.front()) : json(nullptr);
    for (const char* key : {"coverage", "verifier_selection", "majority_vote", "biased_judge", "coverage_hard_fraction",
                            "coverage_beta"})
        j[key] = single.is_null() ? json(nullptr) : single[key];
    j.update(sections_json(o, rq, res));
    j["answer_distribution"] = or_null(rq.answer_dist);
    j["judge_bias"] = or_null(rq.judge_bias);
    j["hard_fraction"] = or_null(rq.hard_fraction);
    j["rho"] = or_null(rq.rho);
    j["target"] = res.target ? json(res.target->target) : json(nullptr);
    j["min_n_for_target"] = res.target ? or_null(res.target->min_n) : json(nullptr);
    return j;
}

Table rows_table(const BestOfNRequest& rq, const BestOfNResult& res) {
    Table t{{"N", "coverage P≥1"}, {}, {}};
    if (rq.verifier) t.columns.push_back("verifier picks correct");
    if (rq.answer_dist) t.columns.push_back("majority vote correct");
    if (rq.judge_bias) t.columns.push_back("biased judge correct");
    if (rq.hard_fraction) t.columns.push_back("coverage, hard fraction");
    if (rq.rho) t.columns.push_back("coverage, beta spread");
    for (const auto& r : res.rows) {
        std::vector<std::string> cells = {std::to_string(r.n), pr(r.coverage)};
        for (const auto* v : {&r.verifier_selection, &r.majority_vote, &r.biased_judge, &r.coverage_hard_fraction,
                              &r.coverage_beta})
            if (*v) cells.push_back(pr(**v));
        t.rows.push_back(cells);
    }
    return t;
}

Table budget_table(const BudgetAnswer& b) {
    Table t{{"strategy", "N", "cost", "P(correct)"}, {}, {false, true, true, true}};
    for (const auto& pl : b.plans) t.rows.push_back({pl.strategy, std::to_string(pl.n), format_real(pl.cost, 6), pr(pl.p_correct)});
    return t;
}

Table simulation_table(const SimulationAnswer& s) {
    Table t{{"N", "strategy", "exact", "Monte Carlo", "99% interval ±", "agrees"}, {}, {true, false}};
    for (const auto& r : s.rows)
        t.rows.push_back({std::to_string(r.n), r.strategy, pr(r.exact), pr(r.estimate.mean), pr(r.estimate.half_width),
                          r.agrees ? "yes" : "NO"});
    return t;
}

// What each strategy asked for assumes (text).
std::string strategies_text(const BestOfNOptions& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string h;
    if (const auto& v = res.verifier) {
        h += wrap(fmt::format("Verifier: TPR {}, FPR {}; picks uniformly among accepted candidates (or the first: same "
                              "probability); none accepted → {}.",
                              format_short(rq.verifier->tpr), format_short(rq.verifier->fpr),
                              o.fallback == "random" ? "pick any candidate" : "abstain"),
                  "  ", "  ");
        if (v->accept_rate > 0)
            h += wrap(fmt::format("As N grows selection tends to p·TPR/q = {}{}", pr(v->limit_large_n),
                                  rq.p > 0 ? ", while coverage tends to 1."
                                           : "; coverage stays 0: no candidate is correct (p = 0)."),
                      "  ", "  ");
        else
            h += wrap(fmt::format("The verifier accepts no candidate (q = p·TPR + (1−p)·FPR = 0), so every N gives the "
                                  "fallback: {}.",
                                  rq.verifier->fallback_random ? "a random candidate, correct with probability p = " + pr(v->limit_large_n)
                                                               : "abstain, never correct (0)"),
                      "  ", "  ");
    }
    if (rq.answer_dist)
        h += wrap(fmt::format("Majority vote over {} answers (correct one at p); ties broken uniformly at random.",
                              rq.answer_dist->size()), "  ", "  ");
    if (rq.judge_bias)
        h += wrap(fmt::format("Biased judge: picks a wrong candidate with probability {} whenever one is present.",
                              format_real(*rq.judge_bias, 6)), "  ", "  ");
    if (const auto& d = res.biased_judge_drop)
        h += wrap(fmt::format("More candidates lower the biased judge's accuracy: N = {} → {} gives {} → {}.", d->from_n,
                              d->to_n, pr(d->from_p), pr(d->to_p)), "  ", "  ");
    if (res.p_on_solvable)
        h += wrap(fmt::format("Correlated errors: {} of problems are hard for every sample (p = 0 there, {} elsewhere); "
                              "same mean p, coverage below the independent formula.",
                              format_real(*rq.hard_fraction, 6), format_real(*res.p_on_solvable, 6)), "  ", "  ");
    if (rq.rho)
        h += wrap(fmt::format("Beta spread of p across problems (correlation ρ = {} between samples of a problem).",
                              format_real(*rq.rho, 6)), "  ", "  ");
    return h;
}

std::string budget_text(const BestOfNRequest& rq, const BudgetAnswer& b, const Table& t) {
    std::string h = "\n" + wrap(fmt::format("At equal total cost {} (sample {}, judgement {}){}:", format_real(b.costs.budget, 6),
                                            format_real(b.costs.cost_sample, 6), format_real(b.costs.cost_judge, 6),
                                            rq.verifier ? "" : "; verifier assumed perfect (give --tpr/--fpr)"));
    h += render_table(t);
    if (!rq.answer_dist)
        h += wrap("Majority vote not compared: give --alternatives k or --answer-dist (how many wrong answers split the "
                  "votes decides it).", "  ", "  ");
    for (const auto& pl : b.plans)
        if (pl.capped)
            h += wrap(fmt::format("{}: exact up to N = {}; the budget buys {} samples.", pl.strategy, pl.n,
                                  group_thousands(b.samples_bought)), "  ", "  ");
    return h;
}

std::string chart(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::vector<std::string> labels;
    ChartSeries cov{"coverage", {}};
    // The selection drawn beside coverage: the verifier, else the vote, else the biased judge.
    ChartSeries sel{rq.verifier ? "verifier selection" : (rq.answer_dist ? "majority vote" : "biased judge"), {}};
    for (const auto& r : res.rows) {
        labels.push_back("N=" + std::to_string(r.n));
        cov.values.push_back(r.coverage);
        const auto& s = r.verifier_selection ? r.verifier_selection : (r.majority_vote ? r.majority_vote : r.biased_judge);
        if (s) sel.values.push_back(*s);
    }
    std::vector<ChartSeries> series = {cov};
    if (!sel.values.empty()) series.push_back(sel);
    return "\n" + render_bar_chart(labels, series, 50);
}

std::string coverage_explain(const BestOfNResult& res) {
    const double p = res.p;
    std::string x = "Coverage (first document §3.2): P≥1 = 1 − (1 − p)^N\n";
    for (const auto& r : res.rows) {
        const std::string none = format_short(r.none_correct, 10);
        if (none == "1" && r.coverage > 0)  // 1 − p rounds to 1: only the log form keeps the digits
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = −expm1({}·log1p(−{})) = {}", r.n, format_short(p, 10), r.n,
                                  r.n, format_short(p, 10), format_short(r.coverage, 10)), "  ", "    ");
        else
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = 1 − {}^{} = 1 − {} = {}", r.n, format_short(p, 10), r.n,
                                  format_short(res.p_wrong, 10), r.n, none, format_short(r.coverage, 10)), "  ", "    ");
    }
    x += wrap("This is the probability that a correct candidate is present, not that it is chosen.", "  ", "  ");
    return x;
}

std::string strategies_explain(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string x;
    if (res.verifier) {
        x += "\n" + wrap(fmt::format("Verifier selection: q = p·TPR + (1−p)·FPR = {}·{} + {}·{} = {}", format_real(rq.p, 6),
                                     format_real(rq.verifier->tpr, 6), format_real(res.p_wrong, 6),
                                     format_real(rq.verifier->fpr, 6), format_real(res.verifier->accept_rate, 10)));
        x += wrap("P = (1 − (1−q)^N)·p·TPR/q" + std::string(rq.verifier->fallback_random ? " + (1−q)^N·p·(1−TPR)/(1−q)" : ""),
                  "  ", "      ");
        for (const auto& r : res.rows) x += fmt::format("  N = {}: P = {}\n", r.n, format_real(*r.verifier_selection, 10));
    }
    if (rq.answer_dist)
        x += "\n" + wrap("Majority vote: exact sum over vote counts (c for the correct answer, n_j for wrong answer j) of "
                         "N!/(c!·Π n_j!)·p^c·Π q_j^{n_j}, counting a win when c > every n_j and 1/(t+1) when t answers tie at c.");
    if (rq.judge_bias)
        x += "\n" + wrap("Biased judge: P = p^N + (1 − bias)·(1 − (1−p)^N − p^N): more candidates make a wrong one present "
                         "more often, so P can fall as N grows.");
    if (rq.hard_fraction) x += "\n" + wrap("Hard fraction h: coverage = (1 − h)·(1 − (1 − p/(1−h))^N) ≤ 1 − (1 − p)^N.");
    if (rq.rho)
        x += "\n" + wrap("Beta spread: p ~ Beta(a, b), a = p(1−ρ)/ρ, b = (1−p)(1−ρ)/ρ; coverage = 1 − Π_{i<N} (b+i)/(a+b+i).");
    return x;
}

std::string target_text(const BestOfNOptions& o, const TargetAnswer& t) {
    // The target as typed and the coverage to 10 digits: rounding either could make the line false
    // (a target of 0.9999999 is not "≥ 1").
    return wrap(fmt::format("Smallest N with coverage ≥ {}: N = {} (coverage {:.10g})", o.target, *t.min_n,
                            t.coverage_at_min_n), "  ", "  ");
}

std::string target_explain(const BestOfNRequest& rq, const TargetAnswer& t) {
    if (rq.p >= 1 || t.target <= 0)
        return fmt::format("\nInverse: {}, so N = 1\n", rq.p >= 1 ? "p = 1: every candidate is correct" : "target ≤ 0");
    return fmt::format("\nInverse: N = ceil(ln(1 − target) / ln(1 − p)) = {}\n", *t.min_n);
}

void run(const BestOfNOptions& o) {
    const BestOfNRequest rq = parse_request(o);
    const BestOfNResult res = compute(o, rq);
    Report r;
    r.json = result_json(o, rq, res);
    const Table rows = rows_table(rq, res);
    r.add_table("rows", rows);
    r.human = wrap(fmt::format("Best-of-N with p = {} per candidate (first document §3.2)", format_real(res.p, 6))) +
              render_table(rows) +
              wrap("Coverage P≥1 = 1 − (1 − p)^N is the chance the candidates contain a correct answer, not the chance "
                   "the system answers correctly: that needs a selection step.", "  ", "  ") +
              strategies_text(o, rq, res);
    r.explain = coverage_explain(res) + strategies_explain(rq, res);
    if (res.target) {
        r.human += target_text(o, *res.target);
        r.explain += target_explain(rq, *res.target);
    }
    if (res.budget) {
        const Table b = budget_table(*res.budget);
        r.add_table("budget", b);
        r.human += budget_text(rq, *res.budget, b);
        r.explain += "\n" + wrap("Fixed budget: N_verifier = floor(budget / (cost_sample + cost_judge)), "
                                 "N_majority = floor(budget / cost_sample).");
    }
    if (res.simulation) {
        const Table s = simulation_table(*res.simulation);
        r.add_table("simulation", s);
        r.human += "\n" + wrap(fmt::format("Monte Carlo ({}, seed {}), beside the exact values:",
                                           count_noun(res.simulation->trials, "trial"), res.simulation->seed)) +
                   render_table(s);
    }
    if (res.rows.size() >= 3) r.human += chart(rq, res);
    if (!o.out.svg.empty()) r.svg = plots::best_of_n_svg(rq, res);
    emit(r, o.out);
}

}  // namespace

BestOfNRequest parse_best_of_n(const BestOfNFlags& f) { return parse_request(f); }
BestOfNResult compute_best_of_n(const BestOfNFlags& f, const BestOfNRequest& rq) { return compute(f, rq); }

void setup_best_of_n(CLI::App& app) {
    auto opt = std::make_shared<BestOfNOptions>();
    CLI::App* sub = app.add_subcommand("best-of-n", "Coverage 1−(1−p)^N beside the chance of actually selecting a correct answer");
    sub->add_option("--p", opt->p, "probability that one candidate is correct");
    sub->add_option("--n", opt->n, "candidates: 4, a list 1,2,4,8 or a range 1..16 (default 1)");
    sub->add_option("--target", opt->target, "smallest N whose coverage reaches this");
    sub->add_option("--tpr", opt->tpr, "verifier: P(accept | correct)");
    sub->add_option("--fpr", opt->fpr, "verifier: P(accept | wrong)");
    sub->add_option("--verifier-accuracy", opt->verifier_accuracy, "verifier with TPR = a, FPR = 1 − a");
    sub->add_option("--fallback", opt->fallback, "when the verifier accepts none: random (default) or abstain (needs a verifier)");
    sub->add_option("--alternatives", opt->alternatives, "majority vote: k equally likely wrong answers");
    sub->add_option("--answer-dist", opt->answer_dist, "majority vote: answer probabilities, the correct one first (0.4,0.35,0.25)");
    sub->add_option("--hard-fraction", opt->hard_fraction, "correlated errors: fraction of problems no sample solves");
    sub->add_option("--rho", opt->rho, "correlated errors: p ~ Beta with this intra-problem correlation");
    sub->add_option("--judge-bias", opt->judge_bias, "a judge that picks a wrong candidate with this probability when one is present");
    sub->add_option("--budget", opt->budget, "total cost: compare strategies at equal cost");
    sub->add_option("--cost-sample", opt->cost_sample, "cost of one candidate (default 1)");
    sub->add_option("--cost-judge", opt->cost_judge, "cost of one verifier judgement (default 0)");
    sub->add_option("--simulate", opt->simulate, "Monte Carlo trials beside the exact values");
    sub->add_option("--seed", opt->seed, "seed of the simulation (default 1)");
    add_output_flags(*sub, opt->out, true);
    add_svg_flag(*sub, opt->out, "coverage and each selection strategy against N (with the --target line)");
    sub->footer(examples_footer(
        {"inferlab best-of-n --p 0.3 --n 4", "    → coverage 1 − 0.7^4 = 0.7599 (a correct candidate is present, not chosen)",
         "inferlab best-of-n --p 0.3 --n 1..16 --tpr 0.9 --fpr 0.2 --simulate 100000 --seed 7",
         "inferlab best-of-n --p 0.6 --n 1,3,5,9 --alternatives 3 --judge-bias 0.3",
         "inferlab best-of-n --p 0.3 --n 1..8 --hard-fraction 0.5 --rho 0.3",
         "inferlab best-of-n --p 0.3 --tpr 0.9 --fpr 0.1 --alternatives 3 --budget 16 --cost-sample 1 --cost-judge 1",
         "inferlab best-of-n --p 0.3 --n 1..16 --tpr 0.9 --fpr 0.2 --target 0.95 --svg best-of-n.svg"},
        "Tables for --csv --table NAME: rows, and with --budget budget, with --simulate simulation.\n"
        "--fallback needs a verifier, --cost-sample and --cost-judge need --budget, --seed needs --simulate.\n"
        "JSON keys: the README's table (every key present in every run, null where not computed)."));
    sub->callback([opt, sub] {
        opt->fallback_given = given(*sub, "--fallback");
        opt->cost_sample_given = given(*sub, "--cost-sample");
        opt->seed_given = given(*sub, "--seed");
        opt->n_given = given(*sub, "--n");
        run(*opt);
    });
}

}  // namespace inferlab::app
