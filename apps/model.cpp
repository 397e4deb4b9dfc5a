// inferlab model: the reference transformer — init, logits, check-cache, generate, bench.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>

#include "common.hpp"
#include "model_common.hpp"
#include "options.hpp"
#include "inferlab/error.hpp"
#include "inferlab/kv.hpp"
#include "inferlab/model/bench.hpp"
#include "inferlab/model/kernels.hpp"
#include "inferlab/model/kv_cache.hpp"
#include "inferlab/model/transformer.hpp"
#include "inferlab/model/weights.hpp"
#include "inferlab/model_config.hpp"
#include "inferlab/rng.hpp"
#include "inferlab/spec.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

struct PathOptions {
    std::string path = "contiguous", attention = "plain", window = "0", block_size = "16", threads = "1";
    std::string backend = "cpu", kernels, weight_dtype = "fp32";
};

void add_path_options(CLI::App* sub, PathOptions& p) {
    sub->add_option("--path", p.path, "nocache, contiguous (default) or paged");
    sub->add_option("--attention", p.attention, "plain (default) or online (tiled, running max and sum)");
    sub->add_option("--window", p.window, "sliding window W (0: dense)");
    sub->add_option("--block-size", p.block_size, "paged cache: tokens per block (default 16)");
    add_threads_option(sub, p.threads);
    sub->add_option("--backend", p.backend, "cpu (default) or cuda (a build with -DINFERLAB_CUDA=ON and a GPU)");
    add_kernels_option(sub, p.kernels);
    sub->add_option("--weight-dtype", p.weight_dtype,
                    "fp32 (default), bf16 (steps of up to 16 rows), int8 or int4 (every product; groups of 32, fp16 "
                    "scales): the weights the products read; cpu backend only");
}

// The weights at --weight-dtype, quantized (or rounded to bf16) once at load; apply() them to the
// options of the same run.
WeightsAt weights_at(const PathOptions& p, const Weights& w, int threads) {
    const WeightDtype t = parse_weight_dtype("--weight-dtype", p.weight_dtype);
    if (t != WeightDtype::F32 && p.backend != "cpu")
        throw InputError("--weight-dtype", p.weight_dtype, "applies to the cpu backend only");
    return make_weights_at(w, t, threads);
}

ForwardOptions forward_options(const PathOptions& p) {
    ForwardOptions o;
    if (p.attention == "plain") o.attention = AttentionKind::Plain;
    else if (p.attention == "online") o.attention = AttentionKind::Online;
    else throw InputError("--attention", p.attention, "must be plain or online");
    o.window = static_cast<int>(parse_nonnegative_int_at_most("--window", p.window, INT32_MAX, ""));
    o.threads = parse_threads(p.threads);
    o.kernels = kernels_option(p.kernels);
    return o;
}

// Tokens per block of the paged cache. Paged caches use blocks of 8–32 tokens; the bound keeps
// the pool's allocation, ceil(seq_len / block) whole blocks, near the sequence's own size (a value
// beyond int once became a block of 0 tokens: division by zero).
constexpr std::uint64_t kMaxBlockSize = 65536;
int block_size_of(const PathOptions& p) {
    return static_cast<int>(parse_positive_int_at_most("--block-size", p.block_size, kMaxBlockSize, "tokens"));
}

// Logits of every position along one path.
MatrixRM run_path(const Transformer& m, const std::vector<int>& tokens, const std::string& path, int block_size,
                  const ForwardOptions& opt, std::uint64_t seed) {
    const Dims& d = m.dims();
    if (path == "nocache") return logits_without_cache(m, tokens, opt);
    if (path == "contiguous") {
        ContiguousCache cache(d, m.backend());
        return m.forward(tokens, cache, opt);
    }
    if (path == "paged") {
        const int blocks = (d.seq_len - 1) / block_size + 1;  // ceil without the overflow of seq_len + block
        BlockPool pool(d, block_size, blocks, seed, m.backend());
        PagedCache cache(pool, d);
        return m.forward(tokens, cache, opt);
    }
    throw InputError("--path", path, "must be nocache, contiguous or paged");
}

std::vector<int> top_tokens(const MatrixRM& logits, Eigen::Index row, int k) {
    std::vector<int> idx(static_cast<std::size_t>(logits.cols()));
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
    std::partial_sort(idx.begin(), idx.begin() + std::min<std::size_t>(idx.size(), std::size_t(k)), idx.end(),
                      [&](int a, int b) { return logits(row, a) > logits(row, b); });
    idx.resize(std::min<std::size_t>(idx.size(), std::size_t(k)));
    return idx;
}

// ---- init ----
struct InitOptions {
    ModelSource src;
    std::string out;
    OutputFlags flags;
};

void run_init(const InitOptions& o) {
    if (!o.src.checkpoint.empty()) throw InputError("model init makes weights: give --config or --model, not --checkpoint");
    if (o.out.empty()) throw InputError("--out is required (the checkpoint file to write)");
    std::string what;
    auto w = load(o.src, &what);
    write_checkpoint(*w, o.out);
    Report r;
    r.json = {{"out", o.out}, {"parameters", w->floats()}, {"bytes", w->bytes()}, {"source", what}};
    r.human = fmt::format("wrote {} ({}; {} parameters, {} of float32 weights)\n  {}\n", o.out, what,
                          group_thousands(w->floats()), bytes_all_units(w->bytes()), dims_text(w->dims()));
    r.explain = r.human;
    emit(r, o.flags);
}

