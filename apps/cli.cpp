// inferlab: registers the subcommands and turns every error into one line and exit status 2.
#include "cli.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"

namespace inferlab::app {
namespace {

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

// "inferlab kv-mem", or "inferlab model bench": the deepest subcommand the command line reached,
// whose --help the error points at.
std::string command_path(const CLI::App& app) {
    std::string path = "inferlab";
    const CLI::App* at = &app;
    while (at != nullptr) {
        const auto subs = at->get_subcommands();
        if (subs.empty()) break;
        at = subs.front();
        path += " " + at->get_name();
    }
    return path;
}

// The top level takes only --help, --version and --lang, and `model` only --help and --lang, so at
// each level that has subcommands the first word that is not a flag (nor --lang's value) names one;
// one that names none is refused with the list (CLI11 would say only "not expected", or "A
// subcommand is required").
void require_known_subcommand(const CLI::App& app, int argc, const char* const* argv) {
    const CLI::App* at = &app;
    for (int i = 1; i < argc && !at->get_subcommands({}).empty(); ++i) {
        const std::string word = argv[i];
        if (word == "--lang") ++i;
        if (!word.empty() && word.front() == '-') continue;
        const CLI::App* next = nullptr;
        std::string names;
        for (const CLI::App* sub : at->get_subcommands({})) {
            if (sub->get_name() == word) next = sub;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (next == nullptr) {
            if (at == &app) throw Error(N_("unknown subcommand '{0}' (the subcommands: {1})"), {word, names});
            throw Error(N_("unknown {0} subcommand '{1}' (the {0} subcommands: {2})"), {at->get_name(), word, names});
        }
        at = next;
    }
}

// Edit distance between two flag names (insertions, deletions, substitutions), for a suggestion.
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// The flags of `at` a mistyped or renamed `name` most likely means: those that end in "-name" (an
// old --dtype is now --kv-dtype), else those within two edits of it.
std::vector<std::string> likely_flags(const CLI::App& at, const std::string& name) {
    std::vector<std::string> ends, near;
    for (const CLI::Option* opt : at.get_options())
        for (const std::string& l : opt->get_lnames()) {
            if (l.size() > name.size() && l.compare(l.size() - name.size() - 1, std::string::npos, "-" + name) == 0)
                ends.push_back("--" + l);
            else if (edit_distance(l, name) <= 2)
                near.push_back("--" + l);
        }
    return ends.empty() ? near : ends;
}

// A flag the subcommand does not have, refused before CLI11 parses: CLI11 says only "The following
// arguments were not expected", in English, with the flag and its value in reverse order. Ours
// names the flag and the command, and the flag it likely meant.
void refuse_unknown_flags(const CLI::App& app, int argc, const char* const* argv) {
    const CLI::App* at = &app;
    std::vector<const CLI::App*> path = {at};
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--") return;  // the rest are values
        if (word.rfind("--", 0) != 0) {
            for (const CLI::App* sub : at->get_subcommands({}))
                if (sub->get_name() == word) path.push_back(at = sub);
            continue;
        }
        const std::string flag = word.substr(0, word.find('='));
        const CLI::Option* known = nullptr;
        for (const CLI::App* a : path)
            if (!known) known = a->get_option_no_throw(flag);
        if (known) {
            // Its value is the next word ("--model paged"), never a subcommand's name.
            if (word.find('=') == std::string::npos && known->get_items_expected_min() > 0) ++i;
            continue;
        }
        std::string command;
        for (std::size_t k = 1; k < path.size(); ++k) command += (k == 1 ? "" : " ") + path[k]->get_name();
        if (command.empty()) command = "inferlab";  // the top level, whose --help is inferlab's
        const std::vector<std::string> likely = likely_flags(*at, flag.substr(2));
        std::string hint;
        for (std::size_t k = 0; k < likely.size(); ++k)
            hint += (k == 0 ? "" : k + 1 == likely.size() ? tr(N_(" or ")) : trc("list", NC_("list", ", "))) + likely[k];
        throw Error(likely.empty() ? N_("{0}: {1} has no such flag (see '{2} --help')")
                                   : N_("{0}: {1} has no such flag; did you mean {3}? (see '{2} --help')"),
                    {flag, command, command == "inferlab" ? command : "inferlab " + command, hint});
    }
}

// The flags that name a file the command reads, and those that name a file it writes.
const std::set<std::string> kInputFileFlags = {"--config", "--layer-spec", "--p-file", "--q-file",
                                               "--file", "--k-file", "--v-file", "--checkpoint", "--arrivals"};
const std::set<std::string> kOutputFileFlags = {"--svg", "--out"};

// The value of a flag (`--flag value` or `--flag=value`), with the flag, for each flag of `flags`.
std::vector<std::pair<std::string, std::string>> values_of(int argc, const char* const* argv,
                                                           const std::set<std::string>& flags) {
    std::vector<std::pair<std::string, std::string>> out;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word.rfind("--", 0) != 0) continue;
        const auto eq = word.find('=');
        const std::string flag = word.substr(0, eq);
        if (!flags.count(flag)) continue;
        if (eq != std::string::npos) out.emplace_back(flag, word.substr(eq + 1));
        else if (i + 1 < argc) out.emplace_back(flag, argv[i + 1]);
    }
    return out;
}

