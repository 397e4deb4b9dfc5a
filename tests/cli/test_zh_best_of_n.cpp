// best-of-n in Chinese: the first document's §3.2 example in the document's own terms, and errors
// (the library's rules too) in Chinese. What every run owes in both languages (no English prose,
// the same JSON and CSV, 80 columns) is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

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

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every section best-of-n prints: each strategy, the inverse, the budget and the simulation.
const Args kAll = {"best-of-n", "--p", "0.3", "--n", "1..4", "--tpr", "0.9", "--fpr", "0.2", "--alternatives", "3",
                   "--judge-bias", "0.3", "--hard-fraction", "0.5", "--rho", "0.3", "--target", "0.95", "--budget",
                   "16", "--cost-judge", "1", "--simulate", "2000"};

}  // namespace

// The first document (000_5f2b20623495609b.txt), §3.2 并行采样、验证与搜索: p = 0.3, N = 4,
// "因此 P≥1 = 1 − 0.7^4 = 0.7599。这是候选集合包含正确答案的概率，不是系统最终选对答案的概率。"
TEST_CASE("best-of-n in Chinese on the first document's 3.2 example", "[cli][i18n][textbook][best-of-n]") {
    const Args args = {"best-of-n", "--p", "0.3", "--n", "4", "--lang", "zh"};
    const CliResult r = run_inferlab(args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "Best-of-N：每条候选正确的概率 p = 0.3（第一份文档 §3.2）\n"
          "  N  覆盖率 P≥1\n"
          "  ─  ──────────\n"
          "  4      0.7599\n"
          // Chinese breaks between any two characters: the line ends where 78 columns are full.
          "  覆盖率 P≥1 = 1 − (1 − p)^N 是候选集合包含正确答案的概率（至少有一条正确），不\n"
          "  是系统最终选对答案的概率：选对还需要选择这一步。\n");
    const CliResult x = run_inferlab(with(args, {"--explain"}));
    REQUIRE(x.status == 0);
    CHECK(x.out ==
          "覆盖率（第一份文档 §3.2），即至少有一条正确的概率：P≥1 = 1 − (1 − p)^N\n"
          "  N = 4: 1 − (1 − 0.3)^4 = 1 − 0.7^4 = 1 − 0.2401 = 0.7599\n"
          "  这是候选集合包含正确答案的概率，不是系统最终选对答案的概率。\n");
    // The section's other terms: 验证器, 多数投票, 裁判 (误选), 固定总成本, 正确率.
    const CliResult all = run_zh(kAll);
    REQUIRE(all.status == 0);
    for (const char* term : {"验证器：TPR 0.9，FPR 0.2", "多数投票，共 4 个答案", "有偏裁判：只要出现错误候选，就以概率 0.3 误选",
                             "在固定总成本 16 下", "蒙特卡洛（2,000 次试验，种子 1）"})
        CHECK(has(all.out, term));
    const CliResult drop = run_zh({"best-of-n", "--p", "0.9", "--n", "1,2,8", "--judge-bias", "0.3"});
    CHECK(has(drop.out, "更多候选反而降低有偏裁判的正确率：N = 2 → 8 时为"));
}

TEST_CASE("best-of-n errors in Chinese: the flag, the value and the translated rule", "[cli][i18n][best-of-n][errors]") {
    expect_zh_error({"best-of-n", "--n", "4"}, "必须给出 --p：每条候选正确的概率（例如 0.3）");
    expect_zh_error({"best-of-n", "--p", "1.5"}, "--p '1.5': 必须是 [0, 1] 内的概率");
    expect_zh_error({"best-of-n", "--p", "0.3", "--fallback", "abstain"},
                    "--fallback 'abstain': 没有验证器时不起作用：它规定验证器一条候选都不接受时怎么办（请给出 --tpr 和 "
                    "--fpr，或 --verifier-accuracy）");
    expect_zh_error({"best-of-n", "--p", "0.3", "--answer-dist", "0.3,0.3"}, "--answer-dist '0.3,0.3': 各项之和必须为 1（现为 0.6）");
    expect_zh_error({"best-of-n", "--p", "0.3", "--cost-judge", "1"},
                    "--cost-judge 在没有 --budget 时不起作用：成本只用于在固定总成本下比较策略");
    expect_zh_error({"best-of-n", "--p", "0.3", "--target", "1"},
                    "--target '1': 在 p < 1 时无法达到：对每个 N，覆盖率 1 − (1 − p)^N 都小于 1");
    // The library's rules (calc/best_of_n.cpp, answer/best_of_n.cpp), named by the flag and still translated.
    expect_zh_error({"best-of-n", "--p", "0.3", "--n", "300", "--alternatives", "2"}, "--n '300': 多数投票只对 N ≤ 200 精确计算");
    expect_zh_error({"best-of-n", "--p", "0.3", "--n", "200", "--alternatives", "32"},
                    "--n '200': 在 32 个错误答案下，对多数投票的精确动态规划来说太大（N³·k² 必须小于 2·10^9）");
    expect_zh_error({"best-of-n", "--p", "0.3", "--hard-fraction", "0.8"},
                    "--hard-fraction '0.8': 必须给平均 p 留出余地：需要 p ≤ 1 − h（p = 0.3）");
    expect_zh_error({"best-of-n", "--p", "1e-20", "--target", "0.5"},
                    "覆盖率 ≥ 目标的最小 N 超出 64 位（结果大于 18,446,744,073,709,551,615）");
    // The same library rule in English is unchanged.
    expect_error({"best-of-n", "--p", "0.3", "--n", "300", "--alternatives", "2"},
                 "--n '300': majority vote is computed exactly for N ≤ 200");
}

