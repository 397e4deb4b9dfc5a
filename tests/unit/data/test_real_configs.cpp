// Real published config.json files (tests/data/configs/, sources in its README.md): each model's
// parameter count against its published figure, and its KV bytes at two lengths. Every expected
// value is worked out by hand in the comment beside it from the config's own numbers, never
// copied from inferlab's output. Notation: L layers, H_kv K/V heads, d head width, b bytes per
// element, W sliding window; one token of one layer holds 2·H_kv·d·b bytes (K and V).
#include <catch2/catch.hpp>

#include "inferlab/base/error.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/data/model_config.hpp"

using namespace inferlab;

namespace {

ModelConfig cfg(const std::string& file) { return load_config_file(INFERLAB_TEST_DATA "/configs/" + file); }

std::uint64_t kv_at(const ModelConfig& c, std::uint32_t bits, std::uint64_t seq_len) {
    return kv_bytes(kv_spec_from_config(c, bits), {seq_len}).total_bytes;
}

}  // namespace

TEST_CASE("real config Llama 3.2 1B: tied head, 1,235,814,400 parameters", "[config][real]") {
    ModelConfig c = cfg("llama-3.2-1b.json");
    // emb 128256·2048 = 262,668,288 (tied: no separate head)
    // per layer: q 2048·2048 + k,v 2·2048·512 + o 2048·2048 = 10,485,760; FFN 3·2048·8192 = 50,331,648;
    //   norms 2·2048 → 60,821,504; ×16 = 973,144,064; final norm 2048
    // total 262,668,288 + 973,144,064 + 2,048 = 1,235,814,400 (published 1.24B; safetensors 2,471,628,800 B / 2)
    CHECK(count_params(c).total == 1235814400ULL);
    // bf16: 2·8·64·2 = 2,048 B per layer-token; ×16 layers = 32,768 B per token
    CHECK(kv_at(c, 16, 1024) == 33554432ULL);    // 32,768 × 1,024
    CHECK(kv_at(c, 16, 8192) == 268435456ULL);   // 32,768 × 8,192
}

TEST_CASE("real config Llama 3.1 8B: 8,030,261,248 parameters", "[config][real]") {
    ModelConfig c = cfg("llama-3.1-8b-instruct.json");
    // emb and head 2·128256·4096 = 1,050,673,152
    // per layer: 2·4096·4096 + 2·4096·1024 = 41,943,040; FFN 3·4096·14336 = 176,160,768; norms 8,192
    //   → 218,112,000; ×32 = 6,979,584,000; final norm 4,096
    // total 8,030,261,248 (published 8.03B)
    CHECK(count_params(c).total == 8030261248ULL);
    // 2·8·128·2 = 4,096 B per layer-token; ×32 = 131,072 B per token
    CHECK(kv_at(c, 16, 1024) == 134217728ULL);    // 131,072 × 1,024
    CHECK(kv_at(c, 16, 8192) == 1073741824ULL);   // 131,072 × 8,192 = 1 GiB
}

TEST_CASE("real config Qwen2.5 7B: QKV biases, window off, 7,615,616,512 parameters", "[config][real]") {
    ModelConfig c = cfg("qwen2.5-7b-instruct.json");
    // emb and head 2·152064·3584 = 1,089,994,752
    // per layer: q 3584·3584 + bias 3584; k,v 2·(3584·512 + 512); o 3584·3584 → 29,364,736;
    //   FFN 3·3584·18944 = 203,685,888; norms 7,168 → 233,057,792; ×28 = 6,525,618,176; final 3,584
    // total 7,615,616,512 (published 7.61B)
    CHECK(count_params(c).total == 7615616512ULL);
    CHECK(c.window_per_layer == std::vector<std::uint64_t>(28, 0));  // use_sliding_window false
    // 2·4·128·2 = 2,048 B per layer-token; ×28 = 57,344 B per token
    CHECK(kv_at(c, 16, 1024) == 58720256ULL);      // 57,344 × 1,024
    CHECK(kv_at(c, 16, 32768) == 1879048192ULL);   // 57,344 × 32,768 (window 131072 not applied)
}

TEST_CASE("real config Qwen2.5 0.5B: tied, 494,032,768 parameters", "[config][real]") {
    ModelConfig c = cfg("qwen2.5-0.5b.json");
    // emb 151936·896 = 136,134,656 (tied)
    // per layer: q 896·896 + 896; k,v 2·(896·128 + 128); o 896·896 → 1,836,160; FFN 3·896·4864 = 13,074,432;
    //   norms 1,792 → 14,912,384; ×24 = 357,897,216; final 896
    // total 494,032,768 (published 0.49B)
    CHECK(count_params(c).total == 494032768ULL);
    // 2·2·64·2 = 512 B per layer-token; ×24 = 12,288 B per token
    CHECK(kv_at(c, 16, 1024) == 12582912ULL);      // 12,288 × 1,024
    CHECK(kv_at(c, 16, 32768) == 402653184ULL);    // 12,288 × 32,768
}

