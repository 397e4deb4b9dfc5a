// serve-sim's simulation tied to the textbook's formulas: one request alone is decode-roofline's
// whole generation, a batch arriving at once decodes at decode-roofline's step bound, and the
// long-run averages obey Little's law.
#include <catch2/catch.hpp>

#include <cmath>

#include "inferlab/base/rng.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/serve.hpp"

using namespace inferlab;

namespace {

// Llama-3-8B in bf16 (8,030,261,248 parameters; 32 layers of 8 K/V heads of 128, 32 query heads)
// on an H100 SXM's datasheet figures.
DecodeModel llama3_8b() {
    DecodeModel m;
    m.params = 8030261248ULL;
    m.weight_bytes = 2 * 8030261248ULL;
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    m.attn_layers = 32;
    m.attn_q_heads = 32;
    m.attn_head_dim = 128;
    return m;
}

Machine h100() {
    Machine hw;
    hw.bandwidth = 3.35e12;
    hw.peak_flops = 989e12;
    hw.memory_bytes = 80ULL << 30;
    return hw;
}

ServeConfig pool_of(std::uint64_t blocks) {
    ServeConfig c;
    c.scheduler.blocks = blocks;
    c.scheduler.block_size = 16;
    c.keep_steps = true;
    return c;
}

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

// The chat preset's requests cut to Llama-3's 8192 positions, Poisson at `rate` (none: at once).
WorkloadSpec chat_workload(std::uint64_t requests, std::optional<double> rate) {
    WorkloadSpec w;
    w.requests = requests;
    w.rate = rate;
    w.prompt = chat_prompt_lengths();
    w.output = chat_output_lengths();
    w.context = 8192;
    return w;
}

}  // namespace

TEST_CASE("serve-sim: one request alone takes decode-roofline's TTFT, TPOT and end-to-end", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    for (auto [P, N] : {std::pair<std::uint64_t, std::uint64_t>{2048, 512}, {1, 2}, {100, 1}, {8191, 7}}) {
        INFO("P " << P << ", N " << N);
        const ServeResult r = simulate_serving(m, hw, {{0.25, P, N}}, pool_of(30000));
        const LatencyBound l = latency_bound(m, 1, P, N, hw);
        const ServeRequestResult& q = r.requests.at(0);
        // The same step_cost call (one chunk of P positions); 1e-14 only because TTFT is read off
        // absolute times, (0.25 + t) − 0.25.
        CHECK(close(q.ttft_s, l.ttft_s, 1e-14));
        // 1e-12: the simulation adds N − 1 step times one by one, decode-roofline sums them in closed form.
        CHECK(close(q.e2e_s, l.end_to_end_s, 1e-12));
        CHECK(q.tpot_s.has_value() == l.tpot_s.has_value());
        if (l.tpot_s) CHECK(close(*q.tpot_s, *l.tpot_s, 1e-9));  // a difference of two close times over N − 1
        CHECK(r.summary.steps == N);
    }
}

TEST_CASE("serve-sim: B requests at once decode at decode-roofline's step bound for batch B", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    const std::uint64_t B = 8, P = 1024, N = 64;
    const std::vector<ServeRequest> reqs(B, ServeRequest{0, P, N});
    const ServeResult r = simulate_serving(m, hw, reqs, pool_of(30000));
    REQUIRE(r.steps.size() == N);
    CHECK(r.steps[0].time_s == prefill_bound(m, B, P, hw).time_s);  // the B prefills in one step
    for (std::uint64_t i = 1; i < N; ++i) {
        INFO("step " << i);
        CHECK(r.steps[i].decodes == B);
        const DecodeStep d = decode_step_uniform(m, B, P + i, hw);
        CHECK(r.steps[i].time_s == d.step_time_s);
    }
    // The first decode step's rates (first document §2.1.3): B / t_B in all, 1 / t_B per request.
    const DecodeStep first = decode_step_uniform(m, B, P + 1, hw);
    CHECK(static_cast<double>(r.steps[1].decodes) / r.steps[1].time_s == first.aggregate_tokens_per_s);
    CHECK(1.0 / r.steps[1].time_s == first.per_request_tokens_per_s);
}

