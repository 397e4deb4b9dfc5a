#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "inferlab/base/error.hpp"
#include "inferlab/data/model_config.hpp"

using namespace inferlab;

TEST_CASE("shipped Llama 3 8B: geometry and parameter count", "[config]") {
    ModelConfig c = load_named_model("llama-3-8b");
    CHECK(c.layers == 32);
    CHECK(c.q_heads == 32);
    CHECK(c.kv_heads == 8);
    CHECK(c.head_dim == 128);
    REQUIRE(c.dtype);
    CHECK(c.dtype->name == "bf16");
    // Published: 8.03B parameters (8,030,261,248 counted from the matrices).
    CHECK(count_params(c).total == 8030261248ULL);
    CHECK(bytes_per_token(kv_spec_from_config(c, 16)) == 131072);
}

TEST_CASE("shipped configs all parse and name a source", "[config]") {
    auto models = shipped_models();
    CHECK(models.size() >= 6);
    for (const auto& m : models) {
        INFO(m.name);
        CHECK_NOTHROW(load_named_model(m.name));
        CHECK((m.source.find("Hugging Face") != std::string::npos || m.source.find("inferlab") == 0));
    }
    // Llama 2 7B: 6.74B published.
    CHECK(count_params(load_named_model("llama-2-7b")).total == 6738415616ULL);
    // GPT-2 small: 124,439,808 with every bias and LayerNorm (tests/unit/data/test_real_configs.cpp works it out).
    CHECK(count_params(load_named_model("gpt2")).total == 124439808ULL);
}

TEST_CASE("GPT-2 keys, MHA default and no dtype", "[config]") {
    ModelConfig c = load_named_model("gpt2");
    CHECK(c.layers == 12);
    CHECK(c.kv_heads == 12);
    CHECK(c.head_dim == 64);
    CHECK_FALSE(c.dtype);
    CHECK(c.tied_embeddings);
}

TEST_CASE("MLA caches a latent per token and layer", "[config]") {
    ModelConfig c = load_named_model("deepseek-v3");
    CHECK(c.mla);
    KvSpec spec = kv_spec_from_config(c, 16);
    CHECK(spec.layers[0].latent);
    CHECK(bytes_per_token(spec) == 61ULL * (512 + 64) * 2);
    CHECK(bytes_per_token(KvSpec{spec.decompressed, {}}) == 61ULL * 128 * (192 + 128) * 2);
    // Published 671B main model, 37B active; worked out in tests/unit/data/test_real_configs.cpp.
    auto p = count_params(c);
    CHECK(p.total == 671026419200ULL);
    CHECK(p.active_per_token == 37552297472ULL);
}

TEST_CASE("sliding windows: layer_types, Qwen2 max_window_layers, Mistral, disabled", "[config]") {
    ModelConfig g = load_config_file(INFERLAB_TEST_DATA "/sliding-layer-types.json");
    CHECK(g.window_per_layer == std::vector<std::uint64_t>{512, 0, 512, 0});
    ModelConfig q = load_config_file(INFERLAB_TEST_DATA "/qwen2-window.json");
    CHECK(q.window_per_layer == std::vector<std::uint64_t>{0, 0, 100, 100});
    ModelConfig m = load_named_model("mistral-7b-v0.1");
    CHECK(m.window_per_layer == std::vector<std::uint64_t>(32, 4096));
    ModelConfig off = load_named_model("qwen2.5-7b");
    CHECK(off.window_per_layer == std::vector<std::uint64_t>(28, 0));
}

TEST_CASE("bad configs name the key and the rule", "[config]") {
    CHECK_THROWS_WITH(load_config_file(INFERLAB_TEST_DATA "/incomplete.json"),
                      Catch::Contains("missing key 'num_hidden_layers' or 'n_layer' or 'num_layers'"));
    CHECK_THROWS_WITH(load_config_file(INFERLAB_TEST_DATA "/malformed.json"), Catch::Contains("is not valid JSON"));
    CHECK_THROWS_WITH(load_config_file(INFERLAB_TEST_DATA "/bad-heads.json"),
                      Catch::Contains("must be divisible by num_key_value_heads 6"));
    CHECK_THROWS_AS(load_config_file(INFERLAB_TEST_DATA "/no-such-file.json"), FileError);
    nlohmann::json j = {{"num_hidden_layers", -1}, {"num_attention_heads", 8}, {"hidden_size", 64}};
    CHECK_THROWS_WITH(parse_hf_config(j, "x.json"), "config 'x.json' key 'num_hidden_layers' '-1': must be a positive integer");
    nlohmann::json nodiv = {{"num_hidden_layers", 2}, {"num_attention_heads", 7}, {"hidden_size", 64}, {"intermediate_size", 8}};
    CHECK_THROWS_WITH(parse_hf_config(nodiv, "y.json"), Catch::Contains("add 'head_dim'"));
    CHECK_THROWS_WITH(load_named_model("gpt-5"), Catch::Contains("is not a shipped model"));
}

