// inferlab model speculate | kv-quant | roofline: each calculator's prediction beside what the
// reference model does on this machine. The experiments live in lib (model/run/measure.hpp); this
// file declares the options, parses them, calls one library function per command and prints
// its result.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "common.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/model/run/measure.hpp"
#include "model_common.hpp"
#include "model_text.hpp"
#include "options.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
// A missing rate: "-" in text, an empty cell in CSV.
std::string opt_text(const std::optional<double>& v, const char* missing = "-") { return v ? fmt::format("{:.4f}", *v) : missing; }

// Prose for the text: each line wrapped to text_width() (80, or $COLUMNS), its continuation lines
// indented as the line itself is.
std::string prose(const std::string& text) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        const std::string line = text.substr(start, nl - start);
        const std::size_t body = line.find_first_not_of(' ');
        const std::string ind = line.substr(0, body == std::string::npos ? line.size() : body);
        out += body == std::string::npos ? "\n" : wrap(line.substr(body), ind, ind);
        start = nl + 1;
    }
    return out;
}

Sampling parse_sampling(bool greedy, const std::string& temperature, const std::string& top_k, const std::string& top_p) {
    Sampling s;
    // Temperature 0 is greedy, as in every subcommand that samples.
    s.temperature = parse_temperature(temperature);
    s.greedy = greedy || s.temperature == 0;
    s.top_k = parse_top_k(top_k);
    s.top_p = parse_top_p(top_p);
    return s;
}

// ---- speculate ----
struct SpeculateOptionsCli {
    ModelSource src;
    std::string gamma = "4", tokens = "64", prompt = "1,2,3,4", draft_layers, perturb = "0.05", draft_seed = "2";
    std::string temperature = "1", top_k = "0", top_p = "1", threads = "1", cost_ratio, sample_seed = "1", kernels;
    std::string weight_dtype = "fp32";
    bool greedy = false;
    OutputFlags flags;
};

struct SpeculateSetup {
    std::string target;                  // description, in English (--json)
    std::string target_shown;            // the same in the reader's language (the text)
    std::vector<std::string> draft_args;  // the draft's layers, the target's, the noise: see draft_text
    int target_layers = 0;
};

// The draft in words: English for --json's "draft", the reader's language for the text.
std::string draft_text(const SpeculateSetup& su, bool text) {
    return say(text, N_("first {0} of {1} layers, weights × (1 + {2}·N(0,1))"), su.draft_args);
}

// `text`: headers in the reader's language and "-" for a missing rate; else CSV (English headers,
// empty cells).
Table speculate_table(const SpeculateStats& s, bool text) {
    using P = SpeculatePosition;
    // The text's "-" where a position has no rate: opt_text, not figure_column's empty cell.
    auto rate = [](std::optional<double> P::*field) {
        return std::pair{[field](const P& p) { return csv_number(p.*field); }, [field](const P& p) { return opt_text(p.*field); }};
    };
    const auto empirical = rate(&P::empirical), predicted = rate(&P::predicted);
    const std::vector<Column<P>> columns = {
        {"position", N_("draft position"), [](const P& p) { return std::to_string(p.position); }},
        {"judged", N_("judged"), [](const P& p) { return std::to_string(p.judged); }},
        {"accepted", N_("accepted"), [](const P& p) { return std::to_string(p.accepted); }},
        {"empirical", N_("empirical α"), empirical.first, empirical.second},
        {"predicted", N_("predicted Σ min(p, q)"), predicted.first, predicted.second}};
    return text ? text_table(columns, s.per_position) : columns_table(columns, s.per_position);
}