TEST_CASE("serve-sim: more load raises aggregate throughput and lowers each request's tokens/s", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    double last_aggregate = 0, last_per_request = 1e300;
    for (std::uint64_t B : {1, 4, 16, 64}) {
        const ServeResult r = simulate_serving(m, hw, std::vector<ServeRequest>(B, ServeRequest{0, 512, 128}), pool_of(30000));
        const double aggregate = r.summary.output_tokens_per_s, per_request = 1.0 / r.summary.tpot.mean;
        CHECK(aggregate > last_aggregate);
        CHECK(per_request < last_per_request);
        last_aggregate = aggregate;
        last_per_request = per_request;
    }
}

TEST_CASE("serve-sim: Little's law on a long run, and the same seed gives the same run", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    const WorkloadSpec w = chat_workload(4000, 20);
    ServeConfig c = pool_of(29000);
    c.keep_steps = false;
    c.scheduler.max_running = 256;
    const ServeResult r = simulate_serving(m, hw, make_workload(w).requests, c);
    const ServeSummary& s = r.summary;
    // L = λ·W with λ measured over the run: equal but for the arrivals' wait for the next step
    // boundary (counted in the system from their arrival in W, from the boundary in L), a fraction
    // about (mean step / 2) / W, here well under 2%.
    CHECK(close(s.mean_in_system, s.arrival_rate * s.mean_time_in_system, 0.02));
    CHECK(s.mean_in_system <= s.arrival_rate * s.mean_time_in_system);
    // With λ the rate asked for: also the Poisson count's fluctuation (1/√4000 ≈ 1.6%) and the
    // drain after the last arrival; 6% covers three standard deviations and both.
    CHECK(close(s.mean_in_system, 20.0 * s.mean_time_in_system, 0.06));
    const ServeResult again = simulate_serving(m, hw, make_workload(w).requests, c);
    CHECK(again.summary.ttft.p99 == s.ttft.p99);
    CHECK(again.summary.e2e.mean == s.e2e.mean);
    CHECK(again.summary.steps == s.steps);
}

TEST_CASE("serve-sim: a small pool preempts, every request still finishes, and a request too large is refused", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    const std::vector<ServeRequest> reqs(16, ServeRequest{0, 100, 200});
    const ServeResult r = simulate_serving(m, hw, reqs, pool_of(40));  // 640 positions for 16 × 299
    CHECK(r.summary.preemptions > 0);
    CHECK(r.summary.requests == 16);
    CHECK(r.summary.limit == "kv_capacity");
    for (const auto& q : r.requests) CHECK(q.finish_s > q.first_token_s);
    CHECK_THROWS_WITH(simulate_serving(m, hw, {{0, 600, 100}}, pool_of(40)),
                      Catch::Contains("request 0 cannot fit the KV pool even alone") && Catch::Contains("the pool holds 40 blocks"));
}

TEST_CASE("serve-sim: chunked prefill and prefix caching feed fewer tokens a step and share whole blocks", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    std::vector<ServeRequest> reqs;
    for (int i = 0; i < 4; ++i) reqs.push_back({0.001 * i, 1000, 10, 7, 520});
    ServeConfig c = pool_of(30000);
    c.prefix_caching = true;
    const ServeResult shared = simulate_serving(m, hw, reqs, c);
    // 520 prefix tokens in whole blocks of 16: 512 shared by each request after the first.
    CHECK(shared.summary.prefix_hit_tokens == 3 * 512);
    CHECK(shared.summary.prefix_hit_requests == 3);
    c.prefix_caching = false;
    c.scheduler.max_batch_tokens = 256;
    const ServeResult chunked = simulate_serving(m, hw, reqs, c);
    for (const auto& st : chunked.steps) CHECK(st.tokens <= 256);
    CHECK(chunked.summary.prefix_hit_tokens == 0);
    CHECK(chunked.summary.ttft.max > shared.summary.ttft.max);
}

