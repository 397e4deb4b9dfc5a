#include <catch2/catch.hpp>

#include <algorithm>

#include "../support/cli.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
// Text with each line break and the indentation after it read as one space.
std::string unwrapped(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\n') {
            out.push_back(text[i]);
            continue;
        }
        out.push_back(' ');
        while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    }
    return out;
}

void check_doc_rows(const nlohmann::json& j) {
    REQUIRE(j["rows"].size() == 2);
    const auto& a = j["rows"][0];
    const auto& b = j["rows"][1];
    CHECK(a["batch"] == 1);
    CHECK(a["bytes_per_step"] == 15073741824ULL);
    CHECK(b["bytes_per_step"] == 22589934592ULL);
    // 1e-12 relative: a division or two in double.
    CHECK_THAT(a["step_time_s"].get<double>(), WithinRel(0.015073741824, 1e-12));
    // 0.005 absolute: 000_5f2b20623495609b.txt §2.1.3 prints these rates to two decimals, so the
    // value must round to the printed one (66.30 or 44.25 would fail).
    CHECK_THAT(a["aggregate_tokens_per_s"].get<double>(), WithinAbs(66.34, 0.005));
    CHECK_THAT(a["per_request_tokens_per_s"].get<double>(), WithinAbs(66.34, 0.005));
    CHECK_THAT(b["aggregate_tokens_per_s"].get<double>(), WithinAbs(354.14, 0.005));
    CHECK_THAT(b["per_request_tokens_per_s"].get<double>(), WithinAbs(44.27, 0.005));
    // And exactly the bytes over β: 10^12 / 15,073,741,824 and 8 × 10^12 / 22,589,934,592.
    // 1e-12 relative: one division in double.
    CHECK_THAT(a["aggregate_tokens_per_s"].get<double>(), WithinRel(1e12 / 15073741824.0, 1e-12));
    CHECK_THAT(b["aggregate_tokens_per_s"].get<double>(), WithinRel(8e12 / 22589934592.0, 1e-12));
}
}  // namespace

TEST_CASE("decode-roofline must-show: the document's table as JSON", "[cli][decode-roofline]") {
    auto j = parse_json(run_inferlab([] { auto a = kDoc1Roofline; a.push_back("--json"); return a; }()));
    check_doc_rows(j);
    // 0.005 absolute: the document prints "约1.50倍" and "约5.34倍" (two decimals).
    CHECK_THAT(j["comparison"]["reads_ratio"].get<double>(), WithinAbs(1.50, 0.005));
    CHECK_THAT(j["comparison"]["aggregate_ratio"].get<double>(), WithinAbs(5.34, 0.005));
    // Exactly the ratio of the byte counts, 22,589,934,592 / 15,073,741,824 (1e-12 relative: one division).
    CHECK_THAT(j["comparison"]["reads_ratio"].get<double>(), WithinRel(22589934592.0 / 15073741824.0, 1e-12));
}

TEST_CASE("decode-roofline: the same rows from a model config", "[cli][decode-roofline]") {
    auto j = parse_json(run_inferlab({"decode-roofline", "--config", data_path("doc1-7b.json"), "--params", "7e9",
                                      "--weight-dtype", "bf16", "--seq-len", "8192", "--bandwidth", "1e12", "--batch",
                                      "1,8", "--json"}));
    check_doc_rows(j);
}

TEST_CASE("decode-roofline: human output, explain with the GiB caution, CSV", "[cli][decode-roofline]") {
    auto h = run_inferlab(kDoc1Roofline);
    CHECK(h.status == 0);
    CHECK(h.out.find("15.074") != std::string::npos);
    CHECK(h.out.find("354.14") != std::string::npos);
    CHECK(h.out.find("reads ×1.50, aggregate ×5.34, per-request down to 0.67×") != std::string::npos);
    auto x = run_inferlab([] { auto a = kDoc1Roofline; a.push_back("--explain"); return a; }());
    // 14GB and 1GiB: the document's caution, naming both inputs as typed (issue #29 item 14).
    CHECK(unwrapped(x.out).find("Caution: --weights-bytes 14GB and --kv-bytes-per-request 1GiB are in different units (1 GiB = "
                                "1.073741824 GB)") != std::string::npos);
    // Both in one system, or a model's own bytes: no caution.
    for (const std::vector<std::string>& same :
         {std::vector<std::string>{"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GB", "--bandwidth",
                                   "1TB/s", "--explain"},
          std::vector<std::string>{"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "8192",
                                   "--explain"}}) {
        const CliResult y = run_inferlab(same);
        REQUIRE(y.status == 0);
        CHECK(y.out.find("Caution") == std::string::npos);
    }
    CHECK(unwrapped(x.out).find("= 14 GB + 8 × 1.073741824 GB = 22.589934592 GB") != std::string::npos);
    auto c = run_inferlab([] { auto a = kDoc1Roofline; a.push_back("--csv"); return a; }());
    // Issue #15: numbers only in the cells; issue #29: under the JSON's names, every digit the JSON
    // has, in the unit the name says (step_time_s in seconds), where the text rounds (22.590 ms).
    CHECK(c.out.rfind("batch,bytes_per_step_gb,bytes_per_step_gib,step_time_s,aggregate_tokens_per_s,per_request_tokens_per_s\n", 0) == 0);
    CHECK(c.out.find("\n8,22.589934592,21.0385160446167,0.022589934592,354.1400249486831,44.26750311858539\n") != std::string::npos);
}

