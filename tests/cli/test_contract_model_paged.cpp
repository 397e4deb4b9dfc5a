// Output contracts of `inferlab model paged` (issue #15): documented JSON keys with and without
// sharing (the same keys: null where --no-share has no value), CSV of numbers, 80 columns.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

TEST_CASE("model paged --json: documented keys, the same paths with and without sharing", "[cli][contract]") {
    const auto shared = parse_json(run_inferlab({"model", "paged", "--json"}));
    const auto alone = parse_json(run_inferlab({"model", "paged", "--no-share", "--json"}));
    CHECK(undocumented_keys(shared, documented_keys("model paged")).empty());
    CHECK(key_paths(shared) == key_paths(alone));
}

TEST_CASE("model paged --csv: one row per logical block, numbers only, read by libcsv", "[cli][contract]") {
    const auto r = run_inferlab({"model", "paged", "--csv"});
    REQUIRE(r.status == 0);
    check_csv(r.out, "model paged");
    const auto rows = parse_csv(r.out);
    REQUIRE(rows.size() > 1);
    CHECK(rows[0][4] == "logical block");
    const auto t = run_inferlab({"model", "paged", "--no-share"}, "", {"COLUMNS=80"});
    CHECK(widest_line(t.out) <= 80);
}
