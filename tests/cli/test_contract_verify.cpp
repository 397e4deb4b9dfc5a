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

TEST_CASE("--table names a table that does not exist: exit 2, the tables listed", "[cli][contract]") {
    expect_error({"verify", "--csv", "--table", "bogus"}, "--table 'bogus': no such table in this output (its tables: examples)");
}

TEST_CASE("--table without --csv is refused", "[cli][contract]") {
    const auto r = run_inferlab({"verify", "--table", "examples"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--csv") != std::string::npos);
}
