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
    CHECK(h.out.find("0.759900") != std::string::npos);
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
        double diff = std::abs(s["exact"].get<double>() - s["estimate"].get<double>());
        CHECK(diff <= s["half_width_99"].get<double>());
    }
    // Same seed, same output.
    auto again = parse_json(run_inferlab({"best-of-n", "--p", "0.3", "--n", "1..8", "--tpr", "0.9", "--fpr", "0.2",
                                          "--simulate", "100000", "--seed", "7", "--json"}));
    CHECK(again == j);
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
    CHECK(c.out.rfind("N,coverage P≥1\n1,0.300000\n2,0.510000\n3,0.657000\n", 0) == 0);
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
