#include <catch2/catch.hpp>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"

using namespace inferlab;

TEST_CASE("sizes accept bytes, decimal and binary suffixes exactly", "[units]") {
    CHECK(parse_bytes("--x", "1073741824") == 1073741824ULL);
    CHECK(parse_bytes("--x", "1GiB") == 1073741824ULL);
    CHECK(parse_bytes("--x", "14GB") == 14000000000ULL);
    CHECK(parse_bytes("--x", "160KiB") == 163840ULL);
    CHECK(parse_bytes("--x", "1e12") == 1000000000000ULL);
    CHECK(parse_bytes("--x", "1.5GiB") == 1610612736ULL);
    CHECK(parse_bytes("--x", "1.50GiB") == 1610612736ULL);
    CHECK(parse_bytes("--x", "0.5kB") == 500ULL);
    CHECK(parse_bytes("--x", "2TiB") == (2ULL << 40));
    CHECK(parse_bytes("--x", "512 B") == 512ULL);
}

TEST_CASE("sizes reject ambiguous units, bits, fractions of a byte and overflow", "[units]") {
    CHECK_THROWS_WITH(parse_bytes("--budget", "80G"), Catch::Contains("--budget '80G'") && Catch::Contains("ambiguous"));
    CHECK_THROWS_WITH(parse_bytes("--budget", "80Gb"), Catch::Contains("lowercase 'b' means bits"));
    CHECK_THROWS_WITH(parse_bytes("--x", "1.3B"), Catch::Contains("not a whole number of bytes"));
    CHECK_THROWS_WITH(parse_bytes("--x", "-5GB"), Catch::Contains("must not be negative"));
    CHECK_THROWS_WITH(parse_bytes("--x", "abc"), Catch::Contains("is not a number"));
    CHECK_THROWS_WITH(parse_bytes("--x", "20EiB"), Catch::Contains("unknown or ambiguous"));
    CHECK_THROWS_WITH(parse_bytes("--x", "100000PiB"), Catch::Contains("does not fit in 64 bits"));
    CHECK_THROWS_AS(parse_bytes("--x", ""), InputError);
}

TEST_CASE("token counts: k is 1000, Ki is 1024", "[units]") {
    CHECK(parse_tokens("--seq-len", "8192") == 8192);
    CHECK(parse_tokens("--seq-len", "8Ki") == 8192);
    CHECK(parse_tokens("--seq-len", "8k") == 8000);
    // Issue #14: "8K context" usually means 8,192, so uppercase K is refused with the two readings.
    CHECK_THROWS_WITH(parse_tokens("--seq-len", "8K"),
                      "--seq-len '8K': uppercase K is ambiguous for tokens: 8k = 8,000, 8Ki = 8,192");
    CHECK(parse_tokens("--seq-len", "1Mi") == 1048576);
    CHECK(parse_tokens("--seq-len", "1.5k") == 1500);
    CHECK_THROWS_WITH(parse_tokens("--seq-len", "8KiB"), Catch::Contains("unknown token-count suffix"));
    CHECK_THROWS_WITH(parse_tokens("--seq-len", "0.5"), Catch::Contains("not a whole number of tokens"));
}

TEST_CASE("rates in bytes per second", "[units]") {
    CHECK(parse_rate("--bandwidth", "1TB/s") == 1e12);
    CHECK(parse_rate("--bandwidth", "3.35e12") == 3.35e12);
    CHECK(parse_rate("--bandwidth", "819GB/s") == 819e9);
    CHECK(parse_rate("--bandwidth", "1TiB/s") == 1099511627776.0);
    CHECK_THROWS_WITH(parse_rate("--bandwidth", "0"), Catch::Contains("must be a positive bandwidth"));
    CHECK_THROWS_WITH(parse_rate("--bandwidth", "1T/s"), Catch::Contains("ambiguous"));
    CHECK(parse_flops("--peak-flops", "989TFLOPS") == 989e12);
    CHECK(parse_flops("--peak-flops", "1e15") == 1e15);
}

