// model pitfall through the real binary: the list, one model pitfall and one calculator in every
// output form, and bad input.
#include <catch2/catch.hpp>

#include <sstream>

#include "../support/cli.hpp"

using namespace inferlab::test;

TEST_CASE("model pitfall --list names every pitfall, in text and JSON", "[cli][pitfall]") {
    auto r = run_inferlab({"model", "pitfall", "--list"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    for (const char* n : {"stale-cache", "wrong-layer-cache", "top-left-mask", "position-restart", "unmasked-padding",
                          "cache-then-window", "gib-as-gb", "mean-length", "threshold-accept", "same-distribution"})
        CHECK(r.out.find(n) != std::string::npos);
    auto j = parse_json(run_inferlab({"model", "pitfall", "--list", "--json"}));
    CHECK(j["pitfalls"].size() == 10);
}

TEST_CASE("model pitfall top-left-mask: the broken path is wrong from the chunk, caught by the logit check", "[cli][pitfall]") {
    auto r = run_inferlab({"model", "pitfall", "top-left-mask", "--json"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    auto j = parse_json(r);
    // demo-gqa: a 4-token prefill, then a 4-token chunk after it; the chunk's first row is position 4.
    CHECK(j["first_wrong_pos"] == 4);
    CHECK(j["correct_max_err"].get<double>() <= j["tolerance"].get<double>());
    CHECK(j["broken_max_err"].get<double>() > 100 * j["tolerance"].get<double>());
    CHECK(j["caught_by"] == "logits");
    CHECK(j["positions"].size() == j["tokens"].size());
    CHECK(j["same_distribution"].is_null());  // fixed schema: absent values are null
    CHECK(j["fit_p_correct"].is_null());
    REQUIRE(j["checks"].size() == 4);
    for (const auto& c : j["checks"]) CHECK(c["fired_on_correct"] == false);
}

TEST_CASE("model pitfall position-restart: text fits 80 columns and names the positions check", "[cli][pitfall]") {
    auto r = run_inferlab({"model", "pitfall", "position-restart"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("caught by: positions") != std::string::npos);
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
        INFO(line);
        std::size_t cols = 0;
        for (unsigned char c : line) cols += (c & 0xC0) != 0x80;  // code points
        CHECK(cols <= 80);
    }
    auto csv = run_inferlab({"model", "pitfall", "position-restart", "--csv"});
    CHECK(csv.status == 0);
    CHECK(csv.out.rfind("pos,token,correct err,broken err", 0) == 0);
}

TEST_CASE("model pitfall gib-as-gb: the document's 1 GiB against 1.073741824", "[cli][pitfall]") {
    auto j = parse_json(run_inferlab({"model", "pitfall", "gib-as-gb", "--json"}));
    REQUIRE(j["quantities"].size() == 4);
    CHECK(j["quantities"][1]["correct"] == 1.0);
    CHECK(j["quantities"][1]["shortcut"].get<double>() > 1.07);
    CHECK(j["positions"].empty());
    CHECK(j["tolerance"].is_null());
}

TEST_CASE("model pitfall: an unknown name or none at all is exit 2 with one error line", "[cli][pitfall]") {
    expect_error({"model", "pitfall", "nope"}, "NAME 'nope': is not a pitfall");
    expect_error({"model", "pitfall"}, "NAME is required");
    expect_error({"model", "pitfall", "stale-cache", "--sample-seed", "-1"}, "--sample-seed");
}
