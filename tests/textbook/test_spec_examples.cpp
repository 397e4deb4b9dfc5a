// 000_5f2b20623495609b.txt §3.1: speculative decoding.
#include <catch2/catch.hpp>

#include "inferlab/calc/spec.hpp"

using namespace inferlab;

TEST_CASE("000_5f2b20623495609b.txt §3.1.2: p=[0.6,0.3,0.1], q=[0.4,0.4,0.2] — α, accepted, residual, output = p",
          "[textbook][doc1]") {
    auto a = acceptance(std::vector<Rational>{Rational(6, 10), Rational(3, 10), Rational(1, 10)},
                        std::vector<Rational>{Rational(4, 10), Rational(4, 10), Rational(2, 10)});
    CHECK(a.alpha == std::vector<Rational>{Rational(1), Rational(3, 4), Rational(1, 2)});
    CHECK(a.accepted == std::vector<Rational>{Rational(4, 10), Rational(3, 10), Rational(1, 10)});
    CHECK(a.accept_prob == Rational(8, 10));
    CHECK(a.reject_prob == Rational(2, 10));
    CHECK(a.positive_residual == std::vector<Rational>{Rational(2, 10), Rational(0), Rational(0)});
    CHECK(a.residual == std::vector<Rational>{Rational(1), Rational(0), Rational(0)});
    CHECK(a.output == std::vector<Rational>{Rational(6, 10), Rational(3, 10), Rational(1, 10)});
}

TEST_CASE("000_5f2b20623495609b.txt §3.1.2: when the positive residual is zero the distributions are equal and all is accepted",
          "[textbook][doc1]") {
    auto a = acceptance(std::vector<Rational>{Rational(1, 4), Rational(3, 4)}, std::vector<Rational>{Rational(1, 4), Rational(3, 4)});
    CHECK(a.residual_empty);
    CHECK(a.accept_prob == Rational(1));
}

TEST_CASE("000_5f2b20623495609b.txt §3.1.1: two accepted, the third rejected — 3 tokens from 4 drafts, the fourth discarded",
          "[textbook][doc1]") {
    auto w = walk_round(4, {"accept", "accept", "reject"});
    CHECK(w.tokens_advanced == 3);
    CHECK(w.draft_proposals == 4);
    CHECK(w.target_positions == 4);
    CHECK(w.discarded == 1);
    CHECK(w.steps[3].fate == "discarded");
}
