#include "inferlab/model/run/bench.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/run/compare.hpp"
#include <cctype>
#include <cmath>
#include <fstream>
#include <string>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/memory.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/kv.hpp"

namespace inferlab::model {

std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, unsigned weight_bits) {
    std::uint64_t floats = weight_floats(d);
    // Untied: the embedding table is read one row a step. Tied: it is read whole, as the LM head.
    if (!d.shared_classifier) floats -= std::uint64_t(d.vocab_size - 1) * d.dim;
    const std::uint64_t kv = kv_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32), {seq_len}).total_bytes;
    return floats * weight_bits / 8 + kv;
}

bool bench_context_fits(const Dims& d, std::uint64_t context) {
    return context + kContextTimedSteps <= static_cast<std::uint64_t>(d.seq_len);
}

std::vector<std::uint64_t> default_bench_contexts(const Dims& d) {
    std::uint64_t s = 128;
    if (!bench_context_fits(d, s)) s = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(d.seq_len) / 8);
    std::vector<std::uint64_t> out;
    for (; bench_context_fits(d, s); s *= 4) out.push_back(s);
    return out;
}

std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, WeightDtype t) {
    const std::uint64_t D = std::uint64_t(d.dim), L = std::uint64_t(d.n_layers);
    const std::uint64_t norms = (2 * L + 1) * D, embedding_row = d.shared_classifier ? 0 : D;  // float32
    const std::uint64_t kv = kv_bytes(uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32), {seq_len}).total_bytes;
    return product_weight_bytes(d, t) + (norms + embedding_row) * 4 + kv;
}

DecodeModel reference_decode_model(const Dims& d, WeightDtype t) {
    DecodeModel m = reference_decode_model(d, 32);
    m.weight_bytes = decode_step_bytes(d, 0, t);
    return m;
}

DecodeModel reference_decode_model(const Dims& d, unsigned weight_bits) {
    DecodeModel m;
    m.weight_bytes = decode_step_bytes(d, 0, weight_bits);
    m.params = weight_floats(d);
    m.kv_spec = uniform_kv(d.n_layers, d.n_kv_heads, d.head_dim(), 32);
    m.attn_layers = d.n_layers;
    m.attn_q_heads = d.n_heads;
    m.attn_head_dim = d.head_dim();
    return m;
}

