// inferlab best-of-n: coverage is not selection. This file parses the flags into a
// BestOfNRequest, calls best_of_n once, and prints the result (text, --json, --csv, --explain:
// the printers sit together below).
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "best_of_n.hpp"
#include "common.hpp"
#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/plots.hpp"
#include "inferlab/text/table.hpp"

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

// A flag whose only job is to tune a section that was not asked for would be silently ignored.
void refuse_without_effect(const BestOfNFlags& o) {
    if (o.budget.empty() && (o.cost_sample_given || !o.cost_judge.empty()))
        throw InputError(N_("{0} has no effect without --budget: costs only price the strategies compared at equal cost"),
                         {o.cost_sample_given ? "--cost-sample" : "--cost-judge"});
    if (o.simulate.empty() && o.seed_given)
        throw InputError(N_("--seed has no effect without --simulate: only the Monte Carlo draws random numbers"));
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
    if (!o.simulate.empty()) {
        const std::uint64_t trials = parse_positive_int("--simulate", o.simulate);
        if (trials > kMaxSimulationTrials)
            throw InputError("--simulate", o.simulate, N_("must be at most {0} trials"), {group_thousands(kMaxSimulationTrials)});
        rq.simulation = BestOfNRequest::Simulation{trials, parse_nonnegative_int("--seed", o.seed)};
    }
}

