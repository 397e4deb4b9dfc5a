#include "equations.hpp"

#include <quadmath.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>
#include <sstream>
#include <utility>

namespace inferlab::test {
namespace {

// The printed arithmetic is evaluated in quad precision (113-bit significand): a line such as
// 1 − (1 − 1e-17)^10 = 1e-16 is true, and in doubles 1 − 1e-17 is 1, which would call it false.
using Real = __float128;

struct Interval {
    Real lo, hi;
};

// A decimal read in quad precision (1e-3 as a double literal would carry a double's error).
Real quad(const char* decimal) { return strtoflt128(decimal, nullptr); }

Interval operator+(Interval a, Interval b) { return {a.lo + b.lo, a.hi + b.hi}; }
Interval operator-(Interval a, Interval b) { return {a.lo - b.hi, a.hi - b.lo}; }
Interval operator*(Interval a, Interval b) {
    const Real p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}
std::optional<Interval> divide(Interval a, Interval b) {
    if (b.lo <= 0 && b.hi >= 0) return std::nullopt;
    return a * Interval{std::min(1 / b.lo, 1 / b.hi), std::max(1 / b.lo, 1 / b.hi)};
}
std::optional<Interval> power(Interval a, Interval e) {
    if (e.lo != e.hi) return std::nullopt;  // exponents are printed exactly (0.7^4, 2^30)
    if (a.lo < 0 && e.lo != floorq(e.lo)) return std::nullopt;
    const Real x = powq(a.lo, e.lo), y = powq(a.hi, e.lo);
    Interval r{std::min(x, y), std::max(x, y)};
    if (a.lo < 0 && a.hi > 0 && fmodq(e.lo, 2) == 0) r.lo = 0;
    return r;
}

// The scale of a unit in bytes, seconds, FLOP or tokens (dimensions are not checked: a true
// equation's units agree, and a unit's scale is what a false reading would get wrong).
const std::vector<std::pair<std::string, Real>>& units() {
    static const std::vector<std::pair<std::string, Real>> u = [] {
        std::vector<std::pair<std::string, Real>> v;
        // Whole numbers, exact as doubles and in quad precision.
        const std::pair<const char*, Real> prefixes[] = {{"", 1},      {"k", 1e3},  {"K", 1e3},   {"M", 1e6},
                                                           {"G", 1e9},   {"T", 1e12}, {"P", 1e15},  {"Ki", 1024.0},
                                                           {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}};
        for (const auto& [p, s] : prefixes) {
            v.push_back({std::string(p) + "B/s", s});
            v.push_back({std::string(p) + "B", s});
            if (std::string(p).size() == 1 || std::string(p).empty()) {
                v.push_back({std::string(p) + "FLOP/s", s});
                v.push_back({std::string(p) + "FLOPS", s});
                v.push_back({std::string(p) + "FLOPs", s});
                v.push_back({std::string(p) + "FLOP", s});
            }
        }
        for (const auto& [name, s] : std::vector<std::pair<std::string, Real>>{
                 {"tokens/s", 1}, {"token/s", 1}, {"tok/s", 1}, {"tokens", 1}, {"token", 1}, {"ms", quad("1e-3")},
                 {"µs", quad("1e-6")}, {"us", quad("1e-6")}, {"ns", quad("1e-9")}, {"s", 1}, {"%", quad("0.01")},
                 {"bits", 1}, {"bit", 1}})
            v.push_back({name, s});
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
        return v;
    }();
    return u;
}

bool is_letter_at(const std::string& s, std::size_t i) {
    if (i >= s.size()) return false;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    return std::isalpha(c) || c == '_' || c >= 0x80;  // any non-ASCII character may be a symbol's
}

// A recursive-descent reader of one side; fails (nullopt) on anything but printed arithmetic.
class Reader {
public:
    explicit Reader(const std::string& s) : s_(s) {}

    bool trailing_prose = false;  // prose followed the value: it ends the chain after this side
    std::vector<std::pair<Interval, Interval>> restated;  // a quantity and its restatement in brackets

    // One number and the scale of the unit after it, read from the start.
    std::optional<std::pair<Interval, Real>> quantity() {
        auto n = number();
        if (!n) return std::nullopt;
        const Real scale = unit().value_or(1);
        return std::pair{Interval{n->lo * scale, n->hi * scale}, scale};
    }