double time_decode_step(const Transformer& m, int batch, int context, int repeats, const ForwardOptions& opt) {
    const Dims& d = m.dims();
    if (context + repeats > d.seq_len)
        throw InputError("context", std::to_string(context),
                         N_("leaves no room for the timed steps below the maximum sequence length"));
    // One cache per sequence of the batch, each of the positions it will hold: the whole batch's
    // bytes are checked against the memory budget before the first is made.
    const int positions = context + repeats;
    require_memory(checked_mul(ContiguousCache::bytes_for(d, positions), std::uint64_t(batch), N_("batch KV cache bytes")),
                   "batch", std::to_string(batch));
    std::vector<std::unique_ptr<ContiguousCache>> caches;
    std::vector<int> prompt(static_cast<std::size_t>(context));
    for (int i = 0; i < context; ++i) prompt[std::size_t(i)] = (i * 7 + 3) % d.vocab_size;
    for (int b = 0; b < batch; ++b) {
        caches.push_back(std::make_unique<ContiguousCache>(d, cpu_backend(), positions));
        m.forward(prompt, *caches.back(), opt);
    }
    double best = 1e300;
    for (int r = 0; r < repeats; ++r) {
        std::vector<Row> rows;
        for (auto& c : caches) rows.push_back({(r * 5 + 1) % d.vocab_size, c.get()});
        auto t0 = std::chrono::steady_clock::now();
        m.forward(rows, opt);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The middle value, or the mean of the middle two: a shared machine's slow steps, and the first
// step's cold start, do not weigh as in a mean.
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

// Steps per second from the median step time.
double median_rate(std::vector<double> seconds) { return 1 / median(std::move(seconds)); }
}  // namespace

PairedBound paired_bound(const std::vector<double>& step_s, const std::vector<double>& round_read_gbs,
                         const std::function<double(double)>& bound_at) {
    if (step_s.empty() || step_s.size() != round_read_gbs.size())
        throw std::logic_error("paired_bound: one β per step, at least one step");
    std::vector<double> bounds, fractions;
    for (std::size_t s = 0; s < step_s.size(); ++s) {
        bounds.push_back(bound_at(round_read_gbs[s]));
        fractions.push_back(1 / step_s[s] / bounds.back());
    }
    return {median(bounds), median(fractions)};
}

namespace {

// Σ_i softmax(a)_i·(log softmax(a)_i − log softmax(b)_i), in double.
double kl_logits(const MatrixRM& a, const MatrixRM& b) {
    const double ma = a.maxCoeff(), mb = b.maxCoeff();
    double za = 0, zb = 0;
    for (Eigen::Index i = 0; i < a.cols(); ++i) {
        za += std::exp(double(a(0, i)) - ma);
        zb += std::exp(double(b(0, i)) - mb);
    }
    double kl = 0;
    for (Eigen::Index i = 0; i < a.cols(); ++i) {
        const double la = double(a(0, i)) - ma - std::log(za), lb = double(b(0, i)) - mb - std::log(zb);
        kl += std::exp(la) * (la - lb);
    }
    return std::max(0.0, kl);
}
}  // namespace

std::vector<DtypeDecode> compare_decode_dtypes(const Transformer& m, const std::vector<int>& prompt, int steps,
                                               const ForwardOptions& opt, const std::vector<const WeightsAt*>& at,
                                               ReadProbe* probe) {
    if (at.empty() || at[0]->dtype != WeightDtype::F32) throw std::logic_error("compare_decode_dtypes: float32 first");
    if (steps < 1) throw std::logic_error("compare_decode_dtypes: at least one step");
    const Dims& d = m.dims();
    const std::size_t n = at.size();
    std::vector<std::unique_ptr<CpuBackend>> backends;   // [n]: m's threads and kernels, dtype k's weights
    std::vector<Transformer> models;                      // [n]: the same weights through backends[k]
    std::vector<std::unique_ptr<ContiguousCache>> caches;
    std::vector<std::vector<double>> seconds(n);  // [n][steps]
    std::vector<DtypeDecode> out(n);
    MatrixRM last;
    for (std::size_t k = 0; k < n; ++k) {
        backends.push_back(at[k]->cpu_backend_like(m.backend()));
        models.emplace_back(m.weights(), *backends.back());
        caches.push_back(std::make_unique<ContiguousCache>(d, cpu_backend(), cache_positions_for(prompt.size() + std::size_t(steps) + 1)));
        last = m.forward(prompt, *caches.back(), opt);  // float32 prefill: every cache starts the same
        out[k].dtype = at[k]->dtype;
        out[k].bytes_per_step = decode_step_bytes(d, prompt.size() + std::uint64_t(steps) / 2, at[k]->dtype);
    }
    Eigen::Index next = 0;
    last.row(last.rows() - 1).maxCoeff(&next);
    if (probe) probe->pass();  // the pass just before the first round (the prefills took seconds)
    std::vector<MatrixRM> logits(n);
    for (int s = 0; s < steps; ++s) {
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = (std::size_t(s) + i) % n;
            const auto t0 = std::chrono::steady_clock::now();
            logits[k] = models[k].forward(std::vector<int>{static_cast<int>(next)}, *caches[k], opt);
            seconds[k].push_back(seconds_since(t0));
        }
        if (probe) {
            const double before = probe->last_gbs(), after = probe->pass();
            for (auto& x : out) x.round_read_gbs.push_back(std::max(before, after));
        }
        Eigen::Index ref_arg = 0;
        logits[0].row(0).maxCoeff(&ref_arg);
        for (std::size_t k = 0; k < n; ++k) {
            Eigen::Index arg = 0;
            logits[k].row(0).maxCoeff(&arg);
            out[k].greedy_agreement += arg == ref_arg ? 1.0 / steps : 0.0;
            out[k].max_rel_logit_diff = std::max(out[k].max_rel_logit_diff, compare_logits(logits[k], logits[0]).max_rel);
            out[k].mean_kl += kl_logits(logits[0], logits[k]) / steps;
        }
        next = ref_arg;
    }
    for (std::size_t k = 0; k < n; ++k) {
        out[k].tokens_per_s = median_rate(seconds[k]);
        out[k].fastest_step_s = *std::min_element(seconds[k].begin(), seconds[k].end());
        out[k].step_s = seconds[k];
    }
    return out;
}


