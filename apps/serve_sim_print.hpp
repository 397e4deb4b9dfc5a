#pragma once
// Printers of `inferlab serve-sim`: text, --json, --csv, --explain and --svg of one ServeSimResult.
#include "common.hpp"
#include "inferlab/answer/serve_sim.hpp"
#include "roofline_flags.hpp"

namespace inferlab::app {

// Every form: the text within text_width(), the JSON document (every key present, null where not
// computed), the tables "summary", "requests", "steps" and with a sweep "sweep", and the
// explanation (one step's cost with the formula and its values; one request's timeline).
// `rows`: the per-request and per-step arrays and tables too (for --json and --csv; the text
// shows summaries only, and a long run's rows are its largest part).
Report serve_sim_report(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res, bool rows = true);

// The figure: TTFT and TPOT distributions; batch, queue and KV blocks over time; with a sweep,
// throughput and p99 TTFT/TPOT against rate with the SLOs and the highest rate that meets them.
std::string serve_sim_svg(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res);

}  // namespace inferlab::app
