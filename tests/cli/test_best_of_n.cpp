#include <catch2/catch.hpp>

#include "../support/cli.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;

TEST_CASE("best-of-n must-show: coverage 0.7599", "[cli][best-of-n]") {
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "4", "--json"}));
    // 1e-12 absolute: 0.7599 is exact in decimal; the JSON carries 1 − 0.7^4 as a double.
    CHECK_THAT(j["coverage"].get<double>(), WithinAbs(0.7599, 1e-12));
    auto h = run_inferlab({"best-of-n", "--p", "0.3", "--n", "4"});
    CHECK(h.status == 0);
    CHECK(h.out.find("0.7599") != std::string::npos);
    CHECK(h.out.find("not the chance the system answers correctly") != std::string::npos);
    auto x = run_inferlab({"best-of-n", "--p", "0.3", "--n", "4", "--explain"});
    CHECK(x.out.find("1 − (1 − 0.3)^4 = 1 − 0.7^4 = 1 − 0.2401 = 0.7599") != std::string::npos);
}

TEST_CASE("best-of-n must-show: verifier selection below coverage, matching Monte Carlo", "[cli][best-of-n]") {
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1..8", "--tpr", "0.9", "--fpr", "0.2", "--simulate",
                                      "100000", "--seed", "7", "--json"}));
    for (const auto& row : j["rows"])
        if (row["n"].get<int>() > 1) CHECK(row["verifier_selection"].get<double>() < row["coverage"].get<double>());
    CHECK(j["simulation"]["all_agree"] == true);
    for (const auto& s : j["simulation"]["rows"]) {
        const double exact = s["exact"].get<double>();
        CHECK(s["agrees"] == true);
        CHECK(s["interval_99"][0].get<double>() <= exact);
        CHECK(exact <= s["interval_99"][1].get<double>());
    }
    // Same seed, same output.
    auto again = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1..8", "--tpr", "0.9", "--fpr", "0.2",
                                          "--simulate", "100000", "--seed", "7", "--json"}));
    CHECK(again == j);
}

// Issue #29, item 11: one trial gave "99% interval ±3" around a probability, and an estimate of 0
// "agreed" with 0.3. The interval is Wilson's, inside [0, 1]; with one trial no outcome could put
// 0.3 outside it, so there is no verdict.
TEST_CASE("best-of-n --simulate 1: intervals inside [0, 1] and no verdict from one trial", "[cli][best-of-n]") {
    const std::vector<std::string> args = {"best-of-n", "--p", "0.3", "--n", "1,2", "--simulate", "1", "--seed", "3"};
    std::vector<std::string> json_args = args;
    json_args.push_back("--json");
    auto j = parse_json(run_inferlab(json_args));
    REQUIRE(j["simulation"]["rows"].size() == 2);
    for (const auto& s : j["simulation"]["rows"]) {
        CHECK(s["interval_99"][0].get<double>() >= 0);
        CHECK(s["interval_99"][1].get<double>() <= 1);
        CHECK(s["interval_99"][1].get<double>() - s["interval_99"][0].get<double>() > 0.8);  // one trial: wide
        CHECK(s["agrees"].is_null());
    }
    CHECK(j["simulation"]["undecided"] == 2);
    auto t = run_inferlab(args);
    CHECK(t.status == 0);
    CHECK(t.out.find("too few trials") != std::string::npos);
    CHECK(t.out.find(" NO") == std::string::npos);
    // One trial can tell nothing: all_agree is null, not a vacuous true.
    CHECK(j["simulation"]["all_agree"].is_null());
    // p = 1 and p = 0: every trial hits (misses), and the Wilson interval's end is exactly 1 (0): it
    // agrees. Computed as centre ± half it missed 1 by a rounding at 3 trials and said NO.
    for (const char* p : {"1", "0"}) {
        auto e = parse_json(run_inferlab({"best-of-n", "--p", p, "--n", "1", "--simulate", "3", "--seed", "1", "--json"}));
        CHECK(e["simulation"]["rows"][0]["agrees"] == true);
        CHECK(e["simulation"]["all_agree"] == true);
    }
    // 10,000 trials tell: every row has a verdict.
    auto big = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1,2", "--simulate", "10000", "--seed", "3", "--json"}));
    CHECK(big["simulation"]["undecided"] == 0);
    CHECK(big["simulation"]["all_agree"] == true);
}

