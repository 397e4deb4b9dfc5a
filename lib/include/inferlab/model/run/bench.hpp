#pragma once
// The reference model measured on this machine: what one decode step must read, decode and
// prefill timed against decode-roofline's bound on the probes' β and π (probe.hpp), model bench.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/calc/roofline.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/ops/weights.hpp"
#include "inferlab/model/run/probe.hpp"

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
    double tokens_per_s = 0;           // 1 / the median step time (a shared machine's slow steps aside)
    double fastest_step_s = 0;         // the fastest step: the one the machine's other work disturbed least
    std::vector<double> step_s;        // [steps]: each round's step, in seconds
    // [steps] with a probe: the β beside each round, the faster of the probe's passes just before
    // and just after it (GB/s; the same for every dtype of the round); empty without one.
    std::vector<double> round_read_gbs;
    double max_rel_logit_diff = 0;     // max over steps of compare_logits(l, l_fp32).max_rel (floor 1)
    double mean_kl = 0;                // mean over steps of KL(softmax(l_fp32) ‖ softmax(l)), nats
    double greedy_agreement = 0;       // fraction of steps whose argmax equals float32's
};
// m runs on a CPU backend (its threads and kernels serve every dtype; std::logic_error otherwise).
// With a probe, one pass of it runs just before the first round of steps (one step of every
// dtype) and one after each round, so that β is measured in the same seconds as the steps: on a
// shared machine the read bandwidth changes (on docs/bench-cpu.md's, between about 34 and 60 GB/s
// within seconds).
class ReadProbe;
std::vector<DtypeDecode> compare_decode_dtypes(const Transformer& m, const std::vector<int>& prompt, int steps,
                                               const ForwardOptions& opt, const std::vector<const WeightsAt*>& at,
                                               ReadProbe* probe = nullptr);


// The dtype table's pairing (BenchDtypeRow): round s's bound is bound_at(round_read_gbs[s])
// tokens/s; the result is the median of the rounds' bounds and the median over rounds of
// (1 / step_s[s]) ÷ that round's bound. std::logic_error unless both have one entry per step.
struct PairedBound {
    double bound_tokens_per_s = 0, fraction = 0;
};
PairedBound paired_bound(const std::vector<double>& step_s, const std::vector<double>& round_read_gbs,
                         const std::function<double(double)>& bound_at);


// decode-roofline's read-volume model of this reference model: W = the weight bytes one step
// reads, M_KV from kv-mem's formula at float32, P = the parameter count for FLOPs.
DecodeModel reference_decode_model(const Dims& d, unsigned weight_bits = 32);

// Seconds per decode step (best of `repeats`) for `batch` sequences, each with its own cache
// holding `context` tokens, one token each per step (one forward over all rows).
double time_decode_step(const Transformer& m, int batch, int context, int repeats, const ForwardOptions& opt);



// Rates from timings: bytes read per step × steps per second, in GB/s (10^9); 2·P·T FLOPs of a
// prefill of T tokens through P parameters in `seconds`, in GFLOP/s.
double achieved_gbs(std::uint64_t bytes_per_step, double steps_per_s);
double prefill_gflops(std::uint64_t params, std::uint64_t tokens, double seconds);

// Greedy decode of `steps` tokens measured two ways in one run, alternating step by step so the
// machine's drift falls on both alike: float32 weights on cache `a`, bf16 weights on cache `b`
// (both holding the same prompt). Both read the same token each step (the float32 model's pick).
// m runs on a CPU backend with float32 weights; the bf16 steps run on one like it reading `bf16`.
struct DecodeComparison {
    double fp32_tokens_per_s = 0;  // each 1 / the median step time
    double bf16_tokens_per_s = 0;
    double max_logit_change = 0;  // largest |bf16 − fp32| logit over the steps, relative to the largest logit
    double speedup() const { return bf16_tokens_per_s / fp32_tokens_per_s; }  // bf16 ÷ float32 tokens/s
};
DecodeComparison compare_fp32_bf16_decode(const Transformer& m, KvCache& a, KvCache& b, int first_token, int steps,
                                          const ForwardOptions& opt, const Bf16Weights& bf16);

// ---- `inferlab model bench`: every measurement of one run, in one call ----
struct BenchInputs {
    int threads = 1;
    Kernels kernels = Kernels::Fast;
    int prompt_len = 128;                         // P, prefill tokens (0: none)
    int steps = 32;                               // G, decode tokens; P + G ≤ S_max
    std::uint64_t probe_bytes = 512ull << 20;     // the read-bandwidth probe's buffer
    std::vector<std::uint64_t> contexts;          // the context-scaling table's S (empty: default_bench_contexts)
    std::vector<std::uint64_t> batches = {1, 8};  // the batch table's B
    WeightDtype weight_dtype = WeightDtype::F32;  // the weights decode reads
    bool all_dtypes = false;                      // float32, bf16, int8 and int4 interleaved (weight_dtype ignored)
    bool skip_nocache = false;                    // leave the no-cache column of the context table empty
};

