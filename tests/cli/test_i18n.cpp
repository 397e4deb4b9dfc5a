// inferlab in Chinese (issue #18): the language choice, verify's table, errors, kv-mem on the first
// document's §2.1.1 example, every --help page within 80 columns (#15), and no catalogue message
// left in English in a Chinese run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "inferlab/base/i18n.hpp"
#include "inferlab/text/table.hpp"
#include "../support/cli.hpp"
#include "../support/i18n_check.hpp"

using namespace inferlab::test;

namespace {

// Every subcommand path listed under the top-level and nested "Subcommands:" headings.
std::vector<std::string> subcommand_paths() {
    std::vector<std::string> out, todo = {""};
    while (!todo.empty()) {
        const std::string path = todo.back();
        todo.pop_back();
        std::vector<std::string> args;
        std::istringstream words(path);
        for (std::string w; words >> w;) args.push_back(w);
        args.push_back("--help");
        const CliResult r = run_inferlab(args);
        REQUIRE(r.status == 0);
        out.push_back(path);
        bool in_block = false;
        for (const auto& line : lines_of(r.out)) {
            if (line == "Subcommands:") in_block = true;
            else if (line.empty()) in_block = false;
            // A name line "  kv-mem   description"; a wrapped description continues further in.
            else if (in_block && line.size() > 2 && line[2] != ' ')
                todo.push_back((path.empty() ? "" : path + " ") + line.substr(2, line.find(' ', 2) - 2));
        }
    }
    return out;
}

}  // namespace

TEST_CASE("verify in Chinese: from LANG and from --lang, the same table", "[cli][i18n]") {
    const CliResult by_locale = run_inferlab({"verify"}, "", {"LANG=zh_CN.UTF-8"});
    const CliResult by_flag = run_inferlab({"verify", "--lang", "zh"});
    const CliResult english = run_inferlab({"verify"});
    REQUIRE(by_locale.status == 0);
    CHECK(by_locale.err.empty());
    CHECK(by_locale.out == by_flag.out);
    CHECK(by_locale.out.find("编号") != std::string::npos);
    CHECK(by_locale.out.find("计算值") != std::string::npos);
    CHECK(by_locale.out.find("通过") != std::string::npos);
    CHECK(by_locale.out.find("PASS") == std::string::npos);
    CHECK(english.out.find("PASS") != std::string::npos);
    // The tally keeps its numbers: "N passed, 0 failed" in English, "N 项通过，0 项失败" here.
    const std::string tally = lines_of(english.out).back();
    const std::string passed = tally.substr(0, tally.find(' '));
    CHECK(lines_of(by_locale.out).back() == passed + " 项通过，0 项失败");
    CHECK(widest_line(by_locale.out) <= 80);
    // LC_ALL outranks LANG, and --lang outranks both (on the kv examples only: a full verify takes seconds).
    const std::vector<std::string> kv = {"verify", "--id", "kv."};
    const std::string kv_en = run_inferlab(kv).out, kv_zh = run_inferlab(kv, "", zh_env()).out;
    CHECK(kv_en != kv_zh);
    CHECK(run_inferlab(kv, "", {"LANG=zh_CN.UTF-8", "LC_ALL=C.UTF-8"}).out == kv_en);
    CHECK(run_inferlab({"verify", "--id", "kv.", "--lang", "en"}, "", {"LANG=zh_CN.UTF-8"}).out == kv_en);
    CHECK(run_inferlab({"--lang", "zh", "verify", "--id", "kv."}).out == kv_zh);
}

TEST_CASE("a bad --lang or INFERLAB_LANG is one error line and exit 2", "[cli][i18n]") {
    for (const auto& [args, env, line] :
         std::vector<std::tuple<std::vector<std::string>, std::vector<std::string>, std::string>>{
             {{"verify", "--lang", "fr"}, {}, "inferlab: error: --lang 'fr': must be zh or en\n"},
             {{"--lang=", "verify"}, {}, "inferlab: error: --lang '': must be zh or en\n"},
             {{"verify"}, {"INFERLAB_LANG=xx", "LANG=zh_CN.UTF-8"}, "inferlab: error: INFERLAB_LANG 'xx': must be zh or en\n"}}) {
        const CliResult r = run_inferlab(args, "", env);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err == line);
    }
}

TEST_CASE("errors in Chinese: a flag value, a file, a config key, a parse error", "[cli][i18n]") {
    expect_zh_error({"kv-mem", "--layers", "0", "--kv-heads", "8", "--head-dim", "128", "--seq-len", "8192", "--kv-dtype",
                     "bf16"},
                    "--layers '0': 必须是正整数");
    expect_zh_error({"kv-mem", "--model", "nope", "--seq-len", "1"},
                    "--model 'nope': 不是随附的模型（已有：deepseek-v3, demo-gqa, gemma-2-9b, gpt2, llama-2-7b, "
                    "llama-3-8b, llama-3.1-70b, mistral-7b-v0.1, mixtral-8x7b, qwen2.5-7b, ref-110m, ref-1b）");
    expect_zh_error({"kv-mem", "--config", "/nonexistent/config.json", "--seq-len", "1", "--kv-dtype", "bf16"},
                    "--config '/nonexistent/config.json': 无法打开（不存在或不可读）");
    const std::string incomplete = data_path("incomplete.json");
    expect_zh_error({"kv-mem", "--config", incomplete, "--seq-len", "1", "--kv-dtype", "bf16"},
                    "配置 '" + incomplete + "'：缺少键 'num_hidden_layers' or 'n_layer' or 'num_layers'");
    expect_zh_error({"kv-mem", "--bogus"}, "--bogus：kv-mem 没有这个选项（见 'inferlab kv-mem --help'）");
    expect_zh_error({"kv-mem", "extra"}, "此处不应出现：extra（见 'inferlab kv-mem --help'）");
    expect_zh_error({"kv-mem", "--layers"}, "--layers 需要一个值（见 'inferlab kv-mem --help'）");
    expect_zh_error({"kv-mem", "--json", "--explain"}, "--json 不能与 --explain 同时给出（见 'inferlab kv-mem --help'）");
    expect_zh_error({"nope"}, "未知的子命令 'nope'（可用的子命令：kv-mem, decode-roofline, spec-accept, serve-sim, best-of-n, "
                              "quantize, model, verify, figure）");
}

