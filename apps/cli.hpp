#pragma once
// The whole command line as a function, so that tests and the fuzz target can run it in-process.

namespace inferlab::app {

// Parses argv, runs the subcommand, prints to std::cout / std::cerr and returns the exit status:
// 0 done, 1 (verify) an example failed, 2 bad input or output that could not be written,
// 3 an internal error (a bug: no input may cause it). Never calls exit().
int run_cli(int argc, const char* const* argv);

}  // namespace inferlab::app
