// The output contracts of every subcommand (issues #15 and #18) as one table of (command, mode)
// cases, run by one driver in English and in Chinese (tests/support/contract_driver.hpp says what
// each form is held to). A case is one kind of run: a mode of the subcommand, an input that prints
// a note or a section of its own, or a bad input. Checks of particular numbers and sentences live
// in the subcommand's own test file; what every output owes is here, once.
#include <catch2/catch.hpp>

#include <filesystem>

#include "../support/cli.hpp"
#include "../support/contract_driver.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {

using Args = std::vector<std::string>;
using nlohmann::json;

constexpr unsigned kTextForms = kText | kExplain;

// --- kv-mem ---
const Args kKvFlags = {"kv-mem", "--layers", "32", "--kv-heads", "8", "--q-heads", "32", "--head-dim", "128", "--kv-dtype", "bf16"};

std::vector<ContractCase> kv_mem_cases() {
    const Args budget = {"kv-mem", "--model", "llama-3-8b", "--budget", "80GiB"};
    return {
        {.args = with(kKvFlags, {"--seq-len", "8192", "--batch", "4", "--block-size", "16", "--tp", "4", "--shared-prefix", "100"}),
         .tables = {"requests", "layers", "head-sharing", "paged"}, .top = "kv-mem"},
        {.args = with(kKvFlags, {"--seq-len", "8192,4096,300", "--block-size", "16"}),
         .tables = {"requests", "layers", "head-sharing", "paged"}, .top = "kv-mem"},
        {.args = {"kv-mem", "--model", "gemma-2-9b", "--seq-len", "8192,100", "--block-size", "16", "--tp", "2"},
         .tables = {"requests", "layers", "paged"}, .top = "kv-mem", .quotes_sources = true,
         .json_check = [](const json& j) { CHECK(j.at("bytes_per_token").is_null()); }},  // sliding layers: per length
        {.args = {"kv-mem", "--model", "deepseek-v3", "--seq-len", "8192", "--tp", "8"}, .tables = {"requests", "layers"}, .top = "kv-mem"},
        {.args = with(budget, {"--block-size", "16", "--tp", "2"}), .tables = {"layers"}, .top = "kv-mem"},
        {.args = {"kv-mem", "--list-models"}, .tables = {"models"}, .quotes_sources = true},
        // One mode with options given or not: the same key paths, null where a figure does not apply.
        {.args = with(kKvFlags, {"--seq-len", "8192"}), .forms = kJson, .paths = "one length", .top = "kv-mem",
         .json_check = [](const json& j) {
             CHECK(j.at("paged").is_null());
             CHECK(j.at("budget").is_null());
         }},
        {.args = with(kKvFlags, {"--seq-len", "8192,300"}), .forms = kJson, .paths = "one length"},
        {.args = budget, .forms = kJson, .paths = "budget",
         .json_check = [](const json& j) { CHECK(j.at("budget").at("max_blocks").is_null()); }},
        {.args = with(budget, {"--block-size", "16"}), .forms = kJson, .paths = "budget"},
        // Every section the text can print, in both languages.
        {.args = {"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--batch", "8", "--block-size", "16", "--tp", "4"},
         .forms = kText},
        {.args = {"kv-mem", "--model", "llama-3-8b", "--seq-len", "1000", "--batch", "4", "--block-size", "16", "--shared-prefix",
                  "100"},
         .forms = kText},
        {.args = {"kv-mem", "--model", "llama-3-8b", "--seq-len", "1024", "--batch", "2", "--block-size", "16", "--shared-prefix",
                  "512"},
         .forms = kText},
        {.args = with(budget, {"--seq-len", "8192", "--block-size", "16", "--shared-prefix", "1000", "--tp", "2"}),
         .forms = kTextForms},
        {.args = {"kv-mem", "--model", "llama-3-8b", "--tp", "16", "--seq-len", "4096"}, .forms = kText},
        {.args = {"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192,4096,300", "--block-size", "16"}, .forms = kText},
        {.args = with(budget, {"--seq-len", "8192", "--block-size", "16", "--tp", "2"}), .forms = kText},
        {.args = {"kv-mem", "--model", "deepseek-v3", "--seq-len", "4096", "--tp", "8"}, .forms = kText},
        {.args = {"kv-mem", "--layer-spec", data_path("layer-spec.json"), "--seq-len", "4096"}, .forms = kText},
        {.args = {"kv-mem", "--model", "deepseek-v3", "--seq-len", "8192,100"}, .forms = kTextForms},
        {.args = {"kv-mem", "--layer-spec", data_path("layer-spec.json"), "--seq-len", "100,10"}, .tables = {"requests", "layers"}},
        {.args = with(kKvFlags, {"--seq-len", "8192", "--budget", "80GiB", "--weights-bytes", "14GB", "--block-size", "16"}),
         .forms = kTextForms},
        {.args = {"kv-mem", "--layers", "32", "--kv-heads", "8", "--q-heads", "32", "--hidden-size", "4096", "--seq-len", "8Ki",
                  "--kv-dtype", "bf16"},
         .forms = kText},
        {.args = {"kv-mem", "--layers", "0"}, .forms = kError},
        {.args = {"kv-mem", "--bogus"}, .forms = kError},
        {.args = {"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--weights-bytes", "14GB"}, .forms = kError},
    };
}