    // The value of the side's leading arithmetic, when what follows it is prose or nothing.
    std::optional<Interval> side() {
        skip();
        skip_label();
        auto v = expr();
        if (!v) return std::nullopt;
        skip();
        if (at_ == s_.size()) return v;
        // A sentence's full stop, or an annotation in brackets that closes the side ("80 GiB
        // [--memory 80GiB]", "3/5 (p = 3/5)"; check_line reads an equation inside it on its own).
        if (s_.compare(at_, std::string::npos, ".") == 0 || closes_at_end('(', ')') || closes_at_end('[', ']')) return v;
        // Prose after the number ("16384 B per layer", "37/10 exactly (...)") is dropped; a
        // symbol glued to it ("2·L") has already failed the parse.
        // Prose that names more numbers ("519 blocks of 5,505,024 B") leaves the side's value
        // unclear: not evaluated.
        const bool prose = at_ > 0 && s_[at_ - 1] == ' ' && (is_letter_at(s_, at_) || s_[at_] == '(');
        // ... unless the numbers are in a closing annotation ("64 kB per token per layer
        // (kv_lora_rank 512 + qk_rope_head_dim 64)"), which check_line reads on its own.
        if (prose && s_.find_first_of("0123456789", at_) >= annotation_start()) {
            trailing_prose = true;
            return v;
        }
        return std::nullopt;
    }

private:
    // A label in words before the side's number ("each holds 16,384 B", "per request 1 GiB"): words
    // of letters only, one of them at least two letters long, then a space and a digit. A symbol
    // ("W 16") or a name with digits ("llama-3-8b at S") is no label.
    void skip_label() {
        std::size_t k = at_;
        bool word = false;
        std::size_t run = 0;
        while (k < s_.size() && (!std::isdigit(static_cast<unsigned char>(s_[k])) || run > 0)) {
            const char c = s_[k];
            if (std::isalpha(static_cast<unsigned char>(c))) {
                if (++run >= 2) word = true;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                // a dtype's digits ("bf16", "int4") belong to its word
            } else if (c == ' ' || c == '-' || c == '/' || c == '\'') {
                run = 0;
            } else {
                return;
            }
            ++k;
        }
        if (word && k < s_.size() && k > at_ && s_[k - 1] == ' ') at_ = k;
    }

    // Where a bracketed group that closes the side begins, a full stop after it allowed (the
    // side's end when there is none).
    std::size_t annotation_start() const {
        std::size_t end = s_.find_last_not_of(' ');
        if (end == std::string::npos) return s_.size();
        if (s_[end] == '.' && end > 0) --end;
        if (s_[end] != ')' && s_[end] != ']') return s_.size();
        const char close = s_[end], open = close == ')' ? '(' : '[';
        int depth = 0;
        for (std::size_t k = end + 1; k-- > at_;) {
            if (s_[k] == close) ++depth;
            if (s_[k] == open && --depth == 0) return k;
        }
        return s_.size();
    }

    // Whether the rest of the side is one bracketed group, `open` here and its match at the end.
    bool closes_at_end(char open, char close) const {
        if (at_ >= s_.size() || s_[at_] != open) return false;
        int depth = 0;
        for (std::size_t k = at_; k < s_.size(); ++k) {
            if (s_[k] == open) ++depth;
            if (s_[k] == close && --depth == 0) return s_.find_first_not_of(' ', k + 1) == std::string::npos;
        }
        return false;
    }

    void skip() {
        while (at_ < s_.size() && s_[at_] == ' ') ++at_;
    }
    bool eat(const std::string& tok) {
        skip();
        if (s_.compare(at_, tok.size(), tok) != 0) return false;
        at_ += tok.size();
        return true;
    }

