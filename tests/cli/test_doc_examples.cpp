// Every documented example runs: the examples in each --help page (found by walking the real
// binary's subcommand list, so a new subcommand or example is tested without editing this file),
// every `$ inferlab ...` line in the README's code blocks, and every script in examples/.
// An example passes when it exits 0, prints something, writes nothing on stderr and prints no
// NaN or infinity.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../support/cli.hpp"

using namespace inferlab::test;
namespace fs = std::filesystem;

namespace {

// The examples that are timed benchmarks (tens of seconds on two cores, minutes under ASan): they
// run under the `bench` label, which scripts/test.sh runs in its Release build only. Keyed by the
// example's subcommand path.
const std::set<std::string> kSlowCommands = {"model bench", "model roofline"};

struct HelpPage {
    std::string path;                               // "" for the top level, else e.g. "model bench"
    std::vector<std::string> subcommands;           // as listed under "Subcommands:"
    std::vector<std::string> examples;              // command lines without the leading "inferlab "
};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::vector<std::string> split_words(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// An example's words as a POSIX shell splits them, for the one quoting the examples use: '...'
// keeps its contents (a ';' between prompts, say) as part of one word.
std::vector<std::string> split_command(const std::string& s) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false, quoted = false;
    for (char c : s) {
        if (c == '\'' ) {
            quoted = !quoted;
            in_word = true;
        } else if (!quoted && (c == ' ' || c == '\t')) {
            if (in_word) out.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    REQUIRE_FALSE(quoted);  // an unclosed quote in an example is a typo
    if (in_word) out.push_back(word);
    return out;
}

// The footers write one example per line, "  inferlab ARGS", and may follow the command with a
// remark after two or more spaces ("   (3 tokens advanced from 4 drafts)"); the README writes
// "$ inferlab ARGS". Returns ARGS, or "" when the line is not an example.
std::string example_command(const std::string& line, const std::string& prefix) {
    if (line.rfind(prefix, 0) != 0) return "";
    std::string cmd = line.substr(prefix.size());
    if (auto remark = cmd.find("  "); remark != std::string::npos) cmd.resize(remark);
    return cmd;
}

std::vector<std::string> help_examples(const std::string& help) {
    std::vector<std::string> out;
    bool in_block = false;
    // An example too wide for 80 columns continues on the next lines after " \\" (as a shell reads it).
    std::vector<std::string> lines;
    for (const auto& line : lines_of(help)) {
        const bool continues = !lines.empty() && lines.back().size() >= 2 &&
                               lines.back().compare(lines.back().size() - 2, 2, " \\") == 0;
        if (continues) lines.back().resize(lines.back().size() - 2), lines.back() += " " + line.substr(line.find_first_not_of(' '));
        else lines.push_back(line);
    }
    for (const auto& line : lines) {
        if (line == "Examples:") {
            in_block = true;
            continue;
        }
        if (line.empty()) in_block = false;
        std::string cmd = in_block ? example_command(line, "  inferlab ") : "";
        if (cmd.empty()) cmd = example_command(line, "$ inferlab ");
        if (!cmd.empty()) out.push_back(cmd);
    }
    return out;
}

std::vector<std::string> help_subcommands(const std::string& help) {
    std::vector<std::string> out;
    bool in_block = false;
    for (const auto& line : lines_of(help)) {
        if (line == "Subcommands:") {
            in_block = true;
            continue;
        }
        if (line.empty()) in_block = false;
        if (in_block && line.size() > 2 && line[2] != ' ') {  // deeper: a wrapped description (#15)
            auto words = split_words(line);
            if (!words.empty()) out.push_back(words[0]);
        }
    }
    return out;
}

// Walks `inferlab --help` and each subcommand's --help, depth first, in the order listed.
std::vector<HelpPage> walk_help() {
    std::vector<HelpPage> pages;
    std::vector<std::string> todo = {""};
    while (!todo.empty()) {
        std::string path = todo.back();
        todo.pop_back();
        auto args = split_words(path);
        args.push_back("--help");
        auto r = run_inferlab(args);
        INFO("inferlab " << path << " --help\nstderr: " << r.err);
        REQUIRE(r.status == 0);
        REQUIRE(r.err.empty());
        HelpPage page{path, help_subcommands(r.out), help_examples(r.out)};
        for (auto it = page.subcommands.rbegin(); it != page.subcommands.rend(); ++it)
            todo.push_back(path.empty() ? *it : path + " " + *it);
        pages.push_back(std::move(page));
    }
    return pages;
}

// "model bench --model ref-110m" -> "model bench": the words before the first option.
std::string command_path(const std::string& cmd) {
    std::string path;
    for (const auto& w : split_words(cmd)) {
        if (w.rfind("-", 0) == 0) break;
        path += (path.empty() ? "" : " ") + w;
    }
    return path;
}

bool prints_non_finite(const std::string& out) {
    // "nan", "-nan", "inf", "-inf" as words (printf's spellings), not inside "info" or "inference".
    static const std::regex re(R"((^|[^A-Za-z])-?(nan|inf|infinity)([^A-Za-z]|$))", std::regex::icase);
    return std::regex_search(out, re);
}

// A scratch directory that examples may write into (`model init --out demo.bin`, read back by the
// next example), removed afterwards.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char tmpl[] = "/tmp/inferlab-examples-XXXXXX";
        REQUIRE(mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
};

void run_example(const std::string& cmd, const std::string& cwd) {
    // Plain words and single quotes only: other shell syntax (pipes, redirection, variables) would
    // mean something this runner does not apply. A ';' is fine inside quotes (split_words keeps it).
    std::string unquoted;
    bool quoted = false;
    for (char c : cmd) {
        if (c == '\'') quoted = !quoted;
        else if (!quoted) unquoted += c;
    }
    REQUIRE(unquoted.find_first_of("\"\\|><;$`") == std::string::npos);
    auto r = run_inferlab(split_command(cmd), cwd);
    INFO("example: inferlab " << cmd << "\nexit status: " << r.status << "\nstderr: " << r.err);
    CHECK(r.status == 0);
    CHECK_FALSE(r.out.empty());
    CHECK(r.err.empty());
    CHECK_FALSE(prints_non_finite(r.out));
}

// Every example of every help page, in walk order, each once, whose path is (or is not) slow.
std::vector<std::string> help_examples_where(bool slow) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& page : walk_help())
        for (const auto& cmd : page.examples)
            if (kSlowCommands.count(command_path(cmd)) == (slow ? 1u : 0u) && seen.insert(cmd).second)
                out.push_back(cmd);
    return out;
}

void run_slow_examples(const std::string& path) {
    std::vector<std::string> mine;
    for (const auto& cmd : help_examples_where(true))
        if (command_path(cmd) == path) mine.push_back(cmd);
    REQUIRE_FALSE(mine.empty());  // the slow list names a command whose help shows no example
    ScratchDir dir;
    for (const auto& cmd : mine) run_example(cmd, dir.path);
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("help pages: the extractor reads the footers as they are written", "[docs]") {
    const std::string help =
        "Subcommands:\n  init   Write a checkpoint\n  logits  Logits\n\nExamples:\n"
        "  inferlab spec-accept --gamma 4 --outcomes accept,reject   (2 tokens advanced)\n"
        "      → α = 1\n  inferlab verify\n\nJSON keys: a, b.\n  inferlab not-an-example\n";
    CHECK(help_subcommands(help) == std::vector<std::string>{"init", "logits"});
    CHECK(help_examples(help) == std::vector<std::string>{"spec-accept --gamma 4 --outcomes accept,reject", "verify"});
    CHECK(command_path("model bench --model ref-110m --threads 2") == "model bench");
    CHECK(prints_non_finite("loss -nan\n"));
    CHECK(prints_non_finite("ratio inf"));
    CHECK_FALSE(prints_non_finite("information about inference, infinite"));
}

TEST_CASE("help pages: every subcommand, model's included, shows at least one example", "[docs]") {
    auto pages = walk_help();
    std::set<std::string> paths;
    for (const auto& page : pages) {
        paths.insert(page.path);
        INFO("inferlab " << page.path << " --help");
        if (!page.path.empty()) CHECK_FALSE(page.examples.empty());
    }
    // The walk reached the nested pages (a parser that found no subcommands would pass vacuously).
    CHECK(paths.count("kv-mem") == 1);
    CHECK(paths.count("model init") == 1);
    for (const auto& slow : kSlowCommands) {
        INFO("slow command " << slow);
        CHECK(paths.count(slow) == 1);
    }
}

TEST_CASE("help examples: every example but the timed benchmarks runs cleanly", "[docs]") {
    auto examples = help_examples_where(false);
    CHECK(examples.size() >= 20);  // about 35 today: a broken extractor must not pass with none
    ScratchDir dir;  // shared, in order: `model logits --checkpoint demo.bin` reads what init wrote
    for (const auto& cmd : examples) run_example(cmd, dir.path);
}

TEST_CASE("help examples: model bench", "[docs][bench]") { run_slow_examples("model bench"); }

TEST_CASE("help examples: model roofline", "[docs][bench]") { run_slow_examples("model roofline"); }

TEST_CASE("README: every inferlab command in a code block runs cleanly", "[docs]") {
    std::vector<std::string> examples;
    bool in_code = false;
    for (const auto& line : lines_of(slurp(std::string(INFERLAB_SOURCE_DIR) + "/README.md"))) {
        if (line.rfind("```", 0) == 0) {
            in_code = !in_code;
            continue;
        }
        if (in_code)
            if (auto cmd = example_command(line, "$ inferlab "); !cmd.empty()) examples.push_back(cmd);
    }
    CHECK(examples.size() >= 5);  // seven today, one per subcommand section
    ScratchDir dir;
    for (const auto& cmd : examples) run_example(cmd, dir.path);
}

TEST_CASE("examples: every script in examples is run by CTest and named in the README", "[docs]") {
    // CTest runs the scripts listed in examples/CMakeLists.txt (tests/support/run-example.sh
    // checks each one's exit status, stdout and stderr); a script missing from that list would
    // never run, and one missing from the README would never be found.
    const std::string dir = std::string(INFERLAB_SOURCE_DIR) + "/examples";
    const std::string cmake = slurp(dir + "/CMakeLists.txt");
    const std::string readme = slurp(std::string(INFERLAB_SOURCE_DIR) + "/README.md");
    std::smatch m;
    REQUIRE(std::regex_search(cmake, m, std::regex(R"(foreach\(script ([^)]*)\))")));
    const auto listed = split_words(m[1].str());
    std::set<std::string> scripts;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".sh") scripts.insert(entry.path().stem().string());
    CHECK(scripts.size() >= 7);
    for (const auto& s : scripts) {
        INFO("examples/" << s << ".sh");
        CHECK(std::find(listed.begin(), listed.end(), s) != listed.end());
        CHECK(readme.find("examples/" + s + ".sh") != std::string::npos);
    }
    for (const auto& s : listed) {
        INFO("listed in examples/CMakeLists.txt: " << s);
        CHECK(scripts.count(s) == 1);
    }
}
