// The size / unit / token-count / number parsers. The first byte picks the parser, the rest is
// the text typed after the flag. Results are checked where a rule says what they must be.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"

namespace {

void require(bool ok) {
    if (!ok) std::abort();  // a parser broke its own stated rule: a finding
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    using namespace inferlab;
    try {
        switch (data[0] % 14) {
            case 0: (void)parse_bytes("--x", text); break;
            case 1: require(parse_rate("--x", text) > 0 && std::isfinite(parse_rate("--x", text))); break;
            case 2: require(parse_flops("--x", text) > 0 && std::isfinite(parse_flops("--x", text))); break;
            case 3: (void)parse_tokens("--x", text); break;
            case 4: require(parse_positive_int("--x", text) > 0); break;
            case 5: (void)parse_nonnegative_int("--x", text); break;
            case 6: require(parse_count_with_suffix("--x", text) > 0); break;
            case 7: require(std::isfinite(parse_real("--x", text))); break;
            case 8: {
                const double p = parse_probability("--x", text);
                require(p >= 0 && p <= 1);
                break;
            }
            case 9: require(parse_int_list_or_range("--x", text).size() <= 4096); break;
            case 10: {
                const std::uint32_t bits = parse_bytes_per_elem_bits("--x", text);
                require(bits >= 1 && bits <= 64);
                break;
            }
            case 11: (void)parse_dtype("--x", text); break;
            case 12: require(parse_positive_int_at_most("--x", text, 256, "") <= 256); break;
            case 13: {
                // Printing a parsed size back must not fail, whatever its value.
                const std::uint64_t b = parse_bytes("--x", text);
                require(!bytes_all_units(b).empty());
                break;
            }
        }
    } catch (const inferlab::Error&) {
    }
    return 0;
}
