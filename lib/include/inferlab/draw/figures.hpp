#pragma once
// The documents' figures, redrawn from the library's own computation (issue #17). Each figure
// takes its inputs (the document's by default), calls the function that computes its numbers
// (kv.hpp, roofline.hpp, spec.hpp, bestofn.hpp, quant.hpp, the paged cache) and draws the
// result with svg.hpp. The numbers shown are the result's, never typed in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/paged_sim.hpp"
#include "inferlab/model/run/runs.hpp"

namespace inferlab::figures {

// One figure of the documents: what `inferlab figure --list` prints.
struct FigureInfo {
    std::string name;      // "doc1-fig9"
    std::string document;  // the seed file
    std::string section;   // "§2.1.3"
    std::string caption;   // the document's caption, in English
    bool drawn = false;    // false: a conceptual figure, listed with the reason
    std::string reason;    // why it is not drawn (conceptual figures only)
};
// Every figure of both documents, in document order.
const std::vector<FigureInfo>& catalog();

// Errors name an input by the documents' symbol (InputError::where(): "H_q", "H_kv", "S",
// "tile", "W"), never by a command-line flag: the caller maps the symbol to its own flag.

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

// Figure 8: block tables of a real paged cache (model::simulate_paged), at one step.
std::string fig8_paged_blocks(const model::PagedSimResult& sim, std::size_t step);

// Figure 9: bytes one decode step reads, D_B = W + B·M_KV, for each batch (roofline.hpp).
struct DecodeReadInputs {
    std::uint64_t weight_bytes = 14'000'000'000;  // W = 14 GB (7·10^9 parameters × 2 B)
    KvShape shape;                                // M_KV per request from the shape (1 GiB) ...
    std::optional<std::uint64_t> kv_bytes_per_request;  // ... or given, as decode-roofline takes it
    double bandwidth = 1e12;                      // β = 1 TB/s
    std::vector<std::uint64_t> batches = {1, 8};
};
std::string fig9_decode_reads(const DecodeReadInputs& in);
// The same figure for decode-roofline's request and result (figure doc1-fig9 takes that command's
// flags): one bar per row, in the order asked; `sources` are printed among the inputs.
std::string fig9_decode_reads(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources);

// Figure 10: the causal relations of S positions, the same relations in tiles, and a sliding window.
struct AttentionMaskInputs {
    std::uint64_t seq_len = 12, tile = 4, window = 4;
};
std::string fig10_attention_masks(const AttentionMaskInputs& in);

// Figure 11: one speculative round (spec.hpp walk_round): γ drafts, judged left to right.
struct RoundInputs {
    std::size_t gamma = 4;
    std::vector<std::string> outcomes = {"accept", "accept", "reject"};
};
std::string fig11_round(const RoundInputs& in);

// Figure 12: where a round stops: P(k drafts accepted), k = 0..γ, at acceptance rate α.
struct AcceptedCountInputs {
    double alpha = 0.8;
    std::size_t gamma = 4;
};
std::string fig12_accepted_counts(const AcceptedCountInputs& in);

// Figure 13: acceptance mass and residual on a vocabulary (the document: p = 0.6,0.3,0.1, q = 0.4,0.4,0.2).
struct AcceptanceInputs {
    std::vector<double> p = {0.6, 0.3, 0.1}, q = {0.4, 0.4, 0.2};
};
std::string fig13_acceptance(const AcceptanceInputs& in);

// Figure 14: coverage 1 − (1 − p)^N against the probability a verifier selects a correct one.
struct CoverageInputs {
    double p = 0.3;
    std::vector<std::uint64_t> n = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16};
    double tpr = 0.9, fpr = 0.2;  // the verifier (not in the document: printed in the figure)
    std::uint64_t marked_n = 4;   // the document's N = 4
};
std::string fig14_coverage(const CoverageInputs& in);
// The same figure for best-of-n's request and result (figure doc1-fig14 takes that command's
// flags): coverage, every strategy asked for, the target; a marker at `marked_n` when it is a row.
std::string fig14_coverage(const BestOfNRequest& req, const BestOfNResult& res, std::uint64_t marked_n);

// Figure 15: the uniform grid x̂ = Δ·clip(round(x/Δ), −Q, Q) (the document: x = 0.37, Δ = 0.1, Q = 7).
struct GridInputs {
    double x = 0.37, step = 0.1;
    unsigned bits = 4;  // Q = 2^(b−1) − 1 = 7
};
std::string fig15_quant_grid(const GridInputs& in);

// Figure 4: one layer's cache as a real run appends to it: a prefill, then decode steps, each
// step's query reading every cached K/V and appending its own (model::StepTrace of each step).
std::string fig4_cache_append(const std::vector<model::StepTrace>& steps);

// Second document, Figure 1: Q, K and V from the hidden state by learned projections (the
// document: hidden 4096, H_q = 32, H_kv = 8, d = 128: Q 4096 wide, K and V 1024 each).
struct ProjectionInputs {
    std::uint64_t hidden = 4096, q_heads = 32, kv_heads = 8, head_dim = 128;
    std::uint32_t bits = 16;
    std::string dtype = "bf16";
};
std::string doc2_fig1_projections(const ProjectionInputs& in);

// Figure 17: the cache paths compared on fixed inputs (model::check_cache): per position, each
// path's max |logit − no-cache logit| on a log axis, with the verdict's tolerance
// rel_tolerance · max(1, max |logit|) as a line. Exact agreement (0) is drawn at the axis floor
// and its point's data-value stays 0.
std::string fig17_cache_paths(const model::CheckCacheResult& r);

// Figure 5: every layer holds its own cache, of its own bytes (kv_bytes per layer).
std::string fig5_layer_caches(const KvShape& shape, std::uint64_t shown_positions = 6);

}  // namespace inferlab::figures
