// inferlab best-of-n: coverage is not selection.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "common.hpp"
#include "inferlab/bestofn.hpp"
#include "inferlab/error.hpp"
#include "inferlab/report.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

struct BestOfNOptions {
    std::string p, n, target;
    std::string tpr, fpr, verifier_accuracy, fallback = "random";
    std::string alternatives, answer_dist;
    std::string hard_fraction, rho, judge_bias;
    std::string budget, cost_sample = "1", cost_judge;
    std::string simulate, seed = "1";
    OutputFlags out;
};

// Probabilities in tables: the shortest exact form when short (0.3, 0.7599, 1e-16), else 6 digits.
std::string pr(double v) { return format_short(v, 6); }

// --tpr/--fpr or --verifier-accuracy, with --fallback; none given: no verifier.
std::optional<Verifier> parse_verifier(const BestOfNOptions& o) {
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
    if (ver) ver->fallback_random = o.fallback == "random";
    return ver;
}

// The answer distribution majority vote needs: --answer-dist, or --alternatives k equally likely
// wrong answers; none given: no vote.
std::optional<std::vector<double>> parse_answer_dist(const BestOfNOptions& o, double p) {
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

// The inverse: the smallest N whose coverage reaches --target.
void target_section(const BestOfNOptions& o, double p, Report& r) {
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    double target = parse_probability("--target", o.target);
    if (target >= 1 && p < 1)
        throw InputError("--target", o.target,
                         "cannot be reached with p < 1: coverage 1 − (1 − p)^N stays below 1 for every N");
    auto n = min_n_for_coverage(p, target);
    if (!n) throw InputError("--target", o.target, "cannot be reached with p = 0");
    j["target"] = target;
    j["min_n_for_target"] = *n;
    // The target as typed and the coverage to 10 digits: rounding either could make the line false
    // (a target of 0.9999999 is not "≥ 1").
    h += fmt::format("  Smallest N with coverage ≥ {}: N = {} (coverage {:.10g})\n", o.target, *n, coverage(p, *n));
    if (p >= 1 || target <= 0)
        x += fmt::format("\nInverse: {}, so N = 1\n", p >= 1 ? "p = 1: every candidate is correct" : "target ≤ 0");
    else
        x += fmt::format("\nInverse: N = ceil(ln(1 − target) / ln(1 − p)) = {}\n", *n);
}

// Strategies at equal total cost; majority vote only with its answer distribution.
void budget_section(const BestOfNOptions& o, double p, const std::optional<Verifier>& ver,
                    const std::optional<std::vector<double>>& dist, Report& r) {
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    double budget = parse_positive_real("--budget", o.budget);
    double cs = parse_positive_real("--cost-sample", o.cost_sample);
    double cj = o.cost_judge.empty() ? 0 : parse_real("--cost-judge", o.cost_judge);
    if (cj < 0) throw InputError("--cost-judge", o.cost_judge, "must not be negative");
    if (budget < cs)
        throw InputError("--budget", o.budget, "is smaller than one sample (--cost-sample " + o.cost_sample + ")");
    Verifier v = ver ? *ver : Verifier{};
    // Voting depends on how many wrong answers split the votes: never guess it.
    auto plans = compare_at_budget(p, budget, cs, cj, v, dist ? *dist : std::vector<double>{});
    Table bt{{"strategy", "N", "cost", "P(correct)"}, {}, {false, true, true, true}};
    j["budget"] = {{"budget", budget}, {"cost_sample", cs}, {"cost_judge", cj}, {"plans", nlohmann::json::array()}};
    for (const auto& pl : plans) {
        bt.rows.push_back({pl.strategy, std::to_string(pl.n), format_real(pl.cost, 6), pr(pl.p_correct)});
        j["budget"]["plans"].push_back(
            {{"strategy", pl.strategy}, {"n", pl.n}, {"cost", pl.cost}, {"p_correct", pl.p_correct}, {"capped", pl.capped}});
    }
    h += fmt::format("\nAt equal total cost {} (sample {}, judgement {}){}:\n", format_real(budget, 6), format_real(cs, 6),
                     format_real(cj, 6), ver ? "" : "; verifier assumed perfect (give --tpr/--fpr)");
    h += render_table(bt);
    if (!dist)
        h += "  Majority vote not compared: give --alternatives k or --answer-dist (how many wrong answers split\n"
             "  the votes decides it).\n";
    for (const auto& pl : plans)
        if (pl.capped)
            h += fmt::format("  {}: exact up to N = {}; the budget buys {} samples.\n", pl.strategy, pl.n,
                             group_thousands(static_cast<std::uint64_t>(std::floor(budget / cs))));
    x += "\nFixed budget: N_verifier = floor(budget / (cost_sample + cost_judge)), N_majority = floor(budget / cost_sample).\n";
}

// Monte Carlo beside each exact value that was asked for.
void simulation_section(const BestOfNOptions& o, double p, const std::vector<std::uint64_t>& ns,
                        const std::optional<Verifier>& ver, const std::optional<std::vector<double>>& dist,
                        const std::optional<double>& bias, Report& r) {
    auto& j = r.json;
    std::string& h = r.human;
    std::uint64_t trials = parse_positive_int("--simulate", o.simulate);
    if (trials > 10000000) throw InputError("--simulate", o.simulate, "must be at most 10,000,000 trials");
    std::uint64_t seed = parse_nonnegative_int("--seed", o.seed);
    Verifier v = ver ? *ver : Verifier{};
    // No answer distribution: majority vote is not simulated (nobody asked for it).
    std::vector<double> d = dist ? *dist : std::vector<double>{};
    double bz = bias ? *bias : 0;
    Table st{{"N", "strategy", "exact", "Monte Carlo", "99% interval ±", "agrees"}, {}, {true, false}};
    j["simulation"] = {{"trials", trials}, {"seed", seed}, {"rows", nlohmann::json::array()}};
    bool all_agree = true;
    for (std::uint64_t n : ns) {
        if (n > 200 && dist) throw InputError("--n", std::to_string(n), "majority vote is computed exactly for N ≤ 200");
        SimulationResult s = simulate_best_of_n(p, n, v, d, bz, trials, seed);
        auto add = [&](const char* name, double exact, const Estimate& e, bool show) {
            if (!show) return;
            bool ok = e.contains(exact);
            all_agree = all_agree && ok;
            st.rows.push_back({std::to_string(n), name, pr(exact), pr(e.mean), pr(e.half_width), ok ? "yes" : "NO"});
            j["simulation"]["rows"].push_back({{"n", n}, {"strategy", name}, {"exact", exact}, {"estimate", e.mean},
                                               {"half_width_99", e.half_width}, {"agrees", ok}});
        };
        add("coverage", coverage(p, n), s.coverage, true);
        add("verifier", verifier_selection(p, n, v), s.verifier, ver.has_value());
        if (dist) add("majority", majority_vote(d, n), s.majority, true);
        add("biased judge", biased_judge_selection(p, n, bz), s.biased_judge, bias.has_value());
    }
    j["simulation"]["all_agree"] = all_agree;
    h += fmt::format("\nMonte Carlo ({}, seed {}), beside the exact values:\n", count_noun(trials, "trial"), seed);
    h += render_table(st);
}

// What each strategy asked for assumes, and its closed form (--explain).
void describe_strategies(const BestOfNOptions& o, double p, const std::vector<std::uint64_t>& ns,
                         const std::optional<Verifier>& ver, const std::optional<std::vector<double>>& dist,
                         const std::optional<double>& bias, const std::optional<double>& hard,
                         const std::optional<double>& rho, Report& r) {
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    if (ver) {
        const double q = verifier_accept_rate(p, *ver);
        const double limit = verifier_selection_limit(p, *ver);
        j["verifier"] = {{"tpr", ver->tpr}, {"fpr", ver->fpr}, {"fallback", o.fallback}, {"accept_rate", q},
                         {"limit_large_n", limit}};
        h += fmt::format("  Verifier: TPR {}, FPR {}; picks uniformly among accepted candidates (or the first: same "
                         "probability); none accepted → {}.\n",
                         format_short(ver->tpr), format_short(ver->fpr),
                         o.fallback == "random" ? "pick any candidate" : "abstain");
        if (q > 0)
            h += fmt::format("  As N grows selection tends to p·TPR/q = {}{}\n", pr(limit),
                             p > 0 ? ", while coverage tends to 1." : "; coverage stays 0: no candidate is correct (p = 0).");
        else
            h += fmt::format("  The verifier accepts no candidate (q = p·TPR + (1−p)·FPR = 0), so every N gives the "
                             "fallback: {}.\n",
                             ver->fallback_random ? "a random candidate, correct with probability p = " + pr(limit)
                                                  : "abstain, never correct (0)");
        x += fmt::format("\nVerifier selection: q = p·TPR + (1−p)·FPR = {}·{} + {}·{} = {}\n", format_real(p, 6),
                         format_real(ver->tpr, 6), format_real(1 - p, 6), format_real(ver->fpr, 6), format_real(q, 10));
        x += "  P = (1 − (1−q)^N)·p·TPR/q" + std::string(ver->fallback_random ? " + (1−q)^N·p·(1−TPR)/(1−q)" : "") + "\n";
        for (std::uint64_t n : ns)
            x += fmt::format("  N = {}: P = {}\n", n, format_real(verifier_selection(p, n, *ver), 10));
    }
    if (dist) {
        j["answer_distribution"] = *dist;
        h += fmt::format("  Majority vote over {} answers (correct one at p); ties broken uniformly at random.\n", dist->size());
        x += "\nMajority vote: exact sum over vote counts (c for the correct answer, n_j for wrong answer j) of\n"
             "  N!/(c!·Π n_j!)·p^c·Π q_j^{n_j}, counting a win when c > every n_j and 1/(t+1) when t answers tie at c.\n";
    }
    if (bias) {
        j["judge_bias"] = *bias;
        h += fmt::format("  Biased judge: picks a wrong candidate with probability {} whenever one is present.\n",
                         format_real(*bias, 6));
        x += "\nBiased judge: P = p^N + (1 − bias)·(1 − (1−p)^N − p^N): more candidates make a wrong one present more "
             "often, so P can fall as N grows.\n";
        for (std::size_t i = 1; i < ns.size(); ++i)
            if (biased_judge_selection(p, ns[i], *bias) < biased_judge_selection(p, ns[i - 1], *bias)) {
                h += fmt::format("  More candidates lower the biased judge's accuracy: N = {} → {} gives {} → {}.\n",
                                 ns[i - 1], ns[i], pr(biased_judge_selection(p, ns[i - 1], *bias)),
                                 pr(biased_judge_selection(p, ns[i], *bias)));
                break;
            }
    }
    if (hard) {
        j["hard_fraction"] = *hard;
        h += fmt::format("  Correlated errors: {} of problems are hard for every sample (p = 0 there, {} elsewhere); same mean p,\n"
                         "  coverage below the independent formula.\n",
                         format_real(*hard, 6), format_real(p / (1 - *hard), 6));
        x += "\nHard fraction h: coverage = (1 − h)·(1 − (1 − p/(1−h))^N) ≤ 1 − (1 − p)^N.\n";
    }
    if (rho) {
        j["rho"] = *rho;
        h += fmt::format("  Beta spread of p across problems (correlation ρ = {} between samples of a problem).\n", format_real(*rho, 6));
        x += "\nBeta spread: p ~ Beta(a, b), a = p(1−ρ)/ρ, b = (1−p)(1−ρ)/ρ; coverage = 1 − Π_{i<N} (b+i)/(a+b+i).\n";
    }
}

void run(const BestOfNOptions& o, const CLI::App& sub) {
    if (o.p.empty()) throw InputError("--p is required: the probability that one candidate is correct (e.g. 0.3)");
    const double p = parse_probability("--p", o.p);
    std::vector<std::uint64_t> ns = parse_int_list_or_range("--n", o.n.empty() ? "1" : o.n, 1024);
    if (given(sub, "--n") && o.n.empty()) throw InputError("--n", "", "is an empty list");

    const std::optional<Verifier> ver = parse_verifier(o);
    const std::optional<std::vector<double>> dist = parse_answer_dist(o, p);
    std::optional<double> hard, rho, bias;
    if (!o.hard_fraction.empty()) {
        hard = parse_probability("--hard-fraction", o.hard_fraction);
        if (*hard >= 1 || p > 1 - *hard)
            throw InputError("--hard-fraction", o.hard_fraction,
                             fmt::format("must leave room for mean p: need p ≤ 1 − h (p = {})", p));
    }
    if (!o.rho.empty()) {
        rho = parse_probability("--rho", o.rho);
        if (*rho >= 1) throw InputError("--rho", o.rho, "must be below 1 (1 means every sample of a problem is the same)");
    }
    if (!o.judge_bias.empty()) bias = parse_probability("--judge-bias", o.judge_bias);

    Report r;
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    j["p"] = p;
    Table t{{"N", "coverage P≥1"}, {}, {}};
    if (ver) t.columns.push_back("verifier picks correct");
    if (dist) t.columns.push_back("majority vote correct");
    if (bias) t.columns.push_back("biased judge correct");
    if (hard) t.columns.push_back("coverage, hard fraction");
    if (rho) t.columns.push_back("coverage, beta spread");
    j["rows"] = nlohmann::json::array();
    std::vector<double> cov_series, sel_series;
    for (std::uint64_t n : ns) {
        nlohmann::json row = {{"n", n}, {"coverage", coverage(p, n)}};
        std::vector<std::string> cells = {std::to_string(n), pr(coverage(p, n))};
        cov_series.push_back(coverage(p, n));
        if (ver) {
            double v = verifier_selection(p, n, *ver);
            row["verifier_selection"] = v;
            cells.push_back(pr(v));
            sel_series.push_back(v);
        }
        if (dist) {
            double v = majority_vote(*dist, n);
            row["majority_vote"] = v;
            cells.push_back(pr(v));
            if (!ver) sel_series.push_back(v);
        }
        if (bias) {
            double v = biased_judge_selection(p, n, *bias);
            row["biased_judge"] = v;
            cells.push_back(pr(v));
            if (!ver && !dist) sel_series.push_back(v);
        }
        if (hard) {
            double v = coverage_hard_fraction(p, *hard, n);
            row["coverage_hard_fraction"] = v;
            cells.push_back(pr(v));
        }
        if (rho) {
            double v = coverage_beta(p, *rho, n);
            row["coverage_beta"] = v;
            cells.push_back(pr(v));
        }
        j["rows"].push_back(row);
        t.rows.push_back(cells);
    }
    if (ns.size() == 1) {
        for (auto it = j["rows"][0].begin(); it != j["rows"][0].end(); ++it) j[it.key()] = it.value();
    }
    r.add_table("rows", t);

    h += fmt::format("Best-of-N with p = {} per candidate (first document §3.2)\n", format_real(p, 6));
    h += render_table(t);
    h += "  Coverage P≥1 = 1 − (1 − p)^N is the chance the candidates contain a correct answer,\n"
         "  not the chance the system answers correctly: that needs a selection step.\n";
    x += "Coverage (first document §3.2): P≥1 = 1 − (1 − p)^N\n";
    for (std::uint64_t n : ns) {
        const std::string none = format_short(1 - coverage(p, n), 10);
        if (none == "1" && coverage(p, n) > 0)  // 1 − p rounds to 1: only the log form keeps the digits
            x += fmt::format("  N = {}: 1 − (1 − {})^{} = −expm1({}·log1p(−{})) = {}\n", n, format_short(p, 10), n, n,
                             format_short(p, 10), format_short(coverage(p, n), 10));
        else
            x += fmt::format("  N = {}: 1 − (1 − {})^{} = 1 − {}^{} = 1 − {} = {}\n", n, format_short(p, 10), n,
                             format_short(1 - p, 10), n, none, format_short(coverage(p, n), 10));
    }
    x += "  This is the probability that a correct candidate is present, not that it is chosen.\n";
    describe_strategies(o, p, ns, ver, dist, bias, hard, rho, r);

    if (!o.target.empty()) target_section(o, p, r);

    if (!o.budget.empty()) budget_section(o, p, ver, dist, r);

    if (!o.simulate.empty()) simulation_section(o, p, ns, ver, dist, bias, r);

    if (ns.size() >= 3) {
        std::vector<std::string> labels;
        for (auto n : ns) labels.push_back("N=" + std::to_string(n));
        std::vector<ChartSeries> series = {{"coverage", cov_series}};
        if (!sel_series.empty())
            series.push_back({ver ? "verifier selection" : (dist ? "majority vote" : "biased judge"), sel_series});
        h += "\n" + render_bar_chart(labels, series, 50);
    }
    emit(r, o.out);
}

}  // namespace

