// inferlab decode-roofline: what one decode step reads, and what that bounds.
#include <fmt/format.h>

#include <memory>

#include "common.hpp"
#include "inferlab/dtype.hpp"
#include "inferlab/error.hpp"
#include "inferlab/hardware.hpp"
#include "inferlab/model_config.hpp"
#include "inferlab/quant.hpp"
#include "inferlab/roofline.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

struct RooflineOptions {
    std::string weights_bytes, params, weight_dtype, config, model;
    std::string kv_bytes_per_request, seq_len, kv_dtype;
    std::string batch, bandwidth, hw, peak_flops, memory;
    std::string prompt_len, output_len;
    bool list_hw = false;
    bool batch_given = false;  // given, even as an empty string
    OutputFlags out;
};

std::string ms(double s) { return fmt::format("{:.3f} ms", s * 1e3); }
std::string gb3(std::uint64_t bytes) { return fmt::format("{:.3f}", static_cast<double>(bytes) / 1e9); }
std::string gib3(std::uint64_t bytes) { return fmt::format("{:.3f}", static_cast<double>(bytes) / 1073741824.0); }
// "1 TB/s (1e+12 B/s)": decimal, as bandwidths are quoted.
std::string rate_text(double bps) {
    const char* unit = "B/s";
    double v = bps;
    for (const char* u : {"kB/s", "MB/s", "GB/s", "TB/s", "PB/s"}) {
        if (v < 1000) break;
        v /= 1000;
        unit = u;
    }
    return fmt::format("{} {} ({:.6g} B/s)", format_real(v, 6), unit, bps);
}
std::string tps(double v) { return fmt::format("{:.2f}", v); }
std::string ratio(double v) { return fmt::format("{:.2f}", v); }

struct Inputs {
    DecodeModel model;
    Machine machine;
    std::vector<std::uint64_t> lens;     // one per request of a row (a single length: repeated)
    bool lens_are_batch = false;         // --seq-len listed several requests: the batch itself
    std::vector<std::uint64_t> batches;
    std::string weights_from, kv_from, bandwidth_from, flops_from, memory_from;
    std::optional<ModelConfig> config;
    std::optional<ParamCount> counted;   // the config's parameters, unless --params overrides them
    std::optional<Hardware> hw;
    bool lens_from_prompt = false;       // no --seq-len: the per-step table reads S = --prompt-len
};

