// Printers of `inferlab quantize`, one per mode: text, JSON, CSV tables and the explanation side
// by side. They choose what to print; every number comes from the library's result.
#include "quantize_print.hpp"

#include <fmt/format.h>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/quantize.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;
using app::wrap;

std::string num(double v) { return format_real(v, 6); }

// Whether the decimal `shown` is the fraction "a/b" exactly (3/2 and 1.5; not 50/3 and 16.6667): the
// fraction's double is the decimal's, and a terminating fraction's decimal in six digits is exact
// exactly when it reads back as that double.
bool decimal_is(const std::string& fraction, const std::string& shown) {
    const auto slash = fraction.find('/');
    const double v = slash == std::string::npos ? std::stod(fraction)
                                                : std::stod(fraction.substr(0, slash)) / std::stod(fraction.substr(slash + 1));
    return std::stod(shown) == v;
}
// More values than this and the JSON leaves the per-value arrays out (null).
constexpr std::size_t kListedValues = 64;

// " and an 8-bit zero point" ("an" where the number is said with a vowel: 8, 11, 18); "" for none.
std::string zero_point_note(unsigned bits) {
    if (bits == 0) return "";
    return trf(bits == 8 || bits == 11 || bits == 18 ? N_(" and an {0}-bit zero point") : N_(" and a {0}-bit zero point"),
               bits);
}

// A msgid: JSON and CSV print it as it is, text through tr().
const char* scheme_name(Scheme s) { return s == Scheme::Symmetric ? N_("symmetric") : N_("asymmetric"); }

json report_json(const ErrorReport& r) {
    json j = {{"count", r.count},           {"groups", r.groups},        {"max_abs_error", r.max_abs_error},
              {"mse", r.mse},               {"mean_error", r.mean_error}, {"clipped", r.clipped},
              {"bound_checked", r.bound_checked}, {"bound_violations", r.bound_violations}, {"bound_held", r.bound_held()}};
    j["snr_db"] = r.snr_db ? json(*r.snr_db) : json(nullptr);
    return j;
}

// The error table: in text "exact" where the error is zero and "k/n ok" for the bound; in CSV
// numbers only (an empty SNR where the error is zero, the bound as two counts). Row names are
// msgids. Its JSON: `name_key` holds the row's name, and `at` leads to the report's figures in a
// row ("report/" in a row of results[]; "" where each row is a report).
using ErrorRow = std::pair<std::string, const ErrorReport*>;

std::vector<Column<ErrorRow>> error_columns(const std::string& name_key, const std::string& at) {
    auto figure = [](double ErrorReport::*field, const char* spec) {
        return std::pair{[field](const ErrorRow& r) { return csv_number(r.second->*field); },
                         [field, spec](const ErrorRow& r) { return fmt::format(fmt::runtime(spec), r.second->*field); }};
    };
    auto count = [](std::size_t (ErrorReport::*field)) {
        return [field](const ErrorRow& r) { return std::to_string(r.second->*field); };
    };
    const auto max_abs = figure(&ErrorReport::max_abs_error, "{:.6g}"), mse = figure(&ErrorReport::mse, "{:.6g}"),
               bias = figure(&ErrorReport::mean_error, "{:+.3g}");
    const std::vector<Column<ErrorRow>> c = {
        {name_key, N_("quantizer"), [](const ErrorRow& r) { return r.first; }, [](const ErrorRow& r) { return tr(r.first); }},
        {at + "max_abs_error", N_("max |err|"), max_abs.first, max_abs.second},
        {at + "mse", "MSE", mse.first, mse.second, "MSE"},
        {at + "snr_db", "SNR (dB)", [](const ErrorRow& r) { return r.second->snr_db ? csv_number(*r.second->snr_db) : ""; },
         [](const ErrorRow& r) { return r.second->snr_db ? fmt::format("{:.2f}", *r.second->snr_db) : tr(N_("exact")); },
         "SNR dB"},
        {at + "mean_error", N_("bias"), bias.first, bias.second},
        {at + "clipped", N_("clipped"), count(&ErrorReport::clipped)},
        {at + "bound_held", N_("|err| ≤ Δ/2"), [](const ErrorRow& r) { return std::to_string(r.second->bound_held()); },
         [](const ErrorRow& r) {
             return r.second->bound_checked ? trf(N_("{0}/{1} ok"), r.second->bound_held(), r.second->bound_checked) : "-";
         }},
        {at + "bound_checked", "bound checked", count(&ErrorReport::bound_checked), {}, std::nullopt, true}};
    return c;
}

