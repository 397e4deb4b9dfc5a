// Printers of `inferlab quantize`, one per mode: text, JSON, CSV tables and the explanation side
// by side. They choose what to print; every number comes from the library's result.
#include "quantize_print.hpp"

#include <fmt/format.h>

#include "inferlab/plots.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;
using app::wrap;

std::string num(double v) { return format_real(v, 6); }
// CSV cells: the double that reads back exactly (17 significant digits at most).
std::string cell(double v) { return format_short(v, 17); }
// More values than this and the JSON leaves the per-value arrays out (null).
constexpr std::size_t kListedValues = 64;

// " and an 8-bit zero point" ("an" where the number is said with a vowel: 8, 11, 18); "" for none.
std::string zero_point_note(unsigned bits) {
    if (bits == 0) return "";
    return fmt::format(" and {} {}-bit zero point", bits == 8 || bits == 11 || bits == 18 ? "an" : "a", bits);
}

std::string scheme_name(Scheme s) { return s == Scheme::Symmetric ? "symmetric" : "asymmetric"; }

json report_json(const ErrorReport& r) {
    json j = {{"count", r.count},           {"groups", r.groups},        {"max_abs_error", r.max_abs_error},
              {"mse", r.mse},               {"mean_error", r.mean_error}, {"clipped", r.clipped},
              {"bound_checked", r.bound_checked}, {"bound_violations", r.bound_violations}};
    j["snr_db"] = r.snr_db ? json(*r.snr_db) : json(nullptr);
    return j;
}

// The error table: in text "exact" where the error is zero and "k/n ok" for the bound; in CSV
// numbers only (an empty SNR where the error is zero, the bound as two counts).
Table error_table(const std::vector<std::pair<std::string, const ErrorReport*>>& rows, bool csv) {
    Table t{csv ? std::vector<std::string>{"quantizer", "max |err|", "MSE", "SNR (dB)", "bias", "clipped",
                                           "|err| ≤ Δ/2", "bound checked"}
                : std::vector<std::string>{"quantizer", "max |err|", "MSE", "SNR dB", "bias", "clipped", "|err| ≤ Δ/2"},
            {}, {false}};
    for (const auto& [name, r] : rows) {
        if (csv) {
            t.rows.push_back({name, cell(r->max_abs_error), cell(r->mse), r->snr_db ? cell(*r->snr_db) : "",
                              cell(r->mean_error), std::to_string(r->clipped),
                              std::to_string(r->bound_held()), std::to_string(r->bound_checked)});
            continue;
        }
        t.rows.push_back({name, fmt::format("{:.6g}", r->max_abs_error), fmt::format("{:.6g}", r->mse),
                          r->snr_db ? fmt::format("{:.2f}", *r->snr_db) : "exact", fmt::format("{:+.3g}", r->mean_error),
                          std::to_string(r->clipped),
                          r->bound_checked ? fmt::format("{}/{} ok", r->bound_held(), r->bound_checked)
                                           : "-"});
    }
    return t;
}

// The heading names bits and granularity; a row names its scheme.
std::string quantizer_name(const ValuesQuant&, Scheme s) { return scheme_name(s); }

std::string granularity_name(const QuantConfig& c) {
    return to_string(c.granularity) + (c.granularity == Granularity::Group ? " of " + std::to_string(c.group_size) : "");
}

Table storage_table(const ValuesQuant& v, bool csv) {
    Table t{{"quantizer", "groups", "before (B)", "data (B)", "scales+zeros (B)", "after (B)", "bits/elem"}, {}, {false}};
    auto bytes = [csv](std::uint64_t b) { return csv ? std::to_string(b) : group_thousands(b); };
    for (const auto& r : v.results) {
        const StorageCost& c = r.storage;
        t.rows.push_back({quantizer_name(v, r.scheme), std::to_string(c.groups), bytes(c.source_bytes), bytes(c.data_bytes),
                          bytes(c.metadata_bytes), bytes(c.total_bytes),
                          csv ? cell(c.bits_per_element) : fmt::format("{:.4g}", c.bits_per_element)});
    }
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
    "Symmetric: Δ = max|x|/Q per group, Q = 2^(b−1) − 1, x̂ = Δ·clip(round(x/Δ), −Q, Q).\n"
    "Asymmetric: Δ = (max − min)/(2^b − 1) over a range that includes 0, z = round(−min/Δ),\n"
    "  q = clip(round(x/Δ) + z, 0, 2^b − 1), x̂ = Δ·(q − z).\n"
    "Report: max |x̂ − x|, MSE = mean (x̂ − x)², SNR = 10·log10(Σx² / Σ(x̂ − x)²) dB, bias = mean (x̂ − x);\n"
    "values inside the range must satisfy |x − x̂| ≤ Δ/2 (checked; not for stochastic rounding).\n"
    "Storage: elements × b bits + groups × (scale bits + zero-point bits).\n\n";

}  // namespace

