// model pitfall through the real binary: the list, one model pitfall and one calculator in every
// output form, and bad input.
#include <catch2/catch.hpp>

#include <sstream>

#include "../support/cli.hpp"

using namespace inferlab::test;

namespace {
// Every line of `out` fits 80 columns (code points: the tables' rules are one column each).
void check_fits_80(const std::string& out) {
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        INFO(line);
        std::size_t cols = 0;
        for (unsigned char c : line) cols += (c & 0xC0) != 0x80;
        CHECK(cols <= 80);
    }
}
}  // namespace

TEST_CASE("model pitfall --list names every pitfall, in text and JSON", "[cli][pitfall]") {
    auto r = run_inferlab({"model", "pitfall", "--list"});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    for (const char* n : {"stale-cache", "wrong-layer-cache", "top-left-mask", "position-restart", "skipped-cache-update",
                          "unmasked-padding", "cache-then-window", "window-on-dense", "gib-as-gb", "mean-length",
                          "threshold-accept", "same-distribution"})
        CHECK(r.out.find(n) != std::string::npos);
    auto j = parse_json(run_inferlab({"model", "pitfall", "--list", "--json"}));
    CHECK(j["pitfalls"].size() == 12);
}

TEST_CASE("model pitfall top-left-mask: the broken path is wrong from the chunk, caught by the logit check", "[cli][pitfall]") {
    auto r = run_inferlab({"model", "pitfall", "top-left-mask", "--json"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    auto j = parse_json(r);
    // demo-gqa: a 4-token prefill, then a 4-token chunk after it; the chunk's first row is position 4.
    CHECK(j["first_wrong_pos"] == 4);
    CHECK(j["correct_max_err"].get<double>() <= j["tolerance"].get<double>());
    CHECK(j["broken_max_err"].get<double>() > 100 * j["tolerance"].get<double>());
    CHECK(j["caught_by"] == "logits");
    CHECK(j["positions"].size() == j["tokens"].size());
    CHECK(j["same_distribution"].is_null());  // fixed schema: absent values are null
    CHECK(j["fit_p_correct"].is_null());
    REQUIRE(j["checks"].size() == 4);
    for (const auto& c : j["checks"]) CHECK(c["fired_on_correct"] == false);
}

TEST_CASE("model pitfall position-restart: text fits 80 columns and names the positions check", "[cli][pitfall]") {
    auto r = run_inferlab({"model", "pitfall", "position-restart"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("caught by: positions") != std::string::npos);
    check_fits_80(r.out);
    check_fits_80(run_inferlab({"model", "pitfall", "--list"}).out);
    check_fits_80(run_inferlab({"model", "pitfall", "position-restart", "--explain"}).out);
    check_fits_80(run_inferlab({"model", "pitfall", "threshold-accept"}).out);
    auto csv = run_inferlab({"model", "pitfall", "position-restart", "--csv"});
    CHECK(csv.status == 0);
    CHECK(csv.out.rfind("pos,token,correct_err,broken_err", 0) == 0);
}

TEST_CASE("model pitfall gib-as-gb: the document's 1 GiB against 1.073741824", "[cli][pitfall]") {
    auto j = parse_json(run_inferlab({"model", "pitfall", "gib-as-gb", "--json"}));
    REQUIRE(j["quantities"].size() == 4);
    CHECK(j["quantities"][1]["correct"] == 1.0);
    CHECK(j["quantities"][1]["shortcut"].get<double>() > 1.07);
    CHECK(j["positions"].empty());
    CHECK(j["tolerance"].is_null());
    auto csv = run_inferlab({"model", "pitfall", "mean-length", "--csv"});
    CHECK(csv.status == 0);
    CHECK(csv.out == "name,correct,shortcut,unit\ntokens,100,100,tokens\nblocks,10,8,blocks\nallocated,20971520,16777216,B\n");
}

TEST_CASE("model pitfall calculators print their inputs, load no model, and --explain gives the formula with values", "[cli][pitfall]") {
    auto t = run_inferlab({"model", "pitfall", "threshold-accept"});
    REQUIRE(t.status == 0);
    CHECK(t.out.find("target p: 0.5, 0.3, 0.2") != std::string::npos);
    CHECK(t.out.find("draft q: 0.2, 0.3, 0.5") != std::string::npos);
    CHECK(t.out.find("threshold τ: 0.3") != std::string::npos);
    auto m = run_inferlab({"model", "pitfall", "mean-length"});
    CHECK(m.out.find("request lengths: 1,17,33,49 tokens (B = 4)") != std::string::npos);
    auto e = run_inferlab({"model", "pitfall", "mean-length", "--explain"});
    REQUIRE(e.status == 0);
    CHECK(e.out != m.out);
    CHECK(e.out.find("Σ_i ceil(S_i/16) = 1 + 2 + 3 + 4 = 10 blocks") != std::string::npos);
    CHECK(e.out.find("B·ceil(25/16) = 4·2 = 8 blocks") != std::string::npos);
    auto g = run_inferlab({"model", "pitfall", "gib-as-gb", "--explain"});
    CHECK(g.out.find("2·L·B·S·H_kv·d·b/8 = 2·32·1·8192·8·128·16/8 = 1073741824 B") != std::string::npos);
    check_fits_80(e.out);
    check_fits_80(g.out);
    // A calculator uses no model: a model flag there does nothing, so it is an error, not ignored.
    expect_error({"model", "pitfall", "gib-as-gb", "--model", "demo-gqa"}, "--model 'demo-gqa': has no effect on gib-as-gb");
    expect_error({"model", "pitfall", "mean-length", "--seed", "3"}, "--seed '3': has no effect on mean-length");
}

TEST_CASE("model pitfall --explain on a model pitfall gives the error formula, both paths' values and each check", "[cli][pitfall]") {
    auto d = run_inferlab({"model", "pitfall", "skipped-cache-update"});
    auto e = run_inferlab({"model", "pitfall", "skipped-cache-update", "--explain"});
    REQUIRE(e.status == 0);
    CHECK(e.out != d.out);
    CHECK(e.out.find("err(t) = max over the vocabulary") != std::string::npos);
    CHECK(e.out.find("fires on the broken path at step 1, position 8") != std::string::npos);
    CHECK(d.out.find("caught by: cache_length") != std::string::npos);
    check_fits_80(e.out);
}

TEST_CASE("model pitfall: an unknown name or none at all is exit 2 with one error line", "[cli][pitfall]") {
    expect_error({"model", "pitfall", "nope"}, "NAME 'nope': is not a pitfall");
    expect_error({"model", "pitfall"}, "NAME is required");
    expect_error({"model", "pitfall", "stale-cache", "--sample-seed", "-1"}, "--sample-seed");
    expect_error({"model", "pitfall", "--list", "stale-cache"}, "NAME 'stale-cache': is not taken with --list");
    expect_error({"model", "pitfall", "gib-as-gb", "--sample-seed", "4"}, "--sample-seed '4': has no effect on gib-as-gb");

}

TEST_CASE("model paged: block tables, reference counts, one copy-on-write, the pool returned whole", "[cli][paged]") {
    auto r = run_inferlab({"model", "paged", "--json"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    auto j = parse_json(r);
    CHECK(j["copies_on_write"] == 1);
    CHECK(j["pool_whole_at_end"] == true);
    CHECK(j["max_logit_diff_vs_unshared"].get<double>() <= 1e-5);  // 1e-5 absolute: prefix K/V from another prefill's rows
    CHECK(j["peak_blocks_unshared"].get<int>() - j["peak_blocks_shared"].get<int>() == 1);
    const auto& s0 = j["steps"][0]["seqs"];
    REQUIRE(s0.size() == 2);
    CHECK(s0[1]["table"][0] == s0[0]["table"][0]);  // the shared prefix block
    CHECK(s0[1]["refs"][0] == 2);
    CHECK(s0[1]["shared_from"] == 0);
    CHECK(s0[0]["shared_from"].is_null());
    auto t = run_inferlab({"model", "paged"});
    CHECK(t.status == 0);
    CHECK(t.out.find("copied a shared block") != std::string::npos);
    CHECK(t.out.find("logical→physical") != std::string::npos);
    check_fits_80(t.out);
}

TEST_CASE("kv-mem --shared-prefix equals the bytes model paged measures on the same shapes", "[cli][paged]") {
    // demo-gqa in float32: three prompts of 5 tokens sharing 3, 3 tokens generated: S = 7 cached.
    auto paged = parse_json(run_inferlab({"model", "paged", "--prompts", "1,2,3,4,5;1,2,3,6,7;1,2,3,8,9", "--blocks", "32",
                                          "--block-size", "2", "--steps", "3", "--json"}));
    auto kv = parse_json(run_inferlab({"kv-mem", "--model", "demo-gqa", "--kv-dtype", "fp32", "--seq-len", "7", "--batch", "3",
                                       "--block-size", "2", "--shared-prefix", "3", "--json"}));
    const auto& sp = kv["shared_prefix"];
    CHECK(sp["total_bytes"] == paged["peak_bytes_shared"]);
    CHECK(sp["unshared_bytes"] == paged["peak_bytes_unshared"]);
    CHECK(sp["total_blocks"] == paged["peak_blocks_shared"]);
    CHECK(sp["partial_tokens"] == 1);
    expect_error({"kv-mem", "--model", "demo-gqa", "--seq-len", "7", "--block-size", "2", "--shared-prefix", "7"},
                 "--shared-prefix '7': must be less than --seq-len 7");
    expect_error({"kv-mem", "--model", "demo-gqa", "--seq-len", "7", "--shared-prefix", "3"}, "needs --block-size");
}

TEST_CASE("model paged --no-share prints only the unshared run: no sharing lines, null sharing keys", "[cli][paged]") {
    auto t = run_inferlab({"model", "paged", "--no-share"});
    REQUIRE(t.status == 0);
    CHECK(t.out.find("No sharing") != std::string::npos);
    CHECK(t.out.find("with sharing") == std::string::npos);
    CHECK(t.out.find("Copies on write") == std::string::npos);
    CHECK(t.out.find("Peak: ") != std::string::npos);
    auto j = parse_json(run_inferlab({"model", "paged", "--no-share", "--json"}));
    CHECK(j["share_prefix"] == false);
    CHECK(j["peak_blocks_shared"].is_null());
    CHECK(j["bytes_saved"].is_null());
    CHECK(j["max_logit_diff_vs_unshared"].is_null());
    CHECK(j["copies_on_write"].is_null());
    // The same unshared peak as the comparison run reports.
    auto both = parse_json(run_inferlab({"model", "paged", "--json"}));
    CHECK(j["peak_blocks_unshared"] == both["peak_blocks_unshared"]);
    CHECK(j["peak_bytes_unshared"] == both["peak_bytes_unshared"]);
}

TEST_CASE("model paged: long block tables are elided in text within 80 columns, whole in JSON", "[cli][paged]") {
    std::string p;
    for (int i = 1; i <= 60; ++i) {
        if (!p.empty()) p += ',';
        p += std::to_string(i);
    }
    const std::vector<std::string> args{"model", "paged", "--prompts", p + ";" + p + ",7", "--blocks", "100", "--steps", "2"};
    auto t = run_inferlab(args);
    REQUIRE(t.status == 0);
    CHECK(t.out.find("0→") != std::string::npos);
    CHECK(t.out.find(" … ") != std::string::npos);
    check_fits_80(t.out);
    auto json_args = args;
    json_args.push_back("--json");
    auto j = parse_json(run_inferlab(json_args));
    CHECK(j["steps"][0]["seqs"][0]["table"].size() == 30);  // 60 tokens in blocks of 2
}

TEST_CASE("model paged: bad prompts and a pool too small are exit 2", "[cli][paged]") {
    expect_error({"model", "paged", "--prompts", "1,2;"}, "--prompts '1,2;': every prompt needs at least one token");
    expect_error({"model", "paged", "--prompts", "1,2;;3"}, "--prompts '1,2;;3': every prompt needs at least one token");
    expect_error({"model", "paged", "--blocks", "0"}, "--blocks '0': must be a positive integer");
    expect_error({"model", "paged", "--blocks", "2"}, "--blocks '2': cannot hold sequence 0 alone: its 6 cached tokens");
    expect_error({"model", "paged", "--block-size", "0"}, "--block-size");
}