Table error_table(const std::vector<ErrorRow>& rows, const std::string& name_key, const std::string& at, bool csv) {
    const auto columns = error_columns(name_key, at);
    Table t = csv ? columns_table(columns, rows) : text_table(columns, rows);
    t.right_align = {false};
    return t;
}

// The heading names bits and granularity; a row names its scheme.
std::string granularity_name(const QuantConfig& c) {
    return tr(to_string(c.granularity)) + (c.granularity == Granularity::Group ? trf(N_(" of {0}"), c.group_size) : "");
}

// The storage table, a row per scheme of results[] (its storage object): bytes with thousands
// groups in text, plain in CSV.
std::vector<Column<SchemeQuant>> storage_columns() {
    auto bytes = [](std::uint64_t StorageCost::*field) {
        return std::pair{[field](const SchemeQuant& r) { return std::to_string(r.storage.*field); },
                         [field](const SchemeQuant& r) { return group_thousands(r.storage.*field); }};
    };
    const auto source = bytes(&StorageCost::source_bytes), data = bytes(&StorageCost::data_bytes),
               meta = bytes(&StorageCost::metadata_bytes), total = bytes(&StorageCost::total_bytes);
    const std::vector<Column<SchemeQuant>> c = {
        {"scheme", N_("quantizer"), [](const SchemeQuant& r) { return std::string(scheme_name(r.scheme)); },
         [](const SchemeQuant& r) { return tr(scheme_name(r.scheme)); }},
        {"storage/groups", N_("groups"), [](const SchemeQuant& r) { return std::to_string(r.storage.groups); }},
        {"storage/source_bytes", N_("before (B)"), source.first, source.second},
        {"storage/data_bytes", N_("data (B)"), data.first, data.second},
        {"storage/metadata_bytes", N_("scales+zeros (B)"), meta.first, meta.second},
        {"storage/total_bytes", N_("after (B)"), total.first, total.second},
        {"storage/bits_per_element", N_("bits/elem"), [](const SchemeQuant& r) { return csv_number(r.storage.bits_per_element); },
         [](const SchemeQuant& r) { return fmt::format("{:.4g}", r.storage.bits_per_element); }}};
    return c;
}

Table storage_table(const ValuesQuant& v, bool csv) {
    Table t = csv ? columns_table(storage_columns(), v.results) : text_table(storage_columns(), v.results);
    t.right_align = {false};
    return t;
}

json scheme_json(const SchemeQuant& r, std::size_t values) {
    const StorageCost& c = r.storage;
    const QuantResult& q = r.quant;
    json j = {{"scheme", scheme_name(r.scheme)},
              {"report", report_json(q.report)},
              {"storage", {{"groups", c.groups}, {"source_bytes", c.source_bytes}, {"data_bytes", c.data_bytes},
                           {"metadata_bytes", c.metadata_bytes}, {"total_bytes", c.total_bytes},
                           {"bits_per_element", c.bits_per_element}}}};
    j["scales"] = q.scales.size() <= kListedValues ? json(q.scales) : json(nullptr);
    j["zero_points"] = !q.zero_points.empty() && q.zero_points.size() <= kListedValues ? json(q.zero_points) : json(nullptr);
    j["dequantized"] = values <= kListedValues ? json(q.dequantized.v) : json(nullptr);
    return j;
}

const char* kValuesExplain =
    N_("Symmetric: Δ = max|x|/Q per group, Q = 2^(b−1) − 1, x̂ = Δ·clip(round(x/Δ), −Q, Q).\n"
       "Asymmetric: Δ = (max − min)/(2^b − 1) over a range that includes 0, z = round(−min/Δ),\n"
       "  q = clip(round(x/Δ) + z, 0, 2^b − 1), x̂ = Δ·(q − z).\n"
       "Report: max |x̂ − x|, MSE = mean (x̂ − x)², SNR = 10·log10(Σx² / Σ(x̂ − x)²) dB, bias = mean (x̂ − x);\n"
       "values inside the range must satisfy |x − x̂| ≤ Δ/2 (checked; not for stochastic rounding).\n"
       "Storage: elements × b bits + groups × (scale bits + zero-point bits).\n\n");

}  // namespace

