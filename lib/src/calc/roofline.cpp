#include "inferlab/calc/roofline.hpp"

#include <algorithm>
#include <cmath>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"

namespace inferlab {

std::uint64_t weight_bytes_of(std::uint64_t params, unsigned bits) {
    return to_u64((static_cast<u128>(params) * bits + 7) / 8, N_("weight bytes"));
}

std::uint64_t request_kv_bytes(const DecodeModel& m, std::uint64_t seq_len) {
    if (m.linear_kv_bytes_per_token) {
        std::uint64_t b = 0;
        if (__builtin_mul_overflow(*m.linear_kv_bytes_per_token, seq_len, &b)) throw OverflowError(N_("KV bytes of a request"));
        return b;
    }
    if (m.kv_spec) return kv_bytes(*m.kv_spec, {seq_len}).total_bytes;
    if (m.kv_bytes_per_request) return *m.kv_bytes_per_request;
    return 0;
}

double expected_experts_read(std::uint64_t experts, std::uint64_t top_k, std::uint64_t tokens) {
    if (experts == 0 || tokens == 0) return 0;
    if (tokens == 1) return static_cast<double>(top_k);  // exact: one token reads its k experts
    const long double miss = 1.0L - static_cast<long double>(top_k) / static_cast<long double>(experts);
    return static_cast<double>(static_cast<long double>(experts) * (1.0L - std::pow(miss, static_cast<long double>(tokens))));
}

std::uint64_t weight_bytes_read(const DecodeModel& m, std::uint64_t tokens) {
    if (!m.moe) return m.weight_bytes;
    const MoeWeights& e = *m.moe;
    const long double experts = expected_experts_read(e.experts, e.top_k, tokens);
    const long double routed = static_cast<long double>(e.moe_layers) * experts * static_cast<long double>(e.expert_bytes);
    const std::uint64_t r = static_cast<std::uint64_t>(std::llround(routed));
    return checked_add(e.always_read_bytes, std::min(r, m.weight_bytes - e.always_read_bytes), N_("weight bytes read"));
}

namespace {

// Query-key pairs of positions start … start + tokens − 1 in a layer of window W (0: none): the
// query at position i attends to its min(i + 1, W) positions, the newest included (as a decode step
// counts its own). With F(n) = Σ_{i<n} min(i + 1, W) = n(n + 1)/2, or W(W + 1)/2 + (n − W)·W past
// the window, the pairs are F(start + tokens) − F(start): S for a decode step at S (min(S, W)),
// P(P + 1)/2 for a prefill of P.
long double causal_pairs(std::uint64_t start, std::uint64_t tokens, std::uint64_t window) {
    auto F = [window](std::uint64_t n) {
        const long double N = static_cast<long double>(n);
        if (window == 0 || n <= window) return N * (N + 1) / 2;
        const long double W = static_cast<long double>(window);
        return W * (W + 1) / 2 + (N - W) * W;
    };
    return F(start + tokens) - F(start);
}

// Attention FLOPs of one chunk: per layer 2·H_q·(d_qk + d_v) per query-key pair (QKᵀ and the
// weighted sum of V, 2 FLOPs per multiply-add); uniform: 4·L·H_q·d per pair.
double chunk_attention_flops(const DecodeModel& m, std::uint64_t start, std::uint64_t tokens) {
    if (m.attn_flops_per_pair) return static_cast<double>(*m.attn_flops_per_pair * causal_pairs(start, tokens, 0));
    if (!m.attn_per_layer.empty()) {
        long double f = 0;
        for (const auto& a : m.attn_per_layer)
            f += 2.0L * static_cast<long double>(a.q_heads) * static_cast<long double>(a.d_qk + a.d_v) *
                 causal_pairs(start, tokens, a.window);
        return static_cast<double>(f);
    }
    return static_cast<double>(4.0L * static_cast<long double>(m.attn_layers) * static_cast<long double>(m.attn_q_heads) *
                               static_cast<long double>(m.attn_head_dim) * causal_pairs(start, tokens, 0));
}

// The step from its totals: one formula for step_cost and compute_bound_from.
DecodeStep finish_step(const DecodeModel& m, std::uint64_t batch, std::uint64_t tokens, std::uint64_t kv,
                       double attn_flops, const Machine& hw) {
    DecodeStep s;
    s.batch = batch;
    s.tokens = tokens;
    s.weight_bytes = weight_bytes_read(m, tokens);
    if (m.moe) {
        s.experts_read_per_layer = expected_experts_read(m.moe->experts, m.moe->top_k, tokens);
        s.experts_read_rounded_to_all = m.moe->top_k < m.moe->experts && *s.experts_read_per_layer == double(m.moe->experts);
    }
    s.kv_bytes = kv;
    s.bytes = checked_add(s.weight_bytes, s.kv_bytes, N_("bytes per step"));
    s.memory_time_s = static_cast<double>(s.bytes) / hw.bandwidth;
    double roof = s.memory_time_s;
    if (m.params) {
        double f = 2.0 * static_cast<double>(*m.params) * static_cast<double>(tokens);
        if (m.has_attention_shape()) f += attn_flops;
        s.flops = f;
        s.intensity = f / static_cast<double>(s.bytes);
        if (hw.peak_flops) {
            s.compute_time_s = f / *hw.peak_flops;
            if (*s.compute_time_s > s.memory_time_s) {
                roof = *s.compute_time_s;
                s.compute_bound = true;
            }
        }
    }
    if (hw.tp) s.comm_time_s = allreduce_time_s(*hw.tp, tokens);
    s.overhead_s = hw.step_overhead_s;
    s.step_time_s = roof + s.comm_time_s + s.overhead_s;
    s.aggregate_tokens_per_s = static_cast<double>(s.batch) / s.step_time_s;
    s.per_request_tokens_per_s = 1.0 / s.step_time_s;
    if (hw.memory_bytes) s.fits = checked_add(m.weight_bytes, s.kv_bytes, N_("weights and KV")) <= *hw.memory_bytes;
    return s;
}

void require_bandwidth(const Machine& hw) {
    if (!(hw.bandwidth > 0)) throw InputError(N_("the bandwidth β must be positive"));
}

}  // namespace

void prepare_step_cost(DecodeModel& m) {
    m.linear_kv_bytes_per_token.reset();
    m.attn_flops_per_pair.reset();
    if (m.kv_spec) {
        bool linear = !m.kv_spec->layers.empty();
        for (const auto& l : m.kv_spec->layers) linear = linear && l.window == 0 && layer_token_bits(l) % 8 == 0;
        if (linear) m.linear_kv_bytes_per_token = bytes_per_token(*m.kv_spec);
    }
    if (!m.attn_per_layer.empty()) {
        long double per_pair = 0;
        for (const auto& a : m.attn_per_layer) {
            if (a.window != 0) return;
            per_pair += 2.0L * static_cast<long double>(a.q_heads) * static_cast<long double>(a.d_qk + a.d_v);
        }
        m.attn_flops_per_pair = per_pair;
    }
}

double allreduce_time_s(const TensorParallel& tp, std::uint64_t tokens) {
    if (tp.devices <= 1) return 0;
    const double n = static_cast<double>(tp.devices);
    const double bytes = static_cast<double>(tokens) * static_cast<double>(tp.hidden) * static_cast<double>(tp.activation_bytes);
    const double one = tp.link_latency_s + 2.0 * (n - 1) / n * bytes / tp.link_bandwidth;
    return 2.0 * static_cast<double>(tp.layers) * one;
}

DecodeModel tensor_parallel_share(const DecodeModel& m, std::uint64_t devices) {
    if (devices <= 1) return m;
    auto part = [devices](std::uint64_t v) { return v / devices + (v % devices != 0); };
    DecodeModel d = m;
    d.linear_kv_bytes_per_token.reset();  // the whole model's: prepare_step_cost again for the share
    d.attn_flops_per_pair.reset();
    d.weight_bytes = part(m.weight_bytes);
    if (m.params) d.params = part(*m.params);
    if (m.kv_spec) d.kv_spec = kv_spec_per_device(*m.kv_spec, devices);
    if (m.kv_bytes_per_request) d.kv_bytes_per_request = part(*m.kv_bytes_per_request);
    d.attn_q_heads = part(m.attn_q_heads);
    for (auto& a : d.attn_per_layer) a.q_heads = part(a.q_heads);
    if (m.moe) {
        d.moe->always_read_bytes = part(m.moe->always_read_bytes);
        d.moe->expert_bytes = part(m.moe->expert_bytes);
        // The parts rounded up may pass ceil(W/N): W/N is what a device holds, the reads are capped by it.
        d.weight_bytes = std::max(d.weight_bytes, d.moe->always_read_bytes);
    }
    return d;
}

DecodeStep step_cost(const DecodeModel& m, std::span<const StepChunk> chunks, const Machine& hw) {
    require_bandwidth(hw);
    // Summed in 128 bits and checked once: a message string built per chunk would cost more than
    // the arithmetic (serve-sim prices millions of chunks).
    u128 kv = 0, requests = 0, tokens = 0;
    double attn = 0;
    for (const StepChunk& c : chunks) {
        std::uint64_t end = 0;
        if (__builtin_add_overflow(c.start, c.tokens, &end)) throw OverflowError(N_("the positions of a request"));
        kv += static_cast<u128>(request_kv_bytes(m, end)) * c.count;
        requests += c.count;
        // tokens 0: a decode step of a request whose length is not given (a fixed M_KV): one token, no attention.
        tokens += static_cast<u128>(c.tokens ? c.tokens : 1) * c.count;
        if (m.has_attention_shape()) attn += chunk_attention_flops(m, c.start, c.tokens) * static_cast<double>(c.count);
    }
    return finish_step(m, to_u64(requests, N_("requests in a step")), to_u64(tokens, N_("tokens in a step")),
                       to_u64(kv, N_("KV bytes of the batch")), attn, hw);
}

// A request holding S positions after the step feeds position S − 1 (S = 0 is refused upstream:
// a decode step reads at least its own position).
DecodeStep decode_step(const DecodeModel& m, const std::vector<std::uint64_t>& seq_lens, const Machine& hw) {
    std::vector<StepChunk> chunks;
    chunks.reserve(seq_lens.size());
    for (std::uint64_t len : seq_lens) chunks.push_back({len ? len - 1 : 0, len ? 1u : 0u, 1});
    return step_cost(m, chunks, hw);
}

DecodeStep decode_step_uniform(const DecodeModel& m, std::uint64_t batch, std::uint64_t seq_len, const Machine& hw) {
    // B equal requests: one chunk counted B times, so the cost does not grow with B.
    const StepChunk c{seq_len ? seq_len - 1 : 0, seq_len ? 1u : 0u, batch};
    return step_cost(m, std::span<const StepChunk>(&c, 1), hw);
}

std::optional<std::uint64_t> compute_bound_from(const DecodeModel& m, std::uint64_t seq_len, const Machine& hw) {
    if (!hw.peak_flops || !m.params) return std::nullopt;
    require_bandwidth(hw);
    // compute − memory time is B·(F1/π − M/β) − W(B)/β: linear minus a concave W(B) (MoE) or a
    // constant (dense), so once a batch is compute-bound every larger one is: bisect.
    const std::uint64_t per_request = request_kv_bytes(m, seq_len);
    const double attn = m.has_attention_shape() && seq_len ? chunk_attention_flops(m, seq_len - 1, 1) : 0.0;
    auto is_compute = [&](std::uint64_t b) {
        const u128 kv = static_cast<u128>(per_request) * b;
        if (kv > UINT64_MAX) return false;
        return finish_step(m, b, b, static_cast<std::uint64_t>(kv), attn * static_cast<double>(b), hw).compute_bound;
    };
    constexpr std::uint64_t kMaxBatch = 10000000;  // beyond ten million requests: not a batch anyone runs
    if (!is_compute(kMaxBatch)) return std::nullopt;
    std::uint64_t lo = 1, hi = kMaxBatch;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (is_compute(mid)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

namespace {

// Σ over the steps of one arithmetic progression S = s, s + p, …, s + p·(n − 1) of lengths.
struct StepSums {
    long double time_s = 0;
    u128 bytes = 0;
};

// Within a run of lengths where no layer's window is crossed, every layer holds min(S, W) = S or
// W positions, linear in S; its bytes are rounded up per request and layer, ⌈S·t/8⌉ for t bits a
// token, which grows by exactly t every 8 positions. So along S, S + 8, S + 16, … the bytes and
// the FLOPs are linear in the index, their times are too, and max(memory, compute) changes regime
// at most once: a few evaluations at the ends and a bisection for the change sum the
// progression, however long it is (memory-bound: the bytes' exact sum over β; compute-bound:
// count × the mean of the two ends).
template <typename Step>
StepSums sum_progression(const Step& step, double bandwidth, std::uint64_t s, std::uint64_t p, std::uint64_t n) {
    auto at = [&](std::uint64_t k) { return step(s + p * k); };
    // A linear piece k = i … j in one regime: bytes summed exactly, times from its two ends.
    auto piece = [&](std::uint64_t i, std::uint64_t j, StepSums& sums) {
        const DecodeStep a = at(i), b = at(j);
        const u128 count = j - i + 1;
        const u128 bytes = (static_cast<u128>(a.bytes) + b.bytes) * count / 2;
        sums.bytes += bytes;
        // Memory-bound: Σ D_B / β, exactly the bytes' sum; compute-bound: n·(t_first + t_last)/2.
        // A batch's all-reduces and overhead are the same at every length: count × theirs.
        const long double extra = static_cast<long double>(a.comm_time_s) + a.overhead_s;
        sums.time_s += a.compute_bound
                           ? static_cast<long double>(count) * (static_cast<long double>(a.step_time_s) + b.step_time_s) / 2
                           : static_cast<long double>(bytes) / bandwidth + static_cast<long double>(count) * extra;
    };
    StepSums sums;
    const bool first = at(0).compute_bound, last = at(n - 1).compute_bound;
    if (first == last) {
        piece(0, n - 1, sums);
        return sums;
    }
    std::uint64_t lo = 1, hi = n - 1;  // the first index in the last step's regime
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (at(mid).compute_bound == last) hi = mid;
        else lo = mid + 1;
    }
    piece(0, lo - 1, sums);
    piece(lo, n - 1, sums);
    return sums;
}

// The runs [first, last] of lengths in [from, to] within which no layer's window is crossed: a
// layer of window W holds S positions up to S = W and W from there on, so a run ends at each W.
struct Run {
    std::uint64_t first, last;
};
std::vector<Run> linear_runs(const DecodeModel& m, std::uint64_t from, std::uint64_t to) {
    std::vector<std::uint64_t> ends;  // inclusive: no sentinel past `to`, which may be 2^64 − 1
    auto add = [&](std::uint64_t w) {
        if (w != 0 && w >= from && w < to) ends.push_back(w);
    };
    if (m.kv_spec)
        for (const auto& l : m.kv_spec->layers) add(l.window);
    for (const auto& a : m.attn_per_layer) add(a.window);
    ends.push_back(to);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    std::vector<Run> runs;
    std::uint64_t first = from;
    for (std::uint64_t e : ends) {
        runs.push_back({first, e});
        first = e + 1;  // e < to here except for the last, so no wrap
    }
    return runs;
}

}  // namespace

GenerationBound decode_generation(const DecodeModel& m, std::uint64_t batch, std::uint64_t start_len,
                                  std::uint64_t steps, const Machine& hw) {
    GenerationBound g;
    g.batch = batch;
    g.start_len = start_len;
    g.steps = steps;
    if (steps == 0) return g;
    g.last_len = checked_add(start_len, steps - 1, N_("the last step's length"));
    auto step = [&](std::uint64_t len) { return decode_step_uniform(m, batch, len, hw); };
    // Summed in closed form over linear runs (a generation of 10^7 tokens at 64 batch sizes once
    // walked 6.4·10^8 steps); the same figures as adding the steps one by one, to rounding.
    constexpr std::uint64_t kPeriod = 8;  // bytes rounded per 8 positions repeat their increments
    long double time_s = 0;
    u128 bytes = 0;
    for (const Run& run : linear_runs(m, start_len, g.last_len))
        for (std::uint64_t r = 0; r < kPeriod && r <= run.last - run.first; ++r) {
            const std::uint64_t n = (run.last - run.first - r) / kPeriod + 1;  // S = first + r, + 8, … ≤ last
            const StepSums part = sum_progression(step, hw.bandwidth, run.first + r, kPeriod, n);
            time_s += part.time_s;
            bytes += part.bytes;
        }
    g.total_time_s = static_cast<double>(time_s);
    g.bytes_read = static_cast<double>(bytes);
    g.first_step_s = step(start_len).step_time_s;
    g.last_step_s = step(g.last_len).step_time_s;
    g.average_step_s = g.total_time_s / static_cast<double>(steps);
    g.charged_at_final_s = g.last_step_s * static_cast<double>(steps);
    return g;
}

PrefillBound prefill_bound(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len, const Machine& hw) {
    if (!m.params) throw InputError(N_("prefill needs the parameter count P (2·P FLOPs per prompt token)"));
    if (!hw.peak_flops) throw InputError(N_("prefill is mostly compute-bound: it needs the peak FLOP rate π"));
    PrefillBound p;
    p.batch = batch;
    p.prompt_len = prompt_len;
    // One step of B chunks of P positions from 0: the experts all B·P tokens route to (a dense
    // model: all of W), each prompt's KV written, 2·P FLOPs a token and its causal attention.
    const StepChunk c{0, prompt_len, batch};
    const DecodeStep st = step_cost(m, std::span<const StepChunk>(&c, 1), hw);
    p.bytes = static_cast<double>(st.bytes);
    p.flops = *st.flops;
    p.memory_time_s = st.memory_time_s;
    p.compute_time_s = *st.compute_time_s;
    p.compute_bound = st.compute_bound;
    p.comm_time_s = st.comm_time_s;
    p.time_s = st.step_time_s;
    return p;
}

GenerationBound generation_decode_steps(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len,
                                        std::uint64_t output_len, const Machine& hw) {
    if (output_len == 0) throw InputError(N_("a whole generation needs the output length N ≥ 1"));
    return decode_generation(m, batch, checked_add(prompt_len, 1, N_("the first decode step's length")), output_len - 1, hw);
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
