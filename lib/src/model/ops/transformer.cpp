#include "inferlab/model/ops/transformer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

#include "inferlab/base/error.hpp"

// The model's order of operations, written once: every op goes through the Backend interface,
// so the same code runs on the CPU and (with -DINFERLAB_CUDA=ON) on the GPU.
namespace inferlab::model {

void check_tokens(const Dims& d, const std::vector<int>& tokens, const std::string& where) {
    for (int t : tokens)
        if (t < 0 || t >= d.vocab_size)
            throw InputError(where, std::to_string(t),
                             "is outside the vocabulary [0, " + std::to_string(d.vocab_size - 1) + "]");
}

namespace {
// Row r's offset among this step's rows of its own cache (0, 1, ... per sequence).
std::vector<int> step_offsets(const std::vector<Row>& rows) {
    std::map<const KvCache*, int> seen;
    std::vector<int> off;
    for (const Row& r : rows) off.push_back(seen[r.cache]++);
    return off;
}
// True when every element is finite. CPU tensors are read in place; another backend's are copied
// to the host first ([rows, D] floats: small beside the layer's products).
bool all_finite(Backend& b, const Tensor& t) {
    const float* p = t.data();
    std::vector<float> host;
    if (b.memory_space() != cpu_backend().memory_space()) {
        host.resize(t.size());
        b.download(host.data(), t.data(), t.size());
        p = host.data();
    }
    // NaN and ±inf are the floats whose exponent bits are all ones. An integer OR over the bits
    // vectorises without -ffast-math (a float sum would not): about 18 µs for what one ref-110m
    // decode step checks (24 × 768 activations + 32,000 logits), against ~30 ms for the step.
    std::uint32_t bad = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
        std::uint32_t u;
        std::memcpy(&u, p + i, sizeof u);
        bad |= static_cast<std::uint32_t>((u & 0x7f800000u) == 0x7f800000u);
    }
    return bad == 0;
}

// Called once a block's output is found non-finite (its inputs were finite at the previous
// check): names the first op of the block whose output holds NaN or inf.
[[noreturn]] void non_finite(Backend& b, const std::string& where,
                             std::initializer_list<std::pair<const char*, const Tensor*>> ops, const char* last) {
    const char* op = last;
    for (const auto& [name, t] : ops)
        if (!all_finite(b, *t)) {
            op = name;
            break;
        }
    throw Error(fmt::format("the forward pass produced NaN or inf, first in {}, op '{}': the weights are too large for "
                            "float32 arithmetic (no output is given)",
                            where, op));
}

}  // namespace

std::vector<int> rope_positions(const std::vector<Row>& rows, const std::vector<int>& pos, Pitfall p) {
    return p == Pitfall::PositionRestart ? step_offsets(rows) : pos;
}
std::vector<int> mask_positions(const std::vector<Row>& rows, const std::vector<int>& pos, Pitfall p) {
    return p == Pitfall::TopLeftMask ? step_offsets(rows) : pos;
}
bool skips_cache_update(int layer, int n_layers, const std::vector<int>& pos, Pitfall p) {
    // Like WrongLayerCache, it needs history: a prefill writes every layer.
    return p == Pitfall::SkippedCacheUpdate && layer == n_layers - 1 && !pos.empty() && pos.front() > 0;
}
int attention_layer(int layer, const std::vector<int>& pos, Pitfall p) {
    // The bug of Figure 5 needs history: a prefill from position 0 computes each layer's own K/V.
    const bool history = !pos.empty() && pos.front() > 0;
    return p == Pitfall::WrongLayerCache && history ? 0 : layer;
}

