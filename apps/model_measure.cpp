// inferlab model speculate | kv-quant | roofline: each calculator's prediction beside what the
// reference model does on this machine.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "common.hpp"
#include "inferlab/error.hpp"
#include "inferlab/model/bench.hpp"
#include "inferlab/model/qweights.hpp"
#include "inferlab/model/quant_cache.hpp"
#include "inferlab/model/speculative.hpp"
#include "inferlab/quant.hpp"
#include "inferlab/rng.hpp"
#include "inferlab/roofline.hpp"
#include "inferlab/spec.hpp"
#include "inferlab/stats.hpp"
#include "inferlab/units.hpp"
#include "model_common.hpp"
#include "options.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

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
    bool greedy = false;
    OutputFlags flags;
};

void run_speculate(const SpeculateOptionsCli& o) {
    std::string what;
    auto tw = load(o.src, &what);
    const Dims& td = tw->dims();
    const int layers = o.draft_layers.empty() ? std::max(1, td.n_layers / 2) : static_cast<int>(parse_positive_int_at_most("--draft-layers", o.draft_layers, INT32_MAX, ""));
    const double perturb = parse_real("--perturb", o.perturb);
    auto dw = derive_draft(*tw, layers, perturb, parse_nonnegative_int("--draft-seed", o.draft_seed));
    Transformer target(*tw), draft(*dw);
    SpeculateOptions so;
    so.gamma = static_cast<int>(parse_positive_int_at_most("--gamma", o.gamma, INT32_MAX, ""));
    auto prompt = parse_token_list("--prompt", o.prompt, td);
    so.new_tokens = parse_token_count("--tokens", o.tokens, prompt.size(), static_cast<std::uint64_t>(td.seq_len));
    so.sampling = parse_sampling(o.greedy, o.temperature, o.top_k, o.top_p);
    so.seed = parse_nonnegative_int("--sample-seed", o.sample_seed);
    so.forward.threads = parse_threads(o.threads);
    so.forward.kernels = kernels_option(o.kernels);
    SpeculateResult r = speculative_generate(target, draft, prompt, so);

    std::uint64_t judged = 0, accepted = 0;
    double predicted = 0;
    for (int i = 0; i < so.gamma; ++i) {
        judged += r.judged[std::size_t(i)];
        accepted += r.accepted[std::size_t(i)];
        predicted += r.predicted_accept[std::size_t(i)];
    }
    const double alpha_emp = judged ? double(accepted) / double(judged) : 0;
    const double alpha_pred = judged ? predicted / double(judged) : 0;
    // 99% interval of the empirical rate (normal approximation of a binomial proportion).
    const double half = proportion_half_width_99(alpha_pred, double(judged));
    const double tokens_per_pass = double(r.tokens.size()) / double(r.rounds);
    const double expected = expected_tokens_per_round(alpha_pred, std::size_t(so.gamma));
    Report rep;
    auto& j = rep.json;
    j = {{"target", what},
         {"draft", fmt::format("first {} of {} layers, weights × (1 + {}·N(0,1))", layers, td.n_layers, format_real(perturb))},
         {"gamma", so.gamma},
         {"tokens", r.tokens},
         {"tokens_generated", r.tokens.size()},
         {"rounds", r.rounds},
         {"target_forward_passes", r.target_passes},
         {"draft_forward_passes", r.draft_passes},
         {"drafts_discarded", r.drafts_discarded},
         {"acceptance_rate", alpha_emp},
         {"predicted_acceptance_rate", alpha_pred},
         {"acceptance_interval_99", half},
         {"within_interval", std::fabs(alpha_emp - alpha_pred) <= half},
         {"tokens_per_round", tokens_per_pass},
         {"predicted_tokens_per_round", expected},
         {"per_position", nlohmann::json::array()}};
    Table t{{"draft position", "judged", "accepted", "empirical α", "predicted Σ min(p, q)"}, {}, {}};
    for (int i = 0; i < so.gamma; ++i) {
        const double n = double(r.judged[std::size_t(i)]);
        const bool any = r.judged[std::size_t(i)] > 0;
        const double e = any ? double(r.accepted[std::size_t(i)]) / n : 0, p = any ? r.predicted_accept[std::size_t(i)] / n : 0;
        t.rows.push_back({std::to_string(i + 1), std::to_string(r.judged[std::size_t(i)]), std::to_string(r.accepted[std::size_t(i)]),
                          any ? fmt::format("{:.4f}", e) : "-", any ? fmt::format("{:.4f}", p) : "-"});
        j["per_position"].push_back({{"position", i + 1}, {"judged", r.judged[std::size_t(i)]}, {"accepted", r.accepted[std::size_t(i)]},
                                     {"empirical", e}, {"predicted", p}});
    }
    std::string& h = rep.human;
    h += fmt::format("Speculative decoding on the reference model, γ = {}, {} (sample seed {})\n", so.gamma,
                     so.sampling.greedy ? "greedy" : fmt::format("temperature {}", format_real(so.sampling.temperature)), so.seed);
    h += fmt::format("  target: {} ({})\n  draft:  {}\n", what, count_noun(td.n_layers, "layer"), j["draft"].get<std::string>());
    h += fmt::format("  {} in {}: {}, {}, {} discarded\n", count_noun(r.tokens.size(), "token"),
                     count_noun(r.rounds, "round"), count_noun(r.target_passes, "target forward pass", "target forward passes"),
                     count_noun(r.draft_passes, "draft forward pass", "draft forward passes"),
                     count_noun(r.drafts_discarded, "draft"));
    h += render_table(t);
    h += fmt::format("  acceptance rate {:.4f} against spec-accept's Σ min(p, q) = {:.4f} (99% interval ±{:.4f}: {})\n", alpha_emp,
                     alpha_pred, half, std::fabs(alpha_emp - alpha_pred) <= half ? "inside" : "OUTSIDE");
    h += fmt::format("  tokens per target pass {:.3f} against (1 − α^(γ+1))/(1 − α) = {:.3f} at that α\n", tokens_per_pass, expected);
    if (!o.cost_ratio.empty()) {
        const double c = parse_positive_real("--cost-ratio", o.cost_ratio);
        j["predicted_speedup"] = speedup(alpha_pred, std::size_t(so.gamma), c);
        h += fmt::format("  predicted speedup at draft/target cost {}: {:.3f}\n", format_real(c), speedup(alpha_pred, std::size_t(so.gamma), c));
    }
    rep.explain = h + "\nAcceptance follows spec-accept's rule on the two models' actual next-token distributions at each\n"
                      "position; the prediction Σ_x min(p(x), q(x)) is computed from those same distributions.\n";
    rep.add_table("positions", t);
    emit(rep, o.flags);
}

