// model paged: reference-counted blocks, prefix sharing with copy-on-write, running out of
// blocks, and the pool returned whole (first document, Figure 8 and §2.1.2).
#include <catch2/catch.hpp>

#include "../../../support/small_model.hpp"

#include "inferlab/base/error.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/run/paged_sim.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/serve.hpp"

using namespace inferlab;
using namespace inferlab::model;

TEST_CASE("copy-on-write: a shared, partly filled block is copied on the first write, the parent's stays", "[paged]") {
    Transformer m(inferlab::test::small_gqa_weights(5));
    const Dims& d = m.dims();
    BlockPool pool(d, 4, 12, 3);
    PagedCache parent(pool, d);
    m.forward(std::vector<int>{1, 2, 3, 4, 5, 6}, parent);  // blocks: [1 2 3 4] [5 6 . .]
    const std::vector<int> before = parent.block_table();
    PagedCache child(pool, d, parent, 5);                     // shares 1..5: block 0 whole, block 1 partly
    CHECK(child.block_table() == before);
    CHECK(pool.ref_count(before[0]) == 2);
    CHECK(pool.ref_count(before[1]) == 2);
    CHECK(pool.free_blocks() == 10);
    MatrixRM shared = m.forward(std::vector<int>{9, 7}, child);  // position 5 lands in the shared block 1
    CHECK(child.copies_on_write() == 1);
    CHECK(child.block_table()[0] == before[0]);
    CHECK(child.block_table()[1] != before[1]);
    CHECK(parent.block_table() == before);
    CHECK(pool.ref_count(before[1]) == 1);
    CHECK(pool.ref_count(before[0]) == 2);
    // The same prompt without sharing gives the same logits: the copy holds the parent's K/V.
    PagedCache alone(pool, d);
    m.forward(std::vector<int>{1, 2, 3, 4, 5}, alone);
    MatrixRM unshared = m.forward(std::vector<int>{9, 7}, alone);
    // 1e-6 absolute: the prefix's K/V came from a 6-row prefill here and a 5-row one there (same kernels, same sums).
    CHECK((shared - unshared).cwiseAbs().maxCoeff() <= 1e-6);
    // The parent still reads its own token 6 at position 5.
    PagedCache check(pool, d);
    MatrixRM again = m.forward(std::vector<int>{1, 2, 3, 4, 5, 6, 8}, check);
    CHECK((m.forward(std::vector<int>{8}, parent).row(0) - again.row(6)).cwiseAbs().maxCoeff() <= 1e-5);  // 1e-5: chunk vs row sums
}

TEST_CASE("block pool: releasing a block nobody holds is refused, never a corrupt free list", "[paged]") {
    BlockPool pool(inferlab::test::small_gqa_weights(5).dims(), 4, 3, 1);
    const int b = pool.allocate();
    pool.release(b);
    CHECK_THROWS_AS(pool.release(b), std::logic_error);
    CHECK(pool.free_blocks() == 3);
}

TEST_CASE("model paged: shared prefixes save blocks, one copy-on-write, same logits, the pool returns whole", "[paged]") {
    Transformer m(inferlab::test::small_gqa_weights(5));
    PagedSimOptions o;
    o.prompts = {{1, 2, 3, 4}, {1, 2, 3, 9, 9}};
    o.blocks = 16;
    o.block_size = 2;
    o.new_tokens = 3;
    const SharingComparison c = compare_sharing(m, o);
    CHECK(c.shared.copies_on_write == 1);  // seq 1 shares 3 tokens: block [1 2] whole, [3 4] partly
    CHECK(c.unshared.copies_on_write == 0);
    CHECK(c.blocks_saved == 1);
    CHECK(c.bytes_saved == static_cast<std::int64_t>(c.shared.block_bytes));
    CHECK(c.shared.generated == c.unshared.generated);
    CHECK(c.max_logit_diff <= 1e-5);  // 1e-5 absolute: the shared prefix came from another prefill's rows
    CHECK(c.shared.pool_whole_at_end);
    CHECK(c.unshared.pool_whole_at_end);
    // The first step shows the sharing: seq 1's first logical block is seq 0's, held twice.
    const PagedStep& s0 = c.shared.steps.front();
    REQUIRE(s0.seqs.size() == 2);
    CHECK(s0.seqs[1].table[0] == s0.seqs[0].table[0]);
    CHECK(s0.seqs[1].refs[0] == 2);
    CHECK(s0.seqs[1].shared_from == 0);
    CHECK(s0.seqs[1].shared_tokens == 3);
}

TEST_CASE("model paged: an exhausted pool preempts the newest sequence, which recomputes and ends the same", "[paged]") {
    Transformer m(inferlab::test::small_gqa_weights(5));
    PagedSimOptions o;
    o.prompts = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    o.block_size = 2;
    o.new_tokens = 4;
    o.share_prefix = false;
    o.blocks = 32;
    const PagedSimResult roomy = simulate_paged(m, o);
    o.blocks = 8;  // three sequences of 7 tokens need 12 blocks at their peak
    const PagedSimResult tight = simulate_paged(m, o);
    CHECK(roomy.preemptions == 0);
    CHECK(tight.preemptions > 0);
    CHECK(tight.generated == roomy.generated);
    CHECK(tight.pool_whole_at_end);
    for (const auto& s : tight.steps) CHECK(s.free_blocks + s.used_blocks == 8);
    // One sequence alone caches 3 + 4 − 1 = 6 tokens (the last generated is never fed back): 3
    // blocks of 2. Three blocks are enough, by waiting; two are refused.
    o.blocks = 3;
    CHECK(simulate_paged(m, o).generated == roomy.generated);
    o.blocks = 2;
    CHECK_THROWS_WITH(simulate_paged(m, o), Catch::Matchers::Contains("pool blocks '2': cannot hold sequence 0 alone: its 6 "
                                                                      "cached tokens") &&
                                                 Catch::Matchers::Contains("need 3 blocks of 2 tokens, more than the pool's 2"));
}

