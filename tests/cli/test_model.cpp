#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {
void write_bytes(const std::string& path, const std::vector<std::int32_t>& header, std::size_t floats, float value) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size() * 4));
    std::vector<float> body(floats, value);
    f.write(reinterpret_cast<const char*>(body.data()), std::streamsize(floats * 4));
}
}  // namespace

TEST_CASE("model generate --trace: a 4-token prompt caches 4, then 5, then 6 positions", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "generate", "--model", "demo-gqa", "--prompt", "1,2,3,4", "--steps", "3", "--json"}));
    REQUIRE(j["trace"].size() == 3);
    CHECK(j["trace"][0]["phase"] == "prefill");
    CHECK(j["trace"][0]["cache_len"][0] == 4);
    CHECK(j["trace"][0]["q_shape"] == "[1,6,4,48]");
    CHECK(j["trace"][0]["scores_shape"] == "[1,6,4,4]");
    CHECK(j["trace"][1]["phase"] == "decode");
    CHECK(j["trace"][1]["cache_len"][5] == 5);
    CHECK(j["trace"][1]["scores_shape"] == "[1,6,1,5]");
    CHECK(j["trace"][2]["cache_len"][0] == 6);
    CHECK(j["generated"].size() == 3);
    auto h = run_inferlab({"model", "generate", "--model", "demo-gqa", "--prompt", "1,2,3,4", "--steps", "2", "--trace"});
    CHECK(h.status == 0);
    CHECK(h.out.find("prefill") != std::string::npos);
    auto s1 = run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "6", "--temperature", "0.8", "--top-k", "20", "--seed", "3", "--json"});
    auto s2 = run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "6", "--temperature", "0.8", "--top-k", "20", "--seed", "3", "--json"});
    CHECK(s1.out == s2.out);
}

TEST_CASE("model init and logits: a checkpoint read back gives bit-identical logits", "[cli][model]") {
    const std::string path = "/tmp/inferlab-cli-demo.bin";
    auto init = run_inferlab({"model", "init", "--model", "demo-gqa", "--seed", "5", "--out", path});
    CHECK(init.status == 0);
    auto a = parse_json(run_inferlab({"model", "logits", "--checkpoint", path, "--tokens", "1,2,3", "--json"}));
    auto b = parse_json(run_inferlab({"model", "logits", "--model", "demo-gqa", "--seed", "5", "--tokens", "1,2,3", "--json"}));
    CHECK(a["logits"] == b["logits"]);
    CHECK(a["logits"].size() == 3);
    auto p = parse_json(run_inferlab({"model", "logits", "--checkpoint", path, "--tokens", "1,2,3", "--path", "paged", "--json"}));
    auto n = parse_json(run_inferlab({"model", "logits", "--checkpoint", path, "--tokens", "1,2,3", "--path", "nocache", "--json"}));
    for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t c = 0; c < 512; ++c) {
            double x = p["logits"][r][c].get<double>(), y = n["logits"][r][c].get<double>();
            // 1e-5 relative: float32 sums over different row counts (paged decode against one prefill).
            REQUIRE(std::abs(x - y) <= 1e-5 * std::max(1.0, std::abs(y)));
        }
    std::remove(path.c_str());
}

TEST_CASE("model subcommands have --help with examples", "[cli][model]") {
    for (const char* sub : {"init", "logits", "check-cache", "generate", "bench"}) {
        INFO(sub);
        auto r = run_inferlab({"model", sub, "--help"});
        CHECK(r.status == 0);
        CHECK(r.out.find("Examples:") != std::string::npos);
        CHECK(r.out.find(std::string("inferlab model ") + sub) != std::string::npos);
    }
}

TEST_CASE("model check-cache: three paths agree and it says so", "[cli][model]") {
    auto j = parse_json(run_inferlab({"model", "check-cache", "--model", "demo-gqa", "--seq-len", "64", "--json"}));
    CHECK(j["agree"] == true);
    CHECK(j["rows"].size() == 64);
    // 1e-5: check-cache's own relative tolerance (float32 sums in another order), which it reports.
    CHECK(j["relative_tolerance"].get<double>() <= 1e-5);
    CHECK(j["max_rel_diff"].get<double>() <= j["relative_tolerance"].get<double>());
}

