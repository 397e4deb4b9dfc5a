#include "inferlab/base/rational.hpp"

#include <cctype>
#include <numeric>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"

namespace inferlab {
namespace {

__extension__ typedef __int128 i128;

Rational make(i128 n, i128 d) {
    if (d == 0) throw std::domain_error("division by zero in a fraction");
    if (d < 0) {
        n = -n;
        d = -d;
    }
    i128 a = n < 0 ? -n : n, b = d;
    while (b) {
        i128 t = a % b;
        a = b;
        b = t;
    }
    if (a > 1) {
        n /= a;
        d /= a;
    }
    if (n > INT64_MAX || n < INT64_MIN || d > INT64_MAX) throw OverflowError(N_("an exact fraction"));
    return Rational(static_cast<std::int64_t>(n), static_cast<std::int64_t>(d));
}

}  // namespace

Rational::Rational(std::int64_t n, std::int64_t d) {
    if (d == 0) throw std::domain_error("fraction with denominator 0");
    std::int64_t g = std::gcd(n, d);
    if (g == 0) g = 1;
    num_ = n / g;
    den_ = d / g;
    if (den_ < 0) {
        num_ = -num_;
        den_ = -den_;
    }
}

std::string Rational::str() const {
    return den_ == 1 ? std::to_string(num_) : std::to_string(num_) + "/" + std::to_string(den_);
}

Rational operator+(const Rational& a, const Rational& b) {
    return make(static_cast<i128>(a.num_) * b.den_ + static_cast<i128>(b.num_) * a.den_, static_cast<i128>(a.den_) * b.den_);
}
Rational operator-(const Rational& a, const Rational& b) {
    return make(static_cast<i128>(a.num_) * b.den_ - static_cast<i128>(b.num_) * a.den_, static_cast<i128>(a.den_) * b.den_);
}
Rational operator*(const Rational& a, const Rational& b) {
    return make(static_cast<i128>(a.num_) * b.num_, static_cast<i128>(a.den_) * b.den_);
}
Rational operator/(const Rational& a, const Rational& b) {
    return make(static_cast<i128>(a.num_) * b.den_, static_cast<i128>(a.den_) * b.num_);
}
bool operator<(const Rational& a, const Rational& b) {
    return static_cast<i128>(a.num_) * b.den_ < static_cast<i128>(b.num_) * a.den_;
}

Rational abs(const Rational& r) { return r.num() < 0 ? Rational(-r.num(), r.den()) : r; }
double to_double(const Rational& r) { return r.to_double(); }

bool is_short_decimal(const std::string& text, int max_frac) {
    std::size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    int digits = 0, frac = -1;
    for (; i < text.size(); ++i) {
        char c = text[i];
        if (c == '.' && frac < 0) frac = 0;
        else if (std::isdigit(static_cast<unsigned char>(c))) {
            ++digits;
            if (frac >= 0) ++frac;
        } else
            return false;
    }
    return digits > 0 && digits <= 18 && frac <= max_frac;
}

Rational parse_rational(const std::string& where, const std::string& text) {
    if (!is_short_decimal(text)) throw InputError(where, text, N_("is not a short decimal (at most 18 digits, 9 after the point)"));
    bool neg = !text.empty() && text[0] == '-';
    std::int64_t n = 0, d = 1;
    bool frac = false;
    for (char c : text) {
        if (c == '.') frac = true;
        else if (std::isdigit(static_cast<unsigned char>(c))) {
            n = n * 10 + (c - '0');
            if (frac) d *= 10;
        }
    }
    return Rational(neg ? -n : n, d);
}

}  // namespace inferlab
