#include "inferlab/model/pitfall.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "inferlab/error.hpp"
#include "inferlab/kv.hpp"
#include "inferlab/model/kv_cache.hpp"
#include "inferlab/model/speculative.hpp"
#include "inferlab/model/weights.hpp"
#include "inferlab/rng.hpp"
#include "inferlab/spec.hpp"

namespace inferlab::model {

namespace {

// 1e-4 absolute on logits of order 1: float32 sums in another order (a chunk against one row at
// a time) and RoPE angles of shifted positions round differently, by ~1e-6; every broken path
// here is off by more than 1e-2 (the tests assert both sides).
constexpr double kTolerance = 1e-4;
constexpr int kPrompt = 8;   // prompt tokens of every model pitfall
constexpr int kDecode = 8;   // tokens generated after it
constexpr int kPad = 3;      // unmasked-padding: the other request of the batch is 3 tokens longer
constexpr int kWindow = 5;   // cache-then-window: the model's sliding window
constexpr int kChunk = 4;    // top-left-mask: new tokens arriving in one step after the prompt

const std::vector<PitfallInfo> kPitfalls = {
    {"stale-cache", "a prompt edited in the middle, its old cache kept",
     "first document, Figure 5 (the cache depends on the request prefix)",
     "the cache is reused for every position the new prompt covers, without comparing tokens", true},
    {"wrong-layer-cache", "one layer's cache fed to another",
     "first document, Figure 5 (layer 2's K/V come from layer 2's input)",
     "every decode step reads layer 0's K/V in every layer", true},
    {"top-left-mask", "a causal mask aligned top-left for new tokens after history",
     "first document, §1.3.1 (the mask must use the real history offset)",
     "row r of a step sees positions ≤ r, as if the step began at position 0", true},
    {"position-restart", "RoPE positions that restart at 0 in decode",
     "first document, §4.3 (positions must continue)",
     "each step rotates its rows by their offset within the step (0 for one new token)", true},
    {"unmasked-padding", "a short request padded to the batch's length, unmasked",
     "first document, §4.3 (padding must stay masked)",
     "the request's attention also sees its 3 left-padding positions", true},
    {"cache-then-window", "a window forgotten on a cache that keeps old positions",
     "first document, §1 (sliding windows change the memory formula) and §4.3",
     "the cache keeps every position and the decode steps attend to all of them, not the last 5", true},
    {"gib-as-gb", "GiB added as GB", "first document, §2.1.3 (1 GiB = 2^30 bytes)",
     "bytes divided by 10^9 and labelled GiB", false},
    {"mean-length", "an average length used for a peak", "first document, §2.1.2",
     "blocks for B requests of the mean length instead of each request's own", false},
    {"threshold-accept", "a threshold that accepts confident drafts", "first document, §3.1.2 (acceptance and the residual)",
     "keep a draft whenever q(x) ≥ 0.3, else sample from p, instead of min(1, p/q)", false},
    {"same-distribution", "same distribution, different text", "first document, §3.1.2 (acceptance and the residual)",
     "none: speculative and plain sampling, one seed each, then many seeds", true},
};

// One call of a path: truncate the cache (keep ≥ 0), then feed `tokens` with `opt`; its logits
// must match the no-cache logits of token sequence truths[truth].
struct Call {
    int keep = -1;
    std::vector<int> tokens;
    ForwardOptions opt;
    int truth = 0;
};

struct Truth {
    std::vector<int> tokens;  // unpadded
    MatrixRM logits;          // [tokens, vocab] without a cache
};

struct PathOutcome {
    std::vector<Eigen::VectorXf> logits;  // per unpadded position, the last call's that fed it
    std::vector<CheckOutcome> checks;
    std::optional<int> failed[4];         // per check: first step it fired
    std::optional<int> failed_pos[4];
};

enum CheckId { kCacheLength, kPositions, kPadding, kLogits };

}  // namespace

std::vector<CheckOutcome> blank_pitfall_checks() {
    return {{"cache_length", "every layer's cache grows by the step's tokens (+1 per decode step)", {}, {}, false},
            {"positions", "RoPE positions continue from the cache's length", {}, {}, false},
            {"padding", "no row's attention reaches a padding position", {}, {}, false},
            {"logits", "max |logit − no-cache logit| within the tolerance", {}, {}, false}};
}

namespace {

// Runs one path on a fresh contiguous cache; `pad` leading positions are padding (fed first, no logits kept).
PathOutcome run_path(const Transformer& m, const std::vector<Call>& calls, const std::vector<Truth>& truths, int pad) {
    const Dims& D = m.dims();
    ContiguousCache cache(D);
    PathOutcome out;
    out.logits.resize(truths.back().tokens.size());
    auto fire = [&](int id, int step, int pos) {
        if (!out.failed[id]) out.failed[id] = step, out.failed_pos[id] = pos;
    };
    for (std::size_t s = 0; s < calls.size(); ++s) {
        const Call& c = calls[s];
        const int step = static_cast<int>(s);
        if (c.keep >= 0) cache.truncate(c.keep);
        const int start = cache.length(0);
        std::vector<Row> rows;
        std::vector<int> pos;
        for (std::size_t i = 0; i < c.tokens.size(); ++i) {
            rows.push_back({c.tokens[i], &cache});
            pos.push_back(start + static_cast<int>(i));
        }
        // §4.3: positions continue.
        if (rope_positions(rows, pos, c.opt.pitfall) != pos) fire(kPositions, step, start);
        // §4.3: padding masked (a row sees mask..window back; the first real row is at `pad`).
        const std::vector<int> seen = mask_positions(rows, pos, c.opt.pitfall);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const int lo = c.opt.window > 0 ? std::max(0, seen[i] + 1 - c.opt.window) : 0;
            if (pos[i] >= pad && lo < pad) fire(kPadding, step, pos[i] - pad);
        }
        std::vector<int> before;
        for (int l = 0; l < D.n_layers; ++l) before.push_back(cache.length(l));
        MatrixRM logits = m.forward(rows, c.opt);
        // §4.3: cache length + the step's tokens, in every layer.
        for (int l = 0; l < D.n_layers; ++l)
            if (cache.length(l) != before[std::size_t(l)] + static_cast<int>(rows.size())) fire(kCacheLength, step, start);
        // §4.3: the largest absolute logit error against the no-cache path.
        const Truth& t = truths[std::size_t(c.truth)];
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (pos[i] < pad) continue;
            const int p = pos[i] - pad;
            const Eigen::VectorXf row = logits.row(Eigen::Index(i)).transpose();
            const double err = (row - t.logits.row(p).transpose()).cwiseAbs().maxCoeff();
            if (!std::isfinite(err) || err > kTolerance) fire(kLogits, step, p);
            if (std::size_t(p) < out.logits.size()) out.logits[std::size_t(p)] = row;
        }
    }
    return out;
}