Report value_report(const ValueQuant& v, bool draw) {
    const ScalarQuant& q = v.q;
    Report r;
    r.json = {{"x", q.x},         {"step", q.step},           {"qmax", q.qmax},          {"scaled", q.scaled},
              {"rounded", q.rounded}, {"level", q.level}, {"dequantized", q.dequantized}, {"error", q.error},
              {"abs_error", v.abs_error}, {"clipped", q.clipped}, {"rounding", to_string(v.rounding)},
              {"within_half_step", v.within_half_step}, {"exact_arithmetic", q.exact}};
    r.json["scaled_fraction"] = q.exact ? json(q.scaled_fraction) : json(nullptr);
    r.human = fmt::format("Symmetric uniform quantizer (first document §4.1), rounding {}\n", to_string(v.rounding));
    r.human += fmt::format("  x = {}, Δ = {}, Q = {}\n  level k = clip(round({}), −{}, {}) = {}{}\n  x̂ = Δ·k = {}\n",
                           num(q.x), num(q.step), q.qmax, num(q.scaled), q.qmax, q.qmax, q.level,
                           q.clipped ? " (clipped)" : "", num(q.dequantized));
    r.human += wrap(fmt::format("error x̂ − x = {}{}", num(q.error),
                                q.clipped ? " (clipped: outside the range the bound |x − x̂| ≤ Δ/2 does not hold)"
                                          : fmt::format(" (|x − x̂| ≤ Δ/2 = {} holds)", num(v.half_step))),
                    "  ", "    ") +
               "\n";
    // A level takes 6 columns of the number line: as many as the width holds.
    r.human += render_grid(q, static_cast<int>((text_width() - 2) / 6));
    r.explain = "x̂ = Δ·clip(round(x/Δ), −Q, Q)   (first document §4.1)\n";
    r.explain += wrap(fmt::format("x/Δ = {} / {} = {}{}", num(q.x), num(q.step), num(q.scaled),
                                  q.exact ? fmt::format(" = {} exactly (the decimals as typed, not their binary doubles)",
                                                        q.scaled_fraction)
                                          : ""),
                      "  ", "    ");
    r.explain += fmt::format("  round({}) = {}   ({})\n", num(q.scaled), q.rounded, to_string(v.rounding));
    r.explain += fmt::format("  clip({}, −{}, {}) = {}\n", q.rounded, q.qmax, q.qmax, q.level);
    r.explain += fmt::format("  x̂ = {} × {} = {}\n", num(q.step), q.level, num(q.dequantized));
    r.explain += fmt::format("  error = x̂ − x = {} − {} = {}\n", num(q.dequantized), num(q.x), num(q.error));
    if (draw) r.svg = plots::quantize_value_figure(v);
    return r;
}

Report values_report(const ValuesQuant& v, const QuantizeLabels& labels, bool draw) {
    Report r;
    const QuantConfig& c = v.config;
    r.json["input"] = {{"rows", v.rows}, {"cols", v.cols}, {"origin", labels.origin}};
    r.json["bits"] = c.bits;
    r.json["granularity"] = to_string(c.granularity);
    r.json["group_size"] = c.granularity == Granularity::Group ? json(c.group_size) : json(nullptr);
    r.json["rounding"] = to_string(c.rounding);
    r.json["results"] = json::array();
    std::vector<std::pair<std::string, const ErrorReport*>> rows;
    bool asymmetric = false;
    for (const auto& s : v.results) {
        r.json["results"].push_back(scheme_json(s, s.quant.report.count));
        rows.emplace_back(quantizer_name(v, s.scheme), &s.quant.report);
        asymmetric = asymmetric || s.scheme == Scheme::Asymmetric;
    }
    r.human = wrap(fmt::format("Quantizing {} at {} bits (int{}), scales {}, rounding {}", labels.origin, c.bits, c.bits,
                               granularity_name(c), to_string(c.rounding)));
    r.human += render_table(error_table(rows, false));
    r.human += "\n" + wrap(fmt::format("Storage (source {}, scales {}{}):", labels.source_dtype, labels.scale_dtype,
                                       asymmetric ? fmt::format(", zero points {} bits", v.format.zero_bits) : ""));
    r.human += render_table(storage_table(v, false));
    r.add_table("values", error_table(rows, true));
    r.add_table("storage", storage_table(v, true));
    r.explain = wrap(kValuesExplain, "", "  ") + r.human;
    if (draw) r.svg = plots::quantize_values_figure(v, labels.origin);
    return r;
}

