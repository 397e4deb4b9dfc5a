// inferlab best-of-n: coverage is not selection. This file holds the subcommand's flags and its run:
// best_of_n_flags.cpp reads the flags into a BestOfNRequest, best_of_n() computes,
// best_of_n_print.cpp prints the result.
#include <memory>

#include "best_of_n_flags.hpp"
#include "best_of_n_print.hpp"
#include "common.hpp"
#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/best_of_n.hpp"

namespace inferlab::app {
namespace {

struct BestOfNOptions : BestOfNFlags {
    OutputFlags out;
};

void run_search(const BestOfNOptions& o) {
    const SearchRequest rq = parse_search(o);
    const SearchResult res = compute_search(rq);
    Report r = search_report(rq, res);
    if (!o.out.svg.empty()) r.svg = plots::search_svg(rq, res);
    emit(r, o.out);
}

void run(const BestOfNOptions& o) {
    if (o.search) return run_search(o);
    const BestOfNRequest rq = parse_best_of_n(o);
    const BestOfNResult res = compute_best_of_n(o, rq);
    Report r = best_of_n_report(o, rq, res);
    if (!o.out.svg.empty()) r.svg = plots::best_of_n_svg(rq, res);
    emit(r, o.out);
}

// --search at one cost: the budget, the task, and decode-roofline's model and machine flags to price it.
void add_budget_options(CLI::App& sub, BestOfNOptions& o) {
    sub.add_option("--budget-tokens", o.budget_tokens, tr("search: compare strategies at this many generated tokens"));
    sub.add_option("--budget-seconds", o.budget_seconds,
                   tr("search: compare strategies at this decode time, priced by the roofline (needs a model and machine)"));
    sub.add_option("--step-tokens", o.step_tokens, tr("search, with a budget: tokens one step of the task generates"));
    sub.add_option("--mix", o.mix, tr("search, with a budget: a difficulty mix, share:q per class (0.7:0.99,0.3:0.6)"));
    sub.add_option("--call-seconds", o.call_seconds, tr("search, with a budget: seconds per verifier or scorer call (default 0)"));
    sub.add_option("--prompt-len", o.prompt_len, tr("search, with a budget: prompt tokens the trajectories continue (default 0)"));
    sub.add_option("--model", o.price.model, tr("search, with a budget: a shipped config that prices the time"));
    sub.add_option("--config", o.price.config, tr("search, with a budget: a config.json that prices the time"));
    sub.add_option("--weights-bytes", o.price.weights_bytes, tr("search, with a budget: W, weight bytes a step reads"));
    sub.add_option("--params", o.price.params, tr("search, with a budget: weight parameters (FLOPs; W with --weight-dtype)"));
    sub.add_option("--weight-dtype", o.price.weight_dtype, tr("search, with a budget: the weights' precision"));
    sub.add_option("--kv-dtype", o.price.kv_dtype, tr("search, with a budget: the KV cache's precision"));
    sub.add_option("--hw", o.price.hw, tr("search, with a budget: a hardware preset (decode-roofline --list-hw)"));
    sub.add_option("--bandwidth", o.price.bandwidth, tr("search, with a budget: β, sustained memory bandwidth"));
    sub.add_option("--peak-flops", o.price.peak_flops, tr("search, with a budget: π, dense peak FLOP/s"));
}

void add_options(CLI::App& sub, BestOfNOptions& o) {
    sub.add_option("--p", o.p, tr("probability that one candidate is correct"));
    sub.add_option("--n", o.n, tr("candidates: 4, a list 1,2,4,8 or a range 1..16 (default 1)"));
    sub.add_option("--target", o.target, tr("smallest N whose coverage reaches this"));
    sub.add_option("--tpr", o.tpr, tr("verifier: P(accept | correct)"));
    sub.add_option("--fpr", o.fpr, tr("verifier: P(accept | wrong)"));
    sub.add_option("--verifier-accuracy", o.verifier_accuracy, tr("verifier with TPR = a, FPR = 1 − a"));
    sub.add_option("--fallback", o.fallback, tr("when the verifier accepts none: random (default) or abstain (needs a verifier)"));
    sub.add_option("--alternatives", o.alternatives, tr("majority vote: k equally likely wrong answers"));
    sub.add_option("--answer-dist", o.answer_dist, tr("majority vote: answer probabilities, the correct one first (0.4,0.35,0.25)"));
    sub.add_option("--hard-fraction", o.hard_fraction, tr("correlated errors: fraction of problems no sample solves"));
    sub.add_option("--rho", o.rho, tr("correlated errors: p ~ Beta with this intra-problem correlation"));
    sub.add_option("--judge-bias", o.judge_bias, tr("a judge that picks a wrong candidate with this probability when one is present"));
    sub.add_option("--budget", o.budget, tr("total cost: compare strategies at equal cost"));
    sub.add_option("--cost-sample", o.cost_sample, tr("cost of one candidate (default 1)"));
    sub.add_option("--cost-judge", o.cost_judge, tr("cost of one verifier judgement (default 0)"));
    sub.add_option("--simulate", o.simulate, tr("Monte Carlo trials beside the exact values"));
    sub.add_option("--seed", o.seed, tr("seed of the simulation (default 1)"));
    sub.add_flag("--search", o.search, tr("step-wise search with a process scorer instead of independent candidates"));
    sub.add_option("--q", o.q, tr("search: probability that a step continuing a correct branch is correct"));
    sub.add_option("--steps", o.steps, tr("search: task length T, a list or range (default 1..10)"));
    sub.add_option("--branch", o.branch, tr("search: continuations k per live branch (default 4)"));
    sub.add_option("--beam", o.beam, tr("search: branches w kept after each step (default 4)"));
    sub.add_option("--step-tpr", o.step_tpr, tr("search: P(a correct step is judged good)"));
    sub.add_option("--step-fpr", o.step_fpr, tr("search: P(a wrong step is judged good)"));
    sub.add_option("--score-gap", o.score_gap, tr("search: mean score of a correct step above a wrong one (default 1)"));
    sub.add_option("--score-sigma", o.score_sigma, tr("search: noise σ of a step's score"));
    sub.add_flag("--final-check", o.final_check, tr("search: the outcome verifier (--tpr/--fpr) also picks among the final beam"));
    add_budget_options(sub, o);
    add_output_flags(sub, o.out, true);
    add_svg_flag(sub, o.out, tr("coverage and each selection strategy against N (with the --target line)"));
}

// The examples stay as typed; the notes are one paragraph each, wrapped by the help formatter.
std::string footer() {
    return examples_footer(
        {"inferlab best-of-n --p 0.3 --n 4",
         "    → " + tr("coverage 1 − 0.7^4 = 0.7599 (a correct candidate is present, not chosen)"),
         "inferlab best-of-n --p 0.3 --n 1..16 --tpr 0.9 --fpr 0.2 --simulate 100000 --seed 7",
         "inferlab best-of-n --p 0.6 --n 1,3,5,9 --alternatives 3 --judge-bias 0.3",
         "inferlab best-of-n --p 0.3 --n 1..8 --hard-fraction 0.5 --rho 0.3",
         "inferlab best-of-n --p 0.3 --tpr 0.9 --fpr 0.1 --alternatives 3 --budget 16 --cost-sample 1 --cost-judge 1",
         "inferlab best-of-n --p 0.3 --n 1..16 --tpr 0.9 --fpr 0.2 --target 0.95 --svg best-of-n.svg",
         "inferlab best-of-n --search --q 0.8 --branch 4 --beam 4 --step-tpr 0.9 --step-fpr 0.3 --steps 1..12 --tpr 0.9 "
         "--fpr 0.1",
         "inferlab best-of-n --search --q 0.9 --branch 2 --beam 1 --score-gap 1 --score-sigma 0.5 --steps 1..6 "
         "--simulate 20000 --seed 3",
         "inferlab best-of-n --search --q 0.9 --step-tpr 0.9 --step-fpr 0.3 --steps 10 --tpr 0.9 --fpr 0.1 "
         "--alternatives 3 --budget-seconds 30 --step-tokens 64 --model llama-3-8b --hw h100-sxm --prompt-len 512"},
        tr("Tables for --csv --table NAME: rows; hard_fraction (with --hard-fraction); beta (with --rho); budget (with "
           "--budget); simulation (with --simulate); with --search: rows, simulation, budget (with --budget-tokens or "
           "--budget-seconds), flat (with --budget-seconds), classes (with --mix). "
           "--fallback needs a verifier, --cost-sample and --cost-judge need --budget, and --seed needs --simulate.") +
            "\n" + tr("JSON keys: the README's table (every key in every run, null where not computed)."));
}

}  // namespace


void setup_best_of_n(CLI::App& app) {
    auto opt = std::make_shared<BestOfNOptions>();
    CLI::App* sub = app.add_subcommand(
        "best-of-n", tr("Coverage 1−(1−p)^N beside the chance of actually selecting a correct answer"));
    add_options(*sub, *opt);
    sub->footer(footer());
    sub->callback([opt, sub] {
        opt->fallback_given = given(*sub, "--fallback");
        opt->cost_sample_given = given(*sub, "--cost-sample");
        opt->seed_given = given(*sub, "--seed");
        opt->n_given = given(*sub, "--n");
        run(*opt);
    });
}

}  // namespace inferlab::app
