#include "inferlab/answer/verify.hpp"
#include "inferlab/base/i18n.hpp"

#include <cmath>
#include <stdexcept>

#include "inferlab/base/units.hpp"

namespace inferlab {

const char* const kDoc1 = "000_5f2b20623495609b.txt";
const char* const kDoc2 = "003_02a045288fb34aae.txt";

ExpectedValue parse_expected(const std::string& raw) {
    std::string t;
    for (char c : raw)
        if (c != ',') t += c;  // thousands separators
    const std::string times = "×";
    if (t.rfind(times, 0) == 0) t = t.substr(times.size());
    // Fraction a/b (exact).
    if (auto slash = t.find('/'); slash != std::string::npos && t.find("token/s") == std::string::npos) {
        double a = std::stod(t.substr(0, slash)), b = std::stod(t.substr(slash + 1));
        return {a / b, 0, ""};
    }
    std::size_t pos = 0;
    double v = std::stod(t, &pos);
    std::size_t dot = t.find('.');
    int decimals = 0;
    if (dot != std::string::npos && dot < pos) decimals = static_cast<int>(pos - dot - 1);
    std::string unit = t.substr(pos);
    while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
    // Each printed unit as a multiple of the base unit the value is kept in.
    struct Scale {
        const char* printed;
        const char* base;
        double factor;
    };
    static const Scale scales[] = {{"", "", 1},         {"B", "B", 1},           {"token/s", "token/s", 1},
                                   {"s", "s", 1},       {"tokens", "tokens", 1}, {"KiB", "B", 1024.0},
                                   {"MiB", "B", 1048576.0}, {"GiB", "B", 1073741824.0}, {"kB", "B", 1e3},
                                   {"MB", "B", 1e6},    {"GB", "B", 1e9},        {"ms", "s", 1e-3}};
    for (const auto& sc : scales)
        if (unit == sc.printed) return {v * sc.factor, 0.5 * std::pow(10.0, -decimals) * sc.factor, sc.base};
    throw std::logic_error("verify: unknown unit in expected text '" + raw + "'");
}

std::string Example::description_en() const { return substitute(description, description_args); }
std::string Example::description_shown() const { return substitute(tr(description), description_args); }

ExampleResult check_example(const Example& e) {
    ExampleResult r;
    r.example = &e;
    r.expected = parse_expected(e.expected);
    r.computed = e.compute();
    double diff = std::fabs(r.computed.value - r.expected.value);
    r.pass = std::isfinite(r.computed.value) &&
             (e.exact ? diff <= 1e-12 * std::max(1.0, std::fabs(r.expected.value))
                      : diff <= r.expected.half_unit * (1 + 1e-9));
    return r;
}

VerifyResult verify_examples(const std::string& id_prefix) {
    VerifyResult v;
    for (const auto& e : examples()) {
        if (e.id.rfind(id_prefix, 0) != 0) continue;
        v.results.push_back(check_example(e));
        ++(v.results.back().pass ? v.passed : v.failed);
    }
    return v;
}

}  // namespace inferlab
