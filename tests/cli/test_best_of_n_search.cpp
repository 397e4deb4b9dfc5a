// best-of-n --search (issue #32): step-wise search with a process scorer beside best-of-N at the same
// generated steps, through the real binary. The first document's §3.2: "search lets scoring errors
// accumulate over steps, so a good outcome checker and a good process scorer are not interchangeable".
#include <catch2/catch.hpp>
#include <cmath>

#include "../support/cli.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
const std::vector<std::string> kAccumulation = {"best-of-n", "--search", "--q", "0.8", "--branch", "4", "--beam", "4",
                                                "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "1..12",
                                                "--tpr", "0.9", "--fpr", "0.1"};
}  // namespace

TEST_CASE("best-of-n --search must-show: best-of-N ahead at small T, search at large T, the crossing printed",
          "[cli][best-of-n][search]") {
    const CliResult h = run_inferlab(kAccumulation);
    CHECK(h.status == 0);
    CHECK(h.err.empty());
    CHECK(h.out.find("best-of-N is ahead up to T = 4, search from T = 5") != std::string::npos);
    const auto j = parse_json(run_inferlab(with(kAccumulation, {"--json"})));
    REQUIRE(j["rows"].size() == 12);
    for (const auto& r : j["rows"]) {
        const auto t = r["steps"].get<std::uint64_t>();
        const double search = r["success"].get<double>(), bon = r["best_of_n"]["success"].get<double>();
        // Generated steps: 4 at T = 1, then 16 a step (beam 4 × 4 continuations); best-of-N buys
        // floor(generated / T) whole trajectories, each correct with 0.8^T.
        const std::uint64_t generated = 4 + 16 * (t - 1);
        CHECK(r["generated_steps"] == generated);
        CHECK(r["scorer_calls"] == generated);
        CHECK(r["best_of_n"]["n"] == generated / t);
        CHECK_THAT(r["best_of_n"]["p_trajectory"].get<double>(), WithinRel(std::pow(0.8, double(t)), 1e-12));
        CHECK(r["ahead"] == (t <= 4 ? "best-of-N" : "search"));
        CHECK((t <= 4 ? bon > search : search > bon));
    }
    CHECK(j["crossing"]["last_steps"] == 4);
    CHECK(j["crossing"]["first_steps"] == 5);
    CHECK(j["crossing"]["before"] == "best-of-N");
    CHECK(j["crossing"]["after"] == "search");
}

TEST_CASE("best-of-n --search: the exact limits as the binary prints them", "[cli][best-of-n][search]") {
    // A noiseless scorer with beam 1: (1 − (1 − q)^k)^T = (1 − 0.2^3)^5 = 0.992^5.
    auto j = parse_json(run_inferlab({"best-of-n", "--search", "--q", "0.8", "--branch", "3", "--beam", "1", "--step-tpr", "1",
                                      "--step-fpr", "0", "--steps", "1..5", "--json"}));
    CHECK(j["limit"]["form"] == "(1 − (1 − q)^k)^T");
    CHECK_THAT(j["rows"][4]["success"].get<double>(), WithinRel(std::pow(0.992, 5), 1e-12));
    CHECK_THAT(j["limit"]["value"].get<double>(), WithinRel(std::pow(0.992, 5), 1e-12));
    // A scorer that carries no information (gap 0): q^T whatever the beam.
    j = parse_json(run_inferlab({"best-of-n", "--search", "--q", "0.9", "--branch", "3", "--beam", "5", "--score-gap", "0",
                                 "--score-sigma", "1", "--steps", "7", "--json"}));
    CHECK(j["limit"]["form"] == "q^T");
    CHECK_THAT(j["rows"][0]["success"].get<double>(), WithinRel(std::pow(0.9, 7), 1e-10));
    // One step: best-of-k with the scorer as verifier, which best-of-n computes by its own formula.
    const auto s = parse_json(run_inferlab({"best-of-n", "--search", "--q", "0.3", "--branch", "4", "--beam", "2",
                                            "--step-tpr", "0.9", "--step-fpr", "0.2", "--steps", "1", "--json"}));
    const auto b = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "4", "--tpr", "0.9", "--fpr", "0.2", "--json"}));
    CHECK_THAT(s["rows"][0]["success"].get<double>(), WithinAbs(b["verifier_selection"].get<double>(), 1e-14));
    const CliResult x = run_inferlab({"best-of-n", "--search", "--q", "0.8", "--branch", "3", "--beam", "1", "--step-tpr", "1",
                                      "--step-fpr", "0", "--steps", "1,5", "--explain"});
    CHECK(x.out.find("T = 5: generated steps Σ_t m_(t−1)·k = 3 × 5 = 15") != std::string::npos);
    CHECK(x.out.find("at T = 5: (1 − (1 − q)^k)^T ≈\n0.9606349004.") != std::string::npos);
}

