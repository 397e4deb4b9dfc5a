#include "inferlab/model/run/measure.hpp"

#include <algorithm>
#include <cmath>

#include "inferlab/base/rng.hpp"
#include "inferlab/base/stats.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/model/run/compare.hpp"

namespace inferlab::model {

namespace {
int argmax_row(const MatrixRM& l, Eigen::Index row) {
    Eigen::Index i = 0;
    l.row(row).maxCoeff(&i);
    return static_cast<int>(i);
}
}  // namespace

std::vector<int> kv_quant_tokens(const Dims& d, int n, std::uint64_t weight_seed) {
    Rng rng(weight_seed + 77);
    std::vector<int> t;
    for (int i = 0; i < n; ++i) t.push_back(static_cast<int>(rng.below(std::uint64_t(d.vocab_size))));
    return t;
}

KvQuantResult run_kv_quant(const Transformer& m, const KvQuantExperiment& e) {
    const Dims& d = m.dims();
    KvQuantResult r;
    const int n = static_cast<int>(e.tokens.size());
    r.positions = n;
    // Each cache holds the positions its run writes, not the model's seq_len.
    const int held = cache_positions_for(std::size_t(std::max(n, 1)));
    ContiguousCache fc(d, cpu_backend(), held);
    QuantizedCache qc(d, e.bits, e.scheme, e.group_tokens, held);
    // [n, vocab] each. Token by token, so each step reads a cache that is already quantized.
    MatrixRM lf(n, d.vocab_size), lq(n, d.vocab_size);
    for (int i = 0; i < n; ++i) {
        lf.row(i) = m.forward(std::vector<int>{e.tokens[std::size_t(i)]}, fc, e.forward).row(0);
        lq.row(i) = m.forward(std::vector<int>{e.tokens[std::size_t(i)]}, qc, e.forward).row(0);
    }
    const Sampling plain;  // temperature 1: the model's own distribution
    r.max_abs_logit_error = compare_logits(lq, lf).max_abs;
    for (int i = 0; i < n; ++i) {
        const double kl = kl_divergence(sampling_distribution(lf, i, plain), sampling_distribution(lq, i, plain));
        r.max_kl = std::max(r.max_kl, kl);
        r.mean_kl += kl / n;
        r.greedy_agree += argmax_row(lf, i) == argmax_row(lq, i);
    }
    r.greedy_agreement = n ? double(r.greedy_agree) / n : 0;
    // Greedy generation: where (if anywhere) the quantized cache parts from float32.
    r.generated = e.generate;
    const int generation = cache_positions_for(e.prompt.size() + std::size_t(std::max(e.generate, 1)));
    ContiguousCache gf(d, cpu_backend(), generation);
    QuantizedCache gq(d, e.bits, e.scheme, e.group_tokens, generation);
    MatrixRM a = m.forward(e.prompt, gf, e.forward), b = m.forward(e.prompt, gq, e.forward);
    for (int i = 0; i < e.generate; ++i) {
        const int ta = argmax_row(a, a.rows() - 1), tb = argmax_row(b, b.rows() - 1);
        if (ta != tb) {
            r.first_divergence = i;
            break;
        }
        if (i + 1 == e.generate) break;
        a = m.forward(std::vector<int>{ta}, gf, e.forward);
        b = m.forward(std::vector<int>{tb}, gq, e.forward);
    }
    // Bytes per token: measured from the cache's storage, and kv-mem's figure with metadata.
    r.bytes_per_token_measured = qc.bytes_per_token();
    const KvSpec spec = uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), e.bits);
    r.bytes_per_token_kv_mem = kv_quantized_bytes(spec, {1}, e.bits, std::uint64_t(d.head_dim()), 16, 0).bytes_per_token;
    r.bytes_per_token_fp32 = bytes_per_token(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32));
    return r;
}

SpeculateStats speculate_statistics(const SpeculateResult& r, int gamma, std::optional<double> cost_ratio) {
    SpeculateStats s;
    double predicted = 0;
    for (int i = 0; i < gamma; ++i) {
        const std::size_t k = std::size_t(i);
        SpeculatePosition p;
        p.position = i + 1;
        p.judged = r.judged[k];
        p.accepted = r.accepted[k];
        if (p.judged) {
            p.empirical = double(p.accepted) / double(p.judged);
            p.predicted = r.predicted_accept[k] / double(p.judged);
        }
        s.per_position.push_back(p);
        s.judged += p.judged;
        s.accepted += p.accepted;
        predicted += r.predicted_accept[k];
    }
    s.acceptance_rate = s.judged ? double(s.accepted) / double(s.judged) : 0;
    s.predicted_acceptance_rate = s.judged ? predicted / double(s.judged) : 0;
    // The prediction against the empirical rate's 99% interval, where the judgements are enough to tell.
    if (s.judged > 0) {
        s.interval_99 = wilson_interval_99(double(s.accepted), double(s.judged));
        // Σ min(p, q) summed in doubles can pass 1 by a rounding: a probability, clamped as one.
        s.within_interval = wilson_agrees(std::clamp(s.predicted_acceptance_rate, 0.0, 1.0), double(s.accepted),
                                          double(s.judged));
    }
    s.tokens_per_round = r.rounds ? double(r.produced) / double(r.rounds) : 0;  // what rounds produce, the last one whole
    s.predicted_tokens_per_round = expected_tokens_per_round(s.predicted_acceptance_rate, std::size_t(gamma));
    if (cost_ratio) s.predicted_speedup = speedup(s.predicted_acceptance_rate, std::size_t(gamma), *cost_ratio);
    return s;
}

