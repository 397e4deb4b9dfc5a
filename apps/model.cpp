// inferlab model: the reference transformer: init, logits, check-cache, generate, bench. Each
// subcommand is an options struct, a setup function and a run function (CLI11's
// subcom_in_files): run parses the options, makes one library call (model/run/runs.hpp,
// bench.hpp) and hands the result to its printer (model_print.cpp).
#include <fmt/format.h>

#include <memory>

#include "common.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/runs.hpp"
#include "model_common.hpp"
#include "model_print.hpp"
#include "options.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

// ---- the options of a forward pass, shared by logits, check-cache and generate ----
struct PathOptions {
    std::string path = "contiguous", attention = "plain", window = "0", block_size = "16", threads = "1";
    std::string backend = "cpu", kernels, weight_dtype = "fp32";
};

void add_path_options(CLI::App* sub, PathOptions& p, bool with_path = true) {
    if (with_path) sub->add_option("--path", p.path, tr("nocache, contiguous (default) or paged"));
    else sub->add_option("--path", p.path, "every path runs")->group("");  // read only to refuse it: it has no effect
    sub->add_option("--attention", p.attention, tr("plain (default) or online (tiled, running max and sum)"));
    sub->add_option("--window", p.window, tr("sliding window W (0: dense)"));
    sub->add_option("--block-size", p.block_size, tr("paged cache: tokens per block (default 16)"));
    add_threads_option(sub, p.threads);
    sub->add_option("--backend", p.backend, tr("cpu (default) or cuda (a build with -DINFERLAB_CUDA=ON and a GPU)"));
    add_kernels_option(sub, p.kernels);
    // check-cache (no --path) compares every path, the no-cache pass too: bf16 cannot serve it.
    if (with_path)
        sub->add_option("--weight-dtype", p.weight_dtype,
                        tr("fp32 (default), bf16 (steps of up to 16 rows), int8 or int4 (every product; groups of 32, fp16 "
                           "scales; arithmetic: INFERLAB_QUANT_ARITH=float|int8): the weights the products read; cpu "
                           "backend only"));
    else
        sub->add_option("--weight-dtype", p.weight_dtype,
                        tr("fp32 (default), int8 or int4 (every product; groups of 32, fp16 scales; float32 activations): "
                           "the weights the products read; cpu backend only"));
}

CachePath parse_path(const std::string& text) {
    if (text == "nocache") return CachePath::NoCache;
    if (text == "contiguous") return CachePath::Contiguous;
    if (text == "paged") return CachePath::Paged;
    throw InputError("--path", text, N_("must be nocache, contiguous or paged"));
}

// A model ready to run: its weights, the weights at --weight-dtype (quantized or rounded once at
// load), the backend (the CPU's pointing into `at`) and the forward options. Held by pointer: the
// backend points into `at`, so `at` is declared before it (members are destroyed in reverse).
struct Prepared {
    std::unique_ptr<Weights> w;
    WeightsAt at;
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Transformer> m;
    ForwardOptions opt;
    PathChoice path;
    RunFacts facts;
};

