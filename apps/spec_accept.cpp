// inferlab spec-accept: speculative sampling, exactly, and why it is exact.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "common.hpp"
#include "options.hpp"
#include "inferlab/error.hpp"
#include "inferlab/files.hpp"
#include "inferlab/rational.hpp"
#include "inferlab/spec.hpp"
#include "inferlab/stats.hpp"
#include "inferlab/units.hpp"

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

constexpr double kSumTolerance = 1e-9;

std::string read_list_file(const std::string& flag, const std::string& path) {
    std::ifstream in = open_input_file(path);
    std::string text, line;
    while (std::getline(in, line)) {
        for (char& c : line)
            if (c == '\n' || c == '\r' || c == ' ' || c == '\t') c = ',';
        std::stringstream ss(line);
        std::string item;
        while (std::getline(ss, item, ','))
            if (!item.empty()) text += (text.empty() ? "" : ",") + item;
    }
    if (text.empty()) throw InputError(flag, path, "holds no numbers");
    return text;
}

// One distribution as text items, from a list or a file.
std::vector<std::string> items_of(const std::string& flag, const std::string& list, const std::string& file_flag,
                                  const std::string& file) {
    if (!list.empty() && !file.empty()) throw InputError(flag + " and " + file_flag + " both given: choose one");
    if (!file.empty()) return split_list(file_flag, read_list_file(file_flag, file));
    return split_list(flag, list);
}

template <typename T>
T sum_of(const std::vector<T>& v) {
    T s(0);
    for (const auto& x : v) s += x;
    return s;
}

template <typename T>
std::vector<T> validated(const std::string& flag, std::vector<T> v, bool normalize) {
    if (v.empty()) throw InputError(flag, "", "is an empty list");
    for (const auto& x : v)
        if (x < T(0)) throw InputError(flag, fmt::format("{}", to_double(x)), "entries must not be negative");
    T s = sum_of(v);
    if (!(s > T(0))) throw InputError(flag, "0", "entries sum to zero");
    if (normalize) {
        for (auto& x : v) x = x / s;
    } else if (std::fabs(to_double(s) - 1) > kSumTolerance) {
        throw InputError(flag, fmt::format("sum {}", format_real(to_double(s), 10)),
                         "must sum to 1 within 1e-9 (or pass --normalize)");
    }
    return v;
}

std::string show(double v) { return format_real(v, 6); }
std::string show(const Rational& r) { return r.str(); }
// A fraction inside a formula gets parentheses so "3/5 / 2/5" reads as (3/5)/(2/5).
std::string term(double v) { return show(v); }
std::string term(const Rational& r) { return r.den() == 1 ? r.str() : "(" + r.str() + ")"; }
template <typename T>
std::string show_list(const std::vector<T>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + show(v[i]);
    return s + "]";
}
template <typename T>
nlohmann::json nums(const std::vector<T>& v) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& x : v) j.push_back(to_double(x));
    return j;
}
template <typename T>
nlohmann::json strs(const std::vector<T>& v) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& x : v) j.push_back(show(x));
    return j;
}

