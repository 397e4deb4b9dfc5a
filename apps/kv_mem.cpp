// inferlab kv-mem: how many bytes does the KV cache hold?
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common.hpp"
#include "inferlab/dtype.hpp"
#include "inferlab/error.hpp"
#include "inferlab/kv.hpp"
#include "inferlab/layer_spec.hpp"
#include "inferlab/model_config.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

constexpr std::uint64_t kMaxLayers = kMaxKvLayers;

struct KvMemOptions {
    std::string layers, kv_heads, head_dim, hidden_size, q_heads;
    std::string seq_len, batch = "1", dtype, bytes_per_elem;
    std::string layer_spec, config, model;
    std::string block_size, tp, budget, weights_bytes, weight_dtype;
    std::string shared_prefix;  // P prompt tokens shared by every request (paged, copy-on-write)
    bool list_models = false;
    OutputFlags out;
};

// The geometry and where it came from.
struct Geometry {
    KvSpec spec;
    std::string source;            // "flags", a config name, a layer-spec file
    std::string dtype_name;        // "bf16" or "custom"
    std::uint32_t bits = 0;        // uniform precision (0 for a per-layer spec)
    std::optional<std::uint64_t> q_heads, hidden;
    std::optional<ModelConfig> config;
};

// The requests: one entry per listed length, or one entry of --batch equal requests.
std::vector<Requests> parse_lengths(const KvMemOptions& o, CLI::App& sub) {
    if (o.seq_len.empty()) return {};
    std::vector<std::uint64_t> lens;
    for (const auto& item : split_count_list("--seq-len", o.seq_len)) {
        std::uint64_t s = parse_tokens("--seq-len", item);
        if (s == 0) throw InputError("--seq-len", item, "must be a positive token count");
        lens.push_back(s);
    }
    std::uint64_t batch = parse_positive_int("--batch", o.batch);
    if (batch != 1) {
        if (lens.size() != 1)
            throw InputError("--batch", o.batch,
                             "cannot be combined with a list of lengths: list every request in --seq-len instead");
        return {{lens.front(), batch}};
    }
    (void)sub;
    return one_each(lens);
}

std::uint32_t precision_bits(const KvMemOptions& o, const std::optional<DType>& fallback, std::string* name) {
    if (!o.dtype.empty() && !o.bytes_per_elem.empty())
        throw InputError("--dtype and --bytes-per-elem both given: choose one");
    if (!o.dtype.empty()) {
        DType d = parse_dtype("--dtype", o.dtype);
        *name = d.name;
        return d.bits;
    }
    if (!o.bytes_per_elem.empty()) {
        std::uint32_t bits = parse_bytes_per_elem_bits("--bytes-per-elem", o.bytes_per_elem);
        *name = bits_as_bytes(bits) + " per element";
        return bits;
    }
    if (fallback) {
        *name = fallback->name;
        return fallback->bits;
    }
    throw InputError("no KV precision: give --dtype (fp32, fp16, bf16, fp8, int8, int4) or --bytes-per-elem");
}

Geometry build_geometry(const KvMemOptions& o, CLI::App& sub) {
    const bool manual = given(sub, "--layers") || given(sub, "--kv-heads") || given(sub, "--head-dim") ||
                        given(sub, "--hidden-size");
    int sources = (manual ? 1 : 0) + (!o.layer_spec.empty()) + (!o.config.empty()) + (!o.model.empty());
    if (sources == 0)
        throw InputError("no model given: use --layers/--kv-heads/--head-dim, --layer-spec FILE, --config FILE or --model NAME");
    if (sources > 1)
        throw InputError("choose one model source: --layers/--kv-heads/--head-dim, --layer-spec, --config or --model");
    Geometry g;
    if (!o.config.empty() || !o.model.empty()) {
        if (!o.q_heads.empty()) throw InputError("--q-heads comes from the config; do not give it with --config/--model");
        ModelConfig c = o.config.empty() ? load_named_model(o.model) : load_config_file(o.config);
        // Every precision this run needs, in one message: the KV's, and the weights' for --budget.
        const bool weights_known = o.budget.empty() || !o.weights_bytes.empty() || !o.weight_dtype.empty();
        require_precision_flags(c, {{"--dtype", !o.dtype.empty() || !o.bytes_per_elem.empty()},
                                    {"--weight-dtype", weights_known}});
        g.bits = precision_bits(o, c.dtype, &g.dtype_name);
        g.spec = kv_spec_from_config(c, g.bits);
        g.source = c.source;
        if (!c.mla) g.q_heads = c.q_heads;
        g.hidden = c.hidden;
        g.config = c;
        return g;
    }
    if (!o.layer_spec.empty()) {
        if (!o.dtype.empty() || !o.bytes_per_elem.empty())
            throw InputError("--layer-spec gives b_k and b_v per layer: do not give --dtype or --bytes-per-elem");
        g.spec = read_layer_spec(o.layer_spec);
        g.source = o.layer_spec;
        g.dtype_name = "per layer";
        return g;
    }
    if (o.layers.empty()) throw InputError("--layers is required with --kv-heads/--head-dim");
    if (o.kv_heads.empty()) throw InputError("--kv-heads is required (H_kv, the K/V heads per layer)");
    std::uint64_t layers = parse_positive_int("--layers", o.layers);
    if (layers > kMaxLayers) throw InputError("--layers", o.layers, "must be at most " + std::to_string(kMaxLayers));
    std::uint64_t h_kv = parse_positive_int("--kv-heads", o.kv_heads);
    std::uint64_t d = 0;
    if (!o.q_heads.empty()) {
        std::uint64_t hq = parse_positive_int("--q-heads", o.q_heads);
        if (hq % h_kv != 0)
            throw InputError("--q-heads", o.q_heads,
                             "must be divisible by --kv-heads " + std::to_string(h_kv) +
                                 " (each K/V head serves a whole group of query heads)");
        g.q_heads = hq;
    }
    if (!o.head_dim.empty() && !o.hidden_size.empty())
        throw InputError("--head-dim and --hidden-size both given: choose one (d = hidden / H_q)");
    if (!o.head_dim.empty()) {
        d = parse_positive_int("--head-dim", o.head_dim);
    } else if (!o.hidden_size.empty()) {
        std::uint64_t hidden = parse_positive_int("--hidden-size", o.hidden_size);
        if (!g.q_heads) throw InputError("--hidden-size needs --q-heads to derive the head width d = hidden / H_q");
        if (hidden % *g.q_heads != 0)
            throw InputError("--hidden-size", o.hidden_size,
                             "must be divisible by --q-heads " + std::to_string(*g.q_heads) + " to derive d");
        d = hidden / *g.q_heads;
        g.hidden = hidden;
    } else {
        throw InputError("--head-dim is required (or --hidden-size with --q-heads)");
    }
    g.bits = precision_bits(o, std::nullopt, &g.dtype_name);
    g.spec = uniform_kv(layers, h_kv, d, g.bits);
    g.source = "flags";
    return g;
}