nlohmann::json speculate_json(const SpeculateSetup& su, const SpeculateOptions& so, const SpeculateExperiment& e,
                              const WeightsFacts& wf) {
    const SpeculateResult& r = e.run;
    const SpeculateStats& s = e.stats;
    nlohmann::json j = {{"target", su.target}, {"draft", draft_text(su, false)}, {"gamma", so.gamma}, {"weight_dtype", wf.dtype},
                        {"quantized_arithmetic", wf.quantized_arithmetic}, {"tokens", r.tokens}, {"tokens_generated", r.tokens.size()}, {"tokens_produced", r.produced}, {"rounds", r.rounds},
                        {"target_forward_passes", r.target_passes}, {"draft_forward_passes", r.draft_passes},
                        {"drafts_discarded", r.drafts_discarded}, {"acceptance_rate", s.acceptance_rate},
                        {"predicted_acceptance_rate", s.predicted_acceptance_rate},
                        {"acceptance_interval_99", {s.interval_99.lo, s.interval_99.hi}}, {"within_interval", or_null(s.within_interval)},
                        {"tokens_per_round", s.tokens_per_round}, {"predicted_tokens_per_round", s.predicted_tokens_per_round},
                        {"predicted_speedup", opt_json(s.predicted_speedup)}, {"per_position", nlohmann::json::array()}};
    for (const auto& p : s.per_position)
        j["per_position"].push_back({{"position", p.position}, {"judged", p.judged}, {"accepted", p.accepted},
                                     {"empirical", opt_json(p.empirical)}, {"predicted", opt_json(p.predicted)}});
    return j;
}

std::string speculate_text(const SpeculateSetup& su, const SpeculateOptions& so, const SpeculateExperiment& e,
                           const WeightsFacts& wf, std::optional<double> cost) {
    const SpeculateResult& r = e.run;
    const SpeculateStats& s = e.stats;
    const std::string sampling = so.sampling.greedy ? tr(N_("greedy"))
                                                    : trf(N_("temperature {0}"), format_real(so.sampling.temperature));
    std::string h = trf(N_("Speculative decoding, γ = {0}, {1} (sample seed {2})"), so.gamma, sampling, so.seed) + "\n";
    h += "  " + trf(N_("target: {0} ({1})"), su.target_shown, counted(su.target_layers, "{0} layer", N_("{0} layers"))) + "\n";
    h += "  " + trf(N_("draft:  {0}"), draft_text(su, true)) + "\n";
    h += "  " + trf(N_("{0} in {1}: {2}, {3}, {4} discarded"), counted(r.tokens.size(), "{0} token", N_("{0} tokens")),
                    counted(r.rounds, "{0} round", N_("{0} rounds")),
                    counted(r.target_passes, "{0} target forward pass", N_("{0} target forward passes")),
                    counted(r.draft_passes, "{0} draft forward pass", N_("{0} draft forward passes")),
                    counted(r.drafts_discarded, "{0} draft", N_("{0} drafts"))) + "\n";
    h = prose(h) + wf.line + render_table(speculate_table(s, true));
    const std::string verdict = !s.within_interval ? tr(N_("too few judged drafts to tell"))
                                : *s.within_interval ? tr(N_("inside")) : tr(N_("OUTSIDE"));
    std::string t = "  " + trf(N_("acceptance rate {0} against spec-accept's Σ min(p, q) = {1} (the rate's 99% Wilson "
                                  "interval [{2}, {3}]: {4})"),
                               fmt::format("{:.4f}", s.acceptance_rate), fmt::format("{:.4f}", s.predicted_acceptance_rate),
                               fmt::format("{:.4f}", s.interval_99.lo), fmt::format("{:.4f}", s.interval_99.hi), verdict) +
                    "\n";
    t += "  " + trf(N_("tokens per round (one target verification each: its accepted drafts + 1, the last round's counted "
                       "whole, {0} produced for {1} kept) {2} against (1 − α^(γ+1))/(1 − α) = {3} at that α"),
                    r.produced, r.tokens.size(), fmt::format("{:.3f}", s.tokens_per_round),
                    fmt::format("{:.3f}", s.predicted_tokens_per_round)) + "\n";
    if (s.predicted_speedup)
        t += "  " + trf(N_("predicted speedup at draft/target cost {0}: {1}"), format_real(*cost),
                        fmt::format("{:.3f}", *s.predicted_speedup)) + "\n";
    return h + prose(t);
}

