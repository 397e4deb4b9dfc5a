// The documents' figures (lib/include/inferlab/draw/): each SVG parses, and the numbers written in it are the
// documents' numbers, reached through the library's computation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "../../support/small_model.hpp"
#include "../../support/svg_check.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/draw/best_of_n.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/decode_roofline.hpp"
#include "inferlab/draw/kv_mem.hpp"
#include "inferlab/draw/model.hpp"
#include "inferlab/draw/quantize.hpp"
#include "inferlab/draw/spec_accept.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/transformer.hpp"

using namespace inferlab;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
std::vector<std::string> texts(const std::vector<test::SvgItem>& items) {
    std::vector<std::string> out;
    for (const auto& i : items) out.push_back(i.text);
    return out;
}
std::vector<double> values(const std::vector<test::SvgItem>& items) {
    std::vector<double> out;
    for (const auto& i : items) out.push_back(i.value);
    return out;
}
// Figure 9 as `inferlab figure doc1-fig9` draws it by default: the first document's W = 14 GB,
// M_KV from L = 32, H_kv = 8, d = 128, BF16 at S = 8192 (1 GiB), β = 1 TB/s, for `batches`.
std::string fig9_of(const std::vector<std::uint64_t>& batches) {
    RooflineRequest req;
    req.model.weight_bytes = 14'000'000'000;
    req.model.kv_spec = uniform_kv(32, 8, 128, 16);
    req.machine.bandwidth = 1e12;
    req.batches = batches;
    req.seq_lens = {8192};
    return figures::fig9_decode_reads(req, decode_roofline(req), {"M_KV from L = 32, S = 8,192 tokens"});
}
}  // namespace

TEST_CASE("figures: the catalog lists all 17 figures of the first document and the second's one", "[unit][figure]") {
    const auto& c = figures::catalog();
    CHECK(c.size() == 18);
    CHECK(std::count_if(c.begin(), c.end(), [](const figures::FigureInfo& f) { return f.drawn; }) == 14);
    for (const auto& f : c) {
        INFO(f.name);
        CHECK(!f.caption.empty());
        CHECK(f.drawn == f.reason.empty());  // a figure left out says why
    }
}

// First document §2.1.3, the table under Figure 9: 15.074 GB at B = 1, 22.590 GB at B = 8.
TEST_CASE("figures: Figure 9 bars are 15.074 GB and 22.590 GB (first document 2.1.3)", "[unit][figure][textbook]") {
    const std::string s = fig9_of({1, 8});
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(texts(test::svg_items(s, "bar-value")) == std::vector<std::string>{"15.074 GB", "22.590 GB"});
    const auto bars = values(test::svg_items(s, "bar"));
    REQUIRE(bars.size() == 2);
    CHECK_THAT(bars[0], WithinRel(15.073741824, 1e-15));  // 1e-15 relative: bytes / 1e9 in double
    CHECK_THAT(bars[1], WithinRel(22.589934592, 1e-15));
    // The document's table: 66.34 and 354.14 tok/s in all, 66.34 and 44.27 per request.
    CHECK(texts(test::svg_items(s, "bar-sublabel")) ==
          std::vector<std::string>{"≤ 66.34 tok/s all", "≤ 66.34 each", "≤ 354.14 tok/s all", "≤ 44.27 each"});
    // The stacked segments add up to the bar: W, then K and V of each request.
    const auto seg = values(test::svg_items(s, "segment"));
    REQUIRE(seg.size() == 1 + 2 + 1 + 16);
    CHECK_THAT(std::accumulate(seg.begin() + 3, seg.end(), 0.0), WithinRel(bars[1], 1e-12));  // 1e-12: summing 17 doubles
}

TEST_CASE("figures: Figure 9 for the class's batches has one bar each, W + B·M_KV", "[unit][figure]") {
    const std::vector<std::uint64_t> batches = {1, 2, 4, 8, 16};
    const auto bars = values(test::svg_items(fig9_of(batches), "bar"));
    REQUIRE(bars.size() == 5);
    for (std::size_t i = 0; i < 5; ++i)
        CHECK_THAT(bars[i], WithinRel(14 + static_cast<double>(batches[i]) * 1.073741824, 1e-15));  // 1e-15: one division
}