TEST_CASE("window layouts per model type without layer_types", "[config]") {
    auto base = [](const std::string& type) {
        return nlohmann::json{{"model_type", type}, {"num_hidden_layers", 12}, {"num_attention_heads", 4},
                              {"hidden_size", 64}, {"intermediate_size", 128}, {"vocab_size", 100},
                              {"sliding_window", 16}, {"torch_dtype", "bfloat16"}};
    };
    // Gemma2Config: even layers slide, odd layers are global (issue #14: all sliding was wrong).
    ModelConfig g2 = parse_hf_config(base("gemma2"), "g2");
    CHECK(g2.window_per_layer == std::vector<std::uint64_t>{16, 0, 16, 0, 16, 0, 16, 0, 16, 0, 16, 0});
    CHECK_THAT(g2.window_rule.text(), Catch::Contains("Gemma2Config"));
    CHECK(sliding_layer_count(g2) == 6);
    // Gemma3TextConfig: layer i global when (i + 1) % 6 == 0 (default pattern 6).
    ModelConfig g3 = parse_hf_config(base("gemma3_text"), "g3");
    CHECK(g3.window_per_layer == std::vector<std::uint64_t>{16, 16, 16, 16, 16, 0, 16, 16, 16, 16, 16, 0});
    CHECK_THAT(g3.window_rule.text(), Catch::Contains("default sliding_window_pattern 6"));
    auto j3 = base("gemma3_text");
    j3["sliding_window_pattern"] = 3;
    CHECK(parse_hf_config(j3, "g3p").window_per_layer ==
          std::vector<std::uint64_t>{16, 16, 0, 16, 16, 0, 16, 16, 0, 16, 16, 0});
    // Cohere2Config: pattern 4.
    CHECK(parse_hf_config(base("cohere2"), "c2").window_per_layer ==
          std::vector<std::uint64_t>{16, 16, 16, 0, 16, 16, 16, 0, 16, 16, 16, 0});
    // Qwen2Config: use_sliding_window defaults to false.
    CHECK(parse_hf_config(base("qwen2"), "q").window_per_layer == std::vector<std::uint64_t>(12, 0));
    CHECK(parse_hf_config(base("mistral"), "m").window_per_layer == std::vector<std::uint64_t>(12, 16));
    // A window with no known layout: refused, never guessed.
    CHECK_THROWS_WITH(parse_hf_config(base("mystery"), "x.json"),
                      Catch::Contains("sets sliding_window 16 but model_type 'mystery' has no window layout inferlab knows") &&
                          Catch::Contains("add 'layer_types'"));
    auto off = base("mystery");
    off["use_sliding_window"] = false;
    CHECK(parse_hf_config(off, "x.json").window_per_layer == std::vector<std::uint64_t>(12, 0));
}

TEST_CASE("a sliding_window the config leaves out takes its class's default, and max_window_layers 0 or past the layers", "[config]") {
    auto base = [](const std::string& type) {
        return nlohmann::json{{"model_type", type}, {"num_hidden_layers", 12}, {"num_attention_heads", 4},
                              {"hidden_size", 64}, {"intermediate_size", 128}, {"vocab_size", 100},
                              {"torch_dtype", "bfloat16"}};
    };
    // MistralConfig's sliding_window defaults to 4096; null means none.
    const ModelConfig m = parse_hf_config(base("mistral"), "m");
    CHECK(m.window_per_layer == std::vector<std::uint64_t>(12, 4096));
    REQUIRE(m.defaults_applied.size() == 1);
    CHECK(m.defaults_applied[0].text() == "sliding_window = 4096 (MistralConfig default)");
    auto none = base("mistral");
    none["sliding_window"] = nullptr;
    CHECK(parse_hf_config(none, "m").window_per_layer == std::vector<std::uint64_t>(12, 0));
    // Qwen2Config: 4096 too, used only with use_sliding_window (from max_window_layers on, default 28).
    auto q = base("qwen2");
    q["use_sliding_window"] = true;
    q["max_window_layers"] = 8;
    CHECK(parse_hf_config(q, "q").window_per_layer ==
          std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0, 0, 0, 4096, 4096, 4096, 4096});
    CHECK(parse_hf_config(base("qwen2"), "q").defaults_applied.empty());  // no use_sliding_window: nothing applied
    q["max_window_layers"] = 0;  // every layer slides
    CHECK(parse_hf_config(q, "q").window_per_layer == std::vector<std::uint64_t>(12, 4096));
    q["max_window_layers"] = 40;  // past the layers: none slides, and the rule says so with the config's 40
    const ModelConfig past = parse_hf_config(q, "q");
    CHECK(past.window_per_layer == std::vector<std::uint64_t>(12, 0));
    CHECK(sliding_layer_count(past) == 0);
    CHECK(past.window_rule.text() == "qwen2: use_sliding_window, but max_window_layers 40 ≥ the 12 layers: no layer slides "
                                     "(window 4096 unused)");
    q.erase("max_window_layers");  // the default 28 is past 12 layers too
    CHECK_THAT(parse_hf_config(q, "q").window_rule.text(), Catch::Contains("max_window_layers 28 (Qwen2Config's default)"));
    q["max_window_layers"] = -1;
    CHECK_THROWS_WITH(parse_hf_config(q, "q"), "config 'q' key 'max_window_layers' '-1': must be a non-negative integer");
}