int argmax(const Eigen::VectorXf& v) {
    Eigen::Index i = 0;
    v.maxCoeff(&i);
    return static_cast<int>(i);
}

std::vector<int> random_tokens(const Dims& d, int n, Rng& rng) {
    std::vector<int> t;
    // Token 0 is kept for padding.
    for (int i = 0; i < n; ++i) t.push_back(1 + static_cast<int>(rng.below(std::uint64_t(d.vocab_size - 1))));
    return t;
}

// The prompt followed by `n` greedy tokens of the correct cached model (forward options `opt`).
std::vector<int> greedy_continue(const Transformer& m, std::vector<int> tokens, int n, const ForwardOptions& opt) {
    ContiguousCache c(m.dims());
    MatrixRM l = m.forward(tokens, c, opt);
    for (int i = 0; i < n; ++i) {
        Eigen::Index next = 0;
        l.row(l.rows() - 1).maxCoeff(&next);
        tokens.push_back(static_cast<int>(next));
        if (i + 1 < n) l = m.forward(std::vector<int>{static_cast<int>(next)}, c, opt);
    }
    return tokens;
}

// Prefill [0, from) in one call, then one call per token (or a chunk first, for top-left-mask).
std::vector<Call> plan(const std::vector<int>& tokens, int from, int chunk, const ForwardOptions& prefill,
                       const ForwardOptions& decode, int truth = 0) {
    std::vector<Call> calls;
    calls.push_back({-1, std::vector<int>(tokens.begin(), tokens.begin() + from), prefill, truth});
    std::size_t i = std::size_t(from);
    if (chunk > 1) {
        calls.push_back({-1, std::vector<int>(tokens.begin() + from, tokens.begin() + from + chunk), decode, truth});
        i += std::size_t(chunk);
    }
    for (; i < tokens.size(); ++i) calls.push_back({-1, {tokens[i]}, decode, truth});
    return calls;
}

