// Writing a user's output safely (base/files) and the memory budget (base/memory): issue #30.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/memory.hpp"

using namespace inferlab;
namespace fs = std::filesystem;

namespace {

struct Folder {
    fs::path path = fs::temp_directory_path() / ("inferlab-unit-files-" + std::to_string(::getpid()));
    Folder() {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~Folder() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    int entries() const {
        int n = 0;
        for ([[maybe_unused]] const auto& e : fs::directory_iterator(path)) ++n;
        return n;
    }
};

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

}  // namespace

TEST_CASE("write_file_safely: the old file stays whole when the writer fails or throws, and nothing is left behind", "[files]") {
    Folder dir;
    const fs::path out = dir.path / "out.txt";
    write_text_file(out.string(), "old");
    ::chmod(out.c_str(), 0640);
    CHECK_THROWS_WITH(write_file_safely(out.string(), [](std::FILE* f) { return std::fputs("half", f) >= 0 && false; }),
                      Catch::Contains("could not be written completely"));
    CHECK(slurp(out) == "old");
    CHECK(dir.entries() == 1);
    CHECK_THROWS_AS(write_file_safely(out.string(), [](std::FILE*) -> bool { throw std::runtime_error("writer"); }),
                    std::runtime_error);
    CHECK(slurp(out) == "old");
    CHECK(dir.entries() == 1);
    write_text_file(out.string(), "new");
    CHECK(slurp(out) == "new");
    CHECK(dir.entries() == 1);
    CHECK((fs::status(out).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
    // A symbolic link is followed: its target is replaced, the link stays a link.
    const fs::path link = dir.path / "link.txt";
    fs::create_symlink(out, link);
    write_text_file(link.string(), "through the link");
    CHECK(fs::is_symlink(fs::symlink_status(link)));
    CHECK(slurp(out) == "through the link");
    CHECK_THROWS_WITH(write_text_file((dir.path / "missing" / "x.txt").string(), "x"), Catch::Contains("cannot be created"));
}

TEST_CASE("input files: not regular, or over the limit of their kind, is refused", "[files]") {
    Folder dir;
    CHECK_THROWS_WITH(open_input_file("/dev/zero"), Catch::Contains("is not a regular file"));
    const fs::path f = dir.path / "f.json";
    write_text_file(f.string(), std::string(100, ' '));
    CHECK_NOTHROW(read_text_file(f.string(), 100));
    CHECK_THROWS_WITH(read_text_file(f.string(), 99), Catch::Contains("more than the 99 B"));
}

TEST_CASE("require_memory: more than the machine has available is refused with both numbers", "[files]") {
    if (!available_memory_bytes()) return;  // not Linux: nothing to check against
    CHECK_NOTHROW(require_memory(1, "buffer", "1 B"));
    CHECK_THROWS_WITH(require_memory(UINT64_MAX, "buffer", "all of it"),
                      Catch::StartsWith("buffer 'all of it': needs 18,446,744,073,709,551,615 B") &&
                          Catch::Contains("this machine has available (MemAvailable)"));
}