template <typename T>
void acceptance_report(const std::vector<T>& p, const std::vector<T>& q, bool exact, Report& r) {
    Acceptance<T> a = acceptance(p, q);
    auto& j = r.json;
    j["exact_arithmetic"] = exact;
    j["p"] = nums(p);
    j["q"] = nums(q);
    nlohmann::json alpha = nlohmann::json::array();
    for (std::size_t x = 0; x < p.size(); ++x)
        alpha.push_back(a.never_proposed[x] ? nlohmann::json(nullptr) : nlohmann::json(to_double(a.alpha[x])));
    j["alpha"] = alpha;
    j["accepted_mass"] = nums(a.accepted);
    j["accept_prob"] = to_double(a.accept_prob);
    j["reject_prob"] = to_double(a.reject_prob);
    j["positive_residual"] = nums(a.positive_residual);
    j["residual"] = nums(a.residual);
    j["residual_empty"] = a.residual_empty;
    j["output"] = nums(a.output);
    j["max_abs_error"] = to_double(a.max_abs_error);
    j["never_proposed"] = a.never_proposed;
    if (exact) {
        j["exact"] = {{"alpha", strs(a.alpha)},          {"accepted_mass", strs(a.accepted)},
                      {"accept_prob", show(a.accept_prob)}, {"reject_prob", show(a.reject_prob)},
                      {"residual", strs(a.residual)},    {"output", strs(a.output)},
                      {"max_abs_error", show(a.max_abs_error)}};
    }
    Table t{{"token", "p", "q", "α = min(1, p/q)", "accepted q·α", "[p − q]₊", "residual r", "output"}, {}, {}};
    for (std::size_t x = 0; x < p.size(); ++x)
        t.rows.push_back({std::to_string(x), show(p[x]), show(q[x]), a.never_proposed[x] ? "never drafted" : show(a.alpha[x]),
                          show(a.accepted[x]), show(a.positive_residual[x]), show(a.residual[x]), show(a.output[x])});
    r.add_table("tokens", t);
    std::string& h = r.human;
    h += fmt::format("Speculative sampling at one position (first document §3.1.2), {} arithmetic\n",
                     exact ? "exact (fractions)" : "floating-point");
    h += render_table(t);
    h += fmt::format("  accept probability Σ min(p, q) = {};  reject probability = {}\n", show(a.accept_prob), show(a.reject_prob));
    if (a.residual_empty)
        h += "  p = q: the positive residual is empty, every draft is accepted and the residual branch is never entered.\n";
    else
        h += fmt::format("  on rejection, resample from r = [p − q]₊ / {} = {}\n", show(a.residual_mass), show_list(a.residual));
    h += fmt::format("  output = accepted + reject·r = {}; largest difference from p: {}\n", show_list(a.output),
                     show(a.max_abs_error));
    for (std::size_t x = 0; x < p.size(); ++x)
        if (a.never_proposed[x] && p[x] > T(0))
            h += fmt::format("  token {}: q = 0, so the draft never proposes it; the residual supplies its p = {}.\n", x,
                             show(p[x]));
    std::string& x = r.explain;
    x += "α(x) = min(1, p(x)/q(x));  accepted mass q(x)·α(x) = min(p(x), q(x))\n";
    for (std::size_t i = 0; i < p.size(); ++i)
        x += a.never_proposed[i] ? fmt::format("  x = {}: q = 0, never drafted\n", i)
                                 : fmt::format("  x = {}: α = min(1, {}/{}) = {};  q·α = {}\n", i, term(p[i]), term(q[i]),
                                               show(a.alpha[i]), show(a.accepted[i]));
    x += fmt::format("accept = Σ q·α = {};  reject = 1 − accept = {}\n", show(a.accept_prob), show(a.reject_prob));
    x += fmt::format("r(v) = [p(v) − q(v)]₊ / Σ_u [p(u) − q(u)]₊ = {} / {} = {}\n", show_list(a.positive_residual),
                     term(a.residual_mass), a.residual_empty ? "(empty: p = q)" : show_list(a.residual));
    x += "output = q·α + reject·r:\n";
    for (std::size_t i = 0; i < p.size(); ++i)
        x += fmt::format("  x = {}: {} + {} × {} = {}   (p = {})\n", i, show(a.accepted[i]), term(a.reject_prob),
                         term(a.residual[i]), show(a.output[i]), show(p[i]));
    x += fmt::format("max |output − p| = {}\n", show(a.max_abs_error));
}

