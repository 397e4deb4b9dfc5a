// Output contracts of `inferlab model pitfall` (issue #15): JSON keys are the README's and the
// same (null where empty) for a model pitfall and a calculator; every table is CSV a real parser
// reads, by --table NAME; text fits 80 columns under COLUMNS=80.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {
std::set<std::string> top_keys(const nlohmann::json& j) {
    std::set<std::string> k;
    for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
    return k;
}
}  // namespace

TEST_CASE("model pitfall --json: documented keys, the same top-level keys for every kind of pitfall", "[cli][contract]") {
    const auto doc = documented_keys("model pitfall");
    const auto model = parse_json(run_inferlab({"model", "pitfall", "position-restart", "--json"}));
    const auto calc = parse_json(run_inferlab({"model", "pitfall", "gib-as-gb", "--json"}));
    const auto list = parse_json(run_inferlab({"model", "pitfall", "--list", "--json"}));
    CHECK(undocumented_keys(model, doc).empty());
    CHECK(undocumented_keys(calc, doc).empty());
    CHECK(undocumented_keys(list, doc).empty());
    CHECK(top_keys(model) == top_keys(calc));
    CHECK(calc["tolerance"].is_null());
    CHECK(model["other_row_correct_err"].is_null());
}

TEST_CASE("model pitfall --csv: every table parses, by --table NAME where there are several", "[cli][contract]") {
    for (const char* t : {"positions", "checks"}) {
        const auto r = run_inferlab({"model", "pitfall", "position-restart", "--csv", "--table", t});
        REQUIRE(r.status == 0);
        check_csv(r.out, std::string("model pitfall position-restart --table ") + t);
    }
    check_csv(run_inferlab({"model", "pitfall", "threshold-accept", "--csv"}).out, "model pitfall threshold-accept");
    check_csv(run_inferlab({"model", "pitfall", "mean-length", "--csv"}).out, "model pitfall mean-length");
    check_csv(run_inferlab({"model", "pitfall", "--list", "--csv"}).out, "model pitfall --list");
    expect_error({"model", "pitfall", "position-restart", "--csv", "--table", "bogus"}, "--table 'bogus'");
}

TEST_CASE("model pitfall text fits 80 columns under COLUMNS=80", "[cli][contract]") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"model", "pitfall", "unmasked-padding", "--explain"},
          std::vector<std::string>{"model", "pitfall", "threshold-accept", "--explain"},
          std::vector<std::string>{"model", "pitfall", "--list"}}) {
        const auto r = run_inferlab(args, "", {"COLUMNS=80"});
        REQUIRE(r.status == 0);
        CHECK(widest_line(r.out) <= 80);
    }
}
