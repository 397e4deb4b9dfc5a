// model init, logits, check-cache, generate and bench in Chinese: the second document's
// Prefill/Decode table in its own terms, the help pages, and errors in Chinese. What every run
// owes in both languages is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "inferlab/text/table.hpp"
#include "../support/cli.hpp"
#include "../support/i18n_check.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;

namespace {

const std::vector<std::string> kGenerate = {"model", "generate", "--model", "demo-gqa", "--prompt", "1,2,3,4", "--steps", "3"};

}  // namespace

// The second document (003_02a045288fb34aae.txt), "Prefill 与 Decode 的交界": a prompt of 4 tokens
// p0..p3 goes in at Prefill (四个输入位置在各层的 KV), then 第一次 Decode feeds y0 and 第二次 Decode
// feeds y1, each adding that one position's KV in every layer. Its table's columns are 阶段,
// 本次送入模型的 Token, 本次新增的 KV; the same walk, with demo-gqa's 6 layers, is README's
// `model generate --prompt 1,2,3,4 --steps 3 --trace`.
TEST_CASE("model generate --trace in Chinese on the second document's Prefill and Decode table", "[cli][i18n][textbook]") {
    const CliResult r = run_inferlab(with(kGenerate, {"--trace"}), "", {"INFERLAB_LANG=zh", "COLUMNS=120"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() >= 9);
    CHECK(lines[0] == "生成了 3 个 token：211,211,268");
    // The heading names the document's phases and its KV Cache.
    CHECK(r.out.find("逐步追踪 Prefill 与 Decode 中 KV Cache 的增长") != std::string::npos);
    // The table in the document's own column titles; one row per phase as the document lists them:
    // Prefill takes the 4 prompt tokens and caches 4 positions, each Decode one token and one more.
    auto row = std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.find("阶段") != std::string::npos; });
    REQUIRE(row != lines.end());
    CHECK(*row == "  步  阶段     本次送入模型的 Token   各层缓存长度           Q  本次新增的 KV  已缓存的 K/V  注意力分数");
    std::vector<std::string> phases;
    for (const auto& l : lines)
        if (l.find("Prefill  [1,2,3,4]") != std::string::npos || l.find("Decode   [211]") != std::string::npos) phases.push_back(l);
    REQUIRE(phases.size() == 3);
    CHECK(phases[0] == "   0  Prefill  [1,2,3,4]             [4,4,4,4,4,4]  [1,6,4,48]     [1,2,4,48]    [1,2,4,48]   [1,6,4,4]");
    CHECK(phases[1] == "   1  Decode   [211]                 [5,5,5,5,5,5]  [1,6,1,48]     [1,2,1,48]    [1,2,5,48]   [1,6,1,5]");
    CHECK(phases[2] == "   2  Decode   [211]                 [6,6,6,6,6,6]  [1,6,1,48]     [1,2,1,48]    [1,2,6,48]   [1,6,1,6]");
    // --explain adds the document's reading of the walk: Prefill feeds the prompt at once, each
    // Decode the token just chosen.
    const CliResult x = run_zh(with(kGenerate, {"--trace", "--explain"}));
    REQUIRE(x.status == 0);
    CHECK(x.out.find("Prefill 一步送入提示的 4 个 token；之后每次 Decode 只送入刚选出的 token") != std::string::npos);
}

// `model --help` lists every model subcommand, and the measuring ones (speculate, kv-quant, ...)
// are translated apart from these: here, the group's own text and the lines of these five.
TEST_CASE("model --help in Chinese: the group and its init, logits, check-cache, generate, bench", "[cli][i18n][model]") {
    check_no_english({"model", "--help"});
    const CliResult r = run_zh({"model", "--help"});
    REQUIRE(r.status == 0);
    CHECK(lines_of(r.out).front() == "参考 Transformer（GQA、RoPE、KV Cache：连续与分页）");
    const auto lines = lines_of(r.out);
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"init", "写出一个带种子随机权重的 llama2.c 检查点"},
             {"logits", "沿一条缓存路径计算每个位置的 logits"},
             {"check-cache", "无缓存、连续缓存与分页缓存给出相同的 logits"},
             {"generate", "先对提示做 Prefill，再逐步 Decode"},
             {"bench", "测量 Prefill 与 Decode，并与本机的读带宽和算力对比"}}) {
        INFO(name << "\n" << r.out);
        const std::string prefix = "  " + name + " ";  // (clang 14 cannot capture a structured binding)
        const auto at = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
        REQUIRE(at != lines.end());
        CHECK(r.out.find(text) != std::string::npos);
    }
}

