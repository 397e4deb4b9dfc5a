// The figures in Chinese: the SVG of every figure and the --svg FILE of the other subcommands in
// the documents' own terms, errors in Chinese, and the help's notes wrapped as paragraphs. What
// every run owes in both languages is test_output_contracts.cpp's table.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"
#include "../support/i18n_check.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kDrawn = {"doc1-fig4",  "doc1-fig5",  "doc1-fig6",  "doc1-fig7",  "doc1-fig8",
                                         "doc1-fig9",  "doc1-fig10", "doc1-fig11", "doc1-fig12", "doc1-fig13",
                                         "doc1-fig14", "doc1-fig15", "doc1-fig17", "doc2-fig1"};

// The root's font-family names CJK fonts before the generic family: four English words that are
// a font's name, not prose.
const std::vector<std::string> kFontNames = {"Noto Sans CJK SC Source Han Sans SC sans"};

std::vector<std::string> texts(const std::vector<SvgItem>& items) {
    std::vector<std::string> t;
    for (const auto& i : items) t.push_back(i.text);
    return t;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// An SVG written in Chinese: it parses, names a CJK family first, and holds no English prose
// (no catalogue piece, no run of four English words besides the font names).
void check_chinese_svg(const std::string& svg, const std::string& what) {
    INFO(what << ":\n" << svg);
    REQUIRE(svg_parse_error(svg).empty());
    pugi::xml_document doc;
    REQUIRE(doc.load_string(svg.c_str()));
    CHECK(std::string(doc.child("svg").attribute("font-family").value()).rfind("Noto Sans CJK SC,", 0) == 0);
    const std::string text = svg_all_text(svg);
    for (const auto& piece : english_catalogue_pieces()) CHECK(text.find(piece) == std::string::npos);
    for (const auto& run : english_runs(text)) CHECK(contains(kFontNames, run));
}

}  // namespace

