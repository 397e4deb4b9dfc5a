#include "inferlab/model_config.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "inferlab/checked.hpp"
#include "inferlab/error.hpp"
#include "inferlab/files.hpp"
#include "shipped_models.hpp"

namespace inferlab {
namespace {

using nlohmann::json;

std::string key_where(const std::string& name, const std::string& key) {
    return "config '" + name + "' key '" + key + "'";
}

const json* find_key(const json& j, std::initializer_list<const char*> keys, std::string* found) {
    for (const char* k : keys) {
        auto it = j.find(k);
        if (it != j.end() && !it->is_null()) {
            if (found) *found = k;
            return &*it;
        }
    }
    return nullptr;
}

std::uint64_t as_positive(const json& v, const std::string& name, const std::string& key) {
    if (!v.is_number_integer() || v.get<std::int64_t>() <= 0)
        throw InputError(key_where(name, key), v.dump(), "must be a positive integer");
    return v.get<std::uint64_t>();
}

std::uint64_t require(const json& j, const std::string& name, std::initializer_list<const char*> keys) {
    std::string found;
    const json* v = find_key(j, keys, &found);
    if (!v) {
        std::string list;
        for (const char* k : keys) list += (list.empty() ? "'" : " or '") + std::string(k) + "'";
        throw InputError("config '" + name + "': missing key " + list);
    }
    return as_positive(*v, name, found);
}

std::uint64_t optional_positive(const json& j, const std::string& name, std::initializer_list<const char*> keys,
                                std::uint64_t fallback) {
    std::string found;
    const json* v = find_key(j, keys, &found);
    return v ? as_positive(*v, name, found) : fallback;
}

bool optional_bool(const json& j, const char* key, bool fallback) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace

ModelConfig parse_hf_config(const json& top, const std::string& name) {
    if (!top.is_object()) throw InputError("config '" + name + "'", top.type_name(), "must be a JSON object");
    const json& j = top.contains("text_config") && top["text_config"].is_object() ? top["text_config"] : top;
    ModelConfig c;
    c.name = name;
    if (auto it = top.find("_inferlab_source"); it != top.end() && it->is_string()) c.source = it->get<std::string>();
    else c.source = name;
    if (auto it = j.find("model_type"); it != j.end() && it->is_string()) c.model_type = it->get<std::string>();
    if (c.model_type.empty())
        if (auto it = top.find("model_type"); it != top.end() && it->is_string()) c.model_type = it->get<std::string>();

    c.layers = require(j, name, {"num_hidden_layers", "n_layer", "num_layers"});
    if (c.layers > 100000)
        throw InputError(key_where(name, "num_hidden_layers"), std::to_string(c.layers), "must be at most 100000");
    c.q_heads = require(j, name, {"num_attention_heads", "n_head"});
    c.hidden = require(j, name, {"hidden_size", "n_embd", "d_model"});
    // Hugging Face convention: a missing num_key_value_heads means MHA (= num_attention_heads).
    c.kv_heads = optional_positive(j, name, {"num_key_value_heads", "n_head_kv"}, c.q_heads);
    if (c.q_heads % c.kv_heads != 0)
        throw InputError(key_where(name, "num_attention_heads"), std::to_string(c.q_heads),
                         "must be divisible by num_key_value_heads " + std::to_string(c.kv_heads));
    if (find_key(j, {"head_dim"}, nullptr)) {
        c.head_dim = require(j, name, {"head_dim"});
    } else {
        if (c.hidden % c.q_heads != 0)
            throw InputError(key_where(name, "hidden_size"), std::to_string(c.hidden),
                             "is not divisible by num_attention_heads " + std::to_string(c.q_heads) +
                                 ", so the head width d cannot be derived: add 'head_dim'");
        c.head_dim = c.hidden / c.q_heads;
    }
    c.vocab = optional_positive(j, name, {"vocab_size"}, 0);
    c.max_positions = optional_positive(j, name, {"max_position_embeddings", "n_positions", "n_ctx"}, 0);
    const bool gpt2_style = j.contains("n_embd") || c.model_type == "gpt2";
    if (gpt2_style) {
        c.gated_mlp = false;
        c.tied_embeddings = true;  // GPT-2 always ties wte and the LM head
        c.qkv_bias = true;
        c.learned_positions = c.max_positions;
        c.intermediate = optional_positive(j, name, {"n_inner"}, 4 * c.hidden);
    } else {
        c.intermediate = optional_positive(j, name, {"intermediate_size", "ffn_dim"}, 0);
        c.tied_embeddings = optional_bool(j, "tie_word_embeddings", false);
        c.qkv_bias = optional_bool(j, "attention_bias", c.model_type == "qwen2");
    }
    std::string dtype_key;
    if (const json* d = find_key(j, {"torch_dtype", "dtype"}, &dtype_key); d) {
        if (!d->is_string()) throw InputError(key_where(name, dtype_key), d->dump(), "must be a string such as \"bfloat16\"");
        c.dtype = parse_dtype(key_where(name, dtype_key), d->get<std::string>());
    } else if (const json* d2 = find_key(top, {"torch_dtype", "dtype"}, &dtype_key); d2 && d2->is_string()) {
        c.dtype = parse_dtype(key_where(name, dtype_key), d2->get<std::string>());
    }

    // Sliding window. Convention followed here (Hugging Face's): a sliding layer with window W
    // keeps the last W positions, the newest included; some libraries keep W + 1.
    c.window_per_layer.assign(c.layers, 0);
    std::uint64_t window = 0;
    if (const json* w = find_key(j, {"sliding_window"}, nullptr); w) {
        if (!w->is_number_integer() || w->get<std::int64_t>() <= 0)
            throw InputError(key_where(name, "sliding_window"), w->dump(), "must be a positive integer or null");
        window = w->get<std::uint64_t>();
    }
    if (auto lt = j.find("layer_types"); lt != j.end() && !lt->is_null()) {
        if (!lt->is_array() || lt->size() != c.layers)
            throw InputError(key_where(name, "layer_types"), lt->dump().substr(0, 60),
                             "must be a list with one entry per layer (" + std::to_string(c.layers) + ")");
        for (std::size_t i = 0; i < c.layers; ++i) {
            const json& t = (*lt)[i];
            std::string s = t.is_string() ? t.get<std::string>() : "";
            if (s == "sliding_attention") {
                if (!window)
                    throw InputError("config '" + name + "': layer_types names sliding layers but 'sliding_window' is missing");
                c.window_per_layer[i] = window;
            } else if (s != "full_attention") {
                throw InputError(key_where(name, "layer_types[" + std::to_string(i) + "]"), t.dump(),
                                 "must be \"full_attention\" or \"sliding_attention\"");
            }
        }
        c.window_rule = "layer_types: per-layer full or sliding attention";
    } else if (window && !optional_bool(j, "use_sliding_window", true)) {
        c.window_rule = "use_sliding_window is false: every layer uses full attention";
    } else if (window) {
        // Qwen2 style: the first max_window_layers layers use full attention.
        std::uint64_t full_first = 0;
        if (j.contains("use_sliding_window"))
            full_first = std::min(optional_positive(j, name, {"max_window_layers"}, 0), c.layers);
        for (std::uint64_t i = full_first; i < c.layers; ++i) c.window_per_layer[i] = window;
        c.window_rule = full_first ? "sliding_window with max_window_layers: layers from " + std::to_string(full_first) +
                                         " on slide"
                                   : "sliding_window: every layer slides";
    }

    // MLA
    if (find_key(j, {"kv_lora_rank"}, nullptr)) {
        c.mla = true;
        c.kv_lora_rank = require(j, name, {"kv_lora_rank"});
        c.qk_rope_head_dim = require(j, name, {"qk_rope_head_dim"});
        c.qk_nope_head_dim = require(j, name, {"qk_nope_head_dim"});
        c.v_head_dim = require(j, name, {"v_head_dim"});
        c.q_lora_rank = optional_positive(j, name, {"q_lora_rank"}, 0);
    }
    // MoE
    c.experts = optional_positive(j, name, {"n_routed_experts", "num_local_experts", "num_experts"}, 0);
    if (c.experts) {
        c.shared_experts = optional_positive(j, name, {"n_shared_experts"}, 0);
        c.experts_per_token = require(j, name, {"num_experts_per_tok"});
        c.expert_intermediate = optional_positive(j, name, {"moe_intermediate_size"}, c.intermediate);
        if (auto it = j.find("first_k_dense_replace"); it != j.end() && it->is_number_integer())
            c.dense_layers = std::min<std::uint64_t>(it->get<std::uint64_t>(), c.layers);
    }
    if (!c.intermediate && !c.experts)
        throw InputError("config '" + name + "': missing key 'intermediate_size' (the FFN width)");
    return c;
}

ModelConfig load_config_file(const std::string& path) {
    return parse_hf_config(parse_json_text("--config", path, read_text_file(path)), path);
}

std::vector<ShippedModel> shipped_models() {
    std::vector<ShippedModel> out;
    for (const auto& m : detail::kShippedModels) {
        json j = json::parse(m.json);
        out.push_back({m.name, j.value("_inferlab_source", std::string("examples/models/") + m.name + ".json")});
    }
    return out;
}

ModelConfig load_named_model(const std::string& name) {
    std::string names;
    for (const auto& m : detail::kShippedModels) {
        if (name == m.name) {
            ModelConfig c = parse_hf_config(json::parse(m.json), name);
            c.name = name;
            return c;
        }
        names += (names.empty() ? "" : ", ") + std::string(m.name);
    }
    throw InputError("--model", name, "is not a shipped model (known: " + names + ")");
}

KvSpec kv_spec_from_config(const ModelConfig& c, std::uint32_t bits) {
    KvSpec spec;
    for (std::uint64_t i = 0; i < c.layers; ++i) {
        if (c.mla) {
            // One latent vector per token: kv_lora_rank (compressed K/V) + qk_rope_head_dim (RoPE key).
            spec.layers.push_back(KvLayer{1, c.kv_lora_rank + c.qk_rope_head_dim, 0, bits, bits,
                                          c.window_per_layer[i], true});
            spec.decompressed.push_back(KvLayer{c.kv_heads, c.qk_nope_head_dim + c.qk_rope_head_dim, c.v_head_dim,
                                                bits, bits, c.window_per_layer[i], false});
        } else {
            spec.layers.push_back(
                KvLayer{c.kv_heads, c.head_dim, c.head_dim, bits, bits, c.window_per_layer[i], false});
        }
    }
    return spec;
}

ParamCount count_params(const ModelConfig& c) {
    const std::string what = "parameter count";
    auto mul = [&](std::initializer_list<std::uint64_t> f) { return checked_product(f, what); };
    auto add = [&](std::uint64_t a, std::uint64_t b) { return checked_add(a, b, what); };
    ParamCount p;
    p.embedding = add(mul({c.vocab, c.hidden}), mul({c.learned_positions, c.hidden}));
    p.lm_head = c.tied_embeddings ? 0 : mul({c.vocab, c.hidden});
    const std::uint64_t q_width = c.q_heads * c.head_dim, kv_width = c.kv_heads * c.head_dim;
    std::uint64_t attn = 0;
    if (c.mla) {
        const std::uint64_t qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
        std::uint64_t q = c.q_lora_rank ? add(mul({c.hidden, c.q_lora_rank}), mul({c.q_lora_rank, c.q_heads, qk}))
                                        : mul({c.hidden, c.q_heads, qk});
        std::uint64_t kv_down = mul({c.hidden, c.kv_lora_rank + c.qk_rope_head_dim});
        std::uint64_t kv_up = mul({c.kv_lora_rank, c.q_heads, c.qk_nope_head_dim + c.v_head_dim});
        std::uint64_t o = mul({c.q_heads, c.v_head_dim, c.hidden});
        attn = add(add(q, kv_down), add(kv_up, o));
        attn = add(attn, c.kv_lora_rank + c.q_lora_rank);  // the latent RMSNorms
    } else {
        attn = add(add(mul({c.hidden, q_width}), mul({2, c.hidden, kv_width})), mul({q_width, c.hidden}));
        if (c.qkv_bias) attn = add(attn, q_width + 2 * kv_width);
    }
    const std::uint64_t mats = c.gated_mlp ? 3 : 2;
    const std::uint64_t dense_ffn = mul({mats, c.hidden, c.intermediate});
    std::uint64_t ffn_total = 0, ffn_active = 0;
    for (std::uint64_t i = 0; i < c.layers; ++i) {
        if (c.experts && i >= c.dense_layers) {
            std::uint64_t one = mul({mats, c.hidden, c.expert_intermediate});
            ffn_total = add(ffn_total, add(mul({c.experts + c.shared_experts, one}), mul({c.hidden, c.experts})));
            ffn_active = add(ffn_active, add(mul({c.experts_per_token + c.shared_experts, one}), mul({c.hidden, c.experts})));
        } else {
            ffn_total = add(ffn_total, dense_ffn);
            ffn_active = add(ffn_active, dense_ffn);
        }
    }
    p.attention = mul({c.layers, attn});
    p.ffn = ffn_total;
    p.norms = add(mul({c.layers, 2, c.hidden}), c.hidden);
    p.total = add(add(add(p.embedding, p.attention), add(p.ffn, p.norms)), p.lm_head);
    p.active_per_token = c.experts ? add(add(add(p.embedding, p.attention), add(ffn_active, p.norms)), p.lm_head)
                                   : p.total;
    return p;
}

}  // namespace inferlab
