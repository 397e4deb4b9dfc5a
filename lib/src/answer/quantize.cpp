#include "inferlab/answer/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "inferlab/base/error.hpp"
#include "inferlab/base/rational.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/kv.hpp"

namespace inferlab {

ValueQuant quantize_value(const std::string& x_text, const std::string& step_text, std::int64_t qmax, Rounding rule,
                          Rng* rng, const std::string& where_x, const std::string& where_step) {
    const double x = parse_real(where_x, x_text);
    const double step = parse_real(where_step, step_text);
    if (!(step > 0) || !std::isfinite(step)) throw InputError(where_step, step_text, N_("must be greater than 0"));
    if (!std::isfinite(x / step) || std::fabs(x / step) > 9e15)
        throw InputError(where_x, x_text, N_("is too large for this step (x/Δ must stay below 9e15)"));
    ValueQuant v;
    v.rounding = rule;
    // Decimals a person types (0.15, 0.1) are quantized as the fractions they name, so that a
    // tie on paper is a tie here; anything longer, or a fraction past 64 bits, uses doubles.
    std::optional<ScalarQuant> exact;
    try {
        if (is_short_decimal(x_text) && is_short_decimal(step_text)) {
            try {
                exact = quantize_scalar_exact(parse_rational(where_x, x_text), parse_rational(where_step, step_text),
                                              qmax, rule, rng);
            } catch (const OverflowError&) {  // a fraction past 64 bits: doubles below
            }
        }
        v.q = exact ? *exact : quantize_scalar(x, step, qmax, rule, rng);
    } catch (const InputError& e) {  // the grid's own rule (Q·Δ finite), said of the caller's flag
        if (e.where() == "step Δ") throw e.renamed(where_step).with_value(step_text);
        throw;
    }
    v.half_step = step / 2;
    v.abs_error = std::fabs(v.q.error);
    v.within_half_step = within_half_step(v.q);
    return v;
}

ErrorHistogram error_histogram(const std::vector<double>& x, const std::vector<double>& xhat, std::size_t bins) {
    if (x.size() != xhat.size() || bins == 0) throw std::invalid_argument("error_histogram: sizes differ or no bins");
    double m = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(xhat[i] - x[i]));
    ErrorHistogram h;
    // Halved before doubling: 2·max|err| overflows near 1e308, and a subnormal max|err| makes
    // bins of width 0 (then the range is [−1, 1], as for no error at all).
    const double width = m / static_cast<double>(bins) * 2;
    h.hi = width > 0 && std::isfinite(width) ? m : 1;
    h.lo = -h.hi;
    h.counts.assign(bins, 0);
    const double w = h.hi / static_cast<double>(bins) * 2;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double e = xhat[i] - x[i];
        double b = std::floor(e / w + static_cast<double>(bins) / 2);
        if (!std::isfinite(b)) b = e > 0 ? static_cast<double>(bins) : 0;  // an infinite or NaN error: an end bin
        // The largest error sits on the upper edge: it belongs to the last bin.
        h.counts[static_cast<std::size_t>(std::clamp(b, 0.0, static_cast<double>(bins - 1)))]++;
    }
    return h;
}

namespace {

void check_range(const Matrix& m, const StorageFormat& format, const ValuesWhere& where) {
    const DTypeRange r = dtype_range(format.source_dtype);
    for (double v : m.v)
        if (v < r.lo || v > r.hi)
            throw InputError(where.values, fmt::format("{:.8g}", v),
                             N_("is outside the range of the source dtype {0} ({1}): [{2}, {3}]"),
                             {format.source_dtype, where.source_dtype, fmt::format("{:.8g}", r.lo),
                              fmt::format("{:.8g}", r.hi)});
}

void check_scales(const QuantResult& q, const StorageFormat& format, const ValuesWhere& where) {
    const DTypeRange r = dtype_range(format.scale_dtype);
    for (double s : q.scales)
        if (s > r.hi)
            throw InputError(where.scale_dtype, format.scale_dtype,
                             N_("cannot hold the scale Δ = {0} these values need (its largest value is {1})"),
                             {fmt::format("{:.8g}", s), fmt::format("{:.8g}", r.hi)});
}

GridSample grid_sample(const Matrix& m, const QuantConfig& c, const QuantResult& q) {
    GridSample g;
    const auto groups = quant_groups(m, c);
    g.scale = q.scales.front();
    g.group_values = groups.front().size();
    if (c.scheme == Scheme::Symmetric) {
        g.k_max = symmetric_qmax(c.bits);
        g.k_min = -g.k_max;
    } else {
        g.k_min = -q.zero_points.front();
        g.k_max = ((std::int64_t{1} << c.bits) - 1) - q.zero_points.front();
    }
    for (std::size_t j = 0; j < groups.front().size() && j < kGridSampleValues; ++j) {
        g.x.push_back(m.v[groups.front()[j]]);
        g.xhat.push_back(q.dequantized.v[groups.front()[j]]);
    }
    return g;
}

}  // namespace

