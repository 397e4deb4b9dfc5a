#include "inferlab/answer/kv_mem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/calc/roofline.hpp"

namespace inferlab {
namespace {

constexpr double kBytesPerGiB = 1073741824.0;  // 2^30
constexpr double kBytesPerGB = 1e9;            // 10^9

// The bytes of the requests, and the facts the explanation states about them.
void totals(const KvMemInputs& in, KvMemResult& r) {
    const KvSpec& spec = in.model.spec;
    r.kv = kv_bytes(spec, in.requests);
    r.total_gib = static_cast<double>(r.kv->total_bytes) / kBytesPerGiB;
    r.total_gb = static_cast<double>(r.kv->total_bytes) / kBytesPerGB;
    for (const auto& [len, count] : in.requests)
        r.total_tokens = checked_add(r.total_tokens, checked_mul(len, count, N_("tokens cached")), N_("tokens cached"));
    if (r.uniform && r.same_length) {
        const KvLayer& l0 = spec.layers.front();
        // The documents' formula, kept as a check on the layer-by-layer sum.
        const std::uint64_t check =
            kv_bytes_uniform(r.layers, r.request_count, in.requests.front().seq_len, l0.h_kv, l0.d_k, l0.bits_k);
        if (check != r.kv->total_bytes) throw std::logic_error("uniform formula disagrees with the layer sum");
        const u128 bits = static_cast<u128>(2) * r.layers * r.request_count * in.requests.front().seq_len * l0.h_kv *
                          l0.d_k * l0.bits_k;
        if (bits <= UINT64_MAX) r.total_bits = static_cast<std::uint64_t>(bits);
    }
    if (in.model.config && in.model.config->mla) {
        const KvSpec full{spec.decompressed, {}};
        KvMla m;
        m.latent_bytes_per_token_per_layer = r.bytes_per_token_per_layer.front();
        m.decompressed_total_bytes = kv_bytes(full, in.requests).total_bytes;
        m.decompressed_bytes_per_token = bytes_per_token(full);
        m.decompressed_ratio = r.kv->total_bytes
                                   ? static_cast<double>(m.decompressed_total_bytes) / static_cast<double>(r.kv->total_bytes)
                                   : 0;
        r.mla = m;
    }
}

// Head sharing, paging, a shared prefix and tensor parallelism: each only when asked for.
void options(const KvMemInputs& in, KvMemResult& r) {
    const KvSpec& spec = in.model.spec;
    if (r.uniform && in.model.q_heads) {
        const KvLayer& l0 = spec.layers.front();
        r.head_sharing = compare_head_sharing(r.layers, *in.model.q_heads, l0.h_kv, l0.d_k, l0.bits_k, in.requests, in.where);
        r.q_proj_width = checked_mul(*in.model.q_heads, l0.d_k, N_("Q projection width"));
        r.kv_proj_width = checked_mul(l0.h_kv, l0.d_k, N_("K/V projection width"));
    }
    if (in.block_size) {
        r.paged = kv_paged(spec, in.requests, *in.block_size, in.where);
        r.paged_waste_percent = r.paged->allocated_bytes ? 100.0 * static_cast<double>(r.paged->waste_bytes) /
                                                                static_cast<double>(r.paged->allocated_bytes)
                                                          : 0.0;
    }
    if (in.shared_prefix) {
        if (!in.block_size)
            throw InputError(N_("{0} needs {1} (prefix sharing is by whole blocks)"), {in.where.prefix, in.where.block_size});
        if (!r.same_length)
            throw InputError(N_("{0} needs requests of one length (one {1}, repeated as a batch)"),
                             {in.where.prefix, in.where.seq_len});
        r.shared_prefix = kv_shared_prefix(spec, r.request_count, in.requests.front().seq_len, *in.shared_prefix,
                                           *in.block_size, in.where);
    }
    if (in.devices) r.tensor_parallel = kv_tensor_parallel(spec, in.requests, *in.devices, in.where);
}

// What fits in the budget on one device after its share of the weights.
KvMemBudget budget(const KvMemInputs& in, const KvMemResult& r) {
    KvMemBudget b;
    if (in.weights_bytes) {
        b.weights_bytes = *in.weights_bytes;
        b.weights_given = true;
    } else if (in.model.config) {
        const ModelConfig& c = *in.model.config;
        if (!in.weight_dtype && !c.dtype)
            throw InputError(N_("the config names no precision for the weights, and none was given"));
        b.weight_dtype = in.weight_dtype ? *in.weight_dtype : *c.dtype;
        b.params = count_params(c).total;
        // quantize's storage rule (int8/int4 with their fp16 group scales), as decode-roofline counts.
        const StorageCost sc = weight_storage(b.params, *b.weight_dtype);
        b.weights_bytes = sc.total_bytes;
        b.weights_from = weight_bytes_origin(b.params, *b.weight_dtype, sc, &c.tied_rule);
    } else {
        throw InputError(N_("{0} needs the weights: give their bytes, or a model config to count them"), {in.where.budget});
    }
    if (!r.same_length)
        throw InputError(in.where.budget, bytes_all_units(*in.budget_bytes),
                         N_("asks for the largest batch at one {0}; give a single length"), {in.where.seq_len});
    b.devices = in.devices.value_or(1);
    b.share.devices = b.devices;
    const KvSpec spec = b.devices > 1 ? kv_spec_per_device(in.model.spec, b.devices, &b.share, in.where) : in.model.spec;
    // Each device holds its share of the weights, rounded up to a whole byte.
    const std::uint64_t weights_dev = b.weights_bytes / b.devices + (b.weights_bytes % b.devices != 0);
    b.bytes_per_token_per_device = bytes_per_token(spec);
    if (b.devices > 1 && weights_dev >= *in.budget_bytes)  // kv_budget would say "the weights": a device holds a share
        throw InputError(in.where.budget, bytes_all_units(*in.budget_bytes),
                         N_("leaves no room for the KV cache on a device: its share of the weights, ceil(W / {0}), alone "
                            "takes {1}"),
                         {std::to_string(b.devices), bytes_all_units(weights_dev)});
    const std::optional<std::uint64_t> seq =
        in.requests.empty() ? std::nullopt : std::optional<std::uint64_t>(in.requests.front().seq_len);
    b.fit = kv_budget(spec, *in.budget_bytes, weights_dev, seq, in.block_size, in.where);
    return b;
}

}  // namespace

KvModel kv_model_uniform(std::uint64_t layers, std::uint64_t h_kv, std::uint64_t d, std::uint32_t bits,
                         const std::string& dtype_name) {
    KvModel m;
    m.spec = uniform_kv(layers, h_kv, d, bits);
    m.source = N_("flags");  // a msgid: the text translates it, --json keeps it
    m.dtype_name = dtype_name;
    return m;
}

KvModel kv_model_from_config(const ModelConfig& c, std::uint32_t kv_bits, const std::string& dtype_name) {
    KvModel m;
    m.spec = kv_spec_from_config(c, kv_bits);
    m.source = c.source;
    m.dtype_name = dtype_name;
    if (!c.mla) m.q_heads = c.q_heads;
    m.hidden = c.hidden;
    m.config = c;
    return m;
}

KvMemResult kv_mem(const KvMemInputs& in) {
    const KvSpec& spec = in.model.spec;
    if (spec.layers.empty()) throw InputError(N_("the model has no layers"));
    if (in.requests.empty() && !in.budget_bytes)
        throw InputError(N_("{0} is required (tokens cached per request, e.g. 8192 or 8Ki)"), {in.where.seq_len});
    KvMemResult r;
    r.model = in.model;
    r.requests = in.requests;
    r.layers = spec.layers.size();
    r.request_count = request_count(in.requests);
    r.uniform = spec.uniform();
    r.has_window = std::any_of(spec.layers.begin(), spec.layers.end(), [](const KvLayer& l) { return l.window != 0; });
    r.same_length = std::all_of(in.requests.begin(), in.requests.end(),
                                [&](const Requests& q) { return q.seq_len == in.requests.front().seq_len; });
    r.bytes_per_token = bytes_per_token(spec);
    u128 bits = 0;
    for (const auto& l : spec.layers) {
        r.bytes_per_token_per_layer.push_back(layer_bytes_per_token(l));
        bits += layer_token_bits(l);
    }
    r.token_bits = to_u64(bits, N_("KV bits per token"));
    if (!in.requests.empty()) {
        totals(in, r);
        options(in, r);
    }
    if (in.budget_bytes) r.budget = budget(in, r);
    return r;
}

std::uint64_t longest_seq_len(const KvMemResult& r) {
    std::uint64_t longest = 0;
    for (const auto& q : r.requests) longest = std::max(longest, q.seq_len);
    return longest;
}

}  // namespace inferlab