TEST_CASE("real config Qwen3 4B: q_norm and k_norm, 4,022,468,096 parameters", "[config][real]") {
    ModelConfig c = cfg("qwen3-4b.json");
    // emb 151936·2560 = 388,956,160 (tied)
    // per layer: q 2560·4096 + k,v 2·2560·1024 + o 4096·2560 = 26,214,400; q_norm + k_norm 2·128 = 256;
    //   FFN 3·2560·9728 = 74,711,040; norms 5,120 → 100,930,816; ×36 = 3,633,509,376; final 2,560
    // total 4,022,468,096 (published 4.0B)
    CHECK(count_params(c).total == 4022468096ULL);
    // 2·8·128·2 = 4,096 B per layer-token; ×36 = 147,456 B per token
    CHECK(kv_at(c, 16, 1024) == 150994944ULL);     // 147,456 × 1,024
    CHECK(kv_at(c, 16, 8192) == 1207959552ULL);    // 147,456 × 8,192
}

TEST_CASE("real config Mistral 7B v0.1: every layer slides, 7,241,732,096 parameters", "[config][real]") {
    ModelConfig c = cfg("mistral-7b-v0.1.json");
    // emb and head 2·32000·4096 = 262,144,000; layers as Llama 3 8B: 218,112,000 × 32; final 4,096
    // total 7,241,732,096 (published 7.24B)
    CHECK(count_params(c).total == 7241732096ULL);
    CHECK(c.window_per_layer == std::vector<std::uint64_t>(32, 4096));
    // 4,096 B per layer-token; at 1,024 no layer is capped: 32 × 1,024 × 4,096
    CHECK(kv_at(c, 16, 1024) == 134217728ULL);
    // at 8,192 every layer keeps W = 4,096: 32 × 4,096 × 4,096
    CHECK(kv_at(c, 16, 8192) == 536870912ULL);
}

TEST_CASE("real config Mixtral 8x7B: 46,702,792,704 parameters, 12,879,925,248 per token", "[config][real]") {
    ModelConfig c = cfg("mixtral-8x7b-v0.1.json");
    ParamCount p = count_params(c);
    // per layer: attention 41,943,040; 8 experts × 3·4096·14336 (176,160,768) = 1,409,286,144;
    //   router 4096·8 = 32,768; norms 8,192 → 1,451,270,144; ×32 = 46,440,644,608
    // emb and head 262,144,000; final 4,096 → 46,702,792,704 (published 46.7B)
    CHECK(p.total == 46702792704ULL);
    // active: 2 of 8 experts: 46,702,792,704 − 32·6·176,160,768 = 12,879,925,248 (published 12.9B)
    CHECK(p.active_per_token == 12879925248ULL);
    CHECK(p.expert_params == 176160768ULL);
    CHECK(p.moe_layers == 32);
    // sliding_window null: full attention; KV as Llama 3 8B (131,072 B per token)
    CHECK(kv_at(c, 16, 1024) == 134217728ULL);
    CHECK(kv_at(c, 16, 32768) == 4294967296ULL);   // 131,072 × 32,768 = 4 GiB
}

TEST_CASE("real config Phi-3 mini 4k: window 2047 on every layer, 3,821,079,552 parameters", "[config][real]") {
    ModelConfig c = cfg("phi-3-mini-4k-instruct.json");
    // emb and head 2·32064·3072 = 197,001,216
    // per layer: 4·3072·3072 = 37,748,736; FFN 3·3072·8192 = 75,497,472; norms 6,144 → 113,252,352;
    //   ×32 = 3,624,075,264; final 3,072 → 3,821,079,552 (published 3.8B)
    CHECK(count_params(c).total == 3821079552ULL);
    // d = 3072 / 32 = 96: 2·32·96·2 = 12,288 B per layer-token; ×32 = 393,216 B per token
    CHECK(kv_at(c, 16, 1024) == 402653184ULL);     // 393,216 × 1,024
    CHECK(kv_at(c, 16, 4096) == 804913152ULL);     // each layer capped at W = 2,047: 393,216 × 2,047
}

