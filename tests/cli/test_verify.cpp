#include <catch2/catch.hpp>

#include "../support/cli.hpp"

using namespace inferlab::test;

TEST_CASE("verify exits 0 and lists every KV example", "[cli][verify]") {
    auto r = run_inferlab({"verify"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    for (const char* id : {"kv.doc1.gqa-gib", "kv.doc1.mha-gib", "kv.doc1.mha-8req", "kv.doc1.gqa-8req", "kv.doc1.gib-in-gb",
                           "kv.doc2.s-token-kib", "kv.doc2.one-sequence", "kv.doc2.ten-sequences", "kv.doc2.ratio-gqa",
                           "kv.doc2.ratio-mqa"})
        CHECK(r.out.find(id) != std::string::npos);
    CHECK(r.out.find("FAIL") == std::string::npos);
    CHECK(r.out.find(" 0 failed") != std::string::npos);
}

TEST_CASE("verify --json: one document with sources and results", "[cli][verify]") {
    auto j = parse_json(run_inferlab({"verify", "--json"}));
    CHECK(j["failed"] == 0);
    CHECK(j["passed"].get<int>() == static_cast<int>(j["examples"].size()));
    for (const auto& e : j["examples"]) {
        CHECK(e["pass"] == true);
        CHECK((e["document"] == "000_5f2b20623495609b.txt" || e["document"] == "003_02a045288fb34aae.txt"));
        CHECK_FALSE(e["section"].get<std::string>().empty());
    }
}

TEST_CASE("verify --id filters, an unknown id is an error", "[cli][verify]") {
    auto j = parse_json(run_inferlab({"verify", "--id", "kv.doc2", "--json"}));
    for (const auto& e : j["examples"]) CHECK(e["id"].get<std::string>().rfind("kv.doc2", 0) == 0);
    auto bad = run_inferlab({"verify", "--id", "nope"});
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(one_error_line(bad));
    auto csv = run_inferlab({"verify", "--csv"});
    // Issue #15: numbers in their own columns (the printed forms are in the text and JSON).
    CHECK(csv.out.rfind("id,document,section,unit,expected_value,tolerance,computed_value,exact,result\n", 0) == 0);
}
