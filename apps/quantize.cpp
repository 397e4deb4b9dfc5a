// inferlab quantize: the grid, the error, and what the bits really save.
#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "common.hpp"
#include "options.hpp"
#include "inferlab/dtype.hpp"
#include "inferlab/error.hpp"
#include "inferlab/files.hpp"
#include "inferlab/model_config.hpp"
#include "inferlab/quant.hpp"
#include "inferlab/rational.hpp"
#include "inferlab/rng.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

struct QuantizeOptions {
    std::string x, step, qmax, bits;
    std::string values, file, gen, outliers, seed = "1";
    std::string scheme = "symmetric", granularity = "tensor", group_size, rounding = "half-away";
    std::string source_dtype = "fp32", scale_dtype = "fp16", zero_bits = "8", elements;
    std::string kv_gen, outlier_channels = "4", outlier_factor = "20", k_file, v_file;
    std::string model, config, seq_len, kv_dtype;
    OutputFlags out;
};

std::string num(double v) { return format_real(v, 6); }

Matrix read_matrix_file(const std::string& flag, const std::string& path) {
    std::ifstream in = open_input_file(path);
    Matrix m;
    std::string line;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
        std::vector<double> row;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) row.push_back(parse_real(fmt::format("{} line {}", flag, lineno), cell));
        if (m.rows == 0) m.cols = row.size();
        else if (row.size() != m.cols)
            throw InputError(fmt::format("{} line {}", flag, lineno), line,
                             fmt::format("has {}; earlier rows have {}", count_noun(row.size(), "value"), m.cols));
        m.v.insert(m.v.end(), row.begin(), row.end());
        ++m.rows;
    }
    if (m.v.empty()) throw InputError(flag, path, "holds no numbers");
    return m;
}

// "normal:1024" or "normal:64x128".
Matrix generate(const QuantizeOptions& o, Rng& rng) {
    const std::string prefix = "normal:";
    if (o.gen.rfind(prefix, 0) != 0) throw InputError("--gen", o.gen, "must be normal:N or normal:ROWSxCOLS");
    std::string dims = o.gen.substr(prefix.size());
    std::size_t rows = 1, cols = 0;
    if (auto xpos = dims.find('x'); xpos != std::string::npos) {
        rows = parse_positive_int("--gen", dims.substr(0, xpos));
        cols = parse_positive_int("--gen", dims.substr(xpos + 1));
    } else {
        cols = parse_positive_int("--gen", dims);
    }
    // Each factor first: the product of two 64-bit counts wraps (2^62 × 4 became 0 values).
    if (rows > 10000000 || cols > 10000000 || rows * cols > 10000000)
        throw InputError("--gen", o.gen, "must hold at most 10,000,000 values");
    double frac = 0, factor = 1;
    if (!o.outliers.empty()) {
        auto colon = o.outliers.find(':');
        if (colon == std::string::npos) throw InputError("--outliers", o.outliers, "must be FRACTION:FACTOR, e.g. 0.01:20");
        frac = parse_probability("--outliers", o.outliers.substr(0, colon));
        factor = parse_positive_real("--outliers", o.outliers.substr(colon + 1));
    }
    return generate_normal(rows, cols, frac, factor, rng);
}

nlohmann::json report_json(const ErrorReport& r) {
    nlohmann::json j = {{"count", r.count},           {"groups", r.groups},        {"max_abs_error", r.max_abs_error},
                        {"mse", r.mse},               {"mean_error", r.mean_error}, {"clipped", r.clipped},
                        {"bound_checked", r.bound_checked}, {"bound_violations", r.bound_violations}};
    j["snr_db"] = r.snr_db ? nlohmann::json(*r.snr_db) : nlohmann::json(nullptr);
    return j;
}

