#pragma once
// The figures of the subcommands' results (--svg FILE): each function draws one result value,
// the same one the text, JSON and CSV printers render, and never recomputes it. Pure functions
// from a result to SVG text (see svg.hpp for the primitives and the conventions).
#include <string>
#include <vector>

#include "inferlab/bestofn_result.hpp"
#include "inferlab/roofline_result.hpp"

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

// --- model bench and model check-cache ---

}  // namespace inferlab::plots
