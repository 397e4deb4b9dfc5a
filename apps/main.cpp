// inferlab's entry point: the command line itself lives in cli.cpp (run_cli), callable in-process.
#include <csignal>

#include "cli.hpp"

int main(int argc, char** argv) {
    // A closed pipe then fails the write (EPIPE), which run_cli reports as one error line and a
    // non-zero status, instead of a silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    return inferlab::app::run_cli(argc, argv);
}