TEST_CASE("serve-sim: workloads are drawn from the seed, lengths the same at every rate", "[serve]") {
    WorkloadSpec w;
    w.requests = 1000;
    w.rate = 5;
    w.prompt = {LengthDist::Kind::uniform, 10, 20};
    w.output = chat_output_lengths();
    const Workload a = make_workload(w);
    w.rate = 50;
    const Workload b = make_workload(w);
    double mean = 0;
    for (std::size_t i = 0; i < a.requests.size(); ++i) {
        CHECK(a.requests[i].prompt == b.requests[i].prompt);
        CHECK(a.requests[i].output == b.requests[i].output);
        CHECK(a.requests[i].arrival_s == Approx(10 * b.requests[i].arrival_s).epsilon(1e-12));
        CHECK(a.requests[i].prompt >= 10);
        CHECK(a.requests[i].prompt <= 20);
        mean += static_cast<double>(a.requests[i].output) / 1000;
    }
    // A lognormal of mean 338, σ = 1: the sample mean's standard error is 338·√(e − 1)/√1000 ≈ 14 tokens.
    CHECK(std::abs(mean - 338) < 4 * 14);
    CHECK(a.requests.back().arrival_s == Approx(1000 / 5.0).epsilon(0.15));  // 1000 gaps of mean 0.2 s, ±3σ ≈ ±10%
}

TEST_CASE("serve-sim: the pace check tells a server that keeps up from one that falls behind", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    WorkloadSpec w = chat_workload(3000, std::nullopt);
    ServeConfig c = pool_of(29000);
    c.keep_steps = false;
    c.scheduler.max_running = 256;
    // This server's capacity is about 65 req/s (a 20,000-request sweep). At 20 it keeps up: the
    // number in the system ends the second half of the arrivals about where it began.
    w.rate = 20;
    const ServePace slow = simulate_serving(m, hw, make_workload(w).requests, c).summary.pace;
    CHECK(slow.verdict == "keeps_up");
    CHECK(slow.arrived == 1499);  // arrivals after the median one, request 1500
    CHECK(slow.in_system_to + slow.finished == slow.in_system_from + slow.arrived);  // the count's books balance
    // At 200 it falls behind: the count grows by about (λ − μ)/λ of the half's arrivals.
    w.rate = 200;
    const ServeResult fast = simulate_serving(m, hw, make_workload(w).requests, c);
    const ServePace& p = fast.summary.pace;
    CHECK(p.verdict == "falls_behind");
    CHECK(p.in_system_to - p.in_system_from > p.arrived / 2);
    CHECK(p.in_system_to + p.finished == p.in_system_from + p.arrived);
    // All at once: no arrival process to keep up with.
    w.rate.reset();
    w.requests = 300;
    CHECK(simulate_serving(m, hw, make_workload(w).requests, c).summary.pace.verdict == "at_once");
}

TEST_CASE("serve-sim: the pace verdict's thresholds, 5% of the arrivals against the wander 3·√(2n)", "[serve]") {
    auto verdict = [](std::uint64_t arrived, std::uint64_t from, std::uint64_t to) {
        ServePace c;
        c.from_s = 1;
        c.to_s = 2;
        c.arrived = arrived;
        c.in_system_from = from;
        c.in_system_to = to;
        return judge_pace(c).verdict;
    };
    CHECK(pace_noise(50) == Approx(30.0));  // 3·√100
    // The wander of the larger end: 3·√(2·max(start, end)).
    CHECK(verdict(1000, 50, 100) == "keeps_up");       // grew 50 = 5% of 1000, and 5% ≥ the wander 42.4
    CHECK(verdict(1000, 50, 101) == "falls_behind");   // grew 51 > max(50, 42.6)
    CHECK(verdict(400, 50, 70) == "too_short");        // grew 20 ≤ 5% of 400 = 20, but 20 < the wander 35.5
    CHECK(verdict(400, 50, 90) == "too_short");        // grew 40, within the wander 40.2
    CHECK(verdict(400, 50, 100) == "falls_behind");    // grew 50 > max(20, 42.4)
    CHECK(verdict(400, 6, 18) == "keeps_up");          // a small start by chance: grew 12 ≤ 20, and 20 ≥ the wander 18
    CHECK(verdict(400, 50, 10) == "keeps_up");         // shrank by 40, past the wander 30: it drains
    CHECK(verdict(400, 50, 30) == "too_short");        // shrank by 20, within the wander 30
    CHECK(verdict(10000, 50, 10) == "keeps_up");
    ServePace once;
    once.from_s = once.to_s = 3;
    once.arrived = 1000;
    CHECK(judge_pace(once).verdict == "at_once");
}

