#pragma once
// The measured-against-predicted experiments of `inferlab model kv-quant`, `model speculate` and
// `model roofline`: each one library call returning a result struct, so a unit test reaches the
// experiment itself and the app only parses, calls and prints.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/stats.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/model/ops/quant_cache.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/speculative.hpp"

namespace inferlab::model {

// ---- kv-quant: the model with a quantized KV cache against the float32 cache ----
struct KvQuantExperiment {
    unsigned bits = 8;                       // 8 or 4
    KvQuantScheme scheme = KvQuantScheme::Kivi;
    int group_tokens = 32;                   // KIVI's token group for K scales
    std::vector<int> tokens;                 // fed one at a time to both caches, positions compared
    std::vector<int> prompt;                 // then greedy generation from this prompt ...
    int generate = 100;                      // ... of this many tokens with each cache
    ForwardOptions forward;                  // the same pass for both caches (the model's backend holds the weights' dtype and kernels)
};
struct KvQuantResult {
    int positions = 0;
    double max_abs_logit_error = 0;          // max over positions and vocabulary of |l_fp32 − l_quant|
    double max_kl = 0, mean_kl = 0;          // KL(softmax(l_fp32) ‖ softmax(l_quant)), nats
    int greedy_agree = 0;                    // positions whose argmax is the same
    double greedy_agreement = 0;             // greedy_agree / positions
    int generated = 0;
    std::optional<int> first_divergence;     // first generated token where the greedy choices part
    std::uint64_t bytes_per_token_measured = 0;  // the quantized cache's storage per position
    std::uint64_t bytes_per_token_kv_mem = 0;    // kv-mem's int-b figure, one fp16 scale per head vector
    std::uint64_t bytes_per_token_fp32 = 0;
};
KvQuantResult run_kv_quant(const Transformer& m, const KvQuantExperiment& e);
// kv-quant's `n` compared tokens, uniform over the vocabulary, drawn with the weights' seed + 77
// (mod 2^64: another stream than the weights' own draws).
std::vector<int> kv_quant_tokens(const Dims& d, int n, std::uint64_t weight_seed);

// ---- speculate: speculative decoding's counts against spec-accept's prediction ----
struct SpeculatePosition {
    int position = 0;                        // draft position 1..γ
    std::uint64_t judged = 0, accepted = 0;
    std::optional<double> empirical;         // accepted / judged (none judged: nullopt)
    std::optional<double> predicted;         // Σ min(p, q) over the judgements / judged
};
struct SpeculateStats {
    std::uint64_t judged = 0, accepted = 0;
    double acceptance_rate = 0;              // accepted / judged (0 when none judged)
    double predicted_acceptance_rate = 0;    // mean Σ_x min(p(x), q(x)) over the judgements
    Interval interval_99;                    // the empirical rate's 99% Wilson interval (base/stats.hpp)
    std::optional<bool> within_interval;     // the prediction inside it; none: too few judged to tell
    double tokens_per_round = 0;             // produced / rounds: what the rounds made, the last one whole
    double predicted_tokens_per_round = 0;   // (1 − α^(γ+1))/(1 − α) at the predicted α
    std::optional<double> predicted_speedup; // at the given draft/target cost ratio
    std::vector<SpeculatePosition> per_position;
};
// The statistics of one run (γ = opt.gamma).
SpeculateStats speculate_statistics(const SpeculateResult& r, int gamma, std::optional<double> cost_ratio);
struct SpeculateExperiment {
    SpeculateResult run;
    SpeculateStats stats;
};
// Runs speculative decoding with the target and the draft each reading its weights at `at_target`
// and `at_draft` (nullptr: as the model's backend reads them), then its statistics. A dtype other
// than float32 needs the model on a CPU backend, whose threads and kernels it keeps.
SpeculateExperiment run_speculate(const Transformer& target, const Transformer& draft, const std::vector<int>& prompt,
                                  SpeculateOptions opt, const WeightsAt* at_target, const WeightsAt* at_draft,
                                  std::optional<double> cost_ratio);

// ---- roofline: decode-roofline's bound beside the measured decode step ----
struct RooflineExperiment {
    std::vector<std::uint64_t> batches, contexts;
    int repeats = 3;                         // timed steps per row, best kept
    std::uint64_t probe_bytes = 512ull << 20;
    WeightDtype dtype = WeightDtype::F32;
    ForwardOptions forward;                  // the pass; the model's CPU backend holds threads, kernels and the weights at dtype
};
struct RooflineRow {
    std::uint64_t seq_len = 0, batch = 0;
    std::uint64_t bytes_per_step = 0;        // D_B = W + B·M_KV
    double predicted_aggregate_tokens_per_s = 0, predicted_per_request_tokens_per_s = 0;  // β only
    double measured_step_s = 0;
    double measured_aggregate_tokens_per_s = 0, measured_per_request_tokens_per_s = 0;
    double ratio = 0;                        // measured / predicted aggregate
    double with_compute_aggregate_tokens_per_s = 0;  // max(D_B/β, F_B/π)
    bool compute_bound = false;
};
struct RooflineResult {
    BandwidthProbe bandwidth;
    double batch_product_gflops = 0;         // π
    std::uint64_t weight_bytes = 0;          // W read per step
    std::vector<RooflineRow> rows;           // contexts outer, batches inner
    std::uint64_t max_step_bytes = 0;
    std::optional<std::uint64_t> last_level_cache_bytes;  // nullopt: the system does not say
    std::optional<bool> fits_in_last_level_cache;         // every step's bytes fit it
};
RooflineResult run_roofline(const Transformer& m, const RooflineExperiment& e);

}  // namespace inferlab::model
