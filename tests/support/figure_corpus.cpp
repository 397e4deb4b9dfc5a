#include "figure_corpus.hpp"

#include <catch2/catch.hpp>

#include "cli.hpp"
#include "svg_check.hpp"

namespace inferlab::test {

std::vector<Args> svg_runs() {
    return {{"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "8192", "--batch", "1,8,64"},
            {"decode-roofline", "--model", "mixtral-8x7b", "--hw", "h100-sxm", "--seq-len", "4096", "--batch", "1..64",
             "--memory", "80GiB"},
            {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
             "--batch", "1,8"},
            {"spec-accept", "--alpha", "0.8", "--gamma", "4", "--cost-ratio", "0.1"},
            {"spec-accept", "--p", "0.6,0.3,0.1", "--q", "0.4,0.4,0.2"},
            {"best-of-n", "--p", "0.3", "--n", "1..64", "--tpr", "0.9", "--fpr", "0.2", "--target", "0.9"},
            {"best-of-n", "--search", "--q", "0.8", "--step-tpr", "0.9", "--step-fpr", "0.3", "--steps", "1..12", "--tpr",
             "0.9", "--fpr", "0.1"},
            {"quantize", "--x", "0.37", "--step", "0.1", "--qmax", "7"},
            {"quantize", "--values", "0.1,-0.5,0.25,1", "--bits", "4"},
            {"quantize", "--gen", "normal:16x64", "--bits", "4", "--group-size", "32"},
            {"quantize", "--model", "llama-3-8b", "--seq-len", "8192", "--group-size", "64"},
            {"model", "check-cache", "--model", "demo-gqa", "--tokens", "1,2,3,4,5", "--chunk", "2"}};
}

std::vector<Args> tryout_svg_runs() {
    return {{"decode-roofline", "--model", "gemma-2-9b", "--weight-dtype", "bf16", "--kv-dtype", "fp8", "--hw",
             "a100-sxm-80gb", "--seq-len", "20000", "--batch", "1..300"},
            {"spec-accept", "--p", "0.5,0.25,0.25,0", "--q", "0,0.2,0.3,0.5"}};
}

std::vector<Args> figure_runs() {
    return {{"figure", "doc1-fig6", "--q-heads", "12", "--kv-heads", "12,4,1"},
            {"figure", "doc1-fig7", "--layers", "61", "--seq-len", "3000", "--kv-dtype", "fp8", "--kv-heads", "2",
             "--head-dim", "96"},
            {"figure", "doc1-fig9", "--model", "mixtral-8x7b", "--hw", "h100-sxm", "--seq-len", "4096", "--batch", "1,8,64"},
            {"figure", "doc1-fig9", "--batch", "1,2,4,8,16,32,64,128,256,512,1024,2048"},
            {"figure", "doc1-fig12", "--gamma", "16", "--alpha", "0.5"},
            {"figure", "doc1-fig13", "--p", "0.5,0.25,0.25,0", "--q", "0,0.2,0.3,0.5"},
            {"figure", "doc1-fig13", "--p", "0.1,0.5,0.4", "--q", "0.3,0.4,0.3"},
            {"figure", "doc1-fig13", "--p", "0.25,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0.75", "--q",
             "0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625,0.0625"}};
}

std::vector<DrawnFigure> figure_corpus(const std::string& lang) {
    std::vector<Args> figures;
    // Held in a named value: a range-for over a temporary's member would read it after it is freed.
    const nlohmann::json list = parse_json(run_inferlab({"figure", "--list", "--json"}));
    for (const auto& f : list.at("figures"))
        if (f.value("drawn", false)) figures.push_back({"figure", f.at("name").get<std::string>()});
    for (const auto& a : figure_runs()) figures.push_back(a);
    const Scratch dir("figure-corpus");
    const std::string file = (dir.path / "f.svg").string();
    std::vector<DrawnFigure> out;
    std::vector<Args> own = svg_runs();
    for (const auto& a : tryout_svg_runs()) own.push_back(a);
    for (bool own_svg : {false, true})
        for (const Args& args : own_svg ? own : figures) {
            std::string cmd = "inferlab";
            for (const auto& a : args) cmd += " " + a;
            const CliResult r = run_inferlab(with(args, own_svg ? Args{"--lang", lang, "--svg", file} : Args{"--lang", lang}));
            INFO(cmd << "\n" << r.err);
            REQUIRE(r.status == 0);
            out.push_back({cmd + " --lang " + lang, own_svg ? slurp(file) : r.out});
        }
    return out;
}

}  // namespace inferlab::test