// ---- kv-quant ----
struct KvQuantOptions {
    ModelSource src;
    std::string bits = "8", scheme = "kivi", group = "32", tokens = "128", gen = "100", prompt = "1,2,3,4";
    std::string kernels, weight_dtype = "fp32";
    OutputFlags flags;
};

void run_kv_quant(const KvQuantOptions& o) {
    std::string what;
    auto w = load(o.src, &what);
    Transformer m(*w);
    const Dims& d = w->dims();
    const unsigned bits = parse_bits(o.bits, {8, 4});
    KvQuantScheme scheme;
    if (o.scheme == "kivi") scheme = KvQuantScheme::Kivi;
    else if (o.scheme == "per-token") scheme = KvQuantScheme::PerToken;
    else throw InputError("--scheme", o.scheme, "must be kivi (K per channel, V per token) or per-token");
    const int group = static_cast<int>(parse_positive_int_at_most("--group", o.group, INT32_MAX, ""));
    const int n = parse_token_count("--tokens", o.tokens, 0, static_cast<std::uint64_t>(d.seq_len));
    std::vector<int> tokens;
    Rng rng(parse_nonnegative_int("--seed", o.src.seed) + 77);
    for (int i = 0; i < n; ++i) tokens.push_back(static_cast<int>(rng.below(std::uint64_t(d.vocab_size))));
    // Both caches are read by the same model: the weights at --weight-dtype, the same kernels.
    ForwardOptions opt;
    opt.kernels = kernels_option(o.kernels);
    const WeightsAt at = make_weights_at(*w, parse_weight_dtype("--weight-dtype", o.weight_dtype), 1);
    at.apply(opt);
    ContiguousCache fc(d);
    QuantizedCache qc(d, bits, scheme, group);
    // Token by token, so each step reads a cache that is already quantized.
    MatrixRM lf(n, d.vocab_size), lq(n, d.vocab_size);
    for (int i = 0; i < n; ++i) {
        lf.row(i) = m.forward(std::vector<int>{tokens[std::size_t(i)]}, fc, opt).row(0);
        lq.row(i) = m.forward(std::vector<int>{tokens[std::size_t(i)]}, qc, opt).row(0);
    }
    double max_abs = 0, max_kl = 0, mean_kl = 0;
    int agree = 0;
    Sampling plain;
    for (int i = 0; i < n; ++i) {
        max_abs = std::max(max_abs, double((lf.row(i) - lq.row(i)).cwiseAbs().maxCoeff()));
        const double kl = kl_divergence(sampling_distribution(lf, i, plain), sampling_distribution(lq, i, plain));
        max_kl = std::max(max_kl, kl);
        mean_kl += kl / n;
        Eigen::Index a = 0, b = 0;
        lf.row(i).maxCoeff(&a);
        lq.row(i).maxCoeff(&b);
        agree += a == b;
    }
    // Greedy generation: where (if anywhere) the quantized cache parts from float32.
    auto prompt = parse_token_list("--prompt", o.prompt, d);
    const int gen = parse_token_count("--gen", o.gen, prompt.size(), static_cast<std::uint64_t>(d.seq_len), false);
    ContiguousCache gf(d);
    QuantizedCache gq(d, bits, scheme, group);
    int first_diff = -1;
    MatrixRM a = m.forward(prompt, gf, opt), b = m.forward(prompt, gq, opt);
    for (int i = 0; i < gen; ++i) {
        Eigen::Index ta = 0, tb = 0;
        a.row(a.rows() - 1).maxCoeff(&ta);
        b.row(b.rows() - 1).maxCoeff(&tb);
        if (ta != tb) {
            first_diff = i;
            break;
        }
        a = m.forward(std::vector<int>{int(ta)}, gf, opt);
        b = m.forward(std::vector<int>{int(tb)}, gq, opt);
    }
    // Bytes per token: measured from the cache's storage, and kv-mem's figure with metadata.
    const std::uint64_t measured = qc.bytes_per_token();
    const KvSpec spec = uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), bits);
    const KvQuantBytes formula = kv_quantized_bytes(spec, {1}, bits, std::uint64_t(d.head_dim()), 16, 0);
    const std::uint64_t f32 = bytes_per_token(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32));
    Report r;
    r.json = {{"model", what},          {"bits", bits},
              {"scheme", o.scheme},     {"group_tokens", group},
              {"positions", n},         {"max_abs_logit_error", max_abs},
              {"max_kl", max_kl},       {"mean_kl", mean_kl},
              {"greedy_agreement", double(agree) / n},
              {"generated", gen},       {"greedy_first_divergence", first_diff < 0 ? nlohmann::json(nullptr) : nlohmann::json(first_diff)},
              {"bytes_per_token_measured", measured}, {"bytes_per_token_kv_mem", formula.bytes_per_token},
              {"bytes_per_token_fp32", f32}};
    std::string& h = r.human;
    h += fmt::format("KV cache at int{} ({}) on {}; weights {} for both caches\n", bits,
                     scheme == KvQuantScheme::Kivi ? fmt::format("KIVI: K per channel over groups of {} tokens, V per token", group)
                                                   : "per token for K and V",
                     what, to_string(at.dtype));
    h += fmt::format("  over {} positions: max |logit error| {:.3e}; KL(float ‖ quantized) mean {:.3e}, max {:.3e}; greedy "
                     "next token agrees at {}/{} positions\n",
                     n, max_abs, mean_kl, max_kl, agree, n);
    h += first_diff < 0 ? fmt::format("  greedy generation of {} tokens: identical to the float32 cache\n", gen)
                        : fmt::format("  greedy generation: parts from the float32 cache at generated token {}\n", first_diff);
    h += fmt::format("  bytes per token: {} B stored ({} B at float32); kv-mem's int{} figure with one fp16 scale per head "
                     "vector: {} B{}\n",
                     measured, f32, bits, formula.bytes_per_token,
                     measured == formula.bytes_per_token ? " (equal)" : " (KIVI's per-channel K scales differ in count)");
    r.explain = h;
    emit(r, o.flags);
}