MatrixRM Transformer::forward(const std::vector<Row>& rows, const ForwardOptions& opt) const {
    const Dims& D = w_.dims();
    const int R = static_cast<int>(rows.size());
    if (R == 0) return MatrixRM(0, D.vocab_size);
    // Positions: rows of one cache take consecutive positions from its current length.
    std::map<KvCache*, int> count;
    std::vector<int> pos(static_cast<std::size_t>(R)), tokens(static_cast<std::size_t>(R));
    for (int r = 0; r < R; ++r) {
        if (!rows[r].cache) throw std::logic_error("forward: a row without a cache");
        require_cache_on(*rows[r].cache, b_);
        if (rows[r].token < 0 || rows[r].token >= D.vocab_size)
            throw InputError("token", std::to_string(rows[r].token),
                             "is outside the vocabulary [0, " + std::to_string(D.vocab_size - 1) + "]");
        tokens[r] = rows[r].token;
        pos[r] = rows[r].cache->length(0) + count[rows[r].cache]++;
    }
    // In the rows' order, not the map's: a paged cache takes its blocks from the shared pool here,
    // and which sequence gets which block must not depend on where the heap put the caches.
    std::vector<const KvCache*> reserved;
    for (int r = 0; r < R; ++r) {
        KvCache* c = rows[r].cache;
        if (std::find(reserved.begin(), reserved.end(), c) != reserved.end()) continue;
        c->reserve(count[c]);
        reserved.push_back(c);
    }
    const StepRows step{rows, pos, D.head_dim(), D.n_kv_heads};
    // Positions as RoPE and the causal mask see them (the cache positions, unless a pitfall is asked for).
    const std::vector<int> rope_pos = rope_positions(rows, pos, opt.pitfall);
    const std::vector<int> mask_pos = mask_positions(rows, pos, opt.pitfall);
    const StepRows seen{rows, mask_pos, D.head_dim(), D.n_kv_heads};

    // Activations of this step, R rows (one per token fed), in the backend's memory. D = dim,
    // H_q·d = dim, H_kv·d = kv_dim, F = hidden_dim, V = vocab (llama2.c's RunState, batched by row).
    Backend& B = b_;
    // Finiteness is checked after each block: at once on the host, naming the op on failure; or,
    // where the backend defers (CUDA), recorded on the device and read once at the end of the pass,
    // so the queue never drains mid-pass. Check 2l is layer l's attention block, 2l + 1 its FFN
    // block, 2L the output head.
    const bool deferred = B.defers_finite_checks();
    Tensor x(B);    // [R, D]        the residual stream
    Tensor xn(B);   // [R, D]        x after the attention RMSNorm (then the final one)
    Tensor xf(B);   // [R, D]        x after the FFN RMSNorm (apart from xn, so that a failed check
                    //               can still read the RMSNorm of its own block)
    Tensor q(B);    // [R, H_q·d]    queries, after RoPE
    Tensor k(B);    // [R, H_kv·d]   this step's keys, after RoPE (also written to the cache)
    Tensor v(B);    // [R, H_kv·d]   this step's values (also written to the cache)
    Tensor att(B);  // [R, H_q·d]    attention output, heads side by side
    Tensor tmp(B);  // [R, D]        Wo·att, then W2·h1: what the residual adds
    Tensor h1(B);   // [R, F]        W1·xf, then silu(W1·xf) ⊙ W3·xf
    Tensor h3(B);   // [R, F]        W3·xf
    Tensor out(B);  // [R, V]        logits
    B.embed(w_.token_embedding(), tokens, x);
    B.rmsnorm(x, w_.rms_att(0), D.norm_eps, xn);
    for (int l = 0; l < D.n_layers; ++l) {
        // Q, K, V from xn, then RoPE on q and k.
        B.matmul_qkv_rope(xn, w_.wq(l), w_.wk(l), w_.wv(l), q, k, v, rope_pos, D.head_dim(), D.rope_theta, opt);
        // This layer's cache update: the new K/V go to this layer's slots only.
        if (!skips_cache_update(l, D.n_layers, pos, opt.pitfall)) {
            B.store_kv(k, v, step, l);
            for (auto& [cache, n] : count) cache->set_length(l, cache->length(l) + n);
        }
        // GQA attention, reading each row's cache in place; causal: row r sees positions ≤ pos[r].
        B.attention(q, seen, attention_layer(l, pos, opt.pitfall), opt, att);
        B.matmul(att, w_.wo(l), tmp, opt);
        // The residual add, then the FFN's RMSNorm (and the block's check, where it is deferred).
        B.add_rmsnorm(x, tmp, w_.rms_ffn(l), D.norm_eps, xf, deferred ? 2 * l : -1);
        // k and v hold this step's new K/V (also stored in the cache); q and k are after RoPE.
        if (!deferred && !all_finite(B, x))
            non_finite(B, fmt::format("layer {}", l),
                       {{"attention RMSNorm", &xn}, {"Q projection", &q}, {"K projection", &k}, {"V projection", &v},
                        {"attention", &att}, {"output projection Wo", &tmp}},
                       "residual add after attention");
        B.matmul_swiglu(xf, w_.w1(l), w_.w3(l), h1, h3, opt);  // silu(w1·x) ⊙ (w3·x)
        B.matmul(h1, w_.w2(l), tmp, opt);
        // The residual add, then the next layer's attention RMSNorm (or the final one).
        B.add_rmsnorm(x, tmp, l + 1 < D.n_layers ? w_.rms_att(l + 1) : w_.rms_final(), D.norm_eps, xn,
                      deferred ? 2 * l + 1 : -1);
        if (!deferred && !all_finite(B, x))
            non_finite(B, fmt::format("layer {}", l),
                       {{"FFN RMSNorm", &xf}, {"W3 projection", &h3}, {"W1 projection and SwiGLU", &h1},
                        {"W2 projection", &tmp}},
                       "residual add after the FFN");
    }
    B.matmul(xn, w_.classifier(), out, opt);
    if (deferred) {
        B.record_finite(out, 2 * D.n_layers);
        if (const int bad = B.first_non_finite(); bad >= 0)
            throw Error(fmt::format("the forward pass produced NaN or inf, first in {} (the {} backend checks each "
                                    "block on the device and reads the checks once a pass, so it names the block, "
                                    "not the op): the weights are too large for float32 arithmetic (no output is given)",
                                    bad == 2 * D.n_layers ? std::string("the output head")
                                                          : fmt::format("layer {}, {} block", bad / 2,
                                                                        bad % 2 == 0 ? "attention" : "FFN"),
                                    B.name()));
    } else if (!all_finite(B, out)) {
        non_finite(B, "the output head", {{"final RMSNorm", &xn}}, "classifier");
    }
    MatrixRM logits;
    B.to_host(out, logits);
    return logits;
}