// The first document (000_5f2b20623495609b.txt), §2.1.1 从每个数值累加到总字节数: L=32, B=1,
// S=8192, H_kv=8, d=128, b=2 (BF16) gives 2×32×1×8192×8×128×2 = 1,073,741,824 字节, 即 1 GiB.
TEST_CASE("kv-mem in Chinese on the first document's 2.1.1 example", "[cli][i18n][textbook]") {
    const std::vector<std::string> args = {"kv-mem",  "--layers",   "32",   "--kv-heads", "8",    "--head-dim",
                                           "128",     "--seq-len",  "8192", "--kv-dtype", "bf16", "--lang", "zh"};
    const CliResult r = run_inferlab(args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "模型        层数 L=32，每层 K/V 头数 H_kv=8，d=128，bf16（b = 2 B）   [选项]\n"
          "每 token    s_token = 2·L·H_kv·d·b = 131,072 B = 128 KiB = 131.072 kB （每层\n"
          "            4,096 B = 4 KiB = 4.096 kB）\n"
          "请求        1 × S=8,192 个 token\n"
          "总计        M_KV = 1,073,741,824 B = 1 GiB = 1.073741824 GB\n");
    std::vector<std::string> explain = args;
    explain.push_back("--explain");
    const CliResult x = run_inferlab(explain);
    REQUIRE(x.status == 0);
    // The document's own terms and its substitution, digit for digit.
    CHECK(x.out.find("KV 缓存") != std::string::npos);
    CHECK(x.out.find("M_KV = 2·L·B·S·H_kv·d·b") != std::string::npos);
    CHECK(x.out.find("= 2 × 32 × 1 × 8192 × 8 × 128 × 2") != std::string::npos);
    CHECK(x.out.find("1,073,741,824 B = 1 GiB") != std::string::npos);
    CHECK(x.out.find("1 GiB = 2^30 B") != std::string::npos);
    CHECK(widest_line(x.out) <= 80);
    // JSON is the same document in either language.
    std::vector<std::string> json_args = args;
    json_args.push_back("--json");
    std::vector<std::string> json_en(json_args.begin(), json_args.end() - 3);
    json_en.push_back("--json");
    CHECK(run_inferlab(json_args).out == run_inferlab(json_en).out);
}

// What a Chinese help page quotes as typed: the unit suffixes, and verify's JSON keys.
const std::vector<std::string> kQuotedInHelp = {"kB MB GB TB", "KiB MiB GiB TiB",
                                                "id document section description inputs expected",
                                                "value unit tolerance exact computed computed value pass passed failed"};

TEST_CASE("every --help page fits 80 columns in English and in Chinese, and has no English prose in Chinese", "[cli][i18n]") {
    const auto paths = subcommand_paths();
    CHECK(paths.size() >= 9);  // the top level and its eight subcommands at least
    CHECK(paths.size() <= 40);
    for (const auto& path : paths) {
        for (const auto& env : {std::vector<std::string>{}, zh_env()}) {
            std::vector<std::string> args;
            std::istringstream words(path);
            for (std::string w; words >> w;) args.push_back(w);
            args.push_back("--help");
            const CliResult r = run_inferlab(args, "", env);
            INFO("inferlab " << path << " --help " << (env.empty() ? "(en)" : "(zh)") << "\n" << r.out);
            CHECK(r.status == 0);
            CHECK(widest_line(r.out) <= 80);
            if (env.empty()) continue;
            // No English prose in Chinese; the examples are command lines, kept as typed.
            CliResult prose = r;
            prose.out.clear();
            for (const auto& line : lines_of(r.out))
                if (line.rfind("  inferlab ", 0) != 0) prose.out += line + "\n";
            check_chinese_result(prose, args, kQuotedInHelp);
        }
    }
}

TEST_CASE("kv-mem --help in Chinese: the document's terms, CLI11's words translated", "[cli][i18n]") {
    const CliResult r = run_inferlab({"kv-mem", "--help", "--lang", "zh"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("L，层数") != std::string::npos);
    CHECK(r.out.find("H_kv，每层 K/V 头数") != std::string::npos);
    CHECK(r.out.find("显示本帮助并退出") != std::string::npos);
    CHECK(r.out.find("示例：") != std::string::npos);
    CHECK(r.out.find("选项:") != std::string::npos);
}

