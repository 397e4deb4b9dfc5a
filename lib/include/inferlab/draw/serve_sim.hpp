#pragma once
// serve-sim's --svg: the TTFT and TPOT distributions (as cumulative fractions, the SLOs marked);
// running requests and queue length over time, and KV blocks in use; with a sweep, output tokens/s
// and p99 TTFT/TPOT against the rate, the SLOs dashed and the highest rate that meets them marked.
#include <optional>
#include <string>
#include <vector>

#include "inferlab/answer/serve_sim.hpp"

namespace inferlab::plots {

// At most this many points a time series draws: longer runs are drawn by every k-th step.
inline constexpr std::size_t kMaxTimePoints = 2000;

std::string serve_sim_svg(const ServeSimResult& res, std::optional<double> slo_ttft_s, std::optional<double> slo_tpot_s,
                          const std::vector<std::string>& inputs);

}  // namespace inferlab::plots