SpeculateExperiment run_speculate(const Transformer& target, const Transformer& draft, const std::vector<int>& prompt,
                                  SpeculateOptions opt, const WeightsAt* at_target, const WeightsAt* at_draft,
                                  std::optional<double> cost_ratio) {
    // Each model reads its own weights at the dtype: a CPU backend per model, pointing at that
    // model's copies. float32 off the CPU (CUDA) needs nothing: the model reads float32 already.
    auto at_dtype = [](const Transformer& m, const WeightsAt* at, std::unique_ptr<CpuBackend>& backend,
                       std::optional<Transformer>& on_dtype) -> const Transformer& {
        if (!at || (at->dtype == WeightDtype::F32 && !cpu_options(m.backend()))) return m;
        backend = at->cpu_backend_like(m.backend());
        return on_dtype.emplace(m.weights(), *backend);
    };
    std::unique_ptr<CpuBackend> target_backend, draft_backend;
    std::optional<Transformer> target_at, draft_at;
    SpeculateExperiment e;
    e.run = speculative_generate(at_dtype(target, at_target, target_backend, target_at),
                                 at_dtype(draft, at_draft, draft_backend, draft_at), prompt, opt);
    e.stats = speculate_statistics(e.run, opt.gamma, cost_ratio);
    return e;
}

RooflineResult run_roofline(const Transformer& m, const RooflineExperiment& e) {
    RooflineResult r;
    const CpuBackendOptions* cpu = cpu_options(m.backend());
    const int threads = cpu ? cpu->threads : 1;  // the probes run on as many threads as the model's steps
    r.bandwidth = measure_read_bandwidth(e.probe_bytes, threads, 5);
    r.batch_product_gflops = measure_batch_product_gflops(8, threads, 3, weight_dtype_bits(e.dtype));
    const DecodeModel dm = reference_decode_model(m.dims(), e.dtype);
    r.weight_bytes = dm.weight_bytes;
    // The document's read-volume model counts bytes only; beside it, the same with this
    // machine's compute roof π, which is where batching stops being free.
    Machine bytes_only;
    bytes_only.bandwidth = r.bandwidth.read_gbs * 1e9;
    const Machine with_pi = measured_machine(r.bandwidth, r.batch_product_gflops);
    for (auto s : e.contexts)
        for (auto b : e.batches) {
            const std::vector<std::uint64_t> lens(b, s);
            const DecodeStep pred = decode_step(dm, lens, bytes_only), full = decode_step(dm, lens, with_pi);
            RooflineRow row;
            row.seq_len = s;
            row.batch = b;
            row.bytes_per_step = pred.bytes;
            row.predicted_aggregate_tokens_per_s = pred.aggregate_tokens_per_s;
            row.predicted_per_request_tokens_per_s = pred.per_request_tokens_per_s;
            row.measured_step_s = time_decode_step(m, int(b), int(s), e.repeats, e.forward);
            row.measured_aggregate_tokens_per_s = double(b) / row.measured_step_s;
            row.measured_per_request_tokens_per_s = 1 / row.measured_step_s;
            row.ratio = row.measured_aggregate_tokens_per_s / pred.aggregate_tokens_per_s;
            row.with_compute_aggregate_tokens_per_s = full.aggregate_tokens_per_s;
            row.compute_bound = full.compute_bound;
            r.max_step_bytes = std::max(r.max_step_bytes, pred.bytes);
            r.rows.push_back(row);
        }
    // A model that fits the last-level cache is read from cache, not DRAM: β (measured over a buffer
    // larger than the cache) does not bound its steps, and measured may exceed "predicted".
    if (const std::uint64_t llc = last_level_cache_bytes()) {
        r.last_level_cache_bytes = llc;
        r.fits_in_last_level_cache = r.max_step_bytes <= llc;
    }
    return r;
}

}  // namespace inferlab::model