Inputs gather(const RooflineOptions& o) {
    Inputs in;
    if (!o.config.empty() && !o.model.empty()) throw InputError("--config and --model both given: choose one");
    if (!o.config.empty() || !o.model.empty())
        in.config = o.config.empty() ? load_named_model(o.model) : load_config_file(o.config);

    // ---- weights ----
    // One rule for a config without torch_dtype: name every precision flag this run still needs.
    if (in.config)
        require_precision_flags(*in.config, {{"--weight-dtype", !o.weight_dtype.empty() || !o.weights_bytes.empty()},
                                             {"--kv-dtype", !o.kv_dtype.empty() || !o.kv_bytes_per_request.empty()}});
    std::optional<DType> wdt;
    if (!o.weight_dtype.empty()) wdt = parse_dtype("--weight-dtype", o.weight_dtype);
    else if (in.config && in.config->dtype) wdt = in.config->dtype;
    if (in.config && o.params.empty()) in.counted = count_params(*in.config);
    if (!o.params.empty()) in.model.params = parse_count_with_suffix("--params", o.params);
    else if (in.counted) in.model.params = in.counted->active_per_token;
    if (!o.weights_bytes.empty()) {
        in.model.weight_bytes = parse_bytes("--weights-bytes", o.weights_bytes);
        if (in.model.weight_bytes == 0) throw InputError("--weights-bytes", o.weights_bytes, "must be positive");
        in.weights_from = "--weights-bytes";
        if (!in.model.params && !o.weight_dtype.empty())
            in.model.params = to_u64(static_cast<u128>(in.model.weight_bytes) * 8 / wdt->bits, "parameter count");
    } else if (in.model.params) {
        if (!wdt) throw InputError("--params needs --weight-dtype (bf16, fp8, int4, ...) to give the weight bytes");
        // quantize's storage rule (int8/int4 with their fp16 group scales), as quantize --model and the model count.
        auto bytes_of = [&](std::uint64_t n) { return weight_storage(n, *wdt).total_bytes; };
        std::uint64_t total = in.counted ? in.counted->total : *in.model.params;
        const StorageCost sc = weight_storage(total, *wdt);
        in.model.weight_bytes = sc.total_bytes;
        in.weights_from = fmt::format("{} parameters × {} B ({}{}){}", group_thousands(total), exact_ratio(wdt->bits, 8, 3), wdt->name,
                                      sc.metadata_bytes ? fmt::format(" + {} B of fp16 scales, one per {}", group_thousands(sc.metadata_bytes), kWeightGroup) : "",
                                      in.counted ? ", counted from the config; " + in.config->tied_rule : "");
        if (in.counted && in.config->experts) {
            const ParamCount& pc = *in.counted;
            in.model.moe = MoeWeights{bytes_of(pc.always_read), bytes_of(pc.expert_params), pc.moe_layers,
                                      in.config->experts, in.config->experts_per_token};
        }
    } else {
        throw InputError("no weights: give --weights-bytes (e.g. 14GB), --params with --weight-dtype, or --config/--model");
    }

    // ---- machine ----
    if (!o.hw.empty()) in.hw = find_hardware("--hw", o.hw);
    if (!o.bandwidth.empty()) {
        in.machine.bandwidth = parse_rate("--bandwidth", o.bandwidth);
        in.bandwidth_from = "--bandwidth " + o.bandwidth;
    } else if (in.hw) {
        in.machine.bandwidth = in.hw->bandwidth;
        in.bandwidth_from = fmt::format("{} ({}, {})", in.hw->bandwidth_text, in.hw->name, in.hw->source);
    } else {
        throw InputError("no bandwidth: give --bandwidth (e.g. 1TB/s, 3.35e12) or --hw NAME (see --list-hw)");
    }
    if (!o.peak_flops.empty()) {
        in.machine.peak_flops = parse_flops("--peak-flops", o.peak_flops);
        in.flops_from = "--peak-flops " + o.peak_flops;
    } else if (in.hw && in.hw->peak_flops) {
        in.machine.peak_flops = in.hw->peak_flops;
        in.flops_from = fmt::format("{} dense BF16 ({})", in.hw->flops_text, in.hw->name);
    }
    if (!o.memory.empty()) {
        in.machine.memory_bytes = parse_bytes("--memory", o.memory);
        in.memory_from = "--memory " + o.memory;
    } else if (in.hw && in.hw->memory_bytes) {
        in.machine.memory_bytes = in.hw->memory_bytes;
        in.memory_from = fmt::format("{} ({})", in.hw->memory_text, in.hw->name);
    }

    // ---- KV ----
    if (!o.seq_len.empty()) {
        for (const auto& item : split_count_list("--seq-len", o.seq_len)) {
            std::uint64_t s = parse_tokens("--seq-len", item);
            if (s == 0) throw InputError("--seq-len", item, "must be a positive token count");
            in.lens.push_back(s);
        }
    } else if (!o.prompt_len.empty() && in.config) {
        // A whole generation needs no separate --seq-len: the step table shows the first decode
        // step's read, at S = P cached tokens.
        std::uint64_t p = parse_tokens("--prompt-len", o.prompt_len);
        if (p == 0) throw InputError("--prompt-len", o.prompt_len, "must be a positive token count");
        in.lens.push_back(p);
        in.lens_from_prompt = true;
    }
    if (!o.kv_bytes_per_request.empty()) {
        in.model.kv_bytes_per_request = parse_bytes("--kv-bytes-per-request", o.kv_bytes_per_request);
        in.kv_from = "--kv-bytes-per-request " + o.kv_bytes_per_request;
        if (!o.kv_dtype.empty()) throw InputError("--kv-dtype does not apply with --kv-bytes-per-request");
    } else if (in.config) {
        if (in.lens.empty())
            throw InputError("--seq-len is required to derive the KV bytes from the model (or give --prompt-len)");
        DType kd = !o.kv_dtype.empty() ? parse_dtype("--kv-dtype", o.kv_dtype) : *in.config->dtype;
        in.model.kv_spec = kv_spec_from_config(*in.config, kd.bits);
        in.kv_from = fmt::format("{} at {} (kv-mem's formula{})", in.config->name, kd.name,
                                 in.lens_from_prompt ? "; S = --prompt-len, no --seq-len given" : "");
    } else {
        throw InputError("no KV size: give --kv-bytes-per-request (e.g. 1GiB), or a model with --config/--model and --seq-len");
    }
    if (in.config) {
        // Attention FLOPs layer by layer: sliding layers attend to min(S, W) positions; MLA's heads
        // are d_qk = nope + rope wide for QKᵀ and v_head_dim for V (the decompressed form).
        const ModelConfig& c = *in.config;
        for (std::uint64_t l = 0; l < c.layers; ++l)
            in.model.attn_per_layer.push_back(c.mla ? AttnLayer{c.q_heads, c.qk_nope_head_dim + c.qk_rope_head_dim,
                                                                c.v_head_dim, c.window_per_layer[l]}
                                                    : AttnLayer{c.q_heads, c.head_dim, c.head_dim, c.window_per_layer[l]});
    }

    // ---- batches ----
    if (in.lens.size() > 1) {
        if (o.batch_given) throw InputError("--batch", o.batch, "cannot be combined with a list of lengths: the list is the batch");
        in.lens_are_batch = true;
        in.batches = {in.lens.size()};
    } else {
        in.batches = parse_int_list_or_range("--batch", o.batch_given ? o.batch : "1");
    }
    return in;
}

