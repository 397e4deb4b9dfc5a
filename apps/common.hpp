#pragma once
// What every subcommand shares: the output flags, the report it hands to the printer, and
// help footers with examples. Subcommands parse, call the library, and fill a Report.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/i18n.hpp"
#include "inferlab/text/table.hpp"

namespace inferlab::app {

// Thrown after output is printed, to end with a non-zero status that is not an error
// (verify: 1 when an example fails).
struct ExitCode {
    int code;
};

struct OutputFlags {
    bool json = false;     // one JSON document on stdout
    bool explain = false;  // formula, substituted values, result
    bool csv = false;      // one table as CSV
    std::string table;     // --table NAME: which table --csv prints, where the output has several
    std::string svg;       // --svg FILE: also draw the result as an SVG figure into FILE
};

// Adds --json and --explain, and where the subcommand has tables --csv and --table NAME; the
// three forms exclude each other, and --table needs --csv.
void add_output_flags(CLI::App& sub, OutputFlags& flags, bool with_csv = false);

// Adds --svg FILE: the printer draws the same result it prints into Report::svg, and emit() writes
// it to FILE before printing (so a file that cannot be written leaves stdout empty). The chosen
// output form (text, --json, --csv, --explain) is printed as usual.
void add_svg_flag(CLI::App& sub, OutputFlags& flags, const std::string& what);
// The check on a flag that names a file to write: not empty, not a flag, and "-" only where it
// means standard output (figure --out).
CLI::Validator output_file_name(bool dash_is_stdout);

// A table of the output, by the name `--table` selects it with (lowercase, dashes: "rows",
// "generation"). The first one added is what a plain --csv prints.
struct NamedTable {
    std::string name;
    Table table;
    // Where the JSON document holds the table's rows, as a JSON pointer ("/budget/plans"; "" the
    // document itself, for a table whose columns are its arrays): a table built from Column
    // descriptions has one, and emit() checks that each column's key is there.
    std::optional<std::string> json_rows = std::nullopt;
};

struct Report {
    nlohmann::json json = nlohmann::json::object();
    std::string human;
    std::string explain;
    std::vector<NamedTable> tables;  // every table the text shows, for --csv
    std::string svg;                 // the figure of the result, filled when --svg was given
    void add_table(std::string name, Table t, std::optional<std::string> json_rows = std::nullopt) {
        tables.push_back({std::move(name), std::move(t), std::move(json_rows)});
    }
};

// Prints the one form the flags ask for. JSON is checked for NaN/inf first. --csv where the
// output has no table, or --table naming none of them, is an inferlab::Error (nothing printed).
// With --svg, writes report.svg to that file first; an empty report.svg there is an Error too.
void emit(const Report& report, const OutputFlags& flags);

// Columns of human output: $COLUMNS when it is a whole number from 40 to 1000, else 80. (Not the
// terminal's width: the same command prints the same text in a terminal, a pipe and CI.)
std::size_t text_width();

// A table for human output, fitted to text_width() (see render_text).
std::string render_table(const Table& t, const std::string& indent = "  ");

// A table built in English (its column titles and word cells msgids: "strategy", "yes", "memory")
// as the text shows it, in the reader's language: the column titles through trc(context) (tr when
// `context` is empty) and every cell through tr(). Numbers and names have no catalogue entry, so
// they stay as they are. --csv prints the table as built: CSV does not change with the language.
Table in_words(Table t, const std::string& context = "");

// A described table as the text prints it: each column's text cell and text_header where it has
// them (the csv_only columns left out), the other headers in the reader's language through
// trc(context) (tr when `context` is empty). The cells are left as the formatters give them: a
// text formatter translates its words.
template <class Row>
Table text_table(const std::vector<Column<Row>>& columns, const std::vector<Row>& rows, const std::string& context = "") {
    Table t = columns_table(columns, rows, CellForm::text);
    std::size_t i = 0;  // the text's column: the csv_only ones are not there
    for (const auto& c : columns) {
        if (c.csv_only) continue;
        if (!c.text_header) t.columns[i] = context.empty() ? tr(t.columns[i]) : trc(context, t.columns[i]);
        ++i;
    }
    return t;
}

// --csv's cell of a figure, as the JSON holds it: every digit the double needs to read back as
// itself (format_short to 17 digits); empty where there is none. check_csv_cells holds the CSV to it.
std::string csv_number(double v);
std::string csv_number(const std::optional<double>& v);
// --csv's cell of a yes or no, as the JSON: "true", "false", empty where there is none.
std::string csv_flag(const std::optional<bool>& v);

// A column of one figure: --csv prints it as the JSON holds it (csv_number), the text through
// `shown` (a rounding for people); empty where the row has none. Returned from a named local:
// see Column.
template <class Row>
Column<Row> figure_column(const std::string& key, const std::string& header,
                          std::function<std::optional<double>(const Row&)> get, std::function<std::string(double)> shown) {
    Column<Row> c;
    c.key = key;
    c.header = header;
    c.cell = [get](const Row& r) { return csv_number(get(r)); };
    c.text = [get, shown](const Row& r) {
        const auto v = get(r);
        return v ? shown(*v) : std::string();
    };
    return c;
}

// "16 tokens" in English, "16 个 token" in Chinese ("1 token": the singular where English needs it).
std::string tokens_count(std::uint64_t n);

// Prose for human output, word-wrapped to text_width(); continuation lines take `hanging`.
std::string wrap(const std::string& text, const std::string& indent = "", const std::string& hanging = "");

// "Examples:\n  inferlab kv-mem ...\n" for a subcommand's --help footer.
std::string examples_footer(const std::vector<std::string>& lines, const std::string& notes = "");

// A JSON value, or null where the result has none (a key without a value is null, never absent).
template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// True when the option was given on the command line.
inline bool given(const CLI::App& sub, const std::string& name) { return sub.count(name) > 0; }

// Registration of each subcommand (one file each under apps/).
void setup_kv_mem(CLI::App& app);
void setup_verify(CLI::App& app);
void setup_decode_roofline(CLI::App& app);
void setup_best_of_n(CLI::App& app);
void setup_quantize(CLI::App& app);
void setup_spec_accept(CLI::App& app);
void setup_serve_sim(CLI::App& app);
void setup_model(CLI::App& app);
void setup_figure(CLI::App& app);

}  // namespace inferlab::app
