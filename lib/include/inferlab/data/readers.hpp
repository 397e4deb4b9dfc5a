#pragma once
// The small text formats users type or save: a file of numbers (--p-file, --q-file), a matrix
// file (--file, --k-file, --v-file) and a shape "ROWSxCOLS" (--gen, --kv-gen). Each is read in
// one place; every way one can be wrong is an InputError naming the caller's `where` (the flag),
// the value and the rule, or a FileError for a file that cannot be read.
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/calc/quant.hpp"

namespace inferlab {

// A shape: rows × cols values.
struct MatrixShape {
    std::uint64_t rows = 1, cols = 0;
};

// "ROWSxCOLS" (rows and cols whole numbers ≥ 1), or "N" alone as one row when `single_allowed`.
// The product is checked against `max_values` factor by factor, so 2^62 × 4 is refused rather
// than wrapped to 0. Errors: empty, junk, a zero, a missing side, more than `max_values`.
MatrixShape parse_dims(const std::string& where, const std::string& text, std::uint64_t max_values, bool single_allowed);

// The numbers of a list file, as typed (so that a caller may read short decimals as exact
// fractions): separated by commas, spaces, tabs or line ends; lines starting with '#' skipped.
// Errors: no number at all, an item that is not a finite number (NaN, inf, 1e999, "abc"), more
// than `max_values` items (the file is not read past them).
std::vector<std::string> read_number_items(const std::string& where, const std::string& path, std::size_t max_values);

// A matrix file: one row per line, values separated by commas; blank lines and lines starting
// with '#' skipped; a one-value-per-line file is one column. Errors as read_number_items, each
// naming "<where> line N", and rows of unequal length.
Matrix read_matrix_file(const std::string& where, const std::string& path, std::size_t max_values);

}  // namespace inferlab