std::vector<std::uint64_t> row_lens(const Inputs& in, std::uint64_t batch) {
    if (in.lens_are_batch) return in.lens;
    // Fixed M_KV without lengths: the lengths only count the requests (attention FLOPs need a model).
    return std::vector<std::uint64_t>(batch, in.lens.empty() ? 0 : in.lens.front());
}

void list_hw(const RooflineOptions& o) {
    Report r;
    Table t{{"name", "kind", "bandwidth", "dense BF16", "memory", "source"}, {}, {false, false, true, true, true, false}};
    r.json["hardware"] = nlohmann::json::array();
    for (const auto& h : hardware_presets()) {
        t.rows.push_back({h.name, h.kind, h.bandwidth_text, h.flops_text.empty() ? "-" : h.flops_text,
                          h.memory_text.empty() ? "-" : h.memory_text, h.source});
        nlohmann::json j = {{"name", h.name}, {"kind", h.kind}, {"bandwidth_bytes_per_s", h.bandwidth},
                            {"bandwidth_text", h.bandwidth_text}, {"notes", h.notes}, {"source", h.source}};
        if (h.peak_flops) j["peak_flops"] = *h.peak_flops;
        if (h.memory_bytes) j["memory_bytes"] = *h.memory_bytes;
        r.json["hardware"].push_back(j);
    }
    r.human = "Hardware presets (examples/hardware.json; bandwidths decimal as the spec sheets print them):\n" +
              render_table(t);
    r.explain = r.human;
    for (const auto& h : hardware_presets()) r.explain += fmt::format("  {}: {}\n", h.name, h.notes);
    r.add_table("hardware", t);
    emit(r, o.out);
}

