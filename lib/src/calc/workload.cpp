// serve-sim's inputs and summaries (calc/serve.hpp): workloads drawn from one seed, quantiles,
// and the words for what limits a run.
#include <algorithm>
#include <cmath>

#include "inferlab/calc/serve.hpp"

namespace inferlab {

std::uint64_t LengthDist::draw(Rng& rng) const {
    double v = a;
    if (kind == Kind::uniform) {
        const auto lo = static_cast<std::uint64_t>(a), hi = static_cast<std::uint64_t>(b);
        return lo + rng.below(hi - lo + 1);
    }
    if (kind == Kind::lognormal) v = std::exp(std::log(a) - b * b / 2 + b * rng.normal());
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(std::min(v, 1e15))));
}

double LengthDist::mean() const { return kind == Kind::uniform ? (a + b) / 2 : a; }

LengthDist chat_prompt_lengths() { return {LengthDist::Kind::lognormal, 161, 1.0}; }
LengthDist chat_output_lengths() { return {LengthDist::Kind::lognormal, 338, 1.0}; }

Workload make_workload(const WorkloadSpec& spec) {
    Workload w;
    w.requests.reserve(spec.requests);
    // Two streams: the gaps' and the lengths', so a rate changes when requests come, never which.
    Rng gaps(spec.seed), lengths(spec.seed ^ 0x5eedf00dULL);
    double t = 0;
    for (std::uint64_t i = 0; i < spec.requests; ++i) {
        if (spec.rate) t += -std::log1p(-gaps.uniform()) / *spec.rate;  // exponential gaps: Poisson arrivals
        ServeRequest r;
        r.arrival_s = spec.rate ? t : 0;
        r.prompt = spec.prompt.draw(lengths);
        r.output = spec.output.draw(lengths);
        if (spec.prefix_groups > 0 && spec.prefix_len > 0) {
            r.prefix_group = static_cast<long long>(i % spec.prefix_groups);
            r.prefix_len = spec.prefix_len;
            r.prompt += spec.prefix_len;
        }
        if (spec.context > 1 && (r.prompt >= spec.context || r.prompt + r.output > spec.context)) {
            r.prompt = std::min(r.prompt, spec.context - 1);
            r.output = std::min(r.output, spec.context - r.prompt);
            ++w.cut;
        }
        w.requests.push_back(r);
    }
    return w;
}

Quantiles quantiles_of(std::vector<double> v) {
    Quantiles q;
    q.count = v.size();
    if (v.empty()) return q;
    std::sort(v.begin(), v.end());
    long double sum = 0;
    for (double x : v) sum += x;
    q.mean = static_cast<double>(sum / static_cast<long double>(v.size()));
    auto rank = [&](double p) {
        const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
        return v[std::clamp<std::size_t>(k, 1, v.size()) - 1];
    };
    q.p50 = rank(0.50);
    q.p90 = rank(0.90);
    q.p99 = rank(0.99);
    q.max = v.back();
    return q;
}

ServePace judge_pace(const ServePace& c) {
    ServePace p = c;
    const double grew = static_cast<double>(c.in_system_to) - static_cast<double>(c.in_system_from);
    const double tolerance = 0.05 * static_cast<double>(c.arrived);
    const double noise = pace_noise(c.in_system_from);
    if (!(c.to_s > c.from_s)) p.verdict = "at_once";
    else if (grew > std::max(tolerance, noise)) p.verdict = "falls_behind";
    else if (grew <= tolerance && tolerance >= noise) p.verdict = "keeps_up";
    else p.verdict = "too_short";
    return p;
}

double pace_noise(std::uint64_t in_system) { return 3 * std::sqrt(2.0 * static_cast<double>(std::max<std::uint64_t>(in_system, 1))); }

std::string limiting_factor(const ServeLimits& l, std::uint64_t preemptions) {
    const double steps = static_cast<double>(std::max<std::uint64_t>(l.steps, 1));
    if (preemptions > 0 || static_cast<double>(l.steps_short_of_blocks) >= 0.05 * steps) return "kv_capacity";
    if (static_cast<double>(l.steps_at_max_running) >= 0.05 * steps) return "max_running";
    if (l.idle_s >= 0.5 * (l.busy_s + l.idle_s)) return "arrivals";
    if (l.comm_s > l.memory_bound_s && l.comm_s > l.compute_bound_s) return "communication";
    return l.compute_bound_s > l.memory_bound_s ? "compute" : "bandwidth";
}

}  // namespace inferlab
