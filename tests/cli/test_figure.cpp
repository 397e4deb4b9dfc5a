// inferlab figure: the real binary writes each figure; the SVG parses (pugixml), rsvg-convert
// renders it to a PNG that is not blank, and the numbers in it are the documents'.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinRel;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kDrawn = {"doc1-fig4",  "doc1-fig5",  "doc1-fig6",  "doc1-fig7",  "doc1-fig8",
                                         "doc1-fig9",  "doc1-fig10", "doc1-fig11", "doc1-fig12",
                                         "doc1-fig13", "doc1-fig14", "doc1-fig15", "doc1-fig17", "doc2-fig1"};

}  // namespace

TEST_CASE("figure --list names every figure with document, section and caption, conceptual ones with why", "[cli][figure]") {
    const auto r = run_inferlab({"figure", "--list"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    for (const auto& n : kDrawn) CHECK(r.out.find("  " + n + " ") != std::string::npos);
    const auto not_drawn = r.out.find("Not drawn:");
    REQUIRE(not_drawn != std::string::npos);
    CHECK(r.out.find("doc1-fig16", not_drawn) != std::string::npos);
    CHECK(r.out.find("conceptual: the harness loop") != std::string::npos);
    CHECK(r.out.find("doc1-fig17") < not_drawn);  // drawn from model check-cache's result
    CHECK(r.out.find("§2.1.3") != std::string::npos);
    // Fits 80 columns: code points counted, not bytes (§ and × are two bytes in UTF-8).
    std::size_t width = 0;
    for (char c : r.out) {
        if (c == '\n') {
            CHECK(width <= 80);
            width = 0;
        } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
            ++width;
        }
    }
}

TEST_CASE("figure: every drawn figure is well-formed SVG that rsvg-convert renders to a non-blank PNG", "[cli][figure]") {
    const Scratch scratch("each");
    const fs::path& dir = scratch.path;
    for (const auto& n : kDrawn) {
        INFO(n);
        const fs::path out = dir / (n + ".svg");
        const auto r = run_inferlab({"figure", n, "--out", out.string()});
        REQUIRE(r.status == 0);
        CHECK(r.out.rfind("wrote " + out.string() + " (", 0) == 0);
        CHECK(r.err.empty());
        const std::string svg = slurp(out);
        REQUIRE(svg_parse_error(svg).empty());
        CHECK(svg_title(svg).find("Figure ") != std::string::npos);
        // The inputs are printed in the figure, with the section it redraws.
        CHECK(svg_all_text(svg).find(n.rfind("doc1", 0) == 0 ? "Source: first document" : "Source: second document") !=
              std::string::npos);
        CHECK(svg.find("href") == std::string::npos);
        // scripts/install-deps.sh installs it (librsvg2-bin): a missing one fails, never skips.
        REQUIRE(have_rsvg_convert());
        check_renders(out);
    }
}

TEST_CASE("figure doc1-fig9 --batch 1,2,4,8,16 writes the class's bars to stdout", "[cli][figure]") {
    const auto r = run_inferlab({"figure", "doc1-fig9", "--batch", "1,2,4,8,16"});
    REQUIRE(r.status == 0);
    REQUIRE(svg_parse_error(r.out).empty());
    std::vector<std::string> labels;
    for (const auto& i : svg_items(r.out, "bar-value")) labels.push_back(i.text);
    // 14 + B × 1.073741824 GB, to three decimals (first document §2.1.3's read model).
    CHECK(labels == std::vector<std::string>{"15.074 GB", "16.147 GB", "18.295 GB", "22.590 GB", "31.180 GB"});
}

TEST_CASE("figure: the model and shape flags change Figures 6, 7 and 9", "[cli][figure]") {
    auto r = run_inferlab({"figure", "doc1-fig7", "--kv-dtype", "fp8", "--batch", "4"});
    REQUIRE(r.status == 0);
    std::vector<std::string> labels;
    for (const auto& i : svg_items(r.out, "bar-value")) labels.push_back(i.text);
    CHECK(labels == std::vector<std::string>{"2 GiB", "512 MiB", "8 GiB", "2 GiB"});
    r = run_inferlab({"figure", "doc1-fig6", "--q-heads", "8", "--kv-heads", "2"});
    REQUIRE(r.status == 0);
    CHECK(svg_items(r.out, "q-head").size() == 8);
    CHECK(svg_items(r.out, "kv-head").size() == 2);
    r = run_inferlab({"figure", "doc1-fig9", "--weights-bytes", "16GB", "--kv-heads", "4", "--batch", "2"});
    REQUIRE(r.status == 0);
    REQUIRE(svg_items(r.out, "bar-value").size() == 1);
    CHECK(svg_items(r.out, "bar-value")[0].text == "17.074 GB");  // 16 + 2 × 0.536870912
    // decode-roofline's own flags for the document's example give the same bars.
    r = run_inferlab({"figure", "doc1-fig9", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                      "--batch", "1,8"});
    REQUIRE(r.status == 0);
    labels.clear();
    for (const auto& i : svg_items(r.out, "bar-value")) labels.push_back(i.text);
    CHECK(labels == std::vector<std::string>{"15.074 GB", "22.590 GB"});
    r = run_inferlab({"figure", "doc2-fig1", "--kv-heads", "4"});
    REQUIRE(r.status == 0);
    CHECK(svg_items(r.out, "width").back().value == 512);
    r = run_inferlab({"figure", "doc1-fig4", "--tokens", "5,6", "--steps", "2"});
    REQUIRE(r.status == 0);
    CHECK(svg_items(r.out, "cache-length").size() == 3);
    r = run_inferlab({"figure", "doc1-fig8", "--blocks", "20", "--block-size", "4"});
    REQUIRE(r.status == 0);
    CHECK(svg_items(r.out, "physical").size() == 20);
}

// First document §1.3, Figure 4: the figure draws the run `model generate --steps N+1 --trace`
// makes, step for step: the same cache lengths after the prefill and each decode step.
TEST_CASE("figure doc1-fig4 draws model generate's trace of the same prompt", "[cli][figure]") {
    const CliResult fig = run_inferlab({"figure", "doc1-fig4", "--config", data_path("tiny-model.json"), "--tokens", "1,2,3",
                                        "--steps", "4", "--json"});
    const CliResult gen = run_inferlab({"model", "generate", "--config", data_path("tiny-model.json"), "--prompt", "1,2,3",
                                        "--steps", "5", "--trace", "--json"});
    REQUIRE(fig.status == 0);
    REQUIRE(gen.status == 0);
    const nlohmann::json fj = parse_json(fig), gj = parse_json(gen);
    std::vector<double> drawn, traced;
    for (const auto& v : fj.at("values"))
        if (v["class"] == "cache-length") drawn.push_back(v["value"].get<double>());
    for (const auto& step : gj.at("trace")) traced.push_back(step["cache_len"][0].get<double>());  // layer 0, as drawn
    CHECK(drawn == std::vector<double>{3, 4, 5, 6, 7});
    CHECK(drawn == traced);
}

// First document §4.3: Figure 17 draws what `model check-cache` computes for the same flags.
TEST_CASE("figure doc1-fig17 takes model check-cache's flags and draws its rows", "[cli][figure]") {
    const std::vector<std::string> flags = {"--tokens", "1,2,3,4,5", "--chunk", "2"};
    std::vector<std::string> check = {"model", "check-cache", "--model", "demo-gqa"};
    check.insert(check.end(), flags.begin(), flags.end());
    check.push_back("--json");
    const auto j = parse_json(run_inferlab(check));
    std::vector<std::string> fig = {"figure", "doc1-fig17", "--model", "demo-gqa"};
    fig.insert(fig.end(), flags.begin(), flags.end());
    const auto r = run_inferlab(fig);
    REQUIRE(r.status == 0);
    REQUIRE(svg_parse_error(r.out).empty());
    std::vector<double> drawn, printed;
    for (const char* path : {"contiguous", "paged", "other_attention", "chunked"}) {
        for (double v : svg_values(r.out, std::string("diff-") + path)) drawn.push_back(v);
        for (const auto& row : j["rows"]) printed.push_back(row[path].get<double>());
    }
    CHECK(drawn == printed);
    CHECK(svg_all_text(r.out).find("tokens 1,2,3,4,5") != std::string::npos);
    expect_error({"figure", "doc1-fig17", "--tokens", "1,2", "--seq-len", "8"}, "--seq-len '8': has no effect with --tokens");
    expect_error({"figure", "doc1-fig17", "--chunk", "0"}, "--chunk '0'");
    expect_error({"figure", "doc1-fig17", "--batch", "2"}, "--batch does not apply to doc1-fig17");
}

// Figure 9 takes decode-roofline's flags and draws the rows that command prints for them.
TEST_CASE("figure doc1-fig9 with decode-roofline's --model, --hw and --params draws its rows", "[cli][figure]") {
    const std::vector<std::vector<std::string>> cases = {
        {"--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "8192", "--batch", "1,8,64"},
        {"--params", "7e9", "--weight-dtype", "int8", "--kv-bytes-per-request", "1GiB", "--bandwidth", "2TB/s", "--batch", "1,4"},
        {"--model", "mixtral-8x7b", "--bandwidth", "1TB/s", "--peak-flops", "100TFLOPS", "--seq-len", "4096,1024"}};
    for (const auto& flags : cases) {
        INFO(Catch::Detail::stringify(flags));
        std::vector<std::string> roofline = {"decode-roofline"}, fig = {"figure", "doc1-fig9"};
        roofline.insert(roofline.end(), flags.begin(), flags.end());
        fig.insert(fig.end(), flags.begin(), flags.end());
        roofline.push_back("--json");
        const auto j = parse_json(run_inferlab(roofline));
        const auto r = run_inferlab(fig);
        REQUIRE(r.status == 0);
        REQUIRE(svg_parse_error(r.out).empty());
        const auto bars = svg_items(r.out, "bar");
        REQUIRE(bars.size() == j["rows"].size());
        for (std::size_t i = 0; i < bars.size(); ++i) {
            CHECK(bars[i].value == j["rows"][i]["bytes_per_step_gb"].get<double>());
            // The sublabels show the row's rates to two decimals, as decode-roofline's table does,
            // and carry them exactly (data-value), one line each.
            const auto subs = svg_items(r.out, "bar-sublabel");
            REQUIRE(subs.size() == 2 * bars.size());
            const double all = j["rows"][i]["aggregate_tokens_per_s"].get<double>();
            const double each = j["rows"][i]["per_request_tokens_per_s"].get<double>();
            CHECK(subs[2 * i].text == fmt::format("≤ {:.2f} tok/s all", all));
            CHECK(subs[2 * i].value == all);
            CHECK(subs[2 * i + 1].text == fmt::format("≤ {:.2f} each", each));
            CHECK(subs[2 * i + 1].value == each);
        }
    }
    expect_error({"figure", "doc1-fig9", "--model", "llama-3-8b", "--kv-heads", "2"},
                 "--kv-heads does not apply with --model/--config (the model gives the shape)");
    expect_error({"figure", "doc1-fig9", "--params", "7e9"}, "--params needs --weight-dtype");
    expect_error({"figure", "doc1-fig9", "--hw", "nope"}, "--hw 'nope'");
    expect_error({"figure", "doc1-fig9", "--batch", "1..20"}, "--batch '1..20': at most 12 bars can be drawn");
}

// First document §3.2: Figure 14 takes best-of-n's flags and draws the rows that command prints.
TEST_CASE("figure doc1-fig14 with best-of-n's flags draws its coverage and strategies", "[cli][figure]") {
    const std::vector<std::string> flags = {"--p", "0.6", "--n", "1,3,5,9", "--alternatives", "3", "--judge-bias", "0.3",
                                            "--target", "0.99"};
    std::vector<std::string> bon = {"best-of-n"}, fig = {"figure", "doc1-fig14"};
    bon.insert(bon.end(), flags.begin(), flags.end());
    fig.insert(fig.end(), flags.begin(), flags.end());
    bon.push_back("--json");
    const auto j = parse_json(run_inferlab(bon));
    const auto r = run_inferlab(fig);
    REQUIRE(r.status == 0);
    REQUIRE(svg_parse_error(r.out).empty());
    std::vector<double> drawn, printed;
    for (const auto& i : svg_items(r.out, "point")) drawn.push_back(i.value);
    for (const char* key : {"coverage", "majority_vote", "biased_judge"})
        for (const auto& row : j["rows"]) printed.push_back(row[key].get<double>());
    // The search panel under it: best-of-n --search's rows with the figure's search, its outcome
    // verifier TPR 0.9, FPR 0.1 where the flags give none.
    const auto s = parse_json(run_inferlab({"best-of-n", "--search", "--q", "0.8", "--branch", "4", "--beam", "4", "--step-tpr",
                                            "0.9", "--step-fpr", "0.3", "--steps", "1..12", "--tpr", "0.9", "--fpr", "0.1",
                                            "--json"}));
    for (const auto& row : s["rows"]) printed.push_back(row["success"].get<double>());
    for (const auto& row : s["rows"]) printed.push_back(row["best_of_n"]["success"].get<double>());
    CHECK(drawn == printed);
    std::vector<double> markers;
    for (const auto& i : svg_items(r.out, "marker")) markers.push_back(i.value);
    // The last N, then the target's, then the search panel's crossing.
    CHECK(markers == std::vector<double>{9, j["min_n_for_target"].get<double>(), s["crossing"]["first_steps"].get<double>()});
    // The document's default: N = 4 marked at coverage 0.7599, a verifier beside it.
    const auto d = run_inferlab({"figure", "doc1-fig14"});
    REQUIRE(d.status == 0);
    CHECK(svg_all_text(d.out).find("N = 4: coverage 0.7599") != std::string::npos);
    expect_error({"figure", "doc1-fig14", "--rho", "1"}, "--rho '1'");
    expect_error({"figure", "doc1-fig14", "--answer-dist", "0.5,0.5"}, "--answer-dist");
    expect_error({"figure", "doc1-fig14", "--budget", "4"}, "--budget: figure has no such flag");
}

TEST_CASE("figure --all --out DIR writes every figure and an index.html gallery", "[cli][figure]") {
    const Scratch scratch("all");
    const fs::path& dir = scratch.path;
    const auto r = run_inferlab({"figure", "--all", "--out", (dir / "gallery").string()});
    REQUIRE(r.status == 0);
    CHECK(r.out == "wrote 14 figures and index.html to " + (dir / "gallery").string() + "\n");
    const std::string html = slurp(dir / "gallery" / "index.html");
    for (const auto& n : kDrawn) {
        INFO(n);
        CHECK(fs::exists(dir / "gallery" / (n + ".svg")));
        CHECK(html.find("<img src=\"" + n + ".svg\"") != std::string::npos);
        CHECK(html.find("<code>inferlab figure " + n + "</code>") != std::string::npos);
    }
    CHECK(html.find("Weights read once per step, KV read per request") != std::string::npos);
    CHECK(html.find("doc1-fig16") != std::string::npos);  // listed as not drawn, with the reason
}

TEST_CASE("figure: bad input is exit 2 with one line naming the flag or name", "[cli][figure]") {
    expect_error({"figure", "doc1-fig99"}, "NAME 'doc1-fig99': is not a figure");
    expect_error({"figure", "doc1-fig16"}, "NAME 'doc1-fig16': is not drawn: conceptual");
    expect_error({"figure"}, "give a figure NAME, --list or --all");
    expect_error({"figure", "doc1-fig9", "--tile", "3"}, "--tile does not apply to doc1-fig9");
    expect_error({"figure", "doc1-fig9", "--batch", "0"}, "--batch");
    expect_error({"figure", "doc1-fig9", "--bandwidth", "0"}, "--bandwidth");
    expect_error({"figure", "doc1-fig7", "--kv-heads", "3"}, "--kv-heads '3': must divide H_q = 32");
    expect_error({"figure", "doc1-fig6", "--kv-heads", "3"}, "--kv-heads '3': must divide H_q = 4");
    // The library names these by the documents' symbols (H_kv, W); the figure command names its flags.
    expect_error({"figure", "doc1-fig6", "--kv-heads", "1,1,1,1,1"}, "--kv-heads '5 values': give 1 to 4 values to compare");
    expect_error({"figure", "doc1-fig10", "--seq-len", "8", "--window", "9"}, "--window '9': must be between 1 and S = 8");
    expect_error({"figure", "doc1-fig13", "--p", "0.5,0.5"}, "--q has 3 entries and --p has 2 entries: p and q must cover the same vocabulary");
    expect_error({"figure", "doc1-fig13", "--p", "1.5,0,0"}, "--p");
    expect_error({"figure", "doc1-fig15", "--bits", "1"}, "--bits '1'");
    expect_error({"figure", "doc1-fig10", "--seq-len", "65"}, "--seq-len '65'");
    expect_error({"figure", "--all"}, "--all needs --out DIR");
    expect_error({"figure", "doc1-fig9", "--kv-bytes-per-request", "1GiB", "--kv-heads", "4"},
                 "--kv-heads does not apply with --kv-bytes-per-request");
    expect_error({"figure", "doc1-fig4", "--steps", "17"}, "--steps '17': at most 16");
    // A model's S is the user's to give, as decode-roofline asks for it (the document's 8192 goes with its shape).
    expect_error({"figure", "doc1-fig9", "--model", "llama-3-8b"}, "--seq-len is required to derive the KV bytes from the model");
    // The token the last step chooses takes a position: 3 + 5 + 1 > 8 positions of tiny-model.
    expect_error({"figure", "doc1-fig4", "--config", data_path("tiny-model.json"), "--tokens", "1,2,3", "--steps", "5"},
                 "--steps '5': with the 3-token prompt and the token the last step chooses exceeds the model's maximum "
                 "sequence length 8");
    expect_error({"figure", "doc2-fig1", "--kv-heads", "5"}, "--kv-heads '5': must divide H_q = 32");
    expect_error({"figure", "--all", "--out", "x", "--batch", "2"}, "--batch does not apply with --all");
    expect_error({"figure", "doc1-fig9", "--out", "/nonexistent-dir/x.svg"}, "'/nonexistent-dir/x.svg': cannot be created");
}

TEST_CASE("figure --list --csv: the catalogue's 18 figures, and the flags --list refuses", "[cli][figure]") {
    const auto rows = parse_csv(run_inferlab({"figure", "--list", "--csv"}).out);
    REQUIRE(rows.size() == 19);  // the header and 18 figures
    CHECK(rows[0] == std::vector<std::string>{"name", "document", "section", "caption", "drawn", "reason"});
    expect_error({"figure", "--list", "--explain"}, "--explain does not apply with --list");
    expect_error({"figure", "--list", "--batch", "2"}, "--batch does not apply with --list");
    expect_error({"figure", "--all", "--out", "x", "--json"}, "do not apply with --all");
}

// First document §2.1.3: the bars of Figure 9 are 15.074 GB and 22.590 GB at B = 1 and 8, in --json.
TEST_CASE("figure doc1-fig9 --json: the bars' labels of the first document's 2.1.3 table", "[cli][figure][textbook]") {
    const CliResult r = run_inferlab({"figure", "doc1-fig9", "--json"});
    REQUIRE(r.status == 0);
    const nlohmann::json j = parse_json(r);
    std::vector<std::string> labels;
    for (const auto& v : j["values"])
        if (v["class"] == "bar-value") labels.push_back(v["text"]);
    CHECK(labels == std::vector<std::string>{"15.074 GB", "22.590 GB"});
}

// Issue #29, item 2: past B = 16 Figure 9 drew all the K/V as one segment coloured "K of each
// request", with no V: a student read K = 68.7 GB, V = 0. K and V are now two bands at any B, split
// by their real widths, and the legend names only what is drawn.
TEST_CASE("figure doc1-fig9 draws K and V apart at every batch, and labels what it draws", "[cli][figure]") {
    const auto r = run_inferlab({"figure", "doc1-fig9", "--batch", "1,64"});
    REQUIRE(r.status == 0);
    const std::vector<double> seg = svg_values(r.out, "segment");
    // B = 1: W, K, V; B = 64: W, K of all 64, V of all 64. M_KV = 1.073741824 GB, K and V alike.
    REQUIRE(seg.size() == 6);
    CHECK_THAT(seg[1], WithinRel(1.073741824 / 2, 1e-12));  // 1e-12: a product and a quotient of doubles
    CHECK(seg[1] == seg[2]);
    CHECK_THAT(seg[4], WithinRel(64 * 1.073741824 / 2, 1e-12));
    CHECK(seg[4] == seg[5]);
    const std::string text = svg_all_text(r.out);
    CHECK(text.find("K of all 64 requests") != std::string::npos);
    CHECK(text.find("V of all 64 requests") != std::string::npos);
    CHECK(text.find("\nV of each request") != std::string::npos);
    // A fixed --kv-bytes-per-request has no split: one band, and a legend that says so.
    const auto f = run_inferlab({"figure", "doc1-fig9", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB",
                                 "--bandwidth", "1TB/s", "--batch", "2"});
    REQUIRE(f.status == 0);
    CHECK(svg_values(f.out, "segment").size() == 3);  // W and two requests' K/V
    const std::string ftext = svg_all_text(f.out);
    CHECK(ftext.find("K/V of request 2") != std::string::npos);
    CHECK(ftext.find("K and V not apart") != std::string::npos);
    CHECK(ftext.find("\nV of each request") == std::string::npos);  // a text node of its own: the amber legend
    // MLA (DeepSeek-V3) caches one latent per token: one band, named as the latent.
    const auto d = run_inferlab({"figure", "doc1-fig9", "--model", "deepseek-v3", "--seq-len", "4096", "--batch", "32"});
    REQUIRE(d.status == 0);
    CHECK(svg_values(d.out, "segment").size() == 2);
    CHECK(svg_all_text(d.out).find("K/V latent of all 32 requests") != std::string::npos);
}

// Issue #29's review: with eight bars or more, Figure 9's tokens/s under each bar ran into the
// next one's; they are left out then, and the footer says where the figures are.
TEST_CASE("figure doc1-fig9 leaves out the tokens/s under bars too narrow for them, and says so", "[cli][figure]") {
    const std::vector<std::string> base = {"figure", "doc1-fig9", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "8192", "--batch"};
    const CliResult few = run_inferlab(with(base, {"1,8,64"}), "", {"INFERLAB_LANG=en"});
    const CliResult many = run_inferlab(with(base, {"1,2,4,8,16,32,64,128"}), "", {"INFERLAB_LANG=en"});
    REQUIRE(few.status == 0);
    REQUIRE(many.status == 0);
    CHECK(svg_items(few.out, "bar-sublabel").size() == 6);
    CHECK(svg_items(few.out, "bar-sublabel")[0].text == "≤ 195.51 tok/s all");
    CHECK(svg_items(few.out, "bar-sublabel")[1].text == "≤ 195.51 each");
    CHECK(svg_items(many.out, "bar-sublabel").empty());
    CHECK(svg_all_text(many.out).find("too many bars to print under them: inferlab decode-roofline prints them") !=
          std::string::npos);
    CHECK(svg_all_text(few.out).find("too many bars") == std::string::npos);
    CHECK(svg_items(many.out, "bar").size() == 8);
}

// Issue #29: at four tokens Figure 13's output bars are too narrow for "α = …" under them, and
// the chart dropped them without a word; its labels "q (draft)p (target)output" ran together.
TEST_CASE("figure doc1-fig13 at four tokens says where α went, and its bar labels stay apart", "[cli][figure]") {
    const CliResult r = run_inferlab({"figure", "doc1-fig13", "--p", "0.5,0.25,0.25,0", "--q", "0,0.2,0.3,0.5"});
    REQUIRE(r.status == 0);
    REQUIRE(svg_parse_error(r.out).empty());
    const auto subs = svg_items(r.out, "bar-sublabel");
    const auto foot = svg_items(r.out, "input");
    REQUIRE(!foot.empty());
    if (subs.empty())
        CHECK(foot[0].text == "α = min(1, p/q) under each output bar left out (the bars are too narrow): inferlab spec-accept prints it");
    else
        CHECK(subs.size() == 4);
    const auto labels = svg_items(r.out, "bar-label");
    REQUIRE(labels.size() == 12);
    for (std::size_t i = 0; i < labels.size(); i += 3)
        CHECK(std::vector<std::string>{labels[i].text, labels[i + 1].text, labels[i + 2].text} ==
              std::vector<std::string>{"q", "p", "output"});
    CHECK(svg_all_text(r.out).find("q (draft)") != std::string::npos);  // the legend names the letters
}

// Issue #29: Figure 13 numbered its tokens 1–4 where spec-accept's text, CSV and JSON number
// them 0–3, and showed α = 1 under a token q never drafts, which spec-accept calls "never drafted".
TEST_CASE("figure doc1-fig13 numbers its tokens as spec-accept does, and says which are never drafted", "[cli][figure]") {
    const std::vector<std::string> pq = {"--p", "0.5,0.5", "--q", "0,1"};
    const CliResult fig = run_inferlab(with({"figure", "doc1-fig13"}, pq));
    const CliResult csv = run_inferlab(with(with({"spec-accept"}, pq), {"--csv"}));
    const CliResult text = run_inferlab(with({"spec-accept"}, pq));
    REQUIRE(fig.status == 0);
    REQUIRE(csv.status == 0);
    REQUIRE(text.status == 0);
    std::vector<std::string> groups, tokens;
    for (const auto& g : svg_items(fig.out, "group")) groups.push_back(g.text);
    const auto rows = parse_csv(csv.out);  // header first; the token column first
    REQUIRE(rows.size() == 3);
    REQUIRE(rows[0].at(0) == "token");
    for (std::size_t i = 1; i < rows.size(); ++i) tokens.push_back("token " + rows[i].at(0));
    CHECK(groups == std::vector<std::string>{"token 0", "token 1"});
    CHECK(groups == tokens);
    const auto subs = svg_items(fig.out, "bar-sublabel");
    REQUIRE(subs.size() == 2);
    CHECK(subs[0].text == "never drafted");
    CHECK(subs[1].text == "α = 0.5");
    CHECK(text.out.find("never drafted") != std::string::npos);
}

// Issue #29: Figure 9's rates under its bars were drawn numbers that figure --json left out.
TEST_CASE("figure doc1-fig9 --json holds the rates under its bars, as decode-roofline computes them", "[cli][figure]") {
    const nlohmann::json fig = parse_json(run_inferlab({"figure", "doc1-fig9", "--json"}));
    const nlohmann::json dr = parse_json(run_inferlab(with(kDoc1Roofline, {"--json"})));
    std::vector<double> shown, computed;
    for (const auto& v : fig.at("values"))
        if (v.at("class") == "bar-sublabel") shown.push_back(v.at("value").get<double>());
    for (const auto& row : dr.at("rows")) {
        computed.push_back(row.at("aggregate_tokens_per_s").get<double>());
        computed.push_back(row.at("per_request_tokens_per_s").get<double>());
    }
    CHECK(shown == computed);
    CHECK(computed.size() == 4);
}

// Issue #29: the captions were the catalogue's, the document's inputs whatever was drawn: "32
// layers, 8192 tokens, BF16" under a figure of 61 layers, 3000 tokens and fp8.
TEST_CASE("a figure's caption states the inputs it was drawn from, in --json, the file line and Chinese", "[cli][figure]") {
    struct Case {
        std::vector<std::string> args;
        std::string caption, zh;
    };
    const std::vector<Case> cases = {
        {{"doc1-fig7", "--layers", "61", "--seq-len", "3000", "--kv-dtype", "fp8", "--kv-heads", "2", "--head-dim", "96"},
         "Cache memory substituted: 61 layers, 3000 tokens, FP8",
         "61 层、3000 token、FP8 的缓存内存代入"},
        {{"doc1-fig7"}, "Cache memory substituted: 32 layers, 8192 tokens, BF16", "32 层、8192 token、BF16 的缓存内存代入"},
        {{"doc1-fig13", "--p", "0.5,0.25,0.25,0", "--q", "0,0.2,0.3,0.5"},
         "Acceptance mass and residual on a 4-token vocabulary",
         "4 token 词表上的接受质量与残差补偿"},
        {{"doc1-fig6", "--q-heads", "12"}, "The same 12 query heads against 4, 2, 1 K/V heads", "相同 12 个查询头，对应 4, 2, 1 个 K/V 头"},
        {{"doc1-fig6", "--q-heads", "8", "--kv-heads", "2"}, "The same 8 query heads against 2 K/V heads", "相同 8 个查询头，对应 2 个 K/V 头"},
        {{"doc1-fig17"}, "4 cache paths compared with the no-cache pass on fixed inputs",
         "用固定输入把 4 条缓存计算路径与无缓存路径比较"}};
    const Scratch dir("figure-captions");
    const std::string file = (dir.path / "f.svg").string();
    for (const auto& c : cases) {
        INFO(Catch::Detail::stringify(c.args));
        const nlohmann::json j = parse_json(run_inferlab(with(with({"figure"}, c.args), {"--json"})));
        CHECK(j.at("caption") == c.caption);
        const CliResult wrote = run_inferlab(with(with({"figure"}, c.args), {"--out", file}));
        REQUIRE(wrote.status == 0);
        CHECK(wrote.out.find("bytes): " + c.caption + "\n") != std::string::npos);
        const CliResult zh = run_inferlab(with(with({"figure"}, c.args), {"--out", file, "--lang", "zh"}));
        REQUIRE(zh.status == 0);
        CHECK(zh.out.find("字节）：" + c.zh + "\n") != std::string::npos);
    }
}

// Issue #29: Figure 7's subtitle said "from 32 (MHA) to 32, then B from 1 to 1" and its legend named a
// GQA colour it never drew; Figure 14 called the user's own verifier "not the document's: chosen to
// show the gap".
TEST_CASE("figures 7 and 14 say what was drawn and who chose it", "[cli][figure]") {
    const CliResult mha = run_inferlab({"figure", "doc1-fig7", "--kv-heads", "32", "--batch", "1"});
    REQUIRE(mha.status == 0);
    CHECK(svg_items(mha.out, "subtitle").at(0).text == "H_kv = H_q = 32 (MHA), at B = 1");
    CHECK(svg_items(mha.out, "bar").size() == 1);
    CHECK(svg_items(mha.out, "legend").size() == 1);
    const CliResult gqa = run_inferlab({"figure", "doc1-fig7"});
    CHECK(svg_items(gqa.out, "subtitle").at(0).text == "H_kv from 32 (MHA) to 8, then B from 1 to 8");
    const std::string chosen = " (not the document's: chosen to show the gap)";
    CHECK(svg_all_text(run_inferlab({"figure", "doc1-fig14"}).out).find(chosen) != std::string::npos);
    const std::string own = svg_all_text(run_inferlab({"figure", "doc1-fig14", "--tpr", "0.7", "--fpr", "0.1"}).out);
    CHECK(own.find("verifier TPR = 0.7, FPR = 0.1, a random pick when it accepts none\n") != std::string::npos);
    CHECK(own.find(chosen) == std::string::npos);
}