    std::optional<Interval> expr() {
        auto v = term();
        while (v) {
            if (eat("+")) {
                auto r = term();
                if (!r) return std::nullopt;
                v = *v + *r;
            } else if (eat("−") || eat("-")) {
                auto r = term();
                if (!r) return std::nullopt;
                v = *v - *r;
            } else {
                break;
            }
        }
        return v;
    }
    std::optional<Interval> term() {
        auto v = factor();
        while (v) {
            if (eat("×") || eat("·") || eat("*")) {
                auto r = factor();
                if (!r) return std::nullopt;
                v = *v * *r;
            } else if (peek_division() && (eat("/") || eat("÷"))) {
                auto r = factor();
                if (!r) return std::nullopt;
                v = divide(*v, *r);
            } else {
                break;
            }
        }
        return v;
    }
    bool peek_division() {
        skip();
        return s_.compare(at_, 1, "/") == 0 || s_.compare(at_, 2, "÷") == 0;
    }
    std::optional<Interval> factor() {
        auto base = unary();
        if (!base || !eat("^")) return base;
        auto e = factor();
        if (!e) return std::nullopt;
        return power(*base, *e);
    }
    std::optional<Interval> unary() {
        if (eat("−") || eat("-")) {
            auto v = unary();
            if (!v) return std::nullopt;
            return Interval{-v->hi, -v->lo};
        }
        return primary();
    }
    std::optional<Interval> primary() {
        skip();
        if (eat("(")) {
            auto v = expr();
            if (!v || !eat(")")) return std::nullopt;
            return v;
        }
        for (const char* f : {"min", "max", "ceil", "floor", "round", "clip", "sqrt", "expm1", "log1p"})
            if (s_.compare(at_, std::string(f).size() + 1, std::string(f) + "(") == 0) return call(f);
        skip_label();  // "data 64 B + metadata 4 B"
        auto n = number();
        if (!n) return std::nullopt;
        const auto scale = unit();
        Interval v{n->lo * scale.value_or(1), n->hi * scale.value_or(1)};
        if (scale) restatement(v);  // a quantity with its unit may be said again in another
        return v;
    }
    std::optional<Interval> call(const std::string& f) {
        at_ += f.size() + 1;
        std::vector<Interval> args;
        do {
            auto a = expr();
            if (!a) return std::nullopt;
            args.push_back(*a);
        } while (eat(","));
        if (!eat(")")) return std::nullopt;
        // Each function below is increasing, so an interval maps to the interval of its ends.
        auto each = [&](Real (*fn)(Real)) -> std::optional<Interval> {
            if (args.size() != 1) return std::nullopt;
            return Interval{fn(args[0].lo), fn(args[0].hi)};
        };
        if (f == "ceil") return each([](Real x) { return ceilq(x); });
        if (f == "sqrt" && args.size() == 1 && args[0].lo >= 0) return each([](Real x) { return sqrtq(x); });
        if (f == "floor") return each([](Real x) { return floorq(x); });
        if (f == "round") return each([](Real x) { return roundq(x); });  // half away from zero
        if (f == "expm1") return each([](Real x) { return expm1q(x); });
        if (f == "log1p" && args.size() == 1 && args[0].lo > -1) return each([](Real x) { return log1pq(x); });
        if (f == "clip") {
            if (args.size() != 3) return std::nullopt;
            return Interval{std::min(std::max(args[0].lo, args[1].lo), args[2].lo),
                            std::min(std::max(args[0].hi, args[1].hi), args[2].hi)};
        }
        if (args.size() < 2) return std::nullopt;
        Interval r = args[0];
        for (std::size_t i = 1; i < args.size(); ++i)
            r = f == "min" ? Interval{std::min(r.lo, args[i].lo), std::min(r.hi, args[i].hi)}
                           : Interval{std::max(r.lo, args[i].lo), std::max(r.hi, args[i].hi)};
        return r;
    }
    // 1,342,052,838,400 (groups of three), 0.4, 3.35e+12: an integer is exact, a decimal stands
    // for the values that round to it.
    std::optional<Interval> number() {
        skip();
        const std::size_t start = at_;
        std::string digits;
        while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) digits += s_[at_++];
        if (digits.empty()) return std::nullopt;
        if (digits.size() <= 3)
            while (at_ < s_.size() && s_[at_] == ',' && grouped_at(at_)) {
                digits += s_.substr(at_ + 1, 3);
                at_ += 4;
            }
        int decimals = 0;
        if (at_ + 1 < s_.size() && s_[at_] == '.' && std::isdigit(static_cast<unsigned char>(s_[at_ + 1]))) {
            digits += s_[at_++];
            while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
                digits += s_[at_++];
                ++decimals;
            }
        }
        int exponent = 0;
        if (at_ + 1 < s_.size() && s_[at_] == 'e' &&
            (std::isdigit(static_cast<unsigned char>(s_[at_ + 1])) || s_[at_ + 1] == '+' || s_[at_ + 1] == '-')) {
            std::size_t k = at_ + 1;
            if (s_[k] == '+' || s_[k] == '-') ++k;
            if (k < s_.size() && std::isdigit(static_cast<unsigned char>(s_[k]))) {
                std::size_t used = 0;
                const std::string tail = s_.substr(at_ + 1, 6);  // at most a sign and five digits
                exponent = std::stoi(tail, &used);
                if (std::abs(exponent) > 400) return std::nullopt;
                at_ += 1 + used;
            }
        }
        const bool more_digits = at_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[at_])) ||
                                                     (s_[at_] == '.' && at_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_ + 1]))));
        if (more_digits) {  // "1.2.3", "1,2345": not a number as printed (a full stop after one is)
            at_ = start;
            return std::nullopt;
        }
        // The literal read in one rounding to quad precision (digits and exponent together).
        const Real v = quad((digits + "e" + std::to_string(exponent)).c_str());
        // A decimal of one or two significant digits (0.5 B, 0.75, 3.35e12 aside) is read as an
        // input, exact; a longer one as a rounded result.
        std::size_t significant = 0;
        bool leading = true;
        for (char ch : digits) {
            if (ch == '.') continue;
            if (ch != '0') leading = false;
            if (!leading) ++significant;
        }
        const bool rounded = (decimals > 0 || exponent != 0) && significant > 2;
        const Real half = rounded ? Real(0.5) * powq(10, exponent - decimals) : 0;
        return Interval{v - half, v + half};
    }
    // A comma followed by exactly three digits groups them (1,342,052); "1,8" is a list.
    bool grouped_at(std::size_t comma) const {
        for (std::size_t k = comma + 1; k <= comma + 3; ++k)
            if (k >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[k]))) return false;
        return comma + 4 >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[comma + 4]));
    }
    std::optional<Real> unit() {
        std::size_t k = at_;
        if (k < s_.size() && s_[k] == ' ') ++k;
        for (const auto& [name, scale] : units())
            if (s_.compare(k, name.size(), name) == 0 && !is_letter_at(s_, k + name.size())) {
                at_ = k + name.size();
                return scale;
            }
        return std::nullopt;
    }
    // "3.35 TB/s (3.35e+12 B/s)": the same quantity said again in other units, kept to be compared
    // with the value before it.
    void restatement(Interval before) {
        const std::size_t save = at_;
        if (!eat("(")) return;
        auto n = number();
        const auto scale = n ? unit() : std::nullopt;
        if (n && scale && eat(")")) {
            restated.push_back({before, Interval{n->lo * *scale, n->hi * *scale}});
            return;
        }
        at_ = save;
    }

    const std::string& s_;
    std::size_t at_ = 0;
};