void expected_section(double alpha, std::size_t gamma, const std::optional<double>& cost, std::size_t max_gamma,
                      const std::string& alpha_from, Report& r) {
    auto& j = r.json;
    const double e = expected_tokens_per_round(alpha, gamma);
    j["alpha_rate"] = alpha;
    j["gamma"] = gamma;
    j["expected_tokens_per_round"] = e;
    j["accepted_count_distribution"] = accepted_count_distribution(alpha, gamma);
    r.human += fmt::format("\nA round at acceptance rate α = {} ({}), γ = {} (positions assumed independent):\n",
                           show(alpha), alpha_from, count_noun(gamma, "draft"));
    auto dist = accepted_count_distribution(alpha, gamma);
    for (std::size_t k = 0; k <= gamma; ++k)
        r.human += fmt::format("  P({} accepted) = {}  → {}{}\n", k, show(dist[k]), count_noun(k + 1, "token"),
                               k == gamma ? " (the bonus token counted)" : "");
    r.human += fmt::format("  expected tokens per round (1 − α^(γ+1)) / (1 − α) = {}\n", show(e));
    r.explain += fmt::format("\nExpected tokens per round = (1 − α^(γ+1)) / (1 − α) = (1 − {}^{}) / (1 − {}) = {}\n",
                             show(alpha), gamma + 1, show(alpha), show(e));
    if (cost) {
        const double s = speedup(alpha, gamma, *cost);
        j["cost_ratio"] = *cost;
        j["speedup"] = s;
        r.human += fmt::format("  speedup at draft/target cost ratio c = {}: (1 − α^(γ+1)) / ((1 − α)(γc + 1)) = {}\n",
                               show(*cost), show(s));
        r.explain += fmt::format("Speedup = E / (γc + 1) = {} / ({} × {} + 1) = {}\n", show(e), gamma, show(*cost), show(s));
        Table t{{"γ", "E[tokens/round]", "speedup", ""}, {}, {}};
        const GammaChoice choice = choose_gamma(alpha, *cost, max_gamma);
        j["gamma_table"] = nlohmann::json::array();
        for (std::size_t g = 1; g <= max_gamma; ++g) {
            const bool best = choice.best && g == *choice.best;
            t.rows.push_back({std::to_string(g), show(expected_tokens_per_round(alpha, g)), show(speedup(alpha, g, *cost)),
                              best ? (choice.at_edge ? "← best shown (table's edge)" : "← best") : ""});
            j["gamma_table"].push_back({{"gamma", g}, {"expected_tokens_per_round", expected_tokens_per_round(alpha, g)},
                                        {"speedup", speedup(alpha, g, *cost)}});
        }
        j["best_gamma"] = choice.best ? nlohmann::json(*choice.best) : nlohmann::json(nullptr);
        j["best_gamma_at_table_edge"] = choice.at_edge;
        r.human += "\n" + render_table(t);
        if (!choice.best)
            r.human += fmt::format("  No γ helps at α = {}, c = {}: every speedup is at most {} (a round costs γc + 1 "
                                   "target passes and gains too few tokens); decode without a draft.\n",
                                   show(alpha), show(*cost), show(choice.best_speedup));
        else if (choice.at_edge)
            r.human += fmt::format("  γ = {} is the table's edge, not an optimum: γ = {} would be faster still{}. "
                                   "Raise --max-gamma to see more.\n",
                                   max_gamma, max_gamma + 1,
                                   alpha >= 1 ? " (α = 1 accepts every draft, so (γ + 1)/(γc + 1) grows with every γ)" : "");
        r.tables.insert(r.tables.begin(), {"gamma", t});  // the sweep is what --csv printed first
    }
}

void walkthrough_section(std::size_t gamma, const std::string& outcomes, Report& r) {
    std::vector<std::string> list = split_list("--outcomes", outcomes);
    RoundWalkthrough w = walk_round(gamma, list);
    auto& j = r.json["round"];
    j = {{"gamma", gamma},           {"accepted", w.accepted},         {"tokens_advanced", w.tokens_advanced},
         {"draft_proposals", w.draft_proposals}, {"target_positions", w.target_positions}, {"discarded", w.discarded},
         {"bonus", w.bonus},         {"steps", nlohmann::json::array()}};
    Table t{{"draft", "fate", "why"}, {}, {true, false, false}};
    for (const auto& s : w.steps) {
        t.rows.push_back({std::to_string(s.position), s.fate, s.why});
        j["steps"].push_back({{"position", s.position}, {"fate", s.fate}, {"why", s.why}});
    }
    r.human += fmt::format("\nOne draft round, γ = {} (first document §3.1.1): the target scores {} in one pass;\n"
                           "acceptance advances left to right.\n",
                           gamma, gamma == 1 ? std::string("the 1 position") : "all " + count_noun(gamma, "position"));
    r.human += render_table(t);
    r.human += fmt::format("  tokens advanced {} ({} accepted + 1 {}); draft proposals {}; target positions verified {}; "
                           "discarded {}\n",
                           w.tokens_advanced, w.accepted, w.bonus ? "bonus" : "resampled", w.draft_proposals,
                           w.target_positions, w.discarded);
    r.explain += fmt::format("\nRound: {} accepted, then {} → {} advanced from {}; {} discarded.\n", w.accepted,
                             w.bonus ? "the bonus token" : "one token resampled from the residual",
                             count_noun(w.tokens_advanced, "token"), count_noun(w.draft_proposals, "draft"), w.discarded);
}

