// The model subcommands' library calls (issue #15): compare_logits, check_cache's verdict,
// generate's steps and trace, and the bench's tables, each checked against values worked here.
#include <algorithm>
#include <catch2/catch.hpp>

#include "../../../support/small_model.hpp"
#include "../../../support/test_backend.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/run/bench.hpp"
#include "inferlab/model/run/compare.hpp"
#include "inferlab/model/run/runs.hpp"

using namespace inferlab;
using namespace inferlab::model;
using inferlab::test::test_cpu;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;


TEST_CASE("compare_logits: the largest absolute and row-relative differences, and where", "[model][compare]") {
    MatrixRM ref(2, 3), got(2, 3);
    ref << 10, -20, 5,  //  row 0: largest |ref| = 20
        0.5f, 0.25f, 0;  // row 1: largest |ref| = 0.5, floored at 1
    got << 10, -20.5f, 5,  // 0.5 off at (0, 1): 0.5 / 20 = 0.025 relative
        0.5f, 0.25f, 0.25f;  // 0.25 off at (1, 2): 0.25 / 1 = 0.25 relative
    const LogitsDiff d = compare_logits(got, ref);
    // 0 absolute: every value here is exact in float32 and the differences in double.
    CHECK_THAT(d.max_abs, WithinAbs(0.5, 0));
    CHECK(d.abs_row == 0);
    CHECK(d.abs_col == 1);
    CHECK_THAT(d.max_rel, WithinAbs(0.25, 0));
    CHECK(d.rel_row == 1);
    CHECK(d.rel_col == 2);
    CHECK(compare_logits(ref, ref).max_abs == 0);
    CHECK_THROWS_AS(compare_logits(ref, MatrixRM(3, 2)), std::invalid_argument);
    got(0, 0) = NAN;  // a NaN is the largest difference, never hidden by a false comparison
    CHECK(std::isinf(compare_logits(got, ref).max_abs));
}

TEST_CASE("row_max_abs and max_abs_diff: compare_logits' absolute difference per row and per vector", "[model][compare]") {
    MatrixRM ref(3, 2), got(3, 2);
    ref << 1, 2,  //
        -4, 8,    //
        0, 0;
    got << 1, 2,      // row 0: equal
        -3, 8,        // row 1: 1 off at column 0
        0, -0.125f;   // row 2: 0.125 off at column 1
    // 0 absolute: every value and difference here is exact in float32 and double.
    const std::vector<double> rows = row_max_abs(got, ref);
    REQUIRE(rows.size() == 3);
    CHECK_THAT(rows[0], WithinAbs(0.0, 0));
    CHECK_THAT(rows[1], WithinAbs(1.0, 0));
    CHECK_THAT(rows[2], WithinAbs(0.125, 0));
    // The same numbers through the vector form, and the largest row is compare_logits' max_abs.
    CHECK_THAT(max_abs_diff(got.row(1).transpose(), ref.row(1).transpose()), WithinAbs(1.0, 0));
    CHECK_THAT(compare_logits(got, ref).max_abs, WithinAbs(1.0, 0));
    CHECK_THROWS_AS(row_max_abs(got, MatrixRM(2, 2)), std::invalid_argument);
    CHECK_THROWS_AS(max_abs_diff(Eigen::VectorXf::Zero(3), Eigen::VectorXf::Zero(2)), std::invalid_argument);
    got(2, 0) = NAN;  // a NaN is an infinite difference in its row, not a silently skipped cell
    CHECK(std::isinf(row_max_abs(got, ref)[2]));
    CHECK(std::isinf(max_abs_diff(got.row(2).transpose(), ref.row(2).transpose())));
}

