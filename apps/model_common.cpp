#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/memory.hpp"
#ifdef INFERLAB_WITH_CUDA
#include "inferlab/cuda/backend.hpp"
#endif
#include "inferlab/base/units.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/run/init_estimate.hpp"
#include "common.hpp"
#include "model_common.hpp"

namespace inferlab::app {

using namespace inferlab::model;

void add_source(CLI::App* sub, ModelSource& s) {
    sub->add_option("--checkpoint", s.checkpoint, tr("a llama2.c version-0 checkpoint"));
    sub->add_option("--config", s.config, tr("a config.json (HF keys) for random weights"));
    sub->add_option("--model", s.model, tr("a shipped config (default demo-gqa) for random weights"));
    sub->add_option("--seed", s.seed, tr("seed of the random weights (default 1; sampling has --sample-seed)"));
}

void add_sample_seed(CLI::App* sub, std::string& seed) {
    sub->add_option("--sample-seed", seed, tr("seed of the token sampling, separate from the weights' --seed (default 1)"));
}

namespace {

// Refuse random weights this machine cannot hold; announce a long fill on stderr and report its
// progress.
std::function<void(std::uint64_t, std::uint64_t)> check_random_init(const Dims& d, const std::string& flag,
                                                                     const std::string& name) {
    const RandomInitEstimate e = estimate_random_init(d, measure_normal_rate());
    if (auto avail = available_memory_bytes(); avail && e.weight_bytes > *avail)
        throw InputError(flag, name,
                         N_("random float32 weights need {0} ({1} values × 4 B), more than the {2} this machine "
                            "has available (MemAvailable)"),
                         {bytes_all_units(e.weight_bytes), group_thousands(e.values), bytes_all_units(*avail)});
    // A long fill says so on stderr, as plain lines: from two seconds on a terminal, from ten where
    // stderr is a log or a pipe (a run of minutes with nothing on stderr looks hung; a short one
    // keeps a script's stderr empty).
    if (e.seconds < (isatty(fileno(stderr)) ? 2 : 10)) return {};
    fmt::print(stderr, "{}\n",
               trf(N_("inferlab: {0} random weights: {1} values, {2}, about {3} s to draw on this machine"), name,
                   group_thousands(e.values), bytes_all_units(e.weight_bytes), format_real(e.seconds, 2)));
    return [next = std::uint64_t{0}](std::uint64_t done, std::uint64_t total) mutable {
        // One line per tenth, and the last: enough to show it moves without flooding a log.
        if (done < next && done < total) return;
        fmt::print(stderr, "{}\n",
                   trf(N_("inferlab: initialised {0}% ({1} of {2} values)"), done * 100 / total, group_thousands(done),
                       group_thousands(total)));
        next = done + total / 10;
    };
}

}  // namespace

std::unique_ptr<Weights> load(const ModelSource& s, std::string* described, std::string* shown, std::string* borrowed) {
    int n = !s.checkpoint.empty() + !s.config.empty() + !s.model.empty();
    if (n > 1) throw InputError(N_("choose one of --checkpoint, --config and --model"));
    if (!s.checkpoint.empty()) {
        // English for JSON (a prose field that does not change with the language), localized for text.
        if (described) *described = "checkpoint " + s.checkpoint;
        if (shown) *shown = trf(N_("checkpoint {0}"), s.checkpoint);
        return read_checkpoint(s.checkpoint, "--checkpoint");
    }
    std::uint64_t seed = parse_nonnegative_int("--seed", s.seed);
    ModelConfig c = !s.config.empty() ? load_config_file(s.config, "--config") : load_named_model(s.model.empty() ? "demo-gqa" : s.model, "--model");
    if (described) *described = fmt::format("{} with random weights (seed {})", c.name, seed);
    if (shown) *shown = trf(N_("{0} with random weights (seed {1})"), c.name, seed);
    if (!reference_architecture(c)) {  // said wherever the source is: its numbers are not that model's
        // One sentence, with the config's name as its subject, wherever it is said.
        const char* rule = c.model_type.empty()
                               ? N_("{0} names no model_type: the reference runs its dimensions on Llama-style layers "
                                    "(RMSNorm, SwiGLU, RoPE, full attention)")
                               : N_("{0} is a {1} config: the reference runs its dimensions on Llama-style layers (RMSNorm, "
                                    "SwiGLU, RoPE, full attention), whatever {1} does differently");
        if (described) *described += "; " + substitute(rule, {c.name, c.model_type});
        if (shown) *shown += tr(N_("; ")) + trf(rule, c.name, c.model_type);
        if (borrowed) *borrowed = trf(rule, c.name, c.model_type);
    }
    const Dims d = dims_from_config(c);
    return random_weights(d, seed, check_random_init(d, s.config.empty() ? "--model" : "--config",
                                                     s.config.empty() ? c.name : s.config));
}

void add_kernels_option(CLI::App* sub, std::string& kernels) {
    sub->add_option("--kernels", kernels,
                    tr("CPU kernels: fast (AVX-512 where the CPU has it) or reference (plain loops); default: "
                       "INFERLAB_KERNELS, else fast"));
}

Kernels kernels_option(const std::string& kernels) {
    isa_cap();  // a bad INFERLAB_ISA is an input error here, before anything runs
    return kernels.empty() ? default_kernels() : parse_kernels("--kernels", kernels);
}

CpuBackendOptions cpu_backend_options(int threads, const std::string& kernels, const WeightsAt* at) {
    CpuBackendOptions o;
    o.threads = threads;
    o.kernels = kernels_option(kernels);
    if (at) at->apply(o);
    return o;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const Weights& w, const CpuBackendOptions& cpu) {
    if (name == "cpu") return std::make_unique<CpuBackend>(cpu);
    if (name != "cuda") throw InputError("--backend", name, N_("must be cpu or cuda"));
#ifdef INFERLAB_WITH_CUDA
    return cuda::make_backend(w, "--backend");
#else
    (void)w;
    throw InputError("--backend", "cuda", N_("this inferlab was built without CUDA (configure with -DINFERLAB_CUDA=ON)"));
#endif
}

WeightsAt weights_at(const Weights& w, WeightDtype t, int threads, QArith arith) {
    if (t == WeightDtype::Int8 || t == WeightDtype::Int4) require_quantizable(w.dims(), "--weight-dtype " + to_string(t) + ": width");
    return make_weights_at(w, t, threads, arith);
}

WeightsFacts weights_facts(const WeightsAt& at, Kernels kernels) {
    const Prose arith = at.arithmetic(kernels == Kernels::Reference);
    WeightsFacts f{to_string(at.dtype), "", nullptr};
    if (at.dtype != WeightDtype::F32)
        f.line = wrap(trf(N_("weights: {0}; arithmetic: {1}"), f.dtype, arith.localized()), "  ", "  ");
    if (at.dtype == WeightDtype::Int8 || at.dtype == WeightDtype::Int4) f.quantized_arithmetic = arith.text();
    return f;
}

std::string dims_text(const Dims& d) {
    return trf(N_("dim {0}, hidden {1}, L = {2}, H_q = {3}, H_kv = {4}, d = {5}, vocab {6}, S_max = {7}"), d.dim, d.hidden_dim,
               d.n_layers, d.n_heads, d.n_kv_heads, d.head_dim(), d.vocab_size, d.seq_len) +
           (d.shared_classifier ? tr(", tied LM head") : "");
}

std::uint64_t probe_bytes_option(const std::string& mib) {
    const std::uint64_t bytes = parse_positive_int_at_most("--probe-mib", mib, 1 << 20, N_("must be at most {0} MiB")) << 20;
    require_memory(bytes, "--probe-mib", mib);
    return bytes;
}

}  // namespace inferlab::app
