#pragma once
// The reference model's drawings: model bench and check-cache --svg, and the documents' figures
// drawn from real runs: Figure 4 (the cache appended step by step), 8 (a paged cache's blocks),
// 10 (attention masks and tiles) and 17 (the cache paths compared).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/draw/catalog.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/paged_sim.hpp"
#include "inferlab/model/run/runs.hpp"

namespace inferlab::model {
struct BenchResult;
}  // namespace inferlab::model

namespace inferlab::plots {

// --- model bench and model check-cache ---

// model bench: one decode step's time against the context S, cached beside no-cache (when the
// run timed it), from BenchResult::contexts. Points (class "point": the cached series, then the
// no-cache one) carry the step time in ms as data-value. Log axes where the range spans a factor of 4 (x) or 10 (y) and
// every value is positive. `inputs`: lines printed at the foot (the model, threads, dtype).
std::string model_bench(const model::BenchResult& r, const std::vector<std::string>& inputs);

// model check-cache and the first document's Figure 17 (one drawing for both): per position,
// max |logit − no-cache logit| of each cache path on a log y axis, beside the tolerance line
// rel_tolerance × max(1, max |l_ref|) of that position (a point above it is a disagreement). A
// difference of exactly 0 has no place on a log axis: it sits in a strip under the axis labelled
// "exactly 0", its data-value 0. Points carry class "diff-" and the path ("contiguous", "paged",
// "other_attention", "chunked"); the tolerance's corners class "tolerance" with its absolute
// value at that position. `title`: empty for check-cache's own.
std::string model_check_cache(const model::CheckCacheResult& r, const std::vector<std::string>& inputs,
                              const std::string& title = "");

}  // namespace inferlab::plots

namespace inferlab::figures {

// Figure 4: one layer's cache as a real run appends to it: a prefill, then decode steps, each
// step's query reading every cached K/V and appending its own (model::StepTrace of each step).
std::string fig4_cache_append(const std::vector<model::StepTrace>& steps);

// Figure 8: block tables of a real paged cache (model::simulate_paged), at one step.
std::string fig8_paged_blocks(const model::PagedSimResult& sim, std::size_t step);

// Figure 10: the causal relations of S positions, the same relations in tiles, and a sliding window.
struct AttentionMaskInputs {
    std::uint64_t seq_len = 12, tile = 4, window = 4;
};
std::string fig10_attention_masks(const AttentionMaskInputs& in);

// Figure 17: the cache paths compared on fixed inputs (model::check_cache): per position, each
// path's max |logit − no-cache logit| on a log axis, with the verdict's tolerance
// rel_tolerance · max(1, max |logit|) as a line. Exact agreement (0) is drawn at the axis floor
// and its point's data-value stays 0.
std::string fig17_cache_paths(const model::CheckCacheResult& r);

}  // namespace inferlab::figures