void compare(PitfallResult& r, const PathOutcome& good, const PathOutcome& bad, const Truth& truth) {
    r.tolerance = kTolerance;
    for (std::size_t p = 0; p < truth.tokens.size(); ++p) {
        PositionDiff d;
        d.pos = static_cast<int>(p);
        d.token = truth.tokens[p];
        const Eigen::VectorXf want = truth.logits.row(Eigen::Index(p)).transpose();
        d.correct_err = (good.logits[p] - want).cwiseAbs().maxCoeff();
        d.broken_err = (bad.logits[p] - want).cwiseAbs().maxCoeff();
        d.correct_argmax = argmax(good.logits[p]);
        d.broken_argmax = argmax(bad.logits[p]);
        r.correct_max_err = std::max(r.correct_max_err, d.correct_err);
        r.broken_max_err = std::max(r.broken_max_err, d.broken_err);
        if (!r.first_wrong_pos && !(d.broken_err <= kTolerance)) r.first_wrong_pos = d.pos;
        // Generation parts where the greedy choices after the prompt first differ.
        if (!r.parts_at && d.pos >= r.prompt_len - 1 && d.correct_argmax != d.broken_argmax) r.parts_at = d.pos;
        r.positions.push_back(d);
    }
    r.checks = blank_pitfall_checks();
    for (int id = 0; id < 4; ++id) {
        r.checks[std::size_t(id)].broken_step = bad.failed[id];
        r.checks[std::size_t(id)].broken_position = bad.failed_pos[id];
        r.checks[std::size_t(id)].fired_on_correct = good.failed[id].has_value();
    }
    // The check that catches it: the first to fire on the broken path (structural checks first on a tie).
    std::optional<int> best;
    for (int id = 0; id < 4; ++id)
        if (bad.failed[id] && (!best || *bad.failed[id] < *bad.failed[*best])) best = id;
    r.caught_by = best ? r.checks[std::size_t(*best)].name : "none";
}

Truth truth_of(const Transformer& m, std::vector<int> tokens, const ForwardOptions& opt = {}) {
    Truth t;
    t.logits = logits_without_cache(m, tokens, opt);
    t.tokens = std::move(tokens);
    return t;
}

// ---- the model pitfalls ----
void model_pitfall(PitfallResult& r, const Transformer& m, std::uint64_t seed) {
    const Dims& D = m.dims();
    Rng rng(seed);
    const std::vector<int> prompt = random_tokens(D, kPrompt, rng);
    r.prompt_len = kPrompt;
    ForwardOptions plain, broken;
    const std::string& n = r.info.name;
    if (n == "stale-cache") {
        // The first prompt is cached; the user then edits its token 3 and asks again.
        std::vector<int> edited = prompt;
        edited[3] = edited[3] % (D.vocab_size - 1) + 1;
        const Truth before = truth_of(m, prompt);
        const Truth after = truth_of(m, greedy_continue(m, edited, kDecode, plain));
        auto path = [&](bool by_length) {
            const int keep = static_cast<int>(reusable_prefix(prompt, edited, by_length));
            std::vector<Call> calls{{-1, prompt, plain, 0}};
            // The edited prompt from the first position the cache is not trusted for.
            if (keep < kPrompt)
                calls.push_back({keep, std::vector<int>(after.tokens.begin() + keep, after.tokens.begin() + kPrompt), plain, 1});
            for (std::size_t i = kPrompt; i < after.tokens.size(); ++i) calls.push_back({-1, {after.tokens[i]}, plain, 1});
            return run_path(m, calls, {before, after}, 0);
        };
        compare(r, path(false), path(true), after);
        r.tokens = after.tokens;
        return;
    }
    if (n == "unmasked-padding") {
        const Truth t = truth_of(m, greedy_continue(m, prompt, kDecode, plain));
        // Left padding: token 0 at positions 0..2, the request from position 3. RoPE scores depend
        // only on the distance between positions, so shifted positions give the same logits; the
        // mask of the request's row at position p is the window of its own p + 1 − pad positions.
        auto path = [&](bool masked) {
            std::vector<Call> calls{{-1, std::vector<int>(kPad, 0), plain, 0}};
            for (std::size_t i = 0; i < t.tokens.size(); ++i) {
                ForwardOptions o;
                if (masked) o.window = static_cast<int>(i) + 1;
                calls.push_back({-1, {t.tokens[i]}, o, 0});
            }
            return run_path(m, calls, {t}, kPad);
        };
        compare(r, path(true), path(false), t);
        r.tokens = t.tokens;
        return;
    }
    ForwardOptions decode_broken;
    int chunk = 0;
    if (n == "cache-then-window") {
        plain.window = kWindow;
        broken.window = kWindow;  // the prefill (shorter than the window) is right either way
    } else if (n == "wrong-layer-cache") {
        broken.pitfall = Pitfall::WrongLayerCache;
    } else if (n == "top-left-mask") {
        broken.pitfall = Pitfall::TopLeftMask;
        chunk = kChunk;
    } else if (n == "position-restart") {
        broken.pitfall = Pitfall::PositionRestart;
    } else {
        throw std::logic_error("model_pitfall: " + n);
    }
    decode_broken = broken;
    if (n == "cache-then-window") decode_broken.window = 0;
    const int prefill = n == "cache-then-window" ? kWindow - 2 : kPrompt - (chunk > 0 ? chunk : 0);
    r.prompt_len = prefill + (chunk > 0 ? chunk : 0);
    const Truth t = truth_of(m, greedy_continue(m, std::vector<int>(prompt.begin(), prompt.begin() + r.prompt_len),
                                                kDecode, plain),
                             plain);
    compare(r, run_path(m, plan(t.tokens, prefill, chunk, plain, plain), {t}, 0),
            run_path(m, plan(t.tokens, prefill, chunk, broken, decode_broken), {t}, 0), t);
    r.tokens = t.tokens;
}

