// decode-roofline's printers (decode_roofline_print.hpp): one RooflineResult as text, --json, --csv
// tables and --explain, and the hardware presets of --list-hw.
#include "decode_roofline_print.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "common.hpp"
#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/data/hardware.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;
using Inputs = RooflineInputs;

json inputs_json(const Inputs& in, const RooflineResult& res) {
    const DecodeModel& m = in.req.model;
    const Machine& hw = in.req.machine;
    json moe = nullptr;
    if (m.moe && in.counted)
        moe = {{"total_params", in.counted->total}, {"active_params_per_token", in.counted->active_per_token},
               {"experts", m.moe->experts}, {"experts_per_token", m.moe->top_k},
               {"shared_experts", in.config->shared_experts}, {"moe_layers", m.moe->moe_layers},
               {"expert_params", in.counted->expert_params}, {"always_read_bytes", m.moe->always_read_bytes},
               {"expert_bytes", m.moe->expert_bytes}};
    const bool window = in.config && !in.config->window_rule.empty();
    return {{"weight_bytes", m.weight_bytes}, {"weights_from", in.weights_from.text()}, {"params", or_null(m.params)},
            {"kv_from", in.kv_from.text()}, {"kv_bytes_per_request", or_null(m.kv_bytes_per_request)},
            {"seq_lens", in.req.seq_lens.empty() ? json(nullptr) : json(in.req.seq_lens)},
            {"bandwidth_bytes_per_s", hw.bandwidth}, {"bandwidth_from", in.bandwidth_from},
            {"peak_flops", or_null(hw.peak_flops)}, {"ridge_flops_per_byte", or_null(res.ridge_flops_per_byte)},
            {"memory_bytes", or_null(hw.memory_bytes)}, {"moe", moe},
            {"devices", hw.tp ? hw.tp->devices : 1},
            {"link_bandwidth", hw.tp ? json(hw.tp->link_bandwidth) : json(nullptr)},
            {"link_latency_s", hw.tp ? json(hw.tp->link_latency_s) : json(nullptr)},
            {"window_rule", window ? json(in.config->window_rule.text()) : json(nullptr)},
            {"max_position_embeddings", in.config && in.config->max_positions ? json(in.config->max_positions) : json(nullptr)}};
}

// Which bound the step is at, where both are known: without π or without the step's FLOPs the
// compute time is unknown, and so is the answer.
json bound_json(const DecodeStep& s) {
    if (!s.compute_time_s) return nullptr;
    return s.compute_bound ? "compute" : "memory";
}

json step_json(const DecodeStep& s) {
    return {{"batch", s.batch}, {"experts_read_per_layer", or_null(s.experts_read_per_layer)},
            {"bytes_per_step", s.bytes}, {"weight_bytes", s.weight_bytes}, {"kv_bytes", s.kv_bytes},
            {"bytes_per_step_gb", bytes_in_gb(s.bytes)}, {"bytes_per_step_gib", bytes_in_gib(s.bytes)},
            {"memory_time_s", s.memory_time_s}, {"compute_time_s", or_null(s.compute_time_s)},
            {"step_time_s", s.step_time_s}, {"comm_time_s", s.comm_time_s}, {"flops_per_step", or_null(s.flops)},
            {"arithmetic_intensity", or_null(s.intensity)}, {"achieved_flops_per_s", or_null(achieved_flops_per_s(s))},
            {"bound", bound_json(s)},
            {"aggregate_tokens_per_s", s.aggregate_tokens_per_s},
            {"per_request_tokens_per_s", s.per_request_tokens_per_s}, {"fits", or_null(s.fits)}};
}

