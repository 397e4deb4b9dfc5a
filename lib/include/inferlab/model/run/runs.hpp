#pragma once
// One library call per `inferlab model` subcommand that runs the reference model (logits,
// check-cache, generate): each returns a result struct that the app prints and a unit test reads.
// Errors name no command-line flag: where a rule concerns a caller's value, the message names
// the quantity ("tokens", "chunk") and the app checks its flags before calling.
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/base/rng.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/compare.hpp"

namespace inferlab::model {

// Where the K/V of earlier positions come from.
enum class CachePath {
    NoCache,     // every position recomputes its whole prefix (the ground truth)
    Contiguous,  // [H_kv, S_max, d] per layer for K and for V
    Paged,       // fixed-size blocks from a shuffled free list, a block table per sequence
};
std::string to_string(CachePath p);  // "nocache", "contiguous", "paged"

struct PathChoice {
    CachePath path = CachePath::Contiguous;
    int block_size = 16;          // paged: tokens per block
    std::uint64_t pool_seed = 1;  // paged: the shuffle of the free list
};

// `n` token ids drawn uniformly from the vocabulary by the project's Rng (seeded).
std::vector<int> random_tokens(const Dims& d, std::size_t n, std::uint64_t seed);

// The `k` highest logits of row `row`, best first (ties: the lower id first).
std::vector<int> top_tokens(const MatrixRM& logits, Eigen::Index row, int k);

// ---- logits ----
struct LogitsResult {
    CachePath path = CachePath::Contiguous;
    std::vector<int> tokens;
    MatrixRM logits;                    // [tokens, vocab]
    std::vector<std::vector<int>> top;  // [tokens][5]: each position's five most likely next tokens
};
LogitsResult logits_along(const Transformer& m, const std::vector<int>& tokens, const PathChoice& p,
                          const ForwardOptions& opt);

// ---- check-cache (the first document's Figure 17) ----
// The same tokens through the no-cache path (the reference), a contiguous cache, a paged cache,
// the other attention form (plain ↔ online) on a contiguous cache, and a chunked prefill (`chunk`
// tokens per forward, masks offset by the real history); each compared with the reference.
// The tokens check-cache compares when none are given: `n` random tokens (default 64) seeded by
// the pool's seed + 1000, apart from the free list's shuffle. One place for `model check-cache`
// and `figure doc1-fig17`, so the figure shows what the command prints for the same flags.
inline constexpr int kCheckCacheDefaultTokens = 64;
inline constexpr std::uint64_t kCheckCacheTokenSeedOffset = 1000;
inline std::vector<int> check_cache_tokens(const Dims& d, std::size_t n, std::uint64_t pool_seed) {
    return random_tokens(d, n, pool_seed + kCheckCacheTokenSeedOffset);
}

struct CheckCacheInputs {
    std::vector<int> tokens;
    int chunk = 5;                   // tokens per forward of the chunked prefill, ≥ 1
    int block_size = 16;             // paged cache
    std::uint64_t pool_seed = 1;
    double rel_tolerance = 1e-5;     // of each position's largest logit: float32 sums in a different order per path
};
struct CheckCacheRow {
    int pos = 0;
    // max |logit − no-cache logit| at this position, per path
    double contiguous = 0, paged = 0, other_attention = 0, chunked = 0;
    // max(1, max |no-cache logit|) at this position (relative_scale): what rel_tolerance is a
    // fraction of, so the position's absolute tolerance is rel_tolerance × scale (compare_logits' max_rel).
    double scale = 1;
    double tolerance = 0;  // rel_tolerance × scale: a path's difference above it fails the check
};
struct CheckCacheResult {
    std::vector<int> tokens;
    AttentionKind other_attention = AttentionKind::Online;  // the form compared beside the chosen one
    std::vector<CheckCacheRow> rows;
    LogitsDiff worst;             // the largest difference of any path, absolute and relative
    std::string worst_path;       // which path holds worst.max_rel ("contiguous", "paged", "other_attention", "chunked")
    double rel_tolerance = 1e-5;
    bool agree = true;            // worst.max_rel <= rel_tolerance
    int chunk = 5, block_size = 16;  // the inputs' chunked prefill and paged block size, for the printers
};
// InputError when `opt` carries bf16 weights (they serve steps of up to 16 rows only, so the
// no-cache pass would read float32 and the paths would differ by rounding, not by a cache bug),
// or int8/int4 weights through int8 activations (Int8Dot: the attention forms' last-bit
// differences can move an activation across a rounding boundary, a whole level), for no tokens,
// or for chunk < 1.
CheckCacheResult check_cache(const Transformer& m, const CheckCacheInputs& in, const ForwardOptions& opt);

// ---- generate ----
struct Sampling {
    double temperature = 0;   // 0: greedy (the argmax)
    std::size_t top_k = 0;    // 0: every token
    double top_p = 1;         // 1: every token
    std::uint64_t seed = 1;   // of the draws only (not the weights)
};
// The next token from one row of logits: the argmax at temperature 0, else a draw from spec's
// sampling_distribution with the project's Rng.
int sample_token(const MatrixRM& logits, Eigen::Index row, const Sampling& s, Rng& rng);

struct GenerateInputs {
    std::vector<int> prompt;   // ≥ 1 token
    std::uint64_t steps = 8;   // tokens to generate, ≥ 1; prompt + steps must fit the maximum sequence
    Sampling sampling;
    PathChoice path;           // contiguous or paged (a cache is what generate shows)
};
struct GenerateResult {
    std::vector<int> prompt, generated;
    std::vector<StepTrace> trace;  // the prefill, then one decode step per generated token but the last
};
// InputError for an empty prompt, steps = 0, the no-cache path, or prompt + steps beyond the
// model's maximum sequence length.
GenerateResult generate(const Transformer& m, const GenerateInputs& in, const ForwardOptions& opt);

}  // namespace inferlab::model
