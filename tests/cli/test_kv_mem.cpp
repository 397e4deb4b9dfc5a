#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {
const std::vector<std::string> kDoc1 = {"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128",
                                        "--seq-len", "8192", "--kv-dtype", "bf16"};
}  // namespace

TEST_CASE("kv-mem must-show: 1 GiB, 8 GiB with --batch 8, 4 GiB with --kv-heads 32", "[cli][kv-mem]") {
    auto j = parse_json(run_inferlab(with(kDoc1, {"--json"})));
    CHECK(j["total_bytes"] == 1073741824ULL);
    CHECK(j["bytes_per_token"] == 131072);
    CHECK(j["per_request_bytes"] == std::vector<std::uint64_t>{1073741824ULL});
    CHECK(j["per_layer_bytes"].size() == 32);
    CHECK(j["per_layer_bytes"][0] == 33554432);
    CHECK(parse_json(run_inferlab(with(kDoc1, {"--batch", "8", "--json"})))["total_bytes"] == 8589934592ULL);
    auto mha = kDoc1;
    mha[4] = "32";
    CHECK(parse_json(run_inferlab(with(mha, {"--json"})))["total_bytes"] == 4294967296ULL);
}

TEST_CASE("kv-mem must-show: L=40, ten requests of 8192 give 163840 B per token and 13421772800 B", "[cli][kv-mem]") {
    auto r = run_inferlab({"kv-mem", "--layers", "40", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16",
                           "--seq-len", "8192,8192,8192,8192,8192,8192,8192,8192,8192,8192", "--json"});
    auto j = parse_json(r);
    CHECK(j["bytes_per_token"] == 163840);
    CHECK(j["total_bytes"] == 13421772800ULL);
    CHECK(j["per_request_bytes"].size() == 10);
}

TEST_CASE("kv-mem human output names both unit systems, --explain substitutes the values", "[cli][kv-mem]") {
    auto h = run_inferlab(kDoc1);
    CHECK(h.status == 0);
    CHECK(h.err.empty());
    CHECK(h.out.find("1,073,741,824 B = 1 GiB = 1.073741824 GB") != std::string::npos);
    auto x = run_inferlab(with(kDoc1, {"--explain"}));
    CHECK(x.status == 0);
    CHECK(x.out.find("2 × 32 × 1 × 8192 × 8 × 128 × 2") != std::string::npos);
    CHECK(x.out.find("= 1,073,741,824 B = 1 GiB = 1.073741824 GB") != std::string::npos);
}

TEST_CASE("kv-mem: token suffixes, --hidden-size with --q-heads, head-sharing table", "[cli][kv-mem]") {
    auto j = parse_json(run_inferlab({"kv-mem", "--layers", "32", "--kv-heads", "8", "--q-heads", "32", "--hidden-size",
                                      "4096", "--seq-len", "8Ki", "--kv-dtype", "bf16", "--json"}));
    CHECK(j["total_bytes"] == 1073741824ULL);
    REQUIRE(j["head_sharing"].size() == 3);
    CHECK(j["head_sharing"][0]["structure"] == "MHA");
    CHECK(j["head_sharing"][1]["ratio_to_mha"] == "1/4");
    CHECK(j["head_sharing"][1]["kv_proj_width"] == 1024);
    CHECK(j["head_sharing"][2]["ratio_to_mha"] == "1/32");
    auto k = parse_json(run_inferlab({"kv-mem", "--layers", "1", "--kv-heads", "1", "--head-dim", "1", "--seq-len", "8k",
                                      "--bytes-per-elem", "1", "--json"}));
    CHECK(k["total_bytes"] == 16000);  // 2 × 8000 tokens × 1 B
}

TEST_CASE("kv-mem: different lengths are summed exactly", "[cli][kv-mem]") {
    auto j = parse_json(run_inferlab({"kv-mem", "--layers", "40", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16",
                                      "--seq-len", "8192,4096,300", "--json"}));
    CHECK(j["per_request_bytes"] == std::vector<std::uint64_t>{163840ULL * 8192, 163840ULL * 4096, 163840ULL * 300});
    CHECK(j["total_bytes"] == 163840ULL * (8192 + 4096 + 300));
}