// The clauses of a line: cut where one statement ends and another begins, outside parentheses.
std::vector<std::string> clauses(const std::string& line) {
    static const std::vector<std::string> cuts = {"; ", ": ", "→", "≤", "≥", "  ", ", ", "<", ">", "；", "：", "，"};
    std::vector<std::string> out;
    std::string cur;
    int depth = 0;
    for (std::size_t i = 0; i < line.size();) {
        const char c = line[i];
        if (c == '(' || c == '[' || c == '{') ++depth;
        if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        // "L=32 B=1 S=8192": a name glued to its value is a clause of its own.
        if (depth == 0 && (i == 0 || line[i - 1] == ' ')) {
            const std::size_t end = std::min(line.find(' ', i), line.size());
            const std::size_t eq = line.find('=', i);
            if (eq != std::string::npos && eq > i && eq + 1 < end && line.find_first_of("([", i) > eq) {
                out.push_back(cur);
                out.push_back(line.substr(i, end - i));
                cur.clear();
                i = end;
                continue;
            }
        }
        bool cut = false;
        if (depth == 0)
            for (const auto& k : cuts)
                if (line.compare(i, k.size(), k) == 0) {
                    out.push_back(cur);
                    cur.clear();
                    i += k.size();
                    cut = true;
                    break;
                }
        if (cut) continue;
        if (c == ':' && i + 1 == line.size()) {  // a clause that ends the line with a colon
            ++i;
            continue;
        }
        cur += c;
        ++i;
    }
    out.push_back(cur);
    return out;
}

