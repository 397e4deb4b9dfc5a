#include <catch2/catch.hpp>
#include <cmath>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/calc/quant.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("scalar quantizer: level, x̂, error, clipping", "[quant]") {
    ScalarQuant q = quantize_scalar(0.37, 0.1, 7, Rounding::HalfAwayFromZero, nullptr);
    CHECK(q.level == 4);
    // 1e-15 absolute: 0.37/0.1 and 0.1·4 each round once in double (values below 1).
    CHECK_THAT(q.dequantized, WithinAbs(0.4, 1e-15));
    CHECK_THAT(q.error, WithinAbs(0.03, 1e-15));
    CHECK_FALSE(q.clipped);
    ScalarQuant c = quantize_scalar(1.5, 0.1, 7, Rounding::HalfAwayFromZero, nullptr);
    CHECK(c.level == 7);
    CHECK(c.clipped);
    CHECK(quantize_scalar(-1.5, 0.1, 7, Rounding::HalfAwayFromZero, nullptr).level == -7);
    CHECK(symmetric_qmax(4) == 7);
    CHECK(symmetric_qmax(8) == 127);
    CHECK_THROWS_WITH(symmetric_qmax(1), Catch::Contains("between 2 and 16"));
    CHECK_THROWS_WITH(quantize_scalar(0.3, 0, 7, Rounding::HalfAwayFromZero, nullptr), Catch::Contains("must be greater than 0"));
}

TEST_CASE("rounding rules: away from zero, to even, stochastic", "[quant]") {
    CHECK(round_with(2.5, Rounding::HalfAwayFromZero, nullptr) == 3);
    CHECK(round_with(-2.5, Rounding::HalfAwayFromZero, nullptr) == -3);
    CHECK(round_with(2.5, Rounding::HalfToEven, nullptr) == 2);
    CHECK(round_with(3.5, Rounding::HalfToEven, nullptr) == 4);
    CHECK(round_with(-2.5, Rounding::HalfToEven, nullptr) == -2);
    CHECK(round_with(2.4, Rounding::HalfToEven, nullptr) == 2);
    // Stochastic rounding is unbiased: the mean of many roundings of 0.3 is 0.3.
    Rng rng(5);
    double sum = 0;
    for (int i = 0; i < 100000; ++i) sum += round_with(0.3, Rounding::Stochastic, &rng);
    CHECK_THAT(sum / 100000, WithinAbs(0.3, 0.006));  // 4 standard errors of a Bernoulli(0.3) mean
}

TEST_CASE("matrix quantizer: granularity, bound, asymmetric", "[quant]") {
    Rng rng(1);
    Matrix m = generate_normal(16, 64, 0.02, 30, rng);
    QuantConfig c;
    c.bits = 4;
    for (Granularity g : {Granularity::Tensor, Granularity::Row, Granularity::Column, Granularity::Group}) {
        c.granularity = g;
        c.group_size = 16;
        QuantResult q = quantize_matrix(m, c, nullptr);
        CHECK(q.report.bound_violations == 0);
        CHECK(q.report.clipped == 0);  // absmax scaling never clips
        CHECK(q.report.bound_checked == m.v.size());
    }
    c.granularity = Granularity::Tensor;
    double tensor_mse = quantize_matrix(m, c, nullptr).report.mse;
    c.granularity = Granularity::Group;
    double group_mse = quantize_matrix(m, c, nullptr).report.mse;
    CHECK(group_mse < tensor_mse);  // finer scales isolate the outliers
    c.group_size = 48;
    CHECK_THROWS_WITH(quantize_matrix(m, c, nullptr), Catch::Contains("must divide the row length 64"));
    // Asymmetric on all-positive data uses the whole grid: lower error than symmetric.
    Matrix pos{1, 4, {1.0, 2.0, 3.0, 4.0}};
    QuantConfig a;
    a.bits = 2;
    a.scheme = Scheme::Asymmetric;
    QuantResult qa = quantize_matrix(pos, a, nullptr);
    a.scheme = Scheme::Symmetric;
    QuantResult qs = quantize_matrix(pos, a, nullptr);
    CHECK(qa.report.mse < qs.report.mse);
    CHECK(qa.zero_points.size() == 1);
    CHECK(qa.report.bound_violations == 0);
}

TEST_CASE("storage: 32 int8 values with one fp16 scale are 34 B, 8.5 bits", "[quant]") {
    StorageCost s = storage_cost(32, 32, 8, 32, 16, 0);
    CHECK(s.total_bytes == 34);
    CHECK(s.bits_per_element == 8.5);
    CHECK(s.source_bytes == 128);
    StorageCost a = storage_cost(4096, 64, 4, 16, 16, 8);
    CHECK(a.data_bytes == 2048);
    CHECK(a.metadata_bytes == 64 * 3);
}

