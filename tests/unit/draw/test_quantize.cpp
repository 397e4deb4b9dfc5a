// quantize's drawings (draw/quantize.hpp): each SVG parses with a real XML parser and the numbers
// written in it (data-value) are the result's, element by element.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "../../support/svg_check.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/draw/quantize.hpp"

using namespace inferlab;

namespace {
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

// Values are compared exactly: data-value is written with enough digits to read back the double
// (svg.hpp), and the figure copies the result's numbers without arithmetic.
// First document (000_5f2b20623495609b.txt) §4.1, Figure 15: x = 0.37, Δ = 0.1, Q = 7 lands on level 4, x̂ = 0.4.
TEST_CASE("plots: quantize --x puts 0.37 on the grid point 0.4 (first document 4.1)", "[unit][draw]") {
    const ValueQuant v = quantize_value("0.37", "0.1", 7, Rounding::HalfAwayFromZero, nullptr);
    const std::string s = plots::quantize_value_figure(v);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(test::svg_values(s, "dequantized") == std::vector<double>{v.q.dequantized});
    CHECK(test::svg_values(s, "error") == std::vector<double>{v.q.error});
    CHECK(test::svg_values(s, "input-x") == std::vector<double>{0.37});
    CHECK(test::svg_values(s, "level").size() == 15);  // the whole grid, −7..7
    CHECK_THAT(v.q.dequantized, Catch::Matchers::WithinAbs(0.4, 1e-15));  // 1e-15: exact fraction 2/5 as a double
}

// One grid drawing for quantize --x and figure doc1-fig15 (issue #15): at 16 bits (Q = 32767) both
// show the 17 levels around the chosen one, and the same levels for the same x and Δ.
TEST_CASE("plots: quantize --x and Figure 15 draw the same grid of 17 levels around a wide Q", "[unit][draw]") {
    const ValueQuant v = quantize_value("123.456", "0.5", 32767, Rounding::HalfAwayFromZero, nullptr);
    const std::string a = plots::quantize_value_figure(v);
    const std::string b = figures::fig15_quant_grid({123.456, 0.5, 16});
    const auto la = test::svg_values(a, "level"), lb = test::svg_values(b, "level");
    REQUIRE(la.size() == 17);
    CHECK(la == lb);  // the same levels: k·Δ for the same k
    CHECK(std::find(la.begin(), la.end(), v.q.dequantized) != la.end());
    CHECK(test::svg_values(a, "dequantized") == test::svg_values(b, "dequantized"));
}

TEST_CASE("plots: quantize values draw each scheme's histogram and the first group's grid", "[unit][draw]") {
    Rng rng(3);
    const Matrix m = generate_normal(8, 64, 0, 1, rng);
    QuantConfig cfg;
    cfg.bits = 4;
    cfg.granularity = Granularity::Group;
    cfg.group_size = 32;
    const ValuesQuant v = quantize_values(m, cfg, {Scheme::Symmetric, Scheme::Asymmetric}, StorageFormat{}, nullptr);
    const std::string s = plots::quantize_values_figure(v, "test values");
    REQUIRE(test::svg_parse_error(s).empty());
    std::vector<double> bins, scales, xs, xhats;
    for (const auto& r : v.results) {
        std::uint64_t total = 0;
        for (auto c : r.histogram.counts) bins.push_back(static_cast<double>(c)), total += c;
        CHECK(total == m.v.size());  // every value counted once
        scales.push_back(r.grid.scale);
        CHECK(r.grid.scale == r.quant.scales.front());
        xs.insert(xs.end(), r.grid.x.begin(), r.grid.x.end());
        xhats.insert(xhats.end(), r.grid.xhat.begin(), r.grid.xhat.end());
    }
    CHECK(test::svg_values(s, "hist-bin") == bins);
    CHECK(test::svg_values(s, "grid-scale") == scales);
    CHECK(test::svg_values(s, "grid-value") == xs);
    CHECK(test::svg_values(s, "grid-dequantized") == xhats);
    // The first group is the first 32 values of row 0; 16 of them are shown.
    CHECK(xs.size() == 2 * kGridSampleValues);
    CHECK(std::vector<double>(xs.begin(), xs.begin() + 16) == std::vector<double>(m.v.begin(), m.v.begin() + 16));
}

TEST_CASE("plots: error_histogram puts the extreme errors in the end bins and 0 in the middle", "[unit][draw]") {
    const ErrorHistogram h = error_histogram({0, 0, 0, 0}, {-0.5, 0, 0, 0.5}, 5);
    CHECK(h.lo == -0.5);
    CHECK(h.hi == 0.5);
    CHECK(h.counts == std::vector<std::uint64_t>{1, 0, 2, 0, 1});
    const ErrorHistogram z = error_histogram({1, 2}, {1, 2}, 3);
    CHECK(z.counts == std::vector<std::uint64_t>{0, 2, 0});
}

TEST_CASE("plots: quantize values outside the source dtype or needing a scale past the scale dtype are refused",
          "[unit][draw]") {
    Matrix m{1, 2, {1e308, -1e308}};
    QuantConfig cfg;
    try {
        quantize_values(m, cfg, {Scheme::Symmetric}, StorageFormat{}, nullptr, {"--values", "--source-dtype", "--scale-dtype"});
        FAIL("1e308 accepted as fp32");
    } catch (const InputError& e) {
        CHECK(e.where() == "--values");
        CHECK(has(e.what(), "fp32"));
        CHECK(has(e.what(), "3.4028235e+38"));
    }
    StorageFormat f16;
    f16.source_dtype = "fp16";
    CHECK_THROWS_AS(quantize_values(Matrix{1, 1, {70000}}, cfg, {Scheme::Symmetric}, f16, nullptr), InputError);
    // fp16 scales hold at most 65504: 1e8 / 127 does not fit.
    try {
        quantize_values(Matrix{1, 1, {1e8}}, cfg, {Scheme::Symmetric}, StorageFormat{}, nullptr,
                        {"--values", "--source-dtype", "--scale-dtype"});
        FAIL("a scale of 787402 accepted as fp16");
    } catch (const InputError& e) {
        CHECK(e.where() == "--scale-dtype");
    }
}

TEST_CASE("plots: quantize KV, storage and model figures show the result's numbers", "[unit][draw]") {
    Rng rng(1);
    const Matrix k = generate_k_with_outlier_channels(64, 32, 2, 20, rng), v = generate_normal(64, 32, 0, 1, rng);
    const KvQuantComparison c = compare_kv_quantization(k, v, 4, Rounding::HalfAwayFromZero, nullptr);
    const std::string kv = plots::quantize_kv_figure(c, 4, "test");
    REQUIRE(test::svg_parse_error(kv).empty());
    CHECK(test::svg_values(kv, "bar") == std::vector<double>{c.k_per_channel.mse, c.k_per_token.mse, c.v_per_channel.mse, c.v_per_token.mse});

    const StorageQuant st = quantize_storage(32, 32, 8, StorageFormat{32, 16, 0});
    const std::string ss = plots::quantize_storage_figure(st);
    REQUIRE(test::svg_parse_error(ss).empty());
    CHECK(test::svg_values(ss, "bar") == std::vector<double>{128, 34});  // 32 × 4 B before; 32 B + one 2-byte scale after
    CHECK(test::svg_values(ss, "segment") == std::vector<double>{32, 2});

    const KvModelQuant mq = kv_model_quant(load_named_model("llama-3-8b"), 8192, 64, parse_dtype("bf16", "bf16"), 16, 0);
    const std::string ms = plots::quantize_model_figure(mq);
    REQUIRE(test::svg_parse_error(ms).empty());
    std::vector<double> want;
    for (const auto& r : mq.rows) want.push_back(static_cast<double>(r.bytes.total_bytes) / 1e9);
    for (const auto& w : mq.weights) want.push_back(static_cast<double>(w.cost.total_bytes) / 1e9);
    CHECK(test::svg_values(ms, "bar") == want);
}

TEST_CASE("plots: error_histogram stays finite for errors near the double's ends", "[unit][draw]") {
    const ErrorHistogram big = error_histogram({-1.5e308, 1.5e308}, {1.5e308, -1.5e308}, 5);  // x̂ − x overflows to ±inf
    CHECK(big.counts == std::vector<std::uint64_t>{1, 0, 0, 0, 1});
    const ErrorHistogram tiny = error_histogram({0, 0}, {4.9e-324, 0}, 5);  // the smallest subnormal error
    CHECK(std::isfinite(tiny.lo));
    CHECK(tiny.counts[0] + tiny.counts[1] + tiny.counts[2] + tiny.counts[3] + tiny.counts[4] == 2);
}
