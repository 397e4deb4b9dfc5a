// model speculate, kv-quant, roofline, paged and pitfall in Chinese: the documents' terms in the
// text, --explain and --help, JSON's prose fields, and errors in Chinese. What every run owes in
// both languages is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "inferlab/text/table.hpp"
#include "../support/cli.hpp"
#include "../support/i18n_check.hpp"

using namespace inferlab::test;

namespace {

using Args = std::vector<std::string>;

std::string joined(const Args& args) {
    std::string s = "inferlab";
    for (const auto& a : args) s += " " + a;
    return s;
}

// `text` without its example command lines ("  inferlab ..."), which are not prose.
std::string prose_of_ours(const std::string& text) {
    std::string out;
    for (const auto& line : lines_of(text))
        if (line.rfind("  inferlab ", 0) != 0) out += line + "\n";
    return out;
}

// One Chinese run under COLUMNS=80, checked as check_chinese_output() checks it (no catalogue
// text left in English; no run of four English words), on the same output (each
// command runs once); and stdout within 80 columns (an error is one line, however long).
CliResult zh_checked(const Args& args, int status = 0) {
    const CliResult r = run_inferlab(args, "", kZh80);
    INFO(joined(args) << "\n" << r.out << r.err);
    CHECK(r.status == status);
    const std::string all = r.out + r.err;
    for (const auto& piece : english_catalogue_pieces()) {
        INFO("English catalogue text: \"" << piece << "\"");
        CHECK(all.find(piece) == std::string::npos);
    }
    for (const auto& run : english_runs(prose_of_ours(all))) {
        INFO("English prose: \"" << run << "\"");
        CHECK(false);
    }
    for (const auto& line : lines_of(r.out)) {
        INFO("line: " << line);
        CHECK(inferlab::display_width(line) <= 80);
    }
    return r;
}

// The bad-input contract in Chinese: exit 2, nothing on stdout, exactly `line` after the prefix.
void expect_checked_zh_error(const Args& args, const std::string& line) {
    const CliResult r = zh_checked(args, 2);
    CHECK(r.out.empty());
    CHECK(r.err == "inferlab: error: " + line + "\n");
}

}  // namespace

