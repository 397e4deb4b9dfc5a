// Output contracts of `inferlab decode-roofline` (issue #15): every table as CSV a real parser
// reads, JSON keys the README documents with one schema per mode (null, never absent), and text
// within 80 columns.
#include <catch2/catch.hpp>

#include <set>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

namespace {

using Args = std::vector<std::string>;

const Args kDoc = {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s"};

// One command per mode, with the tables its output has.
struct Mode {
    const char* name;
    Args args;
    std::vector<std::string> tables;
};

std::vector<Mode> modes() {
    return {
        {"fixed M_KV", with(kDoc, {"--batch", "1,8"}), {"rows"}},
        {"fixed M_KV, π and memory", with(kDoc, {"--batch", "1..4", "--peak-flops", "989TFLOPS", "--memory", "80GiB"}), {"rows"}},
        {"a model on a preset", {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "8192", "--batch", "1,8"}, {"rows"}},
        {"lengths as the batch", {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--seq-len", "8192,1024"}, {"rows"}},
        {"sliding windows", {"decode-roofline", "--model", "gemma-2-9b", "--hw", "h100-sxm", "--seq-len", "8192", "--batch", "1,8"}, {"rows"}},
        {"mixture of experts", {"decode-roofline", "--model", "mixtral-8x7b", "--hw", "h100-sxm", "--seq-len", "4096", "--batch", "1,8,64"}, {"rows"}},
        {"a whole generation", {"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--prompt-len", "2048", "--output-len", "16", "--batch", "1,8"}, {"rows", "generation"}},
        {"a generation without π", {"decode-roofline", "--model", "llama-3-8b", "--bandwidth", "1TB/s", "--prompt-len", "64", "--output-len", "1"}, {"rows", "generation"}},
        {"extreme bandwidths",
         {"decode-roofline", "--weights-bytes", "14GB", "--kv-bytes-per-request", "1GiB", "--bandwidth", "1e30", "--batch", "1,8"},
         {"rows"}},
        {"the hardware list", {"decode-roofline", "--list-hw"}, {"hardware"}},
    };
}

}  // namespace

TEST_CASE("decode-roofline --csv: every table of every mode passes the CSV contract", "[cli][contract][decode-roofline]") {
    for (const auto& m : modes()) {
        INFO(m.name);
        check_every_csv_table(m.args, m.tables, m.name);
    }
}

TEST_CASE("decode-roofline --json: only documented keys, and one schema per mode", "[cli][contract][decode-roofline]") {
    const auto doc = documented_keys("decode-roofline");
    std::set<std::string> first_top;
    for (const auto& m : modes()) {
        if (std::string(m.name) == "the hardware list") continue;  // its own document: hardware[]
        INFO(m.name);
        const auto j = parse_json(run_inferlab(with(m.args, {"--json"})));
        CHECK(undocumented_keys(j, doc).empty());
        // Every mode has the same top-level keys: a section not computed is null.
        if (first_top.empty()) first_top = top_level_keys(j);
        CHECK(top_level_keys(j) == first_top);
    }
    // Optional inputs leave their keys in place, null: with and without π and memory.
    const auto bare = parse_json(run_inferlab(with(kDoc, {"--batch", "1,8", "--json"})));
    const auto full = parse_json(run_inferlab(with(kDoc, {"--batch", "1,8", "--peak-flops", "989TFLOPS", "--memory", "80GiB", "--json"})));
    CHECK(key_paths(bare) == key_paths(full));
    CHECK(bare["rows"][0]["fits"].is_null());
    CHECK(bare["inputs"]["peak_flops"].is_null());
    CHECK(bare["generation"].is_null());
    // A whole generation with and without π: TTFT's keys stay, null.
    const Args gen = {"decode-roofline", "--model", "llama-3-8b", "--prompt-len", "64", "--output-len", "4", "--json"};
    CHECK(key_paths(parse_json(run_inferlab(with(gen, {"--bandwidth", "1TB/s"})))) ==
          key_paths(parse_json(run_inferlab(with(gen, {"--hw", "h100-sxm"})))));
    const auto hw = parse_json(run_inferlab({"decode-roofline", "--list-hw", "--json"}));
    CHECK(undocumented_keys(hw, documented_keys("decode-roofline --list-hw")).empty());
}

TEST_CASE("decode-roofline text and --explain fit 80 columns", "[cli][contract][decode-roofline]") {
    for (const auto& m : modes()) {
        INFO(m.name);
        const auto h = run_inferlab(m.args, "", {"COLUMNS=80"});
        REQUIRE(h.status == 0);
        CHECK(widest_line(h.out) <= 80);
        const auto x = run_inferlab(with(m.args, {"--explain"}), "", {"COLUMNS=80"});
        REQUIRE(x.status == 0);
        CHECK(widest_line(x.out) <= 80);
    }
}
