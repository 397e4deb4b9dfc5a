#pragma once
// The figures of the subcommands' results (--svg FILE): each function draws one result value,
// the same one the text, JSON and CSV printers render, and never recomputes it. Pure functions
// from a result to SVG text (see svg.hpp for the primitives and the conventions).
#include <cstddef>
#include <string>
#include <vector>

#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/answer/quantize.hpp"
#include "inferlab/answer/spec_accept.hpp"

namespace inferlab::model {
struct BenchResult;
struct CheckCacheResult;
}  // namespace inferlab::model

namespace inferlab::plots {

// --- decode-roofline and best-of-n ---

// decode-roofline --svg: aggregate and per-request tokens/s against B (log–log) with the memory
// and compute bounds as dashed lines and the switching batch (compute_bound_from_batch) as a
// marker; below it, when π and the FLOPs are known, the roofline chart (intensity against FLOP/s,
// log–log) with the roof min(π, β·I), the ridge π/β and each batch's point. Rows are drawn in
// increasing B. `sources` are printed among the inputs (where W, M_KV and β came from).
// Points carry class "point" and data-value = the row's number (tokens/s, FLOP/s).
std::string decode_roofline_svg(const RooflineRequest& req, const RooflineResult& res,
                                const std::vector<std::string>& sources = {});

// best-of-n --svg: coverage and every selection strategy the result holds against N, the single
// sample p as a baseline and, with a target, its line and the smallest N that reaches it.
std::string best_of_n_svg(const BestOfNRequest& req, const BestOfNResult& res,
                          const std::vector<std::string>& sources = {});

// --- spec-accept and quantize ---

// spec-accept: with α and γ, E[tokens per round] (and the speedup, with a cost ratio) against
// γ = 1..max(γ, max_gamma), the γ given and the best γ marked; else one position's p, q, accepted
// mass min(p, q) and residual r per token (the bars of the first document's Figure 13), with the
// simulated output frequencies beside them after --simulate; else the
// scripted round, draft by draft. An Error when the result holds none of them, an InputError for
// a position of more than kMaxDrawnTokens tokens to draw per token (four bars a token: a real
// vocabulary would be thousands of bars no one can read).
inline constexpr std::size_t kMaxDrawnTokens = 64;
std::string spec_accept_figure(const SpecAcceptResult& r);

// quantize --x: the grid around x, the level it lands on and the error (Figure 15's number line).
std::string quantize_value_figure(const ValueQuant& v);
// quantize --values/--file/--gen: each scheme's error histogram and the first group's values on
// their grid with its scale. `origin` says where the values came from (printed at the foot).
std::string quantize_values_figure(const ValuesQuant& v, const std::string& origin);
// quantize --kv-gen/--k-file: MSE of K and V quantized per channel and per token.
std::string quantize_kv_figure(const KvQuantComparison& c, unsigned bits, const std::string& origin);
// quantize --elements: bytes before, and after as packed levels plus scales and zero points.
std::string quantize_storage_figure(const StorageQuant& s);
// quantize --model: the KV cache and the weights in bytes per precision.
std::string quantize_model_figure(const KvModelQuant& m);

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

// quantize --x and the first document's Figure 15 (one drawing for both): the uniform grid
// around q's level (the whole grid when Q ≤ 8, else 17 levels), x, the level it lands on and the
// error. Levels carry class "level", x "input-x", x̂ "dequantized", the error "error".
struct GridNotes {
    std::string title;
    std::string rounding;           // the rounding rule's name, as quant.hpp's to_string gives it
    bool within_half_step = false;  // |x̂ − x| ≤ Δ/2, said beside the error when not clipped
    std::vector<std::string> inputs;
};
std::string quant_grid_figure(const ScalarQuant& q, const GridNotes& notes);

}  // namespace inferlab::plots
