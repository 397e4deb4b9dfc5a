// decode-roofline in Chinese: the first document's §2.1.3 table in the document's own terms, the
// notes and marks of the other runs, and errors in Chinese. What every run owes in both languages
// (no English prose, the same JSON and CSV, 80 columns) is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "inferlab/base/error.hpp"
#include "inferlab/data/hardware.hpp"
#include "inferlab/text/table.hpp"
#include "../support/cli.hpp"
#include "../support/i18n_check.hpp"

using namespace inferlab::test;

namespace {

// Runs that print every part of decode-roofline's output: the plain table, --explain, the MoE note
// with the table as records, the NO marks, the compute limit, the whole generation, prefill without
// FLOPs, a sweep's chart, the hardware list and its notes, and --help.
const std::vector<std::vector<std::string>>& every_kind_of_run() {
    static const std::vector<std::vector<std::string>> runs = {
        kDoc1Roofline,
        with(kDoc1Roofline, {"--explain"}),
        {"decode-roofline", "--model", "mixtral-8x7b", "--hw", "h100-sxm", "--seq-len", "4096", "--batch", "1,8,64",
         "--memory", "80GiB"},
        {"decode-roofline", "--model", "mixtral-8x7b", "--hw", "h100-sxm", "--seq-len", "4096", "--batch", "1,8,64",
         "--memory", "80GiB", "--explain"},
        {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "2048", "--output-len", "512",
         "--batch", "1,8"},
        {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "2048", "--output-len", "512",
         "--batch", "1,8", "--explain"},
        {"decode-roofline", "--model", "llama-3-8b", "--bandwidth", "1TB/s", "--prompt-len", "2048", "--output-len", "1"},
        {"decode-roofline", "--model", "llama-3-8b", "--seq-len", "1", "--hw", "h100-sxm", "--batch", "256..258"},
        {"decode-roofline", "--params", "7e9", "--weight-dtype", "int4", "--kv-bytes-per-request", "1GiB", "--bandwidth",
         "1TB/s", "--peak-flops", "100TFLOPS", "--batch", "1..4"},
        {"decode-roofline", "--list-hw"},
        {"decode-roofline", "--list-hw", "--explain"},
        {"decode-roofline", "--help"},
    };
    return runs;
}

}  // namespace

// The first document (000_5f2b20623495609b.txt), §2.1.3 一步 Decode 的读量：吞吐与单请求延迟怎样分离:
// W = 14×10^9 字节, M_KV = 2^30 字节, β = 10^12 字节/秒; its table 本步读取量 15.074 / 22.590 GB,
// 这部分理想时间下界 15.074 / 22.590 ms, 聚合生成量的上界 66.34 / 354.14 token/s, 单请求前进量的上界
// 66.34 / 44.27 token/s, and 读量 ×1.50 against 聚合上界 ×5.34.
TEST_CASE("decode-roofline in Chinese on the first document's 2.1.3 table", "[cli][i18n][textbook][decode-roofline]") {
    const CliResult r = run_inferlab(kDoc1Roofline, "", kZh80);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out ==
          "一步 Decode 的读量（第一份文档 §2.1.3）：D_B = W + Σ M_KV,i，t_B ≥ D_B/β\n"
          "  权重 W = 14,000,000,000 B = ≈13.038516 GiB = 14 GB [--weights-bytes]\n"
          "  每请求缓存 M_KV = --kv-bytes-per-request 1GiB\n"
          "  持续显存带宽 β = 1 TB/s (1e+12 B/s) [--bandwidth 1TB/s]\n"
          "\n"
          "                                           聚合生成量的  单请求前进量\n"
          "     本步读取量  本步读取量  理想时间下界          上界        的上界\n"
          "  B        (GB)       (GiB)          (ms)     (token/s)     (token/s)\n"
          "  ─  ──────────  ──────────  ────────────  ────────────  ────────────\n"
          "  1      15.074      14.039        15.074         66.34         66.34\n"
          "  8      22.590      21.039        22.590        354.14         44.27\n"
          "\n"
          "B = 1 → 8：读量 ×1.50，聚合上界 ×5.34，单请求前进量降到 0.67×\n"
          "  （批处理可以摊薄权重读取，不会让任何一条请求的下一 token 更快到来）\n");
    // The section's own terms, as the document writes them (at 80 columns the long headers wrap).
    for (const char* term : {"Decode", "读量", "本步读取量", "理想时间下界", "聚合上界", "单请求前进量", "权重", "显存带宽"})
        CHECK(r.out.find(term) != std::string::npos);
    // Wide enough, the headers are the document's row names whole, each with its unit.
    const CliResult wide = run_inferlab(kDoc1Roofline, "", {"INFERLAB_LANG=zh", "COLUMNS=200"});
    REQUIRE(wide.status == 0);
    CHECK(wide.out.find("  B  本步读取量 (GB)  本步读取量 (GiB)  理想时间下界 (ms)  聚合生成量的上界 (token/s)  "
                        "单请求前进量的上界 (token/s)\n") != std::string::npos);
    CHECK(wide.out.find("  8           22.590            21.039             22.590                      354.14        "
                        "                 44.27\n") != std::string::npos);

    const CliResult x = run_inferlab(with(kDoc1Roofline, {"--explain"}), "", kZh80);
    REQUIRE(x.status == 0);
    CHECK(x.err.empty());
    const auto lines = lines_of(x.out);
    REQUIRE(lines.size() >= 3);
    // The document's read model in its words, and its warning that 1 GiB is not 1 GB.
    CHECK(lines[0] == "读量模型（第一份文档 §2.1.3）：每个 Decode 步从显存完整读一次权重，每个请求的全");
    CHECK(lines[1] == "部历史 KV 也各读一次；本步为每条请求生成一个 token。");
    CHECK(x.out.find("  D_B = W + Σ_i M_KV,i    t_B ≥ D_B / β    R_all ≤ B / t_B    R_one ≤ 1 / t_B\n") !=
          std::string::npos);
    CHECK(x.out.find("  每请求缓存 M_KV = 1,073,741,824 B = 1 GiB = 1.073741824 GB\n") != std::string::npos);
    CHECK(x.out.find("  注意：--weights-bytes 14GB 与 --kv-bytes-per-request 1GiB 的单位不同（1 GiB =\n  1.073741824 GB）") !=
          std::string::npos);
    // The substitution digit for digit: the column's 15.074 is 14 + 1.073741824.
    CHECK(x.out.find("= 14 GB + 1 ×\n      1.073741824 GB = 15.073741824 GB\n") != std::string::npos);
    CHECK(x.out.find("  R_all ≤ 8 / 22.590 ms ≈ 354.14 token/s；单请求 ≤ 1 / 22.590 ms ≈ 44.27 token/s\n") !=
          std::string::npos);
}