Report value_report(const ValueQuant& v, bool draw) {
    const ScalarQuant& q = v.q;
    Report r;
    r.json = {{"x", q.x},         {"step", q.step},           {"qmax", q.qmax},          {"scaled", q.scaled},
              {"rounded", q.rounded}, {"level", q.level}, {"dequantized", q.dequantized}, {"error", q.error},
              {"abs_error", v.abs_error}, {"clipped", q.clipped}, {"rounding", to_string(v.rounding)},
              {"within_half_step", v.within_half_step}, {"exact_arithmetic", q.exact}};
    r.json["scaled_fraction"] = q.exact ? json(q.scaled_fraction) : json(nullptr);
    r.human = wrap(trf(N_("Symmetric uniform quantizer (first document §4.1), rounding {0}"), tr(to_string(v.rounding))));
    r.human += "  " + trf(N_("x = {0}, Δ = {1}, Q = {2}"), num(q.x), num(q.step), q.qmax) + "\n";
    r.human += "  " + trf(N_("level k = clip(round({0}), −{1}, {1}) = {2}{3}"), num(q.scaled), q.qmax, q.level,
                          q.clipped ? tr(N_(" (clipped)")) : "") + "\n";
    r.human += "  " + trf(N_("x̂ = Δ·k = {0}"), num(q.dequantized)) + "\n";
    r.human += wrap(q.clipped ? trf(N_("error x̂ − x = {0} (clipped: outside the range the bound |x − x̂| ≤ Δ/2 does not hold)"),
                                    num(q.error))
                              : trf(N_("error x̂ − x = {0} (|x − x̂| ≤ Δ/2 = {1} holds)"), num(q.error), num(v.half_step)),
                    "  ", "    ") +
               "\n";
    // A level takes 6 columns of the number line: as many as the width holds.
    r.human += render_grid(q, static_cast<int>((text_width() - 2) / 6));
    r.explain = tr(N_("x̂ = Δ·clip(round(x/Δ), −Q, Q)   (first document §4.1)")) + "\n";
    // The exact fraction first, then its decimal (rounded, so "≈"): "= 16.6667 = 50/3 exactly" read
    // as if the decimal were exact.
    r.explain += wrap(q.exact ? fmt::format("x/Δ = {} / {} = {} {} {}", num(q.x), num(q.step), q.scaled_fraction,
                                            decimal_is(q.scaled_fraction, num(q.scaled)) ? "=" : "≈", num(q.scaled)) +
                                    trf(N_(" ({0} exactly: the decimals as typed, not their binary doubles)"),
                                        q.scaled_fraction)
                              : fmt::format("x/Δ = {} / {} = {}", num(q.x), num(q.step), num(q.scaled)),
                      "  ", "    ");
    r.explain += "  " + trf(N_("round({0}) = {1}   ({2})"), num(q.scaled), q.rounded, tr(to_string(v.rounding))) + "\n";
    r.explain += "  " + trf(N_("clip({0}, −{1}, {1}) = {2}"), q.rounded, q.qmax, q.level) + "\n";
    r.explain += "  " + trf(N_("x̂ = {0} × {1} = {2}"), num(q.step), q.level, num(q.dequantized)) + "\n";
    r.explain += "  " + trf(N_("error = x̂ − x = {0} − {1} = {2}"), num(q.dequantized), num(q.x), num(q.error)) + "\n";
    if (draw) r.svg = plots::quantize_value_figure(v);
    return r;
}

