// serve-sim's event loop (calc/serve.hpp): arrivals join the scheduler's queue, each engine step is
// the scheduler's decision priced by step_cost, and every request's times are read off the steps.
#include "inferlab/calc/serve.hpp"

#include <algorithm>

#include "inferlab/base/error.hpp"

namespace inferlab {

namespace {

class Server {
public:
    Server(const DecodeModel& m, const Machine& hw, const std::vector<ServeRequest>& reqs, const ServeConfig& c)
        : m_(m), hw_(hw), reqs_(reqs), c_(c), sched_(c.scheduler), out_(reqs.size()) {
        prepare_step_cost(m_);
        // The pace check's half: (median arrival, last arrival].
        pace_.from_s = reqs_[reqs_.size() / 2].arrival_s;
        pace_.to_s = reqs_.back().arrival_s;
        for (const ServeRequest& q : reqs_) {
            pace_.arrived += q.arrival_s > pace_.from_s;
            pace_.in_system_from += q.arrival_s <= pace_.from_s;
        }
        pace_.in_system_to = reqs_.size();
    }

    ServeResult run() {
        ServeResult r;
        double t = reqs_.empty() ? 0 : reqs_.front().arrival_s;
        const double first_arrival = t;
        std::size_t next = 0, done = 0;
        std::uint64_t best_batch = 0;
        while (done < reqs_.size()) {
            if (sched_.idle() && reqs_[next].arrival_s > t) {
                limits_.idle_s += reqs_[next].arrival_s - t;
                t = reqs_[next].arrival_s;
            }
            for (; next < reqs_.size() && reqs_[next].arrival_s <= t; ++next) arrive(next);
            const std::uint64_t in_system = sched_.running().size() + sched_.waiting();
            const StepDecision d = sched_.step([this](int id, std::span<const int> run) { return share(id, run); });
            chunks_.clear();
            for (const StepWork& w : d.work) chunks_.push_back({w.start, w.tokens, 1});
            const DecodeStep cost = step_cost(m_, chunks_, hw_);
            const double end = t + cost.step_time_s;
            book(d, cost, t, end, in_system, r);
            if (d.work.size() > best_batch) {
                best_batch = d.work.size();
                r.explain_step = steps_;
                r.explain_step_start_s = t;
                r.explain_chunks = chunks_;
                r.explain_cost = cost;
            }
            done += d.finished.size();
            t = end;
            ++steps_;
        }
        summarize(r, first_arrival, t);
        r.timeline = std::move(timeline_);
        return r;
    }

private:
    void arrive(std::size_t i) {
        const ServeRequest& q = reqs_[i];
        sched_.add(q.prompt, q.output);
        out_[i].id = i;
        out_[i].arrival_s = q.arrival_s;
        out_[i].prompt = q.prompt;
        out_[i].output = q.output;
        note(i, q.arrival_s, N_("arrived"), 0, 0);
    }

    void note(std::size_t i, double time, const char* what, std::uint64_t tokens, std::uint64_t shared) {
        if (i == c_.explain_request) timeline_.push_back({time, steps_, what, tokens, shared});
    }

    // Prefix caching: the running request of the same group with the most of the shared prefix
    // cached, in whole blocks (vLLM caches full blocks only).
    std::pair<int, std::uint64_t> share(int id, std::span<const int> running) const {
        const ServeRequest& q = reqs_[std::size_t(id)];
        std::pair<int, std::uint64_t> best{-1, 0};
        if (!c_.prefix_caching || q.prefix_group < 0 || q.prefix_len == 0) return best;
        const std::uint64_t bs = c_.scheduler.block_size;
        for (int j : running) {
            const ServeRequest& p = reqs_[std::size_t(j)];
            if (p.prefix_group != q.prefix_group) continue;
            std::uint64_t n = std::min({q.prefix_len, p.prefix_len, sched_.cached(j), q.prompt - 1});
            n -= n % bs;
            if (n > best.second) best = {j, n};
        }
        return best;
    }

