#include "i18n_check.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "inferlab/base/i18n.hpp"

namespace inferlab::test {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

bool has_line(const std::string& text, const std::string& line) {
    const auto all = lines_of(text);
    return std::find(all.begin(), all.end(), line) != all.end();
}

void expect_zh_error(const std::vector<std::string>& args, const std::string& line) {
    const CliResult r = run_zh(args);
    INFO("stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == kZhError + line + "\n");
}

const std::vector<std::string>& zh_env() {
    static const std::vector<std::string> env = {"INFERLAB_LANG=zh"};
    return env;
}

CliResult run_zh(const std::vector<std::string>& args) { return run_inferlab(args, "", zh_env()); }

namespace {

std::size_t letter_words(const std::string& piece) {
    std::size_t words = 0;
    std::istringstream in(piece);
    for (std::string w; in >> w;)
        words += w.size() >= 2 && std::all_of(w.begin(), w.end(), [](char c) {
                     return std::isalpha(static_cast<unsigned char>(c)) || c == '\'' || c == ',';
                 });
    return words;
}

std::vector<std::string> pieces_of_catalogue() {
    std::vector<std::string> pieces;
    for (const auto& [id, str] : zh_catalog().entries()) {
        if (id == str) continue;  // a message that is the same in both languages
        std::string piece;
        auto flush = [&] {
            if (letter_words(piece) >= 3) pieces.push_back(piece);
            piece.clear();
        };
        for (std::size_t i = 0; i < id.size(); ++i) {
            if (id[i] == '\n') flush();
            else if (id[i] == '{' && id.find('}', i) != std::string::npos) {
                flush();
                i = id.find('}', i);
            } else piece += id[i];
        }
        flush();
    }
    return pieces;
}

}  // namespace

const std::vector<std::string>& english_catalogue_pieces() {
    static const std::vector<std::string> pieces = pieces_of_catalogue();
    return pieces;
}

namespace {

std::string command_of(const std::vector<std::string>& args) {
    std::string cmd = "inferlab";
    for (const auto& a : args) cmd += " " + a;
    return cmd;
}

void check_no_catalogue_english(const CliResult& r, const std::string& cmd) {
    const std::string all = r.out + r.err;
    for (const auto& p : english_catalogue_pieces()) {
        INFO(cmd << ": English catalogue text \"" << p << "\" in\n" << all);
        CHECK(all.find(p) == std::string::npos);
    }
}

}  // namespace

void check_no_english(const std::vector<std::string>& args) { check_no_catalogue_english(run_zh(args), command_of(args)); }

std::vector<std::string> english_runs(const std::string& text) {
    std::vector<std::string> runs;
    std::vector<std::string> words;
    auto flush = [&] {
        if (words.size() >= 4) {
            std::string run = words.front();
            for (std::size_t i = 1; i < words.size(); ++i) run += " " + words[i];
            runs.push_back(run);
        }
        words.clear();
    };
    std::string word;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        const char c = i < text.size() ? text[i] : '\n';
        if (std::isalpha(static_cast<unsigned char>(c)) || (c == '\'' && !word.empty())) {
            word += c;
            continue;
        }
        // A word ends here. A space (or one comma then a space) continues a run; anything else
        // (a digit, a symbol, CJK text, a line break) ends it.
        if (!word.empty()) {
            if (word.size() >= 2) words.push_back(word);
            else flush();
            word.clear();
        }
        if (c != ' ' && c != ',') flush();
    }
    return runs;
}

void check_chinese_result(const CliResult& r, const std::vector<std::string>& args, const std::vector<std::string>& allowed) {
    const std::string cmd = command_of(args);
    check_no_catalogue_english(r, cmd);
    // It succeeds, or fails as the bad-input contract says (exit 2, nothing on stdout, one line
    // on stderr that starts "inferlab: error: "): a crash fails the check, whatever its language.
    INFO(cmd << " (exit " << r.status << "):\n" << r.out << r.err);
    CHECK((r.status == 0 || r.status == 2));
    if (r.status == 2) {
        CHECK(r.out.empty());
        CHECK(r.err.rfind(kZhError, 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    for (const auto& run : english_runs(r.out + r.err)) {
        if (std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return a.find(run) != std::string::npos; }))
            continue;
        INFO(cmd << ": English prose \"" << run << "\" in a Chinese run:\n" << r.out << r.err);
        CHECK(false);
    }
}

void check_chinese_output(const std::vector<std::string>& args, const std::vector<std::string>& allowed) {
    check_chinese_result(run_zh(args), args, allowed);
}

}  // namespace inferlab::test