struct Side {
    std::string text;
    bool approx_before;  // joined to the side before it by ≈
};

// The sides of a clause's "=" and "≈" signs, outside parentheses ("= ≈1.2 TiB" is one ≈).
std::vector<Side> sides(const std::string& clause) {
    std::vector<Side> out;
    std::string cur;
    bool approx = false;
    int depth = 0;
    for (std::size_t i = 0; i < clause.size();) {
        const char c = clause[i];
        if (c == '(' || c == '[') ++depth;
        if ((c == ')' || c == ']') && depth > 0) --depth;
        const bool eq = depth == 0 && c == '=';
        const bool ap = depth == 0 && clause.compare(i, 3, "≈") == 0;
        if (eq || ap) {
            if (!(ap && !out.empty() && cur.find_first_not_of(' ') == std::string::npos && !out.empty())) {
                out.push_back({cur, approx});
                approx = false;
            }
            approx = approx || ap;
            cur.clear();
            i += ap ? 3 : 1;
            continue;
        }
        cur += c;
        ++i;
    }
    out.push_back({cur, approx});
    return out;
}

bool holds(Interval a, Interval b, bool approx) {
    const Real size = std::max({fabsq(a.lo), fabsq(a.hi), fabsq(b.lo), fabsq(b.hi)});
    const Real slack = approx ? Real(0.01) * size : Real(1e-9) * size + Real(1e-300);
    return a.lo <= b.hi + slack && b.lo <= a.hi + slack;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(' ');
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The contents of each outermost parenthesized group of `clause` that states an equation of its
// own: "(1 KiB = 1024 B, 1 GiB = 2^30 B)" is read as a line.
std::vector<std::string> inner_lines(const std::string& clause) {
    std::vector<std::string> out;
    int depth = 0;
    std::size_t open = 0;
    for (std::size_t i = 0; i < clause.size(); ++i) {
        if (clause[i] == '(' && depth++ == 0) open = i;
        if (clause[i] == ')' && depth > 0 && --depth == 0) {
            const std::string inner = clause.substr(open + 1, i - open - 1);
            if (inner.find('=') != std::string::npos) out.push_back(inner);
        }
    }
    return out;
}

// Whether a side that did not evaluate still names numbers a reader could check: numbers of
// their own (not the digits of a name, as llama-3-8b's), in prose ("519 blocks of 5,505,024 B")
// or in a notation the reader does not know, and no symbol. A formula in symbols ("2·L·H_kv·d·b",
// "1 − (1 − p)^N") is not an equation on numbers.
bool names_numbers(const std::string& side) {
    bool number = false;
    for (std::size_t k = 0; k < side.size(); ++k) {
        if (!std::isdigit(static_cast<unsigned char>(side[k]))) continue;
        const bool glued_before = k > 0 && (is_letter_at(side, k - 1) || (side[k - 1] == '-' && k > 1 && is_letter_at(side, k - 2)));
        std::size_t e = k;
        while (e < side.size() && (std::isdigit(static_cast<unsigned char>(side[e])) || side[e] == ',' || side[e] == '.')) ++e;
        if (!glued_before && !(is_letter_at(side, e) && !(e + 1 < side.size() && side[e] == 'e'))) number = true;
        k = e;
    }
    if (!number) return false;
    // Each run of letters: a unit or a function is neither prose nor symbol; a word of two ASCII
    // letters or more is prose; anything else (one letter, a subscript, a Greek letter) a symbol.
    for (std::size_t k = 0; k < side.size();) {
        if (!is_letter_at(side, k) || (k > 0 && std::isdigit(static_cast<unsigned char>(side[k - 1])) && side[k] == 'e')) {
            ++k;
            continue;
        }
        std::size_t e = k;
        while (is_letter_at(side, e)) ++e;
        const std::string w = side.substr(k, e - k);
        std::size_t before = k;
        while (before > 0 && side[before - 1] == ' ') --before;
        const bool after_number = before > 0 && (std::isdigit(static_cast<unsigned char>(side[before - 1])) || side[before - 1] == ')');
        const bool unit = after_number && std::any_of(units().begin(), units().end(), [&](const auto& u) {
            return side.compare(k, u.first.size(), u.first) == 0;
        });
        const bool function = w == "min" || w == "max" || w == "ceil" || w == "floor" || w == "round" || w == "clip" || w == "sqrt";
        const bool word = w.size() >= 2 && std::all_of(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
        if (!unit && !function && !word) return false;
        k = e;
    }
    return true;
}

// The clause with each number written '#': the same equation over other inputs has one pattern.
std::string pattern_of(const std::string& clause) {
    static const std::regex number(R"(\d[\d,]*(\.\d+)?(e[+-]?\d+)?)");
    return trim(std::regex_replace(clause, number, "#"));
}

void check_line(const std::string& printed, const std::string& line, EquationReport& report) {
    for (const auto& clause : clauses(line)) {
        for (const auto& inner : inner_lines(clause)) check_line(printed, inner, report);
        {
            const auto ss = sides(clause);
            std::optional<std::pair<Interval, std::string>> prev;
            bool approx = false, evaluated = false, unread = false;
            for (std::size_t i = 0; i < ss.size(); ++i) {
                approx = approx || ss[i].approx_before;
                Reader reader(ss[i].text);
                const auto v = reader.side();
                if (v) evaluated = true;
                else if (ss.size() > 1 && names_numbers(ss[i].text)) unread = true;
                for (const auto& [a, b] : reader.restated) {
                    ++report.checked;
                    if (!holds(a, b, false))
                        report.false_ones.push_back({printed, trim(ss[i].text), "(its restatement)", double(a.lo), double(a.hi),
                                                     double(b.lo), double(b.hi), false});
                }
                if (!v) continue;
                if (prev && i > 0) {
                    ++report.checked;
                    if (!holds(prev->first, *v, approx))
                        report.false_ones.push_back({printed, trim(prev->second), trim(ss[i].text), double(prev->first.lo),
                                                     double(prev->first.hi), double(v->lo), double(v->hi), approx});
                }
                prev = {{*v, ss[i].text}};
                if (reader.trailing_prose) prev.reset();  // "B = 1 and B = 8": two statements
                approx = false;
            }
            if (evaluated && unread) report.unchecked.push_back(pattern_of(clause));
        }
    }
}

}  // namespace

EquationReport check_equations(const std::string& text) {
    EquationReport report;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) check_line(line, line, report);
    std::sort(report.unchecked.begin(), report.unchecked.end());
    report.unchecked.erase(std::unique(report.unchecked.begin(), report.unchecked.end()), report.unchecked.end());
    return report;
}

