#include "inferlab/data/model_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/format.hpp"
#include "shipped_models.hpp"

namespace inferlab {
namespace {

using nlohmann::json;

// Where a config's key broke a rule, in the reader's language (it names no flag: the file and the
// key are the user's words either way).
std::string key_where(const std::string& name, const std::string& key) {
    return trf(N_("config '{0}' key '{1}'"), name, key);
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
        throw InputError(key_where(name, key), v.dump(), N_("must be a positive integer"));
    return v.get<std::uint64_t>();
}

std::uint64_t require(const json& j, const std::string& name, std::initializer_list<const char*> keys) {
    std::string found;
    const json* v = find_key(j, keys, &found);
    if (!v) {
        std::string list;
        for (const char* k : keys) list += (list.empty() ? "'" : " or '") + std::string(k) + "'";
        throw InputError(N_("config '{0}': missing key {1}"), {name, list});
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

namespace {

// What each model type's Hugging Face config class assumes for keys a config.json leaves out.
// Sources: transformers' configuration_<type>.py (defaults of __init__, layer_types rules).
struct TypeRules {
    const char* type;
    bool tied;                   // tie_word_embeddings default
    std::uint64_t norms_per_layer;
    bool qk_norm;
    const char* config_class;
};
constexpr TypeRules kTypeRules[] = {
    {"llama", false, 2, false, "LlamaConfig"},         {"mistral", false, 2, false, "MistralConfig"},
    {"mixtral", false, 2, false, "MixtralConfig"},     {"qwen2", false, 2, false, "Qwen2Config"},
    {"qwen2_moe", false, 2, false, "Qwen2MoeConfig"},  {"qwen3", false, 2, true, "Qwen3Config"},
    {"qwen3_moe", false, 2, true, "Qwen3MoeConfig"},   {"phi3", false, 2, false, "Phi3Config"},
    {"deepseek_v2", false, 2, false, "DeepseekV2Config"}, {"deepseek_v3", false, 2, false, "DeepseekV3Config"},
    {"gemma", true, 2, false, "GemmaConfig"},          {"gemma2", true, 4, false, "Gemma2Config"},
    {"gemma3_text", true, 4, true, "Gemma3TextConfig"}, {"gemma3", true, 4, true, "Gemma3TextConfig"},
    {"cohere2", true, 1, false, "Cohere2Config"},      {"gpt2", true, 2, false, "GPT2Config"},
};

const TypeRules* type_rules(const std::string& type) {
    for (const auto& r : kTypeRules)
        if (type == r.type) return &r;
    return nullptr;
}

// Gemma3TextConfig's defaults: the published Gemma-3 4B/12B/27B configs give only a few text_config
// keys and rely on these for the rest.
void apply_gemma3_defaults(json& j, ModelConfig& c) {
    const std::pair<const char*, std::uint64_t> defaults[] = {
        {"vocab_size", 262208}, {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256},
        {"sliding_window", 4096}, {"max_position_embeddings", 131072}};
    for (const auto& [key, value] : defaults) {
        if (j.contains(key)) continue;
        j[key] = value;
        c.defaults_applied.push_back({N_("{0} = {1} ({2} default)"), {key, std::to_string(value), "Gemma3TextConfig"}});
    }
}

std::uint64_t pattern_key(const json& j, const std::string& name, std::uint64_t fallback, bool* given) {
    std::string found;
    const json* v = find_key(j, {"sliding_window_pattern", "_sliding_window_pattern"}, &found);
    *given = v != nullptr;
    return v ? as_positive(*v, name, found) : fallback;
}

// Lays out full and sliding layers the way the model type's Hugging Face class does when the
// config has no layer_types; refuses a window it has no rule for.
void apply_window_rule(const json& j, const std::string& name, ModelConfig& c, std::uint64_t window) {
    const std::string& t = c.model_type;
    const std::string W = std::to_string(window);
    const Prose full_everywhere{N_("use_sliding_window is false: every layer uses full attention"), {}};
    if (t == "gemma2") {
        for (std::uint64_t i = 0; i < c.layers; ++i) c.window_per_layer[i] = i % 2 == 0 ? window : 0;
        c.window_rule = {N_("gemma2: layers alternate, even layers (0, 2, …) slide with window {0}, odd layers full "
                            "attention (Gemma2Config's layout; the config has no layer_types)"),
                         {W}};
    } else if (t == "gemma3_text" || t == "gemma3" || t == "cohere2") {
        bool given = false;
        const std::uint64_t n = pattern_key(j, name, t == "cohere2" ? 4 : 6, &given);
        // transformers: layer i slides when (i + 1) % n != 0, so layers n−1, 2n−1, … are global.
        for (std::uint64_t i = 0; i < c.layers; ++i) c.window_per_layer[i] = (i + 1) % n ? window : 0;
        const std::vector<std::string> args = {t, std::to_string(n), std::to_string(n - 1), std::to_string(2 * n - 1), W,
                                               t == "cohere2" ? "Cohere2Config" : "Gemma3TextConfig"};
        c.window_rule = {given ? N_("{0}: one layer in {1} is full attention (layers {2}, {3}, …), the others slide "
                                    "with window {4} (sliding_window_pattern {1} in the config)")
                               : N_("{0}: one layer in {1} is full attention (layers {2}, {3}, …), the others slide "
                                    "with window {4} ({5}'s default sliding_window_pattern {1})"),
                         args};
    } else if (t == "qwen2" || t == "qwen2_moe" || t == "qwen3" || t == "qwen3_moe") {
        // Qwen2Config: use_sliding_window defaults to false; when true, layers from max_window_layers on slide.
        if (!optional_bool(j, "use_sliding_window", false)) {
            c.window_rule = {j.contains("use_sliding_window")
                                 ? N_("{0}: use_sliding_window is false: every layer uses full attention, "
                                      "sliding_window {1} is not applied")
                                 : N_("{0}: use_sliding_window is absent (default false): every layer uses full "
                                      "attention, sliding_window {1} is not applied"),
                             {t, W}};
            return;
        }
        // max_window_layers may be 0 (every layer slides) or at least the layer count (none does).
        std::uint64_t max_window_layers = 28;
        if (const json* m = find_key(j, {"max_window_layers"}, nullptr)) {
            if (!m->is_number_integer() || m->get<std::int64_t>() < 0)
                throw InputError(key_where(name, "max_window_layers"), m->dump(), N_("must be a non-negative integer"));
            max_window_layers = m->get<std::uint64_t>();
        }
        const bool given = j.contains("max_window_layers") && !j["max_window_layers"].is_null();
        const TypeRules* rules = type_rules(t);  // the class that gives the default: Qwen2Config, Qwen3MoeConfig, …
        const std::vector<std::string> args = {t, std::to_string(max_window_layers), W, std::to_string(c.layers),
                                               rules ? rules->config_class : "Qwen2Config"};
        if (max_window_layers >= c.layers) {
            c.window_rule = {given ? N_("{0}: use_sliding_window, but max_window_layers {1} ≥ the {3} layers: no layer "
                                        "slides (window {2} unused)")
                                   : N_("{0}: use_sliding_window, but max_window_layers {1} ({4}'s default) ≥ the {3} "
                                        "layers: no layer slides (window {2} unused)"),
                             args};
            return;
        }
        for (std::uint64_t i = max_window_layers; i < c.layers; ++i) c.window_per_layer[i] = window;
        c.window_rule = {given ? N_("{0}: use_sliding_window, layers {1} on slide with window {2} (max_window_layers {1})")
                               : N_("{0}: use_sliding_window, layers {1} on slide with window {2} (max_window_layers {1}, "
                                    "{4}'s default 28)"),
                         args};
    } else if (t == "mistral" || t == "mixtral" || t == "phi3") {
        if (!optional_bool(j, "use_sliding_window", true)) {
            c.window_rule = full_everywhere;
            return;
        }
        for (auto& w : c.window_per_layer) w = window;
        c.window_rule = {N_("{0}: every layer slides with window {1} (the model type applies sliding_window to all layers)"),
                         {t, W}};
    } else if (j.contains("use_sliding_window") && !optional_bool(j, "use_sliding_window", true)) {
        c.window_rule = full_everywhere;
    } else {
        throw InputError(N_("config '{0}' sets sliding_window {1} but model_type '{2}' has no window layout inferlab "
                            "knows (known: mistral, mixtral, phi3, qwen2/qwen3, gemma2, gemma3, cohere2): add "
                            "'layer_types' with one \"full_attention\" or \"sliding_attention\" per layer"),
                         {name, W, t});
    }
}

}  // namespace

ModelConfig parse_hf_config(const json& top, const std::string& name) {
    if (!top.is_object())
        throw InputError(trf(N_("config '{0}'"), name), top.type_name(), N_("must be a JSON object"));
    const bool wrapped = top.contains("text_config") && top["text_config"].is_object();
    json j = wrapped ? top["text_config"] : top;
    ModelConfig c;
    c.name = name;
    c.text_config = wrapped;
    if (auto it = top.find("_inferlab_source"); it != top.end() && it->is_string()) c.source = it->get<std::string>();
    else c.source = name;
    if (auto it = j.find("model_type"); it != j.end() && it->is_string()) c.model_type = it->get<std::string>();
    if (c.model_type.empty())
        if (auto it = top.find("model_type"); it != top.end() && it->is_string()) c.model_type = it->get<std::string>();
    if (c.model_type == "gemma3_text" || c.model_type == "gemma3") apply_gemma3_defaults(j, c);
    // Hugging Face's class defaults for a sliding_window the file leaves out (null means none):
    // Gemma2Config, MistralConfig and the Qwen2/Qwen3 (MoE) configs default it to 4096 (Qwen's
    // only apply it with use_sliding_window).
    if (!j.contains("sliding_window")) {
        const std::string& t = c.model_type;
        const bool qwen = t == "qwen2" || t == "qwen2_moe" || t == "qwen3" || t == "qwen3_moe";
        const TypeRules* rules = type_rules(t);
        const char* cls = (t == "gemma2" || t == "mistral" || qwen) && rules ? rules->config_class : nullptr;
        if (cls && (!qwen || optional_bool(j, "use_sliding_window", false))) {
            j["sliding_window"] = 4096;
            c.defaults_applied.push_back({N_("{0} = {1} ({2} default)"), {"sliding_window", "4096", cls}});
        }
    }
    const TypeRules* rules = type_rules(c.model_type);

    c.layers = require(j, name, {"num_hidden_layers", "n_layer", "num_layers"});
    if (c.layers > 100000)
        throw InputError(key_where(name, "num_hidden_layers"), std::to_string(c.layers), N_("must be at most {0}"),
                         {std::to_string(100000)});
    c.q_heads = require(j, name, {"num_attention_heads", "n_head"});
    c.hidden = require(j, name, {"hidden_size", "n_embd", "d_model"});
    // Hugging Face convention: a missing num_key_value_heads means MHA (= num_attention_heads).
    c.kv_heads = optional_positive(j, name, {"num_key_value_heads", "n_head_kv"}, c.q_heads);
    if (c.q_heads % c.kv_heads != 0)
        throw InputError(key_where(name, "num_attention_heads"), std::to_string(c.q_heads),
                         N_("must be divisible by num_key_value_heads {0}"), {std::to_string(c.kv_heads)});
    if (find_key(j, {"head_dim"}, nullptr)) {
        c.head_dim = require(j, name, {"head_dim"});
    } else {
        if (c.hidden % c.q_heads != 0)
            throw InputError(key_where(name, "hidden_size"), std::to_string(c.hidden),
                             N_("is not divisible by num_attention_heads {0}, so the head width d cannot be derived: "
                                "add 'head_dim'"),
                             {std::to_string(c.q_heads)});
        c.head_dim = c.hidden / c.q_heads;
    }
    c.vocab = optional_positive(j, name, {"vocab_size"}, 0);
    c.max_positions = optional_positive(j, name, {"max_position_embeddings", "n_positions", "n_ctx"}, 0);
    const bool gpt2_style = j.contains("n_embd") || c.model_type == "gpt2";
    auto tie_key = [&]() -> const json* {
        for (const json* o : std::array<const json*, 2>{&j, &top})
            if (auto it = o->find("tie_word_embeddings"); it != o->end() && it->is_boolean()) return &*it;
        return nullptr;
    };
    if (gpt2_style) {
        c.gated_mlp = false;
        c.tied_embeddings = true;  // GPT-2 always ties wte and the LM head
        c.tied_rule = {N_("GPT-2 ties the LM head to the token embedding"), {}};
        c.qkv_bias = c.out_bias = c.mlp_bias = c.norm_bias = true;  // Conv1D layers and LayerNorms all carry biases
        c.learned_positions = c.max_positions;
        c.intermediate = optional_positive(j, name, {"n_inner"}, 4 * c.hidden);
    } else {
        c.intermediate = optional_positive(j, name, {"intermediate_size", "ffn_dim"}, 0);
        if (const json* t = tie_key()) {
            c.tied_embeddings = t->get<bool>();
            c.tied_rule = {c.tied_embeddings ? N_("tie_word_embeddings true in the config")
                                             : N_("tie_word_embeddings false in the config"),
                           {}};
        } else if (rules) {
            c.tied_embeddings = rules->tied;
            c.tied_rule = {rules->tied ? N_("tie_word_embeddings absent: {0}'s default (tied)")
                                       : N_("tie_word_embeddings absent: {0}'s default (untied)"),
                           {rules->config_class}};
        } else {
            c.tied_embeddings = true;
            c.tied_rule = {c.model_type.empty()
                               ? N_("tie_word_embeddings and model_type absent: Hugging Face's PretrainedConfig default "
                                    "(tied) assumed")
                               : N_("tie_word_embeddings absent and model_type '{0}' unknown to inferlab: Hugging Face's "
                                    "PretrainedConfig default (tied) assumed"),
                           {c.model_type}};
        }
        const bool attention_bias = optional_bool(j, "attention_bias", false);
        c.qkv_bias = attention_bias || c.model_type == "qwen2" || c.model_type == "qwen2_moe";
        c.out_bias = attention_bias;  // Llama-family attention_bias covers o_proj too; Qwen2's QKV bias does not
        c.mlp_bias = optional_bool(j, "mlp_bias", false);
        if (rules) {
            c.norms_per_layer = rules->norms_per_layer;
            c.qk_norm = rules->qk_norm;
        }
    }
    std::string dtype_key;
    if (const json* d = find_key(j, {"torch_dtype", "dtype"}, &dtype_key); d) {
        if (!d->is_string()) throw InputError(key_where(name, dtype_key), d->dump(), N_("must be a string such as \"bfloat16\""));
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
            throw InputError(key_where(name, "sliding_window"), w->dump(), N_("must be a positive integer or null"));
        window = w->get<std::uint64_t>();
    }
    if (auto lt = j.find("layer_types"); lt != j.end() && !lt->is_null()) {
        if (!lt->is_array() || lt->size() != c.layers)
            throw InputError(key_where(name, "layer_types"), lt->dump().substr(0, 60),
                             N_("must be a list with one entry per layer ({0})"), {std::to_string(c.layers)});
        for (std::size_t i = 0; i < c.layers; ++i) {
            const json& t = (*lt)[i];
            std::string s = t.is_string() ? t.get<std::string>() : "";
            if (s == "sliding_attention") {
                if (!window)
                    throw InputError(N_("config '{0}': layer_types names sliding layers but 'sliding_window' is missing"),
                                     {name});
                c.window_per_layer[i] = window;
            } else if (s != "full_attention") {
                throw InputError(key_where(name, "layer_types[" + std::to_string(i) + "]"), t.dump(),
                                 N_("must be \"full_attention\" or \"sliding_attention\""));
            }
        }
        c.window_rule = {N_("layer_types in the config: per-layer full or sliding attention"), {}};
    } else if (window) {
        apply_window_rule(j, name, c, window);
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
        if (c.experts_per_token > c.experts)
            throw InputError(key_where(name, "num_experts_per_tok"), std::to_string(c.experts_per_token),
                             N_("must be at most the expert count {0}"), {std::to_string(c.experts)});
        c.expert_intermediate = optional_positive(j, name, {"moe_intermediate_size"}, c.intermediate);
        if (auto it = j.find("first_k_dense_replace"); it != j.end() && it->is_number_integer())
            c.dense_layers = std::min<std::uint64_t>(it->get<std::uint64_t>(), c.layers);
        if (auto it = j.find("topk_method"); it != j.end() && it->is_string()) c.router_bias = *it == "noaux_tc";
    }
    if (auto it = j.find("num_nextn_predict_layers"); it != j.end() && it->is_number_integer() && it->get<std::int64_t>() > 0)
        c.mtp_layers = it->get<std::uint64_t>();
    return c;
}

void require_precision_flags(const ModelConfig& cfg, const std::vector<std::pair<std::string, bool>>& flags) {
    if (cfg.dtype) return;
    std::vector<std::string> missing;
    for (const auto& [flag, given] : flags)
        if (!given) missing.push_back(flag);
    if (missing.empty()) return;
    throw InputError(Prose{N_("config '{0}' names no torch_dtype, and inferlab does not guess a precision: give {1} "
                              "(fp32, bf16, fp16, fp8, int8, int4)"),
                           {cfg.name},
                           {},
                           {and_list(missing)}});
}

ModelConfig load_config_file(const std::string& path, const std::string& where) {
    return parse_hf_config(parse_json_text(where, path, read_text_file(path, kMaxJsonFileBytes)), path);
}

std::vector<ShippedModel> shipped_models() {
    std::vector<ShippedModel> out;
    for (const auto& m : detail::kShippedModels) {
        json j = json::parse(m.json);
        ShippedModel s{m.name, j.value("_inferlab_source", std::string("examples/models/") + m.name + ".json"), "", std::nullopt, ""};
        if (auto it = j.find("_inferlab_published_params"); it != j.end() && it->is_object()) {
            s.published_label = it->value("label", "");
            s.published_source = it->value("source", "");
            if (auto e = it->find("exact"); e != it->end() && e->is_number_unsigned()) s.published_exact = e->get<std::uint64_t>();
        }
        out.push_back(s);
    }
    return out;
}

ModelConfig load_named_model(const std::string& name, const std::string& where) {
    std::string names;
    for (const auto& m : detail::kShippedModels) {
        if (name == m.name) {
            ModelConfig c = parse_hf_config(json::parse(m.json), name);
            c.name = name;
            return c;
        }
        names += (names.empty() ? "" : ", ") + std::string(m.name);
    }
    throw InputError(where, name, N_("is not a shipped model (known: {0})"), {names});
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

std::size_t sliding_layer_count(const ModelConfig& cfg) {
    return static_cast<std::size_t>(
        std::count_if(cfg.window_per_layer.begin(), cfg.window_per_layer.end(), [](std::uint64_t w) { return w != 0; }));
}

ParamCount count_params(const ModelConfig& c) {
    const std::string what = N_("parameter count");
    auto mul = [&](std::initializer_list<std::uint64_t> f) { return checked_product(f, what); };
    auto add = [&](std::uint64_t a, std::uint64_t b) { return checked_add(a, b, what); };
    // Keys asked for only here, where they are used (kv-mem needs neither).
    if (!c.vocab) throw InputError(N_("config '{0}': missing key 'vocab_size', needed for the parameter count"), {c.name});
    const bool has_dense_layers = !c.experts || c.dense_layers > 0;
    if (!c.intermediate && has_dense_layers)
        throw InputError(N_("config '{0}': missing key 'intermediate_size' (the FFN width), needed for the parameter count"),
                         {c.name});
    ParamCount p;
    p.embedding = add(mul({c.vocab, c.hidden}), mul({c.learned_positions, c.hidden}));
    p.lm_head = c.tied_embeddings ? 0 : mul({c.vocab, c.hidden});
    const std::uint64_t q_width = c.q_heads * c.head_dim, kv_width = c.kv_heads * c.head_dim;
    std::uint64_t attn = 0;  // one layer
    if (c.mla) {
        const std::uint64_t qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
        std::uint64_t q = c.q_lora_rank ? add(mul({c.hidden, c.q_lora_rank}), mul({c.q_lora_rank, c.q_heads, qk}))
                                        : mul({c.hidden, c.q_heads, qk});
        std::uint64_t kv_down = mul({c.hidden, c.kv_lora_rank + c.qk_rope_head_dim});
        std::uint64_t kv_up = mul({c.kv_lora_rank, c.q_heads, c.qk_nope_head_dim + c.v_head_dim});
        std::uint64_t o = mul({c.q_heads, c.v_head_dim, c.hidden});
        attn = add(add(q, kv_down), add(kv_up, o));
        attn = add(attn, c.kv_lora_rank + c.q_lora_rank);  // the latent RMSNorms (q_a only with a q_lora_rank)
    } else {
        attn = add(add(mul({c.hidden, q_width}), mul({2, c.hidden, kv_width})), mul({q_width, c.hidden}));
        if (c.qkv_bias) attn = add(attn, q_width + 2 * kv_width);
        if (c.out_bias) attn = add(attn, c.hidden);
        if (c.qk_norm) attn = add(attn, 2 * c.head_dim);  // q_norm and k_norm: one weight of width d each
    }
    const std::uint64_t mats = c.gated_mlp ? 3 : 2;
    // One FFN of width `inter`: its matrices, plus biases (GPT-2: c_fc has inter, c_proj hidden).
    auto ffn_of = [&](std::uint64_t inter) {
        std::uint64_t f = mul({mats, c.hidden, inter});
        if (c.mlp_bias) f = add(f, (mats - 1) * inter + c.hidden);
        return f;
    };
    std::uint64_t ffn_total = 0, ffn_active = 0, routed_all = 0;
    for (std::uint64_t i = 0; i < c.layers; ++i) {
        if (c.experts && i >= c.dense_layers) {
            const std::uint64_t one = ffn_of(c.expert_intermediate);
            // Router: hidden × E weights, plus DeepSeek-V3's per-expert score-correction bias.
            const std::uint64_t router = add(mul({c.hidden, c.experts}), c.router_bias ? c.experts : 0);
            ffn_total = add(ffn_total, add(mul({c.experts + c.shared_experts, one}), router));
            ffn_active = add(ffn_active, add(mul({c.experts_per_token + c.shared_experts, one}), router));
            routed_all = add(routed_all, mul({c.experts, one}));
            p.expert_params = one;
            ++p.moe_layers;
        } else {
            ffn_total = add(ffn_total, ffn_of(c.intermediate));
            ffn_active = add(ffn_active, ffn_of(c.intermediate));
        }
    }
    p.attention = mul({c.layers, attn});
    p.ffn = ffn_total;
    // Every norm has a weight of width hidden (a LayerNorm also a bias); one more after the last layer.
    const std::uint64_t per_norm = c.norm_bias ? 2 * c.hidden : c.hidden;
    p.norms = add(mul({c.layers, c.norms_per_layer, per_norm}), per_norm);
    p.total = add(add(add(p.embedding, p.attention), add(p.ffn, p.norms)), p.lm_head);
    p.active_per_token = c.experts ? add(add(add(p.embedding, p.attention), add(ffn_active, p.norms)), p.lm_head)
                                   : p.total;
    p.always_read = p.total - routed_all;
    if (c.mtp_layers)
        p.not_counted.push_back(fmt::format("the multi-token-prediction module (num_nextn_predict_layers {}): not part of "
                                            "the main model the published count describes",
                                            c.mtp_layers));
    if (c.text_config)
        p.not_counted.push_back("the towers beside text_config (vision encoder, projector): only the language model is counted");
    return p;
}

std::optional<Prose> past_max_positions(const ModelConfig& cfg, std::uint64_t longest) {
    if (cfg.max_positions == 0 || longest <= cfg.max_positions) return std::nullopt;
    return Prose{N_("S = {0} is past the config's max_position_embeddings ({1}): the arithmetic holds at any length, "
                    "but the model was not trained to attend that far"),
                 {group_thousands(longest), group_thousands(cfg.max_positions)}};
}

}  // namespace inferlab