TEST_CASE("best-of-n --search --simulate agrees with the exact chain, the same seed gives the same draws",
          "[cli][best-of-n][search]") {
    const std::vector<std::string> args = {"best-of-n", "--search", "--q", "0.85", "--branch", "3", "--beam", "3",
                                           "--score-gap", "1", "--score-sigma", "0.7", "--steps", "1..6", "--tpr", "0.8",
                                           "--fpr", "0.2", "--final-check", "--simulate", "40000", "--seed", "5", "--json"};
    const auto j = parse_json(run_inferlab(args));
    CHECK(j["final_check"] == true);
    CHECK(j["simulation"]["all_agree"] == true);
    REQUIRE(j["simulation"]["rows"].size() == 6);
    for (const auto& r : j["simulation"]["rows"]) {
        CHECK(r["agrees"] == true);
        CHECK(r["interval_99"][0].get<double>() <= r["exact"].get<double>());
        CHECK(r["exact"].get<double>() <= r["interval_99"][1].get<double>());
    }
    for (const auto& r : j["rows"]) CHECK(r["verifier_calls"] == 3);
    CHECK(parse_json(run_inferlab(args)) == j);
}

TEST_CASE("best-of-n --search: with --final-check the first step ties best-of-N", "[cli][best-of-n][search]") {
    // T = 1 with the outcome verifier over the whole first beam is best-of-4 with that verifier: the
    // same value by two routes, a tie and not "search" by a rounding bit.
    const auto j = parse_json(run_inferlab(with(kAccumulation, {"--final-check", "--json"})));
    CHECK(j["rows"][0]["ahead"] == "tie");
}