    void book(const StepDecision& d, const DecodeStep& cost, double start, double end, std::uint64_t in_system, ServeResult& r) {
        const double dt = cost.step_time_s;  // (start + dt) − start need not give dt back
        ServeStepRow row;
        row.index = steps_;
        row.start_s = start;
        row.time_s = dt;
        for (int id : d.preempted) {
            ++out_[std::size_t(id)].preemptions;
            note(std::size_t(id), end, N_("preempted"), 0, 0);
        }
        for (const StepWork& w : d.work) {
            ServeRequestResult& q = out_[std::size_t(w.id)];
            // A decode feeds one generated token of a running request; anything else is prefill
            // (a prompt's chunk, or a preempted request's recompute).
            if (!w.admitted && w.tokens == 1 && first_[std::size_t(w.id)]) ++row.decodes;
            else row.prefill_tokens += w.tokens;
            if (!w.admitted && !(w.tokens == 1 && first_[std::size_t(w.id)])) note(std::size_t(w.id), start, N_("prefill"), w.tokens, 0);
            if (w.admitted) {
                q.prefix_hit_tokens += w.shared;
                note(std::size_t(w.id), start, N_("admitted"), w.tokens, w.shared);
            }
            if (w.emits && !first_[std::size_t(w.id)]) {
                first_[std::size_t(w.id)] = true;
                q.first_token_s = end;
                note(std::size_t(w.id), end, N_("first token"), 0, 0);
            }
        }
        for (int id : d.finished) {
            out_[std::size_t(id)].finish_s = end;
            pace_.in_system_from -= end <= pace_.from_s;
            pace_.in_system_to -= end <= pace_.to_s;
            pace_.finished += end > pace_.from_s && end <= pace_.to_s;
            note(std::size_t(id), end, N_("finished"), 0, 0);
        }
        row.tokens = d.tokens;
        row.running = d.work.size();
        row.waiting = sched_.waiting();
        row.used_blocks = d.used_blocks;
        row.admitted = static_cast<std::uint64_t>(std::count_if(d.work.begin(), d.work.end(), [](const StepWork& w) { return w.admitted; }));
        row.preempted = d.preempted.size();
        row.finished = d.finished.size();
        row.compute_bound = cost.compute_bound;
        // Time-weighted sums and peaks.
        ServeSummary& s = r.summary;
        in_system_dt_ += static_cast<long double>(in_system) * dt;
        batch_dt_ += static_cast<long double>(row.running) * dt;
        blocks_dt_ += static_cast<long double>(row.used_blocks) * dt;
        queue_dt_ += static_cast<long double>(row.waiting) * dt;
        s.peak_batch = std::max(s.peak_batch, row.running);
        s.peak_blocks = std::max(s.peak_blocks, row.used_blocks);
        s.peak_queue = std::max(s.peak_queue, row.waiting);
        s.recomputed_tokens += recompute_tokens(d);
        limits_.busy_s += dt;
        const double roof = dt - cost.comm_time_s - cost.overhead_s;
        (cost.compute_bound ? limits_.compute_bound_s : limits_.memory_bound_s) += roof;
        limits_.comm_s += cost.comm_time_s;
        limits_.overhead_s += cost.overhead_s;
        limits_.steps_short_of_blocks += d.blocked_by_blocks;
        limits_.steps_at_max_running += c_.scheduler.max_running && row.waiting > 0 && !d.blocked_by_blocks &&
                                        sched_.running().size() + d.finished.size() >= c_.scheduler.max_running;
        if (c_.keep_steps) r.steps.push_back(row);
    }

    // Tokens fed again after a preemption: an admission's chunk beyond the prompt's first pass.
    std::uint64_t recompute_tokens(const StepDecision& d) {
        std::uint64_t n = 0;
        for (const StepWork& w : d.work)
            if (w.admitted && out_[std::size_t(w.id)].preemptions > 0) n += w.tokens;
        return n;
    }

