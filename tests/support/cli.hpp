#pragma once
// Runs the real inferlab binary and captures stdout, stderr and the exit status.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferlab::test {

struct CliResult {
    int status = -1;  // exit status; 128 + signal when killed by a signal
    std::string out;
    std::string err;
};

// Runs inferlab with `args`; with a non-empty `cwd`, in that directory (for examples that write
// and read back a file by a relative name); `env` entries ("COLUMNS=80") are set in the child.
CliResult run_inferlab(const std::vector<std::string>& args, const std::string& cwd = "",
                       const std::vector<std::string>& env = {});

// `args` followed by `more`: a run's arguments with a flag or two added ({"--json"}).
inline std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// The first document's §2.1.3 example (000_5f2b20623495609b.txt): W = 14 GB, M_KV = 1 GiB per
// request, β = 1 TB/s, B = 1 and 8.
inline const std::vector<std::string> kDoc1Roofline = {"decode-roofline", "--weights-bytes", "14GB",
                                                       "--kv-bytes-per-request", "1GiB", "--bandwidth", "1TB/s",
                                                       "--batch", "1,8"};

// Path of a file under tests/data/.
std::string data_path(const std::string& name);

// Parses stdout as one JSON document (fails the test on a parse error).
nlohmann::json parse_json(const CliResult& r);

// True when stderr is exactly one line that begins "inferlab: error:".
bool one_error_line(const CliResult& r);

// Runs inferlab and checks the bad-input contract: exit status 2, nothing on stdout, one line
// on stderr beginning "inferlab: error:" that contains `fragment`.
void expect_error(const std::vector<std::string>& args, const std::string& fragment);

// MemAvailable of /proc/meminfo in bytes (0 where it cannot be read): what the memory checks
// compare against, for a test that must know whether a size fits this machine.
std::uint64_t mem_available_bytes();

}  // namespace inferlab::test
