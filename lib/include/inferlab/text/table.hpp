#pragma once
// Printers shared by every subcommand: aligned text tables, CSV, terminal charts, and the
// guard that keeps NaN and infinity out of every output.
#include <cstdint>
#include <functional>
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

// One column of a table, described once: the text and --csv both print the Table built from these
// (the text translating the headers), so a column added here appears in both, in the same place.
//   key     the JSON key of the same figure in a row of --json ("bytes_per_step_gb"), which the
//           README's key table documents and the contract tests check
//   header  the header, a msgid with the unit in parentheses ("bytes/step (GB)")
//   cell    the row's cell: numbers only, empty where the row has none
template <class Row>
struct Column {
    std::string key;
    std::string header;
    std::function<std::string(const Row&)> cell;
};

// The table of `rows` under `columns`, in their order.
template <class Row>
Table columns_table(const std::vector<Column<Row>>& columns, const std::vector<Row>& rows) {
    Table t;
    for (const auto& c : columns) t.columns.push_back(c.header);
    for (const auto& r : rows) {
        std::vector<std::string> cells;
        for (const auto& c : columns) cells.push_back(c.cell(r));
        t.rows.push_back(std::move(cells));
    }
    return t;
}

// Columns padded to their widest cell (display width: "≈" and "×" count as one column, a CJK
// character as two). With `max_width` > 0 the table fits that many columns: headers wrap onto
// several lines, and a table still too wide prints one block of "column: value" lines per row.
std::string render_text(const Table& t, const std::string& indent = "", std::size_t max_width = 0);

// Word-wraps each paragraph (line) of `text` to `width` columns: its first line starts with
// `indent`, the lines it continues on with `hanging`. Empty lines are kept.
std::string wrap_text(const std::string& text, std::size_t width, const std::string& indent = "",
                      const std::string& hanging = "");
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

// The shortest text that reads back as exactly `v` (0.3, 0.7599, 1e-16) when it needs at most
// `max_sig` significant digits; otherwise `v` rounded to `max_sig` significant digits, trailing
// zeros dropped (0.30000000000000004 → "0.3", 1/3 → "0.333333"). NaN and infinity print as "n/a".
std::string format_short(double v, int max_sig = 6);


// One formatting per quantity (issue #15), so no value prints as "0.00" or as 35 digits:
// A time with its unit: "15.074 ms" below 1000 ms, "1.5 s" (up to 6 significant digits) past it,
// "12.5 µs" and "3.2 ns" below a millisecond, an exponent past 10^15 s.
std::string format_seconds(double seconds);
// A real with `decimals` fixed decimals ("66.34", "0.67") while that shows at least two
// significant digits and the integer part has at most 9; otherwise format_real's 6 significant
// digits ("0.000042", "1.00000e+35"). Numeric only, for table cells (the unit goes in the header).
std::string format_decimal(double v, int decimals);
// A FLOP rate with an SI prefix: "989 TFLOP/s", "1.2 PFLOP/s"; past EFLOP/s an exponent
// ("5.00000e+21 FLOP/s").
std::string format_flops(double flops_per_s);
// A bandwidth, decimal as bandwidths are quoted, with the exact figure: "1 TB/s (1e+12 B/s)".
std::string format_bandwidth(double bytes_per_s);
// A time in milliseconds as a table cell under a "(ms)" header: format_decimal(1000·s, 3).
std::string format_ms_cell(double seconds);

}  // namespace inferlab