    void summarize(ServeResult& r, double first_arrival, double last_finish) {
        ServeSummary& s = r.summary;
        s.requests = reqs_.size();
        s.steps = steps_;
        s.makespan_s = last_finish - first_arrival;
        std::vector<double> ttft, tpot, e2e;
        ttft.reserve(out_.size());
        e2e.reserve(out_.size());
        long double e2e_sum = 0;
        for (ServeRequestResult& q : out_) {
            q.ttft_s = q.first_token_s - q.arrival_s;
            q.e2e_s = q.finish_s - q.arrival_s;
            if (q.output > 1) q.tpot_s = (q.e2e_s - q.ttft_s) / static_cast<double>(q.output - 1);
            q.meets_slo = (!c_.slo_ttft_s || q.ttft_s <= *c_.slo_ttft_s) && (!c_.slo_tpot_s || !q.tpot_s || *q.tpot_s <= *c_.slo_tpot_s);
            s.slo_met += q.meets_slo;
            s.output_tokens += q.output;
            s.preemptions += q.preemptions;
            s.prefix_hit_tokens += q.prefix_hit_tokens;
            s.prefix_hit_requests += q.prefix_hit_tokens > 0;
            ttft.push_back(q.ttft_s);
            e2e.push_back(q.e2e_s);
            if (q.tpot_s) tpot.push_back(*q.tpot_s);
            e2e_sum += q.e2e_s;
        }
        s.ttft = quantiles_of(std::move(ttft));
        s.tpot = quantiles_of(std::move(tpot));
        s.e2e = quantiles_of(std::move(e2e));
        const double span = s.makespan_s > 0 ? s.makespan_s : 1;
        s.output_tokens_per_s = static_cast<double>(s.output_tokens) / span;
        s.requests_per_s = static_cast<double>(s.requests) / span;
        s.goodput_per_s = static_cast<double>(s.slo_met) / span;
        s.mean_batch = limits_.busy_s > 0 ? static_cast<double>(batch_dt_ / limits_.busy_s) : 0;
        s.mean_blocks = static_cast<double>(blocks_dt_ / span);
        s.mean_queue = static_cast<double>(queue_dt_ / span);
        s.mean_in_system = static_cast<double>(in_system_dt_ / span);
        s.arrival_rate = static_cast<double>(s.requests) / span;
        s.mean_time_in_system = static_cast<double>(e2e_sum / static_cast<long double>(std::max<std::size_t>(out_.size(), 1)));
        limits_.steps = steps_;
        s.limits = limits_;
        s.limit = limiting_factor(limits_, s.preemptions);
        s.pace = judge_pace(pace_);
        if (c_.keep_requests) r.requests = std::move(out_);
    }

    DecodeModel m_;  // a copy with prepare_step_cost's shortcuts
    const Machine& hw_;
    const std::vector<ServeRequest>& reqs_;
    ServeConfig c_;
    BatchScheduler sched_;
    std::vector<ServeRequestResult> out_;
    std::vector<bool> first_ = std::vector<bool>(reqs_.size(), false);
    std::vector<StepChunk> chunks_;
    std::vector<TimelineEvent> timeline_;
    ServeLimits limits_;
    ServePace pace_;
    long double in_system_dt_ = 0, batch_dt_ = 0, blocks_dt_ = 0, queue_dt_ = 0;
    std::uint64_t steps_ = 0;
};

}  // namespace

ServeResult simulate_serving(const DecodeModel& model, const Machine& hw, const std::vector<ServeRequest>& requests,
                             const ServeConfig& config) {
    const SchedulerConfig& sc = config.scheduler;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const ServeRequest& q = requests[i];
        if (i > 0 && q.arrival_s < requests[i - 1].arrival_s)
            throw InputError(N_("requests must come in order of arrival: request {0} arrives before request {1}"),
                             {std::to_string(i), std::to_string(i - 1)});
        const std::uint64_t positions = q.prompt + q.output - 1;  // the last token is never fed back
        const std::uint64_t need = positions / sc.block_size + (positions % sc.block_size != 0);
        if (need > sc.blocks)
            throw InputError(N_("request {0} cannot fit the KV pool even alone: its {1} prompt + {2} output tokens cache {3} "
                                "positions, {4} blocks of {5} tokens, and the pool holds {6} blocks"),
                             {std::to_string(i), std::to_string(q.prompt), std::to_string(q.output), std::to_string(positions),
                              std::to_string(need), std::to_string(sc.block_size), std::to_string(sc.blocks)});
    }
    if (requests.empty()) return {};
    return Server(model, hw, requests, config).run();
}

}  // namespace inferlab