void run_speculate(const SpeculateOptionsCli& o, const CLI::App& sub) {
    refuse_both(sub, "--steps", "--tokens");
    refuse_sampling_flags_when_greedy(sub, o.greedy || parse_temperature(o.temperature) == 0,
                                      o.greedy ? "--greedy" : "--temperature 0");
    if (o.greedy && sub.count("--temperature") > 0)
        throw InputError("--temperature", o.temperature, N_("has no effect with --greedy (greedy: the argmax)"));
    SpeculateSetup su;
    auto tw = load(o.src, &su.target, &su.target_shown);
    const Dims& td = tw->dims();
    su.target_layers = td.n_layers;
    const int layers = o.draft_layers.empty() ? std::max(1, td.n_layers / 2)
                                              : static_cast<int>(parse_positive_int_at_most("--draft-layers", o.draft_layers, INT32_MAX, ""));
    const double perturb = parse_real("--perturb", o.perturb);
    std::unique_ptr<Weights> dw;
    try {
        dw = derive_draft(*tw, layers, perturb, parse_nonnegative_int("--draft-seed", o.draft_seed));
    } catch (const InputError& e) {  // the library's terms, said again in this command's flags, values as typed
        // renamed() and with_value() keep the rule's msgid, so the error still translates.
        if (e.where() == "draft layers")
            throw e.renamed("--draft-layers").with_value(o.draft_layers.empty() ? e.value() : o.draft_layers);
        if (e.where() == "perturbation") throw e.renamed("--perturb").with_value(o.perturb);
        throw;
    }
    su.draft_args = {std::to_string(layers), std::to_string(td.n_layers), format_real(perturb)};
    SpeculateOptions so;
    so.gamma = static_cast<int>(parse_positive_int_at_most("--gamma", o.gamma, 64, ""));
    const auto prompt = parse_token_list("--prompt", o.prompt, td);
    so.new_tokens = parse_token_count("--steps", o.tokens, prompt.size(), static_cast<std::uint64_t>(td.seq_len));
    so.sampling = parse_sampling(o.greedy, o.temperature, o.top_k, o.top_p);
    parse_top_k_within(o.top_k, static_cast<std::size_t>(td.vocab_size));  // k within the vocabulary
    so.seed = parse_nonnegative_int("--sample-seed", o.sample_seed);
    const int threads = parse_threads(o.threads);
    CpuBackend cpu(cpu_backend_options(threads, o.kernels));  // run_speculate gives each model its weights at the dtype
    const Transformer target(*tw, cpu), draft(*dw, cpu);
    std::optional<double> cost;
    if (!o.cost_ratio.empty()) cost = parse_positive_real("--cost-ratio", o.cost_ratio);
    // Target and draft each read their own weights at --weight-dtype.
    const WeightDtype wdt = parse_weight_dtype("--weight-dtype", o.weight_dtype);
    const WeightsAt at_t = weights_at(*tw, wdt, threads), at_d = weights_at(*dw, wdt, threads);
    const SpeculateExperiment e = run_speculate(target, draft, prompt, so, &at_t, &at_d, cost);
    Report rep;
    const WeightsFacts wf = weights_facts(at_t, cpu.options().kernels);
    rep.json = speculate_json(su, so, e, wf);
    rep.human = speculate_text(su, so, e, wf, cost);
    rep.explain = rep.human + "\n" +
                  prose(tr(N_("Acceptance follows spec-accept's rule on the two models' actual next-token distributions at "
                              "each position; the prediction Σ_x min(p(x), q(x)) is computed from those same distributions.")) +
                        "\n");
    rep.add_table("positions", speculate_table(e.stats, false), "/per_position");
    emit(rep, o.flags);
}

// ---- kv-quant ----
struct KvQuantOptions {
    ModelSource src;
    std::string bits = "8", scheme = "kivi", group = "32", tokens = "128", gen = "100", prompt = "1,2,3,4";
    std::string kernels, weight_dtype = "fp32";
    OutputFlags flags;
};

std::string kv_quant_text(const std::string& what, const KvQuantExperiment& e, const KvQuantResult& r, const WeightsFacts& wf) {
    const std::string scheme =
        e.scheme == KvQuantScheme::Kivi ? trf(N_("KIVI: K per channel over groups of {0} tokens, V per token"), e.group_tokens)
                                        : tr(N_("per token for K and V"));
    std::string h = trf(N_("KV cache at int{0} ({1}) on {2}; weights {3} for both caches"), e.bits, scheme, what,
                        wf.dtype) + "\n";
    h += "  " + trf(N_("over {0} positions: max |logit error| {1}; KL(float ‖ quantized) mean {2}, max {3}; greedy next "
                       "token agrees at {4}/{5} positions"),
                    r.positions, fmt::format("{:.3e}", r.max_abs_logit_error), fmt::format("{:.3e}", r.mean_kl),
                    fmt::format("{:.3e}", r.max_kl), r.greedy_agree, r.positions) + "\n";
    h += "  " + (r.first_divergence
                     ? trf(N_("greedy generation: parts from the float32 cache at generated token {0}"), *r.first_divergence)
                     : trf(N_("greedy generation of {0} tokens: identical to the float32 cache"), r.generated)) + "\n";
    h += "  " + trf(N_("bytes per token: {0} B stored ({1} B at float32); kv-mem's int{2} figure with one fp16 scale per "
                       "head vector: {3} B{4}"),
                    r.bytes_per_token_measured, r.bytes_per_token_fp32, e.bits, r.bytes_per_token_kv_mem,
                    r.bytes_per_token_measured == r.bytes_per_token_kv_mem
                        ? tr(N_(" (equal)"))
                        : tr(N_(" (KIVI's per-channel K scales differ in count)"))) + "\n";
    return prose(h) + wf.line;
}

