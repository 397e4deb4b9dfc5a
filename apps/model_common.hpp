#pragma once
// Shared by the model subcommands: where the weights come from, and token lists.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/weights.hpp"
#include "inferlab/model/run/token_lists.hpp"

namespace inferlab::model {
struct WeightsAt;
}

namespace inferlab::app {

struct ModelSource {
    std::string checkpoint, config, model, seed = "1";
};

// --checkpoint / --config / --model / --seed on a model subcommand.
void add_source(CLI::App* sub, ModelSource& s);
// --sample-seed on a subcommand that samples tokens: its own seed, so changing the weights'
// --seed does not change the draws, nor the draws the weights (default 1).
void add_sample_seed(CLI::App* sub, std::string& seed);
// A checkpoint, or seeded random weights from a config (default: the shipped demo-gqa). Random
// weights are estimated first (model::estimate_random_init): more than this machine's available
// memory is an InputError naming both sizes; an initialisation estimated past 2 s (on a terminal;
// 10 s where stderr is not one) says so on stderr and reports progress there in plain lines.
// `described` gets the source in English (for JSON), `shown` in the reader's language (for text),
// each with the note that a config of another architecture than the reference's lends only its
// dimensions (model::reference_architecture); `borrowed` gets that note alone (empty: none).
std::unique_ptr<model::Weights> load(const ModelSource& s, std::string* described = nullptr,
                                     std::string* shown = nullptr, std::string* borrowed = nullptr);
std::string dims_text(const model::Dims& d);
// --kernels fast|reference on a model subcommand (default: INFERLAB_KERNELS, else fast), and its value.
void add_kernels_option(CLI::App* sub, std::string& kernels);
model::Kernels kernels_option(const std::string& kernels);
// What a model subcommand's CPU backend is made with: `threads`, the kernels --kernels names
// (empty: INFERLAB_KERNELS, read here where the app makes its backend and nowhere in the library,
// else fast), and the weights at `at`'s dtype (nullptr: float32; `at` must outlive the backend).
model::CpuBackendOptions cpu_backend_options(int threads, const std::string& kernels, const model::WeightsAt* at = nullptr);
// The backend --backend names: a CPU backend made with `cpu` for "cpu", a CUDA backend holding a
// device copy of `w` for "cuda" (float32 weights: `cpu` does not apply); InputError for anything
// else, or for cuda in a build without it or on a machine without a GPU.
std::unique_ptr<model::Backend> make_backend(const std::string& name, const model::Weights& w,
                                             const model::CpuBackendOptions& cpu);
// Token ids ("1,2,3") and prompt lists ("1,2;3"): lib's parsers, the flag as `where`.
using model::parse_prompt_list;
using model::parse_token_list;
// model::make_weights_at, with int8/int4's rule on the model's widths checked first in
// --weight-dtype's terms (the library names the dtype, not the flag).
model::WeightsAt weights_at(const model::Weights& w, model::WeightDtype t, int threads,
                           model::QArith arith = model::default_quant_arith());
// What a model command prints of its weights, run with `kernels`: the dtype's name; `line`, the
// dtype and how its products multiply (WeightsAt::arithmetic) in the reader's language, wrapped
// and indented ("" for float32, the default and the arithmetic the documents write); and
// --json's "quantized_arithmetic" (as model bench's): int8/int4's arithmetic in English, else null.
struct WeightsFacts {
    std::string dtype, line;
    nlohmann::json quantized_arithmetic;
};
WeightsFacts weights_facts(const model::WeightsAt& at, model::Kernels kernels);

// --probe-mib: at most 2^20 MiB, and no more than the machine has available (the error names the flag).
std::uint64_t probe_bytes_option(const std::string& mib);

// The measured-against-predicted commands: speculate, kv-quant, roofline.
void setup_model_measure(CLI::App* model);
// model pitfall and model paged (issue #16): the documents' warnings, and a paged cache to watch.
void setup_model_pitfall(CLI::App* model);
void setup_model_paged(CLI::App* model);

}  // namespace inferlab::app
