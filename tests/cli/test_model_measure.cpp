#include <catch2/catch.hpp>

#include "../support/cli.hpp"

using namespace inferlab::test;

TEST_CASE("model speculate: greedy equals the target, counts and prediction are reported", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "4", "--tokens", "60", "--json"}));
    CHECK(j["tokens_generated"] == 60);
    CHECK(j["target_forward_passes"].get<int>() < 60);
    CHECK(j["per_position"].size() == 4);
    CHECK(j["within_interval"].is_boolean());
    auto g = parse_json(run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "2", "--tokens", "30", "--greedy", "--json"}));
    auto plain = parse_json(run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "30", "--json"}));
    CHECK(g["tokens"] == plain["generated"]);
}

TEST_CASE("model kv-quant: int8 bytes per token equal kv-mem's figure", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "kv-quant", "--model", "demo-gqa", "--bits", "8", "--scheme", "per-token", "--tokens",
                                      "32", "--gen", "20", "--json"}));
    CHECK(j["bytes_per_token_measured"] == j["bytes_per_token_kv_mem"]);
    CHECK(j["bytes_per_token_measured"].get<int>() < j["bytes_per_token_fp32"].get<int>());
    CHECK(j["mean_kl"].get<double>() < 1e-3);
    CHECK((j["greedy_first_divergence"].is_null() || j["greedy_first_divergence"].is_number()));
}

TEST_CASE("model roofline: measured beside predicted for batch 1 and 8", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "roofline", "--model", "demo-gqa", "--batches", "1,8", "--contexts", "32",
                                      "--probe-mib", "64", "--json"}));
    REQUIRE(j["rows"].size() == 2);
    for (const auto& r : j["rows"]) {
        CHECK(r["measured_aggregate_tokens_per_s"].get<double>() > 0);
        CHECK(r["predicted_aggregate_tokens_per_s"].get<double>() > 0);
        CHECK(r["ratio"].get<double>() > 0);
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
