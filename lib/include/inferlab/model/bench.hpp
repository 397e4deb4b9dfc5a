#pragma once
// Measurements of the reference model on this machine: read bandwidth (STREAM-style, on huge
// pages), matrix-multiply rate, and what one decode step must read.
#include <cstdint>
#include <vector>

#include "inferlab/model/qweights.hpp"
#include "inferlab/model/transformer.hpp"
#include "inferlab/model/weights.hpp"
#include "inferlab/roofline.hpp"

namespace inferlab::model {

// Bytes one decode step reads at S cached tokens: every weight matrix once (the embedding table
// only when it doubles as the LM head; otherwise one row of it) plus K and V of all S positions
// of every layer, the latter from kv-mem's formula at float32.
// `weight_bits` is 32 for float32 weights, 16 for bf16 ones (the KV cache stays float32).
std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, unsigned weight_bits = 32);

// bench's context-scaling table times this many decode steps after a prefill of S tokens, so S
// fits when S + kContextTimedSteps ≤ the model's maximum sequence length.
constexpr int kContextTimedSteps = 3;
bool bench_context_fits(const Dims& d, std::uint64_t context);
// The table's contexts when none are given: 128, ×4 after that, each one that fits the model (a
// model shorter than 128 + 3 positions starts at S_max/8 instead). Never empty for S_max ≥ 4.
std::vector<std::uint64_t> default_bench_contexts(const Dims& d);

// The same with the products' matrices at `t` (product_weight_bytes: int8/int4 with their fp16
// scales), the RMSNorm weights and an untied embedding row in float32 as the CPU backend reads them.
std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, WeightDtype t);
DecodeModel reference_decode_model(const Dims& d, WeightDtype t);

// Greedy decode of `steps` tokens at several weight dtypes in one run, interleaved step by step
// (the order rotating each step) so that the machine's drift falls on all alike. Each dtype has
// its own cache holding the same prompt (prefilled with float32 products); every dtype reads the
// float32 model's greedy token, so their logits are compared position by position. at[0] must be
// float32 (the reference of the comparison).
struct DtypeDecode {
    WeightDtype dtype = WeightDtype::F32;
    std::uint64_t bytes_per_step = 0;  // at the middle of the decode (S = prompt + steps/2)
    double tokens_per_s = 0;
    double max_rel_logit_diff = 0;     // max over steps of max|l − l_fp32| / max|l_fp32|
    double mean_kl = 0;                // mean over steps of KL(softmax(l_fp32) ‖ softmax(l)), nats
    double greedy_agreement = 0;       // fraction of steps whose argmax equals float32's
};
std::vector<DtypeDecode> compare_decode_dtypes(const Transformer& m, const std::vector<int>& prompt, int steps,
                                               const ForwardOptions& opt, const std::vector<const WeightsAt*>& at);

// The last-level cache's size in bytes from /sys (0 when the system does not say): a model whose
// weights fit there is read from cache, and the DRAM bound does not apply to it.
std::uint64_t last_level_cache_bytes();

struct BandwidthProbe {
    double read_gbs = 0;       // best of `repeats` passes, decimal GB/s
    std::uint64_t bytes = 0;   // buffer size
    bool huge_pages = false;   // madvise(MADV_HUGEPAGE) accepted
    int threads = 1;
    double sum_gbs = 0;        // the plain sum loop (several accumulators per thread)
    double kernel_gbs = 0;     // the decode kernel's own stream: matvec over the buffer as a float32 matrix
};
// Reads a 2 MiB-aligned buffer of `bytes` (on huge pages where granted, like the weights) two
// ways, best of `repeats` passes each: a plain sum loop, and the decode kernel itself (the fast
// matvec over the buffer as a [rows, 4096] float32 matrix, threads splitting rows as in decode).
// read_gbs is the faster of the two: a bound the decode can beat is not a bound.
BandwidthProbe measure_read_bandwidth(std::uint64_t bytes, int threads, int repeats);

// decode-roofline's read-volume model of this reference model: W = the weight bytes one step
// reads, M_KV from kv-mem's formula at float32, P = the parameter count for FLOPs.
DecodeModel reference_decode_model(const Dims& d, unsigned weight_bits = 32);

// Seconds per decode step (best of `repeats`) for `batch` sequences, each with its own cache
// holding `context` tokens, one token each per step (one forward over all rows).
double time_decode_step(const Transformer& m, int batch, int context, int repeats, const ForwardOptions& opt);

// GFLOP/s of an n×n float32 matrix product through Eigen (2n³ FLOPs), best of `repeats`.
double measure_matmul_gflops(int n, int threads, int repeats);

// GFLOP/s of the batch-decode product (matmul_few_rows, matmul_few_rows_bf16 for weight_bits
// 16, matmul_quantized for 8 and 4; `rows` input rows) over weights small enough to stay in cache (256 rows of 768
// per thread): this machine's compute roof π for a decode step, where the read bandwidth is its
// β. Best of `repeats`.
double measure_batch_product_gflops(int rows, int threads, int repeats, unsigned weight_bits = 32);

// This machine as decode-roofline sees it: β from the read probe (GB/s), π from the batch
// product (GFLOP/s).
Machine measured_machine(const BandwidthProbe& bw, double product_gflops);

// Rates from timings: bytes read per step × steps per second, in GB/s (10^9); 2·P·T FLOPs of a
// prefill of T tokens through P parameters in `seconds`, in GFLOP/s.
double achieved_gbs(std::uint64_t bytes_per_step, double steps_per_s);
double prefill_gflops(std::uint64_t params, std::uint64_t tokens, double seconds);

// Greedy decode of `steps` tokens measured two ways in one run, alternating step by step so the
// machine's drift falls on both alike: float32 weights on cache `a`, bf16 weights on cache `b`
// (both holding the same prompt). Both read the same token each step (the float32 model's pick).
struct DecodeComparison {
    double fp32_tokens_per_s = 0;
    double bf16_tokens_per_s = 0;
    double max_logit_change = 0;  // largest |bf16 − fp32| logit over the steps, relative to the largest logit
    double speedup() const { return bf16_tokens_per_s / fp32_tokens_per_s; }  // bf16 ÷ float32 tokens/s
};
DecodeComparison compare_fp32_bf16_decode(const Transformer& m, KvCache& a, KvCache& b, int first_token, int steps,
                                          const ForwardOptions& opt, const Bf16Weights& bf16);

}  // namespace inferlab::model