json generation_json(const RooflineRequest& rq, const GenerationRow& g) {
    const GenerationBound& d = g.decode;
    const auto& l = g.latency;
    const auto when_steps = [&](double v) { return d.steps ? json(v) : json(nullptr); };
    return {{"batch", g.batch}, {"prompt_len", *rq.prompt_len}, {"output_len", *rq.output_len},
            {"decode_steps", d.steps}, {"decode_first_len", d.steps ? json(d.start_len) : json(nullptr)},
            {"decode_total_s", d.total_time_s}, {"average_step_s", when_steps(d.average_step_s)},
            {"last_step_s", when_steps(d.last_step_s)}, {"charged_at_final_length_s", d.charged_at_final_s},
            {"ttft_s", l ? json(l->ttft_s) : json(nullptr)}, {"tpot_s", l ? or_null(l->tpot_s) : json(nullptr)},
            {"end_to_end_s", l ? json(l->end_to_end_s) : json(nullptr)},
            {"prefill_bound", l ? json(l->prefill.compute_bound ? "compute" : "memory") : json(nullptr)},
            {"prefill_flops", l ? json(l->prefill.flops) : json(nullptr)}};
}

// The whole document: every key in every run of this mode, null where there is no value.
json result_json(const Inputs& in, const RooflineResult& res) {
    json j = {{"inputs", inputs_json(in, res)}, {"rows", json::array()}, {"comparison", nullptr},
              {"compute_limit_searched", res.compute_limit_searched},
              {"compute_bound_from_batch", or_null(res.compute_bound_from_batch)}, {"generation", nullptr}};
    for (const auto& s : res.rows) j["rows"].push_back(step_json(s));
    if (const auto& c = res.comparison)
        j["comparison"] = {{"from_batch", c->from_batch}, {"to_batch", c->to_batch}, {"reads_ratio", c->reads_ratio},
                           {"aggregate_ratio", c->aggregate_ratio}, {"per_request_ratio", c->per_request_ratio}};
    if (in.req.prompt_len) {
        j["generation"] = json::array();
        for (const auto& g : res.generation) j["generation"].push_back(generation_json(in.req, g));
    }
    return j;
}

// The per-batch table, one column per figure: what the text and --csv print of each row.
std::vector<Column<DecodeStep>> row_columns(const RooflineRequest& rq) {
    // The tok/s columns are bounds here (the documents' 上界), measurements in model bench. --csv
    // prints each figure as the JSON holds it (every digit, seconds); the text rounds it (ms).
    std::vector<Column<DecodeStep>> c = {{"batch", N_("batch"), [](const DecodeStep& s) { return std::to_string(s.batch); }}};
    if (rq.model.moe)
        c.push_back({"experts_read_per_layer", N_("experts read/layer"),
                     [](const DecodeStep& s) { return csv_number(s.experts_read_per_layer); },
                     [](const DecodeStep& s) { return s.experts_read_per_layer ? format_real(*s.experts_read_per_layer, 4) : ""; }});
    c.push_back({"bytes_per_step_gb", N_("bytes/step (GB)"), [](const DecodeStep& s) { return csv_number(bytes_in_gb(s.bytes)); },
                 [](const DecodeStep& s) { return format_decimal(bytes_in_gb(s.bytes), 3); }});
    c.push_back({"bytes_per_step_gib", N_("bytes/step (GiB)"),
                 [](const DecodeStep& s) { return csv_number(bytes_in_gib(s.bytes)); },
                 [](const DecodeStep& s) { return format_decimal(bytes_in_gib(s.bytes), 3); }});
    if (rq.machine.tp)
        c.push_back({"comm_time_s", N_("all-reduces (ms)"), [](const DecodeStep& s) { return csv_number(s.comm_time_s); },
                     [](const DecodeStep& s) { return format_ms_cell(s.comm_time_s); }});
    c.push_back({"step_time_s", N_("step bound (ms)"), [](const DecodeStep& s) { return csv_number(s.step_time_s); },
                 [](const DecodeStep& s) { return format_ms_cell(s.step_time_s); }});
    c.push_back({"aggregate_tokens_per_s", NC_("decode-roofline", "aggregate tok/s"),
                 [](const DecodeStep& s) { return csv_number(s.aggregate_tokens_per_s); },
                 [](const DecodeStep& s) { return format_decimal(s.aggregate_tokens_per_s, 2); }});
    c.push_back({"per_request_tokens_per_s", NC_("decode-roofline", "per-request tok/s"),
                 [](const DecodeStep& s) { return csv_number(s.per_request_tokens_per_s); },
                 [](const DecodeStep& s) { return format_decimal(s.per_request_tokens_per_s, 2); }});
    if (rq.machine.peak_flops) {
        c.push_back({"arithmetic_intensity", "FLOP/B", [](const DecodeStep& s) { return csv_number(s.intensity); },
                     [](const DecodeStep& s) { return s.intensity ? format_real(*s.intensity, 4) : ""; }});
        c.push_back({"bound", N_("bound"), [](const DecodeStep& s) {
                         return !s.compute_time_s ? "" : s.compute_bound ? N_("compute") : N_("memory");
                     }});
    }
    if (rq.machine.memory_bytes)
        c.push_back({"fits", N_("fits"), [](const DecodeStep& s) { return csv_flag(s.fits); },
                     [](const DecodeStep& s) { return !s.fits ? "" : *s.fits ? N_("yes") : N_("NO"); }});
    return c;
}