TEST_CASE("decode-roofline in Chinese: the notes, marks and tables of the other runs", "[cli][i18n][decode-roofline]") {
    // MoE: the note and the table as records, with the NO marks and the bound in words.
    const CliResult moe = run_inferlab(every_kind_of_run()[2], "", kZh80);
    REQUIRE(moe.status == 0);
    CHECK(moe.out.find("  MoE：共 46,702,792,704 个参数，每 token 激活 12,879,925,248 个（8 个路由专家中\n") !=
          std::string::npos);
    CHECK(moe.out.find("    受限于: 访存\n    放得下: 否\n") != std::string::npos);
    CHECK(moe.out.find("标为“否”的行：权重 + KV 超过设备显存。\n") != std::string::npos);
    CHECK(moe.out.find("\n计算上限：每个批大小都受访存限制（每多一条请求，读其 KV 的时间都长于计算时间）\n") !=
          std::string::npos);
    CHECK(moe.out.find("图例：  # 聚合生成量 token/s  = 单请求前进量 token/s") != std::string::npos);
    // The whole generation: the second document's TTFT and TPOT in its words.
    const CliResult gen = run_inferlab(every_kind_of_run()[4], "", kZh80);
    REQUIRE(gen.status == 0);
    CHECK(gen.out.find("完整生成：P = 2,048 个输入 token，N = 512 个输出 token：第 1 个 token 来自\n"
                       "Prefill（TTFT）；第 2..N 个 token 来自 511 个 Decode 步，读取 S = 2,049 …\n") !=
          std::string::npos);
    CHECK(gen.out.find("  TTFT：请求开始到收到首个输出 Token 的时间（只计 Prefill 下界，不含排队）；\n") !=
          std::string::npos);
    CHECK(gen.out.find("Decode 总时间") != std::string::npos);
    // Prefill without a FLOP rate: the note says what is missing.
    const CliResult no_flops = run_inferlab(every_kind_of_run()[6], "", kZh80);
    REQUIRE(no_flops.status == 0);
    CHECK(no_flops.out.find("之后没有 Decode 步") != std::string::npos);
    CHECK(no_flops.out.find("\n  （TTFT 与端到端需要 --peak-flops 或带算力数据的 --hw：Prefill 主要受算力限制）\n") !=
          std::string::npos);
    // The hardware list: its headers, and the notes and sources in Chinese.
    const CliResult hw = run_inferlab({"decode-roofline", "--list-hw", "--explain"}, "", kZh80);
    REQUIRE(hw.status == 0);
    CHECK(hw.out.rfind("硬件预设（examples/hardware.json；带宽照规格表的十进制写法）：\n", 0) == 0);
    CHECK(hw.out.find("    类别: gpu\n    带宽 (GB/s): 3350\n") != std::string::npos);
    CHECK(hw.out.find("来源: NVIDIA H100 Tensor Core GPU 数据手册（SXM5 列）") != std::string::npos);
    CHECK(hw.out.find("  doc1-example: 第一份文档 §2.1.3 的假设：β = 10^12 B/s\n") != std::string::npos);
    // --help: the options in the document's terms, and the footer's notes as wrapped paragraphs.
    const CliResult help = run_inferlab({"decode-roofline", "--help"}, "", kZh80);
    REQUIRE(help.status == 0);
    CHECK(help.out.find("一步 Decode 的读量，以及由它得出的时间下界与 token/s 上界\n") != std::string::npos);
    CHECK(help.out.find("β，假定的持续显存带宽（1TB/s、3.35e12）") != std::string::npos);
    CHECK(help.out.find("\n混合专家（MoE）：一步读取非专家权重、共享专家，") != std::string::npos);
}