// First document §2.1.1: MHA 4 GiB, GQA 1 GiB; eight requests 32 GiB and 8 GiB.
TEST_CASE("figures: Figure 7 substitutes 4, 1, 32 and 8 GiB (first document 2.1.1)", "[unit][figure][textbook]") {
    const figures::KvSubstitutionInputs document;
    const std::string s = figures::fig7_kv_substitution(document);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(texts(test::svg_items(s, "bar-value")) == std::vector<std::string>{"4 GiB", "1 GiB", "32 GiB", "8 GiB"});
    CHECK(values(test::svg_items(s, "bar")) == std::vector<double>{4, 1, 32, 8});
    CHECK(test::svg_all_text(s).find("1,073,741,824 B") != std::string::npos);
}

// First document §2.1: four query heads against 4, 2 and 1 K/V heads.
TEST_CASE("figures: Figure 6 maps query head h to K/V head h / (H_q/H_kv) (first document 2.1)", "[unit][figure][textbook]") {
    const std::string s = figures::fig6_head_mapping({});
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(values(test::svg_items(s, "q-head")) == std::vector<double>{0, 1, 2, 3, 0, 0, 1, 1, 0, 0, 0, 0});
    CHECK(test::svg_items(s, "kv-head").size() == 4 + 2 + 1);
    CHECK(values(test::svg_items(figures::fig6_head_mapping({8, {2}}), "q-head")) ==
          std::vector<double>{0, 0, 0, 0, 1, 1, 1, 1});
    CHECK_THROWS_AS(figures::fig6_head_mapping({4, {3}}), InputError);
    CHECK_THROWS_AS(figures::gqa_kv_head(4, 4, 2), InputError);
    CHECK_THROWS_WITH(figures::gqa_kv_head(0, 4, 3), Catch::Contains("H_kv '3'") && !Catch::Contains("--"));
}

// First document §3.1.2: accepted [0.4, 0.3, 0.1], rejected 0.2 returned to the first token.
TEST_CASE("figures: Figure 13 output bars rebuild p from accepted mass and residual (first document 3.1.2)",
          "[unit][figure][textbook]") {
    const std::string s = figures::fig13_acceptance({});
    REQUIRE(test::svg_parse_error(s).empty());
    const auto bars = values(test::svg_items(s, "bar"));
    REQUIRE(bars.size() == 9);
    // 1e-15 absolute: min/max and one product of short decimals
    CHECK_THAT(bars[2], WithinAbs(0.6, 1e-15));
    CHECK_THAT(bars[5], WithinAbs(0.3, 1e-15));
    CHECK_THAT(bars[8], WithinAbs(0.1, 1e-15));
    const auto seg = values(test::svg_items(s, "segment"));
    REQUIRE(seg.size() == 6);
    CHECK_THAT(seg[0], WithinAbs(0.4, 1e-15));
    CHECK_THAT(seg[1], WithinAbs(0.2, 1e-15));
    CHECK_THAT(seg[3], WithinAbs(0.0, 1e-15));
    CHECK(test::svg_all_text(s).find("Σ min(p, q) = 0.8, rejected 0.2") != std::string::npos);
}

// First document §3.2: p = 0.3, N = 4 gives coverage 0.7599.
TEST_CASE("figures: Figure 14 marks coverage 0.7599 at N = 4 (first document 3.2)", "[unit][figure][textbook]") {
    BestOfNRequest req;  // figure doc1-fig14's defaults: p = 0.3, a verifier of TPR 0.9, FPR 0.2
    req.p = 0.3;
    req.ns = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16};
    req.verifier = Verifier{0.9, 0.2, true};
    const std::string s = figures::fig14_coverage(req, best_of_n(req), 4, true);
    REQUIRE(test::svg_parse_error(s).empty());
    const auto m = test::svg_items(s, "marker-label");
    REQUIRE(m.size() == 1);
    CHECK(m[0].text.find("coverage 0.7599") != std::string::npos);
    const auto pts = values(test::svg_items(s, "point"));
    CHECK_THAT(pts[3], WithinAbs(0.7599, 1e-12));  // 1e-12: 1 − 0.7^4 through expm1/log1p
}

