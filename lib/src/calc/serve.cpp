// serve-sim's event loop (calc/serve.hpp): arrivals join the scheduler's queue, each engine step is
// the scheduler's decision priced by step_cost, and every request's times are read off the steps.
#include "inferlab/calc/serve.hpp"

#include <algorithm>
#include <deque>

#include "inferlab/base/error.hpp"

namespace inferlab {

namespace {

// What the first readings of the requests tell: how many, and the pace check's half.
struct Arrivals {
    std::uint64_t count = 0, up_to_from = 0;  // all; those arriving by the half's start
    double first_s = 0, from_s = 0, to_s = 0;
};

class Server {
public:
    Server(const DecodeModel& m, const Machine& hw, const RequestSources& sources, const ServeConfig& c, const Arrivals& a)
        : m_(m), hw_(hw), source_(sources()), c_(c), sched_(c.scheduler), arrivals_(a) {
        prepare_step_cost(m_);
        pace_.from_s = a.from_s;
        pace_.to_s = a.to_s;
        pace_.arrived = a.count - a.up_to_from;
        pace_.in_system_from = a.up_to_from;
        pace_.in_system_to = a.count;
        pending_ = source_();
    }

    ServeResult run() {
        ServeResult r;
        double t = arrivals_.first_s;
        std::uint64_t done = 0, best_batch = 0;
        while (done < arrivals_.count) {
            if (sched_.idle() && pending_->arrival_s > t) {
                limits_.idle_s += pending_->arrival_s - t;
                t = pending_->arrival_s;
            }
            while (pending_ && pending_->arrival_s <= t) {
                arrive(*pending_);
                pending_ = source_();
            }
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
            retire(r);
            t = end;
            ++steps_;
        }
        summarize(r, t);
        r.timeline = std::move(timeline_);
        return r;
    }

private:
    // A request in flight: what it asked for, its figures so far.
    struct Live {
        ServeRequest q;
        ServeRequestResult out;
        bool first = false, finished = false;
    };
    Live& live(int id) { return live_[static_cast<std::size_t>(id) - base_]; }
    const Live& live(int id) const { return live_[static_cast<std::size_t>(id) - base_]; }

    void arrive(const ServeRequest& q) {
        const int id = sched_.add(q.prompt, q.output);
        Live l;
        l.q = q;
        l.out.id = static_cast<std::uint64_t>(id);
        l.out.arrival_s = q.arrival_s;
        l.out.prompt = q.prompt;
        l.out.output = q.output;
        live_.push_back(l);
        note(l.out.id, q.arrival_s, N_("arrived"), 0, 0);
    }

    void note(std::uint64_t i, double time, const char* what, std::uint64_t tokens, std::uint64_t shared) {
        if (i == c_.explain_request) timeline_.push_back({time, steps_, what, tokens, shared});
    }

    // Prefix caching: the running request of the same group with the most of the shared prefix
    // cached, in whole blocks (vLLM caches full blocks only).
    std::pair<int, std::uint64_t> share(int id, std::span<const int> running) const {
        const ServeRequest& q = live(id).q;
        std::pair<int, std::uint64_t> best{-1, 0};
        if (!c_.prefix_caching || q.prefix_group < 0 || q.prefix_len == 0) return best;
        const std::uint64_t bs = c_.scheduler.block_size;
        for (int j : running) {
            const ServeRequest& p = live(j).q;
            if (p.prefix_group != q.prefix_group) continue;
            std::uint64_t n = std::min({q.prefix_len, p.prefix_len, sched_.cached(j), q.prompt - 1});
            n -= n % bs;
            if (n > best.second) best = {j, n};
        }
        return best;
    }

    // The step's row: what it fed, what the scheduler held after it.
    ServeStepRow row_of(const StepDecision& d, const DecodeStep& cost, double start) const {
        ServeStepRow row;
        row.index = steps_;
        row.start_s = start;
        row.time_s = cost.step_time_s;
        for (const StepWork& w : d.work) {
            // A decode feeds one generated token of a running request; anything else is prefill
            // (a prompt's chunk, or a preempted request's recompute).
            if (decodes(w)) ++row.decodes;
            else row.prefill_tokens += w.tokens;
        }
        row.tokens = d.tokens;
        row.running = d.work.size();
        row.waiting = sched_.waiting();
        row.used_blocks = d.used_blocks;
        row.admitted = static_cast<std::uint64_t>(std::count_if(d.work.begin(), d.work.end(), [](const StepWork& w) { return w.admitted; }));
        row.preempted = d.preempted.size();
        row.finished = d.finished.size();
        row.compute_bound = cost.compute_bound;
        return row;
    }
    bool decodes(const StepWork& w) const { return !w.admitted && w.tokens == 1 && live(w.id).first; }

