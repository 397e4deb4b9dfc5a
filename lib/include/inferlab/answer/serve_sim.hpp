#pragma once
// serve-sim's whole answer (issue #31): a model and a machine (decode-roofline's), a workload, the
// scheduler's knobs; the KV pool sized by kv-mem's budget arithmetic on one device's share; the
// simulation (calc/serve.hpp); with a rate range, the highest Poisson rate that meets the SLOs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/serve.hpp"

namespace inferlab {

struct ServeSimRequest {
    DecodeModel model;      // the whole model; one device's share is taken here
    Machine machine;        // one device (its memory sizes the pool unless kv_blocks is given)
    std::uint64_t devices = 1;
    double link_bandwidth = 0, link_latency_s = 0;  // per device, needed with devices > 1
    std::uint64_t layers = 0, hidden = 0;           // for the all-reduces
    std::uint64_t activation_bytes = 2;
    std::uint64_t block_size = 16;
    std::optional<std::uint64_t> kv_blocks;         // the pool given whole
    std::uint64_t max_batch_tokens = 0, max_running = 256;
    bool prefix_caching = false;
    double step_overhead_s = 0;
    // The workload: drawn (spec) or given (trace, in order of arrival).
    std::optional<WorkloadSpec> workload;
    std::vector<ServeRequest> trace;
    std::optional<double> slo_ttft_s, slo_tpot_s;
    std::optional<std::pair<double, double>> sweep;  // rates, requests/s (needs the drawn workload)
    std::uint64_t sweep_points = 8;
    bool keep_requests = true, keep_steps = false;
    std::uint64_t explain_request = 0;
};

struct ServePool {
    std::uint64_t blocks = 0, block_size = 0, block_bytes = 0;
    std::uint64_t memory_bytes = 0, weight_bytes = 0, available_bytes = 0;  // per device
    bool from_memory = true;       // false: --kv-blocks
    bool windows_held_whole = false;  // sliding-window layers counted at every position
};

struct SweepPoint {
    double rate = 0;
    ServeSummary summary;
    bool meets = false;  // the SLOs met and the server not falling behind (summary.pace)
    std::string fails;  // the SLOs missed: "ttft", "tpot", "ttft_tpot" or ""
};

struct ServeSimResult {
    ServePool pool;
    DecodeModel device_model;
    Machine machine;                 // with the TP link
    std::uint64_t cut = 0;           // requests cut to the context
    std::optional<double> rate;      // the run's rate (the best rate of a sweep)
    ServeResult run;
    std::vector<SweepPoint> sweep;   // in order of rate
    std::optional<double> best_rate; // the highest rate of the sweep that met the SLOs (none: none did)
};

// Whether a run meets the SLOs: p99 TTFT ≤ slo_ttft and p99 TPOT ≤ slo_tpot (each when given);
// the failing ones as "ttft", "tpot" or "ttft_tpot".
std::string slo_failures(const ServeSummary& s, std::optional<double> slo_ttft_s, std::optional<double> slo_tpot_s);

// Throws InputError (no flag named: the app names its flags) for no memory and no pool, weights
// that leave no room for one block, a request that can never fit the pool, TP without a link.
ServeSimResult serve_sim(const ServeSimRequest& req);

}  // namespace inferlab
