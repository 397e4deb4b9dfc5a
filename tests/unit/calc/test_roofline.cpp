#include <catch2/catch.hpp>

#include "inferlab/base/error.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/data/hardware.hpp"

using namespace inferlab;
using Catch::Matchers::WithinRel;

namespace {
DecodeModel doc_model() {
    DecodeModel m;
    m.weight_bytes = 14000000000ULL;
    m.kv_bytes_per_request = 1ULL << 30;
    return m;
}

// A 7B model in bf16 with Llama-2's attention shape and 8 K/V heads: 131,072 B of KV a token.
DecodeModel seven_b() {
    DecodeModel m;
    m.weight_bytes = 14000000000ULL;
    m.params = 7000000000ULL;
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    m.attn_layers = 32;
    m.attn_q_heads = 32;
    m.attn_head_dim = 128;
    return m;
}
}  // namespace

TEST_CASE("decode step: D_B, t_B and the two rates", "[roofline]") {
    Machine hw{1e12, std::nullopt, std::nullopt};
    DecodeStep s = decode_step(doc_model(), std::vector<std::uint64_t>(8, 0), hw);
    CHECK(s.bytes == 22589934592ULL);
    // 1e-15 relative: one division each.
    CHECK_THAT(s.step_time_s, WithinRel(0.022589934592, 1e-15));
    CHECK_THAT(s.aggregate_tokens_per_s, WithinRel(8 / 0.022589934592, 1e-15));
    CHECK_THAT(s.per_request_tokens_per_s, WithinRel(1 / 0.022589934592, 1e-15));
    CHECK_FALSE(s.flops);
}

TEST_CASE("KV from the spec equals kv-mem's function", "[roofline]") {
    DecodeModel m;
    m.weight_bytes = 1;
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    CHECK(request_kv_bytes(m, 8192) == kv_bytes(*m.kv_spec, {8192}).total_bytes);
    Machine hw{1e12, std::nullopt, std::nullopt};
    CHECK(decode_step(m, {8192, 4096}, hw).kv_bytes == kv_bytes(*m.kv_spec, {8192, 4096}).total_bytes);
}

TEST_CASE("compute bound: max of the two, and the batch where it switches", "[roofline]") {
    DecodeModel m = doc_model();
    m.kv_bytes_per_request = 0;
    m.params = 7000000000ULL;
    Machine hw{1e12, 100e12, std::nullopt};
    // Weights only: memory time 14 ms; compute 14e9·B / 1e14 s = 0.14·B ms → switches past B = 100.
    auto from = compute_bound_from(m, 0, hw);
    REQUIRE(from);
    CHECK(*from == 101);
    CHECK_FALSE(decode_step(m, std::vector<std::uint64_t>(100, 0), hw).compute_bound);
    DecodeStep s = decode_step(m, std::vector<std::uint64_t>(101, 0), hw);
    CHECK(s.compute_bound);
    CHECK(s.step_time_s == *s.compute_time_s);
    // With a KV read heavier than its arithmetic, the step never turns compute-bound.
    m.kv_bytes_per_request = 1ULL << 30;
    // Per request: 2·7e9 FLOP / 1e15 FLOP/s = 14 µs of compute, 2^30 B / 1e12 B/s = 1.07 ms of reading.
    CHECK_FALSE(compute_bound_from(m, 0, Machine{1e12, 1e15, std::nullopt}));
}

TEST_CASE("a whole generation sums growing steps, below charging all at the final length", "[roofline]") {
    DecodeModel m;
    m.weight_bytes = 14000000000ULL;
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    Machine hw{1e12, std::nullopt, std::nullopt};
    GenerationBound g = decode_generation(m, 1, 1000, 100, hw);
    double expect = 0;
    for (int i = 0; i < 100; ++i) expect += (14e9 + 131072.0 * (1000 + i)) / 1e12;
    CHECK_THAT(g.total_time_s, WithinRel(expect, 1e-12));  // summation order only
    CHECK(g.total_time_s < g.charged_at_final_s);
    CHECK_THAT(g.last_step_s, WithinRel((14e9 + 131072.0 * 1099) / 1e12, 1e-15));  // one division
}