// `arith`: how int8/int4 products multiply (check-cache: float32 activations, and
// INFERLAB_QUANT_ARITH=int8 refused there).
std::unique_ptr<Prepared> prepare(const ModelSource& src, const PathOptions& p, const CLI::App& sub,
                                  QArith arith = default_quant_arith()) {
    auto r = std::make_unique<Prepared>();
    std::string borrowed;  // a config of another architecture: said above the weights line
    r->w = load(src, nullptr, nullptr, &borrowed);
    if (p.attention == "plain") r->opt.attention = AttentionKind::Plain;
    else if (p.attention == "online") r->opt.attention = AttentionKind::Online;
    else throw InputError("--attention", p.attention, N_("must be plain or online"));
    r->opt.window = static_cast<int>(parse_nonnegative_int_at_most("--window", p.window, INT32_MAX, ""));
    const int threads = parse_threads(p.threads);
    const WeightDtype t = parse_weight_dtype("--weight-dtype", p.weight_dtype);
    if (t != WeightDtype::F32 && p.backend != "cpu")
        throw InputError("--weight-dtype", p.weight_dtype, N_("applies to the cpu backend only"));
    r->at = weights_at(*r->w, t, threads, arith);
    const CpuBackendOptions cpu = cpu_backend_options(threads, p.kernels, &r->at);
    r->backend = make_backend(p.backend, *r->w, cpu);
    r->m = std::make_unique<Transformer>(*r->w, *r->backend);
    r->path.path = parse_path(p.path);
    r->path.block_size = static_cast<int>(parse_positive_int_at_most("--block-size", p.block_size, kMaxBlockSize,
                                                                              N_("must be at most {0} tokens")));
    r->path.pool_seed = parse_nonnegative_int("--seed", src.seed);
    if (given(sub, "--block-size") && sub.get_option_no_throw("--path") && r->path.path != CachePath::Paged)
        throw InputError("--block-size", p.block_size, N_("has no effect without --path paged"));
    const WeightsFacts wf = weights_facts(r->at, cpu.kernels);
    r->facts = {r->w->dims(), p.backend, to_string(cpu.kernels), wf.dtype, p.attention,
                (borrowed.empty() ? "" : wrap(borrowed, "", "  ")) + wf.line, wf.quantized_arithmetic};
    return r;
}

// ---- init ----
struct InitOptions {
    ModelSource src;
    std::string out;
    OutputFlags flags;
};

void run_init(const InitOptions& o) {
    if (!o.src.checkpoint.empty()) throw InputError(N_("model init makes weights: give --config or --model, not --checkpoint"));
    if (o.out.empty()) throw InputError(N_("--out is required (the checkpoint file to write)"));
    std::string what, shown;
    auto w = load(o.src, &what, &shown);
    write_checkpoint(*w, o.out);
    emit(init_report(o.out, what, shown, *w), o.flags);
}

void setup_init(CLI::App* model) {
    auto o = std::make_shared<InitOptions>();
    CLI::App* s = model->add_subcommand("init", tr("Write a llama2.c checkpoint with seeded random weights"));
    add_source(s, o->src);
    s->add_option("--out", o->out, tr("checkpoint file to write"));
    add_output_flags(*s, o->flags);
    s->footer(examples_footer({"inferlab model init --model demo-gqa --seed 1 --out demo.bin"},
                              tr("JSON keys: out, parameters, bytes, source.")));
    s->callback([o] { run_init(*o); });
}

// ---- logits ----
struct LogitsOptions {
    ModelSource src;
    PathOptions path;
    std::string tokens;
    OutputFlags flags;
};

void run_logits(const LogitsOptions& o, const CLI::App& sub) {
    if (o.tokens.empty()) throw InputError(N_("--tokens is required (e.g. 1,2,3)"));
    auto p = prepare(o.src, o.path, sub);
    const auto tokens = parse_token_list("--tokens", o.tokens, p->w->dims());
    emit(logits_report(logits_along(*p->m, tokens, p->path, p->opt), p->facts), o.flags);
}

void setup_logits(CLI::App* model) {
    auto o = std::make_shared<LogitsOptions>();
    CLI::App* s = model->add_subcommand("logits", tr("Logits at every position, along one cache path"));
    add_source(s, o->src);
    add_path_options(s, o->path);
    s->add_option("--tokens", o->tokens, tr("token ids: 1,2,3"));
    add_output_flags(*s, o->flags, true);
    s->footer(examples_footer({"inferlab model logits --model demo-gqa --tokens 1,2,3 --path paged --json"},
                              tr("Tables (--csv --table NAME): positions.\n"
                                 "JSON keys: path, backend, kernels, weight_dtype, quantized_arithmetic (null: not int8/int4), tokens, logits (one row per position), "
                                 "top[]{pos, token, rank, next_token, logit} (each position's five largest logits, rank 1 the largest: the table's rows).")));
    s->callback([o, s] { run_logits(*o, *s); });
}

// ---- check-cache ----
struct CheckOptions {
    ModelSource src;
    PathOptions path;
    std::string tokens, seq_len = std::to_string(kCheckCacheDefaultTokens), chunk = std::to_string(CheckCacheInputs{}.chunk);
    OutputFlags flags;
};

// A former spelling kept for old scripts, given together with the new one.

