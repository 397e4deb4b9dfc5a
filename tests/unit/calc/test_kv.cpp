#include <catch2/catch.hpp>

#include "inferlab/base/error.hpp"
#include "inferlab/calc/kv.hpp"

using namespace inferlab;

TEST_CASE("uniform formula equals the per-layer sum", "[kv]") {
    for (std::uint64_t L : {1, 7, 32, 80})
        for (std::uint64_t h : {1, 8, 32})
            for (std::uint32_t bits : {4u, 8u, 16u, 32u}) {
                KvSpec spec = uniform_kv(L, h, 128, bits);
                CHECK(kv_bytes(spec, {8192, 8192, 8192}).total_bytes == kv_bytes_uniform(L, 3, 8192, h, 128, bits));
            }
}

TEST_CASE("bytes per token and per layer", "[kv]") {
    KvSpec spec = uniform_kv(40, 8, 128, 16);
    CHECK(bytes_per_token(spec) == 163840);
    CHECK(layer_bytes_per_token(spec.layers[0]) == 4096);
    auto kv = kv_bytes(spec, {8192, 4096, 300});
    CHECK(kv.per_request_bytes == std::vector<std::uint64_t>{163840ULL * 8192, 163840ULL * 4096, 163840ULL * 300});
    CHECK(kv.per_layer_bytes.size() == 40);
    CHECK(kv.per_layer_bytes[0] == 4096ULL * (8192 + 4096 + 300));
    CHECK(kv.total_bytes == 163840ULL * (8192 + 4096 + 300));
}

TEST_CASE("int4 counts half a byte exactly", "[kv]") {
    CHECK(kv_bytes_uniform(32, 1, 8192, 8, 128, 4) == (1ULL << 30) / 4);
    KvSpec odd;
    odd.layers.push_back(KvLayer{1, 3, 3, 4, 4, 0, false});  // 3·4 + 3·4 = 24 bits = 3 B
    CHECK(bytes_per_token(odd) == 3);
    odd.layers[0].d_v = 1;  // 12 + 4 = 16 bits = 2 B
    CHECK(bytes_per_token(odd) == 2);
    odd.layers[0].d_v = 2;  // 12 + 8 = 20 bits: rounded up to 3 B
    CHECK(bytes_per_token(odd) == 3);
}

TEST_CASE("sliding layers cap the positions they hold", "[kv]") {
    KvSpec spec = uniform_kv(4, 8, 128, 16);
    spec.layers[1].window = 1000;
    spec.layers[3].window = 1000;
    CHECK_FALSE(spec.uniform());
    auto kv = kv_bytes(spec, {4096});
    CHECK(kv.per_layer_bytes[0] == 4096ULL * 4096);
    CHECK(kv.per_layer_bytes[1] == 4096ULL * 1000);
    CHECK(kv.total_bytes == 4096ULL * (4096 * 2 + 1000 * 2));
    CHECK(kv_bytes(spec, {500}).total_bytes == 4096ULL * 500 * 4);
}

TEST_CASE("overflow is detected, not wrapped", "[kv]") {
    CHECK_THROWS_AS(kv_bytes_uniform(1000000, 1000000, 1000000, 1000, 1000, 16), OverflowError);
    CHECK_THROWS_AS(kv_bytes(uniform_kv(1000000, 1000, 1000, 32), {4000000000000ULL}), OverflowError);
}

TEST_CASE("paged allocation rounds each request up to whole blocks", "[kv]") {
    KvSpec spec = uniform_kv(32, 8, 128, 16);  // 131072 B per token
    PagedUsage p = kv_paged(spec, {8192, 4100, 1}, 16);
    CHECK(p.blocks_per_request == std::vector<std::uint64_t>{512, 257, 1});
    CHECK(p.total_blocks == 770);
    CHECK(p.block_bytes == 131072ULL * 16);
    CHECK(p.used_bytes == 131072ULL * (8192 + 4100 + 1));
    CHECK(p.allocated_bytes == 131072ULL * 16 * 770);
    CHECK(p.waste_bytes == 131072ULL * (12 + 15));
}

