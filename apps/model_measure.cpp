// inferlab model speculate | kv-quant | roofline: each calculator's prediction beside what the
// reference model does on this machine. The experiments live in lib (model/measure.hpp); this
// file declares the options, parses them, calls one library function per command and prints
// its result.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "common.hpp"
#include "inferlab/error.hpp"
#include "inferlab/model/measure.hpp"
#include "inferlab/units.hpp"
#include "model_common.hpp"
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
    std::string target, draft;  // descriptions
    int target_layers = 0;
};

Table speculate_table(const SpeculateStats& s, const char* missing = "-") {
    Table t{{"draft position", "judged", "accepted", "empirical α", "predicted Σ min(p, q)"}, {}, {}};
    for (const auto& p : s.per_position)
        t.rows.push_back({std::to_string(p.position), std::to_string(p.judged), std::to_string(p.accepted),
                          opt_text(p.empirical, missing), opt_text(p.predicted, missing)});
    return t;
}

nlohmann::json speculate_json(const SpeculateSetup& su, const SpeculateOptions& so, const SpeculateExperiment& e,
                              WeightDtype wdt) {
    const SpeculateResult& r = e.run;
    const SpeculateStats& s = e.stats;
    nlohmann::json j = {{"target", su.target}, {"draft", su.draft}, {"gamma", so.gamma}, {"weight_dtype", to_string(wdt)},
                        {"tokens", r.tokens}, {"tokens_generated", r.tokens.size()}, {"rounds", r.rounds},
                        {"target_forward_passes", r.target_passes}, {"draft_forward_passes", r.draft_passes},
                        {"drafts_discarded", r.drafts_discarded}, {"acceptance_rate", s.acceptance_rate},
                        {"predicted_acceptance_rate", s.predicted_acceptance_rate},
                        {"acceptance_interval_99", s.interval_half_width_99}, {"within_interval", s.within_interval},
                        {"tokens_per_round", s.tokens_per_round}, {"predicted_tokens_per_round", s.predicted_tokens_per_round},
                        {"predicted_speedup", opt_json(s.predicted_speedup)}, {"per_position", nlohmann::json::array()}};
    for (const auto& p : s.per_position)
        j["per_position"].push_back({{"position", p.position}, {"judged", p.judged}, {"accepted", p.accepted},
                                     {"empirical", opt_json(p.empirical)}, {"predicted", opt_json(p.predicted)}});
    return j;
}

std::string speculate_text(const SpeculateSetup& su, const SpeculateOptions& so, const SpeculateExperiment& e,
                           std::optional<double> cost) {
    const SpeculateResult& r = e.run;
    const SpeculateStats& s = e.stats;
    std::string h = fmt::format("Speculative decoding, γ = {}, {} (sample seed {})\n", so.gamma,
                                so.sampling.greedy ? "greedy" : fmt::format("temperature {}", format_real(so.sampling.temperature)),
                                so.seed);
    h += fmt::format("  target: {} ({})\n  draft:  {}\n", su.target, count_noun(su.target_layers, "layer"), su.draft);
    h += fmt::format("  {} in {}: {}, {}, {} discarded\n", count_noun(r.tokens.size(), "token"), count_noun(r.rounds, "round"),
                     count_noun(r.target_passes, "target forward pass", "target forward passes"),
                     count_noun(r.draft_passes, "draft forward pass", "draft forward passes"), count_noun(r.drafts_discarded, "draft"));
    h = prose(h) + render_table(speculate_table(s));
    std::string t = fmt::format("  acceptance rate {:.4f} against spec-accept's Σ min(p, q) = {:.4f} (99% interval ±{:.4f}: {})\n",
                     s.acceptance_rate, s.predicted_acceptance_rate, s.interval_half_width_99,
                     s.within_interval ? "inside" : "OUTSIDE");
    t += fmt::format("  tokens per target pass {:.3f} against (1 − α^(γ+1))/(1 − α) = {:.3f} at that α\n", s.tokens_per_round,
                     s.predicted_tokens_per_round);
    if (s.predicted_speedup)
        t += fmt::format("  predicted speedup at draft/target cost {}: {:.3f}\n", format_real(*cost), *s.predicted_speedup);
    return h + prose(t);
}

