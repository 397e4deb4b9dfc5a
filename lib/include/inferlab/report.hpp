#pragma once
// Printers shared by every subcommand: aligned text tables, CSV, terminal charts, and the
// guard that keeps NaN and infinity out of every output.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferlab {

struct Table {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    // Columns whose cells are right-aligned (numbers); by default every column but the first.
    std::vector<bool> right_align;
};

// Columns padded to their widest cell (display width, so "≈" and "×" count as one).
std::string render_text(const Table& t, const std::string& indent = "");
// RFC 4180: cells with a comma, quote or newline are quoted.
std::string render_csv(const Table& t);

// A horizontal bar chart: one row per label, bars scaled to the largest value, several series
// drawn with different characters ('#', '=', '+', ...), legend underneath.
struct ChartSeries {
    std::string name;
    std::vector<double> values;  // one per label; must be finite and >= 0
};
std::string render_bar_chart(const std::vector<std::string>& labels, const std::vector<ChartSeries>& series,
                             int width = 50);

// Throws std::logic_error when any number in the document is NaN or infinite: a result that
// is not a number is a bug, and must never reach the output.
void require_finite(const nlohmann::json& j, const std::string& path = "$");

// Display width of UTF-8 text (code points, not bytes).
std::size_t display_width(const std::string& s);

}  // namespace inferlab
