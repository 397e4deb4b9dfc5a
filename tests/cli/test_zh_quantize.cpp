// `inferlab quantize` in Chinese: the first document's §4.1 example in the section's own terms,
// schemes and storage, the sliding note, errors in Chinese, and the help's notes as paragraphs.
// What every run owes in both languages is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"
#include "../support/i18n_check.hpp"
#include "inferlab/text/table.hpp"

using namespace inferlab::test;

namespace {

const std::vector<std::string> kValue = {"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7"};
const std::vector<std::string> kValues = {"quantize", "--gen", "normal:8x64", "--outliers", "0.05:20", "--bits", "4",
                                          "--group-size", "16", "--scheme", "both"};
const std::vector<std::string> kKv = {"quantize", "--kv-gen", "64x32", "--outlier-channels", "2"};
const std::vector<std::string> kElements = {"quantize", "--elements", "32", "--bits", "8", "--group-size", "32",
                                            "--scheme", "asymmetric"};
const std::vector<std::string> kModel = {"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64"};
// Sliding layers add a note that quotes the config reader's window rule (model_config.cpp).
const std::vector<std::string> kSliding = {"quantize", "--model", "gemma-2-9b", "--seq-len", "8192"};

}  // namespace

// The first document (000_5f2b20623495609b.txt), §4.1 数值精度、权重量化与缓存量化: "一个示意的对称量化步骤为
// x̂ = Δ·clip(round(x/Δ), −Q, Q) ... x 是待量化实数；Δ>0 是量化步长；round 四舍五入到整数；Q 是可表示整数的
// 最大绝对值；clip 截断到指定区间；x̂ 是反量化后的近似值。取 x=0.37、Δ=0.1、Q=7，得到 x̂=0.4，误差 0.03。"
// Figure 15: "红点 0.37 被对齐到蓝色格点 0.4".
TEST_CASE("quantize in Chinese on the first document's 4.1 example", "[cli][i18n][quantize][textbook]") {
    const CliResult r = run_zh(kValue);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    INFO(r.out);
    CHECK(has_line(r.out, "对称均匀量化（第一份文档 §4.1），舍入：四舍五入（远离零）"));
    CHECK(has_line(r.out, "  待量化实数 x = 0.37，量化步长 Δ = 0.1，Q = 7"));
    CHECK(has_line(r.out, "  格点序号 k = clip(round(3.7), −7, 7) = 4"));
    CHECK(has_line(r.out, "  反量化 x̂ = Δ·k = 0.4"));
    CHECK(has_line(r.out, "  误差 x̂ − x = 0.03（|x − x̂| ≤ Δ/2 = 0.05 成立）"));
    CHECK(has_line(r.out, "  格点 k·Δ，Δ = 0.1，k ∈ [-7, 7]（只显示其中一段）"));
    CHECK(has_line(r.out, "  x = 0.37（x/Δ = 3.7）被对齐到格点 o（k = 4）→ x̂ = 0.4"));
    // The grid itself is drawn as in English: the same number line.
    const CliResult en = run_inferlab(kValue);
    REQUIRE(en.status == 0);
    CHECK(lines_of(r.out)[7] == lines_of(en.out)[7]);
    CHECK(lines_of(r.out)[8] == lines_of(en.out)[8]);

    const CliResult x = run_zh(with(kValue, {"--explain"}));
    REQUIRE(x.status == 0);
    INFO(x.out);
    CHECK(has_line(x.out, "对称量化 x̂ = Δ·clip(round(x/Δ), −Q, Q)   （第一份文档 §4.1）"));
    CHECK(x.out.find("x/Δ = 0.37 / 0.1 = 37/10 = 3.7（37/10 为精确值") != std::string::npos);
    CHECK(has_line(x.out, "  round(3.7) = 4   四舍五入（远离零）"));
    CHECK(has_line(x.out, "  clip(4, −7, 7) = 4   （截断到 [−Q, Q]）"));
    CHECK(has_line(x.out, "  反量化 x̂ = 0.1 × 4 = 0.4"));
    CHECK(has_line(x.out, "  误差 = x̂ − x = 0.4 − 0.37 = 0.03"));
    // The section's own terms, as it writes them.
    for (const char* term : {"对称量化", "量化步长", "待量化实数", "反量化", "格点", "四舍五入", "截断", "误差"}) {
        INFO(term);
        CHECK((r.out + x.out).find(term) != std::string::npos);
    }
}