Table rows_table(const RooflineRequest& rq, const RooflineResult& res, CellForm form) {
    return columns_table(row_columns(rq), res.rows, form);
}

// A generation column in seconds: --csv to the last digit, as the JSON; the text in ms, rounded.
// `get` gives the row's figure, or none (an empty cell).
Column<GenerationRow> seconds_column(const std::string& key, const std::string& header,
                                     std::function<std::optional<double>(const GenerationRow&)> get) {
    return figure_column<GenerationRow>(key, header, std::move(get), format_ms_cell);
}

std::vector<Column<GenerationRow>> generation_columns() {
    auto decode = [](double GenerationBound::*field, bool needs_steps) {
        return [field, needs_steps](const GenerationRow& g) {
            return needs_steps && !g.decode.steps ? std::nullopt : std::optional<double>(g.decode.*field);
        };
    };
    auto latency = [](double LatencyBound::*field) {
        return [field](const GenerationRow& g) { return g.latency ? std::optional<double>(*g.latency.*field) : std::nullopt; };
    };
    std::vector<Column<GenerationRow>> c;
    c.push_back({"batch", N_("batch"), [](const GenerationRow& g) { return std::to_string(g.batch); }});
    c.push_back(seconds_column("ttft_s", N_("TTFT, prefill (ms)"), latency(&LatencyBound::ttft_s)));
    c.push_back({"decode_steps", N_("decode steps"), [](const GenerationRow& g) { return std::to_string(g.decode.steps); }});
    c.push_back(seconds_column("decode_total_s", N_("decode total (ms)"), decode(&GenerationBound::total_time_s, false)));
    c.push_back(seconds_column("average_step_s", N_("TPOT, mean step (ms)"), decode(&GenerationBound::average_step_s, true)));
    c.push_back(seconds_column("last_step_s", N_("last step (ms)"), decode(&GenerationBound::last_step_s, true)));
    c.push_back(seconds_column("charged_at_final_length_s", N_("all at final S (ms)"),
                               decode(&GenerationBound::charged_at_final_s, false)));
    c.push_back(seconds_column("end_to_end_s", N_("end-to-end (ms)"), latency(&LatencyBound::end_to_end_s)));
    return c;
}

Table generation_table(const RooflineResult& res, CellForm form) {
    return columns_table(generation_columns(), res.generation, form);
}

