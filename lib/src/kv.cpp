#include "inferlab/kv.hpp"

#include <numeric>

#include "inferlab/error.hpp"
#include "inferlab/units.hpp"

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
    const std::string what = "KV bits of one token in one layer";
    return mul128(l.h_kv, mul128(l.d_k, l.bits_k, what) + mul128(l.d_v, l.bits_v, what), what);
}

std::uint64_t positions_cached(const KvLayer& layer, std::uint64_t seq_len) {
    return layer.window != 0 && layer.window < seq_len ? layer.window : seq_len;
}

std::uint64_t layer_bytes_per_token(const KvLayer& layer) {
    return bits_to_bytes(layer_token_bits(layer), "KV bytes per token");
}

std::uint64_t bytes_per_token(const KvSpec& spec) {
    u128 bits = 0;
    for (const auto& l : spec.layers) bits += layer_token_bits(l);
    return bits_to_bytes(bits, "KV bytes per token");
}

std::vector<Requests> one_each(const std::vector<std::uint64_t>& seq_lens) {
    std::vector<Requests> out;
    for (std::uint64_t s : seq_lens) out.push_back({s, 1});
    return out;
}

std::uint64_t request_count(std::span<const Requests> requests) {
    std::uint64_t n = 0;
    for (const auto& r : requests) n = checked_add(n, r.count, "number of requests");
    return n;
}

KvBreakdown kv_bytes(const KvSpec& spec, std::span<const Requests> requests) {
    KvBreakdown out;
    out.per_layer_bytes.assign(spec.layers.size(), 0);
    const std::string what = "total KV bytes";
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
    const std::string what = "KV bytes 2·L·B·S·H_kv·d·b";
    u128 total_bits = mul128(mul128(mul128(mul128(mul128(2, layers, what), batch, what), seq_len, what), h_kv, what),
                             mul128(d, bits, what), what);
    return bits_to_bytes(total_bits, what);
}

PagedUsage kv_paged(const KvSpec& spec, std::span<const Requests> requests, std::uint64_t block_size) {
    if (block_size == 0) throw InputError("--block-size", "0", "must be a positive integer");
    PagedUsage out;
    out.block_size = block_size;
    const std::string what = "paged KV bytes";
    out.block_bytes = checked_mul(bytes_per_token(spec), block_size, what);
    out.used_bytes = kv_bytes(spec, requests).total_bytes;
    for (const auto& [s, count] : requests) {
        // (s − 1) / block + 1 is ceil(s / block) without the overflow of s + block − 1.
        std::uint64_t blocks = s == 0 ? 0 : (s - 1) / block_size + 1;
        out.blocks_per_request.push_back(blocks);
        out.total_blocks = checked_add(out.total_blocks, checked_mul(blocks, count, what), what);
        for (const auto& l : spec.layers) {
            std::uint64_t pos = positions_cached(l, s);
            std::uint64_t layer_blocks = pos == 0 ? 0 : (pos - 1) / block_size + 1;
            u128 bits = mul128(layer_token_bits(l), mul128(layer_blocks, block_size, what), what);
            // Whole bytes per request and layer, as kv_bytes rounds them, then the count.
            out.allocated_bytes =
                checked_add(out.allocated_bytes, checked_mul(bits_to_bytes(bits, what), count, what), what);
        }
    }
    out.waste_bytes = out.allocated_bytes - out.used_bytes;
    return out;
}

PagedUsage kv_paged(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, std::uint64_t block_size) {
    return kv_paged(spec, one_each(seq_lens), block_size);
}

TpShare kv_tensor_parallel(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, std::uint64_t devices) {
    return kv_tensor_parallel(spec, one_each(seq_lens), devices);
}

TpShare kv_tensor_parallel(const KvSpec& spec, std::span<const Requests> seq_lens, std::uint64_t devices) {
    if (devices == 0) throw InputError("--tp", "0", "must be a positive integer");
    TpShare out;
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
                throw InputError("--tp", std::to_string(devices),
                                 "must divide the K/V head count " + std::to_string(l.h_kv) +
                                     " (or be a multiple of it, replicating heads)");
            heads = l.h_kv / devices;
        } else {
            if (devices % l.h_kv != 0)
                throw InputError("--tp", std::to_string(devices),
                                 "exceeds the K/V head count " + std::to_string(l.h_kv) +
                                     " and is not a multiple of it, so heads cannot be replicated evenly");
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
    out.per_device_bytes = kv_bytes(share, seq_lens).total_bytes;
    out.all_devices_bytes = checked_mul(out.per_device_bytes, devices, "KV bytes over all devices");
    return out;
}

std::vector<HeadSharing> compare_head_sharing(std::uint64_t layers, std::uint64_t q_heads, std::uint64_t kv_heads,
                                              std::uint64_t d, std::uint32_t bits,
                                              const std::vector<std::uint64_t>& seq_lens) {
    return compare_head_sharing(layers, q_heads, kv_heads, d, bits, one_each(seq_lens));
}

std::vector<HeadSharing> compare_head_sharing(std::uint64_t layers, std::uint64_t q_heads, std::uint64_t kv_heads,
                                              std::uint64_t d, std::uint32_t bits, std::span<const Requests> seq_lens) {
    if (kv_heads == 0 || q_heads % kv_heads != 0)
        throw InputError("--q-heads", std::to_string(q_heads),
                         "must be divisible by --kv-heads " + std::to_string(kv_heads) +
                             " (each K/V head serves a whole group of query heads)");
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
        r.kv_proj_width = checked_mul(h, d, "K/V projection width");
        r.total_bytes = kv_bytes(uniform_kv(layers, h, d, bits), seq_lens).total_bytes;
        out.push_back(r);
    }
    return out;
}

KvBudget kv_budget(const KvSpec& spec, std::uint64_t budget_bytes, std::uint64_t weights_bytes,
                   std::optional<std::uint64_t> seq_len, std::optional<std::uint64_t> block_size) {
    KvBudget out;
    out.budget_bytes = budget_bytes;
    out.weights_bytes = weights_bytes;
    if (weights_bytes >= budget_bytes)
        throw InputError("--budget", bytes_all_units(budget_bytes),
                         "leaves no room for the KV cache: the weights alone take " + bytes_all_units(weights_bytes));
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
        out.block_bytes = checked_mul(per_token, *block_size, "bytes of one block");
        out.max_blocks = out.available_bytes / *out.block_bytes;
        if (seq_len) {
            PagedUsage one = kv_paged(spec, {*seq_len}, *block_size);
            out.blocks_per_request = one.blocks_per_request.front();
            // With sliding layers a request's allocation is smaller than blocks × block_bytes.
            out.max_concurrency = out.available_bytes / one.allocated_bytes;
        }
    }
    return out;
}

}  // namespace inferlab
