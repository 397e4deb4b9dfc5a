// figure's output contracts (issue #15): --list --json and --list --csv give the catalogue, a
// figure's --json its place, inputs and every number drawn, --csv those numbers; keys as the
// README documents them, CSV read by a real parser, --explain within 80 columns.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {
const std::vector<std::string> kDrawn = {"doc1-fig4",  "doc1-fig5",  "doc1-fig6",  "doc1-fig7",  "doc1-fig8",
                                         "doc1-fig9",  "doc1-fig10", "doc1-fig11", "doc1-fig12", "doc1-fig13",
                                         "doc1-fig14", "doc1-fig15", "doc1-fig17", "doc2-fig1"};
}  // namespace

TEST_CASE("figure --list --json and --csv: the catalogue with documented keys", "[cli][contract][figure]") {
    const auto j = parse_json(run_inferlab({"figure", "--list", "--json"}));
    CHECK(undocumented_keys(j, documented_keys("figure --list")).empty());
    REQUIRE(j["figures"].size() == 18);
    std::size_t drawn = 0;
    for (const auto& f : j["figures"]) {
        if (f["drawn"].get<bool>()) {
            ++drawn;
            CHECK(f["reason"].is_null());
        } else {
            CHECK(f["reason"].is_string());
        }
    }
    CHECK(drawn == kDrawn.size());
    check_every_csv_table({"figure", "--list"}, {"figures"}, "figure --list");
    const auto rows = parse_csv(run_inferlab({"figure", "--list", "--csv"}).out);
    REQUIRE(rows.size() == 19);  // the header and 18 figures
    CHECK(rows[0] == std::vector<std::string>{"name", "document", "section", "caption", "drawn", "reason"});
    expect_error({"figure", "--list", "--explain"}, "--explain does not apply with --list");
    expect_error({"figure", "--list", "--batch", "2"}, "--batch does not apply with --list");
    expect_error({"figure", "--all", "--out", "x", "--json"}, "do not apply with --all");
}

TEST_CASE("figure NAME --json, --csv and --explain: one schema, the numbers drawn", "[cli][contract][figure]") {
    const auto doc = documented_keys("figure");
    std::set<std::string> first_top;
    for (const auto& n : kDrawn) {
        INFO(n);
        const auto j = parse_json(run_inferlab({"figure", n, "--json"}));
        CHECK(undocumented_keys(j, doc).empty());
        if (first_top.empty()) first_top = top_level_keys(j);
        CHECK(top_level_keys(j) == first_top);
        CHECK(j["name"] == n);
        CHECK(j["out"].is_null());
        CHECK_FALSE(j["inputs"].empty());
        const auto x = run_inferlab({"figure", n, "--explain"}, "", {"COLUMNS=80"});
        REQUIRE(x.status == 0);
        CHECK(widest_line(x.out) <= 80);
    }
    check_every_csv_table({"figure", "doc1-fig9"}, {"values"}, "figure doc1-fig9");
    // First document §2.1.3: the bars of Figure 9 are 15.074 GB and 22.590 GB at B = 1 and 8.
    const auto j = parse_json(run_inferlab({"figure", "doc1-fig9", "--json"}));
    std::vector<std::string> labels;
    for (const auto& v : j["values"])
        if (v["class"] == "bar-value") labels.push_back(v["text"]);
    CHECK(labels == std::vector<std::string>{"15.074 GB", "22.590 GB"});
}