Report values_report(const ValuesQuant& v, const QuantizeLabels& labels, bool draw) {
    Report r;
    const QuantConfig& c = v.config;
    r.json["input"] = {{"rows", v.rows}, {"cols", v.cols}, {"origin", labels.origin}};  // English in either language
    r.json["bits"] = c.bits;
    r.json["granularity"] = to_string(c.granularity);
    r.json["group_size"] = c.granularity == Granularity::Group ? json(c.group_size) : json(nullptr);
    r.json["rounding"] = to_string(c.rounding);
    r.json["results"] = json::array();
    std::vector<ErrorRow> rows;
    bool asymmetric = false;
    for (const auto& s : v.results) {
        r.json["results"].push_back(scheme_json(s, s.quant.report.count));
        rows.emplace_back(scheme_name(s.scheme), &s.quant.report);
        asymmetric = asymmetric || s.scheme == Scheme::Asymmetric;
    }
    r.human = wrap(trf(N_("Quantizing {0} at {1} bits (int{1}), scales {2}, rounding {3}"), labels.origin_text, c.bits,
                       granularity_name(c), tr(to_string(c.rounding))));
    r.human += render_table(error_table(rows, "scheme", "report/", false));
    r.human += "\n" + wrap(trf(N_("Storage (source {0}, scales {1}{2}):"), labels.source_dtype, labels.scale_dtype,
                               asymmetric ? trf(N_(", zero points {0} bits"), v.format.zero_bits) : ""));
    r.human += render_table(storage_table(v, false));
    r.add_table("values", error_table(rows, "scheme", "report/", true), "/results");
    r.add_table("storage", storage_table(v, true), "/results");
    r.explain = wrap(tr(kValuesExplain), "", "  ") + r.human;
    if (draw) r.svg = plots::quantize_values_figure(v, labels.origin_text);
    return r;
}

Report kv_report(const KvQuantComparison& c, unsigned bits, Rounding rule, const QuantizeLabels& labels, bool draw) {
    Report r;
    r.json = {{"origin", labels.origin},  // English in either language
              {"bits", bits},
              {"rounding", to_string(rule)},
              {"k_per_channel", report_json(c.k_per_channel)},
              {"k_per_token", report_json(c.k_per_token)},
              {"v_per_token", report_json(c.v_per_token)},
              {"v_per_channel", report_json(c.v_per_channel)},
              {"k_per_channel_better", c.k_per_channel_better}};
    // The rows are the document's four reports, by position (k_per_channel first; the check reads it).
    const std::vector<ErrorRow> rows = {{N_("K per channel"), &c.k_per_channel},
                                        {N_("K per token"), &c.k_per_token},
                                        {N_("V per token"), &c.v_per_token},
                                        {N_("V per channel"), &c.v_per_channel}};
    r.human = wrap(trf(N_("KV-cache quantization at int{0} (symmetric), {1}"), bits, labels.origin_text));
    r.human += render_table(error_table(rows, "#report", "", false));
    const std::string k_mse = fmt::format("{:.4g}", c.k_per_channel.mse), t_mse = fmt::format("{:.4g}", c.k_per_token.mse);
    const std::string verdict =
        c.k_per_channel_better
            ? trf(N_("K per channel beats K per token: MSE {0} against {1} (an outlier channel inflates every token's "
                     "scale when K is scaled per token)."),
                  k_mse, t_mse)
            : trf(N_("K per channel does not beat K per token: MSE {0} against {1} (no strong outlier channels in this "
                     "K)."),
                  k_mse, t_mse);
    r.human += "\n" + wrap(verdict + "\n" +
                               tr(N_("KIVI quantizes K per channel and V per token; weight quantization (SmoothQuant) is "
                                     "a different problem.")),
                           "  ", "    ");
    r.add_table("kv", error_table(rows, "#report", "", true), "/k_per_channel");
    r.explain = wrap(tr(N_("K and V are [tokens, channels]. Per channel: one scale per column (over tokens); per token: "
                           "one scale per row. With a few large K channels, a per-token scale is set by the outlier and "
                           "every other channel of that token loses resolution; a per-channel scale isolates the outlier "
                           "(KIVI)."))) +
                "\n" + r.human;
    if (draw) r.svg = plots::quantize_kv_figure(c, bits, labels.origin_text);
    return r;
}

