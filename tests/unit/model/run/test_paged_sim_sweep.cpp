// model paged's scheduler over every small pool (issue #16): a run is refused exactly when one
// sequence alone cannot fit the pool, and otherwise every sequence finishes with the tokens and
// logits of running alone on a contiguous cache, whatever waiting, preemption and recompute
// happened on the way. Also the prompt-list parser both paged commands use.
#include <catch2/catch.hpp>

#include <map>
#include <memory>

#include "inferlab/base/error.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/run/compare.hpp"
#include "inferlab/model/run/paged_sim.hpp"
#include "inferlab/model/run/token_lists.hpp"

using namespace inferlab;
using namespace inferlab::model;

namespace {

// A tiny GQA model so the sweep's thousands of runs take seconds: dim 16, FFN 24, L = 1,
// H_q = 2, H_kv = 1 (d = 8), vocab 16, S_max 16 (prompts of up to 5 + 4 generated fit).
const Weights& tiny_weights() {
    static const std::unique_ptr<Weights> w = [] {
        Dims d;
        d.dim = 16;
        d.hidden_dim = 24;
        d.n_layers = 1;
        d.n_heads = 2;
        d.n_kv_heads = 1;
        d.vocab_size = 16;
        d.seq_len = 16;
        return random_weights(d, 11);
    }();
    return *w;
}

struct Greedy {
    std::vector<int> tokens;  // generated
    MatrixRM logits;          // [new_tokens, vocab]
};

// The ground truth, written apart from the simulation: one sequence alone on a contiguous cache,
// its prompt prefilled, then one token fed back per step.
Greedy greedy_alone(const Transformer& m, const std::vector<int>& prompt, int new_tokens) {
    ContiguousCache cache(m.dims());
    Greedy g;
    g.logits.resize(new_tokens, m.dims().vocab_size);
    MatrixRM l = m.forward(prompt, cache);  // [prompt, vocab]
    for (int k = 0; k < new_tokens; ++k) {
        g.logits.row(k) = l.row(l.rows() - 1);
        Eigen::Index next = 0;
        g.logits.row(k).maxCoeff(&next);
        g.tokens.push_back(static_cast<int>(next));
        if (k + 1 < new_tokens) l = m.forward(std::vector<int>{g.tokens.back()}, cache);
    }
    return g;
}

// Prompt sets of 1..6 prompts of 1..5 tokens; ids from {1, 2} so that prefixes (whole blocks,
// partly filled blocks, none) are often shared. Two patterns per count, fixed, no randomness.
std::vector<std::vector<std::vector<int>>> prompt_sets() {
    std::vector<std::vector<std::vector<int>>> sets;
    for (int n = 1; n <= 6; ++n)
        for (int pattern = 0; pattern < 2; ++pattern) {
            std::vector<std::vector<int>> set;
            for (int j = 0; j < n; ++j) {
                const int len = 1 + (j * (pattern + 2) + n) % 5;
                std::vector<int> p;
                for (int k = 0; k < len; ++k) p.push_back(1 + ((j * pattern + k * k + (k > 2 ? j : 0)) % 2));
                set.push_back(p);
            }
            sets.push_back(set);
        }
    return sets;
}

// What the same tables would hold more without sharing at one step: Σ over held blocks of refs − 1.
std::int64_t shared_excess(const PagedStep& st) {
    std::map<int, int> refs;  // physical block → its reference count
    for (const auto& s : st.seqs)
        for (std::size_t b = 0; b < s.table.size(); ++b) refs[s.table[b]] = s.refs[b];
    std::int64_t excess = 0;
    for (const auto& [block, r] : refs) excess += r - 1;
    return excess;
}

void check_run(const PagedSimResult& r, const std::vector<std::vector<int>>& prompts,
               const std::map<std::vector<int>, Greedy>& truth) {
    const int n = r.options.new_tokens;
    REQUIRE(r.generated.size() == prompts.size());
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        const Greedy& g = truth.at(prompts[i]);
        CHECK(r.generated[i] == std::vector<int>(g.tokens.begin(), g.tokens.begin() + n));
        // 1e-5 of each row's largest logit: a recomputed sequence's K/V come from a prefill's rows,
        // the truth's from one row per step (float32 sums in another order).
        CHECK(compare_logits(r.logits[i], g.logits.topRows(n)).max_rel <= 1e-5);
    }
    CHECK(r.pool_whole_at_end);
    // Progress (the argument in Sim::run): every step gives some sequence a token.
    CHECK(r.steps.size() <= prompts.size() * std::size_t(n));
    int peak = 0;
    for (const auto& st : r.steps) {
        CHECK(st.used_blocks + st.free_blocks == r.options.blocks);
        CHECK(st.free_after >= st.free_blocks);
        peak = std::max(peak, st.used_blocks);
    }
    // The reported peak is a printed step's, and the first such.
    CHECK(r.peak_used_blocks == peak);
    REQUIRE(r.peak_step < static_cast<int>(r.steps.size()));
    CHECK(r.steps[std::size_t(r.peak_step)].used_blocks == peak);
    for (int s = 0; s < r.peak_step; ++s) CHECK(r.steps[std::size_t(s)].used_blocks < peak);
}

}  // namespace