void setup_best_of_n(CLI::App& app) {
    auto opt = std::make_shared<BestOfNOptions>();
    CLI::App* sub = app.add_subcommand("best-of-n", "Coverage 1−(1−p)^N beside the chance of actually selecting a correct answer");
    sub->add_option("--p", opt->p, "probability that one candidate is correct");
    sub->add_option("--n", opt->n, "candidates: 4, a list 1,2,4,8 or a range 1..16 (default 1)");
    sub->add_option("--target", opt->target, "smallest N whose coverage reaches this");
    sub->add_option("--tpr", opt->tpr, "verifier: P(accept | correct)");
    sub->add_option("--fpr", opt->fpr, "verifier: P(accept | wrong)");
    sub->add_option("--verifier-accuracy", opt->verifier_accuracy, "verifier with TPR = a, FPR = 1 − a");
    sub->add_option("--fallback", opt->fallback, "when the verifier accepts none: random (default) or abstain");
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
    sub->footer(examples_footer(
        {"inferlab best-of-n --p 0.3 --n 4", "    → coverage 1 − 0.7^4 = 0.7599 (a correct candidate is present, not chosen)",
         "inferlab best-of-n --p 0.3 --n 1..16 --tpr 0.9 --fpr 0.2 --simulate 100000 --seed 7",
         "inferlab best-of-n --p 0.6 --n 1,3,5,9 --alternatives 3 --judge-bias 0.3",
         "inferlab best-of-n --p 0.3 --n 1..8 --hard-fraction 0.5 --rho 0.3",
         "inferlab best-of-n --p 0.3 --tpr 0.9 --fpr 0.1 --alternatives 3 --budget 16 --cost-sample 1 --cost-judge 1"},
        "JSON keys: p, rows[]{n, coverage, verifier_selection, majority_vote, biased_judge, coverage_hard_fraction,\n"
        "coverage_beta} (with one N also at the top level), verifier{...}, target, min_n_for_target,\n"
        "budget{plans[]{strategy, n, cost, p_correct, capped}}, simulation{trials, seed, rows[]{n, strategy, exact, estimate,\n"
        "half_width_99, agrees}, all_agree}."));
    sub->callback([opt, sub] { run(*opt, *sub); });
}

}  // namespace inferlab::app