// Issue #30: a generation is summed in closed form over linear runs; every step added one by one
// is the reference, on the cases that bend the sum: windows crossed mid-generation, bytes rounded
// up per layer (int4 over odd widths), MoE weights, and a step that turns compute-bound.
TEST_CASE("a whole generation in closed form equals its steps added one by one", "[roofline][edge]") {
    auto reference = [](const DecodeModel& m, std::uint64_t batch, std::uint64_t start, std::uint64_t steps,
                        const Machine& hw) {
        long double t = 0, bytes = 0;
        for (std::uint64_t i = 0; i < steps; ++i) {
            const DecodeStep s = decode_step_uniform(m, batch, start + i, hw);
            t += s.step_time_s;
            bytes += static_cast<long double>(s.bytes);
        }
        return std::pair<double, double>{static_cast<double>(t), static_cast<double>(bytes)};
    };
    const DecodeModel uniform = seven_b();

    DecodeModel windows = uniform;  // three layers slide: two over 100 positions, one over 777
    windows.kv_spec->layers[0].window = 100;
    windows.kv_spec->layers[3].window = 777;
    windows.kv_spec->layers[5].window = 100;
    windows.attn_layers = windows.attn_q_heads = windows.attn_head_dim = 0;
    for (const auto& l : windows.kv_spec->layers) windows.attn_per_layer.push_back(AttnLayer{32, 128, 128, l.window});

    // int4 over widths of 13 and 6: 3·(13·4 + 6·4) = 228 bits a token, 28.5 bytes, so a layer's
    // ⌈S·228/8⌉ bytes grow by 28 or 29 a step and repeat every 8 positions; 52 bits (6.5 bytes)
    // in another. Windows: one below the first length, one inside, one at the last length.
    DecodeModel odd = uniform;
    odd.kv_spec = KvSpec{};
    odd.kv_spec->layers = {KvLayer{3, 13, 6, 4, 4, 0, false}, KvLayer{1, 13, 0, 4, 4, 0, true},
                           KvLayer{3, 13, 6, 4, 4, 50, false}, KvLayer{3, 13, 6, 4, 4, 700, false},
                           KvLayer{3, 13, 6, 4, 4, 1240, false}};

    DecodeModel moe = uniform;
    moe.moe = MoeWeights{2000000000ULL, 50000000ULL, 30, 64, 4};

    struct Case {
        const char* name;
        const DecodeModel* m;
        std::uint64_t batch, start, steps;
        Machine hw;
    };
    const Case cases[] = {
        {"uniform, memory-bound", &uniform, 1, 1001, 5000, Machine{1e12, 1e15, std::nullopt}},
        {"uniform, compute-bound throughout", &uniform, 4096, 1, 3000, Machine{1e12, 1e13, std::nullopt}},
        // At B = 128 and π = 2·10^14 the step is compute-bound at short S and turns memory-bound
        // as the KV read grows faster than the attention arithmetic: one change of regime.
        {"uniform, changing regime", &uniform, 128, 1, 20000, Machine{3e12, 2e14, std::nullopt}},
        {"windows crossed", &windows, 8, 1, 2000, Machine{1e12, 1e15, std::nullopt}},
        {"windows, changing regime", &windows, 128, 1, 5000, Machine{3e12, 2e14, std::nullopt}},
        {"int4 over odd widths", &odd, 3, 123, 1118, Machine{1e9, std::nullopt, std::nullopt}},  // S = 123 … 1240
        {"MoE", &moe, 16, 500, 3001, Machine{2e12, 5e14, std::nullopt}},
        {"one step", &uniform, 2, 7, 1, Machine{1e12, 1e15, std::nullopt}},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const GenerationBound g = decode_generation(*c.m, c.batch, c.start, c.steps, c.hw);
        const auto [time, bytes] = reference(*c.m, c.batch, c.start, c.steps, c.hw);
        // 1e-12 relative: the order of the sum, and a compute-bound run's mean of its two ends
        CHECK_THAT(g.total_time_s, WithinRel(time, 1e-12));
        CHECK_THAT(g.bytes_read, WithinRel(bytes, 1e-15));  // exact integers, one rounding to double
    }
    // The rounding does bend the odd case: its steps do not grow by one amount.
    const auto odd_bytes = [&](std::uint64_t s) { return decode_step_uniform(odd, 1, s, Machine{1e9, std::nullopt, std::nullopt}).bytes; };
    CHECK(odd_bytes(124) - odd_bytes(123) != odd_bytes(125) - odd_bytes(124));
    // The regime does change in the cases that say so, or they would test nothing new.
    CHECK(decode_step_uniform(uniform, 128, 1, Machine{3e12, 2e14, std::nullopt}).compute_bound);
    CHECK_FALSE(decode_step_uniform(uniform, 128, 20000, Machine{3e12, 2e14, std::nullopt}).compute_bound);
    CHECK(decode_step_uniform(windows, 128, 1, Machine{3e12, 2e14, std::nullopt}).compute_bound);
    CHECK_FALSE(decode_step_uniform(windows, 128, 5000, Machine{3e12, 2e14, std::nullopt}).compute_bound);
    // Ten million tokens: closed form, not 10^7 steps. Memory-bound throughout, the sum is the
    // arithmetic series Σ_{S=a}^{b} (W + B·s·S)/β, written out here by hand.
    const Machine hw{1e12, std::nullopt, std::nullopt};
    const GenerationBound big = decode_generation(uniform, 64, 1001, 10000000, hw);
    CHECK(big.last_len == 10001000);
    const long double n = 10000000, a = 1001, b = 10001000, W = 14e9, per_token = 131072.0L * 64;
    CHECK_THAT(big.total_time_s, WithinRel(static_cast<double>((n * W + per_token * (a + b) * n / 2) / 1e12L), 1e-12));
    // A length at the end of the range of S: the run ends there, no wrap (a sentinel past 2^64 − 1
    // once dropped the last run and summed nothing).
    DecodeModel bounded = uniform;  // every layer slides: KV stays bounded at any length
    for (auto& l : bounded.kv_spec->layers) l.window = 4096;
    const GenerationBound edge = decode_generation(bounded, 1, UINT64_MAX - 9, 10, hw);
    CHECK(edge.last_len == UINT64_MAX);
    CHECK_THAT(edge.total_time_s, WithinRel(10 * edge.last_step_s, 1e-12));
    CHECK_THROWS_AS(generation_decode_steps(uniform, 1, UINT64_MAX, 2, hw), OverflowError);
}

