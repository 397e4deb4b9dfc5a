#include "contracts.hpp"

#include <csv.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli.hpp"
#include "inferlab/text/table.hpp"

namespace inferlab::test {
namespace {

struct CsvSink {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
};

void on_field(void* field, std::size_t len, void* data) {
    auto* sink = static_cast<CsvSink*>(data);
    sink->row.emplace_back(static_cast<const char*>(field), len);
}

void on_row(int, void* data) {
    auto* sink = static_cast<CsvSink*>(data);
    sink->rows.push_back(std::move(sink->row));
    sink->row.clear();
}

// libcsv trims spaces and tabs around unquoted fields by default; a cell is read as written.
int no_space(unsigned char) { return 0; }

bool is_number(const std::string& cell) {
    if (cell.empty() || cell.find_first_of(" \t") != std::string::npos) return false;
    char* end = nullptr;
    std::strtod(cell.c_str(), &end);
    return end == cell.c_str() + cell.size();
}

std::string read_readme() {
    std::ifstream in(std::string(INFERLAB_SOURCE_DIR) + "/README.md");
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The row's cell of keys, backticks removed.
std::string readme_row(const std::string& subcommand) {
    const std::string readme = read_readme();
    const std::string lead = "| `" + subcommand + "` |";
    const auto at = readme.find(lead);
    INFO("README's JSON keys table has no row for " << subcommand);
    REQUIRE(at != std::string::npos);
    const auto end = readme.find('\n', at);
    std::string cell = readme.substr(at + lead.size(), end - at - lead.size());
    std::string out;
    for (char c : cell)
        if (c != '`') out.push_back(c);
    while (!out.empty() && (out.back() == '|' || out.back() == ' ')) out.pop_back();
    return out;
}

std::string without_notes(const std::string& s) {
    std::string out;
    int depth = 0;
    for (char c : s) {
        if (c == '(') ++depth;
        else if (c == ')') depth = depth > 0 ? depth - 1 : 0;
        else if (depth == 0) out.push_back(c);
    }
    return out;
}

std::string trim(const std::string& s) {
    const auto a = s.find_first_not_of(" \t");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// Splits at `,` and `;` outside braces.
std::vector<std::string> split_items(const std::string& s) {
    std::vector<std::string> items;
    std::string cur;
    int depth = 0;
    for (char c : s) {
        if (c == '{') ++depth;
        if (c == '}') --depth;
        if (depth == 0 && (c == ',' || c == ';')) {
            items.push_back(trim(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    items.push_back(trim(cur));
    return items;
}

void parse_items(const std::string& text, KeyDoc& into, const std::string& row) {
    for (std::string item : split_items(text)) {
        if (item.empty()) continue;
        // "one value: x" / "--list: pitfalls[]{...}": a mode's prefix, before the last ':' outside braces.
        int depth = 0;
        std::size_t colon = std::string::npos;
        for (std::size_t i = 0; i < item.size(); ++i) {
            if (item[i] == '{') ++depth;
            if (item[i] == '}') --depth;
            if (depth == 0 && item[i] == ':') colon = i;
        }
        if (colon != std::string::npos) item = trim(item.substr(colon + 1));
        std::size_t i = 0;
        while (i < item.size() && (std::isalnum(static_cast<unsigned char>(item[i])) || item[i] == '_')) ++i;
        const std::string name = item.substr(0, i);
        INFO("README JSON keys row '" << row << "': cannot read the item '" << item << "'");
        REQUIRE(!name.empty());
        if (item.compare(i, 2, "[]") == 0) i += 2;
        KeyDoc& doc = into.children[name];
        if (i < item.size()) {
            REQUIRE(item[i] == '{');
            REQUIRE(item.back() == '}');
            doc.listed_children = true;
            parse_items(item.substr(i + 1, item.size() - i - 2), doc, row);
        } else {
            REQUIRE(i == item.size());
        }
    }
}

void collect_undocumented(const nlohmann::json& j, const KeyDoc& doc, const std::string& path,
                          std::vector<std::string>& out) {
    if (j.is_array()) {
        for (const auto& e : j) collect_undocumented(e, doc, path + "[]", out);
        return;
    }
    if (!j.is_object() || !doc.listed_children) return;
    for (const auto& [k, v] : j.items()) {
        const std::string p = path.empty() ? k : path + "." + k;
        const auto it = doc.children.find(k);
        if (it == doc.children.end()) {
            out.push_back(p);
            continue;
        }
        collect_undocumented(v, it->second, p, out);
    }
}

void collect_paths(const nlohmann::json& j, const std::string& path, std::set<std::string>& out) {
    if (j.is_array()) {
        for (const auto& e : j) collect_paths(e, path + "[]", out);
        return;
    }
    if (!j.is_object()) return;
    for (const auto& [k, v] : j.items()) {
        const std::string p = path.empty() ? k : path + "." + k;
        out.insert(p);
        collect_paths(v, p, out);
    }
}

}  // namespace

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    csv_parser p{};
    REQUIRE(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) == 0);
    csv_set_space_func(&p, no_space);
    CsvSink sink;
    const std::size_t used = csv_parse(&p, text.data(), text.size(), on_field, on_row, &sink);
    INFO("CSV: " << csv_strerror(csv_error(&p)) << "\n" << text);
    CHECK(used == text.size());
    CHECK(csv_fini(&p, on_field, on_row, &sink) == 0);
    csv_free(&p);
    return sink.rows;
}

void check_csv(const std::string& text, const std::string& what) {
    INFO(what << " --csv:\n" << text);
    const auto rows = parse_csv(text);
    REQUIRE(rows.size() >= 2);
    const auto& header = rows.front();
    std::set<std::string> names;
    for (const auto& h : header) {
        CHECK(!h.empty());
        CHECK(names.insert(h).second);
    }
    for (std::size_t c = 0; c < header.size(); ++c) {
        bool any_number = false;
        for (std::size_t r = 1; r < rows.size(); ++r) {
            REQUIRE(rows[r].size() == header.size());
            any_number = any_number || is_number(rows[r][c]);
        }
        if (!any_number) continue;
        for (std::size_t r = 1; r < rows.size(); ++r) {
            INFO("column '" << header[c] << "' holds numbers, and row " << r << " holds '" << rows[r][c] << "'");
            CHECK((rows[r][c].empty() || is_number(rows[r][c])));
        }
    }
}

void check_every_csv_table(const std::vector<std::string>& args, const std::vector<std::string>& tables,
                           const std::string& what) {
    REQUIRE(!tables.empty());
    auto with = [&](std::vector<std::string> more) {
        more.insert(more.begin(), args.begin(), args.end());
        return more;
    };
    const auto plain = run_inferlab(with({"--csv"}));
    INFO(what << ": " << plain.err);
    REQUIRE(plain.status == 0);
    check_csv(plain.out, what);
    for (const auto& t : tables) {
        const auto r = run_inferlab(with({"--csv", "--table", t}));
        INFO(what << " --table " << t << ": " << r.err);
        REQUIRE(r.status == 0);
        check_csv(r.out, what + " --table " + t);
        if (t == tables.front()) CHECK(r.out == plain.out);  // the first table is what a plain --csv prints
    }
}

std::set<std::string> top_level_keys(const nlohmann::json& j) {
    std::set<std::string> out;
    for (const auto& [k, v] : j.items()) out.insert(k);
    return out;
}

std::size_t widest_line(const std::string& text) {
    std::size_t widest = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) widest = std::max(widest, display_width(line));
    return widest;
}

KeyDoc documented_keys(const std::string& subcommand) {
    const std::string row = readme_row(subcommand);
    KeyDoc doc;
    doc.listed_children = true;
    parse_items(without_notes(row), doc, row);
    return doc;
}

std::vector<std::string> undocumented_keys(const nlohmann::json& j, const KeyDoc& doc) {
    std::vector<std::string> out;
    collect_undocumented(j, doc, "", out);
    return out;
}

std::set<std::string> key_paths(const nlohmann::json& j) {
    std::set<std::string> out;
    collect_paths(j, "", out);
    return out;
}

}  // namespace inferlab::test
