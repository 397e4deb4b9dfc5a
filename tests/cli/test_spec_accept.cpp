#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;

namespace {
// 1e-12 absolute, here and for the single values below: fractions with denominators up to 10
// printed as doubles (the exact fractions are checked as strings where the JSON has them).
void check_list(const nlohmann::json& j, const std::vector<double>& want) {
    REQUIRE(j.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) CHECK_THAT(j[i].get<double>(), WithinAbs(want[i], 1e-12));
}
}  // namespace

TEST_CASE("spec-accept must-show: the document's hand computation", "[cli][spec-accept]") {
    auto j = parse_json(run_inferlab({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2", "--json"}));
    check_list(j["alpha"], {1, 0.75, 0.5});
    check_list(j["accepted_mass"], {0.4, 0.3, 0.1});
    CHECK_THAT(j["accept_prob"].get<double>(), WithinAbs(0.8, 1e-12));
    CHECK_THAT(j["reject_prob"].get<double>(), WithinAbs(0.2, 1e-12));
    check_list(j["residual"], {1, 0, 0});
    check_list(j["output"], {0.6, 0.3, 0.1});
    CHECK(j["max_abs_error"].get<double>() <= 1e-12);
    CHECK(j["exact"]["alpha"] == std::vector<std::string>{"1", "3/4", "1/2"});
    auto h = run_inferlab({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"});
    CHECK(h.out.find("3/4") != std::string::npos);
    CHECK(h.out.find("0.7499999") == std::string::npos);
    auto file = parse_json(run_inferlab({"spec-accept", "--p-file", data_path("p.txt"), "--q", "0.4,0.4,0.2", "--json"}));
    CHECK(file["output"] == j["output"]);
}

TEST_CASE("spec-accept must-show: expected tokens per round 3.3616 and a speedup", "[cli][spec-accept]") {
    auto j = parse_json(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--json"}));
    CHECK_THAT(j["expected_tokens_per_round"].get<double>(), WithinAbs(3.3616, 1e-12));
    auto c = parse_json(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1", "--json"}));
    CHECK_THAT(c["speedup"].get<double>(), WithinAbs(3.3616 / 1.4, 1e-12));
    CHECK(c["best_gamma"] == 6);
    auto d = parse_json(run_inferlab({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2", "--gamma", "4", "--json"}));
    CHECK_THAT(d["alpha_rate"].get<double>(), WithinAbs(0.8, 1e-12));
}

TEST_CASE("spec-accept must-show: 10^6 samples match p, the shortcut does not", "[cli][spec-accept]") {
    auto j = parse_json(run_inferlab({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2", "--simulate", "1000000",
                                      "--seed", "1", "--json"}));
    CHECK(j["simulation"]["speculative_fit"]["passes_at_1_percent"] == true);
    CHECK(j["simulation"]["threshold_shortcut_fit"]["passes_at_1_percent"] == false);
    for (std::size_t x = 0; x < 3; ++x) {
        double p = j["p"][x].get<double>();
        double f = j["simulation"]["speculative"][x].get<double>();
        // The 99% half-width of a frequency over 10^6 samples, widened by 1.5 so that three cells
        // checked at once (each 1% likely to fall outside at 1.0) do not make a fixed seed fragile.
        CHECK(std::abs(f - p) <= 2.576 * std::sqrt(p * (1 - p) / 1e6) * 1.5);
    }
    CHECK(j["simulation"]["greedy"][0] == 1.0);
}

TEST_CASE("spec-accept: the round walkthrough", "[cli][spec-accept]") {
    auto j = parse_json(run_inferlab({"spec-accept", "--gamma", "4", "--outcomes", "accept,accept,reject", "--json"}));
    CHECK(j["round"]["tokens_advanced"] == 3);
    CHECK(j["round"]["discarded"] == 1);
    CHECK(j["round"]["draft_proposals"] == 4);
    CHECK(j["round"]["target_positions"] == 4);
    CHECK(j["round"]["steps"][3]["fate"] == "discarded");
}

TEST_CASE("spec-accept: logits with temperature and top-k", "[cli][spec-accept]") {
    auto j = parse_json(run_inferlab({"spec-accept", "--p-logits", "2,1,0", "--q-logits", "1,1,1", "--top-k", "2", "--json"}));
    CHECK(j["exact_arithmetic"] == false);
    CHECK(j["p"][2] == 0.0);
    CHECK(j["max_abs_error"].get<double>() < 1e-12);  // floating point here (logits): sums of three terms below 1
}

TEST_CASE("spec-accept: bad input exits 2 with one clear line", "[cli][spec-accept][errors]") {
    expect_error({"spec-accept", "--p", "0.6,0.4", "--q", "0.4,0.4,0.2"}, "--q has 3 entries and --p has 2 entries: p and q must cover the same vocabulary");
    expect_error({"spec-accept", "--p", "0.5,0.5", "--q", "1"}, "--q has 1 entry and --p has 2 entries");
    expect_error({"spec-accept", "--p", "0.6,0.5,-0.1", "--q", "0.4,0.4,0.2"}, "entries must not be negative");
    expect_error({"spec-accept", "--p", "0.6,0.6,0.1", "--q", "0.4,0.4,0.2"}, "must sum to 1 within 1e-9");
    expect_error({"spec-accept", "--p", "", "--q", "0.4,0.4,0.2"}, "--p '': is empty");
    expect_error({"spec-accept", "--gamma", "4", "--outcomes", "accept,reject,accept"}, "follows a rejection");
    expect_error({"spec-accept", "--gamma", "2", "--outcomes", "accept,accept,accept"}, "longer than --gamma 2");
    expect_error({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "x,0.4,0.2"}, "--q 'x'");
    expect_error({"spec-accept"}, "nothing to compute");
}

// Issue #14: "best" only where a γ helps and where it is an optimum.
TEST_CASE("spec-accept: α = 0 has no best γ, α = 1 shows the table's edge", "[cli][spec-accept][edge]") {
    auto zero = run_inferlab({"spec-accept", "--alpha", "0", "--gamma", "4", "--cost-ratio", "0.1"});
    CHECK(zero.status == 0);
    CHECK(zero.out.find("← best") == std::string::npos);
    CHECK(zero.out.find("No γ helps at α = 0, c = 0.1") != std::string::npos);
    auto zj = parse_json(run_inferlab({"spec-accept", "--alpha", "0", "--gamma", "4", "--cost-ratio", "0.1", "--json"}));
    CHECK(zj["best_gamma"].is_null());
    auto one = run_inferlab({"spec-accept", "--alpha", "1", "--gamma", "4", "--cost-ratio", "0.1"});
    CHECK(one.out.find("← best shown (table's edge)") != std::string::npos);
    CHECK(one.out.find("γ = 8 is the table's edge, not an optimum: γ = 9 would be faster still") != std::string::npos);
    auto oj = parse_json(run_inferlab({"spec-accept", "--alpha", "1", "--gamma", "4", "--cost-ratio", "0.1", "--json"}));
    CHECK(oj["best_gamma"] == 8);
    CHECK(oj["best_gamma_at_table_edge"] == true);
    auto g1 = run_inferlab({"spec-accept", "--alpha", "0.5", "--gamma", "1"});
    CHECK(g1.out.find("γ = 1 draft (positions") != std::string::npos);
    CHECK(g1.out.find("→ 1 token\n") != std::string::npos);
}

TEST_CASE("spec-accept --csv: the first table is what the inputs were about", "[cli][spec-accept]") {
    const std::vector<std::string> all = {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2", "--gamma", "3",
                                          "--cost-ratio", "0.1", "--outcomes", "accept,reject", "--simulate", "2000",
                                          "--seed", "2", "--csv"};
    CHECK(run_inferlab(all).out.rfind("token,p,speculative", 0) == 0);
    CHECK(run_inferlab({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2", "--csv"}).out.rfind("token,p,q,", 0) == 0);
    CHECK(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1", "--csv"}).out.rfind("gamma,expected_tokens_per_round,speedup,best\n", 0) == 0);
    // A token the draft never proposes has no α: an empty cell, not words.
    const auto never = run_inferlab({"spec-accept", "--p", "0.5,0.5", "--q", "1,0", "--csv"});
    check_csv(never.out, "spec-accept, q = 0");
    CHECK(never.out.find("never") == std::string::npos);
}

TEST_CASE("spec-accept: a flag that changes nothing is refused, naming both flags", "[cli][spec-accept][errors]") {
    const std::vector<std::string> position = {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"};
    expect_error(with(position, {"--temperature", "2"}), "--temperature has no effect with --p/--q");
    expect_error(with(position, {"--top-k", "2"}), "--top-k has no effect with --p/--q");
    expect_error(with(position, {"--seed", "3"}), "--seed has no effect without --simulate");
    expect_error({"spec-accept", "--p-logits", "1,2", "--q-logits", "2,1", "--normalize"},
                 "--normalize has no effect with --p-logits/--q-logits");
    expect_error({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--max-gamma", "12"},
                 "--max-gamma has no effect without --cost-ratio");
    // --temperature 0 is greedy, with logits (apps/options.hpp's rule).
    CHECK(run_inferlab({"spec-accept", "--p-logits", "1,2", "--q-logits", "2,1", "--temperature", "0"}).status == 0);
}

// k past the vocabulary keeps every token: a flag that changes nothing is refused (spec-accept's
// logits, model generate and model speculate alike).
TEST_CASE("a --top-k past the vocabulary is refused by spec-accept, model generate and model speculate", "[cli][spec-accept][errors]") {
    expect_error({"spec-accept", "--p-logits", "1,2", "--q-logits", "2,1", "--temperature", "1", "--top-k", "5"},
                 "--top-k '5': must be at most the vocabulary's 2 tokens (0: off)");
    CHECK(run_inferlab({"spec-accept", "--p-logits", "1,2", "--q-logits", "2,1", "--temperature", "1", "--top-k", "2"}).status == 0);
    expect_error({"model", "generate", "--model", "demo-gqa", "--temperature", "1", "--top-k", "513"},
                 "--top-k '513': must be at most the vocabulary's 512 tokens (0: off)");
    expect_error({"model", "speculate", "--model", "demo-gqa", "--top-k", "513"},
                 "--top-k '513': must be at most the vocabulary's 512 tokens (0: off)");
}

// Issue #29's review: --explain with --simulate says what the frequencies, their ± and the χ² are,
// each token's ± substituted: 2.576·sqrt(0.6·0.4/1000) = 0.03991.
TEST_CASE("spec-accept --explain shows the simulation's half-widths substituted and its chi-square verdicts", "[cli][spec-accept]") {
    const CliResult r = run_inferlab({"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2", "--simulate", "1000",
                                      "--explain"},
                                     "", {"INFERLAB_LANG=en", "COLUMNS=200"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("Simulation of 1,000 samples: each frequency is count(x) / n") != std::string::npos);
    CHECK(r.out.find("x = 0: 2.576·sqrt(0.6·(1 − 0.6) / 1,000) = 0.03991; speculative 0.615") != std::string::npos);
    CHECK(r.out.find("speculative rule: TV distance") != std::string::npos);
    CHECK(r.out.find("χ² = ") != std::string::npos);
}