std::string b_text(std::uint32_t bits) { return exact_ratio(bits, 8, 3); }

// "layers 0–2: H_kv=8 d_k=128 d_v=128 b_k=2 b_v=2 window=4096" runs of identical layers.
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

std::string describe_layer(const KvLayer& l);

// Human lines for the layers: runs of identical layers, or, when layers interleave (Gemma's
// alternating windows give 42 runs), one line per distinct layer with its layer indices.
std::vector<std::string> layer_summary(const KvSpec& spec) {
    auto runs = layer_runs(spec);
    std::vector<std::string> out;
    if (runs.size() <= 8) {
        for (const auto& [range, l] : runs) out.push_back(fmt::format("layers {}: {}", range, describe_layer(l)));
        return out;
    }
    std::vector<std::pair<KvLayer, std::vector<std::size_t>>> kinds;
    for (std::size_t i = 0; i < spec.layers.size(); ++i) {
        auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == spec.layers[i]; });
        if (it == kinds.end()) kinds.push_back({spec.layers[i], {i}});
        else it->second.push_back(i);
    }
    for (const auto& [l, idx] : kinds) {
        // Consecutive layers as ranges ("0–4, 6–10"), so the list stays short and says exactly
        // which layers are meant; past 12 ranges the rest is counted, not implied.
        std::vector<std::string> ranges;
        for (std::size_t i = 0; i < idx.size();) {
            std::size_t j = i;
            while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
            ranges.push_back(j == i ? std::to_string(idx[i]) : fmt::format("{}–{}", idx[i], idx[j]));
            i = j + 1;
        }
        std::string list = fmt::format("{}", fmt::join(ranges.begin(), ranges.begin() + std::min<std::size_t>(ranges.size(), 12), ", "));
        if (ranges.size() > 12) list += fmt::format(", … ({} ranges in all)", ranges.size());
        // An even stride (Gemma-2's alternation) reads better as a progression, and is exact.
        // (A plain local, not the binding: C++17 lambdas cannot capture structured bindings.)
        const std::size_t step = idx.size() > 1 ? idx[1] - idx[0] : 0;
        const bool stride = idx.size() > 6 && std::adjacent_find(idx.begin() + 1, idx.end(), [step](std::size_t a, std::size_t b) {
                                                  return b - a != step;
                                              }) == idx.end();
        if (stride && step > 1) list = fmt::format("{}, {}, …, {} in steps of {}", idx[0], idx[1], idx.back(), step);
        out.push_back(fmt::format("{} layer{} ({}): {}", idx.size(), idx.size() == 1 ? "" : "s", list, describe_layer(l)));
    }
    return out;
}

std::string describe_layer(const KvLayer& l) {
    std::string s = l.latent ? fmt::format("latent width {} (MLA)", l.d_k)
                             : (l.d_k == l.d_v ? fmt::format("H_kv={} d={}", l.h_kv, l.d_k)
                                               : fmt::format("H_kv={} d_k={} d_v={}", l.h_kv, l.d_k, l.d_v));
    s += l.bits_k == l.bits_v ? fmt::format(" b={} B", b_text(l.bits_k))
                              : fmt::format(" b_k={} B b_v={} B", b_text(l.bits_k), b_text(l.bits_v));
    if (l.window) s += fmt::format(" window={}", l.window);
    return s;
}

nlohmann::json layer_json(const KvLayer& l) {
    return {{"h_kv", l.h_kv}, {"d_k", l.d_k}, {"d_v", l.d_v}, {"bits_k", l.bits_k}, {"bits_v", l.bits_v},
            {"window", l.window}, {"latent", l.latent}};
}