void run_check(const CheckOptions& o, const CLI::App& sub) {
    refuse_both(sub, "--seq-len", "--length");
    if (given(sub, "--path"))
        throw InputError("--path", o.path.path, N_("has no effect: check-cache runs every path (nocache, contiguous, paged)"));
    if (!o.tokens.empty() && (given(sub, "--seq-len") || given(sub, "--length")))
        throw InputError("--seq-len", o.seq_len, N_("has no effect with --tokens (the tokens given are the sequence)"));
    if (parse_weight_dtype("--weight-dtype", o.path.weight_dtype) == WeightDtype::BF16)
        throw InputError("--weight-dtype", o.path.weight_dtype,
                         N_("cannot compare cache paths: bf16 weights serve steps of up to 16 rows only, so the no-cache "
                            "pass would read float32 (use fp32, int8 or int4)"));
    auto p = prepare(o.src, o.path, sub, quant_arith_or(QArith::Float));
    const Dims& d = p->w->dims();
    CheckCacheInputs in;
    if (!o.tokens.empty()) {
        in.tokens = parse_token_list("--tokens", o.tokens, d);
    } else {
        const int n = parse_token_count("--seq-len", o.seq_len, 0, static_cast<std::uint64_t>(d.seq_len));
        in.tokens = check_cache_tokens(d, std::size_t(n), p->path.pool_seed);
    }
    in.chunk = static_cast<int>(parse_positive_int_at_most("--chunk", o.chunk, INT32_MAX, ""));
    in.block_size = p->path.block_size;
    in.pool_seed = p->path.pool_seed;
    const CheckCacheResult res = check_cache(*p->m, in, p->opt);
    emit(check_cache_report(res, p->facts, !o.flags.svg.empty()), o.flags);
    if (!res.agree) throw ExitCode{1};
}

void setup_check_cache(CLI::App* model) {
    auto o = std::make_shared<CheckOptions>();
    CLI::App* s = model->add_subcommand("check-cache", tr("No cache, contiguous and paged caches give the same logits (exit 1 if not)"));
    add_source(s, o->src);
    add_path_options(s, o->path, false);  // every path runs: --path would have no effect
    s->add_option("--tokens", o->tokens, tr("token ids (default: --seq-len random tokens)"));
    s->add_option("--seq-len", o->seq_len, trf(N_("random tokens to feed (default {0})"), kCheckCacheDefaultTokens));
    s->add_option("--length", o->seq_len, "the former spelling of --seq-len")->group("");
    s->add_option("--chunk", o->chunk,
                  trf(N_("chunk size of the chunked-prefill comparison (default {0})"), CheckCacheInputs{}.chunk));
    add_output_flags(*s, o->flags, true);
    add_svg_flag(*s, o->flags, tr("each path's difference per position (log scale) with the tolerance"));
    s->footer(examples_footer({"inferlab model check-cache --model demo-gqa --seq-len 64",
                               "inferlab model check-cache --model demo-gqa --seq-len 32 --svg check-cache.svg"},
                              tr("Tables (--csv --table NAME): positions.\n"
                                 "JSON keys: backend, weight_dtype, quantized_arithmetic (null: not int8/int4), tokens, relative_tolerance, other_attention, "
                                 "rows[]{pos, contiguous, "
                                 "paged, other_attention, chunked}, max_abs_diff, max_rel_diff, worst_path, worst_position, "
                                 "agree.")));
    s->callback([o, s] { run_check(*o, *s); });
}

// ---- generate ----
struct GenerateOptions {
    ModelSource src;
    PathOptions path;
    std::string prompt = "1,2,3,4", steps = "8", temperature = "0", top_k = "0", top_p = "1", sample_seed = "1";
    bool trace = false;
    OutputFlags flags;
};

