// quantize's results (answer/quantize.hpp), one library call per mode, checked against values
// worked by hand from the first document's §4.1.
#include <catch2/catch.hpp>

#include "inferlab/answer/quantize.hpp"
#include "inferlab/answer/spec_accept.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/data/model_config.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
TEST_CASE("quantize_value: §4.1's 0.37 on step 0.1 with Q = 7, and the tie 0.15/0.1 = 3/2", "[unit][quantize]") {
    const ValueQuant v = quantize_value("0.37", "0.1", 7, Rounding::HalfAwayFromZero, nullptr);
    CHECK(v.q.level == 4);
    CHECK(v.q.exact);
    // 1e-12 absolute: 0.4 − 0.37 in doubles.
    CHECK_THAT(v.abs_error, WithinAbs(0.03, 1e-12));
    CHECK(v.within_half_step);
    CHECK_THAT(v.half_step, WithinAbs(0.05, 1e-15));  // 1e-15: one halving of 0.1
    const ValueQuant tie = quantize_value("0.15", "0.1", 7, Rounding::HalfToEven, nullptr);
    CHECK(tie.q.scaled_fraction == "3/2");
    CHECK(tie.q.level == 2);
    CHECK_THROWS_WITH(quantize_value("1e300", "1e-300", 7, Rounding::HalfAwayFromZero, nullptr, "X", "S"),
                      "X '1e300': is too large for this step (x/Δ must stay below 9e15)");
}

TEST_CASE("quantize_values and quantize_storage: bytes by hand", "[unit][quantize]") {
    Matrix m{1, 4, {1, -2, 0.5, 4}};
    QuantConfig c;
    c.bits = 8;
    const ValuesQuant v = quantize_values(m, c, {Scheme::Symmetric, Scheme::Asymmetric}, StorageFormat{32, 16, 8}, nullptr);
    REQUIRE(v.results.size() == 2);
    // One group of 4 at int8: 4 B of data; symmetric one fp16 scale (2 B), asymmetric also an 8-bit zero (1 B).
    CHECK(v.results[0].storage.total_bytes == 6);
    CHECK(v.results[1].storage.total_bytes == 7);
    CHECK(v.results[0].storage.source_bytes == 16);
    // 32 int8 elements, one fp16 scale: 32 + 2 = 34 B, 8.5 bits each (README's example).
    const StorageQuant s = quantize_storage(32, 32, 8, StorageFormat{32, 16, 0});
    CHECK(s.cost.total_bytes == 34);
    CHECK(s.record_bits == 16);
}

TEST_CASE("kv_model_quant: Llama 3 8B at S = 8192 by hand", "[unit][quantize]") {
    const ModelConfig cfg = load_named_model("llama-3-8b");
    const KvModelQuant k = kv_model_quant(cfg, 8192, 64, DType{"bf16", 16}, 16, 0);
    REQUIRE(k.rows.size() == 3);
    // 2 × 32 layers × 8 KV heads × 128 × 8192 × 2 B = 1 GiB; int8 half of it, plus one fp16 scale per 64:
    // 2 × 32 × 8 × (128/64) × 8192 × 2 B = 16 MiB of scales.
    CHECK(k.rows[0].bytes.total_bytes == 1073741824ULL);
    CHECK(k.rows[1].bytes.data_bytes == 536870912ULL);
    CHECK(k.rows[1].bytes.metadata_bytes == 16777216ULL);
    CHECK_THAT(k.rows[2].ratio_to_base, WithinRel((268435456.0 + 16777216.0) / 1073741824.0, 1e-15));  // one division
    const KvModelQuant d = kv_model_quant(cfg, 8192, std::nullopt, DType{"bf16", 16}, 16, 0);
    CHECK(d.group_size == 128);  // one scale per head vector
    CHECK(d.group_from_config);
}