// ---- roofline ----
struct RooflineCli {
    ModelSource src;
    std::string batches = "1,8", contexts = "64", threads = "1", probe_mib = "512", repeats = "3", kernels, weight_dtype = "fp32";
    OutputFlags flags;
};

void run_roofline(const RooflineCli& o) {
    std::string what;
    auto w = load(o.src, &what);
    Transformer m(*w);
    const Dims& d = w->dims();
    ForwardOptions opt;
    opt.threads = parse_threads(o.threads);
    opt.kernels = kernels_option(o.kernels);
    const WeightDtype wdt = parse_weight_dtype("--weight-dtype", o.weight_dtype);
    const WeightsAt at = make_weights_at(*w, wdt, opt.threads);
    at.apply(opt);  // every timed step reads the weights at this dtype
    const int repeats = static_cast<int>(parse_positive_int_at_most("--repeats", o.repeats, INT32_MAX, ""));
    auto batches = parse_int_list_or_range("--batches", o.batches, 32);
    auto contexts = parse_int_list_or_range("--contexts", o.contexts, 16);
    BandwidthProbe bw = measure_read_bandwidth(parse_positive_int("--probe-mib", o.probe_mib) << 20, opt.threads, 5);
    const double pi = measure_batch_product_gflops(8, opt.threads, 3, weight_dtype_bits(wdt));
    DecodeModel dm = reference_decode_model(d, wdt);
    // The document's read-volume model counts bytes only; beside it, the same with this
    // machine's compute roof π, which is where batching stops being free.
    Machine hw;
    hw.bandwidth = bw.read_gbs * 1e9;
    const Machine with_pi = measured_machine(bw, pi);
    Report r;
    r.json = {{"model", what},
              {"measured_read_gbs", bw.read_gbs},
              {"measured_batch_product_gflops", pi},
              {"threads", opt.threads},
              {"weight_dtype", to_string(wdt)},
              {"rows", nlohmann::json::array()}};
    Table t{{"S", "batch", "bytes/step", "predicted agg tok/s", "measured agg tok/s", "measured/predicted", "measured per-request tok/s",
             "with π: agg tok/s", "bound is"},
            {}, {}};
    std::uint64_t max_step_bytes = 0;
    for (auto s : contexts)
        for (auto b : batches) {
            DecodeStep pred = decode_step(dm, std::vector<std::uint64_t>(b, s), hw);
            max_step_bytes = std::max(max_step_bytes, pred.bytes);
            DecodeStep full = decode_step(dm, std::vector<std::uint64_t>(b, s), with_pi);
            const double step = time_decode_step(m, int(b), int(s), repeats, opt);
            const double agg = double(b) / step;
            t.rows.push_back({std::to_string(s), std::to_string(b), bytes_all_units(pred.bytes), fmt::format("{:.2f}", pred.aggregate_tokens_per_s),
                              fmt::format("{:.2f}", agg), fmt::format("{:.2f}", agg / pred.aggregate_tokens_per_s), fmt::format("{:.2f}", 1 / step),
                              fmt::format("{:.2f}", full.aggregate_tokens_per_s), full.compute_bound ? "compute" : "memory"});
            r.json["rows"].push_back({{"seq_len", s}, {"batch", b}, {"bytes_per_step", pred.bytes},
                                      {"predicted_aggregate_tokens_per_s", pred.aggregate_tokens_per_s},
                                      {"predicted_per_request_tokens_per_s", pred.per_request_tokens_per_s},
                                      {"measured_aggregate_tokens_per_s", agg}, {"measured_per_request_tokens_per_s", 1 / step},
                                      {"ratio", agg / pred.aggregate_tokens_per_s},
                                      {"with_compute_aggregate_tokens_per_s", full.aggregate_tokens_per_s},
                                      {"compute_bound", full.compute_bound}});
        }
    r.human = fmt::format("The first document's read-volume bound on this machine: {} ({})\n  β = {:.2f} GB/s measured "
                          "(STREAM-style read, huge pages {}); D_B = W + B·M_KV with W = {} read per step\n"
                          "  π = {:.2f} GFLOP/s measured (the decode kernel on cached weights) for the \"with π\" bound max(D_B/β, F_B/π)\n",
                          what, count_noun(static_cast<std::uint64_t>(opt.threads), "thread"), bw.read_gbs,
                          bw.huge_pages ? "on" : "refused", bytes_all_units(dm.weight_bytes), pi);
    r.human += render_table(t);
    // A model that fits the last-level cache is read from cache, not DRAM: β (measured over a buffer
    // larger than the cache) does not bound its steps, and measured may exceed "predicted".
    const std::uint64_t llc = last_level_cache_bytes();
    r.json["last_level_cache_bytes"] = llc ? nlohmann::json(llc) : nlohmann::json(nullptr);
    r.json["fits_in_last_level_cache"] = llc ? nlohmann::json(max_step_bytes <= llc) : nlohmann::json(nullptr);
    if (llc && max_step_bytes <= llc)
        r.human += fmt::format("  Not a bound here: every step reads at most {}, which fits this machine's last-level cache\n"
                               "  ({}), so it reads from cache, not DRAM; the DRAM read-volume bound does not apply.\n",
                               bytes_all_units(max_step_bytes), bytes_all_units(llc));
    r.human += "  The read-volume bound counts bytes only: where measured falls well below it and the \"with π\" bound is\n"
               "  compute, arithmetic (FLOPs), not reading, limits the step.\n";
    r.explain = r.human;
    r.add_table("rows", t);
    emit(r, o.flags);
}

}  // namespace