TEST_CASE("kv-mem: per-layer spec file", "[cli][kv-mem]") {
    auto j = parse_json(run_inferlab({"kv-mem", "--layer-spec", data_path("layer-spec.json"), "--seq-len", "10", "--json"}));
    // 2 × 8·(128·2 + 128·2) + 2 × 4·(128·1 + 256·2) = 8192 + 5120
    CHECK(j["bytes_per_token"] == 13312);
    CHECK(j["total_bytes"] == 133120);
    CHECK(j["bytes_per_token_per_layer"] == std::vector<int>{4096, 4096, 2560, 2560});
}

TEST_CASE("kv-mem: configs, shipped models, sliding windows and MLA", "[cli][kv-mem]") {
    auto llama = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--json"}));
    CHECK(llama["total_bytes"] == 1073741824ULL);
    CHECK(llama["model"]["dtype"] == "bf16");
    auto fp8 = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--kv-dtype", "fp8", "--json"}));
    CHECK(fp8["total_bytes"] == 536870912ULL);
    auto slide = parse_json(run_inferlab({"kv-mem", "--config", data_path("sliding-layer-types.json"), "--seq-len", "1000", "--json"}));
    // per layer per token 2·2·256·2 = 2048 B; sliding layers keep 512 positions.
    CHECK(slide["per_layer_bytes"] == std::vector<std::uint64_t>{2048ULL * 512, 2048ULL * 1000, 2048ULL * 512, 2048ULL * 1000});
    CHECK(slide["bytes_per_token"].is_null());  // length-dependent: null, never absent (issue #15)
    auto mla = parse_json(run_inferlab({"kv-mem", "--model", "deepseek-v3", "--seq-len", "1", "--json"}));
    CHECK(mla["total_bytes"] == 61 * 576 * 2);
    CHECK(mla["mla"]["decompressed_total_bytes"] == 61 * 128 * 320 * 2);
    auto list = run_inferlab({"kv-mem", "--list-models"});
    CHECK(list.status == 0);
    CHECK(list.out.find("llama-3-8b") != std::string::npos);
}

TEST_CASE("kv-mem: paged blocks, tensor parallel and replication", "[cli][kv-mem]") {
    auto j = parse_json(run_inferlab({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16",
                                      "--seq-len", "8192,4100,1", "--block-size", "16", "--tp", "16", "--json"}));
    CHECK(j["paged"]["blocks_per_request"] == std::vector<int>{512, 257, 1});
    CHECK(j["paged"]["waste_bytes"] == 131072ULL * 27);
    CHECK(j["tensor_parallel"]["replicated"] == true);
    CHECK(j["tensor_parallel"]["per_device_bytes"] == j["total_bytes"].get<std::uint64_t>() / 8);
    auto h = run_inferlab({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16",
                           "--seq-len", "8192", "--tp", "16"});
    CHECK(h.out.find("stops shrinking") != std::string::npos);
}

TEST_CASE("kv-mem: budget gives tokens, batch, blocks and concurrency", "[cli][kv-mem]") {
    auto j = parse_json(run_inferlab(with(kDoc1, {"--budget", "80GiB", "--weights-bytes", "14GB", "--block-size", "16", "--json"})));
    const std::uint64_t avail = (80ULL << 30) - 14000000000ULL;
    CHECK(j["budget"]["available_bytes"] == avail);
    CHECK(j["budget"]["max_tokens"] == avail / 131072);
    CHECK(j["budget"]["max_batch"] == avail / 1073741824ULL);
    CHECK(j["budget"]["max_concurrency"] == (avail / (131072ULL * 16)) / 512);
    auto m = parse_json(run_inferlab({"kv-mem", "--model", "llama-3-8b", "--budget", "80GiB", "--seq-len", "8192", "--json"}));
    CHECK(m["budget"]["weights_bytes"] == 2ULL * 8030261248ULL);
}