// ---- logits ----
struct LogitsOptions {
    ModelSource src;
    PathOptions path;
    std::string tokens;
    OutputFlags flags;
};

void run_logits(const LogitsOptions& o) {
    auto w = load(o.src);
    if (o.tokens.empty()) throw InputError("--tokens is required (e.g. 1,2,3)");
    auto tokens = parse_token_list("--tokens", o.tokens, w->dims());
    ForwardOptions opt = forward_options(o.path);
    const WeightsAt at = weights_at(o.path, *w, opt.threads);
    at.apply(opt);
    int bs = block_size_of(o.path);
    // The same model code on either backend: only where the ops run (and the caches live) differs.
    std::unique_ptr<Backend> backend = make_backend(o.path.backend, *w);
    Transformer m(*w, backend ? *backend : cpu_backend());
    MatrixRM logits = run_path(m, tokens, o.path.path, bs, opt, parse_nonnegative_int("--seed", o.src.seed));
    Report r;
    r.json["path"] = o.path.path;
    r.json["backend"] = o.path.backend;
    r.json["kernels"] = to_string(opt.kernels);
    r.json["weight_dtype"] = to_string(at.dtype);
    r.json["tokens"] = tokens;
    r.json["logits"] = nlohmann::json::array();
    Table t{{"pos", "token", "top-5 next tokens (logit)"}, {}, {true, true, false}};
    for (Eigen::Index i = 0; i < logits.rows(); ++i) {
        std::vector<float> row(logits.row(i).data(), logits.row(i).data() + logits.cols());
        r.json["logits"].push_back(row);
        std::string top;
        for (int k : top_tokens(logits, i, 5)) top += fmt::format("{}({:.3f}) ", k, logits(i, k));
        t.rows.push_back({std::to_string(i), std::to_string(tokens[std::size_t(i)]), top});
    }
    r.human = fmt::format("{} path, {} attention; {}\n", o.path.path, o.path.attention, dims_text(w->dims())) + render_table(t);
    r.explain = r.human;
    emit(r, o.flags);
}

// ---- check-cache ----
struct CheckOptions {
    ModelSource src;
    PathOptions path;
    std::string tokens, length = "64", chunk = "5";
    OutputFlags flags;
};

double max_abs_diff(const MatrixRM& a, const MatrixRM& b, Eigen::Index row) {
    return static_cast<double>((a.row(row) - b.row(row)).cwiseAbs().maxCoeff());
}

void run_check(const CheckOptions& o) {
    auto w = load(o.src);
    std::unique_ptr<Backend> backend = make_backend(o.path.backend, *w);
    Transformer m(*w, backend ? *backend : cpu_backend());
    const Dims& d = w->dims();
    std::vector<int> tokens;
    const std::uint64_t seed = parse_nonnegative_int("--seed", o.src.seed);
    if (!o.tokens.empty()) {
        tokens = parse_token_list("--tokens", o.tokens, d);
    } else {
        std::uint64_t n = parse_positive_int("--length", o.length);
        if (n > static_cast<std::uint64_t>(d.seq_len))
            throw InputError("--length", o.length, "exceeds the model's maximum sequence length " + std::to_string(d.seq_len));
        Rng rng(seed + 1000);
        for (std::uint64_t i = 0; i < n; ++i) tokens.push_back(static_cast<int>(rng.below(std::uint64_t(d.vocab_size))));
    }
    // bf16 weights are read only by products of up to 16 rows, so the no-cache pass (every position
    // at once) would read float32 while the cached steps read bf16: the paths would differ by the
    // rounding, not by a cache bug.
    if (parse_weight_dtype("--weight-dtype", o.path.weight_dtype) == WeightDtype::BF16)
        throw InputError("--weight-dtype", o.path.weight_dtype,
                         "cannot compare cache paths: bf16 weights serve steps of up to 16 rows only, so the no-cache "
                         "pass would read float32 (use fp32, int8 or int4)");
    ForwardOptions opt = forward_options(o.path);
    const WeightsAt at = weights_at(o.path, *w, opt.threads);
    at.apply(opt);
    const int bs = block_size_of(o.path);
    const int chunk = static_cast<int>(
        parse_positive_int_at_most("--chunk", o.chunk, INT32_MAX, ""));
    MatrixRM none = run_path(m, tokens, "nocache", bs, opt, seed);
    MatrixRM cont = run_path(m, tokens, "contiguous", bs, opt, seed);
    MatrixRM paged = run_path(m, tokens, "paged", bs, opt, seed);
    ForwardOptions online = opt;
    online.attention = opt.attention == AttentionKind::Plain ? AttentionKind::Online : AttentionKind::Plain;
    MatrixRM other = run_path(m, tokens, "contiguous", bs, online, seed);
    // Chunked prefill: the same tokens fed `chunk` at a time, masks offset by the real history.
    MatrixRM chunked(static_cast<Eigen::Index>(tokens.size()), d.vocab_size);
    {
        ContiguousCache cache(d, m.backend());
        for (std::size_t s = 0; s < tokens.size(); s += std::size_t(chunk)) {
            std::vector<int> part(tokens.begin() + std::ptrdiff_t(s),
                                  tokens.begin() + std::ptrdiff_t(std::min(tokens.size(), s + std::size_t(chunk))));
            MatrixRM out = m.forward(part, cache, opt);
            chunked.middleRows(Eigen::Index(s), out.rows()) = out;
        }
    }
    // 1e-5 relative to each position's largest logit: float32 sums in a different order per path.
    constexpr double kRelTol = 1e-5;
    Report r;
    Table t{{"pos", "contiguous", "paged", std::string(online.attention == AttentionKind::Online ? "online" : "plain") + " attn",
             "chunked prefill"},
            {}, {}};
    r.json["backend"] = o.path.backend;
    r.json["tokens"] = tokens;
    r.json["relative_tolerance"] = kRelTol;
    r.json["rows"] = nlohmann::json::array();
    double worst = 0, worst_rel = 0;
    for (Eigen::Index i = 0; i < none.rows(); ++i) {
        double a = max_abs_diff(cont, none, i), b = max_abs_diff(paged, none, i), c = max_abs_diff(other, none, i),
               e = max_abs_diff(chunked, none, i);
        worst = std::max({worst, a, b, c, e});
        const double scale = std::max(1.0, static_cast<double>(none.row(i).cwiseAbs().maxCoeff()));
        worst_rel = std::max(worst_rel, std::max({a, b, c, e}) / scale);
        r.json["rows"].push_back({{"pos", i}, {"contiguous", a}, {"paged", b}, {"other_attention", c}, {"chunked", e}});
        t.rows.push_back({std::to_string(i), fmt::format("{:.2e}", a), fmt::format("{:.2e}", b), fmt::format("{:.2e}", c),
                          fmt::format("{:.2e}", e)});
    }
    r.json["max_abs_diff"] = worst;
    r.json["max_rel_diff"] = worst_rel;
    r.json["agree"] = worst_rel <= kRelTol;
    r.human = fmt::format("Max |logit − no-cache logit| per position ({}; {}; {} backend)\n", count_noun(tokens.size(), "token"), dims_text(d),
                          o.path.backend);
    r.human += render_table(t);
    r.human += fmt::format("  largest difference {:.3e} ({:.3e} of the position's largest logit); tolerance 1e-5 relative: {}\n",
                           worst, worst_rel, worst_rel <= kRelTol ? "all paths agree" : "PATHS DISAGREE");
    r.human += "  (the first document's Figure 17: the same fixed tokens through three cache paths, compared by logits)\n";
    r.explain = r.human;
    r.add_table("positions", t);
    emit(r, o.flags);
    if (worst_rel > kRelTol) throw ExitCode{1};
}