TEST_CASE("quantized KV bytes use kv-mem's function and count metadata", "[quant][kv]") {
    KvSpec spec = uniform_kv(32, 8, 128, 8);
    KvQuantBytes q = kv_quantized_bytes(spec, {8192}, 8, 64, 16, 0);
    // 2 (K, V) × 32 layers × 8192 tokens × 8 heads × 128 × 1 B: half of §2.1.1's 1 GiB at BF16.
    CHECK(q.data_bytes == 2ULL * 32 * 8192 * 8 * 128);
    CHECK(q.data_bytes == kv_bytes(spec, {8192}).total_bytes);
    // 2 × 32 layers × 8 heads × (128/64) groups × 2 B per scale, per token.
    CHECK(q.metadata_bytes == 8192ULL * 2 * 32 * 8 * 2 * 2);
    CHECK(q.bytes_per_token == 65536 + 2048);
    CHECK_THROWS_WITH(kv_quantized_bytes(spec, {1}, 8, 48, 16, 0), Catch::Contains("must divide the head width"));
}

TEST_CASE("KIVI: with outlier channels, K per channel beats K per token", "[quant]") {
    Rng rng(3);
    Matrix k = generate_k_with_outlier_channels(256, 64, 4, 20, rng);
    Matrix v = generate_normal(256, 64, 0, 1, rng);
    KvQuantComparison c = compare_kv_quantization(k, v, 4, Rounding::HalfAwayFromZero, nullptr);
    CHECK(c.k_per_channel.mse < c.k_per_token.mse);
}

// Issue #14, item 7: the decimals a student types are exact fractions, so a tie is a tie.
TEST_CASE("exact rounding of fractions: ties under both rules", "[quant][edge]") {
    CHECK(round_exact(Rational(3, 2), Rounding::HalfAwayFromZero, nullptr) == 2);
    CHECK(round_exact(Rational(3, 2), Rounding::HalfToEven, nullptr) == 2);
    CHECK(round_exact(Rational(7, 2), Rounding::HalfToEven, nullptr) == 4);
    CHECK(round_exact(Rational(5, 2), Rounding::HalfToEven, nullptr) == 2);
    CHECK(round_exact(Rational(5, 2), Rounding::HalfAwayFromZero, nullptr) == 3);
    CHECK(round_exact(Rational(-3, 2), Rounding::HalfAwayFromZero, nullptr) == -2);
    CHECK(round_exact(Rational(-5, 2), Rounding::HalfAwayFromZero, nullptr) == -3);
    CHECK(round_exact(Rational(-5, 2), Rounding::HalfToEven, nullptr) == -2);
    CHECK(round_exact(Rational(-1, 3), Rounding::HalfAwayFromZero, nullptr) == 0);
    CHECK(round_exact(Rational(2, 3), Rounding::HalfToEven, nullptr) == 1);
    CHECK(round_exact(Rational(4), Rounding::HalfToEven, nullptr) == 4);
}

TEST_CASE("0.15/0.1 quantizes as 3/2 and 0.35/0.1 as 7/2", "[quant][edge]") {
    // In doubles 0.15/0.1 is 1.4999999999999998: the reason for the exact path.
    CHECK(0.15 / 0.1 < 1.5);
    auto away = quantize_scalar_exact(Rational(15, 100), Rational(1, 10), 7, Rounding::HalfAwayFromZero, nullptr);
    CHECK(away.exact);
    CHECK(away.scaled_fraction == "3/2");
    CHECK(away.rounded == 2);
    CHECK(away.level == 2);
    CHECK_THAT(away.error, WithinAbs(0.05, 1e-17));  // 1e-17: 1/20 rounded to a double once
    auto even = quantize_scalar_exact(Rational(15, 100), Rational(1, 10), 7, Rounding::HalfToEven, nullptr);
    CHECK(even.level == 2);
    auto even35 = quantize_scalar_exact(Rational(35, 100), Rational(1, 10), 7, Rounding::HalfToEven, nullptr);
    CHECK(even35.level == 4);
    auto even25 = quantize_scalar_exact(Rational(25, 100), Rational(1, 10), 7, Rounding::HalfToEven, nullptr);
    CHECK(even25.level == 2);
    auto clipped = quantize_scalar_exact(Rational(15, 10), Rational(1, 10), 7, Rounding::HalfToEven, nullptr);
    CHECK(clipped.rounded == 15);
    CHECK(clipped.level == 7);
    CHECK(clipped.clipped);
    CHECK_THROWS_AS(quantize_scalar_exact(Rational(1), Rational(0), 7, Rounding::HalfToEven, nullptr), InputError);
}

TEST_CASE("params_of_weight_bytes inverts weight_storage: int8/int4 count their fp16 group scales", "[quant]") {
    const inferlab::DType int8{"int8", 8}, int4{"int4", 4}, bf16{"bf16", 16};
    // 8B weights in groups of 32: int8 is 32 B of levels + 2 B of scale per group (8.5 bits a
    // weight), int4 16 B + 2 B (4.5 bits); bf16 has no scales.
    const std::uint64_t p = 8'000'000'000;
    CHECK(inferlab::weight_storage(p, int8).total_bytes == p / 32 * 34);
    CHECK(inferlab::weight_storage(p, int4).total_bytes == p / 32 * 18);
    CHECK(inferlab::params_of_weight_bytes(p / 32 * 34, int8) == p);
    CHECK(inferlab::params_of_weight_bytes(p / 32 * 18, int4) == p);
    CHECK(inferlab::params_of_weight_bytes(16'000'000'000, bf16) == p);
    // Bytes that are not a whole number of groups round down: 35 B at int8 hold 32 weights and 1 B over.
    CHECK(inferlab::params_of_weight_bytes(35, int8) == 32);
}