TEST_CASE("kv-mem: bad input exits 2 with one clear line and nothing on stdout", "[cli][kv-mem][errors]") {
    expect_error({"kv-mem", "--layers", "0", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "1", "--kv-dtype", "bf16"},
                 "--layers '0': must be a positive integer");
    expect_error({"kv-mem", "--layers", "-4", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "1", "--kv-dtype", "bf16"},
                 "--layers '-4'");
    expect_error({"kv-mem", "--layers", "abc", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "1", "--kv-dtype", "bf16"},
                 "--layers 'abc'");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "-1", "--kv-dtype", "bf16"},
                 "--seq-len '-1'");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "0", "--kv-dtype", "bf16"},
                 "--seq-len '0'");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--q-heads", "30", "--head-dim", "128", "--seq-len", "1",
                  "--kv-dtype", "bf16"},
                 "--q-heads '30': must be divisible by --kv-heads 8");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "1", "--kv-dtype", "fp12"},
                 "--kv-dtype 'fp12': unknown dtype");
    expect_error({"kv-mem", "--layers", "1000", "--kv-heads", "4000000000", "--head-dim", "4000000000", "--seq-len",
                  "4000000000", "--kv-dtype", "fp32"},
                 "overflows 64 bits");
    expect_error({"kv-mem", "--layers", "4000000000", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "1", "--kv-dtype",
                  "fp32"},
                 "--layers '4000000000': must be at most 100000");
    expect_error({"kv-mem", "--config", data_path("malformed.json"), "--seq-len", "1"}, "is not valid JSON");
    expect_error({"kv-mem", "--config", data_path("incomplete.json"), "--seq-len", "1"}, "missing key 'num_hidden_layers'");
    expect_error({"kv-mem", "--config", data_path("no-such-file.json"), "--seq-len", "1"}, "cannot be opened");
    expect_error({"kv-mem", "--model", "gpt-5", "--seq-len", "1"}, "--model 'gpt-5': is not a shipped model");
    expect_error({"kv-mem", "--model", "gpt2", "--seq-len", "1"}, "give --kv-dtype");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16"}, "--seq-len is required");
    expect_error(with(kDoc1, {"--budget", "80G", "--weights-bytes", "14GB"}), "--budget '80G': unknown or ambiguous size unit");
    expect_error(with(kDoc1, {"--budget", "10GB", "--weights-bytes", "14GB"}), "leaves no room");
    expect_error(with(kDoc1, {"--tp", "3"}), "--tp '3'");
    expect_error(with(kDoc1, {"--block-size", "0"}), "--block-size '0'");
    expect_error(with(kDoc1, {"--model", "llama-3-8b"}), "choose one model source");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16", "--seq-len", "1,2",
                  "--batch", "2"},
                 "--batch '2'");
}

// Issue #14: a sub-byte product is stored in whole bytes, and --explain says so.
TEST_CASE("kv-mem --explain says a fractional byte count is rounded up", "[cli][kv-mem][edge]") {
    auto r = run_inferlab({"kv-mem", "--layers", "1", "--kv-heads", "1", "--head-dim", "1", "--bytes-per-elem", "0.125",
                           "--seq-len", "1", "--explain"},
                          "", {"COLUMNS=1000"});  // one line per formula: the text checked is not wrapped
    CHECK(r.status == 0);
    CHECK(r.out.find("2 × 1 × 1 × 1 × 0.125 = 0.25 B, rounded up to whole bytes: 1 B") != std::string::npos);
}

// The new-user trial found "22 layers (0, 1, 2, …, 25)" for Gemma-3-1B, a list that includes the
// global layers 5, 11, 17 and 23: the layer lists must say exactly which layers are meant.
TEST_CASE("kv-mem names a layer kind's layers exactly: ranges, or a progression", "[cli][kv-mem]") {
    auto g3 = run_inferlab({"kv-mem", "--config", data_path("configs/gemma-3-1b-it.json"), "--seq-len", "32768"});
    REQUIRE(g3.status == 0);
    CHECK(g3.out.find("22 layers (0–4, 6–10, 12–16, 18–22, 24–25)") != std::string::npos);
    CHECK(g3.out.find("4 layers (5, 11, 17, 23)") != std::string::npos);
    auto g2 = run_inferlab({"kv-mem", "--model", "gemma-2-9b", "--seq-len", "8192"});
    REQUIRE(g2.status == 0);
    CHECK(g2.out.find("21 layers (0, 2, …, 40 in steps of 2)") != std::string::npos);
    CHECK(g2.out.find("21 layers (1, 3, …, 41 in steps of 2)") != std::string::npos);
}

// The first document's request (000_5f2b20623495609b.txt §2.1.1) as CSV numbers: 8192 tokens,
// 1 request, 2^30 bytes.
TEST_CASE("kv-mem --csv: the first document's request as exact numbers", "[cli][kv-mem]") {
    const auto r = run_inferlab({"kv-mem", "--layers", "32", "--kv-heads", "8", "--q-heads", "32", "--head-dim", "128",
                                 "--kv-dtype", "bf16", "--seq-len", "8192", "--csv"});
    REQUIRE(r.status == 0);
    const auto rows = parse_csv(r.out);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0] == std::vector<std::string>{"seq_lens", "request_counts", "per_request_bytes"});  // the JSON's names
    CHECK(rows[1] == std::vector<std::string>{"8192", "1", "1073741824"});
}

