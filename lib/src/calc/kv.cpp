#include "inferlab/calc/kv.hpp"

#include <algorithm>
#include <numeric>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {
namespace {

std::uint64_t bits_to_bytes(u128 bits, const std::string& what) { return to_u64((bits + 7) / 8, what); }

u128 mul128(u128 a, u128 b, const std::string& what) {
    if (a != 0 && b > (~static_cast<u128>(0)) / a) throw OverflowError(what);
    return a * b;
}

}  // namespace

bool KvSpec::uniform() const {
    if (layers.empty()) return false;
    const KvLayer& first = layers.front();
    if (first.window != 0 || first.latent || first.d_k != first.d_v || first.bits_k != first.bits_v) return false;
    for (const auto& l : layers)
        if (!(l == first)) return false;
    return true;
}

KvSpec uniform_kv(std::uint64_t layers, std::uint64_t h_kv, std::uint64_t d, std::uint32_t bits) {
    KvSpec spec;
    spec.layers.assign(layers, KvLayer{h_kv, d, d, bits, bits, 0, false});
    return spec;
}

u128 layer_token_bits(const KvLayer& l) {
    const std::string what = N_("KV bits of one token in one layer");
    return mul128(l.h_kv, mul128(l.d_k, l.bits_k, what) + mul128(l.d_v, l.bits_v, what), what);
}

std::uint64_t positions_cached(const KvLayer& layer, std::uint64_t seq_len) {
    return layer.window != 0 && layer.window < seq_len ? layer.window : seq_len;
}

KvShares kv_shares(const KvSpec& spec, std::uint64_t seq_len) {
    long double k = 0, v = 0;
    KvShares out;
    for (const KvLayer& l : spec.layers) {
        const long double pos = static_cast<long double>(positions_cached(l, seq_len)), h = static_cast<long double>(l.h_kv);
        k += h * static_cast<long double>(l.d_k) * l.bits_k * pos;
        v += h * static_cast<long double>(l.d_v) * l.bits_v * pos;
        out.latent = out.latent || l.latent;
    }
    if (k + v > 0) {
        out.k = static_cast<double>(k / (k + v));
        out.v = static_cast<double>(v / (k + v));
    }
    return out;
}

BlockSpan window_block_span(const KvLayer& layer, std::uint64_t seq_len, std::uint64_t block_size) {
    if (seq_len == 0) return {};
    const std::uint64_t first = seq_len - positions_cached(layer, seq_len);  // the oldest position kept
    return {first / block_size, (seq_len - 1) / block_size};
}

std::uint64_t window_blocks(const KvLayer& layer, std::uint64_t seq_len, std::uint64_t block_size) {
    if (seq_len == 0) return 0;
    const BlockSpan span = window_block_span(layer, seq_len, block_size);
    return span.last - span.first + 1;
}

std::uint64_t layer_bytes_per_token(const KvLayer& layer) {
    return bits_to_bytes(layer_token_bits(layer), N_("KV bytes per token"));
}

std::uint64_t bytes_per_token(const KvSpec& spec) {
    u128 bits = 0;
    for (const auto& l : spec.layers) bits += layer_token_bits(l);
    return bits_to_bytes(bits, N_("KV bytes per token"));
}

std::vector<Requests> one_each(const std::vector<std::uint64_t>& seq_lens) {
    std::vector<Requests> out;
    for (std::uint64_t s : seq_lens) out.push_back({s, 1});
    return out;
}

std::uint64_t request_count(std::span<const Requests> requests) {
    std::uint64_t n = 0;
    for (const auto& r : requests) n = checked_add(n, r.count, N_("number of requests"));
    return n;
}

KvBreakdown kv_bytes(const KvSpec& spec, std::span<const Requests> requests) {
    KvBreakdown out;
    out.per_layer_bytes.assign(spec.layers.size(), 0);
    const std::string what = N_("total KV bytes");
    for (const auto& [s, count] : requests) {
        std::uint64_t request = 0;
        for (std::size_t li = 0; li < spec.layers.size(); ++li) {
            const KvLayer& l = spec.layers[li];
            std::uint64_t b = bits_to_bytes(mul128(layer_token_bits(l), positions_cached(l, s), what), what);
            request = checked_add(request, b, what);
            out.per_layer_bytes[li] = checked_add(out.per_layer_bytes[li], checked_mul(b, count, what), what);
        }
        out.seq_lens.push_back(s);
        out.counts.push_back(count);
        out.per_request_bytes.push_back(request);
        out.total_bytes = checked_add(out.total_bytes, checked_mul(request, count, what), what);
    }
    return out;
}

KvBreakdown kv_bytes(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens) {
    return kv_bytes(spec, one_each(seq_lens));
}

std::uint64_t kv_bytes_uniform(std::uint64_t layers, std::uint64_t batch, std::uint64_t seq_len, std::uint64_t h_kv,
                               std::uint64_t d, std::uint32_t bits) {
    const std::string what = N_("KV bytes 2·L·B·S·H_kv·d·b");
    // One layer of one request holds whole bytes (kv_bytes' rule): 2·S·H_kv·d·b bits rounded up,
    // then L·B of them. With whole-byte elements this is the documents' product exactly.
    const u128 layer_bits = mul128(mul128(mul128(2, seq_len, what), h_kv, what), mul128(d, bits, what), what);
    return checked_mul(checked_mul(bits_to_bytes(layer_bits, what), layers, what), batch, what);
}