void simulation_section(const std::vector<double>& p, const std::vector<double>& q, const SpecOptions& o, Report& r) {
    std::uint64_t n = parse_positive_int("--simulate", o.simulate);
    if (n > 100000000) throw InputError("--simulate", o.simulate, "must be at most 100,000,000 samples");
    std::uint64_t seed = parse_nonnegative_int("--seed", o.seed);
    double tau = parse_probability("--threshold", o.threshold);
    SimulationCounts c = simulate_speculative(p, q, tau, n, seed);
    std::vector<double> shortcut = threshold_shortcut_distribution(p, q, tau);
    FitTest fs = fit_test(c.speculative, p), ft = fit_test(c.threshold_shortcut, p);
    Table t{{"token", "p", "speculative", "99% ±", "shortcut (q ≥ τ)", "shortcut exact", "greedy"}, {}, {}};
    const double dn = static_cast<double>(n);
    for (std::size_t x = 0; x < p.size(); ++x) {
        double f = static_cast<double>(c.speculative[x]) / dn;
        t.rows.push_back({std::to_string(x), show(p[x]), fmt::format("{:.5f}", f),
                          fmt::format("{:.5f}", proportion_half_width_99(p[x], dn)),
                          fmt::format("{:.5f}", static_cast<double>(c.threshold_shortcut[x]) / dn), show(shortcut[x]),
                          fmt::format("{:.5f}", static_cast<double>(c.greedy[x]) / dn)});
    }
    auto fit_json = [](const FitTest& f) {
        return nlohmann::json{{"total_variation", f.total_variation}, {"chi_square", f.chi_square}, {"dof", f.dof},
                              {"p_value", f.p_value}, {"passes_at_1_percent", f.p_value >= 0.01}};
    };
    auto freq = [&](const std::vector<std::uint64_t>& v) {
        std::vector<double> out;
        for (auto k : v) out.push_back(static_cast<double>(k) / dn);
        return out;
    };
    r.json["simulation"] = {{"samples", n},
                            {"seed", seed},
                            {"threshold", tau},
                            {"speculative", freq(c.speculative)},
                            {"speculative_fit", fit_json(fs)},
                            {"threshold_shortcut", freq(c.threshold_shortcut)},
                            {"threshold_shortcut_exact", shortcut},
                            {"threshold_shortcut_fit", fit_json(ft)},
                            {"greedy", freq(c.greedy)}};
    r.human += fmt::format("\nSimulation: {}, seed {}\n", count_noun(n, "sample"), seed);
    r.human += render_table(t);
    r.human += fmt::format("  speculative rule: TV distance {:.2e}, χ² = {:.3f} on {} dof, p-value {:.4f} → {}\n",
                           fs.total_variation, fs.chi_square, fs.dof, fs.p_value,
                           fs.p_value >= 0.01 ? "consistent with p at the 1% level" : "REJECTED at the 1% level");
    r.human += fmt::format("  shortcut (accept any draft with q(x) ≥ {}): TV distance {:.2e}, χ² = {:.1f}, p-value {:.3g} → {}\n",
                           show(tau), ft.total_variation, ft.chi_square, ft.p_value,
                           ft.p_value >= 0.01 ? "not distinguishable from p here" : "biased: it does not preserve p");
    r.human += "  greedy: the draft's argmax is kept only if it is the target's argmax, so the output is always argmax p.\n";
}

