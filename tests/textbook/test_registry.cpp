// inferlab verify's registry: every example passes, names a document file and a section.
#include <catch2/catch.hpp>
#include <set>

#include "inferlab/answer/verify.hpp"

using namespace inferlab;

TEST_CASE("every registered example passes and cites its source", "[textbook][registry]") {
    std::set<std::string> ids;
    for (const auto& e : examples()) {
        INFO(e.id);
        CHECK(ids.insert(e.id).second);
        CHECK((e.document == kDoc1 || e.document == kDoc2));
        CHECK_FALSE(e.section.empty());
        auto r = check_example(e);
        CHECK(r.pass);
    }
}

TEST_CASE("the registry holds the foundation's KV examples", "[textbook][registry]") {
    std::set<std::string> ids;
    for (const auto& e : examples()) ids.insert(e.id);
    for (const char* id : {"kv.doc1.gqa-gib", "kv.doc1.mha-gib", "kv.doc1.mha-8req", "kv.doc1.gqa-8req",
                           "kv.doc1.gib-in-gb", "kv.doc2.s-token-kib", "kv.doc2.one-sequence", "kv.doc2.ten-sequences",
                           "kv.doc2.ratio-mha", "kv.doc2.ratio-gqa", "kv.doc2.ratio-mqa"})
        CHECK(ids.count(id) == 1);
}

// Issue #14: examples compute what the document computes, from the document's inputs.
TEST_CASE("computed examples: 14 GB from 7e9 × 2 B, H_q·d, a round's counts", "[textbook][registry]") {
    std::set<std::string> ids;
    for (const auto& e : examples()) {
        ids.insert(e.id);
        if (e.id == "decode.doc1.weights" || e.id == "kv.doc2.q-proj-width" || e.id == "spec.doc1.round-proposals" ||
            e.id == "spec.doc1.round-verified") {
            INFO(e.id);
            CHECK(check_example(e).pass);
        }
    }
    CHECK(ids.count("decode.doc1.weights") == 1);
    CHECK(examples().size() >= 52);  // 51 before, plus the weights
}

TEST_CASE("expected texts parse with the tolerance of their printed digits", "[textbook][registry]") {
    CHECK(parse_expected("1 GiB").value == 1073741824.0);
    CHECK(parse_expected("1,073,741,824 B").value == 1073741824.0);
    using Catch::Matchers::WithinRel;
    // 1e-12 relative: decimal text to double and one multiplication by the unit.
    CHECK_THAT(parse_expected("15.074 GB").value, WithinRel(15.074e9, 1e-12));
    CHECK_THAT(parse_expected("15.074 GB").half_unit, WithinRel(0.0005e9, 1e-12));
    CHECK_THAT(parse_expected("15.074 ms").value, WithinRel(0.015074, 1e-12));
    CHECK(parse_expected("1/32").value == 1.0 / 32);
    CHECK(parse_expected("×1.50").value == 1.5);
    CHECK_THAT(parse_expected("×1.50").half_unit, Catch::Matchers::WithinRel(0.005, 1e-12));
}

TEST_CASE("a wrong expected value fails", "[textbook][registry]") {
    Example e{"x", kDoc1, "s", "d", "i", "2 GiB", true, [] { return Computed{1073741824.0, "1 GiB"}; }};
    CHECK_FALSE(check_example(e).pass);
    Example r{"y", kDoc1, "s", "d", "i", "15.074 GB", false, [] { return Computed{15.0745e9 + 1, ""}; }};
    CHECK_FALSE(check_example(r).pass);
    Example ok{"z", kDoc1, "s", "d", "i", "15.074 GB", false, [] { return Computed{15.073741824e9, ""}; }};
    CHECK(check_example(ok).pass);
}