// ---- the calculators ----
void gib_as_gb(PitfallResult& r) {
    // §2.1.3's example: L = 32, B = 1, S = 8192, H_kv = 8, d = 128, bf16.
    const std::uint64_t one = kv_bytes_uniform(32, 1, 8192, 8, 128, 16), eight = kv_bytes_uniform(32, 8, 8192, 8, 128, 16);
    const double gib = static_cast<double>(std::uint64_t{1} << 30), gb = 1e9;
    r.quantities = {{"bytes of one request", double(one), double(one), "B"},
                    {"one request", double(one) / gib, double(one) / gb, "GiB"},
                    {"eight requests", double(eight) / gib, double(eight) / gb, "GiB"},
                    {"eight requests back in bytes", double(eight), double(eight) / gb * gib, "B"}};
    r.caught_by = "units: the shown value times the unit it names gives back the byte count";
}

void mean_length(PitfallResult& r) {
    // Four requests of 1, 17, 33 and 49 tokens (mean 25) in 16-token blocks, §2.1.3's model.
    const KvSpec spec = uniform_kv(32, 8, 128, 16);
    const std::vector<std::uint64_t> lens{1, 17, 33, 49};
    std::uint64_t sum = 0;
    for (auto s : lens) sum += s;
    const std::uint64_t mean = sum / lens.size();
    const PagedUsage each = kv_paged(spec, lens, 16), avg = kv_paged(spec, std::vector<std::uint64_t>(lens.size(), mean), 16);
    r.quantities = {{"tokens", double(sum), double(mean * lens.size()), "tokens"},
                    {"blocks", double(each.total_blocks), double(avg.total_blocks), "blocks"},
                    {"allocated", double(each.allocated_bytes), double(avg.allocated_bytes), "B"}};
    r.caught_by = "sum each request's own blocks: the pool needs more than B × blocks(mean)";
}

void threshold_accept(PitfallResult& r, std::uint64_t seed) {
    // spec-accept's default pair: the target p and a draft q that is confident where p is not.
    const std::vector<double> p{0.5, 0.3, 0.2}, q{0.2, 0.3, 0.5};
    const double tau = 0.3;
    const Acceptance<double> exact = acceptance(p, q);
    const std::vector<double> shortcut = threshold_shortcut_distribution(p, q, tau);
    for (std::size_t x = 0; x < p.size(); ++x)
        r.quantities.push_back({fmt::format("P(token {}), p = {:g}", x, p[x]),
                                exact.output[x], shortcut[x], ""});
    const SimulationCounts sim = simulate_speculative(p, q, tau, 20000, seed);
    r.fit_p_correct = fit_test(sim.speculative, p).p_value;
    r.fit_p_broken = fit_test(sim.threshold_shortcut, p).p_value;
    r.caught_by = "χ² of sampled tokens against p (20000 draws)";
}

