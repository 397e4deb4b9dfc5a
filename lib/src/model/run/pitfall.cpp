#include "inferlab/model/run/pitfall.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/weights.hpp"
#include "inferlab/model/run/compare.hpp"
#include "inferlab/model/run/speculative.hpp"

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
constexpr double kThreshold = 0.3;  // threshold-accept: the shortcut keeps a draft when q(x) ≥ this
constexpr int kChunk = 4;    // top-left-mask: new tokens arriving in one step after the prompt

// Every prose field is a msgid (N_): the text output translates it, JSON keeps the English.
const std::vector<PitfallInfo> kPitfalls = {
    {"stale-cache", N_("a prompt edited in the middle, its old cache kept"),
     N_("first document, Figure 5 (the cache depends on the request prefix)"),
     {N_("the cache is reused for every position the new prompt covers, without comparing tokens"), {}}, true},
    {"wrong-layer-cache", N_("one layer's cache fed to another"),
     N_("first document, Figure 5 (layer 2's K/V come from layer 2's input)"),
     {N_("every decode step reads layer 0's K/V in every layer"), {}}, true},
    {"top-left-mask", N_("a top-left causal mask for new tokens after history"),
     N_("first document, §1.3.1 (the mask must use the real history offset)"),
     {N_("row r of a step sees positions ≤ r, as if the step began at position 0"), {}}, true},
    {"position-restart", N_("RoPE positions that restart at 0 in decode"),
     N_("first document, §4.3 (positions must continue)"),
     {N_("each step rotates its rows by their offset within the step (0 for one new token)"), {}}, true},
    {"skipped-cache-update", N_("one layer's cache not extended in decode"),
     N_("first document, §4.3 (cache length +1 per layer per step)"),
     {N_("each decode step writes no K/V into the last layer's cache and leaves its length as it was"), {}}, true},
    {"unmasked-padding", N_("a batch of two lengths padded and not masked"),
     N_("first document, §4.3 (padding must stay masked)"),
     {N_("the short row's attention also sees its {0} left-padding positions"), {std::to_string(kPad)}}, true},
    {"cache-then-window", N_("a window model's cache keeps old positions, all attended"),
     N_("first document, §1 (sliding windows change the memory formula) and §4.3"),
     {N_("the model has a window of {0}; the cache keeps every position and decode attends to all"), {std::to_string(kWindow)}}, true},
    {"window-on-dense", N_("a dense model's cache that drops old positions"),
     N_("first document, §1 (sliding windows change the memory formula) and §4.3"),
     {N_("the model is dense; the cache keeps only the last {0} positions and decode attends to those"), {std::to_string(kWindow)}}, true},
    {"gib-as-gb", N_("GiB added as GB"), N_("first document, §2.1.3 (1 GiB = 2^30 bytes)"),
     {N_("bytes divided by 10^9 and labelled GiB"), {}}, false, false},
    {"mean-length", N_("an average length used for a peak"), N_("first document, §2.1.2"),
     {N_("blocks for B requests of the mean length instead of each request's own"), {}}, false, false},
    {"threshold-accept", N_("a threshold that accepts confident drafts"),
     N_("first document, §3.1.2 (acceptance and the residual)"),
     {N_("keep a draft whenever q(x) ≥ {0}, else sample from p, instead of min(1, p/q)"), {fmt::format("{}", kThreshold)}}, false},
    {"same-distribution", N_("same distribution, different text"), N_("first document, §3.1.2 (acceptance and the residual)"),
     {N_("none: speculative and plain sampling, one seed each, then many seeds"), {}}, true},
};

// One call of a path: truncate the caches (keep ≥ 0), then feed each sequence its tokens in one
// forward pass (a batch when there are several); sequence s's logits must match the no-cache
// logits of truths[s][truth].
struct Call {
    int keep = -1;
    std::vector<std::vector<int>> tokens;  // [sequences][tokens of this call]
    ForwardOptions opt;
    int truth = 0;
    bool mask_padding = false;  // each row's attention starts at its sequence's first real position
};

struct Truth {
    std::vector<int> tokens;  // unpadded
    MatrixRM logits;          // [tokens, vocab] without a cache
};