TEST_CASE("decode-roofline: presets, compute limit, memory fit, ranges and a chart", "[cli][decode-roofline]") {
    auto list = run_inferlab({"decode-roofline", "--list-hw"});
    CHECK(list.status == 0);
    CHECK(list.out.find("h100-sxm") != std::string::npos);
    // Issue #15: numbers only in the cells (not "3.35TB/s"); issue #29: the JSON's names and units
    // (bytes per second, FLOP/s, bytes), exact.
    auto list_csv = run_inferlab({"decode-roofline", "--list-hw", "--csv"});
    CHECK(list_csv.out.rfind("name,kind,bandwidth_bytes_per_s,peak_flops,memory_bytes,link_bandwidth,link_latency_s,source\n", 0) == 0);
    CHECK(list_csv.out.find("\nh100-sxm,gpu,3350000000000,989000000000000,85899345920,") != std::string::npos);
    CHECK(list_csv.out.find("\ndoc1-example,teaching,1000000000000,,,") != std::string::npos);
    auto j = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "8192", "--hw", "h100-sxm",
                                      "--batch", "1..4,64,128", "--json"}));
    CHECK(j["rows"].size() == 6);
    CHECK(j["rows"][0]["fits"] == true);
    CHECK(j["rows"][5]["fits"] == false);  // 16 GB of weights + 128 GiB of KV > 80 GiB
    CHECK(j["compute_bound_from_batch"].is_null());
    auto short_ctx = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "1", "--hw", "h100-sxm",
                                              "--json"}));
    CHECK(short_ctx["compute_bound_from_batch"].get<int>() > 200);
    auto chart = run_inferlab({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth",
                               "1TB/s", "--batch", "1..8"});
    CHECK(chart.out.find("legend:") != std::string::npos);
}

TEST_CASE("decode-roofline: a whole generation and latency bounds", "[cli][decode-roofline]") {
    // The §2.1.3 model (W = 14 GB from 7e9 bf16 parameters, s_token = 2·32·8·128·2 B = 131,072 B),
    // β = 10^12 B/s, π = 10^15 FLOP/s, a prompt of P = 1000 tokens and N = 11 output tokens.
    auto j = parse_json(run_inferlab({"decode-roofline", "--config", data_path("doc1-7b.json"), "--params", "7e9",
                                      "--weight-dtype", "bf16", "--bandwidth", "1e12", "--peak-flops", "1e15", "--seq-len",
                                      "1", "--prompt-len", "1000", "--output-len", "11", "--json"}));
    const auto& g = j["generation"][0];
    CHECK(g["decode_total_s"].get<double>() < g["charged_at_final_length_s"].get<double>());
    // Prefill is compute-bound: 2·7e9·P FLOPs for the weights plus 2·L·H_q·d·P(P + 1) for causal
    // attention (token i attends to i + 1 positions: Σ = P(P + 1)/2 pairs, 4·d FLOPs each per head).
    const double ttft = (2 * 7e9 * 1000 + 2.0 * 32 * 32 * 128 * 1000 * 1001) / 1e15;
    // Then N − 1 = 10 decode steps, each reading W and the K/V of S = P+1 … P+10 positions.
    double decode = 0;
    for (int s = 1001; s <= 1010; ++s) decode += (14e9 + 131072.0 * s) / 1e12;
    // 1e-12 relative: sums of ten quotients in double, in another order.
    CHECK(g["prefill_bound"] == "compute");
    CHECK_THAT(g["ttft_s"].get<double>(), WithinRel(ttft, 1e-12));
    CHECK_THAT(g["tpot_s"].get<double>(), WithinRel(decode / 10, 1e-12));
    CHECK_THAT(g["end_to_end_s"].get<double>(), WithinRel(ttft + decode, 1e-12));
}

