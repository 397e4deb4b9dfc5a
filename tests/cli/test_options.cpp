// One rule per option: every subcommand that takes --threads, --temperature, --top-p, --bits or a
// token count refuses the same values with the same message (apps/options.hpp). The subcommands
// are found by walking the real binary's --help pages, so a new subcommand is covered the day it
// takes the option.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "../support/cli.hpp"

using namespace inferlab::test;

namespace {

// Names listed under "Subcommands:" in a --help page.
std::vector<std::string> subcommands_of(const std::vector<std::string>& path) {
    auto args = path;
    args.push_back("--help");
    auto r = run_inferlab(args);
    REQUIRE(r.status == 0);
    std::vector<std::string> names;
    std::istringstream in(r.out);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (line.rfind("Subcommands:", 0) == 0) {
            inside = true;
            continue;
        }
        if (!inside) continue;
        if (line.size() < 3 || line[0] != ' ') break;
        if (line[2] == ' ') continue;  // a description wrapped to 80 columns (#15) continues here
        std::istringstream words(line);
        std::string name;
        words >> name;
        names.push_back(name);
    }
    return names;
}

// Every command path (["kv-mem"], ["model", "logits"], ...) whose --help offers `flag`.
std::vector<std::vector<std::string>> commands_taking(const std::string& flag) {
    std::vector<std::vector<std::string>> all, found;
    for (const auto& top : subcommands_of({})) {
        auto inner = subcommands_of({top});
        if (inner.empty()) all.push_back({top});
        for (const auto& s : inner) all.push_back({top, s});
    }
    for (const auto& path : all) {
        auto args = path;
        args.push_back("--help");
        auto r = run_inferlab(args);
        if (r.out.find(flag + " ") != std::string::npos) found.push_back(path);
    }
    return found;
}

}  // namespace

TEST_CASE("the help walk finds the model subcommands", "[cli][options]") {
    auto model = subcommands_of({"model"});
    CHECK(std::find(model.begin(), model.end(), "speculate") != model.end());
    CHECK(std::find(model.begin(), model.end(), "logits") != model.end());
}

TEST_CASE("every subcommand that takes --threads refuses 0 and 100000 with one message", "[cli][options]") {
    auto commands = commands_taking("--threads");
    // logits, check-cache, generate, bench, speculate, roofline at least (the crash was in the last two).
    REQUIRE(commands.size() >= 6);
    for (const auto& c : commands) {
        INFO(c.back());
        expect_error(with(c, {"--threads", "100000"}), "--threads '100000': must be between 1 and 256");
        expect_error(with(c, {"--threads", "0"}), "--threads '0': must be a positive integer");
    }
}

TEST_CASE("every subcommand that takes --top-p refuses 0 and 1.5 with one message", "[cli][options]") {
    auto commands = commands_taking("--top-p");
    REQUIRE(commands.size() >= 3);  // model generate, model speculate, spec-accept
    for (const auto& c : commands) {
        INFO(c.back());
        // spec-accept reads --top-p only with logits, so give it some.
        auto base = c.front() == "spec-accept" ? with(c, {"--p-logits", "1,2", "--q-logits", "2,1"}) : c;
        expect_error(with(base, {"--top-p", "0"}), "--top-p '0': must be in (0, 1]");
        expect_error(with(base, {"--top-p", "1.5"}), "--top-p '1.5': must be in (0, 1]");
    }
}

TEST_CASE("temperature 0 is greedy in every subcommand that samples", "[cli][options]") {
    for (const auto& c : commands_taking("--temperature")) {
        INFO(c.back());
        auto base = c.front() == "spec-accept" ? with(c, {"--p-logits", "1,2", "--q-logits", "2,1"}) : c;
        expect_error(with(base, {"--temperature", "-1"}), "--temperature '-1': must be 0 (greedy) or a finite positive number");
    }
    // generate: temperature 0 gives the argmax at every step, as --temperature's default does.
    auto g0 = run_inferlab({"model", "generate", "--model", "demo-gqa", "--prompt", "1,2,3", "--steps", "4", "--temperature", "0", "--json"});
    REQUIRE(g0.status == 0);
    auto greedy = parse_json(g0);
    // speculate: temperature 0 is the greedy rule, so the output equals generate's greedy tokens.
    auto s0 = run_inferlab({"model", "speculate", "--model", "demo-gqa", "--prompt", "1,2,3", "--steps", "4", "--temperature", "0", "--json"});
    REQUIRE(s0.status == 0);
    auto spec = parse_json(s0);
    REQUIRE(greedy.contains("generated"));
    REQUIRE(spec.contains("tokens"));
    CHECK(spec["tokens"] == greedy["generated"]);
    // spec-accept: with temperature 0, p is all mass on the argmax of the target's logits (index 2),
    // q all mass on index 0; the acceptance rule then accepts with probability 0.
    auto a0 = run_inferlab({"spec-accept", "--p-logits", "1,2,3", "--q-logits", "3,2,1", "--temperature", "0", "--json"});
    REQUIRE(a0.status == 0);
    auto acc = parse_json(a0);
    REQUIRE(acc.contains("p"));
    CHECK(acc["p"] == nlohmann::json::array({0.0, 0.0, 1.0}));
    CHECK(acc["accept_prob"].get<double>() == 0.0);
}

TEST_CASE("bits follow one rule per command: kv-quant takes 8 or 4, quantize 2 to 16", "[cli][options]") {
    expect_error({"model", "kv-quant", "--model", "demo-gqa", "--bits", "3"}, "--bits '3': must be 8 or 4");
    expect_error({"quantize", "--x", "0.5", "--step", "0.1", "--bits", "1"}, "--bits '1': must be between 2 and 16");
}

TEST_CASE("token counts that do not fit the model's sequence are refused, naming the flag", "[cli][options]") {
    expect_error({"model", "generate", "--model", "demo-gqa", "--prompt", "1,2", "--steps", "18446744073709551615"},
                 "--steps '18446744073709551615'");
    expect_error({"model", "speculate", "--model", "demo-gqa", "--prompt", "1,2", "--steps", "100000"},
                 "exceeds the model's maximum sequence length");
    expect_error({"model", "kv-quant", "--model", "demo-gqa", "--positions", "100000"}, "--positions '100000'");
}