BestOfNRequest parse_request(const BestOfNFlags& o) {
    if (o.p.empty()) throw InputError(N_("--p is required: the probability that one candidate is correct (e.g. 0.3)"));
    refuse_without_effect(o);
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

// The tables are built in English (--csv prints them so in every language); the text shows them
// through in_words().
Table rows_table(const BestOfNRequest& rq, const BestOfNResult& res) {
    Table t{{"N", N_("coverage P≥1")}, {}, {}};
    if (rq.verifier) t.columns.push_back(N_("verifier picks correct"));
    if (rq.answer_dist) t.columns.push_back(N_("majority vote correct"));
    if (rq.judge_bias) t.columns.push_back(N_("biased judge correct"));
    if (rq.hard_fraction) t.columns.push_back(N_("coverage, hard fraction"));
    if (rq.rho) t.columns.push_back(N_("coverage, beta spread"));
    for (const auto& r : res.rows) {
        std::vector<std::string> cells = {std::to_string(r.n), pr(r.coverage)};
        for (const auto* v : {&r.verifier_selection, &r.majority_vote, &r.biased_judge, &r.coverage_hard_fraction,
                              &r.coverage_beta})
            if (*v) cells.push_back(pr(**v));
        t.rows.push_back(cells);
    }
    return t;
}

// Strategy names are the library's msgids (BudgetPlan::strategy, SimulationRow::strategy).
Table budget_table(const BudgetAnswer& b) {
    Table t{{N_("strategy"), "N", N_("cost"), N_("P(correct)")}, {}, {false, true, true, true}};
    for (const auto& pl : b.plans)
        t.rows.push_back({pl.strategy, std::to_string(pl.n), format_real(pl.cost, 6), pr(pl.p_correct)});
    return t;
}

Table simulation_table(const SimulationAnswer& s) {
    Table t{{"N", N_("strategy"), N_("exact"), N_("Monte Carlo"), N_("99% interval ±"),
             N_("agrees")},
            {},
            {true, false}};
    for (const auto& r : s.rows)
        t.rows.push_back({std::to_string(r.n), r.strategy, pr(r.exact), pr(r.estimate.mean),
                          pr(r.estimate.half_width), r.agrees ? N_("yes") : N_("NO")});
    return t;
}

// One note under the table, wrapped with the notes' indent.
std::string note(const std::string& text) { return wrap(text, "  ", "  "); }

std::string verifier_text(const BestOfNOptions& o, const BestOfNRequest& rq, const VerifierFacts& v) {
    std::string h = note(trf(N_("Verifier: TPR {0}, FPR {1}; picks uniformly among accepted candidates (or the first: "
                                "same probability); none accepted → {2}."),
                             format_short(rq.verifier->tpr), format_short(rq.verifier->fpr),
                             o.fallback == "random" ? tr(N_("pick any candidate")) : tr(N_("abstain"))));
    if (v.accept_rate > 0)
        return h + note(rq.p > 0 ? trf(N_("As N grows selection tends to p·TPR/q = {0}, while coverage tends to 1."),
                                       pr(v.limit_large_n))
                                 : trf(N_("As N grows selection tends to p·TPR/q = {0}; coverage stays 0: no candidate is "
                                          "correct (p = 0)."),
                                       pr(v.limit_large_n)));
    return h + note(rq.verifier->fallback_random
                        ? trf(N_("The verifier accepts no candidate (q = p·TPR + (1−p)·FPR = 0), so every N gives the "
                                 "fallback: a random candidate, correct with probability p = {0}."),
                              pr(v.limit_large_n))
                        : tr(N_("The verifier accepts no candidate (q = p·TPR + (1−p)·FPR = 0), so every N gives the "
                                "fallback: abstain, never correct (0).")));
}

// What each strategy asked for assumes (text).
std::string strategies_text(const BestOfNOptions& o, const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string h;
    if (res.verifier) h += verifier_text(o, rq, *res.verifier);
    if (rq.answer_dist)
        h += note(trf(N_("Majority vote over {0} answers (correct one at p); ties broken uniformly at random."),
                      rq.answer_dist->size()));
    if (rq.judge_bias)
        h += note(trf(N_("Biased judge: picks a wrong candidate with probability {0} whenever one is present."),
                      format_real(*rq.judge_bias, 6)));
    if (const auto& d = res.biased_judge_drop)
        h += note(trf(N_("More candidates lower the biased judge's accuracy: N = {0} → {1} gives {2} → {3}."), d->from_n,
                      d->to_n, pr(d->from_p), pr(d->to_p)));
    if (res.p_on_solvable)
        h += note(trf(N_("Correlated errors: {0} of problems are hard for every sample (p = 0 there, {1} elsewhere); "
                         "same mean p, coverage below the independent formula."),
                      format_real(*rq.hard_fraction, 6), format_real(*res.p_on_solvable, 6)));
    if (rq.rho)
        h += note(trf(N_("Beta spread of p across problems (correlation ρ = {0} between samples of a problem)."),
                      format_real(*rq.rho, 6)));
    return h;
}

std::string budget_text(const BestOfNRequest& rq, const BudgetAnswer& b) {
    const std::string cost = format_real(b.costs.budget, 6), sample = format_real(b.costs.cost_sample, 6),
                      judge = format_real(b.costs.cost_judge, 6);
    std::string h = "\n" + wrap(rq.verifier ? trf(N_("At equal total cost {0} (sample {1}, judgement {2}):"), cost, sample, judge)
                                            : trf(N_("At equal total cost {0} (sample {1}, judgement {2}); verifier assumed "
                                                     "perfect (give --tpr/--fpr):"),
                                                  cost, sample, judge));
    h += render_table(in_words(budget_table(b)));
    if (!rq.answer_dist)
        h += note(tr(N_("Majority vote not compared: give --alternatives k or --answer-dist (how many wrong answers "
                        "split the votes decides it).")));
    for (const auto& pl : b.plans)
        if (pl.capped)
            h += note(trf(N_("{0}: exact up to N = {1}; the budget buys {2} samples."), tr(pl.strategy), pl.n,
                          group_thousands(b.samples_bought)));
    return h;
}

std::string simulation_text(const SimulationAnswer& s) {
    const std::string head = s.trials == 1 ? trf(N_("Monte Carlo (1 trial, seed {0}), beside the exact values:"), s.seed)
                                           : trf(N_("Monte Carlo ({0} trials, seed {1}), beside the exact values:"),
                                                 group_thousands(s.trials), s.seed);
    return "\n" + wrap(head) + render_table(in_words(simulation_table(s)));
}

std::string chart(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::vector<std::string> labels;
    ChartSeries cov{tr(N_("coverage")), {}};
    // The selection drawn beside coverage: the verifier, else the vote, else the biased judge.
    ChartSeries sel{tr(rq.verifier ? N_("verifier selection") : (rq.answer_dist ? N_("majority vote") : N_("biased judge"))),
                    {}};
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
    const std::string p = format_short(res.p, 10);
    std::string x = tr(N_("Coverage (first document §3.2): P≥1 = 1 − (1 − p)^N")) + "\n";
    for (const auto& r : res.rows) {
        const std::string none = format_short(r.none_correct, 10);
        if (none == "1" && r.coverage > 0)  // 1 − p rounds to 1: only the log form keeps the digits
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = −expm1({}·log1p(−{})) = {}", r.n, p, r.n, r.n, p,
                                  format_short(r.coverage, 10)), "  ", "    ");
        else
            x += wrap(fmt::format("N = {}: 1 − (1 − {})^{} = 1 − {}^{} = 1 − {} = {}", r.n, p, r.n,
                                  format_short(res.p_wrong, 10), r.n, none, format_short(r.coverage, 10)), "  ", "    ");
    }
    return x + note(tr(N_("This is the probability that a correct candidate is present, not that it is chosen.")));
}

std::string verifier_explain(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string x = "\n" + wrap(trf(N_("Verifier selection: q = p·TPR + (1−p)·FPR = {0}·{1} + {2}·{3} = {4}"),
                                    format_real(rq.p, 6), format_real(rq.verifier->tpr, 6), format_real(res.p_wrong, 6),
                                    format_real(rq.verifier->fpr, 6), format_real(res.verifier->accept_rate, 10)));
    x += wrap("P = (1 − (1−q)^N)·p·TPR/q" + std::string(rq.verifier->fallback_random ? " + (1−q)^N·p·(1−TPR)/(1−q)" : ""),
              "  ", "      ");
    for (const auto& r : res.rows) x += fmt::format("  N = {}: P = {}\n", r.n, format_real(*r.verifier_selection, 10));
    return x;
}