std::vector<std::string> report_cells(const std::string& name, const ErrorReport& r) {
    return {name, fmt::format("{:.6g}", r.max_abs_error), fmt::format("{:.6g}", r.mse),
            r.snr_db ? fmt::format("{:.2f}", *r.snr_db) : "exact", fmt::format("{:+.3g}", r.mean_error),
            std::to_string(r.clipped),
            r.bound_checked ? fmt::format("{}/{} ok", r.bound_checked - r.bound_violations, r.bound_checked) : "-"};
}

const std::vector<std::string> kReportColumns = {"quantizer", "max |err|", "MSE", "SNR dB", "bias", "clipped", "|err| ≤ Δ/2"};

void single_value(const QuantizeOptions& o, Report& r, Rng& rng, Rounding rule) {
    double x = parse_real("--x", o.x);
    if (o.step.empty()) throw InputError("--step is required with --x (Δ, the quantization step)");
    double step = parse_real("--step", o.step);
    if (!(step > 0)) throw InputError("--step", o.step, "must be greater than 0");
    if (!o.qmax.empty() && !o.bits.empty()) throw InputError("--qmax and --bits both given: choose one");
    std::int64_t qmax = 0;
    if (!o.qmax.empty()) {
        std::uint64_t v = parse_positive_int("--qmax", o.qmax);
        if (v > (1u << 20)) throw InputError("--qmax", o.qmax, "must be at most 2^20");
        qmax = static_cast<std::int64_t>(v);
    } else if (!o.bits.empty()) {
        const unsigned b = parse_bits_in(o.bits, 2, 16);
        qmax = symmetric_qmax(static_cast<unsigned>(b));
    } else {
        throw InputError("give --qmax Q or --bits b (Q = 2^(b−1) − 1)");
    }
    // Decimals a person types (0.15, 0.1) are quantized as the fractions they name, so that a
    // tie on paper is a tie here; anything longer, or a fraction past 64 bits, uses doubles.
    std::optional<ScalarQuant> exact;
    if (is_short_decimal(o.x) && is_short_decimal(o.step)) {
        try {
            exact = quantize_scalar_exact(parse_rational("--x", o.x), parse_rational("--step", o.step), qmax, rule, &rng);
        } catch (const OverflowError&) {
        }
    }
    ScalarQuant q = exact ? *exact : quantize_scalar(x, step, qmax, rule, &rng);
    r.json = {{"x", x},         {"step", step},           {"qmax", qmax},          {"scaled", q.scaled},
              {"rounded", q.rounded}, {"level", q.level}, {"dequantized", q.dequantized}, {"error", q.error},
              {"abs_error", std::fabs(q.error)}, {"clipped", q.clipped}, {"rounding", to_string(rule)},
              {"within_half_step", std::fabs(q.error) <= step / 2 * (1 + 1e-12)},
              {"exact_arithmetic", q.exact}};
    if (q.exact) r.json["scaled_fraction"] = q.scaled_fraction;
    r.human = fmt::format("Symmetric uniform quantizer (first document §4.1), rounding {}\n", to_string(rule));
    r.human += fmt::format("  x = {}, Δ = {}, Q = {}\n  level k = clip(round({}), −{}, {}) = {}{}\n  x̂ = Δ·k = {}\n"
                           "  error x̂ − x = {}{}\n\n",
                           num(x), num(step), qmax, num(q.scaled), qmax, qmax, q.level, q.clipped ? " (clipped)" : "",
                           num(q.dequantized), num(q.error),
                           q.clipped ? " (clipped: outside the range the bound |x − x̂| ≤ Δ/2 does not hold)"
                                     : fmt::format(" (|x − x̂| ≤ Δ/2 = {} holds)", num(step / 2)));
    r.human += render_grid(q);
    r.explain = "x̂ = Δ·clip(round(x/Δ), −Q, Q)   (first document §4.1)\n";
    r.explain += fmt::format("  x/Δ = {} / {} = {}{}\n", num(x), num(step), num(q.scaled),
                             q.exact ? fmt::format(" = {} exactly (the decimals as typed, not their binary doubles)",
                                                   q.scaled_fraction)
                                     : "");
    r.explain += fmt::format("  round({}) = {}   ({})\n", num(q.scaled), q.rounded, to_string(rule));
    r.explain += fmt::format("  clip({}, −{}, {}) = {}\n", q.rounded, qmax, qmax, q.level);
    r.explain += fmt::format("  x̂ = {} × {} = {}\n", num(step), q.level, num(q.dequantized));
    r.explain += fmt::format("  error = x̂ − x = {} − {} = {}\n", num(q.dequantized), num(x), num(q.error));
}

