#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

TEST_CASE("verify exits 0 and lists every KV example", "[cli][verify]") {
    auto r = run_inferlab({"verify"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    for (const char* id : {"kv.doc1.gqa-gib", "kv.doc1.mha-gib", "kv.doc1.mha-8req", "kv.doc1.gqa-8req", "kv.doc1.gib-in-gb",
                           "kv.doc2.s-token-kib", "kv.doc2.one-sequence", "kv.doc2.ten-sequences", "kv.doc2.ratio-gqa",
                           "kv.doc2.ratio-mqa"})
        CHECK(r.out.find(id) != std::string::npos);
    CHECK(r.out.find("FAIL") == std::string::npos);
    CHECK(r.out.find(" 0 failed") != std::string::npos);
}

TEST_CASE("verify --json: one document with sources and results", "[cli][verify]") {
    auto j = parse_json(run_inferlab({"verify", "--json"}));
    CHECK(j["failed"] == 0);
    CHECK(j["passed"].get<int>() == static_cast<int>(j["examples"].size()));
    for (const auto& e : j["examples"]) {
        CHECK(e["pass"] == true);
        CHECK((e["document"] == "000_5f2b20623495609b.txt" || e["document"] == "003_02a045288fb34aae.txt"));
        CHECK_FALSE(e["section"].get<std::string>().empty());
    }
}

TEST_CASE("verify --id filters, an unknown id is an error", "[cli][verify]") {
    auto j = parse_json(run_inferlab({"verify", "--id", "kv.doc2", "--json"}));
    for (const auto& e : j["examples"]) CHECK(e["id"].get<std::string>().rfind("kv.doc2", 0) == 0);
    auto bad = run_inferlab({"verify", "--id", "nope"});
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(one_error_line(bad));
    auto csv = run_inferlab({"verify", "--csv"});
    // Issue #15: numbers in their own columns (the printed forms are in the text and JSON).
    CHECK(csv.out.rfind("id,document,section,unit,expected_value,tolerance,computed_value,exact,pass\n", 0) == 0);
}

TEST_CASE("verify --table: a name that does not exist lists the tables, and --csv is needed", "[cli][verify][errors]") {
    expect_error({"verify", "--csv", "--table", "bogus"}, "--table 'bogus': no such table in this output (its tables: examples)");
    const auto r = run_inferlab({"verify", "--table", "examples"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--csv") != std::string::npos);
}

TEST_CASE("verify --csv: the numbers' columns apart from the text's, one example by hand", "[cli][verify]") {
    const auto r = run_inferlab({"verify", "--csv"});
    REQUIRE(r.status == 0);
    const auto rows = parse_csv(r.out);
    REQUIRE(rows.size() > 1);
    CHECK(rows.front() == std::vector<std::string>{"id", "document", "section", "unit", "expected_value", "tolerance",
                                                   "computed_value", "exact", "pass"});
    // The first document's 1 GiB in bytes (000_5f2b20623495609b.txt §2.1.1).
    const auto one = parse_csv(run_inferlab({"verify", "--csv", "--id", "kv.doc1.gqa-gib"}).out);
    REQUIRE(one.size() == 2);
    CHECK(one[1][0] == "kv.doc1.gqa-gib");
    CHECK(one[1][3] == "B");
    CHECK(one[1][4] == "1073741824");
    CHECK(one[1][6] == "1073741824");
    CHECK(one[1][7] == "true");  // exact, as the JSON's booleans
    CHECK(one[1][8] == "true");
}

// First document §4.1: x = 0.37, Δ = 0.1 gives the error 0.03, computed in fractions as the
// decimals were typed (binary doubles give 0.030000000000000027, which an exact example is not).
TEST_CASE("verify: the first document's quantization error is exactly 0.03", "[cli][verify][textbook]") {
    const auto r = run_inferlab({"verify", "--id", "quant.doc1.error", "--json"});
    REQUIRE(r.status == 0);
    const nlohmann::json j = parse_json(r);
    REQUIRE(j.at("examples").size() == 1);
    CHECK(j.at("examples").at(0).at("exact") == true);
    CHECK(j.at("examples").at(0).at("computed_value").get<double>() == 0.03);
}
