#pragma once
// Parsing and printing of quantities with explicit units.
//
// The documents' lesson: GiB (2^30 B) and GB (10^9 B) differ by 7.4%, so input must say
// which one it means and output always names its unit. Bare "G" or "Gi" is rejected as
// ambiguous for sizes; a lowercase "b" (bits) is rejected with a hint.
#include <cstdint>
#include <string>
#include <vector>

namespace inferlab {

// Size in bytes: "1073741824", "1e12", "14GB", "1GiB", "160KiB", "1.5GiB". Decimal suffixes
// KB MB GB TB PB (10^3..10^15), binary KiB MiB GiB TiB PiB (2^10..2^50). The value must be a
// whole number of bytes and fit 64 bits. `where` names the flag or key for the error.
std::uint64_t parse_bytes(const std::string& where, const std::string& text);

// Which unit system a size as typed uses: binary (KiB…TiB, 2^10 steps), decimal (kB…TB, 10^3
// steps), or neither (plain bytes, "B"). For the caution the documents give where two terms of a
// sum were written in the two systems (14 GB of weights + 1 GiB of KV).
enum class SizeSystem { none, decimal, binary };
SizeSystem size_system(const std::string& text);

// Bandwidth in bytes per second: "1TB/s", "3.35e12", "819GB/s", "1TiB/s". Must be > 0.
double parse_rate(const std::string& where, const std::string& text);

// Floating-point operations per second: "989e12", "989TFLOPS", "1.2PFLOP/s". Must be > 0.
double parse_flops(const std::string& where, const std::string& text);

// Token count: "8192", "8Ki" (8192), "8k" (8000), "1M" (10^6), "1Mi" (2^20). Uppercase "8K" is
// rejected: "8K context" usually means 8,192, so the reader must choose 8k or 8Ki.
std::uint64_t parse_tokens(const std::string& where, const std::string& text);

// A positive count of things (requests in a batch, candidates): a plain integer as
// parse_positive_int reads it, or with parse_tokens' suffixes ("8Ki" = 8192, "8k" = 8000), so that
// --batch 8Ki reads as --seq-len 8Ki does. Uppercase K is rejected as there.
std::uint64_t parse_count(const std::string& where, const std::string& text);

// Plain integers ("32"; scientific "1e3" accepted when whole).
std::uint64_t parse_positive_int(const std::string& where, const std::string& text);
std::uint64_t parse_nonnegative_int(const std::string& where, const std::string& text);
// The same with an upper bound, checked before any narrowing cast: "--block-size '4294967296':
// must be at most 65,536 tokens". `rule` is the msgid said when the bound is passed, {0} the bound
// ("must be at most {0} tokens", so that the unit is translated with the sentence); empty: "must be
// at most {0}".
std::uint64_t parse_positive_int_at_most(const std::string& where, const std::string& text, std::uint64_t max,
                                         const std::string& rule);
std::uint64_t parse_nonnegative_int_at_most(const std::string& where, const std::string& text, std::uint64_t max,
                                            const std::string& rule);
// parse_count (10k, 1M, 8Ki) with the same upper bound and rule.
std::uint64_t parse_count_at_most(const std::string& where, const std::string& text, std::uint64_t max, const std::string& rule);

// A parameter count: "7e9", "7B" (10^9), "70M", "1.5T"; must be whole and positive.
std::uint64_t parse_count_with_suffix(const std::string& where, const std::string& text);

// A duration in seconds with its unit: "1s", "50ms", "200us" (or "200µs"), "5ns"; "0" alone may
// go without one. Not negative.
double parse_seconds(const std::string& where, const std::string& text);

// Finite real numbers.
double parse_real(const std::string& where, const std::string& text);
double parse_positive_real(const std::string& where, const std::string& text);
double parse_probability(const std::string& where, const std::string& text);  // in [0, 1]

// "a,b,c" -> {"a","b","c"}; an empty list or an empty item is an error naming `where`.
std::vector<std::string> split_list(const std::string& where, const std::string& text);

// A list of counts (--seq-len, --batch), split as split_list does. Rule for the separator: the
// comma separates items, and a list written exactly like one number with thousands groups
// ("8,192", "1,000,000": digits, then groups of three after each comma, no spaces) is rejected
// with a hint, since inferlab prints counts that way; "8192", "8192,4096" and "8, 192" are fine.
std::vector<std::string> split_count_list(const std::string& where, const std::string& text);

// "1,8", "1..64" or a mix ("1..4,16,64"): positive integers in the order given. A range whose
// end is below its start, or more than `max_items` values, is an error naming `where`.
std::vector<std::uint64_t> parse_int_list_or_range(const std::string& where, const std::string& text,
                                                   std::uint64_t max_items = 4096);


}  // namespace inferlab
