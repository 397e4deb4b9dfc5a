// serve-sim's printers (serve_sim_print.hpp): the JSON document first, the text, tables and
// explanation from the same result.
#include "serve_sim_print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/draw/serve_sim.hpp"

namespace inferlab::app {
namespace {

using json = nlohmann::json;

// A share in percent to one decimal; "<0.1" for a share too small to show, never "0.0" for one that is not 0.
std::string pct(double part, double whole) {
    const double v = whole > 0 ? 100 * part / whole : 0;
    return v > 0 && v < 0.05 ? "<0.1" : fmt::format("{:.1f}", v);
}

// The pace verdict in a table cell.
std::string pace_word(const std::string& verdict) {
    if (verdict == "keeps_up") return tr("keeps up");
    if (verdict == "falls_behind") return tr("behind");
    if (verdict == "too_short") return tr("too short");
    return tr("at once");
}

json lengths_json(const LengthDist& d) {
    static const char* const kinds[] = {"fixed", "uniform", "lognormal"};
    json j = {{"kind", kinds[static_cast<int>(d.kind)]}, {"mean", d.mean()}};
    j["min"] = d.kind == LengthDist::Kind::uniform ? json(d.a) : json(nullptr);
    j["max"] = d.kind == LengthDist::Kind::uniform ? json(d.b) : json(nullptr);
    j["sigma"] = d.kind == LengthDist::Kind::lognormal ? json(d.b) : json(nullptr);
    return j;
}

std::string lengths_text(const LengthDist& d) {
    switch (d.kind) {
        case LengthDist::Kind::fixed: return format_short(d.a);
        case LengthDist::Kind::uniform: return trf(N_("uniform {0}..{1}"), format_short(d.a), format_short(d.b));
        case LengthDist::Kind::lognormal: return trf(N_("lognormal, mean {0}, σ {1}"), format_short(d.a), format_short(d.b));
    }
    return "";
}

json quantiles_json(const Quantiles& q) {
    if (q.count == 0) return nullptr;
    return {{"count", q.count}, {"mean_s", q.mean}, {"p50_s", q.p50}, {"p90_s", q.p90},
            {"p99_s", q.p99}, {"max_s", q.max}, {"exact", q.exact}};
}

// What limits the run, in words with its figures: English for --json (`english`), else the reader's language.
std::string limit_text(const ServeSummary& s, const ServeSimRequest& req, const ServePool& pool, bool english = false) {
    auto say = [english](const char* msgid, std::vector<std::string> args) {
        const Prose p{msgid, std::move(args)};
        return english ? p.text() : p.localized();
    };
    const ServeLimits& l = s.limits;
    const double steps = static_cast<double>(std::max<std::uint64_t>(l.steps, 1));
    if (s.limit == "kv_capacity")
        return say(N_("KV capacity: {0} preemptions; requests waited for free blocks in {1}% of the steps (pool {2} "
                      "blocks, at most {3} in use)"),
                   {group_thousands(s.preemptions), pct(static_cast<double>(l.steps_short_of_blocks), steps),
                    group_thousands(pool.blocks), group_thousands(s.peak_blocks)});
    if (s.limit == "max_running")
        return say(N_("the cap on running requests (--max-running {0}): requests waited at the cap in {1}% of the steps"),
                   {group_thousands(req.max_running), pct(static_cast<double>(l.steps_at_max_running), steps)});
    if (s.limit == "arrivals")
        return say(N_("none of the machine's: it was idle {0}% of the time, so the arrivals set the pace"),
                   {pct(l.idle_s, l.idle_s + l.busy_s)});
    const std::string split = say(N_("memory-bound steps {0}%, compute-bound {1}%, all-reduces {2}%, overhead {3}% of the busy time"),
                                  {pct(l.memory_bound_s, l.busy_s), pct(l.compute_bound_s, l.busy_s), pct(l.comm_s, l.busy_s),
                                   pct(l.overhead_s, l.busy_s)});
    if (s.limit == "communication") return say(N_("the link between devices: {0}"), {split});
    if (s.limit == "compute") return say(N_("compute (π): {0}"), {split});
    return say(N_("memory bandwidth (β): {0}"), {split});
}

json pace_json(const ServePace& p) {
    return {{"verdict", p.verdict}, {"from_s", p.from_s}, {"to_s", p.to_s}, {"arrived", p.arrived}, {"finished", p.finished},
            {"in_system_from", p.in_system_from}, {"in_system_to", p.in_system_to}};
}

json summary_json(const ServeSummary& s, const ServeSimRequest& req, const ServePool& pool) {
    json j = {{"requests", s.requests},
              {"steps", s.steps},
              {"output_tokens", s.output_tokens},
              {"makespan_s", s.makespan_s},
              {"output_tokens_per_s", s.output_tokens_per_s},
              {"requests_per_s", s.requests_per_s},
              {"ttft", quantiles_json(s.ttft)},
              {"tpot", quantiles_json(s.tpot)},
              {"e2e", quantiles_json(s.e2e)},
              {"slo_met", s.slo_met},
              {"goodput_per_s", s.goodput_per_s},
              {"preemptions", s.preemptions},
              {"recomputed_tokens", s.recomputed_tokens},
              {"prefix_hit_tokens", s.prefix_hit_tokens},
              {"prefix_hit_requests", s.prefix_hit_requests},
              {"peak_batch", s.peak_batch},
              {"mean_batch", s.mean_batch},
              {"peak_blocks", s.peak_blocks},
              {"mean_blocks", s.mean_blocks},
              {"peak_queue", s.peak_queue},
              {"mean_queue", s.mean_queue},
              {"mean_in_system", s.mean_in_system},
              {"arrival_rate", s.arrival_rate},
              {"mean_time_in_system_s", s.mean_time_in_system},
              {"busy_s", s.limits.busy_s},
              {"idle_s", s.limits.idle_s},
              {"memory_bound_s", s.limits.memory_bound_s},
              {"compute_bound_s", s.limits.compute_bound_s},
              {"comm_s", s.limits.comm_s},
              {"overhead_s", s.limits.overhead_s},
              {"limit", s.limit},
              {"limit_text", limit_text(s, req, pool, true)},
              {"pace", pace_json(s.pace)}};
    j["latency"] = json::array();
    for (const auto& [name, q] : {std::pair{"ttft", &s.ttft}, {"tpot", &s.tpot}, {"e2e", &s.e2e}})
        if (q->count)
            j["latency"].push_back({{"metric", name}, {"mean_s", q->mean}, {"p50_s", q->p50}, {"p90_s", q->p90},
                                    {"p99_s", q->p99}, {"max_s", q->max}});
    return j;
}

json inputs_json(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res) {
    const ServePool& p = res.pool;
    json j;
    j["model"] = in.config ? json(in.config->name) : json(nullptr);
    j["hardware"] = in.hw ? json(in.hw->name) : json(nullptr);
    j["devices"] = req.devices;
    j["bandwidth"] = req.machine.bandwidth;
    j["peak_flops"] = or_null(req.machine.peak_flops);
    j["link_bandwidth"] = req.devices > 1 ? json(req.link_bandwidth) : json(nullptr);
    j["link_latency_s"] = req.devices > 1 ? json(req.link_latency_s) : json(nullptr);
    j["weight_bytes_per_device"] = res.device_model.weight_bytes;
    j["pool"] = {{"blocks", p.blocks}, {"block_size", p.block_size}, {"block_bytes", p.block_bytes},
                 {"memory_bytes", p.from_memory ? json(p.memory_bytes) : json(nullptr)},
                 {"available_bytes", p.from_memory ? json(p.available_bytes) : json(nullptr)},
                 {"from_memory", p.from_memory}, {"windows_held_whole", p.windows_held_whole}};
    j["scheduler"] = {{"max_batch_tokens", req.max_batch_tokens ? json(req.max_batch_tokens) : json(nullptr)},
                      {"max_running", req.max_running ? json(req.max_running) : json(nullptr)},
                      {"prefix_caching", req.prefix_caching},
                      {"step_overhead_s", req.step_overhead_s}};
    json w = nullptr;
    if (req.workload) {
        const WorkloadSpec& s = *req.workload;
        w = {{"requests", s.requests}, {"rate", or_null(res.rate)}, {"seed", s.seed}, {"prompt", lengths_json(s.prompt)},
             {"output", lengths_json(s.output)}, {"shared_prefix", s.prefix_len ? json(s.prefix_len) : json(nullptr)},
             {"prefix_groups", s.prefix_len ? json(s.prefix_groups) : json(nullptr)}, {"cut_to_context", res.cut}};
    }
    j["workload"] = w;
    j["trace_requests"] = req.workload ? json(nullptr) : json(req.trace.size());
    j["slo"] = {{"ttft_s", or_null(req.slo_ttft_s)}, {"tpot_s", or_null(req.slo_tpot_s)}};
    return j;
}

std::vector<Column<ServeRequestResult>> request_columns() {
    using R = ServeRequestResult;
    const std::vector<Column<R>> c = {
        {"id", N_("request"), [](const R& r) { return std::to_string(r.id); }},
        figure_column<R>("arrival_s", N_("arrival (s)"), [](const R& r) { return r.arrival_s; }, [](double v) { return format_decimal(v, 3); }),
        {"prompt", N_("prompt"), [](const R& r) { return std::to_string(r.prompt); }},
        {"output", N_("output"), [](const R& r) { return std::to_string(r.output); }},
        figure_column<R>("ttft_s", N_("TTFT (ms)"), [](const R& r) { return r.ttft_s; }, format_ms_cell),
        figure_column<R>("tpot_s", N_("TPOT (ms)"), [](const R& r) { return r.tpot_s; }, format_ms_cell),
        figure_column<R>("e2e_s", N_("end-to-end (s)"), [](const R& r) { return r.e2e_s; }, [](double v) { return format_decimal(v, 3); }),
        {"preemptions", N_("preemptions"), [](const R& r) { return std::to_string(r.preemptions); }},
        {"prefix_hit_tokens", N_("prefix hits"), [](const R& r) { return std::to_string(r.prefix_hit_tokens); }},
        {"meets_slo", N_("meets SLO"), [](const R& r) { return csv_flag(r.meets_slo); }}};
    return c;
}

std::vector<Column<ServeStepRow>> step_columns() {
    using S = ServeStepRow;
    auto count = [](std::uint64_t S::*f) { return [f](const S& s) { return std::to_string(s.*f); }; };
    const std::vector<Column<S>> c = {
        {"index", N_("step"), count(&S::index)},
        figure_column<S>("start_s", N_("start (s)"), [](const S& s) { return s.start_s; }, [](double v) { return format_decimal(v, 4); }),
        figure_column<S>("time_s", N_("time (ms)"), [](const S& s) { return s.time_s; }, format_ms_cell),
        {"running", N_("running"), count(&S::running)},
        {"decodes", N_("decodes"), count(&S::decodes)},
        {"prefill_tokens", N_("prefill tokens"), count(&S::prefill_tokens)},
        {"tokens", N_("tokens"), count(&S::tokens)},
        {"waiting", N_("waiting"), count(&S::waiting)},
        {"used_blocks", N_("blocks used"), count(&S::used_blocks)},
        {"admitted", N_("admitted"), count(&S::admitted)},
        {"preempted", N_("preempted"), count(&S::preempted)},
        {"finished", N_("finished"), count(&S::finished)},
        {"compute_bound", N_("compute-bound"), [](const S& s) { return csv_flag(s.compute_bound); }}};
    return c;
}

std::vector<Column<SweepPoint>> sweep_columns() {
    using P = SweepPoint;
    const std::vector<Column<P>> c = {
        figure_column<P>("rate", N_("rate (req/s)"), [](const P& p) { return p.rate; }, [](double v) { return format_decimal(v, 2); }),
        figure_column<P>("output_tokens_per_s", N_("output tok/s"), [](const P& p) { return p.summary.output_tokens_per_s; },
                         [](double v) { return format_decimal(v, 0); }),
        figure_column<P>("ttft_p99_s", N_("p99 TTFT (ms)"), [](const P& p) { return p.summary.ttft.p99; }, format_ms_cell),
        figure_column<P>("tpot_p99_s", N_("p99 TPOT (ms)"),
                         [](const P& p) { return p.summary.tpot.count ? std::optional<double>(p.summary.tpot.p99) : std::nullopt; },
                         format_ms_cell),
        figure_column<P>("goodput_per_s", N_("goodput (req/s)"), [](const P& p) { return p.summary.goodput_per_s; },
                         [](double v) { return format_decimal(v, 2); }),
        {"meets", N_("meets"), [](const P& p) { return csv_flag(p.meets); }, [](const P& p) { return p.meets ? tr("yes") : tr("no"); }},
        {"pace", N_("pace"), [](const P& p) { return p.summary.pace.verdict; }, [](const P& p) { return pace_word(p.summary.pace.verdict); }},
        {"limit", N_("limit"), [](const P& p) { return p.summary.limit; }}};
    return c;
}

json rows_json(const std::vector<ServeStepRow>& steps) {
    json a = json::array();
    for (const auto& s : steps)
        a.push_back({{"index", s.index}, {"start_s", s.start_s}, {"time_s", s.time_s}, {"running", s.running},
                     {"decodes", s.decodes}, {"prefill_tokens", s.prefill_tokens}, {"tokens", s.tokens},
                     {"waiting", s.waiting}, {"used_blocks", s.used_blocks}, {"admitted", s.admitted},
                     {"preempted", s.preempted}, {"finished", s.finished}, {"compute_bound", s.compute_bound}});
    return a;
}

json requests_json(const std::vector<ServeRequestResult>& rs) {
    json a = json::array();
    for (const auto& r : rs)
        a.push_back({{"id", r.id}, {"arrival_s", r.arrival_s}, {"prompt", r.prompt}, {"output", r.output},
                     {"ttft_s", r.ttft_s}, {"tpot_s", or_null(r.tpot_s)}, {"e2e_s", r.e2e_s},
                     {"first_token_s", r.first_token_s}, {"finish_s", r.finish_s}, {"preemptions", r.preemptions},
                     {"prefix_hit_tokens", r.prefix_hit_tokens}, {"meets_slo", r.meets_slo}});
    return a;
}

json sweep_json(const ServeSimResult& res) {
    if (res.sweep.empty()) return nullptr;
    json pts = json::array();
    for (const auto& p : res.sweep)
        pts.push_back({{"rate", p.rate}, {"output_tokens_per_s", p.summary.output_tokens_per_s},
                       {"requests_per_s", p.summary.requests_per_s}, {"ttft_p99_s", p.summary.ttft.p99},
                       {"tpot_p99_s", p.summary.tpot.count ? json(p.summary.tpot.p99) : json(nullptr)},
                       {"goodput_per_s", p.summary.goodput_per_s}, {"meets", p.meets},
                       {"fails", p.fails.empty() ? json(nullptr) : json(p.fails)}, {"pace", p.summary.pace.verdict},
                       {"limit", p.summary.limit}});
    return {{"points", pts}, {"best_rate", or_null(res.best_rate)}};
}

}  // namespace

// Defined in serve_sim_text.cpp: the text and the explanation.
void serve_sim_text(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res, Report& r);
std::string serve_limit_text(const ServeSummary& s, const ServeSimRequest& req, const ServePool& pool) {
    return limit_text(s, req, pool);
}
std::string serve_lengths_text(const LengthDist& d) { return lengths_text(d); }

Report serve_sim_report(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res, bool rows) {
    Report r;
    r.json = inputs_json(in, req, res);
    r.json["summary"] = summary_json(res.run.summary, req, res.pool);
    r.json["requests"] = rows ? requests_json(res.run.requests) : json::array();
    r.json["steps"] = rows ? rows_json(res.run.steps) : json::array();
    r.json["sweep"] = sweep_json(res);
    serve_sim_text(in, req, res, r);
    r.add_table("summary", [&] {
        Table t;
        t.columns = {"metric", "mean_s", "p50_s", "p90_s", "p99_s", "max_s"};
        t.keys = t.columns;
        for (const auto& row : r.json["summary"]["latency"])
            t.rows.push_back({row["metric"].get<std::string>(), csv_number(row["mean_s"].get<double>()),
                              csv_number(row["p50_s"].get<double>()), csv_number(row["p90_s"].get<double>()),
                              csv_number(row["p99_s"].get<double>()), csv_number(row["max_s"].get<double>())});
        return t;
    }(), "/summary/latency");
    if (rows) {
        r.add_table("requests", columns_table(request_columns(), res.run.requests), "/requests");
        r.add_table("steps", columns_table(step_columns(), res.run.steps), "/steps");
    }
    if (!res.sweep.empty()) r.add_table("sweep", columns_table(sweep_columns(), res.sweep), "/sweep/points");
    return r;
}

// The text's tables, shared with serve_sim_text.cpp.
Table serve_sweep_text_table(const ServeSimResult& res) { return text_table(sweep_columns(), res.sweep); }

std::string serve_sim_svg(const RooflineInputs& in, const ServeSimRequest& req, const ServeSimResult& res) {
    std::vector<std::string> inputs = {"W: " + in.weights_from.localized(), "β: " + in.bandwidth_text};
    if (in.config) inputs.insert(inputs.begin(), in.config->name);
    return plots::serve_sim_svg(res, req.slo_ttft_s, req.slo_tpot_s, inputs);
}

}  // namespace inferlab::app