TEST_CASE("kv-mem flags that have no effect are errors", "[cli][kv-mem][errors]") {
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--weights-bytes", "14GB"},
                 "--weights-bytes requires --budget");
    expect_error({"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--weight-dtype", "int8"},
                 "--weight-dtype requires --budget");
    expect_error({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--batch", "4"},
                 "--batch requires --seq-len");
    expect_error({"kv-mem", "--layer-spec", data_path("layer-spec.json"), "--q-heads", "8", "--seq-len", "10"},
                 "--q-heads has no effect with --layer-spec");
    expect_error({"kv-mem", "--layers", "2", "--kv-heads", "1", "--head-dim", "4", "--dtype", "bf16", "--seq-len", "1"},
                 "--dtype");
}

// Sub-byte elements over odd widths (tests/data/layer-spec-odd.json: 25.5 + 3 bytes a token): each
// layer of each request holds whole bytes, so the total is Σ_i Σ_l ceil(s_l × S_i), and the lines say so.
TEST_CASE("kv-mem --explain with a sub-byte layer spec rounds once per request and says so", "[cli][kv-mem]") {
    const auto r = run_inferlab({"kv-mem", "--layer-spec", data_path("layer-spec-odd.json"), "--seq-len", "1,7", "--explain"});
    REQUIRE(r.status == 0);
    INFO(r.out);
    CHECK(r.out.find("  layer 0: 3 × (7 × 0.5 + 5 × 1) = 25.5 B per layer\n") != std::string::npos);
    CHECK(r.out.find("  s_token = 28.5 B, rounded up to whole bytes: 29 B\n") != std::string::npos);
    CHECK(r.out.find("  M_KV = Σ_i Σ_l ceil(s_l × S_i)   (each layer of each request holds whole bytes)\n"
                     "       = 29 + 200\n       = 229 B\n") != std::string::npos);
    CHECK(parse_json(run_inferlab({"kv-mem", "--layer-spec", data_path("layer-spec-odd.json"), "--seq-len", "1,7", "--json"}))
              .at("total_bytes") == 229);
    // The uniform formula rounds each layer of each request the same way: 2 × 5 layers-requests of
    // 0.25 B are 10 B, where one rounding of 2.5 B would give 3 (and once disagreed with the sum).
    const auto u = run_inferlab({"kv-mem", "--layers", "2", "--kv-heads", "1", "--head-dim", "1", "--bytes-per-elem", "0.125",
                                 "--seq-len", "1", "--batch", "5", "--explain"});
    REQUIRE(u.status == 0);
    CHECK(u.out.find("       = 2 × 5 × ceil(2 × 1 × 1 × 1 × 0.125) = 2 × 5 × 1\n") != std::string::npos);
    CHECK(u.out.find("       = 10 B\n") != std::string::npos);
}

TEST_CASE("kv-mem --layer-spec: a misspelt key is an error, not a layer counted once", "[cli][kv-mem][errors]") {
    const std::string file = (std::filesystem::temp_directory_path() / "inferlab-kv-spec-key.json").string();
    std::ofstream(file) << R"({"layers": [{"h_kv": 1, "d_k": 4, "d_v": 4, "b_k": 1, "b_v": 1, "reapeat": 5}]})";
    expect_error({"kv-mem", "--layer-spec", file, "--seq-len", "1"},
                 "--layer-spec layer 0: unknown key 'reapeat' (the keys are h_kv, d_k, d_v, b_k, b_v, window, repeat;");
    std::filesystem::remove(file);
}