TEST_CASE("tensor parallel splits heads, then replicates", "[kv]") {
    KvSpec spec = uniform_kv(32, 8, 128, 16);
    const std::uint64_t one = kv_bytes(spec, {8192}).total_bytes;
    CHECK(kv_tensor_parallel(spec, {8192}, 1).per_device_bytes == one);
    CHECK(kv_tensor_parallel(spec, {8192}, 4).per_device_bytes == one / 4);
    TpShare t8 = kv_tensor_parallel(spec, {8192}, 8);
    CHECK(t8.per_device_bytes == one / 8);
    CHECK_FALSE(t8.replicated);
    TpShare t16 = kv_tensor_parallel(spec, {8192}, 16);
    CHECK(t16.per_device_bytes == one / 8);  // stops shrinking at one head
    CHECK(t16.replicated);
    CHECK(t16.replication == 2);
    CHECK_THROWS_WITH(kv_tensor_parallel(spec, {8192}, 3), Catch::Contains("devices '3'") && Catch::Contains("must divide"));
    CHECK_THROWS_WITH(kv_tensor_parallel(spec, {8192}, 12), Catch::Contains("not a multiple"));
}

TEST_CASE("head sharing: MHA, GQA, MQA ratios", "[kv]") {
    auto rows = compare_head_sharing(32, 32, 8, 128, 16, {8192});
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].name == "MHA");
    CHECK(rows[0].total_bytes == 4ULL << 30);
    CHECK(rows[1].ratio_num == 1);
    CHECK(rows[1].ratio_den == 4);
    CHECK(rows[2].ratio_den == 32);
    CHECK(rows[1].kv_proj_width == 1024);
    CHECK_THROWS_WITH(compare_head_sharing(32, 30, 8, 128, 16, {1}), Catch::Contains("must be divisible by K/V heads 8"));
}

TEST_CASE("budget: tokens, batch and blocks after the weights", "[kv]") {
    KvSpec spec = uniform_kv(32, 8, 128, 16);  // 128 KiB per token, 1 GiB per 8192-token request
    KvBudget b = kv_budget(spec, 80ULL << 30, 14000000000ULL, 8192, 16);
    CHECK(b.available_bytes == (80ULL << 30) - 14000000000ULL);
    CHECK(*b.max_tokens == b.available_bytes / 131072);
    CHECK(*b.max_batch == b.available_bytes / (1ULL << 30));
    CHECK(*b.max_blocks == b.available_bytes / (131072ULL * 16));
    CHECK(*b.blocks_per_request == 512);
    CHECK(*b.max_concurrency == *b.max_blocks / 512);
    CHECK_THROWS_WITH(kv_budget(spec, 10ULL << 30, 14000000000ULL, 8192, std::nullopt),
                      Catch::Contains("leaves no room for the KV cache"));
}

TEST_CASE("paged allocation with sliding layers: one block table per window, allocation adds up", "[kv]") {
    // Issue #14: "512 blocks of 262,144 B" beside "allocated 100,663,296 B". Two full layers and two
    // sliding layers (W = 4096) of 1 head × d 64 at 1 B: 128 B per layer-token, 2,048 B per 16-token block.
    KvSpec spec = uniform_kv(4, 1, 64, 8);
    spec.layers[1].window = spec.layers[3].window = 4096;
    PagedUsage p = kv_paged(spec, {8192}, 16);
    REQUIRE(p.groups.size() == 2);
    CHECK(p.groups[0].window == 0);
    CHECK(p.groups[0].layers == 2);
    CHECK(p.groups[0].block_bytes == 2 * 2048);       // two layers × 16 tokens × 128 B
    CHECK(p.groups[0].total_blocks == 512);           // ceil(8192 / 16)
    CHECK(p.groups[1].window == 4096);
    CHECK(p.groups[1].total_blocks == 256);           // ceil(min(8192, 4096) / 16)
    // allocated = 512 × 4,096 + 256 × 4,096 = 3,145,728 = used (2 × 8192 + 2 × 4096) × 128: no tail blocks
    CHECK(p.allocated_bytes == 512ULL * 4096 + 256ULL * 4096);
    CHECK(p.used_bytes == (2ULL * 8192 + 2ULL * 4096) * 128);
    CHECK(p.waste_bytes == 0);
    CHECK(p.blocks_per_request.empty());  // no single block count describes this cache
    // Budget: concurrency divides by one request's whole allocation, and no single-pool figures.
    KvBudget b = kv_budget(spec, 10000000, 0, 8192, 16);
    CHECK_FALSE(b.max_blocks);
    CHECK(*b.max_concurrency == 10000000 / 3145728);  // 3 requests
}