void setup_model_measure(CLI::App* model) {
    auto sp = std::make_shared<SpeculateOptionsCli>();
    CLI::App* s = model->add_subcommand("speculate", "Speculative decoding with a draft derived from the target: measured against spec-accept");
    add_source(s, sp->src);
    s->add_option("--gamma", sp->gamma, "drafts per round (default 4)");
    s->add_option("--tokens", sp->tokens, "tokens to generate (default 64)");
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
    s->add_option("--cost-ratio", sp->cost_ratio, "draft/target cost for a predicted speedup");
    add_output_flags(*s, sp->flags, true);
    s->footer(examples_footer({"inferlab model speculate --model demo-gqa --gamma 4 --seed 1 --tokens 200"},
                              "JSON keys: tokens, rounds, target_forward_passes, draft_forward_passes, drafts_discarded,\n"
                              "acceptance_rate, predicted_acceptance_rate, acceptance_interval_99, within_interval, tokens_per_round,\n"
                              "predicted_tokens_per_round, per_position[]{position, judged, accepted, empirical, predicted}."));
    s->callback([sp] { run_speculate(*sp); });

    auto kq = std::make_shared<KvQuantOptions>();
    CLI::App* q = model->add_subcommand("kv-quant", "The model with an int8/int4 KV cache: logit error, greedy agreement, bytes per token");
    add_source(q, kq->src);
    q->add_option("--bits", kq->bits, "8 (default) or 4");
    q->add_option("--scheme", kq->scheme, "kivi (K per channel, V per token; default) or per-token");
    q->add_option("--group", kq->group, "KIVI's token group for K scales (default 32)");
    q->add_option("--tokens", kq->tokens, "positions compared (default 128)");
    q->add_option("--gen", kq->gen, "greedy tokens generated with each cache (default 100)");
    q->add_option("--prompt", kq->prompt, "prompt of that generation (default 1,2,3,4)");
    add_kernels_option(q, kq->kernels);
    q->add_option("--weight-dtype", kq->weight_dtype, "fp32 (default), bf16, int8 or int4: the weights of the model both caches serve");
    add_output_flags(*q, kq->flags);
    q->footer(examples_footer({"inferlab model kv-quant --model demo-gqa --bits 8 --scheme per-token"},
                              "JSON keys: max_abs_logit_error, mean_kl, max_kl, greedy_agreement, greedy_first_divergence (null: none),\n"
                              "bytes_per_token_measured, bytes_per_token_kv_mem, bytes_per_token_fp32."));
    q->callback([kq] { run_kv_quant(*kq); });

    auto ro = std::make_shared<RooflineCli>();
    CLI::App* rf = model->add_subcommand("roofline", "decode-roofline's bound beside the reference model's measured decode");
    add_source(rf, ro->src);
    rf->add_option("--batches", ro->batches, "batch sizes (default 1,8)");
    rf->add_option("--contexts", ro->contexts, "cached tokens per sequence (default 64)");
    add_threads_option(rf, ro->threads);
    add_kernels_option(rf, ro->kernels);
    rf->add_option("--weight-dtype", ro->weight_dtype, "fp32 (default), bf16, int8 or int4: the weights each timed step reads");
    rf->add_option("--probe-mib", ro->probe_mib, "bandwidth probe buffer in MiB (default 512)");
    rf->add_option("--repeats", ro->repeats, "timed steps per row, best kept (default 3)");
    add_output_flags(*rf, ro->flags, true);
    rf->footer(examples_footer({"inferlab model roofline --model ref-110m --batches 1,8"},
                               "JSON keys: measured_read_gbs, measured_batch_product_gflops, threads, rows[]{seq_len, batch,\n"
                               "bytes_per_step, predicted_aggregate_tokens_per_s, predicted_per_request_tokens_per_s,\n"
                               "measured_aggregate_tokens_per_s, measured_per_request_tokens_per_s, ratio,\n"
                               "with_compute_aggregate_tokens_per_s, compute_bound}."));
    rf->callback([ro] { run_roofline(*ro); });
}

}  // namespace inferlab::app