// ---- generate ----
struct GenerateOptions {
    ModelSource src;
    PathOptions path;
    std::string prompt = "1,2,3,4", steps = "8", temperature = "0", top_k = "0", top_p = "1", sample_seed = "1";
    bool trace = false;
    OutputFlags flags;
};

int sample_token(const MatrixRM& logits, Eigen::Index row, double temperature, std::size_t top_k, double top_p, Rng& rng) {
    if (temperature == 0) {
        Eigen::Index best = 0;
        logits.row(row).maxCoeff(&best);
        return static_cast<int>(best);
    }
    std::vector<double> l(logits.row(row).data(), logits.row(row).data() + logits.cols());
    return static_cast<int>(rng.categorical(sampling_distribution(l, temperature, top_k, top_p)));
}

void run_generate(const GenerateOptions& o) {
    auto w = load(o.src);
    std::unique_ptr<Backend> backend = make_backend(o.path.backend, *w);
    Transformer m(*w, backend ? *backend : cpu_backend());
    const Dims& d = w->dims();
    auto prompt = parse_token_list("--prompt", o.prompt, d);
    const std::uint64_t steps = static_cast<std::uint64_t>(
        parse_token_count("--steps", o.steps, prompt.size(), static_cast<std::uint64_t>(d.seq_len), false));
    const double temperature = parse_temperature(o.temperature);
    const std::size_t top_k = parse_top_k(o.top_k);
    const double top_p = parse_top_p(o.top_p);
    ForwardOptions opt = forward_options(o.path);
    const WeightsAt at = weights_at(o.path, *w, opt.threads);
    at.apply(opt);
    const std::uint64_t seed = parse_nonnegative_int("--seed", o.src.seed);
    Rng rng(parse_nonnegative_int("--sample-seed", o.sample_seed));
    const int bs = block_size_of(o.path);
    std::unique_ptr<BlockPool> pool;
    std::unique_ptr<KvCache> cache;
    if (o.path.path == "contiguous") cache = std::make_unique<ContiguousCache>(d, m.backend());
    else if (o.path.path == "paged") {
        pool = std::make_unique<BlockPool>(d, bs, (d.seq_len - 1) / bs + 1, seed, m.backend());
        cache = std::make_unique<PagedCache>(*pool, d);
    } else
        throw InputError("--path", o.path.path, "must be contiguous or paged for generate");
    std::vector<StepTrace> traces;
    std::vector<int> generated;
    StepTrace tr;
    MatrixRM logits = m.forward(prompt, *cache, opt, &tr);
    traces.push_back(tr);
    for (std::uint64_t s = 0; s < steps; ++s) {
        int next = sample_token(logits, logits.rows() - 1, temperature, top_k, top_p, rng);
        generated.push_back(next);
        if (s + 1 == steps) break;
        logits = m.forward(std::vector<int>{next}, *cache, opt, &tr);
        traces.push_back(tr);
    }
    Report r;
    r.json["backend"] = o.path.backend;
    r.json["prompt"] = prompt;
    r.json["sample_seed"] = parse_nonnegative_int("--sample-seed", o.sample_seed);
    r.json["generated"] = generated;
    r.json["trace"] = nlohmann::json::array();
    Table t{{"step", "phase", "tokens fed", "cache length per layer", "Q", "new K/V", "cached K/V", "scores"}, {}, {true, false, false}};
    for (std::size_t i = 0; i < traces.size(); ++i) {
        const auto& s = traces[i];
        std::string fed;
        for (std::size_t k = 0; k < s.tokens.size(); ++k) fed += (k ? "," : "") + std::to_string(s.tokens[k]);
        std::string lens;
        for (std::size_t k = 0; k < s.cache_len.size(); ++k) lens += (k ? "," : "") + std::to_string(s.cache_len[k]);
        t.rows.push_back({std::to_string(i), s.phase, fed, lens, s.q_shape, s.kv_new_shape, s.kv_cached_shape, s.scores_shape});
        r.json["trace"].push_back({{"step", i}, {"phase", s.phase}, {"tokens", s.tokens}, {"start_pos", s.start_pos},
                                   {"cache_len", s.cache_len}, {"q_shape", s.q_shape}, {"kv_new_shape", s.kv_new_shape},
                                   {"kv_cached_shape", s.kv_cached_shape}, {"scores_shape", s.scores_shape}});
    }
    std::string gen;
    for (std::size_t k = 0; k < generated.size(); ++k) gen += (k ? "," : "") + std::to_string(generated[k]);
    r.human = fmt::format("generated {} token(s): {}\n", generated.size(), gen);
    if (o.trace) {
        r.human += fmt::format("\nTrace ({}; shapes [B, heads, tokens, d] as the first document's table):\n", dims_text(d));
        r.human += render_table(t);
    }
    r.explain = r.human;
    r.add_table("trace", t);
    emit(r, o.flags);
}

