// 000_5f2b20623495609b.txt §3.2 并行采样、验证与搜索.
#include <catch2/catch.hpp>

#include "inferlab/calc/best_of_n.hpp"

using namespace inferlab;

TEST_CASE("000_5f2b20623495609b.txt §3.2: p = 0.3, N = 4 gives P≥1 = 1 − 0.7^4 = 0.7599", "[textbook][doc1]") {
    // 1e-12 absolute: the document's value is exact in decimal.
    CHECK_THAT(coverage(0.3, 4), Catch::Matchers::WithinAbs(0.7599, 1e-12));
}

TEST_CASE("000_5f2b20623495609b.txt §3.2: coverage is not selection (a fallible judge picks less often)", "[textbook][doc1]") {
    CHECK(verifier_selection(0.3, 4, Verifier{0.9, 0.2, true}) < coverage(0.3, 4));
    CHECK(biased_judge_selection(0.3, 4, 0.2) < coverage(0.3, 4));
}
