#pragma once
// decode-roofline's drawings: its --svg plot and the first document's Figure 9 (the bytes a step reads).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/draw/catalog.hpp"

namespace inferlab::plots {

// decode-roofline --svg: aggregate and per-request tokens/s against B (log–log) with the memory
// and compute bounds as dashed lines and the switching batch (compute_bound_from_batch) as a
// marker; below it, when π and the FLOPs are known, the roofline chart (intensity against FLOP/s,
// log–log) with the roof min(π, β·I), the ridge π/β and each batch's point. Rows are drawn in
// increasing B. `sources` are printed among the inputs (where W, M_KV and β came from).
// Points carry class "point" and data-value = the row's number (tokens/s, FLOP/s).
std::string decode_roofline_svg(const RooflineRequest& req, const RooflineResult& res,
                                const std::vector<std::string>& sources = {});

}  // namespace inferlab::plots

namespace inferlab::figures {

// Figure 9: bytes one decode step reads, D_B = W + B·M_KV, for each row of decode-roofline's
// request and result (figure doc1-fig9 takes that command's flags): one bar per row, in the order
// asked; `sources` are printed among the inputs.
std::string fig9_decode_reads(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources);

}  // namespace inferlab::figures