    // Each request's events in the step: preempted, fed, its first token, finished.
    void book_requests(const StepDecision& d, double start, double end) {
        for (int id : d.preempted) {
            ++live(id).out.preemptions;
            note(std::uint64_t(id), end, N_("preempted"), 0, 0);
        }
        for (const StepWork& w : d.work) {
            Live& l = live(w.id);
            if (!w.admitted && !decodes(w)) note(std::uint64_t(w.id), start, N_("prefill"), w.tokens, 0);
            if (w.admitted) {
                l.out.prefix_hit_tokens += w.shared;
                note(std::uint64_t(w.id), start, N_("admitted"), w.tokens, w.shared);
                if (l.out.preemptions > 0) recomputed_ += w.tokens;  // fed again after a preemption
            }
            if (w.emits && !l.first) {
                l.first = true;
                l.out.first_token_s = end;
                note(std::uint64_t(w.id), end, N_("first token"), 0, 0);
            }
        }
        for (int id : d.finished) {
            finish(live(id), end);
            note(std::uint64_t(id), end, N_("finished"), 0, 0);
        }
    }

    void book(const StepDecision& d, const DecodeStep& cost, double start, double end, std::uint64_t in_system, ServeResult& r) {
        const double dt = cost.step_time_s;  // (start + dt) − start need not give dt back
        const ServeStepRow row = row_of(d, cost, start);  // before the step's first tokens mark their requests
        book_requests(d, start, end);
        // Time-weighted sums and peaks.
        ServeSummary& s = r.summary;
        in_system_dt_ += static_cast<long double>(in_system) * dt;
        batch_dt_ += static_cast<long double>(row.running) * dt;
        blocks_dt_ += static_cast<long double>(row.used_blocks) * dt;
        queue_dt_ += static_cast<long double>(row.waiting) * dt;
        s.peak_batch = std::max(s.peak_batch, row.running);
        s.peak_blocks = std::max(s.peak_blocks, row.used_blocks);
        s.peak_queue = std::max(s.peak_queue, row.waiting);
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

    // A request's last token: its figures, into the summary's sums, and the pace check's counts.
    void finish(Live& l, double end) {
        ServeRequestResult& q = l.out;
        l.finished = true;
        q.finish_s = end;
        q.ttft_s = q.first_token_s - q.arrival_s;
        q.e2e_s = q.finish_s - q.arrival_s;
        if (q.output > 1) q.tpot_s = (q.e2e_s - q.ttft_s) / static_cast<double>(q.output - 1);
        q.meets_slo = (!c_.slo_ttft_s || q.ttft_s <= *c_.slo_ttft_s) && (!c_.slo_tpot_s || !q.tpot_s || *q.tpot_s <= *c_.slo_tpot_s);
        slo_met_ += q.meets_slo;
        output_tokens_ += q.output;
        preemptions_ += q.preemptions;
        prefix_hit_tokens_ += q.prefix_hit_tokens;
        prefix_hit_requests_ += q.prefix_hit_tokens > 0;
        ttft_.add(q.ttft_s);
        e2e_.add(q.e2e_s);
        if (q.tpot_s) tpot_.add(*q.tpot_s);
        e2e_sum_ += q.e2e_s;
        pace_.in_system_from -= end <= pace_.from_s;
        pace_.in_system_to -= end <= pace_.to_s;
        pace_.finished += end > pace_.from_s && end <= pace_.to_s;
    }

    // The finished at the front leave memory (into the requests table when it is kept).
    void retire(ServeResult& r) {
        while (!live_.empty() && live_.front().finished) {
            if (live_.front().out.id == c_.explain_request) r.explained = live_.front().out;
            if (c_.keep_requests) r.requests.push_back(live_.front().out);
            live_.pop_front();
            ++base_;
        }
    }

    void summarize(ServeResult& r, double last_finish) {
        ServeSummary& s = r.summary;
        s.requests = arrivals_.count;
        s.steps = steps_;
        s.makespan_s = last_finish - arrivals_.first_s;
        s.slo_met = slo_met_;
        s.output_tokens = output_tokens_;
        s.preemptions = preemptions_;
        s.recomputed_tokens = recomputed_;
        s.prefix_hit_tokens = prefix_hit_tokens_;
        s.prefix_hit_requests = prefix_hit_requests_;
        s.ttft = ttft_.result();
        s.tpot = tpot_.result();
        s.e2e = e2e_.result();
        const double span = s.makespan_s > 0 ? s.makespan_s : 1;
        s.output_tokens_per_s = static_cast<double>(s.output_tokens) / span;
        s.requests_per_s = static_cast<double>(s.requests) / span;
        s.goodput_per_s = static_cast<double>(s.slo_met) / span;
        s.mean_batch = limits_.busy_s > 0 ? static_cast<double>(batch_dt_ / limits_.busy_s) : 0;
        s.mean_blocks = static_cast<double>(blocks_dt_ / span);
        s.mean_queue = static_cast<double>(queue_dt_ / span);
        s.mean_in_system = static_cast<double>(in_system_dt_ / span);
        s.arrival_rate = static_cast<double>(s.requests) / span;
        s.mean_time_in_system = static_cast<double>(e2e_sum_ / static_cast<long double>(std::max<std::uint64_t>(s.requests, 1)));
        limits_.steps = steps_;
        s.limits = limits_;
        s.limit = limiting_factor(limits_, s.preemptions);
        s.pace = judge_pace(pace_);
    }

    DecodeModel m_;  // a copy with prepare_step_cost's shortcuts
    const Machine& hw_;
    RequestSource source_;
    std::optional<ServeRequest> pending_;  // the next to arrive
    ServeConfig c_;
    BatchScheduler sched_;
    Arrivals arrivals_;
    std::deque<Live> live_;                // from request base_ on
    std::size_t base_ = 0;
    std::vector<StepChunk> chunks_;
    std::vector<TimelineEvent> timeline_;
    ServeLimits limits_;
    ServePace pace_;
    QuantileSketch ttft_, tpot_, e2e_;
    long double in_system_dt_ = 0, batch_dt_ = 0, blocks_dt_ = 0, queue_dt_ = 0, e2e_sum_ = 0;
    std::uint64_t steps_ = 0, slo_met_ = 0, output_tokens_ = 0, preemptions_ = 0, recomputed_ = 0;
    std::uint64_t prefix_hit_tokens_ = 0, prefix_hit_requests_ = 0;
};

// The first reading: every request in order and able to fit the pool alone; their count; the
// pace check's half, from the median arrival (request count/2) to the last.
Arrivals check_arrivals(const RequestSources& sources, const SchedulerConfig& sc) {
    Arrivals a;
    RequestSource next = sources();
    double last = 0;
    for (std::optional<ServeRequest> r = next(); r; r = next(), ++a.count) {
        const ServeRequest& q = *r;
        const std::string i = std::to_string(a.count);
        if (a.count > 0 && q.arrival_s < last)
            throw InputError(N_("requests must come in order of arrival: request {0} arrives before request {1}"),
                             {i, std::to_string(a.count - 1)});
        const std::uint64_t positions = q.prompt + q.output - 1;  // the last token is never fed back
        const std::uint64_t need = positions / sc.block_size + (positions % sc.block_size != 0);
        if (need > sc.blocks)
            throw InputError(N_("request {0} cannot fit the KV pool even alone: its {1} prompt + {2} output tokens cache {3} "
                                "positions, {4} blocks of {5} tokens, and the pool holds {6} blocks"),
                             {i, std::to_string(q.prompt), std::to_string(q.output), std::to_string(positions),
                              std::to_string(need), std::to_string(sc.block_size), std::to_string(sc.blocks)});
        if (a.count == 0) a.first_s = q.arrival_s;
        last = q.arrival_s;
    }
    a.to_s = last;
    // The second, to the median and the requests tied with it.
    next = sources();
    for (std::optional<ServeRequest> r = next(); r; r = next()) {
        if (a.up_to_from == a.count / 2) a.from_s = r->arrival_s;
        if (a.up_to_from > a.count / 2 && r->arrival_s > a.from_s) break;
        ++a.up_to_from;
    }
    return a;
}

}  // namespace

ServeResult simulate_serving(const DecodeModel& model, const Machine& hw, const RequestSources& requests,
                             const ServeConfig& config) {
    const Arrivals a = check_arrivals(requests, config.scheduler);
    if (a.count == 0) return {};
    return Server(model, hw, requests, config, a).run();
}

ServeResult simulate_serving(const DecodeModel& model, const Machine& hw, const std::vector<ServeRequest>& requests,
                             const ServeConfig& config) {
    const RequestSources sources = [&requests] {
        return RequestSource([&requests, i = std::size_t(0)]() mutable {
            return i < requests.size() ? std::optional<ServeRequest>(requests[i++]) : std::nullopt;
        });
    };
    return simulate_serving(model, hw, sources, config);
}

}  // namespace inferlab
