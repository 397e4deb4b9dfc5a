// Output contracts of `inferlab verify` (issue #15): its JSON keys are the README's, and --table
// is checked against the tables the output has.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

TEST_CASE("verify --json prints only the keys the README documents", "[cli][contract]") {
    const auto r = run_inferlab({"verify", "--json"});
    REQUIRE(r.status == 0);
    const auto j = parse_json(r);
    CHECK(undocumented_keys(j, documented_keys("verify")).empty());
    const auto paths = key_paths(j);
    CHECK(paths.count("examples[].pass") == 1);
    CHECK(paths.count("passed") == 1);
}

TEST_CASE("a --table name that does not exist: exit 2, the tables listed", "[cli][contract]") {
    expect_error({"verify", "--csv", "--table", "bogus"}, "--table 'bogus': no such table in this output (its tables: examples)");
}

TEST_CASE("a --table without --csv is refused", "[cli][contract]") {
    const auto r = run_inferlab({"verify", "--table", "examples"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--csv") != std::string::npos);
}

TEST_CASE("verify --csv and --csv --table examples pass the CSV contract", "[cli][contract]") {
    for (auto args : std::vector<std::vector<std::string>>{{"verify", "--csv"}, {"verify", "--csv", "--table", "examples"}}) {
        const auto r = run_inferlab(args);
        REQUIRE(r.status == 0);
        CHECK(r.err.empty());
        check_csv(r.out, "verify --csv");
        const auto rows = parse_csv(r.out);
        REQUIRE(rows.size() > 1);
        // The header names the numbers' columns apart from the text's (issue #15).
        CHECK(rows.front() == std::vector<std::string>{"id", "document", "section", "unit", "expected_value",
                                                       "tolerance", "computed_value", "exact", "result"});
    }
    // One example by hand: the first document's 1 GiB in bytes (000_5f2b20623495609b.txt §2.1.1).
    const auto one = parse_csv(run_inferlab({"verify", "--csv", "--id", "kv.doc1.gqa-gib"}).out);
    REQUIRE(one.size() == 2);
    CHECK(one[1][0] == "kv.doc1.gqa-gib");
    CHECK(one[1][3] == "B");
    CHECK(one[1][4] == "1073741824");
    CHECK(one[1][6] == "1073741824");
    CHECK(one[1][8] == "PASS");
}

TEST_CASE("verify text and --explain fit 80 columns", "[cli][contract]") {
    for (auto args : std::vector<std::vector<std::string>>{{"verify"}, {"verify", "--explain"}}) {
        const auto r = run_inferlab(args, "", {"COLUMNS=80"});
        REQUIRE(r.status == 0);
        CHECK(widest_line(r.out) <= 80);
        CHECK(r.out.find(" passed, 0 failed") != std::string::npos);
    }
}

TEST_CASE("verify --json has one schema whatever --id selects", "[cli][contract]") {
    CHECK(key_paths(parse_json(run_inferlab({"verify", "--json"}))) ==
          key_paths(parse_json(run_inferlab({"verify", "--json", "--id", "spec."}))));
}