// Issue #29, item 4: Phi-3-mini at S = 3000, W = 2047, blocks of 16 needs 129 blocks (positions
// 953..2999 lie in blocks 59..187); inferlab said 128, labelled ceil(S / 16), having computed
// ceil(2047 / 16). The label now states the rule it applies, and --explain substitutes it.
TEST_CASE("kv-mem paged: a sliding window that starts inside a block holds one block more", "[cli][kv-mem]") {
    const std::vector<std::string> args = {"kv-mem", "--config", data_path("configs/phi-3-mini-4k-instruct.json"),
                                           "--seq-len", "3000", "--block-size", "16"};
    auto with = [&](const char* flag) {
        std::vector<std::string> a = args;
        a.push_back(flag);
        return a;
    };
    const auto j = parse_json(run_inferlab(with("--json")));
    CHECK(j["paged"]["total_blocks"] == 129);
    CHECK(j["paged"]["blocks_per_request"] == nlohmann::json::array({129}));
    // 129 blocks of 32 layers × 16 tokens × 2 · 32 · 96 · 2 B = 6 MiB; the window's 2047 positions fill 2047 × 384 KiB.
    CHECK(j["paged"]["allocated_bytes"] == 129ULL * 6291456ULL);
    CHECK(j["paged"]["waste_bytes"] == (129ULL * 16 - 2047) * 393216ULL);
    const CliResult t = run_inferlab(args);
    REQUIRE(t.status == 0);
    CHECK(t.out.find("ceil(S / 16)") == std::string::npos);
    CHECK(t.out.find("129 in all (129 per request: floor((S − 1) / 16) − floor((S −") != std::string::npos);
    const CliResult x = run_inferlab(with("--explain"));
    REQUIRE(x.status == 0);
    CHECK(x.out.find("floor((3000 − 1) / 16) − floor((3000 − 2047) / 16) +\n    1 = 187 − 59 + 1 = 129") != std::string::npos);
}

// Issue #29, item 15: a --seq-len past the config's max_position_embeddings was computed without a
// word. The bytes stay as they are; a note says the model was not trained that far.
TEST_CASE("kv-mem and decode-roofline note a length past max_position_embeddings", "[cli][kv-mem]") {
    const std::string phi3 = data_path("configs/phi-3-mini-4k-instruct.json");
    const std::string note = "S = 8,192 is past the config's max_position_embeddings (4,096)";
    const CliResult k = run_inferlab({"kv-mem", "--config", phi3, "--seq-len", "8192"});
    REQUIRE(k.status == 0);
    CHECK(k.out.find(note) != std::string::npos);
    CHECK(run_inferlab({"kv-mem", "--config", phi3, "--seq-len", "4096"}).out.find("max_position_embeddings") ==
          std::string::npos);
    const auto j = parse_json(run_inferlab({"kv-mem", "--config", phi3, "--seq-len", "8192", "--json"}));
    CHECK(j["model"]["max_position_embeddings"] == 4096);
    const CliResult d = run_inferlab({"decode-roofline", "--config", phi3, "--hw", "h100-sxm", "--seq-len", "8192"});
    REQUIRE(d.status == 0);
    CHECK(d.out.find(note) != std::string::npos);
    const auto dj = parse_json(run_inferlab({"decode-roofline", "--config", phi3, "--hw", "h100-sxm", "--seq-len", "8192", "--json"}));
    CHECK(dj["inputs"]["max_position_embeddings"] == 4096);
    // A generation reaches P + N − 1 positions: 4,000 + 1,000 − 1 = 4,999, past 4,096 though P is not.
    const CliResult g = run_inferlab({"decode-roofline", "--config", phi3, "--hw", "h100-sxm", "--prompt-len", "4000",
                                      "--output-len", "1000"});
    REQUIRE(g.status == 0);
    CHECK(g.out.find("S = 4,999 is past the config's max_position_embeddings (4,096)") != std::string::npos);
}

// Issue #29: --list-models took --seq-len (and any other flag of the computation) and ignored it.
TEST_CASE("kv-mem --list-models refuses the flags of a computation, keeps its output forms", "[cli][kv-mem][errors]") {
    expect_error({"kv-mem", "--list-models", "--seq-len", "10"},
                 "inferlab: error: --list-models and --seq-len both given: --list-models computes nothing, so --seq-len has no effect");
    expect_error({"kv-mem", "--list-models", "--model", "llama-3-8b"}, "--list-models and --model both given");
    expect_error({"kv-mem", "--list-models", "--kv-dtype", "fp8"}, "--list-models and --kv-dtype both given");
    CHECK(run_inferlab({"kv-mem", "--list-models", "--csv"}).status == 0);
    CHECK(run_inferlab({"kv-mem", "--list-models", "--json"}).status == 0);
    CHECK(run_inferlab({"kv-mem", "--list-models", "--lang", "zh"}).status == 0);
}