// Issue #29 item 18: a CSV cell holds one number, and the number --json holds, digit for digit.
TEST_CASE("model logits --csv: a row per position and rank, numbers only, the logit as --json has it", "[cli][model]") {
    const std::vector<std::string> args = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,2,3"};
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    const auto csv = run_inferlab(with(args, {"--csv"}));
    REQUIRE(csv.status == 0);
    const auto rows = parse_csv(csv.out);
    REQUIRE(rows.size() == 1 + 3 * 5);
    CHECK(rows[0] == std::vector<std::string>{"pos", "token", "rank", "next_token", "logit"});
    REQUIRE(j["top"].size() == 3 * 5);
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& row = rows[i];
        const auto& top = j["top"][i - 1];
        INFO(csv.out);
        REQUIRE(row.size() == 5);
        const std::size_t pos = std::stoul(row[0]), rank = std::stoul(row[2]), next = std::stoul(row[3]);
        CHECK(pos == (i - 1) / 5);
        CHECK(rank == (i - 1) % 5 + 1);
        CHECK(std::stoi(row[1]) == j["tokens"][pos].get<int>());
        CHECK(top["pos"] == pos);
        CHECK(top["rank"] == rank);
        CHECK(top["next_token"] == next);
        // Exact: the CSV's digits read back as the very double --json prints (a float32 logit widened).
        CHECK(std::stod(row[4]) == j["logits"][pos][next].get<double>());
        CHECK(top["logit"].get<double>() == j["logits"][pos][next].get<double>());
        if (rank > 1) CHECK(std::stod(row[4]) <= std::stod(rows[i - 1][4]));  // rank 1 the largest
    }
}

TEST_CASE("model check-cache --csv: the differences at full precision, the text at three digits", "[cli][model]") {
    const std::vector<std::string> args = {"model", "check-cache", "--model", "demo-gqa", "--seq-len", "6"};
    const auto j = parse_json(run_inferlab(with(args, {"--json"})));
    const auto csv = run_inferlab(with(args, {"--csv"}));
    REQUIRE(csv.status == 0);
    const auto rows = parse_csv(csv.out);
    REQUIRE(rows.size() == 1 + 6);
    const std::vector<std::string> keys = {"contiguous", "paged", "other_attention", "chunked"};
    bool nonzero = false;
    for (std::size_t i = 1; i < rows.size(); ++i)
        for (std::size_t k = 0; k < keys.size(); ++k) {
            const double v = j["rows"][i - 1][keys[k]].get<double>();
            INFO(keys[k] << " at row " << i << ": " << rows[i][k + 1]);
            CHECK(std::stod(rows[i][k + 1]) == v);  // exactly: no rounding to 3 digits
            nonzero = nonzero || v != 0;
        }
    CHECK(nonzero);  // float32 sums in another order: some path differs, so the digits matter
    const auto text = run_inferlab(args);
    REQUIRE(text.status == 0);
    for (const auto& row : j["rows"])
        CHECK(text.out.find(fmt::format("{:.2e}", row["other_attention"].get<double>())) != std::string::npos);
}