// First document §4.1: x = 0.37, Δ = 0.1, Q = 7 gives x̂ = 0.4, error 0.03.
TEST_CASE("figures: Figure 15 puts 0.37 on the grid point 0.4 (first document 4.1)", "[unit][figure][textbook]") {
    const std::string s = figures::fig15_quant_grid({});
    REQUIRE(test::svg_parse_error(s).empty());
    const auto deq = test::svg_items(s, "dequantized");
    REQUIRE(deq.size() == 1);
    CHECK(deq[0].text == "x̂ = 0.4");
    CHECK_THAT(deq[0].value, WithinAbs(0.4, 1e-15));  // 1e-15: 4 × 0.1 in binary
    const auto err = test::svg_items(s, "error");
    REQUIRE(err.size() == 1);
    CHECK(err[0].text.rfind("error x̂ − x = 0.03", 0) == 0);
    CHECK(test::svg_items(s, "level").size() == 15);  // −7..7
}

// First document §3.1.1: two accepted, the third rejected, the fourth discarded: three tokens.
TEST_CASE("figures: Figure 11 advances three tokens for accept, accept, reject (first document 3.1.1)",
          "[unit][figure][textbook]") {
    const std::string s = figures::fig11_round({});
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(texts(test::svg_items(s, "fate-label")) ==
          std::vector<std::string>{"accepted", "accepted", "rejected", "discarded"});
    CHECK(values(test::svg_items(s, "advanced")) == std::vector<double>{3});
}

TEST_CASE("figures: Figure 10 counts the same relations tiled and fewer in a window", "[unit][figure]") {
    const std::string s = figures::fig10_attention_masks({12, 4, 4});
    REQUIRE(test::svg_parse_error(s).empty());
    // Causal: 12·13/2 = 78; window 4: 1 + 2 + 3 + 4·9 = 42.
    CHECK(values(test::svg_items(s, "relations")) == std::vector<double>{78, 78, 42});
    CHECK_THROWS_AS(figures::fig10_attention_masks({12, 0, 4}), InputError);
}

TEST_CASE("figures: Figure 12's probabilities of where a round stops sum to 1", "[unit][figure]") {
    const auto bars = values(test::svg_items(figures::fig12_accepted_counts({}), "bar"));
    REQUIRE(bars.size() == 5);
    CHECK_THAT(std::accumulate(bars.begin(), bars.end(), 0.0), WithinAbs(1.0, 1e-12));  // 1e-12: five terms
    CHECK_THAT(bars[0], WithinAbs(0.2, 1e-12));  // the first draft rejected: 1 − α
}

// First document §2.1.1: 2·S·H_kv·d·b = 2·8192·8·128·2 = 33,554,432 B per layer.
TEST_CASE("figures: Figure 5 gives every layer its own 32 MiB cache (first document 1.3)", "[unit][figure][textbook]") {
    const figures::KvShape document;
    const std::string s = figures::fig5_layer_caches(document);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(values(test::svg_items(s, "layer-bytes")) == std::vector<double>{33554432, 33554432, 33554432, 33554432});
    CHECK(texts(test::svg_items(s, "layer-bytes"))[0] == "32 MiB");
}

TEST_CASE("figures: Figure 8 draws the block tables of a real paged cache", "[unit][figure]") {
    model::Transformer m(test::small_gqa_weights(1));
    model::PagedSimOptions o;
    o.prompts = {{1, 2, 3, 4, 5}, {1, 2, 3, 4, 9}};
    o.blocks = 12;
    o.block_size = 2;
    o.new_tokens = 2;
    const model::PagedSimResult sim = model::simulate_paged(m, o);
    const std::size_t step = sim.steps.size() - 1;
    const std::string s = figures::fig8_paged_blocks(sim, step);
    REQUIRE(test::svg_parse_error(s).empty());
    // Logical blocks in sequence order, each naming the physical block its table holds.
    std::vector<double> expected;
    for (const auto& q : sim.steps[step].seqs)
        for (int b : q.table) expected.push_back(b);
    CHECK(values(test::svg_items(s, "logical")) == expected);
    CHECK(test::svg_items(s, "physical").size() == 12);
}

// Second document, "用 GQA 理解容量里的 Head 数": hidden 4096, 32 query heads of 128 give Q 4096
// wide; 8 K/V heads give K and V 1024 wide each.
TEST_CASE("figures: the second document's Figure 1 projects 4096 to Q 4096, K and V 1024 (second document, GQA heads)",
          "[unit][figure][textbook]") {
    const figures::ProjectionInputs document;
    const std::string s = figures::doc2_fig1_projections(document);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(values(test::svg_items(s, "width")) == std::vector<double>{4096, 4096, 1024, 1024});
}