TEST_CASE("decode-roofline errors in Chinese name the flag, the value and the rule", "[cli][i18n][decode-roofline][errors]") {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"decode-roofline", "--weights-bytes", "0", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s"},
         "--weights-bytes '0': 必须为正"},
        {{"decode-roofline", "--model", "llama-3-8b", "--seq-len", "0", "--bandwidth", "1TB/s"},
         "--seq-len '0': 必须是正的 token 数"},
        {{"decode-roofline", "--weights-bytes", "1GB", "--kv-bytes-per-request", "1GiB", "--hw", "tpu9"},
         "--hw 'tpu9': 不是已知的硬件预设（已有：doc1-example, h100-sxm, h200-sxm, a100-sxm-80gb, l4, mi300x, "
         "ddr5-4800-2ch；见 'inferlab decode-roofline --list-hw'）"},
        {{"decode-roofline", "--weights-bytes", "1GB", "--kv-bytes-per-request", "1GiB"},
         "没有带宽：请给出 --bandwidth（如 1TB/s、3.35e12）或 --hw NAME（见 --list-hw）"},
        {{"decode-roofline", "--weights-bytes", "1GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
          "--memory", "0"},
         "--memory '0': 必须为正（设备的容量）"},
        {{"decode-roofline", "--weights-bytes", "1GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
          "--batch", "20000000"},
         "--batch '20000000': 每批最多 10,000,000 个请求"},
        {{"decode-roofline", "--list-hw", "--batch", "8"},
         "同时给出了 --list-hw 与 --batch：--list-hw 不做计算，所以 --batch 不起作用"},
        {{"decode-roofline", "--list-hw", "--svg", "hw.svg"}, "--svg 'hw.svg': --list-hw 不画图：它只列出预设，不做计算"},
    };
    for (const auto& [args, line] : cases) {
        const CliResult r = run_inferlab(args, "", {"INFERLAB_LANG=zh"});
        INFO("stderr: " << r.err);
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err == "inferlab: error: " + line + "\n");
    }
    // The same rule in English names the list to consult too (the library's rule names no flag; the app adds it).
    const CliResult en = run_inferlab(cases[2].first, "", {"INFERLAB_LANG=en"});
    CHECK(en.status == 2);
    CHECK(en.err.find("--hw 'tpu9': is not a known hardware preset (known: doc1-example, ") != std::string::npos);
    CHECK(en.err.find("; see 'inferlab decode-roofline --list-hw')\n") != std::string::npos);
}

// Issue #15: a library error names no CLI flag. The rule says what is wrong and lists the presets;
// decode-roofline (above) adds where to see them.
TEST_CASE("the library hardware lookup error names no CLI flag", "[cli][i18n][decode-roofline][errors]") {
    CHECK(inferlab::lookup_hardware("H100-SXM") == &inferlab::find_hardware("preset", "h100-sxm"));
    CHECK(inferlab::lookup_hardware("tpu9") == nullptr);
    try {
        inferlab::find_hardware("preset", "tpu9");
        FAIL("no error for an unknown preset");
    } catch (const inferlab::InputError& e) {
        CHECK(std::string(e.what()) == "preset 'tpu9': is not a known hardware preset (known: " +
                                           inferlab::hardware_names() + ")");
        CHECK(std::string(e.what()).find("--") == std::string::npos);
        CHECK(e.rule().find("list-hw") == std::string::npos);
    }
}