ValuesQuant quantize_values(const Matrix& m, const QuantConfig& config, const std::vector<Scheme>& schemes,
                            const StorageFormat& format, Rng* rng, const ValuesWhere& where) {
    check_range(m, format, where);
    ValuesQuant out;
    out.rows = m.rows;
    out.cols = m.cols;
    out.config = config;
    out.format = format;
    for (Scheme s : schemes) {
        QuantConfig c = config;
        c.scheme = s;
        SchemeQuant r;
        r.scheme = s;
        r.quant = quantize_matrix(m, c, rng);
        check_scales(r.quant, format, where);
        r.histogram = error_histogram(m.v, r.quant.dequantized.v, kHistogramBins);
        r.grid = grid_sample(m, c, r.quant);
        // Every group holds the same number of values (a group size must divide the row).
        const std::uint64_t per_group = m.v.size() / r.quant.report.groups;
        r.storage = storage_cost(m.v.size(), per_group, c.bits, format.source_bits, format.scale_bits,
                                 s == Scheme::Asymmetric ? format.zero_bits : 0);
        out.results.push_back(std::move(r));
    }
    return out;
}

StorageQuant quantize_storage(std::uint64_t elements, std::uint64_t group, unsigned bits, const StorageFormat& format) {
    StorageQuant s;
    s.elements = elements;
    s.group_size = group;
    s.bits = bits;
    s.format = format;
    s.record_bits = format.scale_bits + format.zero_bits;
    s.cost = storage_cost(elements, group, bits, format.source_bits, format.scale_bits, format.zero_bits);
    return s;
}

KvModelQuant kv_model_quant(const ModelConfig& cfg, std::uint64_t seq_len, std::optional<std::uint64_t> group,
                            const DType& base, unsigned scale_bits, unsigned zero_bits, const std::string& group_where) {
    KvModelQuant out;
    out.model = cfg.name;
    out.seq_len = seq_len;
    out.group_from_config = !group;
    // One scale per head vector by default: d per head, or the MLA latent (c_KV and the RoPE key) per token.
    out.group_size = group ? *group : (cfg.mla ? cfg.kv_lora_rank + cfg.qk_rope_head_dim : cfg.head_dim);
    out.base = base;
    out.scale_bits = scale_bits;
    out.zero_bits = zero_bits;
    const KvSpec base_spec = kv_spec_from_config(cfg, base.bits);
    const std::uint64_t ref = kv_bytes(base_spec, {seq_len}).total_bytes;
    out.rows.push_back({base.name, base.bits, {ref, 0, ref, bytes_per_token(base_spec)}, 1.0});
    for (unsigned bits : {8u, 4u}) {
        const KvQuantBytes q = kv_quantized_bytes(kv_spec_from_config(cfg, bits), {seq_len}, bits, out.group_size,
                                                  scale_bits, zero_bits, group_where);
        out.rows.push_back({"int" + std::to_string(bits), bits, q,
                            static_cast<double>(q.total_bytes) / static_cast<double>(ref)});
    }
    const std::uint64_t params = count_params(cfg).total;
    std::vector<DType> wdts = {parse_dtype("int8", "int8"), parse_dtype("int4", "int4")};
    if (cfg.dtype) wdts.insert(wdts.begin(), *cfg.dtype);
    for (const DType& d : wdts) out.weights.push_back({d.name, params, weight_storage(params, d)});
    out.sliding_layers = sliding_layer_count(cfg);
    out.window_rule = cfg.window_rule;
    return out;
}

}  // namespace inferlab