// --block-size: paged allocation, one block table per window (see kv_paged).
void paged_section(const KvSpec& spec, std::span<const Requests> reqs, std::uint64_t bs, Report& r) {
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    PagedUsage p = kv_paged(spec, reqs, bs);
    j["paged"] = {{"block_size", bs}, {"used_bytes", p.used_bytes}, {"allocated_bytes", p.allocated_bytes},
                  {"waste_bytes", p.waste_bytes}, {"groups", nlohmann::json::array()}};
    if (p.groups.size() == 1)
        j["paged"].update({{"blocks_per_request", p.blocks_per_request}, {"total_blocks", p.total_blocks},
                           {"block_bytes", p.block_bytes}});
    double waste = p.allocated_bytes ? 100.0 * static_cast<double>(p.waste_bytes) / static_cast<double>(p.allocated_bytes) : 0;
    j["paged"]["waste_percent"] = waste;
    auto per_request = [](const PagedGroup& grp) {
        return grp.blocks_per_request.size() <= 8 ? fmt::format("{}", fmt::join(grp.blocks_per_request, ", ")) : "varies";
    };
    if (p.groups.size() == 1) {
        h += fmt::format("\nPaged      blocks of {} tokens ({} each across all layers)\n", bs, bytes_all_units(p.block_bytes));
        h += fmt::format("  blocks     {} in all ({} per request: ceil(S / {}))\n", p.total_blocks,
                         per_request(p.groups.front()), bs);
    } else {
        // Sliding layers hold fewer positions, so they get their own block table: one
        // block count per group, each with its own block bytes; allocated sums them.
        h += fmt::format("\nPaged      blocks of {} tokens, one block table per attention kind:\n", bs);
    }
    for (const auto& grp : p.groups) {
        j["paged"]["groups"].push_back({{"window", grp.window}, {"layers", grp.layers}, {"block_bytes", grp.block_bytes},
                                        {"blocks_per_request", grp.blocks_per_request}, {"total_blocks", grp.total_blocks}});
        if (p.groups.size() == 1) continue;
        h += fmt::format("  {} ({} layer{}): {} blocks of {} ({} per request: ceil({} / {})) = {}\n",
                         grp.window ? fmt::format("sliding W={}", grp.window) : std::string("full attention"),
                         grp.layers, grp.layers == 1 ? "" : "s", group_thousands(grp.total_blocks),
                         bytes_all_units(grp.block_bytes), per_request(grp),
                         grp.window ? fmt::format("min(S, {})", grp.window) : std::string("S"), bs,
                         bytes_all_units(grp.total_blocks * grp.block_bytes));
    }
    h += fmt::format("  used       {}\n  allocated  {}\n  waste      {} ({}% of allocated, the unfilled tail blocks)\n",
                     bytes_all_units(p.used_bytes), bytes_all_units(p.allocated_bytes), bytes_all_units(p.waste_bytes),
                     format_real(waste, 4));
    x += fmt::format("\nPaged allocation: blocks_i = ceil(min(S_i, W) / {}) per block table (W = S for full attention); "
                     "allocated = Σ blocks × block bytes = {}; waste = allocated − used = {}\n",
                     bs, bytes_all_units(p.allocated_bytes), bytes_all_units(p.waste_bytes));
}