TEST_CASE("quantize in Chinese: schemes, zero points, scales and storage in the document's terms",
          "[cli][i18n][quantize]") {
    const CliResult v = run_zh(kValues);
    REQUIRE(v.status == 0);
    INFO(v.out);
    CHECK(v.out.rfind("量化 8 × 64 个正态分布值（种子 1），异常值 0.05:20：4 比特（int4），尺度按组（每\n"
                      "组 16），舍入：四舍五入（远离零）\n",
                      0) == 0);
    CHECK(v.out.find("存储（量化前 fp32，尺度 fp16，零点 8 比特）：") != std::string::npos);
    for (const char* word : {"对称", "非对称", "量化方式", "最大误差", "偏差", "截断数", "成立", "组数", "尺度+零点 (B)"}) {
        INFO(word);
        CHECK(v.out.find(word) != std::string::npos);
    }
    const CliResult s = run_zh(kElements);
    REQUIRE(s.status == 0);
    CHECK(s.out == "32 个数值，int8，每组 32 个，每组一个 fp16 尺度和一个 8 比特零点：\n"
                   "  数据 32 B + 元数据 3 B = 35 B（fp32 下为 128 B）→ 每个数值 8.75 比特\n");
    const CliResult kv = run_zh(kKv);
    REQUIRE(kv.status == 0);
    INFO(kv.out);
    CHECK(kv.out.rfind("KV 缓存量化：int4（对称），生成的 K 与 V，64 个 token × 32 个通道，2 个 K 通道\n×20（种子 1）\n", 0) ==
          0);
    CHECK(kv.out.find("  K 按通道量化优于按 token 量化：MSE ") != std::string::npos);
    CHECK(kv.out.find("  KIVI 对 K 按通道量化、对 V 按 token 量化；权重量化（SmoothQuant）是另一个问\n    题，二者对象不同。\n") !=
          std::string::npos);
    for (const char* row : {"  K 按通道 ", "  K 按 token ", "  V 按 token ", "  V 按通道 "}) CHECK(kv.out.find(row) != std::string::npos);
    const CliResult m = run_zh(kModel);
    REQUIRE(m.status == 0);
    INFO(m.out);
    CHECK(m.out.rfind("llama-3-8b 的 KV Cache，S = 8192（kv-mem 的公式），量化后每 64 个数值一个 fp16\n尺度：\n", 0) == 0);
    CHECK(m.out.find("llama-3-8b 的权重（8,030,261,248 个参数，全部量化：嵌入、归一化层和 LM head 也算\n在内，实际部署通常把它们留在 "
                     "16 位；int8/int4 每 32 个权重一个 fp16 尺度）：\n") != std::string::npos);
    CHECK(m.out.find("16,060,522,496") != std::string::npos);  // the weights table's bytes in groups of three
    CHECK(m.out.find("  总计：bf16 1,073,741,824 B = 1 GiB = 1.073741824 GB；int8 ") != std::string::npos);
}

// The sliding note quotes the config reader's window rule, in Chinese too (model_config.cpp).
TEST_CASE("quantize in Chinese: the sliding-window note says the config reader's rule", "[cli][i18n][quantize]") {
    std::string flat;  // the text with its wrapped lines joined
    for (const auto& line : lines_of(run_zh(kSliding).out)) flat += line.substr(std::min(line.find_first_not_of(' '), line.size()));
    CHECK(flat.find("gemma2：层交替，偶数层（0、2、…）以窗口 4096 滑动") != std::string::npos);
}

TEST_CASE("quantize errors in Chinese name the flag, the value and the rule", "[cli][i18n][quantize][errors]") {
    expect_zh_error({"quantize", "--x", "0.37", "--step", "0.1", "--bits", "1"}, "--bits '1': 必须在 2 到 16 之间");
    expect_zh_error({"quantize", "--gen", "normal:4x10", "--group-size", "4"}, "--group-size '4': 必须整除行长 10（不做 padding）");
    // The library's rule, rethrown with the value as typed (#15): still a msgid with its values.
    expect_zh_error({"quantize", "--gen", "normal:99999x99999"}, "--gen 'normal:99999x99999': 最多只能有 10,000,000 个值");
    expect_zh_error({"quantize", "--gen", "normal:1x2x3"}, "--gen 'normal:1x2x3': 必须是 N 或 ROWSxCOLS，且只含一个 'x'");
    expect_zh_error({"quantize", "--x", "1"}, "使用 --x 时必须给出 --step（Δ，量化步长）");
    expect_zh_error(with(kValue, {"--scheme", "asymmetric"}),
           "--scheme 对 --x 不起作用（运行 inferlab quantize --help 查看每种输入读取哪些选项）");
    expect_zh_error({"quantize", "--values", "1,2", "--outliers", "0.1:2"}, "--outliers 只适用于 --gen");
    expect_zh_error({"quantize", "--model", "llama-3-8b", "--seq-len", "10", "--group-size", "7"},
           "--group-size '7': 必须整除头宽度（d_k = 128）");
    expect_zh_error({"quantize", "--values", "1e30", "--source-dtype", "fp16"},
           "--values '1e+30': 超出量化前精度 fp16（--source-dtype）的范围：[-65504, 65504]");
    expect_zh_error({"quantize", "--file", data_path("empty.txt")}, "--file '" + data_path("empty.txt") + "': 不含任何数");
    // English keeps its words: the same errors, as before.
    expect_error({"quantize", "--gen", "normal:99999x99999"}, "--gen 'normal:99999x99999': must hold at most 10,000,000 values");
    expect_error({"quantize", "--model", "llama-3-8b", "--seq-len", "10", "--group-size", "7"},
                 "--group-size '7': must divide the head width (d_k = 128)");
}

// The footer's notes (after the last example) are paragraphs the formatter wraps: no stub line of
// a word or two left by a hard break.
TEST_CASE("quantize --help wraps its notes as paragraphs at 80 columns in both languages", "[cli][i18n][quantize]") {
    for (const auto& lang : {"zh", "en"}) {
        const CliResult h = run_inferlab({"quantize", "--help", "--lang", lang}, "", {"COLUMNS=80"});
        REQUIRE(h.status == 0);
        INFO(h.out);
        CHECK(widest_line(h.out) <= 80);
        // The footer's notes (after the last example) are paragraphs the formatter wraps: no stub
        // line of a word or two left by a hard break.
        const auto lines = lines_of(h.out);
        std::size_t last_example = 0;
        for (std::size_t i = 0; i < lines.size(); ++i)
            if (lines[i].rfind("  inferlab ", 0) == 0) last_example = i;
        REQUIRE(last_example > 0);
        for (std::size_t i = last_example + 1; i < lines.size(); ++i) {
            const std::string& l = lines[i];
            INFO(l);
            if (inferlab::display_width(l) < 40 && !l.empty())
                CHECK((l.back() == '.' || (l.size() >= 3 && l.compare(l.size() - 3, 3, "。") == 0)));
        }
    }
}