double achieved_gbs(std::uint64_t bytes_per_step, double steps_per_s) {
    return static_cast<double>(bytes_per_step) * steps_per_s / 1e9;
}

double prefill_gflops(std::uint64_t params, std::uint64_t tokens, double seconds) {
    return 2.0 * static_cast<double>(params) * static_cast<double>(tokens) / seconds / 1e9;
}

DecodeComparison compare_fp32_bf16_decode(const Transformer& m, KvCache& a, KvCache& b, int first_token, int steps,
                                          const ForwardOptions& opt, const Bf16Weights& bf16) {
    const CpuBackendOptions* fp32 = cpu_options(m.backend());
    if (!fp32) throw std::logic_error("compare_fp32_bf16_decode: the model runs on the " + m.backend().name() + " backend, not the CPU");
    if (steps < 1) throw std::logic_error("compare_fp32_bf16_decode: at least one step");
    CpuBackendOptions with = *fp32;
    with.bf16 = &bf16;
    with.qweights = nullptr;
    CpuBackend bf16_backend(with);
    const Transformer mb(m.weights(), bf16_backend);
    DecodeComparison c;
    std::vector<double> fp32_s, bf16_s;  // [steps]
    int tok = first_token;
    for (int i = 0; i < steps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        MatrixRM la = m.forward(std::vector<int>{tok}, a, opt);
        auto t1 = std::chrono::steady_clock::now();
        MatrixRM lb = mb.forward(std::vector<int>{tok}, b, opt);
        auto t2 = std::chrono::steady_clock::now();
        fp32_s.push_back(std::chrono::duration<double>(t1 - t0).count());
        bf16_s.push_back(std::chrono::duration<double>(t2 - t1).count());
        c.max_logit_change = std::max(c.max_logit_change, compare_logits(lb, la).max_rel);
        Eigen::Index next = 0;
        la.row(0).maxCoeff(&next);
        tok = static_cast<int>(next);
    }
    c.fp32_tokens_per_s = median_rate(fp32_s);
    c.bf16_tokens_per_s = median_rate(bf16_s);
    return c;
}

}  // namespace inferlab::model