void many_values(const QuantizeOptions& o, Report& r, Rng& rng, Rounding rule, CLI::App& sub) {
    int sources = !o.values.empty() + !o.file.empty() + !o.gen.empty();
    if (sources > 1) throw InputError("choose one of --values, --file and --gen");
    Matrix m;
    std::string origin;
    if (!o.values.empty()) {
        for (const auto& item : split_list("--values", o.values)) m.v.push_back(parse_real("--values", item));
        m.rows = 1;
        m.cols = m.v.size();
        origin = fmt::format("{} from --values", count_noun(m.v.size(), "value"));
    } else if (!o.file.empty()) {
        m = read_matrix_file("--file", o.file);
        origin = fmt::format("{} × {} values from {}", m.rows, m.cols, o.file);
    } else {
        m = generate(o, rng);
        origin = fmt::format("{} × {} normal values (seed {}){}", m.rows, m.cols, o.seed,
                             o.outliers.empty() ? "" : ", outliers " + o.outliers);
    }
    QuantConfig cfg;
    cfg.bits = o.bits.empty() ? 8 : parse_bits_in(o.bits, 2, 16);
    cfg.granularity = parse_granularity("--granularity", o.granularity);
    if (!o.group_size.empty()) {
        cfg.group_size = parse_positive_int("--group-size", o.group_size);
        if (!given(sub, "--granularity")) cfg.granularity = Granularity::Group;
        if (cfg.granularity != Granularity::Group)
            throw InputError("--group-size", o.group_size, "applies only with --granularity group");
    }
    cfg.rounding = rule;
    std::vector<Scheme> schemes;
    if (o.scheme == "symmetric") schemes = {Scheme::Symmetric};
    else if (o.scheme == "asymmetric") schemes = {Scheme::Asymmetric};
    else if (o.scheme == "both") schemes = {Scheme::Symmetric, Scheme::Asymmetric};
    else throw InputError("--scheme", o.scheme, "must be symmetric, asymmetric or both");

    Table t{kReportColumns, {}, {false}};
    r.json["input"] = {{"rows", m.rows}, {"cols", m.cols}, {"origin", origin}};
    r.json["bits"] = cfg.bits;
    r.json["granularity"] = to_string(cfg.granularity);
    r.json["rounding"] = to_string(rule);
    r.json["results"] = nlohmann::json::array();
    const unsigned source_bits = parse_dtype("--source-dtype", o.source_dtype).bits;
    const unsigned scale_bits = parse_dtype("--scale-dtype", o.scale_dtype).bits;
    const std::uint64_t zb = parse_nonnegative_int("--zero-bits", o.zero_bits);
    if (zb > 32) throw InputError("--zero-bits", o.zero_bits, "must be at most 32");
    Table st{{"quantizer", "groups", "before", "data", "scales+zeros", "after", "bits/elem"}, {}, {false}};
    for (Scheme s : schemes) {
        cfg.scheme = s;
        QuantResult q = quantize_matrix(m, cfg, &rng);
        std::string name = fmt::format("{} int{} {}", s == Scheme::Symmetric ? "symmetric" : "asymmetric", cfg.bits,
                                       to_string(cfg.granularity) + (cfg.granularity == Granularity::Group
                                                                         ? " of " + std::to_string(cfg.group_size)
                                                                         : ""));
        t.rows.push_back(report_cells(name, q.report));
        const std::uint64_t per_group = m.v.size() / q.report.groups;
        StorageCost c = storage_cost(m.v.size(), per_group, cfg.bits, source_bits, scale_bits,
                                     s == Scheme::Asymmetric ? static_cast<unsigned>(zb) : 0);
        st.rows.push_back({name, std::to_string(c.groups), group_thousands(c.source_bytes) + " B",
                           group_thousands(c.data_bytes) + " B", group_thousands(c.metadata_bytes) + " B",
                           group_thousands(c.total_bytes) + " B", fmt::format("{:.4g}", c.bits_per_element)});
        nlohmann::json res = {{"scheme", s == Scheme::Symmetric ? "symmetric" : "asymmetric"},
                              {"report", report_json(q.report)},
                              {"storage", {{"groups", c.groups}, {"source_bytes", c.source_bytes}, {"data_bytes", c.data_bytes},
                                           {"metadata_bytes", c.metadata_bytes}, {"total_bytes", c.total_bytes},
                                           {"bits_per_element", c.bits_per_element}}}};
        if (q.scales.size() <= 64) res["scales"] = q.scales;
        if (!q.zero_points.empty() && q.zero_points.size() <= 64) res["zero_points"] = q.zero_points;
        if (m.v.size() <= 64) res["dequantized"] = q.dequantized.v;
        r.json["results"].push_back(res);
    }
    r.human = fmt::format("Quantizing {} at {} bits, {}, rounding {}\n", origin, cfg.bits, to_string(cfg.granularity),
                          to_string(rule));
    r.human += render_table(t);
    r.human += fmt::format("\nStorage (source {}, scales {}{}):\n", o.source_dtype, o.scale_dtype,
                           o.scheme == "symmetric" ? "" : fmt::format(", zero points {} bits", zb));
    r.human += render_table(st);
    r.add_table("values", t);
    r.explain = "Symmetric: Δ = max|x|/Q per group, Q = 2^(b−1) − 1, x̂ = Δ·clip(round(x/Δ), −Q, Q).\n"
                "Asymmetric: Δ = (max − min)/(2^b − 1) over a range that includes 0, z = round(−min/Δ),\n"
                "  q = clip(round(x/Δ) + z, 0, 2^b − 1), x̂ = Δ·(q − z).\n"
                "Report: max |x̂ − x|, MSE = mean (x̂ − x)², SNR = 10·log10(Σx² / Σ(x̂ − x)²) dB, bias = mean (x̂ − x);\n"
                "values inside the range must satisfy |x − x̂| ≤ Δ/2 (checked; not for stochastic rounding).\n"
                "Storage: elements × b bits + groups × (scale bits + zero-point bits).\n\n" +
                r.human;
}

