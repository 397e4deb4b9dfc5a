// inferlab: registers the subcommands and turns every error into one line and exit status 2.
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "common.hpp"
#include "inferlab/error.hpp"

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

// The top level takes only --help and --version, and `model` only --help, so at each level that
// has subcommands the first word that is not a flag names one; one that names none is refused
// with the list (CLI11 would say only "not expected", or "A subcommand is required").
void require_known_subcommand(const CLI::App& app, int argc, const char* const* argv) {
    const CLI::App* at = &app;
    std::string kind = "subcommand";  // "model subcommand" one level down
    for (int i = 1; i < argc && !at->get_subcommands({}).empty(); ++i) {
        const std::string word = argv[i];
        if (!word.empty() && word.front() == '-') continue;
        const CLI::App* next = nullptr;
        std::string names;
        for (const CLI::App* sub : at->get_subcommands({})) {
            if (sub->get_name() == word) next = sub;
            names += (names.empty() ? "" : ", ") + sub->get_name();
        }
        if (next == nullptr) throw Error("unknown " + kind + " '" + word + "' (the " + kind + "s: " + names + ")");
        kind = next->get_name() + " subcommand";
        at = next;
    }
}

int parse_and_run(CLI::App& app, int argc, const char* const* argv) {
    try {
        require_known_subcommand(app, argc, argv);
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "inferlab: error: " << one_line(e.what()) << " (see '" << command_path(app) << " --help')\n";
        return 2;
    } catch (const inferlab::Error& e) {
        std::cerr << "inferlab: error: " << one_line(e.what()) << "\n";
        return 2;
    } catch (const ExitCode& e) {
        return e.code;
    } catch (const std::bad_alloc&) {
        std::cerr << "inferlab: error: out of memory (the sizes asked for do not fit this machine)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "inferlab: internal error: " << one_line(e.what()) << " (please report this)\n";
        return 3;
    }
    return 0;
}

}  // namespace

int run_cli(int argc, const char* const* argv) {
    CLI::App app{"inferlab: the arithmetic of LLM inference, exact and checked against the textbook.", "inferlab"};
    app.set_version_flag("--version", "inferlab " INFERLAB_VERSION);
    app.require_subcommand(1);
    app.footer(
        "\nUnits: sizes take B or explicit decimal (kB MB GB TB) / binary (KiB MiB GiB TiB) suffixes;\n"
        "token counts take k (1000) or Ki (1024). Run 'inferlab SUBCOMMAND --help' for examples.");
    setup_kv_mem(app);
    setup_decode_roofline(app);
    setup_spec_accept(app);
    setup_best_of_n(app);
    setup_quantize(app);
    setup_model(app);
    setup_verify(app);
    setup_figure(app);
    std::cout.clear();
    errno = 0;
    int status = parse_and_run(app, argc, argv);
    // A full disk or a closed pipe: the output is lost, so success must not be reported.
    std::cout.flush();
    if (!std::cout) {
        const int err = errno;
        std::cerr << "inferlab: error: cannot write the output to standard output"
                  << (err ? std::string(": ") + std::strerror(err) : std::string()) << "\n";
        std::cout.clear();
        return status == 0 ? 2 : status;
    }
    return status;
}

}  // namespace inferlab::app
