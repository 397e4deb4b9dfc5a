#include "inferlab/base/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/i18n.hpp"

namespace inferlab {

std::string group_thousands(std::uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

std::string exact_ratio(std::uint64_t num, std::uint64_t den, int max_frac) {
    if (den == 0) return "undefined";
    u128 whole = num / den;
    u128 rem = num % den;
    std::string frac;
    for (int k = 0; k < max_frac && rem != 0; ++k) {
        rem *= 10;
        frac.push_back(static_cast<char>('0' + static_cast<int>(rem / den)));
        rem %= den;
    }
    bool approx = rem != 0;
    if (approx) {
        // Round half up on the next digit.
        rem *= 10;
        if (rem / den >= 5) {
            int k = static_cast<int>(frac.size()) - 1;
            while (k >= 0 && frac[k] == '9') frac[k--] = '0';
            if (k >= 0) ++frac[k];
            else ++whole;
        }
    }
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    std::string w;
    {
        u128 x = whole;
        if (x == 0) w = "0";
        while (x) {
            w.push_back(static_cast<char>('0' + static_cast<int>(x % 10)));
            x /= 10;
        }
        std::reverse(w.begin(), w.end());
    }
    return (approx ? "≈" : "") + w + (frac.empty() ? "" : "." + frac);
}

std::string binary_size(std::uint64_t bytes) {
    static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int k = 0;
    while (k < 6 && bytes >= (std::uint64_t{1} << (10 * (k + 1)))) ++k;
    if (k == 0) return fmt::format("{} B", bytes);
    return exact_ratio(bytes, std::uint64_t{1} << (10 * k), 6) + " " + names[k];
}

std::string decimal_size(std::uint64_t bytes) {
    static const char* names[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    int k = 0;
    std::uint64_t unit = 1;
    while (k < 6 && bytes / 1000 >= unit) {
        unit *= 1000;
        ++k;
    }
    if (k == 0) return fmt::format("{} B", bytes);
    return exact_ratio(bytes, unit, 9) + " " + names[k];
}

std::string bytes_all_units(std::uint64_t bytes) {
    std::string out = group_thousands(bytes) + " B";
    if (bytes >= 1024) out += " = " + binary_size(bytes);
    if (bytes >= 1000) out += " = " + decimal_size(bytes);
    return out;
}

std::string format_real(double v, int sig) {
    if (!std::isfinite(v)) return "n/a";
    if (v == 0) return "0";
    double a = std::fabs(v);
    if (a >= 1e15 || a < 1e-6) return fmt::format("{:.{}e}", v, sig - 1);
    std::string s = fmt::format("{:.{}g}", v, sig);
    if (s.find('e') != std::string::npos) {
        int decimals = std::max(0, sig - 1 - static_cast<int>(std::floor(std::log10(a))));
        s = fmt::format("{:.{}f}", v, decimals);
        if (s.find('.') != std::string::npos) {
            while (s.back() == '0') s.pop_back();
            if (s.back() == '.') s.pop_back();
        }
    }
    return s;
}

std::string format_short(double v, int max_sig) {
    if (!std::isfinite(v)) return "n/a";
    std::string s = fmt::format("{}", v);  // fmt's default is the shortest round-trip form
    int digits = 0;
    bool leading = true;
    std::size_t last_nonzero = 0;
    for (std::size_t i = 0; i < s.size() && s[i] != 'e'; ++i) {
        if (s[i] < '0' || s[i] > '9') continue;
        if (leading && s[i] == '0') continue;
        leading = false;
        ++digits;
        if (s[i] != '0') last_nonzero = static_cast<std::size_t>(digits);
    }
    // "100" has one significant digit: trailing zeros of an integer are placeholders.
    if (static_cast<int>(last_nonzero) <= max_sig) return s;
    return fmt::format("{:.{}g}", v, max_sig);
}

std::string format_decimal(double v, int decimals) {
    if (!std::isfinite(v)) return "n/a";
    if (v == 0) return "0";
    const double a = std::fabs(v);
    // Fixed decimals keep a table's column aligned; they fail at both ends: 4.2e-05 rounds to
    // "0.00", and 1e35 prints every one of its 36 digits.
    if (a >= 1e9 || a * std::pow(10.0, decimals) < 10) return format_real(v, 6);
    return fmt::format("{:.{}f}", v, decimals);
}

std::string format_seconds(double s) {
    if (!std::isfinite(s)) return "n/a";
    if (s == 0) return "0 s";
    const double a = std::fabs(s);
    if (a >= 1) return format_real(s, 6) + " s";
    if (a >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
    if (a >= 1e-6) return format_real(s * 1e6, 4) + " µs";
    return format_real(s * 1e9, 4) + " ns";
}

std::string format_bandwidth(double bps) {
    const char* unit = "B/s";
    double v = bps;
    for (const char* u : {"kB/s", "MB/s", "GB/s", "TB/s", "PB/s"}) {
        if (v < 1000) break;
        v /= 1000;
        unit = u;
    }
    return fmt::format("{} {} ({:.6g} B/s)", format_real(v, 6), unit, bps);
}

std::string format_ms_cell(double s) { return format_decimal(s * 1e3, 3); }

std::string format_flops(double f) {
    const char* unit = "FLOP/s";
    double v = f;
    for (const char* u : {"kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s"}) {
        if (std::fabs(v) < 1000) break;
        v /= 1000;
        unit = u;
    }
    if (std::fabs(v) >= 1000) return format_real(f, 6) + " FLOP/s";  // past the last prefix: an exponent
    return format_real(v, 6) + " " + unit;
}


std::string number_ranges(const std::vector<std::uint64_t>& sorted) {
    std::string out;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
        if (!out.empty()) out += ", ";
        out += std::to_string(sorted[i]);
        if (j > i) out += (j == i + 1 ? ", " : "–") + std::to_string(sorted[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace inferlab
