#pragma once
// Reading a model's dimensions from a Hugging Face config.json (Llama/Mistral/Qwen2-style keys,
// GPT-2-style keys, sliding windows, MLA), and the configs shipped under examples/models/.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "inferlab/base/dtype.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/calc/kv.hpp"

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
    Prose tied_rule;                  // where tied_embeddings came from (the key, or the model type's default)
    bool qkv_bias = false;            // biases on Q, K and V (Qwen2, GPT-2, attention_bias)
    bool out_bias = false;            // bias on the attention output projection (GPT-2, Llama attention_bias)
    bool mlp_bias = false;            // biases on the FFN matrices (GPT-2, Llama mlp_bias)
    std::uint64_t norms_per_layer = 2;  // Llama 2 (input, post-attention); Gemma-2/3 4 (pre and post of each block)
    bool norm_bias = false;           // LayerNorm with a bias (GPT-2); RMSNorm has a weight only
    bool qk_norm = false;             // RMSNorm of width d on every query and key head (Qwen3, Gemma-3)
    bool router_bias = false;         // DeepSeek-V3 (topk_method noaux_tc): one correction bias per expert
    bool text_config = false;         // read from a multimodal wrapper's text_config
    std::uint64_t mtp_layers = 0;     // DeepSeek num_nextn_predict_layers: not part of the main model's count
    std::vector<Prose> defaults_applied;  // "key = value (Gemma3TextConfig default)" for keys the file leaves out
    std::optional<DType> dtype;       // torch_dtype / dtype
    // Sliding window: one entry per layer, 0 = full attention.
    std::vector<std::uint64_t> window_per_layer;
    Prose window_rule;                // which rule laid out the windows, and why (empty: no window)
    // MLA (DeepSeek-V2/V3): cache a latent of kv_lora_rank + qk_rope_head_dim per token and layer.
    bool mla = false;
    std::uint64_t kv_lora_rank = 0, q_lora_rank = 0, qk_rope_head_dim = 0, qk_nope_head_dim = 0, v_head_dim = 0;
    // Mixture of experts (0 experts = dense).
    std::uint64_t experts = 0, shared_experts = 0, experts_per_token = 0, expert_intermediate = 0, dense_layers = 0;
};

// Parses a config object. `name` is used in error messages ("config.json key 'hidden_size'").
// A "text_config" object (multimodal wrappers) is read in place of the top level.
// Keys a published config leaves out take the default of the model type's Hugging Face config
// class (window layout, tied LM head, Gemma3TextConfig's dimensions), and the config records which.
// A sliding window whose layout no rule here knows is an InputError, never a guess.
ModelConfig parse_hf_config(const nlohmann::json& j, const std::string& name);
// Reads and parses a file; FileError when it cannot be read, InputError when malformed. `where`
// names the file's role in errors (a command passes its flag, "--config").
ModelConfig load_config_file(const std::string& path, const std::string& where = "config file");
// A config shipped with inferlab (examples/models/NAME.json, compiled into the binary); an
// InputError naming `where` (a command passes its flag, "--model") for an unknown name.
ModelConfig load_named_model(const std::string& name, const std::string& where = "model");
// Names and sources of the shipped configs.
struct ShippedModel {
    std::string name;
    std::string source;
    // The published parameter count: the label as published ("8.03B"), the exact figure where
    // the Hub gives one, and where it comes from. Empty label: an inferlab teaching model.
    std::string published_label;
    std::optional<std::uint64_t> published_exact;
    std::string published_source;
};
std::vector<ShippedModel> shipped_models();

// The KV geometry of a config at `bits` per element (K and V alike).
KvSpec kv_spec_from_config(const ModelConfig& cfg, std::uint32_t bits);

// Weight parameters of every tensor of the language model: embeddings (and GPT-2's position
// table), attention with its biases and q/k norms, FFN or experts with routers, every norm, the
// LM head unless tied. Not counted: a vision tower next to a text_config, and DeepSeek's
// multi-token-prediction layer (the published main-model figures leave it out too).
// InputError when a key the count needs (intermediate_size, vocab_size) is missing.
struct ParamCount {
    std::uint64_t embedding = 0;
    std::uint64_t attention = 0;  // all layers
    std::uint64_t ffn = 0;        // all layers, all experts, routers
    std::uint64_t norms = 0;
    std::uint64_t lm_head = 0;
    std::uint64_t total = 0;
    std::uint64_t active_per_token = 0;  // MoE: parameters one token touches (dense: = total)
    // MoE: one routed expert's parameters and the layers that route; everything else
    // (attention, shared experts, routers, dense layers, embeddings) is read by every step.
    std::uint64_t expert_params = 0;
    std::uint64_t moe_layers = 0;
    std::uint64_t always_read = 0;  // total − moe_layers × experts × expert_params
    std::vector<std::string> not_counted;  // what the count leaves out, in words
};
ParamCount count_params(const ModelConfig& cfg);

// How many layers slide (a window_per_layer entry ≠ 0): 0 where the rule leaves every layer full.
std::size_t sliding_layer_count(const ModelConfig& cfg);

// A note for a length past the config's max_position_embeddings: the bytes and FLOPs hold at any
// S, but the model was trained for at most that many positions. None where `longest` is within it
// or the config does not say.
std::optional<Prose> past_max_positions(const ModelConfig& cfg, std::uint64_t longest);

// Which missing flags a config without torch_dtype needs, for one error naming all of them.
// `flags` lists (flag, given) pairs; throws InputError naming every flag not given when the
// config names no precision, and does nothing otherwise.
void require_precision_flags(const ModelConfig& cfg, const std::vector<std::pair<std::string, bool>>& flags);

}  // namespace inferlab