TEST_CASE("model paged: every small pool completes every sequence as alone, or is refused exactly when one cannot fit",
          "[paged][sweep]") {
    const Transformer m(tiny_weights());
    const auto sets = prompt_sets();
    std::map<std::vector<int>, Greedy> truth;
    for (const auto& set : sets)
        for (const auto& p : set)
            if (!truth.count(p)) truth[p] = greedy_alone(m, p, 4);
    int completed = 0, refused = 0, preempted = 0, unshared_peak_lower = 0;
    for (int blocks = 1; blocks <= 8; ++blocks)
        for (int block_size = 1; block_size <= 4; ++block_size)
            for (int steps = 1; steps <= 4; ++steps)
                for (const auto& prompts : sets) {
                    PagedSimOptions o;
                    o.prompts = prompts;
                    o.blocks = blocks;
                    o.block_size = block_size;
                    o.new_tokens = steps;
                    // Fits alone: the final P + steps − 1 cached tokens in whole blocks.
                    bool fits = true;
                    for (const auto& p : prompts)
                        fits = fits && (static_cast<int>(p.size()) + steps - 1 + block_size - 1) / block_size <= blocks;
                    INFO("blocks " << blocks << ", block size " << block_size << ", steps " << steps << ", "
                                   << prompts.size() << " prompts, the first of " << prompts[0].size());
                    if (!fits) {
                        CHECK_THROWS_WITH(compare_sharing(m, o), Catch::Matchers::Contains("cannot hold sequence"));
                        ++refused;
                        continue;
                    }
                    const SharingComparison c = compare_sharing(m, o);
                    check_run(c.shared, prompts, truth);
                    check_run(c.unshared, prompts, truth);
                    CHECK(c.blocks_saved == shared_excess(c.shared.steps[std::size_t(c.shared.peak_step)]));
                    CHECK(c.blocks_saved >= 0);
                    ++completed;
                    preempted += c.shared.preemptions + c.unshared.preemptions > 0;
                    if (c.unshared.peak_used_blocks < c.shared.peak_used_blocks) {
                        ++unshared_peak_lower;
                        CHECK(c.unshared.waiting_steps > 0);  // what model paged's saving note says then
                    }
                    if (c.unshared.preemptions > 0) CHECK(c.unshared.waiting_steps > 0);
                }
    // The sweep reaches every case it claims to cover.
    CHECK(completed > 0);
    CHECK(refused > 0);
    CHECK(preempted > 0);
    // The case that once printed a negative bytes_saved: the pool capped the unshared run below
    // the shared one's peak, while bytes_saved stays the shared peak's own saving.
    CHECK(unshared_peak_lower > 0);
}

TEST_CASE("model paged: five one-token prompts on four one-token blocks wait and preempt, and all finish", "[paged]") {
    // The run that was refused with "cannot hold sequence 2 alone": blocks held by sequences
    // admitted in the same step were not counted as freeable.
    const Transformer m(tiny_weights());
    PagedSimOptions o;
    o.prompts = {{1}, {1}, {1}, {1}, {1}};
    o.blocks = 4;
    o.block_size = 1;
    o.new_tokens = 3;
    const SharingComparison c = compare_sharing(m, o);
    std::map<std::vector<int>, Greedy> truth{{{1}, greedy_alone(m, {1}, 4)}};
    check_run(c.shared, o.prompts, truth);
    check_run(c.unshared, o.prompts, truth);
    CHECK(c.shared.preemptions > 0);
    CHECK(c.shared.recomputed_tokens > 0);
}

TEST_CASE("parse_prompt_list: prompts split at semicolons, each a token list, errors naming the caller's flag", "[paged][parse]") {
    const Dims& d = tiny_weights().dims();  // vocab 16, S_max 16
    CHECK(parse_prompt_list("--prompts", "1,2,3;4, 5", d) == std::vector<std::vector<int>>{{1, 2, 3}, {4, 5}});
    CHECK(parse_prompt_list("--prompts", "7", d) == std::vector<std::vector<int>>{{7}});
    CHECK_THROWS_WITH(parse_prompt_list("--prompts", "1,2;", d),
                      "--prompts '1,2;': every prompt needs at least one token (a,b;c,d)");
    CHECK_THROWS_WITH(parse_prompt_list("prompts", "1; ;2", d), "prompts '1; ;2': every prompt needs at least one token (a,b;c,d)");
    CHECK_THROWS_WITH(parse_prompt_list("--prompts", "1;16", d), "--prompts '16': is outside the vocabulary [0, 15]");
    CHECK_THROWS_WITH(parse_prompt_list("--prompts", "1;1,000", d), Catch::Matchers::Contains("has a leading zero"));
    CHECK_THROWS_WITH(parse_token_list("--tokens", "1,,2", d), "--tokens '1,,2': has an empty item in the list");
    CHECK_THROWS_WITH(parse_token_list("--tokens", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", d),
                      "--tokens '17 tokens': is longer than the model's maximum sequence length 16");
}
