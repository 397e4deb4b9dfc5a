// kv-mem and verify in Chinese beyond the first document's §2.1.1 example: the paged blocks and
// the budget in the documents' words, verify's --explain for every example, the model list, and
// kv-mem's and the config reader's errors. What every run owes in both languages is
// test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "../support/cli.hpp"
#include "../support/i18n_check.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("kv-mem in Chinese names the paged blocks and the budget in the documents' words", "[cli][i18n][kv-mem]") {
    const CliResult r = run_zh({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16",
                                "--seq-len", "8192", "--block-size", "16", "--budget", "80GiB", "--weights-bytes", "14GB"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "分页       每块 16 个 token"));
    CHECK(has(r.out, "  浪费       0 B（占已分配的 0%，即块中的空位）"));
    CHECK(has(r.out, "显存预算    每台设备 85,899,345,920 B = 80 GiB = 85.89934592 GB"));
    CHECK(has(r.out, "  留给 KV   "));
    CHECK(has(r.out, "  并发请求数"));
}

TEST_CASE("kv-mem in English keeps its labels", "[cli][i18n][kv-mem]") {
    const CliResult r = run_inferlab({"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype",
                                      "bf16", "--seq-len", "8192", "--block-size", "16", "--budget", "80GiB",
                                      "--weights-bytes", "14GB", "--lang", "en"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "\nPaged      blocks of 16 tokens (2,097,152 B = 2 MiB = 2.097152 MB each across\n"));
    CHECK(has(r.out, "  waste      0 B (0% of allocated, the blocks' empty slots)\n"));
    CHECK(has(r.out, "\nBudget      85,899,345,920 B = 80 GiB = 85.89934592 GB per device\n"));
    CHECK(has(r.out, "  for KV    "));
    CHECK(has(r.out, "  concurrent requests      "));
}

TEST_CASE("kv-mem errors in Chinese translate the rule and keep the flag and the value", "[cli][i18n][kv-mem]") {
    struct Case {
        std::vector<std::string> args;
        std::string line;
    };
    const std::vector<Case> cases = {
        {{"kv-mem", "--layers", "100001", "--kv-heads", "8", "--head-dim", "128", "--kv-dtype", "bf16", "--seq-len", "1"},
         "--layers '100001': 不能超过 100000"},
        {{"kv-mem", "--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "1"},
         "未给出 KV 精度：请给出 --kv-dtype（fp32、fp16、bf16、fp8、int8、int4）或 --bytes-per-elem"},
        {{"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192,4096", "--block-size", "16", "--shared-prefix", "10"},
         "--shared-prefix 需要等长的请求（一个 --seq-len，按批量重复）"},
        {{"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--tp", "3"},
         "--tp '3': 必须整除 K/V 头数 8（或是它的倍数，以复制头）"},
        {{"kv-mem", "--model", "llama-3-8b", "--seq-len", "8192", "--budget", "1GB"},
         "--budget '1GB': 没有留给 KV Cache 的空间：仅权重就占 16,060,522,496 B = ≈14.957527 GiB = 16.060522496 GB"},
    };
    for (const auto& c : cases) expect_zh_error(c.args, c.line);
}

TEST_CASE("verify --explain in Chinese describes every example in Chinese", "[cli][i18n][verify]") {
    check_chinese_output({"verify", "--explain"});
    const CliResult r = run_zh({"verify", "--explain", "--id", "spec.doc1.alpha-1"});
    INFO(r.out);
    CHECK(has(r.out, "接受概率 α(1) = min(1, p/q)：p=[0.6,0.3,0.1], q=[0.4,0.4,0.2]"));
    // JSON keeps the English description whatever the language (a fixed schema, byte-identical).
    CHECK(run_zh({"verify", "--json"}).out == run_inferlab({"verify", "--json", "--lang", "en"}).out);
    const nlohmann::json j = parse_json(run_zh({"verify", "--json", "--id", "spec.doc1.alpha-1"}));
    CHECK(j.at("examples").at(0).at("description") == "acceptance probability α(1) = min(1, p/q)");
}

TEST_CASE("kv-mem --list-models in Chinese: the heading and columns translated, the sources as shipped",
          "[cli][i18n][kv-mem]") {
    const CliResult zh = run_zh({"kv-mem", "--list-models"});
    REQUIRE(zh.status == 0);
    CHECK(has_line(zh.out, "随附的模型配置（examples/models/，用 --model NAME 选用）："));
    // --csv keeps the machine names whatever the language.
    const CliResult csv = run_zh({"kv-mem", "--list-models", "--csv"});
    CHECK(csv.out.rfind("name,source\n", 0) == 0);
    CHECK(csv.out == run_inferlab({"kv-mem", "--list-models", "--csv", "--lang", "en"}).out);
}

TEST_CASE("config-key errors in Chinese name the file and the key in Chinese and translate the rule",
          "[cli][i18n][kv-mem]") {
    Scratch s("inferlab-zh-config");
    const std::string bad_heads = (s.path / "heads.json").string(), not_object = (s.path / "list.json").string();
    std::ofstream(bad_heads) << R"({"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 3,
                                    "hidden_size": 64, "torch_dtype": "bfloat16"})";
    std::ofstream(not_object) << "[1, 2]";
    expect_zh_error({"kv-mem", "--config", bad_heads, "--seq-len", "8"},
                    "配置 '" + bad_heads + "' 的键 'num_attention_heads' '8': 必须能被 num_key_value_heads 3 整除");
    expect_zh_error({"kv-mem", "--config", not_object, "--seq-len", "8"},
                    "配置 '" + not_object + "' 'array': 必须是 JSON 对象");
    // The English message is unchanged.
    const CliResult en = run_inferlab({"kv-mem", "--config", bad_heads, "--seq-len", "8", "--lang", "en"});
    CHECK(en.err == "inferlab: error: config '" + bad_heads +
                        "' key 'num_attention_heads' '8': must be divisible by num_key_value_heads 3\n");
}

