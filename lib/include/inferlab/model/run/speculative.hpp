#pragma once
// Speculative decoding on the reference transformer (first document §3.1): a draft proposes γ
// tokens, the target scores all γ positions in one multi-token forward over its cache,
// acceptance goes left to right with min(1, p/q); at the first rejection a token is drawn from
// the residual, the rest are discarded and both caches are truncated back to the accepted
// prefix (never recomputed); when all are accepted the target's next distribution gives a
// bonus token. The acceptance arithmetic is spec-accept's (inferlab/spec.hpp).
#include <cstdint>
#include <optional>
#include <vector>

#include "inferlab/model/ops/transformer.hpp"

namespace inferlab::model {

struct Sampling {
    bool greedy = false;
    double temperature = 1.0;
    std::size_t top_k = 0;
    double top_p = 1.0;
};

// The distribution actually sampled from one row of logits (one-hot argmax when greedy).
std::vector<double> sampling_distribution(const MatrixRM& logits, Eigen::Index row, const Sampling& s);

enum class AcceptRule {
    Exact,      // min(1, p/q), residual on rejection: preserves the target's distribution
    Threshold,  // keep a draft whenever q(x) ≥ threshold, else sample from p: a biased shortcut
};

struct SpeculateOptions {
    int gamma = 4;
    int new_tokens = 32;
    Sampling sampling;
    AcceptRule rule = AcceptRule::Exact;
    double threshold = 0.3;
    std::uint64_t seed = 1;
    // The pass of both models; each model's backend holds how it computes (for the CPU: threads,
    // kernels, its own weights at a dtype), so the draft needs no options of its own.
    ForwardOptions forward;
};

struct SpeculateResult {
    std::vector<int> tokens;                 // generated (prompt excluded), exactly new_tokens
    int rounds = 0, target_passes = 0, draft_passes = 0;
    std::vector<std::uint64_t> judged, accepted;  // per draft position 1..γ
    std::vector<double> predicted_accept;        // per position: Σ over judgements of Σ_x min(p, q)
    std::uint64_t drafts_discarded = 0;
    // Σ over rounds of (accepted drafts + 1): what the rounds produced. The last round may produce
    // more than new_tokens still needed; `tokens` keeps only those, this counts all of them.
    std::uint64_t produced = 0;
};

SpeculateResult speculative_generate(const Transformer& target, const Transformer& draft, const std::vector<int>& prompt,
                                     const SpeculateOptions& opt);

// Plain autoregressive sampling from one model, for comparison.
std::vector<int> plain_generate(const Transformer& m, const std::vector<int>& prompt, int new_tokens, const Sampling& s,
                                std::uint64_t seed, const ForwardOptions& fwd = {});

}  // namespace inferlab::model