TEST_CASE("best-of-n --search: bad input exits 2 with one line naming the flag and rule", "[cli][best-of-n][search][errors]") {
    const std::vector<std::string> base = {"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "0.3"};
    expect_error({"best-of-n", "--search", "--q", "1.2", "--step-tpr", "1", "--step-fpr", "0"},
                 "--q '1.2': must be a probability in [0, 1]");
    expect_error(with(base, {"--beam", "0"}), "--beam '0': must be a positive integer");
    expect_error(with(base, {"--branch", "0"}), "--branch '0': must be a positive integer");
    expect_error(with(base, {"--branch", "200"}), "--branch '200': must be at most 128");
    expect_error(with(base, {"--beam", "64", "--branch", "4"}),
                 "--beam '64': with 4 continuations per branch gives more than 128 candidates per step");
    expect_error(with(base, {"--steps", "0"}), "--steps '0': must be a positive integer");
    expect_error(with(base, {"--steps", "1001"}), "--steps '1001': must be from 1 to 1000 steps");
    expect_error({"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "1.5"},
                 "--step-fpr '1.5': must be a probability in [0, 1]");
    expect_error({"best-of-n", "--search", "--q", "0.8", "--score-sigma", "-1"}, "--score-sigma '-1': must be a finite number ≥ 0");
    expect_error({"best-of-n", "--search", "--q", "0.8", "--score-sigma", "1", "--score-gap", "-2"}, "--score-gap '-2'");
    expect_error({"best-of-n", "--search", "--q", "0.8"}, "--search needs a process scorer");
    expect_error({"best-of-n", "--search", "--q", "0.8", "--step-tpr", "1"}, "give both --step-tpr and --step-fpr");
    expect_error({"best-of-n", "--search", "--q", "0.8", "--score-gap", "1"}, "--score-gap needs --score-sigma");
    expect_error(with(base, {"--score-sigma", "1"}), "both given: choose one noise model");
    expect_error({"best-of-n", "--search", "--step-tpr", "1", "--step-fpr", "0"}, "--search needs --q");
    expect_error(with(base, {"--p", "0.3"}), "--p has no effect with --search");
    expect_error(with(base, {"--n", "4"}), "--n has no effect with --search");
    expect_error(with(base, {"--budget", "10"}), "--budget has no effect with --search");
    expect_error(with(base, {"--final-check"}), "--final-check needs an outcome verifier");
    expect_error(with(base, {"--seed", "3"}), "--seed has no effect without --simulate");
    expect_error(with(base, {"--beam", "32", "--steps", "1000", "--simulate", "10000000"}),
                 "--simulate '10000000': would simulate more than 250,000,000 candidate steps");
    expect_error({"best-of-n", "--p", "0.3", "--q", "0.8"}, "--q has no effect without --search");
    expect_error({"best-of-n", "--p", "0.3", "--beam", "2"}, "--beam has no effect without --search");
}

TEST_CASE("best-of-n --search --svg draws both strategies and marks the crossing", "[cli][best-of-n][search][svg]") {
    const Scratch dir("search-svg");
    const std::string file = (dir.path / "search.svg").string();
    const CliResult r = run_inferlab(with(kAccumulation, {"--svg", file}));
    REQUIRE(r.status == 0);
    const std::string svg = slurp(file);
    CHECK(svg.find("search (k = 4, w = 4)") != std::string::npos);
    CHECK(svg.find("best-of-N, outcome verifier, same steps") != std::string::npos);
    CHECK(svg.find("T = 5: search ahead from here") != std::string::npos);
}

namespace {
const std::vector<std::string> kAtOneCost = {
    "best-of-n", "--search", "--q", "0.9", "--branch", "4", "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "10",
    "--tpr", "0.9", "--fpr", "0.1", "--alternatives", "3", "--budget-seconds", "30", "--step-tokens", "64", "--model",
    "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "512", "--call-seconds", "0.005"};
}  // namespace

TEST_CASE("best-of-n --search at one cost: batch pricing changes which strategy wins, and says so",
          "[cli][best-of-n][search][budget]") {
    const CliResult h = run_inferlab(kAtOneCost);
    REQUIRE(h.status == 0);
    CHECK(h.out.find("Batch pricing changes the winner: majority vote with batches priced as") != std::string::npos);
    const auto j = parse_json(run_inferlab(with(kAtOneCost, {"--json"})));
    const auto& b = j["budget"];
    CHECK(b["winner"] == "majority vote");
    CHECK(b["flat_winner"] == "search");
    CHECK(b["pricing_changes_winner"] == true);
    // One sample is 640 decode steps at batch 1 reading S = 512 … 1151: decode-roofline's own sum for
    // a prompt of 511 and 641 output tokens (its first token from prefill, then those 640 steps).
    const auto dr = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len",
                                             "511", "--output-len", "641", "--batch", "1,9", "--json"}));
    const auto& one = b["plans"][0];
    REQUIRE(one["strategy"] == "single sample");
    CHECK_THAT(one["batched_s"].get<double>(), WithinRel(dr["generation"][0]["decode_total_s"].get<double>(), 1e-12));
    // Under flat pricing best-of-N buys 9 trajectories: 9 lone ones plus 9 verifier calls of 5 ms; batched,
    // the same 9 are one batch of 9 (decode-roofline at B = 9).
    const auto& flat_bon = b["flat_plans"][1];
    REQUIRE(flat_bon["strategy"] == "best-of-N + verifier");
    CHECK(flat_bon["width"] == 9);
    CHECK_THAT(flat_bon["flat_s"].get<double>(), WithinRel(9 * one["flat_s"].get<double>() + 9 * 0.005, 1e-12));
    CHECK_THAT(flat_bon["batched_s"].get<double>(),
               WithinRel(dr["generation"][1]["decode_total_s"].get<double>() + 9 * 0.005, 1e-12));
    for (const auto& plans : {b["plans"], b["flat_plans"]})
        for (const auto& p : plans) CHECK(p["batched_s"].get<double>() <= p["flat_s"].get<double>() + 1e-12);
}

