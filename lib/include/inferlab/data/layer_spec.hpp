#pragma once
// kv-mem's --layer-spec file: one JSON object per layer (or {"layers": [...]}), each with
// h_kv, d_k, d_v, b_k, b_v (bytes per element or a dtype name), an optional window and repeat.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "inferlab/calc/kv.hpp"

namespace inferlab {

// The cache is described layer by layer; no real model comes near this many layers.
constexpr std::uint64_t kMaxKvLayers = 100000;

// The spec of a parsed document; `path` names the file in errors (InputError naming the layer and
// key), `where` the file's role (a command passes its flag, "--layer-spec").
KvSpec parse_layer_spec(const nlohmann::json& doc, const std::string& path, const std::string& where = "layer spec");

// Reads and parses the file (errors of read_text_file and parse_json_text, then the above).
KvSpec read_layer_spec(const std::string& path, const std::string& where = "layer spec");

}  // namespace inferlab
