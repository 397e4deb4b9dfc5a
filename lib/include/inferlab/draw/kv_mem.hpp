#pragma once
// The KV cache's figures of the documents: GQA head mapping (Figure 6), the substituted cache
// memory (Figure 7), each layer's own cache (Figure 5) and the second document's Q/K/V projections.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/draw/catalog.hpp"

namespace inferlab::figures {

// The GQA head mapping, as the transformer reads it: query head h uses K/V head
// h / (H_q / H_kv). Needs H_kv ≥ 1 dividing H_q, and h < H_q (InputError otherwise).
std::uint64_t gqa_kv_head(std::uint64_t h, std::uint64_t h_q, std::uint64_t h_kv);

// The cache shape of Figures 5, 7 and 9 (first document §2.1.1: L = 32, S = 8192, H_q = 32,
// H_kv = 8, d = 128, BF16).
struct KvShape {
    std::uint64_t layers = 32, seq_len = 8192, q_heads = 32, kv_heads = 8, head_dim = 128;
    std::uint32_t bits = 16;
    std::string dtype = "bf16";
};

// Figure 6: the same H_q query heads against each H_kv given (the document: 4 against 4, 2, 1).
struct HeadMapInputs {
    std::uint64_t q_heads = 4;
    std::vector<std::uint64_t> kv_heads = {4, 2, 1};
};
std::string fig6_head_mapping(const HeadMapInputs& in);

// Figure 7: M_KV = 2·L·B·S·H_kv·d·b for H_kv = H_q (MHA) and the H_kv given, at B = 1 and `batch`.
struct KvSubstitutionInputs {
    KvShape shape;
    std::uint64_t batch = 8;
};
std::string fig7_kv_substitution(const KvSubstitutionInputs& in);

// Second document, Figure 1: Q, K and V from the hidden state by learned projections (the
// document: hidden 4096, H_q = 32, H_kv = 8, d = 128: Q 4096 wide, K and V 1024 each).
struct ProjectionInputs {
    std::uint64_t hidden = 4096, q_heads = 32, kv_heads = 8, head_dim = 128;
    std::uint32_t bits = 16;
    std::string dtype = "bf16";
};
std::string doc2_fig1_projections(const ProjectionInputs& in);

// Figure 5: every layer holds its own cache, of its own bytes (kv_bytes per layer).
std::string fig5_layer_caches(const KvShape& shape, std::uint64_t shown_positions = 6);

}  // namespace inferlab::figures
