#pragma once
// decode-roofline's whole answer as one value (issue #15): the rows of decode_step, the batch
// comparison, the compute limit, memory fit and a whole generation, computed by one call that
// a unit test reaches. The app parses flags into a RooflineRequest and prints the result.
#include <cstdint>
#include <optional>
#include <vector>

#include "inferlab/base/dtype.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab {

// The largest batch a row may hold: compute_bound_from searches up to the same bound, and a
// batch of more than ten million requests is not one anyone runs.
inline constexpr std::uint64_t kMaxDecodeBatch = 10000000;
// The longest whole generation decode_roofline takes: the sum is in closed form (any length costs
// the same), but a generation of more than ten million tokens is past any model's context.
inline constexpr std::uint64_t kMaxOutputLen = 10000000;

struct RooflineRequest {
    DecodeModel model;
    Machine machine;
    std::vector<std::uint64_t> batches;   // one row each, 1 … kMaxDecodeBatch
    // Cached tokens S: empty (a fixed M_KV and no lengths), one length for every request of a
    // row, or (lens_are_batch) one length per request of the single row.
    std::vector<std::uint64_t> seq_lens;
    bool lens_are_batch = false;
    // A whole generation of N output tokens after P prompt tokens: both, or neither.
    std::optional<std::uint64_t> prompt_len, output_len;
};

// The most positions a request of `req` reaches: its longest --seq-len, or a generation's last
// decode step at P + N − 1 (0 when neither is given). What a model's max_position_embeddings is
// held against.
std::uint64_t longest_length(const RooflineRequest& req);

// First row against last: what batching buys (first document §2.1.3's closing comparison).
struct BatchComparison {
    std::uint64_t from_batch = 0, to_batch = 0;
    double reads_ratio = 0;        // D_to / D_from
    double aggregate_ratio = 0;    // R_all,to / R_all,from
    double per_request_ratio = 0;  // R_one,to / R_one,from (below 1: each request waits longer)
};

// One batch of a whole generation: the N − 1 decode steps, and with π and P the prefill bound
// with TTFT, TPOT and end-to-end (latency_bound).
struct GenerationRow {
    std::uint64_t batch = 0;
    GenerationBound decode;
    std::optional<LatencyBound> latency;
};

struct RooflineResult {
    std::vector<DecodeStep> rows;                  // one per batch, in the order asked
    std::optional<double> ridge_flops_per_byte;    // π / β, with π
    std::optional<BatchComparison> comparison;     // two rows or more
    // Whether the compute limit was searched (π, P and one length for every request), and the
    // smallest compute-bound batch it found (none: memory-bound at every batch).
    bool compute_limit_searched = false;
    std::optional<std::uint64_t> compute_bound_from_batch;
    bool any_row_exceeds_memory = false;           // some row's weights + KV exceed the memory
    std::vector<GenerationRow> generation;         // empty without prompt_len and output_len
    bool generation_has_prefill = false;           // π and P: TTFT and end-to-end computed
};

// Every figure decode-roofline prints. Throws InputError (naming no flag) for a batch outside
// 1 … kMaxDecodeBatch, a zero bandwidth, lengths given as the batch together with a whole
// generation, or a generation without the KV geometry (a model).
RooflineResult decode_roofline(const RooflineRequest& req);

// What a row's bounds give as rates, for the figure (draw/decode_roofline.hpp): the aggregate tokens/s the memory
// bound alone allows, B / (D_B/β), and the compute bound alone, B / (F_B/π) (none without π and
// FLOPs); the FLOP/s a step achieves, F_B / t_B; and the roof, min(π, β·I), at intensity I.
double memory_bound_tokens_per_s(const DecodeStep& s);
std::optional<double> compute_bound_tokens_per_s(const DecodeStep& s);
std::optional<double> achieved_flops_per_s(const DecodeStep& s);
double attainable_flops_per_s(const Machine& hw, double intensity);

// 10^9 and 2^30 bytes: the two units every byte count of the output is shown in.
double bytes_in_gb(std::uint64_t bytes);
double bytes_in_gib(std::uint64_t bytes);

// A model's decode geometry from its config: attention per layer (sliding windows; MLA's
// d_qk = nope + rope and d_v) for the FLOPs, and for MoE the always-read and per-expert bytes at
// the weight dtype's storage (quant.hpp's weight_storage: int8/int4 with their group scales).
std::vector<AttnLayer> attention_layers_of(const ModelConfig& c);
MoeWeights moe_weights_of(const ModelConfig& c, const ParamCount& pc, const DType& weight_dtype);

}  // namespace inferlab
