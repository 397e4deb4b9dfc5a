#pragma once
// The output contracts of every subcommand as one table of (command, mode) cases, run by one
// driver in both languages (tests/cli/test_output_contracts.cpp holds the table). Each case is a
// command line; the driver runs it in each form it takes, in English and in Chinese, and checks:
//   text, --explain  exit 0, nothing on stderr, within 80 columns under COLUMNS=80 (English and
//                    Chinese), and no English prose in the Chinese run (i18n_check.hpp)
//   --json           one document whose keys the README documents (contracts.hpp), the same bytes
//                    in Chinese
//   --csv            the tables are those the unknown --table error lists (and `tables`, where
//                    given); the first is what a plain --csv prints; every table passes the CSV
//                    contract and is the same bytes in Chinese; an output with no table refuses
//                    --csv ("has no table")
//   an error         exit 2, nothing on stdout, one line on stderr starting "inferlab: error: ",
//                    in both languages, no English prose in Chinese
// and across the cases of one table: equal key paths within a `paths` group, equal top-level keys
// within a `top` group (a section that was not computed is null, never absent).
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferlab::test {

enum ContractForm : unsigned {
    kText = 1u << 0,
    kExplain = 1u << 1,
    kJson = 1u << 2,
    kCsv = 1u << 3,
    kEveryForm = kText | kExplain | kJson | kCsv,
    kError = 1u << 4,  // the case is bad input: the error contract in both languages
};

struct ContractCase {
    std::vector<std::string> args;
    unsigned forms = kEveryForm;
    std::vector<std::string> tables = {};   // the --csv tables expected, in order (a case with kCsv gives them ...)
    bool no_table = false;                  // ... or says the output has none: --csv is refused
    std::string keys = "";                  // the README's JSON keys row; default: the subcommand
    std::string paths = "";                 // a group whose JSON has the same key paths
    std::string top = "";                   // a group whose JSON has the same top-level keys
    bool timed = false;                     // measured times: across languages only the CSV header is compared
    bool svg_text = false;                  // the text is an SVG: not held to 80 columns
    std::vector<std::string> english = {};  // English a Chinese run may quote (i18n_check.hpp)
    bool quotes_sources = false;            // it prints shipped configs' sources, which stay as published
    std::function<void(const nlohmann::json&)> json_check = {};  // more to check in this case's JSON
};

// Runs every case of `cases` as described above (Catch2 CHECKs; a failure names the command).
void check_contract_cases(const std::vector<ContractCase>& cases);

}  // namespace inferlab::test