// ---- bench ----
struct BenchOptions {
    ModelSource src;
    std::string threads = "1", prompt_len = "128", gen = "32", probe_mib = "512", contexts, batches = "1,8";
    std::string weight_dtype = "fp32", kernels;
    bool skip_nocache = false;
    OutputFlags flags;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The weight dtypes decoded in one run: bytes, speed, decode-roofline's bound for those bytes on
// the measured β and π, and how far each moved the logits from float32 (the first document's
// §4.1: fewer bits cut the bytes, the speed rises by less).
void dtype_comparison(const std::vector<DtypeDecode>& dt, const Dims& d, std::uint64_t ctx, const Machine& here,
                      nlohmann::json& j, std::string& h) {
    const std::uint64_t llc = last_level_cache_bytes();
    Table t{{"weights", "bytes/step", "bytes ÷", "tok/s", "speed ×", "bound tok/s", "of bound", "max rel Δlogit", "KL nats", "greedy =", "fits LLC"},
            {}, {}};
    j["dtypes"] = nlohmann::json::array();
    j["last_level_cache_bytes"] = llc;
    for (const auto& x : dt) {
        const DecodeStep b = decode_step(reference_decode_model(d, x.dtype), {ctx}, here);
        const double bytes_ratio = double(dt[0].bytes_per_step) / double(x.bytes_per_step);
        const double speed_ratio = x.tokens_per_s / dt[0].tokens_per_s;
        const bool in_cache = llc > 0 && decode_step_bytes(d, 0, x.dtype) <= llc;
        t.rows.push_back({to_string(x.dtype), bytes_all_units(x.bytes_per_step), fmt::format("{:.2f}×", bytes_ratio),
                          fmt::format("{:.2f}", x.tokens_per_s), fmt::format("{:.2f}×", speed_ratio),
                          fmt::format("{:.2f}", b.aggregate_tokens_per_s), fmt::format("{:.0f}%", 100 * x.tokens_per_s / b.aggregate_tokens_per_s),
                          fmt::format("{:.2e}", x.max_rel_logit_diff), fmt::format("{:.2e}", x.mean_kl),
                          fmt::format("{:.0f}%", 100 * x.greedy_agreement), in_cache ? "yes: bound n/a" : "no"});
        j["dtypes"].push_back({{"dtype", to_string(x.dtype)}, {"bytes_per_step", x.bytes_per_step}, {"bytes_ratio_to_fp32", bytes_ratio},
                               {"tokens_per_s", x.tokens_per_s}, {"speed_ratio_to_fp32", speed_ratio},
                               {"bound_tokens_per_s", b.aggregate_tokens_per_s}, {"fraction_of_bound", x.tokens_per_s / b.aggregate_tokens_per_s},
                               {"max_rel_logit_diff", x.max_rel_logit_diff}, {"mean_kl", x.mean_kl},
                               {"greedy_agreement", x.greedy_agreement}, {"weights_fit_in_last_level_cache", in_cache}});
    }
    h += fmt::format("\nWeight dtypes decoded in one run, interleaved step by step (each reads float32's greedy token); bound:\n"
                     "decode-roofline for each dtype's bytes on the measured β and π; last-level cache {} (a model that fits\n"
                     "there is read from cache and the DRAM bound does not apply). §4.1: the bytes fall faster than the speed rises.\n",
                     llc ? bytes_all_units(llc) : "unknown");
    h += render_table(t);
}

void run_bench(const BenchOptions& o) {
    std::string what;
    ModelSource src = o.src;
    auto w = load(src, &what);
    Transformer m(*w);
    const Dims& d = w->dims();
    ForwardOptions opt;
    opt.threads = parse_threads(o.threads);
    opt.kernels = kernels_option(o.kernels);
    Eigen::setNbThreads(opt.threads);
    Bf16Weights bf16;
    const bool all = o.weight_dtype == "all";
    if (!all && o.weight_dtype != "fp32" && o.weight_dtype != "bf16" && o.weight_dtype != "int8" && o.weight_dtype != "int4")
        throw InputError("--weight-dtype", o.weight_dtype, "must be fp32, bf16, int8, int4 or all");
    const WeightDtype wdt = all ? WeightDtype::F32 : parse_weight_dtype("--weight-dtype", o.weight_dtype);
    const bool quantized = wdt == WeightDtype::Int8 || wdt == WeightDtype::Int4;
    if (all || quantized) require_quantizable(d, "--weight-dtype " + o.weight_dtype + ": width");
    const unsigned weight_bits = weight_dtype_bits(wdt);
    // With all, the decode line and the tables after the comparison use the last of the four (int4).
    const WeightDtype table_dt = all ? WeightDtype::Int4 : wdt;
    const bool by_dtype = quantized || all;
    if (wdt == WeightDtype::BF16) bf16 = to_bf16(*w);
    const int P = parse_token_count("--prompt-len", o.prompt_len, 0, static_cast<std::uint64_t>(d.seq_len));
    const int G = parse_token_count("--gen", o.gen, static_cast<std::uint64_t>(P), static_cast<std::uint64_t>(d.seq_len));
    const std::uint64_t probe = parse_positive_int("--probe-mib", o.probe_mib);
    auto contexts = o.contexts.empty() ? default_bench_contexts(d) : parse_int_list_or_range("--contexts", o.contexts, 16);
    auto batches = parse_int_list_or_range("--batches", o.batches, 16);
    for (auto s : contexts)
        if (!bench_context_fits(d, s))
            throw InputError("--contexts", std::to_string(s),
                             fmt::format("exceeds the maximum sequence length {} less the {} timed steps", d.seq_len, kContextTimedSteps));

    BandwidthProbe bw = measure_read_bandwidth(probe << 20, opt.threads, 5);
    const double mm = measure_matmul_gflops(512, opt.threads, 3);
    const double pi = measure_batch_product_gflops(8, opt.threads, 3, weight_dtype_bits(table_dt));
    Rng rng(7);
    std::vector<int> prompt;
    for (int i = 0; i < P; ++i) prompt.push_back(static_cast<int>(rng.below(std::uint64_t(d.vocab_size))));

    // Prefill, then decode G tokens greedily.
    ContiguousCache cache(d);
    m.forward(prompt, cache, opt);  // warm-up
    ContiguousCache cache2(d);
    auto t0 = std::chrono::steady_clock::now();
    MatrixRM logits = m.forward(prompt, cache2, opt);
    const double prefill_s = seconds_since(t0);
    const double prefill_rate = prefill_gflops(w->floats(), std::uint64_t(P), prefill_s);
    int tok = 0;
    logits.row(logits.rows() - 1).maxCoeff(&tok);
    double tps = 0, fp32_tps = 0, logit_change = 0, speedup = 0;
    std::vector<WeightsAt> ats;
    std::vector<DtypeDecode> dtypes;
    if (weight_bits == 16) {
        // bf16 weights (prefill above keeps float32 products): decode alternates a float32 step and
        // a bf16 step on two caches holding the same prompt, so their ratio is measured in one run.
        ContiguousCache b(d);
        m.forward(prompt, b, opt);
        const DecodeComparison c = compare_fp32_bf16_decode(m, cache2, b, tok, G, opt, bf16);
        tps = c.bf16_tokens_per_s;
        fp32_tps = c.fp32_tokens_per_s;
        logit_change = c.max_logit_change;
        speedup = c.speedup();
        opt.bf16 = &bf16;  // the tables below decode with bf16 weights too
    } else if (all || quantized) {
        // float32 and the chosen dtypes decode in one run, interleaved step by step.
        std::vector<WeightDtype> list = {WeightDtype::F32};
        if (all) list.insert(list.end(), {WeightDtype::BF16, WeightDtype::Int8, WeightDtype::Int4});
        else list.push_back(wdt);
        ats.reserve(list.size());  // the options point into these: no reallocation after apply
        std::vector<const WeightsAt*> ptrs;
        for (WeightDtype t : list) {
            ats.push_back(make_weights_at(*w, t, opt.threads));
            ptrs.push_back(&ats.back());
        }
        dtypes = compare_decode_dtypes(m, prompt, G, opt, ptrs);
        tps = dtypes.back().tokens_per_s;
        fp32_tps = dtypes[0].tokens_per_s;
        logit_change = dtypes.back().max_rel_logit_diff;
        speedup = tps / fp32_tps;
        ats.back().apply(opt);  // the tables below decode with these weights too
    } else {
        t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < G; ++i) {
            logits = m.forward(std::vector<int>{tok}, cache2, opt);
            logits.row(0).maxCoeff(&tok);
        }
        tps = G / seconds_since(t0);
    }
    const std::uint64_t step_bytes = by_dtype ? decode_step_bytes(d, std::uint64_t(P + G / 2), table_dt)
                                               : decode_step_bytes(d, std::uint64_t(P + G / 2), weight_bits);
    const double achieved = achieved_gbs(step_bytes, tps);