// ---- model bench ----
namespace inferlab::model {
namespace {

// The weight dtypes one run decodes: float32 alone, or float32 beside the chosen one (the
// reference of every ratio), or all four.
std::vector<WeightDtype> run_dtypes(const BenchInputs& in) {
    if (in.all_dtypes) return {WeightDtype::F32, WeightDtype::BF16, WeightDtype::Int8, WeightDtype::Int4};
    if (in.weight_dtype == WeightDtype::F32) return {WeightDtype::F32};
    return {WeightDtype::F32, in.weight_dtype};
}

// int8, int4 and all are measured by compare_decode_dtypes and their bytes counted per dtype;
// float32 and bf16 alone keep the bits-per-weight count (decode_step_bytes(d, S, bits)).
bool by_dtype(const BenchInputs& in) {
    return in.all_dtypes || in.weight_dtype == WeightDtype::Int8 || in.weight_dtype == WeightDtype::Int4;
}

void check_bench_inputs(const Dims& d, const BenchInputs& in) {
    const auto S = static_cast<std::uint64_t>(d.seq_len);
    if (in.prompt_len < 1 || in.steps < 1 || std::uint64_t(in.prompt_len) + std::uint64_t(in.steps) > S)
        throw InputError("prefill and decode tokens", std::to_string(in.prompt_len) + " + " + std::to_string(in.steps),
                         N_("must be at least 1 each and fit the maximum sequence length {0}"), {std::to_string(d.seq_len)});
    for (auto s : in.contexts)
        if (!bench_context_fits(d, s))
            throw InputError("context", std::to_string(s),
                             N_("exceeds the maximum sequence length {0} less the {1} timed steps"),
                             {std::to_string(d.seq_len), std::to_string(kContextTimedSteps)});
    for (auto b : in.batches)
        if (b < 1 || b > 4096) throw InputError("batch", std::to_string(b), N_("must be from 1 to 4096"));
    if (by_dtype(in)) require_quantizable(d, "int8/int4 weights: width");
}

// Greedy decode of G tokens after the prefill in `cache` (the decode dtype alone: float32), in
// steps per second from the median step.
double time_greedy_decode(const Transformer& m, KvCache& cache, int first_token, int steps, const ForwardOptions& opt) {
    int tok = first_token;
    std::vector<double> seconds;  // [steps]
    for (int i = 0; i < steps; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const MatrixRM logits = m.forward(std::vector<int>{tok}, cache, opt);
        seconds.push_back(seconds_since(t0));
        Eigen::Index next = 0;
        logits.row(0).maxCoeff(&next);
        tok = static_cast<int>(next);
    }
    return median_rate(seconds);
}

// A model whose weights fit the last-level cache (`llc` bytes, 0: unknown) is read from cache.
bool weights_fit(const DecodeModel& dm, std::uint64_t llc) { return llc > 0 && dm.weight_bytes <= llc; }

// Faster than its bound (a fraction above 1) where the DRAM bound applies: β or π was measured
// below what the step did, so the fraction is a defect of the probe, not a result.
bool beats_bound(double fraction, bool weights_fit_in_cache) { return fraction > 1 && !weights_fit_in_cache; }

// The decode figures of the three modes: float32 alone, bf16 alternated with float32, and the
// int8/int4/all comparison.
void measure_decode(const Transformer& m, const BenchInputs& in, const std::vector<int>& prompt, KvCache& cache, int tok,
                    const ForwardOptions& opt, const std::vector<WeightsAt>& ats, ReadProbe& probe, BenchResult& r) {
    if (by_dtype(in)) {
        std::vector<const WeightsAt*> ptrs;
        for (const auto& a : ats) ptrs.push_back(&a);
        const std::vector<DtypeDecode> dt = compare_decode_dtypes(m, prompt, in.steps, opt, ptrs, &probe);
        r.probe = probe.result();  // β: the passes before the run and those between its rounds of steps
        r.decode_tokens_per_s = dt.back().tokens_per_s;
        r.fp32_decode_tokens_per_s = dt[0].tokens_per_s;
        if (in.all_dtypes) {  // bf16 is the second of the four
            r.bf16_speedup = dt[1].tokens_per_s / dt[0].tokens_per_s;
            r.bf16_logit_change = dt[1].max_rel_logit_diff;
        }
        const std::uint64_t ctx = prompt.size() + std::uint64_t(in.steps) / 2;
        for (const auto& x : dt) {
            const DecodeModel dm = reference_decode_model(m.dims(), x.dtype);
            const double pi = r.product_gflops.at(x.dtype);  // this dtype's π
            const auto bound_at = [&](double gbs) {
                BandwidthProbe b = r.probe;
                b.read_gbs = gbs;
                return decode_step(dm, {ctx}, measured_machine(b, pi)).aggregate_tokens_per_s;
            };
            BenchDtypeRow row{x};
            row.bytes_ratio_to_fp32 = double(dt[0].bytes_per_step) / double(x.bytes_per_step);
            row.speed_ratio_to_fp32 = x.tokens_per_s / dt[0].tokens_per_s;
            const PairedBound paired = paired_bound(x.step_s, x.round_read_gbs, bound_at);
            row.bound_tokens_per_s = paired.bound_tokens_per_s;
            row.fraction_of_bound = paired.fraction;
            row.fraction_of_best_bound = x.tokens_per_s / bound_at(r.probe.read_gbs);
            row.weights_fit_in_last_level_cache = weights_fit(dm, r.last_level_cache_bytes);
            row.probe_defect = beats_bound(row.fraction_of_bound, row.weights_fit_in_last_level_cache);
            r.dtypes.push_back(row);
        }
        r.quantized_arithmetic = ats.back().arithmetic();
    } else if (in.weight_dtype == WeightDtype::BF16) {
        // Two caches holding the same prompt; float32 and bf16 steps alternate, so their ratio is
        // measured in one run.
        ContiguousCache b(m.dims(), cpu_backend(), cache_positions_for(prompt.size() + std::size_t(in.steps) + 1));
        m.forward(prompt, b, opt);
        const DecodeComparison c = compare_fp32_bf16_decode(m, cache, b, tok, in.steps, opt, ats.back().bf16);
        r.decode_tokens_per_s = c.bf16_tokens_per_s;
        r.fp32_decode_tokens_per_s = c.fp32_tokens_per_s;
        r.bf16_speedup = c.speedup();
        r.bf16_logit_change = c.max_logit_change;
    } else {
        r.decode_tokens_per_s = r.fp32_decode_tokens_per_s = time_greedy_decode(m, cache, tok, in.steps, opt);
    }
}

// One cached decode step at each context against recomputing the prefix without a cache.
void measure_contexts(const Transformer& m, const BenchInputs& in, const ForwardOptions& opt, Rng& rng, BenchResult& r) {
    const Dims& d = m.dims();
    const auto contexts = in.contexts.empty() ? default_bench_contexts(d) : in.contexts;
    for (auto s : contexts) {
        std::vector<int> ctx(std::size_t(s) + kContextTimedSteps);  // [S + 3] tokens: the prefix, then the timed steps
        for (auto& t : ctx) t = static_cast<int>(rng.below(std::uint64_t(d.vocab_size)));
        ContiguousCache c(d, cpu_backend(), cache_positions_for(ctx.size()));
        m.forward(std::vector<int>(ctx.begin(), ctx.end() - kContextTimedSteps), c, opt);
        // Best of three consecutive steps: the first after a long prefill pays for cold pages.
        double cached = 1e300;
        for (int k = kContextTimedSteps; k >= 1; --k) {
            const auto t1 = std::chrono::steady_clock::now();
            m.forward(std::vector<int>{ctx[ctx.size() - std::size_t(k)]}, c, opt);
            cached = std::min(cached, seconds_since(t1));
        }
        BenchContextRow row{s, cached, std::nullopt, std::nullopt};
        if (!in.skip_nocache) {
            // What each step costs without a cache: the whole prefix of S + 1 tokens again.
            ContiguousCache scratch(d, cpu_backend(), cache_positions_for(std::size_t(s) + 1));
            const auto t1 = std::chrono::steady_clock::now();
            m.forward(std::vector<int>(ctx.begin(), ctx.begin() + std::ptrdiff_t(s) + 1), scratch, opt);
            row.nocache_step_s = seconds_since(t1);
            row.ratio = *row.nocache_step_s / cached;
        }
        r.contexts.push_back(row);
    }
}

// Batch decode per dtype of the run: B sequences with their own caches, one step reading the
// weights once; beside it decode-roofline's bound for that dtype's bytes on the measured β and
// that dtype's π, and the bound's own batch-B ÷ batch-1 ratio (what the roofline predicts).
void measure_batches(const Transformer& m, const BenchInputs& in, const ForwardOptions& opt,
                     const std::vector<WeightsAt>& ats, BenchResult& r) {
    const Dims& d = m.dims();
    r.batch_context = std::min(in.prompt_len, 16);
    for (const auto& at : ats) {
        const auto backend = at.cpu_backend_like(m.backend());
        const Transformer mt(m.weights(), *backend);  // m's threads and kernels, this dtype's weights
        const Machine here = measured_machine(r.probe, r.product_gflops.at(at.dtype));
        const DecodeModel dm = by_dtype(in) ? reference_decode_model(d, at.dtype) : reference_decode_model(d, weight_dtype_bits(at.dtype));
        std::optional<double> batch1, bound1;
        for (auto b : in.batches) {
            const double step = time_decode_step(mt, static_cast<int>(b), r.batch_context, 4, opt);
            const DecodeStep bound = decode_step(dm, std::vector<std::uint64_t>(b, std::uint64_t(r.batch_context) + 1), here);
            BenchBatchRow row{at.dtype, b, double(b) / step, 1 / step, std::nullopt, bound.aggregate_tokens_per_s, std::nullopt,
                              bound.compute_bound};
            row.fraction_of_bound = row.aggregate_tokens_per_s / row.bound_aggregate_tokens_per_s;
            row.weights_fit_in_last_level_cache = weights_fit(dm, r.last_level_cache_bytes);
            row.probe_defect = beats_bound(row.fraction_of_bound, row.weights_fit_in_last_level_cache);
            if (b == 1) batch1 = row.aggregate_tokens_per_s, bound1 = row.bound_aggregate_tokens_per_s;
            if (batch1) row.ratio_to_batch_1 = row.aggregate_tokens_per_s / *batch1;
            if (bound1) row.bound_ratio_to_batch_1 = row.bound_aggregate_tokens_per_s / *bound1;
            r.batches.push_back(row);
        }
    }
}

}  // namespace

BenchResult bench(const Weights& w, const BenchInputs& in) {
    const Dims& d = w.dims();
    check_bench_inputs(d, in);
    CpuBackend cpu({.threads = in.threads, .kernels = in.kernels});  // float32 weights: prefill, and the reference of each comparison
    const Transformer m(w, cpu);
    const ForwardOptions opt;
    Eigen::setNbThreads(in.threads);
    BenchResult r;
    r.threads = in.threads;
    r.parameters = w.floats();
    r.weights_on_huge_pages = w.huge_pages();
    r.all_dtypes = in.all_dtypes;
    r.last_level_cache_bytes = last_level_cache_bytes();
    const std::vector<WeightDtype> list = run_dtypes(in);
    r.decode_dtype = list.back();
    std::vector<WeightsAt> ats;
    ats.reserve(list.size());  // backends point into these: no reallocation after one is made
    for (WeightDtype t : list) ats.push_back(make_weights_at(w, t, in.threads));

    std::optional<ReadProbe> probe(std::in_place, in.probe_bytes, in.threads);  // freed after the decode
    for (int pass = 0; pass < 5; ++pass) probe->pass();
    r.probe = probe->result();
    r.matmul_gflops = measure_matmul_gflops(r.matmul_n, in.threads, 3);
    for (WeightDtype t : list) r.product_gflops[t] = measure_batch_product_gflops(8, in.threads, 3, weight_dtype_bits(t));
    r.batch_product_gflops = r.product_gflops.at(r.decode_dtype);

    // Prefill (float32 products), after one warm-up pass.
    Rng rng(7);
    std::vector<int> prompt(std::size_t(in.prompt_len));  // [P]
    for (auto& t : prompt) t = static_cast<int>(rng.below(std::uint64_t(d.vocab_size)));
    // The prompt, then the timed decode steps (one more position than they feed: room to spare).
    const int held = cache_positions_for(std::size_t(in.prompt_len) + std::size_t(in.steps) + 1);
    ContiguousCache warm(d, cpu_backend(), held), cache(d, cpu_backend(), held);
    m.forward(prompt, warm, opt);
    const auto t0 = std::chrono::steady_clock::now();
    const MatrixRM logits = m.forward(prompt, cache, opt);  // [P, vocab]
    const double prefill_s = seconds_since(t0);
    r.prefill_tokens = in.prompt_len;
    r.prefill_tokens_per_s = in.prompt_len / prefill_s;
    r.prefill_gflops = prefill_gflops(w.floats(), std::uint64_t(in.prompt_len), prefill_s);
    r.prefill_fraction_of_pi = r.prefill_gflops / r.product_gflops.at(WeightDtype::F32);  // float32 products
    r.prefill_fraction_of_gemm = r.prefill_gflops / r.matmul_gflops;
    Eigen::Index tok = 0;
    logits.row(logits.rows() - 1).maxCoeff(&tok);

    r.decode_tokens = in.steps;
    measure_decode(m, in, prompt, cache, static_cast<int>(tok), opt, ats, *probe, r);
    probe.reset();
    const std::uint64_t S = std::uint64_t(in.prompt_len) + std::uint64_t(in.steps) / 2;
    r.bytes_per_step = by_dtype(in) ? decode_step_bytes(d, S, r.decode_dtype) : decode_step_bytes(d, S, weight_dtype_bits(r.decode_dtype));
    r.achieved_gbs = achieved_gbs(r.bytes_per_step, r.decode_tokens_per_s);
    r.bandwidth_fraction = r.achieved_gbs / r.probe.read_gbs;
    r.probe_defect = r.achieved_gbs > r.probe.read_gbs;

    const auto decode_backend = ats.back().cpu_backend_like(cpu);  // the context table decodes with the decode dtype's weights
    measure_contexts(Transformer(w, *decode_backend), in, opt, rng, r);
    measure_batches(m, in, opt, ats, r);
    return r;
}

}  // namespace inferlab::model
