#pragma once
// Reading the files a user names (configs, layer specs, lists, checkpoints): every way a file can
// be wrong is an inferlab::Error that names the file and what is wrong, never a crash or a
// misleading "truncated" / "not valid JSON" for a directory.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace inferlab {

// Deeper nesting than any config or layer spec needs; nlohmann's dump() and every recursive walk
// of a document recurse once per level, so depth is limited before anything recursive runs.
constexpr int kMaxJsonDepth = 64;

// The most bytes a text input of each kind may hold, said in the error that refuses more: a
// config.json or a layer spec is kilobytes; a list of numbers (a distribution over a 256K-token
// vocabulary, a matrix of 2^24 values) is megabytes.
constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{4} << 20;      // 4 MiB
constexpr std::uint64_t kMaxNumberFileBytes = std::uint64_t{512} << 20;  // 512 MiB

// Opens `path` for reading. A missing or unreadable file, a directory, anything that is not a
// regular file (a FIFO, a device, a socket: checked before open(), which would block on a FIFO)
// and a file of more than `max_bytes` are FileErrors that say which.
std::ifstream open_input_file(const std::string& path, std::ios::openmode mode = std::ios::in,
                              std::uint64_t max_bytes = UINT64_MAX);

// The whole file as text (same errors as open_input_file).
std::string read_text_file(const std::string& path, std::uint64_t max_bytes);

// Writes `path` safely: `write` fills a temporary file in the same folder, which then replaces
// `path` by rename(), so a reader sees the old file or the whole new one, never half of either,
// and concurrent writers leave one writer's file. On an error (write returns false, or throws)
// the temporary file is removed and the old file stays. A directory, a missing folder or a failed
// write is a FileError that says which. A target that is not a regular file (a device, a FIFO),
// and any path under /dev/ or /proc/ (/dev/stdout may name the shell's redirect to a regular
// file), is written in place: there is nothing to replace there. In place, a FIFO that nobody
// reads is a FileError (never a wait), the file standard output writes is written through
// standard output's descriptor, and a pipe whose reader has gone (EPIPE) ends the write quietly,
// as a closed standard output ends a run. A replaced file keeps its mode.
void write_file_safely(const std::string& path, const std::function<bool(std::FILE*)>& write);

// write_file_safely with `text` (the SVG of --svg, figure --out).
void write_text_file(const std::string& path, const std::string& text);

// Parses a JSON document read from `path` for the flag `where`. Errors (all InputError naming
// `where` and `path`): invalid JSON, nesting deeper than kMaxJsonDepth, a number too large for a
// double (nlohmann reports it as out_of_range, not as a parse error).
nlohmann::json parse_json_text(const std::string& where, const std::string& path, const std::string& text);

}  // namespace inferlab
