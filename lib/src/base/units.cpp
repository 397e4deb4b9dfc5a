#include "inferlab/base/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"

namespace inferlab {
namespace {

// value = mantissa × 10^exp10 (× -1 when negative), parsed exactly from decimal text.
struct Decimal {
    u128 mantissa = 0;
    int exp10 = 0;
    bool negative = false;
};

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

// Splits "1.5GiB" into an exact decimal and the suffix "GiB". Throws when no number leads.
std::pair<Decimal, std::string> split_number(const std::string& where, const std::string& raw) {
    const std::string text = trim(raw);
    Decimal d;
    std::size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) d.negative = text[i++] == '-';
    int digits = 0, frac_digits = 0;
    bool seen_point = false;
    for (; i < text.size(); ++i) {
        char c = text[i];
        if (c == '.' && !seen_point) {
            seen_point = true;
            continue;
        }
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        ++digits;
        if (d.mantissa == 0 && c == '0') {
            if (seen_point) ++frac_digits;
            continue;
        }
        if (digits > 36) throw InputError(where, raw, N_("has too many digits"));
        d.mantissa = d.mantissa * 10 + static_cast<unsigned>(c - '0');
        if (seen_point) ++frac_digits;
    }
    if (digits == 0) throw InputError(where, raw, N_("is not a number"));
    int exp = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E') && i + 1 < text.size() &&
        (std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
         ((text[i + 1] == '+' || text[i + 1] == '-') && i + 2 < text.size() &&
          std::isdigit(static_cast<unsigned char>(text[i + 2]))))) {
        ++i;
        bool eneg = false;
        if (text[i] == '+' || text[i] == '-') eneg = text[i++] == '-';
        int e = 0;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
            e = e * 10 + (text[i] - '0');
            if (e > 400) throw InputError(where, raw, N_("has an exponent out of range"));
        }
        exp = eneg ? -e : e;
    }
    d.exp10 = exp - frac_digits;
    return {d, text.substr(i)};
}

u128 pow10_u128(int n, const std::string& where, const std::string& raw) {
    u128 r = 1;
    for (int k = 0; k < n; ++k) {
        if (r > (~static_cast<u128>(0)) / 10) throw InputError(where, raw, N_("is too large"));
        r *= 10;
    }
    return r;
}

// Exact whole-number value of d × unit; throws when not whole (the rule `not_whole`, a msgid that
// names the unit) or too large.
std::uint64_t whole_value(const std::string& where, const std::string& raw, Decimal d, u128 unit,
                          const char* not_whole) {
    if (d.negative && d.mantissa != 0) throw InputError(where, raw, N_("must not be negative"));
    const u128 big = ~static_cast<u128>(0);
    if (d.mantissa == 0) return 0;
    if (unit != 0 && d.mantissa > big / unit) throw InputError(where, raw, N_("is too large"));
    u128 v = d.mantissa * unit;
    if (d.exp10 >= 0) {
        u128 p = pow10_u128(d.exp10, where, raw);
        if (v > big / p) throw InputError(where, raw, N_("is too large"));
        v *= p;
    } else {
        // Strip trailing decimal zeros first so "1.50GiB" is as good as "1.5GiB".
        int e = d.exp10;
        while (e < 0 && v % 10 == 0) {
            v /= 10;
            ++e;
        }
        if (e < 0) {
            u128 p = pow10_u128(-e, where, raw);
            if (v % p != 0) throw InputError(where, raw, not_whole);
            v /= p;
        }
    }
    if (v > static_cast<u128>(UINT64_MAX)) throw InputError(where, raw, N_("does not fit in 64 bits"));
    return static_cast<std::uint64_t>(v);
}

long double as_long_double(Decimal d) {
    long double v = static_cast<long double>(d.mantissa) * std::pow(10.0L, d.exp10);
    return d.negative ? -v : v;
}

struct Unit {
    const char* name;
    u128 factor;
};

u128 pow2(int k) { return static_cast<u128>(1) << k; }

const Unit kByteUnits[] = {
    {"", 1},           {"B", 1},           {"kB", 1000},        {"KB", 1000},
    {"MB", 1000000},   {"GB", 1000000000}, {"TB", 1000000000000ULL}, {"PB", 1000000000000000ULL},
    {"KiB", pow2(10)}, {"MiB", pow2(20)},  {"GiB", pow2(30)},   {"TiB", pow2(40)},
    {"PiB", pow2(50)},
};

