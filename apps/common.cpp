#include "common.hpp"

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"

namespace inferlab::app {

void add_output_flags(CLI::App& sub, OutputFlags& flags, bool with_csv) {
    auto* j = sub.add_flag("--json", flags.json, tr("Print one JSON document (keys documented in README)"));
    auto* e = sub.add_flag("--explain", flags.explain, tr("Show the formula, the values substituted and the result"));
    j->excludes(e);
    if (with_csv) {
        auto* c = sub.add_flag("--csv", flags.csv, tr("Print a table as CSV (the first one unless --table names another)"));
        c->excludes(j)->excludes(e);
        sub.add_option("--table", flags.table, tr("With --csv: the table to print, by name (an unknown name lists them)"))
            ->needs(c);
    }
}

CLI::Validator output_file_name(bool dash_is_stdout) {
    // CLI11 takes the next word as the value even when it is a flag ("--svg --json" would write a
    // file named --json and print text): a file name is refused when empty or when it starts with
    // '-' (unless the flag's own output is standard output: a second stream would mix with it).
    return CLI::Validator(
        [dash_is_stdout](std::string& name) -> std::string {
            if (name.empty()) return tr("'' is not a file name (give the file to write)");
            if (name == "-" && dash_is_stdout) return "";
            if (name.front() == '-')
                return trf(N_("'{0}' is not a file name (a flag or '-'; give the file to write)"), name);
            return "";
        },
        "");
}

void add_svg_flag(CLI::App& sub, OutputFlags& flags, const std::string& what) {
    sub.add_option("--svg", flags.svg, trf(N_("Also draw {0} as an SVG figure into FILE"), what))
        ->type_name("FILE")
        ->check(output_file_name(false));
}

namespace {

const Table& chosen_table(const Report& report, const OutputFlags& flags) {
    if (report.tables.empty())
        throw Error(N_("--csv: this output has no table (use --json for its values, or the text output)"));
    if (flags.table.empty()) return report.tables.front().table;
    std::string names;
    for (const auto& t : report.tables) {
        if (t.name == flags.table) return t.table;
        names += (names.empty() ? "" : ", ") + t.name;
    }
    throw InputError("--table", flags.table, N_("no such table in this output (its tables: {0})"), {names});
}

}  // namespace

namespace {

// Each column described once (Column) names where the JSON holds its figure, and the first run
// that prints the table checks it (inferlab::check_column_keys, Column's rule): a plain key is a
// member of the table's first JSON row, or of the object that holds the rows (a figure every row
// shares, as a paged table's block size), and "report/mse" a pointer into the row; for a table
// whose columns are arrays, the row is the object at json_rows. "#" is the row's position (its
// index in the JSON arrays, no figure of its own); a key that begins with '/' is an absolute
// pointer from the document's root that must exist (a figure held outside the rows, as kv-mem's
// /bytes_per_token_per_layer). A column added without its JSON figure is an internal error in the
// first run that prints the table, in whatever form the run asked for. A table of no rows has
// nothing to check. Then check_csv_cells: in a table of one row per JSON row, each CSV cell of a
// keyed column is the JSON's figure as csv_number writes it (a rounding left in a CSV cell fails).
void check_column_keys(const Report& report) {
    for (const auto& t : report.tables) {
        if (t.table.keys.empty()) continue;
        auto fail = [&](const std::string& why) { throw std::logic_error("table '" + t.name + "': " + why); };
        if (!t.json_rows) fail("built from Column descriptions without the JSON pointer of its rows");
        try {
            inferlab::check_column_keys(report.json, *t.json_rows, t.table.keys);
            inferlab::check_csv_cells(report.json, *t.json_rows, t.table);
        } catch (const std::logic_error& e) {
            fail(e.what());
        }
    }
}

}  // namespace

void emit(const Report& report, const OutputFlags& flags) {
    check_column_keys(report);
    std::string out;
    if (flags.json) {
        require_finite(report.json);
        out = report.json.dump(2) + "\n";
    } else if (flags.csv) {
        Table t = chosen_table(report, flags);
        for (std::size_t i = 0; i < t.keys.size() && i < t.columns.size(); ++i) t.columns[i] = csv_column_name(t.keys[i]);
        out = render_csv(t);
    } else if (flags.explain) {
        out = report.explain;
    } else {
        out = report.human;
    }
    // After the output is built (a bad --table writes no file), before it is printed (a file
    // that cannot be written prints nothing).
    if (!flags.svg.empty()) {
        if (report.svg.empty()) throw InputError("--svg", flags.svg, N_("this output has no figure"));
        write_text_file(flags.svg, report.svg);  // a FileError: run_cli names --svg
    }
    std::cout << out << std::flush;
}

std::size_t text_width() {
    const char* env = std::getenv("COLUMNS");
    if (env == nullptr) return 80;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(env, &end, 10);
    if (errno != 0 || end == env || *end != '\0' || v < 40 || v > 1000) return 80;
    return static_cast<std::size_t>(v);
}

std::string render_table(const Table& t, const std::string& indent) { return render_text(t, indent, text_width()); }

Table in_words(Table t, const std::string& context) {
    for (auto& c : t.columns) c = context.empty() ? tr(c) : trc(context, c);
    for (auto& row : t.rows)
        for (auto& cell : row) cell = tr(cell);
    return t;
}

std::string csv_number(double v) { return format_short(v, 17); }
std::string csv_number(const std::optional<double>& v) { return v ? csv_number(*v) : std::string(); }
std::string csv_flag(const std::optional<bool>& v) { return !v ? std::string() : *v ? "true" : "false"; }

std::string tokens_count(std::uint64_t n) { return counted(n, N_("{0} token"), N_("{0} tokens")); }

std::string wrap(const std::string& text, const std::string& indent, const std::string& hanging) {
    return wrap_text(text, text_width(), indent, hanging);
}

std::string examples_footer(const std::vector<std::string>& lines, const std::string& notes) {
    std::string out = "\n" + tr("Examples:") + "\n";
    for (const auto& l : lines) out += "  " + l + "\n";
    if (!notes.empty()) out += "\n" + notes + "\n";
    return out;
}

}  // namespace inferlab::app