void run(const SpecOptions& o) {
    Report r;
    const bool have_pq = !o.p.empty() || !o.q.empty() || !o.p_file.empty() || !o.q_file.empty() || !o.p_logits.empty() ||
                         !o.q_logits.empty();
    std::optional<std::vector<double>> pd, qd;
    std::optional<double> alpha_from_pq;
    if (o.exact && o.floating) throw InputError("--exact and --float both given: choose one");
    if (have_pq) {
        const bool logits = !o.p_logits.empty() || !o.q_logits.empty();
        if (logits) {
            if (o.p_logits.empty() || o.q_logits.empty()) throw InputError("give both --p-logits and --q-logits");
            if (!o.p.empty() || !o.q.empty()) throw InputError("give distributions (--p/--q) or logits, not both");
            if (o.exact) throw InputError("--exact needs decimal probabilities, not logits");
            double temp = parse_temperature(o.temperature);
            std::size_t k = parse_top_k(o.top_k);
            double tp = parse_top_p(o.top_p);
            std::vector<double> pl, ql;
            for (const auto& s : split_list("--p-logits", o.p_logits)) pl.push_back(parse_real("--p-logits", s));
            for (const auto& s : split_list("--q-logits", o.q_logits)) ql.push_back(parse_real("--q-logits", s));
            if (pl.size() != ql.size())
                throw InputError("--q-logits", o.q_logits, fmt::format("has {}; --p-logits has {}", count_noun(ql.size(), "entry", "entries"), count_noun(pl.size(), "entry", "entries")));
            pd = sampling_distribution(pl, temp, k, tp);
            qd = sampling_distribution(ql, temp, k, tp);
            r.human += fmt::format("Distributions from logits at temperature {}, top-k {}, top-p {} (the ones actually sampled)\n",
                                   show(temp), k ? std::to_string(k) : "off", show(tp));
            acceptance_report(*pd, *qd, false, r);
        } else {
            auto pi = items_of("--p", o.p, "--p-file", o.p_file);
            auto qi = items_of("--q", o.q, "--q-file", o.q_file);
            if (pi.size() != qi.size())
                throw InputError("--q", o.q.empty() ? o.q_file : o.q,
                                 fmt::format("has {}; --p has {} (same vocabulary required)", count_noun(qi.size(), "entry", "entries"),
                                             count_noun(pi.size(), "entry", "entries")));
            bool short_dec = std::all_of(pi.begin(), pi.end(), [](auto& s) { return is_short_decimal(s); }) &&
                             std::all_of(qi.begin(), qi.end(), [](auto& s) { return is_short_decimal(s); });
            if (o.exact && !short_dec) throw InputError("--exact needs decimal inputs of at most 9 digits after the point");
            const bool exact = !o.floating && (o.exact || short_dec);
            if (exact) {
                std::vector<Rational> p, q;
                for (const auto& s : pi) p.push_back(parse_rational("--p", s));
                for (const auto& s : qi) q.push_back(parse_rational("--q", s));
                p = validated("--p", p, o.normalize);
                q = validated("--q", q, o.normalize);
                acceptance_report(p, q, true, r);
                pd = std::vector<double>();
                qd = std::vector<double>();
                for (auto& v : p) pd->push_back(v.to_double());
                for (auto& v : q) qd->push_back(v.to_double());
            } else {
                std::vector<double> p, q;
                for (const auto& s : pi) p.push_back(parse_real("--p", s));
                for (const auto& s : qi) q.push_back(parse_real("--q", s));
                pd = validated("--p", p, o.normalize);
                qd = validated("--q", q, o.normalize);
                acceptance_report(*pd, *qd, false, r);
            }
        }
        alpha_from_pq = r.json["accept_prob"].get<double>();
    }
    if (!o.gamma.empty() || !o.alpha.empty()) {
        if (o.gamma.empty()) throw InputError("--alpha needs --gamma (draft length)");
        std::size_t gamma = parse_positive_int("--gamma", o.gamma);
        if (gamma > 64) throw InputError("--gamma", o.gamma, "must be at most 64");
        std::optional<double> cost;
        if (!o.cost_ratio.empty()) cost = parse_positive_real("--cost-ratio", o.cost_ratio);
        std::size_t max_gamma = parse_positive_int("--max-gamma", o.max_gamma);
        if (max_gamma > 64) throw InputError("--max-gamma", o.max_gamma, "must be at most 64");
        if (!o.outcomes.empty()) walkthrough_section(gamma, o.outcomes, r);
        if (!o.alpha.empty()) {
            if (alpha_from_pq) throw InputError("--alpha and --p/--q both given: α comes from Σ min(p, q)");
            double a = parse_probability("--alpha", o.alpha);
            expected_section(a, gamma, cost, max_gamma, "given", r);
        } else if (alpha_from_pq) {
            expected_section(*alpha_from_pq, gamma, cost, max_gamma, "Σ min(p, q)", r);
        } else if (o.outcomes.empty()) {
            throw InputError("--gamma needs --alpha, --p/--q or --outcomes");
        }
    } else if (!o.outcomes.empty()) {
        throw InputError("--outcomes needs --gamma (the number of drafts)");
    }
    if (!o.simulate.empty()) {
        if (!pd) throw InputError("--simulate needs --p and --q (or logits)");
        simulation_section(*pd, *qd, o, r);
    }
    if (r.human.empty())
        throw InputError("nothing to compute: give --p and --q, --alpha with --gamma, or --gamma with --outcomes");
    if (r.explain.empty()) r.explain = r.human;
    emit(r, o.out);
}

}  // namespace