// --budget: what fits on one device after its share of the weights. With --tp N each device holds
// W / N of the weights and its share of every layer's K/V heads (kv_spec_per_device).
void budget_section(const KvMemOptions& o, const Geometry& g, std::span<const Requests> reqs, Report& r) {
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    std::uint64_t budget = parse_bytes("--budget", o.budget);
    if (budget == 0) throw InputError("--budget", o.budget, "must be positive");
    std::uint64_t weights = 0;
    std::string weights_from = "--weights-bytes";
    if (!o.weights_bytes.empty()) {
        weights = parse_bytes("--weights-bytes", o.weights_bytes);
    } else if (g.config) {
        ParamCount pc = count_params(*g.config);
        require_precision_flags(*g.config, {{"--weight-dtype", !o.weight_dtype.empty()}});
        DType wd = !o.weight_dtype.empty() ? parse_dtype("--weight-dtype", o.weight_dtype) : *g.config->dtype;
        weights = to_u64((static_cast<u128>(pc.total) * wd.bits + 7) / 8, "weight bytes");
        weights_from = fmt::format("{} parameters (counted from the config; {}) × {} B ({})", group_thousands(pc.total),
                                   g.config->tied_rule, b_text(wd.bits), wd.name);
    } else {
        throw InputError("--budget needs the weights: give --weights-bytes (e.g. 14GB), or a model with --config/--model");
    }
    std::optional<std::uint64_t> seq = reqs.empty() ? std::nullopt : std::optional<std::uint64_t>(reqs.front().seq_len);
    if (!std::all_of(reqs.begin(), reqs.end(), [&](const Requests& q) { return q.seq_len == reqs.front().seq_len; }))
        throw InputError("--budget", o.budget, "asks for the largest batch at one --seq-len; give a single length");
    std::optional<std::uint64_t> bs;
    if (!o.block_size.empty()) bs = parse_positive_int("--block-size", o.block_size);
    std::uint64_t devices = o.tp.empty() ? 1 : parse_positive_int("--tp", o.tp);
    const KvSpec spec = devices > 1 ? kv_spec_per_device(g.spec, devices) : g.spec;
    const std::uint64_t weights_dev = weights / devices + (weights % devices != 0);
    const std::uint64_t s_token = bytes_per_token(spec);
    KvBudget b = kv_budget(spec, budget, weights_dev, seq, bs);
    auto& bj = j["budget"];
    bj = {{"budget_bytes", b.budget_bytes}, {"weights_bytes", weights}, {"devices", devices},
          {"weights_bytes_per_device", b.weights_bytes}, {"available_bytes", b.available_bytes}, {"weights_from", weights_from}};
    const std::string per_dev = devices > 1 ? fmt::format(" per device (--tp {})", devices) : "";
    h += fmt::format("\nBudget      {} per device\n  weights   {}   [{}]\n", bytes_all_units(budget), bytes_all_units(weights),
                     weights_from);
    if (devices > 1)
        h += fmt::format("  weights per device  ceil(W / {}) = {}; each device holds 1/{} of the K/V heads ({} per token)\n",
                         devices, bytes_all_units(b.weights_bytes), devices, bytes_all_units(s_token));
    h += fmt::format("  for KV    {}{}\n", bytes_all_units(b.available_bytes), per_dev);
    x += fmt::format("\nBudget: available = budget − weights{} = {} − {} = {} B\n",
                     devices > 1 ? fmt::format(" / {}", devices) : "", budget, b.weights_bytes, b.available_bytes);
    if (b.max_tokens) {
        bj["max_tokens"] = *b.max_tokens;
        h += fmt::format("  most tokens cached       {} (floor(available / s_token) = floor({} / {})){}\n",
                         group_thousands(*b.max_tokens), b.available_bytes, s_token, per_dev);
        x += fmt::format("  max tokens = floor({} / {}) = {}\n", b.available_bytes, s_token, *b.max_tokens);
    }
    if (b.max_batch) {
        bj["seq_len"] = *b.seq_len;
        bj["request_bytes"] = *b.request_bytes;
        bj["max_batch"] = *b.max_batch;
        h += fmt::format("  largest batch at S={}   {} request{} ({} each{})\n", group_thousands(*b.seq_len), *b.max_batch,
                         *b.max_batch == 1 ? "" : "s", bytes_all_units(*b.request_bytes), devices > 1 ? " per device" : "");
        x += fmt::format("  max batch at S={} = floor({} / {}) = {}\n", *b.seq_len, b.available_bytes, *b.request_bytes,
                         *b.max_batch);
    }
    if (b.max_blocks) {
        bj["block_size"] = *b.block_size;
        bj["block_bytes"] = *b.block_bytes;
        bj["max_blocks"] = *b.max_blocks;
        h += fmt::format("  whole blocks of {}      {} ({} each)\n", *b.block_size, group_thousands(*b.max_blocks),
                         bytes_all_units(*b.block_bytes));
        x += fmt::format("  blocks = floor({} / {}) = {}\n", b.available_bytes, *b.block_bytes, *b.max_blocks);
    }
    if (b.max_concurrency) {
        const PagedUsage& one = *b.request_paged;
        bj["block_size"] = *b.block_size;
        bj["request_allocated_bytes"] = one.allocated_bytes;
        bj["max_concurrency"] = *b.max_concurrency;
        if (b.blocks_per_request) {
            bj["blocks_per_request"] = *b.blocks_per_request;
            h += fmt::format("  concurrent requests      {} (each needs {} blocks at S={})\n", *b.max_concurrency,
                             *b.blocks_per_request, group_thousands(*b.seq_len));
            x += fmt::format("  concurrency = floor(blocks / ceil(S / block)) = floor({} / {}) = {}\n", *b.max_blocks,
                             *b.blocks_per_request, *b.max_concurrency);
        } else {
            std::string parts;
            for (const auto& grp : one.groups)
                parts += fmt::format("{}{} × {} ({})", parts.empty() ? "" : " + ", grp.total_blocks, bytes_all_units(grp.block_bytes),
                                     grp.window ? fmt::format("sliding W={}", grp.window) : std::string("full"));
            h += fmt::format("  concurrent requests      {} (each allocates {} = {} at S={})\n", *b.max_concurrency,
                             bytes_all_units(one.allocated_bytes), parts, group_thousands(*b.seq_len));
            x += fmt::format("  concurrency = floor(available / allocated per request) = floor({} / {}) = {}\n",
                             b.available_bytes, one.allocated_bytes, *b.max_concurrency);
        }
    }
}