Report storage_report(const StorageQuant& s, const QuantizeLabels& labels, bool draw) {
    const StorageCost& c = s.cost;
    Report r;
    r.json = {{"elements", s.elements}, {"group_size", s.group_size}, {"bits", s.bits}, {"scale_bits", s.format.scale_bits},
              {"zero_bits", s.format.zero_bits}, {"groups", c.groups}, {"source_bytes", c.source_bytes},
              {"data_bytes", c.data_bytes}, {"metadata_bytes", c.metadata_bytes}, {"total_bytes", c.total_bytes},
              {"bits_per_element", c.bits_per_element}};
    r.human = wrap(trf(s.elements == 1 ? N_("{0} element at int{1} in groups of {2} with one {3} scale{4}:")
                                       : N_("{0} elements at int{1} in groups of {2} with one {3} scale{4}:"),
                       group_thousands(s.elements), s.bits, s.group_size, labels.scale_dtype,
                       zero_point_note(s.format.zero_bits)));
    r.human += wrap(trf(N_("data {0} B + metadata {1} B = {2} B (was {3} B at {4}) → {5} bits per element"),
                        group_thousands(c.data_bytes), group_thousands(c.metadata_bytes), group_thousands(c.total_bytes),
                        group_thousands(c.source_bytes), labels.source_dtype, num(c.bits_per_element)),
                    "  ", "    ");
    // Each part is packed into whole bytes, so each division rounds up (100 × 3 / 8 is 37.5: 38 B).
    r.explain = wrap(trf(N_("bytes = ceil(elements × b / 8) + ceil(groups × (scale bits + zero bits) / 8) = ceil({0} × "
                            "{1} / 8) + ceil({2} × {3} / 8) = {4} + {5} = {6} B"),
                         s.elements, s.bits, c.groups, s.record_bits, group_thousands(c.data_bytes),
                         group_thousands(c.metadata_bytes), group_thousands(c.total_bytes)),
                     "", "    ");
    r.explain += trf(N_("bits per element = {0} × 8 / {1} = {2}"), c.total_bytes, s.elements, num(c.bits_per_element)) + "\n";
    if (draw) r.svg = plots::quantize_storage_figure(s);
    return r;
}

// The weights beside the cache, as decode-roofline and the model count them.
void add_weights(const KvModelQuant& m, Report& r) {
    r.json["weights"] = json::array();
    // Bytes with thousands groups in text, plain in CSV (as the cache's table).
    auto bytes = [](std::uint64_t StorageCost::*field) {
        return std::pair{[field](const WeightPrecisionRow& w) { return std::to_string(w.cost.*field); },
                         [field](const WeightPrecisionRow& w) { return group_thousands(w.cost.*field); }};
    };
    const auto data = bytes(&StorageCost::data_bytes), meta = bytes(&StorageCost::metadata_bytes),
               total = bytes(&StorageCost::total_bytes);
    const std::vector<Column<WeightPrecisionRow>> columns = {
        {"precision", N_("weight precision"), [](const WeightPrecisionRow& w) { return w.precision; }},
        {"data_bytes", N_("data (B)"), data.first, data.second},
        {"metadata_bytes", N_("scales (B)"), meta.first, meta.second},
        {"total_bytes", N_("total (B)"), total.first, total.second}};
    Table t = columns_table(columns, m.weights), text = text_table(columns, m.weights);
    t.right_align = text.right_align = {false};
    for (const auto& w : m.weights)
        r.json["weights"].push_back({{"precision", w.precision}, {"params", w.params}, {"data_bytes", w.cost.data_bytes},
                                     {"metadata_bytes", w.cost.metadata_bytes}, {"total_bytes", w.cost.total_bytes}});
    if (m.weights.empty()) return;
    r.human += "\n" + wrap(trf(N_("Weights of {0} ({1} parameters, every one quantized: embeddings, norms and the LM head "
                                  "too, which deployments usually keep at 16 bits; int8/int4 with one fp16 scale per {2} "
                                  "weights):"),
                               m.model, group_thousands(m.weights.front().params), kWeightGroup));
    r.human += render_table(text);
    r.add_table("weights", t, "/weights");
}

