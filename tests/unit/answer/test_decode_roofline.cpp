// decode_roofline(): the whole of decode-roofline's answer from one call (issue #15).
#include <catch2/catch.hpp>

#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/text/table.hpp"

using namespace inferlab;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {
// First document §2.1.3's example: W = 14 GB, M_KV = 1 GiB per request, β = 1 TB/s.
RooflineRequest doc_request(std::vector<std::uint64_t> batches) {
    RooflineRequest r;
    r.model.weight_bytes = 14000000000ULL;
    r.model.kv_bytes_per_request = 1ULL << 30;
    r.machine.bandwidth = 1e12;
    r.batches = std::move(batches);
    return r;
}

// A small dense model with a KV geometry: 4 layers, 8 query heads over 2 KV heads of 64, bf16.
RooflineRequest model_request() {
    RooflineRequest r;
    r.model.weight_bytes = 2000000000ULL;
    r.model.params = 1000000000ULL;
    r.model.kv_spec = uniform_kv(4, 2, 64, 16);
    r.model.attn_layers = 4;
    r.model.attn_q_heads = 8;
    r.model.attn_head_dim = 64;
    r.machine = Machine{1e12, 1e15, std::nullopt};
    r.seq_lens = {1000};
    return r;
}
}  // namespace

TEST_CASE("decode_roofline: the first document's two rows and the batch comparison", "[decode-roofline][answer]") {
    // First document §2.1.3: D_1 = 14 GB + 1 GiB = 15,073,741,824 B; D_8 = 14 GB + 8 GiB = 22,589,934,592 B.
    const RooflineResult r = decode_roofline(doc_request({1, 8}));
    REQUIRE(r.rows.size() == 2);
    CHECK(r.rows[0].bytes == 15073741824ULL);
    CHECK(r.rows[1].bytes == 22589934592ULL);
    REQUIRE(r.comparison);
    CHECK(r.comparison->from_batch == 1);
    CHECK(r.comparison->to_batch == 8);
    // 1e-12 relative: two divisions of exact integers in doubles.
    CHECK_THAT(r.comparison->reads_ratio, WithinRel(22589934592.0 / 15073741824.0, 1e-12));
    CHECK_THAT(r.comparison->aggregate_ratio, WithinRel(8 * 15073741824.0 / 22589934592.0, 1e-12));
    CHECK_THAT(r.comparison->per_request_ratio, WithinRel(15073741824.0 / 22589934592.0, 1e-12));
    // The document's rounded figures: ×1.50, ×5.34, down to 0.67×.
    CHECK(format_decimal(r.comparison->reads_ratio, 2) == "1.50");
    CHECK(format_decimal(r.comparison->aggregate_ratio, 2) == "5.34");
    CHECK(format_decimal(r.comparison->per_request_ratio, 2) == "0.67");
    CHECK_FALSE(r.ridge_flops_per_byte);
    CHECK_FALSE(r.compute_limit_searched);
    CHECK(r.generation.empty());
}

TEST_CASE("decode_roofline: one row has no comparison, memory fit is reported", "[decode-roofline][answer]") {
    RooflineRequest rq = doc_request({1, 100});
    rq.machine.memory_bytes = 80ULL << 30;  // 14 GB + 100 GiB does not fit 80 GiB; 14 GB + 1 GiB does
    const RooflineResult r = decode_roofline(rq);
    CHECK(*r.rows[0].fits);
    CHECK_FALSE(*r.rows[1].fits);
    CHECK(r.any_row_exceeds_memory);
    CHECK_FALSE(decode_roofline(doc_request({4})).comparison);
}

TEST_CASE("decode_step_uniform agrees with decode_step over the repeated lengths", "[decode-roofline][answer]") {
    const RooflineRequest rq = model_request();
    for (std::uint64_t b : {1, 3, 17}) {
        const DecodeStep fast = decode_step_uniform(rq.model, b, 1000, rq.machine);
        const DecodeStep ref = decode_step(rq.model, std::vector<std::uint64_t>(b, 1000), rq.machine);
        CHECK(fast.bytes == ref.bytes);
        CHECK(fast.kv_bytes == ref.kv_bytes);
        // 1e-12 relative: B equal additions against one multiplication by B.
        CHECK_THAT(*fast.flops, WithinRel(*ref.flops, 1e-12));
        CHECK(fast.compute_bound == ref.compute_bound);
    }
}

