#pragma once
// The printers of the model subcommands that run the reference model (init, logits,
// check-cache, generate, bench): each renders one library result as text, --json, --csv tables
// and --explain, written once here, next to each other.
#include <string>

#include "common.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/runs.hpp"

namespace inferlab::app {

// What a run was asked to do, beside what it computed: printed, never computed with.
struct RunFacts {
    model::Dims dims;
    std::string backend = "cpu", kernels = "fast", weight_dtype = "fp32", attention = "plain";
    std::string weights_line;                       // WeightsFacts::line: "" for float32
    nlohmann::json quantized_arithmetic = nullptr;  // WeightsFacts::quantized_arithmetic
};

// `source` is the English description (JSON), `source_shown` the reader's language (text).
Report init_report(const std::string& out, const std::string& source, const std::string& source_shown,
                   const model::Weights& w);
Report logits_report(const model::LogitsResult& r, const RunFacts& f);
// With `svg`, Report::svg holds the figure of the same result (--svg FILE).
Report check_cache_report(const model::CheckCacheResult& r, const RunFacts& f, bool svg = false);
Report generate_report(const model::GenerateResult& r, const model::Sampling& s, const RunFacts& f, bool trace);
Report bench_report(const model::BenchResult& r, const std::string& model_name, const std::string& model_shown,
                    const model::Dims& d, bool svg = false);

}  // namespace inferlab::app