void run_generate(const GenerateOptions& o, const CLI::App& sub) {
    auto p = prepare(o.src, o.path, sub);
    const Dims& d = p->w->dims();
    GenerateInputs in;
    in.prompt = parse_token_list("--prompt", o.prompt, d);
    // At least one token: "generate 0 tokens" would print an empty result and a prefill nobody reads.
    in.steps = std::uint64_t(parse_token_count("--steps", o.steps, in.prompt.size(), static_cast<std::uint64_t>(d.seq_len)));
    in.sampling = {parse_temperature(o.temperature), parse_top_k_within(o.top_k, static_cast<std::size_t>(d.vocab_size)),
                   parse_top_p(o.top_p), parse_nonnegative_int("--sample-seed", o.sample_seed)};
    refuse_sampling_flags_when_greedy(sub, in.sampling.temperature == 0, "--temperature 0");
    if (p->path.path == CachePath::NoCache) throw InputError("--path", o.path.path, N_("must be contiguous or paged for generate"));
    in.path = p->path;
    emit(generate_report(generate(*p->m, in, p->opt), in.sampling, p->facts, o.trace), o.flags);
}

void setup_generate(CLI::App* model) {
    auto o = std::make_shared<GenerateOptions>();
    CLI::App* s = model->add_subcommand("generate", tr("Prefill a prompt, then decode; --trace shows each step's cache and shapes"));
    add_source(s, o->src);
    add_path_options(s, o->path);
    s->add_option("--prompt", o->prompt, tr("prompt token ids (default 1,2,3,4; no thousands separators)"));
    s->add_option("--steps", o->steps, tr("tokens to generate, at least 1 (default 8)"));
    s->add_option("--temperature", o->temperature, tr("0 = greedy (default), > 0 samples"))->check(rule(parse_temperature));
    s->add_option("--top-k", o->top_k, tr("keep the k most likely tokens (0: off)"))->check(rule(parse_top_k));
    s->add_option("--top-p", o->top_p, tr("nucleus mass (1: off)"))->check(rule(parse_top_p));
    add_sample_seed(s, o->sample_seed);
    s->add_flag("--trace", o->trace, tr("print each step: phase, tokens fed, cache lengths, shapes"));
    add_output_flags(*s, o->flags, true);
    s->footer(examples_footer({"inferlab model generate --model demo-gqa --prompt 1,2,3,4 --steps 3 --trace"},
                              tr("Tables (--csv --table NAME): trace.\n"
                                 "JSON keys: backend, weight_dtype, quantized_arithmetic (null: not int8/int4), prompt, sample_seed, generated, "
                                 "trace[]{step, phase, tokens, start_pos, "
                                 "cache_len, q_shape, kv_new_shape, kv_cached_shape, scores_shape}.")));
    s->callback([o, s] { run_generate(*o, *s); });
}

// ---- bench ----
struct BenchOptions {
    ModelSource src;
    std::string threads = "1", prompt_len = "128", steps = "32", probe_mib = "512", contexts, batches = "1,8";
    std::string weight_dtype = "fp32", kernels;
    bool skip_nocache = false;
    OutputFlags flags;
};

BenchInputs bench_inputs(const BenchOptions& o, const Dims& d) {
    BenchInputs in;
    in.threads = parse_threads(o.threads);
    in.kernels = kernels_option(o.kernels);
    in.all_dtypes = o.weight_dtype == "all";
    if (!in.all_dtypes && o.weight_dtype != "fp32" && o.weight_dtype != "bf16" && o.weight_dtype != "int8" && o.weight_dtype != "int4")
        throw InputError("--weight-dtype", o.weight_dtype, N_("must be fp32, bf16, int8, int4 or all"));
    in.weight_dtype = in.all_dtypes ? WeightDtype::F32 : parse_weight_dtype("--weight-dtype", o.weight_dtype);
    if (in.all_dtypes || in.weight_dtype == WeightDtype::Int8 || in.weight_dtype == WeightDtype::Int4)
        require_quantizable(d, "--weight-dtype " + o.weight_dtype + ": width");
    in.prompt_len = parse_token_count("--prompt-len", o.prompt_len, 0, static_cast<std::uint64_t>(d.seq_len));
    in.steps = parse_token_count("--steps", o.steps, static_cast<std::uint64_t>(in.prompt_len), static_cast<std::uint64_t>(d.seq_len));
    in.probe_bytes = probe_bytes_option(o.probe_mib);
    in.contexts = o.contexts.empty() ? default_bench_contexts(d) : parse_int_list_or_range("--contexts", o.contexts, 16);
    for (auto s : in.contexts)
        if (!bench_context_fits(d, s))
            throw InputError("--contexts", std::to_string(s),
                             N_("exceeds the maximum sequence length {0} less the {1} timed steps"),
                             {std::to_string(d.seq_len), std::to_string(kContextTimedSteps)});
    in.batches = parse_int_list_or_range("--batch", o.batches, 16);
    for (auto b : in.batches)
        if (b > 4096) throw InputError("--batch", std::to_string(b), N_("must be at most 4096 sequences"));
    in.skip_nocache = o.skip_nocache;
    return in;
}