void run_kv_quant(const KvQuantOptions& o, const CLI::App& sub) {
    refuse_both(sub, "--group-size", "--group");
    refuse_both(sub, "--positions", "--tokens");
    refuse_both(sub, "--steps", "--gen");
    std::string what, shown;
    auto w = load(o.src, &what, &shown);
    const Dims& d = w->dims();
    KvQuantExperiment e;
    e.bits = parse_bits(o.bits, {8, 4});
    if (o.scheme == "kivi") e.scheme = KvQuantScheme::Kivi;
    else if (o.scheme == "per-token") e.scheme = KvQuantScheme::PerToken;
    else throw InputError("--scheme", o.scheme, N_("must be kivi (K per channel, V per token) or per-token"));
    e.group_tokens = static_cast<int>(parse_positive_int_at_most("--group-size", o.group, INT32_MAX, ""));
    const int n = parse_token_count("--positions", o.tokens, 0, static_cast<std::uint64_t>(d.seq_len));
    e.tokens = kv_quant_tokens(d, n, parse_nonnegative_int("--seed", o.src.seed));
    e.prompt = parse_token_list("--prompt", o.prompt, d);
    e.generate = parse_token_count("--steps", o.gen, e.prompt.size(), static_cast<std::uint64_t>(d.seq_len), false);
    // Both caches are read by the same model: the weights at --weight-dtype, the same kernels.
    const WeightDtype wdt = parse_weight_dtype("--weight-dtype", o.weight_dtype);
    const WeightsAt at = weights_at(*w, wdt, 1);
    CpuBackend cpu(cpu_backend_options(1, o.kernels, &at));
    const Transformer m(*w, cpu);
    const KvQuantResult r = run_kv_quant(m, e);
    const WeightsFacts wf = weights_facts(at, cpu.options().kernels);
    Report rep;
    rep.json = {{"model", what}, {"bits", e.bits}, {"scheme", o.scheme}, {"group_tokens", e.group_tokens},
                {"weight_dtype", to_string(wdt)}, {"quantized_arithmetic", wf.quantized_arithmetic}, {"positions", r.positions}, {"max_abs_logit_error", r.max_abs_logit_error},
                {"max_kl", r.max_kl}, {"mean_kl", r.mean_kl}, {"greedy_agreement", r.greedy_agreement},
                {"generated", r.generated},
                {"greedy_first_divergence", r.first_divergence ? nlohmann::json(*r.first_divergence) : nlohmann::json(nullptr)},
                {"bytes_per_token_measured", r.bytes_per_token_measured}, {"bytes_per_token_kv_mem", r.bytes_per_token_kv_mem},
                {"bytes_per_token_fp32", r.bytes_per_token_fp32}};
    rep.human = kv_quant_text(shown, e, r, wf);
    rep.explain = rep.human;
    emit(rep, o.flags);
}

// ---- roofline ----
struct RooflineCli {
    ModelSource src;
    std::string batches = "1,8", contexts = "64", threads = "1", probe_mib = "512", repeats = "3", kernels, weight_dtype = "fp32";
    OutputFlags flags;
};

