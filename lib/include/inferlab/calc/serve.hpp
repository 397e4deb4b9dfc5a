#pragma once
// A server under load, step by step (serve-sim): requests arrive over time, the batch scheduler
// (scheduler.hpp, the one `model paged` follows) decides each engine step, and the step bound
// (roofline.hpp's step_cost, the one decode-roofline prints) prices it. A discrete-event
// simulation at the granularity of engine steps: deterministic, no model weights.
//
// Times, in the second document's terms: TTFT = first token − arrival (queueing included);
// TPOT = (end-to-end − TTFT) / (N − 1) for N > 1 output tokens; end-to-end = finish − arrival.
// A step starts when the one before it ends (or at the next arrival when nothing is running);
// requests that arrive during a step join at its end; a step's tokens appear when it ends.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/rng.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/scheduler.hpp"

namespace inferlab {

struct ServeRequest {
    double arrival_s = 0;
    std::uint64_t prompt = 0, output = 0;
    long long prefix_group = -1;      // requests of one group share their first prefix_len prompt tokens
    std::uint64_t prefix_len = 0;
};

// Lengths of a workload: one value, uniform integers in [a, b], or lognormal with mean a tokens and
// log-space σ = b (drawn as round(exp(ln a − σ²/2 + σ·Z)), at least 1).
struct LengthDist {
    enum class Kind { fixed, uniform, lognormal } kind = Kind::fixed;
    double a = 0, b = 0;
    std::uint64_t draw(Rng& rng) const;
    double mean() const;  // a for fixed and lognormal, (a + b)/2 for uniform
};

// `requests` requests: Poisson arrivals at `rate` per second (none: all at time 0). The gaps come
// from one generator and the lengths from another, both seeded by `seed`, so every rate sees the
// same requests, only closer together or further apart. Lengths are cut so that prompt + output
// fits `context` positions when it is given (prompt ≤ context − 1, output ≤ context − prompt).
struct WorkloadSpec {
    std::uint64_t requests = 0;
    std::optional<double> rate;
    LengthDist prompt, output;
    std::uint64_t seed = 1;
    std::uint64_t context = 0;  // 0: no cut
    // A shared system prompt: request i belongs to group i mod prefix_groups and its prompt starts
    // with that group's prefix_len tokens (added to the drawn prompt length). 0 groups: none.
    std::uint64_t prefix_len = 0, prefix_groups = 0;
};
struct Workload {
    std::vector<ServeRequest> requests;
    std::uint64_t cut = 0;  // requests whose drawn lengths were cut to the context
};
Workload make_workload(const WorkloadSpec& spec);

// The same requests one at a time, for a run whose memory must not grow with their number
// (make_workload collects them from here).
class WorkloadStream {
public:
    explicit WorkloadStream(const WorkloadSpec& spec);
    std::optional<ServeRequest> next();  // none after spec.requests
    std::uint64_t cut() const { return cut_; }

private:
    WorkloadSpec spec_;
    Rng gaps_, lengths_;
    double t_ = 0;
    std::uint64_t i_ = 0, cut_ = 0;
};

// Requests in order of arrival, one a call, none when done; and a way to start them over (a
// simulation reads them twice: once to check them and find the pace check's half, once to serve).
using RequestSource = std::function<std::optional<ServeRequest>()>;
using RequestSources = std::function<RequestSource()>;
RequestSources workload_sources(const WorkloadSpec& spec);

// The chat-like preset: lognormal prompts of mean 161 tokens and outputs of mean 338 (ShareGPT's
// means as the vLLM paper reports them: Kwon et al., SOSP 2023, §6.1), σ = 1 in log space for both
// (a spread chosen here, not the paper's).
LengthDist chat_prompt_lengths();
LengthDist chat_output_lengths();

struct ServeConfig {
    SchedulerConfig scheduler;
    bool prefix_caching = false;
    bool keep_requests = true;     // per-request rows (the requests table); off, memory stays flat
    bool keep_steps = false;       // per-step rows (the steps table, the figures)
    std::uint64_t explain_request = 0;  // whose timeline to record
    std::optional<double> slo_ttft_s, slo_tpot_s;
};

struct ServeRequestResult {
    std::uint64_t id = 0;
    double arrival_s = 0, first_token_s = 0, finish_s = 0;
    std::uint64_t prompt = 0, output = 0;
    double ttft_s = 0, e2e_s = 0;
    std::optional<double> tpot_s;  // none when N = 1
    std::uint64_t preemptions = 0, prefix_hit_tokens = 0;
    bool meets_slo = true;
};

struct ServeStepRow {
    std::uint64_t index = 0;
    double start_s = 0, time_s = 0;
    std::uint64_t decodes = 0, prefill_tokens = 0, tokens = 0;
    std::uint64_t running = 0, waiting = 0, used_blocks = 0;
    std::uint64_t admitted = 0, preempted = 0, finished = 0;
    bool compute_bound = false;
};

// One request's life, for --explain: what happened to it and when.
struct TimelineEvent {
    double time_s = 0;
    std::uint64_t step = 0;
    std::string what;   // "arrived", "admitted", "prefill", "first token", "preempted", "finished"
    std::uint64_t tokens = 0;  // for "admitted"/"prefill": tokens fed; "admitted": also shared below
    std::uint64_t shared = 0;
};

// Nearest-rank quantiles: the q-quantile of n values is the ceil(q·n)-th smallest.
struct Quantiles {
    std::uint64_t count = 0;
    double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
    bool exact = true;  // false: p50, p90 and p99 read from QuantileSketch's bins
};
Quantiles quantiles_of(std::vector<double> values);

// Quantiles of a stream of values ≥ 0 in bounded memory: every value kept (exact) up to
// kExactValues; past that, counts in geometric bins of ratio 1 + 2^−11 from 1 ns up (one bin below
// 1 ns), a quantile read as its bin's geometric middle, so within 2^−12 ≈ 0.025% of the exact
// one (clamped to the exact min and max). The count, mean and max are exact either way.
class QuantileSketch {
public:
    static constexpr std::size_t kExactValues = 1 << 16;
    void add(double v);
    Quantiles result() const;

private:
    void bin(double v);
    std::vector<double> values_;
    std::vector<std::uint64_t> bins_;  // bins_[k]: [1 ns · r^k, 1 ns · r^(k+1)), r = 1 + 2^−11
    std::uint64_t below_ns_ = 0, count_ = 0;
    long double sum_ = 0;
    double min_ = 0, max_ = 0;
};

// Where the time went and what held requests back, for the words on what limits the run.
struct ServeLimits {
    double busy_s = 0, idle_s = 0;
    double memory_bound_s = 0, compute_bound_s = 0;  // the roof part of busy steps, by which roof bound them
    double comm_s = 0, overhead_s = 0;
    std::uint64_t steps_short_of_blocks = 0;  // a waiting request found no blocks for its first chunk
    std::uint64_t steps_at_max_running = 0;   // requests waited while the running ones were at the cap
    std::uint64_t steps = 0;
};

// The bottleneck in one word: "kv_capacity" (preemptions, or requests waiting for blocks in at least
// 5% of the steps), "max_running" (waiting at the cap in at least 5% of the steps), "arrivals" (the
// server idle at least half the time), else "compute", "bandwidth" or "communication", whichever
// took most of the busy time.
std::string limiting_factor(const ServeLimits& l, std::uint64_t preemptions);

// Whether the server keeps up with its arrivals, judged over the second half of the arrival window
// (after the median arrival, to the last). A server that keeps up ends that half with about as many
// requests in the system as it began with; one that falls behind ends it with more, a number that
// grows with the run, so its latencies have no limit a longer run would not pass. A stable count
// wanders too, by about the square root of its size (as a Poisson count does), so the growth is
// weighed against noise = 3·√(2·n), n the larger of the numbers in the system at the half's two
// ends (three standard deviations of the difference of two such counts). The verdict, with A the half's arrivals and g the
// growth: "falls_behind" when g > max(5% of A, noise); "keeps_up" when g ≤ 5% of A and 5% of A is
// itself at least the noise, or when the count shrank by more than the noise (it drains); else "too_short" (a longer run would tell); "at_once" when every request
// arrives at one instant (no arrival process to keep up with).
struct ServePace {
    std::string verdict;  // "keeps_up", "falls_behind", "too_short", "at_once"
    double from_s = 0, to_s = 0;               // the half: (median arrival, last arrival]
    std::uint64_t arrived = 0, finished = 0;   // in the half
    std::uint64_t in_system_from = 0, in_system_to = 0;  // at its two ends
};
ServePace judge_pace(const ServePace& counts);  // fills `verdict` from the counts
double pace_noise(std::uint64_t in_system);    // 3·√(2·max(n, 1))

struct ServeSummary {
    std::uint64_t requests = 0, steps = 0, output_tokens = 0;
    double makespan_s = 0;           // first arrival to last finish
    double output_tokens_per_s = 0, requests_per_s = 0;
    Quantiles ttft, tpot, e2e;
    std::uint64_t slo_met = 0;       // requests within both SLOs (all, without SLOs)
    double goodput_per_s = 0;        // slo_met / makespan
    std::uint64_t preemptions = 0, recomputed_tokens = 0;
    std::uint64_t prefix_hit_tokens = 0, prefix_hit_requests = 0;
    std::uint64_t peak_batch = 0, peak_blocks = 0, peak_queue = 0;
    double mean_batch = 0;           // requests a step feeds, weighted by step time (busy time only)
    double mean_blocks = 0, mean_queue = 0;  // weighted by time over the makespan
    // Little's law, L = λ·W: the time-average number of requests in the system (waiting or running),
    // counted at each step's start and held for the step, over the makespan; λ the arrivals per
    // second of the makespan; W the mean end-to-end time.
    double mean_in_system = 0, arrival_rate = 0, mean_time_in_system = 0;
    ServeLimits limits;
    std::string limit;               // limiting_factor
    ServePace pace;
};

struct ServeResult {
    ServeSummary summary;
    std::vector<ServeRequestResult> requests;  // config.keep_requests
    std::vector<ServeStepRow> steps;           // config.keep_steps
    // The step chosen for --explain (the first with the most requests in it): its chunks and cost.
    std::uint64_t explain_step = 0;
    double explain_step_start_s = 0;
    std::vector<StepChunk> explain_chunks;
    DecodeStep explain_cost;
    std::vector<TimelineEvent> timeline;       // config.explain_request's
    std::optional<ServeRequestResult> explained;  // config.explain_request's figures
};

// Runs the simulation on one device's share of the model (tensor_parallel_share) and its machine.
// Requests in order of arrival. Throws InputError (naming "request N") for a request that cannot
// fit the pool even alone.
ServeResult simulate_serving(const DecodeModel& model, const Machine& hw, const std::vector<ServeRequest>& requests,
                             const ServeConfig& config);
// The same from a source read twice: memory follows the requests in flight (and the rows kept),
// not the number served.
ServeResult simulate_serving(const DecodeModel& model, const Machine& hw, const RequestSources& requests,
                             const ServeConfig& config);

}  // namespace inferlab