// The inputs, one line each: the symbol, its value, and [where it came from].
std::string inputs_text(const Inputs& in, const RooflineResult& res) {
    const DecodeModel& m = in.req.model;
    const Machine& hw = in.req.machine;
    std::string h = wrap(tr("Decode step read volume (first document §2.1.3): D_B = W + Σ M_KV,i, t_B ≥ D_B/β"));
    // The symbols' lines read the same in English; a translation may name the quantity beside its
    // symbol, as the document does (权重 W, 带宽 β).
    if (hw.tp)
        h += wrap(trf(N_("Tensor parallelism over {0} devices: W, M_KV, the FLOPs and the memory below are one device's "
                         "(W/N; the KV as kv-mem splits it); every step adds 2·L all-reduces of T·hidden·2 B, each latency + 2(N − 1)/N "
                         "× bytes / link, link {1}, latency {2}"),
                      hw.tp->devices, format_bandwidth(hw.tp->link_bandwidth), format_seconds(hw.tp->link_latency_s)),
                  "  ", "      ");
    h += wrap(trf(N_("W = {0}   [{1}]"), bytes_all_units(m.weight_bytes), in.weights_from.localized()), "  ", "      ");
    if (m.moe && in.counted) {
        const MoeWeights& e = *m.moe;
        const std::string shared =
            in.config->shared_experts ? trf(N_(" + {0} shared"), in.config->shared_experts) : std::string();
        h += wrap(trf(N_("MoE: {0} parameters in all, {1} active per token ({2} of {3} routed experts{4} in {5} layers). "
                         "A step reads everything but the routed experts ({6}) plus the experts its B tokens route "
                         "to: E·(1 − (1 − k/E)^B) per layer in expectation, uniform independent routing assumed; "
                         "k = {7} at B = 1."),
                      group_thousands(in.counted->total), group_thousands(in.counted->active_per_token), e.top_k,
                      e.experts, shared, e.moe_layers, bytes_all_units(e.always_read_bytes), e.top_k),
                  "  ", "       ");
    }
    h += wrap(trf(N_("M_KV = {0}"), in.kv_from.localized()), "  ", "      ");
    // The config reader's window rule, in the reader's language ("honour it" only where a layer slides).
    if (in.config && !in.config->window_rule.empty()) {
        h += wrap(trf(sliding_layer_count(*in.config) > 0 ? N_("sliding window: {0}; KV bytes and attention FLOPs both honour it") : N_("sliding window: {0}"),
                      in.config->window_rule.localized()),
                  "       ", "       ");
    }
    if (in.config)
        if (const auto note = past_max_positions(*in.config, longest_length(in.req)))
            h += wrap(note->localized(), "       ", "       ");
    h += wrap(trf(N_("β = {0}   [{1}]"), format_bandwidth(hw.bandwidth), in.bandwidth_text), "  ", "      ");
    if (hw.peak_flops)
        h += wrap(trf(N_("π = {0}   [{1}]; ridge point π/β = {2} FLOP/B"), format_flops(*hw.peak_flops), in.flops_from.localized(),
                      format_real(*res.ridge_flops_per_byte, 4)),
                  "  ", "      ");
    if (hw.memory_bytes)
        h += wrap(trf(N_("memory {0}   [{1}]"), bytes_all_units(*hw.memory_bytes), in.memory_from.localized()), "  ", "      ");
    return h;
}

std::string comparison_line(const BatchComparison& c) {
    return trf(c.per_request_ratio < 1 ? N_("B = {0} → {1}: reads ×{2}, aggregate ×{3}, per-request down to {4}×")
                                       : N_("B = {0} → {1}: reads ×{2}, aggregate ×{3}, per-request at {4}×"),
               c.from_batch, c.to_batch, format_decimal(c.reads_ratio, 2), format_decimal(c.aggregate_ratio, 2),
               format_decimal(c.per_request_ratio, 2));
}

