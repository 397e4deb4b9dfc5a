// inferlab spec-accept: speculative sampling, exactly, and why it is exact.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "common.hpp"
#include "options.hpp"
#include "spec_accept_print.hpp"
#include "inferlab/answer/spec_accept.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/rational.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/data/readers.hpp"

namespace inferlab::app {
namespace {

struct SpecOptions {
    std::string p, q, p_file, q_file, p_logits, q_logits;
    std::string temperature = "1", top_k = "0", top_p = "1";
    bool exact = false, floating = false, normalize = false;
    std::string alpha, gamma, cost_ratio, max_gamma = "8", outcomes;
    std::string simulate, seed = "1", threshold = "0.3";
    OutputFlags out;
};

// A vocabulary's worth of probabilities, with room: Llama 3's vocabulary is 128,256 tokens.
constexpr std::size_t kMaxFileValues = 1'000'000;

// One distribution as text items, from a list or a file.
std::vector<std::string> items_of(const std::string& flag, const std::string& list, const std::string& file_flag,
                                  const std::string& file) {
    if (!list.empty() && !file.empty()) throw InputError(N_("{0} and {1} both given: choose one"), {flag, file_flag});
    if (!file.empty()) return read_number_items(file_flag, file, kMaxFileValues);
    return split_list(flag, list);
}

// A flag that changes nothing in this command line is refused, naming the flags it needs.
// `rule` is a msgid whose {0} is the flag.
void require(const CLI::App& sub, const std::string& flag, bool effective, const std::string& rule) {
    if (given(sub, flag) && !effective) throw InputError(rule, {flag});
}

void check_effects(const CLI::App& sub, const SpecOptions& o) {
    const bool logits = !o.p_logits.empty() || !o.q_logits.empty();
    const bool pq = !o.p.empty() || !o.q.empty() || !o.p_file.empty() || !o.q_file.empty();
    for (const char* f : {"--temperature", "--top-k", "--top-p"})
        require(sub, f, logits,
                pq ? N_("{0} has no effect with --p/--q: they are probabilities already (it applies to "
                        "--p-logits/--q-logits)")
                   : N_("{0} has no effect without --p-logits/--q-logits"));
    if (o.exact && logits) throw InputError(N_("--exact needs decimal probabilities, not logits"));
    for (const char* f : {"--normalize", "--float"})
        require(sub, f, pq, logits ? N_("{0} has no effect with --p-logits/--q-logits (their softmax is a distribution)")
                                   : N_("{0} has no effect without --p/--q"));
    require(sub, "--exact", pq, N_("{0} has no effect without --p/--q"));
    require(sub, "--cost-ratio", !o.gamma.empty() && (!o.alpha.empty() || pq || logits),
            N_("{0} needs --gamma and an acceptance rate (--alpha, or --p/--q)"));
    require(sub, "--max-gamma", !o.cost_ratio.empty() || (!o.out.svg.empty() && !o.gamma.empty()),
            N_("{0} has no effect without --cost-ratio (the γ table needs it) or --gamma with --svg (the figure's sweep)"));
    for (const char* f : {"--seed", "--threshold"})
        require(sub, f, !o.simulate.empty(), N_("{0} has no effect without --simulate"));
}

std::vector<double> reals(const std::string& flag, const std::vector<std::string>& items) {
    std::vector<double> v;
    for (const auto& s : items) v.push_back(parse_real(flag, s));
    return v;
}

void logits_inputs(const SpecOptions& o, SpecAcceptInputs& in) {
    if (o.p_logits.empty() || o.q_logits.empty()) throw InputError(N_("give both --p-logits and --q-logits"));
    if (!o.p.empty() || !o.q.empty()) throw InputError(N_("give distributions (--p/--q) or logits, not both"));
    in.source = PositionSource::Logits;
    in.where.p = "--p-logits";
    in.where.q = "--q-logits";
    in.temperature = parse_temperature(o.temperature);
    in.top_p = parse_top_p(o.top_p);
    in.p = reals("--p-logits", split_list("--p-logits", o.p_logits));
    in.q = reals("--q-logits", split_list("--q-logits", o.q_logits));
    in.top_k = parse_top_k_within(o.top_k, in.p.size());
}

// Short decimals are read as the fractions they name (3/4, not 0.7499999999999999) unless --float.
void distribution_inputs(const SpecOptions& o, SpecAcceptInputs& in) {
    if (o.exact && o.floating) throw InputError(N_("{0} and {1} both given: choose one"), {"--exact", "--float"});
    const auto pi = items_of("--p", o.p, "--p-file", o.p_file);
    const auto qi = items_of("--q", o.q, "--q-file", o.q_file);
    const bool short_dec = std::all_of(pi.begin(), pi.end(), [](auto& s) { return is_short_decimal(s); }) &&
                           std::all_of(qi.begin(), qi.end(), [](auto& s) { return is_short_decimal(s); });
    if (o.exact && !short_dec) throw InputError(N_("--exact needs decimal inputs of at most 9 digits after the point"));
    in.where.p = o.p_file.empty() ? "--p" : "--p-file";
    in.where.q = o.q_file.empty() ? "--q" : "--q-file";
    in.where.normalize = "--normalize";
    in.normalize = o.normalize;
    if (!o.floating && short_dec) {
        in.source = PositionSource::Exact;
        for (const auto& s : pi) in.p_exact.push_back(parse_rational("--p", s));
        for (const auto& s : qi) in.q_exact.push_back(parse_rational("--q", s));
    } else {
        in.source = PositionSource::Float;
        in.p = reals("--p", pi);
        in.q = reals("--q", qi);
    }
}

void round_inputs(const SpecOptions& o, SpecAcceptInputs& in) {
    const bool alpha_from_pq = in.source != PositionSource::None;
    if (o.gamma.empty()) {
        if (!o.alpha.empty()) throw InputError(N_("--alpha needs --gamma (draft length)"));
        if (!o.outcomes.empty()) throw InputError(N_("--outcomes needs --gamma (the number of drafts)"));
        return;
    }
    in.gamma = parse_positive_int_at_most("--gamma", o.gamma, 64, "");
    in.max_gamma = parse_positive_int_at_most("--max-gamma", o.max_gamma, kMaxSweepGamma, "");
    if (!o.cost_ratio.empty()) in.cost_ratio = parse_positive_real("--cost-ratio", o.cost_ratio);
    if (!o.outcomes.empty()) in.outcomes = split_list("--outcomes", o.outcomes);
    if (!o.alpha.empty()) {
        if (alpha_from_pq) throw InputError(N_("--alpha and --p/--q both given: α comes from Σ min(p, q)"));
        in.alpha = parse_probability("--alpha", o.alpha);
    } else if (!alpha_from_pq && o.outcomes.empty()) {
        throw InputError(N_("--gamma needs --alpha, --p/--q or --outcomes"));
    }
}

SpecAcceptInputs inputs(const SpecOptions& o) {
    SpecAcceptInputs in;
    in.where.outcomes = "--outcomes";
    in.where.gamma = "--gamma";
    in.where.samples = "--simulate";
    if (!o.p_logits.empty() || !o.q_logits.empty()) logits_inputs(o, in);
    else if (!o.p.empty() || !o.q.empty() || !o.p_file.empty() || !o.q_file.empty()) distribution_inputs(o, in);
    round_inputs(o, in);
    if (!o.simulate.empty()) {
        if (in.source == PositionSource::None) throw InputError(N_("--simulate needs --p and --q (or logits)"));
        in.samples = parse_count_at_most("--simulate", o.simulate, 100000000, N_("must be at most {0} samples"));
        in.seed = parse_nonnegative_int("--seed", o.seed);
        in.threshold = parse_probability("--threshold", o.threshold);
    }
    if (in.source == PositionSource::None && !in.gamma)
        throw InputError(N_("nothing to compute: give --p and --q, --alpha with --gamma, or --gamma with --outcomes"));
    return in;
}

void run(const SpecOptions& o, const CLI::App& sub) {
    check_effects(sub, o);
    emit(spec_accept_report(spec_accept(inputs(o)), !o.out.svg.empty()), o.out);
}

}  // namespace

void setup_spec_accept(CLI::App& app) {
    auto opt = std::make_shared<SpecOptions>();
    CLI::App* sub = app.add_subcommand(
        "spec-accept", tr("Speculative sampling: acceptance, residual, a draft round, speedup, and proof by simulation"));
    sub->add_option("--p", opt->p, tr("target distribution: 0.6,0.3,0.1"));
    sub->add_option("--q", opt->q, tr("draft distribution over the same vocabulary"));
    sub->add_option("--p-file", opt->p_file, tr("target distribution from a file (numbers separated by commas or lines)"));
    sub->add_option("--q-file", opt->q_file, tr("draft distribution from a file"));
    sub->add_option("--p-logits", opt->p_logits, tr("target logits (softmax at --temperature, then --top-k/--top-p)"));
    sub->add_option("--q-logits", opt->q_logits, tr("draft logits"));
    sub->add_option("--temperature", opt->temperature, tr("temperature for logits (default 1, 0 = greedy: all mass on the argmax)"))
        ->check(rule(parse_temperature));
    sub->add_option("--top-k", opt->top_k, tr("keep the k most likely tokens (0: off)"))
        ->check(rule(parse_top_k));
    sub->add_option("--top-p", opt->top_p, tr("keep the smallest set with this mass (1: off)"))
        ->check(rule(parse_top_p));
    sub->add_flag("--exact", opt->exact, tr("exact fractions (the default when every input is a short decimal)"));
    sub->add_flag("--float", opt->floating, tr("floating point even for decimal inputs"));
    sub->add_flag("--normalize", opt->normalize, tr("divide each distribution by its sum instead of requiring 1 (within 1e-9)"));
    sub->add_option("--alpha", opt->alpha, tr("acceptance rate α per position, for a round"));
    sub->add_option("--gamma", opt->gamma, tr("γ, drafts per round"));
    sub->add_option("--cost-ratio", opt->cost_ratio, tr("c, draft cost / target cost: speedup and the best γ"));
    sub->add_option("--max-gamma", opt->max_gamma, tr("largest γ in the table (default 8)"));
    sub->add_option("--outcomes", opt->outcomes, tr("a scripted round: accept,accept,reject"));
    sub->add_option("--simulate", opt->simulate, tr("samples of the real algorithm, beside the threshold shortcut"));
    sub->add_option("--seed", opt->seed, tr("seed of the simulation (default 1)"));
    sub->add_option("--threshold", opt->threshold, tr("the shortcut keeps any draft with q(x) ≥ this (default 0.3)"));
    add_output_flags(*sub, opt->out, true);
    add_svg_flag(*sub, opt->out, tr("E[tokens] and speedup against γ (with --gamma), else p, q, min(p, q) and the residual"));
    // Each note is one paragraph (the help formatter wraps it to the page); the example lines stay
    // as typed, their remarks in the reader's language.
    sub->footer(examples_footer(
        {"inferlab spec-accept --p 0.6,0.3,0.1 --q 0.4,0.4,0.2",
         "    " + tr("→ α = [1, 3/4, 1/2]; accepted q·α = [2/5, 3/10, 1/10], total 4/5"),
         "    " + tr("→ residual r = [1, 0, 0]; output = p"),
         "inferlab spec-accept --gamma 4 --outcomes accept,accept,reject   " + tr("(3 tokens advanced from 4 drafts)"),
         "inferlab spec-accept --alpha 0.8 --gamma 4 --cost-ratio 0.1",
         "inferlab spec-accept --alpha 0.8 --gamma 4 --cost-ratio 0.1 --svg gamma.svg   " + tr("(the sweep drawn)"),
         "inferlab spec-accept --p 0.6,0.3,0.1 --q 0.4,0.4,0.2 --simulate 1000000 --seed 1"},
        tr("CSV tables (--csv --table NAME): tokens, round, gamma, simulation; a plain --csv prints the simulation, "
           "else the γ sweep, else the round, else the token table.") +
            "\n" + tr("JSON keys: the README's table (every key present, null where not computed).")));
    sub->callback([opt, sub] { run(*opt, *sub); });
}

}  // namespace inferlab::app