MatrixRM Transformer::forward(const std::vector<int>& tokens, KvCache& cache, const ForwardOptions& opt,
                              StepTrace* trace) const {
    const int start = cache.length(0);
    std::vector<Row> rows;
    for (int t : tokens) rows.push_back({t, &cache});
    MatrixRM out = forward(rows, opt);
    if (trace) {
        const Dims& D = w_.dims();
        const int T = static_cast<int>(tokens.size());
        trace->phase = start == 0 || T > 1 ? "prefill" : "decode";
        trace->tokens = tokens;
        trace->start_pos = start;
        trace->cache_len.clear();
        for (int l = 0; l < D.n_layers; ++l) trace->cache_len.push_back(cache.length(l));
        trace->q_shape = fmt::format("[1,{},{},{}]", D.n_heads, T, D.head_dim());
        trace->kv_new_shape = fmt::format("[1,{},{},{}]", D.n_kv_heads, T, D.head_dim());
        trace->kv_cached_shape = fmt::format("[1,{},{},{}]", D.n_kv_heads, start + T, D.head_dim());
        trace->scores_shape = fmt::format("[1,{},{},{}]", D.n_heads, T, start + T);
    }
    return out;
}

MatrixRM logits_without_cache(const Transformer& m, const std::vector<int>& tokens, const ForwardOptions& opt) {
    const Dims& D = m.dims();
    MatrixRM out(static_cast<Eigen::Index>(tokens.size()), D.vocab_size);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        // Thrown away: nothing is reused between steps. It holds the t + 1 positions fed.
        ContiguousCache scratch(D, m.backend(), static_cast<int>(t + 1));
        std::vector<int> prefix(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(t + 1));
        MatrixRM all = m.forward(prefix, scratch, opt);
        out.row(static_cast<Eigen::Index>(t)) = all.row(all.rows() - 1);
    }
    return out;
}

}  // namespace inferlab::model
