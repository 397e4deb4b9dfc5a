#pragma once
// Shared by the model subcommands: where the weights come from, and token lists.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "inferlab/model/backend.hpp"
#include "inferlab/model/qweights.hpp"
#include "inferlab/model/token_lists.hpp"
#include "inferlab/model/weights.hpp"

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
// memory is an InputError naming both sizes; an initialisation estimated past 2 s says so on
// stderr and reports progress there.
std::unique_ptr<model::Weights> load(const ModelSource& s, std::string* described = nullptr);
std::string dims_text(const model::Dims& d);
// --kernels fast|reference on a model subcommand (default: INFERLAB_KERNELS, else fast), and its value.
void add_kernels_option(CLI::App* sub, std::string& kernels);
model::Kernels kernels_option(const std::string& kernels);
// The backend --backend names: nullptr for "cpu" (use model::cpu_backend()), a CUDA backend
// holding a device copy of `w` for "cuda"; InputError for anything else, or for cuda in a build
// without it or on a machine without a GPU.
std::unique_ptr<model::Backend> make_backend(const std::string& name, const model::Weights& w);
// Token ids ("1,2,3") and prompt lists ("1,2;3"): lib's parsers, the flag as `where`.
using model::parse_prompt_list;
using model::parse_token_list;
// model::make_weights_at, with int8/int4's rule on the model's widths checked first in
// --weight-dtype's terms (the library names the dtype, not the flag).
model::WeightsAt weights_at(const model::Weights& w, model::WeightDtype t, int threads);

// The measured-against-predicted commands: speculate, kv-quant, roofline.
void setup_model_measure(CLI::App* model);
// model pitfall and model paged (issue #16): the documents' warnings, and a paged cache to watch.
void setup_model_pitfall(CLI::App* model);
void setup_model_paged(CLI::App* model);

}  // namespace inferlab::app