TEST_CASE("model errors in Chinese: a flag value, a token list, a file, a checkpoint, a config key", "[cli][i18n][model]") {
    expect_zh_error({"model", "generate", "--model", "demo-gqa", "--path", "nocache"},
                    "--path 'nocache': generate 只能用 contiguous 或 paged");
    expect_zh_error({"model", "bench", "--model", "demo-gqa", "--weight-dtype", "fp8"},
                    "--weight-dtype 'fp8': 必须是 fp32、bf16、int8、int4 或 all");
    expect_zh_error({"model", "logits", "--model", "demo-gqa", "--tokens", "1,99999"}, "--tokens '99999': 超出词表范围 [0, 511]");
    // The rules of the weight dtype, the kernels and the threads (English before 2026-11-30).
    expect_zh_error({"model", "generate", "--model", "demo-gqa", "--weight-dtype", "int3"}, "--weight-dtype 'int3': 必须是 fp32、bf16、int8 或 int4");
    expect_zh_error({"model", "generate", "--model", "demo-gqa", "--kernels", "slow"}, "--kernels 'slow': 必须是 fast 或 reference");
    expect_zh_error({"model", "generate", "--model", "demo-gqa", "--threads", "257"}, "--threads '257': 必须在 1 到 256 之间");
    expect_zh_error({"model", "logits", "--model", "demo-gqa"}, "需要 --tokens（例如 1,2,3）");
    expect_zh_error({"model", "generate", "--model", "demo-gqa", "--steps", "5000"},
                    "--steps '5000': 加上之前的 4 个 token 后超过模型的最大序列长度 1024");
    expect_zh_error({"model", "generate", "--model", "demo-gqa", "--top-k", "5"},
                    "--top-k 与 --temperature 0 同用时不起作用（贪心：取 argmax）");
    expect_zh_error({"model", "bench", "--model", "demo-gqa", "--steps", "1", "--gen", "1"}, "--gen 是 --steps 的旧写法：二者只能给一个");
    expect_zh_error({"model", "init", "--model", "demo-gqa"}, "需要 --out（要写入的检查点文件）");
    expect_zh_error({"model", "logits", "--checkpoint", "/nonexistent/demo.bin", "--tokens", "1"},
                    "--checkpoint '/nonexistent/demo.bin': 无法打开（不存在或不可读）");
    // A checkpoint shorter than its 28-byte header (7 int32).
    const std::string stub = "/tmp/inferlab-zh-model-stub.bin";
    { std::ofstream(stub, std::ios::binary) << "llama"; }
    expect_zh_error({"model", "logits", "--checkpoint", stub, "--tokens", "1"},
                    "--checkpoint '" + stub + "': 被截断：比 28 字节的文件头还短");
    const std::string incomplete = data_path("incomplete.json");
    expect_zh_error({"model", "init", "--config", incomplete, "--out", "/tmp/inferlab-zh-model-x.bin"},
                    "配置 '" + incomplete + "'：缺少键 'num_hidden_layers' or 'n_layer' or 'num_layers'");
}

// The footers are paragraphs the help formatter wraps: no line of them is a stub of a word or two
// left by a hard break inside a sentence (the English JSON-key lists broke after "paged," once).
TEST_CASE("model help footers wrap as paragraphs at 80 columns in both languages", "[cli][i18n][model]") {
    for (const char* sub : {"logits", "check-cache", "generate", "bench"}) {
        for (const char* lang : {"en", "zh"}) {
            const CliResult r = run_inferlab({"model", sub, "--help"}, "", {std::string("INFERLAB_LANG=") + lang, "COLUMNS=80"});
            REQUIRE(r.status == 0);
            std::string page = r.out;
            while (!page.empty() && page.back() == '\n') page.pop_back();
            const std::string footer = page.substr(page.rfind("\n\n") + 2);
            INFO(sub << " (" << lang << ")\n" << footer);
            const auto lines = lines_of(footer);
            // Every line but a paragraph's last one is filled past half the width.
            for (std::size_t i = 0; i + 1 < lines.size(); ++i)
                if (!lines[i + 1].empty() && lines[i + 1].rfind("JSON", 0) != 0) CHECK(inferlab::display_width(lines[i]) > 40);
        }
    }
}
