#pragma once
// KV-cache sizes: the one place the project computes them.
//
// Symbols as in the documents: L layers, B requests, S cached tokens, H_kv K/V heads per layer,
// d head width, b bytes per element (kept here in bits, so int4 is exact).
//   M_KV    = 2·L·B·S·H_kv·d·b                      (uniform layers)
//   s_token = Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l)  (second document, general form)
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "inferlab/base/checked.hpp"

namespace inferlab {

// What error messages call the inputs: a command passes its own flag names; the library's
// neutral names by default (the library knows no command line).
struct KvWhere {
    std::string block_size = "block size";
    std::string prefix = "shared prefix";
    std::string seq_len = "sequence length";
    std::string devices = "devices";
    std::string q_heads = "query heads";
    std::string kv_heads = "K/V heads";
    std::string budget = "budget";
};

// One attention layer's cache geometry.
struct KvLayer {
    std::uint64_t h_kv = 0;         // K/V heads stored (MLA: 1 latent "head")
    std::uint64_t d_k = 0;          // width of one K head (MLA: kv_lora_rank + qk_rope_head_dim)
    std::uint64_t d_v = 0;          // width of one V head (MLA: 0, the latent serves both)
    std::uint32_t bits_k = 0;       // bits per K element
    std::uint32_t bits_v = 0;       // bits per V element
    std::uint64_t window = 0;       // 0: full attention; W: keeps at most the last W positions
    bool latent = false;            // MLA latent: one shared vector per token, not split by heads
    bool operator==(const KvLayer&) const = default;
};

struct KvSpec {
    std::vector<KvLayer> layers;            // one per layer, in order
    std::vector<KvLayer> decompressed;      // MLA only: the per-head K/V the latent stands for
    bool uniform() const;                   // every layer equal, full attention, K and V alike
};

// L identical layers of H_kv heads of width d at `bits` per element (K and V alike).
KvSpec uniform_kv(std::uint64_t layers, std::uint64_t h_kv, std::uint64_t d, std::uint32_t bits);

// Bits one token occupies in one layer: H_kv·(d_k·b_k + d_v·b_v).
u128 layer_token_bits(const KvLayer& layer);

// Positions a layer holds after `seq_len` tokens: S, or min(S, W) for a sliding layer.
std::uint64_t positions_cached(const KvLayer& layer, std::uint64_t seq_len);

// The shares of one request's K/V bytes that are K and V (each layer's h·d_k·b_k and h·d_v·b_v
// bits times its cached positions), for a figure that draws them as two bands; `latent` when a
// layer holds an MLA latent (its bits counted as K: one vector serves both).
struct KvShares {
    double k = 0, v = 0;  // fractions of the request's K/V bits, k + v = 1 (both 0 for no bits)
    bool latent = false;
};
KvShares kv_shares(const KvSpec& spec, std::uint64_t seq_len);

// The blocks of `block_size` tokens that a layer's cached positions occupy after `seq_len` tokens:
// ceil(S / block) with full attention; with a window W < S the positions S − W .. S − 1, which
// start inside a block unless S − W is a multiple of the block, so the blocks from
// floor((S − W) / block) to floor((S − 1) / block): one more than ceil(W / block) when the window
// straddles a boundary it does not fill (vLLM frees only the blocks the window has left entirely).
// `block_size` > 0 (kv_paged refuses 0 with the caller's flag).
std::uint64_t window_blocks(const KvLayer& layer, std::uint64_t seq_len, std::uint64_t block_size);
// The first and last of those blocks, by index from the sequence's start (floor((S − min(S, W)) /
// block) and floor((S − 1) / block)); {0, 0} with nothing cached. window_blocks = last − first + 1.
struct BlockSpan {
    std::uint64_t first = 0, last = 0;
};
BlockSpan window_block_span(const KvLayer& layer, std::uint64_t seq_len, std::uint64_t block_size);

// s_token in bytes over all layers as if every layer cached every position. Exact; a
// fractional total (int4 with odd widths) is rounded up to the next byte.
std::uint64_t bytes_per_token(const KvSpec& spec);
// Bytes of one token in layer l (rounded up likewise).
std::uint64_t layer_bytes_per_token(const KvLayer& layer);

// `count` requests of `seq_len` tokens each: a batch of B equal requests is one entry, so its
// size costs nothing to hold (--batch 1e9 once allocated a vector of 10^9 lengths).
struct Requests {
    std::uint64_t seq_len = 0;
    std::uint64_t count = 1;
};
// One entry of count 1 per length, in order.
std::vector<Requests> one_each(const std::vector<std::uint64_t>& seq_lens);
// Σ count: the number of requests.
std::uint64_t request_count(std::span<const Requests> requests);

struct KvBreakdown {
    std::vector<std::uint64_t> seq_lens;           // one per entry of the requests
    std::vector<std::uint64_t> counts;             // requests of that entry
    std::vector<std::uint64_t> per_request_bytes;  // one per entry: one request's bytes, all layers
    std::vector<std::uint64_t> per_layer_bytes;    // one per layer, all requests
    std::uint64_t total_bytes = 0;                 // Σ count × per_request_bytes
};

// Bytes of every request's cache, exactly (rounded up to whole bytes per request and layer).
KvBreakdown kv_bytes(const KvSpec& spec, std::span<const Requests> requests);
KvBreakdown kv_bytes(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens);
// The uniform formula 2·L·B·S·H_kv·d·b for B requests of S tokens; with sub-byte elements each
// layer of each request is rounded up to whole bytes first, as kv_bytes does.
std::uint64_t kv_bytes_uniform(std::uint64_t layers, std::uint64_t batch, std::uint64_t seq_len,
                               std::uint64_t h_kv, std::uint64_t d, std::uint32_t bits);

// Paged allocation (PagedAttention). Layers that keep the same positions share a block table:
// one group for full attention, one per sliding window W (a request there holds the blocks its
// last min(S, W) positions touch: window_blocks). Allocated bytes are exactly Σ_groups blocks × block bytes.
struct PagedGroup {
    std::uint64_t window = 0;                        // 0: full attention
    std::uint64_t layers = 0;                        // layers in the group
    std::uint64_t block_bytes = 0;                   // block_size tokens of every layer in the group
    std::vector<std::uint64_t> blocks_per_request;   // window_blocks(S_i): ceil(S_i / block) without a window
    std::vector<BlockSpan> spans_per_request;        // window_block_span(S_i): the blocks' first and last index
    std::uint64_t total_blocks = 0;
    std::uint64_t allocated_bytes = 0;               // total_blocks × block_bytes
};
struct PagedUsage {
    std::uint64_t block_size = 0;                    // tokens per block
    std::vector<PagedGroup> groups;                  // full attention first, then windows ascending
    // With one group (no sliding layers) these are that group's; with several they are empty/0,
    // since no single block size describes the cache.
    std::vector<std::uint64_t> blocks_per_request;   // one per entry of the requests
    std::uint64_t total_blocks = 0;
    std::uint64_t block_bytes = 0;
    std::uint64_t used_bytes = 0;                    // = kv_bytes(...).total_bytes
    std::uint64_t allocated_bytes = 0;               // Σ_groups total_blocks × block_bytes
    std::uint64_t waste_bytes = 0;                   // allocated − used
};
PagedUsage kv_paged(const KvSpec& spec, std::span<const Requests> requests, std::uint64_t block_size,
                    const KvWhere& where = {});
PagedUsage kv_paged(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, std::uint64_t block_size);

// Prefix sharing in a paged cache (vLLM's copy-on-write): B requests of S cached tokens whose
// first P tokens are one shared prompt. The floor(P/b) full prefix blocks are held once; the
// partly filled last prefix block (P mod b tokens) is copied by each request on its first write
// into it, so each request holds ceil(S/b) − floor(P/b) blocks of its own. Needs P < S.
//   blocks = floor(P/b) + B·(ceil(S/b) − floor(P/b)),  unshared: B·ceil(S/b)
struct SharedPrefixUsage {
    std::uint64_t requests = 0, seq_len = 0, prefix = 0, block_size = 0;
    std::uint64_t shared_blocks = 0;        // floor(P/b), held once
    std::uint64_t partial_tokens = 0;       // P mod b: the last prefix block's fill (0: none partly filled)
    std::uint64_t own_blocks = 0;           // per request
    std::uint64_t total_blocks = 0, unshared_blocks = 0;
    std::uint64_t block_bytes = 0;          // one block, every layer
    std::uint64_t total_bytes = 0, unshared_bytes = 0, saved_bytes = 0;
};
SharedPrefixUsage kv_shared_prefix(const KvSpec& spec, std::uint64_t requests, std::uint64_t seq_len, std::uint64_t prefix,
                                   std::uint64_t block_size, const KvWhere& where = {});

// Tensor parallelism over N devices: K/V heads split N ways. When N > H_kv a head cannot be
// split: it is replicated on N/H_kv devices and the per-device figure stops shrinking.
struct TpShare {
    std::uint64_t devices = 1;
    std::uint64_t heads_per_device = 0;   // of a full-attention layer (first layer)
    std::uint64_t replication = 1;        // copies of each head across devices
    bool replicated = false;
    bool latent_replicated = false;       // MLA latent cannot be split by heads
    std::uint64_t per_device_bytes = 0;
    std::uint64_t all_devices_bytes = 0;  // per_device × N (includes replicas)
};
TpShare kv_tensor_parallel(const KvSpec& spec, std::span<const Requests> requests, std::uint64_t devices,
                           const KvWhere& where = {});
TpShare kv_tensor_parallel(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, std::uint64_t devices);
// The part of the cache one of N devices holds: every layer's H_kv split N ways (at least one
// head, replicated when N > H_kv); an MLA latent stays whole. `info` (optional) gets the split.
KvSpec kv_spec_per_device(const KvSpec& spec, std::uint64_t devices, TpShare* info = nullptr, const KvWhere& where = {});

// MHA / GQA / MQA for the same query heads (second document's table).
struct HeadSharing {
    std::string name;             // "MHA", "GQA", "MQA"
    std::uint64_t kv_heads = 0;
    std::uint64_t ratio_num = 0;  // KV bytes relative to MHA, as a reduced fraction
    std::uint64_t ratio_den = 1;
    double ratio = 1;             // ratio_num / ratio_den
    std::uint64_t kv_proj_width = 0;  // width of the K (and of the V) projection output: H_kv·d
    std::uint64_t total_bytes = 0;
};
std::vector<HeadSharing> compare_head_sharing(std::uint64_t layers, std::uint64_t q_heads, std::uint64_t kv_heads,
                                              std::uint64_t d, std::uint32_t bits, std::span<const Requests> requests,
                                              const KvWhere& where = {});
std::vector<HeadSharing> compare_head_sharing(std::uint64_t layers, std::uint64_t q_heads, std::uint64_t kv_heads,
                                              std::uint64_t d, std::uint32_t bits,
                                              const std::vector<std::uint64_t>& seq_lens);

// The inverse question: what fits in a memory budget after the weights?
struct KvBudget {
    std::uint64_t budget_bytes = 0;
    std::uint64_t weights_bytes = 0;
    std::uint64_t available_bytes = 0;
    std::optional<std::uint64_t> max_tokens;       // floor(available / s_token), uniform specs
    std::optional<std::uint64_t> seq_len;          // when asked for a batch at one length
    std::optional<std::uint64_t> request_bytes;    // bytes of one request at seq_len
    std::optional<std::uint64_t> max_batch;        // floor(available / request_bytes)
    std::optional<std::uint64_t> block_size;
    std::optional<std::uint64_t> block_bytes;      // one group only (no sliding layers)
    std::optional<std::uint64_t> max_blocks;       // whole blocks that fit (one group only)
    std::optional<std::uint64_t> blocks_per_request;  // one group only
    std::optional<PagedUsage> request_paged;       // one request of seq_len, paged: its groups and allocation
    std::optional<std::uint64_t> max_concurrency;  // floor(available / allocated bytes of one request)
};
KvBudget kv_budget(const KvSpec& spec, std::uint64_t budget_bytes, std::uint64_t weights_bytes,
                   std::optional<std::uint64_t> seq_len, std::optional<std::uint64_t> block_size,
                   const KvWhere& where = {});

}  // namespace inferlab
