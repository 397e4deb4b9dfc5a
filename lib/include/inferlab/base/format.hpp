#pragma once
// Every number formatter of the project, in one place: counts with digit groups, exact ratios,
// sizes in binary and decimal units, reals with a bounded number of significant digits, times,
// FLOP rates and bandwidths. In base because error messages at every layer print numbers with
// them (units.cpp, i18n.cpp, dtype.cpp).
#include <cstdint>
#include <string>
#include <vector>

namespace inferlab {

// 1073741824 -> "1,073,741,824".
std::string group_thousands(std::uint64_t n);

// Increasing integers with each run of consecutive ones as its ends: {1, 2, 3, 8, 29, …, 256} →
// "1–3, 8, 29–256" (a list of 228 batches would run off a figure's footer).
std::string number_ranges(const std::vector<std::uint64_t>& sorted);

// num/den as a decimal with at most max_frac digits, trailing zeros removed. Exact when the
// expansion terminates within max_frac digits; otherwise rounded and prefixed with "≈".
std::string exact_ratio(std::uint64_t num, std::uint64_t den, int max_frac = 9);

// "1 GiB", "160 KiB", "1.25 GiB", "512 B": the largest binary unit with value >= 1.
std::string binary_size(std::uint64_t bytes);
// "1.073741824 GB", "14 GB", "163.84 kB": the largest decimal unit with value >= 1.
std::string decimal_size(std::uint64_t bytes);
// "1,073,741,824 B = 1 GiB = 1.073741824 GB" (units omitted where they add nothing).
std::string bytes_all_units(std::uint64_t bytes);

// A double for people: up to `sig` significant digits, no exponent for ordinary ranges.
std::string format_real(double v, int sig = 6);

// The shortest text that reads back as exactly `v` (0.3, 0.7599, 1e-16) when it needs at most
// `max_sig` significant digits; otherwise `v` rounded to `max_sig` significant digits, trailing
// zeros dropped (0.30000000000000004 → "0.3", 1/3 → "0.333333"). NaN and infinity print as "n/a".
std::string format_short(double v, int max_sig = 6);


// One formatting per quantity (issue #15), so no value prints as "0.00" or as 35 digits:
// A time with its unit: "15.074 ms" below 1000 ms, "1.5 s" (up to 6 significant digits) past it,
// "12.5 µs" and "3.2 ns" below a millisecond, an exponent past 10^15 s.
std::string format_seconds(double seconds);
// A real with `decimals` fixed decimals ("66.34", "0.67") while that shows at least two
// significant digits and the integer part has at most 9; otherwise format_real's 6 significant
// digits ("0.000042", "1.00000e+35"). Numeric only, for table cells (the unit goes in the header).
std::string format_decimal(double v, int decimals);
// A FLOP rate with an SI prefix: "989 TFLOP/s", "1.2 PFLOP/s"; past EFLOP/s an exponent
// ("5.00000e+21 FLOP/s").
std::string format_flops(double flops_per_s);
// A bandwidth, decimal as bandwidths are quoted, with the exact figure: "1 TB/s (1e+12 B/s)".
std::string format_bandwidth(double bytes_per_s);
// A time in milliseconds as a table cell under a "(ms)" header: format_decimal(1000·s, 3).
std::string format_ms_cell(double seconds);

}  // namespace inferlab
