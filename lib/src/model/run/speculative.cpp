#include "inferlab/model/run/speculative.hpp"

#include <algorithm>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/spec.hpp"

namespace inferlab::model {

std::vector<double> sampling_distribution(const MatrixRM& logits, Eigen::Index row, const Sampling& s) {
    if (s.greedy) {
        std::vector<double> d(static_cast<std::size_t>(logits.cols()), 0.0);
        Eigen::Index best = 0;
        logits.row(row).maxCoeff(&best);
        d[static_cast<std::size_t>(best)] = 1.0;
        return d;
    }
    std::vector<double> l(logits.row(row).data(), logits.row(row).data() + logits.cols());
    return inferlab::sampling_distribution(l, s.temperature, s.top_k, s.top_p);
}

namespace {

int draw(const std::vector<double>& d, Rng& rng) { return static_cast<int>(rng.categorical(d)); }

}  // namespace

SpeculateResult speculative_generate(const Transformer& target, const Transformer& draft, const std::vector<int>& prompt,
                                     const SpeculateOptions& opt) {
    if (opt.gamma < 1 || opt.gamma > 64) throw InputError("γ (drafts per round)", std::to_string(opt.gamma), N_("must be between 1 and 64"));
    if (prompt.empty()) throw InputError("prompt", "", N_("must hold at least one token"));
    if (target.dims().vocab_size != draft.dims().vocab_size)
        throw InputError("draft vocabulary", std::to_string(draft.dims().vocab_size),
                         N_("must equal the target's {0}"), {std::to_string(target.dims().vocab_size)});
    const int need = static_cast<int>(prompt.size()) + opt.new_tokens + opt.gamma + 1;
    if (need > target.dims().seq_len || need > draft.dims().seq_len)
        throw InputError("new tokens", std::to_string(opt.new_tokens),
                         N_("with the prompt and γ + 1 lookahead exceeds the maximum sequence length"));
    Rng rng(opt.seed);
    SpeculateResult res;
    res.judged.assign(std::size_t(opt.gamma), 0);
    res.accepted.assign(std::size_t(opt.gamma), 0);
    res.predicted_accept.assign(std::size_t(opt.gamma), 0.0);
    ContiguousCache tc(target.dims(), cpu_backend(), need), dc(draft.dims(), cpu_backend(), need);  // the positions checked above
    const ForwardOptions& draft_fwd = opt.forward;
    // Invariant between rounds: both caches hold every committed token but the last ("pending").
    std::vector<int> prefix(prompt.begin(), prompt.end() - 1);
    if (!prefix.empty()) {
        target.forward(prefix, tc, opt.forward);
        draft.forward(prefix, dc, draft_fwd);
        ++res.target_passes;
        ++res.draft_passes;
    }
    int pending = prompt.back();
    std::vector<int> draft_feed = {pending};  // tokens the draft cache still lacks, then pending
    const int gamma = opt.gamma;
    while (static_cast<int>(res.tokens.size()) < opt.new_tokens) {
        ++res.rounds;
        const int base = tc.length(0);  // committed tokens in the caches
        // 1. Draft γ tokens, one forward each.
        std::vector<int> drafts;
        std::vector<std::vector<double>> q;
        std::vector<int> feed = draft_feed;
        for (int i = 0; i < gamma; ++i) {
            MatrixRM lq = draft.forward(feed, dc, draft_fwd);
            ++res.draft_passes;
            q.push_back(sampling_distribution(lq, lq.rows() - 1, opt.sampling));
            drafts.push_back(draw(q.back(), rng));
            feed = {drafts.back()};
        }
        // 2. The target scores pending + all drafts in one pass: γ + 1 distributions.
        std::vector<int> verify = {pending};
        verify.insert(verify.end(), drafts.begin(), drafts.end());
        MatrixRM lp = target.forward(verify, tc, opt.forward);
        ++res.target_passes;
        // 3. Accept left to right.
        int k = 0;
        int next = -1;
        for (; k < gamma; ++k) {
            std::vector<double> p = sampling_distribution(lp, k, opt.sampling);
            const std::size_t x = static_cast<std::size_t>(drafts[std::size_t(k)]);
            res.judged[std::size_t(k)]++;
            Acceptance<double> a = acceptance(p, q[std::size_t(k)]);
            res.predicted_accept[std::size_t(k)] += a.accept_prob;
            bool keep = false;
            if (opt.rule == AcceptRule::Exact) {
                keep = rng.uniform() * q[std::size_t(k)][x] < p[x];
                if (!keep) next = a.residual_empty ? static_cast<int>(x) : draw(a.residual, rng);
            } else {
                keep = q[std::size_t(k)][x] >= opt.threshold;
                if (!keep) next = draw(p, rng);
            }
            if (!keep) break;
            res.accepted[std::size_t(k)]++;
        }
        if (k == gamma) next = draw(sampling_distribution(lp, gamma, opt.sampling), rng);  // the bonus token
        res.drafts_discarded += std::uint64_t(gamma - std::min(gamma, k + 1));
        res.produced += std::uint64_t(k) + 1;  // the accepted drafts, then the residual's or the bonus token
        // 4. Commit: the accepted drafts, then `next`; roll both caches back to the accepted prefix.
        for (int i = 0; i < k && static_cast<int>(res.tokens.size()) < opt.new_tokens; ++i)
            res.tokens.push_back(drafts[std::size_t(i)]);
        if (static_cast<int>(res.tokens.size()) < opt.new_tokens) res.tokens.push_back(next);
        tc.truncate(base + 1 + k);  // pending + k accepted drafts stay cached
        const int draft_has = dc.length(0);
        const int keep_draft = std::min(draft_has, base + 1 + k);
        dc.truncate(keep_draft);
        draft_feed.clear();
        // When all γ drafts were accepted the draft never fed the last one: feed it next round.
        for (int i = keep_draft - base - 1; i < k; ++i) draft_feed.push_back(drafts[std::size_t(i)]);
        pending = next;
        draft_feed.push_back(pending);
    }
    return res;
}

std::vector<int> plain_generate(const Transformer& m, const std::vector<int>& prompt, int new_tokens, const Sampling& s,
                                std::uint64_t seed, const ForwardOptions& fwd) {
    if (static_cast<int>(prompt.size()) + new_tokens > m.dims().seq_len)
        throw InputError("new tokens", std::to_string(new_tokens), N_("with the prompt exceeds the maximum sequence length"));
    Rng rng(seed);
    ContiguousCache c(m.dims(), cpu_backend(), static_cast<int>(prompt.size()) + new_tokens);
    std::vector<int> out;
    MatrixRM logits = m.forward(prompt, c, fwd);
    for (int i = 0; i < new_tokens; ++i) {
        out.push_back(draw(sampling_distribution(logits, logits.rows() - 1, s), rng));
        if (i + 1 < new_tokens) logits = m.forward(std::vector<int>{out.back()}, c, fwd);
    }
    return out;
}

}  // namespace inferlab::model