TEST_CASE("check_cache: the paths agree on a tiny model, and a broken path is caught", "[model][check-cache]") {
    auto w = random_weights(inferlab::test::tiny_dims(), 5);
    Transformer m(*w, test_cpu());
    CheckCacheInputs in;
    in.tokens = random_tokens(inferlab::test::tiny_dims(), 12, 3);
    in.chunk = 5;       // 5 + 5 + 2: the last chunk shorter than the rest
    in.block_size = 4;  // three blocks: the paged cache crosses block boundaries
    ForwardOptions opt;
    const CheckCacheResult ok = check_cache(m, in, opt);
    REQUIRE(ok.rows.size() == 12);
    CHECK(ok.agree);
    CHECK(ok.other_attention == AttentionKind::Online);
    // 1e-5 of each position's largest logit: float32 sums in a different order per path.
    CHECK(ok.worst.max_rel <= 1e-5);
    CHECK(ok.rows[0].contiguous == 0);  // position 0 is one identical forward on every cached path
    // Each position's tolerance in absolute terms: a path whose difference stays under it at every
    // position agrees, and the largest relative difference is under 1e-5 exactly then. The tolerance
    // grows with the position's scale (at least 1) and is never under the relative tolerance itself.
    for (const auto& row : ok.rows) {
        CHECK(row.scale >= 1);
        CHECK(row.tolerance >= in.rel_tolerance);
        CHECK(std::max({row.contiguous, row.paged, row.other_attention, row.chunked}) <= row.tolerance);
    }
    // Layer l reading layer 0's K/V once there is history: the no-cache reference has none (each
    // prefix is one fresh forward), the chunked prefill has, from its second chunk on.
    opt.pitfall = Pitfall::WrongLayerCache;
    const CheckCacheResult bad = check_cache(m, in, opt);
    CHECK_FALSE(bad.agree);
    CHECK(bad.worst_path == "chunked");
    CHECK(bad.worst.rel_row >= 5);  // the first chunk (positions 0–4) has no history yet
    // 1e-4 absolute: the first chunk differs from the reference by float32 summation order only
    // (logits of this model are below 10 in magnitude, so 1e-5 relative is at most 1e-4).
    for (int p = 0; p < 5; ++p) CHECK(bad.rows[std::size_t(p)].chunked <= 1e-4);
    CHECK(bad.worst.max_rel > 1e-3);  // 100× the tolerance: a real change, not rounding
    in.chunk = 0;
    CHECK_THROWS_AS(check_cache(m, in, ForwardOptions{}), InputError);
}

TEST_CASE("generate: steps tokens, one trace row per forward, 0 steps refused", "[model][generate]") {
    auto w = random_weights(inferlab::test::tiny_dims(), 5);
    Transformer m(*w, test_cpu());
    GenerateInputs in;
    in.prompt = {1, 2, 3};
    in.steps = 4;
    const GenerateResult r = generate(m, in, ForwardOptions{});
    REQUIRE(r.generated.size() == 4);
    REQUIRE(r.trace.size() == 4);  // the prefill, then a decode step for each token but the last
    CHECK(r.trace[0].phase == "prefill");
    CHECK(r.trace[0].cache_len == std::vector<int>{3, 3});
    CHECK(r.trace[3].cache_len == std::vector<int>{6, 6});
    // Greedy: the first token is the argmax of the prompt's last row, computed here on its own.
    ContiguousCache c(inferlab::test::tiny_dims());
    const MatrixRM l = m.forward(in.prompt, c);
    Eigen::Index best = 0;
    l.row(l.rows() - 1).maxCoeff(&best);
    CHECK(r.generated[0] == best);
    in.path.path = CachePath::Paged;
    in.path.block_size = 2;
    CHECK(generate(m, in, ForwardOptions{}).generated == r.generated);  // the cache's layout changes nothing
    in.steps = 0;
    CHECK_THROWS_WITH(generate(m, in, ForwardOptions{}), "tokens to generate '0': must be at least 1");
    in.steps = 30;  // 3 + 30 > S_max = 32
    CHECK_THROWS_AS(generate(m, in, ForwardOptions{}), InputError);
}