TEST_CASE("decode_roofline: the largest batch costs no more than a small one, one more is refused", "[decode-roofline][answer]") {
    const RooflineResult r = decode_roofline(doc_request({kMaxDecodeBatch}));
    // 14 GB + 10^7 GiB, exact.
    CHECK(r.rows[0].bytes == 14000000000ULL + kMaxDecodeBatch * (1ULL << 30));
    CHECK_THROWS_WITH(decode_roofline(doc_request({kMaxDecodeBatch + 1})),
                      "batch '10000001': must be from 1 to 10,000,000 requests");
}

TEST_CASE("decode_roofline: library errors name no flag", "[decode-roofline][answer]") {
    RooflineRequest rq = doc_request({1});
    rq.machine.bandwidth = 0;
    CHECK_THROWS_WITH(decode_roofline(rq), "the bandwidth β must be positive");
    RooflineRequest gen = doc_request({1});
    gen.prompt_len = 16;
    gen.output_len = 4;
    CHECK_THROWS_WITH(decode_roofline(gen), Contains("KV geometry") && !Contains("--"));
}

TEST_CASE("decode_roofline: a whole generation counts N − 1 decode steps and the compute limit", "[decode-roofline][answer]") {
    RooflineRequest rq = model_request();
    rq.batches = {1, 8};
    rq.prompt_len = 1000;
    rq.output_len = 11;
    const RooflineResult r = decode_roofline(rq);
    REQUIRE(r.generation.size() == 2);
    CHECK(r.generation[0].decode.steps == 10);
    CHECK(r.generation[0].decode.start_len == 1001);
    REQUIRE(r.generation[1].latency);
    CHECK(r.generation_has_prefill);
    // E2E = TTFT + decode total, the second document's accounting.
    const LatencyBound& l = *r.generation[1].latency;
    CHECK_THAT(l.end_to_end_s, WithinRel(l.ttft_s + r.generation[1].decode.total_time_s, 1e-15));  // one addition
    CHECK(r.compute_limit_searched);
    // 1e-15 relative: one division.
    CHECK_THAT(*r.ridge_flops_per_byte, WithinRel(1000.0, 1e-15));
}

TEST_CASE("bytes in GB and GiB", "[decode-roofline][answer]") {
    CHECK(bytes_in_gib(1ULL << 30) == 1.0);
    CHECK(bytes_in_gb(1000000000ULL) == 1.0);
    // 1e-15 relative: one division; 2^30 B = 1.073741824 GB exactly.
    CHECK_THAT(bytes_in_gb(1ULL << 30), WithinRel(1.073741824, 1e-15));
}

TEST_CASE("one formatting per quantity: no 0.00 and no 35 digits", "[table][answer]") {
    CHECK(format_seconds(0.015073741824) == "15.074 ms");
    CHECK(format_seconds(1234.5) == "1234.5 s");
    CHECK(format_seconds(1.5e-5) == "15 µs");
    CHECK(format_seconds(4.2e-8) == "42 ns");
    CHECK(format_seconds(1e20) == "1.00000e+20 s");
    CHECK(format_decimal(66.3406, 2) == "66.34");
    CHECK(format_decimal(4.2e-5, 2) == "0.000042");
    CHECK(format_decimal(0.05, 2) == "0.05");  // one significant digit: the shortest form
    CHECK(format_decimal(1e35, 2) == "1.00000e+35");
    CHECK(format_decimal(15.0737, 3) == "15.074");
    CHECK(format_flops(989e12) == "989 TFLOP/s");
    CHECK(format_flops(5e21) == "5.00000e+21 FLOP/s");
    CHECK(format_decimal(1.5e13, 3) == "15000000000000");  // past 10^9: no ".000" tail
}
