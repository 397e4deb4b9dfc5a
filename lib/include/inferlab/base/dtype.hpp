#pragma once
// Element types and their storage width. Widths are kept in bits because int4 is half a byte.
#include <cstdint>
#include <string>
#include <vector>

namespace inferlab {

struct DType {
    std::string name;    // "bf16"
    std::uint32_t bits;  // 16
};

// fp32 (32), fp16 (16), bf16 (16), fp8 (8), int8 (8), int4 (4). Also accepts the spellings of
// Hugging Face's torch_dtype ("bfloat16", "float16", "float32", "float8_e4m3fn", ...).
DType parse_dtype(const std::string& where, const std::string& text);

// "--bytes-per-elem 2" or "0.5": a whole number of bits per element (0.5 B = 4 bits).
std::uint32_t parse_bytes_per_elem_bits(const std::string& where, const std::string& text);

std::vector<std::string> dtype_names();

// "2 B" for 16 bits, "0.5 B" for 4 bits.
std::string bits_as_bytes(std::uint32_t bits);

}  // namespace inferlab