void run_speculate(const SpeculateOptionsCli& o, const CLI::App& sub) {
    refuse_both(sub, "--steps", "--tokens");
    refuse_sampling_flags_when_greedy(sub, o.greedy || parse_temperature(o.temperature) == 0,
                                      o.greedy ? "--greedy" : "--temperature 0");
    if (o.greedy && sub.count("--temperature") > 0)
        throw InputError("--temperature", o.temperature, "has no effect with --greedy (greedy: the argmax)");
    SpeculateSetup su;
    auto tw = load(o.src, &su.target);
    const Dims& td = tw->dims();
    su.target_layers = td.n_layers;
    const int layers = o.draft_layers.empty() ? std::max(1, td.n_layers / 2)
                                              : static_cast<int>(parse_positive_int_at_most("--draft-layers", o.draft_layers, INT32_MAX, ""));
    const double perturb = parse_real("--perturb", o.perturb);
    std::unique_ptr<Weights> dw;
    try {
        dw = derive_draft(*tw, layers, perturb, parse_nonnegative_int("--draft-seed", o.draft_seed));
    } catch (const InputError& e) {  // the library's terms, said again in this command's flags, values as typed
        if (e.where() == "draft layers") throw InputError("--draft-layers", o.draft_layers.empty() ? e.value() : o.draft_layers, e.rule());
        if (e.where() == "perturbation") throw InputError("--perturb", o.perturb, e.rule());
        throw;
    }
    su.draft = fmt::format("first {} of {} layers, weights × (1 + {}·N(0,1))", layers, td.n_layers, format_real(perturb));
    SpeculateOptions so;
    so.gamma = static_cast<int>(parse_positive_int_at_most("--gamma", o.gamma, 64, ""));
    const auto prompt = parse_token_list("--prompt", o.prompt, td);
    so.new_tokens = parse_token_count("--steps", o.tokens, prompt.size(), static_cast<std::uint64_t>(td.seq_len));
    so.sampling = parse_sampling(o.greedy, o.temperature, o.top_k, o.top_p);
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
    rep.json = speculate_json(su, so, e, wdt);
    rep.human = speculate_text(su, so, e, cost);
    rep.explain = rep.human + "\n" +
                  prose("Acceptance follows spec-accept's rule on the two models' actual next-token distributions at each "
                        "position; the prediction Σ_x min(p(x), q(x)) is computed from those same distributions.\n");
    rep.add_table("positions", speculate_table(e.stats, ""));
    emit(rep, o.flags);
}

// ---- kv-quant ----
struct KvQuantOptions {
    ModelSource src;
    std::string bits = "8", scheme = "kivi", group = "32", tokens = "128", gen = "100", prompt = "1,2,3,4";
    std::string kernels, weight_dtype = "fp32";
    OutputFlags flags;
};

std::string kv_quant_text(const std::string& what, const KvQuantExperiment& e, const KvQuantResult& r, WeightDtype wdt) {
    std::string h = fmt::format(
        "KV cache at int{} ({}) on {}; weights {} for both caches\n", e.bits,
        e.scheme == KvQuantScheme::Kivi ? fmt::format("KIVI: K per channel over groups of {} tokens, V per token", e.group_tokens)
                                        : "per token for K and V",
        what, to_string(wdt));
    h += fmt::format("  over {} positions: max |logit error| {:.3e}; KL(float ‖ quantized) mean {:.3e}, max {:.3e}; greedy "
                     "next token agrees at {}/{} positions\n",
                     r.positions, r.max_abs_logit_error, r.mean_kl, r.max_kl, r.greedy_agree, r.positions);
    h += r.first_divergence
             ? fmt::format("  greedy generation: parts from the float32 cache at generated token {}\n", *r.first_divergence)
             : fmt::format("  greedy generation of {} tokens: identical to the float32 cache\n", r.generated);
    h += fmt::format("  bytes per token: {} B stored ({} B at float32); kv-mem's int{} figure with one fp16 scale per head "
                     "vector: {} B{}\n",
                     r.bytes_per_token_measured, r.bytes_per_token_fp32, e.bits, r.bytes_per_token_kv_mem,
                     r.bytes_per_token_measured == r.bytes_per_token_kv_mem ? " (equal)"
                                                                            : " (KIVI's per-channel K scales differ in count)");
    return prose(h);
}