TEST_CASE("best-of-n --search at a budget of tokens buys whole trajectories and the widest beam",
          "[cli][best-of-n][search][budget]") {
    const auto j = parse_json(run_inferlab({"best-of-n", "--search", "--q", "0.8", "--branch", "4", "--step-tpr", "0.9",
                                            "--step-fpr", "0.3", "--steps", "1..5", "--tpr", "0.9", "--fpr", "0.1",
                                            "--budget-tokens", "10000", "--step-tokens", "50", "--json"}));
    const auto& b = j["budget"];
    CHECK(b["steps"] == 5);
    // A trajectory of 5 steps is 250 tokens: best-of-N buys floor(10000 / 250) = 40.
    CHECK(b["plans"][1]["width"] == 40);
    CHECK(b["plans"][1]["tokens"] == 10000);
    // The search's beam w ≥ 4: beams 1, 4, w, w, w propose 4 + 16 + 3·4w steps of 50 tokens, at most
    // 10000, so w = 15 (exactly 10,000 tokens; w = 16 is 10,600).
    const auto& s = b["plans"][2];
    REQUIRE(s["strategy"] == "search");
    CHECK(s["width"] == 15);
    CHECK(s["tokens"] == 10000);
    CHECK(s["batched_s"].is_null());  // no model and machine: no time
    CHECK(b["flat_plans"].is_null());
}

TEST_CASE("best-of-n --search budgets: bad input names the flag and the rule", "[cli][best-of-n][search][budget][errors]") {
    const std::vector<std::string> base = {"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "0.3",
                                           "--steps", "4", "--tpr", "0.9", "--fpr", "0.1"};
    expect_error(with(base, {"--budget-tokens", "100", "--step-tokens", "50"}),
                 "--budget-tokens '100': buys no complete sample: one trajectory of 4 steps is 200 tokens");
    expect_error(with(base, {"--budget-seconds", "1", "--step-tokens", "50"}), "--budget-seconds needs a model and a machine");
    expect_error(with(base, {"--budget-tokens", "1000"}), "a budget needs --step-tokens L");
    expect_error(with(base, {"--budget-tokens", "1000", "--budget-seconds", "3", "--step-tokens", "5"}),
                 "--budget-tokens and --budget-seconds both given");
    expect_error(with(base, {"--step-tokens", "5"}), "--step-tokens has no effect without --budget-tokens or --budget-seconds");
    expect_error(with(base, {"--model", "llama-3-8b"}), "--model has no effect without --budget-tokens or --budget-seconds");
    expect_error({"best-of-n", "--p", "0.3", "--model", "llama-3-8b"}, "--model has no effect without --search");
    expect_error({"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "0.3", "--budget-tokens", "1000",
                  "--step-tokens", "5"},
                 "a budget compares best-of-N with an outcome verifier: give --tpr and --fpr");
    expect_error(with(base, {"--budget-seconds", "0.01", "--step-tokens", "64", "--model", "llama-3-8b", "--hw", "h100-sxm"}),
                 "--budget-seconds '0.01': buys no complete sample: one trajectory of 4 steps takes");
    expect_error(with(base, {"--budget-seconds", "-1", "--step-tokens", "64", "--model", "llama-3-8b", "--hw", "h100-sxm"}),
                 "--budget-seconds '-1'");
}
