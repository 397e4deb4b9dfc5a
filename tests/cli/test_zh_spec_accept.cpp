// inferlab spec-accept in Chinese: the first document's §3.1.2 example and the §3.1.1 round with
// the sections' own terms, errors in Chinese; and CSV probabilities in the one formatting
// best-of-n's tables use. What every run owes in both languages is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"
#include "../support/i18n_check.hpp"

using namespace inferlab::test;

namespace {

// The first document's §3.1.2 example: p = [0.6, 0.3, 0.1], q = [0.4, 0.4, 0.2].
const std::vector<std::string> kDoc = {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"};
// A Chinese run at the default width (COLUMNS=80 set, so the test does not read the caller's).
CliResult zh80(const std::vector<std::string>& args) { return run_inferlab(args, "", {"INFERLAB_LANG=zh", "COLUMNS=80"}); }

}  // namespace

// The first document (000_5f2b20623495609b.txt), §3.1.2 接受质量与残差补偿: p = [0.6,0.3,0.1],
// q = [0.4,0.4,0.2]; 三个接受概率为 [1,0.75,0.5]，被接受的质量为 [0.4,0.3,0.1]，合计 0.8；拒绝概率为
// 0.2；正残差为 [0.2,0,0]，拒绝后必选第一个 token；最终输出质量为 [0.4+0.2,0.3,0.1] = p.
TEST_CASE("spec-accept in Chinese on the first document's 3.1.2 example", "[cli][i18n][textbook][spec-accept]") {
    const CliResult r = zh80(kDoc);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    // The section's own terms, each where the document uses it.
    for (const char* term : {"投机采样", "接受质量", "接受概率", "拒绝概率", "正残差", "残差", "重采样", "最终输出质量"}) {
        INFO(term);
        CHECK(r.out.find(term) != std::string::npos);
    }
    // 接受概率 [1, 0.75, 0.5] is the α column, 接受质量 [0.4, 0.3, 0.1] the q·α column (exact
    // fractions: 3/4 is 0.75, 2/5 is 0.4), 合计 0.8, 拒绝概率 0.2, output = p.
    CHECK(r.out == "投机采样，单个位置（第一份文档 §3.1.2 接受质量与残差补偿）：精确分数\n"
          "  token     p    q  α = min(1, p/q)  接受 q·α  [p − q]₊  残差分布 r  输出\n"
          "  ─────  ────  ───  ───────────────  ────────  ────────  ──────────  ────\n"
          "  0       3/5  2/5                1       2/5       1/5           1   3/5\n"
          "  1      3/10  2/5              3/4      3/10         0           0  3/10\n"
          "  2      1/10  1/5              1/2      1/10         0           0  1/10\n"
          "  接受概率 Σ min(p, q) = 4/5；拒绝概率 = 1/5\n"
          "  正残差 [p − q]₊ 归一化为 r = [p − q]₊ / (1/5) = [1, 0, 0]；拒绝后从 r 重采样\n"
          "  最终输出质量 = 接受质量 + 拒绝概率·r = [3/5, 3/10, 1/10]；与 p 的最大差：0\n");
    const CliResult x = zh80(with(kDoc, {"--explain"}));
    REQUIRE(x.status == 0);
    CHECK(x.out == "α(x) = min(1, p(x)/q(x))；接受质量 q(x)·α(x) = min(p(x), q(x))\n"
          "x = 0: α = min(1, (3/5)/(2/5)) = 1; q·α = 2/5\n"
          "x = 1: α = min(1, (3/10)/(2/5)) = 3/4; q·α = 3/10\n"
          "x = 2: α = min(1, (1/10)/(1/5)) = 1/2; q·α = 1/10\n"
          "接受概率 = Σ q·α = 4/5；拒绝概率 = 1 − 接受概率 = 1/5\n"
          "r(v) = [p(v) − q(v)]₊ / Σ_u [p(u) − q(u)]₊ = [1/5, 0, 0] / (1/5) = [1, 0, 0]\n"
          "最终输出质量 = q·α + 拒绝概率·r：\n"
          "x = 0: 2/5 + (1/5) × 1 = 3/5 (p = 3/5)\n"
          "x = 1: 3/10 + (1/5) × 0 = 3/10 (p = 3/10)\n"
          "x = 2: 1/10 + (1/5) × 0 = 1/10 (p = 1/10)\n"
          "max |输出 − p| = 0\n");
}

TEST_CASE("spec-accept in Chinese: the round of the document's 3.1.1 figure", "[cli][i18n][textbook][spec-accept]") {
    // 000_5f2b20623495609b.txt §3.1.1 一次验证与实际前进长度: 四个草稿，前两个被接受、第三个被拒绝，
    // 输出两个已接受 token 加一个从残差分布重采样的 token；第四个草稿送入弃置槽；实际前进三项。
    const CliResult r = zh80({"spec-accept", "--gamma", "4", "--outcomes", "accept,accept,reject"});
    REQUIRE(r.status == 0);
    CHECK(r.out ==
          "一轮草稿，γ = 4（第一份文档 §3.1.1 一次验证与实际前进长度）：target 一次前向验证\n"
          "全部 4 个位置；接受沿前缀从左向右推进。\n"
          "  草稿: 1\n"
          "    结果: 接受\n"
          "    原因: u < α(x)：按草稿输出\n"
          "\n"
          "  草稿: 2\n"
          "    结果: 接受\n"
          "    原因: u < α(x)：按草稿输出\n"
          "\n"
          "  草稿: 3\n"
          "    结果: 拒绝：从残差重采样\n"
          "    原因: u ≥ α(x)：草稿被替换为从 r = [p − q]₊ / Σ[p − q]₊ 重采样的 token\n"
          "\n"
          "  草稿: 4\n"
          "    结果: 丢弃\n"
          "    原因:\n"
          "      它的 target 分布以含有被拒绝草稿的前缀为条件；该前缀已经改变，这个概率不再\n"
          "      适用\n"
          "  实际前进 3 个 token（2 个接受 + 1 个重采样）；草稿提议 4 项；target 验证 4 个\n"
          "    位置；丢弃 1 项\n");
}

TEST_CASE("spec-accept errors in Chinese: the flag, the value and the rule, exit 2", "[cli][i18n][spec-accept][errors]") {
    expect_zh_error({"spec-accept", "--p", "0.6,0.4", "--q", "0.4,0.4,0.2"}, "--q 有 3 项，--p 有 2 项：p 与 q 必须覆盖同一词表");
    expect_zh_error({"spec-accept", "--p", "0.6,0.6,0.1", "--q", "0.4,0.4,0.2"},
                    "--p '总和 1.3': 总和必须在 1e-9 以内等于 1（或使用 --normalize）");
    expect_zh_error({"spec-accept", "--p", "0.6,0.5,-0.1", "--q", "0.4,0.4,0.2"}, "--p '-0.1': 各项不能为负");
    expect_zh_error({"spec-accept", "--gamma", "4", "--outcomes", "accept,reject,accept"},
                    "--outcomes 'accept': 出现在拒绝之后：首次拒绝之后的草稿不经判断直接丢弃");
    expect_zh_error({"spec-accept", "--gamma", "2", "--outcomes", "accept,accept,accept"}, "--outcomes '3 个结果': 多于 --gamma 2");
    expect_zh_error(with(kDoc, {"--seed", "3"}), "没有 --simulate 时 --seed 不起作用");
    expect_zh_error({"spec-accept"}, "没有可计算的内容：请给出 --p 和 --q，或 --alpha 加 --gamma，或 --gamma 加 --outcomes");
    expect_zh_error(with(kDoc, {"--simulate", "1000000000"}), "--simulate '1000000000': 不能超过 100,000,000 个样本");
}

// Issue #29, one CSV convention: a probability in a CSV cell is the JSON's double, every digit
// that reads back as it (as best-of-n and every other table write it), under the JSON's name.
TEST_CASE("spec-accept --csv writes the JSON's probabilities to the last digit", "[cli][contract][spec-accept]") {
    // α(0) = min(1, 0.1/0.3) = 1/3 and r = [0, 1]: the double 1/3 has 16 significant digits.
    const CliResult r = run_inferlab({"spec-accept", "--p", "0.1,0.9", "--q", "0.3,0.7", "--csv"});
    REQUIRE(r.status == 0);
    const auto rows = parse_csv(r.out);
    REQUIRE(rows.size() == 3);
    CHECK(rows[1] == std::vector<std::string>{"0", "0.1", "0.3", "0.3333333333333333", "0.1", "0", "0", "0.1"});
    CHECK(rows[2] == std::vector<std::string>{"1", "0.9", "0.7", "1", "0.7", "0.2", "1", "0.9"});
    // The γ sweep: E = (1 − 0.8^(γ+1))/(1 − 0.8) and its speedup 3.3616/1.4, best false at γ = 4.
    const auto g = parse_csv(run_inferlab({"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1", "--csv"}).out);
    REQUIRE(g.size() == 9);
    CHECK(g[4] == std::vector<std::string>{"4", "3.3616", "2.4011428571428572", "false"});
}