// A whole generation of N output tokens after a prompt of P: the prefill bound, then the N − 1
// decode steps (lib: generation_decode_steps), every figure from the same steps.
void generation_section(const RooflineOptions& o, const Inputs& in, Report& r) {
    const DecodeModel& m = in.model;
    const Machine& hw = in.machine;
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    if (!m.kv_spec) throw InputError("--prompt-len/--output-len need the KV geometry: use --config or --model, not --kv-bytes-per-request");
    if (in.lens_are_batch) throw InputError("--prompt-len/--output-len take requests of one length: give --batch, not a list of lengths");
    if (o.prompt_len.empty() || o.output_len.empty()) throw InputError("give both --prompt-len P and --output-len N");
    std::uint64_t P = parse_tokens("--prompt-len", o.prompt_len);
    if (P == 0) throw InputError("--prompt-len", o.prompt_len, "must be a positive token count");
    std::uint64_t N = parse_tokens("--output-len", o.output_len);
    if (N == 0) throw InputError("--output-len", o.output_len, "must be a positive token count");
    if (N > 10000000) throw InputError("--output-len", o.output_len, "must be at most 10,000,000 tokens");
    Table g{{"batch", "TTFT (prefill)", "decode steps", "decode total", "TPOT (avg step)", "last step",
             "all at final S", "end-to-end"}, {}, {}};
    j["generation"] = nlohmann::json::array();
    const bool has_prefill = hw.peak_flops && m.params;
    for (std::uint64_t b : in.batches) {
        // One accounting for every figure: token 1 from prefill, tokens 2..N from N − 1 decode steps.
        std::optional<LatencyBound> lb;
        if (has_prefill) lb = latency_bound(m, b, P, N, hw);
        const GenerationBound dec = lb ? lb->decode : generation_decode_steps(m, b, P, N, hw);
        const auto opt_s = [](bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(nullptr); };
        nlohmann::json gj = {{"batch", b},
                             {"prompt_len", P},
                             {"output_len", N},
                             {"decode_steps", dec.steps},
                             {"decode_first_len", dec.steps ? nlohmann::json(dec.start_len) : nlohmann::json(nullptr)},
                             {"decode_total_s", dec.total_time_s},
                             {"average_step_s", opt_s(dec.steps > 0, dec.average_step_s)},
                             {"last_step_s", opt_s(dec.steps > 0, dec.last_step_s)},
                             {"charged_at_final_length_s", dec.charged_at_final_s},
                             {"ttft_s", nullptr},
                             {"tpot_s", nullptr},
                             {"end_to_end_s", nullptr}};
        const std::string none = "-";
        std::vector<std::string> cells = {std::to_string(b), lb ? ms(lb->ttft_s) : none, group_thousands(dec.steps),
                                          ms(dec.total_time_s), dec.steps ? ms(dec.average_step_s) : none,
                                          dec.steps ? ms(dec.last_step_s) : none, ms(dec.charged_at_final_s),
                                          lb ? ms(lb->end_to_end_s) : none};
        if (lb) {
            gj["ttft_s"] = lb->ttft_s;
            gj["tpot_s"] = lb->tpot_s ? nlohmann::json(*lb->tpot_s) : nlohmann::json(nullptr);
            gj["end_to_end_s"] = lb->end_to_end_s;
            gj["prefill_bound"] = lb->prefill.compute_bound ? "compute" : "memory";
            gj["prefill_flops"] = lb->prefill.flops;
        }
        j["generation"].push_back(gj);
        g.rows.push_back(cells);
    }
    h += fmt::format("\nWhole generation: P = {}, N = {}: token 1 comes from prefill (TTFT); {}.\n",
                     count_noun(P, "prompt token"), count_noun(N, "output token"),
                     N == 1 ? "no decode step follows"
                            : fmt::format("tokens 2..N from {} reading S = {} … {}", count_noun(N - 1, "decode step"),
                                          group_thousands(P + 1), group_thousands(P + N - 1)));
    h += render_table(g);
    h += "  TTFT: request start to the first output token (the prefill bound alone, no queueing); TPOT: mean of the\n"
         "  decode steps; end-to-end = TTFT + decode total = TTFT + (N−1)·TPOT (second document).\n";
    if (!has_prefill)
        h += "  (TTFT and end-to-end need --peak-flops or --hw with a FLOPS figure: prefill is mostly compute-bound)\n";
    x += fmt::format("\nWhole generation: decode total = Σ_(i=1)^(N−1) t(S = P + i) with P = {}, N = {}; charging every "
                     "step at the final length overstates it.\n", P, N);
    x += "Prefill: F = 2·P_params·P + 2·L·H_q·d·P² per prompt (causal attention), t ≥ max(bytes/β, F/π);\n"
         "TTFT = prefill bound; TPOT = decode total / (N−1); end-to-end = TTFT + decode total.\n";
}