// Text (`text`) shows bytes in every unit, headers and the bound in the reader's language; CSV
// the exact count, the unit in the header, English.
// ("batch" stays English in the text too, as the column always read.)
Table roofline_table(const RooflineResult& r, bool text) {
    using W = RooflineRow;
    auto rate = [](const char* key, const char* header, double W::*field) {
        return figure_column<W>(key, header, [field](const W& w) { return std::optional<double>(w.*field); },
                                [](double v) { return fmt::format("{:.2f}", v); });
    };
    const Column<W> predicted = rate("predicted_aggregate_tokens_per_s", N_("predicted agg tok/s"),
                                     &W::predicted_aggregate_tokens_per_s),
                    measured = rate("measured_aggregate_tokens_per_s", N_("measured agg tok/s"),
                                    &W::measured_aggregate_tokens_per_s),
                    ratio = rate("ratio", N_("measured/predicted"), &W::ratio),
                    each = rate("measured_per_request_tokens_per_s", N_("measured per-request tok/s"),
                                &W::measured_per_request_tokens_per_s),
                    with_compute = rate("with_compute_aggregate_tokens_per_s", N_("with π: agg tok/s"),
                                        &W::with_compute_aggregate_tokens_per_s);
    const std::vector<Column<W>> columns = {
        {"seq_len", "S", [](const W& w) { return std::to_string(w.seq_len); }},
        {"batch", "batch", [](const W& w) { return std::to_string(w.batch); }, {}, "batch"},
        {"bytes_per_step", "bytes_per_step", [](const W& w) { return std::to_string(w.bytes_per_step); },
         [](const W& w) { return bytes_all_units(w.bytes_per_step); }, tr(N_("bytes/step"))},
        predicted,
        measured,
        ratio,
        each,
        with_compute,
        {"compute_bound", N_("bound is"), [](const W& w) { return csv_flag(w.compute_bound); },
         [](const W& w) { return tr(w.compute_bound ? N_("compute") : N_("memory")); }}};
    return text ? text_table(columns, r.rows) : columns_table(columns, r.rows);
}

nlohmann::json roofline_json(const std::string& what, const RooflineResult& r, int threads, const WeightsFacts& wf) {
    nlohmann::json j = {{"model", what}, {"measured_read_gbs", r.bandwidth.read_gbs},
                        {"measured_batch_product_gflops", r.batch_product_gflops}, {"threads", threads},
                        {"weight_dtype", wf.dtype}, {"quantized_arithmetic", wf.quantized_arithmetic},
                        {"rows", nlohmann::json::array()},
                        {"last_level_cache_bytes", r.last_level_cache_bytes ? nlohmann::json(*r.last_level_cache_bytes) : nlohmann::json(nullptr)},
                        {"fits_in_last_level_cache", r.fits_in_last_level_cache ? nlohmann::json(*r.fits_in_last_level_cache) : nlohmann::json(nullptr)}};
    for (const auto& w : r.rows)
        j["rows"].push_back({{"seq_len", w.seq_len}, {"batch", w.batch}, {"bytes_per_step", w.bytes_per_step},
                             {"predicted_aggregate_tokens_per_s", w.predicted_aggregate_tokens_per_s},
                             {"predicted_per_request_tokens_per_s", w.predicted_per_request_tokens_per_s},
                             {"measured_aggregate_tokens_per_s", w.measured_aggregate_tokens_per_s},
                             {"measured_per_request_tokens_per_s", w.measured_per_request_tokens_per_s}, {"ratio", w.ratio},
                             {"with_compute_aggregate_tokens_per_s", w.with_compute_aggregate_tokens_per_s},
                             {"compute_bound", w.compute_bound}});
    return j;
}

std::string roofline_text(const std::string& what, const RooflineResult& r, int threads, const WeightsFacts& wf) {
    std::string h = trf(N_("The first document's read-volume bound on this machine: {0} ({1})"), what,
                        counted(static_cast<std::uint64_t>(threads), "{0} thread", N_("{0} threads"))) + "\n";
    h += "  " + trf(N_("β = {0} GB/s measured (STREAM-style read, {1}); D_B = W + B·M_KV with W = {2} read per step"),
                    fmt::format("{:.2f}", r.bandwidth.read_gbs),
                    r.bandwidth.huge_pages ? tr(N_("huge pages on")) : tr(N_("huge pages refused")),
                    bytes_all_units(r.weight_bytes)) + "\n";
    h += "  " + trf(N_("π = {0} GFLOP/s measured (the decode kernel on cached weights) for the \"with π\" bound "
                       "max(D_B/β, F_B/π)"),
                    fmt::format("{:.2f}", r.batch_product_gflops)) + "\n";
    h = prose(h) + wf.line + render_table(roofline_table(r, true));
    std::string t;
    if (r.fits_in_last_level_cache.value_or(false))
        t += "  " + trf(N_("Not a bound here: every step reads at most {0}, which fits this machine's last-level cache "
                           "({1}), so it reads from cache, not DRAM; the DRAM read-volume bound does not apply."),
                        bytes_all_units(r.max_step_bytes), bytes_all_units(*r.last_level_cache_bytes)) + "\n";
    t += "  " + tr(N_("The read-volume bound counts bytes only: where measured falls well below it and the \"with π\" bound "
                      "is compute, arithmetic (FLOPs), not reading, limits the step.")) + "\n";
    return h + prose(t);
}

