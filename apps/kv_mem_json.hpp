#pragma once
// kv-mem's JSON document, and the runs of identical layers that it and the text both name.
// Private to kv-mem's printers.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "inferlab/answer/kv_mem.hpp"

namespace inferlab::app {

// "0–2" runs of identical layers.
std::vector<std::pair<std::string, KvLayer>> layer_runs(const KvSpec& spec);

// The --json document of `r` (README: JSON keys, kv-mem).
nlohmann::json kv_mem_json(const KvMemResult& r);

}  // namespace inferlab::app
