#include "common.hpp"

#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
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

// Whether `key` names a member of `j` or of anything in it (of an array, its first elements:
// the rows of a table are alike).
bool has_key(const nlohmann::json& j, const std::string& key) {
    if (j.is_object()) {
        if (j.contains(key)) return true;
        for (const auto& [k, v] : j.items())
            if (has_key(v, key)) return true;
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size() && i < 4; ++i)
            if (has_key(j[i], key)) return true;
    }
    return false;
}

// Every column described once (Column) names the JSON key of its figure: a column added without
// one is an internal error in the first run that prints it, in whatever form the run asked for.
void check_column_keys(const Report& report) {
    for (const auto& t : report.tables)
        for (const auto& key : t.table.keys)
            if (!has_key(report.json, key))
                throw std::logic_error("table '" + t.name + "': column key '" + key + "' is not a key of the JSON document");
}

}  // namespace

void emit(const Report& report, const OutputFlags& flags) {
    check_column_keys(report);
    std::string out;
    if (flags.json) {
        require_finite(report.json);
        out = report.json.dump(2) + "\n";
    } else if (flags.csv) {
        out = render_csv(chosen_table(report, flags));
    } else if (flags.explain) {
        out = report.explain;
    } else {
        out = report.human;
    }
    // After the output is built (a bad --table writes no file), before it is printed (a file
    // that cannot be written prints nothing).
    if (!flags.svg.empty()) {
        if (report.svg.empty()) throw InputError("--svg", flags.svg, N_("this output has no figure"));
        try {
            write_text_file(flags.svg, report.svg);
        } catch (const FileError& e) {
            throw InputError("--svg", flags.svg, e.why());  // the flag the user gave, not only the path
        }
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