TEST_CASE("model: bad input exits 2 with one clear line", "[cli][model][errors]") {
    const std::string dir = "/tmp/inferlab-cli-bad-";
    // Truncated: a valid header, too few weights.
    write_bytes(dir + "short.bin", {8, 8, 1, 2, 2, 4, 4}, 10, 0.1f);
    expect_error({"model", "logits", "--checkpoint", dir + "short.bin", "--tokens", "1"}, "is truncated");
    // Impossible dims in the header.
    write_bytes(dir + "dims.bin", {8, 8, 1, 3, 2, 4, 4}, 10, 0.1f);
    expect_error({"model", "logits", "--checkpoint", dir + "dims.bin", "--tokens", "1"}, "header n_heads '3'");
    write_bytes(dir + "zero.bin", {0, 8, 1, 2, 2, 4, 4}, 10, 0.1f);
    expect_error({"model", "logits", "--checkpoint", dir + "zero.bin", "--tokens", "1"}, "header dim '0'");
    // Corrupt: the right size, but NaN weights.
    auto init = run_inferlab({"model", "init", "--config", data_path("tiny-model.json"), "--out", dir + "nan.bin"});
    REQUIRE(init.status == 0);
    {
        std::fstream f(dir + "nan.bin", std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(28 + 4 * 20);
        float nan = std::numeric_limits<float>::quiet_NaN();
        f.write(reinterpret_cast<const char*>(&nan), 4);
    }
    expect_error({"model", "logits", "--checkpoint", dir + "nan.bin", "--tokens", "1"}, "is corrupt");
    expect_error({"model", "logits", "--checkpoint", dir + "missing.bin", "--tokens", "1"}, "cannot be opened");
#ifndef INFERLAB_WITH_CUDA
    expect_error({"model", "logits", "--model", "demo-gqa", "--tokens", "1", "--backend", "cuda"}, "built without CUDA");
    expect_error({"model", "check-cache", "--seq-len", "4", "--backend", "cuda"}, "built without CUDA");
    expect_error({"model", "generate", "--steps", "2", "--backend", "cuda"}, "built without CUDA");
#endif
    expect_error({"model", "logits", "--model", "demo-gqa", "--tokens", "1", "--backend", "tpu"}, "--backend 'tpu'");
    expect_error({"model", "generate", "--backend", "tpu"}, "--backend 'tpu': must be cpu or cuda");
    expect_error({"model", "logits", "--config", data_path("bad-gqa.json"), "--tokens", "1"},
                 "must be divisible by num_key_value_heads 4");
    expect_error({"model", "logits", "--config", data_path("tiny-model.json"), "--tokens", "1,16"},
                 "--tokens '16': is outside the vocabulary [0, 15]");
    expect_error({"model", "logits", "--config", data_path("tiny-model.json"), "--tokens", "1,2,3,4,5,6,7,8,9"},
                 "longer than the model's maximum sequence length 8");
    expect_error({"model", "generate", "--config", data_path("tiny-model.json"), "--prompt", "1,2,3", "--steps", "6"},
                 "exceeds the model's maximum sequence length 8");
    for (const char* f : {"short.bin", "dims.bin", "zero.bin", "nan.bin"}) std::remove((dir + f).c_str());
}

TEST_CASE("model bench: the documented keys, bytes per step from kv-mem's formula, ratios measured in one run",
          "[cli][model]") {
    // Small settings so the test is quick; the figures are checked for sense, never for speed.
    const std::vector<std::string> base = {"model", "bench", "--model", "demo-gqa", "--threads", "1", "--prompt-len", "8",
                                           "--steps", "4", "--probe-mib", "8", "--contexts", "16", "--batch", "1,2",
                                           "--skip-nocache", "--json"};
    auto r = run_inferlab(base);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    auto j = nlohmann::json::parse(r.out);
    for (const char* k : {"decode_tokens_per_s", "achieved_gbs", "measured_read_gbs", "bandwidth_fraction", "prefill_tokens_per_s",
                          "prefill_gflops", "measured_matmul_gflops", "measured_batch_product_gflops", "fp32_decode_tokens_per_s"}) {
        INFO(k);
        REQUIRE(j.contains(k));
        CHECK(j[k].get<double>() > 0);
    }
    CHECK(j["bf16_speedup"].is_null());
    CHECK(j["decode_tokens_per_s"] == j["fp32_decode_tokens_per_s"]);
    // demo-gqa's weights counted by hand: embedding 512·288 (the tied LM head), six layers of
    // 2·288 + 2·288·288 + 2·96·288 + 3·768·288 = 885,312, final norm 288.
    CHECK(j["parameters"] == 512 * 288 + 6 * 885312 + 288);
    // One step at S = P + G/2 = 10 reads every weight once (tied LM head) and the float32 K/V of 10 positions.
    auto kv = parse_json(run_inferlab({"kv-mem", "--model", "demo-gqa", "--seq-len", "10", "--kv-dtype", "fp32", "--json"}));
    CHECK(j["bytes_per_step"].get<std::uint64_t>() == j["parameters"].get<std::uint64_t>() * 4 + kv["total_bytes"].get<std::uint64_t>());
    // GB/s is 10^9 bytes per second (not GiB): 1e-9 relative, the product of two printed doubles.
    CHECK(std::abs(j["achieved_gbs"].get<double>() -
                   j["bytes_per_step"].get<double>() * j["decode_tokens_per_s"].get<double>() / 1e9) <= 1e-9 * j["achieved_gbs"].get<double>());
    REQUIRE(j["batch"].size() == 2);
    CHECK(j["batch"][1]["ratio_to_batch_1"].get<double>() > 0);
    // The bound's aggregate never falls with the batch: its memory part B·β/D_B rises, its compute
    // part π/F per token does not change. When the measured π is low (a loaded machine) both batches
    // are compute-bound and the two are equal; it rises strictly when batch 2 is bound by reading.
    const double bound1 = j["batch"][0]["bound_aggregate_tokens_per_s"].get<double>();
    const double bound2 = j["batch"][1]["bound_aggregate_tokens_per_s"].get<double>();
    CHECK(bound2 >= bound1 * (1 - 1e-12));  // 1e-12 relative: the same quotient reached two ways
    if (j["batch"][1]["compute_bound"] == false) CHECK(bound2 > bound1);
    // bf16: the float32 and bf16 decode alternate in the same run, and the ratio is theirs.
    auto args = base;
    args.insert(args.end(), {"--weight-dtype", "bf16"});
    auto b = nlohmann::json::parse(run_inferlab(args).out);
    CHECK(b["weight_dtype"] == "bf16");
    // 1e-9 absolute: the speedup is the quotient of the two printed rates (doubles printed in full).
    CHECK(std::abs(b["bf16_speedup"].get<double>() - b["decode_tokens_per_s"].get<double>() / b["fp32_decode_tokens_per_s"].get<double>()) <= 1e-9);
    CHECK(b["bf16_logit_change"].get<double>() > 0);
    // 0.02 relative: bf16 keeps 8 mantissa bits, so each weight moves by up to 2^-9 ≈ 0.2%; through six
    // layers the logits here move by 0.4%, while weights read from the wrong place move them by order 1.
    CHECK(b["bf16_logit_change"].get<double>() < 0.02);
    CHECK(b["bytes_per_step"].get<std::uint64_t>() == b["parameters"].get<std::uint64_t>() * 2 + kv["total_bytes"].get<std::uint64_t>());
    expect_error({"model", "bench", "--weight-dtype", "fp8"}, "--weight-dtype 'fp8': must be fp32, bf16, int8, int4 or all");
}

// Issue #14: sampling has its own seed; the weights' --seed does not move the draws.
TEST_CASE("model generate: --sample-seed drives sampling, --seed the weights", "[cli][model][edge]") {
    auto gen = [](const std::string& seed, const std::string& sample_seed) {
        auto r = run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "12", "--temperature", "1.5",
                               "--seed", seed, "--sample-seed", sample_seed, "--json"});
        REQUIRE(r.status == 0);
        return parse_json(r);
    };
    auto a = gen("1", "1"), again = gen("1", "1"), other_sampling = gen("1", "2");
    CHECK(a["generated"] == again["generated"]);
    CHECK(a["sample_seed"] == 1);
    CHECK(other_sampling["sample_seed"] == 2);
    CHECK(a["generated"] != other_sampling["generated"]);  // 12 draws at T = 1.5 from 12 different uniforms
    auto help = run_inferlab({"model", "generate", "--help"});
    CHECK(help.out.find("--sample-seed") != std::string::npos);
    // --help wraps at 80 columns (#15): read its line breaks and indents as single spaces.
    std::string flat;
    for (char c : help.out)
        if (!((c == ' ' || c == '\n') && !flat.empty() && flat.back() == ' ')) flat += c == '\n' ? ' ' : c;
    CHECK(flat.find("separate from the weights' --seed") != std::string::npos);
}

