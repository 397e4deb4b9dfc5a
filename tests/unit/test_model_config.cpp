#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "inferlab/error.hpp"
#include "inferlab/model_config.hpp"

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
    // GPT-2 small: 124M published (124,439,808 with biases we do not count beyond QKV).
    auto gpt2 = count_params(load_named_model("gpt2"));
    CHECK(gpt2.total > 123000000ULL);
    CHECK(gpt2.total < 125000000ULL);
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
    // Published 671B total, 37B active; the count leaves out the multi-token-prediction layer.
    auto p = count_params(c);
    CHECK(p.total > 650000000000ULL);
    CHECK(p.total < 680000000000ULL);
    CHECK(p.active_per_token > 35000000000ULL);
    CHECK(p.active_per_token < 40000000000ULL);
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
