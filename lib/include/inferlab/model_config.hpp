#pragma once
// Reading a model's dimensions from a Hugging Face config.json (Llama/Mistral/Qwen2-style keys,
// GPT-2-style keys, sliding windows, MLA), and the configs shipped under examples/models/.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "inferlab/dtype.hpp"
#include "inferlab/kv.hpp"

namespace inferlab {

struct ModelConfig {
    std::string name;          // file name or shipped model name
    std::string source;        // where the numbers come from
    std::string model_type;    // "llama", "gpt2", ...
    std::uint64_t layers = 0;      // L
    std::uint64_t hidden = 0;      // hidden size
    std::uint64_t q_heads = 0;     // H_q
    std::uint64_t kv_heads = 0;    // H_kv
    std::uint64_t head_dim = 0;    // d
    std::uint64_t vocab = 0;
    std::uint64_t intermediate = 0;   // FFN width (dense layers)
    std::uint64_t max_positions = 0;  // 0 when the config does not say
    std::uint64_t learned_positions = 0;  // GPT-2 style position table rows
    bool gated_mlp = true;            // SwiGLU (3 matrices) vs GELU MLP (2)
    bool tied_embeddings = false;
    bool qkv_bias = false;
    std::optional<DType> dtype;       // torch_dtype / dtype
    // Sliding window: one entry per layer, 0 = full attention.
    std::vector<std::uint64_t> window_per_layer;
    std::string window_rule;          // how the config's keys were read
    // MLA (DeepSeek-V2/V3): cache a latent of kv_lora_rank + qk_rope_head_dim per token and layer.
    bool mla = false;
    std::uint64_t kv_lora_rank = 0, q_lora_rank = 0, qk_rope_head_dim = 0, qk_nope_head_dim = 0, v_head_dim = 0;
    // Mixture of experts (0 experts = dense).
    std::uint64_t experts = 0, shared_experts = 0, experts_per_token = 0, expert_intermediate = 0, dense_layers = 0;
};

// Parses a config object. `name` is used in error messages ("config.json key 'hidden_size'").
// A "text_config" object (multimodal wrappers) is read in place of the top level.
ModelConfig parse_hf_config(const nlohmann::json& j, const std::string& name);
// Reads and parses a file; FileError when it cannot be read, InputError when malformed.
ModelConfig load_config_file(const std::string& path);
// A config shipped with inferlab (examples/models/NAME.json, compiled into the binary).
ModelConfig load_named_model(const std::string& name);
// Names and sources of the shipped configs.
struct ShippedModel {
    std::string name;
    std::string source;
};
std::vector<ShippedModel> shipped_models();

// The KV geometry of a config at `bits` per element (K and V alike).
KvSpec kv_spec_from_config(const ModelConfig& cfg, std::uint32_t bits);

// Weight parameters, counted from the config's matrices (embeddings, attention, FFN, norms,
// LM head unless tied). An estimate of the published count: biases other than QKV and small
// extras (e.g. DeepSeek's multi-token-prediction layer) are not counted.
struct ParamCount {
    std::uint64_t embedding = 0;
    std::uint64_t attention = 0;  // all layers
    std::uint64_t ffn = 0;        // all layers, all experts
    std::uint64_t norms = 0;
    std::uint64_t lm_head = 0;
    std::uint64_t total = 0;
    std::uint64_t active_per_token = 0;  // MoE: parameters one token touches (dense: = total)
};
ParamCount count_params(const ModelConfig& cfg);

}  // namespace inferlab