TEST_CASE("the config reader's rules are said in Chinese: windows, defaults, the tied head", "[cli][i18n][kv-mem][real]") {
    // Gemma-3 4B's text_config leaves out keys that Gemma3TextConfig's defaults fill, and lays out
    // its windows by the default sliding_window_pattern; --budget counts its weights, tied head included.
    const std::vector<std::string> gemma3 = {"kv-mem", "--config", data_path("configs/gemma-3-4b-it.json"),
                                             "--seq-len", "8192", "--budget", "80GB"};
    check_chinese_output(gemma3);
    std::string flat;  // the text with its wrapped lines joined
    for (const auto& line : lines_of(run_zh(gemma3).out)) flat += line.substr(std::min(line.find_first_not_of(' '), line.size()));
    CHECK(flat.find("每 6 层中有一层用全注意力（第 5、11、… 层），其余以窗口 1024 滑动（Gemma3TextConfig 的默认 "
                    "sliding_window_pattern 6）") != std::string::npos);
    CHECK(flat.find("vocab_size = 262208（Gemma3TextConfig 的默认值）") != std::string::npos);
    CHECK(flat.find("未给出 tie_word_embeddings：") != std::string::npos);
    // JSON keeps the English, in every language.
    const nlohmann::json j = parse_json(run_inferlab(with(gemma3, {"--json"}), "", zh_env()));
    CHECK(j["model"]["window_rule"] ==
          "gemma3_text: one layer in 6 is full attention (layers 5, 11, …), the others slide with window 1024 "
          "(Gemma3TextConfig's default sliding_window_pattern 6)");
    CHECK(j["model"]["defaults_applied"][0] == "vocab_size = 262208 (Gemma3TextConfig default)");
    CHECK_THAT(j["budget"]["weights_from"].get<std::string>(), Catch::Contains("(counted from the config; tie_word_embeddings"));
}