// A file error, said of the flag that named the file (`--k-file 'k.csv': is a directory`), when
// one did; the library's readers know only the path.
std::string file_error_text(const FileError& e, int argc, const char* const* argv) {
    std::set<std::string> flags = kInputFileFlags;
    flags.insert(kOutputFileFlags.begin(), kOutputFileFlags.end());
    for (const auto& [flag, value] : values_of(argc, argv, flags))
        if (value == e.path()) return InputError(flag, value, e.why()).localized();
    return e.localized();
}

// Before anything is read or written: an empty value is refused (CLI11 would store "" and the
// command read it as "not given": `--checkpoint "$CKPT"` with CKPT unset computed on random
// weights), and so is an output that is one of the command's own inputs (`--svg ck.bin` once
// turned a checkpoint into an SVG). The same file is the same device and inode, whatever the
// spelling of the path; one that does not exist yet is compared by its spelling.
void check_values(int argc, const char* const* argv) {
    std::vector<std::pair<std::string, std::string>> inputs, outputs;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        const std::string before = i > 1 ? argv[i - 1] : "";
        if (word.empty()) {
            if (before.rfind("-", 0) == 0)
                throw InputError(before, "", N_("is empty: give a value, or leave the flag out for its default"));
            throw Error(N_("argument {0} is empty: give a value, or leave it out"), {std::to_string(i)});
        }
        const auto eq = word.find('=');
        if (word.rfind("--", 0) == 0 && eq == word.size() - 1)
            throw InputError(word.substr(0, eq), "", N_("is empty: give a value, or leave the flag out for its default"));
    }
    for (const auto& [flag, value] : values_of(argc, argv, kInputFileFlags))
        if (!value.empty() && value != "-") inputs.emplace_back(flag, value);
    for (const auto& [flag, value] : values_of(argc, argv, kOutputFileFlags))
        if (!value.empty() && value != "-") outputs.emplace_back(flag, value);
    for (const auto& [out_flag, out_path] : outputs)
        for (const auto& [in_flag, in_path] : inputs) {
            std::error_code ec;
            if (out_path == in_path || std::filesystem::equivalent(out_path, in_path, ec))
                throw InputError(out_flag, out_path,
                                 N_("is the same file as {0} '{1}', which this command reads: an output never "
                                    "replaces an input"),
                                 {in_flag, in_path});
        }
}

// CLI11's own messages for the common parse errors in Chinese: each English form CLI11 2.1 writes
// is matched and rebuilt from a msgid; any other message is shown as CLI11 wrote it.
std::string parse_error_text(const CLI::ParseError& e) {
    const std::string what = one_line(e.what());
    if (language() == Lang::en) return what;  // CLI11's own English, as it has always read
    struct Form {
        const char* pattern;  // CLI11's English text
        const char* msgid;    // ours, with the pattern's groups as {0}, {1}, ...
    };
    static const Form forms[] = {
        {"The following arguments? (?:was|were) not expected: (.+)", N_("not expected here: {0}")},
        {"(\\S+): (\\d+) required (\\S+) missing", N_("{0} needs a value")},
        {"(\\S+): At Most (\\d+) required but received (\\d+)", N_("{0} may be given at most {1} time(s), not {2}")},
        {"(\\S+) excludes (.+)", N_("{0} cannot be given together with {1}")},
        {"(\\S+) requires (.+)", N_("{0} needs {1}")},
        {"A subcommand is required", N_("a subcommand is required")},
        {"(\\S+) is required", N_("{0} is required")},
    };
    std::smatch m;
    for (const Form& f : forms) {
        if (!std::regex_match(what, m, std::regex(f.pattern))) continue;
        std::vector<std::string> groups;
        for (std::size_t k = 1; k < m.size(); ++k) groups.push_back(m[k].str());
        return substitute(tr(f.msgid), groups);
    }
    return what;
}