Report kv_report(const KvQuantComparison& c, unsigned bits, Rounding rule, const QuantizeLabels& labels, bool draw) {
    Report r;
    r.json = {{"origin", labels.origin},
              {"bits", bits},
              {"rounding", to_string(rule)},
              {"k_per_channel", report_json(c.k_per_channel)},
              {"k_per_token", report_json(c.k_per_token)},
              {"v_per_token", report_json(c.v_per_token)},
              {"v_per_channel", report_json(c.v_per_channel)},
              {"k_per_channel_better", c.k_per_channel_better}};
    const std::vector<std::pair<std::string, const ErrorReport*>> rows = {{"K per channel", &c.k_per_channel},
                                                                          {"K per token", &c.k_per_token},
                                                                          {"V per token", &c.v_per_token},
                                                                          {"V per channel", &c.v_per_channel}};
    r.human = wrap(fmt::format("KV-cache quantization at int{} (symmetric), {}", bits, labels.origin));
    r.human += render_table(error_table(rows, false));
    r.human += "\n" + wrap(fmt::format("K per channel {} K per token: MSE {:.4g} against {:.4g} ({}).\n"
                                       "KIVI quantizes K per channel and V per token; weight quantization (SmoothQuant) "
                                       "is a different problem.",
                                       c.k_per_channel_better ? "beats" : "does not beat", c.k_per_channel.mse,
                                       c.k_per_token.mse,
                                       c.k_per_channel_better
                                           ? "an outlier channel inflates every token's scale when K is scaled per token"
                                           : "no strong outlier channels in this K"),
                           "  ", "    ");
    r.add_table("kv", error_table(rows, true));
    r.explain = wrap("K and V are [tokens, channels]. Per channel: one scale per column (over tokens); per token: one "
                     "scale per row. With a few large K channels, a per-token scale is set by the outlier and every "
                     "other channel of that token loses resolution; a per-channel scale isolates the outlier (KIVI).") +
                "\n" + r.human;
    if (draw) r.svg = plots::quantize_kv_figure(c, bits, labels.origin);
    return r;
}

Report storage_report(const StorageQuant& s, const QuantizeLabels& labels, bool draw) {
    const StorageCost& c = s.cost;
    Report r;
    r.json = {{"elements", s.elements}, {"group_size", s.group_size}, {"bits", s.bits}, {"scale_bits", s.format.scale_bits},
              {"zero_bits", s.format.zero_bits}, {"groups", c.groups}, {"source_bytes", c.source_bytes},
              {"data_bytes", c.data_bytes}, {"metadata_bytes", c.metadata_bytes}, {"total_bytes", c.total_bytes},
              {"bits_per_element", c.bits_per_element}};
    r.human = wrap(fmt::format("{} at int{} in groups of {} with one {} scale{}:", count_noun(s.elements, "element"), s.bits,
                               s.group_size, labels.scale_dtype,
                               zero_point_note(s.format.zero_bits)));
    r.human += wrap(fmt::format("data {} B + metadata {} B = {} B (was {} B at {}) → {} bits per element",
                                group_thousands(c.data_bytes), group_thousands(c.metadata_bytes),
                                group_thousands(c.total_bytes), group_thousands(c.source_bytes), labels.source_dtype,
                                num(c.bits_per_element)),
                    "  ", "    ");
    r.explain = wrap(fmt::format("bytes = elements × b / 8 + groups × (scale bits + zero bits) / 8 = {} × {} / 8 + {} × {} "
                                 "/ 8 = {} B",
                                 s.elements, s.bits, c.groups, s.record_bits, c.total_bytes),
                     "", "    ");
    r.explain += fmt::format("bits per element = {} × 8 / {} = {}\n", c.total_bytes, s.elements, num(c.bits_per_element));
    if (draw) r.svg = plots::quantize_storage_figure(s);
    return r;
}