TEST_CASE("the share of the cache one tensor-parallel device holds", "[kv]") {
    KvSpec spec = uniform_kv(32, 8, 128, 16);
    KvSpec dev = kv_spec_per_device(spec, 4);
    CHECK(dev.layers[0].h_kv == 2);
    CHECK(bytes_per_token(dev) == 131072 / 4);
    // Issue #14: the budget per device must use this share and W / N.
    KvBudget b = kv_budget(dev, 80ULL << 30, 16000000000ULL / 4, 8192, std::nullopt);
    CHECK(*b.max_tokens == ((80ULL << 30) - 4000000000ULL) / 32768);
}

TEST_CASE("a batch of equal requests is one entry with a count and sums like the list it stands for", "[kv]") {
    // Sliding and int4 layers, so rounding to whole bytes per request and layer is exercised:
    // layer 0 slides (W = 100), layer 1 holds 1 head of width 3 at 4 bits (1.5 B per token).
    KvSpec spec;
    spec.layers = {KvLayer{8, 128, 128, 16, 16, 100, false}, KvLayer{1, 3, 3, 4, 4, 0, false}};
    const std::vector<Requests> grouped{{4097, 3}, {5, 1}};
    const std::vector<std::uint64_t> listed{4097, 4097, 4097, 5};
    const KvBreakdown g = kv_bytes(spec, grouped), l = kv_bytes(spec, listed);
    CHECK(g.total_bytes == l.total_bytes);
    CHECK(g.per_layer_bytes == l.per_layer_bytes);
    CHECK(g.counts == std::vector<std::uint64_t>{3, 1});
    // Layer 0: 8·(128·16 + 128·16) bits = 4096 B per position, min(S, 100) positions kept.
    // Layer 1: 1·(3·4 + 3·4) = 24 bits = 3 B per token, every position.
    CHECK(g.per_request_bytes == std::vector<std::uint64_t>{4096ULL * 100 + 3 * 4097, 4096ULL * 5 + 3 * 5});
    const PagedUsage pg = kv_paged(spec, grouped, 16), pl = kv_paged(spec, listed, 16);
    // Two block tables (kv_paged groups layers by window): the full layer's and the sliding one's.
    REQUIRE(pg.groups.size() == 2);
    CHECK(pg.groups[0].total_blocks == pl.groups[0].total_blocks);
    CHECK(pg.groups[0].total_blocks == 3 * 257 + 1);  // ceil(4097 / 16) = 257, ceil(5 / 16) = 1
    // The window's positions 3997..4096 lie in blocks 249..256 (3997 = 249·16 + 13): 8 blocks, one more
    // than ceil(100 / 16) = 7, because the window starts inside a block. S = 5: 1 block.
    CHECK(pg.groups[1].total_blocks == 3 * 8 + 1);
    CHECK(pg.allocated_bytes == pl.allocated_bytes);
    // Issue #29, item 4: Phi-3-mini's window of 2047 at S = 3000 keeps positions 953..2999, blocks
    // 59..187 of 16: 129 (vLLM frees a block only when the window has left it entirely). A window
    // that starts on a boundary needs exactly ceil(W / 16): S = 2063, W = 2047: positions 16..2062.
    const KvLayer phi3{32, 96, 96, 16, 16, 2047, false};
    CHECK(window_blocks(phi3, 3000, 16) == 129);
    CHECK(window_blocks(phi3, 2063, 16) == 128);
    CHECK(window_blocks(phi3, 2047, 16) == 128);  // S ≤ W: ceil(S / 16)
    CHECK(window_blocks(phi3, 1, 16) == 1);
    CHECK(window_blocks(phi3, 0, 16) == 0);
    CHECK(window_block_span(phi3, 3000, 16).first == 59);  // 953 = 59·16 + 9
    CHECK(window_block_span(phi3, 3000, 16).last == 187);  // 2999 = 187·16 + 7
    CHECK(window_block_span(phi3, 2063, 16).first == 1);
    CHECK(pg.groups[1].spans_per_request[0].first == 249);
    CHECK(pg.groups[1].spans_per_request[0].last == 256);
    CHECK(kv_tensor_parallel(spec, grouped, 1).per_device_bytes == l.total_bytes);
    CHECK(request_count(grouped) == 4);
    // 10^9 requests cost no memory and are exact: 3 B per token × 8192 × 10^9 on layer 1 alone.
    KvSpec one;
    one.layers = {KvLayer{1, 3, 3, 4, 4, 0, false}};
    const std::vector<Requests> billion{{8192, 1000000000}};
    CHECK(kv_bytes(one, billion).total_bytes == 3ULL * 8192 * 1000000000ULL);
    const std::vector<Requests> too_many{{8192, 1ULL << 62}};
    CHECK_THROWS_AS(kv_bytes(one, too_many), OverflowError);
}