// The cache at each precision: bytes with thousands groups in text, plain in CSV.
std::vector<Column<KvPrecisionRow>> precision_columns(const KvModelQuant& m) {
    auto bytes = [](std::uint64_t KvQuantBytes::*field) {
        return std::pair{[field](const KvPrecisionRow& r) { return std::to_string(r.bytes.*field); },
                         [field](const KvPrecisionRow& r) { return group_thousands(r.bytes.*field); }};
    };
    const auto data = bytes(&KvQuantBytes::data_bytes), meta = bytes(&KvQuantBytes::metadata_bytes),
               total = bytes(&KvQuantBytes::total_bytes), per_token = bytes(&KvQuantBytes::bytes_per_token);
    const std::vector<Column<KvPrecisionRow>> c = {
        {"precision", N_("KV precision"), [](const KvPrecisionRow& r) { return r.precision; }},
        {"data_bytes", N_("data (B)"), data.first, data.second},
        {"metadata_bytes", N_("scales+zeros (B)"), meta.first, meta.second},
        {"total_bytes", N_("total (B)"), total.first, total.second},
        {"bytes_per_token", N_("bytes/token (B)"), per_token.first, per_token.second},
        {"ratio_to_base", "vs " + m.base.name, [](const KvPrecisionRow& r) { return csv_number(r.ratio_to_base); },
         [](const KvPrecisionRow& r) { return format_real(r.ratio_to_base, 4); }, trf(N_("vs {0}"), m.base.name)}};
    return c;
}

Report kv_model_report(const KvModelQuant& m, const QuantizeLabels& labels, bool draw) {
    Report r;
    r.json = {{"model", m.model},           {"seq_len", m.seq_len},       {"group_size", m.group_size},
              {"kv_dtype", m.base.name},     {"scale_bits", m.scale_bits}, {"zero_bits", m.zero_bits},
              {"rows", json::array()}};
    Table t = text_table(precision_columns(m), m.rows), csv = columns_table(precision_columns(m), m.rows);
    t.right_align = csv.right_align = {false};
    for (const auto& row : m.rows) {
        const KvQuantBytes& q = row.bytes;
        r.json["rows"].push_back({{"precision", row.precision}, {"data_bytes", q.data_bytes},
                                  {"metadata_bytes", q.metadata_bytes}, {"total_bytes", q.total_bytes},
                                  {"bytes_per_token", q.bytes_per_token}, {"ratio_to_base", row.ratio_to_base}});
    }
    r.human = wrap(m.group_size == 1
                       ? trf(N_("KV cache of {0} at S = {1} (kv-mem's formula), quantized with one {2} scale per "
                                "element{3}:"),
                             m.model, m.seq_len, labels.scale_dtype, zero_point_note(m.zero_bits))
                       : trf(N_("KV cache of {0} at S = {1} (kv-mem's formula), quantized with one {2} scale per {3} "
                                "elements{4}:"),
                             m.model, m.seq_len, labels.scale_dtype, group_thousands(m.group_size),
                             zero_point_note(m.zero_bits)));
    r.human += render_table(t);
    std::string totals;
    for (const auto& row : m.rows)
        totals += (totals.empty() ? "" : tr(N_("; "))) + row.precision + " " + bytes_all_units(row.bytes.total_bytes);
    r.human += wrap(trf(N_("total: {0}"), totals), "  ", "    ");
    if (m.sliding_layers)
        r.human += wrap(trf(N_("bytes/token counts every layer before windows cap the {0} sliding layers ({1}); the "
                               "totals at S = {2} honour the windows"),
                            m.sliding_layers, m.window_rule.localized(), m.seq_len),
                        "  ", "    ");
    r.add_table("precisions", csv, "/rows");  // first: what a plain --csv prints
    add_weights(m, r);
    r.explain = wrap(tr(N_("bytes = kv-mem's bytes at b bits + (elements / group) × (scale + zero bits) / 8")), "", "    ") +
                wrap(trf(N_("weights: parameters × b / 8 + (parameters / {0}) × {1} / 8 at int8/int4 (one fp16 scale per "
                            "{0})"),
                         kWeightGroup, kWeightScaleBits),
                     "", "    ") +
                "\n" + r.human;
    if (draw) r.svg = plots::quantize_model_figure(m);
    return r;
}

}  // namespace inferlab::app