std::vector<Quantity> printed_quantities(const std::string& text) {
    std::vector<Quantity> out;
    for (std::size_t at = 0; at < text.size(); ++at) {
        const bool starts = std::isdigit(static_cast<unsigned char>(text[at])) &&
                            (at == 0 || !(std::isdigit(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '.' ||
                                          text[at - 1] == ',' || is_letter_at(text, at - 1)));
        if (!starts) continue;
        const std::string rest = text.substr(at);
        Reader reader(rest);
        if (const auto q = reader.quantity()) {
            const auto [v, scale] = *q;
            const bool negative = at > 0 && (text[at - 1] == '-' || (at >= 3 && text.compare(at - 3, 3, "−") == 0));
            out.push_back(negative ? Quantity{double(-v.hi), double(-v.lo), double(scale)}
                                   : Quantity{double(v.lo), double(v.hi), double(scale)});
        }
    }
    return out;
}

std::string describe(const EquationFinding& f) {
    std::ostringstream o;
    o.precision(17);
    o << "false equation: \"" << f.left << "\" [" << f.left_low << ", " << f.left_high << "] " << (f.approximate ? "≈" : "=")
      << " \"" << f.right << "\" [" << f.right_low << ", " << f.right_high << "] in the line\n  " << f.line;
    return o.str();
}

}  // namespace inferlab::test
