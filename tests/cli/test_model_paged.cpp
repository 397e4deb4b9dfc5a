// inferlab model paged (issue #16): a pool too small for every sequence at once is waited out
// and preempted, not refused; the printed timeline shows the step of the reported peak; and
// bytes_saved is explained where the unshared run was capped by the pool.
#include <catch2/catch.hpp>

#include "../support/cli.hpp"
#include "../support/contracts.hpp"

using namespace inferlab::test;

TEST_CASE("model paged: five one-token prompts on four one-token blocks all finish, the pool returned whole", "[cli][paged]") {
    // Once exit 2, "--blocks '4': cannot hold sequence 2 alone", although each sequence caches
    // 1 + 3 − 1 = 3 tokens: 3 blocks of the pool's 4.
    const std::vector<std::string> args{"model", "paged", "--prompts", "1;1;1;1;1", "--blocks", "4", "--block-size", "1",
                                        "--steps", "3"};
    auto t = run_inferlab(args, "", {"COLUMNS=400"});  // the summary on one line
    CHECK(t.status == 0);
    CHECK(t.err.empty());
    CHECK(t.out.find("pool whole at the end: yes") != std::string::npos);
    auto json_args = args;
    json_args.push_back("--json");
    auto r = run_inferlab(json_args);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const auto j = parse_json(r);
    REQUIRE(j["generated"].size() == 5);
    for (const auto& g : j["generated"]) CHECK(g.size() == 3);
    CHECK(j["pool_whole_at_end"] == true);
    CHECK(j["preemptions"].get<int>() > 0);
    CHECK(j["recomputed_tokens"].get<int>() > 0);
    // Every sequence generates the same tokens: the same prompt, whatever its waits.
    for (const auto& g : j["generated"]) CHECK(g == j["generated"][0]);
    const auto& last = j["steps"].back();
    CHECK(last["free_after"] == 4);
    for (const auto& s : last["seqs"]) CHECK(s["state"] == "finished");
}

TEST_CASE("model paged: a sequence that alone needs more blocks than the pool is refused with the numbers", "[cli][paged]") {
    // 5 + 3 − 1 = 7 cached tokens in blocks of 2: 4 blocks.
    expect_error({"model", "paged", "--prompts", "1,2;1,2,3,4,5", "--blocks", "3", "--block-size", "2", "--steps", "3"},
                 "--blocks '3': cannot hold sequence 1 alone: its 7 cached tokens (5 of prompt + 3 generated − 1, the last "
                 "never fed back) need 4 blocks of 2 tokens, more than the pool's 3");
    auto fits = run_inferlab({"model", "paged", "--prompts", "1,2;1,2,3,4,5", "--blocks", "4", "--block-size", "2", "--steps", "3"});
    CHECK(fits.status == 0);
}

TEST_CASE("model paged: the reported peak is a printed step's, in text, JSON and --explain", "[cli][paged]") {
    // The default run peaks at its last step, where both sequences finish.
    const auto j = parse_json(run_inferlab({"model", "paged", "--json"}));
    const int peak = j["peak_blocks_shared"].get<int>();
    const int at = j["peak_step_shared"].get<int>();
    REQUIRE(at < static_cast<int>(j["steps"].size()));
    CHECK(j["steps"][at]["used_blocks"] == peak);
    for (const auto& s : j["steps"]) CHECK(s["used_blocks"].get<int>() <= peak);
    const std::string step_line = "step " + std::to_string(at) + ": " + std::to_string(peak) + " used";
    const std::string summary = std::to_string(peak) + " blocks at step " + std::to_string(at);
    for (const char* mode : {"", "--explain"}) {
        std::vector<std::string> args{"model", "paged"};
        if (*mode) args.push_back(mode);
        auto t = run_inferlab(args);
        REQUIRE(t.status == 0);
        INFO(mode);
        const auto line = t.out.find(step_line);
        REQUIRE(line != std::string::npos);
        CHECK(t.out.substr(line, t.out.find('\n', line) - line).find("(the peak)") != std::string::npos);
        CHECK(t.out.find("Peak with sharing:    " + summary) != std::string::npos);
    }
    // The sequences that finish at the peak step show the blocks they hand back.
    for (const auto& s : j["steps"][at]["seqs"])
        if (s["state"] == "finished") CHECK(!s["table"].empty());
}

TEST_CASE("model paged: bytes_saved is the shared peak's own saving, and a pool that capped the unshared run says so",
          "[cli][paged]") {
    // On 8 blocks of 1 token the unshared run cannot hold both sequences at once: they wait, and
    // its peak (7) falls below the shared one (8); compared peak against peak, that was −1 block.
    const std::vector<std::string> args{"model", "paged", "--prompts", "1,2,3,4;1,2,3,9,9", "--blocks", "8", "--block-size", "1"};
    auto json_args = args;
    json_args.push_back("--json");
    const auto j = parse_json(run_inferlab(json_args));
    CHECK(j["peak_blocks_unshared"].get<int>() < j["peak_blocks_shared"].get<int>());
    // The shared peak's tables share the 3-token prefix's 3 blocks: 3 blocks of 4,608 bytes saved.
    CHECK(j["block_bytes"] == 4608);
    CHECK(j["bytes_saved"] == 3 * 4608);
    const std::string note = j["saving_note"].get<std::string>();
    CHECK(note.find("sharing saves 3 blocks at its peak") != std::string::npos);
    CHECK(note.find("without sharing the pool of 8 blocks could not run every sequence at once") != std::string::npos);
    auto t = run_inferlab(args, "", {"COLUMNS=400"});  // the note on one line
    REQUIRE(t.status == 0);
    CHECK(t.out.find("is what the pool allowed") != std::string::npos);
    CHECK(t.out.find("Saved: -") == std::string::npos);
    // A roomy pool: the same saving, and nothing about the pool.
    const auto roomy = parse_json(run_inferlab({"model", "paged", "--prompts", "1,2,3,4;1,2,3,9,9", "--blocks", "16",
                                                "--block-size", "1", "--json"}));
    CHECK(roomy["bytes_saved"] == 3 * 4608);
    CHECK(roomy["peak_blocks_unshared"].get<int>() - roomy["peak_blocks_shared"].get<int>() == 3);
    CHECK(roomy["saving_note"].get<std::string>().find("pool") == std::string::npos);
    // No shared block at the peak: a zero saving, said in words.
    const auto none = parse_json(run_inferlab({"model", "paged", "--prompts", "1,2;3,4", "--json"}));
    CHECK(none["bytes_saved"] == 0);
    CHECK(none["saving_note"].get<std::string>().find("no block is held by two sequences") != std::string::npos);
}

TEST_CASE("model paged --csv: one row per logical block", "[cli][paged]") {
    const auto r = run_inferlab({"model", "paged", "--csv"});
    REQUIRE(r.status == 0);
    const auto rows = parse_csv(r.out);
    REQUIRE(rows.size() > 1);
    CHECK(rows[0][4] == "logical_block");
}
