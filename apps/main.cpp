// inferlab: registers the subcommands and turns every error into one line and exit status 2.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "common.hpp"
#include "inferlab/error.hpp"

namespace {

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"inferlab: the arithmetic of LLM inference, exact and checked against the textbook.", "inferlab"};
    app.set_version_flag("--version", "inferlab " INFERLAB_VERSION);
    app.require_subcommand(1);
    app.footer(
        "\nUnits: sizes take B or explicit decimal (kB MB GB TB) / binary (KiB MiB GiB TiB) suffixes;\n"
        "token counts take k (1000) or Ki (1024). Run 'inferlab SUBCOMMAND --help' for examples.");
    inferlab::app::setup_kv_mem(app);
    inferlab::app::setup_decode_roofline(app);
    inferlab::app::setup_spec_accept(app);
    inferlab::app::setup_best_of_n(app);
    inferlab::app::setup_quantize(app);
    inferlab::app::setup_model(app);
    inferlab::app::setup_verify(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "inferlab: error: " << one_line(e.what()) << " (see 'inferlab --help')\n";
        return 2;
    } catch (const inferlab::Error& e) {
        std::cerr << "inferlab: error: " << one_line(e.what()) << "\n";
        return 2;
    } catch (const inferlab::app::ExitCode& e) {
        return e.code;
    } catch (const std::exception& e) {
        std::cerr << "inferlab: internal error: " << one_line(e.what()) << " (please report this)\n";
        return 3;
    }
    return 0;
}
