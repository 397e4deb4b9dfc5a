// 000_5f2b20623495609b.txt §4.1 数值精度、权重量化与缓存量化 (Figure 15).
#include <catch2/catch.hpp>

#include "inferlab/calc/quant.hpp"

using namespace inferlab;

TEST_CASE("000_5f2b20623495609b.txt §4.1: x = 0.37, Δ = 0.1, Q = 7 gives level 4, x̂ = 0.4, error 0.03", "[textbook][doc1]") {
    ScalarQuant q = quantize_scalar(0.37, 0.1, 7, Rounding::HalfAwayFromZero, nullptr);
    CHECK(q.level == 4);
    // 1e-12 absolute: x/Δ and Δ·k in binary floating point.
    CHECK_THAT(q.dequantized, Catch::Matchers::WithinAbs(0.4, 1e-12));
    CHECK_THAT(q.error, Catch::Matchers::WithinAbs(0.03, 1e-12));
}