void kv_case(const QuantizeOptions& o, Report& r, Rng& rng, Rounding rule) {
    Matrix k, v;
    std::string origin;
    if (!o.k_file.empty() || !o.v_file.empty()) {
        if (o.k_file.empty() || o.v_file.empty()) throw InputError("give both --k-file and --v-file");
        k = read_matrix_file("--k-file", o.k_file);
        v = read_matrix_file("--v-file", o.v_file);
        origin = fmt::format("K {}×{} from {}, V {}×{} from {}", k.rows, k.cols, o.k_file, v.rows, v.cols, o.v_file);
    } else {
        auto xpos = o.kv_gen.find('x');
        if (xpos == std::string::npos) throw InputError("--kv-gen", o.kv_gen, "must be TOKENSxCHANNELS, e.g. 256x128");
        std::size_t tokens = parse_positive_int("--kv-gen", o.kv_gen.substr(0, xpos));
        std::size_t channels = parse_positive_int("--kv-gen", o.kv_gen.substr(xpos + 1));
        // Each factor first: the product of two 64-bit counts wraps (2^62 × 4 became 0 values).
        if (tokens > 4000000 || channels > 4000000 || tokens * channels > 4000000) throw InputError("--kv-gen", o.kv_gen, "must hold at most 4,000,000 values");
        std::size_t oc = parse_nonnegative_int("--outlier-channels", o.outlier_channels);
        if (oc > channels) throw InputError("--outlier-channels", o.outlier_channels, "must not exceed the channel count");
        double f = parse_positive_real("--outlier-factor", o.outlier_factor);
        k = generate_k_with_outlier_channels(tokens, channels, oc, f, rng);
        v = generate_normal(tokens, channels, 0, 1, rng);
        origin = fmt::format("generated K and V, {} × {}, {} ×{} (seed {})", count_noun(tokens, "token"),
                             count_noun(channels, "channel"), count_noun(oc, "K channel"), format_real(f, 4), o.seed);
    }
    const unsigned bits = o.bits.empty() ? 4u : parse_bits_in(o.bits, 2, 16);
    KvQuantComparison c = compare_kv_quantization(k, v, static_cast<unsigned>(bits), rule, &rng);
    Table t{kReportColumns, {}, {false}};
    t.rows.push_back(report_cells("K per channel (KIVI)", c.k_per_channel));
    t.rows.push_back(report_cells("K per token", c.k_per_token));
    t.rows.push_back(report_cells("V per token (KIVI)", c.v_per_token));
    t.rows.push_back(report_cells("V per channel", c.v_per_channel));
    const bool k_channel_wins = c.k_per_channel.mse < c.k_per_token.mse;
    r.json = {{"origin", origin},
              {"bits", bits},
              {"k_per_channel", report_json(c.k_per_channel)},
              {"k_per_token", report_json(c.k_per_token)},
              {"v_per_token", report_json(c.v_per_token)},
              {"v_per_channel", report_json(c.v_per_channel)},
              {"k_per_channel_better", k_channel_wins}};
    r.human = fmt::format("KV-cache quantization at int{} (symmetric), {}\n", bits, origin);
    r.human += render_table(t);
    r.human += fmt::format("\n  K per channel {} K per token: MSE {} against {} ({}).\n", k_channel_wins ? "beats" : "does not beat",
                           fmt::format("{:.4g}", c.k_per_channel.mse), fmt::format("{:.4g}", c.k_per_token.mse),
                           k_channel_wins ? "an outlier channel inflates every token's scale when K is scaled per token"
                                          : "no strong outlier channels in this K");
    r.human += "  KIVI quantizes K per channel and V per token; weight quantization (SmoothQuant) is a different problem.\n";
    r.add_table("kv", t);
    r.explain = "K and V are [tokens, channels]. Per channel: one scale per column (over tokens); per token: one scale per row.\n"
                "With a few large K channels, a per-token scale is set by the outlier and every other channel of that\n"
                "token loses resolution; a per-channel scale isolates the outlier (KIVI).\n\n" +
                r.human;
}

