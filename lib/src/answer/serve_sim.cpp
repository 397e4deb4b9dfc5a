#include "inferlab/answer/serve_sim.hpp"

#include <algorithm>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/calc/kv.hpp"

namespace inferlab {

namespace {

// kv-mem's budget arithmetic on one device: (memory − its weights) / one block of every layer.
ServePool size_pool(const ServeSimRequest& req, const DecodeModel& dev) {
    ServePool p;
    p.block_size = req.block_size;
    if (!dev.kv_spec) throw InputError(N_("serve-sim needs the KV geometry of a model"));
    const KvSpec& spec = *dev.kv_spec;
    for (const auto& l : spec.layers) p.windows_held_whole = p.windows_held_whole || l.window != 0;
    p.block_bytes = checked_mul(bytes_per_token(spec), req.block_size, N_("one KV block"));
    p.weight_bytes = dev.weight_bytes;
    if (req.kv_blocks) {
        p.blocks = *req.kv_blocks;
        p.from_memory = false;
        return p;
    }
    if (!req.machine.memory_bytes)
        throw InputError(N_("no device memory to size the KV pool: give --memory (80GiB), a --hw preset with memory, or --kv-blocks"));
    p.memory_bytes = *req.machine.memory_bytes;
    if (p.weight_bytes >= p.memory_bytes)
        throw InputError(N_("the weights leave no room for the KV cache: {0} of weights per device fill {1} of memory "
                            "(more devices with --tp N, or fewer bytes per weight)"),
                         {bytes_all_units(p.weight_bytes), bytes_all_units(p.memory_bytes)});
    const KvBudget b = kv_budget(spec, p.memory_bytes, p.weight_bytes, std::nullopt,
                                 p.windows_held_whole ? std::nullopt : std::optional<std::uint64_t>(req.block_size));
    p.available_bytes = b.available_bytes;
    if (b.block_bytes) p.block_bytes = *b.block_bytes;
    p.blocks = b.max_blocks ? *b.max_blocks : p.available_bytes / p.block_bytes;
    if (p.blocks == 0)
        throw InputError(N_("the weights leave no room for one KV block: {0} of memory − {1} of weights per device = {2}, "
                            "less than one block of {3} tokens ({4})"),
                         {bytes_all_units(p.memory_bytes), bytes_all_units(p.weight_bytes), bytes_all_units(p.available_bytes),
                          std::to_string(req.block_size), bytes_all_units(p.block_bytes)});
    return p;
}

ServeConfig config_of(const ServeSimRequest& req, const ServePool& pool) {
    ServeConfig c;
    c.scheduler = {pool.blocks, pool.block_size, req.max_batch_tokens, req.max_running};
    c.prefix_caching = req.prefix_caching;
    c.keep_requests = req.keep_requests;
    c.keep_steps = req.keep_steps;
    c.explain_request = req.explain_request;
    c.slo_ttft_s = req.slo_ttft_s;
    c.slo_tpot_s = req.slo_tpot_s;
    return c;
}

SweepPoint sweep_point(const ServeSimRequest& req, const ServeSimResult& r, double rate) {
    WorkloadSpec w = *req.workload;
    w.rate = rate;
    ServeConfig c = config_of(req, r.pool);
    c.keep_requests = c.keep_steps = false;
    SweepPoint p;
    p.rate = rate;
    p.summary = simulate_serving(r.device_model, r.machine, workload_sources(w), c).summary;
    p.fails = slo_failures(p.summary, req.slo_ttft_s, req.slo_tpot_s);
    // A server that falls behind meets no SLO in the long run, whatever this run's p99 says.
    p.meets = p.fails.empty() && p.summary.pace.verdict != "falls_behind";
    return p;
}

// A geometric grid over the range, then bisection between the highest rate that met the SLOs and
// the grid's next rate, which did not: the same requests at every rate (make_workload's streams).
void sweep_rates(const ServeSimRequest& req, ServeSimResult& r) {
    const auto [lo, hi] = *req.sweep;
    const std::uint64_t n = std::max<std::uint64_t>(req.sweep_points, 2);
    for (std::uint64_t i = 0; i < n; ++i) {
        const double rate = lo * std::pow(hi / lo, static_cast<double>(i) / static_cast<double>(n - 1));
        r.sweep.push_back(sweep_point(req, r, rate));
    }
    auto last_pass = std::find_if(r.sweep.rbegin(), r.sweep.rend(), [](const SweepPoint& p) { return p.meets; });
    if (last_pass == r.sweep.rend()) return;
    double good = last_pass->rate;
    if (last_pass != r.sweep.rbegin()) {
        double bad = std::prev(last_pass)->rate;
        for (int k = 0; k < 6; ++k) {
            const double mid = std::sqrt(good * bad);
            SweepPoint p = sweep_point(req, r, mid);
            (p.meets ? good : bad) = mid;
            r.sweep.push_back(std::move(p));
        }
    }
    std::sort(r.sweep.begin(), r.sweep.end(), [](const SweepPoint& a, const SweepPoint& b) { return a.rate < b.rate; });
    r.best_rate = good;
}

}  // namespace

std::string slo_failures(const ServeSummary& s, std::optional<double> slo_ttft_s, std::optional<double> slo_tpot_s) {
    const bool ttft = slo_ttft_s && s.ttft.p99 > *slo_ttft_s;
    const bool tpot = slo_tpot_s && s.tpot.count > 0 && s.tpot.p99 > *slo_tpot_s;
    return ttft && tpot ? "ttft_tpot" : ttft ? "ttft" : tpot ? "tpot" : "";
}

ServeSimResult serve_sim(const ServeSimRequest& req) {
    ServeSimResult r;
    if (!req.machine.peak_flops || !req.model.params)
        throw InputError(N_("serve-sim prices prefill too: it needs the peak FLOP rate π and the parameter count (a model)"));
    r.device_model = tensor_parallel_share(req.model, req.devices);
    r.machine = req.machine;
    r.machine.step_overhead_s = req.step_overhead_s;
    if (req.devices > 1) {
        if (!(req.link_bandwidth > 0)) throw InputError(N_("tensor parallelism needs the link bandwidth between devices"));
        r.machine.tp = TensorParallel{req.devices, req.link_bandwidth, req.link_latency_s, req.layers, req.hidden,
                                      req.activation_bytes};
    }
    r.pool = size_pool(req, r.device_model);
    if (req.sweep) {
        if (!req.workload) throw InputError(N_("a rate sweep needs a drawn workload, not a trace of arrivals"));
        if (!req.slo_ttft_s && !req.slo_tpot_s) throw InputError(N_("a rate sweep needs an SLO to meet: give --slo-ttft or --slo-tpot"));
        sweep_rates(req, r);
    }
    if (!req.workload) {
        if (req.trace.empty()) throw InputError(N_("no requests to serve"));
        r.run = simulate_serving(r.device_model, r.machine, req.trace, config_of(req, r.pool));
        return r;
    }
    // Drawn one at a time: the run's memory follows the requests in flight, not their number.
    WorkloadSpec w = *req.workload;
    if (req.sweep) w.rate = r.best_rate ? *r.best_rate : req.sweep->first;
    r.rate = w.rate;
    if (w.requests == 0) throw InputError(N_("no requests to serve"));
    WorkloadStream counted(w);
    while (counted.next()) {
    }
    r.cut = counted.cut();
    r.run = simulate_serving(r.device_model, r.machine, workload_sources(w), config_of(req, r.pool));
    return r;
}

}  // namespace inferlab