void run_roofline(const RooflineCli& o, const CLI::App& sub) {
    refuse_both(sub, "--batch", "--batches");
    std::string what, shown;
    auto w = load(o.src, &what, &shown);
    RooflineExperiment e;
    const int threads = parse_threads(o.threads);
    e.dtype = parse_weight_dtype("--weight-dtype", o.weight_dtype);
    const WeightsAt at = weights_at(*w, e.dtype, threads);
    CpuBackend cpu(cpu_backend_options(threads, o.kernels, &at));  // every timed step reads the weights at this dtype
    const Transformer m(*w, cpu);
    e.repeats = static_cast<int>(parse_positive_int_at_most("--repeats", o.repeats, INT32_MAX, ""));
    e.batches = parse_int_list_or_range("--batch", o.batches, 32);
    e.contexts = parse_int_list_or_range("--contexts", o.contexts, 16);
    e.probe_bytes = probe_bytes_option(o.probe_mib);
    const RooflineResult r = run_roofline(m, e);
    Report rep;
    const WeightsFacts wf = weights_facts(at, cpu.options().kernels);
    rep.json = roofline_json(what, r, threads, wf);
    rep.human = roofline_text(shown, r, threads, wf);
    rep.explain = rep.human;
    rep.add_table("rows", roofline_table(r, false), "/rows");
    emit(rep, o.flags);
}

void setup_speculate(CLI::App* model) {
    auto sp = std::make_shared<SpeculateOptionsCli>();
    CLI::App* s = model->add_subcommand(
        "speculate", tr("Speculative decoding with a draft derived from the target: measured against spec-accept"));
    add_source(s, sp->src);
    s->add_option("--gamma", sp->gamma, tr("drafts per round (default 4)"));
    add_former_spelling(s, s->add_option("--steps", sp->tokens, tr("tokens to generate (default 64)")), "--tokens", sp->tokens);
    s->add_option("--prompt", sp->prompt, tr("prompt token ids (default 1,2,3,4)"));
    s->add_option("--draft-layers", sp->draft_layers, tr("the draft's layers: the target's first N (default half)"));
    s->add_option("--perturb", sp->perturb, tr("relative noise on the draft's weights (default 0.05; dials acceptance)"));
    s->add_option("--draft-seed", sp->draft_seed, tr("seed of that noise (default 2)"));
    add_sample_seed(s, sp->sample_seed);
    s->add_option("--temperature", sp->temperature, tr("sampling temperature (default 1, 0 = greedy as --greedy)"))
        ->check(rule(parse_temperature));
    s->add_option("--top-k", sp->top_k, tr("top-k (0: off)"))
        ->check(rule(parse_top_k));
    s->add_option("--top-p", sp->top_p, tr("top-p (1: off)"))
        ->check(rule(parse_top_p));
    s->add_flag("--greedy", sp->greedy, tr("greedy drafts and verification (equals greedy target decoding)"));
    add_threads_option(s, sp->threads);
    add_kernels_option(s, sp->kernels);
    s->add_option("--weight-dtype", sp->weight_dtype,
                  tr("fp32 (default), bf16, int8 or int4: the weights target and draft read (each its own)"));
    s->add_option("--cost-ratio", sp->cost_ratio, tr("draft/target cost for a predicted speedup"));
    add_output_flags(*s, sp->flags, true);
    // One paragraph: the help formatter wraps it to the width.
    s->footer(examples_footer({"inferlab model speculate --model demo-gqa --gamma 4 --seed 1 --steps 200"},
                              tr(N_("JSON keys: target, draft, gamma, weight_dtype, quantized_arithmetic (null: not int8/int4), tokens, tokens_generated, tokens_produced, rounds, "
                                    "target_forward_passes, draft_forward_passes, drafts_discarded, acceptance_rate, "
                                    "predicted_acceptance_rate, acceptance_interval_99 ([low, high]), within_interval (null: "
                                    "too few judged), tokens_per_round, "
                                    "predicted_tokens_per_round, predicted_speedup (null without --cost-ratio), "
                                    "per_position[]{position, judged, accepted, empirical, predicted} (null: none judged)."))));
    s->callback([sp, s] { run_speculate(*sp, *s); });
}

