#include "inferlab/verify.hpp"

#include <cmath>
#include <stdexcept>

#include "inferlab/units.hpp"

namespace inferlab {

const char* const kDoc1 = "000_5f2b20623495609b.txt";
const char* const kDoc2 = "003_02a045288fb34aae.txt";

ExpectedValue parse_expected(const std::string& raw) {
    std::string t;
    for (char c : raw)
        if (c != ',') t += c;  // thousands separators
    double sign_ratio_prefix = 1;
    const std::string times = "×";
    if (t.rfind(times, 0) == 0) t = t.substr(times.size());
    // Fraction a/b (exact).
    if (auto slash = t.find('/'); slash != std::string::npos && t.find("token/s") == std::string::npos) {
        double a = std::stod(t.substr(0, slash)), b = std::stod(t.substr(slash + 1));
        return {a / b, 0};
    }
    std::size_t pos = 0;
    double v = std::stod(t, &pos);
    std::size_t dot = t.find('.');
    int decimals = 0;
    if (dot != std::string::npos && dot < pos) decimals = static_cast<int>(pos - dot - 1);
    std::string unit = t.substr(pos);
    while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
    double scale = 1;
    if (unit.empty() || unit == "B" || unit == "token/s" || unit == "s" || unit == "tokens") scale = 1;
    else if (unit == "KiB") scale = 1024.0;
    else if (unit == "MiB") scale = 1048576.0;
    else if (unit == "GiB") scale = 1073741824.0;
    else if (unit == "kB") scale = 1e3;
    else if (unit == "MB") scale = 1e6;
    else if (unit == "GB") scale = 1e9;
    else if (unit == "ms") scale = 1e-3;
    else throw std::logic_error("verify: unknown unit in expected text '" + raw + "'");
    return {sign_ratio_prefix * v * scale, 0.5 * std::pow(10.0, -decimals) * scale};
}

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

}  // namespace inferlab