// The weights beside the cache, as decode-roofline and the model count them.
void add_weights(const KvModelQuant& m, Report& r) {
    r.json["weights"] = json::array();
    Table t{{"weight precision", "data (B)", "scales (B)", "total (B)"}, {}, {false}};
    for (const auto& w : m.weights) {
        t.rows.push_back({w.precision, std::to_string(w.cost.data_bytes), std::to_string(w.cost.metadata_bytes),
                          std::to_string(w.cost.total_bytes)});
        r.json["weights"].push_back({{"precision", w.precision}, {"params", w.params}, {"data_bytes", w.cost.data_bytes},
                                     {"metadata_bytes", w.cost.metadata_bytes}, {"total_bytes", w.cost.total_bytes}});
    }
    if (m.weights.empty()) return;
    r.human += "\n" + wrap(fmt::format("Weights of {} ({} parameters; int8/int4 with one fp16 scale per {} weights):", m.model,
                                      group_thousands(m.weights.front().params), kWeightGroup));
    r.human += render_table(t);
    r.add_table("weights", t);
}

Report kv_model_report(const KvModelQuant& m, const QuantizeLabels& labels, bool draw) {
    Report r;
    r.json = {{"model", m.model},           {"seq_len", m.seq_len},       {"group_size", m.group_size},
              {"kv_dtype", m.base.name},     {"scale_bits", m.scale_bits}, {"zero_bits", m.zero_bits},
              {"rows", json::array()}};
    const std::vector<std::string> columns = {"KV precision", "data (B)", "scales+zeros (B)", "total (B)", "bytes/token (B)",
                                              "vs " + m.base.name};
    Table t{columns, {}, {false}}, csv{columns, {}, {false}};
    for (const auto& row : m.rows) {
        const KvQuantBytes& q = row.bytes;
        t.rows.push_back({row.precision, group_thousands(q.data_bytes), group_thousands(q.metadata_bytes),
                          group_thousands(q.total_bytes), group_thousands(q.bytes_per_token), format_real(row.ratio_to_base, 4)});
        csv.rows.push_back({row.precision, std::to_string(q.data_bytes), std::to_string(q.metadata_bytes),
                            std::to_string(q.total_bytes), std::to_string(q.bytes_per_token), cell(row.ratio_to_base)});
        r.json["rows"].push_back({{"precision", row.precision}, {"data_bytes", q.data_bytes},
                                  {"metadata_bytes", q.metadata_bytes}, {"total_bytes", q.total_bytes},
                                  {"bytes_per_token", q.bytes_per_token}, {"ratio_to_base", row.ratio_to_base}});
    }
    r.human = wrap(fmt::format("KV cache of {} at S = {} (kv-mem's formula), quantized with one {} scale per {}{}:", m.model,
                               m.seq_len, labels.scale_dtype,
                               m.group_size == 1 ? std::string("element") : count_noun(m.group_size, "element"),
                               zero_point_note(m.zero_bits)));
    r.human += render_table(t);
    std::string totals;
    for (const auto& row : m.rows) totals += fmt::format("{}{} {}", totals.empty() ? "" : "; ", row.precision, bytes_all_units(row.bytes.total_bytes));
    r.human += wrap("total: " + totals, "  ", "    ");
    if (m.sliding_layers)
        r.human += wrap(fmt::format("bytes/token counts every layer before windows cap the {} sliding layers ({}); the "
                                    "totals at S = {} honour the windows",
                                    m.sliding_layers, m.window_rule, m.seq_len),
                        "  ", "    ");
    r.add_table("precisions", csv);  // first: what a plain --csv prints
    add_weights(m, r);
    r.explain = wrap("bytes = kv-mem's bytes at b bits + (elements / group) × (scale + zero bits) / 8", "", "    ") +
                wrap("weights: parameters × b / 8 + (parameters / 32) × 16 / 8 at int8/int4 (one fp16 scale per 32)", "", "    ") + "\n" + r.human;
    if (draw) r.svg = plots::quantize_model_figure(m);
    return r;
}

}  // namespace inferlab::app