void storage_only(const QuantizeOptions& o, Report& r) {
    std::uint64_t n = parse_positive_int("--elements", o.elements);
    const unsigned bits = o.bits.empty() ? 8u : parse_bits_in(o.bits, 2, 16);
    std::uint64_t g = o.group_size.empty() ? n : parse_positive_int("--group-size", o.group_size);
    const unsigned sb = parse_dtype("--scale-dtype", o.scale_dtype).bits;
    const std::uint64_t zb = o.scheme == "asymmetric" ? parse_nonnegative_int("--zero-bits", o.zero_bits) : 0;
    StorageCost c = storage_cost(n, g, static_cast<unsigned>(bits), parse_dtype("--source-dtype", o.source_dtype).bits, sb,
                                 static_cast<unsigned>(zb));
    r.json = {{"elements", n}, {"group_size", g}, {"bits", bits}, {"groups", c.groups}, {"source_bytes", c.source_bytes},
              {"data_bytes", c.data_bytes}, {"metadata_bytes", c.metadata_bytes}, {"total_bytes", c.total_bytes},
              {"bits_per_element", c.bits_per_element}};
    r.human = fmt::format("{} at int{} in groups of {} with one {} scale{}:\n"
                          "  data {} B + metadata {} B = {} B (was {} B at {}) → {} bits per element\n",
                          count_noun(n, "element"), bits, g, o.scale_dtype, zb ? fmt::format(" and a {}-bit zero point", zb) : "",
                          group_thousands(c.data_bytes), group_thousands(c.metadata_bytes), group_thousands(c.total_bytes),
                          group_thousands(c.source_bytes), o.source_dtype, format_real(c.bits_per_element, 6));
    r.explain = fmt::format("bytes = elements × b / 8 + groups × (scale bits + zero bits) / 8 = {} × {} / 8 + {} × {} / 8 = {} B\n"
                            "bits per element = {} × 8 / {} = {}\n",
                            n, bits, c.groups, sb + zb, c.total_bytes, c.total_bytes, n, format_real(c.bits_per_element, 6));
}