TEST_CASE("prefill, TTFT, TPOT and end-to-end", "[roofline]") {
    const DecodeModel m = seven_b();
    Machine hw{1e12, 1e15, std::nullopt};
    LatencyBound l = latency_bound(m, 1, 1000, 11, hw);
    // Issue #29, item 17: causal attention over P = 1000 attends Σ (i + 1) = P(P + 1)/2 = 500,500
    // pairs, not P²/2; 4·L·H_q·d FLOPs a pair (QKᵀ and PV, 2 a multiply-add).
    double flops = 2 * 7e9 * 1000 + 4.0 * 32 * 32 * 128 * 500500;
    // 1e-15 relative: integers below 2^53 and one division.
    CHECK_THAT(l.prefill.flops, WithinRel(flops, 1e-15));
    CHECK(l.prefill.compute_bound);
    CHECK_THAT(l.ttft_s, WithinRel(flops / 1e15, 1e-15));
    CHECK(l.decode.steps == 10);
    CHECK(l.decode.start_len == 1001);
    // The ten decode steps after the first token read W and the K/V of S = 1001 … 1010 positions
    // (131,072 B each); at π = 10^15 their arithmetic (about 14 µs) is far below their reading time.
    double decode = 0;
    for (int s = 1001; s <= 1010; ++s) decode += (14e9 + 131072.0 * s) / 1e12;
    // 1e-12 relative: ten quotients summed in double, in another order.
    REQUIRE(l.tpot_s);
    CHECK_THAT(*l.tpot_s, WithinRel(decode / 10, 1e-12));
    CHECK_THAT(l.end_to_end_s, WithinRel(flops / 1e15 + decode, 1e-12));
    Machine no_pi{1e12, std::nullopt, std::nullopt};
    CHECK_THROWS_WITH(prefill_bound(m, 1, 1000, no_pi), Catch::Contains("peak FLOP rate π") && !Catch::Contains("--"));
}

