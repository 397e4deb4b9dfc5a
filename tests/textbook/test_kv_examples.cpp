// The KV-memory worked examples of both documents, recomputed through the library.
// Golden values are the documents' printed numbers.
#include <catch2/catch.hpp>

#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/kv.hpp"

using namespace inferlab;

TEST_CASE("000_5f2b20623495609b.txt §2.1.1: 2×32×1×8192×8×128×2 = 1,073,741,824 B = 1 GiB", "[textbook][doc1]") {
    std::uint64_t m = kv_bytes_uniform(32, 1, 8192, 8, 128, 16);
    CHECK(m == 1073741824ULL);
    CHECK(binary_size(m) == "1 GiB");
    CHECK(kv_bytes(uniform_kv(32, 8, 128, 16), {8192}).total_bytes == m);
}

TEST_CASE("000_5f2b20623495609b.txt §2.1.1: MHA (H_kv=32) is 4 GiB, eight requests 32 GiB and 8 GiB",
          "[textbook][doc1]") {
    CHECK(binary_size(kv_bytes_uniform(32, 1, 8192, 32, 128, 16)) == "4 GiB");
    CHECK(binary_size(kv_bytes_uniform(32, 8, 8192, 32, 128, 16)) == "32 GiB");
    CHECK(binary_size(kv_bytes_uniform(32, 8, 8192, 8, 128, 16)) == "8 GiB");
}

TEST_CASE("000_5f2b20623495609b.txt §2.1.3: 1 GiB is 1.073741824 GB", "[textbook][doc1]") {
    CHECK(decimal_size(kv_bytes_uniform(32, 1, 8192, 8, 128, 16)) == "1.073741824 GB");
}

TEST_CASE("003_02a045288fb34aae.txt 从一个 Token 算到整个请求: s_token = 163840 B = 160 KiB", "[textbook][doc2]") {
    std::uint64_t s = bytes_per_token(uniform_kv(40, 8, 128, 16));
    CHECK(s == 163840);
    CHECK(binary_size(s) == "160 KiB");
}

TEST_CASE("003_02a045288fb34aae.txt 从一个 Token 算到整个请求: 8192 × 160 KiB = 1.25 GiB, ten sequences 12.5 GiB",
          "[textbook][doc2]") {
    KvSpec spec = uniform_kv(40, 8, 128, 16);
    CHECK(binary_size(kv_bytes(spec, {8192}).total_bytes) == "1.25 GiB");
    auto ten = kv_bytes(spec, std::vector<std::uint64_t>(10, 8192));
    CHECK(ten.total_bytes == 13421772800ULL);
    CHECK(binary_size(ten.total_bytes) == "12.5 GiB");
}

TEST_CASE("003_02a045288fb34aae.txt 用 GQA 理解容量里的 Head 数: MHA 1, GQA 1/4, MQA 1/32, widths 4096 and 1024",
          "[textbook][doc2]") {
    auto rows = compare_head_sharing(40, 32, 8, 128, 16, {8192});
    REQUIRE(rows.size() == 3);
    CHECK((rows[0].ratio_num == 1 && rows[0].ratio_den == 1));
    CHECK((rows[1].ratio_num == 1 && rows[1].ratio_den == 4));
    CHECK((rows[2].ratio_num == 1 && rows[2].ratio_den == 32));
    CHECK(rows[0].kv_proj_width == 4096);  // = H_q·d, the Q projection width
    CHECK(rows[1].kv_proj_width == 1024);
}

TEST_CASE("003_02a045288fb34aae.txt: the general per-layer form equals 2·L·H_kv·d·b for uniform layers",
          "[textbook][doc2]") {
    KvSpec spec;
    for (int l = 0; l < 40; ++l) spec.layers.push_back(KvLayer{8, 128, 128, 16, 16, 0, false});
    CHECK(bytes_per_token(spec) == 163840);
}