// A model's weights beside its cache, by the rule decode-roofline and the reference model share
// (weight_storage: int8/int4 in groups of 32 with fp16 scales, whatever --group-size says for the KV).
void model_weight_storage(const ModelConfig& cfg, Report& r) {
    const std::uint64_t params = count_params(cfg).total;
    Table wt{{"weight precision", "data", "scales", "total"}, {}, {false}};
    r.json["weights"] = nlohmann::json::array();
    std::vector<DType> wdts = {parse_dtype("int8", "int8"), parse_dtype("int4", "int4")};
    if (cfg.dtype) wdts.insert(wdts.begin(), *cfg.dtype);  // the config's own precision first, when it names one
    for (const DType& d : wdts) {
        const StorageCost c = weight_storage(params, d);
        wt.rows.push_back({d.name, bytes_all_units(c.data_bytes), group_thousands(c.metadata_bytes) + " B", bytes_all_units(c.total_bytes)});
        r.json["weights"].push_back({{"precision", d.name}, {"params", params}, {"data_bytes", c.data_bytes},
                                     {"metadata_bytes", c.metadata_bytes}, {"total_bytes", c.total_bytes}});
    }
    r.human += fmt::format("Weights of {} ({} parameters; int8/int4 with one fp16 scale per {} weights):\n", cfg.name,
                           group_thousands(params), kWeightGroup);
    r.human += render_table(wt);
    r.add_table("weights", wt);
}

