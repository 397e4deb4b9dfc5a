#pragma once
// Reading the files a user names (configs, layer specs, lists, checkpoints): every way a file can
// be wrong is an inferlab::Error that names the file and what is wrong, never a crash or a
// misleading "truncated" / "not valid JSON" for a directory.
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace inferlab {

// Deeper nesting than any config or layer spec needs; nlohmann's dump() and every recursive walk
// of a document recurse once per level, so depth is limited before anything recursive runs.
constexpr int kMaxJsonDepth = 64;

// Opens `path` for reading. A missing or unreadable file and a directory are FileErrors that say which.
std::ifstream open_input_file(const std::string& path, std::ios::openmode mode = std::ios::in);

// The whole file as text (same errors as open_input_file).
std::string read_text_file(const std::string& path);

// Writes `text` to `path`, replacing the file. A directory, a missing folder or a failed write is
// a FileError that says which (the SVG of --svg, figure --out).
void write_text_file(const std::string& path, const std::string& text);

// Parses a JSON document read from `path` for the flag `where`. Errors (all InputError naming
// `where` and `path`): invalid JSON, nesting deeper than kMaxJsonDepth, a number too large for a
// double (nlohmann reports it as out_of_range, not as a parse error).
nlohmann::json parse_json_text(const std::string& where, const std::string& path, const std::string& text);

}  // namespace inferlab