PagedUsage kv_paged(const KvSpec& spec, std::span<const Requests> requests, std::uint64_t block_size,
                    const KvWhere& where) {
    if (block_size == 0) throw InputError(where.block_size, "0", N_("must be a positive integer"));
    PagedUsage out;
    out.block_size = block_size;
    const std::string what = N_("paged KV bytes");
    out.used_bytes = kv_bytes(spec, requests).total_bytes;
    // Group layers by window; a layer's block is rounded up to whole bytes on its own, so every
    // layer's allocation covers its exact bytes and waste is never negative.
    for (const auto& l : spec.layers) {
        auto it = std::find_if(out.groups.begin(), out.groups.end(), [&](const PagedGroup& g) { return g.window == l.window; });
        if (it == out.groups.end()) {
            out.groups.push_back(PagedGroup{l.window, 0, 0, {}, {}, 0});
            it = out.groups.end() - 1;
        }
        it->layers += 1;
        it->block_bytes = checked_add(it->block_bytes, bits_to_bytes(mul128(layer_token_bits(l), block_size, what), what), what);
    }
    std::sort(out.groups.begin(), out.groups.end(), [](const PagedGroup& a, const PagedGroup& b) {
        return (a.window == 0 ? 0 : 1) < (b.window == 0 ? 0 : 1) || (a.window != 0 && b.window != 0 && a.window < b.window);
    });
    for (auto& g : out.groups) {
        for (const auto& [s, count] : requests) {
            const std::uint64_t blocks = window_blocks(KvLayer{.window = g.window}, s, block_size);
            g.blocks_per_request.push_back(blocks);  // one per entry of the requests, each standing for `count`
            g.spans_per_request.push_back(window_block_span(KvLayer{.window = g.window}, s, block_size));
            g.total_blocks = checked_add(g.total_blocks, checked_mul(blocks, count, what), what);
        }
        g.allocated_bytes = checked_mul(g.total_blocks, g.block_bytes, what);
        out.allocated_bytes = checked_add(out.allocated_bytes, g.allocated_bytes, what);
    }
    if (out.groups.size() == 1) {
        out.blocks_per_request = out.groups.front().blocks_per_request;
        out.total_blocks = out.groups.front().total_blocks;
        out.block_bytes = out.groups.front().block_bytes;
    }
    out.waste_bytes = out.allocated_bytes - out.used_bytes;
    return out;
}

SharedPrefixUsage kv_shared_prefix(const KvSpec& spec, std::uint64_t requests, std::uint64_t seq_len, std::uint64_t prefix,
                                   std::uint64_t block_size, const KvWhere& where) {
    if (prefix >= seq_len)
        throw InputError(where.prefix, std::to_string(prefix),
                         N_("must be less than {0} {1} (each request writes tokens of its own)"),
                         {where.seq_len, std::to_string(seq_len)});
    if (!spec.uniform())
        throw InputError(N_("{0} needs layers that are all alike (full attention, K and V of one width)"), {where.prefix});
    if (requests == 0) throw InputError("requests", "0", N_("must be at least 1"));
    const std::string what = N_("shared-prefix KV bytes");
    const PagedUsage one = kv_paged(spec, one_each({seq_len}), block_size, where);  // blocks per request, block bytes
    SharedPrefixUsage u;
    u.requests = requests;
    u.seq_len = seq_len;
    u.prefix = prefix;
    u.block_size = block_size;
    u.shared_blocks = prefix / block_size;
    u.partial_tokens = prefix % block_size;
    u.own_blocks = one.total_blocks - u.shared_blocks;
    u.total_blocks = checked_add(u.shared_blocks, checked_mul(requests, u.own_blocks, what), what);
    u.unshared_blocks = checked_mul(requests, one.total_blocks, what);
    u.block_bytes = one.block_bytes;
    u.total_bytes = checked_mul(u.total_blocks, u.block_bytes, what);
    u.unshared_bytes = checked_mul(u.unshared_blocks, u.block_bytes, what);
    u.saved_bytes = u.unshared_bytes - u.total_bytes;
    return u;
}

PagedUsage kv_paged(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, std::uint64_t block_size) {
    return kv_paged(spec, one_each(seq_lens), block_size);
}