TEST_CASE("figures: Figure 4 shows the cache of a real run growing by one a decode step", "[unit][figure]") {
    model::Transformer m(test::small_gqa_weights(1));
    model::ContiguousCache cache(m.dims());
    std::vector<model::StepTrace> traces(1);
    m.forward(std::vector<int>{1, 2, 3}, cache, {}, &traces[0]);
    for (int t : {4, 5}) {
        traces.emplace_back();
        m.forward(std::vector<int>{t}, cache, {}, &traces.back());
    }
    const std::string s = figures::fig4_cache_append(traces);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(values(test::svg_items(s, "cache-length")) == std::vector<double>{3, 4, 5});
    CHECK(test::svg_all_text(s).find("reads K/V [1,2,5,8]") != std::string::npos);
}

// First document §4.3, Figure 17: the paths are compared position by position on fixed inputs,
// drawn by the same function as model check-cache --svg (plots::model_check_cache).
TEST_CASE("figures: Figure 17 draws each path's difference per position, exact zeros in their strip (first document 4.3)",
          "[unit][figure][textbook]") {
    model::CheckCacheResult r;
    r.tokens = {5, 6, 7};
    r.rel_tolerance = 1e-5;
    // Each row's scale and its tolerance, rel_tolerance × scale (run_check_cache computes it).
    r.rows = {{0, 0, 0, 2e-7, 0, 1, 1e-5}, {1, 0, 1e-7, 3e-7, 0, 2.5, 2.5e-5}, {2, 0, 0, 4e-7, 0, 10, 1e-4}};
    r.worst.max_rel = 2e-7;
    r.worst_path = "other_attention";
    r.other_attention = model::AttentionKind::Online;
    const std::string s = figures::fig17_cache_paths(r);
    REQUIRE(test::svg_parse_error(s).empty());
    CHECK(test::svg_title(s) == "Figure 17: the cache paths compared on fixed inputs");
    CHECK(test::svg_values(s, "diff-contiguous") == std::vector<double>{0, 0, 0});
    CHECK(test::svg_values(s, "diff-paged") == std::vector<double>{0, 1e-7, 0});
    CHECK(test::svg_values(s, "diff-other_attention") == std::vector<double>{2e-7, 3e-7, 4e-7});
    CHECK(test::svg_values(s, "diff-chunked") == std::vector<double>{0, 0, 0});
    // Each position's tolerance, as the rows hold it: 1e-5 × {1, 2.5, 10}.
    const auto tol = test::svg_values(s, "tolerance");
    REQUIRE(tol.size() == 3);
    CHECK_THAT(tol[0], WithinRel(1e-5, 1e-15));  // 1e-15: one product of doubles
    CHECK_THAT(tol[1], WithinRel(2.5e-5, 1e-15));
    CHECK_THAT(tol[2], WithinRel(1e-4, 1e-15));
    const std::string all = test::svg_all_text(s);
    CHECK(all.find("exactly 0") != std::string::npos);
    CHECK(all.find("online attention at position") != std::string::npos);
    CHECK(all.find("all paths agree") != std::string::npos);
    CHECK(all.find("tokens 5,6,7") != std::string::npos);
    CHECK(all.find("§4.3") != std::string::npos);
}

TEST_CASE("figures: Figure 17 from a real check_cache run shows its rows and its tolerance scale", "[unit][figure]") {
    model::Transformer m(test::small_gqa_weights(1));
    model::CheckCacheInputs in;
    in.tokens = {1, 2, 3, 4, 5, 6, 7};
    in.chunk = 3;
    in.block_size = 2;
    const model::CheckCacheResult r = model::check_cache(m, in, {});
    REQUIRE(r.rows.size() == 7);
    std::vector<double> expected;
    for (auto field : {&model::CheckCacheRow::contiguous, &model::CheckCacheRow::paged, &model::CheckCacheRow::other_attention,
                       &model::CheckCacheRow::chunked})
        for (const auto& row : r.rows) expected.push_back(row.*field);
    for (const auto& row : r.rows) CHECK(row.scale >= 1);  // the relative tolerance's floor of 1
    const std::string s = figures::fig17_cache_paths(r);
    REQUIRE(test::svg_parse_error(s).empty());
    std::vector<double> drawn;
    for (const char* path : {"diff-contiguous", "diff-paged", "diff-other_attention", "diff-chunked"})
        for (double v : test::svg_values(s, path)) drawn.push_back(v);
    CHECK(drawn == expected);
}
