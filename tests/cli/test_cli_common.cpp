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

// Issue #29, item 13: the old --dtype got CLI11's "The following arguments were not expected: bf16
// --dtype" with no hint of --kv-dtype, and model kv-quant --csv got CLI11's wording. A flag a
// command does not have is now named with the command and the flag it likely meant.
TEST_CASE("a flag the command does not have is named, with the flag it likely meant", "[cli][errors]") {
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8Ki", "--dtype", "bf16"},
                 "--dtype: kv-mem has no such flag; did you mean --kv-dtype or --weight-dtype? (see 'inferlab kv-mem --help')");
    expect_error({"kv-mem", "--seq-lenn", "3"}, "--seq-lenn: kv-mem has no such flag; did you mean --seq-len?");
    expect_error({"model", "kv-quant", "--csv"}, "--csv: model kv-quant has no such flag (see 'inferlab model kv-quant --help')");
    expect_error({"--bogus"}, "--bogus: inferlab has no such flag (see 'inferlab --help')");
    expect_error({"kv-mem", "--model=llama-3-8b", "--seq-len=1", "--dtyp=bf16"}, "--dtyp: kv-mem has no such flag");
    // Flags given as --flag=value, and the top level's --lang after a subcommand, are known.
    CHECK(run_inferlab({"kv-mem", "--model=llama-3-8b", "--seq-len=1", "--lang", "en"}).status == 0);
    // Chinese: the same line in the reader's language, the flags as typed.
    const CliResult zh = run_inferlab({"kv-mem", "--dtype", "bf16", "--lang", "zh"});
    CHECK(zh.status == 2);
    CHECK(zh.out.empty());
    CHECK(zh.err == "inferlab: error: --dtype：kv-mem 没有这个选项；是不是想用 --kv-dtype 或 --weight-dtype？（见 'inferlab "
                    "kv-mem --help'）\n");
}

// Issue #29, item 13: --batch 8Ki was refused while --seq-len 8Ki worked. Counts take the same
// suffixes as token counts.
TEST_CASE("a batch takes the suffixes --seq-len does", "[cli][errors]") {
    const auto k = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--seq-len", "1", "--batch", "8Ki", "--json"}));
    CHECK(k["request_counts"] == nlohmann::json::array({8192}));
    const auto d = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "1",
                                            "--batch", "1,2k", "--json"}));
    REQUIRE(d["rows"].size() == 2);
    CHECK(d["rows"][1]["batch"] == 2000);
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "1", "--batch", "8K"},
                 "--batch '8K': uppercase K is ambiguous: 8k = 8,000, 8Ki = 8,192");
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "1", "--batch", "1.0005k"}, "--batch '1.0005k': is not a whole number");
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "1", "--batch", "0Ki"}, "--batch '0Ki': must be a positive integer");
}
