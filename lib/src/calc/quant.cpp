#include "inferlab/calc/quant.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>

#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab {

Rounding parse_rounding(const std::string& where, const std::string& t) {
    if (t == "half-away" || t == "half-away-from-zero") return Rounding::HalfAwayFromZero;
    if (t == "half-even" || t == "half-to-even") return Rounding::HalfToEven;
    if (t == "stochastic") return Rounding::Stochastic;
    throw InputError(where, t, N_("must be half-away (default), half-even or stochastic"));
}

Granularity parse_granularity(const std::string& where, const std::string& t) {
    if (t == "tensor") return Granularity::Tensor;
    if (t == "group") return Granularity::Group;
    if (t == "row") return Granularity::Row;
    if (t == "column") return Granularity::Column;
    throw InputError(where, t, N_("must be tensor, group, row or column"));
}

std::string to_string(Rounding r) {
    switch (r) {
        case Rounding::HalfAwayFromZero: return N_("half away from zero");
        case Rounding::HalfToEven: return N_("half to even");
        case Rounding::Stochastic: return N_("stochastic");
    }
    return "";
}

std::string to_string(Granularity g) {
    switch (g) {
        case Granularity::Tensor: return N_("per tensor");
        case Granularity::Group: return N_("per group");
        case Granularity::Row: return N_("per row");
        case Granularity::Column: return N_("per column");
    }
    return "";
}

double round_with(double y, Rounding rule, Rng* rng) {
    switch (rule) {
        case Rounding::HalfAwayFromZero: return std::round(y);
        case Rounding::HalfToEven: {
            double f = std::floor(y), d = y - f;
            if (d > 0.5) return f + 1;
            if (d < 0.5) return f;
            return std::fmod(f, 2.0) == 0 ? f : f + 1;
        }
        case Rounding::Stochastic: {
            if (!rng) throw std::logic_error("stochastic rounding needs a generator");
            double f = std::floor(y);
            return rng->uniform() < (y - f) ? f + 1 : f;
        }
    }
    return y;
}

std::int64_t round_exact(const Rational& y, Rounding rule, Rng* rng) {
    // y = n/d with d > 0: floor f and remainder r in [0, d), so y = f + r/d.
    const std::int64_t n = y.num(), d = y.den();
    std::int64_t f = n / d, r = n % d;
    if (r < 0) {
        f -= 1;
        r += d;
    }
    const u128 twice_r = static_cast<u128>(r) * 2, den = static_cast<u128>(d);
    switch (rule) {
        case Rounding::HalfAwayFromZero:
            if (twice_r != den) return twice_r > den ? f + 1 : f;
            return f >= 0 ? f + 1 : f;  // f + 1/2: away from zero is up for f ≥ 0, down (to f) below
        case Rounding::HalfToEven:
            if (twice_r != den) return twice_r > den ? f + 1 : f;
            return f % 2 == 0 ? f : f + 1;
        case Rounding::Stochastic:
            if (!rng) throw std::logic_error("stochastic rounding needs a generator");
            return rng->uniform() < static_cast<double>(r) / static_cast<double>(d) ? f + 1 : f;
    }
    return f;
}

std::int64_t symmetric_qmax(unsigned bits) {
    if (bits < 2 || bits > 16) throw InputError("bits", std::to_string(bits), N_("must be between {0} and {1}"), {"2", "16"});
    return (std::int64_t{1} << (bits - 1)) - 1;
}

namespace {

// The grid's largest level Q·Δ must be a number: Δ = 1e308 with Q = 7 drew levels at ±inf.
void require_finite_range(double step, std::int64_t qmax) {
    if (!std::isfinite(step * static_cast<double>(qmax)))
        throw InputError("step Δ", format_real(step),
                         N_("makes the largest level Q·Δ (Q = {0}) larger than the largest double (about 1.8e308)"),
                         {std::to_string(qmax)});
}

}  // namespace

bool within_half_step(const ScalarQuant& q) { return std::fabs(q.error) <= q.step / 2 * (1 + 1e-12); }