// After the table: what batching buys, where compute takes over, memory fit, and a chart.
std::string findings_text(const Inputs& in, const RooflineResult& res) {
    const Machine& hw = in.req.machine;
    std::string h;
    if (res.comparison)
        h += "\n" + wrap(comparison_line(*res.comparison)) +
             wrap(tr("(batching shares the weight read; it does not make any one request's next token come sooner)"),
                  "  ", "  ");
    if (res.compute_limit_searched) {
        if (res.compute_bound_from_batch)
            h += wrap(trf(N_("Compute limit: a step becomes compute-bound from B = {0} (intensity passes the ridge "
                             "point {1} FLOP/B)"),
                          group_thousands(*res.compute_bound_from_batch), format_real(*res.ridge_flops_per_byte, 4)));
        else
            h += wrap(tr("Compute limit: memory-bound at every batch size (reading each added request's KV takes longer than "
                         "computing with it)"));
        if (!in.req.model.has_attention_shape())
            h += wrap(tr("(attention FLOPs not counted: no model shape; give --config/--model)"), "  ", "  ");
    }
    if (hw.peak_flops && !in.req.model.params)
        h += wrap(tr("(no parameter count: a step's FLOPs, and so its compute bound, are unknown; give --params or "
                     "--model/--config)"),
                  "  ", "  ");
    if (hw.memory_bytes && res.any_row_exceeds_memory)
        h += wrap(trf(N_("Rows marked {0} hold more weights + KV than the device memory."), tr(N_("NO"))));
    if (res.rows.size() >= 3) {
        std::vector<std::string> labels;
        ChartSeries agg{tr("aggregate tokens/s"), {}}, per{tr("per-request tokens/s"), {}};
        for (const auto& s : res.rows) {
            labels.push_back("B=" + std::to_string(s.batch));
            agg.values.push_back(s.aggregate_tokens_per_s);
            per.values.push_back(s.per_request_tokens_per_s);
        }
        h += "\n" + render_bar_chart(labels, {agg, per}, 50);
    }
    return h;
}

std::string generation_text(const RooflineRequest& rq, const RooflineResult& res) {
    const Table g = generation_table(res, CellForm::text);
    const std::uint64_t P = *rq.prompt_len, N = *rq.output_len;
    const GenerationBound& d = res.generation.front().decode;  // every batch decodes the same lengths
    const std::string steps =
        N == 1 ? tr("no decode step follows")
               : trf(N_("tokens 2..N from {0} reading S = {1} … {2}"),
                     counted(d.steps, N_("{0} decode step"), N_("{0} decode steps")), group_thousands(d.start_len),
                     group_thousands(d.last_len));
    std::string h = "\n" + wrap(trf(N_("Whole generation: P = {0}, N = {1}: token 1 comes from prefill (TTFT); {2}."),
                                    counted(P, N_("{0} prompt token"), N_("{0} prompt tokens")),
                                    counted(N, N_("{0} output token"), N_("{0} output tokens")), steps));
    h += render_table(in_words(g, "decode-roofline"));
    h += wrap(tr("TTFT: request start to the first output token (the prefill bound alone, no queueing); TPOT: mean of "
                 "the decode steps; end-to-end = TTFT + decode total = TTFT + (N−1)·TPOT (second document)."),
              "  ", "  ");
    if (!res.generation_has_prefill)
        h += wrap(tr("(TTFT and end-to-end need --peak-flops or --hw with a FLOPS figure: prefill is mostly "
                     "compute-bound)"),
                  "  ", "  ");
    return h;
}

// The weights an MoE step reads, substituted: the experts its B tokens route to, expected
// (E_B, exact at B = 1), then W_B in whole bytes (≈ where E_B is rounded for the line).
std::string moe_weights_explain(const MoeWeights& e, const DecodeStep& s) {
    const double experts = *s.experts_read_per_layer;
    // Ten digits: the W_B line multiplies by it, and 8 for 7.999999919 would be 910 B off there.
    const std::string eb = format_short(experts, 10);
    // "=" only where the line is exact: E_B printed as it is, and the routed bytes a whole number
    // that the step's W_B adds up to; else "≈" (E_B is rounded for the line, W_B to whole bytes).
    const long double routed = static_cast<long double>(e.moe_layers) * experts * static_cast<long double>(e.expert_bytes);
    const bool eb_exact = std::stod(eb) == experts && !s.experts_read_rounded_to_all;
    const bool exact = eb_exact && routed == std::floor(routed) &&
                       e.always_read_bytes + static_cast<std::uint64_t>(routed) == s.weight_bytes;
    std::string x;
    if (s.batch == 1)
        x += wrap(fmt::format("E_1 = k = {}", e.top_k), "  ", "      ");
    else
        x += wrap(fmt::format("E_{0} = E·(1 − (1 − k/E)^B) = {1}·(1 − (1 − {2}/{1})^{0}) {4} {3}", s.batch, e.experts, e.top_k, eb,
                              eb_exact ? "=" : "≈"),
                  "  ", "      ");
    x += wrap(fmt::format("W_{} = W_always + L_moe · E_B · W_expert = {} + {} × {} × {} {} {} B", s.batch,
                          group_thousands(e.always_read_bytes), e.moe_layers, eb, group_thousands(e.expert_bytes),
                          exact ? "=" : "≈", group_thousands(s.weight_bytes)),
              "  ", "      ");
    return x;
}