struct PathOutcome {
    std::vector<std::vector<Eigen::VectorXf>> logits;  // [sequence][unpadded position], the last call's that fed it
    std::optional<int> failed[4];                      // per check: first step it fired
    std::optional<int> failed_pos[4];
};

enum CheckId { kCacheLength, kPositions, kPadding, kLogits };

}  // namespace

std::vector<CheckOutcome> blank_pitfall_checks() {
    return {{"cache_length", N_("every layer's cache grows by the step's tokens (+1 per decode step)"), {}, {}, false},
            {"positions", N_("RoPE positions continue from the cache's length"), {}, {}, false},
            {"padding", N_("no row's attention reaches a padding position"), {}, {}, false},
            {"logits", N_("max |logit − no-cache logit| within the tolerance"), {}, {}, false}};
}

namespace {

// Runs one path, each sequence on a fresh contiguous cache; sequence s begins with pads[s]
// padding positions (fed with its first call, no logits kept). The four §4.3 checks run on every
// call, on what the forward pass actually does (the positions RoPE and the mask use, each layer's
// cache length before and after, each row's logits).
PathOutcome run_path(const Transformer& m, const std::vector<Call>& calls, const std::vector<std::vector<Truth>>& truths,
                     const std::vector<int>& pads) {
    const Dims& D = m.dims();
    const std::size_t n_seq = truths.size();
    std::vector<std::unique_ptr<ContiguousCache>> caches;
    PathOutcome out;
    for (std::size_t s = 0; s < n_seq; ++s) {
        // At most its padding and every token the calls feed it (truncations only shorten it).
        std::size_t fed = std::size_t(pads[s]);
        for (const Call& c : calls) fed += c.tokens[s].size();
        caches.push_back(std::make_unique<ContiguousCache>(D, cpu_backend(), cache_positions_for(fed)));
        out.logits.emplace_back(truths[s].back().tokens.size());
    }
    auto fire = [&](int id, int step, int pos) {
        if (!out.failed[id]) out.failed[id] = step, out.failed_pos[id] = pos;
    };
    for (std::size_t c_i = 0; c_i < calls.size(); ++c_i) {
        const Call& c = calls[c_i];
        const int step = static_cast<int>(c_i);
        std::vector<Row> rows;
        std::vector<int> pos, seq_of, visible;
        for (std::size_t s = 0; s < n_seq; ++s) {
            if (c.keep >= 0) caches[s]->truncate(c.keep);
            const int start = caches[s]->length(0);
            for (std::size_t i = 0; i < c.tokens[s].size(); ++i) {
                rows.push_back({c.tokens[s][i], caches[s].get()});
                pos.push_back(start + static_cast<int>(i));
                seq_of.push_back(static_cast<int>(s));
                visible.push_back(c.mask_padding ? pads[s] : 0);
            }
        }
        ForwardOptions opt = c.opt;
        if (c.mask_padding) opt.visible_from = &visible;
        // The step's first real position of sequence 0, where a step-wide check is reported.
        const int first = std::max(0, pos.front() - pads[std::size_t(seq_of.front())]);
        // §4.3: positions continue.
        if (rope_positions(rows, pos, opt.pitfall) != pos) fire(kPositions, step, first);
        // §4.3: padding masked (row i sees from max(its window, its visible_from) to its mask position).
        const std::vector<int> seen = mask_positions(rows, pos, opt.pitfall);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const int pad = pads[std::size_t(seq_of[i])];
            int lo = opt.window > 0 ? std::max(0, seen[i] + 1 - opt.window) : 0;
            if (opt.visible_from) lo = std::max(lo, visible[i]);
            if (pos[i] >= pad && lo < pad) fire(kPadding, step, pos[i] - pad);
        }
        std::vector<std::vector<int>> before(n_seq);
        for (std::size_t s = 0; s < n_seq; ++s)
            for (int l = 0; l < D.n_layers; ++l) before[s].push_back(caches[s]->length(l));
        const MatrixRM logits = m.forward(rows, opt);
        // §4.3: cache length + the step's tokens, in every layer of every sequence.
        for (std::size_t s = 0; s < n_seq; ++s)
            for (int l = 0; l < D.n_layers; ++l)
                if (caches[s]->length(l) != before[s][std::size_t(l)] + static_cast<int>(c.tokens[s].size()))
                    fire(kCacheLength, step, first);
        // §4.3: the largest absolute logit error against the no-cache path.
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const std::size_t s = std::size_t(seq_of[i]);
            if (pos[i] < pads[s]) continue;
            const int p = pos[i] - pads[s];
            const Truth& t = truths[s][std::size_t(c.truth)];
            const Eigen::VectorXf row = logits.row(Eigen::Index(i)).transpose();
            const double err = max_abs_diff(row, t.logits.row(p).transpose());
            if (!std::isfinite(err) || err > kTolerance) fire(kLogits, step, p);
            if (std::size_t(p) < out.logits[s].size()) out.logits[s][std::size_t(p)] = row;
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
    if (d.vocab_size < 2)
        throw InputError("vocab_size", std::to_string(d.vocab_size),
                         N_("must be at least 2 for the pitfalls (token 0 is kept for padding)"));
    std::vector<int> t;
    // Token 0 is kept for padding.
    for (int i = 0; i < n; ++i) t.push_back(1 + static_cast<int>(rng.below(std::uint64_t(d.vocab_size - 1))));
    return t;
}

// The prompt followed by `n` greedy tokens of the correct cached model (forward options `opt`).
std::vector<int> greedy_continue(const Transformer& m, std::vector<int> tokens, int n, const ForwardOptions& opt) {
    ContiguousCache c(m.dims(), cpu_backend(), cache_positions_for(tokens.size() + std::size_t(std::max(n, 0))));
    MatrixRM l = m.forward(tokens, c, opt);
    for (int i = 0; i < n; ++i) {
        Eigen::Index next = 0;
        l.row(l.rows() - 1).maxCoeff(&next);
        tokens.push_back(static_cast<int>(next));
        if (i + 1 < n) l = m.forward(std::vector<int>{static_cast<int>(next)}, c, opt);
    }
    return tokens;
}

// One sequence: prefill [0, from) in one call, then one call per token (or a chunk first, for top-left-mask).
std::vector<Call> plan(const std::vector<int>& tokens, int from, int chunk, const ForwardOptions& prefill,
                       const ForwardOptions& decode) {
    std::vector<Call> calls;
    calls.push_back({-1, {std::vector<int>(tokens.begin(), tokens.begin() + from)}, prefill, 0, false});
    std::size_t i = std::size_t(from);
    if (chunk > 1) {
        calls.push_back({-1, {std::vector<int>(tokens.begin() + from, tokens.begin() + from + chunk)}, decode, 0, false});
        i += std::size_t(chunk);
    }
    for (; i < tokens.size(); ++i) calls.push_back({-1, {{tokens[i]}}, decode, 0, false});
    return calls;
}

double max_err(const std::vector<Eigen::VectorXf>& got, const Truth& truth) {
    double e = 0;
    for (std::size_t p = 0; p < got.size(); ++p)
        e = std::max(e, max_abs_diff(got[p], truth.logits.row(Eigen::Index(p)).transpose()));
    return e;
}

// Fills r's per-position table, errors and checks from sequence `shown` of both paths.
void compare(PitfallResult& r, const PathOutcome& good, const PathOutcome& bad, const Truth& truth, std::size_t shown = 0) {
    r.tolerance = kTolerance;
    for (std::size_t p = 0; p < truth.tokens.size(); ++p) {
        PositionDiff d;
        d.pos = static_cast<int>(p);
        d.token = truth.tokens[p];
        const Eigen::VectorXf want = truth.logits.row(Eigen::Index(p)).transpose();
        d.correct_err = max_abs_diff(good.logits[shown][p], want);
        d.broken_err = max_abs_diff(bad.logits[shown][p], want);
        d.correct_argmax = argmax(good.logits[shown][p]);
        d.broken_argmax = argmax(bad.logits[shown][p]);
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
    // A check's name is an identifier (printed as it is); "none" is a word.
    r.caught_by = best ? Prose{"{0}", {r.checks[std::size_t(*best)].name}} : Prose{N_("none"), {}};
}

Truth truth_of(const Transformer& m, std::vector<int> tokens, const ForwardOptions& opt = {}) {
    Truth t;
    t.logits = logits_without_cache(m, tokens, opt);
    t.tokens = std::move(tokens);
    return t;
}

std::string join(const std::vector<int>& v, const std::string& between = ",") {
    std::string out;
    for (int x : v) {
        if (!out.empty()) out += between;
        out += std::to_string(x);
    }
    return out;
}

// --explain for every model pitfall: how the error is measured, and what each path gave.
void model_derivation(PitfallResult& r) {
    auto& e = r.derivation;
    e.push_back({N_("ground truth: logits_nocache(t) = the forward pass over tokens 0..t in a fresh cache, last row"), {}});
    e.push_back({N_("err(t) = max over the vocabulary v of |logit_path(t, v) − logits_nocache(t, v)|"), {}});
    e.push_back(r.correct_max_err <= r.tolerance
                    ? Prose{N_("correct path: max_t err(t) = {0} ≤ tolerance {1}: agrees with the ground truth"),
                            {fmt::format("{:.3e}", r.correct_max_err), fmt::format("{:.0e}", r.tolerance)}}
                    : Prose{N_("correct path: max_t err(t) = {0} > tolerance {1}: DISAGREES"),
                            {fmt::format("{:.3e}", r.correct_max_err), fmt::format("{:.0e}", r.tolerance)}});
    // The deviation (the last placeholder) is a sentence of its own, said in the same language.
    e.push_back(r.first_wrong_pos
                    ? Prose{N_("broken path ({2}): max_t err(t) = {0}, past the tolerance from position {1}"),
                            {fmt::format("{:.3e}", r.broken_max_err), std::to_string(*r.first_wrong_pos)}, {}, {r.info.deviation}}
                    : Prose{N_("broken path ({1}): max_t err(t) = {0}, never past the tolerance"),
                            {fmt::format("{:.3e}", r.broken_max_err)}, {}, {r.info.deviation}});
    for (const auto& c : r.checks)
        e.push_back(c.broken_step ? Prose{N_("check {0} ({1}): fires on the broken path at step {2}, position {3}"),
                                          {c.name, c.rule, std::to_string(*c.broken_step), std::to_string(*c.broken_position)},
                                          {1}}
                                  : Prose{N_("check {0} ({1}): quiet on the broken path"), {c.name, c.rule}, {1}});
    // A check's name is printed as it is; "none" is a word, translated.
    const bool named = r.caught_by.msgid == "{0}";
    e.push_back({N_("caught by: {0} (the first check to fire; on a tie, the structural one)"),
                 {named ? r.caught_by.text() : r.caught_by.msgid}, named ? std::vector<std::size_t>{} : std::vector<std::size_t>{0}});
}

void model_inputs(PitfallResult& r, const Dims& D, std::uint64_t seed, bool with_tolerance = true) {
    r.inputs.insert(r.inputs.begin(),
                    {{N_("model"),
                      {N_("L = {0}, H_q = {1}, H_kv = {2}, d = {3}, vocab {4}"),
                       {std::to_string(D.n_layers), std::to_string(D.n_heads), std::to_string(D.n_kv_heads),
                        std::to_string(D.head_dim()), std::to_string(D.vocab_size)}}},
                     {N_("sample seed"), {"{0}", {std::to_string(seed)}}}});
    if (with_tolerance)
        r.inputs.push_back({N_("tolerance"), {N_("{0} absolute on logits"), {fmt::format("{:.0e}", kTolerance)}}});
}

// ---- the model pitfalls ----
// unmasked-padding: a real batch of two sequences, the second 3 tokens shorter and left-padded to
// the first's length, in one forward pass per step. The correct path masks each row's attention
// from its first real position (ForwardOptions::visible_from); the broken one does not.
void unmasked_padding(PitfallResult& r, const Transformer& m, const std::vector<int>& prompt) {
    const std::vector<int> short_prompt(prompt.begin(), prompt.begin() + (kPrompt - kPad));
    const std::vector<Truth> a{truth_of(m, greedy_continue(m, prompt, kDecode, {}))};
    const std::vector<Truth> b{truth_of(m, greedy_continue(m, short_prompt, kDecode, {}))};
    auto path = [&](bool masked) {
        std::vector<int> padded(kPad, 0);
        padded.insert(padded.end(), short_prompt.begin(), short_prompt.end());
        // [2 sequences] × [8 positions]: one rectangle, the short one left-padded with token 0.
        std::vector<Call> calls{{-1, {prompt, padded}, {}, 0, masked}};
        for (int i = 0; i < kDecode; ++i)
            calls.push_back({-1, {{a[0].tokens[std::size_t(kPrompt + i)]}, {b[0].tokens[std::size_t(kPrompt - kPad + i)]}}, {}, 0, masked});
        return run_path(m, calls, {a, b}, {0, kPad});
    };
    const PathOutcome good = path(true), bad = path(false);
    r.prompt_len = kPrompt - kPad;
    compare(r, good, bad, b[0], 1);
    r.other_row_correct_err = max_err(good.logits[0], a[0]);
    r.other_row_broken_err = max_err(bad.logits[0], a[0]);
    r.tokens = b[0].tokens;
    r.inputs = {{N_("batch row 0"), {N_("prompt {0} ({1} tokens), no padding"), {join(prompt), std::to_string(kPrompt)}}},
                {N_("batch row 1"),
                 {N_("prompt {0} ({1} tokens), left-padded with {2} pads (token 0)"),
                  {join(short_prompt), std::to_string(kPrompt - kPad), std::to_string(kPad)}}},
                {N_("decode"), {N_("{0} greedy tokens per row, both rows in each forward pass"), {std::to_string(kDecode)}}}};
}

void stale_cache(PitfallResult& r, const Transformer& m, const std::vector<int>& prompt) {
    // The first prompt is cached; the user then edits its token 3 and asks again.
    std::vector<int> edited = prompt;
    edited[3] = edited[3] % (m.dims().vocab_size - 1) + 1;
    const Truth before = truth_of(m, prompt);
    const Truth after = truth_of(m, greedy_continue(m, edited, kDecode, {}));
    auto path = [&](bool by_length) {
        const int keep = static_cast<int>(reusable_prefix(prompt, edited, by_length));
        std::vector<Call> calls{{-1, {prompt}, {}, 0, false}};
        // The edited prompt from the first position the cache is not trusted for.
        if (keep < kPrompt)
            calls.push_back({keep, {std::vector<int>(after.tokens.begin() + keep, after.tokens.begin() + kPrompt)}, {}, 1, false});
        for (std::size_t i = kPrompt; i < after.tokens.size(); ++i) calls.push_back({-1, {{after.tokens[i]}}, {}, 1, false});
        return run_path(m, calls, {{before, after}}, {0});
    };
    r.prompt_len = kPrompt;
    compare(r, path(false), path(true), after);
    r.tokens = after.tokens;
    r.inputs = {{N_("cached prompt"), {"{0}", {join(prompt)}}},
                {N_("edited prompt"), {N_("{0} (token 3 changed)"), {join(edited)}}},
                {N_("decode"), {N_("{0} greedy tokens"), {std::to_string(kDecode)}}}};
}

void model_pitfall(PitfallResult& r, const Transformer& m, std::uint64_t seed) {
    const Dims& D = m.dims();
    Rng rng(seed);
    const std::vector<int> prompt = random_tokens(D, kPrompt, rng);
    const std::string& n = r.info.name;
    if (n == "stale-cache") stale_cache(r, m, prompt);
    else if (n == "unmasked-padding") unmasked_padding(r, m, prompt);
    else {
        // One sequence: a prefill, then decode steps (a chunk first for top-left-mask). `plain` is
        // the model as it is (the truth's options), `broken` the prefill's and `decode_broken`
        // the decode steps' of the broken path.
        ForwardOptions plain, broken, decode_broken;
        int chunk = 0, prefill = kPrompt;
        if (n == "cache-then-window" || n == "window-on-dense") {
            // A prefill shorter than the window, so only the decode steps can differ.
            prefill = kWindow - 2;
            if (n == "cache-then-window") plain.window = broken.window = kWindow;
            else decode_broken.window = kWindow;
        } else if (n == "wrong-layer-cache") {
            broken.pitfall = decode_broken.pitfall = Pitfall::WrongLayerCache;
        } else if (n == "top-left-mask") {
            broken.pitfall = decode_broken.pitfall = Pitfall::TopLeftMask;
            chunk = kChunk;
            prefill = kPrompt - kChunk;
        } else if (n == "position-restart") {
            broken.pitfall = decode_broken.pitfall = Pitfall::PositionRestart;
        } else if (n == "skipped-cache-update") {
            broken.pitfall = decode_broken.pitfall = Pitfall::SkippedCacheUpdate;
        } else {
            throw std::logic_error("model_pitfall: " + n);
        }
        r.prompt_len = prefill + chunk;
        const std::vector<int> p(prompt.begin(), prompt.begin() + r.prompt_len);
        const Truth t = truth_of(m, greedy_continue(m, p, kDecode, plain), plain);
        compare(r, run_path(m, plan(t.tokens, prefill, chunk, plain, plain), {{t}}, {0}),
                run_path(m, plan(t.tokens, prefill, chunk, broken, decode_broken), {{t}}, {0}), t);
        r.tokens = t.tokens;
        r.inputs = {{N_("prompt"), {N_("{0} ({1} tokens)"), {join(p), std::to_string(r.prompt_len)}}},
                    {N_("steps"), chunk ? Prose{N_("prefill of {0}, one chunk of {1} new tokens, then {2} decode steps"),
                                                {std::to_string(prefill), std::to_string(chunk), std::to_string(kDecode - 1)}}
                                        : Prose{N_("prefill of {0}, then {1} decode steps of one token"),
                                                {std::to_string(prefill), std::to_string(kDecode)}}}};
        if (plain.window)
            r.inputs.push_back({N_("sliding window"), {N_("{0} positions (the model's)"), {std::to_string(plain.window)}}});
        if (decode_broken.window && !plain.window)
            r.inputs.push_back({N_("sliding window"),
                                {N_("none: the model is dense; the broken cache keeps {0}"), {std::to_string(decode_broken.window)}}});
    }
    model_inputs(r, D, seed);
    model_derivation(r);
}

// ---- the calculators ----
void gib_as_gb(PitfallResult& r) {
    // §2.1.3's example: L = 32, B = 1, S = 8192, H_kv = 8, d = 128, bf16.
    constexpr std::uint64_t L = 32, S = 8192, H = 8, d = 128, bits = 16;
    const std::uint64_t one = kv_bytes_uniform(L, 1, S, H, d, bits), eight = kv_bytes_uniform(L, 8, S, H, d, bits);
    const double gib = static_cast<double>(std::uint64_t{1} << 30), gb = 1e9;
    r.inputs = {{N_("model"), {N_("L = {0}, H_kv = {1}, d = {2}, b = {3} bits (bf16)"),
                               {std::to_string(L), std::to_string(H), std::to_string(d), std::to_string(bits)}}},
                {N_("requests"), {N_("B = 1 and B = 8, S = {0} tokens each"), {std::to_string(S)}}}};
    r.quantities = {{{N_("bytes of one request"), {}}, double(one), double(one), "B"},
                    {{N_("one request"), {}}, double(one) / gib, double(one) / gb, "GiB"},
                    {{N_("eight requests"), {}}, double(eight) / gib, double(eight) / gb, "GiB"},
                    {{N_("eight requests back in bytes"), {}}, double(eight), double(eight) / gb * gib, "B"}};
    r.derivation = {
        {N_("bytes = 2·L·B·S·H_kv·d·b/8 = 2·{0}·1·{1}·{2}·{3}·{4}/8 = {5} B"),
         {std::to_string(L), std::to_string(S), std::to_string(H), std::to_string(d), std::to_string(bits), std::to_string(one)}},
        {N_("correct: {0} B = {1} × 2^30 B = {1} GiB; eight requests {2} B = {3} × 2^30 B = {3} GiB"),
         {std::to_string(one), fmt::format("{:g}", double(one) / gib), std::to_string(eight),
          fmt::format("{:g}", double(eight) / gib)}},
        {N_("shortcut: {0} B / 10^9 = {1}, labelled GiB; eight requests {2} \"GiB\""),
         {std::to_string(one), fmt::format("{:.10g}", double(one) / gb), fmt::format("{:.10g}", double(eight) / gb)}},
        {N_("back in bytes: {0} \"GiB\" × 2^30 = {1} B, not {2} B ({3}% too many)"),
         {fmt::format("{:.10g}", double(eight) / gb), fmt::format("{:.2f}", double(eight) / gb * gib), std::to_string(eight),
          fmt::format("{:.3g}", (gib / gb - 1) * 100)}}};
    r.caught_by = {N_("units: the shown value times the unit it names gives back the byte count"), {}};
}

void mean_length(PitfallResult& r) {
    // Four requests of 1, 17, 33 and 49 tokens (mean 25) in 16-token blocks, §2.1.3's model.
    constexpr std::uint64_t block = 16, L = 32, H = 8, d = 128, bits = 16;
    const KvSpec spec = uniform_kv(L, H, d, bits);
    const std::vector<std::uint64_t> lens{1, 17, 33, 49};
    std::uint64_t sum = 0;
    for (auto s : lens) sum += s;
    const std::uint64_t mean = sum / lens.size();
    const PagedUsage each = kv_paged(spec, lens, block), avg = kv_paged(spec, std::vector<std::uint64_t>(lens.size(), mean), block);
    std::vector<int> lens_i(lens.begin(), lens.end()), blocks_i(each.blocks_per_request.begin(), each.blocks_per_request.end());
    r.inputs = {{N_("model"), {N_("L = {0}, H_kv = {1}, d = {2}, b = {3} bits (bf16)"),
                               {std::to_string(L), std::to_string(H), std::to_string(d), std::to_string(bits)}}},
                {N_("request lengths"), {N_("{0} tokens (B = {1})"), {join(lens_i), std::to_string(lens.size())}}},
                {N_("block size"), {N_("{0} tokens, {1} B per block"), {std::to_string(block), std::to_string(each.block_bytes)}}}};
    r.quantities = {{{N_("tokens"), {}}, double(sum), double(mean * lens.size()), N_("tokens")},
                    {{N_("blocks"), {}}, double(each.total_blocks), double(avg.total_blocks), N_("blocks")},
                    {{N_("allocated"), {}}, double(each.allocated_bytes), double(avg.allocated_bytes), "B"}};
    r.derivation = {
        {N_("correct: Σ_i ceil(S_i/{0}) = {1} = {2} blocks (each request's own)"),
         {std::to_string(block), join(blocks_i, " + "), std::to_string(each.total_blocks)}},
        {N_("shortcut: mean S = {0}/{1} = {2} tokens; B·ceil({2}/{3}) = {1}·{4} = {5} blocks"),
         {std::to_string(sum), std::to_string(lens.size()), std::to_string(mean), std::to_string(block),
          std::to_string(avg.blocks_per_request.front()), std::to_string(avg.total_blocks)}},
        {N_("bytes = blocks × {0} B: {1} B against {2} B ({3} B short)"),
         {std::to_string(each.block_bytes), std::to_string(each.allocated_bytes), std::to_string(avg.allocated_bytes),
          std::to_string(each.allocated_bytes - avg.allocated_bytes)}}};
    r.caught_by = {N_("sum each request's own blocks: the pool needs more than B × blocks(mean)"), {}};
}

void threshold_accept(PitfallResult& r, std::uint64_t seed) {
    // spec-accept's default pair: the target p and a draft q that is confident where p is not.
    const std::vector<double> p{0.5, 0.3, 0.2}, q{0.2, 0.3, 0.5};
    const double tau = kThreshold;
    constexpr std::uint64_t kDraws = 20000;
    const Acceptance<double> exact = acceptance(p, q);
    const std::vector<double> shortcut = threshold_shortcut_distribution(p, q, tau);
    auto list = [](const std::vector<double>& v) {
        std::string out;
        for (double x : v) out += fmt::format("{}{:g}", out.empty() ? "" : ", ", x);
        return out;
    };
    r.inputs = {{N_("target p"), {"{0}", {list(p)}}}, {N_("draft q"), {"{0}", {list(q)}}},
                {N_("threshold τ"), {"{0}", {fmt::format("{:g}", tau)}}},
                {N_("draws"), {N_("{0} (sample seed {1})"), {std::to_string(kDraws), std::to_string(seed)}}}};
    for (std::size_t x = 0; x < p.size(); ++x)
        r.quantities.push_back({{"P(token {0}), p = {1}", {std::to_string(x), fmt::format("{:g}", p[x])}}, exact.output[x], shortcut[x], ""});
    double kept = 0;
    for (std::size_t x = 0; x < q.size(); ++x) kept += q[x] >= tau ? q[x] : 0;
    r.derivation = {
        {N_("correct: out(x) = min(p, q)(x) + (1 − Σ min(p, q))·[p − q]₊(x)/Σ[p − q]₊ with Σ min(p, q) = {0}: out = ({1})"),
         {fmt::format("{:g}", exact.accept_prob), list(exact.output)}},
        {N_("shortcut: out(x) = q(x)·[q(x) ≥ τ] + (1 − Σ q·[q ≥ τ])·p(x) with Σ q·[q ≥ τ] = {0}: out = ({1})"),
         {fmt::format("{:g}", kept), list(shortcut)}},
        {N_("χ² of each rule's sampled tokens against p: a small p-value says the tokens do not follow p"), {}}};
    const SimulationCounts sim = simulate_speculative(p, q, tau, kDraws, seed);
    r.fit_p_correct = fit_test(sim.speculative, p).p_value;
    r.fit_p_broken = fit_test(sim.threshold_shortcut, p).p_value;
    r.caught_by = {N_("χ² of sampled tokens against p ({0} draws)"), {std::to_string(kDraws)}};
}

// ---- same distribution, different text ----
SameDistribution same_distribution(const Transformer& target, std::uint64_t seed) {
    const Dims& D = target.dims();
    auto draft_w = derive_draft(target.weights(), std::max(1, D.n_layers / 2), 0.05, seed + 1);
    Transformer draft(*draft_w);
    Rng rng(seed);
    const std::vector<int> prompt = random_tokens(D, 4, rng);
    SameDistribution s;
    s.prompt = prompt;
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
    ContiguousCache c(D, cpu_backend(), cache_positions_for(prompt.size()));
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
            s.cells.push_back({N_("ranks {0}-{1}"), {std::to_string(first_rank), std::to_string(i + 1)}});
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
    throw InputError(where, name, N_("is not a pitfall (one of: {0})"), {names});
}

std::size_t reusable_prefix(const std::vector<int>& cached, const std::vector<int>& now, bool by_length) {
    const std::size_t n = std::min(cached.size(), now.size());
    if (by_length) return n;
    std::size_t i = 0;
    while (i < n && cached[i] == now[i]) ++i;
    return i;
}

PitfallResult run_pitfall(const std::string& name, const Transformer* m, std::uint64_t seed) {
    PitfallResult r;
    r.info = find_pitfall("NAME", name);
    if (r.info.uses_model && !m) throw std::logic_error("run_pitfall: " + name + " needs a model");
    if (name == "gib-as-gb") gib_as_gb(r);
    else if (name == "mean-length") mean_length(r);
    else if (name == "threshold-accept") threshold_accept(r, seed);
    else if (name == "same-distribution") {
        r.same = same_distribution(*m, seed);
        r.caught_by = {N_("χ² of first tokens over many seeds against p (one seed's text proves nothing)"), {}};
        r.inputs = {{N_("prompt"), {"{0}", {join(r.same->prompt)}}},
                    {N_("draft"), {N_("the target's first half of layers, weights × (1 + 0.05·N(0,1))"), {}}}};
        model_inputs(r, m->dims(), seed, false);
        r.derivation = {{N_("plain: sample each token from p = softmax(logits/T); speculative: draft γ = 3 tokens from q, "
                            "keep each with min(1, p/q), else sample the residual [p − q]₊"),
                         {}},
                        {N_("one seed: the two use their random numbers differently, so the texts differ"), {}},
                        {N_("{0} seeds: the first token's counts in {1} cells of p's mass, χ² against p: plain p-value {2}, "
                            "speculative {3}"),
                         {std::to_string(r.same->seeds), std::to_string(r.same->cells.size()),
                          fmt::format("{:.3g}", r.same->plain_p_value), fmt::format("{:.3g}", r.same->speculative_p_value)}}};
    } else {
        model_pitfall(r, *m, seed);
    }
    return r;
}

}  // namespace inferlab::model