ScalarQuant quantize_scalar(double x, double step, std::int64_t qmax, Rounding rule, Rng* rng) {
    if (!(step > 0) || !std::isfinite(step)) throw InputError("step Δ", format_real(step), N_("must be greater than 0"));
    if (qmax < 1) throw InputError("Q", std::to_string(qmax), N_("must be a positive integer"));
    require_finite_range(step, qmax);
    ScalarQuant q;
    q.x = x;
    q.step = step;
    q.qmax = qmax;
    q.scaled = x / step;
    if (!std::isfinite(q.scaled) || std::fabs(q.scaled) > 9e15)
        throw InputError("x", format_real(x), N_("is too large for this step (x/Δ must stay below 9e15)"));
    q.rounded = static_cast<std::int64_t>(round_with(q.scaled, rule, rng));
    q.level = std::clamp(q.rounded, -qmax, qmax);
    q.clipped = q.level != q.rounded;
    q.dequantized = step * static_cast<double>(q.level);
    q.error = q.dequantized - x;
    return q;
}

ScalarQuant quantize_scalar_exact(const Rational& x, const Rational& step, std::int64_t qmax, Rounding rule, Rng* rng) {
    if (step.num() <= 0) throw InputError("step Δ", step.str(), N_("must be greater than 0"));
    if (qmax < 1) throw InputError("Q", std::to_string(qmax), N_("must be a positive integer"));
    require_finite_range(step.to_double(), qmax);
    ScalarQuant q;
    q.x = x.to_double();
    q.step = step.to_double();
    q.qmax = qmax;
    const Rational scaled = x / step;
    q.scaled = scaled.to_double();
    q.scaled_fraction = scaled.str();
    q.rounded = round_exact(scaled, rule, rng);
    q.level = std::clamp(q.rounded, -qmax, qmax);
    q.clipped = q.level != q.rounded;
    const Rational xh = step * Rational(q.level);
    q.dequantized = xh.to_double();
    q.error = (xh - x).to_double();
    q.exact = true;
    return q;
}

namespace {

// Indices of each group under the granularity.
std::vector<std::vector<std::size_t>> groups_of(const Matrix& m, const QuantConfig& cfg) {
    std::vector<std::vector<std::size_t>> g;
    switch (cfg.granularity) {
        case Granularity::Tensor: {
            g.emplace_back(m.v.size());
            for (std::size_t i = 0; i < m.v.size(); ++i) g[0][i] = i;
            break;
        }
        case Granularity::Row:
            for (std::size_t r = 0; r < m.rows; ++r) {
                g.emplace_back();
                for (std::size_t c = 0; c < m.cols; ++c) g.back().push_back(r * m.cols + c);
            }
            break;
        case Granularity::Column:
            for (std::size_t c = 0; c < m.cols; ++c) {
                g.emplace_back();
                for (std::size_t r = 0; r < m.rows; ++r) g.back().push_back(r * m.cols + c);
            }
            break;
        case Granularity::Group: {
            const std::size_t G = cfg.group_size;
            if (G == 0) throw InputError(N_("{0} is required with granularity group"), {cfg.group_where});
            if (m.cols % G != 0)
                throw InputError(cfg.group_where, std::to_string(G), N_("must divide the row length {0} (no padding is applied)"),
                                 {std::to_string(m.cols)});
            for (std::size_t r = 0; r < m.rows; ++r)
                for (std::size_t c0 = 0; c0 < m.cols; c0 += G) {
                    g.emplace_back();
                    for (std::size_t c = c0; c < c0 + G; ++c) g.back().push_back(r * m.cols + c);
                }
            break;
        }
    }
    return g;
}

}  // namespace

std::vector<std::vector<std::size_t>> quant_groups(const Matrix& m, const QuantConfig& cfg) { return groups_of(m, cfg); }

DTypeRange dtype_range(const std::string& name) {
    if (name == "fp32") return {-3.4028234663852886e38, 3.4028234663852886e38};
    if (name == "bf16") return {-3.3895313892515355e38, 3.3895313892515355e38};
    if (name == "fp16") return {-65504.0, 65504.0};
    if (name == "fp8") return {-57344.0, 57344.0};
    if (name == "int8") return {-128.0, 127.0};
    if (name == "int4") return {-8.0, 7.0};
    throw InputError("dtype", name, N_("has no known range (expected fp32, bf16, fp16, fp8, int8 or int4)"));
}