// A step's FLOPs in groups of three digits where they are a whole number a double holds exactly.
std::string flop_count(double f) {
    if (f == std::floor(f) && f >= 0 && f < 9007199254740992.0) return group_thousands(static_cast<std::uint64_t>(f));
    return format_real(f, 6);
}

// --explain: the formulas with the values substituted, row by row.
std::string step_explain(const RooflineRequest& rq, const DecodeStep& s) {
    const DecodeModel& m = rq.model;
    std::string x = fmt::format("\nB = {}:\n", s.batch);
    if (m.moe && s.experts_read_per_layer) x += moe_weights_explain(*m.moe, s);
    if (m.kv_bytes_per_request && !rq.lens_are_batch)
        x += wrap(fmt::format("D_{} = {} + {} × {} = {} B = {} GB + {} × {} GB = {} GB", s.batch,
                              group_thousands(s.weight_bytes), s.batch, group_thousands(*m.kv_bytes_per_request),
                              group_thousands(s.bytes), exact_ratio(s.weight_bytes, 1000000000, 9), s.batch,
                              exact_ratio(*m.kv_bytes_per_request, 1000000000, 9), exact_ratio(s.bytes, 1000000000, 9)),
                  "  ", "      ");
    else
        x += wrap(fmt::format("D_{} = {} + {} = {} B = {} GB", s.batch, group_thousands(s.weight_bytes),
                              group_thousands(s.kv_bytes), group_thousands(s.bytes), exact_ratio(s.bytes, 1000000000, 9)),
                  "  ", "      ");
    x += wrap(fmt::format("t_{} ≥ {} B / {} = {}", s.batch, group_thousands(s.bytes), format_bandwidth(rq.machine.bandwidth),
                          format_seconds(s.memory_time_s)),
              "  ", "      ");
    if (s.compute_time_s)
        x += wrap(trf(s.compute_bound ? N_("compute: F = {0} FLOP / {1} = {2} → compute-bound")
                                      : N_("compute: F = {0} FLOP / {1} = {2} → memory-bound"),
                      flop_count(*s.flops), format_flops(*rq.machine.peak_flops), format_seconds(*s.compute_time_s)),
                  "  ", "      ");
    if (const auto& tp = rq.machine.tp) {
        x += wrap(fmt::format("all-reduces = 2·L × (latency + 2(N − 1)/N × T·hidden·{} B / link) = 2 × {} × ({} + 2 × {}/{} × {} × "
                              "{} × {} / {}) = {}",
                              tp->activation_bytes, tp->layers, format_seconds(tp->link_latency_s), tp->devices - 1, tp->devices,
                              s.tokens, tp->hidden, tp->activation_bytes, format_bandwidth(tp->link_bandwidth),
                              format_seconds(s.comm_time_s)),
                  "  ", "      ");
        x += wrap(fmt::format("t_{} = max(t_mem, t_compute) + all-reduces = {} + {} = {}", s.batch,
                              format_seconds(s.step_time_s - s.comm_time_s - s.overhead_s), format_seconds(s.comm_time_s),
                              format_seconds(s.step_time_s)),
                  "  ", "      ");
    }
    // t_B is shown rounded (22.590 ms for 22.589934592): the rates come from the unrounded t, so "≈".
    x += wrap(trf(N_("R_all ≤ {0} / {1} ≈ {2} token/s; per request ≤ 1 / {1} ≈ {3} token/s"), s.batch,
                  format_seconds(s.step_time_s), format_decimal(s.aggregate_tokens_per_s, 2),
                  format_decimal(s.per_request_tokens_per_s, 2)),
              "  ", "      ");
    return x;
}

