#include "inferlab/model/run/runs.hpp"

#include <algorithm>
#include <memory>
#include <numeric>

#include "inferlab/base/error.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/qweights.hpp"

namespace inferlab::model {

std::string to_string(CachePath p) {
    switch (p) {
        case CachePath::NoCache: return "nocache";
        case CachePath::Contiguous: return "contiguous";
        case CachePath::Paged: return "paged";
    }
    return "?";
}

std::vector<int> random_tokens(const Dims& d, std::size_t n, std::uint64_t seed) {
    Rng rng(seed);
    std::vector<int> t(n);
    for (auto& x : t) x = static_cast<int>(rng.below(static_cast<std::uint64_t>(d.vocab_size)));
    return t;
}

std::vector<int> top_tokens(const MatrixRM& logits, Eigen::Index row, int k) {
    std::vector<int> idx(static_cast<std::size_t>(logits.cols()));
    std::iota(idx.begin(), idx.end(), 0);
    const std::size_t n = std::min(idx.size(), static_cast<std::size_t>(std::max(k, 0)));
    std::partial_sort(idx.begin(), idx.begin() + std::ptrdiff_t(n), idx.end(), [&](int a, int b) {
        return logits(row, a) > logits(row, b) || (logits(row, a) == logits(row, b) && a < b);
    });
    idx.resize(n);
    return idx;
}

namespace {

void require_tokens(const Dims& d, const std::vector<int>& tokens) {
    if (tokens.empty()) throw InputError("tokens", "", N_("need at least one token"));
    check_tokens(d, tokens, "tokens");
    if (tokens.size() > static_cast<std::size_t>(d.seq_len))
        throw InputError("tokens", std::to_string(tokens.size()) + " tokens",
                         N_("is longer than the model's maximum sequence length {0}"), {std::to_string(d.seq_len)});
}

// A paged pool for the one sequence a run caches: room for its positions, with spare blocks so
// that the shuffled free list scatters them (a pool of exactly the blocks needed would give one
// block its own index, and a paged path that ignored the block table would pass). At least 64
// blocks or four times the need, at most ceil(seq_len / block): a header's seq_len of millions
// allocates nothing the run will not use.
std::unique_ptr<BlockPool> pool_for(const Transformer& m, const PathChoice& p, int positions) {
    if (p.block_size < 1) throw InputError("block size", std::to_string(p.block_size), N_("must be at least 1 token"));
    const auto ceil_div = [](int a, int b) { return (a - 1) / b + 1; };  // ceil without the overflow of a + b
    const std::int64_t need = ceil_div(positions, p.block_size);
    const int blocks = static_cast<int>(std::min<std::int64_t>(ceil_div(m.dims().seq_len, p.block_size), std::max<std::int64_t>(64, 4 * need)));
    return std::make_unique<BlockPool>(m.dims(), p.block_size, blocks, p.pool_seed, m.backend());
}

MatrixRM run_path(const Transformer& m, const std::vector<int>& tokens, const PathChoice& p, const ForwardOptions& opt) {
    if (p.path == CachePath::NoCache) return logits_without_cache(m, tokens, opt);
    if (p.path == CachePath::Contiguous) {
        ContiguousCache cache(m.dims(), m.backend(), static_cast<int>(tokens.size()));
        return m.forward(tokens, cache, opt);
    }
    auto pool = pool_for(m, p, static_cast<int>(tokens.size()));
    PagedCache cache(*pool, m.dims());
    return m.forward(tokens, cache, opt);
}

// The tokens fed `chunk` at a time into one contiguous cache: [tokens, vocab].
MatrixRM chunked_prefill(const Transformer& m, const std::vector<int>& tokens, int chunk, const ForwardOptions& opt) {
    MatrixRM out(static_cast<Eigen::Index>(tokens.size()), m.dims().vocab_size);
    ContiguousCache cache(m.dims(), m.backend(), static_cast<int>(tokens.size()));
    for (std::size_t s = 0; s < tokens.size(); s += std::size_t(chunk)) {
        const std::size_t e = std::min(tokens.size(), s + std::size_t(chunk));
        const MatrixRM part = m.forward(std::vector<int>(tokens.begin() + std::ptrdiff_t(s), tokens.begin() + std::ptrdiff_t(e)),
                                        cache, opt);
        out.middleRows(Eigen::Index(s), part.rows()) = part;
    }
    return out;
}

}  // namespace

LogitsResult logits_along(const Transformer& m, const std::vector<int>& tokens, const PathChoice& p,
                          const ForwardOptions& opt) {
    require_tokens(m.dims(), tokens);
    LogitsResult r;
    r.path = p.path;
    r.tokens = tokens;
    r.logits = run_path(m, tokens, p, opt);
    for (Eigen::Index i = 0; i < r.logits.rows(); ++i) r.top.push_back(top_tokens(r.logits, i, 5));
    return r;
}

CheckCacheResult check_cache(const Transformer& m, const CheckCacheInputs& in, const ForwardOptions& opt) {
    require_tokens(m.dims(), in.tokens);
    if (in.chunk < 1) throw InputError("chunk", std::to_string(in.chunk), N_("must be at least 1 token"));
    if (const CpuBackendOptions* cpu = cpu_options(m.backend()); cpu && cpu->bf16)
        throw InputError("weights", "bf16",
                         N_("cannot compare cache paths: bf16 weights serve steps of up to 16 rows only, so the no-cache "
                            "pass would read float32 (use fp32, int8 or int4)"));
    if (const CpuBackendOptions* cpu = cpu_options(m.backend()); cpu && cpu->qweights && cpu->qweights->arith() == QArith::Int8Dot)
        throw InputError("INFERLAB_QUANT_ARITH", "int8",
                         N_("cannot compare cache paths through int8 activations: the attention forms' last-bit "
                            "differences can move an activation across a rounding boundary, a whole level (unset "
                            "INFERLAB_QUANT_ARITH or set it to float: check-cache then runs float32 activations)"));
    CheckCacheResult r;
    r.tokens = in.tokens;
    r.rel_tolerance = in.rel_tolerance;
    r.chunk = in.chunk;
    r.block_size = in.block_size;
    const PathChoice contiguous{CachePath::Contiguous, in.block_size, in.pool_seed};
    const MatrixRM none = run_path(m, in.tokens, {CachePath::NoCache, in.block_size, in.pool_seed}, opt);
    ForwardOptions other = opt;
    r.other_attention = other.attention = opt.attention == AttentionKind::Plain ? AttentionKind::Online : AttentionKind::Plain;
    const std::vector<std::pair<std::string, MatrixRM>> paths = {
        {"contiguous", run_path(m, in.tokens, contiguous, opt)},
        {"paged", run_path(m, in.tokens, {CachePath::Paged, in.block_size, in.pool_seed}, opt)},
        {"other_attention", run_path(m, in.tokens, contiguous, other)},
        {"chunked", chunked_prefill(m, in.tokens, in.chunk, opt)}};
    std::vector<std::vector<double>> per_row;  // [path][position]: max |Δ logit| against no-cache
    for (const auto& [name, logits] : paths) per_row.push_back(row_max_abs(logits, none));
    for (std::size_t i = 0; i < std::size_t(none.rows()); ++i) {
        const double scale = relative_scale(none, static_cast<Eigen::Index>(i));
        r.rows.push_back({static_cast<int>(i), per_row[0][i], per_row[1][i], per_row[2][i], per_row[3][i], scale,
                          in.rel_tolerance * scale});
    }
    // The largest relative and the largest absolute difference may sit on different paths.
    for (std::size_t k = 0; k < paths.size(); ++k) {
        const LogitsDiff d = compare_logits(paths[k].second, none);
        if (k == 0 || d.max_rel > r.worst.max_rel) {
            r.worst.max_rel = d.max_rel, r.worst.rel_row = d.rel_row, r.worst.rel_col = d.rel_col;
            r.worst_path = paths[k].first;
        }
        if (k == 0 || d.max_abs > r.worst.max_abs) r.worst.max_abs = d.max_abs, r.worst.abs_row = d.abs_row, r.worst.abs_col = d.abs_col;
    }
    r.agree = r.worst.max_rel <= in.rel_tolerance;
    return r;
}

int sample_token(const MatrixRM& logits, Eigen::Index row, const Sampling& s, Rng& rng) {
    if (s.temperature == 0) {
        Eigen::Index best = 0;
        logits.row(row).maxCoeff(&best);
        return static_cast<int>(best);
    }
    std::vector<double> l(logits.row(row).data(), logits.row(row).data() + logits.cols());
    return static_cast<int>(rng.categorical(sampling_distribution(l, s.temperature, s.top_k, s.top_p)));
}

GenerateResult generate(const Transformer& m, const GenerateInputs& in, const ForwardOptions& opt) {
    const Dims& d = m.dims();
    require_tokens(d, in.prompt);
    if (in.steps == 0) throw InputError("tokens to generate", "0", N_("must be at least 1"));
    if (in.steps > static_cast<std::uint64_t>(d.seq_len) - in.prompt.size())
        throw InputError("tokens to generate", std::to_string(in.steps),
                         N_("with the {0}-token prompt exceeds the model's maximum sequence length {1}"),
                         {std::to_string(in.prompt.size()), std::to_string(d.seq_len)});
    // The prompt and every generated token but the last are fed: the cache holds no more.
    const int positions = static_cast<int>(in.prompt.size() + in.steps - 1);
    std::unique_ptr<BlockPool> pool;
    std::unique_ptr<KvCache> cache;
    if (in.path.path == CachePath::Contiguous) cache = std::make_unique<ContiguousCache>(d, m.backend(), positions);
    else if (in.path.path == CachePath::Paged) {
        pool = pool_for(m, in.path, positions);
        cache = std::make_unique<PagedCache>(*pool, d);
    } else
        throw InputError("cache path", to_string(in.path.path), N_("must be contiguous or paged for generate"));
    GenerateResult r;
    r.prompt = in.prompt;
    Rng rng(in.sampling.seed);
    StepTrace tr;
    MatrixRM logits = m.forward(in.prompt, *cache, opt, &tr);
    r.trace.push_back(tr);
    for (std::uint64_t s = 0; s < in.steps; ++s) {
        r.generated.push_back(sample_token(logits, logits.rows() - 1, in.sampling, rng));
        if (s + 1 == in.steps) break;
        logits = m.forward(std::vector<int>{r.generated.back()}, *cache, opt, &tr);
        r.trace.push_back(tr);
    }
    return r;
}

}  // namespace inferlab::model