// Issue #14: random weights past this machine's available memory are refused before any is drawn.
TEST_CASE("model logits: a random 8B model that cannot fit is refused with its size", "[cli][model][edge]") {
    // llama-3-8b: 8,030,261,248 float32 values = 32,121,044,992 B (weight_floats of its dims).
    const std::uint64_t avail = mem_available_bytes();
    if (avail == 0 || avail >= 32121044992ULL) {
        WARN("this machine could hold the weights; the refusal is not exercised here");
        return;
    }
    auto r = run_inferlab({"model", "logits", "--model", "llama-3-8b", "--tokens", "1"});
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(one_error_line(r));
    CHECK(r.err.find("--model 'llama-3-8b': random float32 weights need 32,121,044,992 B") != std::string::npos);
    CHECK(r.err.find("available (MemAvailable)") != std::string::npos);
}

// Issue #14: counts take the noun's number ("1 token", not "1 tokens").
TEST_CASE("model speculate and check-cache: one token reads as one token", "[cli][model][edge]") {
    auto s = run_inferlab({"model", "speculate", "--model", "demo-gqa", "--gamma", "4", "--steps", "1"});
    CHECK(s.status == 0);
    CHECK(s.out.find("(sample seed 1)") != std::string::npos);
    CHECK(s.out.find("  1 token in 1 round: ") != std::string::npos);
    auto c = run_inferlab({"model", "check-cache", "--model", "demo-gqa", "--seq-len", "1"});
    CHECK(c.status == 0);
    CHECK(c.out.find("per position (1 token; ") != std::string::npos);
}