TEST_CASE("decode-roofline: bad input exits 2 with one clear line", "[cli][decode-roofline][errors]") {
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "0"},
                 "--bandwidth '0': must be a positive bandwidth");
    expect_error({"decode-roofline", "--weights-bytes", "-14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s"},
                 "--weights-bytes '-14GB': must not be negative");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "-1GiB", "--bandwidth", "1TB/s"},
                 "--kv-bytes-per-request '-1GiB'");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                  "--batch", ""},
                 "--batch '': is empty: give a value, or leave the flag out for its default");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                  "--batch", "1,x"},
                 "--batch 'x'");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--hw", "tpu9"},
                 "--hw 'tpu9': is not a known hardware preset");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                  "--batch", "64..8"},
                 "--batch '64..8': is a range whose end is below its start");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB"}, "no bandwidth");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1T/s"},
                 "ambiguous");
    // Tensor parallelism: a model for the all-reduces, a link, and link flags only with --tp N.
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s", "--tp", "2"},
                 "--tp '2': needs a model (--model or --config)");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "100", "--bandwidth", "1TB/s", "--tp", "2"},
                 "--tp '2': needs the link between devices");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "100", "--hw", "h100-sxm", "--tp", "0"}, "--tp '0'");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "100", "--hw", "h100-sxm", "--link-latency", "1us"},
                 "--link-bandwidth and --link-latency have no effect without --tp N");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "100", "--hw", "h100-sxm", "--tp", "2",
                  "--link-bandwidth", "0"},
                 "--link-bandwidth '0'");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--tp", "16", "--kv-bytes-per-request", "1GB"},
                 "--kv-bytes-per-request '1GB': cannot be split under --tp");
}

// Issue #14, item 9: one accounting of a whole generation, stated once.
TEST_CASE("decode-roofline: decode total, TPOT and end-to-end count the same N − 1 steps", "[cli][decode-roofline][edge]") {
    auto j = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "1",
                                      "--prompt-len", "2048", "--output-len", "512", "--json"}));
    const auto& g = j["generation"][0];
    CHECK(g["decode_steps"] == 511);
    CHECK(g["decode_first_len"] == 2049);
    // 1e-12 relative: a sum against a mean times its count.
    CHECK_THAT(g["end_to_end_s"].get<double>(),
               WithinRel(g["ttft_s"].get<double>() + g["decode_total_s"].get<double>(), 1e-12));
    CHECK_THAT(g["decode_total_s"].get<double>(), WithinRel(511 * g["tpot_s"].get<double>(), 1e-12));
    auto h = run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "1",
                           "--prompt-len", "2048", "--output-len", "512"});
    // The sentence is word-wrapped to 80 columns (issue #15): read it with the line breaks undone.
    CHECK(unwrapped(h.out).find("token 1 comes from prefill (TTFT); tokens 2..N from 511 decode steps reading S = 2,049 … 2,559")
          != std::string::npos);
    auto no_pi = parse_json(run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--bandwidth", "1TB/s", "--seq-len",
                                          "1", "--prompt-len", "2048", "--output-len", "1", "--json"}));
    CHECK(no_pi["generation"][0]["decode_steps"] == 0);
    CHECK(no_pi["generation"][0]["ttft_s"].is_null());
    CHECK(no_pi["generation"][0]["tpot_s"].is_null());
}

// Issue #15: refused where they would mislead, and no value printed as 0.00 or as 35 digits.
TEST_CASE("decode-roofline: --memory 0, a batch past the maximum, and flags beside --list-hw are refused", "[cli][decode-roofline][errors]") {
    auto a = kDoc1Roofline;
    a.insert(a.end(), {"--memory", "0"});
    expect_error(a, "--memory '0': must be positive");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                  "--batch", "1e12"},
                 "--batch '1e12': must be at most 10,000,000 requests per batch");
    expect_error({"decode-roofline", "--list-hw", "--batch", "8"}, "--list-hw and --batch both given");
    expect_error({"decode-roofline", "--list-hw", "--hw", "h100-sxm"}, "--list-hw and --hw both given");
}

TEST_CASE("decode-roofline: the largest batch is answered at once, exactly", "[cli][decode-roofline]") {
    auto j = parse_json(run_inferlab({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB",
                                      "--bandwidth", "1TB/s", "--batch", "10000000", "--json"}));
    // 14 GB + 10^7 GiB, an exact integer.
    CHECK(j["rows"][0]["bytes_per_step"].get<std::uint64_t>() == 14000000000ULL + 10000000ULL * (1ULL << 30));
}

