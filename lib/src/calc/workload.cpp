// serve-sim's inputs and summaries (calc/serve.hpp): workloads drawn from one seed, quantiles,
// and the words for what limits a run.
#include <algorithm>
#include <cmath>
#include <memory>

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

WorkloadStream::WorkloadStream(const WorkloadSpec& spec)
    // Two streams: the gaps' and the lengths', so a rate changes when requests come, never which.
    : spec_(spec), gaps_(spec.seed), lengths_(spec.seed ^ 0x5eedf00dULL) {}

std::optional<ServeRequest> WorkloadStream::next() {
    if (i_ == spec_.requests) return std::nullopt;
    if (spec_.rate) t_ += -std::log1p(-gaps_.uniform()) / *spec_.rate;  // exponential gaps: Poisson arrivals
    ServeRequest r;
    r.arrival_s = spec_.rate ? t_ : 0;
    r.prompt = spec_.prompt.draw(lengths_);
    r.output = spec_.output.draw(lengths_);
    if (spec_.prefix_groups > 0 && spec_.prefix_len > 0) {
        r.prefix_group = static_cast<long long>(i_ % spec_.prefix_groups);
        r.prefix_len = spec_.prefix_len;
        r.prompt += spec_.prefix_len;
    }
    const std::uint64_t ctx = spec_.context;
    if (ctx > 1 && (r.prompt >= ctx || r.prompt + r.output > ctx)) {
        r.prompt = std::min(r.prompt, ctx - 1);
        r.output = std::min(r.output, ctx - r.prompt);
        ++cut_;
    }
    ++i_;
    return r;
}

Workload make_workload(const WorkloadSpec& spec) {
    Workload w;
    w.requests.reserve(spec.requests);
    WorkloadStream stream(spec);
    while (auto r = stream.next()) w.requests.push_back(*r);
    w.cut = stream.cut();
    return w;
}

RequestSources workload_sources(const WorkloadSpec& spec) {
    return [spec] {
        auto stream = std::make_shared<WorkloadStream>(spec);
        return RequestSource([stream] { return stream->next(); });
    };
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

namespace {
constexpr double kBinFloor = 1e-9;
const double kLogRatio = std::log1p(std::ldexp(1.0, -11));
}  // namespace

void QuantileSketch::add(double v) {
    min_ = count_ ? std::min(min_, v) : v;
    max_ = count_ ? std::max(max_, v) : v;
    ++count_;
    sum_ += v;
    if (bins_.empty() && below_ns_ == 0 && values_.size() < kExactValues) {
        values_.push_back(v);
        return;
    }
    if (!values_.empty()) {  // past kExactValues: bin what was kept, and keep no more
        for (double x : values_) bin(x);
        std::vector<double>().swap(values_);
    }
    bin(v);
}

void QuantileSketch::bin(double v) {
    if (v < kBinFloor) {
        ++below_ns_;
        return;
    }
    const auto k = static_cast<std::size_t>(std::log(v / kBinFloor) / kLogRatio);
    if (k >= bins_.size()) bins_.resize(k + 1, 0);
    ++bins_[k];
}

Quantiles QuantileSketch::result() const {
    if (bins_.empty() && below_ns_ == 0) return quantiles_of(values_);
    Quantiles q;
    q.count = count_;
    q.exact = false;
    q.mean = static_cast<double>(sum_ / static_cast<long double>(count_));
    q.max = max_;
    auto rank = [&](double p) {
        const auto k = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(count_))), 1, count_);
        std::uint64_t seen = below_ns_;
        if (seen >= k) return min_;
        for (std::size_t b = 0; b < bins_.size(); ++b) {
            seen += bins_[b];
            if (seen >= k) return std::clamp(kBinFloor * std::exp((static_cast<double>(b) + 0.5) * kLogRatio), min_, max_);
        }
        return max_;
    };
    q.p50 = rank(0.50);
    q.p90 = rank(0.90);
    q.p99 = rank(0.99);
    return q;
}

ServePace judge_pace(const ServePace& c) {
    ServePace p = c;
    const double grew = static_cast<double>(c.in_system_to) - static_cast<double>(c.in_system_from);
    const double tolerance = 0.05 * static_cast<double>(c.arrived);
    // The larger end's wander: a count that is small at the half's start by chance is no evidence.
    const double noise = pace_noise(std::max(c.in_system_from, c.in_system_to));
    if (!(c.to_s > c.from_s)) p.verdict = "at_once";
    else if (grew > std::max(tolerance, noise)) p.verdict = "falls_behind";
    else if ((grew <= tolerance && tolerance >= noise) || grew < -noise) p.verdict = "keeps_up";  // or drains
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