// Explains what is wrong with a size suffix the table does not know.
[[noreturn]] void bad_size_suffix(const std::string& where, const std::string& raw, const std::string& suffix) {
    if (!suffix.empty() && suffix.back() == 'b')
        throw InputError(where, raw,
                         N_("lowercase 'b' means bits; write bytes as B (decimal kB/MB/GB/TB or binary KiB/MiB/GiB/TiB)"));
    throw InputError(where, raw,
                     N_("unknown or ambiguous size unit '{0}': use decimal kB, MB, GB, TB, PB (10^3..10^15 B) or "
                        "binary KiB, MiB, GiB, TiB, PiB (2^10..2^50 B)"),
                     {suffix});
}

// The factor of a suffix from a table; an unknown suffix is an error whose rule `unknown` (a msgid,
// {0} the suffix) lists the known ones.
template <std::size_t N>
u128 table_unit(const std::string& where, const std::string& raw, const std::string& suffix, const Unit (&table)[N],
                const char* unknown) {
    const std::string s = trim(suffix);
    for (const auto& u : table)
        if (s == u.name) return u.factor;
    throw InputError(where, raw, unknown, {s});
}

u128 size_unit(const std::string& where, const std::string& raw, const std::string& suffix) {
    std::string s = trim(suffix);
    for (const auto& u : kByteUnits)
        if (s == u.name) return u.factor;
    bad_size_suffix(where, raw, s);
}

}  // namespace

std::uint64_t parse_bytes(const std::string& where, const std::string& text) {
    auto [d, suffix] = split_number(where, text);
    return whole_value(where, text, d, size_unit(where, text, suffix), N_("is not a whole number of bytes"));
}

SizeSystem size_system(const std::string& text) {
    const std::size_t at = text.find_first_not_of("0123456789.eE+- ");
    if (at == std::string::npos) return SizeSystem::none;
    const std::string suffix = trim(text.substr(at));
    if (suffix.find('i') != std::string::npos) return SizeSystem::binary;  // KiB, MiB, GiB, TiB
    return suffix == "B" || suffix.empty() ? SizeSystem::none : SizeSystem::decimal;
}

double parse_rate(const std::string& where, const std::string& text) {
    auto [d, suffix] = split_number(where, text);
    std::string s = trim(suffix);
    if (s.size() >= 2 && s.compare(s.size() - 2, 2, "/s") == 0) s = s.substr(0, s.size() - 2);
    else if (s.size() >= 2 && s.compare(s.size() - 2, 2, "ps") == 0 && s != "ps")
        s = s.substr(0, s.size() - 2);
    else if (!s.empty())  // "1TB" is a size, not a rate: a unit must say per second
        throw InputError(where, text, N_("is a size, not a rate: give bytes per second (1TB/s) or a plain number (3.35e12)"));
    u128 unit = size_unit(where, text, s);
    long double v = as_long_double(d) * static_cast<long double>(unit);
    // Checked as the double it becomes: 1e-400 is positive in long double and 0 as a double (fuzz_units).
    if (!(static_cast<double>(v) > 0) || !std::isfinite(static_cast<double>(v)))
        throw InputError(where, text, N_("must be a positive bandwidth in bytes per second (e.g. 1TB/s, 3.35e12)"));
    // Below a byte a second the times of even one byte overflow a double's reach (1e-300 B/s):
    // no memory is that slow, so it is refused rather than printed as an infinite step.
    if (v < 1)
        throw InputError(where, text,
                         N_("must be a positive bandwidth of at least 1 byte per second (e.g. 1TB/s, 3.35e12)"));
    return static_cast<double>(v);
}

double parse_flops(const std::string& where, const std::string& text) {
    auto [d, suffix] = split_number(where, text);
    std::string s = trim(suffix);
    for (const char* tail : {"FLOP/s", "FLOPS", "FLOPs", "flops", "flop/s"}) {
        std::string t(tail);
        if (s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0) {
            s = s.substr(0, s.size() - t.size());
            break;
        }
    }
    long double unit = 0;
    if (s.empty()) unit = 1;
    else if (s == "k" || s == "K") unit = 1e3L;
    else if (s == "M") unit = 1e6L;
    else if (s == "G") unit = 1e9L;
    else if (s == "T") unit = 1e12L;
    else if (s == "P") unit = 1e15L;
    else
        throw InputError(where, text, N_("unknown unit: use a plain number or k, M, G, T, P with FLOPS (e.g. 989TFLOPS)"));
    long double v = as_long_double(d) * unit;
    if (!(static_cast<double>(v) > 0) || !std::isfinite(static_cast<double>(v)))
        throw InputError(where, text, N_("must be a positive rate in FLOP/s (e.g. 989e12, 989TFLOPS)"));
    if (v < 1) throw InputError(where, text, N_("must be a positive rate of at least 1 FLOP/s (e.g. 989e12, 989TFLOPS)"));
    return static_cast<double>(v);
}

