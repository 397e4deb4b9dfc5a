#include "common.hpp"

#include <iostream>

namespace inferlab::app {

void add_output_flags(CLI::App& sub, OutputFlags& flags, bool with_csv) {
    auto* j = sub.add_flag("--json", flags.json, "Print one JSON document (keys documented in README)");
    auto* e = sub.add_flag("--explain", flags.explain, "Show the formula, the values substituted and the result");
    j->excludes(e);
    if (with_csv) {
        auto* c = sub.add_flag("--csv", flags.csv, "Print the table as CSV");
        c->excludes(j)->excludes(e);
    }
}

void emit(const Report& report, const OutputFlags& flags) {
    std::string out;
    if (flags.json) {
        require_finite(report.json);
        out = report.json.dump(2) + "\n";
    } else if (flags.csv && report.csv) {
        out = render_csv(*report.csv);
    } else if (flags.explain) {
        out = report.explain;
    } else {
        out = report.human;
    }
    std::cout << out << std::flush;
}

std::string examples_footer(const std::vector<std::string>& lines, const std::string& notes) {
    std::string out = "\nExamples:\n";
    for (const auto& l : lines) out += "  " + l + "\n";
    if (!notes.empty()) out += "\n" + notes + "\n";
    return out;
}

}  // namespace inferlab::app