std::string result_explain(const RooflineInputs& in, const RooflineResult& res) {
    const RooflineRequest& rq = in.req;
    const DecodeModel& m = rq.model;
    std::string x = wrap(tr("Read-volume model (first document §2.1.3): each decode step reads the weights once and "
                            "each request's whole KV history once, and produces one token per request."));
    // An MoE step reads W_B, the weights its tokens route to, not all of W (the rows substitute it).
    x += m.moe ? "  D_B = W_B + Σ_i M_KV,i    t_B ≥ D_B / β    R_all ≤ B / t_B    R_one ≤ 1 / t_B\n"
               : "  D_B = W + Σ_i M_KV,i    t_B ≥ D_B / β    R_all ≤ B / t_B    R_one ≤ 1 / t_B\n";
    x += wrap(trf(N_("W = {0}"), bytes_all_units(m.weight_bytes)), "  ", "      ");
    if (m.moe)
        x += wrap(trf(N_("MoE: W_B = W_always + L_moe · E·(1 − (1 − k/E)^B) · W_expert = {0} + {1} × E_B × {2} "
                         "(E = {3}, k = {4}); the FLOPs count the active parameters: 2·P_active per token"),
                      group_thousands(m.moe->always_read_bytes), m.moe->moe_layers,
                      group_thousands(m.moe->expert_bytes), m.moe->experts, m.moe->top_k),
                  "  ", "       ");
    if (m.kv_bytes_per_request)
        x += wrap(trf(N_("M_KV = {0} per request"), bytes_all_units(*m.kv_bytes_per_request)), "  ", "      ");
    if (!in.mixed_units.empty())
        x += wrap(trf(N_("Caution: --weights-bytes {0} and --kv-bytes-per-request {1} are in different units (1 GiB = "
                         "1.073741824 GB): each is converted to bytes before they are added"),
                      in.mixed_units[0], in.mixed_units[1]),
                  "  ", "  ");
    x += wrap(trf(N_("β = {0}"), format_bandwidth(rq.machine.bandwidth)), "  ", "      ");
    for (const auto& s : res.rows) x += step_explain(rq, s);
    if (res.comparison) x += "\n" + wrap(comparison_line(*res.comparison));
    if (rq.prompt_len) {
        x += "\n" + wrap(trf(N_("Whole generation: decode total = Σ_(i=1)^(N−1) t(S = P + i) with P = {0}, N = {1}; "
                                "charging every step at the final length overstates it."),
                             *rq.prompt_len, *rq.output_len));
        x += wrap(tr("Prefill: F = 2·P_params·P + 2·L·H_q·d·P(P + 1) per prompt (causal attention: token i attends to its i + 1 positions, Σ = P(P + 1)/2 pairs; a sliding layer Σ min(i + 1, W)), t ≥ max(bytes/β, F/π); "
                     "TTFT = prefill bound; TPOT = decode total / (N−1); end-to-end = TTFT + decode total."));
    }
    return x;
}

}  // namespace

// Every number below comes from the RooflineResult; these functions only choose what to show.
// Table cells hold numbers only (an empty cell where there is none): --csv the JSON's figures
// under its names, the same in every language; the text rounds them, through in_words().

