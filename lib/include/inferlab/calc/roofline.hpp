#pragma once
// The decode read-volume model of the first document (§2.1.3) and what follows from it.
//
//   D_B = W + Σ_i M_KV,i         bytes one batch step reads (weights once, every request's KV once)
//   t_B ≥ D_B / β                 time bound at sustained bandwidth β
//   R_all ≤ B / t_B,  R_one ≤ 1 / t_B
// Beyond the document: a compute bound F_B / π with F_B = 2·P·B + Σ_i 4·L·H_q·d·S_i (P weight
// parameters, attention over S_i cached tokens), so t_B = max(D_B/β, F_B/π); whole generations
// whose context grows by one token a step; prefill and the TTFT/TPOT/end-to-end bounds.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "inferlab/calc/kv.hpp"

namespace inferlab {

// Mixture of experts: what a step reads depends on how many distinct experts its tokens route to.
// Routing assumption (stated in --help and README): each token picks its k experts uniformly at
// random, independently of the other tokens, so T tokens touch E·(1 − (1 − k/E)^T) distinct
// experts per layer in expectation (exactly k at T = 1).
struct MoeWeights {
    std::uint64_t always_read_bytes = 0;  // attention, shared experts, routers, dense layers, embeddings, head
    std::uint64_t expert_bytes = 0;       // one routed expert of one layer
    std::uint64_t moe_layers = 0, experts = 0, top_k = 0;
};

// One layer's attention, for FLOPs: 2·H_q·(d_qk + d_v) per cached position it attends to,
// min(S, W) positions for a sliding layer (window 0: all S).
struct AttnLayer {
    std::uint64_t q_heads = 0, d_qk = 0, d_v = 0, window = 0;
};

struct DecodeModel {
    std::uint64_t weight_bytes = 0;                 // W (MoE: every expert; a step reads less, see moe)
    std::optional<std::uint64_t> params;            // P, for FLOPs (2 per parameter per token)
    std::optional<KvSpec> kv_spec;                  // KV bytes from lengths (kv-mem's function)
    std::optional<std::uint64_t> kv_bytes_per_request;  // or a fixed M_KV per request
    // Attention shape for 4·L·H_q·d·S FLOPs per request (all zero: not counted).
    std::uint64_t attn_layers = 0, attn_q_heads = 0, attn_head_dim = 0;
    // Per-layer attention (sliding windows, MLA's d_qk ≠ d_v); when given it replaces the three above.
    std::vector<AttnLayer> attn_per_layer;
    std::optional<MoeWeights> moe;
    // Filled by prepare_step_cost for a caller that prices many steps (serve-sim): the same
    // figures in fewer operations where they are linear, i.e. no layer has a window, and a token's
    // K/V is whole bytes in every layer (then kv_bytes of S positions is S × bytes a token, and
    // the attention FLOPs are the query-key pairs × Σ_l 2·H_q·(d_qk + d_v)).
    std::optional<std::uint64_t> linear_kv_bytes_per_token;
    std::optional<long double> attn_flops_per_pair;
    bool has_attention_shape() const {
        return !attn_per_layer.empty() || (attn_layers && attn_q_heads && attn_head_dim);
    }
};

// Sets the two shortcuts above where they hold exactly (leaves them empty otherwise).
void prepare_step_cost(DecodeModel& m);

// W = P·b/8 bytes for P parameters of b bits each, rounded up to whole bytes (int4 packs two a byte).
std::uint64_t weight_bytes_of(std::uint64_t params, unsigned bits);
// E·(1 − (1 − k/E)^T): expected distinct experts per layer that T tokens route to (uniform routing).
double expected_experts_read(std::uint64_t experts, std::uint64_t top_k, std::uint64_t tokens);
// Weight bytes a step over `tokens` tokens reads: W for a dense model; for MoE the always-read part
// plus moe_layers × expected experts × expert bytes (an expectation, rounded to a whole byte).
std::uint64_t weight_bytes_read(const DecodeModel& m, std::uint64_t tokens);

// Tensor parallelism over N devices (Megatron's split): each device reads 1/N of the weights and of
// the K/V heads and does 1/N of the FLOPs (the model given to a step is one device's share:
// tensor_parallel_share), and every layer ends its attention and its MLP with an all-reduce of the
// step's activations, T tokens × hidden × activation bytes. A ring all-reduce sends
// 2(N − 1)/N of those bytes over each device's link: per call latency + 2(N − 1)/N × bytes / link.
struct TensorParallel {
    std::uint64_t devices = 1;
    double link_bandwidth = 0;     // B/s, one direction of one device's link
    double link_latency_s = 0;     // per all-reduce call
    std::uint64_t layers = 0, hidden = 0;
    std::uint64_t activation_bytes = 2;  // bf16 activations
};

struct Machine {
    double bandwidth = 0;                        // β, B/s
    std::optional<double> peak_flops;            // π, FLOP/s
    std::optional<std::uint64_t> memory_bytes;   // device capacity
    std::optional<TensorParallel> tp;            // N > 1 adds the all-reduces to every step
    double step_overhead_s = 0;                  // a constant per step: launches, scheduling (serve-sim)
};

// One step's all-reduces over T tokens: 2·L calls of latency + 2(N − 1)/N × T·hidden·a / link (0 at N = 1).
double allreduce_time_s(const TensorParallel& tp, std::uint64_t tokens);

// One device's share of a model under N-way tensor parallelism: ceil(W/N) weight bytes (MoE: each
// part likewise), P/N parameters for the FLOPs, ceil(H_q/N) query heads per layer, the K/V heads
// as kv_spec_per_device splits them (replicated when N > H_kv; an MLA latent whole).
DecodeModel tensor_parallel_share(const DecodeModel& m, std::uint64_t devices);

struct DecodeStep {
    std::uint64_t batch = 0;
    std::uint64_t tokens = 0;             // tokens the step feeds (a decode step: one per request)
    std::uint64_t weight_bytes = 0;       // weights read by this step (MoE: the experts routed to)
    std::optional<double> experts_read_per_layer;  // MoE: expected distinct routed experts per layer
    // MoE: E·(1 − (1 − k/E)^B) came out as E only because the power underflowed (B = 10^7): the
    // double is E, the expectation is below it, so a printed "=" would be false.
    bool experts_read_rounded_to_all = false;
    std::uint64_t kv_bytes = 0;           // Σ_i M_KV,i
    std::uint64_t bytes = 0;              // D_B
    double memory_time_s = 0;             // D_B / β
    std::optional<double> flops;          // F_B
    std::optional<double> compute_time_s; // F_B / π
    double comm_time_s = 0;               // tensor-parallel all-reduces (0 without TP)
    double overhead_s = 0;                // Machine::step_overhead_s
    double step_time_s = 0;               // max of the two + comm + overhead
    bool compute_bound = false;           // compute time above memory time
    double aggregate_tokens_per_s = 0;    // B / t_B
    double per_request_tokens_per_s = 0;  // 1 / t_B
    std::optional<double> intensity;      // F_B / D_B, FLOP per byte
    std::optional<bool> fits;             // weights + KV within memory
};

// KV bytes of one request holding `seq_len` tokens, from the spec (kv_bytes, as kv-mem) or fixed.
std::uint64_t request_kv_bytes(const DecodeModel& m, std::uint64_t seq_len);

// A request's part of one step: it feeds positions start … start + tokens − 1 (a decode step of a
// request holding S positions after it: start = S − 1, one token; a prefill of P: start 0, P
// tokens), `count` requests alike. Bytes: the weights once (MoE: the experts all the step's tokens
// route to) and each request's KV at start + tokens positions (read, and written for the new
// ones); FLOPs: 2·P per token and attention over each new position's causal span (its window).
struct StepChunk {
    std::uint64_t start = 0, tokens = 1, count = 1;
};

// The step bound every figure of decode-roofline and serve-sim comes from:
// max(bytes/β, FLOPs/π) + all-reduces + overhead.
DecodeStep step_cost(const DecodeModel& m, std::span<const StepChunk> chunks, const Machine& hw);

// One decode step for requests of the given lengths (one token each). With a fixed M_KV the
// lengths still count the requests and feed the attention FLOPs.
DecodeStep decode_step(const DecodeModel& m, const std::vector<std::uint64_t>& seq_lens, const Machine& hw);

// The same for `batch` requests of `seq_len` tokens each, in time independent of the batch.
DecodeStep decode_step_uniform(const DecodeModel& m, std::uint64_t batch, std::uint64_t seq_len, const Machine& hw);

// Smallest batch of requests of `seq_len` tokens whose step is compute-bound; nullopt when the
// step never becomes compute-bound (the KV read grows as fast as the arithmetic) or no π.
std::optional<std::uint64_t> compute_bound_from(const DecodeModel& m, std::uint64_t seq_len, const Machine& hw);

// A whole generation: `steps` decode steps for `batch` requests, step i reading S = start + i.
struct GenerationBound {
    std::uint64_t batch = 0, start_len = 0, steps = 0;
    std::uint64_t last_len = 0;   // S of the last step: start_len + steps − 1 (0 without steps)
    double total_time_s = 0;      // Σ step bounds
    double average_step_s = 0;
    double first_step_s = 0, last_step_s = 0;
    double charged_at_final_s = 0;  // steps × last step: the overestimate the sum avoids
    double bytes_read = 0;          // Σ D_B (may exceed 2^64 over long generations)
};
GenerationBound decode_generation(const DecodeModel& m, std::uint64_t batch, std::uint64_t start_len,
                                  std::uint64_t steps, const Machine& hw);

// Prefill of `batch` prompts of P tokens: reads W, writes P tokens of KV per prompt;
// F = 2·P_params·P·B + 2·L·H_q·d·P(P+1)·B (causal attention: token i attends to i + 1 positions, P(P+1)/2 pairs, two matmuls;
// with a window W, Σ min(i + 1, W)).
struct PrefillBound {
    std::uint64_t batch = 0, prompt_len = 0;
    double bytes = 0, flops = 0;
    double memory_time_s = 0, compute_time_s = 0, time_s = 0;
    double comm_time_s = 0;  // tensor-parallel all-reduces (in time_s)
    bool compute_bound = false;
};
PrefillBound prefill_bound(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len, const Machine& hw);

// The one accounting of a whole generation of N output tokens after a prompt of P: token 1
// comes from prefill; tokens 2..N each take a decode step, N − 1 steps reading S = P+1 … P+N−1
// cached tokens. Every whole-generation figure (decode total, TPOT, end-to-end) uses these steps.
GenerationBound generation_decode_steps(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len,
                                        std::uint64_t output_len, const Machine& hw);

// TTFT, TPOT and end-to-end for P prompt tokens and N output tokens (second document's terms):
// TTFT = the prefill bound; TPOT = mean of the N − 1 decode steps (absent when N = 1: no token
// follows the first); E2E = TTFT + decode total = TTFT + (N−1)·TPOT.
struct LatencyBound {
    PrefillBound prefill;
    GenerationBound decode;  // generation_decode_steps: the N−1 steps after the first token
    double ttft_s = 0, end_to_end_s = 0;
    std::optional<double> tpot_s;
};
LatencyBound latency_bound(const DecodeModel& m, std::uint64_t batch, std::uint64_t prompt_len,
                           std::uint64_t output_len, const Machine& hw);

}  // namespace inferlab