    Report r;
    auto& j = r.json;
    j = {{"model", what},
         {"threads", opt.threads},
         {"parameters", w->floats()},
         {"weights_on_huge_pages", w->huge_pages()},
         {"prefill_tokens", P},
         {"prefill_tokens_per_s", P / prefill_s},
         {"prefill_gflops", prefill_rate},
         {"measured_matmul_gflops", mm},
         {"decode_tokens", G},
         {"decode_tokens_per_s", tps},
         {"bytes_per_step", step_bytes},
         {"achieved_gbs", achieved},
         {"measured_read_gbs", bw.read_gbs},
         {"probe_kernel_gbs", bw.kernel_gbs},
         {"probe_sum_gbs", bw.sum_gbs},
         {"probe_defect", achieved > bw.read_gbs},
         {"probe_bytes", bw.bytes},
         {"probe_huge_pages", bw.huge_pages},
         {"bandwidth_fraction", achieved / bw.read_gbs},
         {"weight_dtype", o.weight_dtype},
         {"bf16_logit_change", logit_change},
         {"measured_batch_product_gflops", pi}};
    if (weight_bits == 16) {
        j["fp32_decode_tokens_per_s"] = fp32_tps;
        j["bf16_speedup"] = speedup;
    } else if (!dtypes.empty()) {  // int8, int4 or all: float32 decoded beside them
        j["fp32_decode_tokens_per_s"] = fp32_tps;
        j["bf16_speedup"] = nullptr;
    } else {
        j["fp32_decode_tokens_per_s"] = tps;
        j["bf16_speedup"] = nullptr;
    }
    std::string& h = r.human;
    h += fmt::format("Reference model: {} ({} parameters, {} threads)\n  {}\n", what, group_thousands(w->floats()), opt.threads,
                     dims_text(d));
    h += fmt::format("Read bandwidth over {} MiB (huge pages {}): {:.2f} GB/s, the faster of the decode kernel's own stream "
                     "({:.2f} GB/s) and a plain sum loop ({:.2f} GB/s)\n",
                     probe, bw.huge_pages ? "on" : "refused", bw.read_gbs, bw.kernel_gbs, bw.sum_gbs);
    h += fmt::format("Matrix multiply (Eigen, 512³): {:.2f} GFLOP/s\n", mm);
    h += fmt::format("Batch product (the decode kernel, {} weights, 8 rows, in cache): {:.2f} GFLOP/s, this machine's compute roof π\n",
                     to_string(table_dt), pi);
    h += fmt::format("Prefill {} tokens (float32 products): {:.1f} tokens/s, {:.2f} GFLOP/s = {:.0f}% of π, {:.0f}% of Eigen's GEMM rate\n",
                     P, P / prefill_s, prefill_rate, 100 * prefill_rate / pi, 100 * prefill_rate / mm);
    h += fmt::format("Decode {} tokens ({} weights): {:.2f} tokens/s; one step reads {} → {:.2f} GB/s = {:.0f}% of the measured "
                     "read bandwidth (weights on huge pages: {})\n",
                     G, dtypes.empty() ? o.weight_dtype : to_string(dtypes.back().dtype), tps, bytes_all_units(step_bytes), achieved, 100 * achieved / bw.read_gbs,
                     w->huge_pages() ? "yes" : "no");
    if (achieved > bw.read_gbs)
        h += fmt::format("  PROBE DEFECT: the decode read {:.2f} GB/s, faster than the probe's {:.2f} GB/s; the fraction above is not a result\n",
                         achieved, bw.read_gbs);
    if (!dtypes.empty()) {
        dtype_comparison(dtypes, d, std::uint64_t(P + G / 2), measured_machine(bw, pi), j, h);
        h += "  int8/int4 arithmetic: " + ats.back().arithmetic() + "\n";
        j["quantized_arithmetic"] = ats.back().arithmetic();
    }
    if (weight_bits == 16) {
        h += fmt::format("  the same steps with float32 weights, alternated with these: {:.2f} tokens/s; bf16 = {:.2f}× float32\n",
                         fp32_tps, speedup);
        h += fmt::format("  bf16 weights change the decode steps' logits by at most {:.2e} of the largest logit\n", logit_change);
    }