// One decode step at context S: cached, and (unless skipped) recomputing the prefix of S + 1 tokens.
struct BenchContextRow {
    std::uint64_t seq_len = 0;
    double cached_step_s = 0;
    std::optional<double> nocache_step_s;  // nullopt: skipped
    std::optional<double> ratio;           // nocache ÷ cached
};

// Batch decode at one weight dtype and batch B, beside decode-roofline's bound for that dtype's
// bytes on the measured β and that dtype's measured π.
struct BenchBatchRow {
    WeightDtype dtype = WeightDtype::F32;
    std::uint64_t batch = 1;
    double aggregate_tokens_per_s = 0, per_request_tokens_per_s = 0;
    std::optional<double> ratio_to_batch_1;        // nullopt where the batch list has no 1 before this row
    double bound_aggregate_tokens_per_s = 0;
    std::optional<double> bound_ratio_to_batch_1;  // the bound's own ratio: what the roofline predicts
    bool compute_bound = false;
    double fraction_of_bound = 0;                   // aggregate ÷ bound (from the best step)
    bool weights_fit_in_last_level_cache = false;   // then the DRAM bound does not apply
    // Faster than its bound while the weights do not fit in cache: the best step ran while the
    // machine read faster than every probe pass (or computed faster than π); not a result.
    bool probe_defect = false;
};

// A dtype of the comparison, with its ratios to float32 and its bound.
struct BenchDtypeRow {
    DtypeDecode decode;
    double bytes_ratio_to_fp32 = 1, speed_ratio_to_fp32 = 1;
    // Paired by round: the bound is decode-roofline's for the dtype's bytes on each round's β
    // (DtypeDecode::round_read_gbs), and fraction_of_bound the median over rounds of that round's
    // step rate ÷ its bound; bound_tokens_per_s is the median of the rounds' bounds.
    double bound_tokens_per_s = 0, fraction_of_bound = 0;
    // tokens_per_s ÷ the bound on the run's best β (BandwidthProbe::read_gbs): at most the paired
    // fraction (every round's β is at most the best, and 1 / the median step at most the median
    // rate); well below it where the machine's bandwidth changed during the run.
    double fraction_of_best_bound = 0;
    bool weights_fit_in_last_level_cache = false;  // then the DRAM bound does not apply
    // Faster than its bound while the weights do not fit in cache: the measured β (or π, where
    // the bound is compute) is below what this decode did, so the fraction is not a result.
    bool probe_defect = false;
};

struct BenchResult {
    int threads = 1;
    std::uint64_t parameters = 0;
    bool weights_on_huge_pages = false;
    BandwidthProbe probe;
    bool probe_defect = false;           // the decode read faster than the probe (β): the fraction is not a result
    double matmul_gflops = 0;            // Eigen 512³
    int matmul_n = 512;
    std::map<WeightDtype, double> product_gflops;  // π per dtype of the run (batch product, 8 rows)
    double batch_product_gflops = 0;     // π of the decode dtype
    int prefill_tokens = 0;
    double prefill_tokens_per_s = 0, prefill_gflops = 0;
    double prefill_fraction_of_pi = 0, prefill_fraction_of_gemm = 0;  // of float32's π; of Eigen's rate
    WeightDtype decode_dtype = WeightDtype::F32;  // with all_dtypes: int4, the last of the four
    bool all_dtypes = false;
    int decode_tokens = 0;
    double decode_tokens_per_s = 0;
    std::uint64_t bytes_per_step = 0;    // at S = P + G/2
    double achieved_gbs = 0, bandwidth_fraction = 0;
    double fp32_decode_tokens_per_s = 0; // float32 alternated with the decode dtype (itself for fp32)
    std::optional<double> bf16_speedup, bf16_logit_change;  // where bf16 is in the run
    std::vector<BenchDtypeRow> dtypes;   // int8, int4 or all: float32 first
    std::uint64_t last_level_cache_bytes = 0;
    Prose quantized_arithmetic;          // int8, int4 or all: what the products do
    std::vector<BenchContextRow> contexts;
    int batch_context = 0;               // each batch sequence's cached tokens
    std::vector<BenchBatchRow> batches;  // per dtype of the run (float32 first), then per batch
};
// InputError (naming the quantity, not a flag) for a context that does not fit, P + G beyond
// S_max, or int8/int4 on a model whose widths are not whole groups.
BenchResult bench(const Weights& w, const BenchInputs& in);

}  // namespace inferlab::model
