// Conventions every subcommand shares: --help with an example, errors on one line, exit 2.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"

using namespace inferlab::test;

TEST_CASE("every subcommand's --help shows an example and exits 0", "[cli]") {
    for (const char* sub : {"kv-mem", "decode-roofline", "spec-accept", "best-of-n", "quantize", "verify"}) {
        INFO(sub);
        auto r = run_inferlab({sub, "--help"});
        CHECK(r.status == 0);
        CHECK(r.out.find("Examples:") != std::string::npos);
        CHECK(r.out.find(std::string("inferlab ") + sub) != std::string::npos);
        CHECK(r.out.find("--json") != std::string::npos);
        CHECK(r.out.find("--explain") != std::string::npos);
        CHECK(r.err.empty());
    }
}

TEST_CASE("top-level help lists the subcommands, --version works", "[cli]") {
    auto r = run_inferlab({"--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("kv-mem") != std::string::npos);
    CHECK(r.out.find("verify") != std::string::npos);
    auto v = run_inferlab({"--version"});
    CHECK(v.status == 0);
    CHECK(v.out == "inferlab " INFERLAB_VERSION "\n");
}

TEST_CASE("no subcommand, unknown subcommand and unknown flag are errors", "[cli]") {
    for (auto args : std::vector<std::vector<std::string>>{{}, {"frobnicate"}, {"kv-mem", "--frob", "1"}}) {
        auto r = run_inferlab(args);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(one_error_line(r));
    }
}

TEST_CASE("the json and explain flags exclude each other", "[cli]") {
    auto r = run_inferlab({"verify", "--json", "--explain"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(one_error_line(r));
}

TEST_CASE("an unknown subcommand is named, with the list of subcommands", "[cli]") {
    expect_error({"bogus"}, "unknown subcommand 'bogus' (the subcommands: kv-mem, decode-roofline,");
    expect_error({"--json", "bogus"}, "unknown subcommand 'bogus'");
}

TEST_CASE("a subcommand's parse error points at that subcommand's --help", "[cli]") {
    expect_error({"kv-mem", "--frob", "1"}, "(see 'inferlab kv-mem --help')");
    expect_error({"verify", "--bogus"}, "(see 'inferlab verify --help')");
    // No subcommand at all: the top level's help.
    expect_error({}, "(see 'inferlab --help')");
}