Report hardware_report() {
    Report r;
    // Numbers only in the cells, the unit in the header (issue #15): bandwidths decimal as spec
    // sheets quote them, memory in GiB as the presets record HBM; an empty cell where none.
    // "kind" and "source" mean other things in other tables (kv-mem's attention structure, a
    // figure's original data): here they are the device's kind and the figures' source.
    const std::vector<Column<Hardware>> columns = {
        {"name", N_("name"), [](const Hardware& h) { return h.name; }},
        {"kind", NC_("hardware", "kind"), [](const Hardware& h) { return h.kind; }},
        {"bandwidth_bytes_per_s", N_("bandwidth (GB/s)"), [](const Hardware& h) { return csv_number(h.bandwidth); },
         [](const Hardware& h) { return format_short(h.bandwidth / 1e9, 6); }},
        {"peak_flops", N_("dense BF16 (TFLOP/s)"), [](const Hardware& h) { return csv_number(h.peak_flops); },
         [](const Hardware& h) { return h.peak_flops ? format_short(*h.peak_flops / 1e12, 6) : ""; }},
        {"memory_bytes", N_("memory (GiB)"),
         [](const Hardware& h) { return h.memory_bytes ? std::to_string(*h.memory_bytes) : ""; },
         [](const Hardware& h) { return h.memory_bytes ? format_short(bytes_in_gib(*h.memory_bytes), 6) : ""; }},
        {"link_bandwidth", N_("link (GB/s)"), [](const Hardware& h) { return csv_number(h.link_bandwidth); },
         [](const Hardware& h) { return h.link_bandwidth ? format_short(*h.link_bandwidth / 1e9, 6) : ""; }},
        {"link_latency_s", N_("link latency (µs)"), [](const Hardware& h) { return csv_number(h.link_latency_s); },
         [](const Hardware& h) { return h.link_latency_s ? format_short(*h.link_latency_s * 1e6, 6) : ""; }},
        {"source", NC_("hardware", "source"), [](const Hardware& h) { return h.source; }}};
    Table t = columns_table(columns, hardware_presets());
    t.right_align = {false, false, true, true, true, true, true, false};
    Table text = columns_table(columns, hardware_presets(), CellForm::text);  // with the source in the reader's language
    text.right_align = t.right_align;
    r.json["hardware"] = json::array();
    for (std::size_t i = 0; i < hardware_presets().size(); ++i) {
        const Hardware& h = hardware_presets()[i];
        text.rows[i].back() = h.source_text();
        for (auto& cell : text.rows[i])  // "—" in the text where the preset gives none (CSV: an empty cell)
            if (cell.empty()) cell = "—";
        r.json["hardware"].push_back({{"name", h.name}, {"kind", h.kind}, {"bandwidth_bytes_per_s", h.bandwidth},
                                      {"bandwidth_text", h.bandwidth_text}, {"notes", h.notes}, {"source", h.source},
                                      {"peak_flops", or_null(h.peak_flops)}, {"memory_bytes", or_null(h.memory_bytes)},
                                      {"link_bandwidth", or_null(h.link_bandwidth)}, {"link_latency_s", or_null(h.link_latency_s)},
                                      {"link_note", h.link_bandwidth ? json(h.link_note) : json(nullptr)}});
    }
    r.human = wrap(tr("Hardware presets (examples/hardware.json; bandwidths decimal as the spec sheets print them):")) +
              render_table(in_words(text, "hardware"));
    r.explain = r.human;
    for (const auto& h : hardware_presets())
    {
        r.explain += wrap(h.name + ": " + h.notes_text(), "  ", "    ");
        if (h.link_bandwidth) r.explain += wrap(trf(N_("link: {0}"), h.link_note_text()), "    ", "      ");
    }
    r.add_table("hardware", t, "/hardware");
    return r;
}

Report decode_roofline_report(const RooflineInputs& in, const RooflineResult& res) {
    Report r;
    r.json = result_json(in, res);
    r.add_table("rows", rows_table(in.req, res, CellForm::csv), "/rows");
    r.human = inputs_text(in, res) + "\n" + render_table(in_words(rows_table(in.req, res, CellForm::text), "decode-roofline")) +
              findings_text(in, res);
    r.explain = result_explain(in, res);
    if (in.req.prompt_len) {
        r.add_table("generation", generation_table(res, CellForm::csv), "/generation");
        r.human += generation_text(in.req, res);
    }
    return r;
}

}  // namespace inferlab::app