void kv_model_storage(const QuantizeOptions& o, Report& r) {
    if (!o.model.empty() && !o.config.empty()) throw InputError("--model and --config both given: choose one");
    ModelConfig cfg = o.model.empty() ? load_config_file(o.config) : load_named_model(o.model);
    if (o.seq_len.empty()) throw InputError("--seq-len is required with --model/--config");
    std::uint64_t s = parse_tokens("--seq-len", o.seq_len);
    if (s == 0) throw InputError("--seq-len", o.seq_len, "must be a positive token count");
    std::uint64_t g = o.group_size.empty() ? (cfg.mla ? cfg.kv_lora_rank + cfg.qk_rope_head_dim : cfg.head_dim)
                                           : parse_positive_int("--group-size", o.group_size);
    const unsigned sb = parse_dtype("--scale-dtype", o.scale_dtype).bits;
    const unsigned zb = o.scheme == "asymmetric" ? static_cast<unsigned>(parse_nonnegative_int("--zero-bits", o.zero_bits)) : 0;
    // One rule for a config without torch_dtype (as kv-mem and decode-roofline): never assume one.
    require_precision_flags(cfg, {{"--kv-dtype", !o.kv_dtype.empty()}});
    const DType base_dtype = o.kv_dtype.empty() ? *cfg.dtype : parse_dtype("--kv-dtype", o.kv_dtype);
    const unsigned base = base_dtype.bits;
    Table t{{"KV precision", "data", "scales+zeros", "total", "bytes/token", "vs " + base_dtype.name}, {}, {false}};
    const std::uint64_t ref = kv_bytes(kv_spec_from_config(cfg, base), {s}).total_bytes;
    r.json = {{"model", cfg.name}, {"seq_len", s}, {"group_size", g}, {"rows", nlohmann::json::array()}};
    for (unsigned bits : {base, 8u, 4u}) {
        KvQuantBytes q = bits == base ? KvQuantBytes{ref, 0, ref, 0}
                                      : kv_quantized_bytes(kv_spec_from_config(cfg, bits), {s}, bits, g, sb, zb);
        if (bits == base) q.bytes_per_token = bytes_per_token(kv_spec_from_config(cfg, base));
        std::string name = bits == base ? base_dtype.name : fmt::format("int{}", bits);
        t.rows.push_back({name, bytes_all_units(q.data_bytes), group_thousands(q.metadata_bytes) + " B",
                          bytes_all_units(q.total_bytes), group_thousands(q.bytes_per_token) + " B",
                          format_real(static_cast<double>(q.total_bytes) / static_cast<double>(ref), 4)});
        r.json["rows"].push_back({{"precision", name}, {"data_bytes", q.data_bytes}, {"metadata_bytes", q.metadata_bytes},
                                  {"total_bytes", q.total_bytes}, {"bytes_per_token", q.bytes_per_token}});
    }
    r.human = fmt::format("KV cache of {} at S = {} (kv-mem's formula), quantized with one {} scale per {}{}:\n",
                          cfg.name, s, o.scale_dtype, g == 1 ? std::string("element") : count_noun(g, "element"), zb ? fmt::format(" and a {}-bit zero point", zb) : "");
    r.human += render_table(t);
    const auto sliding = std::count_if(cfg.window_per_layer.begin(), cfg.window_per_layer.end(), [](auto w) { return w != 0; });
    if (sliding)
        r.human += fmt::format("  bytes/token counts every layer before windows cap the {} sliding layers ({}); the totals "
                               "at S = {} honour the windows\n",
                               sliding, cfg.window_rule, s);
    r.add_table("precisions", t);  // first: what a plain --csv prints, as before the weights table
    model_weight_storage(cfg, r);
    r.explain = "bytes = kv-mem's bytes at b bits + (elements / group) × (scale + zero bits) / 8\n"
                "weights: parameters × b / 8 + (parameters / 32) × 16 / 8 at int8/int4\n\n" + r.human;
}

void run(const QuantizeOptions& o, CLI::App& sub) {
    Rounding rule = parse_rounding("--rounding", o.rounding);
    Rng rng(parse_nonnegative_int("--seed", o.seed));
    Report r;
    int modes = !o.x.empty() + (!o.values.empty() || !o.file.empty() || !o.gen.empty()) +
                (!o.kv_gen.empty() || !o.k_file.empty() || !o.v_file.empty()) + !o.elements.empty() +
                (!o.model.empty() || !o.config.empty());
    if (modes == 0)
        throw InputError("nothing to quantize: give --x (one value), --values/--file/--gen (many), --kv-gen or "
                         "--k-file/--v-file (a KV cache), --elements (storage) or --model (a model's KV bytes)");
    if (modes > 1) throw InputError("choose one input: --x, --values/--file/--gen, --kv-gen, --elements or --model");
    if (!o.x.empty()) single_value(o, r, rng, rule);
    else if (!o.kv_gen.empty() || !o.k_file.empty() || !o.v_file.empty()) kv_case(o, r, rng, rule);
    else if (!o.elements.empty()) storage_only(o, r);
    else if (!o.model.empty() || !o.config.empty()) kv_model_storage(o, r);
    else many_values(o, r, rng, rule, sub);
    emit(r, o.out);
}

}  // namespace