TEST_CASE("bench: one batch row per dtype and batch, ratios from the rows' own rates", "[model][bench]") {
    auto w = random_weights(inferlab::test::tiny_dims(), 5);
    BenchInputs in;
    in.prompt_len = 4;
    in.steps = 2;
    in.probe_bytes = 4u << 20;
    in.contexts = {4};
    in.batches = {1, 2};
    in.weight_dtype = WeightDtype::Int8;
    const BenchResult r = bench(*w, in);
    REQUIRE(r.batches.size() == 4);  // float32 beside int8, batches 1 and 2
    CHECK(r.batches[0].dtype == WeightDtype::F32);
    CHECK(r.batches[2].dtype == WeightDtype::Int8);
    for (const auto& b : r.batches) {
        REQUIRE(b.ratio_to_batch_1);
        REQUIRE(b.bound_ratio_to_batch_1);
    }
    const auto& b1 = r.batches[2];
    const auto& b2 = r.batches[3];
    // 1e-12 relative: the same quotient of two doubles, taken twice.
    CHECK_THAT(*b2.ratio_to_batch_1, WithinRel(b2.aggregate_tokens_per_s / b1.aggregate_tokens_per_s, 1e-12));
    CHECK_THAT(*b2.bound_ratio_to_batch_1, WithinRel(b2.bound_aggregate_tokens_per_s / b1.bound_aggregate_tokens_per_s, 1e-12));
    // The bound's aggregate never falls with the batch (memory part B·β/D_B rises, compute part is flat).
    CHECK(*b2.bound_ratio_to_batch_1 >= 1 - 1e-12);
    REQUIRE(r.dtypes.size() == 2);
    CHECK(r.dtypes[0].speed_ratio_to_fp32 == 1.0);  // float32 against itself
    CHECK(r.bytes_per_step == decode_step_bytes(inferlab::test::tiny_dims(), 4 + 2 / 2, WeightDtype::Int8));
    REQUIRE(r.contexts.size() == 1);
    CHECK(r.contexts[0].nocache_step_s.has_value());
    in.contexts = {30};  // 30 + 3 timed steps > S_max = 32
    CHECK_THROWS_WITH(bench(*w, in), "context '30': exceeds the maximum sequence length 32 less the 3 timed steps");
}

TEST_CASE("compare_decode_dtypes: every round's step and the β beside it, from the probe passes around it", "[model][bench]") {
    auto w = random_weights(inferlab::test::tiny_dims(), 5);
    const Transformer m(*w, test_cpu());
    const WeightsAt f32 = make_weights_at(*w, WeightDtype::F32, 1), i8 = make_weights_at(*w, WeightDtype::Int8, 1);
    ReadProbe probe(4u << 20, 1);
    const double first = probe.pass();
    CHECK(first == probe.last_gbs());
    const auto r = compare_decode_dtypes(m, {1, 2, 3}, 5, {}, {&f32, &i8}, &probe);
    REQUIRE(r.size() == 2);
    CHECK(probe.result().passes == 1 + 1 + 5);  // ours, one just before the first round, one after each
    for (const auto& x : r) {
        REQUIRE(x.step_s.size() == 5);
        REQUIRE(x.round_read_gbs.size() == 5);
        CHECK(x.round_read_gbs == r[0].round_read_gbs);  // one β per round, whatever the dtype
        // No round's β beats the best pass.
        for (double g : x.round_read_gbs) CHECK(g <= probe.result().read_gbs);
    }
    // The last round's β includes the last pass.
    CHECK(r[0].round_read_gbs.back() >= probe.last_gbs());
    // Without a probe, no β.
    CHECK(compare_decode_dtypes(m, {1, 2, 3}, 2, {}, {&f32, &i8})[1].round_read_gbs.empty());
}

TEST_CASE("paired_bound: the median of the rounds' bounds and of each round's rate over its bound", "[model][bench]") {
    // A bound of g tokens/s on a β of g GB/s keeps the arithmetic by hand.
    const auto bound_at = [](double gbs) { return gbs; };
    // Odd: bounds 10, 20, 40; rates 10, 5, 4 → fractions 1, 0.25, 0.1.
    const PairedBound odd = paired_bound({0.1, 0.2, 0.25}, {10, 20, 40}, bound_at);
    CHECK(odd.bound_tokens_per_s == 20);
    CHECK(odd.fraction == 0.25);
    // Even: bounds 10, 20, 40, 80 → (20 + 40) / 2; rates 5, 5, 5, 40 → fractions 0.5, 0.25,
    // 0.125, 0.5 → (0.25 + 0.5) / 2. Against the best β (80) the median rate reads 5 / 80.
    const PairedBound even = paired_bound({0.2, 0.2, 0.2, 0.025}, {10, 20, 40, 80}, bound_at);
    CHECK(even.bound_tokens_per_s == 30);
    CHECK(even.fraction == 0.375);
    CHECK_THROWS_AS(paired_bound({0.1}, {}, bound_at), std::logic_error);
    CHECK_THROWS_AS(paired_bound({}, {}, bound_at), std::logic_error);
}