KvSpec kv_spec_per_device(const KvSpec& spec, std::uint64_t devices, TpShare* info, const KvWhere& where) {
    if (devices == 0) throw InputError(where.devices, "0", N_("must be a positive integer"));
    TpShare local;
    TpShare& out = info ? *info : local;
    out.devices = devices;
    KvSpec share = spec;
    bool first = true;
    for (auto& l : share.layers) {
        if (l.latent) {
            out.latent_replicated = devices > 1;
            continue;
        }
        std::uint64_t heads = 0, copies = 1;
        if (devices <= l.h_kv) {
            if (l.h_kv % devices != 0)
                throw InputError(where.devices, std::to_string(devices),
                                 N_("must divide the K/V head count {0} (or be a multiple of it, replicating heads)"),
                                 {std::to_string(l.h_kv)});
            heads = l.h_kv / devices;
        } else {
            if (devices % l.h_kv != 0)
                throw InputError(where.devices, std::to_string(devices),
                                 N_("exceeds the K/V head count {0} and is not a multiple of it, so heads cannot be "
                                    "replicated evenly"),
                                 {std::to_string(l.h_kv)});
            heads = 1;
            copies = devices / l.h_kv;
            out.replicated = true;
        }
        if (first) {
            out.heads_per_device = heads;
            out.replication = copies;
            first = false;
        }
        l.h_kv = heads;
    }
    return share;
}

TpShare kv_tensor_parallel(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, std::uint64_t devices) {
    return kv_tensor_parallel(spec, one_each(seq_lens), devices);
}

TpShare kv_tensor_parallel(const KvSpec& spec, std::span<const Requests> requests, std::uint64_t devices,
                           const KvWhere& where) {
    TpShare out;
    KvSpec share = kv_spec_per_device(spec, devices, &out, where);
    out.per_device_bytes = kv_bytes(share, requests).total_bytes;
    out.all_devices_bytes = checked_mul(out.per_device_bytes, devices, N_("KV bytes over all devices"));
    return out;
}

std::vector<HeadSharing> compare_head_sharing(std::uint64_t layers, std::uint64_t q_heads, std::uint64_t kv_heads,
                                              std::uint64_t d, std::uint32_t bits,
                                              const std::vector<std::uint64_t>& seq_lens) {
    return compare_head_sharing(layers, q_heads, kv_heads, d, bits, one_each(seq_lens));
}

std::vector<HeadSharing> compare_head_sharing(std::uint64_t layers, std::uint64_t q_heads, std::uint64_t kv_heads,
                                              std::uint64_t d, std::uint32_t bits, std::span<const Requests> seq_lens,
                                              const KvWhere& where) {
    if (kv_heads == 0 || q_heads % kv_heads != 0)
        throw InputError(where.q_heads, std::to_string(q_heads),
                         N_("must be divisible by {0} {1} (each K/V head serves a whole group of query heads)"),
                         {where.kv_heads, std::to_string(kv_heads)});
    std::vector<std::pair<std::string, std::uint64_t>> variants = {{"MHA", q_heads}};
    if (kv_heads != q_heads && kv_heads != 1) variants.push_back({"GQA", kv_heads});
    variants.push_back({"MQA", 1});
    std::vector<HeadSharing> out;
    for (auto& [name, h] : variants) {
        HeadSharing r;
        r.name = name;
        r.kv_heads = h;
        std::uint64_t g = std::gcd(h, q_heads);
        r.ratio_num = h / g;
        r.ratio_den = q_heads / g;
        r.ratio = static_cast<double>(r.ratio_num) / static_cast<double>(r.ratio_den);
        r.kv_proj_width = checked_mul(h, d, N_("K/V projection width"));
        r.total_bytes = kv_bytes(uniform_kv(layers, h, d, bits), seq_lens).total_bytes;
        out.push_back(r);
    }
    return out;
}

KvBudget kv_budget(const KvSpec& spec, std::uint64_t budget_bytes, std::uint64_t weights_bytes,
                   std::optional<std::uint64_t> seq_len, std::optional<std::uint64_t> block_size,
                   const KvWhere& where) {
    KvBudget out;
    out.budget_bytes = budget_bytes;
    out.weights_bytes = weights_bytes;
    if (weights_bytes >= budget_bytes)
        throw InputError(where.budget, bytes_all_units(budget_bytes),
                         N_("leaves no room for the KV cache: the weights alone take {0}"), {bytes_all_units(weights_bytes)});
    out.available_bytes = budget_bytes - weights_bytes;
    bool has_window = false;
    for (const auto& l : spec.layers) has_window = has_window || l.window != 0;
    std::uint64_t per_token = bytes_per_token(spec);
    if (!has_window && per_token > 0) out.max_tokens = out.available_bytes / per_token;
    if (seq_len) {
        out.seq_len = seq_len;
        out.request_bytes = kv_bytes(spec, {*seq_len}).total_bytes;
        out.max_batch = *out.request_bytes == 0 ? 0 : out.available_bytes / *out.request_bytes;
    }
    if (block_size) {
        out.block_size = block_size;
        // The layout of one request decides everything: with sliding layers there is no single
        // block pool, so only the per-request allocation (all groups) divides the budget.
        PagedUsage one = kv_paged(spec, one_each({seq_len ? *seq_len : *block_size}), *block_size, where);
        if (one.groups.size() == 1) {
            out.block_bytes = one.block_bytes;
            out.max_blocks = out.available_bytes / one.block_bytes;
        }
        if (seq_len) {
            if (one.groups.size() == 1) out.blocks_per_request = one.blocks_per_request.front();
            out.max_concurrency = out.available_bytes / one.allocated_bytes;
            out.request_paged = one;
        }
    }
    return out;
}

}  // namespace inferlab