void run_bench(const BenchOptions& o, const CLI::App& sub) {
    refuse_both(sub, "--steps", "--gen");
    refuse_both(sub, "--batch", "--batches");
    std::string what, shown;
    auto w = load(o.src, &what, &shown);
    const BenchInputs in = bench_inputs(o, w->dims());
    emit(bench_report(bench(*w, in), what, shown, w->dims(), !o.flags.svg.empty()), o.flags);
}

void setup_bench(CLI::App* model) {
    auto o = std::make_shared<BenchOptions>();
    CLI::App* s = model->add_subcommand("bench", tr("Measure prefill and decode against this machine's read bandwidth and compute rate"));
    add_source(s, o->src);
    add_threads_option(s, o->threads);
    s->add_option("--prompt-len", o->prompt_len, tr("prefill tokens (default 128)"));
    s->add_option("--steps", o->steps, tr("decode tokens (default 32)"));
    s->add_option("--gen", o->steps, "the former spelling of --steps")->group("");
    s->add_option("--probe-mib", o->probe_mib, tr("bandwidth probe buffer in MiB (default 512)"));
    s->add_option("--contexts", o->contexts, tr("context lengths of the scaling table (default: 128, 512, ... while S + 3 fits the model's maximum sequence length)"));
    s->add_option("--batch", o->batches, tr("batch sizes of the batch-decode table (default 1,8)"));
    s->add_option("--batches", o->batches, "the former spelling of --batch")->group("");
    s->add_flag("--skip-nocache", o->skip_nocache, tr("leave out the no-cache timings"));
    add_kernels_option(s, o->kernels);
    s->add_option("--weight-dtype", o->weight_dtype,
                  tr("fp32 (default), bf16, int8, int4 (groups of 32, fp16 scales; decode reads them packed, with int8 "
                     "activations where the CPU has AVX-512 VNNI, else in float32), or all: the four interleaved in one "
                     "run; float32 is decoded beside any other"));
    add_output_flags(*s, o->flags, true);
    add_svg_flag(*s, o->flags, tr("the cached and no-cache step times against the context"));
    s->footer(examples_footer({"inferlab model bench --model ref-110m --threads 2",
                               "inferlab model bench --model demo-gqa --probe-mib 64 --contexts 64,256,1000 --svg bench.svg",
                               "inferlab model bench --model ref-110m --weight-dtype bf16 --batch 1,2,4,8 --skip-nocache",
                               "inferlab model bench --model ref-110m --weight-dtype all --threads 2 --skip-nocache --batch 1,8"},
                              tr("Tables (--csv --table NAME): batch, context-scaling, dtypes (int8, int4, all).\n"
                                 "JSON keys: see the README's table (model bench).")));
    s->callback([o, s] { run_bench(*o, *s); });
}

}  // namespace

void setup_model(CLI::App& app) {
    CLI::App* model = app.add_subcommand("model", tr("The reference transformer (GQA, RoPE, KV cache: contiguous and paged)"));
    model->require_subcommand(1);
    setup_model_measure(model);
    setup_model_pitfall(model);
    setup_model_paged(model);
    model->footer(examples_footer({"inferlab model init --model demo-gqa --seed 1 --out demo.bin",
                                   "inferlab model logits --checkpoint demo.bin --tokens 1,2,3 --path paged --json",
                                   "inferlab model check-cache --model demo-gqa --seq-len 64",
                                   "inferlab model generate --model demo-gqa --prompt 1,2,3,4 --steps 2 --trace",
                                   "inferlab model bench --model ref-110m --threads 2"}));
    setup_init(model);
    setup_logits(model);
    setup_check_cache(model);
    setup_generate(model);
    setup_bench(model);
}

}  // namespace inferlab::app