TEST_CASE("best-of-n: majority, biased judge, correlation, inverse, budget, CSV", "[cli][best-of-n]") {
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.9", "--n", "1,2,8", "--alternatives", "2", "--judge-bias", "0.3",
                                      "--hard-fraction", "0.05", "--rho", "0.2", "--target", "0.999", "--json"}));
    CHECK(j["rows"][2]["biased_judge"].get<double>() < j["rows"][1]["biased_judge"].get<double>());
    CHECK(j["rows"][2]["coverage_hard_fraction"].get<double>() < j["rows"][2]["coverage"].get<double>());
    CHECK(j["min_n_for_target"] == 3);
    auto h = run_inferlab({"best-of-n", "--p", "0.9", "--n", "1,2,8", "--judge-bias", "0.3"});
    CHECK(h.out.find("More candidates lower the biased judge's accuracy") != std::string::npos);
    auto b = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--tpr", "0.9", "--fpr", "0.1", "--alternatives", "3",
                                      "--budget", "16", "--cost-judge", "1", "--json"}));
    CHECK(b["budget"]["plans"].size() == 3);
    CHECK(b["budget"]["plans"][1]["n"] == 8);
    auto c = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1..3", "--csv"});
    CHECK(c.out == "n,coverage\n1,0.3\n2,0.51\n3,0.6569999999999999\n");  // the JSON's doubles, every digit
}

TEST_CASE("best-of-n: bad input exits 2 with one clear line", "[cli][best-of-n][errors]") {
    expect_error({"best-of-n", "--p", "1.5", "--n", "4"}, "--p '1.5': must be a probability in [0, 1]");
    expect_error({"best-of-n", "--p", "-0.1", "--n", "4"}, "--p '-0.1'");
    expect_error({"best-of-n", "--p", "0.3", "--n", "0"}, "--n '0': must be a positive integer");
    expect_error({"best-of-n", "--p", "0.3", "--n", "2.5"}, "--n '2.5': must be a positive integer");
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--tpr", "1.2", "--fpr", "0.1"}, "--tpr '1.2'");
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--tpr", "0.9", "--fpr", "-1"}, "--fpr '-1'");
    expect_error({"best-of-n", "--p", "0.3", "--budget", "0.5", "--cost-sample", "1"}, "--budget '0.5': is smaller than one sample");
    expect_error({"best-of-n", "--n", "4"}, "--p is required");
}

// Issue #14, item 8: numbers that drift.
TEST_CASE("best-of-n: coverage of a tiny p is not 0, and p at N = 1 prints as typed", "[cli][best-of-n][edge]") {
    using Catch::Matchers::WithinRel;
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "1e-17", "--n", "10", "--json"}));
    // 1 − (1 − 10^−17)^10 = 10^−16 − 4.5·10^−32; 1e-15 relative: a few ulps of log1p/expm1.
    CHECK_THAT(j["coverage"].get<double>(), WithinRel(1e-16, 1e-15));
    auto h = run_inferlab({"best-of-n", "--p", "1e-17", "--n", "10", "--explain"});
    CHECK(h.status == 0);
    CHECK(h.out.find("= 1e-16") != std::string::npos);
    CHECK(h.out.find("1 − 1 =") == std::string::npos);  // never "1 − 1 = 1e-16"
    auto one = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1", "--json"});
    CHECK(parse_json(one)["coverage"].get<double>() == 0.3);
    CHECK(one.out.find("0.30000000000000004") == std::string::npos);
    auto t = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1"});
    CHECK(t.out.find("0.30000000000000004") == std::string::npos);
    CHECK(t.out.find("  1           0.3\n") != std::string::npos);
}

// Issue #14: statements that were false.
TEST_CASE("best-of-n: p = 0 and a verifier that accepts nothing say what happens", "[cli][best-of-n][edge]") {
    auto zero = run_inferlab({"best-of-n", "--p", "0", "--n", "4", "--tpr", "0.9", "--fpr", "0.1"});
    CHECK(zero.status == 0);
    CHECK(zero.out.find("coverage tends to 1") == std::string::npos);
    CHECK(zero.out.find("coverage stays 0") != std::string::npos);
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1..3", "--tpr", "0", "--fpr", "0", "--json"}));
    CHECK(j["verifier"]["limit_large_n"].get<double>() == 0.3);  // every N falls back to a random pick
    for (const auto& row : j["rows"]) CHECK(row["verifier_selection"].get<double>() == 0.3);
    // A wide terminal (issue #15 wraps prose to $COLUMNS): the sentence on one line.
    auto h = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1..3", "--tpr", "0", "--fpr", "0"}, "", {"COLUMNS=1000"});
    CHECK(h.out.find("every N gives the fallback: a random candidate, correct with probability p = 0.3") != std::string::npos);
    CHECK(h.out.find("tends to p·TPR/q") == std::string::npos);
}

TEST_CASE("best-of-n: target 1 is N = 1 at p = 1 and unreachable below", "[cli][best-of-n][edge]") {
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "1", "--target", "1", "--json"}));
    CHECK(j["min_n_for_target"] == 1);
    expect_error({"best-of-n", "--p", "0.5", "--target", "1"},
                 "--target '1': cannot be reached with p < 1: coverage 1 − (1 − p)^N stays below 1 for every N");
}