TEST_CASE("decode-roofline: extreme bandwidths print neither 0.00 nor 35 digits", "[cli][decode-roofline]") {
    for (const char* bw : {"1e30", "1"}) {
        INFO("--bandwidth " << bw);
        auto r = run_inferlab({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth",
                               bw, "--batch", "1,8", "--weight-dtype", "bf16", "--peak-flops", "1e40"});
        REQUIRE(r.status == 0);
        CHECK(r.out.find(" 0.00") == std::string::npos);
        CHECK(r.out.find("0.000 ") == std::string::npos);
        std::size_t run = 0, longest = 0;
        for (char ch : r.out) {
            run = (ch >= '0' && ch <= '9') ? run + 1 : 0;
            longest = std::max(longest, run);
        }
        CHECK(longest <= 20);  // the exact byte counts (14,000,000,000 B) are grouped; nothing else runs long
    }
}

// A false derivation on the screen is a wrong answer: the first document's §2.1.3 read D_B = W + Σ M_KV
// for an MoE model substitutes the weights the step reads, W_B, with the experts it routes to, E_B.
TEST_CASE("decode-roofline --explain for MoE substitutes W_B, the weights one step reads", "[cli][decode-roofline]") {
    const auto r = run_inferlab({"decode-roofline", "--model", "deepseek-v3", "--hw", "h100-sxm", "--seq-len", "4096",
                                 "--batch", "1,8", "--explain"},
                                "", {"COLUMNS=200"});
    REQUIRE(r.status == 0);
    INFO(r.out);
    CHECK(r.out.find("  E_1 = k = 8\n") != std::string::npos);
    CHECK(r.out.find("W_1 = W_always + L_moe · E_B · W_expert = 34,235,296,768 + 58 × 8 × 88,080,384 = 75,104,594,944 B") !=
          std::string::npos);
    CHECK(r.out.find("D_1 = 75,104,594,944 + 287,834,112 = 75,392,429,056 B") != std::string::npos);
    CHECK(r.out.find("  E_8 = E·(1 − (1 − k/E)^B) = 256·(1 − (1 − 8/256)^8) ≈ 57.42083079\n") != std::string::npos);
    CHECK(r.out.find("D_8 = 327,578,928,631 + 2,302,672,896 = 329,881,601,527 B") != std::string::npos);
    CHECK(r.out.find("compute: F = 95,572,798,464 FLOP / 989 TFLOP/s = 96.64 µs") != std::string::npos);  // digits grouped
}

TEST_CASE("decode-roofline: one source for the KV read, π only with FLOPs, a rate with its per second, no row twice",
          "[cli][decode-roofline][errors]") {
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "100", "--kv-bytes-per-request", "1GiB", "--bandwidth",
                  "1TB/s"},
                 "--kv-bytes-per-request and --seq-len both give the KV read of a request with --model/--config: choose one");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                  "--peak-flops", "989TFLOPS"},
                 "--peak-flops has no effect without a parameter count");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB"},
                 "--bandwidth '1TB': is a size, not a rate: give bytes per second (1TB/s) or a plain number (3.35e12)");
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s", "--batch",
                  "1,8,1"},
                 "--batch '1,8,1': lists the batch 1 twice");
    // A preset's π without a parameter count: the bound is unknown, not "memory", and the text says why.
    const std::vector<std::string> preset = {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB",
                                             "--hw", "h100-sxm"};
    const auto j = parse_json(run_inferlab(with(preset, {"--json"})));
    CHECK(j.at("rows").at(0).at("bound").is_null());
    CHECK(run_inferlab(preset, "", {"COLUMNS=200"}).out.find("(no parameter count: a step's FLOPs, and so its compute bound, are "
                                                            "unknown;") != std::string::npos);
    const auto with_params = parse_json(run_inferlab(with(preset, {"--weight-dtype", "bf16", "--json"})));
    CHECK(with_params.at("rows").at(0).at("bound") == "memory");
}

// Issue #29: with --kv-bytes-per-request (and no model) --seq-len changed no number, only the
// JSON's seq_lens, and was accepted without a word.
TEST_CASE("decode-roofline refuses --seq-len beside --kv-bytes-per-request, where it changes nothing", "[cli][decode-roofline][errors]") {
    expect_error({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                  "--seq-len", "100"},
                 "inferlab: error: --seq-len has no effect with --kv-bytes-per-request: M_KV is the same at every length "
                 "(give the number of requests with --batch)");
    expect_error({"decode-roofline", "--params", "7e9", "--weight-dtype", "bf16", "--kv-bytes-per-request", "1GiB", "--bandwidth",
                  "1TB/s", "--peak-flops", "100TFLOPS", "--seq-len", "100, 300"},
                 "--seq-len has no effect with --kv-bytes-per-request");
    CHECK(run_inferlab({"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                        "--batch", "2"})
              .status == 0);
}
