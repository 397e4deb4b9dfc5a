// kv_mem(): the one library call behind `inferlab kv-mem`, checked against figures worked by
// hand and printed in the documents.
#include <catch2/catch.hpp>

#include "inferlab/answer/kv_mem.hpp"
#include "inferlab/base/error.hpp"

using namespace inferlab;
using Catch::Matchers::WithinRel;

TEST_CASE("kv_mem reproduces the first document's GQA request (000_5f2b20623495609b.txt §2.1.1)", "[kv][kv-mem]") {
    // L=32, H_kv=8, d=128, bf16, one request of 8192 tokens: 1 GiB; MHA (H_kv = H_q = 32) 4 GiB.
    KvMemInputs in;
    in.model = kv_model_uniform(32, 8, 128, 16, "bf16");
    in.model.q_heads = 32;
    in.requests = one_each({8192});
    const KvMemResult r = kv_mem(in);
    CHECK(r.uniform);
    CHECK_FALSE(r.has_window);
    CHECK(r.bytes_per_token == 131072);  // 2 × 32 × 8 × 128 × 2
    CHECK(r.token_bits == 131072 * 8);
    REQUIRE(r.kv);
    CHECK(r.kv->total_bytes == 1073741824);
    CHECK(r.total_bits == std::optional<std::uint64_t>(8589934592ULL));
    // Exact: 2^30 bytes is one GiB and 1.073741824 GB; 1e-15 relative: one division rounded.
    CHECK_THAT(*r.total_gib, WithinRel(1.0, 1e-15));
    CHECK_THAT(*r.total_gb, WithinRel(1.073741824, 1e-15));
    REQUIRE(r.head_sharing.size() == 3);
    CHECK(r.head_sharing[0].name == "MHA");
    CHECK(r.head_sharing[0].total_bytes == 4ULL << 30);
    CHECK(r.head_sharing[1].ratio_num == 1);
    CHECK(r.head_sharing[1].ratio_den == 4);
    CHECK(r.q_proj_width == std::optional<std::uint64_t>(4096));  // the second document's H_q·d
    CHECK(r.kv_proj_width == std::optional<std::uint64_t>(1024));
    CHECK_FALSE(r.budget);
    CHECK_FALSE(r.paged);
}

TEST_CASE("kv_mem reproduces the second document's sequences (003_02a045288fb34aae.txt section 从一个 Token 算到整个请求)",
          "[kv][kv-mem]") {
    // L=40, H_kv=8, d=128, b=2: s_token 160 KiB; 8192 tokens 1.25 GiB; ten of them 12.5 GiB.
    KvMemInputs in;
    in.model = kv_model_uniform(40, 8, 128, 16, "bf16");
    in.requests = {{8192, 10}};
    const KvMemResult r = kv_mem(in);
    CHECK(r.bytes_per_token == 160 * 1024);
    CHECK(r.request_count == 10);
    CHECK(r.kv->per_request_bytes.front() == 1342177280ULL);  // 1.25 × 2^30
    CHECK(r.kv->total_bytes == 13421772800ULL);
    CHECK(r.total_tokens == 81920);
    CHECK(longest_seq_len(r) == 8192);
    in.requests = {{100, 3}, {9000, 1}, {4096, 2}};  // the longest wherever it stands in the list
    CHECK(longest_seq_len(kv_mem(in)) == 9000);
}

TEST_CASE("kv_mem answers the budget question worked by hand", "[kv][kv-mem]") {
    // L=2, H_kv=1, d=4, 1 byte per element: s_token = 2 × 2 × 1 × 4 × 1 = 16 B. A budget of 1000 B
    // after 200 B of weights leaves 800 B: 50 tokens; requests of 10 tokens (160 B) fit 5 times.
    KvMemInputs in;
    in.model = kv_model_uniform(2, 1, 4, 8, "int8");
    in.requests = one_each({10});
    in.budget_bytes = 1000;
    in.weights_bytes = 200;
    const KvMemResult r = kv_mem(in);
    REQUIRE(r.budget);
    CHECK(r.budget->weights_given);
    CHECK(r.budget->devices == 1);
    CHECK(r.budget->fit.available_bytes == 800);
    CHECK(r.budget->fit.max_tokens == std::optional<std::uint64_t>(50));
    CHECK(r.budget->fit.request_bytes == std::optional<std::uint64_t>(160));
    CHECK(r.budget->fit.max_batch == std::optional<std::uint64_t>(5));
    // Two devices: ceil(200 / 2) = 100 B of weights and half the bytes per token each... but H_kv = 1
    // cannot be split, so the head is replicated and each device still holds 16 B per token.
    in.devices = 2;
    const KvMemResult tp = kv_mem(in);
    CHECK(tp.budget->fit.weights_bytes == 100);
    CHECK(tp.budget->bytes_per_token_per_device == 16);
    CHECK(tp.budget->fit.max_tokens == std::optional<std::uint64_t>(56));  // floor(900 / 16)
}

TEST_CASE("kv_mem with sliding layers: bytes per token depend on length", "[kv][kv-mem]") {
    // One full layer and one layer of window 4, 1 head of width 4 at 1 byte: 8 B per token each.
    KvMemInputs in;
    in.model.spec.layers = {{1, 4, 4, 8, 8, 0, false}, {1, 4, 4, 8, 8, 4, false}};
    in.model.source = "test";
    in.requests = one_each({10});
    const KvMemResult r = kv_mem(in);
    CHECK(r.has_window);
    CHECK_FALSE(r.uniform);
    CHECK(r.kv->total_bytes == 8 * 10 + 8 * 4);  // the sliding layer keeps 4 of the 10 positions
}

TEST_CASE("kv_mem's errors name its inputs, not a command line", "[kv][kv-mem]") {
    KvMemInputs in;
    in.model = kv_model_uniform(2, 1, 4, 8, "int8");
    CHECK_THROWS_AS(kv_mem(in), InputError);  // neither requests nor a budget: nothing to answer
    in.requests = one_each({10});
    in.shared_prefix = 4;
    CHECK_THROWS_WITH(kv_mem(in), Catch::Contains("shared prefix needs block size") && !Catch::Contains("--"));
    in.shared_prefix.reset();
    in.model = kv_model_uniform(2, 2, 4, 8, "int8");  // 3 devices cannot share 2 K/V heads evenly
    in.devices = 3;
    CHECK_THROWS_WITH(kv_mem(in), Catch::Contains("devices '3'") && !Catch::Contains("--"));
    in.where.devices = "--tp";  // a command passes its flag names
    CHECK_THROWS_WITH(kv_mem(in), Catch::Contains("--tp '3'"));
}