    // Context scaling: one cached decode step against recomputing the prefix without a cache.
    Table ct{{"S", "cached step", "no-cache step", "ratio"}, {}, {}};
    j["context_scaling"] = nlohmann::json::array();
    for (auto s : contexts) {
        std::vector<int> ctx(std::size_t(s) + 3);
        for (auto& t : ctx) t = static_cast<int>(rng.below(std::uint64_t(d.vocab_size)));
        ContiguousCache c(d);
        m.forward(std::vector<int>(ctx.begin(), ctx.end() - 3), c, opt);
        // Best of three consecutive steps: the first after a long prefill pays for cold pages.
        double cached = 1e300;
        for (int k = 3; k >= 1; --k) {
            auto t1 = std::chrono::steady_clock::now();
            m.forward(std::vector<int>{ctx[ctx.size() - std::size_t(k)]}, c, opt);
            cached = std::min(cached, seconds_since(t1));
        }
        std::chrono::steady_clock::time_point t1;
        double nocache = 0;
        if (!o.skip_nocache) {
            ContiguousCache scratch(d);
            t1 = std::chrono::steady_clock::now();
            // What each step costs without a cache: the whole prefix of S + 1 tokens again.
            m.forward(std::vector<int>(ctx.begin(), ctx.begin() + std::ptrdiff_t(s) + 1), scratch, opt);
            nocache = seconds_since(t1);
        }
        ct.rows.push_back({std::to_string(s), fmt::format("{:.3f} ms", cached * 1e3),
                           o.skip_nocache ? "-" : fmt::format("{:.3f} ms", nocache * 1e3),
                           o.skip_nocache ? "-" : fmt::format("{:.1f}×", nocache / cached)});
        j["context_scaling"].push_back({{"seq_len", s}, {"cached_step_s", cached}, {"nocache_step_s", nocache}});
    }
    h += "\nOne decode step at context S: the cached step grows with S (reads S positions); without a cache each step\n"
         "recomputes the whole prefix, so generating N tokens costs O(N²):\n";
    h += render_table(ct);