// --- decode-roofline ---
const Args kRoofDoc = {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s"};

std::vector<ContractCase> decode_roofline_cases() {
    const Args llama = {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm"};
    const Args mixtral = {"decode-roofline", "--model", "mixtral-8x7b", "--hw", "h100-sxm", "--seq-len", "4096", "--batch", "1,8,64"};
    const Args gen = {"decode-roofline", "--model", "llama-3-8b", "--prompt-len", "64", "--output-len", "4"};
    return {
        {.args = with(kRoofDoc, {"--batch", "1,8"}), .tables = {"rows"}, .paths = "fixed M_KV", .top = "roofline",
         .json_check = [](const json& j) {
             CHECK(j.at("rows").at(0).at("fits").is_null());
             CHECK(j.at("inputs").at("peak_flops").is_null());
             CHECK(j.at("generation").is_null());
         }},
        {.args = with(kRoofDoc, {"--batch", "1,8", "--weight-dtype", "bf16", "--peak-flops", "989TFLOPS", "--memory", "80GiB"}), .forms = kJson,
         .paths = "fixed M_KV"},
        {.args = with(kRoofDoc, {"--batch", "1..4", "--weight-dtype", "bf16", "--peak-flops", "989TFLOPS", "--memory", "80GiB"}),
         .tables = {"rows"}, .top = "roofline"},
        {.args = with(llama, {"--seq-len", "8192", "--batch", "1,8"}), .tables = {"rows"}, .top = "roofline"},
        {.args = with(llama, {"--seq-len", "8192,1024"}), .tables = {"rows"}, .top = "roofline"},
        {.args = {"decode-roofline", "--model", "gemma-2-9b", "--hw", "h100-sxm", "--seq-len", "8192", "--batch", "1,8"},
         .tables = {"rows"}, .top = "roofline"},
        {.args = mixtral, .tables = {"rows"}, .top = "roofline"},
        {.args = with(mixtral, {"--memory", "80GiB"}), .forms = kTextForms},
        {.args = with(llama, {"--prompt-len", "2048", "--output-len", "16", "--batch", "1,8"}), .tables = {"rows", "generation"},
         .top = "roofline"},
        {.args = with(llama, {"--prompt-len", "2048", "--output-len", "512", "--batch", "1,8"}), .tables = {"rows", "generation"}},
        {.args = {"decode-roofline", "--model", "llama-3-8b", "--bandwidth", "1TB/s", "--prompt-len", "2048", "--output-len", "1"},
         .forms = kTextForms},
        {.args = {"decode-roofline", "--model", "llama-3-8b", "--bandwidth", "1TB/s", "--prompt-len", "64", "--output-len", "1"},
         .tables = {"rows", "generation"}, .top = "roofline"},
        // A whole generation with and without π: TTFT's keys stay, null.
        {.args = with(gen, {"--bandwidth", "1TB/s"}), .forms = kJson, .paths = "generation"},
        {.args = with(gen, {"--hw", "h100-sxm"}), .forms = kJson, .paths = "generation"},
        {.args = {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1e30", "--batch",
                  "1,8"},
         .tables = {"rows"}, .top = "roofline"},
        {.args = {"decode-roofline", "--model", "llama-3-8b", "--seq-len", "1", "--hw", "h100-sxm", "--batch", "256..258"},
         .forms = kTextForms},
        {.args = {"decode-roofline", "--params", "7e9", "--weight-dtype", "int4", "--kv-bytes-per-request", "1GiB", "--bandwidth",
                  "1TB/s", "--peak-flops", "100TFLOPS", "--batch", "1..4"},
         .forms = kTextForms},
        {.args = {"decode-roofline", "--list-hw"}, .tables = {"hardware"}, .keys = "decode-roofline --list-hw"},
        {.args = {"decode-roofline", "--bandwidth", "1TB/s"}, .forms = kError},
    };
}

// --- spec-accept ---
const Args kSpecDoc = {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"};
const Args kSpecAll = {"spec-accept", "--p",           "0.6,0.3,0.1", "--q",    "0.4,0.4,0.2", "--gamma", "3",
                       "--cost-ratio", "0.1",          "--outcomes",  "accept,reject", "--simulate", "2000", "--seed", "2"};

std::vector<ContractCase> serve_sim_cases() {
    const std::vector<std::string> base = {"serve-sim", "--model", "llama-3-8b", "--hw", "h100-sxm"};
    return {
        {.args = with(base, {"--requests", "60", "--rate", "20", "--slo-ttft", "1s", "--slo-tpot", "50ms"}),
         .tables = {"summary", "requests", "steps"}, .top = "serve"},
        {.args = with(base, {"--requests", "40", "--sweep-rate", "5..80", "--sweep-points", "3", "--slo-ttft", "1s"}),
         .tables = {"summary", "requests", "steps", "sweep"}, .top = "serve"},
        {.args = with(base, {"--tp", "2", "--requests", "20", "--rate", "10", "--max-batch-tokens", "512", "--shared-prefix", "64",
                             "--prefix-caching"}),
         .tables = {"summary", "requests", "steps"}, .top = "serve"},
        {.args = with(base, {"--requests", "3", "--prompt-len", "100", "--output-len", "1"}), .tables = {"summary", "requests", "steps"},
         .top = "serve"},
        {.args = with(base, {"--rate", "5"}), .forms = kError},
    };
}

std::vector<ContractCase> spec_accept_cases() {
    const Args sweep = {"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1"};
    const std::string ones65 = [] {
        std::string s = "1";
        for (int i = 1; i < 65; ++i) s += ",1";
        return s;
    }();
    return {
        {.args = kSpecAll, .tables = {"simulation", "gamma", "round", "tokens"}, .top = "spec"},
        {.args = kSpecDoc, .tables = {"tokens"}, .top = "spec"},
        {.args = with(kSpecDoc, {"--float"}), .tables = {"tokens"}, .top = "spec", .json_check = [](const json& j) { CHECK(j.at("exact").is_null()); }},
        {.args = {"spec-accept", "--p-logits", "2,1,0", "--q-logits", "1,1,1"}, .forms = kJson | kCsv, .tables = {"tokens"},
         .top = "spec"},
        {.args = {"spec-accept", "--p-logits", "2,1,0", "--q-logits", "1,1,1", "--temperature", "0.7", "--top-k", "2"},
         .forms = kTextForms},
        {.args = {"spec-accept", "--alpha", "0.8", "--gamma", "4"}, .no_table = true, .top = "spec",
         .json_check = [](const json& j) {
             CHECK(j.at("p").is_null());
             CHECK(j.at("gamma_table").is_null());
         }},
        {.args = sweep, .tables = {"gamma"}, .paths = "sweep", .top = "spec"},
        {.args = {"spec-accept", "--alpha", "0.5", "--gamma", "2", "--cost-ratio", "0.3", "--max-gamma", "3"}, .forms = kJson,
         .paths = "sweep"},
        // The round of the document's §3.1.1 figure, and one that earns the bonus token.
        {.args = {"spec-accept", "--gamma", "4", "--outcomes", "accept,accept,reject"}, .tables = {"round"}, .top = "spec",
         .json_check = [](const json& j) { CHECK(j.at("round").at("steps").at(3).at("fate") == "discarded"); }},
        {.args = {"spec-accept", "--gamma", "2", "--outcomes", "accept,accept"}, .tables = {"round"}, .top = "spec"},
        // No γ helps; the best γ at the table's edge, at and below the longest sweep.
        {.args = {"spec-accept", "--alpha", "0", "--gamma", "4", "--cost-ratio", "0.1"}, .forms = kTextForms},
        {.args = {"spec-accept", "--alpha", "1", "--gamma", "4", "--cost-ratio", "0.1"}, .forms = kTextForms},
        {.args = {"spec-accept", "--alpha", "1", "--gamma", "4", "--cost-ratio", "0.01", "--max-gamma", "64"}, .forms = kTextForms},
        {.args = {"spec-accept", "--alpha", "0.5", "--gamma", "1"}, .forms = kTextForms},
        // A token the draft never proposes has no α; p = q leaves no residual.
        {.args = {"spec-accept", "--p", "0.5,0.5", "--q", "1,0"}, .tables = {"tokens"}},
        {.args = {"spec-accept", "--p", "0.5,0.5", "--q", "0.5,0.5"}, .forms = kTextForms},
        {.args = {"spec-accept"}, .forms = kError},
        {.args = {"spec-accept", "--p", "0.6,0.4", "--q", "0.4,0.4,0.2"}, .forms = kError},
        {.args = {"spec-accept", "--p", "0.6,0.6,0.1", "--q", "0.4,0.4,0.2"}, .forms = kError},
        {.args = {"spec-accept", "--gamma", "4", "--outcomes", "accept,reject,accept"}, .forms = kError},
        {.args = {"spec-accept", "--gamma", "2", "--outcomes", "accept"}, .forms = kError},
        {.args = with(kSpecDoc, {"--temperature", "2"}), .forms = kError},
        {.args = with(kSpecDoc, {"--simulate", "1000000000"}), .forms = kError},
        {.args = {"spec-accept", "--p-logits", "1,2"}, .forms = kError},
        {.args = {"spec-accept", "--p", "0.5,0.5", "--p-file", "p.txt", "--q", "0.5,0.5"}, .forms = kError},
        {.args = {"spec-accept", "--alpha", "0.5"}, .forms = kError},
        {.args = {"spec-accept", "--simulate", "10"}, .forms = kError},
        {.args = {"spec-accept", "--gamma", "2", "--outcomes", "maybe"}, .forms = kError},
        {.args = {"spec-accept", "--p", "0,0", "--q", "0.5,0.5"}, .forms = kError},
        {.args = {"spec-accept", "--p", "0.5,0.5", "--q", "0.5,0.5", "--cost-ratio", "2"}, .forms = kError},
        // The per-token chart's limit (the error comes before any file is written).
        {.args = {"spec-accept", "--p", ones65, "--q", ones65, "--normalize", "--svg", "unwritten.svg"}, .forms = kError},
    };
}

// --- best-of-n ---
const Args kBonAll = {"best-of-n", "--p", "0.3", "--n", "1..4", "--tpr", "0.9", "--fpr", "0.2", "--alternatives", "3",
                      "--judge-bias", "0.3", "--hard-fraction", "0.5", "--rho", "0.3", "--target", "0.95", "--budget",
                      "16", "--cost-judge", "1", "--simulate", "2000"};

std::vector<ContractCase> best_of_n_cases() {
    return {
        {.args = {"best-of-n", "--p", "0.3", "--n", "4"}, .tables = {"rows"}, .paths = "rows", .top = "best-of-n",
         .json_check = [](const json& j) {
             CHECK(j.at("rows").at(0).at("biased_judge").is_null());
             CHECK(j.at("coverage").is_number());
         }},
        {.args = {"best-of-n", "--p", "0.3", "--n", "2,4", "--judge-bias", "0.2", "--hard-fraction", "0.1", "--rho", "0.3",
                  "--alternatives", "2"},
         .forms = kJson, .paths = "rows",
         .json_check = [](const json& j) { CHECK(j.at("coverage").is_null()); }},  // several N: no top-level copy of a row
        {.args = {"best-of-n", "--p", "0.3", "--n", "1..8", "--tpr", "0.9", "--fpr", "0.2", "--simulate", "2000", "--seed", "7"},
         .tables = {"rows", "simulation"}, .top = "best-of-n"},
        {.args = {"best-of-n", "--p", "0.9", "--n", "1,2,8", "--alternatives", "2", "--judge-bias", "0.3", "--hard-fraction",
                  "0.05", "--rho", "0.2", "--target", "0.999"},
         .tables = {"rows", "hard_fraction", "beta"}, .top = "best-of-n"},
        {.args = {"best-of-n", "--p", "0.3", "--tpr", "0.9", "--fpr", "0.1", "--alternatives", "3", "--budget", "16",
                  "--cost-judge", "1"},
         .tables = {"rows", "budget"}, .top = "best-of-n"},
        {.args = {"best-of-n", "--p", "0", "--n", "1..3", "--tpr", "0", "--fpr", "0", "--fallback", "abstain"}, .tables = {"rows"},
         .top = "best-of-n"},
        {.args = kBonAll, .tables = {"rows", "hard_fraction", "beta", "budget", "simulation"}, .top = "best-of-n"},
        {.args = {"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "1..8",
                  "--tpr", "0.9", "--fpr", "0.1", "--final-check", "--simulate", "300", "--seed", "2"},
         .tables = {"rows", "simulation"}, .keys = "best-of-n --search", .top = "best-of-n --search"},
        {.args = {"best-of-n", "--search", "--q", "0.9", "--branch", "2", "--beam", "2", "--score-sigma", "0.5", "--steps", "3"},
         .tables = {"rows"}, .keys = "best-of-n --search", .top = "best-of-n --search"},
        {.args = {"best-of-n", "--search", "--q", "0.9", "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "10", "--tpr",
                  "0.9", "--fpr", "0.1", "--alternatives", "3", "--budget-seconds", "30", "--step-tokens", "64", "--model",
                  "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "512"},
         .tables = {"rows", "budget", "flat"}, .keys = "best-of-n --search", .top = "best-of-n --search"},
        {.args = {"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "5", "--tpr",
                  "0.9", "--fpr", "0.1", "--budget-tokens", "10000", "--step-tokens", "50"},
         .tables = {"rows", "budget"}, .keys = "best-of-n --search", .top = "best-of-n --search"},
        {.args = {"best-of-n", "--search", "--q", "0.9", "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "10", "--tpr",
                  "0.9", "--fpr", "0.1", "--alternatives", "3", "--budget-tokens", "20000", "--step-tokens", "64", "--mix",
                  "0.6:0.995,0.3:0.9,0.1:0.5"},
         .tables = {"rows", "budget", "classes"}, .keys = "best-of-n --search", .top = "best-of-n --search"},
        {.args = {"best-of-n", "--p", "0.3", "--n", "1,2", "--tpr", "0", "--fpr", "0"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0.3", "--n", "1,2", "--tpr", "0", "--fpr", "0", "--fallback", "abstain"},
         .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0.9", "--n", "1,2,8", "--judge-bias", "0.3"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0", "--n", "1..3", "--verifier-accuracy", "0.8"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0.3", "--budget", "1000", "--alternatives", "2"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0.3", "--budget", "4"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0.3", "--n", "2", "--simulate", "1", "--seed", "3"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "1", "--target", "0.9"}, .forms = kTextForms},
        {.args = {"best-of-n", "--p", "0.3", "--target", "0"}, .forms = kTextForms},
        {.args = {"best-of-n", "--n", "4"}, .forms = kError},
        {.args = {"best-of-n", "--p", "0.3", "--fallback", "abstain"}, .forms = kError},
        {.args = {"best-of-n", "--p", "0.3", "--n", "300", "--alternatives", "2"}, .forms = kError},
        {.args = {"best-of-n", "--p", "0.3", "--seed", "2"}, .forms = kError},
    };
}

// --- quantize ---
const Args kQValue = {"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7"};
const Args kQValues = {"quantize", "--gen", "normal:8x64", "--bits", "4", "--group-size", "16", "--scheme", "both"};
const Args kQKv = {"quantize", "--kv-gen", "64x32", "--outlier-channels", "2"};
const Args kQElements = {"quantize", "--elements", "32", "--bits", "8", "--group-size", "32"};
const Args kQModel = {"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64"};

std::vector<ContractCase> quantize_cases() {
    return {
        {.args = kQValue, .no_table = true, .paths = "one value"},
        {.args = {"quantize", "--x", "1.5e-1", "--step", "0.1", "--bits", "4"}, .forms = kJson, .paths = "one value"},
        {.args = {"quantize", "--x", "5", "--step", "0.1", "--bits", "4"}, .forms = kTextForms},
        {.args = kQValues, .tables = {"values", "storage"}, .paths = "values"},
        {.args = {"quantize", "--gen", "normal:64x64"}, .forms = kJson, .paths = "values"},
        {.args = {"quantize", "--gen", "normal:8x64", "--outliers", "0.05:20", "--bits", "4", "--group-size", "16", "--scheme",
                  "both"},
         .forms = kTextForms},
        {.args = {"quantize", "--values", "0,1,-1", "--bits", "2", "--granularity", "row"}, .forms = kTextForms},
        {.args = {"quantize", "--values", "0,1,-1", "--bits", "2"}, .forms = kCsv, .tables = {"values", "storage"}},  // exact: an empty SNR cell
        {.args = kQKv, .tables = {"kv"}},
        {.args = {"quantize", "--kv-gen", "16x8", "--outlier-channels", "0", "--rounding", "half-even"}, .forms = kTextForms},
        {.args = kQElements, .no_table = true, .paths = "elements"},
        {.args = with(kQElements, {"--scheme", "asymmetric"}), .no_table = true, .paths = "elements"},
        {.args = kQModel, .tables = {"precisions", "weights"}, .paths = "model"},
        {.args = {"quantize", "--model", "gemma-2-9b", "--seq-len", "100"}, .forms = kJson, .paths = "model"},
        {.args = {"quantize", "--model", "gemma-2-9b", "--seq-len", "8192", "--scheme", "asymmetric"}, .forms = kTextForms},
        {.args = {"quantize", "--model", "gemma-2-9b", "--seq-len", "8192"}, .tables = {"precisions", "weights"}},
        {.args = {"quantize"}, .forms = kError},
        {.args = {"quantize", "--x", "1"}, .forms = kError},
        {.args = with(kQValue, {"--scheme", "asymmetric"}), .forms = kError},
        {.args = {"quantize", "--values", "1,2", "--zero-bits", "4"}, .forms = kError},
        {.args = {"quantize", "--values", "1,2", "--seed", "3"}, .forms = kError},
        {.args = {"quantize", "--gen", "normal:4x10", "--group-size", "4"}, .forms = kError},
        {.args = {"quantize", "--gen", "normal:"}, .forms = kError},
        {.args = {"quantize", "--gen", "uniform:4"}, .forms = kError},
        {.args = {"quantize", "--kv-gen", "5"}, .forms = kError},
        {.args = {"quantize", "--kv-gen", "4x4", "--outlier-channels", "5"}, .forms = kError},
        {.args = {"quantize", "--values", "1e30", "--source-dtype", "fp16"}, .forms = kError},
        {.args = {"quantize", "--values", "1e30", "--scale-dtype", "fp8"}, .forms = kError},
        {.args = {"quantize", "--elements", "8", "--scale-dtype", "fp7"}, .forms = kError},
        {.args = {"quantize", "--model", "llama-3-8b", "--seq-len", "10", "--group-size", "7"}, .forms = kError},
        {.args = {"quantize", "--model", "llama-3-8b"}, .forms = kError},
        {.args = {"quantize", "--file", "/nonexistent/values.csv"}, .forms = kError},
        {.args = {"quantize", "--file", data_path("empty.txt")}, .forms = kError},
    };
}

// --- model init, logits, check-cache, generate, bench ---
std::vector<ContractCase> model_cases() {
    const std::string ckpt = (std::filesystem::temp_directory_path() / "inferlab-contracts-demo.bin").string();
    const Args logits = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,2,3"};
    const Args gen = {"model", "generate", "--model", "demo-gqa", "--prompt", "1,2,3,4", "--steps", "3", "--trace"};
    // The smallest bench that fills every table: tiny-model.json (S_max = 8), a 4 MiB probe.
    const Args bench = {"model", "bench", "--config", data_path("tiny-model.json"), "--prompt-len", "2", "--steps", "2",
                        "--probe-mib", "4", "--contexts", "1", "--batch", "1,2"};
    return {
        {.args = {"model", "init", "--model", "demo-gqa", "--seed", "1", "--out", ckpt}, .forms = kTextForms | kJson,
         .json_check = [](const json& j) { CHECK(key_paths(j) == std::set<std::string>{"out", "parameters", "bytes", "source"}); }},
        {.args = {"model", "logits", "--checkpoint", ckpt, "--tokens", "1,2", "--path", "paged"}, .forms = kText},  // init's file
        {.args = {"model", "init", "--checkpoint", ckpt, "--out", ckpt + ".copy"}, .forms = kError},
        {.args = logits, .tables = {"positions"}, .paths = "logits"},
        {.args = with(logits, {"--path", "paged", "--block-size", "2"}), .forms = kJson, .paths = "logits"},
        {.args = {"model", "check-cache", "--model", "demo-gqa", "--seq-len", "6"}, .tables = {"positions"}, .paths = "check",
         .json_check = [](const json& j) { CHECK(j.at("worst_path").is_string()); }},
        {.args = {"model", "check-cache", "--model", "demo-gqa", "--tokens", "5,6,7", "--attention", "online"}, .forms = kJson,
         .paths = "check"},
        {.args = {"model", "check-cache", "--model", "demo-gqa", "--seq-len", "12", "--attention", "online"}, .forms = kTextForms},
        {.args = gen, .tables = {"trace"}, .paths = "generate"},
        {.args = {"model", "generate", "--model", "demo-gqa", "--steps", "2", "--temperature", "0.7", "--top-k", "5"},
         .forms = kJson, .paths = "generate"},
        {.args = with(gen, {"--temperature", "0.8"}), .forms = kTextForms},
        {.args = bench, .tables = {"batch", "context-scaling"}, .paths = "bench", .timed = true,
         .json_check = [](const json& j) {
             CHECK(j.at("bf16_speedup").is_null());
             CHECK(j.at("batch").size() == 2);
         }},
        {.args = with(bench, {"--weight-dtype", "bf16", "--skip-nocache"}), .forms = kJson, .paths = "bench", .timed = true,
         .json_check = [](const json& j) {
             CHECK(j.at("context_scaling").at(0).at("nocache_step_s").is_null());
             CHECK(j.at("batch").size() == 4);  // float32 beside bf16, two batches each
         }},
        // A bench of demo-gqa small enough for a test: an 8 MiB probe, two short contexts.
        {.args = {"model", "bench", "--model", "demo-gqa", "--probe-mib", "8", "--contexts", "16, 32", "--batch", "1, 2",
                  "--prompt-len", "4", "--steps", "2"},
         .forms = kText, .timed = true},
        {.args = {"model", "generate", "--model", "demo-gqa", "--path", "nocache"}, .forms = kError},
        {.args = {"model", "logits", "--checkpoint", "/nonexistent/demo.bin", "--tokens", "1"}, .forms = kError},
        {.args = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,99999"}, .forms = kError},
        {.args = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,007"}, .forms = kError},
        {.args = {"model", "logits", "--model", "demo-gqa"}, .forms = kError},
        {.args = {"model", "check-cache", "--model", "demo-gqa", "--path", "paged"}, .forms = kError},
        {.args = {"model", "bench", "--model", "demo-gqa", "--weight-dtype", "fp8"}, .forms = kError},
    };
}

// The bench of every weight dtype: a minute or more under the sanitizers, so tagged [bench]
// (scripts/test.sh runs that label in the Release build only).
std::vector<ContractCase> model_bench_all_cases() {
    return {
        {.args = {"model", "bench", "--model", "demo-gqa", "--weight-dtype", "all", "--prompt-len", "4", "--steps", "2",
                  "--probe-mib", "4", "--contexts", "4", "--batch", "1,8", "--skip-nocache"},
         .forms = kJson | kCsv, .tables = {"batch", "context-scaling", "dtypes"}, .timed = true,
         .json_check = [](const json& j) {
             REQUIRE(j.at("batch").size() == 8);  // batch 8 beside batch 1 for each of the four dtypes
             for (std::size_t i = 1; i < 8; i += 2) {
                 INFO(j.at("batch")[i]["weight_dtype"]);
                 CHECK(j.at("batch")[i]["batch"] == 8);
                 CHECK(j.at("batch")[i]["ratio_to_batch_1"].get<double>() > 0);
                 CHECK(j.at("batch")[i]["bound_ratio_to_batch_1"].get<double>() >= 1 - 1e-12);  // a quotient of equal doubles
             }
             CHECK(j.at("bf16_speedup").get<double>() > 0);
         }},
    };
}

// --- model speculate, kv-quant, roofline, paged, pitfall ---
std::vector<ContractCase> model_measure_cases() {
    const Args speculate = {"model", "speculate", "--model", "demo-gqa", "--gamma", "3", "--steps", "12"};
    const Args kvq = {"model", "kv-quant", "--model", "demo-gqa", "--positions", "8", "--steps", "4"};
    return {
        {.args = speculate, .tables = {"positions"}, .paths = "speculate"},
        {.args = with(speculate, {"--cost-ratio", "0.2"}), .forms = kJson, .paths = "speculate"},
        {.args = {"model", "speculate", "--steps", "8", "--greedy"}, .forms = kTextForms},
        {.args = kvq, .forms = kTextForms | kJson},  // no table, and no --csv flag
        {.args = with(kvq, {"--scheme", "per-token", "--bits", "4"}), .forms = kText},
        {.args = {"model", "roofline", "--model", "demo-gqa", "--batch", "1,2", "--contexts", "8", "--probe-mib", "8", "--repeats",
                  "1"},
         .tables = {"rows"}, .timed = true},
        {.args = {"model", "paged"}, .tables = {"steps"}, .paths = "paged"},
        {.args = {"model", "paged", "--no-share"}, .tables = {"steps"}, .paths = "paged"},
        // A pool too small for the unshared run: the saving note says so, and sequences wait.
        {.args = {"model", "paged", "--prompts", "1,2,3,4;1,2,3,9,9", "--blocks", "8", "--block-size", "1"}, .tables = {"steps"}},
        {.args = {"model", "paged", "--prompts", "1;1;1;1;1", "--blocks", "4", "--block-size", "1", "--steps", "3"},
         .forms = kText},
        {.args = {"model", "pitfall", "position-restart"}, .tables = {"positions", "checks"}, .top = "pitfall",
         .json_check = [](const json& j) { CHECK(j.at("other_row_correct_err").is_null()); }},
        {.args = {"model", "pitfall", "gib-as-gb"}, .tables = {"quantities"}, .top = "pitfall", .json_check = [](const json& j) { CHECK(j.at("tolerance").is_null()); }},
        {.args = {"model", "pitfall", "stale-cache"}, .tables = {"positions", "checks"}, .top = "pitfall"},
        {.args = {"model", "pitfall", "unmasked-padding"}, .tables = {"positions", "checks"}, .top = "pitfall"},
        {.args = {"model", "pitfall", "threshold-accept"}, .tables = {"quantities"}, .top = "pitfall"},
        {.args = {"model", "pitfall", "mean-length"}, .tables = {"quantities"}, .top = "pitfall"},
        {.args = {"model", "pitfall", "--list"}, .forms = kText | kJson | kCsv, .tables = {"pitfalls"}},
        {.args = {"model", "paged", "--prompts", "1,02"}, .forms = kError},
        {.args = {"model", "paged", "--prompts", "1;;2"}, .forms = kError},
        {.args = {"model", "kv-quant", "--scheme", "x"}, .forms = kError},
        {.args = {"model", "speculate", "--greedy", "--temperature", "1"}, .forms = kError},
        {.args = {"model", "speculate", "--draft-layers", "9"}, .forms = kError},
        {.args = {"model", "pitfall"}, .forms = kError},
        {.args = {"model", "pitfall", "gib-as-gb", "--model", "demo-gqa"}, .forms = kError},
    };
}

// --- figure ---
const std::vector<std::string> kDrawn = {"doc1-fig4",  "doc1-fig5",  "doc1-fig6",  "doc1-fig7",  "doc1-fig8",
                                         "doc1-fig9",  "doc1-fig10", "doc1-fig11", "doc1-fig12", "doc1-fig13",
                                         "doc1-fig14", "doc1-fig15", "doc1-fig17", "doc2-fig1"};
// The root's font-family names CJK fonts before the generic family: a font's name, not prose.
const std::vector<std::string> kFontNames = {"Noto Sans CJK SC Source Han Sans SC sans"};

std::vector<ContractCase> figure_cases() {
    std::vector<ContractCase> cases = {
        {.args = {"figure", "--list"}, .forms = kText | kJson | kCsv, .tables = {"figures"}, .keys = "figure --list",
         .json_check = [](const json& j) {
             REQUIRE(j.at("figures").size() == 18);
             std::size_t drawn = 0;
             for (const auto& f : j.at("figures")) {
                 drawn += f["drawn"].get<bool>();
                 CHECK(f["reason"].is_null() == f["drawn"].get<bool>());
             }
             CHECK(drawn == kDrawn.size());
         }},
        {.args = {"figure", "doc1-fig14", "--verifier-accuracy", "0.8", "--target", "0.9"}, .forms = kText, .svg_text = true,
         .english = kFontNames},
        {.args = {"figure", "doc1-fig14", "--alternatives", "3"}, .forms = kText, .svg_text = true, .english = kFontNames},
        // The outcomes are printed as given (the flag's values, not prose).
        {.args = {"figure", "doc1-fig11", "--outcomes", "accept,accept,accept,accept"}, .forms = kText, .svg_text = true,
         .english = {kFontNames[0], "accept accept accept accept"}},
        // The preset's source and notes in the reader's language, as decode-roofline --list-hw prints them.
        {.args = {"figure", "doc1-fig9", "--hw", "h100-sxm", "--batch", "1,64,512"}, .tables = {"values"}, .svg_text = true,
         .english = kFontNames},
        {.args = {"figure", "doc1-fig6", "--kv-heads", "3"}, .forms = kError},
        {.args = {"figure", "doc1-fig99"}, .forms = kError},
        {.args = {"figure", "--list", "--explain"}, .forms = kError},
    };
    for (const auto& name : kDrawn)
        cases.push_back({.args = {"figure", name}, .tables = {"values"}, .top = "figure", .svg_text = true, .english = kFontNames,
                         .json_check = [name](const json& j) {
                             CHECK(j.at("name") == name);
                             CHECK(j.at("out").is_null());
                             CHECK_FALSE(j.at("inputs").empty());
                         }});
    return cases;
}

std::vector<ContractCase> verify_cases() {
    return {
        {.args = {"verify"}, .tables = {"examples"}, .paths = "verify",
         .json_check = [](const json& j) {
             CHECK(key_paths(j).count("examples[].pass") == 1);
             CHECK(j.at("failed") == 0);
         }},
        {.args = {"verify", "--id", "spec."}, .forms = kJson, .paths = "verify"},
        {.args = {"verify", "--id", "kv.doc1"}, .forms = kExplain},
        {.args = {"verify", "--table", "examples"}, .forms = kError},  // --table without --csv
    };
}

}  // namespace

TEST_CASE("output contracts: kv-mem, every mode in both languages", "[cli][contract][kv-mem]") {
    check_contract_cases(kv_mem_cases());
}

TEST_CASE("output contracts: decode-roofline, every mode in both languages", "[cli][contract][decode-roofline]") {
    check_contract_cases(decode_roofline_cases());
}

TEST_CASE("output contracts: serve-sim, every mode in both languages", "[cli][contract][serve-sim]") {
    check_contract_cases(serve_sim_cases());
}

TEST_CASE("output contracts: spec-accept, every mode in both languages", "[cli][contract][spec-accept]") {
    check_contract_cases(spec_accept_cases());
}

TEST_CASE("output contracts: best-of-n, every mode in both languages", "[cli][contract][best-of-n]") {
    check_contract_cases(best_of_n_cases());
}

TEST_CASE("output contracts: quantize, every mode in both languages", "[cli][contract][quantize]") {
    check_contract_cases(quantize_cases());
}

TEST_CASE("output contracts: model init, logits, check-cache, generate and bench in both languages", "[cli][contract][model]") {
    check_contract_cases(model_cases());
}

TEST_CASE("output contracts: model bench --weight-dtype all, its dtype table", "[cli][contract][model][bench]") {
    check_contract_cases(model_bench_all_cases());
}

TEST_CASE("output contracts: model speculate, kv-quant, roofline, paged and pitfall in both languages",
          "[cli][contract][model]") {
    check_contract_cases(model_measure_cases());
}

TEST_CASE("output contracts: figure, every drawn figure and the catalogue in both languages", "[cli][contract][figure]") {
    check_contract_cases(figure_cases());
}

TEST_CASE("output contracts: verify in both languages", "[cli][contract][verify]") { check_contract_cases(verify_cases()); }
