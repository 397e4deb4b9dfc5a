#include "inferlab/data/layer_spec.hpp"

#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"

namespace inferlab {

KvSpec parse_layer_spec(const nlohmann::json& j, const std::string& path, const std::string& where_file) {
    const nlohmann::json& list = j.is_object() && j.contains("layers") ? j["layers"] : j;
    if (!list.is_array() || list.empty())
        throw InputError(where_file, path, N_("must hold a non-empty list of layers (or {{\"layers\": [...]}})"));
    KvSpec spec;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& e = list[i];
        const std::string where = where_file + " layer " + std::to_string(i);
        // Depth is limited at parse time, so dump() here cannot recurse deeply; it is cut for one line.
        if (!e.is_object()) throw InputError(where, e.dump().substr(0, 60), N_("must be an object"));
        // A misspelt key ("reapeat") would be ignored and change the answer without a word.
        for (const auto& [key, value] : e.items())
            if (key != "h_kv" && key != "d_k" && key != "d_v" && key != "b_k" && key != "b_v" && key != "window" &&
                key != "repeat" && key.rfind('_', 0) != 0)
                throw InputError(N_("{0}: unknown key '{1}' (the keys are h_kv, d_k, d_v, b_k, b_v, window, repeat; a key "
                                    "starting with _ is a comment)"),
                                 {where, key});
        auto need_int = [&](const char* key, bool allow_zero) -> std::uint64_t {
            if (!e.contains(key)) throw InputError(N_("{0}: missing key '{1}'"), {where, key});
            const auto& v = e[key];
            if (!v.is_number_integer() || v.get<std::int64_t>() < (allow_zero ? 0 : 1))
                throw InputError(where + " key '" + key + "'", v.dump().substr(0, 60),
                                 allow_zero ? N_("must be a non-negative integer") : N_("must be a positive integer"));
            return v.get<std::uint64_t>();
        };
        auto need_bytes = [&](const char* key) -> std::uint32_t {
            if (!e.contains(key)) throw InputError(N_("{0}: missing key '{1}'"), {where, key});
            const auto& v = e[key];
            if (v.is_string()) return parse_dtype(where + " key '" + key + "'", v.get<std::string>()).bits;
            if (!v.is_number())
                throw InputError(where + " key '" + key + "'", v.dump().substr(0, 60),
                                 N_("must be bytes per element or a dtype name"));
            return parse_bytes_per_elem_bits(where + " key '" + key + "'", v.dump());
        };
        KvLayer l;
        l.h_kv = need_int("h_kv", false);
        l.d_k = need_int("d_k", false);
        l.d_v = need_int("d_v", false);
        l.bits_k = need_bytes("b_k");
        l.bits_v = need_bytes("b_v");
        l.window = e.contains("window") ? need_int("window", true) : 0;
        std::uint64_t repeat = e.contains("repeat") ? need_int("repeat", false) : 1;
        if (repeat > kMaxKvLayers || spec.layers.size() + repeat > kMaxKvLayers)
            throw InputError(where + " key 'repeat'", std::to_string(repeat),
                             N_("makes more than {0} layers"), {std::to_string(kMaxKvLayers)});
        for (std::uint64_t r = 0; r < repeat; ++r) spec.layers.push_back(l);
    }
    return spec;
}

KvSpec read_layer_spec(const std::string& path, const std::string& where) {
    return parse_layer_spec(parse_json_text(where, path, read_text_file(path, kMaxJsonFileBytes)), path, where);
}

}  // namespace inferlab
