#include "inferlab/base/memory.hpp"

#include <fstream>
#include <sstream>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"

namespace inferlab {

std::optional<std::uint64_t> available_memory_bytes() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("MemAvailable:", 0) != 0) continue;
        std::istringstream ss(line.substr(13));
        std::uint64_t kib = 0;
        std::string unit;
        if (!(ss >> kib >> unit) || unit != "kB") return std::nullopt;
        return checked_mul(kib, std::uint64_t{1024}, N_("available memory"));
    }
    return std::nullopt;
}

void require_memory(std::uint64_t bytes, const std::string& what, const std::string& value) {
    const auto avail = available_memory_bytes();
    if (avail && bytes > *avail)
        throw InputError(what, value, N_("needs {0}, more than the {1} this machine has available (MemAvailable)"),
                         {bytes_all_units(bytes), bytes_all_units(*avail)});
}

}  // namespace inferlab