// The formulas' prose is tr(), not trf(): they write braces ("q_j^{n_j}") that are not placeholders.
std::string strategies_explain(const BestOfNRequest& rq, const BestOfNResult& res) {
    std::string x = res.verifier ? verifier_explain(rq, res) : "";
    if (rq.answer_dist)
        x += "\n" + wrap(tr(N_("Majority vote: exact sum over vote counts (c for the correct answer, n_j for wrong answer j) "
                               "of N!/(c!·Π n_j!)·p^c·Π q_j^{n_j}, counting a win when c > every n_j and 1/(t+1) when t "
                               "answers tie at c.")));
    if (rq.judge_bias)
        x += "\n" + wrap(tr(N_("Biased judge: P = p^N + (1 − bias)·(1 − (1−p)^N − p^N): more candidates make a wrong one "
                               "present more often, so P can fall as N grows.")));
    if (rq.hard_fraction)
        x += "\n" + wrap(tr(N_("Hard fraction h: coverage = (1 − h)·(1 − (1 − p/(1−h))^N) ≤ 1 − (1 − p)^N.")));
    if (rq.rho)
        x += "\n" + wrap(tr(N_("Beta spread: p ~ Beta(a, b), a = p(1−ρ)/ρ, b = (1−p)(1−ρ)/ρ; coverage = 1 − Π_{i<N} "
                               "(b+i)/(a+b+i).")));
    return x;
}

std::string target_text(const BestOfNOptions& o, const TargetAnswer& t) {
    // The target as typed and the coverage to 10 digits: rounding either could make the line false
    // (a target of 0.9999999 is not "≥ 1").
    return note(trf(N_("Smallest N with coverage ≥ {0}: N = {1} (coverage {2})"), o.target, *t.min_n,
                    fmt::format("{:.10g}", t.coverage_at_min_n)));
}

std::string target_explain(const BestOfNRequest& rq, const TargetAnswer& t) {
    if (rq.p >= 1) return "\n" + tr(N_("Inverse: p = 1: every candidate is correct, so N = 1")) + "\n";
    if (t.target <= 0) return "\n" + tr(N_("Inverse: target ≤ 0, so N = 1")) + "\n";
    return "\n" + trf(N_("Inverse: N = ceil(ln(1 − target) / ln(1 − p)) = {0}"), *t.min_n) + "\n";
}

// The text and --explain: the rows with their notes, then each section asked for.
void add_sections(const BestOfNOptions& o, const BestOfNRequest& rq, const BestOfNResult& res, Report& r) {
    if (res.target) {
        r.human += target_text(o, *res.target);
        r.explain += target_explain(rq, *res.target);
    }
    if (res.budget) {
        r.add_table("budget", budget_table(*res.budget));
        r.human += budget_text(rq, *res.budget);
        r.explain += "\n" + wrap(tr(N_("Fixed budget: N_verifier = floor(budget / (cost_sample + cost_judge)), "
                                       "N_majority = floor(budget / cost_sample).")));
    }
    if (res.simulation) {
        r.add_table("simulation", simulation_table(*res.simulation));
        r.human += simulation_text(*res.simulation);
    }
}

void run(const BestOfNOptions& o) {
    const BestOfNRequest rq = parse_request(o);
    const BestOfNResult res = compute(o, rq);
    Report r;
    r.json = result_json(o, rq, res);
    r.add_table("rows", rows_table(rq, res));
    r.human = wrap(trf(N_("Best-of-N with p = {0} per candidate (first document §3.2)"), format_real(res.p, 6))) +
              render_table(in_words(rows_table(rq, res))) +
              note(tr(N_("Coverage P≥1 = 1 − (1 − p)^N is the chance the candidates contain a correct answer, not the "
                         "chance the system answers correctly: that needs a selection step."))) +
              strategies_text(o, rq, res);
    r.explain = coverage_explain(res) + strategies_explain(rq, res);
    add_sections(o, rq, res, r);
    if (res.rows.size() >= 3) r.human += chart(rq, res);
    if (!o.out.svg.empty()) r.svg = plots::best_of_n_svg(rq, res);
    emit(r, o.out);
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
         "inferlab best-of-n --p 0.3 --n 1..16 --tpr 0.9 --fpr 0.2 --target 0.95 --svg best-of-n.svg"},
        tr("Tables for --csv --table NAME: rows; budget (with --budget); simulation (with --simulate). "
           "--fallback needs a verifier, --cost-sample and --cost-judge need --budget, and --seed needs --simulate.") +
            "\n" + tr("JSON keys: the README's table (every key in every run, null where not computed)."));
}

}  // namespace

BestOfNRequest parse_best_of_n(const BestOfNFlags& f) { return parse_request(f); }
BestOfNResult compute_best_of_n(const BestOfNFlags& f, const BestOfNRequest& rq) { return compute(f, rq); }

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
