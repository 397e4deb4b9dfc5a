#pragma once
// serve-sim's trace of arrivals (--arrivals FILE), CSV or JSON Lines, one request a line, in order
// of arrival:
//   CSV   a header naming the columns, then rows: arrival_s,prompt_tokens,output_tokens[,prefix_id,prefix_len]
//   JSONL {"arrival_s": 0.5, "prompt_tokens": 812, "output_tokens": 200, "prefix_id": 3, "prefix_len": 512}
// arrival_s ≥ 0 seconds, not before the line above's; token counts positive whole numbers;
// prefix_id a whole number ≥ 0 and prefix_len ≤ prompt_tokens, both or neither. Blank lines and
// lines starting with '#' are skipped. Every error names the file, the line and the field.
#include <string>
#include <vector>

#include "inferlab/calc/serve.hpp"

namespace inferlab {

// At most this many requests in one file (the file is not read past them).
inline constexpr std::size_t kMaxTraceRequests = 10000000;

std::vector<ServeRequest> read_arrivals(const std::string& where, const std::string& path);

}  // namespace inferlab
