#pragma once
// Output contracts every subcommand keeps (issue #15): CSV that a real parser reads with numbers
// only in numeric cells, JSON keys that the README documents, and text within 80 columns.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferlab::test {

// Rows of `text` as read by libcsv (Debian libcsv-dev) in strict RFC 4180 mode; a malformed
// document fails the test.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// The CSV contract, checked on `text` (`what` names the command in failure messages): a header
// of distinct non-empty names, every row as wide as the header, at least one row, and every
// column either numeric in all its non-empty cells or in none (no "-", units, arrows or notes
// among numbers: a missing number is an empty cell).
void check_csv(const std::string& text, const std::string& what);

// Runs `args` with --csv, and with --csv --table NAME for each of `tables`, and checks each
// output with check_csv; a plain --csv must print the first of them.
void check_every_csv_table(const std::vector<std::string>& args, const std::vector<std::string>& tables,
                           const std::string& what);

// The top-level keys of `j`.
std::set<std::string> top_level_keys(const nlohmann::json& j);

// The widest line of `text`, in terminal columns (a CJK character counts two).
std::size_t widest_line(const std::string& text);

// A documented key and the keys documented inside it (for an array of objects, its elements').
struct KeyDoc {
    std::map<std::string, KeyDoc> children;
    bool listed_children = false;  // the README lists keys inside it ({...}); else it is opaque
};

// The README's "JSON keys" row for `subcommand` (e.g. "kv-mem", "model bench"), parsed:
// `name`, `name[]`, `name{a, b}`, `name[]{a, b}`; text in parentheses is a note; "mode: keys"
// prefixes and ";" separate groups. A row that does not parse fails the test.
KeyDoc documented_keys(const std::string& subcommand);

// Paths of the keys in `j` that `doc` does not document ("rows[].batch"), through objects and
// arrays of objects.
std::vector<std::string> undocumented_keys(const nlohmann::json& j, const KeyDoc& doc);

// Every key path of `j` ("rows[].batch"): two runs of one mode print the same set (a key with no
// value is null, never absent).
std::set<std::string> key_paths(const nlohmann::json& j);

}  // namespace inferlab::test
