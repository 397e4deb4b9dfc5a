// serve-sim's text and --explain (serve_sim_print.hpp): the run's setting, its latencies in one
// table, rates and what limits them; the explanation prices one step with its formula and values
// and follows one request from arrival to its last token.
#include <fmt/format.h>

#include <algorithm>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "serve_sim_print.hpp"

namespace inferlab::app {

std::string serve_limit_text(const ServeSummary& s, const ServeSimRequest& req, const ServePool& pool);
std::string serve_lengths_text(const LengthDist& d);
Table serve_sweep_text_table(const ServeSimResult& res);

namespace {

std::string setting_text(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res) {
    const ServePool& p = res.pool;
    std::string s = wrap(trf(N_("serve-sim: {0} on {1}, TP {2}; β {3}, π {4} per device"), in.config ? in.config->name : "",
                             in.hw ? in.hw->name : tr("the given machine"), req.devices, format_bandwidth(req.machine.bandwidth),
                             format_flops(*req.machine.peak_flops)));
    s += wrap(p.from_memory ? trf(N_("KV pool: {0} blocks of {1} tokens ({2} each), the {3} that {4} of memory leaves after "
                                     "{5} of weights per device"),
                                  group_thousands(p.blocks), p.block_size, bytes_all_units(p.block_bytes),
                                  bytes_all_units(p.available_bytes), bytes_all_units(p.memory_bytes), bytes_all_units(p.weight_bytes))
                            : trf(N_("KV pool: {0} blocks of {1} tokens ({2} each), as --kv-blocks gives it"),
                                  group_thousands(p.blocks), p.block_size, bytes_all_units(p.block_bytes)),
              "", "  ");
    s += wrap(trf(N_("scheduler: continuous batching, first come first served, recompute preemption; step token budget {0}; "
                     "at most {1} running; prefix caching {2}; step overhead {3}"),
                  req.max_batch_tokens ? group_thousands(req.max_batch_tokens) : tr("none (whole prompts)"),
                  req.max_running ? group_thousands(req.max_running) : tr("no limit"), req.prefix_caching ? tr("on") : tr("off"),
                  format_seconds(req.step_overhead_s)),
              "", "  ");
    if (req.workload) {
        const WorkloadSpec& w = *req.workload;
        s += wrap(trf(N_("workload: {0} requests, {1}; prompts {2}, outputs {3} tokens; seed {4}"), group_thousands(w.requests),
                      res.rate ? trf(N_("Poisson arrivals at {0} req/s"), format_short(*res.rate, 4)) : tr("all at time 0"),
                      serve_lengths_text(w.prompt), serve_lengths_text(w.output), w.seed),
                  "", "  ");
        if (w.prompt.kind == LengthDist::Kind::lognormal && w.prompt.a == chat_prompt_lengths().a)
            s += wrap(tr("(chat preset: ShareGPT's mean lengths as the vLLM paper reports them, Kwon et al. 2023 §6.1; "
                         "σ = 1 is this tool's choice)"),
                      "  ", "    ");
        if (res.cut) s += wrap(trf(N_("{0} requests were cut to the model's {1} positions"), group_thousands(res.cut), w.context));
    } else {
        s += wrap(trf(N_("workload: {0} requests from the trace"), group_thousands(req.trace.size())));
    }
    return s;
}

std::string latency_table(const ServeSummary& s) {
    Table t;
    t.columns = {tr("latency"), tr("mean"), "p50", "p90", "p99", tr("max")};
    auto row = [&](const std::string& name, const Quantiles& q, double scale, int decimals) {
        if (!q.count) return;
        t.rows.push_back({name, format_decimal(q.mean * scale, decimals), format_decimal(q.p50 * scale, decimals),
                          format_decimal(q.p90 * scale, decimals), format_decimal(q.p99 * scale, decimals),
                          format_decimal(q.max * scale, decimals)});
    };
    row(tr("TTFT (ms)"), s.ttft, 1e3, 1);
    row(tr("TPOT (ms)"), s.tpot, 1e3, 2);
    row(tr("end-to-end (s)"), s.e2e, 1, 2);
    std::string out = render_table(t);
    if (!s.e2e.exact)
        out += wrap(trf(N_("(p50, p90 and p99 read from bins past {0} requests: within 0.025% of the exact ones; mean and max "
                           "exact)"),
                        group_thousands(QuantileSketch::kExactValues)),
                    "  ", "  ");
    return out;
}

// Whether the server keeps up, with the counts the verdict comes from (nothing when all arrive at once).
std::string pace_text(const ServePace& p) {
    const std::string half = trf(N_("the second half of the arrivals ({0} to {1})"), format_seconds(p.from_s), format_seconds(p.to_s));
    if (p.verdict == "keeps_up")
        return trf(N_("keeps up: over {0}, {1} requests arrived and {2} finished; {3} were in the system at its start, {4} at "
                      "its end"),
                   half, group_thousands(p.arrived), group_thousands(p.finished), group_thousands(p.in_system_from),
                   group_thousands(p.in_system_to));
    if (p.verdict == "falls_behind")
        return trf(N_("falls behind: over {0}, {1} requests arrived but only {2} finished; the requests in the system grew "
                      "from {3} to {4}, so a longer run waits longer, without limit"),
                   half, group_thousands(p.arrived), group_thousands(p.finished), group_thousands(p.in_system_from),
                   group_thousands(p.in_system_to));
    if (p.verdict == "too_short")
        return trf(N_("too short to tell whether it keeps up: over {0}, {1} requests arrived and {2} finished; the requests in "
                      "the system went from {3} to {4}, within the {5} a stable count wanders (more --requests would tell)"),
                   half, group_thousands(p.arrived), group_thousands(p.finished), group_thousands(p.in_system_from),
                   group_thousands(p.in_system_to), format_decimal(pace_noise(std::max(p.in_system_from, p.in_system_to)), 0));
    return "";
}

std::string results_text(const ServeSimRequest& req, const ServeSimResult& res) {
    const ServeSummary& s = res.run.summary;
    std::string out = "\n" + latency_table(s);
    out += wrap(trf(N_("throughput: {0} output tok/s, {1} req/s over {2} ({3} steps)"), format_decimal(s.output_tokens_per_s, 1),
                    format_decimal(s.requests_per_s, 3), format_seconds(s.makespan_s), group_thousands(s.steps)),
                "", "  ");
    if (const std::string pace = pace_text(s.pace); !pace.empty()) out += wrap(pace, "", "  ");
    if (req.slo_ttft_s || req.slo_tpot_s)
        out += wrap(trf(N_("goodput: {0} req/s, {1} of {2} requests within TTFT ≤ {3} and TPOT ≤ {4}"),
                        format_decimal(s.goodput_per_s, 3), group_thousands(s.slo_met), group_thousands(s.requests),
                        req.slo_ttft_s ? format_seconds(*req.slo_ttft_s) : tr("any"),
                        req.slo_tpot_s ? format_seconds(*req.slo_tpot_s) : tr("any")),
                    "", "  ");
    out += wrap(trf(N_("batch: peak {0}, mean {1}; KV blocks: peak {2} of {3}, mean {4}; queue: peak {5}, mean {6}"),
                    group_thousands(s.peak_batch), format_decimal(s.mean_batch, 1), group_thousands(s.peak_blocks),
                    group_thousands(res.pool.blocks), format_decimal(s.mean_blocks, 0), group_thousands(s.peak_queue),
                    format_decimal(s.mean_queue, 1)),
                "", "  ");
    out += wrap(trf(N_("preemptions: {0} ({1} tokens recomputed); prefix-cache hits: {2} tokens in {3} requests"),
                    group_thousands(s.preemptions), group_thousands(s.recomputed_tokens), group_thousands(s.prefix_hit_tokens),
                    group_thousands(s.prefix_hit_requests)),
                "", "  ");
    out += wrap(trf(N_("limit: {0}"), serve_limit_text(s, req, res.pool)), "", "  ");
    return out;
}

std::string sweep_text(const ServeSimRequest& req, const ServeSimResult& res) {
    if (res.sweep.empty()) return "";
    std::string out = "\n" + wrap(trf(N_("Rate sweep {0}..{1} req/s, the same requests at every rate; an SLO is met when p99 "
                                         "TTFT ≤ {2} and p99 TPOT ≤ {3} and the server does not fall behind the arrivals:"),
                                      format_short(req.sweep->first), format_short(req.sweep->second),
                                      req.slo_ttft_s ? format_seconds(*req.slo_ttft_s) : tr("any"),
                                      req.slo_tpot_s ? format_seconds(*req.slo_tpot_s) : tr("any")));
    out += render_table(serve_sweep_text_table(res));
    if (res.best_rate) {
        out += wrap(trf(N_("highest rate within the SLOs: {0} req/s (the run above)"), format_short(*res.best_rate, 4)));
        if (res.run.summary.pace.verdict == "too_short")
            out += wrap(tr("(a run too short to tell whether the server keeps up at that rate: more --requests would)"), "  ", "  ");
    }
    else
        out += wrap(trf(N_("no rate in {0}..{1} req/s meets the SLOs (the run above is at the lowest)"),
                        format_short(req.sweep->first), format_short(req.sweep->second)));
    return out;
}

std::string step_explain(const ServeSimRequest& req, const ServeSimResult& res) {
    const ServeResult& run = res.run;
    const DecodeStep& c = run.explain_cost;
    std::uint64_t decodes = 0, prefill = 0;
    for (const StepChunk& k : run.explain_chunks) (k.tokens == 1 ? decodes : prefill) += k.tokens;
    std::string e = wrap(trf(N_("Step {0} (the first with the most requests, at t = {1}): {2} requests, {3} tokens ({4} fed "
                                "one token, {5} prefill tokens)."),
                             run.explain_step, format_seconds(run.explain_step_start_s), group_thousands(c.batch), group_thousands(c.tokens),
                             group_thousands(decodes), group_thousands(prefill)));
    e += wrap(trf(N_("bytes = weights read + Σ KV at each request's positions = {0} + {1} = {2} B"), group_thousands(c.weight_bytes),
                  group_thousands(c.kv_bytes), group_thousands(c.bytes)), "  ", "    ");
    e += wrap(trf(N_("t_mem = bytes / β = {0} B / {1} = {2}"), group_thousands(c.bytes), format_bandwidth(req.machine.bandwidth),
                  format_seconds(c.memory_time_s)), "  ", "    ");
    e += wrap(trf(N_("FLOPs = 2·P·T + attention = 2 × {0} × {1} + {2} = {3}"), group_thousands(*res.device_model.params), group_thousands(c.tokens),
                  format_short(*c.flops - 2.0 * double(*res.device_model.params) * double(c.tokens), 6), format_short(*c.flops, 6)),
              "  ", "    ");
    e += wrap(trf(N_("t_compute = FLOPs / π = {0} / {1} = {2}"), format_short(*c.flops, 6), format_flops(*req.machine.peak_flops),
                  format_seconds(*c.compute_time_s)), "  ", "    ");
    if (req.devices > 1)
        e += wrap(trf(N_("all-reduces = 2·L × (latency + 2(N − 1)/N × T·hidden·2 B / link) = 2 × {0} × ({1} + 2 × {2}/{3} × "
                         "{4} × {5} × 2 / {6}) = {7}"),
                      req.layers, format_seconds(req.link_latency_s), req.devices - 1, req.devices, c.tokens, req.hidden,
                      format_bandwidth(req.link_bandwidth), format_seconds(c.comm_time_s)),
                  "  ", "    ");
    e += wrap(trf(N_("t = max(t_mem, t_compute) + all-reduces + overhead = {0} + {1} + {2} = {3} ({4}-bound)"),
                  format_seconds(c.compute_bound ? *c.compute_time_s : c.memory_time_s), format_seconds(c.comm_time_s),
                  format_seconds(c.overhead_s), format_seconds(c.step_time_s), c.compute_bound ? tr("compute") : tr("memory")),
              "  ", "    ");
    return e;
}

std::string timeline_explain(const ServeSimRequest& req, const ServeSimResult& res) {
    std::string e = "\n" + wrap(trf(N_("Request {0}'s timeline:"), req.explain_request));
    Table t;
    t.columns = {tr("time"), tr("step"), tr("event")};
    t.right_align = {true, true, false};
    for (const TimelineEvent& ev : res.run.timeline) {
        std::string what = tr(ev.what);
        if (ev.what == "admitted") what = trf(N_("admitted: {0} tokens fed, {1} shared from a running request"), ev.tokens, ev.shared);
        else if (ev.what == "prefill") what = trf(N_("prefill chunk: {0} tokens"), ev.tokens);
        t.rows.push_back({format_seconds(ev.time_s), std::to_string(ev.step), what});
    }
    e += render_table(t);
    if (const auto& q = res.run.explained) {
        e += wrap(trf(N_("TTFT = first token − arrival = {0} − {1} = {2}"), format_seconds(q->first_token_s),
                      format_seconds(q->arrival_s), format_seconds(q->ttft_s)), "  ", "    ");
        if (q->tpot_s)
            e += wrap(trf(N_("TPOT = (end-to-end − TTFT) / (N − 1) = ({0} − {1}) / {2} = {3}"), format_seconds(q->e2e_s),
                          format_seconds(q->ttft_s), q->output - 1, format_seconds(*q->tpot_s)), "  ", "    ");
    }
    return e;
}

}  // namespace

void serve_sim_text(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res, Report& r) {
    const std::string setting = setting_text(in, req, res);
    r.human = setting + results_text(req, res) + sweep_text(req, res);
    r.explain = setting + "\n" + step_explain(req, res) + timeline_explain(req, res) + results_text(req, res) + sweep_text(req, res);
}

}  // namespace inferlab::app
