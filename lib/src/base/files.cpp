#include "inferlab/base/files.hpp"

#include <filesystem>
#include <sstream>

#include "inferlab/base/error.hpp"

namespace inferlab {
namespace {

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 1, ...": the
// bracketed id means nothing to a user, the rest says where and what.
std::string without_id(const std::string& what) {
    const auto close = what.find("] ");
    return close == std::string::npos ? what : what.substr(close + 2);
}

}  // namespace

std::ifstream open_input_file(const std::string& path, std::ios::openmode mode) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw FileError(path, N_("is a directory, not a file"));
    std::ifstream in(path, mode);
    if (!in) throw FileError(path, N_("cannot be opened (missing or unreadable)"));
    return in;
}

void write_text_file(const std::string& path, const std::string& text) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw FileError(path, N_("is a directory, not a file to write"));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw FileError(path, N_("cannot be created (missing folder or no permission)"));
    out << text;
    out.close();
    if (!out) throw FileError(path, N_("could not be written completely"));
}

std::string read_text_file(const std::string& path) {
    std::ifstream in = open_input_file(path);
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