    // Batch decode: B sequences with their own caches, one step reading the weights once; beside
    // it, decode-roofline's bound for the same bytes and FLOPs on this machine's measured β and π.
    const int batch_ctx = std::min(P, 16);
    const Machine here = measured_machine(bw, pi);
    const DecodeModel dm = by_dtype ? reference_decode_model(d, table_dt) : reference_decode_model(d, weight_bits);
    Table bt{{"batch", "aggregate tok/s", "per-request tok/s", "× batch 1", "bound (β, π measured)", "bound is"}, {}, {}};
    j["batch"] = nlohmann::json::array();
    double batch1 = 0;
    for (auto b : batches) {
        const double step = time_decode_step(m, static_cast<int>(b), batch_ctx, 4, opt);
        const double agg = static_cast<double>(b) / step;
        if (b == 1) batch1 = agg;
        const DecodeStep bound = decode_step(dm, std::vector<std::uint64_t>(b, std::uint64_t(batch_ctx) + 1), here);
        bt.rows.push_back({std::to_string(b), fmt::format("{:.2f}", agg), fmt::format("{:.2f}", 1 / step),
                           batch1 > 0 ? fmt::format("{:.2f}×", agg / batch1) : "-", fmt::format("{:.2f}", bound.aggregate_tokens_per_s),
                           bound.compute_bound ? "compute" : "memory"});
        nlohmann::json row = {{"batch", b},
                              {"aggregate_tokens_per_s", agg},
                              {"per_request_tokens_per_s", 1 / step},
                              {"bound_aggregate_tokens_per_s", bound.aggregate_tokens_per_s},
                              {"compute_bound", bound.compute_bound}};
        row["ratio_to_batch_1"] = batch1 > 0 ? nlohmann::json(agg / batch1) : nlohmann::json(nullptr);
        j["batch"].push_back(row);
    }
    h += fmt::format("\nBatch decode at context {} (each sequence its own cache; one step reads the weights once for all).\n"
                     "The bound is decode-roofline's max(bytes/β, FLOPs/π) on the β and π measured above: reading the\n"
                     "weights once pays for every row until the arithmetic catches up (the ridge point):\n",
                     batch_ctx);
    h += render_table(bt);
    r.explain = h;
    emit(r, o.flags);
}

}  // namespace