void run_kv_quant(const KvQuantOptions& o, const CLI::App& sub) {
    refuse_both(sub, "--group-size", "--group");
    refuse_both(sub, "--positions", "--tokens");
    refuse_both(sub, "--steps", "--gen");
    std::string what;
    auto w = load(o.src, &what);
    const Dims& d = w->dims();
    KvQuantExperiment e;
    e.bits = parse_bits(o.bits, {8, 4});
    if (o.scheme == "kivi") e.scheme = KvQuantScheme::Kivi;
    else if (o.scheme == "per-token") e.scheme = KvQuantScheme::PerToken;
    else throw InputError("--scheme", o.scheme, "must be kivi (K per channel, V per token) or per-token");
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
    Report rep;
    rep.json = {{"model", what}, {"bits", e.bits}, {"scheme", o.scheme}, {"group_tokens", e.group_tokens},
                {"weight_dtype", to_string(wdt)}, {"positions", r.positions}, {"max_abs_logit_error", r.max_abs_logit_error},
                {"max_kl", r.max_kl}, {"mean_kl", r.mean_kl}, {"greedy_agreement", r.greedy_agreement},
                {"generated", r.generated},
                {"greedy_first_divergence", r.first_divergence ? nlohmann::json(*r.first_divergence) : nlohmann::json(nullptr)},
                {"bytes_per_token_measured", r.bytes_per_token_measured}, {"bytes_per_token_kv_mem", r.bytes_per_token_kv_mem},
                {"bytes_per_token_fp32", r.bytes_per_token_fp32}};
    rep.human = kv_quant_text(what, e, r, wdt);
    rep.explain = rep.human;
    emit(rep, o.flags);
}

// ---- roofline ----
struct RooflineCli {
    ModelSource src;
    std::string batches = "1,8", contexts = "64", threads = "1", probe_mib = "512", repeats = "3", kernels, weight_dtype = "fp32";
    OutputFlags flags;
};

// Text shows bytes in every unit; CSV (`csv`) the exact count, the unit in the header.
Table roofline_table(const RooflineResult& r, bool csv = false) {
    Table t{{"S", "batch", csv ? "bytes/step (B)" : "bytes/step", "predicted agg tok/s", "measured agg tok/s", "measured/predicted",
             "measured per-request tok/s", "with π: agg tok/s", "bound is"},
            {}, {}};
    for (const auto& w : r.rows)
        t.rows.push_back({std::to_string(w.seq_len), std::to_string(w.batch),
                          csv ? std::to_string(w.bytes_per_step) : bytes_all_units(w.bytes_per_step),
                          fmt::format("{:.2f}", w.predicted_aggregate_tokens_per_s), fmt::format("{:.2f}", w.measured_aggregate_tokens_per_s),
                          fmt::format("{:.2f}", w.ratio), fmt::format("{:.2f}", w.measured_per_request_tokens_per_s),
                          fmt::format("{:.2f}", w.with_compute_aggregate_tokens_per_s), w.compute_bound ? "compute" : "memory"});
    return t;
}