// Mixture of experts: total and active parameters, and what a step reads (roofline.hpp's MoeWeights).
void moe_lines(const Inputs& in, Report& r) {
    const MoeWeights& e = *in.model.moe;
    const ParamCount& pc = *in.counted;
    auto& j = r.json;
    std::string& h = r.human;
    j["inputs"]["moe"] = {{"total_params", pc.total}, {"active_params_per_token", pc.active_per_token},
                          {"experts", e.experts}, {"experts_per_token", e.top_k}, {"shared_experts", in.config->shared_experts},
                          {"moe_layers", e.moe_layers}, {"expert_params", pc.expert_params},
                          {"always_read_bytes", e.always_read_bytes}, {"expert_bytes", e.expert_bytes}};
    h += fmt::format("  MoE: {} parameters in all, {} active per token ({} of {} routed experts{} in {} layers)\n"
                     "       a step reads everything but the routed experts ({}) plus the experts its B tokens route to:\n"
                     "       E·(1 − (1 − k/E)^B) per layer in expectation, uniform independent routing assumed; "
                     "k = {} at B = 1\n",
                     group_thousands(pc.total), group_thousands(pc.active_per_token), e.top_k, e.experts,
                     in.config->shared_experts ? fmt::format(" + {} shared", in.config->shared_experts) : "",
                     e.moe_layers, bytes_all_units(e.always_read_bytes), e.top_k);
}

