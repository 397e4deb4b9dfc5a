#pragma once
// Exact fractions for probabilities given as short decimals, so 0.3/0.4 prints as 3/4 and not
// 0.7499999999999999. Numerator and denominator stay reduced and within 64 bits; a result
// outside that is an OverflowError, never a wrapped value.
#include <cstdint>
#include <string>

namespace inferlab {

class Rational {
public:
    Rational() = default;
    Rational(std::int64_t n) : num_(n), den_(1) {}  // NOLINT: an integer is a fraction
    Rational(std::int64_t n, std::int64_t d);
    std::int64_t num() const { return num_; }
    std::int64_t den() const { return den_; }
    double to_double() const { return static_cast<double>(num_) / static_cast<double>(den_); }
    std::string str() const;  // "3/4", "1", "0", "-1/2"

    friend Rational operator+(const Rational& a, const Rational& b);
    friend Rational operator-(const Rational& a, const Rational& b);
    friend Rational operator*(const Rational& a, const Rational& b);
    friend Rational operator/(const Rational& a, const Rational& b);
    friend bool operator==(const Rational& a, const Rational& b) { return a.num_ == b.num_ && a.den_ == b.den_; }
    friend bool operator<(const Rational& a, const Rational& b);
    friend bool operator>(const Rational& a, const Rational& b) { return b < a; }
    friend bool operator<=(const Rational& a, const Rational& b) { return !(b < a); }
    friend bool operator>=(const Rational& a, const Rational& b) { return !(a < b); }
    Rational& operator+=(const Rational& b) { return *this = *this + b; }

private:
    std::int64_t num_ = 0, den_ = 1;
};

Rational abs(const Rational& r);
double to_double(const Rational& r);
inline double to_double(double v) { return v; }

// "0.6" → 3/5, "1" → 1, "2.5e-1" → 1/4. Throws InputError (naming `where`) when the text is not
// a decimal that fits; the caller then falls back to floating point.
Rational parse_rational(const std::string& where, const std::string& text);
// True when every text parses exactly as a decimal of at most `max_frac` fractional digits.
bool is_short_decimal(const std::string& text, int max_frac = 9);

}  // namespace inferlab
