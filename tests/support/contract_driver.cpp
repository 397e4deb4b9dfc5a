#include "contract_driver.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "cli.hpp"
#include "contracts.hpp"
#include "i18n_check.hpp"

namespace inferlab::test {
namespace {

using Args = std::vector<std::string>;

const Args kEn80 = {"INFERLAB_LANG=en", "COLUMNS=80"};

std::string command_of(const Args& args) {
    std::string cmd = "inferlab";
    for (const auto& a : args) cmd += " " + a;
    return cmd;
}

// The README row that documents the case's JSON: the subcommand, "model X" for a model command.
std::string keys_row(const ContractCase& c) {
    if (!c.keys.empty()) return c.keys;
    if (c.args.size() > 1 && c.args[0] == "model") return c.args[0] + " " + c.args[1];
    return c.args.at(0);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The English a Chinese run of the case may print: its own quotes, and the shipped configs'
// sources (kv-mem --list-models --json) where it prints them.
std::vector<std::string> allowed_english(const ContractCase& c) {
    static const std::vector<std::string> sources = [] {
        std::vector<std::string> out;
        const nlohmann::json list = parse_json(run_inferlab({"kv-mem", "--list-models", "--json"}));
        for (const auto& m : list["models"])
            out.push_back(m["source"].get<std::string>());
        return out;
    }();
    std::vector<std::string> allowed = c.english;
    if (c.quotes_sources) allowed.insert(allowed.end(), sources.begin(), sources.end());
    return allowed;
}

// Text, --explain or --help: exit 0, quiet stderr, 80 columns in both languages, Chinese prose.
void check_text(const ContractCase& c, const Args& args) {
    const CliResult en = run_inferlab(args, "", kEn80);
    INFO(command_of(args) << " (English, exit " << en.status << "):\n" << en.out << en.err);
    CHECK(en.status == 0);
    if (en.status != 0) return;  // CHECK, not REQUIRE: the rest of the table still runs
    CHECK(en.err.empty());
    CHECK_FALSE(en.out.empty());
    if (!c.svg_text) CHECK(widest_line(en.out) <= 80);
    const CliResult zh = run_inferlab(args, "", kZh80);
    INFO("Chinese, exit " << zh.status << ":\n" << zh.out << zh.err);
    CHECK(zh.status == 0);
    if (zh.status != 0) return;
    CHECK(zh.err.empty());
    if (!c.svg_text) CHECK(widest_line(zh.out) <= 80);
    check_chinese_result(zh, args, allowed_english(c));
}

// Bad input: the error contract in both languages.
void check_error(const ContractCase& c) {
    const CliResult en = run_inferlab(c.args, "", kEn80);
    INFO(command_of(c.args) << " (English, exit " << en.status << "):\n" << en.out << en.err);
    CHECK(en.status == 2);
    CHECK(en.out.empty());
    CHECK(en.err.rfind("inferlab: error: ", 0) == 0);
    CHECK(std::count(en.err.begin(), en.err.end(), '\n') == 1);
    const CliResult zh = run_zh(c.args);
    CHECK(zh.status == 2);
    check_chinese_result(zh, c.args, allowed_english(c));
}

// The same output in both languages: every byte, or for a timed run the CSV header.
void check_same_in_chinese(const ContractCase& c, const Args& args, const CliResult& en, bool csv) {
    if (c.timed && !csv) return;  // measured numbers: nothing to compare
    const CliResult zh = run_zh(args);
    INFO(command_of(args) << " in Chinese (exit " << zh.status << "):\n" << zh.err);
    CHECK(zh.status == 0);
    if (zh.status != 0) return;
    if (!c.timed) CHECK(zh.out == en.out);
    else if (csv) CHECK(first_line(zh.out) == first_line(en.out));
}

nlohmann::json check_json(const ContractCase& c) {
    const Args args = with(c.args, {"--json"});
    const CliResult en = run_inferlab(args, "", {"INFERLAB_LANG=en"});
    INFO(command_of(args) << " (exit " << en.status << "):\n" << en.err);
    CHECK(en.status == 0);
    CHECK(en.err.empty());
    if (en.status != 0 || !nlohmann::json::accept(en.out)) {
        FAIL_CHECK("not one JSON document on stdout:\n" << en.out.substr(0, 2000));
        return nullptr;  // null: the case's key paths are left out of its group
    }
    const nlohmann::json j = parse_json(en);
    INFO(j.dump(1).substr(0, 4000));
    CHECK(undocumented_keys(j, documented_keys(keys_row(c))).empty());
    if (c.json_check) c.json_check(j);
    check_same_in_chinese(c, args, en, false);
    return j;
}

// The tables an output has, as its error for an unknown --table lists them (empty: it has none).
std::vector<std::string> tables_of(const ContractCase& c) {
    const Args args = with(c.args, {"--csv", "--table", "no-such-table"});
    const CliResult r = run_inferlab(args, "", {"INFERLAB_LANG=en"});
    INFO(command_of(args) << " (exit " << r.status << "):\n" << r.out << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    const std::string lead = "(its tables: ";
    const auto at = r.err.find(lead);
    if (at == std::string::npos) {
        CHECK(r.err.find("has no table") != std::string::npos);
        return {};
    }
    std::vector<std::string> names;
    std::string list = r.err.substr(at + lead.size(), r.err.find(')', at) - at - lead.size()) + ",";
    for (std::size_t start = 0, comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
        names.push_back(list.substr(start + (list[start] == ' '), comma - start - (list[start] == ' ')));
    return names;
}

// --csv: the first table is the plain --csv; every table passes the CSV contract, in both languages.
void check_csv_tables(const ContractCase& c) {
    const std::vector<std::string> tables = tables_of(c);
    // Every case that asks for --csv says what it expects, so an output that lost its tables fails.
    {
        std::string found;
        for (const auto& t : tables) found += " " + t;
        INFO(command_of(c.args) << ": give the tables expected, .tables or .no_table (it has:" << found << ")");
        CHECK((!c.tables.empty() || c.no_table));
    }
    CHECK(tables == c.tables);
    const Args plain_args = with(c.args, {"--csv"});
    const CliResult plain = run_inferlab(plain_args, "", {"INFERLAB_LANG=en"});
    INFO(command_of(plain_args) << " (exit " << plain.status << "):\n" << plain.out << plain.err);
    if (tables.empty()) {  // no table: --csv is refused, and says so
        CHECK(plain.status == 2);
        CHECK(plain.out.empty());
        CHECK(plain.err.find("has no table") != std::string::npos);
        return;
    }
    CHECK(plain.status == 0);
    if (plain.status != 0) return;
    check_csv(plain.out, command_of(plain_args));
    check_same_in_chinese(c, plain_args, plain, true);
    for (const auto& t : tables) {
        if (t == tables.front() && !c.timed) continue;  // the plain --csv, unless timings make two runs differ
        const Args args = with(c.args, {"--csv", "--table", t});
        const CliResult r = run_inferlab(args, "", {"INFERLAB_LANG=en"});
        INFO(command_of(args) << " (exit " << r.status << "):\n" << r.err);
        CHECK(r.status == 0);
        if (r.status != 0) continue;
        CHECK(r.err.empty());
        check_csv(r.out, command_of(args));
        check_same_in_chinese(c, args, r, true);
    }
    if (!c.timed) {  // the first table by name is the plain --csv
        const CliResult first = run_inferlab(with(c.args, {"--csv", "--table", tables.front()}), "", {"INFERLAB_LANG=en"});
        CHECK(first.out == plain.out);
    }
}

// Within each named group, every case's value equals the first's.
template <class Value>
void check_groups(const std::vector<std::pair<std::string, std::pair<std::string, Value>>>& members, const char* what) {
    std::map<std::string, std::pair<std::string, Value>> first;
    for (const auto& [group, m] : members) {
        const auto [it, inserted] = first.emplace(group, m);
        if (inserted) continue;
        INFO(what << " of group '" << group << "': " << m.first << " against " << it->second.first);
        CHECK(m.second == it->second.second);
    }
}

}  // namespace

void check_contract_cases(const std::vector<ContractCase>& cases) {
    std::vector<std::pair<std::string, std::pair<std::string, std::set<std::string>>>> paths, tops;
    for (const auto& c : cases) {
        if (c.forms & kError) {
            check_error(c);
            continue;
        }
        if (c.forms & kText) check_text(c, c.args);
        if (c.forms & kExplain) check_text(c, with(c.args, {"--explain"}));
        if (c.forms & kCsv) check_csv_tables(c);
        if (c.forms & kJson) {
            const nlohmann::json j = check_json(c);
            if (j.is_null()) continue;
            if (!c.paths.empty()) paths.push_back({c.paths, {command_of(c.args), key_paths(j)}});
            if (!c.top.empty()) tops.push_back({c.top, {command_of(c.args), top_level_keys(j)}});
        }
    }
    check_groups(paths, "key paths");
    check_groups(tops, "top-level keys");
}

}  // namespace inferlab::test
