#include "inferlab/data/readers.hpp"

#include <fmt/format.h>

#include <fstream>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/text/table.hpp"

namespace inferlab {
namespace {

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

bool is_comment_or_blank(const std::string& line) {
    const auto first = line.find_first_not_of(" \t\r");
    return first == std::string::npos || line[first] == '#';
}

InputError too_many(const std::string& where, const std::string& path, std::size_t max_values) {
    return InputError(where, path, N_("holds more than {0} values (the most this input takes)"), {group_thousands(max_values)});
}

}  // namespace

MatrixShape parse_dims(const std::string& where, const std::string& text, std::uint64_t max_values, bool single_allowed) {
    const std::string t = trim(text);
    if (t.empty())
        throw InputError(where, text,
                         single_allowed ? N_("is empty: give N or ROWSxCOLS, e.g. 64x128") : N_("is empty: give ROWSxCOLS, e.g. 64x128"));
    MatrixShape d;
    const auto x = t.find_first_of("xX");
    if (x == std::string::npos) {
        if (!single_allowed) throw InputError(where, text, N_("must be ROWSxCOLS, e.g. 256x128"));
        d.cols = parse_positive_int(where, t);
    } else {
        if (t.find_first_of("xX", x + 1) != std::string::npos)
            throw InputError(where, text,
                             single_allowed ? N_("must be N or ROWSxCOLS with one 'x'") : N_("must be ROWSxCOLS with one 'x'"));
        d.rows = parse_positive_int(where, t.substr(0, x));
        d.cols = parse_positive_int(where, t.substr(x + 1));
    }
    // Divided, not multiplied: the product of two 64-bit counts wraps (2^62 × 4 became 0 values).
    if (d.rows > max_values || d.cols > max_values / d.rows)
        throw InputError(where, text, N_("must hold at most {0} values"), {group_thousands(max_values)});
    return d;
}

std::vector<std::string> read_number_items(const std::string& where, const std::string& path, std::size_t max_values) {
    std::ifstream in = open_input_file(path, std::ios::in, kMaxNumberFileBytes);
    std::vector<std::string> items;
    std::string line;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (is_comment_or_blank(line)) continue;
        std::size_t start = 0;
        while (start < line.size()) {
            const auto end = line.find_first_of(", \t\r", start);
            const std::string item = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (!item.empty()) {
                if (items.size() == max_values) throw too_many(where, path, max_values);
                parse_real(fmt::format("{} line {}", where, lineno), item);  // finite, a number: the rule is checked here
                items.push_back(item);
            }
            if (end == std::string::npos) break;
            start = end + 1;
        }
    }
    if (in.bad()) throw FileError(path, N_("could not be read completely"));
    if (items.empty()) throw InputError(where, path, N_("holds no numbers"));
    return items;
}

Matrix read_matrix_file(const std::string& where, const std::string& path, std::size_t max_values) {
    std::ifstream in = open_input_file(path, std::ios::in, kMaxNumberFileBytes);
    Matrix m;
    std::string line;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (is_comment_or_blank(line)) continue;
        const std::string at = fmt::format("{} line {}", where, lineno);
        std::vector<double> row;
        std::size_t start = 0;
        while (true) {
            const auto comma = line.find(',', start);
            if (m.v.size() + row.size() == max_values) throw too_many(where, path, max_values);
            row.push_back(parse_real(at, line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        if (m.rows == 0) m.cols = row.size();
        else if (row.size() != m.cols)
            throw InputError(at, line,
                             row.size() == 1 ? N_("has {0} value; earlier rows have {1}") : N_("has {0} values; earlier rows have {1}"),
                             {group_thousands(row.size()), std::to_string(m.cols)});
        m.v.insert(m.v.end(), row.begin(), row.end());
        ++m.rows;
    }
    if (in.bad()) throw FileError(path, N_("could not be read completely"));
    if (m.v.empty()) throw InputError(where, path, N_("holds no numbers"));
    return m;
}

}  // namespace inferlab