QuantResult quantize_matrix(const Matrix& m, const QuantConfig& cfg, Rng* rng) {
    if (m.v.empty()) throw InputError(N_("no values to quantize"));
    if (cfg.bits < 2 || cfg.bits > 16)
        throw InputError("bits", std::to_string(cfg.bits), N_("must be between {0} and {1}"), {"2", "16"});
    QuantResult out;
    out.dequantized = m;
    ErrorReport& rep = out.report;
    double sum_sq = 0, err_sq = 0, err_sum = 0;
    const std::int64_t Q = symmetric_qmax(cfg.bits);
    const std::int64_t levels_max = (std::int64_t{1} << cfg.bits) - 1;
    auto groups = groups_of(m, cfg);
    rep.groups = groups.size();
    for (const auto& idx : groups) {
        double lo = m.v[idx[0]], hi = lo, amax = 0;
        for (std::size_t i : idx) {
            lo = std::min(lo, m.v[i]);
            hi = std::max(hi, m.v[i]);
            amax = std::max(amax, std::fabs(m.v[i]));
        }
        double step = 0;
        std::int64_t zero = 0;
        if (cfg.scheme == Scheme::Symmetric) {
            step = amax > 0 ? amax / static_cast<double>(Q) : 1.0;
        } else {
            // The range must contain 0 so that zero is exactly representable.
            lo = std::min(lo, 0.0);
            hi = std::max(hi, 0.0);
            step = hi > lo ? (hi - lo) / static_cast<double>(levels_max) : 1.0;
            zero = static_cast<std::int64_t>(std::round(-lo / step));
            out.zero_points.push_back(zero);
        }
        out.scales.push_back(step);
        for (std::size_t i : idx) {
            const double x = m.v[i];
            const double y = round_with(x / step, cfg.rounding, rng);
            std::int64_t q = static_cast<std::int64_t>(y) + zero;
            const std::int64_t qlo = cfg.scheme == Scheme::Symmetric ? -Q : 0;
            const std::int64_t qhi = cfg.scheme == Scheme::Symmetric ? Q : levels_max;
            const std::int64_t qc = std::clamp(q, qlo, qhi);
            const double xh = step * static_cast<double>(qc - zero);
            out.dequantized.v[i] = xh;
            const double e = xh - x;
            rep.max_abs_error = std::max(rep.max_abs_error, std::fabs(e));
            err_sq += e * e;
            err_sum += e;
            sum_sq += x * x;
            if (qc != q) {
                ++rep.clipped;
            } else if (cfg.rounding != Rounding::Stochastic) {
                // Inside the range, nearest rounding keeps the error within half a step.
                ++rep.bound_checked;
                if (std::fabs(e) > step / 2 * (1 + 1e-12)) ++rep.bound_violations;
            }
        }
    }
    rep.count = m.v.size();
    rep.mse = err_sq / static_cast<double>(rep.count);
    rep.mean_error = err_sum / static_cast<double>(rep.count);
    if (err_sq > 0 && sum_sq > 0) rep.snr_db = 10 * std::log10(sum_sq / err_sq);
    return out;
}

StorageCost storage_cost(std::uint64_t elements, std::uint64_t group, unsigned bits, unsigned source_bits,
                         unsigned scale_bits, unsigned zero_bits) {
    if (group == 0) throw InputError("group size", "0", N_("must be a positive integer"));
    StorageCost s;
    s.elements = elements;
    s.groups = (elements + group - 1) / group;
    const std::string what = N_("quantized storage bytes");
    s.source_bytes = to_u64((static_cast<u128>(elements) * source_bits + 7) / 8, what);
    s.data_bytes = to_u64((static_cast<u128>(elements) * bits + 7) / 8, what);
    s.metadata_bytes = to_u64((static_cast<u128>(s.groups) * (scale_bits + zero_bits) + 7) / 8, what);
    s.total_bytes = checked_add(s.data_bytes, s.metadata_bytes, what);
    s.bits_per_element = elements ? static_cast<double>(s.total_bytes) * 8 / static_cast<double>(elements) : 0;
    return s;
}

