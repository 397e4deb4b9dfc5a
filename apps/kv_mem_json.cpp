// kv-mem --json: one document of a KvMemResult, every key in every run (null where a figure does
// not apply), the keys the README's table documents.
#include "kv_mem_json.hpp"

#include <fmt/format.h>

#include "common.hpp"
#include "inferlab/base/format.hpp"

namespace inferlab::app {

// "0–2" runs of identical layers.
std::vector<std::pair<std::string, KvLayer>> layer_runs(const KvSpec& spec) {
    std::vector<std::pair<std::string, KvLayer>> out;
    std::size_t start = 0;
    for (std::size_t i = 1; i <= spec.layers.size(); ++i) {
        if (i == spec.layers.size() || !(spec.layers[i] == spec.layers[start])) {
            out.push_back({i - 1 == start ? fmt::format("{}", start) : fmt::format("{}–{}", start, i - 1),
                           spec.layers[start]});
            start = i;
        }
    }
    return out;
}

namespace {

using nlohmann::json;

json model_json(const KvMemResult& r) {
    const KvModel& m = r.model;
    const KvLayer& l0 = m.spec.layers.front();
    json runs = json::array();
    for (const auto& [range, l] : layer_runs(m.spec))
        runs.push_back({{"layers", range}, {"h_kv", l.h_kv}, {"d_k", l.d_k}, {"d_v", l.d_v}, {"bits_k", l.bits_k},
                        {"bits_v", l.bits_v}, {"window", l.window}, {"latent", l.latent}});
    const bool cfg = m.config.has_value();
    return {{"source", m.source},
            {"layers", r.layers},
            {"dtype", m.dtype_name},
            {"uniform", r.uniform},
            {"kv_heads", r.uniform ? json(l0.h_kv) : json(nullptr)},
            {"head_dim", r.uniform ? json(l0.d_k) : json(nullptr)},
            {"bits_per_element", r.uniform ? json(l0.bits_k) : json(nullptr)},
            {"q_heads", or_null(m.q_heads)},
            {"layer_runs", runs},
            {"window_rule", cfg && !m.config->window_rule.empty() ? json(m.config->window_rule.text()) : json(nullptr)},
            {"defaults_applied", cfg ? json(texts(m.config->defaults_applied)) : json::array()},
            {"max_position_embeddings", cfg && m.config->max_positions ? json(m.config->max_positions) : json(nullptr)}};
}

json paged_json(const PagedUsage& p, double waste_percent) {
    const bool one = p.groups.size() == 1;
    json groups = json::array();
    for (const auto& g : p.groups)
        groups.push_back({{"window", g.window}, {"layers", g.layers}, {"block_bytes", g.block_bytes},
                          {"blocks_per_request", g.blocks_per_request}, {"total_blocks", g.total_blocks},
                          {"allocated_bytes", g.allocated_bytes}});
    return {{"block_size", p.block_size},
            {"groups", groups},
            {"blocks_per_request", one ? json(p.blocks_per_request) : json(nullptr)},
            {"total_blocks", one ? json(p.total_blocks) : json(nullptr)},
            {"block_bytes", one ? json(p.block_bytes) : json(nullptr)},
            {"used_bytes", p.used_bytes},
            {"allocated_bytes", p.allocated_bytes},
            {"waste_bytes", p.waste_bytes},
            {"waste_percent", waste_percent}};
}

json budget_json(const KvMemBudget& b) {
    const KvBudget& f = b.fit;
    const bool paged = f.request_paged.has_value();
    return {{"budget_bytes", f.budget_bytes},
            {"weights_bytes", b.weights_bytes},
            {"devices", b.devices},
            {"weights_bytes_per_device", f.weights_bytes},
            {"available_bytes", f.available_bytes},
            {"weights_from", b.weights_given ? std::string("--weights-bytes") : b.weights_from.text()},
            {"max_tokens", or_null(f.max_tokens)},
            {"seq_len", or_null(f.seq_len)},
            {"request_bytes", or_null(f.request_bytes)},
            {"max_batch", or_null(f.max_batch)},
            {"block_size", or_null(f.block_size)},
            {"block_bytes", or_null(f.block_bytes)},
            {"max_blocks", or_null(f.max_blocks)},
            {"blocks_per_request", or_null(f.blocks_per_request)},
            {"request_allocated_bytes", paged ? json(f.request_paged->allocated_bytes) : json(nullptr)},
            {"max_concurrency", or_null(f.max_concurrency)}};
}

json extras_json(const KvMemResult& r) {
    json j;
    j["head_sharing"] = nullptr;
    if (!r.head_sharing.empty()) {
        j["head_sharing"] = json::array();
        for (const auto& row : r.head_sharing)
            j["head_sharing"].push_back({{"structure", row.name}, {"q_heads", *r.model.q_heads}, {"kv_heads", row.kv_heads},
                                         {"ratio_to_mha", row.ratio_num == row.ratio_den
                                                              ? std::string("1")
                                                              : fmt::format("{}/{}", row.ratio_num, row.ratio_den)},
                                         {"kv_proj_width", row.kv_proj_width}, {"total_bytes", row.total_bytes}});
    }
    j["paged"] = r.paged ? paged_json(*r.paged, *r.paged_waste_percent) : json(nullptr);
    j["tensor_parallel"] = nullptr;
    if (const auto& t = r.tensor_parallel)
        j["tensor_parallel"] = {{"devices", t->devices}, {"heads_per_device", t->latent_replicated ? json(nullptr) : json(t->heads_per_device)},
                                {"replication", t->replication}, {"replicated", t->replicated},
                                {"latent_replicated", t->latent_replicated}, {"per_device_bytes", t->per_device_bytes},
                                {"all_devices_bytes", t->all_devices_bytes}};
    j["shared_prefix"] = nullptr;
    if (const auto& u = r.shared_prefix)
        j["shared_prefix"] = {{"prefix_tokens", u->prefix},         {"requests", u->requests},
                              {"block_size", u->block_size},        {"shared_blocks", u->shared_blocks},
                              {"partial_tokens", u->partial_tokens}, {"own_blocks_per_request", u->own_blocks},
                              {"total_blocks", u->total_blocks},    {"unshared_blocks", u->unshared_blocks},
                              {"block_bytes", u->block_bytes},      {"total_bytes", u->total_bytes},
                              {"unshared_bytes", u->unshared_bytes}, {"saved_bytes", u->saved_bytes}};
    j["mla"] = nullptr;
    if (const auto& m = r.mla)
        j["mla"] = {{"latent_bytes_per_token_per_layer", m->latent_bytes_per_token_per_layer},
                    {"decompressed_total_bytes", m->decompressed_total_bytes},
                    {"decompressed_bytes_per_token", m->decompressed_bytes_per_token}};
    j["budget"] = r.budget ? budget_json(*r.budget) : json(nullptr);
    return j;
}

}  // namespace

// One schema whatever was asked: a figure that does not apply is null.
json kv_mem_json(const KvMemResult& r) {
    json j;
    j["model"] = model_json(r);
    j["bytes_per_token"] = r.has_window ? json(nullptr) : json(r.bytes_per_token);
    j["bytes_per_token_per_layer"] = r.bytes_per_token_per_layer;
    const bool kv = r.kv.has_value();
    j["seq_lens"] = kv ? json(r.kv->seq_lens) : json(nullptr);
    j["request_counts"] = kv ? json(r.kv->counts) : json(nullptr);
    j["per_request_bytes"] = kv ? json(r.kv->per_request_bytes) : json(nullptr);
    j["per_layer_bytes"] = kv ? json(r.kv->per_layer_bytes) : json(nullptr);
    j["total_bytes"] = kv ? json(r.kv->total_bytes) : json(nullptr);
    j["total_gib"] = or_null(r.total_gib);
    j["total_gb"] = or_null(r.total_gb);
    j.update(extras_json(r));
    return j;
}

}  // namespace inferlab::app
