#pragma once
// best-of-n's printers: one BestOfNResult as text, --json, --csv tables and --explain, side by side
// in best_of_n_print.cpp. They choose what to print; every number comes from the library.
#include "best_of_n_flags.hpp"
#include "common.hpp"
#include "inferlab/answer/best_of_n.hpp"

namespace inferlab::app {

// Every form of best-of-n's answer; tables: rows, and budget and simulation when asked for.
Report best_of_n_report(const BestOfNFlags& flags, const BestOfNRequest& rq, const BestOfNResult& res);
// best-of-n --search (best_of_n_search_print.cpp); tables: rows, and simulation with --simulate.
Report search_report(const SearchRequest& rq, const SearchResult& res);

}  // namespace inferlab::app
