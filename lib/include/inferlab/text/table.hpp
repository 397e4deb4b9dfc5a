#pragma once
// Printers shared by every subcommand: aligned text tables, CSV, terminal charts, and the
// guard that keeps NaN and infinity out of every output.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferlab {

struct Table {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    // Columns whose cells are right-aligned (numbers); by default every column but the first.
    std::vector<bool> right_align;
    // The JSON key of each column, for a table built from Column descriptions (empty otherwise).
    std::vector<std::string> keys = {};
};

// One column of a table, described once: the text and --csv both print the Table built from these
// (the text translating the headers), so a column added here appears in both, in the same place.
//   key     where --json holds the same figure (the README's key table documents it), so that a
//           reader of the column finds its JSON; check_column_keys() checks it at every run:
//             "bytes_per_step_gb"  a member of the table's JSON row (or of the object holding the
//                         rows: a figure every row shares); "report/mse", a pointer into the row
//             "#"         the row's position: its index in the JSON arrays (a token's in p and q, a
//                         layer's in bytes_per_token_per_layer), no JSON figure of its own;
//                         "#layer" names it for --csv
//             "/p"        an absolute JSON pointer from the document's root, for a figure held
//                         outside the rows ("/bytes_per_token_per_layer"); it must exist
//   header  the text's header, a msgid with the unit in parentheses ("bytes/step (GB)"), NC_ where
//           one English header has two meanings (the text translates it with the table's context).
//           --csv names a keyed column by its key instead (csv_column_name: "report/mse" is
//           "report.mse"), one convention for every table; a table only --csv prints, or a
//           column with a text_header, writes its key here too
//   cell    the row's cell: numbers only, empty where the row has none
//   text    the text's cell where it differs from the CSV's (an exact fraction where CSV has the
//           decimal, a word in the reader's language where CSV has the msgid); empty: cell
//   text_header  the text's header where it is not the header translated (a unit the text
//           names in its own words, a mark's column with none); none: the header
//   csv_only  the column is --csv's alone: the text shows its figure inside another column's
//           cell ("9/10 ok" for the bound's held and checked counts)
// Build a vector of these in a named variable, then return it: GCC 12 stops with an internal
// compiler error on a braced list of them returned or passed directly (the defaults' noexcept).
template <class Row>
struct Column {
    std::string key;
    std::string header;
    std::function<std::string(const Row&)> cell;
    std::function<std::string(const Row&)> text = {};
    std::optional<std::string> text_header = {};
    bool csv_only = false;
};

// Which form of a column's cells and header a table takes: --csv's, or the text's.
enum class CellForm { csv, text };

// The table of `rows` under `columns`, in their order. The text's form takes each column's text
// cell and text_header where it has them, and leaves the csv_only columns out; the caller
// translates the headers it keeps.
template <class Row>
Table columns_table(const std::vector<Column<Row>>& columns, const std::vector<Row>& rows,
                    CellForm form = CellForm::csv) {
    const bool text = form == CellForm::text;
    auto shown = [text](const Column<Row>& c) { return !(text && c.csv_only); };
    Table t;
    for (const auto& c : columns) {
        if (!shown(c)) continue;
        t.columns.push_back(text && c.text_header ? *c.text_header : c.header);
        t.keys.push_back(c.key);
    }
    for (const auto& r : rows) {
        std::vector<std::string> cells;
        for (const auto& c : columns)
            if (shown(c)) cells.push_back(text && c.text ? c.text(r) : c.cell(r));
        t.rows.push_back(std::move(cells));
    }
    return t;
}

// --csv's header of a column: its key as a JSON name, the one convention of every CSV table
// (snake_case, the unit in the name as the JSON has it: bytes_per_step_gb, step_time_s).
// "report/mse" → "report.mse", "/p" → "p", "#layer" → "layer", "#" → "index".
std::string csv_column_name(const std::string& key);

// Throws std::logic_error unless every key (Column's rule) names a figure of `doc`, whose rows are
// at the JSON pointer `rows`: an array of row objects (the first stands for all; none: nothing to
// check), or one object whose members are the columns' arrays ("" the document itself).
void check_column_keys(const nlohmann::json& doc, const std::string& rows, const std::vector<std::string>& keys);

// Throws std::logic_error unless --csv's cells are the JSON's figures: where the JSON at `rows` has
// one row per CSV row (an array of that many rows, or an object of arrays that long: "" the document
// itself), each cell
// whose key names a number there holds that number to the last digit (a decimal that reads back
// as the same double; an integer exact), in the key's unit; one whose key names null is empty,
// and one naming a boolean says true or false. A key naming text, an array or an object, and a
// table of another shape than its JSON rows, are not compared.
void check_csv_cells(const nlohmann::json& doc, const std::string& rows, const Table& csv);

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


}  // namespace inferlab