nlohmann::json roofline_json(const std::string& what, const RooflineResult& r, int threads, WeightDtype wdt) {
    nlohmann::json j = {{"model", what}, {"measured_read_gbs", r.bandwidth.read_gbs},
                        {"measured_batch_product_gflops", r.batch_product_gflops}, {"threads", threads},
                        {"weight_dtype", to_string(wdt)}, {"rows", nlohmann::json::array()},
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

std::string roofline_text(const std::string& what, const RooflineResult& r, int threads) {
    std::string h = fmt::format("The first document's read-volume bound on this machine: {} ({})\n  β = {:.2f} GB/s measured "
                                "(STREAM-style read, huge pages {}); D_B = W + B·M_KV with W = {} read per step\n"
                                "  π = {:.2f} GFLOP/s measured (the decode kernel on cached weights) for the \"with π\" bound "
                                "max(D_B/β, F_B/π)\n",
                                what, count_noun(static_cast<std::uint64_t>(threads), "thread"), r.bandwidth.read_gbs,
                                r.bandwidth.huge_pages ? "on" : "refused", bytes_all_units(r.weight_bytes), r.batch_product_gflops);
    h = prose(h) + render_table(roofline_table(r));
    std::string t;
    if (r.fits_in_last_level_cache.value_or(false))
        t += fmt::format("  Not a bound here: every step reads at most {}, which fits this machine's last-level cache "
                         "({}), so it reads from cache, not DRAM; the DRAM read-volume bound does not apply.\n",
                         bytes_all_units(r.max_step_bytes), bytes_all_units(*r.last_level_cache_bytes));
    t += "  The read-volume bound counts bytes only: where measured falls well below it and the \"with π\" bound is "
         "compute, arithmetic (FLOPs), not reading, limits the step.\n";
    return h + prose(t);
}

void run_roofline(const RooflineCli& o, const CLI::App& sub) {
    refuse_both(sub, "--batch", "--batches");
    std::string what;
    auto w = load(o.src, &what);
    RooflineExperiment e;
    const int threads = parse_threads(o.threads);
    e.dtype = parse_weight_dtype("--weight-dtype", o.weight_dtype);
    const WeightsAt at = weights_at(*w, e.dtype, threads);
    CpuBackend cpu(cpu_backend_options(threads, o.kernels, &at));  // every timed step reads the weights at this dtype
    const Transformer m(*w, cpu);
    e.repeats = static_cast<int>(parse_positive_int_at_most("--repeats", o.repeats, INT32_MAX, ""));
    e.batches = parse_int_list_or_range("--batch", o.batches, 32);
    e.contexts = parse_int_list_or_range("--contexts", o.contexts, 16);
    e.probe_bytes = parse_positive_int("--probe-mib", o.probe_mib) << 20;
    const RooflineResult r = run_roofline(m, e);
    Report rep;
    rep.json = roofline_json(what, r, threads, e.dtype);
    rep.human = roofline_text(what, r, threads);
    rep.explain = rep.human;
    rep.add_table("rows", roofline_table(r, true));
    emit(rep, o.flags);
}

void setup_speculate(CLI::App* model) {
    auto sp = std::make_shared<SpeculateOptionsCli>();
    CLI::App* s = model->add_subcommand("speculate", "Speculative decoding with a draft derived from the target: measured against spec-accept");
    add_source(s, sp->src);
    s->add_option("--gamma", sp->gamma, "drafts per round (default 4)");
    add_former_spelling(s, s->add_option("--steps", sp->tokens, "tokens to generate (default 64)"), "--tokens", sp->tokens);
    s->add_option("--prompt", sp->prompt, "prompt token ids (default 1,2,3,4)");
    s->add_option("--draft-layers", sp->draft_layers, "the draft's layers: the target's first N (default half)");
    s->add_option("--perturb", sp->perturb, "relative noise on the draft's weights (default 0.05; dials acceptance)");
    s->add_option("--draft-seed", sp->draft_seed, "seed of that noise (default 2)");
    add_sample_seed(s, sp->sample_seed);
    s->add_option("--temperature", sp->temperature, "sampling temperature (default 1, 0 = greedy as --greedy)")
        ->check(rule(parse_temperature));
    s->add_option("--top-k", sp->top_k, "top-k (0: off)")
        ->check(rule(parse_top_k));
    s->add_option("--top-p", sp->top_p, "top-p (1: off)")
        ->check(rule(parse_top_p));
    s->add_flag("--greedy", sp->greedy, "greedy drafts and verification (equals greedy target decoding)");
    add_threads_option(s, sp->threads);
    add_kernels_option(s, sp->kernels);
    s->add_option("--weight-dtype", sp->weight_dtype,
                  "fp32 (default), bf16, int8 or int4: the weights target and draft read (each its own)");
    s->add_option("--cost-ratio", sp->cost_ratio, "draft/target cost for a predicted speedup");
    add_output_flags(*s, sp->flags, true);
    s->footer(examples_footer({"inferlab model speculate --model demo-gqa --gamma 4 --seed 1 --steps 200"},
                              "JSON keys: target, draft, gamma, weight_dtype, tokens, tokens_generated, rounds,\n"
                              "target_forward_passes, draft_forward_passes, drafts_discarded, acceptance_rate,\n"
                              "predicted_acceptance_rate, acceptance_interval_99, within_interval, tokens_per_round,\n"
                              "predicted_tokens_per_round, predicted_speedup (null without --cost-ratio),\n"
                              "per_position[]{position, judged, accepted, empirical, predicted} (null: none judged)."));
    s->callback([sp, s] { run_speculate(*sp, *s); });
}

void setup_kv_quant(CLI::App* model) {
    auto kq = std::make_shared<KvQuantOptions>();
    CLI::App* q = model->add_subcommand("kv-quant", "The model with an int8/int4 KV cache: logit error, greedy agreement, bytes per token");
    add_source(q, kq->src);
    q->add_option("--bits", kq->bits, "8 (default) or 4");
    q->add_option("--scheme", kq->scheme, "kivi (K per channel, V per token; default) or per-token");
    add_former_spelling(q, q->add_option("--group-size", kq->group, "KIVI's token group for K scales (default 32)"), "--group", kq->group);
    add_former_spelling(q, q->add_option("--positions", kq->tokens, "positions compared (default 128)"), "--tokens", kq->tokens);
    add_former_spelling(q, q->add_option("--steps", kq->gen, "greedy tokens generated with each cache (default 100; 0: none)"), "--gen",
                        kq->gen);
    q->add_option("--prompt", kq->prompt, "prompt of that generation (default 1,2,3,4)");
    add_kernels_option(q, kq->kernels);
    q->add_option("--weight-dtype", kq->weight_dtype, "fp32 (default), bf16, int8 or int4: the weights of the model both caches serve");
    add_output_flags(*q, kq->flags);
    q->footer(examples_footer({"inferlab model kv-quant --model demo-gqa --bits 8 --scheme per-token"},
                              "JSON keys: model, bits, scheme, group_tokens, weight_dtype, positions,\n"
                              "max_abs_logit_error, max_kl, mean_kl, greedy_agreement, generated,\n"
                              "greedy_first_divergence (null: none), bytes_per_token_measured,\n"
                              "bytes_per_token_kv_mem, bytes_per_token_fp32."));
    q->callback([kq, q] { run_kv_quant(*kq, *q); });
}

void setup_roofline(CLI::App* model) {
    auto ro = std::make_shared<RooflineCli>();
    CLI::App* rf = model->add_subcommand("roofline", "decode-roofline's bound beside the reference model's measured decode");
    add_source(rf, ro->src);
    add_former_spelling(rf, rf->add_option("--batch", ro->batches, "batch sizes (default 1,8)"), "--batches", ro->batches);
    rf->add_option("--contexts", ro->contexts, "cached tokens per sequence (default 64)");
    add_threads_option(rf, ro->threads);
    add_kernels_option(rf, ro->kernels);
    rf->add_option("--weight-dtype", ro->weight_dtype, "fp32 (default), bf16, int8 or int4: the weights each timed step reads");
    rf->add_option("--probe-mib", ro->probe_mib, "bandwidth probe buffer in MiB (default 512)");
    rf->add_option("--repeats", ro->repeats, "timed steps per row, best kept (default 3)");
    add_output_flags(*rf, ro->flags, true);
    rf->footer(examples_footer({"inferlab model roofline --model ref-110m --batch 1,8"},
                               "JSON keys: model, measured_read_gbs, measured_batch_product_gflops, threads,\n"
                               "weight_dtype, last_level_cache_bytes (null: unknown), fits_in_last_level_cache,\n"
                               "rows[]{seq_len, batch, bytes_per_step, predicted_aggregate_tokens_per_s, predicted_per_request_tokens_per_s,\n"
                               "measured_aggregate_tokens_per_s, measured_per_request_tokens_per_s, ratio,\n"
                               "with_compute_aggregate_tokens_per_s, compute_bound}."));
    rf->callback([ro, rf] { run_roofline(*ro, *rf); });
}

}  // namespace

void setup_model_measure(CLI::App* model) {
    setup_speculate(model);
    setup_kv_quant(model);
    setup_roofline(model);
}

}  // namespace inferlab::app