TEST_CASE("real config GPT-2: every bias and LayerNorm, 124,439,808 parameters", "[config][real]") {
    ModelConfig c = cfg("gpt2.json");
    // wte 50257·768 = 38,597,376; wpe 1024·768 = 786,432 (tied head)
    // per layer: ln_1 and ln_2 2·(768 + 768) = 3,072; c_attn 768·2304 + 2304 = 1,771,776;
    //   attn c_proj 768·768 + 768 = 590,592; c_fc 768·3072 + 3072 = 2,362,368; mlp c_proj 3072·768 + 768 = 2,360,064
    //   → 7,087,872; ×12 = 85,054,464; ln_f 1,536
    // total 38,597,376 + 786,432 + 85,054,464 + 1,536 = 124,439,808 (published 124M)
    CHECK(count_params(c).total == 124439808ULL);
    CHECK_FALSE(c.dtype);
    // fp32: 2·12·64·4 = 6,144 B per layer-token; ×12 = 73,728 B per token
    CHECK(kv_at(c, 32, 512) == 37748736ULL);       // 73,728 × 512
    CHECK(kv_at(c, 32, 1024) == 75497472ULL);      // 73,728 × 1,024
}

TEST_CASE("real config Gemma 7B: no tie key, Gemma's tied default, 8,537,680,896 parameters", "[config][real]") {
    ModelConfig c = cfg("gemma-7b.json");
    CHECK(c.tied_embeddings);
    CHECK_THAT(c.tied_rule.text(), Catch::Contains("GemmaConfig's default (tied)"));
    // emb 256000·3072 = 786,432,000 (tied)
    // per layer: q,k,v,o 4·3072·4096 = 50,331,648; FFN 3·3072·24576 = 226,492,416; norms 6,144 → 276,830,208;
    //   ×28 = 7,751,245,824; final 3,072 → 8,537,680,896 (published 8.54B)
    CHECK(count_params(c).total == 8537680896ULL);
    // 2·16·256·2 = 16,384 B per layer-token; ×28 = 458,752 B per token
    CHECK(kv_at(c, 16, 1024) == 469762048ULL);     // 458,752 × 1,024
    CHECK(kv_at(c, 16, 8192) == 3758096384ULL);    // 458,752 × 8,192
}

TEST_CASE("real config Gemma 2 9B: alternating windows, four norms, 9,241,705,984 parameters", "[config][real]") {
    ModelConfig c = cfg("gemma-2-9b.json");
    // emb 256000·3584 = 917,504,000 (tied by Gemma2Config's default)
    // per layer: q 3584·4096 + k,v 2·3584·2048 + o 4096·3584 = 44,040,192; FFN 3·3584·14336 = 154,140,672;
    //   four norms 4·3584 = 14,336 → 198,195,200; ×42 = 8,324,198,400; final 3,584
    // total 9,241,705,984 (published 9.24B)
    CHECK(count_params(c).total == 9241705984ULL);
    REQUIRE(c.window_per_layer.size() == 42);
    CHECK(c.window_per_layer[0] == 4096);
    CHECK(c.window_per_layer[1] == 0);
    CHECK_THAT(c.window_rule.text(), Catch::Contains("alternate"));
    // fp32: 2·8·256·4 = 16,384 B per layer-token
    CHECK(kv_at(c, 32, 1024) == 704643072ULL);     // 42 × 1,024 × 16,384
    // 21 full layers × 8,192 + 21 sliding × 4,096, × 16,384 = 4,227,858,432 (issue #14's value)
    CHECK(kv_at(c, 32, 8192) == 4227858432ULL);
}

TEST_CASE("real config Gemma 3 1B: every 6th layer global, 999,885,952 parameters", "[config][real]") {
    ModelConfig c = cfg("gemma-3-1b-it.json");
    // emb 262144·1152 = 301,989,888 (tied)
    // per layer: q 1152·1024 + k,v 2·1152·256 + o 1024·1152 = 2,949,120; q_norm + k_norm 512;
    //   FFN 3·1152·6912 = 23,887,872; norms 4·1152 = 4,608 → 26,842,112; ×26 = 697,894,912; final 1,152
    // total 999,885,952 (published: keras-hub's gemma3_1b preset "params": 999885952)
    CHECK(count_params(c).total == 999885952ULL);
    // layers 5, 11, 17, 23 full (i + 1 divisible by 6), the other 22 slide with W = 512
    std::vector<std::uint64_t> want(26, 512);
    for (std::size_t i : {5, 11, 17, 23}) want[i] = 0;
    CHECK(c.window_per_layer == want);
    // 2·1·256·2 = 1,024 B per layer-token
    CHECK(kv_at(c, 16, 1024) == 15728640ULL);     // 4 × 1,024 × 1,024 + 22 × 512 × 1,024
    CHECK(kv_at(c, 16, 8192) == 45088768ULL);     // 4 × 8,192 × 1,024 + 22 × 512 × 1,024
}