TEST_CASE("kv_shared_prefix: floor(P/b) + B·(ceil(S/b) − floor(P/b)) blocks, equal to what model paged measures", "[paged][kv]") {
    Transformer m(inferlab::test::small_gqa_weights(5));
    const Dims& d = m.dims();
    // Three prompts of 5 tokens sharing their first 3, then 3 greedy tokens each: S = 5 + 3 − 1 = 7 cached.
    PagedSimOptions o;
    o.prompts = {{1, 2, 3, 4, 5}, {1, 2, 3, 6, 7}, {1, 2, 3, 8, 9}};
    o.blocks = 32;
    o.block_size = 2;
    o.new_tokens = 3;
    const SharingComparison c = compare_sharing(m, o);
    const KvSpec spec = uniform_kv(std::uint64_t(d.n_layers), std::uint64_t(d.n_kv_heads), std::uint64_t(d.head_dim()), 32);
    const SharedPrefixUsage u = kv_shared_prefix(spec, 3, 7, 3, 2);
    CHECK(u.shared_blocks == 1);
    CHECK(u.partial_tokens == 1);
    CHECK(u.own_blocks == 3);        // ceil(7/2) − 1
    CHECK(u.total_blocks == 10);     // 1 + 3 × 3
    CHECK(u.unshared_blocks == 12);  // 3 × 4
    CHECK(u.block_bytes == c.shared.block_bytes);
    CHECK(std::uint64_t(c.shared.peak_used_blocks) == u.total_blocks);
    CHECK(c.peak_bytes_shared == u.total_bytes);
    CHECK(c.peak_bytes_unshared == u.unshared_bytes);
    CHECK(c.shared.copies_on_write == 2);  // each later request copies the partly filled prefix block
    CHECK_THROWS_AS(kv_shared_prefix(spec, 3, 7, 7, 2), InputError);
}

namespace {

// The events of one kind in a model paged step ("seq 3 admitted", "seq 1 preempted ...", "seq 0 finished ...").
std::uint64_t events_of(const PagedStep& s, const std::string& kind) {
    std::uint64_t n = 0;
    for (const auto& e : s.events) n += e.text().find(kind) != std::string::npos;
    return n;
}

}  // namespace

TEST_CASE("one scheduler, two users: serve-sim admits, preempts and finishes as model paged does, step by step", "[paged]") {
    Transformer m(inferlab::test::small_gqa_weights(5));
    // Prompts of different lengths on a pool too small for all at once: waits and preemptions.
    // With sharing, the prompts 0 and 2 begin with the same 4 tokens (two whole blocks of 2) and
    // differ at the fifth, so model paged's longest common prefix is serve-sim's shared prefix.
    PagedSimOptions o;
    o.prompts = {{1, 2, 3, 4, 5}, {6, 7, 8}, {1, 2, 3, 4, 9, 9}, {2}, {3, 3, 3, 3, 3, 3, 3}};
    o.block_size = 2;
    o.new_tokens = 5;
    for (bool share : {false, true})
        for (int blocks : {6, 9, 40}) {
            INFO("blocks " << blocks << ", sharing " << share);
            o.blocks = blocks;
            o.share_prefix = share;
            const PagedSimResult paged = simulate_paged(m, o);
            std::vector<ServeRequest> reqs;
            for (std::size_t i = 0; i < o.prompts.size(); ++i) {
                ServeRequest q{0, o.prompts[i].size(), std::uint64_t(o.new_tokens)};
                if (share && (i == 0 || i == 2)) q.prefix_group = 0, q.prefix_len = 4;
                reqs.push_back(q);
            }
            ServeConfig c;
            c.scheduler = {std::uint64_t(blocks), 2, 0, 0};
            c.prefix_caching = share;
            c.keep_steps = true;
            DecodeModel dm;
            dm.params = 1000;
            dm.weight_bytes = 2000;
            dm.kv_spec = uniform_kv(2, 1, 4, 16);
            Machine hw;
            hw.bandwidth = 1e9;
            hw.peak_flops = 1e12;
            const ServeResult serve = simulate_serving(dm, hw, reqs, c);
            REQUIRE(serve.steps.size() == paged.steps.size());
            for (std::size_t s = 0; s < paged.steps.size(); ++s) {
                INFO("step " << s);
                CHECK(serve.steps[s].admitted == events_of(paged.steps[s], "admitted"));
                CHECK(serve.steps[s].preempted == events_of(paged.steps[s], "preempted"));
                CHECK(serve.steps[s].finished == events_of(paged.steps[s], "finished"));
                CHECK(serve.steps[s].used_blocks == std::uint64_t(paged.steps[s].used_blocks));
            }
            CHECK(serve.summary.preemptions == std::uint64_t(paged.preemptions));
            if (share) CHECK(serve.summary.prefix_hit_tokens > 0);
            if (blocks == 6) CHECK(paged.preemptions > 0);
        }
}