// Whether `fd` is a pipe whose reading end is closed: poll() reports POLLERR on its writing end.
// errno is read after the last write, and a later call may have replaced its EPIPE.
bool reader_gone(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
    pollfd p{fd, POLLOUT, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

// The prefix is the same in every language, the contract scripts grep for; the message after it
// is in the reader's language.
void print_error(const std::string& text) { std::cerr << "inferlab: error: " << text << "\n"; }

int parse_and_run(CLI::App& app, int argc, const char* const* argv) {
    try {
        require_known_subcommand(app, argc, argv);
        refuse_unknown_flags(app, argc, argv);
        check_values(argc, argv);
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        print_error(parse_error_text(e) + trf(N_(" (see '{0} --help')"), command_path(app)));
        return 2;
    } catch (const FileError& e) {
        print_error(one_line(file_error_text(e, argc, argv)));
        return 2;
    } catch (const inferlab::Error& e) {
        print_error(one_line(e.localized()));
        return 2;
    } catch (const ExitCode& e) {
        return e.code;
    } catch (const std::bad_alloc&) {
        print_error(tr("out of memory (the sizes asked for do not fit this machine)"));
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "inferlab: internal error: " << one_line(e.what()) << tr(" (please report this)") << "\n";
        return 3;
    }
    return 0;
}

// CLI11's help layout, fitted to text_width() columns: each line wider than that is wrapped, its
// continuation lines under the column where its description starts.
class FittedFormatter : public CLI::Formatter {
public:
    std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
        const std::string page = CLI::Formatter::make_help(app, std::move(name), mode);
        std::string out;
        std::size_t start = 0;
        while (start < page.size()) {
            std::size_t nl = page.find('\n', start);
            if (nl == std::string::npos) nl = page.size();
            out += fit_line(page.substr(start, nl - start));
            if (nl < page.size()) out += "\n";
            start = nl + 1;
        }
        return out;
    }

    // CLI11's option line, its left column padded by display width: CLI11 pads by bytes, which
    // leaves a translated "排除: --json" two columns short per CJK character.
    std::string make_option(const CLI::Option* opt, bool is_positional) const override {
        const std::string name = "  " + make_option_name(opt, is_positional) + make_option_opts(opt);
        const std::string desc = make_option_desc(opt);
        const std::size_t wid = get_column_width(), w = display_width(name);
        std::string out = name;
        if (!desc.empty()) {
            out += w >= wid ? "\n" + std::string(wid, ' ') : std::string(wid - w, ' ');
            for (const char c : desc) {
                out += c;
                if (c == '\n') out += std::string(wid, ' ');
            }
        }
        return out + "\n";
    }

private:
    // An example command too wide for the page continues on the next lines after " \\", as a
    // shell reads it (a remark after two spaces goes on its own line), so it can still be pasted.
    static std::string fit_example(const std::string& line, std::size_t width) {
        std::string cmd = line, remark;
        if (const std::size_t at = line.find("  ", 2); at != std::string::npos) {
            cmd = line.substr(0, at);
            remark = line.substr(line.find_first_not_of(' ', at));
        }
        std::string out, current;
        std::istringstream words(cmd);
        for (std::string w; words >> w;) {
            if (current.empty()) current = "  " + w;
            else if (display_width(current + " " + w) + 2 > width) {
                out += current + " \\\n";
                current = "      " + w;
            } else {
                current += " " + w;
            }
        }
        out += current;
        if (!remark.empty()) out += "\n" + wrap_text(remark, width, "    ", "    ");
        while (!out.empty() && out.back() == '\n') out.pop_back();
        return out;
    }

    static std::string fit_line(const std::string& line) {
        const std::size_t width = text_width();
        if (display_width(line) <= width) return line;
        if (line.rfind("  inferlab ", 0) == 0) return fit_example(line, width);
        const std::size_t lead = line.find_first_not_of(' ');
        // An option line "  --name TYPE   description": the description starts after the first
        // run of two or more spaces that follows the name.
        std::size_t desc = line.find("  ", lead);
        if (desc != std::string::npos) desc = line.find_first_not_of(' ', desc);
        if (desc == std::string::npos || desc > width / 2) desc = lead;
        std::string wrapped = wrap_text(line.substr(desc), width, line.substr(0, desc), std::string(desc, ' '));
        if (!wrapped.empty() && wrapped.back() == '\n') wrapped.pop_back();
        return wrapped;
    }
};

// The words CLI11 itself prints on a --help page, in the reader's language.
void translate_help_words(CLI::App& app) {
    auto fmt = std::make_shared<FittedFormatter>();
    for (const char* label : {N_("Usage"), N_("OPTIONS"), N_("SUBCOMMAND"), N_("SUBCOMMANDS"), N_("Positionals"),
                              N_("REQUIRED"), N_("Needs"), N_("Excludes"), N_("Env")})
        fmt->label(label, tr(label));
    app.formatter(fmt);
    app.option_defaults()->group(tr("Options"));
    app.set_help_flag("-h,--help", tr("Print this help message and exit"));
}

// --lang on the top level and every subcommand: its value was read before parsing (so that the
// help pages are in that language); here it is only accepted where it stands.
void add_lang_option(CLI::App& app, std::string& sink) {
    app.add_option("--lang", sink, tr("language of the output: zh (Chinese) or en (English); default from "
                                      "INFERLAB_LANG, LC_ALL, LC_MESSAGES, LANG"))
        ->type_name("zh|en");
    // A subcommand's -h,--help is made before the options' default group is copied to it.
    if (CLI::Option* help = app.get_help_ptr(); help != nullptr) help->group(tr("Options"));
    for (CLI::App* sub : app.get_subcommands({})) {
        sub->group(tr("Subcommands"));
        add_lang_option(*sub, sink);
    }
}

}  // namespace