TEST_CASE("real config Gemma 3 4B: text_config with Gemma3TextConfig's defaults", "[config][real]") {
    ModelConfig c = cfg("gemma-3-4b-it.json");
    CHECK(c.text_config);
    CHECK(c.q_heads == 8);   // not in the file: Gemma3TextConfig's default
    CHECK(c.kv_heads == 4);
    CHECK(c.head_dim == 256);
    CHECK(c.vocab == 262208);
    CHECK(c.defaults_applied.size() >= 4);
    ParamCount p = count_params(c);
    // emb 262208·2560 = 671,252,480 (tied)
    // per layer: q 2560·2048 + k,v 2·2560·1024 + o 2048·2560 = 15,728,640; q/k norms 512;
    //   FFN 3·2560·10240 = 78,643,200; norms 4·2560 = 10,240 → 94,382,592; ×34 = 3,209,008,128; final 2,560
    // language model 3,880,263,168. Published 4,300,079,472 (4.3B) includes the SigLIP vision tower
    // and projector, which are not counted; keras-hub's text-only preset, with a 262,144-token
    // vocabulary, says 3,880,099,328 = 3,880,263,168 − 64·2560.
    CHECK(p.total == 3880263168ULL);
    CHECK(p.not_counted.size() == 1);
    // layers 5, 11, 17, 23, 29 full; 29 slide with W = 1,024; 2·4·256·2 = 4,096 B per layer-token
    CHECK(kv_at(c, 16, 1024) == 142606336ULL);    // 34 × 1,024 × 4,096
    CHECK(kv_at(c, 16, 8192) == 289406976ULL);    // 5 × 8,192 × 4,096 + 29 × 1,024 × 4,096
}

TEST_CASE("real config DeepSeek-V2-Lite: MLA and 64 experts, 15,706,484,224 parameters", "[config][real]") {
    ModelConfig c = cfg("deepseek-v2-lite.json");
    ParamCount p = count_params(c);
    // emb and head 2·102400·2048 = 419,430,400
    // attention per layer (no q_lora_rank): q 2048·16·192 = 6,291,456; kv_a 2048·576 = 1,179,648;
    //   kv_b 512·16·256 = 2,097,152; o 16·128·2048 = 4,194,304; kv_a norm 512 → 13,763,072; ×27 = 371,602,944
    // layer 0 dense: 3·2048·10944 = 67,239,936
    // layers 1–26: 66 experts (64 routed + 2 shared) × 3·2048·1408 (8,650,752) + router 2048·64
    //   = 571,080,704; ×26 = 14,848,098,304
    // norms 27·2·2048 + 2048 = 112,640
    // total 15,706,484,224 (published 15.7B)
    CHECK(p.total == 15706484224ULL);
    // active: 6 routed + 2 shared per MoE layer: 15,706,484,224 − 26·58·8,650,752 = 2,661,150,208
    // (published "2.4B activated", which leaves out the 0.21B embedding)
    CHECK(p.active_per_token == 2661150208ULL);
    // latent 512 + 64 = 576 elements per layer-token, bf16 1,152 B; ×27 = 31,104 B per token
    CHECK(kv_at(c, 16, 1024) == 31850496ULL);     // 31,104 × 1,024
    CHECK(kv_at(c, 16, 8192) == 254803968ULL);    // 31,104 × 8,192
}

TEST_CASE("real config DeepSeek-V3: 671,026,419,200 parameters in the main model", "[config][real]") {
    ModelConfig c = cfg("deepseek-v3.json");
    ParamCount p = count_params(c);
    // emb and head 2·129280·7168 = 1,853,358,080
    // attention per layer: q_a 7168·1536 + norm 1536; q_b 1536·128·192; kv_a 7168·576 + norm 512;
    //   kv_b 512·128·256; o 128·128·7168 → 187,107,328; ×61 = 11,413,547,008
    // 3 dense layers 3·(3·7168·18432) = 1,189,085,184
    // 58 MoE layers: 257 experts × 3·7168·2048 (44,040,192) + router 7168·256 + bias 256
    //   = 11,320,164,608; ×58 = 656,569,547,264
    // norms 61·2·7168 + 7168 = 881,664
    // total 671,026,419,200 (published: 671B main model; 685B on the Hub with the 14B MTP module)
    CHECK(p.total == 671026419200ULL);
    // active: 8 routed + 1 shared: 671,026,419,200 − 58·248·44,040,192 = 37,552,297,472 (published 37B)
    CHECK(p.active_per_token == 37552297472ULL);
    CHECK(p.not_counted.size() == 1);  // the MTP module, said in words
    // latent 576 × 2 B = 1,152 B per layer-token; ×61 = 70,272 B per token
    CHECK(kv_at(c, 16, 1024) == 71958528ULL);     // 70,272 × 1,024
    CHECK(kv_at(c, 16, 8192) == 575668224ULL);    // 70,272 × 8,192
}
