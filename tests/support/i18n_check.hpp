#pragma once
// Checks shared by the Chinese-output tests (issue #18): runs in Chinese, and the rule that no
// catalogue message of three words or more is printed in English by a Chinese run.
#include <string>
#include <vector>

#include "cli.hpp"
#include "contracts.hpp"

namespace inferlab::test {

// The lines of `text` (without their '\n'); whether a line holds exactly `line`. (The widest
// line in display columns is contracts.hpp's widest_line.)
std::vector<std::string> lines_of(const std::string& text);
bool has_line(const std::string& text, const std::string& line);

// The bad-input contract in Chinese: exit 2, nothing on stdout, exactly "inferlab: error: " + line
// on stderr.
void expect_zh_error(const std::vector<std::string>& args, const std::string& line);

// The start of an error line in a Chinese run (the prefix is English in every language: scripts
// grep for it), and the environment of a Chinese run at 80 columns.
inline const std::string kZhError = "inferlab: error: ";
inline const std::vector<std::string> kZh80 = {"INFERLAB_LANG=zh", "COLUMNS=80"};

// The environment of a Chinese run (INFERLAB_LANG=zh).
const std::vector<std::string>& zh_env();

// Runs inferlab in Chinese.
CliResult run_zh(const std::vector<std::string>& args);

// The English pieces of the catalogue: each msgid whose translation differs, cut at its
// placeholders and line breaks, keeping the pieces of three words or more (words of letters only,
// so a formula such as "s_token = 2·L·H_kv·d·b", which reads the same in both, is not one).
const std::vector<std::string>& english_catalogue_pieces();

// Fails the current test (CHECK, naming the run and the piece) for every English catalogue piece
// in the stdout or stderr of `inferlab args...` run in Chinese.
void check_no_english(const std::vector<std::string>& args);

// Runs of four or more consecutive English words (letters only, two or more each) in `text`:
// prose a Chinese run should not print whether or not the catalogue has it (a string never passed
// to tr() is not in the catalogue). Names and units ("GiB", "KV Cache") are one or two words.
std::vector<std::string> english_runs(const std::string& text);

// The checks of check_chinese_output on a run already made in Chinese: no English catalogue
// piece, no english_runs() but those inside an `allowed` text, and exit 0 or the bad-input contract.
void check_chinese_result(const CliResult& r, const std::vector<std::string>& args,
                          const std::vector<std::string>& allowed = {});

// check_chinese_result on a Chinese run of `args`. An allowed text is quoted English that a
// run may print (a model's name or source from its config file, a flag's values): any run of
// English inside it passes, as the text wraps at other words in other widths.
void check_chinese_output(const std::vector<std::string>& args, const std::vector<std::string>& allowed = {});

}  // namespace inferlab::test
