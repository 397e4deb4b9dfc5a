#include "inferlab/roofline.hpp"

#include <algorithm>
#include <cmath>

#include "inferlab/checked.hpp"
#include "inferlab/error.hpp"

namespace inferlab {

std::uint64_t weight_bytes_of(std::uint64_t params, unsigned bits) {
    return to_u64((static_cast<u128>(params) * bits + 7) / 8, "weight bytes");
}

std::uint64_t request_kv_bytes(const DecodeModel& m, std::uint64_t seq_len) {
    if (m.kv_spec) return kv_bytes(*m.kv_spec, {seq_len}).total_bytes;
    if (m.kv_bytes_per_request) return *m.kv_bytes_per_request;
    return 0;
}

namespace {

double attention_flops(const DecodeModel& m, std::uint64_t seq_len) {
    // QKᵀ and the weighted sum of V: 2 FLOPs per multiply-add, 2 matmuls → 4·L·H_q·d·S.
    return 4.0 * static_cast<double>(m.attn_layers) * static_cast<double>(m.attn_q_heads) *
           static_cast<double>(m.attn_head_dim) * static_cast<double>(seq_len);
}

}  // namespace

DecodeStep decode_step(const DecodeModel& m, const std::vector<std::uint64_t>& seq_lens, const Machine& hw) {
    if (!(hw.bandwidth > 0)) throw InputError("--bandwidth must be positive");
    DecodeStep s;
    s.batch = seq_lens.size();
    s.weight_bytes = m.weight_bytes;
    for (std::uint64_t len : seq_lens) s.kv_bytes = checked_add(s.kv_bytes, request_kv_bytes(m, len), "KV bytes of the batch");
    s.bytes = checked_add(m.weight_bytes, s.kv_bytes, "bytes per step");
    s.memory_time_s = static_cast<double>(s.bytes) / hw.bandwidth;
    s.step_time_s = s.memory_time_s;
    if (m.params) {
        double f = 2.0 * static_cast<double>(*m.params) * static_cast<double>(s.batch);
        if (m.has_attention_shape())
            for (std::uint64_t len : seq_lens) f += attention_flops(m, len);
        s.flops = f;
        s.intensity = f / static_cast<double>(s.bytes);
        if (hw.peak_flops) {
            s.compute_time_s = f / *hw.peak_flops;
            if (*s.compute_time_s > s.memory_time_s) {
                s.step_time_s = *s.compute_time_s;
                s.compute_bound = true;
            }
        }
    }
    s.aggregate_tokens_per_s = static_cast<double>(s.batch) / s.step_time_s;
    s.per_request_tokens_per_s = 1.0 / s.step_time_s;
    if (hw.memory_bytes) s.fits = s.bytes <= *hw.memory_bytes;
    return s;
}

std::optional<std::uint64_t> compute_bound_from(const DecodeModel& m, std::uint64_t seq_len, const Machine& hw) {
    if (!hw.peak_flops || !m.params) return std::nullopt;
    // Per added request: compute grows by F1/π, reads by M/β; weights W/β are paid once.
    const double f1 = 2.0 * static_cast<double>(*m.params) + (m.has_attention_shape() ? attention_flops(m, seq_len) : 0.0);
    const double per_req = f1 / *hw.peak_flops - static_cast<double>(request_kv_bytes(m, seq_len)) / hw.bandwidth;
    if (per_req <= 0) return std::nullopt;
    double b = std::ceil((static_cast<double>(m.weight_bytes) / hw.bandwidth) / per_req);
    if (!(b < 1e15)) return std::nullopt;
    if (!(b <= 1e7)) return std::nullopt;  // beyond ten million requests: not a batch anyone runs
    // The closed form can be off by one in floating point: settle it with decode_step itself.
    auto is_compute = [&](double n) {
        return decode_step(m, std::vector<std::uint64_t>(static_cast<std::size_t>(n), seq_len), hw).compute_bound;
    };
    if (b < 1) b = 1;
    while (b > 1 && is_compute(b - 1)) b -= 1;
    while (!is_compute(b)) b += 1;
    return static_cast<std::uint64_t>(b);
}

GenerationBound decode_generation(const DecodeModel& m, std::uint64_t batch, std::uint64_t start_len,
                                  std::uint64_t steps, const Machine& hw) {
    GenerationBound g;
    g.batch = batch;
    g.start_len = start_len;
    g.steps = steps;
    if (steps == 0) return g;
    for (std::uint64_t i = 0; i < steps; ++i) {
        DecodeStep s = decode_step(m, std::vector<std::uint64_t>(batch, start_len + i), hw);
        g.total_time_s += s.step_time_s;
        g.bytes_read += static_cast<double>(s.bytes);
        if (i == 0) g.first_step_s = s.step_time_s;
        if (i + 1 == steps) g.last_step_s = s.step_time_s;
    }
    g.average_step_s = g.total_time_s / static_cast<double>(steps);
    g.charged_at_final_s = g.last_step_s * static_cast<double>(steps);
    return g;
}

PrefillBound prefill_bound(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len, const Machine& hw) {
    if (!m.params) throw InputError("prefill needs the parameter count: give --params, or a model with --config/--model");
    if (!hw.peak_flops)
        throw InputError("prefill is mostly compute-bound: give --peak-flops (e.g. 989TFLOPS) or --hw with a FLOPS figure");
    PrefillBound p;
    p.batch = batch;
    p.prompt_len = prompt_len;
    const double B = static_cast<double>(batch), P = static_cast<double>(prompt_len);
    p.bytes = static_cast<double>(m.weight_bytes) + B * static_cast<double>(request_kv_bytes(m, prompt_len));
    p.flops = 2.0 * static_cast<double>(*m.params) * P * B;
    if (m.has_attention_shape())
        p.flops += 2.0 * static_cast<double>(m.attn_layers) * static_cast<double>(m.attn_q_heads) *
                   static_cast<double>(m.attn_head_dim) * P * P * B;
    p.memory_time_s = p.bytes / hw.bandwidth;
    p.compute_time_s = p.flops / *hw.peak_flops;
    p.compute_bound = p.compute_time_s > p.memory_time_s;
    p.time_s = std::max(p.memory_time_s, p.compute_time_s);
    return p;
}

GenerationBound generation_decode_steps(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len,
                                        std::uint64_t output_len, const Machine& hw) {
    if (output_len == 0) throw InputError("--output-len", "0", "must be a positive integer");
    return decode_generation(m, batch, prompt_len + 1, output_len - 1, hw);
}

LatencyBound latency_bound(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len,
                           std::uint64_t output_len, const Machine& hw) {
    LatencyBound l;
    l.decode = generation_decode_steps(m, batch, prompt_len, output_len, hw);
    l.prefill = prefill_bound(m, batch, prompt_len, hw);
    l.ttft_s = l.prefill.time_s;
    if (output_len > 1) l.tpot_s = l.decode.average_step_s;
    l.end_to_end_s = l.ttft_s + l.decode.total_time_s;
    return l;
}

}  // namespace inferlab
