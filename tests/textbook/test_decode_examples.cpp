// 000_5f2b20623495609b.txt §2.1.3 一步 Decode 的读量: the table, reproduced through the library.
#include <catch2/catch.hpp>
#include <cmath>

#include "inferlab/calc/roofline.hpp"

using namespace inferlab;

namespace {
// The document's inputs: the §2.1.1 cache (L=32, H_kv=8, d=128, BF16, S=8192) = 1 GiB,
// W = 14×10^9 B, β = 10^12 B/s.
DecodeStep step(std::uint64_t batch) {
    DecodeModel m;
    m.weight_bytes = 14000000000ULL;
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    return decode_step(m, std::vector<std::uint64_t>(batch, 8192), Machine{1e12, std::nullopt, std::nullopt});
}
// Rounded as the document prints: to `decimals` places.
double rounded(double v, int decimals) { return std::round(v * std::pow(10, decimals)) / std::pow(10, decimals); }
}  // namespace

TEST_CASE("000_5f2b20623495609b.txt §2.1.3: B=1 reads 15.074 GB, 15.074 ms, 66.34 token/s", "[textbook][doc1]") {
    DecodeStep s = step(1);
    CHECK(s.bytes == 15073741824ULL);  // 14 + 1.073741824 GB
    CHECK(rounded(static_cast<double>(s.bytes) / 1e9, 3) == 15.074);
    CHECK(rounded(s.step_time_s * 1e3, 3) == 15.074);
    CHECK(rounded(s.aggregate_tokens_per_s, 2) == 66.34);
    CHECK(rounded(s.per_request_tokens_per_s, 2) == 66.34);
}

TEST_CASE("000_5f2b20623495609b.txt §2.1.3: B=8 reads 22.590 GB, 22.590 ms, 354.14 and 44.27 token/s", "[textbook][doc1]") {
    DecodeStep s = step(8);
    CHECK(s.bytes == 22589934592ULL);  // 14 + 8 × 1.073741824 GB
    CHECK(rounded(static_cast<double>(s.bytes) / 1e9, 3) == 22.590);
    CHECK(rounded(s.step_time_s * 1e3, 3) == 22.590);
    CHECK(rounded(s.aggregate_tokens_per_s, 2) == 354.14);
    CHECK(rounded(s.per_request_tokens_per_s, 2) == 44.27);
}

TEST_CASE("000_5f2b20623495609b.txt §2.1.3: reads ×1.50, aggregate ×5.34", "[textbook][doc1]") {
    CHECK(rounded(static_cast<double>(step(8).bytes) / static_cast<double>(step(1).bytes), 2) == 1.50);
    CHECK(rounded(step(8).aggregate_tokens_per_s / step(1).aggregate_tokens_per_s, 2) == 5.34);
}

TEST_CASE("000_5f2b20623495609b.txt §2.1.3: 70亿 parameters × 2 bytes = 14 GB of weights", "[textbook][doc1]") {
    // "另为教学预算设一个70亿参数模型，权重按每数值2字节存储，合计14 GB": computed, not typed in.
    CHECK(weight_bytes_of(7000000000ULL, 16) == 14000000000ULL);
    CHECK(weight_bytes_of(7000000000ULL, 16) == step(1).weight_bytes);
}
