#pragma once
// The figures of the subcommands' results (--svg FILE): each function draws one result value,
// the same one the text, JSON and CSV printers render, and never recomputes it. Pure functions
// from a result to SVG text (see svg.hpp for the primitives and the conventions).
#include <string>
#include <vector>

namespace inferlab::model {
struct BenchResult;
struct CheckCacheResult;
}  // namespace inferlab::model

namespace inferlab::plots {

// --- decode-roofline and best-of-n ---

// --- spec-accept and quantize ---

// --- model bench and model check-cache ---

// model bench: one decode step's time against the context S, cached beside no-cache (when the
// run timed it), from BenchResult::contexts. Points (class "point": the cached series, then the
// no-cache one) carry the step time in ms as data-value. Log axes where the range spans a factor of 4 (x) or 10 (y) and
// every value is positive. `inputs`: lines printed at the foot (the model, threads, dtype).
std::string model_bench(const model::BenchResult& r, const std::vector<std::string>& inputs);

// model check-cache: per position, max |logit − no-cache logit| of each cache path on a log y
// axis, beside the tolerance line rel_tolerance × max(1, max |l_ref|) of that position (a point
// above it is a disagreement). A difference of exactly 0 has no place on a log axis: it sits in
// a strip under the axis labelled "exactly 0", its data-value 0. Points carry class "diff-" and
// the path ("contiguous", "paged", "other_attention", "chunked"); the tolerance's corners class
// "tolerance" with its absolute value at that position.
std::string model_check_cache(const model::CheckCacheResult& r, const std::vector<std::string>& inputs);

}  // namespace inferlab::plots