StorageCost weight_storage(std::uint64_t params, const DType& dtype) {
    const bool grouped = dtype.name == "int8" || dtype.name == "int4";
    // The source is float32, the precision the weights are quantized from.
    if (grouped) return storage_cost(params, kWeightGroup, dtype.bits, 32, kWeightScaleBits, 0);
    return storage_cost(params, params ? params : 1, dtype.bits, 32, 0, 0);
}

Prose weight_bytes_origin(std::uint64_t params, const DType& dtype, const StorageCost& cost, const Prose* tied_rule) {
    const std::vector<std::string> args = {group_thousands(params), exact_ratio(dtype.bits, 8, 3), dtype.name,
                                           group_thousands(cost.metadata_bytes), std::to_string(kWeightGroup)};
    const bool scales = cost.metadata_bytes != 0;
    if (tied_rule == nullptr)
        return {scales ? N_("{0} parameters × {1} B ({2}) + {3} B of fp16 scales, one per {4}") : N_("{0} parameters × {1} B ({2})"),
                args};
    return {scales ? N_("{0} parameters (counted from the config; {5}) × {1} B ({2}) + {3} B of fp16 scales, one per {4}")
                   : N_("{0} parameters (counted from the config; {5}) × {1} B ({2})"),
            args, {}, {*tied_rule}};
}

std::uint64_t params_of_weight_bytes(std::uint64_t bytes, const DType& dtype) {
    const bool grouped = dtype.name == "int8" || dtype.name == "int4";
    // Bits per group of kWeightGroup weights: their levels plus the group's scale.
    const u128 group_bits = grouped ? kWeightGroup * dtype.bits + kWeightScaleBits : dtype.bits;
    const u128 per_group = grouped ? kWeightGroup : 1;
    return to_u64(static_cast<u128>(bytes) * 8 * per_group / group_bits, N_("the parameter count of a weight size"));
}

KvQuantBytes kv_quantized_bytes(const KvSpec& spec, const std::vector<std::uint64_t>& seq_lens, unsigned bits,
                                std::uint64_t group, unsigned scale_bits, unsigned zero_bits, const std::string& group_where) {
    if (group == 0) throw InputError(group_where, "0", N_("must be a positive integer"));
    KvSpec data = spec, count = spec;
    for (std::size_t l = 0; l < spec.layers.size(); ++l) {
        auto& d = data.layers[l];
        if (d.d_k % group != 0 || (d.d_v && d.d_v % group != 0))
            throw InputError(group_where, std::to_string(group), N_("must divide the head width (d_k = {0})"),
                             {std::to_string(d.d_k)});
        d.bits_k = d.bits_v = bits;
        // One metadata record per group: count groups as elements of width 1 with the record's bits.
        auto& c = count.layers[l];
        c.d_k = d.d_k / group;
        c.d_v = d.d_v / group;
        c.bits_k = c.bits_v = scale_bits + zero_bits;
    }
    KvQuantBytes out;
    out.data_bytes = kv_bytes(data, seq_lens).total_bytes;
    out.metadata_bytes = kv_bytes(count, seq_lens).total_bytes;
    out.total_bytes = checked_add(out.data_bytes, out.metadata_bytes, N_("quantized KV bytes"));
    // Per token before windows cap sliding layers, as kv-mem's s_token: never 0 for a windowed model.
    out.bytes_per_token = checked_add(bytes_per_token(data), bytes_per_token(count), N_("quantized KV bytes"));
    return out;
}

KvQuantComparison compare_kv_quantization(const Matrix& k, const Matrix& v, unsigned bits, Rounding rule, Rng* rng) {
    QuantConfig c;
    c.bits = bits;
    c.rounding = rule;
    KvQuantComparison out;
    c.granularity = Granularity::Column;
    out.k_per_channel = quantize_matrix(k, c, rng).report;
    out.v_per_channel = quantize_matrix(v, c, rng).report;
    c.granularity = Granularity::Row;
    out.k_per_token = quantize_matrix(k, c, rng).report;
    out.v_per_token = quantize_matrix(v, c, rng).report;
    out.k_per_channel_better = out.k_per_channel.mse < out.k_per_token.mse;
    return out;
}