int run_cli(int argc, const char* const* argv) {
    try {
        set_language(choose_language(flag_value_of("--lang", argc, argv), [](const char* name) { return std::getenv(name); }));
    } catch (const inferlab::Error& e) {
        set_language(Lang::en);  // the language itself is what was wrong
        print_error(one_line(e.localized()));
        return 2;
    }
    CLI::App app{tr("inferlab: the arithmetic of LLM inference, exact and checked against the textbook."), "inferlab"};
    translate_help_words(app);
    app.set_version_flag("--version", "inferlab " INFERLAB_VERSION, tr("Display program version information and exit"));
    app.require_subcommand(1);
    // One paragraph: the help formatter wraps it to the width (a hard break inside wrapped twice).
    app.footer(tr("\nUnits: sizes take B or explicit decimal (kB MB GB TB) / binary (KiB MiB GiB TiB) suffixes; "
                  "token counts take k (1000) or Ki (1024). Run 'inferlab SUBCOMMAND --help' for examples."));
    setup_kv_mem(app);
    setup_decode_roofline(app);
    setup_spec_accept(app);
    setup_serve_sim(app);
    setup_best_of_n(app);
    setup_quantize(app);
    setup_model(app);
    setup_verify(app);
    setup_figure(app);
    std::string lang_value;
    add_lang_option(app, lang_value);
    std::cout.clear();
    errno = 0;
    int status = parse_and_run(app, argc, argv);
    // A full disk: the output is lost, so success must not be reported (a closed pipe: below).
    std::cout.flush();
    if (!std::cout) {
        const int err = errno;
        // A reader that closed the pipe (`inferlab verify | head -1`) has taken what it wanted:
        // the run ends as it would have, silently, every time. Before, the status depended on
        // whether the reader had gone before the one write (EPIPE, exit 2) or after (exit 0).
        if (err == EPIPE || reader_gone(STDOUT_FILENO)) {
            std::cout.clear();
            return status;
        }
        print_error(tr("cannot write the output to standard output") +
                    (err ? std::string(": ") + std::strerror(err) : std::string()));
        std::cout.clear();
        return status == 0 ? 2 : status;
    }
    return status;
}

}  // namespace inferlab::app
