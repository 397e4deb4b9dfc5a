#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinRel;

TEST_CASE("model speculate: greedy equals the target, counts and prediction are reported", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "4", "--steps", "60", "--json"}));
    CHECK(j["tokens_generated"] == 60);
    CHECK(j["target_forward_passes"].get<int>() < 60);
    CHECK(j["per_position"].size() == 4);
    // Fixed seeds: the measured acceptance rate lies inside the 99% interval of Σ min(p, q).
    CHECK(j["within_interval"] == true);
    auto g = parse_json(run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "2", "--steps", "30", "--greedy", "--json"}));
    auto plain = parse_json(run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "30", "--json"}));
    CHECK(g["tokens"] == plain["generated"]);
    CHECK(j["predicted_speedup"].is_null());  // no --cost-ratio: null, not absent
    CHECK(j["weight_dtype"] == "fp32");
}

// Issue #29, item 9: tokens per round was --steps ÷ rounds, so a last round cut short by --steps
// (four drafts accepted, --steps 1: 1.0 tokens per round) was compared with (1 − α^(γ+1))/(1 − α).
// It is what the rounds produced (accepted drafts + 1 each), the last round whole.
TEST_CASE("model speculate counts what its rounds produce, the truncated last round whole", "[cli][model]") {
    // Greedy with a draft equal to the target (all 6 layers, no perturbation): every draft is
    // accepted, so one round produces γ + 1 = 5 tokens, of which --steps 1 keeps one.
    auto j = parse_json(run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "4", "--steps", "1", "--greedy",
                                      "--draft-layers", "6", "--perturb", "0", "--json"}));
    CHECK(j["tokens_generated"] == 1);
    CHECK(j["rounds"] == 1);
    CHECK(j["acceptance_rate"] == 1.0);
    CHECK(j["tokens_produced"] == 5);
    CHECK(j["tokens_per_round"] == 5.0);
    CHECK(j["predicted_tokens_per_round"] == 5.0);  // α = 1: γ + 1
    // Four of four accepted: 0 of 4 would have refuted α = 1, so four judgements can tell.
    CHECK(j["within_interval"] == true);
    auto t = run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "4", "--steps", "1", "--greedy",
                           "--draft-layers", "6", "--perturb", "0"});
    CHECK(t.status == 0);
    CHECK(t.out.find("5 produced for 1 kept) 5.000 against") != std::string::npos);
}

TEST_CASE("model speculate --weight-dtype: greedy speculation on int8 weights equals greedy generation on them", "[cli][model]") {
    auto g = parse_json(run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "2", "--steps", "20", "--greedy",
                                      "--weight-dtype", "int8", "--json"}));
    auto plain = parse_json(run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "20", "--weight-dtype", "int8", "--json"}));
    CHECK(g["weight_dtype"] == "int8");
    CHECK(g["tokens"] == plain["generated"]);
    expect_error({"model", "speculate", "--model", "demo-gqa", "--weight-dtype", "fp8"}, "--weight-dtype 'fp8'");
}

TEST_CASE("model kv-quant: bytes per token counted by hand, int8 keeps the greedy tokens, int4 KIVI does not", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "kv-quant", "--model", "demo-gqa", "--bits", "8", "--scheme", "per-token", "--positions",
                                      "32", "--gen", "20", "--json"}));
    // demo-gqa: L = 6, H_kv = 2, d = 48. int8 codes 2·L·H_kv·d·1 B = 1152 B plus one fp16 scale per
    // head vector of K and of V, 2·L·H_kv·2 B = 48 B; float32 is 2·L·H_kv·d·4 B = 4608 B.
    CHECK(j["bytes_per_token_measured"] == 1200);
    CHECK(j["bytes_per_token_kv_mem"] == 1200);
    CHECK(j["bytes_per_token_fp32"] == 4608);
    // 1e-4: int8 moves each cached value by at most half a step (1/254 of its vector's largest),
    // which moves the logits by about 1e-2 and the KL divergence by its square (about 1e-5 here);
    // a cache read at the wrong position gives KL of order 1.
    CHECK(j["mean_kl"].get<double>() < 1e-4);
    // With int8 the 20 greedy tokens do not diverge (null); with int4 and KIVI's K scales they do,
    // at a position inside the generation.
    CHECK(j["greedy_first_divergence"].is_null());
    auto four = parse_json(run_inferlab({"model", "kv-quant", "--model", "demo-gqa", "--bits", "4", "--scheme", "kivi",
                                         "--tokens", "32", "--gen", "20", "--json"}));
    REQUIRE(four["greedy_first_divergence"].is_number_integer());
    CHECK(four["greedy_first_divergence"].get<int>() >= 0);
    CHECK(four["greedy_first_divergence"].get<int>() < 20);
    // KIVI int4, groups of 32 tokens: codes 2·L·H_kv·d·½ B = 576 B, V scales L·H_kv·2 B = 24 B,
    // K scales one fp16 per channel per 32 tokens, L·H_kv·d·2 B / 32 = 36 B: 636 B per token.
    CHECK(four["bytes_per_token_measured"] == 636);
}