// First document §2.1.3 ("一步 Decode 的读量：吞吐与单请求延迟怎样分离"), Figure 9 "共享权重读取，
// 逐请求读取 KV": W = 14 GB, M_KV = 1 GiB, β = 1 TB/s; the table's 本步读取量 15.074 / 22.590 GB,
// 聚合生成量的上界 66.34 / 354.14 token/s and 单请求前进量的上界 66.34 / 44.27 token/s.
TEST_CASE("figure doc1-fig9 in Chinese: the section's terms on the labels (first document 2.1.3)", "[cli][zh][figure][textbook]") {
    const CliResult r = run_zh({"figure", "doc1-fig9"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    REQUIRE(svg_parse_error(r.out).empty());
    CHECK(svg_title(r.out) == "图 9：一个 Decode 步的读取字节数，D_B = W + B·M_KV");
    const auto subtitle = texts(svg_items(r.out, "subtitle"));
    CHECK(subtitle == std::vector<std::string>{"每步完整读一次权重；每个请求的历史 KV 各读一次"});
    CHECK(texts(svg_items(r.out, "axis-label")) == std::vector<std::string>{"D_B（GB，10^9 字节）"});
    CHECK(texts(svg_items(r.out, "legend")) == std::vector<std::string>{"权重 W（读一次）", "每个请求的 K", "每个请求的 V"});
    CHECK(texts(svg_items(r.out, "bar-value")) == std::vector<std::string>{"15.074 GB", "22.590 GB"});
    CHECK(texts(svg_items(r.out, "bar-sublabel")) ==
          std::vector<std::string>{"聚合 ≤ 66.34 tok/s", "单请求 ≤ 66.34", "聚合 ≤ 354.14 tok/s", "单请求 ≤ 44.27"});
    const auto inputs = texts(svg_items(r.out, "input"));
    CHECK(contains(inputs, "W: 文档的 14 GB"));
    CHECK(contains(inputs, "β: 文档的 1 TB/s"));
    CHECK(contains(inputs, "t_B ≥ D_B / β；聚合生成量 ≤ B / t_B，单请求前进量 ≤ 1 / t_B（inferlab decode-roofline）"));
    CHECK(contains(inputs, "来源：第一份文档（000_5f2b20623495609b.txt），§2.1.3，图 9"));
    check_chinese_svg(r.out, "figure doc1-fig9");
}

// First document §4.1, Figure 15 "均匀量化格点与反量化误差": x = 0.37, Δ = 0.1, Q = 7 gives x̂ = 0.4.
TEST_CASE("figure doc1-fig15 in Chinese: the grid and the dequantization error (first document 4.1)", "[cli][zh][figure][textbook]") {
    const CliResult r = run_zh({"figure", "doc1-fig15"});
    REQUIRE(r.status == 0);
    CHECK(svg_title(r.out) == "图 15：均匀量化格点与反量化误差");
    const auto error = svg_items(r.out, "error");
    REQUIRE(error.size() == 1);
    CHECK(error[0].text == "误差 x̂ − x = 0.03；在 Δ/2 以内");
    CHECK(texts(svg_items(r.out, "dequantized")) == std::vector<std::string>{"x̂ = 0.4"});
    CHECK(svg_all_text(r.out).find("舍入方式：四舍五入（远离零）") != std::string::npos);
    check_chinese_svg(r.out, "figure doc1-fig15");
}

// The SVG itself in Chinese: it parses, names a CJK family first and holds no English prose
// (output_contracts checks the text of each figure run; this reads the drawing).
TEST_CASE("figure in Chinese: every drawn figure's SVG, and one written with --out", "[cli][zh][figure]") {
    for (const auto& name : kDrawn) {
        const CliResult r = run_zh({"figure", name});
        REQUIRE(r.status == 0);
        check_chinese_svg(r.out, name);
    }
    Scratch s("inferlab-zh-fig");
    const std::string file = (s.path / "f.svg").string();
    check_chinese_output({"figure", "doc1-fig7", "--out", file});
    const CliResult w = run_zh({"figure", "doc1-fig7", "--out", file});
    CHECK(w.out.rfind("已写入 " + file, 0) == 0);
    check_chinese_svg(slurp(file), "figure doc1-fig7 --out");
}

TEST_CASE("the --svg of the other subcommands in Chinese: labels in the documents' terms", "[cli][zh][figure][svg]") {
    Scratch s("inferlab-zh-svg");
    const std::string file = (s.path / "f.svg").string();
    const std::vector<std::vector<std::string>> runs = {
        {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s", "--weight-dtype",
         "bf16", "--peak-flops", "1e15", "--batch", "1,8,64"},
        {"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1"},
        {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"},
        {"best-of-n", "--p", "0.3", "--n", "1..8", "--verifier-accuracy", "0.9", "--target", "0.9"},
        {"quantize", "--x", "0.37", "--step", "0.1", "--bits", "4"},
        {"quantize", "--elements", "4096", "--bits", "4", "--group-size", "128"},
    };
    for (auto args : runs) {
        args.insert(args.end(), {"--svg", file});
        std::string cmd;
        for (const auto& a : args) cmd += a + " ";
        INFO(cmd);
        const CliResult r = run_zh(args);
        INFO(r.err);
        REQUIRE(r.status == 0);
        check_chinese_svg(slurp(file), cmd);
    }
    // Figure 17 and model check-cache --svg are one drawing: the same legend, tolerance and points.
    // (check-cache's own input lines, the model and backend, are its printer's: not checked here.)
    REQUIRE(run_zh({"model", "check-cache", "--model", "demo-gqa", "--seq-len", "8", "--svg", file}).status == 0);
    const CliResult fig = run_zh({"figure", "doc1-fig17", "--model", "demo-gqa", "--seq-len", "8"});
    REQUIRE(fig.status == 0);
    const std::string svg = slurp(file);
    CHECK(texts(svg_items(fig.out, "legend")) == texts(svg_items(svg, "legend")));
    CHECK(contains(texts(svg_items(svg, "legend")), "分块 Prefill"));
    for (const char* cls : {"tolerance", "diff-contiguous", "diff-paged", "diff-other_attention", "diff-chunked"})
        CHECK(svg_values(fig.out, cls) == svg_values(svg, cls));
}

// --lang on the command line, past a Chinese locale, gives the same bytes as English.
TEST_CASE("figure --json with --lang zh is the English bytes", "[cli][zh][figure]") {
    const CliResult by_flag = run_inferlab({"figure", "doc1-fig9", "--json", "--lang", "zh"});
    REQUIRE(by_flag.status == 0);
    CHECK(by_flag.out == run_inferlab({"figure", "doc1-fig9", "--json"}).out);
}

TEST_CASE("figure errors in Chinese name the flag, the value and the rule", "[cli][zh][figure]") {
    // The drawing's rule names H_kv; the figure maps it back to the flag the user gave.
    expect_zh_error({"figure", "doc1-fig6", "--kv-heads", "3"}, "--kv-heads '3': 必须整除 H_q = 4（每个 K/V 头对应完整的一组）");
    expect_zh_error({"figure", "doc1-fig99"}, "NAME 'doc1-fig99': 不是图名（见 'inferlab figure --list'）");
    expect_zh_error({"figure", "doc1-fig1"}, "NAME 'doc1-fig1': 不绘制：示意图：本文的阅读路线，没有数值或状态");
    expect_zh_error({"figure", "--list", "--batch", "2"}, "--batch 不能与 --list 同用（它不画图）");
    expect_zh_error({"figure", "doc1-fig10", "--tile", "20"}, "--tile '20': 必须在 1 到 S = 12 之间");
    expect_zh_error({"figure", "doc1-fig13", "--p", "0.5,0.5", "--q", "0.2,0.3,0.5"}, "--q 有 3 项，--p 有 2 项：p 与 q 必须覆盖同一词表");
}

TEST_CASE("figure --help wraps its notes as paragraphs in both languages", "[cli][zh][figure]") {
    const std::vector<std::string>& env = kZh80;
    // The help's notes wrap as paragraphs: no line is a stub of one or two words.
    for (const std::vector<std::string>& e : {env, std::vector<std::string>{"INFERLAB_LANG=en", "COLUMNS=80"}}) {
        const CliResult h = run_inferlab({"figure", "--help"}, "", e);
        const std::string notes = h.out.substr(h.out.find("\n\n", h.out.find("inferlab figure doc1-fig17")));
        std::size_t start = 0;
        while (start < notes.size()) {
            const std::size_t nl = std::min(notes.find('\n', start), notes.size());
            const std::string line = notes.substr(start, nl - start);
            INFO(line);
            if (!line.empty()) CHECK(widest_line(line) >= 20);
            start = nl + 1;
        }
    }
}