// --shared-prefix P: B requests of one length S sharing P prompt tokens in blocks of --block-size.
void print_shared_prefix(const KvMemOptions& o, const KvSpec& spec, std::span<const Requests> reqs, nlohmann::json& j,
                         std::string& h) {
    if (o.block_size.empty()) throw InputError("--shared-prefix needs --block-size (prefix sharing is by whole blocks)");
    if (!std::all_of(reqs.begin(), reqs.end(), [&](const Requests& q) { return q.seq_len == reqs.front().seq_len; }))
        throw InputError("--shared-prefix needs requests of one length (--seq-len S --batch B)");
    const SharedPrefixUsage u = kv_shared_prefix(spec, request_count(reqs), reqs.front().seq_len, parse_tokens("--shared-prefix", o.shared_prefix),
                                                 parse_positive_int("--block-size", o.block_size));
    j["shared_prefix"] = {{"prefix_tokens", u.prefix},     {"requests", u.requests},         {"block_size", u.block_size},
                          {"shared_blocks", u.shared_blocks}, {"partial_tokens", u.partial_tokens}, {"own_blocks_per_request", u.own_blocks},
                          {"total_blocks", u.total_blocks}, {"unshared_blocks", u.unshared_blocks}, {"block_bytes", u.block_bytes},
                          {"total_bytes", u.total_bytes},   {"unshared_bytes", u.unshared_bytes}, {"saved_bytes", u.saved_bytes}};
    h += fmt::format("\nShared prefix of {} tokens, {} requests, blocks of {} (copy-on-write)\n", u.prefix, u.requests, u.block_size);
    h += fmt::format("  shared     {} full blocks, held once\n", u.shared_blocks);
    h += u.partial_tokens ? fmt::format("  partial    the last prefix block holds {} of {} tokens: each request copies it\n"
                                        "             on its first write\n",
                                        u.partial_tokens, u.block_size)
                          : std::string("  partial    none: the prefix ends on a block boundary\n");
    h += fmt::format("  blocks     {} = {} + {} × {} (unshared: {})\n", u.total_blocks, u.shared_blocks, u.requests, u.own_blocks,
                     u.unshared_blocks);
    h += fmt::format("  bytes      {}\n  unshared   {}\n  saved      {}\n", bytes_all_units(u.total_bytes),
                     bytes_all_units(u.unshared_bytes), bytes_all_units(u.saved_bytes));
}