TEST_CASE("model roofline: measured beside predicted for batch 1 and 8", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "roofline", "--model", "demo-gqa", "--batch", "1,8", "--contexts", "32",
                                      "--probe-mib", "64", "--json"}));
    REQUIRE(j["rows"].size() == 2);
    // demo-gqa's float32 weights, counted by hand: embedding 512·288 = 147,456 (the tied LM head);
    // per layer two norms 2·288, W_q and W_o 2·288·288, W_k and W_v 2·96·288, the FFN 3·768·288:
    // 885,312; final norm 288. 5,459,616 floats = 21,838,464 B. K/V of one request at S = 32:
    // 2·L·S·H_kv·d·4 B = 2·6·32·2·48·4 B = 147,456 B.
    const double beta = j["measured_read_gbs"].get<double>() * 1e9;  // GB/s: 10^9 B/s
    for (const auto& r : j["rows"]) {
        const auto batch = r["batch"].get<std::uint64_t>();
        INFO("batch " << batch);
        CHECK(r["bytes_per_step"].get<std::uint64_t>() == 21838464 + batch * 147456);
        // decode-roofline's bound with the measured β: B·β / D_B. 1e-12 relative: one division.
        CHECK_THAT(r["predicted_aggregate_tokens_per_s"].get<double>(),
                   WithinRel(double(batch) * beta / (21838464.0 + double(batch) * 147456), 1e-12));
        CHECK(r["measured_aggregate_tokens_per_s"].get<double>() > 0);
    }
    // Predicted: aggregate rises with batch, per-request does not (the read-volume model).
    CHECK(j["rows"][1]["predicted_aggregate_tokens_per_s"].get<double>() > j["rows"][0]["predicted_aggregate_tokens_per_s"].get<double>());
    CHECK(j["rows"][1]["predicted_per_request_tokens_per_s"].get<double>() < j["rows"][0]["predicted_per_request_tokens_per_s"].get<double>());
    // With the measured compute roof π the bound can only be lower (max of two times), never higher.
    CHECK(j["measured_batch_product_gflops"].get<double>() > 0);
    for (const auto& r : j["rows"])
        CHECK(r["with_compute_aggregate_tokens_per_s"].get<double>() <= r["predicted_aggregate_tokens_per_s"].get<double>() * (1 + 1e-12));
}

TEST_CASE("model speculate/kv-quant: bad input exits 2", "[cli][model][errors]") {
    auto a = run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "0"});
    CHECK(a.status == 2);
    CHECK(one_error_line(a));
    auto b = run_inferlab({"model", "kv-quant", "--model", "demo-gqa", "--bits", "6"});
    CHECK(b.status == 2);
    CHECK(b.err.find("--bits '6'") != std::string::npos);
    auto c = run_inferlab({"model", "speculate", "--model", "demo-gqa", "--draft-layers", "9"});
    CHECK(c.status == 2);
    CHECK(c.err.find("--draft-layers '9'") != std::string::npos);
}

TEST_CASE("model speculate refuses sampling flags that greedy decoding ignores, as model generate does", "[cli][model]") {
    expect_error({"model", "speculate", "--model", "demo-gqa", "--greedy", "--top-k", "5"},
                 "--top-k has no effect with --greedy (greedy: the argmax)");
    expect_error({"model", "speculate", "--model", "demo-gqa", "--temperature", "0", "--sample-seed", "3"},
                 "--sample-seed has no effect with --temperature 0 (greedy: the argmax)");
    expect_error({"model", "generate", "--model", "demo-gqa", "--temperature", "0", "--top-p", "0.9"},
                 "--top-p has no effect with --temperature 0 (greedy: the argmax)");
}

TEST_CASE("a former spelling beside the current one is refused, naming both", "[cli][model]") {
    expect_error({"model", "speculate", "--model", "demo-gqa", "--tokens", "5", "--steps", "5"},
                 "--tokens is the former spelling of --steps: give one of them");
    expect_error({"model", "kv-quant", "--model", "demo-gqa", "--group", "16", "--group-size", "16"},
                 "--group is the former spelling of --group-size: give one of them");
    expect_error({"model", "roofline", "--model", "demo-gqa", "--batches", "1", "--batch", "1"},
                 "--batches is the former spelling of --batch: give one of them");
    // The former spelling alone still works, and is hidden from --help.
    const auto r = run_inferlab({"model", "speculate", "--model", "demo-gqa", "--tokens", "4", "--json"});
    CHECK(r.status == 0);
    CHECK(run_inferlab({"model", "speculate", "--help"}).out.find("--tokens") == std::string::npos);
}

// Byte counts are exact integers in the column bytes_per_step (its JSON key, a count of bytes), the
// same header in both languages (the numbers are timings, different on every run, so only the
// header is compared).
TEST_CASE("model roofline --csv: bytes_per_step an exact count in B, the same header in Chinese", "[cli][measure]") {
    const std::vector<std::string> args = {"model", "roofline", "--probe-mib", "8", "--repeats", "1", "--batch", "1",
                                           "--contexts", "8", "--csv"};
    const auto en = run_inferlab(args, "", {"INFERLAB_LANG=en"});
    const auto zh = run_inferlab(args, "", {"INFERLAB_LANG=zh"});
    REQUIRE(en.status == 0);
    REQUIRE(zh.status == 0);
    CHECK(en.out.rfind("seq_len,batch,bytes_per_step,", 0) == 0);
    CHECK(zh.out.substr(0, zh.out.find('\n')) == en.out.substr(0, en.out.find('\n')));
    CHECK(parse_csv(en.out)[1][2].find_first_not_of("0123456789") == std::string::npos);
}