void setup_spec_accept(CLI::App& app) {
    auto opt = std::make_shared<SpecOptions>();
    CLI::App* sub = app.add_subcommand("spec-accept", "Speculative sampling: acceptance, residual, a draft round, speedup, and proof by simulation");
    sub->add_option("--p", opt->p, "target distribution: 0.6,0.3,0.1");
    sub->add_option("--q", opt->q, "draft distribution over the same vocabulary");
    sub->add_option("--p-file", opt->p_file, "target distribution from a file (numbers separated by commas or lines)");
    sub->add_option("--q-file", opt->q_file, "draft distribution from a file");
    sub->add_option("--p-logits", opt->p_logits, "target logits (softmax at --temperature, then --top-k/--top-p)");
    sub->add_option("--q-logits", opt->q_logits, "draft logits");
    sub->add_option("--temperature", opt->temperature, "temperature for logits (default 1, 0 = greedy: all mass on the argmax)")
        ->check(rule(parse_temperature));
    sub->add_option("--top-k", opt->top_k, "keep the k most likely tokens (0: off)")
        ->check(rule(parse_top_k));
    sub->add_option("--top-p", opt->top_p, "keep the smallest set with this mass (1: off)")
        ->check(rule(parse_top_p));
    sub->add_flag("--exact", opt->exact, "exact fractions (the default when every input is a short decimal)");
    sub->add_flag("--float", opt->floating, "floating point even for decimal inputs");
    sub->add_flag("--normalize", opt->normalize, "divide each distribution by its sum instead of requiring 1 (within 1e-9)");
    sub->add_option("--alpha", opt->alpha, "acceptance rate α per position, for a round");
    sub->add_option("--gamma", opt->gamma, "γ, drafts per round");
    sub->add_option("--cost-ratio", opt->cost_ratio, "c, draft cost / target cost: speedup and the best γ");
    sub->add_option("--max-gamma", opt->max_gamma, "largest γ in the table (default 8)");
    sub->add_option("--outcomes", opt->outcomes, "a scripted round: accept,accept,reject");
    sub->add_option("--simulate", opt->simulate, "samples of the real algorithm, beside the threshold shortcut");
    sub->add_option("--seed", opt->seed, "seed of the simulation (default 1)");
    sub->add_option("--threshold", opt->threshold, "the shortcut keeps any draft with q(x) ≥ this (default 0.3)");
    add_output_flags(*sub, opt->out, true);
    sub->footer(examples_footer(
        {"inferlab spec-accept --p 0.6,0.3,0.1 --q 0.4,0.4,0.2",
         "    → α = [1, 3/4, 1/2], accepted [2/5, 3/10, 1/10], total 4/5, residual [1, 0, 0], output = p",
         "inferlab spec-accept --gamma 4 --outcomes accept,accept,reject   (3 tokens advanced from 4 drafts)",
         "inferlab spec-accept --alpha 0.8 --gamma 4 --cost-ratio 0.1",
         "inferlab spec-accept --p 0.6,0.3,0.1 --q 0.4,0.4,0.2 --simulate 1000000 --seed 1"},
        "JSON keys: alpha (null where q = 0), accepted_mass, accept_prob, reject_prob, positive_residual, residual,\n"
        "residual_empty, output, max_abs_error, exact{...} (fractions as strings); alpha_rate, gamma,\n"
        "expected_tokens_per_round, accepted_count_distribution, cost_ratio, speedup, gamma_table[], best_gamma;\n"
        "round{accepted, tokens_advanced, draft_proposals, target_positions, discarded, bonus, steps[]};\n"
        "simulation{samples, seed, speculative, speculative_fit{total_variation, chi_square, dof, p_value,\n"
        "passes_at_1_percent}, threshold_shortcut, threshold_shortcut_exact, threshold_shortcut_fit, greedy}."));
    sub->callback([opt] { run(*opt); });
}

}  // namespace inferlab::app