TEST_CASE("hardware presets parse and name their sources", "[roofline][hardware]") {
    CHECK(hardware_presets().size() >= 6);
    const Hardware& h = find_hardware("--hw", "h100-sxm");
    CHECK(h.bandwidth == 3.35e12);
    CHECK(*h.peak_flops == 989e12);
    CHECK(*h.memory_bytes == 80ULL << 30);
    for (const auto& p : hardware_presets()) {
        CHECK_FALSE(p.source.empty());
        CHECK(p.name == Catch::toLower(p.name));  // so the any-case lookup below is unambiguous
    }
    // As a datasheet writes it: the same preset, not an error.
    CHECK(&find_hardware("--hw", "H100-SXM") == &h);
    CHECK_THROWS_WITH(find_hardware("--hw", "tpu9"), Catch::Contains("--hw 'tpu9': is not a known hardware preset"));
}

// Issue #14, item 9: one accounting of a whole generation.
TEST_CASE("a generation of N tokens is prefill plus N − 1 decode steps, in every figure", "[roofline][edge]") {
    DecodeModel m;
    m.weight_bytes = 14000000000ULL;
    m.params = 7000000000ULL;
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    Machine hw{1e12, 1e15, std::nullopt};
    GenerationBound g = generation_decode_steps(m, 1, 2048, 512, hw);
    CHECK(g.steps == 511);
    CHECK(g.start_len == 2049);
    double expect = 0;  // step k reads W + (2048 + k)·131072 B for k = 1..511
    for (int k = 1; k <= 511; ++k) expect += (14e9 + 131072.0 * (2048 + k)) / 1e12;
    CHECK_THAT(g.total_time_s, WithinRel(expect, 1e-12));  // 1e-12 relative: summation order only
    LatencyBound l = latency_bound(m, 1, 2048, 512, hw);
    CHECK(l.decode.steps == 511);
    CHECK_THAT(l.end_to_end_s, WithinRel(l.ttft_s + expect, 1e-12));  // 1e-12 relative: as above
    REQUIRE(l.tpot_s);
    CHECK_THAT(*l.tpot_s, WithinRel(expect / 511, 1e-12));
    LatencyBound one = latency_bound(m, 1, 2048, 1, hw);
    CHECK(one.decode.steps == 0);
    CHECK_FALSE(one.tpot_s);
    CHECK(one.end_to_end_s == one.ttft_s);
}

TEST_CASE("weight bytes are parameters times bits, rounded up to whole bytes", "[roofline][edge]") {
    CHECK(weight_bytes_of(7000000000ULL, 16) == 14000000000ULL);  // first document §2.1.3: 7B × 2 B = 14 GB
    CHECK(weight_bytes_of(7, 4) == 4);                              // 3.5 B of int4 occupies 4
    CHECK_THROWS_AS(weight_bytes_of(UINT64_MAX, 16), OverflowError);
}

