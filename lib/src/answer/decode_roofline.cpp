#include "inferlab/answer/decode_roofline.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/quant.hpp"

namespace inferlab {

double bytes_in_gb(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e9; }
double bytes_in_gib(std::uint64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(1ULL << 30); }

std::vector<AttnLayer> attention_layers_of(const ModelConfig& c) {
    std::vector<AttnLayer> out;
    for (std::uint64_t l = 0; l < c.layers; ++l)
        out.push_back(c.mla ? AttnLayer{c.q_heads, c.qk_nope_head_dim + c.qk_rope_head_dim, c.v_head_dim,
                                        c.window_per_layer[l]}
                            : AttnLayer{c.q_heads, c.head_dim, c.head_dim, c.window_per_layer[l]});
    return out;
}

MoeWeights moe_weights_of(const ModelConfig& c, const ParamCount& pc, const DType& weight_dtype) {
    // quantize's storage rule: int8/int4 count their fp16 group scales, as the dense weights do.
    return MoeWeights{weight_storage(pc.always_read, weight_dtype).total_bytes, weight_storage(pc.expert_params, weight_dtype).total_bytes,
                      pc.moe_layers, c.experts, c.experts_per_token};
}

namespace {

void check_request(const RooflineRequest& req) {
    if (!(req.machine.bandwidth > 0)) throw InputError(N_("the bandwidth β must be positive"));
    if (req.batches.empty()) throw InputError(N_("no batch size given"));
    for (std::uint64_t b : req.batches)
        if (b == 0 || b > kMaxDecodeBatch)
            throw InputError("batch", std::to_string(b), N_("must be from 1 to {0} requests"),
                             {group_thousands(kMaxDecodeBatch)});
    if (req.lens_are_batch && req.batches != std::vector<std::uint64_t>{req.seq_lens.size()})
        throw InputError(N_("a list of lengths is the batch itself: one row of that many requests"));
    if (req.prompt_len.has_value() != req.output_len.has_value())
        throw InputError(N_("a whole generation needs both the prompt length P and the output length N"));
}

DecodeStep row_of(const RooflineRequest& req, std::uint64_t batch) {
    if (req.lens_are_batch) return decode_step(req.model, req.seq_lens, req.machine);
    // Fixed M_KV without lengths: S = 0 only counts the requests (attention FLOPs need a model).
    return decode_step_uniform(req.model, batch, req.seq_lens.empty() ? 0 : req.seq_lens.front(), req.machine);
}

std::vector<GenerationRow> generation_rows(const RooflineRequest& req, bool has_prefill) {
    const std::uint64_t P = *req.prompt_len, N = *req.output_len;
    if (!req.model.kv_spec) throw InputError(N_("a whole generation needs the KV geometry of a model, not a fixed M_KV"));
    if (req.lens_are_batch) throw InputError(N_("a whole generation takes requests of one length, not a list of lengths"));
    if (P == 0 || N == 0 || N > kMaxOutputLen)
        throw InputError(N_("a whole generation needs P ≥ 1 and 1 ≤ N ≤ {0} tokens"), {group_thousands(kMaxOutputLen)});
    std::vector<GenerationRow> out;
    for (std::uint64_t b : req.batches) {
        // One accounting for every figure: token 1 from prefill, tokens 2..N from N − 1 decode steps.
        GenerationRow g;
        g.batch = b;
        if (has_prefill) g.latency = latency_bound(req.model, b, P, N, req.machine);
        g.decode = g.latency ? g.latency->decode : generation_decode_steps(req.model, b, P, N, req.machine);
        out.push_back(g);
    }
    return out;
}

}  // namespace

RooflineResult decode_roofline(const RooflineRequest& req) {
    check_request(req);
    const DecodeModel& m = req.model;
    const Machine& hw = req.machine;
    RooflineResult r;
    for (std::uint64_t b : req.batches) r.rows.push_back(row_of(req, b));
    if (hw.peak_flops) r.ridge_flops_per_byte = *hw.peak_flops / hw.bandwidth;
    if (r.rows.size() >= 2) {
        const DecodeStep& a = r.rows.front();
        const DecodeStep& z = r.rows.back();
        r.comparison = BatchComparison{a.batch, z.batch, static_cast<double>(z.bytes) / static_cast<double>(a.bytes),
                                       z.aggregate_tokens_per_s / a.aggregate_tokens_per_s,
                                       z.per_request_tokens_per_s / a.per_request_tokens_per_s};
    }
    if (hw.peak_flops && m.params && !req.lens_are_batch) {
        r.compute_limit_searched = true;
        r.compute_bound_from_batch = compute_bound_from(m, req.seq_lens.empty() ? 0 : req.seq_lens.front(), hw);
    }
    for (const auto& s : r.rows) r.any_row_exceeds_memory = r.any_row_exceeds_memory || (s.fits && !*s.fits);
    if (req.prompt_len) {
        r.generation_has_prefill = hw.peak_flops && m.params;
        r.generation = generation_rows(req, r.generation_has_prefill);
    }
    return r;
}

double memory_bound_tokens_per_s(const DecodeStep& s) { return static_cast<double>(s.batch) / s.memory_time_s; }

std::optional<double> compute_bound_tokens_per_s(const DecodeStep& s) {
    if (!s.compute_time_s || *s.compute_time_s <= 0) return std::nullopt;
    return static_cast<double>(s.batch) / *s.compute_time_s;
}

std::optional<double> achieved_flops_per_s(const DecodeStep& s) {
    if (!s.flops) return std::nullopt;
    return *s.flops / s.step_time_s;
}

double attainable_flops_per_s(const Machine& hw, double intensity) {
    const double memory_roof = hw.bandwidth * intensity;
    return hw.peak_flops ? std::min(*hw.peak_flops, memory_roof) : memory_roof;
}

std::uint64_t longest_length(const RooflineRequest& req) {
    std::uint64_t longest = 0;
    for (std::uint64_t s : req.seq_lens) longest = std::max(longest, s);
    if (req.prompt_len && req.output_len) longest = std::max(longest, *req.prompt_len + *req.output_len - 1);
    return longest;
}

}  // namespace inferlab