TEST_CASE("serve-sim: quantiles exact up to 65,536 values, from bins within 2^-12 past that", "[serve]") {
    Rng rng(7);
    std::vector<double> values;
    QuantileSketch few, many;
    for (std::size_t i = 0; i < QuantileSketch::kExactValues; ++i) {
        const double v = std::exp(4 * rng.normal()) * 1e-3;  // spread over many decades, as TTFTs are
        values.push_back(v);
        few.add(v);
        many.add(v);
    }
    const Quantiles exact = quantiles_of(values), kept = few.result();
    CHECK(kept.exact);
    CHECK(kept.p50 == exact.p50);
    CHECK(kept.p99 == exact.p99);
    for (int i = 0; i < 200000; ++i) {
        const double v = i % 1000 == 0 ? 0.0 : std::exp(4 * rng.normal()) * 1e-3;  // some below 1 ns
        values.push_back(v);
        many.add(v);
    }
    const Quantiles all = quantiles_of(values), binned = many.result();
    CHECK_FALSE(binned.exact);
    CHECK(binned.count == all.count);
    CHECK(binned.max == all.max);
    CHECK(binned.mean == Approx(all.mean).epsilon(1e-12));
    const double bound = std::ldexp(1.0, -12) * (1 + 1e-9);  // the bin's half-width, in ratio
    for (auto [b, e] : {std::pair{binned.p50, all.p50}, {binned.p90, all.p90}, {binned.p99, all.p99}}) CHECK(std::abs(b / e - 1) <= bound);
}

TEST_CASE("serve-sim: without its rows a run sums up the same, from a stream of requests", "[serve]") {
    const DecodeModel m = llama3_8b();
    const Machine hw = h100();
    const WorkloadSpec w = chat_workload(3000, 40);
    ServeConfig c = pool_of(2000);  // a small pool: preemptions too
    c.scheduler.max_batch_tokens = 512;
    const ServeResult kept = simulate_serving(m, hw, make_workload(w).requests, c);
    c.keep_requests = c.keep_steps = false;
    c.explain_request = 17;
    const ServeResult streamed = simulate_serving(m, hw, workload_sources(w), c);
    CHECK(kept.requests.size() == 3000);
    CHECK(streamed.requests.empty());
    CHECK(streamed.steps.empty());
    const ServeSummary &a = kept.summary, &b = streamed.summary;
    CHECK(a.preemptions > 0);
    CHECK(b.preemptions == a.preemptions);
    CHECK(b.steps == a.steps);
    CHECK(b.ttft.p99 == a.ttft.p99);
    CHECK(b.tpot.p50 == a.tpot.p50);
    CHECK(b.e2e.mean == a.e2e.mean);
    CHECK(b.pace.finished == a.pace.finished);
    CHECK(b.recomputed_tokens == a.recomputed_tokens);
    REQUIRE(streamed.explained);
    CHECK(streamed.explained->ttft_s == kept.requests[17].ttft_s);
    CHECK(streamed.explained->e2e_s == kept.requests[17].e2e_s);
    for (std::size_t i = 0; i < kept.requests.size(); ++i) CHECK(kept.requests[i].id == i);  // in order of arrival
}
