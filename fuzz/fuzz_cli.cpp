// The whole command line, in-process: the input is argv after "inferlab", one argument per line.
// An argument naming a prepared file stands for its path (issue #30: files that are not what they
// seem, outputs that are inputs):
//   @in    a small number list (every file is made again before each run, so an output written
//          over one is undone; `--flag=@x` is replaced too)
//   @link  a symbolic link to @in          @cfg  a small valid config.json
//   @fifo  a FIFO with no writer           @dir  a directory
//   @big   a 600 MiB sparse file (over every input's size limit)
//   @dev   /dev/zero                       @null /dev/null
// Findings: a crash or sanitizer report, exit status 3 ("internal error"), NaN or inf printed,
// an error that is not exactly one "inferlab: error:" line with nothing on stdout.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "cli.hpp"

namespace {

namespace fs = std::filesystem;

// Under the working directory fuzz.sh gives each target (made again before every run).
const fs::path kFiles = "fuzz-cli-files";

void write_text(const fs::path& p, const char* text) {
    std::ofstream f(p, std::ios::trunc);
    f << text;
}

void make_files() {
    fs::create_directories(kFiles / "dir");
    write_text(kFiles / "in.txt", "0.5\n0.3\n0.2\n");
    write_text(kFiles / "config.json",
               R"({"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,)"
               R"( "num_key_value_heads": 2, "vocab_size": 16, "max_position_embeddings": 8})");
    std::error_code ec;
    fs::remove(kFiles / "link.txt", ec);
    fs::create_symlink("in.txt", kFiles / "link.txt", ec);
    if (!fs::is_fifo(kFiles / "fifo")) {
        fs::remove(kFiles / "fifo", ec);
        mkfifo((kFiles / "fifo").c_str(), 0600);
    }
    std::ofstream big(kFiles / "big.txt", std::ios::trunc);
    big.close();
    fs::resize_file(kFiles / "big.txt", 600ULL << 20, ec);  // sparse: no disk is written
}

std::string stand_in(const std::string& whole) {
    // `@x`, or `--flag=@x`.
    const auto eq = whole.rfind("--", 0) == 0 ? whole.find('=') : std::string::npos;
    const std::string head = eq == std::string::npos ? "" : whole.substr(0, eq + 1);
    const std::string arg = eq == std::string::npos ? whole : whole.substr(eq + 1);
    if (arg.empty() || arg[0] != '@') return whole;
    static const std::pair<const char*, fs::path> names[] = {
        {"@in", kFiles / "in.txt"},     {"@link", kFiles / "link.txt"}, {"@cfg", kFiles / "config.json"},
        {"@fifo", kFiles / "fifo"},     {"@dir", kFiles / "dir"},       {"@big", kFiles / "big.txt"},
        {"@dev", "/dev/zero"},          {"@null", "/dev/null"}};
    for (const auto& [name, path] : names)
        if (arg == name) return head + path.string();
    return whole;
}

[[noreturn]] void finding(const char* what, const std::string& out, const std::string& err) {
    std::fprintf(stderr, "fuzz_cli finding: %s\n--- stdout ---\n%s\n--- stderr ---\n%s\n", what, out.c_str(), err.c_str());
    std::abort();
}

// The model subcommands build the whole model in memory: fuzzed on demo-gqa only, since a
// shipped 8B model allocates 32 GB of random weights (issue #14 asks for a size estimate first),
// and never bench / roofline, which time this machine rather than compute from their input.
bool runs_in_bounds(const std::vector<std::string>& args) {
    if (args.size() >= 2 && args[1] == "figure") {
        // Figures write files (--out, --all) and some load a model: only the built-in inputs.
        for (std::size_t i = 2; i < args.size(); ++i)
            for (const char* flag : {"--out", "--all", "--model", "--config", "--checkpoint"})
                if (args[i].rfind(flag, 0) == 0) return false;
        return true;
    }
    if (args.size() < 2 || args[1] != "model") return true;
    bool small = false;
    for (std::size_t i = 2; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "bench" || a == "roofline" || a.rfind("--config", 0) == 0 || a.rfind("--checkpoint", 0) == 0)
            return false;
        if (a.rfind("--model", 0) == 0) {
            const std::string v = a == "--model" ? (i + 1 < args.size() ? args[i + 1] : "") : a.substr(a.find('=') + 1);
            if (v != "demo-gqa") return false;
            small = true;
        }
    }
    return small;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    make_files();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args{"inferlab"};
    std::string cur;
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == '\n') {
            args.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(static_cast<char>(data[i]));
        }
    }
    if (!cur.empty()) args.push_back(cur);
    if (args.size() > 32) return 0;  // longer command lines add nothing the parsers do not see in 32
    if (!runs_in_bounds(args)) return 0;
    for (auto& a : args) a = stand_in(a);
    make_files();  // as before every run: an output written over one of them is undone
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());

    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    const int status = inferlab::app::run_cli(static_cast<int>(argv.size()), argv.data());
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);

    const std::string o = out.str(), e = err.str();
    if (status == 3) finding("exit status 3 (internal error)", o, e);
    static const std::regex non_finite("(^|[^A-Za-z_])-?(nan|inf)([^A-Za-z_]|$)", std::regex::icase);
    if (std::regex_search(o, non_finite)) finding("NaN or inf in the output", o, e);
    if (status == 2) {
        const bool one_line = e.rfind("inferlab: error: ", 0) == 0 && e.find('\n') == e.size() - 1;
        if (!one_line || !o.empty()) finding("exit 2 without exactly one error line, or with output on stdout", o, e);
    }
    return 0;
}
