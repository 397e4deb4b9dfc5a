#include "inferlab/data/arrivals.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {

namespace {

const char* const kFields[] = {"arrival_s", "prompt_tokens", "output_tokens", "prefix_id", "prefix_len"};

bool skipped(const std::string& line) {
    const auto first = line.find_first_not_of(" \t");
    return first == std::string::npos || line[first] == '#';
}

// One request from its fields as text (absent: empty), checked; `at` is "FILE line N".
ServeRequest request_of(const std::string& at, const std::vector<std::string>& f, double previous) {
    auto field = [&](std::size_t i) { return at + " " + kFields[i]; };
    ServeRequest r;
    if (f[0].empty()) throw InputError(field(0), "", N_("is missing"));
    r.arrival_s = parse_real(field(0), f[0]);
    if (r.arrival_s < 0) throw InputError(field(0), f[0], N_("must not be negative (seconds from the trace's start)"));
    // Past 10^8 s (three years) a double's digits no longer resolve millisecond steps.
    if (r.arrival_s > 1e8) throw InputError(field(0), f[0], N_("must be at most 1e8 seconds from the trace's start"));
    if (r.arrival_s < previous)
        throw InputError(field(0), f[0], N_("comes before the line above's {0}: the trace must be in order of arrival"),
                         {format_short(previous, 17)});
    for (std::size_t i : {1, 2})
        if (f[i].empty()) throw InputError(field(i), "", N_("is missing"));
    r.prompt = parse_positive_int(field(1), f[1]);
    r.output = parse_positive_int(field(2), f[2]);
    if (f[3].empty() != f[4].empty())
        throw InputError(field(f[3].empty() ? 3 : 4), "", N_("is missing: prefix_id and prefix_len go together"));
    if (!f[3].empty()) {
        const std::uint64_t id = parse_nonnegative_int(field(3), f[3]);
        if (id > static_cast<std::uint64_t>(INT64_MAX)) throw InputError(field(3), f[3], N_("is too large"));
        r.prefix_group = static_cast<long long>(id);
        r.prefix_len = parse_positive_int(field(4), f[4]);
        if (r.prefix_len > r.prompt)
            throw InputError(field(4), f[4], N_("must be at most prompt_tokens ({0})"), {std::to_string(r.prompt)});
    }
    return r;
}

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const auto comma = line.find(',', start);
        std::string item = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const auto a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
        out.push_back(a == std::string::npos ? "" : item.substr(a, b - a + 1));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

// The CSV header: the position of each known field (npos: absent); an unknown name is an error.
std::vector<std::size_t> csv_columns(const std::string& at, const std::string& line) {
    std::vector<std::size_t> pos(std::size(kFields), std::string::npos);
    const auto names = split_csv(line);
    for (std::size_t c = 0; c < names.size(); ++c) {
        const auto it = std::find(std::begin(kFields), std::end(kFields), names[c]);
        if (it == std::end(kFields))
            throw InputError(at + " header", names[c],
                             N_("is not a column of a trace (arrival_s, prompt_tokens, output_tokens, prefix_id, prefix_len)"));
        pos[std::size_t(it - std::begin(kFields))] = c;
    }
    return pos;
}

// A JSON field as text for request_of: a number printed back exactly, or the error.
std::string json_field(const std::string& at, const nlohmann::json& j, std::size_t i) {
    if (!j.contains(kFields[i]) || j[kFields[i]].is_null()) return "";
    const auto& v = j[kFields[i]];
    if (v.is_number_unsigned() || v.is_number_integer()) return v.dump();
    if (v.is_number_float()) return format_short(v.get<double>(), 17);
    throw InputError(at + " " + kFields[i], v.dump(), N_("must be a number"));
}

}  // namespace

std::vector<ServeRequest> read_arrivals(const std::string& where, const std::string& path) {
    std::ifstream in = open_input_file(path, std::ios::in, kMaxNumberFileBytes);
    std::vector<ServeRequest> out;
    std::optional<std::vector<std::size_t>> columns;  // CSV, after its header
    std::optional<bool> jsonl;
    std::string line;
    for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (skipped(line)) continue;
        const std::string at = fmt::format("{} {} line {}", where, path, lineno);
        if (!jsonl) jsonl = line[line.find_first_not_of(" \t")] == '{';
        std::vector<std::string> f(std::size(kFields));
        if (*jsonl) {
            const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
            if (!j.is_object()) throw InputError(at, line.substr(0, 60), N_("is not a JSON object (a JSON Lines trace has one a line)"));
            for (const auto& [key, value] : j.items())
                if (std::find(std::begin(kFields), std::end(kFields), key) == std::end(kFields))
                    throw InputError(at + " " + key, value.dump(), N_("is not a field of a trace request"));
            for (std::size_t i = 0; i < f.size(); ++i) f[i] = json_field(at, j, i);
        } else if (!columns) {
            columns = csv_columns(at, line);
            for (std::size_t i : {0, 1, 2})
                if ((*columns)[i] == std::string::npos)
                    throw InputError(at + " header", line, N_("has no column {0}"), {kFields[i]});
            continue;
        } else {
            const auto cells = split_csv(line);
            for (std::size_t i = 0; i < f.size(); ++i) {
                const std::size_t c = (*columns)[i];
                if (c != std::string::npos && c < cells.size()) f[i] = cells[c];
            }
        }
        if (out.size() == kMaxTraceRequests)
            throw InputError(where, path, N_("holds more than {0} requests"), {group_thousands(kMaxTraceRequests)});
        out.push_back(request_of(at, f, out.empty() ? 0 : out.back().arrival_s));
    }
    if (in.bad()) throw FileError(path, N_("could not be read completely"));
    if (out.empty()) throw InputError(where, path, N_("holds no requests"));
    return out;
}

}  // namespace inferlab