void run(const RooflineOptions& o) {
    if (o.list_hw) return list_hw(o);
    Inputs in = gather(o);
    const DecodeModel& m = in.model;
    const Machine& hw = in.machine;

    std::vector<DecodeStep> rows;
    for (std::uint64_t b : in.batches) rows.push_back(decode_step(m, row_lens(in, b), hw));

    Report r;
    auto& j = r.json;
    j["inputs"] = {{"weight_bytes", m.weight_bytes}, {"weights_from", in.weights_from}, {"kv_from", in.kv_from},
                   {"bandwidth_bytes_per_s", hw.bandwidth}, {"bandwidth_from", in.bandwidth_from}};
    if (m.params) j["inputs"]["params"] = *m.params;
    if (m.kv_bytes_per_request) j["inputs"]["kv_bytes_per_request"] = *m.kv_bytes_per_request;
    if (!in.lens.empty()) j["inputs"]["seq_lens"] = in.lens;
    if (hw.peak_flops) {
        j["inputs"]["peak_flops"] = *hw.peak_flops;
        j["inputs"]["ridge_flops_per_byte"] = *hw.peak_flops / hw.bandwidth;
    }
    if (hw.memory_bytes) j["inputs"]["memory_bytes"] = *hw.memory_bytes;

    Table t{{"batch", "bytes/step (GB)", "bytes/step (GiB)", "step bound", "aggregate tok/s", "per-request tok/s"}, {}, {}};
    if (hw.peak_flops) {
        t.columns.push_back("FLOP/B");
        t.columns.push_back("bound");
    }
    if (hw.memory_bytes) t.columns.push_back("fits");
    if (m.moe) t.columns.insert(t.columns.begin() + 1, "experts read/layer");
    j["rows"] = nlohmann::json::array();
    for (const auto& s : rows) {
        std::vector<std::string> cells = {std::to_string(s.batch), gb3(s.bytes), gib3(s.bytes), ms(s.step_time_s),
                                          tps(s.aggregate_tokens_per_s), tps(s.per_request_tokens_per_s)};
        nlohmann::json row = {{"batch", s.batch},
                              {"bytes_per_step", s.bytes},
                              {"weight_bytes", s.weight_bytes},
                              {"kv_bytes", s.kv_bytes},
                              {"bytes_per_step_gb", static_cast<double>(s.bytes) / 1e9},
                              {"bytes_per_step_gib", static_cast<double>(s.bytes) / 1073741824.0},
                              {"memory_time_s", s.memory_time_s},
                              {"step_time_s", s.step_time_s},
                              {"aggregate_tokens_per_s", s.aggregate_tokens_per_s},
                              {"per_request_tokens_per_s", s.per_request_tokens_per_s},
                              {"bound", s.compute_bound ? "compute" : "memory"}};
        if (s.experts_read_per_layer) {
            row["experts_read_per_layer"] = *s.experts_read_per_layer;
            cells.insert(cells.begin() + 1, format_real(*s.experts_read_per_layer, 4));
        }
        if (s.flops) {
            row["flops_per_step"] = *s.flops;
            row["arithmetic_intensity"] = *s.intensity;
        }
        if (s.compute_time_s) row["compute_time_s"] = *s.compute_time_s;
        if (hw.peak_flops) {
            cells.push_back(s.intensity ? format_real(*s.intensity, 4) : "-");
            cells.push_back(s.compute_bound ? "compute" : "memory");
        }
        if (s.fits) {
            row["fits"] = *s.fits;
            cells.push_back(*s.fits ? "yes" : "NO");
        }
        j["rows"].push_back(row);
        t.rows.push_back(cells);
    }
    r.add_table("rows", t);

    std::string& h = r.human;
    std::string& x = r.explain;
    h += fmt::format("Decode step read volume: D_B = W + Σ_i M_KV,i; t_B ≥ D_B / β (first document §2.1.3)\n");
    h += fmt::format("  W    = {}   [{}]\n", bytes_all_units(m.weight_bytes), in.weights_from);
    if (m.moe && in.counted) moe_lines(in, r);
    h += fmt::format("  M_KV = {}\n", in.kv_from);
    if (in.config && !in.config->window_rule.empty()) {
        j["inputs"]["window_rule"] = in.config->window_rule;
        h += fmt::format("         sliding window: {}; KV bytes and attention FLOPs both honour it\n", in.config->window_rule);
    }
    h += fmt::format("  β    = {}   [{}]\n", rate_text(hw.bandwidth), in.bandwidth_from);
    if (hw.peak_flops)
        h += fmt::format("  π    = {} FLOP/s   [{}]; ridge point π/β = {} FLOP/B\n", format_real(*hw.peak_flops, 6),
                         in.flops_from, format_real(*hw.peak_flops / hw.bandwidth, 4));
    if (hw.memory_bytes) h += fmt::format("  memory {}   [{}]\n", bytes_all_units(*hw.memory_bytes), in.memory_from);
    h += "\n" + render_table(t);

    x += "Read-volume model (first document §2.1.3): each decode step reads the weights once and each\n"
         "request's whole KV history once, and produces one token per request.\n"
         "  D_B = W + Σ_i M_KV,i      t_B ≥ D_B / β      R_all ≤ B / t_B      R_one ≤ 1 / t_B\n";
    x += fmt::format("  W = {}\n", bytes_all_units(m.weight_bytes));
    if (m.moe)
        x += fmt::format("  MoE: W_B = W_always + L_moe · E·(1 − (1 − k/E)^B) · W_expert = {} + {} × E_B × {} "
                         "(E = {}, k = {}); the FLOPs count the active parameters: 2·P_active per token\n",
                         group_thousands(m.moe->always_read_bytes), m.moe->moe_layers, group_thousands(m.moe->expert_bytes),
                         m.moe->experts, m.moe->top_k);
    if (m.kv_bytes_per_request)
        x += fmt::format("  M_KV = {} per request\n", bytes_all_units(*m.kv_bytes_per_request));
    x += "  Caution: 1 GiB = 1.073741824 GB; convert every term to the same unit before adding (W in GB, M_KV in GiB).\n";
    x += fmt::format("  β = {}\n", rate_text(hw.bandwidth));
    for (const auto& s : rows) {
        x += fmt::format("\nB = {}:\n", s.batch);
        if (m.kv_bytes_per_request && !in.lens_are_batch)
            x += fmt::format("  D_{} = {} + {} × {} = {} B\n      = {} GB + {} × {} GB = {} GB\n", s.batch,
                             group_thousands(m.weight_bytes), s.batch, group_thousands(*m.kv_bytes_per_request),
                             group_thousands(s.bytes), exact_ratio(m.weight_bytes, 1000000000, 9), s.batch,
                             exact_ratio(*m.kv_bytes_per_request, 1000000000, 9), exact_ratio(s.bytes, 1000000000, 9));
        else
            x += fmt::format("  D_{} = {} + {} = {} B = {} GB\n", s.batch, group_thousands(m.weight_bytes),
                             group_thousands(s.kv_bytes), group_thousands(s.bytes),
                             exact_ratio(s.bytes, 1000000000, 9));
        x += fmt::format("  t_{} ≥ {} B / {:.6g} B/s = {}\n", s.batch, group_thousands(s.bytes), hw.bandwidth,
                         ms(s.memory_time_s));
        if (s.compute_time_s)
            x += fmt::format("  compute: F = {} FLOP / {} FLOP/s = {} → {}-bound\n", format_real(*s.flops, 6),
                             format_real(*hw.peak_flops, 6), ms(*s.compute_time_s), s.compute_bound ? "compute" : "memory");
        x += fmt::format("  R_all ≤ {} / {} s = {} token/s;  per request ≤ 1 / {} s = {} token/s\n", s.batch,
                         format_real(s.step_time_s, 6), tps(s.aggregate_tokens_per_s), format_real(s.step_time_s, 6),
                         tps(s.per_request_tokens_per_s));
    }

    if (rows.size() >= 2) {
        const DecodeStep& a = rows.front();
        const DecodeStep& b = rows.back();
        double reads = static_cast<double>(b.bytes) / static_cast<double>(a.bytes);
        double agg = b.aggregate_tokens_per_s / a.aggregate_tokens_per_s;
        double per = b.per_request_tokens_per_s / a.per_request_tokens_per_s;
        j["comparison"] = {{"from_batch", a.batch}, {"to_batch", b.batch}, {"reads_ratio", reads},
                           {"aggregate_ratio", agg}, {"per_request_ratio", per}};
        std::string line = fmt::format("B = {} → {}: reads ×{}, aggregate ×{}, per-request {} {}×", a.batch, b.batch,
                                       ratio(reads), ratio(agg), per < 1 ? "down to" : "at", ratio(per));
        h += "\n" + line + "\n";
        h += "  (batching shares the weight read; it does not make any one request's next token come sooner)\n";
        x += "\n" + line + "\n";
    }

    if (hw.peak_flops && m.params && !in.lens_are_batch) {
        std::uint64_t s0 = in.lens.empty() ? 0 : in.lens.front();
        auto from = compute_bound_from(m, s0, hw);
        if (from) {
            j["compute_bound_from_batch"] = *from;
            h += fmt::format("Compute limit: a step becomes compute-bound from B = {} (intensity passes the ridge point {} FLOP/B)\n",
                             *from, format_real(*hw.peak_flops / hw.bandwidth, 4));
        } else {
            j["compute_bound_from_batch"] = nullptr;
            h += "Compute limit: memory-bound at every batch size (each added request reads its KV faster than it computes)\n";
        }
        if (!m.has_attention_shape()) h += "  (attention FLOPs not counted: no model shape; give --config/--model)\n";
    }
    if (hw.memory_bytes) {
        bool any_fail = false;
        for (const auto& s : rows) any_fail = any_fail || !*s.fits;
        if (any_fail) h += "Rows marked NO hold more weights + KV than the device memory.\n";
    }
    if (rows.size() >= 3) {
        std::vector<std::string> labels;
        ChartSeries agg{"aggregate tokens/s", {}}, per{"per-request tokens/s", {}};
        for (const auto& s : rows) {
            labels.push_back("B=" + std::to_string(s.batch));
            agg.values.push_back(s.aggregate_tokens_per_s);
            per.values.push_back(s.per_request_tokens_per_s);
        }
        h += "\n" + render_bar_chart(labels, {agg, per}, 50);
    }

    if (!o.output_len.empty() || !o.prompt_len.empty()) generation_section(o, in, r);
    emit(r, o.out);
}

}  // namespace