std::uint64_t parse_tokens(const std::string& where, const std::string& text) {
    static const Unit kTokenUnits[] = {{"", 1}, {"k", 1000}, {"M", 1000000}, {"Ki", pow2(10)}, {"Mi", pow2(20)}};
    auto [d, suffix] = split_number(where, text);
    if (trim(suffix) == "K")
        throw InputError(where, text, N_("uppercase K is ambiguous for tokens: 8k = 8,000, 8Ki = 8,192"));
    const u128 unit = table_unit(where, text, suffix, kTokenUnits,
                                 N_("unknown token-count suffix '{0}': use k (1000), M (10^6), Ki (1024) or Mi (2^20)"));
    return whole_value(where, text, d, unit, N_("is not a whole number of tokens"));
}

std::uint64_t parse_nonnegative_int(const std::string& where, const std::string& text) {
    auto [d, suffix] = split_number(where, text);
    if (!trim(suffix).empty()) throw InputError(where, text, N_("must be a whole number"));
    return whole_value(where, text, d, 1, N_("is not a whole number of units (must be an integer)"));
}

std::uint64_t parse_positive_int(const std::string& where, const std::string& text) {
    std::uint64_t v = 0;
    try {
        v = parse_nonnegative_int(where, text);
    } catch (const InputError& e) {
        throw InputError(where, text, N_("must be a positive integer"));
    }
    if (v == 0) throw InputError(where, text, N_("must be a positive integer"));
    return v;
}

std::uint64_t parse_count(const std::string& where, const std::string& text) {
    static const Unit kCountUnits[] = {{"k", 1000}, {"M", 1000000}, {"Ki", pow2(10)}, {"Mi", pow2(20)}};
    auto [d, suffix] = split_number(where, text);
    if (trim(suffix).empty()) return parse_positive_int(where, text);
    if (trim(suffix) == "K") throw InputError(where, text, N_("uppercase K is ambiguous: 8k = 8,000, 8Ki = 8,192"));
    // "3,4", "8k,16k", "1..4": a list or a range where one count is taken.
    if (text.find(',') != std::string::npos || text.find("..") != std::string::npos)
        throw InputError(where, text, N_("takes one count here, not a list"));
    const u128 unit = table_unit(where, text, suffix, kCountUnits,
                                 N_("unknown count suffix '{0}': use k (1000), M (10^6), Ki (1024) or Mi (2^20)"));
    const std::uint64_t v = whole_value(where, text, d, unit, N_("is not a whole number"));
    if (v == 0) throw InputError(where, text, N_("must be a positive integer"));
    return v;
}

std::uint64_t parse_positive_int_at_most(const std::string& where, const std::string& text, std::uint64_t max,
                                         const std::string& rule) {
    const std::uint64_t v = parse_positive_int(where, text);
    if (v > max) throw InputError(where, text, rule.empty() ? N_("must be at most {0}") : rule, {group_thousands(max)});
    return v;
}

std::uint64_t parse_count_at_most(const std::string& where, const std::string& text, std::uint64_t max, const std::string& rule) {
    const std::uint64_t v = parse_count(where, text);
    if (v > max) throw InputError(where, text, rule.empty() ? N_("must be at most {0}") : rule, {group_thousands(max)});
    return v;
}

std::uint64_t parse_nonnegative_int_at_most(const std::string& where, const std::string& text, std::uint64_t max,
                                            const std::string& rule) {
    const std::uint64_t v = parse_nonnegative_int(where, text);
    if (v > max) throw InputError(where, text, rule.empty() ? N_("must be at most {0}") : rule, {group_thousands(max)});
    return v;
}

std::uint64_t parse_count_with_suffix(const std::string& where, const std::string& text) {
    static const Unit kCountUnits[] = {{"", 1},          {"k", 1000},          {"K", 1000},
                                       {"M", 1000000},   {"B", 1000000000},    {"G", 1000000000},
                                       {"T", 1000000000000ULL}};
    auto [d, suffix] = split_number(where, text);
    const u128 unit = table_unit(where, text, suffix, kCountUnits, N_("unknown suffix '{0}': use k, M, B (10^9) or T (10^12)"));
    std::uint64_t v = whole_value(where, text, d, unit, N_("is not a whole number of units"));
    if (v == 0) throw InputError(where, text, N_("must be positive"));
    return v;
}

