#pragma once
// A small GQA model for model-level unit tests, one per seed: dim 64, FFN 96, L = 2, H_q = 8,
// H_kv = 2 (d = 8), vocab 50, S_max 64. Small enough to run every path in milliseconds.
#include <cstdint>
#include <map>
#include <memory>

#include "inferlab/model/ops/weights.hpp"

namespace inferlab::test {

// A model small enough that every path runs in milliseconds: dim 32, FFN 64, L = 2, H_q = 4,
// H_kv = 2 (GQA, d = 8), vocab 40, S_max 32, the LM head tied to the embedding.
inline model::Dims tiny_dims() {
    model::Dims d;
    d.dim = 32;
    d.hidden_dim = 64;
    d.n_layers = 2;
    d.n_heads = 4;
    d.n_kv_heads = 2;
    d.vocab_size = 40;
    d.seq_len = 32;
    d.shared_classifier = true;
    return d;
}

inline const model::Weights& small_gqa_weights(std::uint64_t seed) {
    static std::map<std::uint64_t, std::unique_ptr<model::Weights>> by_seed;
    auto& w = by_seed[seed];
    if (!w) {
        model::Dims d;
        d.dim = 64;
        d.hidden_dim = 96;
        d.n_layers = 2;
        d.n_heads = 8;
        d.n_kv_heads = 2;
        d.vocab_size = 50;
        d.seq_len = 64;
        w = model::random_weights(d, seed);
    }
    return *w;
}

}  // namespace inferlab::test