TEST_CASE("MoE: a decode step reads the experts its batch routes to", "[roofline]") {
    // Issue #14 / first document Figure 9: Mixtral-8x7B at bf16 (tests/data/configs/mixtral-8x7b-v0.1.json).
    // Expert 3·4096·14336 = 176,160,768 parameters = 352,321,536 B; 32 MoE layers of 8 experts, top 2.
    // Always read: 46,702,792,704 − 32·8·176,160,768 = 1,605,636,096 parameters = 3,211,272,192 B.
    DecodeModel m;
    m.weight_bytes = 93405585408ULL;  // 46,702,792,704 × 2 B: every expert is resident
    m.params = 12879925248ULL;        // active per token
    m.moe = MoeWeights{3211272192ULL, 352321536ULL, 32, 8, 2};
    Machine hw{1e12, std::nullopt, std::nullopt};
    // B = 1: exactly 2 experts per layer: 3,211,272,192 + 32 × 2 × 352,321,536 = 25,759,850,496 B (the 12,879,925,248 active parameters × 2 B)
    DecodeStep one = decode_step(m, {1}, hw);
    CHECK(one.weight_bytes == 25759850496ULL);
    CHECK(*one.experts_read_per_layer == 2.0);
    // B = 4: 8·(1 − (6/8)^4) = 8 × 175/256 = 5.46875 experts (exact in binary)
    // → 3,211,272,192 + 32 × 5.46875 × 352,321,536 = 64,867,540,992 B
    DecodeStep four = decode_step(m, {1, 1, 1, 1}, hw);
    CHECK_THAT(*four.experts_read_per_layer, WithinRel(5.46875, 1e-15));  // pow in long double, exact here
    CHECK(four.weight_bytes == 64867540992ULL);
    // Large batches read every expert, never more.
    CHECK(weight_bytes_read(m, 100000) == m.weight_bytes);
    CHECK_THAT(expected_experts_read(256, 8, 1), WithinRel(8.0, 0.0));
    CHECK_THAT(expected_experts_read(256, 8, 2), WithinRel(256.0 * (1 - (248.0 / 256) * (248.0 / 256)), 1e-12));  // long double vs double
}

TEST_CASE("attention FLOPs honour sliding windows and MLA's head widths", "[roofline]") {
    DecodeModel m;
    m.weight_bytes = 1000;
    m.params = 0;
    m.kv_bytes_per_request = 0;
    // Two layers of 4 heads: one full with d = 8, one sliding (W = 100) MLA-like with d_qk 12, d_v 8.
    m.attn_per_layer = {AttnLayer{4, 8, 8, 0}, AttnLayer{4, 12, 8, 100}};
    Machine hw{1e12, 1e15, std::nullopt};
    // S = 1000: 2·4·16·1000 + 2·4·20·100 = 128,000 + 16,000 = 144,000 FLOPs
    CHECK_THAT(*decode_step(m, {1000}, hw).flops, WithinRel(144000.0, 1e-15));  // small integers, exact in double
    // Prefill P = 1000: full layer 2·4·16·(1000·1001/2) = 64,064,000; sliding 2·4·20·(100·101/2 + 900·100)
    // = 160·95,050 = 15,208,000
    CHECK_THAT(prefill_bound(m, 1, 1000, hw).flops, WithinRel(79272000.0, 1e-15));
}

TEST_CASE("compute_bound_from agrees with a plain scan for an MoE model", "[roofline]") {
    // The bisection relies on compute − memory time growing once it is positive (weight reads
    // concave in B); a scan over decode_step itself is the reference.
    DecodeModel m;
    m.weight_bytes = 93405585408ULL;
    m.params = 12879925248ULL;
    m.moe = MoeWeights{3211272192ULL, 352321536ULL, 32, 8, 2};
    m.kv_spec = uniform_kv(32, 8, 128, 16);
    m.attn_layers = 32;
    m.attn_q_heads = 32;
    m.attn_head_dim = 128;
    Machine hw{3.35e12, 1e14, std::nullopt};  // a low π keeps the scan short
    auto from = compute_bound_from(m, 16, hw);
    REQUIRE(from);
    std::uint64_t scan = 1;
    while (!decode_step(m, std::vector<std::uint64_t>(scan, 16), hw).compute_bound) ++scan;
    CHECK(*from == scan);
    CHECK(*from > 1);
}