void run(const KvMemOptions& o, CLI::App& sub) {
    if (o.list_models) {
        Report r;
        Table t{{"model", "source"}, {}, {false, false}};
        r.json["models"] = nlohmann::json::array();
        for (const auto& m : shipped_models()) {
            t.rows.push_back({m.name, m.source});
            r.json["models"].push_back({{"name", m.name}, {"source", m.source}});
        }
        r.human = "Shipped model configs (examples/models/, use with --model NAME):\n" + render_table(t);
        r.explain = r.human;
        emit(r, o.out);
        return;
    }
    Geometry g = build_geometry(o, sub);
    const std::vector<Requests> reqs = parse_lengths(o, sub);
    const std::uint64_t n_requests = request_count(reqs);
    const bool same = std::all_of(reqs.begin(), reqs.end(), [&](const Requests& q) { return q.seq_len == reqs.front().seq_len; });
    const bool budget_mode = !o.budget.empty();
    if (reqs.empty() && !budget_mode) throw InputError("--seq-len is required (tokens cached per request, e.g. 8192 or 8Ki)");
    const KvSpec& spec = g.spec;
    const bool uniform = spec.uniform();
    bool has_window = false;
    for (const auto& l : spec.layers) has_window = has_window || l.window;

    Report r;
    auto& j = r.json;
    std::string& h = r.human;
    std::string& x = r.explain;
    const std::uint64_t L = spec.layers.size();
    const std::uint64_t s_token = bytes_per_token(spec);

    // ---- model ----
    j["model"] = {{"source", g.source}, {"layers", L}, {"dtype", g.dtype_name}, {"uniform", uniform}};
    if (uniform) {
        const auto& l0 = spec.layers.front();
        j["model"]["kv_heads"] = l0.h_kv;
        j["model"]["head_dim"] = l0.d_k;
        j["model"]["bits_per_element"] = l0.bits_k;
        h += fmt::format("model       L={} layers, H_kv={} K/V heads, d={}, {} (b = {} B)   [{}]\n", L, l0.h_kv, l0.d_k,
                         g.dtype_name, b_text(l0.bits_k), g.source);
    } else {
        h += fmt::format("model       L={} layers, {}   [{}]\n", L, g.dtype_name, g.source);
        for (const auto& line : layer_summary(spec)) h += "  " + line + "\n";
        j["model"]["layer_runs"] = nlohmann::json::array();
        for (const auto& [range, l] : layer_runs(spec)) {
            auto lj = layer_json(l);
            lj["layers"] = range;
            j["model"]["layer_runs"].push_back(lj);
        }
    }
    if (g.q_heads) j["model"]["q_heads"] = *g.q_heads;
    if (g.config && !g.config->window_rule.empty()) {
        j["model"]["window_rule"] = g.config->window_rule;
        h += fmt::format("  sliding window: {} (a sliding layer keeps the last W positions, the newest included)\n",
                         g.config->window_rule);
    }
    if (g.config && !g.config->defaults_applied.empty()) {
        j["model"]["defaults_applied"] = g.config->defaults_applied;
        h += fmt::format("  keys the config leaves out: {}\n", fmt::join(g.config->defaults_applied, "; "));
    }

    // ---- per token ----
    std::vector<std::uint64_t> per_layer_token;
    for (const auto& l : spec.layers) per_layer_token.push_back(layer_bytes_per_token(l));
    j["bytes_per_token_per_layer"] = per_layer_token;
    if (!has_window) j["bytes_per_token"] = s_token;
    if (uniform) {
        const auto& l0 = spec.layers.front();
        h += fmt::format("per token   s_token = 2·L·H_kv·d·b = {}   (per layer {})\n", bytes_all_units(s_token),
                         bytes_all_units(per_layer_token.front()));
        x += "Bytes per token (K and V, every layer):\n";
        // A sub-byte product (1-bit elements, odd int4 widths) is stored in whole bytes: say so.
        u128 token_bits = 0;
        for (const auto& l : spec.layers) token_bits += layer_token_bits(l);
        const std::string rounded =
            token_bits % 8 ? fmt::format("{} B, rounded up to whole bytes: ", exact_ratio(to_u64(token_bits, "KV bits per token"), 8))
                           : "";
        x += fmt::format("  s_token = 2·L·H_kv·d·b = 2 × {} × {} × {} × {} = {}{}\n", L, l0.h_kv, l0.d_k, b_text(l0.bits_k),
                         rounded, bytes_all_units(s_token));
    } else {
        h += fmt::format("per token   s_token = Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l) = {}{}\n", bytes_all_units(s_token),
                         has_window ? " (before windows cap sliding layers)" : "");
        x += "Bytes per token, layer by layer (second document's general form):\n";
        x += "  s_token = Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l)\n";
        for (const auto& [range, l] : layer_runs(spec))
            x += fmt::format("  layers {}: {} × ({} × {} + {} × {}) = {} B per layer\n", range, l.h_kv, l.d_k,
                             b_text(l.bits_k), l.d_v, b_text(l.bits_v), layer_bytes_per_token(l));
        x += fmt::format("  s_token = {}\n", bytes_all_units(s_token));
    }

    // ---- totals ----
    if (!reqs.empty()) {
        KvBreakdown kv = kv_bytes(spec, reqs);
        j["seq_lens"] = kv.seq_lens;
        j["request_counts"] = kv.counts;
        j["per_request_bytes"] = kv.per_request_bytes;
        j["per_layer_bytes"] = kv.per_layer_bytes;
        j["total_bytes"] = kv.total_bytes;
        j["total_gib"] = static_cast<double>(kv.total_bytes) / 1073741824.0;
        j["total_gb"] = static_cast<double>(kv.total_bytes) / 1e9;
        if (same)
            h += fmt::format("requests    {} × S={}\n", group_thousands(n_requests),
                             count_noun(reqs.front().seq_len, "token"));
        else
            h += fmt::format("requests    {} of different lengths (summed exactly; an average is not a peak)\n",
                             n_requests);
        if (!same || n_requests > 1) {
            // Different lengths come from a list, one request per entry.
            std::size_t shown = std::min<std::size_t>(reqs.size(), 12);
            for (std::size_t i = 0; i < shown && !same; ++i)
                h += fmt::format("  request {}: S={} → {}\n", i, group_thousands(reqs[i].seq_len), bytes_all_units(kv.per_request_bytes[i]));
            if (!same && shown < reqs.size()) h += fmt::format("  ... {} more\n", reqs.size() - shown);
            if (same) h += fmt::format("per request {}\n", bytes_all_units(kv.per_request_bytes.front()));
        }
        h += fmt::format("total       M_KV = {}\n", bytes_all_units(kv.total_bytes));
        if (g.config && g.config->mla) {
            KvBreakdown full = kv_bytes(KvSpec{spec.decompressed, {}}, reqs);
            j["mla"] = {{"latent_bytes_per_token_per_layer", per_layer_token.front()},
                        {"decompressed_total_bytes", full.total_bytes},
                        {"decompressed_bytes_per_token", bytes_per_token(KvSpec{spec.decompressed, {}})}};
            h += fmt::format("MLA         latent cache {} per token per layer (kv_lora_rank {} + qk_rope_head_dim {});\n"
                             "            decompressed per-head K/V would be {} ({}× the latent)\n",
                             bytes_all_units(per_layer_token.front()), g.config->kv_lora_rank,
                             g.config->qk_rope_head_dim, bytes_all_units(full.total_bytes),
                             format_real(static_cast<double>(full.total_bytes) / static_cast<double>(kv.total_bytes), 4));
        }
        x += "\nKV bytes of the requests:\n";
        if (uniform && same) {
            const auto& l0 = spec.layers.front();
            std::uint64_t check = kv_bytes_uniform(L, n_requests, reqs.front().seq_len, l0.h_kv, l0.d_k, l0.bits_k);
            if (check != kv.total_bytes) throw std::logic_error("uniform formula disagrees with the layer sum");
            x += "  M_KV = 2·L·B·S·H_kv·d·b\n";
            x += fmt::format("       = 2 × {} × {} × {} × {} × {} × {}\n", L, n_requests, reqs.front().seq_len, l0.h_kv, l0.d_k,
                             b_text(l0.bits_k));
            // Sub-byte elements: the product is a fraction of a byte per request; say it is rounded up.
            const u128 bits = static_cast<u128>(2) * L * n_requests * reqs.front().seq_len * l0.h_kv * l0.d_k * l0.bits_k;
            const bool fractional = bits % 8 != 0 && bits <= UINT64_MAX;
            x += fmt::format("       = {}{}\n",
                             fractional ? fmt::format("{} B, rounded up to whole bytes: ", exact_ratio(static_cast<std::uint64_t>(bits), 8))
                                        : "",
                             bytes_all_units(kv.total_bytes));
        } else if (!has_window) {
            std::string sum;
            std::uint64_t total_tokens = 0;
            for (std::size_t i = 0; i < reqs.size(); ++i) {
                const auto& [len, count] = reqs[i];
                if (i < 8) sum += (i ? " + " : "") + (count == 1 ? std::to_string(len) : fmt::format("{} × {}", count, len));
                total_tokens = checked_add(total_tokens, checked_mul(len, count, "tokens cached"), "tokens cached");
            }
            if (reqs.size() > 8) sum += fmt::format(" + … ({} requests)", n_requests);
            x += "  M_KV = s_token × Σ_i S_i   (each request summed at its own length)\n";
            x += fmt::format("       = {} × ({}) = {} × {}\n", s_token, sum, s_token, total_tokens);
            x += fmt::format("       = {}\n", bytes_all_units(kv.total_bytes));
        } else {
            x += "  M_KV = Σ_i Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l)·min(S_i, W_l)\n";
            for (std::size_t i = 0; i < reqs.size() && i < 8; ++i)
                x += reqs[i].count == 1
                         ? fmt::format("  request {} (S={}): {}\n", i, reqs[i].seq_len, bytes_all_units(kv.per_request_bytes[i]))
                         : fmt::format("  {} requests (S={}): {} each\n", reqs[i].count, reqs[i].seq_len,
                                       bytes_all_units(kv.per_request_bytes[i]));
            x += fmt::format("       = {}\n", bytes_all_units(kv.total_bytes));
        }
        x += "  (1 KiB = 1024 B, 1 GiB = 2^30 B; 1 GB = 10^9 B)\n";

        // ---- MHA / GQA / MQA ----
        if (uniform && g.q_heads) {
            const auto& l0 = spec.layers.front();
            auto rows = compare_head_sharing(L, *g.q_heads, l0.h_kv, l0.d_k, l0.bits_k, reqs);
            Table t{{"structure", "query heads", "KV heads", "KV vs MHA", "K/V proj width", "KV bytes"}, {}, {}};
            j["head_sharing"] = nlohmann::json::array();
            for (const auto& row : rows) {
                std::string ratio = row.ratio_num == row.ratio_den ? "1" : fmt::format("{}/{}", row.ratio_num, row.ratio_den);
                t.rows.push_back({row.name, std::to_string(*g.q_heads), std::to_string(row.kv_heads), ratio,
                                  std::to_string(row.kv_proj_width), bytes_all_units(row.total_bytes)});
                j["head_sharing"].push_back({{"structure", row.name}, {"q_heads", *g.q_heads}, {"kv_heads", row.kv_heads},
                                             {"ratio_to_mha", ratio}, {"kv_proj_width", row.kv_proj_width},
                                             {"total_bytes", row.total_bytes}});
            }
            h += fmt::format("\nHead sharing (same L, d, b; Q projection width H_q·d = {}{}):\n",
                             *g.q_heads * l0.d_k, g.hidden ? fmt::format(", hidden size {}", *g.hidden) : "");
            h += render_table(t);
            x += fmt::format("\nHead sharing: KV bytes scale with H_kv/H_q; K and V projections are H_kv·d wide each "
                             "({} × {} = {}), Q is H_q·d ({} × {} = {}).\n",
                             l0.h_kv, l0.d_k, l0.h_kv * l0.d_k, *g.q_heads, l0.d_k, *g.q_heads * l0.d_k);
        }

        // ---- paged ----
        if (!o.block_size.empty()) paged_section(spec, reqs, parse_positive_int("--block-size", o.block_size), r);

        // ---- shared prefix ----
        if (!o.shared_prefix.empty()) print_shared_prefix(o, spec, reqs, j, h);

        // ---- tensor parallel ----
        if (!o.tp.empty()) {
            std::uint64_t n = parse_positive_int("--tp", o.tp);
            TpShare t = kv_tensor_parallel(spec, reqs, n);
            j["tensor_parallel"] = {{"devices", n},           {"heads_per_device", t.heads_per_device},
                                    {"replication", t.replication}, {"replicated", t.replicated},
                                    {"latent_replicated", t.latent_replicated},
                                    {"per_device_bytes", t.per_device_bytes}, {"all_devices_bytes", t.all_devices_bytes}};
            h += fmt::format("\nTensor parallel over {}: each holds {}\n", count_noun(n, "device"), bytes_all_units(t.per_device_bytes));
            if (t.latent_replicated)
                h += "  the MLA latent is shared by all heads, so every device holds all of it: no saving from --tp\n";
            else if (t.replicated)
                h += fmt::format("  {} devices > H_kv: each K/V head is replicated on {} devices, so the per-device figure "
                                 "stops shrinking at 1 head ({} devices hold {} in all)\n",
                                 n, t.replication, n, bytes_all_units(t.all_devices_bytes));
            else
                h += fmt::format("  {} per device per layer (H_kv / {})\n", count_noun(t.heads_per_device, "K/V head"), n);
            x += fmt::format("\nPer device with {}-way tensor parallelism: H_kv per device = {}, so {} per device.\n", n,
                             t.heads_per_device, bytes_all_units(t.per_device_bytes));
        }
    }

    if (budget_mode) budget_section(o, g, reqs, r);
    if (x.empty()) x = h;
    emit(r, o.out);
}

}  // namespace