double parse_real(const std::string& where, const std::string& text) {
    auto [d, suffix] = split_number(where, text);
    if (!trim(suffix).empty()) throw InputError(where, text, N_("is not a number"));
    // strtod gives the correctly rounded double; the exact split above only validated the form.
    std::string t = trim(text);
    double v = std::strtod(t.c_str(), nullptr);
    if (!std::isfinite(v)) throw InputError(where, text, N_("must be a finite number"));
    return v;
}

double parse_seconds(const std::string& where, const std::string& text) {
    struct Scale {
        const char* suffix;
        double seconds;
    };
    static const Scale kScales[] = {{"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}, {"s", 1}};
    const std::string t = trim(text);
    for (const Scale& s : kScales) {
        const std::string suf = s.suffix;
        if (t.size() > suf.size() && t.compare(t.size() - suf.size(), suf.size(), suf) == 0) {
            const double v = parse_real(where, t.substr(0, t.size() - suf.size()));
            if (v < 0) throw InputError(where, text, N_("must not be negative"));
            return v * s.seconds;
        }
    }
    const double v = parse_real(where, t);
    if (v != 0) throw InputError(where, text, N_("needs a unit: s, ms, us or ns (50ms, 1s)"));
    return 0;
}

double parse_positive_real(const std::string& where, const std::string& text) {
    double v = parse_real(where, text);
    if (!(v > 0)) throw InputError(where, text, N_("must be greater than 0"));
    return v;
}

double parse_probability(const std::string& where, const std::string& text) {
    double v = parse_real(where, text);
    if (v < 0 || v > 1) throw InputError(where, text, N_("must be a probability in [0, 1]"));
    return v;
}

std::vector<std::string> split_list(const std::string& where, const std::string& text) {
    std::vector<std::string> out;
    if (trim(text).empty()) throw InputError(where, text, N_("is an empty list"));
    std::size_t start = 0;
    while (true) {
        std::size_t comma = text.find(',', start);
        std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (item.empty()) throw InputError(where, text, N_("has an empty item in the list"));
        out.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

std::vector<std::string> split_count_list(const std::string& where, const std::string& text) {
    // d{1,3}(,ddd)+ with nothing else: the way group_thousands prints one number.
    const std::string t = trim(text);
    std::size_t first = 0;
    while (first < t.size() && std::isdigit(static_cast<unsigned char>(t[first]))) ++first;
    bool grouped = first >= 1 && first <= 3 && first < t.size();
    for (std::size_t i = first; grouped && i < t.size(); i += 4) {
        grouped = i + 4 <= t.size() && t[i] == ',';
        for (std::size_t k = i + 1; grouped && k < i + 4; ++k) grouped = std::isdigit(static_cast<unsigned char>(t[k])) != 0;
    }
    if (grouped) {
        std::string joined;
        for (char ch : t)
            if (ch != ',') joined.push_back(ch);
        throw InputError(where, text,
                         N_("reads as one number with thousands separators: write {0} (no commas), or put a space "
                            "after each comma for a list of separate values ({1}, {2})"),
                         {joined, t.substr(0, t.find(',')), t.substr(t.find(',') + 1, 3)});
    }
    return split_list(where, text);
}

std::vector<std::uint64_t> parse_int_list_or_range(const std::string& where, const std::string& text,
                                                   std::uint64_t max_items) {
    std::vector<std::uint64_t> out;
    for (const auto& item : split_count_list(where, text)) {
        auto dots = item.find("..");
        if (dots == std::string::npos) {
            out.push_back(parse_count(where, item));
        } else {
            std::uint64_t lo = parse_count(where, item.substr(0, dots));
            std::uint64_t hi = parse_count(where, item.substr(dots + 2));
            if (hi < lo) throw InputError(where, item, N_("is a range whose end is below its start"));
            if (hi - lo >= max_items)
                throw InputError(where, item, N_("spans more than {0} values"), {std::to_string(max_items)});
            for (std::uint64_t b = lo; b <= hi; ++b) out.push_back(b);
        }
        if (out.size() > max_items)
            throw InputError(where, text, N_("lists more than {0} values"), {std::to_string(max_items)});
    }
    return out;
}


}  // namespace inferlab
