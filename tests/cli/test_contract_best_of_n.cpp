// Output contracts of `inferlab best-of-n` (issue #15): every table as CSV a real parser reads,
// JSON keys the README documents with one schema (null, never absent), and text within 80 columns.
#include <catch2/catch.hpp>

#include <set>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {

using Args = std::vector<std::string>;

struct Mode {
    const char* name;
    Args args;
    std::vector<std::string> tables;
};

std::vector<Mode> modes() {
    return {
        {"coverage", {"best-of-n", "--p", "0.3", "--n", "4"}, {"rows"}},
        {"a verifier and a simulation",
         {"best-of-n", "--p", "0.3", "--n", "1..8", "--tpr", "0.9", "--fpr", "0.2", "--simulate", "2000", "--seed", "7"},
         {"rows", "simulation"}},
        {"every strategy and the inverse",
         {"best-of-n", "--p", "0.9", "--n", "1,2,8", "--alternatives", "2", "--judge-bias", "0.3", "--hard-fraction", "0.05",
          "--rho", "0.2", "--target", "0.999"},
         {"rows"}},
        {"equal cost",
         {"best-of-n", "--p", "0.3", "--tpr", "0.9", "--fpr", "0.1", "--alternatives", "3", "--budget", "16", "--cost-judge", "1"},
         {"rows", "budget"}},
        {"a verifier that accepts nothing", {"best-of-n", "--p", "0", "--n", "1..3", "--tpr", "0", "--fpr", "0", "--fallback", "abstain"}, {"rows"}},
    };
}

}  // namespace

TEST_CASE("best-of-n --csv: every table of every mode passes the CSV contract", "[cli][contract][best-of-n]") {
    for (const auto& m : modes()) {
        INFO(m.name);
        check_every_csv_table(m.args, m.tables, m.name);
    }
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--csv", "--table", "budget"}, "--table 'budget'");
}

TEST_CASE("best-of-n --json: only documented keys, and one schema", "[cli][contract][best-of-n]") {
    const auto doc = documented_keys("best-of-n");
    std::set<std::string> first_top;
    for (const auto& m : modes()) {
        INFO(m.name);
        const auto j = parse_json(run_inferlab(with(m.args, {"--json"})));
        CHECK(undocumented_keys(j, doc).empty());
        if (first_top.empty()) first_top = top_level_keys(j);
        CHECK(top_level_keys(j) == first_top);
    }
    // Strategies asked for or not, one N or several: the same keys, null where not computed.
    const auto bare = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "4", "--json"}));
    const auto more = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "2,4", "--judge-bias", "0.2",
                                               "--hard-fraction", "0.1", "--rho", "0.3", "--alternatives", "2", "--json"}));
    CHECK(key_paths(bare) == key_paths(more));
    CHECK(bare["rows"][0]["biased_judge"].is_null());
    CHECK(more["coverage"].is_null());  // several N: the top-level copy of the row is null
    CHECK(bare["coverage"].is_number());
}

TEST_CASE("best-of-n text and --explain fit 80 columns", "[cli][contract][best-of-n]") {
    for (const auto& m : modes()) {
        INFO(m.name);
        const auto h = run_inferlab(m.args, "", {"COLUMNS=80"});
        REQUIRE(h.status == 0);
        CHECK(widest_line(h.out) <= 80);
        const auto x = run_inferlab(with(m.args, {"--explain"}), "", {"COLUMNS=80"});
        REQUIRE(x.status == 0);
        CHECK(widest_line(x.out) <= 80);
    }
}