// The first document (000_5f2b20623495609b.txt), §2.1.2 可变长度请求与物理分页, 图 8 逻辑块顺序与
// 物理缓存位置分离: a sequence's 逻辑块 sit anywhere in the 物理池; "PagedAttention 用分页组织缓存，
// 减少碎片并支持前缀共享". model paged's default run is that picture: two prompts sharing the prefix
// 1,2,3 on a pool of 16 blocks of 2 tokens.
TEST_CASE("model paged in Chinese: the first document's 2.1.2 paged cache, its terms and numbers", "[cli][i18n][textbook]") {
    const CliResult r = zh_checked({"model", "paged"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    // One block of demo-gqa (L = 6, H_kv = 2, d = 48), float32 K and V of 2 tokens: 2·6·2·48·2·4 B.
    const std::uint64_t block = 2ull * 6 * 2 * 48 * 2 * 4;
    CHECK(block == 9216);
    CHECK(has_line(r.out, "物理池：16 个块，每块 2 个 token（9,216 B = 9 KiB = 9.216 kB）"));
    CHECK(has_line(r.out, "前缀共享：开启"));
    CHECK(has_line(r.out, "第 0 步：已用 4 块，空闲 12 块"));
    CHECK(has_line(r.out, "  序列 1 被接纳，与序列 0 前缀共享 3 个 token"));
    CHECK(has_line(r.out, "  序列 1 首次写入共享块时复制了该块（写时复制）"));
    CHECK(has_line(r.out, "  序列  状态    长度  块（逻辑块→物理块）  引用数  末块填充"));
    CHECK(has_line(r.out, "第 2 步：已用 6 块，空闲 10 块（峰值）；完成的序列归还其块后空闲 16 块"));
    CHECK(has_line(r.out, "  序列 0 完成：它的块归还物理池"));
    // Peaks: 6 and 7 blocks of 9,216 B; sharing saves the one block both tables list.
    CHECK(has_line(r.out, "前缀共享时的峰值：  第 2 步 6 个块"));
    CHECK(has_line(r.out, "  6 × 9,216 B = 55,296 B = 54 KiB = 55.296 kB"));
    CHECK(has_line(r.out, "不共享时的峰值：    第 2 步 7 个块"));
    CHECK(has_line(r.out, "  7 × 9,216 B = 64,512 B = 63 KiB = 64.512 kB"));
    CHECK(6 * block == 55296);
    CHECK(7 * block == 64512);
    CHECK(r.out.find("节省：9,216 B = 9 KiB = 9.216 kB（前缀共享在峰值（第 2 步）节省 1 个块") != std::string::npos);
    CHECK(has_line(r.out, "写时复制：1 次；抢占：0 次（重算 0 个 token）；结束时物理池完整：是"));
    // --explain: the section's own words, 逻辑块, 物理池, 分页, 前缀共享.
    const CliResult x = zh_checked({"model", "paged", "--explain"});
    REQUIRE(x.status == 0);
    CHECK(x.out.rfind(r.out, 0) == 0);  // the text, then the note
    for (const char* term : {"§2.1.2", "可变长度请求与物理分页", "逻辑块", "物理块", "物理池", "前缀共享", "写时复制", "峰值"}) {
        INFO(term);
        CHECK(x.out.find(term, r.out.size()) != std::string::npos);
    }
}

// The first document (000_5f2b20623495609b.txt), §3.1 投机解码与分布保持, §3.1.1 一次验证与实际前进
// 长度 and §3.1.2 接受质量与残差补偿: a draft (草稿) proposes, the target verifies in one forward pass
// (前向), rejected drafts are discarded (丢弃), acceptance α(x) = min(1, p(x)/q(x)) with the
// residual (残差), the accepted mass Σ min(p, q) (接受质量) is the acceptance rate (接受率).
TEST_CASE("model speculate in Chinese: the first document's 3.1 terms around the measured numbers", "[cli][i18n][textbook]") {
    const Args args = {"model", "speculate", "--steps", "16", "--cost-ratio", "0.3"};
    const CliResult r = zh_checked(args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    Args json_args = args;
    json_args.push_back("--json");
    const auto j = parse_json(run_inferlab(json_args));
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() >= 8);
    CHECK(lines[0] == "投机解码，γ = 4，温度 1（采样种子 1）");
    CHECK(lines[1].rfind("  target：", 0) == 0);
    CHECK(lines[2] == "  草稿： target 的前 3 层（共 6 层），权重 × (1 + 0.05·N(0,1))");
    CHECK(lines[3] == "  " + std::to_string(j["rounds"].get<int>()) + " 轮共生成 16 个 token：target 前向 " +
                          std::to_string(j["target_forward_passes"].get<int>()) + " 次，草稿前向 " +
                          std::to_string(j["draft_forward_passes"].get<int>()) + " 次，丢弃 " +
                          std::to_string(j["drafts_discarded"].get<int>()) + " 个草稿");
    CHECK(lines[4] == "  草稿位置  判定数  接受  实测 α  预测 Σ min(p, q)");
    CHECK(r.out.find("  接受率 " + fmt::format("{:.4f}", j["acceptance_rate"].get<double>()) +
                     "，对照 spec-accept 的接受质量 Σ min(p, q) = " +
                     fmt::format("{:.4f}", j["predicted_acceptance_rate"].get<double>())) != std::string::npos);
    std::string joined = r.out;  // the sentence as one line: Chinese wraps between any two characters
    for (std::size_t at; (at = joined.find("\n  ")) != std::string::npos;) joined.erase(at, 3);
    CHECK(joined.find("共产出 " + std::to_string(j["tokens_produced"].get<int>()) + " 个、保留 " +
                      std::to_string(j["tokens_generated"].get<int>()) + " 个）实际前进 " +
                      fmt::format("{:.3f}", j["tokens_per_round"].get<double>()) + " 个 token") != std::string::npos);
    CHECK(r.out.find("草稿/target 成本比为 0.3 时的预测加速：" + fmt::format("{:.3f}", j["predicted_speedup"].get<double>())) !=
          std::string::npos);
    Args explain = args;
    explain.push_back("--explain");
    const CliResult x = zh_checked(explain);
    REQUIRE(x.status == 0);
    for (const char* term : {"接受律", "残差分布", "α(x) = min(1, p(x)/q(x))", "预测的接受质量", "Σ_x min(p(x), q(x))"}) {
        INFO(term);
        CHECK(x.out.find(term) != std::string::npos);
    }
}

TEST_CASE("model paged --json in Chinese: its prose fields stay English", "[cli][i18n]") {
    const auto j = parse_json(run_inferlab({"model", "paged", "--json"}, "", zh_env()));
    CHECK(j["saving_note"].get<std::string>().rfind("sharing saves 1 block at its peak", 0) == 0);
    CHECK(j["steps"][0]["events"][0] == "seq 0 admitted");
}

TEST_CASE("model measure and paged commands in Chinese: the documents' words where they print them", "[cli][i18n]") {
    const CliResult pit = zh_checked({"model", "pitfall", "threshold-accept"});
    CHECK(pit.out.find("第一份文档，§3.1.2（接受质量与残差补偿）") != std::string::npos);
    CHECK(pit.out.find("  出处：第一份文档") != std::string::npos);
    const CliResult how = zh_checked({"model", "pitfall", "gib-as-gb", "--explain"});
    CHECK(how.out.find("\n计算过程：\n  - 字节数 = 2·L·B·S·H_kv·d·b/8 = 2·32·1·8192·8·128·16/8 = 1073741824 B\n") !=
          std::string::npos);
    const CliResult kv = zh_checked({"model", "kv-quant", "--positions", "8", "--steps", "4"});
    CHECK(kv.out.rfind("KV Cache 量化为 int8（KIVI：K 按通道", 0) == 0);
    const CliResult help = zh_checked({"model", "paged", "--help"});
    CHECK(help.out.find("可观察的分页 KV Cache：块表、前缀共享、写时复制") != std::string::npos);
    CHECK(help.out.find("物理池中的块数，至多 1,048,576（默认 16）") != std::string::npos);
}

TEST_CASE("model measure and paged commands: errors in Chinese name the flag, the value and the rule", "[cli][i18n]") {
    expect_checked_zh_error({"model", "paged", "--prompts", "1,2;1,2,3,4,5", "--blocks", "3", "--block-size", "2", "--steps", "3"},
                    "--blocks '3': 单独容纳序列 1 也不够：它缓存的 7 个 token（提示词 5 个 + 生成 3 个 − 1，最后一个从不"
                    "回填）需要 4 个块（每块 2 个 token），多于物理池的 3 个块");
    expect_checked_zh_error({"model", "paged", "--prompts", "1,02"},
                    "--prompts '1,02': 项 '02' 有前导零：token ID 用逗号分隔，不写千位分隔符，也不写前导零（1,000 会被"
                    "读成 ID 1 和 0）");
    expect_checked_zh_error({"model", "paged", "--prompts", "1;;2"}, "--prompts '1;;2': 每个提示至少需要一个 token（a,b;c,d）");
    expect_checked_zh_error({"model", "paged", "--prompts", "1,99999"}, "--prompts '99999': 超出词表范围 [0, 511]");
    expect_checked_zh_error({"model", "kv-quant", "--scheme", "x"}, "--scheme 'x': 必须是 kivi（K 按通道，V 按 token）或 per-token");
    expect_checked_zh_error({"model", "speculate", "--greedy", "--temperature", "1"},
                    "--temperature '1': 与 --greedy 同用时无效（贪心即取 argmax）");
    expect_checked_zh_error({"model", "pitfall"}, "必须给出 NAME：一个陷阱名称，或用 --list 查看全部");
    // The library's draft rules, said again under this command's flags, keep their msgids.
    expect_checked_zh_error({"model", "speculate", "--draft-layers", "9"}, "--draft-layers '9': 必须在 1 与 target 的 6 层之间");
    expect_checked_zh_error({"model", "speculate", "--perturb", "-0.5"}, "--perturb '-0.5': 不能为负");
    expect_checked_zh_error({"model", "pitfall", "gib-as-gb", "--model", "demo-gqa"},
                    "--model 'demo-gqa': 对 gib-as-gb 无效：它是不使用模型的计算型陷阱");
    const CliResult nope = zh_checked({"model", "pitfall", "nope"}, 2);
    CHECK(nope.out.empty());
    CHECK(nope.err.rfind("inferlab: error: NAME 'nope': 不是已有的陷阱（可选：stale-cache, ", 0) == 0);
}