void setup_decode_roofline(CLI::App& app) {
    auto opt = std::make_shared<RooflineOptions>();
    CLI::App* sub = app.add_subcommand("decode-roofline", "Bytes one decode step reads, and the time and tokens/s that bounds");
    sub->add_option("--weights-bytes", opt->weights_bytes, "W, weight bytes read per step (14GB)");
    sub->add_option("--params", opt->params, "weight parameters (7e9, 7B): W with --weight-dtype, and 2 FLOPs per parameter per token");
    sub->add_option("--weight-dtype", opt->weight_dtype, "weight precision (default: the config's torch_dtype)");
    sub->add_option("--config", opt->config, "a Hugging Face config.json (weights counted, KV from kv-mem's formula)");
    sub->add_option("--model", opt->model, "a shipped config (inferlab kv-mem --list-models)");
    sub->add_option("--kv-bytes-per-request", opt->kv_bytes_per_request, "M_KV per request (1GiB)");
    sub->add_option("--seq-len", opt->seq_len, "tokens cached per request (with a model); a list = requests of different lengths");
    sub->add_option("--kv-dtype", opt->kv_dtype, "KV precision with a model (default: torch_dtype)");
    sub->add_option("--batch", opt->batch, "batch sizes: 1,8 or a range 1..64 (default 1)");
    sub->add_option("--bandwidth", opt->bandwidth, "β, sustained memory bandwidth (1TB/s, 3.35e12)");
    sub->add_option("--hw", opt->hw, "a hardware preset (see --list-hw)");
    sub->add_option("--peak-flops", opt->peak_flops, "π, dense peak FLOP/s (989TFLOPS): adds the compute bound");
    sub->add_option("--memory", opt->memory, "device memory (80GiB): marks batches that do not fit");
    sub->add_option("--prompt-len", opt->prompt_len, "P: prefill bound, TTFT, TPOT and end-to-end");
    sub->add_option("--output-len", opt->output_len, "N: a whole generation, the context growing one token a step");
    sub->add_flag("--list-hw", opt->list_hw, "list the hardware presets with their sources");
    add_output_flags(*sub, opt->out, true);
    sub->footer(examples_footer(
        {"inferlab decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s --batch 1,8",
         "    → B=1: 15.074 GB, 15.074 ms, 66.34 tok/s;  B=8: 22.590 GB, 22.590 ms, 354.14 aggregate, 44.27 per request",
         "inferlab decode-roofline --model llama-3-8b --seq-len 8192 --hw h100-sxm --batch 1..64",
         "inferlab decode-roofline --model llama-3-8b --hw h100-sxm --prompt-len 2048 --output-len 512 --batch 1,8",
         "inferlab decode-roofline --model mixtral-8x7b --hw h100-sxm --seq-len 4096 --batch 1,8,64"},
        "Mixture of experts: a step reads the non-expert weights, the shared experts and, per MoE layer, the\n"
        "experts its B tokens route to: E·(1 − (1 − k/E)^B) in expectation, assuming each token picks k of E\n"
        "experts uniformly and independently (exactly k at B = 1). FLOPs count the active parameters.\n"
        "Attention FLOPs: 2·H_q·(d_qk + d_v) per layer and cached position, min(S, W) positions on a sliding layer.\n"
        "A config without torch_dtype needs --weight-dtype and --kv-dtype (one error names both).\n"
        "Without --seq-len, --prompt-len P sets the per-step table's S = P.\n"
        "JSON keys: inputs{...}, rows[]{batch, bytes_per_step, weight_bytes, kv_bytes, bytes_per_step_gb,\n"
        "bytes_per_step_gib, memory_time_s, compute_time_s, step_time_s, flops_per_step, arithmetic_intensity, bound,\n"
        "aggregate_tokens_per_s, per_request_tokens_per_s, fits}, comparison{reads_ratio, aggregate_ratio,\n"
        "per_request_ratio}, compute_bound_from_batch, generation[]{decode_steps (N − 1), decode_first_len (P + 1),\n"
        "decode_total_s, average_step_s, last_step_s, charged_at_final_length_s, ttft_s, tpot_s, end_to_end_s}\n"
        "(null where not computed: TTFT needs π; TPOT needs N ≥ 2)."));
    sub->callback([opt, sub] {
        opt->batch_given = sub->count("--batch") > 0;
        run(*opt);
    });
}

}  // namespace inferlab::app
