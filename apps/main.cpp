// inferlab's entry point: the command line itself lives in cli.cpp (run_cli), callable in-process.
#include <csignal>

#include "cli.hpp"

int main(int argc, char** argv) {
    // A closed pipe then fails the write (EPIPE), which run_cli ends quietly with the run's own
    // status, instead of a death by SIGPIPE that would depend on when the reader left.
    std::signal(SIGPIPE, SIG_IGN);
    return inferlab::app::run_cli(argc, argv);
}
