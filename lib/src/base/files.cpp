#include "inferlab/base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"

namespace inferlab {
namespace {

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, ...": the
// bracketed id means nothing to a user, the rest says where and what.
std::string without_id(const std::string& what) {
    const auto close = what.find("] ");
    return close == std::string::npos ? what : what.substr(close + 2);
}

}  // namespace

std::ifstream open_input_file(const std::string& path, std::ios::openmode mode, std::uint64_t max_bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_directory(st)) throw FileError(path, N_("is a directory, not a file"));
    if (fs::exists(st) && !fs::is_regular_file(st))
        throw FileError(path, N_("is not a regular file (a FIFO, a device or a socket): inferlab reads files only"));
    std::ifstream in(path, mode);
    if (!in) throw FileError(path, N_("cannot be opened (missing or unreadable)"));
    const std::uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > max_bytes)
        throw FileError(path, Prose{N_("is {0}, more than the {1} an input of this kind may hold"),
                                    {bytes_all_units(size), bytes_all_units(max_bytes)}});
    return in;
}

namespace {

// Runs `write` on `f` and closes it whatever happens; false when either failed.
bool write_and_close(std::FILE* f, const std::function<bool(std::FILE*)>& write) {
    bool ok = false;
    try {
        ok = write(f);
    } catch (...) {
        std::fclose(f);
        throw;
    }
    ok = std::fflush(f) == 0 && ok;
    return std::fclose(f) == 0 && ok;
}

// /dev/stdout, /dev/fd/N, /proc/self/fd/N: names of an open descriptor (maybe the shell's redirect
// to a regular file), which must be written through, never replaced by a rename.
bool names_a_descriptor(const std::string& path) { return path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0; }

// Opens a device, a FIFO or a /dev/ name for writing in place. A FIFO with no reader is an error
// (open() would wait for one forever: O_NONBLOCK makes it ENXIO). The file standard output
// already writes (`--svg /dev/stdout > out.txt`) is written through standard output's own
// descriptor, at its offset: opening it again would truncate it and write from its start, under
// the text printed after.
std::FILE* open_in_place(const std::string& path) {
    struct stat target {}, out {};
    if (::stat(path.c_str(), &target) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 && S_ISREG(target.st_mode) &&
        target.st_dev == out.st_dev && target.st_ino == out.st_ino) {
        std::fflush(stdout);
        const int fd = ::dup(STDOUT_FILENO);
        std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "wb");
        if (!f) throw FileError(path, N_("cannot be created (missing folder or no permission)"));
        return f;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ENXIO) throw FileError(path, N_("is a FIFO that no program is reading"));
    if (fd < 0) throw FileError(path, N_("cannot be created (missing folder or no permission)"));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a reader is there: writes may wait for it
    std::FILE* f = ::fdopen(fd, "wb");
    if (!f) {
        ::close(fd);
        throw FileError(path, N_("cannot be created (missing folder or no permission)"));
    }
    return f;
}

}  // namespace

void write_file_safely(const std::string& path, const std::function<bool(std::FILE*)>& write) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::is_directory(st)) throw FileError(path, N_("is a directory, not a file to write"));
    if (names_a_descriptor(path) || (fs::exists(st) && !fs::is_regular_file(st))) {  // a device, a FIFO: in place
        std::FILE* f = open_in_place(path);
        errno = 0;
        // A pipe whose reader has gone (`--svg /dev/stdout | head -1`) took what it wanted: the
        // run ends as it would have, as a closed standard output does.
        if (!write_and_close(f, write) && errno != EPIPE) throw FileError(path, N_("could not be written completely"));
        return;
    }
    // A symbolic link is followed: the file it names is replaced, the link stays.
    fs::path target = path;
    if (fs::is_symlink(fs::symlink_status(path, ec))) {
        target = fs::weakly_canonical(path, ec);
        if (ec) throw FileError(path, N_("cannot be created (missing folder or no permission)"));
    }
    const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmp = (folder / ("." + target.filename().string() + ".inferlab-XXXXXX")).string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0) throw FileError(path, N_("cannot be created (missing folder or no permission)"));
    // The mode the file has, or a new file's: 0666 less the umask (mkstemp made it 0600).
    ::mode_t mode = 0;
    if (struct stat old {}; fs::exists(st) && ::stat(target.c_str(), &old) == 0) {
        mode = old.st_mode & 07777;
    } else {
        const ::mode_t mask = ::umask(0);
        ::umask(mask);
        mode = 0666 & ~mask;
    }
    std::FILE* f = ::fdopen(fd, "wb");
    if (!f) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw FileError(path, N_("cannot be created (missing folder or no permission)"));
    }
    bool ok = ::fchmod(fd, mode) == 0;
    try {
        ok = write_and_close(f, write) && ok;
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    if (!ok || std::rename(tmp.c_str(), target.c_str()) != 0) {
        ::unlink(tmp.c_str());
        throw FileError(path, N_("could not be written completely"));
    }
}

void write_text_file(const std::string& path, const std::string& text) {
    write_file_safely(path, [&](std::FILE* f) { return std::fwrite(text.data(), 1, text.size(), f) == text.size(); });
}

std::string read_text_file(const std::string& path, std::uint64_t max_bytes) {
    std::ifstream in = open_input_file(path, std::ios::in, max_bytes);
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw FileError(path, N_("could not be read completely"));
    return ss.str();
}

nlohmann::json parse_json_text(const std::string& where, const std::string& path, const std::string& text) {
    using nlohmann::json;
    // Called by the (iterative) parser at every value; `depth` counts the enclosing containers.
    const json::parser_callback_t limit_depth = [&](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
            depth >= kMaxJsonDepth)
            throw InputError(where, path,
                             N_("nests objects or arrays more than {0} levels deep"), {std::to_string(kMaxJsonDepth)});
        return true;
    };
    try {
        return json::parse(text, limit_depth);
    } catch (const json::parse_error& e) {
        throw InputError(where, path, N_("is not valid JSON: {0}"), {without_id(e.what())});
    } catch (const json::out_of_range& e) {
        // 406: a number literal beyond the largest double (1e999).
        throw InputError(where, path,
                         N_("is not usable JSON: {0} (the largest double is about 1.8e308)"), {without_id(e.what())});
    } catch (const json::exception& e) {
        throw InputError(where, path, N_("is not usable JSON: {0}"), {without_id(e.what())});
    }
}

}  // namespace inferlab