TEST_CASE("best-of-n: budget mode does not invent a wrong answer for voting", "[cli][best-of-n][edge]") {
    auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--tpr", "0.9", "--fpr", "0.1", "--budget", "16",
                                      "--cost-judge", "1", "--json"}));
    REQUIRE(j["budget"]["plans"].size() == 2);
    for (const auto& pl : j["budget"]["plans"]) CHECK(pl["strategy"] != "majority vote");
    auto h = run_inferlab({"best-of-n", "--p", "0.3", "--tpr", "0.9", "--fpr", "0.1", "--budget", "16", "--cost-judge", "1"});
    CHECK(h.out.find("Majority vote not compared: give --alternatives k or --answer-dist") != std::string::npos);
    auto capped = run_inferlab({"best-of-n", "--p", "0.6", "--alternatives", "2", "--budget", "500"});
    CHECK(capped.status == 0);
    CHECK(capped.out.find("majority vote: exact up to N = 200; the budget buys 500 samples.") != std::string::npos);
}

TEST_CASE("best-of-n: --simulate past N = 200 needs no majority vote", "[cli][best-of-n][edge]") {
    auto r = run_inferlab({"best-of-n", "--p", "0.3", "--n", "300", "--simulate", "200", "--json"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    auto j = parse_json(r);
    REQUIRE(j["simulation"]["rows"].size() == 1);
    CHECK(j["simulation"]["rows"][0]["strategy"] == "coverage");
    auto one = run_inferlab({"best-of-n", "--p", "0.3", "--n", "2", "--simulate", "1"});
    CHECK(one.out.find("(1 trial, seed 1)") != std::string::npos);
}

// Issue #15: a flag given where it has no effect is an error, never silently ignored.
TEST_CASE("best-of-n: --fallback without a verifier, --seed without --simulate, costs without --budget", "[cli][best-of-n][errors]") {
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--fallback", "abstain"},
                 "--fallback 'abstain': has no effect without a verifier");
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--fallback", "random"}, "--fallback 'random': has no effect");
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--seed", "3"}, "--seed has no effect without --simulate");
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--cost-judge", "1"}, "--cost-judge has no effect without --budget");
    expect_error({"best-of-n", "--p", "0.3", "--n", "4", "--cost-sample", "2"}, "--cost-sample has no effect without --budget");
    // With a verifier it applies.
    auto r = run_inferlab({"best-of-n", "--p", "0.3", "--n", "4", "--tpr", "0.9", "--fpr", "0.2", "--fallback", "abstain", "--json"});
    CHECK(r.status == 0);
    CHECK(parse_json(r)["verifier"]["fallback"] == "abstain");
}

TEST_CASE("best-of-n: majority vote past N = 200 names --n, not a library term", "[cli][best-of-n][errors]") {
    expect_error({"best-of-n", "--p", "0.3", "--n", "201", "--alternatives", "2"},
                 "--n '201': majority vote is computed exactly for N ≤ 200");
}

// Issue #29, item 14: the hard fraction, beta spread, majority vote and biased judge printed their
// formulas without values. Each now substitutes the first rows; the equation checker reads them.
TEST_CASE("best-of-n --explain substitutes every strategy's values", "[cli][best-of-n]") {
    const CliResult x = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1,4", "--alternatives", "3", "--judge-bias", "0.2",
                                      "--hard-fraction", "0.1", "--rho", "0.2", "--explain"});
    REQUIRE(x.status == 0);
    // Biased judge at N = 4: 0.3^4 = 0.0081, coverage 0.7599: 0.0081 + 0.8·0.7518 = 0.60954.
    CHECK(x.out.find("  N = 4: 0.3^4 + (1 − 0.2)·(0.7599 − 0.0081) ≈ 0.0081 + 0.8·0.7518 ≈ 0.60954\n") != std::string::npos);
    // Hard fraction: p/(1 − h) = 1/3 on the solvable problems; 0.9·(1 − (2/3)^4) = 0.9·65/81 = 0.722222.
    CHECK(x.out.find("  N = 4: (1 − 0.1)·(1 − (1 − 0.333333)^4) ≈ 0.722222 ≤ 0.7599\n") != std::string::npos);
    // Beta: a = 1.2, b = 2.8; Π_{i<4} (2.8+i)/(4+i) = 2.8·3.8·4.8·5.8/(4·5·6·7) = 0.35264.
    CHECK(x.out.find("  a = 0.3·(1 − 0.2)/0.2 ≈ 1.2, b = (1 − 0.3)·(1 − 0.2)/0.2 ≈ 2.8\n") != std::string::npos);
    CHECK(x.out.find("  N = 4: 1 − 0.35264 ≈ 0.64736\n") != std::string::npos);
    CHECK(x.out.find("  N = 1: P = 0.3\n") != std::string::npos);  // majority vote of one candidate: p
}

