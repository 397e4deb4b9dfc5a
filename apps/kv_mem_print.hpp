#pragma once
// kv-mem's printers: one KvMemResult as text, --json, --csv tables and --explain, side by side
// in kv_mem_print.cpp. They choose what to print; every number comes from the library.
#include <string>
#include <vector>

#include "common.hpp"
#include "inferlab/answer/kv_mem.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab::app {

// Every form of kv-mem's answer; tables: requests, layers, head-sharing, paged (as they apply).
Report kv_mem_report(const KvMemResult& r);
// --list-models: the shipped configs (table "models").
Report kv_mem_models_report(const std::vector<ShippedModel>& models);
// The --help footer: examples, units, rules for real configs, JSON keys.
std::string kv_mem_footer();

}  // namespace inferlab::app