void setup_model(CLI::App& app) {
    CLI::App* model = app.add_subcommand("model", "The reference transformer (GQA, RoPE, KV cache: contiguous and paged)");
    model->require_subcommand(1);
    setup_model_measure(model);
    setup_model_pitfall(model);
    setup_model_paged(model);
    model->footer(examples_footer({"inferlab model init --model demo-gqa --seed 1 --out demo.bin",
                                   "inferlab model logits --checkpoint demo.bin --tokens 1,2,3 --path paged --json",
                                   "inferlab model check-cache --model demo-gqa --length 64",
                                   "inferlab model generate --model demo-gqa --prompt 1,2,3,4 --steps 2 --trace",
                                   "inferlab model bench --model ref-110m --threads 2"}));

    auto init = std::make_shared<InitOptions>();
    CLI::App* si = model->add_subcommand("init", "Write a llama2.c checkpoint with seeded random weights");
    add_source(si, init->src);
    si->add_option("--out", init->out, "checkpoint file to write");
    add_output_flags(*si, init->flags);
    si->footer(examples_footer({"inferlab model init --model demo-gqa --seed 1 --out demo.bin"},
                               "JSON keys: out, parameters, bytes, source."));
    si->callback([init] { run_init(*init); });

    auto lo = std::make_shared<LogitsOptions>();
    CLI::App* sl = model->add_subcommand("logits", "Logits at every position, along one cache path");
    add_source(sl, lo->src);
    add_path_options(sl, lo->path);
    sl->add_option("--tokens", lo->tokens, "token ids: 1,2,3");
    add_output_flags(*sl, lo->flags);
    sl->footer(examples_footer({"inferlab model logits --model demo-gqa --tokens 1,2,3 --path paged --json"},
                               "JSON keys: path, tokens, logits (one row per position)."));
    sl->callback([lo] { run_logits(*lo); });

    auto ck = std::make_shared<CheckOptions>();
    CLI::App* sc = model->add_subcommand("check-cache", "No cache, contiguous and paged caches give the same logits (exit 1 if not)");
    add_source(sc, ck->src);
    add_path_options(sc, ck->path);
    sc->add_option("--tokens", ck->tokens, "token ids (default: --length random tokens)");
    sc->add_option("--length", ck->length, "random tokens to feed (default 64)");
    sc->add_option("--chunk", ck->chunk, "chunk size of the chunked-prefill comparison (default 5)");
    add_output_flags(*sc, ck->flags, true);
    sc->footer(examples_footer({"inferlab model check-cache --model demo-gqa --length 64"},
                               "JSON keys: tokens, relative_tolerance, rows[]{pos, contiguous, paged, other_attention, chunked},\n"
                               "max_abs_diff, max_rel_diff, agree."));
    sc->callback([ck] { run_check(*ck); });

    auto ge = std::make_shared<GenerateOptions>();
    CLI::App* sg = model->add_subcommand("generate", "Prefill a prompt, then decode; --trace shows each step's cache and shapes");
    add_source(sg, ge->src);
    add_path_options(sg, ge->path);
    sg->add_option("--prompt", ge->prompt, "prompt token ids (default 1,2,3,4)");
    sg->add_option("--steps", ge->steps, "tokens to generate (default 8)");
    sg->add_option("--temperature", ge->temperature, "0 = greedy (default), > 0 samples")
        ->check(rule(parse_temperature));
    sg->add_option("--top-k", ge->top_k, "keep the k most likely tokens (0: off)")
        ->check(rule(parse_top_k));
    sg->add_option("--top-p", ge->top_p, "nucleus mass (1: off)")
        ->check(rule(parse_top_p));
    add_sample_seed(sg, ge->sample_seed);
    sg->add_flag("--trace", ge->trace, "print each step: phase, tokens fed, cache lengths, shapes");
    add_output_flags(*sg, ge->flags, true);
    sg->footer(examples_footer({"inferlab model generate --model demo-gqa --prompt 1,2,3,4 --steps 3 --trace"},
                               "JSON keys: prompt, sample_seed, generated, trace[]{step, phase, tokens, start_pos, cache_len, q_shape,\n"
                               "kv_new_shape, kv_cached_shape, scores_shape}."));
    sg->callback([ge] { run_generate(*ge); });

    auto be = std::make_shared<BenchOptions>();
    CLI::App* sb = model->add_subcommand("bench", "Measure prefill and decode against this machine's read bandwidth and compute rate");
    add_source(sb, be->src);
    add_threads_option(sb, be->threads);
    sb->add_option("--prompt-len", be->prompt_len, "prefill tokens (default 128)");
    sb->add_option("--gen", be->gen, "decode tokens (default 32)");
    sb->add_option("--probe-mib", be->probe_mib, "bandwidth probe buffer in MiB (default 512)");
    sb->add_option("--contexts", be->contexts, "context lengths of the scaling table (default: 128, 512, ... while S + 3 fits the model's maximum sequence length)");
    sb->add_option("--batches", be->batches, "batch sizes of the batch-decode table (default 1,8)");
    sb->add_flag("--skip-nocache", be->skip_nocache, "leave out the no-cache timings");
    add_kernels_option(sb, be->kernels);
    sb->add_option("--weight-dtype", be->weight_dtype,
                   "fp32 (default), bf16, int8, int4 (groups of 32, fp16 scales; decode reads them packed, arithmetic in float32), "
                   "or all: the four interleaved in one run");
    add_output_flags(*sb, be->flags);
    sb->footer(examples_footer({"inferlab model bench --model ref-110m --threads 2",
                                "inferlab model bench --model ref-110m --weight-dtype bf16 --batches 1,2,4,8 --skip-nocache",
                                "inferlab model bench --model ref-110m --weight-dtype all --threads 2 --skip-nocache --batches 1,8"},
                               "JSON keys: decode_tokens_per_s, bytes_per_step, achieved_gbs, measured_read_gbs,\n"
                               "bandwidth_fraction, prefill_tokens_per_s, prefill_gflops, measured_matmul_gflops,\n"
                               "measured_batch_product_gflops, fp32_decode_tokens_per_s, bf16_speedup, bf16_logit_change,\n"
                               "context_scaling[]{seq_len, cached_step_s, nocache_step_s}, batch[]{batch,\n"
                               "aggregate_tokens_per_s, per_request_tokens_per_s, ratio_to_batch_1, bound_aggregate_tokens_per_s,\n"
                               "compute_bound}, weights_on_huge_pages, probe_huge_pages, weight_dtype, threads, parameters,\n"
                               "probe_kernel_gbs, probe_sum_gbs, probe_defect; with int8, int4 or all: dtypes[]{dtype, bytes_per_step,\n"
                               "bytes_ratio_to_fp32, tokens_per_s, speed_ratio_to_fp32, bound_tokens_per_s, fraction_of_bound,\n"
                               "max_rel_logit_diff, mean_kl, greedy_agreement, weights_fit_in_last_level_cache}, last_level_cache_bytes."));
    sb->callback([be] { run_bench(*be); });
}

}  // namespace inferlab::app
