// Output contracts of `inferlab spec-accept` (issue #15): every table as CSV, JSON keys the README
// documents with one schema whatever was asked, text within 80 columns.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {
const std::vector<std::string> kPosition = {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"};
const std::vector<std::string> kAll = {"spec-accept", "--p",          "0.6,0.3,0.1", "--q",     "0.4,0.4,0.2",
                                       "--gamma",     "3",            "--cost-ratio", "0.1",    "--outcomes",
                                       "accept,reject", "--simulate", "2000",        "--seed", "2"};
}  // namespace

TEST_CASE("spec-accept --csv: every table by name parses, the first is what the inputs were about", "[cli][contract]") {
    for (const char* t : {"tokens", "round", "gamma", "simulation"}) {
        const auto r = run_inferlab(with(kAll, {"--csv", "--table", t}));
        REQUIRE(r.status == 0);
        check_csv(r.out, std::string("spec-accept --table ") + t);
    }
    CHECK(run_inferlab(with(kAll, {"--csv"})).out.rfind("token,p,speculative", 0) == 0);
    CHECK(run_inferlab(with(kPosition, {"--csv"})).out.rfind("token,p,q,", 0) == 0);
    CHECK(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1", "--csv"}).out.rfind("γ,", 0) == 0);
    // A token the draft never proposes has no α: an empty cell, not words.
    const auto never = run_inferlab({"spec-accept", "--p", "0.5,0.5", "--q", "1,0", "--csv"});
    check_csv(never.out, "spec-accept, q = 0");
    CHECK(never.out.find("never") == std::string::npos);
}

TEST_CASE("spec-accept --json: documented keys, every key present whatever was asked", "[cli][contract]") {
    const auto doc = documented_keys("spec-accept");
    const auto all = parse_json(run_inferlab(with(kAll, {"--json"})));
    CHECK(undocumented_keys(all, doc).empty());
    const auto logits = parse_json(run_inferlab({"spec-accept", "--p-logits", "2,1,0", "--q-logits", "1,1,1", "--json"}));
    CHECK(undocumented_keys(logits, doc).empty());
    // Top-level keys are the same in every mode; a section not computed is null.
    std::set<std::string> top_all, top_alpha;
    for (const auto& [k, v] : all.items()) top_all.insert(k);
    const auto alpha = parse_json(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--json"}));
    for (const auto& [k, v] : alpha.items()) top_alpha.insert(k);
    CHECK(top_all == top_alpha);
    CHECK(alpha["p"].is_null());
    CHECK(alpha["gamma_table"].is_null());
    // One mode, with and without an optional input: the same key paths.
    const auto sweep = parse_json(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1", "--json"}));
    const auto sweep2 = parse_json(run_inferlab({"spec-accept", "--alpha", "0.5", "--gamma", "2", "--cost-ratio", "0.3",
                                                 "--max-gamma", "3", "--json"}));
    CHECK(key_paths(sweep) == key_paths(sweep2));
    const auto fl = parse_json(run_inferlab(with(kPosition, {"--float", "--json"})));
    CHECK(fl["exact"].is_null());
    CHECK(key_paths(fl).count("exact") == 1);
}

TEST_CASE("spec-accept: text and --explain fit 80 columns", "[cli][contract]") {
    for (const auto& args : {kAll, with(kAll, {"--explain"}), with(kPosition, {"--explain"}),
                             std::vector<std::string>{"spec-accept", "--alpha", "1", "--gamma", "4", "--cost-ratio", "0.1"}}) {
        const auto r = run_inferlab(args, "", {"COLUMNS=80"});
        REQUIRE(r.status == 0);
        INFO(r.out);
        CHECK(widest_line(r.out) <= 80);
    }
}

TEST_CASE("spec-accept: a flag that changes nothing is refused, naming both flags", "[cli][contract][errors]") {
    expect_error(with(kPosition, {"--temperature", "2"}), "--temperature has no effect with --p/--q");
    expect_error(with(kPosition, {"--top-k", "2"}), "--top-k has no effect with --p/--q");
    expect_error(with(kPosition, {"--seed", "3"}), "--seed has no effect without --simulate");
    expect_error({"spec-accept", "--p-logits", "1,2", "--q-logits", "2,1", "--normalize"},
                 "--normalize has no effect with --p-logits/--q-logits");
    expect_error({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--max-gamma", "12"},
                 "--max-gamma has no effect without --cost-ratio");
    // --temperature 0 is greedy, with logits (apps/options.hpp's rule).
    CHECK(run_inferlab({"spec-accept", "--p-logits", "1,2", "--q-logits", "2,1", "--temperature", "0"}).status == 0);
}