Matrix generate_normal(std::size_t rows, std::size_t cols, double outlier_fraction, double factor, Rng& rng) {
    Matrix m{rows, cols, std::vector<double>(rows * cols)};
    for (auto& x : m.v) {
        x = rng.normal();
        if (outlier_fraction > 0 && rng.uniform() < outlier_fraction) x *= factor;
    }
    return m;
}

Matrix generate_k_with_outlier_channels(std::size_t tokens, std::size_t channels, std::size_t outlier_channels,
                                        double factor, Rng& rng) {
    Matrix m{tokens, channels, std::vector<double>(tokens * channels)};
    std::vector<double> scale(channels, 1.0);
    // Outlier channels spread evenly, so the choice does not depend on the generator.
    for (std::size_t i = 0; i < outlier_channels && i < channels; ++i) scale[(i * channels) / outlier_channels] = factor;
    for (std::size_t t = 0; t < tokens; ++t)
        for (std::size_t c = 0; c < channels; ++c) m.v[t * channels + c] = rng.normal() * scale[c];
    return m;
}

std::string render_grid(const ScalarQuant& q, int max_levels) {
    const std::int64_t half = max_levels / 2;
    std::int64_t center = std::clamp<std::int64_t>(q.level, -q.qmax, q.qmax);
    std::int64_t lo = std::max<std::int64_t>(-q.qmax, center - half);
    std::int64_t hi = std::min<std::int64_t>(q.qmax, lo + 2 * half);
    lo = std::max<std::int64_t>(-q.qmax, hi - 2 * half);
    const int cell = 6;
    const std::size_t width = static_cast<std::size_t>((hi - lo) * cell + 1);
    std::string axis(width, '-'), labels(width + 8, ' ');
    auto col = [&](double level) {
        double c = (level - static_cast<double>(lo)) * cell;
        return static_cast<long>(std::lround(std::clamp(c, -1.0, static_cast<double>(width))));
    };
    for (std::int64_t l = lo; l <= hi; ++l) {
        std::size_t c = static_cast<std::size_t>((l - lo) * cell);
        axis[c] = '|';
        std::string lab = format_real(q.step * static_cast<double>(l), 3);
        if ((l - lo) % 2 == 0 || hi - lo <= 8)
            for (std::size_t k = 0; k < lab.size() && c + k < labels.size(); ++k) labels[c + k] = lab[k];
    }
    long xc = col(q.scaled), lc = col(static_cast<double>(q.level));
    std::string out;
    out += "  " +
           trf(N_("levels k·Δ, Δ = {0}, k in [{1}, {2}]{3}"), format_real(q.step, 6), -q.qmax, q.qmax,
               lo > -q.qmax || hi < q.qmax ? tr(N_(" (window shown)")) : "") +
           "\n";
    auto rtrim = [](std::string t) {
        while (!t.empty() && t.back() == ' ') t.pop_back();
        return t;
    };
    out += rtrim("  " + labels) + "\n  " + axis + "\n";
    std::string pointer(width + 2, ' ');
    if (xc >= 0 && xc < static_cast<long>(width)) pointer[static_cast<std::size_t>(xc)] = 'x';
    else pointer[xc < 0 ? 0 : width] = xc < 0 ? '<' : '>';
    if (lc >= 0 && lc < static_cast<long>(width)) pointer[static_cast<std::size_t>(lc)] = lc == xc ? '*' : 'o';
    out += rtrim("  " + pointer) + "\n";
    out += "  " +
           trf(N_("x = {0} (x/Δ = {1}) lands on o = level {2} → x̂ = {3}{4}"), format_real(q.x, 6), format_real(q.scaled, 6),
               q.level, format_real(q.dequantized, 6), q.clipped ? tr(N_(" (clipped)")) : "") +
           "\n";
    return out;
}

}  // namespace inferlab
