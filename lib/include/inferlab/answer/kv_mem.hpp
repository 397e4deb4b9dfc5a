#pragma once
// `inferlab kv-mem`'s whole answer as one value: every figure the command prints, and the facts
// about them (which rule applied, what is exact, what was rounded), computed by one call.
//
//   KvMemInputs in{.model = kv_model_uniform(32, 8, 128, 16, "bf16"), .requests = one_each({8192})};
//   KvMemResult r = kv_mem(in);   // r.kv->total_bytes == 1073741824 (first document, §2.1.1)
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/base/dtype.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab {

// The cache geometry and where it came from.
struct KvModel {
    KvSpec spec;
    std::string source;                   // "flags", a config's name, a layer-spec file
    std::string dtype_name;               // "bf16", "0.5 B per element", "per layer"
    std::optional<std::uint64_t> q_heads;  // H_q, when known (MLA: none; heads do not share K/V)
    std::optional<std::uint64_t> hidden;   // hidden size, when known
    std::optional<ModelConfig> config;     // when the geometry came from a config
};

// L identical layers from flags: H_kv heads of width d at `bits` per element.
KvModel kv_model_uniform(std::uint64_t layers, std::uint64_t h_kv, std::uint64_t d, std::uint32_t bits,
                         const std::string& dtype_name);
// A config's cache at `kv_bits` per element (the config's own precision unless overridden).
KvModel kv_model_from_config(const ModelConfig& c, std::uint32_t kv_bits, const std::string& dtype_name);

struct KvMemInputs {
    KvModel model;
    std::vector<Requests> requests;              // empty: the budget question only
    std::optional<std::uint64_t> block_size;     // paged allocation
    std::optional<std::uint64_t> shared_prefix;  // P shared prompt tokens (needs block_size)
    std::optional<std::uint64_t> devices;        // tensor parallelism
    std::optional<std::uint64_t> budget_bytes;   // what fits in this much per device
    std::optional<std::uint64_t> weights_bytes;  // W for the budget; else counted from the config
    std::optional<DType> weight_dtype;           // precision of counted weights (else the config's)
    KvWhere where;                               // names of the inputs in error messages
};

// The MLA latent against the per-head K/V it stands for.
struct KvMla {
    std::uint64_t latent_bytes_per_token_per_layer = 0;
    std::uint64_t decompressed_total_bytes = 0;
    std::uint64_t decompressed_bytes_per_token = 0;
    double decompressed_ratio = 0;  // decompressed / latent total
};

struct KvMemBudget {
    KvBudget fit;                            // per device: available, max tokens/batch/blocks/concurrency
    std::uint64_t weights_bytes = 0;         // W, all devices
    std::uint64_t devices = 1;               // each holds ceil(W / devices) and its share of the heads:
    TpShare share;                           // 1/devices of them, one replicated head, or a whole MLA latent
    std::uint64_t bytes_per_token_per_device = 0;
    Prose weights_from;                      // how W was counted (empty when weights_given)
    bool weights_given = false;
    std::uint64_t params = 0;                // counted parameters (weights_given: 0)
    std::optional<DType> weight_dtype;       // their precision (weights_given: none)
};

struct KvMemResult {
    KvModel model;
    std::vector<Requests> requests;
    std::uint64_t layers = 0;                 // L
    std::uint64_t request_count = 0;          // Σ counts
    bool uniform = false;                     // every layer alike, full attention: 2·L·H_kv·d·b holds
    bool has_window = false;                  // sliding layers: bytes per token depend on length
    bool same_length = true;                  // every request of one length
    std::uint64_t bytes_per_token = 0;        // s_token as if every layer cached every position
    std::vector<std::uint64_t> bytes_per_token_per_layer;
    std::uint64_t token_bits = 0;             // s_token in bits; not a multiple of 8: rounded up
    std::optional<KvBreakdown> kv;            // with requests
    std::optional<double> total_gib, total_gb;  // kv->total_bytes in 2^30 and 10^9 bytes
    std::uint64_t total_tokens = 0;           // Σ_i S_i over all requests
    std::optional<std::uint64_t> total_bits;  // uniform, one length: 2·L·B·S·H_kv·d·b in bits (when it fits)
    std::optional<KvMla> mla;
    std::vector<HeadSharing> head_sharing;    // uniform with H_q known, with requests
    std::optional<std::uint64_t> q_proj_width;   // H_q·d, with head_sharing
    std::optional<std::uint64_t> kv_proj_width;  // H_kv·d of this model, with head_sharing
    std::optional<PagedUsage> paged;
    std::optional<double> paged_waste_percent;
    std::optional<SharedPrefixUsage> shared_prefix;
    std::optional<TpShare> tensor_parallel;
    std::optional<KvMemBudget> budget;
};

// Everything kv-mem answers, exactly. Throws InputError (naming `in.where`'s inputs) when the
// question has no answer: no requests and no budget, a shared prefix without blocks, ...
KvMemResult kv_mem(const KvMemInputs& in);

// The longest sequence of the result's requests (what a config's max_position_embeddings is
// compared with).
std::uint64_t longest_seq_len(const KvMemResult& r);

}  // namespace inferlab
