// Issue #14 on the real binary: real published configs (tests/data/configs/), the rules inferlab
// applies to them, and inputs that mean something else than they look. Expected values are worked
// out by hand in the comments (tests/unit/data/test_real_configs.cpp has the full derivations).
#include <catch2/catch.hpp>

#include <algorithm>

#include "../support/cli.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinRel;

namespace {
std::string real(const std::string& file) { return data_path("configs/" + file); }
}  // namespace

TEST_CASE("kv-mem on Gemma-2 9B: alternating windows, stated", "[cli][kv-mem][real]") {
    // Wide enough that the stated rule is on one line (at 80 columns it wraps).
    auto r = run_inferlab({"kv-mem", "--config", real("gemma-2-9b.json"), "--seq-len", "8192"}, "", {"COLUMNS=1000"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    // 21 full layers × 8,192 + 21 sliding × 4,096 positions, × 2·8·256·4 B (fp32) = 4,227,858,432 B
    CHECK_THAT(r.out, Catch::Contains("M_KV = 4,227,858,432 B"));
    CHECK_THAT(r.out, Catch::Contains("even layers (0, 2, …) slide with window 4096") &&
                          Catch::Contains("Gemma2Config's layout"));
    auto j = parse_json(run_inferlab({"kv-mem", "--config", real("gemma-2-9b.json"), "--seq-len", "8192", "--json"}));
    CHECK(j["total_bytes"] == 4227858432ULL);
}

TEST_CASE("kv-mem on Gemma-3 4B text_config: defaults and the every-6th-layer rule, stated", "[cli][kv-mem][real]") {
    auto j = parse_json(run_inferlab({"kv-mem", "--config", real("gemma-3-4b-it.json"), "--seq-len", "8192", "--json"}));
    // 5 full layers × 8,192 + 29 sliding × 1,024, × 2·4·256·2 B = 289,406,976 B
    CHECK(j["total_bytes"] == 289406976ULL);
    CHECK_THAT(j["model"]["window_rule"].get<std::string>(), Catch::Contains("default sliding_window_pattern 6"));
    CHECK(j["model"]["defaults_applied"].size() >= 4);
}

TEST_CASE("kv-mem needs no intermediate_size, and one rule for a config without a precision", "[cli][kv-mem][real]") {
    auto r = run_inferlab({"kv-mem", "--config", data_path("kv-only.json"), "--seq-len", "100"});
    CHECK(r.status == 0);
    // 2·2 layers·2 heads·64·2 B = 1,024 B per token; × 100
    CHECK_THAT(r.out, Catch::Contains("M_KV = 102,400 B"));
    expect_error({"kv-mem", "--model", "gpt2", "--seq-len", "100"},
                 "config 'gpt2' names no torch_dtype, and inferlab does not guess a precision: give --kv-dtype");
    expect_error({"kv-mem", "--model", "gpt2", "--budget", "80GiB"}, "give --kv-dtype and --weight-dtype");
    expect_error({"kv-mem", "--model", "gpt2", "--budget", "80GiB", "--kv-dtype", "fp32"}, "give --weight-dtype");
    CHECK(run_inferlab({"kv-mem", "--model", "gpt2", "--budget", "80GiB", "--kv-dtype", "fp32", "--weight-dtype", "fp32"}).status == 0);
    expect_error({"decode-roofline", "--model", "gpt2", "--seq-len", "100", "--bandwidth", "1TB/s"},
                 "give --weight-dtype and --kv-dtype");
    expect_error({"quantize", "--model", "gpt2", "--seq-len", "100"}, "give --kv-dtype");
    CHECK(run_inferlab({"quantize", "--model", "gpt2", "--seq-len", "100", "--kv-dtype", "fp32"}).status == 0);
}

TEST_CASE("kv-mem paged with sliding layers adds up", "[cli][kv-mem][real]") {
    auto j = parse_json(run_inferlab(
        {"kv-mem", "--config", real("gemma-2-9b.json"), "--seq-len", "8192", "--block-size", "16", "--json"}));
    const auto& p = j["paged"];
    REQUIRE(p["groups"].size() == 2);
    // Full layers: 512 blocks of 21 × 16 × 16,384 B = 5,505,024 B; sliding: 256 blocks of the same.
    CHECK(p["groups"][0]["total_blocks"] == 512);
    CHECK(p["groups"][0]["block_bytes"] == 5505024);
    CHECK(p["groups"][1]["total_blocks"] == 256);
    CHECK(p["allocated_bytes"] == 768ULL * 5505024);  // = 4,227,858,432: every block full
    CHECK(p["waste_bytes"] == 0);
    CHECK(p["block_bytes"].is_null());  // no single block size for the whole cache (null: issue #15)
}

TEST_CASE("kv-mem --budget divides weights and heads under --tp", "[cli][kv-mem][real]") {
    auto one = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--budget", "80GiB", "--json"}));
    auto two = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--budget", "80GiB", "--tp", "2", "--json"}));
    // W = 8,030,261,248 × 2 B = 16,060,522,496 B; per device with --tp 2: 8,030,261,248 B
    CHECK(one["budget"]["weights_bytes_per_device"] == 16060522496ULL);
    CHECK(two["budget"]["weights_bytes_per_device"] == 8030261248ULL);
    // s_token per device 131,072 / 2 = 65,536 B: floor((85,899,345,920 − 8,030,261,248) / 65,536)
    CHECK(two["budget"]["max_tokens"] == (85899345920ULL - 8030261248ULL) / 65536);
}

TEST_CASE("decode-roofline on Mixtral reads the routed experts, not all of them", "[cli][decode-roofline][real]") {
    auto j = parse_json(run_inferlab({"decode-roofline", "--config", real("mixtral-8x7b-v0.1.json"), "--seq-len", "4096",
                                      "--bandwidth", "1TB/s", "--batch", "1,4", "--json"}));
    // B = 1: the 12,879,925,248 active parameters × 2 B = 25,759,850,496 B (not all 46.7B)
    CHECK(j["rows"][0]["weight_bytes"] == 25759850496ULL);
    CHECK(j["rows"][0]["experts_read_per_layer"] == 2.0);
    // B = 4: 8·(1 − (6/8)^4) = 5.46875 experts per layer: 3,211,272,192 + 32 × 5.46875 × 352,321,536 B
    CHECK(j["rows"][1]["weight_bytes"] == 64867540992ULL);
    CHECK(j["inputs"]["moe"]["total_params"] == 46702792704ULL);
    CHECK(j["inputs"]["moe"]["active_params_per_token"] == 12879925248ULL);
}

TEST_CASE("decode-roofline counts DeepSeek-V3 attention and honours windows", "[cli][decode-roofline][real]") {
    auto r = run_inferlab({"decode-roofline", "--model", "deepseek-v3", "--seq-len", "4096", "--hw", "h100-sxm"});
    CHECK(r.status == 0);
    CHECK_THAT(r.out, !Catch::Contains("attention FLOPs not counted"));
    auto j = parse_json(run_inferlab({"decode-roofline", "--config", real("mistral-7b-v0.1.json"), "--seq-len", "8192",
                                      "--hw", "h100-sxm", "--json"}));
    // 2 × 7,241,732,096 + 32 layers × 2·32·(128 + 128) × min(8192, 4096) = 16,630,947,840 FLOPs
    CHECK_THAT(j["rows"][0]["flops_per_step"].get<double>(), WithinRel(16630947840.0, 1e-15));  // exact in double
}

TEST_CASE("decode-roofline --prompt-len needs no dummy --seq-len", "[cli][decode-roofline][real]") {
    auto r = run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "2048",
                           "--output-len", "16", "--json"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    auto j = parse_json(r);
    CHECK(j["inputs"]["seq_lens"] == std::vector<std::uint64_t>{2048});
    CHECK(j["generation"].size() == 1);
}

TEST_CASE("quantize --config on a sliding-window model: bytes per token are not 0", "[cli][quantize][real]") {
    auto j = parse_json(run_inferlab({"quantize", "--config", real("mistral-7b-v0.1.json"), "--seq-len", "8192", "--json"}));
    // int8: 32 layers × 2·8·128 × 1 B = 65,536 B + 32 × 16 groups of 128 × 2 B (fp16 scale) = 1,024 B
    CHECK(j["rows"][1]["bytes_per_token"] == 66560);
    CHECK(j["rows"][2]["bytes_per_token"] == 33792);  // int4: 32,768 + 1,024
}

TEST_CASE("token counts: 8K and 8,192 are refused with a hint", "[cli][kv-mem][real]") {
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8K"}, "--seq-len '8K': uppercase K is ambiguous for tokens: 8k = 8,000, 8Ki = 8,192");
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8,192"}, "write 8192 (no commas)");
    expect_error({"decode-roofline", "--model", "llama-3-8b", "--seq-len", "16,384", "--bandwidth", "1TB/s"},
                 "reads as one number with thousands separators");
    auto ok = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8, 192", "--json"}));
    CHECK(ok["seq_lens"] == std::vector<std::uint64_t>{8, 192});
}

TEST_CASE("real configs: --help states the rules", "[cli][real]") {
    // The footers are paragraphs the help formatter wraps: read them with line breaks as spaces.
    auto kv = run_inferlab({"kv-mem", "--help"});
    CHECK(kv.status == 0);
    std::replace(kv.out.begin(), kv.out.end(), '\n', ' ');
    CHECK_THAT(kv.out, Catch::Contains("gemma2 alternates") && Catch::Contains("every n-th layer global") &&
                           Catch::Contains("No tie_word_embeddings") && Catch::Contains("thousands"));
    std::string dr = run_inferlab({"decode-roofline", "--help"}).out;
    std::replace(dr.begin(), dr.end(), '\n', ' ');
    CHECK_THAT(dr, Catch::Contains("E·(1 − (1 − k/E)^B)") && Catch::Contains("uniformly and independently"));
}
