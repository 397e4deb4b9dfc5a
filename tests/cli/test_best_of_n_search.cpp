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
    // One sample is decode-roofline's accounting of 640 tokens after a prompt of 512: the first from the
    // prefill (shared by every strategy, not charged), then 639 decode steps reading S = 513 … 1151.
    const auto dr = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len",
                                             "512", "--output-len", "640", "--batch", "1,9", "--json"}));
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
    // 10000, so the widest is w = 15 (exactly 10,000 tokens; w = 16 is 10,600). The plan is the most
    // accurate of the beams tried (1, 2, 4, 8, 14, 15): a wider beam can keep more wrong branches.
    const auto& s = b["plans"][2];
    REQUIRE(s["strategy"] == "search");
    const std::uint64_t w = s["width"].get<std::uint64_t>();
    CHECK((w == 1 || w == 2 || w == 4 || w == 8 || w == 14 || w == 15));
    CHECK(s["tokens"].get<std::uint64_t>() <= 10000);
    for (const char* beam : {"1", "2", "4", "8", "14", "15"}) {
        const auto one = parse_json(run_inferlab({"best-of-n", "--search", "--q", "0.8", "--branch", "4", "--beam", beam,
                                                  "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "5", "--json"}));
        CHECK(s["accuracy"].get<double>() >= one["rows"][0]["success"].get<double>() - 1e-15);
    }
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

TEST_CASE("best-of-n --search at one cost over a difficulty mix: each class's accuracy, their mean by share",
          "[cli][best-of-n][search][budget]") {
    const std::vector<std::string> args = {"best-of-n", "--search", "--q", "0.9", "--step-tpr", "0.9", "--step-fpr", "0.3",
                                           "--steps", "10", "--tpr", "0.9", "--fpr", "0.1", "--alternatives", "3",
                                           "--budget-tokens", "20000", "--step-tokens", "64", "--mix",
                                           "0.6:0.995,0.3:0.9,0.1:0.5"};
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    const auto& b = j["budget"];
    const double share[] = {0.6, 0.3, 0.1}, q[] = {0.995, 0.9, 0.5};
    for (const auto& p : b["plans"]) {
        REQUIRE(p["by_class"].size() == 3);
        double mean = 0;
        for (int i = 0; i < 3; ++i) mean += share[i] * p["by_class"][i].get<double>();
        CHECK_THAT(p["accuracy"].get<double>(), WithinRel(mean, 1e-12));
    }
    // One sample on a class is q^10.
    for (int i = 0; i < 3; ++i)
        CHECK_THAT(b["plans"][0]["by_class"][i].get<double>(), WithinRel(std::pow(q[i], 10), 1e-12));
    // The hard class: one sample 0.5^10 ≈ 0.001; vote and best-of-N stay near it, the search does not.
    CHECK(b["mix"][2]["best"] == "search");
    CHECK(b["plans"][2]["by_class"][2].get<double>() < 1e-10);  // majority vote of 31 at 0.001 against 3 wrong answers
    const CliResult h = run_inferlab(args);
    CHECK(h.out.find("By difficulty, the same plans on each class of the mix") != std::string::npos);
    const CliResult csv = run_inferlab(with(args, {"--csv", "--table", "classes"}));
    CHECK(csv.out.rfind("strategy,by_class.0,by_class.1,by_class.2\n", 0) == 0);
    expect_error(with(std::vector<std::string>(args.begin(), args.end() - 1), {"0.6:0.99,0.3:0.9"}),
                 "--mix '0.6:0.99,0.3:0.9': the shares must sum to 1 (they sum to 0.9)");
    expect_error(with(std::vector<std::string>(args.begin(), args.end() - 1), {"0.6-0.99,0.4:0.9"}),
                 "--mix '0.6-0.99': each class is share:q");
    expect_error({"best-of-n", "--search", "--q", "0.9", "--step-tpr", "0.9", "--step-fpr", "0.3", "--mix", "1:0.9"},
                 "--mix has no effect without --budget-tokens or --budget-seconds");
}

// Issue #32's try-out: a beam that cannot grow is not "capped", a strategy that does not fit is named,
// flags that only tune the pricing are refused without a model and a machine.
TEST_CASE("best-of-n --search budgets: what does not fit is said, what cannot grow is not capped",
          "[cli][best-of-n][search][budget]") {
    const std::vector<std::string> base = {"best-of-n", "--search", "--q", "0.9", "--step-tpr", "0.9", "--step-fpr", "0.3",
                                           "--steps", "10", "--tpr", "0.9", "--fpr", "0.1", "--step-tokens", "64"};
    // k = 1: the beam stays 1 however wide, so the plan is w = 1 and nothing says "would buy more".
    const auto k1 = parse_json(run_inferlab(with(base, {"--branch", "1", "--budget-tokens", "100000", "--json"})));
    const auto& search = k1["budget"]["plans"][2];
    REQUIRE(search["strategy"] == "search");
    CHECK(search["width"] == 1);
    CHECK(search["capped"] == false);
    // 640 tokens buy one trajectory; the search's narrowest plan (k = 4) needs 2,560.
    const CliResult h = run_inferlab(with(base, {"--budget-tokens", "640"}), "", {"COLUMNS=1000"});
    CHECK(h.out.find("search does not fit: its narrowest plan (N or w = 1) needs 2,560 tokens.") != std::string::npos);
    const auto j = parse_json(run_inferlab(with(base, {"--budget-tokens", "640", "--json"})));
    REQUIRE(j["budget"]["unaffordable"].size() == 1);
    CHECK(j["budget"]["unaffordable"][0]["tokens"] == 2560);
    for (const char* flag : {"--prompt-len", "--call-seconds", "--peak-flops"})
        expect_error(with(base, {"--budget-tokens", "5000", flag, "1"}),
                     std::string(flag) + " has no effect without a model and a machine");
    expect_error(with(base, {"--budget-seconds", "10", "--weights-bytes", "16GB", "--bandwidth", "3.35TB/s"}),
                 "a budget priced by the roofline needs the model's KV geometry");
}

TEST_CASE("best-of-n: a beta spread too narrow for the quadrature is refused, not printed wrong", "[cli][best-of-n]") {
    expect_error({"best-of-n", "--p", "1e-9", "--n", "1,20", "--tpr", "0.9", "--fpr", "0.1", "--rho", "0.9999"},
                 "--rho '0.9999': with p = 1e-09: Beta(");
    // Within the quadrature's reach: exact Beta moments (mpmath, the try-out's) at p = 10^−6, ρ = 0.9999, N = 20.
    const auto j = parse_json(run_inferlab({"best-of-n", "--p", "1e-6", "--n", "1,20", "--tpr", "0.9", "--fpr", "0.1",
                                            "--judge-bias", "0.3", "--rho", "0.9999", "--json"}));
    // One candidate: its mean is its value at the mean p (1e-12 relative: the verifier's own rounding).
    CHECK_THAT(j["rows"][0]["verifier_selection_beta"].get<double>(), WithinRel(1e-6, 1e-12));
    CHECK_THAT(j["rows"][1]["verifier_selection_beta"].get<double>(), WithinRel(1.00021520e-6, 1e-7));
    CHECK_THAT(j["rows"][1]["biased_judge_beta"].get<double>(), WithinRel(1.00014193e-6, 1e-7));
}