void setup_kv_mem(CLI::App& app) {
    auto opt = std::make_shared<KvMemOptions>();
    CLI::App* sub = app.add_subcommand("kv-mem", "KV-cache bytes of a model: per token, per request, per layer, in total");
    sub->add_option("--layers", opt->layers, "L, number of layers");
    sub->add_option("--kv-heads", opt->kv_heads, "H_kv, K/V heads per layer");
    sub->add_option("--head-dim", opt->head_dim, "d, width of one head");
    sub->add_option("--hidden-size", opt->hidden_size, "hidden size; with --q-heads gives d = hidden / H_q");
    sub->add_option("--q-heads", opt->q_heads, "H_q, query heads: adds the MHA/GQA/MQA comparison");
    sub->add_option("--seq-len", opt->seq_len, "S, tokens per request; a list (8192,4096,300) for requests of different lengths; 8Ki = 8192, 8k = 8000 (8K rejected)");
    sub->add_option("--batch", opt->batch, "B, requests of the same length (default 1)");
    sub->add_option("--dtype", opt->dtype, "KV precision: fp32, fp16, bf16, fp8, int8, int4");
    sub->add_option("--bytes-per-elem", opt->bytes_per_elem, "b, bytes per element instead of --dtype (0.5 for 4 bits)");
    sub->add_option("--layer-spec", opt->layer_spec, "JSON file of per-layer h_kv, d_k, d_v, b_k, b_v (optional window, repeat)");
    sub->add_option("--config", opt->config, "a Hugging Face config.json");
    sub->add_option("--model", opt->model, "a shipped config (see --list-models)");
    sub->add_flag("--list-models", opt->list_models, "list the shipped model configs");
    sub->add_option("--block-size", opt->block_size, "tokens per block: paged allocation, waste");
    sub->add_option("--shared-prefix", opt->shared_prefix, "P: every request shares its first P prompt tokens (paged, with --block-size)");
    sub->add_option("--tp", opt->tp, "devices the K/V heads are split across (tensor parallelism)");
    sub->add_option("--budget", opt->budget, "memory per device (80GiB, 141GB): what fits after the weights (with --tp: W/N and 1/N of the heads per device)");
    sub->add_option("--weights-bytes", opt->weights_bytes, "weight bytes for --budget (14GB)");
    sub->add_option("--weight-dtype", opt->weight_dtype, "weight precision for --budget with a model (default: its torch_dtype)");
    add_output_flags(*sub, opt->out);
    sub->footer(examples_footer(
        {"inferlab kv-mem --layers 32 --kv-heads 8 --head-dim 128 --seq-len 8192 --dtype bf16",
         "    → s_token = 131,072 B = 128 KiB; M_KV = 1,073,741,824 B = 1 GiB = 1.073741824 GB",
         "inferlab kv-mem --layers 40 --kv-heads 8 --head-dim 128 --dtype bf16 --seq-len 8192,8192,4096",
         "inferlab kv-mem --layers 32 --kv-heads 8 --q-heads 32 --hidden-size 4096 --seq-len 8Ki --dtype bf16",
         "inferlab kv-mem --model llama-3-8b --seq-len 8192 --batch 8 --block-size 16 --tp 4",
         "inferlab kv-mem --model llama-3-8b --budget 80GiB --seq-len 8192 --block-size 16"},
        "Sizes: B, kB/MB/GB/TB (10^3k) or KiB/MiB/GiB/TiB (2^10k); bare G is rejected as ambiguous.\n"
        "Token counts: 8192, 8Ki (= 8192) or 8k (= 8000); uppercase 8K is rejected as ambiguous.\n"
        "Lists: commas separate requests (8192,4096); a list that reads as one number with thousands\n"
        "groups (8,192 or 1,000,000) is rejected: write 8192, or put a space after each comma (8, 192).\n"
        "Rules for real configs (each stated in the output):\n"
        "  sliding windows without layer_types: gemma2 alternates (even layers slide), gemma3 and cohere2 make\n"
        "  every n-th layer global (sliding_window_pattern, default 6 and 4), mistral/mixtral/phi3 slide every\n"
        "  layer, qwen2/qwen3 slide from max_window_layers on only with use_sliding_window; any other model_type\n"
        "  with a window is refused (add layer_types). No tie_word_embeddings: the model type's Hugging Face\n"
        "  default (Gemma, Gemma-2/3, Cohere-2, GPT-2 tied; Llama, Mistral, Qwen, Phi-3, DeepSeek untied).\n"
        "  No torch_dtype: give --dtype (and --weight-dtype for --budget); nothing is assumed.\n"
        "JSON keys: total_bytes, bytes_per_token (no sliding layers), bytes_per_token_per_layer, per_request_bytes,\n"
        "per_layer_bytes, seq_lens, request_counts, model, head_sharing, paged, tensor_parallel, budget, mla."));
    sub->callback([opt, sub] { run(*opt, *sub); });
}

}  // namespace inferlab::app