void setup_quantize(CLI::App& app) {
    auto opt = std::make_shared<QuantizeOptions>();
    CLI::App* sub = app.add_subcommand("quantize", "Uniform quantization: the grid, the error, and the bytes it saves");
    sub->add_option("--x", opt->x, "one value to quantize");
    sub->add_option("--step", opt->step, "Δ, the step, with --x");
    sub->add_option("--qmax", opt->qmax, "Q, the largest level magnitude, with --x");
    sub->add_option("--bits", opt->bits, "b in 2..16 (symmetric Q = 2^(b−1) − 1); default 8 (4 for the KV case)");
    sub->add_option("--values", opt->values, "values to quantize: 0.1,-0.5,...");
    sub->add_option("--file", opt->file, "values from a file: one per line, or CSV rows (a matrix)");
    sub->add_option("--gen", opt->gen, "generated values: normal:N or normal:ROWSxCOLS");
    sub->add_option("--outliers", opt->outliers, "with --gen: FRACTION:FACTOR of values scaled up (0.01:20)");
    sub->add_option("--seed", opt->seed, "seed for --gen, --kv-gen and stochastic rounding (default 1)");
    sub->add_option("--scheme", opt->scheme, "symmetric (default), asymmetric (zero point) or both");
    sub->add_option("--granularity", opt->granularity, "scale per tensor (default), group, row or column");
    sub->add_option("--group-size", opt->group_size, "elements per scale (implies --granularity group); must divide the row");
    sub->add_option("--rounding", opt->rounding, "half-away (default: half away from zero), half-even or stochastic");
    sub->add_option("--source-dtype", opt->source_dtype, "precision before quantizing, for storage (default fp32)");
    sub->add_option("--scale-dtype", opt->scale_dtype, "precision of each scale (default fp16)");
    sub->add_option("--zero-bits", opt->zero_bits, "bits of each zero point, asymmetric (default 8)");
    sub->add_option("--elements", opt->elements, "storage only: bytes and bits per element of N elements");
    sub->add_option("--kv-gen", opt->kv_gen, "KV case: generated K and V of TOKENSxCHANNELS");
    sub->add_option("--outlier-channels", opt->outlier_channels, "KV case: K channels scaled up (default 4)");
    sub->add_option("--outlier-factor", opt->outlier_factor, "KV case: their scale (default 20)");
    sub->add_option("--k-file", opt->k_file, "KV case: K matrix CSV [tokens, channels]");
    sub->add_option("--v-file", opt->v_file, "KV case: V matrix CSV [tokens, channels]");
    sub->add_option("--model", opt->model, "a shipped model: its KV cache at int8/int4 with metadata (kv-mem's formula), and its weights");
    sub->add_option("--config", opt->config, "a config.json, as --model");
    sub->add_option("--seq-len", opt->seq_len, "tokens, with --model/--config");
    sub->add_option("--kv-dtype", opt->kv_dtype, "KV precision before quantizing, with --model/--config (default: the config's torch_dtype)");
    add_output_flags(*sub, opt->out, true);
    sub->footer(examples_footer(
        {"inferlab quantize --x 0.37 --step 0.1 --qmax 7", "    → level 4, x̂ = 0.4, error 0.03 (first document §4.1)",
         "inferlab quantize --gen normal:64x256 --outliers 0.01:20 --bits 4 --group-size 32 --scheme both",
         "inferlab quantize --elements 32 --bits 8 --group-size 32 --scale-dtype fp16   (34 B, 8.5 bits/element)",
         "inferlab quantize --kv-gen 512x128 --outlier-channels 4 --bits 4",
         "inferlab quantize --model llama-3-8b --seq-len 8192 --group-size 64"},
        "JSON keys: one value: x, step, qmax, scaled, rounded, level, dequantized, error, abs_error, clipped,\n"
        "within_half_step; many values: input, bits, granularity, rounding, results[]{scheme, report{max_abs_error, mse,\n"
        "snr_db, mean_error, clipped, bound_checked, bound_violations}, storage{...}}; KV case: k_per_channel,\n"
        "k_per_token, v_per_token, v_per_channel, k_per_channel_better; --elements: total_bytes, bits_per_element."));
    sub->callback([opt, sub] { run(*opt, *sub); });
}

}  // namespace inferlab::app