// ---- same distribution, different text ----
SameDistribution same_distribution(const Transformer& target, std::uint64_t seed) {
    const Dims& D = target.dims();
    auto draft_w = derive_draft(target.weights(), std::max(1, D.n_layers / 2), 0.05, seed + 1);
    Transformer draft(*draft_w);
    Rng rng(seed);
    const std::vector<int> prompt = random_tokens(D, 4, rng);
    SameDistribution s;
    s.seeds = 300;
    s.first_seed = seed;
    Sampling smp;  // temperature 1, no truncation
    SpeculateOptions so;
    so.gamma = 3;
    so.new_tokens = kDecode;
    so.sampling = smp;
    so.seed = seed;
    s.plain_text = plain_generate(target, prompt, kDecode, smp, seed);
    s.speculative_text = speculative_generate(target, draft, prompt, so).tokens;
    ContiguousCache c(D);
    const MatrixRM l = target.forward(prompt, c);
    s.p = sampling_distribution(l, l.rows() - 1, smp);
    // χ² cells: the tokens ranked by p, cut into 10 cells of about a tenth of the mass each (a
    // random model's p is nearly flat, so single tokens would be expected far fewer than 5 times).
    constexpr int kCells = 10;
    std::vector<int> order(std::size_t(D.vocab_size));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return s.p[std::size_t(a)] > s.p[std::size_t(b)]; });
    std::vector<int> cell_of(std::size_t(D.vocab_size), 0);
    std::vector<double> pc(1, 0.0);
    int first_rank = 1;
    for (std::size_t i = 0; i < order.size(); ++i) {
        cell_of[std::size_t(order[i])] = static_cast<int>(pc.size()) - 1;
        pc.back() += s.p[std::size_t(order[i])];
        const bool last = i + 1 == order.size();
        if (last || (pc.back() >= 1.0 / kCells && static_cast<int>(pc.size()) < kCells)) {
            s.cells.push_back(fmt::format("ranks {}-{}", first_rank, i + 1));
            first_rank = static_cast<int>(i) + 2;
            if (!last) pc.push_back(0.0);
        }
    }
    s.plain_counts.assign(pc.size(), 0);
    s.speculative_counts.assign(pc.size(), 0);
    so.new_tokens = 1;
    for (std::uint64_t k = 0; k < s.seeds; ++k) {
        const int a = plain_generate(target, prompt, 1, smp, seed + 1000 + k).front();
        so.seed = seed + 1000 + k;
        const int b = speculative_generate(target, draft, prompt, so).tokens.front();
        ++s.plain_counts[std::size_t(cell_of[std::size_t(a)])];
        ++s.speculative_counts[std::size_t(cell_of[std::size_t(b)])];
    }
    s.cell_p = pc;
    s.plain_p_value = fit_test(s.plain_counts, pc).p_value;
    s.speculative_p_value = fit_test(s.speculative_counts, pc).p_value;
    return s;
}

}  // namespace

const std::vector<PitfallInfo>& pitfall_list() { return kPitfalls; }

const PitfallInfo& find_pitfall(const std::string& where, const std::string& name) {
    for (const auto& p : kPitfalls)
        if (p.name == name) return p;
    std::string names;
    for (const auto& p : kPitfalls) names += (names.empty() ? "" : ", ") + p.name;
    throw InputError(where, name, "is not a pitfall (one of: " + names + ")");
}

std::size_t reusable_prefix(const std::vector<int>& cached, const std::vector<int>& now, bool by_length) {
    const std::size_t n = std::min(cached.size(), now.size());
    if (by_length) return n;
    std::size_t i = 0;
    while (i < n && cached[i] == now[i]) ++i;
    return i;
}

PitfallResult run_pitfall(const std::string& name, const Transformer& m, std::uint64_t seed) {
    PitfallResult r;
    r.info = find_pitfall("NAME", name);
    if (name == "gib-as-gb") gib_as_gb(r);
    else if (name == "mean-length") mean_length(r);
    else if (name == "threshold-accept") threshold_accept(r, seed);
    else if (name == "same-distribution") {
        r.same = same_distribution(m, seed);
        r.caught_by = "χ² of first tokens over many seeds against p (one seed's text proves nothing)";
    } else {
        model_pitfall(r, m, seed);
    }
    return r;
}

}  // namespace inferlab::model
