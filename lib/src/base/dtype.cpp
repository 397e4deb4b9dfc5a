#include "inferlab/base/dtype.hpp"

#include <cmath>

#include <algorithm>
#include <cctype>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {
namespace {

struct Alias {
    const char* spelling;
    const char* name;
    std::uint32_t bits;
};

const Alias kAliases[] = {
    {"fp32", "fp32", 32},        {"float32", "fp32", 32},       {"float", "fp32", 32},
    {"f32", "fp32", 32},         {"fp16", "fp16", 16},          {"float16", "fp16", 16},
    {"half", "fp16", 16},        {"f16", "fp16", 16},           {"bf16", "bf16", 16},
    {"bfloat16", "bf16", 16},    {"fp8", "fp8", 8},             {"float8_e4m3fn", "fp8", 8},
    {"float8_e5m2", "fp8", 8},   {"fp8_e4m3", "fp8", 8},        {"fp8_e5m2", "fp8", 8},
    {"int8", "int8", 8},         {"i8", "int8", 8},             {"int4", "int4", 4},
    {"i4", "int4", 4},
};

}  // namespace

std::vector<std::string> dtype_names() { return {"fp32", "fp16", "bf16", "fp8", "int8", "int4"}; }

DType parse_dtype(const std::string& where, const std::string& text) {
    std::string t = text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
    if (t.rfind("torch.", 0) == 0) t = t.substr(6);
    for (const auto& a : kAliases)
        if (t == a.spelling) return DType{a.name, a.bits};
    throw InputError(where, text, N_("unknown dtype (expected one of fp32, fp16, bf16, fp8, int8, int4)"));
}

std::uint32_t parse_bytes_per_elem_bits(const std::string& where, const std::string& text) {
    double v = parse_real(where, text);
    double bits = v * 8;
    // Range first: casting a double beyond uint32 (1e9 bytes) is undefined behaviour.
    if (!(v > 0) || !(bits <= 64) || bits != std::floor(bits))
        throw InputError(where, text, N_("must be a positive whole number of bits per element, e.g. 2, 1 or 0.5 (bytes)"));
    return static_cast<std::uint32_t>(bits);
}

std::string bits_as_bytes(std::uint32_t bits) { return exact_ratio(bits, 8, 3) + " B"; }

}  // namespace inferlab