// Issue #15: one spelling per concept, and a flag that would change nothing is refused.
TEST_CASE("model generate, check-cache and bench: tokens to generate ≥ 1, no thousands separators, no flag without effect",
          "[cli][model][errors]") {
    expect_error({"model", "generate", "--steps", "0"}, "--steps '0': must be a positive integer");
    expect_error({"model", "generate", "--prompt", "1,000"},
                 "--prompt '1,000': item '000' has a leading zero: token ids are separated by commas and written without "
                 "thousands separators or leading zeros (1,000 would read as the ids 1 and 0)");
    expect_error({"model", "logits", "--tokens", "7,05"}, "--tokens '7,05': item '05' has a leading zero");
    expect_error({"model", "generate", "--top-k", "3"}, "--top-k has no effect with --temperature 0 (greedy: the argmax)");
    expect_error({"model", "generate", "--sample-seed", "3"}, "--sample-seed has no effect with --temperature 0");
    expect_error({"model", "logits", "--tokens", "1", "--block-size", "4"}, "--block-size '4': has no effect without --path paged");
    expect_error({"model", "check-cache", "--path", "paged"},
                 "--path 'paged': has no effect: check-cache runs every path (nocache, contiguous, paged)");
    expect_error({"model", "check-cache", "--tokens", "1,2", "--seq-len", "3"}, "--seq-len '3': has no effect with --tokens");
    expect_error({"model", "check-cache", "--seq-len", "3", "--length", "3"}, "--length is the former spelling of --seq-len: give one of them");
    expect_error({"model", "bench", "--steps", "3", "--gen", "3"}, "--gen is the former spelling of --steps: give one of them");
    expect_error({"model", "bench", "--batch", "0"}, "--batch '0': must be a positive integer");
    // The former spellings still read the same values.
    auto a = parse_json(run_inferlab({"model", "check-cache", "--model", "demo-gqa", "--length", "3", "--json"}));
    CHECK(a["tokens"].size() == 3);
}

// Issue #29, item 12: GPT-2-style configs ran silently as a Llama-style model (RMSNorm, SwiGLU,
// RoPE). The output says that only the config's dimensions are borrowed; a Llama config says nothing.
TEST_CASE("a config of another architecture says that only its dimensions are borrowed", "[cli][model]") {
    const CliResult g = run_inferlab({"model", "logits", "--model", "gpt2", "--tokens", "1,2"});
    REQUIRE(g.status == 0);
    CHECK(g.out.find("gpt2 is a gpt2 config: the reference runs its dimensions on Llama-style layers\n  (RMSNorm, SwiGLU, "
                     "RoPE, full attention), whatever gpt2 does differently\n") != std::string::npos);
    const auto j = parse_json(run_inferlab({"model", "speculate", "--model", "gpt2", "--steps", "2", "--json"}));
    CHECK(j["target"] == "gpt2 with random weights (seed 1); gpt2 is a gpt2 config: the reference runs its dimensions on "
                         "Llama-style layers (RMSNorm, SwiGLU, RoPE, full attention), whatever gpt2 does differently");
    const CliResult l = run_inferlab({"model", "logits", "--model", "demo-gqa", "--tokens", "1,2"});
    REQUIRE(l.status == 0);
    CHECK(l.out.find("runs its dimensions") == std::string::npos);
    CHECK(l.err.empty());  // a short fill says nothing on a stderr that is not a terminal
}