void setup_kv_quant(CLI::App* model) {
    auto kq = std::make_shared<KvQuantOptions>();
    CLI::App* q = model->add_subcommand(
        "kv-quant", tr("The model with an int8/int4 KV cache: logit error, greedy agreement, bytes per token"));
    add_source(q, kq->src);
    q->add_option("--bits", kq->bits, tr("8 (default) or 4"));
    q->add_option("--scheme", kq->scheme, tr("kivi (K per channel, V per token; default) or per-token"));
    add_former_spelling(q, q->add_option("--group-size", kq->group, tr("KIVI's token group for K scales (default 32)")), "--group",
                        kq->group);
    add_former_spelling(q, q->add_option("--positions", kq->tokens, tr("positions compared (default 128)")), "--tokens", kq->tokens);
    add_former_spelling(q, q->add_option("--steps", kq->gen, tr("greedy tokens generated with each cache (default 100; 0: none)")),
                        "--gen", kq->gen);
    q->add_option("--prompt", kq->prompt, tr("prompt of that generation (default 1,2,3,4)"));
    add_kernels_option(q, kq->kernels);
    q->add_option("--weight-dtype", kq->weight_dtype,
                  tr("fp32 (default), bf16, int8 or int4: the weights of the model both caches serve"));
    add_output_flags(*q, kq->flags);
    q->footer(examples_footer({"inferlab model kv-quant --model demo-gqa --bits 8 --scheme per-token"},
                              tr(N_("JSON keys: model, bits, scheme, group_tokens, weight_dtype, quantized_arithmetic (null: not int8/int4), positions, "
                                    "max_abs_logit_error, max_kl, mean_kl, greedy_agreement, generated, "
                                    "greedy_first_divergence (null: none), bytes_per_token_measured, "
                                    "bytes_per_token_kv_mem, bytes_per_token_fp32."))));
    q->callback([kq, q] { run_kv_quant(*kq, *q); });
}

void setup_roofline(CLI::App* model) {
    auto ro = std::make_shared<RooflineCli>();
    CLI::App* rf = model->add_subcommand("roofline", tr("decode-roofline's bound beside the reference model's measured decode"));
    add_source(rf, ro->src);
    add_former_spelling(rf, rf->add_option("--batch", ro->batches, tr("batch sizes (default 1,8)")), "--batches", ro->batches);
    rf->add_option("--contexts", ro->contexts, tr("cached tokens per sequence (default 64)"));
    add_threads_option(rf, ro->threads);
    add_kernels_option(rf, ro->kernels);
    rf->add_option("--weight-dtype", ro->weight_dtype, tr("fp32 (default), bf16, int8 or int4: the weights each timed step reads"));
    rf->add_option("--probe-mib", ro->probe_mib, tr("bandwidth probe buffer in MiB (default 512)"));
    rf->add_option("--repeats", ro->repeats, tr("timed steps per row, best kept (default 3)"));
    add_output_flags(*rf, ro->flags, true);
    rf->footer(examples_footer({"inferlab model roofline --model ref-110m --batch 1,8"},
                               tr(N_("JSON keys: model, measured_read_gbs, measured_batch_product_gflops, threads, "
                                     "weight_dtype, quantized_arithmetic (null: not int8/int4), last_level_cache_bytes (null: unknown), fits_in_last_level_cache, "
                                     "rows[]{seq_len, batch, bytes_per_step, predicted_aggregate_tokens_per_s, "
                                     "predicted_per_request_tokens_per_s, measured_aggregate_tokens_per_s, "
                                     "measured_per_request_tokens_per_s, ratio, with_compute_aggregate_tokens_per_s, "
                                     "compute_bound}."))));
    rf->callback([ro, rf] { run_roofline(*ro, *rf); });
}

}  // namespace

void setup_model_measure(CLI::App* model) {
    setup_speculate(model);
    setup_kv_quant(model);
    setup_roofline(model);
}

}  // namespace inferlab::app
