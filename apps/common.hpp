#pragma once
// What every subcommand shares: the output flags, the report it hands to the printer, and
// help footers with examples. Subcommands parse, call the library, and fill a Report.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/report.hpp"

namespace inferlab::app {

// Thrown after output is printed, to end with a non-zero status that is not an error
// (verify: 1 when an example fails).
struct ExitCode {
    int code;
};

struct OutputFlags {
    bool json = false;     // one JSON document on stdout
    bool explain = false;  // formula, substituted values, result
    bool csv = false;      // sweeps only
};

// Adds --json, --explain (and --csv where the subcommand has a table); they exclude each other.
void add_output_flags(CLI::App& sub, OutputFlags& flags, bool with_csv = false);

struct Report {
    nlohmann::json json = nlohmann::json::object();
    std::string human;
    std::string explain;
    std::optional<Table> csv;
};

// Prints the one form the flags ask for. JSON is checked for NaN/inf first.
void emit(const Report& report, const OutputFlags& flags);

// "Examples:\n  inferlab kv-mem ...\n" for a subcommand's --help footer.
std::string examples_footer(const std::vector<std::string>& lines, const std::string& notes = "");

// True when the option was given on the command line.
inline bool given(const CLI::App& sub, const std::string& name) { return sub.count(name) > 0; }

// Registration of each subcommand (one file each under apps/).
void setup_kv_mem(CLI::App& app);
void setup_verify(CLI::App& app);
void setup_decode_roofline(CLI::App& app);
void setup_best_of_n(CLI::App& app);
void setup_quantize(CLI::App& app);
void setup_spec_accept(CLI::App& app);
void setup_model(CLI::App& app);
void setup_figure(CLI::App& app);

}  // namespace inferlab::app
