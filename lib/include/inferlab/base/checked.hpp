#pragma once
// Checked integer arithmetic for byte counts: overflow is an error, never a wrapped number.
#include <cstdint>
#include <initializer_list>
#include <string>

#include "inferlab/base/error.hpp"

namespace inferlab {

// GCC/Clang extension; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef unsigned __int128 u128;

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const std::string& what) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw OverflowError(what);
    return r;
}

inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const std::string& what) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw OverflowError(what);
    return r;
}

inline std::uint64_t checked_product(std::initializer_list<std::uint64_t> factors, const std::string& what) {
    std::uint64_t r = 1;
    for (auto f : factors) r = checked_mul(r, f, what);
    return r;
}

inline std::uint64_t to_u64(u128 v, const std::string& what) {
    if (v > static_cast<u128>(UINT64_MAX)) throw OverflowError(what);
    return static_cast<std::uint64_t>(v);
}

}  // namespace inferlab