TEST_CASE("integers and probabilities name the flag and the rule", "[units]") {
    CHECK(parse_positive_int("--layers", "32") == 32);
    CHECK_THROWS_WITH(parse_positive_int("--layers", "0"), "--layers '0': must be a positive integer");
    CHECK_THROWS_WITH(parse_positive_int("--layers", "-3"), "--layers '-3': must be a positive integer");
    CHECK_THROWS_WITH(parse_positive_int("--layers", "3.5"), "--layers '3.5': must be a positive integer");
    CHECK_THROWS_WITH(parse_positive_int("--layers", "x"), "--layers 'x': must be a positive integer");
    CHECK(parse_probability("--p", "0.3") == 0.3);
    CHECK_THROWS_WITH(parse_probability("--p", "1.2"), "--p '1.2': must be a probability in [0, 1]");
    CHECK(parse_count_with_suffix("--params", "7B") == 7000000000ULL);
    CHECK(parse_count_with_suffix("--params", "7e9") == 7000000000ULL);
}

TEST_CASE("lists split on commas and reject empty items", "[units]") {
    CHECK(split_list("--seq-len", "8192, 4096,300") == std::vector<std::string>{"8192", "4096", "300"});
    CHECK_THROWS_WITH(split_list("--batch", ""), Catch::Contains("empty list"));
    CHECK_THROWS_WITH(split_list("--batch", "1,,8"), Catch::Contains("empty item"));
}

TEST_CASE("count lists refuse what reads as one number with thousands groups", "[units]") {
    // Issue #14: "8,192", inferlab's own printed format pasted back, was two requests of 8 and 192.
    CHECK_THROWS_WITH(split_count_list("--seq-len", "8,192"),
                      "--seq-len '8,192': reads as one number with thousands separators: write 8192 (no commas), "
                      "or put a space after each comma for a list of separate values (8, 192)");
    CHECK_THROWS_WITH(split_count_list("--seq-len", "1,048,576"), Catch::Contains("write 1048576"));
    CHECK_THROWS_WITH(parse_int_list_or_range("--batch", "1,000"), Catch::Contains("thousands separators"));
    CHECK(split_count_list("--seq-len", "8192,4096,300") == std::vector<std::string>{"8192", "4096", "300"});
    CHECK(split_count_list("--seq-len", "8, 192") == std::vector<std::string>{"8", "192"});
    CHECK(split_count_list("--seq-len", "8192") == std::vector<std::string>{"8192"});
    CHECK(split_count_list("--seq-len", "8,19") == std::vector<std::string>{"8", "19"});
    CHECK(split_count_list("--seq-len", "1234,567") == std::vector<std::string>{"1234", "567"});
    CHECK(parse_int_list_or_range("--batch", "1,8,64") == std::vector<std::uint64_t>{1, 8, 64});
}

TEST_CASE("exact printing of byte counts in both unit systems", "[units]") {
    CHECK(group_thousands(1073741824) == "1,073,741,824");
    CHECK(group_thousands(999) == "999");
    CHECK(group_thousands(1000) == "1,000");
    CHECK(binary_size(1073741824) == "1 GiB");
    CHECK(binary_size(163840) == "160 KiB");
    CHECK(binary_size(1342177280) == "1.25 GiB");
    CHECK(decimal_size(1073741824) == "1.073741824 GB");
    CHECK(decimal_size(14000000000ULL) == "14 GB");
    CHECK(bytes_all_units(1073741824) == "1,073,741,824 B = 1 GiB = 1.073741824 GB");
    CHECK(exact_ratio(1, 3, 4) == "≈0.3333");
    CHECK(exact_ratio(2, 3, 4) == "≈0.6667");
    CHECK(exact_ratio(3, 4) == "0.75");
    CHECK(exact_ratio(999999, 1000000, 3) == "≈1");
}

// Issue #29, item 16: a footer listed "B = 29, 30, 31, …, 256" in 1,139 characters. Runs of
// consecutive values are said by their ends; a run of two is two values.
TEST_CASE("number_ranges says runs of consecutive integers by their ends", "[units]") {
    CHECK(number_ranges({}) == "");
    CHECK(number_ranges({5}) == "5");
    CHECK(number_ranges({1, 2}) == "1, 2");
    CHECK(number_ranges({1, 2, 3, 8, 10, 11}) == "1–3, 8, 10, 11");
    std::vector<std::uint64_t> long_run;
    for (std::uint64_t b = 29; b <= 256; ++b) long_run.push_back(b);
    CHECK(number_ranges(long_run) == "29–256");
}