// Issue #29's review: --explain with --simulate says how each estimate and its interval come
// about, with the counts: 295 of 1,000 trials at seed 1 for N = 1 (the table's 0.295).
TEST_CASE("best-of-n --explain shows the Monte Carlo's counts, Wilson intervals and verdicts", "[cli][best-of-n]") {
    const CliResult r = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1,2", "--simulate", "1000", "--explain"}, "",
                                     {"INFERLAB_LANG=en", "COLUMNS=200"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("its 99% interval is Wilson's") != std::string::npos);
    CHECK(r.out.find("N = 1, coverage: p̂ = 295/1,000 = 0.295, 99% [0.2593, 0.333403], exact 0.3: agrees") != std::string::npos);
    const auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1,2", "--simulate", "1000", "--json"}));
    CHECK(j["simulation"]["rows"][0]["estimate"] == 0.295);
    const CliResult few = run_inferlab({"best-of-n", "--p", "0.3", "--n", "1", "--simulate", "1", "--explain"}, "",
                                       {"INFERLAB_LANG=en", "COLUMNS=200"});
    CHECK(few.out.find("exact 0.3: too few trials to tell") != std::string::npos);
}

// Issue #32: "verifier picks correct 0.767" (independent candidates) printed beside "coverage, hard
// fraction 0.4997" read as selection above coverage. Each correlated model gets its own table with
// every strategy under it, and there selection stays under that model's coverage.
TEST_CASE("best-of-n: one model per table, selection under the hard fraction below its coverage", "[cli][best-of-n]") {
    const std::vector<std::string> args = {"best-of-n", "--p", "0.3", "--n", "8", "--tpr", "0.9", "--fpr", "0.1",
                                           "--hard-fraction", "0.5"};
    const CliResult h = run_inferlab(args, "", {"COLUMNS=1000"});
    REQUIRE(h.status == 0);
    CHECK(h.out.find("coverage, hard fraction") == std::string::npos);  // no longer a column beside independent figures
    CHECK(h.out.find("candidates independent") != std::string::npos);
    CHECK(h.out.find("Correlated errors, one model for every column: a hard fraction h = 0.5") != std::string::npos);
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    const auto& row = j["rows"][0];
    // 0.5·verifier_selection(0.6, 8) + 0.5·0, with verifier_selection(0.6, 8) from the same command at p = 0.6.
    const auto solvable = parse_json(run_inferlab({"best-of-n", "--p", "0.6", "--n", "8", "--tpr", "0.9", "--fpr", "0.1", "--json"}));
    CHECK_THAT(row["verifier_selection_hard_fraction"].get<double>(),
               WithinAbs(0.5 * solvable["verifier_selection"].get<double>(), 1e-15));
    CHECK(row["verifier_selection_hard_fraction"].get<double>() <= row["coverage_hard_fraction"].get<double>());
    const CliResult csv = run_inferlab(with(args, {"--csv", "--table", "hard_fraction"}));
    CHECK(csv.out.rfind("n,coverage_hard_fraction,verifier_selection_hard_fraction\n", 0) == 0);
    const CliResult x = run_inferlab(with(args, {"--explain"}), "", {"COLUMNS=1000"});
    CHECK(x.out.find("N = 8: (1 − 0.5)·") != std::string::npos);
}

TEST_CASE("best-of-n: the budget table gives each plan under the correlated models asked for", "[cli][best-of-n]") {
    const auto j = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--tpr", "0.9", "--fpr", "0.1", "--alternatives", "3",
                                            "--budget", "16", "--cost-judge", "1", "--rho", "0.3", "--json"}));
    for (const auto& pl : j["budget"]["plans"]) {
        CHECK(pl["p_correct_hard_fraction"].is_null());
        REQUIRE(pl["p_correct_beta"].is_number());
        // One sample is right with the mean p under any spread of p.
        if (pl["strategy"] == "single sample") CHECK_THAT(pl["p_correct_beta"].get<double>(), WithinAbs(0.3, 1e-12));
        else CHECK(pl["p_correct_beta"].get<double>() < pl["p_correct"].get<double>());  // correlation costs selection
    }
    // N = 200 with 8 wrong answers is within the vote's own limit (N³·k² ≈ 5·10^8) but not at 101 values of p.
    expect_error({"best-of-n", "--p", "0.3", "--n", "200", "--alternatives", "8", "--rho", "0.3"},
                 "--rho '0.3': with majority vote at N = 200 needs the exact vote at 101 values of p");
}