TEST_CASE("tied LM head defaults follow the model type and say so", "[config]") {
    nlohmann::json j = {{"num_hidden_layers", 2}, {"num_attention_heads", 4}, {"hidden_size", 64},
                        {"intermediate_size", 128}, {"vocab_size", 100}};
    j["model_type"] = "gemma";
    ModelConfig g = parse_hf_config(j, "g");
    CHECK(g.tied_embeddings);
    CHECK(g.tied_rule.text() == "tie_word_embeddings absent: GemmaConfig's default (tied)");
    j["model_type"] = "llama";
    ModelConfig l = parse_hf_config(j, "l");
    CHECK_FALSE(l.tied_embeddings);
    CHECK(l.tied_rule.text() == "tie_word_embeddings absent: LlamaConfig's default (untied)");
    // The head is 100 × 64 = 6,400 parameters: counted only when untied.
    CHECK(count_params(l).total - count_params(g).total == 6400);
    j["tie_word_embeddings"] = false;
    j["model_type"] = "gemma";
    CHECK_FALSE(parse_hf_config(j, "g2").tied_embeddings);
    j.erase("tie_word_embeddings");
    j["model_type"] = "newthing";
    CHECK_THAT(parse_hf_config(j, "n").tied_rule.text(), Catch::Contains("unknown to inferlab"));
}

TEST_CASE("keys are asked for only where they are used", "[config]") {
    // Issue #14: kv-mem refused a config without intermediate_size, which KV bytes never use.
    nlohmann::json j = {{"model_type", "llama"}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                        {"hidden_size", 64}, {"torch_dtype", "float16"}};
    ModelConfig c = parse_hf_config(j, "kvonly.json");
    CHECK(bytes_per_token(kv_spec_from_config(c, 16)) == 2 * 2 * 4 * 16 * 2);  // 2·L·H_kv·d·b
    CHECK_THROWS_WITH(count_params(c), Catch::Contains("missing key 'vocab_size', needed for the parameter count"));
    j["vocab_size"] = 10;
    CHECK_THROWS_WITH(count_params(parse_hf_config(j, "kvonly.json")),
                      "config 'kvonly.json': missing key 'intermediate_size' (the FFN width), needed for the parameter count");
}

TEST_CASE("a config without torch_dtype: one message naming every missing flag", "[config]") {
    ModelConfig gpt2 = load_named_model("gpt2");
    CHECK_THROWS_WITH(require_precision_flags(gpt2, {{"--weight-dtype", false}, {"--kv-dtype", false}}),
                      "config 'gpt2' names no torch_dtype, and inferlab does not guess a precision: give "
                      "--weight-dtype and --kv-dtype (fp32, bf16, fp16, fp8, int8, int4)");
    CHECK_NOTHROW(require_precision_flags(gpt2, {{"--weight-dtype", true}, {"--kv-dtype", true}}));
    CHECK_NOTHROW(require_precision_flags(load_named_model("llama-3-8b"), {{"--kv-dtype", false}}));
}

TEST_CASE("every shipped config counts its published parameters", "[config]") {
    // Issue #14: each shipped config's count equals its published figure, with the source named.
    int checked = 0;
    for (const auto& m : shipped_models()) {
        INFO(m.name);
        if (m.published_label.empty()) {
            CHECK(m.source.find("inferlab") == 0);  // only inferlab's own teaching models have none
            continue;
        }
        CHECK_FALSE(m.published_source.empty());
        const std::uint64_t n = count_params(load_named_model(m.name)).total;
        if (m.published_exact) CHECK(n == *m.published_exact);
        // The label ("8.03B", "124M") is the count rounded, or cut (Qwen's 7.61B for 7.6156e9), to its last digit.
        const std::string& label = m.published_label;
        const double unit = label.back() == 'B' ? 1e9 : 1e6;
        const std::string digits = label.substr(0, label.size() - 1);
        const auto dot = digits.find('.');
        const int decimals = dot == std::string::npos ? 0 : static_cast<int>(digits.size() - dot - 1);
        const double scaled = static_cast<double>(n) / unit;
        const double cut = std::floor(scaled * std::pow(10.0, decimals)) / std::pow(10.0, decimals);
        CHECK((fmt::format("{:.{}f}", scaled, decimals) == digits || fmt::format("{:.{}f}", cut, decimals) == digits));
        ++checked;
    }
    CHECK(checked >= 7);
}
