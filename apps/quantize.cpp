// inferlab quantize: the grid, the error, and what the bits really save.
#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <memory>

#include "common.hpp"
#include "options.hpp"
#include "quantize_print.hpp"
#include "inferlab/answer/quantize.hpp"
#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/rational.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/data/readers.hpp"

namespace inferlab::app {
namespace {

struct QuantizeOptions {
    std::string x, step, qmax, bits;
    std::string values, file, gen, outliers, seed = "1";
    std::string scheme = "symmetric", granularity = "tensor", group_size, rounding = "half-away";
    std::string source_dtype = "fp32", scale_dtype = "fp16", zero_bits = "8", elements;
    std::string kv_gen, outlier_channels = "4", outlier_factor = "20", k_file, v_file;
    std::string model, config, seq_len, kv_dtype, bytes_per_elem;
    OutputFlags out;
};

// The most values a --gen or --file matrix and a --kv-gen cache may hold (memory, not rule).
constexpr std::size_t kMaxValues = 10'000'000;
constexpr std::size_t kMaxKvValues = 4'000'000;

// "normal:1024" or "normal:64x128".
Matrix generate(const QuantizeOptions& o, Rng& rng) {
    const std::string prefix = "normal:";
    if (o.gen.rfind(prefix, 0) != 0) throw InputError("--gen", o.gen, N_("must be normal:N or normal:ROWSxCOLS"));
    MatrixShape d;
    try {
        d = parse_dims("--gen", o.gen.substr(prefix.size()), kMaxValues, true);
    } catch (const InputError& e) {
        // The value as typed, prefix included ("--gen 'normal:0x4'"), with the library's rule kept
        // as its msgid and values, so that it is still translated.
        throw e.with_value(o.gen);
    }
    double frac = 0, factor = 1;
    if (!o.outliers.empty()) {
        auto colon = o.outliers.find(':');
        if (colon == std::string::npos) throw InputError("--outliers", o.outliers, N_("must be FRACTION:FACTOR, e.g. 0.01:20"));
        frac = parse_probability("--outliers", o.outliers.substr(0, colon));
        factor = parse_positive_real("--outliers", o.outliers.substr(colon + 1));
    }
    return generate_normal(d.rows, d.cols, frac, factor, rng);
}

enum class Mode { Value, Values, Kv, Elements, Model };

Mode mode_of(const QuantizeOptions& o) {
    const int modes = !o.x.empty() + (!o.values.empty() || !o.file.empty() || !o.gen.empty()) +
                      (!o.kv_gen.empty() || !o.k_file.empty() || !o.v_file.empty()) + !o.elements.empty() +
                      (!o.model.empty() || !o.config.empty());
    if (modes == 0)
        throw InputError(N_("nothing to quantize: give --x (one value), --values/--file/--gen (many), --kv-gen or "
                            "--k-file/--v-file (a KV cache), --elements (storage) or --model (a model's KV bytes)"));
    if (modes > 1) throw InputError(N_("choose one input: --x, --values/--file/--gen, --kv-gen, --elements or --model"));
    if (!o.x.empty()) return Mode::Value;
    if (!o.kv_gen.empty() || !o.k_file.empty() || !o.v_file.empty()) return Mode::Kv;
    if (!o.elements.empty()) return Mode::Elements;
    if (!o.model.empty() || !o.config.empty()) return Mode::Model;
    return Mode::Values;
}

// The flags each mode reads besides its inputs; any other given flag would be silently ignored,
// so it is refused, naming the flag and the input it does not apply to.
void check_effects(const CLI::App& sub, const QuantizeOptions& o, Mode mode) {
    static const std::vector<std::pair<Mode, std::vector<std::string>>> reads = {
        {Mode::Value, {"--x", "--step", "--qmax", "--bits", "--rounding", "--seed"}},
        {Mode::Values, {"--values", "--file", "--gen", "--outliers", "--seed", "--bits", "--scheme", "--granularity",
                        "--group-size", "--rounding", "--source-dtype", "--scale-dtype", "--zero-bits"}},
        {Mode::Kv, {"--kv-gen", "--k-file", "--v-file", "--outlier-channels", "--outlier-factor", "--seed", "--bits",
                    "--rounding"}},
        {Mode::Elements, {"--elements", "--bits", "--group-size", "--scheme", "--source-dtype", "--scale-dtype",
                          "--zero-bits"}},
        {Mode::Model, {"--model", "--config", "--seq-len", "--kv-dtype", "--bytes-per-elem", "--group-size", "--scheme",
                       "--scale-dtype", "--zero-bits"}}};
    static const std::vector<std::string> all = {
        "--x", "--step", "--qmax", "--bits", "--values", "--file", "--gen", "--outliers", "--seed", "--scheme",
        "--granularity", "--group-size", "--rounding", "--source-dtype", "--scale-dtype", "--zero-bits", "--elements",
        "--kv-gen", "--outlier-channels", "--outlier-factor", "--k-file", "--v-file", "--model", "--config", "--seq-len",
        "--kv-dtype", "--bytes-per-elem"};
    const auto& ok = std::find_if(reads.begin(), reads.end(), [&](const auto& m) { return m.first == mode; })->second;
    const std::string input = mode == Mode::Value ? "--x" : mode == Mode::Values ? "--values/--file/--gen"
                              : mode == Mode::Kv  ? "--kv-gen/--k-file/--v-file"
                              : mode == Mode::Elements ? "--elements" : "--model/--config";
    for (const auto& f : all)
        if (given(sub, f) && std::find(ok.begin(), ok.end(), f) == ok.end())
            throw InputError(N_("{0} has no effect with {1} (run inferlab quantize --help for what each input reads)"),
                             {f, input});
    // `why` is a msgid whose {0} is the flag and {1} the input it needs.
    auto needs = [&](const std::string& f, bool effective, const char* why, const std::string& needed = "") {
        if (given(sub, f) && !effective) throw InputError(why, {f, needed});
    };
    needs("--outliers", !o.gen.empty(), N_("{0} applies only to {1}"), "--gen");
    needs("--outlier-channels", !o.kv_gen.empty(), N_("{0} applies only to {1}"), "--kv-gen");
    needs("--outlier-factor", !o.kv_gen.empty(), N_("{0} applies only to {1}"), "--kv-gen");
    needs("--zero-bits", o.scheme != "symmetric", N_("{0} has no effect with --scheme symmetric (no zero point is stored)"));
    needs("--seed", !o.gen.empty() || !o.kv_gen.empty() || o.rounding == "stochastic",
          N_("{0} has no effect here: it seeds --gen, --kv-gen and --rounding stochastic"));
}

std::vector<Scheme> schemes_of(const std::string& text, bool both_allowed) {
    if (text == "symmetric") return {Scheme::Symmetric};
    if (text == "asymmetric") return {Scheme::Asymmetric};
    if (text == "both" && both_allowed) return {Scheme::Symmetric, Scheme::Asymmetric};
    throw InputError("--scheme", text,
                     both_allowed ? N_("must be symmetric, asymmetric or both") : N_("must be symmetric or asymmetric"));
}

StorageFormat format_of(const QuantizeOptions& o, bool asymmetric) {
    StorageFormat f;
    const DType source = parse_dtype("--source-dtype", o.source_dtype), scale = parse_dtype("--scale-dtype", o.scale_dtype);
    f.source_bits = source.bits;
    f.scale_bits = scale.bits;
    f.source_dtype = source.name;
    f.scale_dtype = scale.name;
    f.zero_bits = asymmetric ? static_cast<unsigned>(parse_nonnegative_int_at_most("--zero-bits", o.zero_bits, 32, "")) : 0;
    return f;
}

// `origin` builds the phrase naming the input, in English or in the reader's language.
template <class Origin>
QuantizeLabels labels_of(const QuantizeOptions& o, const Origin& origin) {
    return {origin(Lang::en), origin(language()), o.source_dtype, o.scale_dtype};
}
QuantizeLabels labels_of(const QuantizeOptions& o) { return {"", "", o.source_dtype, o.scale_dtype}; }

Report run_value(const QuantizeOptions& o, Rng& rng, Rounding rule) {
    if (o.step.empty()) throw InputError(N_("--step is required with --x (Δ, the quantization step)"));
    if (!o.qmax.empty() && !o.bits.empty()) throw InputError(N_("--qmax and --bits both given: choose one"));
    if (o.qmax.empty() && o.bits.empty()) throw InputError(N_("give --qmax Q or --bits b (Q = 2^(b−1) − 1)"));
    const std::int64_t qmax = !o.qmax.empty()
                                  ? static_cast<std::int64_t>(parse_positive_int_at_most("--qmax", o.qmax, 1u << 20, ""))
                                  : symmetric_qmax(parse_bits_in(o.bits, 2, 16));
    return value_report(quantize_value(o.x, o.step, qmax, rule, &rng, "--x", "--step"), !o.out.svg.empty());
}

Matrix values_matrix(const QuantizeOptions& o, Rng& rng, QuantizeLabels& labels) {
    if (!o.values.empty() + !o.file.empty() + !o.gen.empty() > 1) throw InputError(N_("choose one of --values, --file and --gen"));
    Matrix m;
    if (!o.values.empty()) {
        for (const auto& item : split_list("--values", o.values)) m.v.push_back(parse_real("--values", item));
        m.rows = 1;
        m.cols = m.v.size();
        labels = labels_of(o, [&](Lang l) {
            return counted(m.v.size(), N_("{0} value from --values"), N_("{0} values from --values"), l);
        });
    } else if (!o.file.empty()) {
        m = read_matrix_file("--file", o.file, kMaxValues);
        labels = labels_of(o, [&](Lang l) {
            return substitute(tr_in(l, N_("{0} × {1} values from {2}")), {std::to_string(m.rows), std::to_string(m.cols), o.file});
        });
    } else {
        m = generate(o, rng);
        labels = labels_of(o, [&](Lang l) {
            const std::vector<std::string> args = {std::to_string(m.rows), std::to_string(m.cols), o.seed, o.outliers};
            return substitute(tr_in(l, o.outliers.empty() ? N_("{0} × {1} normal values (seed {2})")
                                                   : N_("{0} × {1} normal values (seed {2}), outliers {3}")),
                              args);
        });
    }
    return m;
}

Report run_values(const QuantizeOptions& o, Rng& rng, Rounding rule, const CLI::App& sub) {
    QuantizeLabels labels;
    const Matrix m = values_matrix(o, rng, labels);
    QuantConfig cfg;
    cfg.bits = o.bits.empty() ? 8 : parse_bits_in(o.bits, 2, 16);
    cfg.granularity = parse_granularity("--granularity", o.granularity);
    cfg.group_where = "--group-size";
    if (!o.group_size.empty()) {
        cfg.group_size = parse_positive_int("--group-size", o.group_size);
        if (!given(sub, "--granularity")) cfg.granularity = Granularity::Group;
        if (cfg.granularity != Granularity::Group)
            throw InputError("--group-size", o.group_size, N_("applies only with --granularity group"));
    }
    cfg.rounding = rule;
    const auto schemes = schemes_of(o.scheme, true);
    const std::string where = !o.values.empty() ? "--values" : !o.file.empty() ? "--file" : "--gen";
    const ValuesQuant v = quantize_values(m, cfg, schemes, format_of(o, o.scheme != "symmetric"), &rng,
                                          {where, "--source-dtype", "--scale-dtype"});
    return values_report(v, labels, !o.out.svg.empty());
}

Report run_kv(const QuantizeOptions& o, Rng& rng, Rounding rule) {
    Matrix k, v;
    QuantizeLabels labels;
    if (!o.k_file.empty() || !o.v_file.empty()) {
        if (o.k_file.empty() || o.v_file.empty()) throw InputError(N_("give both --k-file and --v-file"));
        k = read_matrix_file("--k-file", o.k_file, kMaxKvValues);
        v = read_matrix_file("--v-file", o.v_file, kMaxKvValues);
        // Channels may differ (d_k ≠ d_v), tokens may not: each cached token has one K and one V row.
        if (v.rows != k.rows)
            throw InputError("--v-file", o.v_file, N_("has {0} rows (tokens) where --k-file has {1}: K and V hold one row per cached token"),
                             {std::to_string(v.rows), std::to_string(k.rows)});
        labels = labels_of(o, [&](Lang l) {
            return substitute(tr_in(l, N_("K {0}×{1} from {2}, V {3}×{4} from {5}")),
                              {std::to_string(k.rows), std::to_string(k.cols), o.k_file, std::to_string(v.rows),
                               std::to_string(v.cols), o.v_file});
        });
    } else {
        const MatrixShape d = parse_dims("--kv-gen", o.kv_gen, kMaxKvValues, false);
        const std::size_t tokens = d.rows, channels = d.cols;
        std::size_t oc = parse_nonnegative_int("--outlier-channels", o.outlier_channels);
        if (oc > channels) throw InputError("--outlier-channels", o.outlier_channels, N_("must not exceed the channel count"));
        double f = parse_positive_real("--outlier-factor", o.outlier_factor);
        k = generate_k_with_outlier_channels(tokens, channels, oc, f, rng);
        v = generate_normal(tokens, channels, 0, 1, rng);
        labels = labels_of(o, [&](Lang l) {
            return substitute(tr_in(l, N_("generated K and V, {0} × {1}, {2} ×{3} (seed {4})")),
                              {counted(tokens, N_("{0} token"), N_("{0} tokens"), l),
                               counted(channels, N_("{0} channel"), N_("{0} channels"), l),
                               counted(oc, N_("{0} K channel"), N_("{0} K channels"), l), format_real(f, 4), o.seed});
        });
    }
    const unsigned bits = o.bits.empty() ? 4u : parse_bits_in(o.bits, 2, 16);
    return kv_report(compare_kv_quantization(k, v, bits, rule, &rng), bits, rule, labels, !o.out.svg.empty());
}

Report run_elements(const QuantizeOptions& o) {
    const std::uint64_t n = parse_positive_int("--elements", o.elements);
    const unsigned bits = o.bits.empty() ? 8u : parse_bits_in(o.bits, 2, 16);
    const std::uint64_t g = o.group_size.empty() ? n : parse_positive_int("--group-size", o.group_size);
    const bool asym = schemes_of(o.scheme, false).front() == Scheme::Asymmetric;
    return storage_report(quantize_storage(n, g, bits, format_of(o, asym)), labels_of(o), !o.out.svg.empty());
}

Report run_model(const QuantizeOptions& o) {
    if (!o.model.empty() && !o.config.empty()) throw InputError(N_("--model and --config both given: choose one"));
    if (!o.kv_dtype.empty() && !o.bytes_per_elem.empty())
        throw InputError(N_("--kv-dtype and --bytes-per-elem both given: choose one"));
    ModelConfig cfg = o.model.empty() ? load_config_file(o.config, "--config") : load_named_model(o.model, "--model");
    if (o.seq_len.empty()) throw InputError(N_("--seq-len is required with --model/--config"));
    const std::uint64_t s = parse_tokens("--seq-len", o.seq_len);
    if (s == 0) throw InputError("--seq-len", o.seq_len, N_("must be a positive token count"));
    std::optional<std::uint64_t> g;
    if (!o.group_size.empty()) g = parse_positive_int("--group-size", o.group_size);
    const bool asym = schemes_of(o.scheme, false).front() == Scheme::Asymmetric;
    // One rule for a config without torch_dtype (as kv-mem and decode-roofline): never assume one.
    require_precision_flags(cfg, {{"--kv-dtype", !o.kv_dtype.empty() || !o.bytes_per_elem.empty()}});
    DType base = !o.kv_dtype.empty() ? parse_dtype("--kv-dtype", o.kv_dtype) : cfg.dtype.value_or(DType{});
    if (!o.bytes_per_elem.empty()) {
        const auto bits = parse_bytes_per_elem_bits("--bytes-per-elem", o.bytes_per_elem);
        base = {fmt::format("{}-bit", bits), bits};
    }
    const StorageFormat f = format_of(o, asym);
    return kv_model_report(kv_model_quant(cfg, s, g, base, f.scale_bits, f.zero_bits, "--group-size"), labels_of(o),
                           !o.out.svg.empty());
}

void run(const QuantizeOptions& o, const CLI::App& sub) {
    const Mode mode = mode_of(o);
    check_effects(sub, o, mode);
    const Rounding rule = parse_rounding("--rounding", o.rounding);
    Rng rng(parse_nonnegative_int("--seed", o.seed));
    switch (mode) {
        case Mode::Value: return emit(run_value(o, rng, rule), o.out);
        case Mode::Values: return emit(run_values(o, rng, rule, sub), o.out);
        case Mode::Kv: return emit(run_kv(o, rng, rule), o.out);
        case Mode::Elements: return emit(run_elements(o), o.out);
        case Mode::Model: return emit(run_model(o), o.out);
    }
}

}  // namespace

void setup_quantize(CLI::App& app) {
    auto opt = std::make_shared<QuantizeOptions>();
    CLI::App* sub = app.add_subcommand("quantize", tr(N_("Uniform quantization: the grid, the error, and the bytes it saves")));
    sub->add_option("--x", opt->x, tr(N_("one value to quantize")));
    sub->add_option("--step", opt->step, tr(N_("Δ, the step, with --x")));
    sub->add_option("--qmax", opt->qmax, tr(N_("Q, the largest level magnitude, with --x")));
    sub->add_option("--bits", opt->bits, tr(N_("b in 2..16 (symmetric Q = 2^(b−1) − 1); default 8 (4 for the KV case)")));
    sub->add_option("--values", opt->values, tr(N_("values to quantize: 0.1,-0.5,...")));
    sub->add_option("--file", opt->file, tr(N_("values from a file: one per line, or CSV rows (a matrix)")));
    sub->add_option("--gen", opt->gen, tr(N_("generated values: normal:N or normal:ROWSxCOLS")));
    sub->add_option("--outliers", opt->outliers, tr(N_("with --gen: FRACTION:FACTOR of values scaled up (0.01:20)")));
    sub->add_option("--seed", opt->seed, tr(N_("seed for --gen, --kv-gen and stochastic rounding (default 1)")));
    sub->add_option("--scheme", opt->scheme, tr(N_("symmetric (default), asymmetric (zero point) or both")));
    sub->add_option("--granularity", opt->granularity, tr(N_("scale per tensor (default), group, row or column")));
    sub->add_option("--group-size", opt->group_size,
                    tr(N_("elements per scale (implies --granularity group); must divide the row")));
    sub->add_option("--rounding", opt->rounding, tr(N_("half-away (default: half away from zero), half-even or stochastic")));
    sub->add_option("--source-dtype", opt->source_dtype, tr(N_("precision before quantizing, for storage (default fp32)")));
    sub->add_option("--scale-dtype", opt->scale_dtype, tr(N_("precision of each scale (default fp16)")));
    sub->add_option("--zero-bits", opt->zero_bits, tr(N_("bits of each zero point, asymmetric (default 8)")));
    sub->add_option("--elements", opt->elements, tr(N_("storage only: bytes and bits per element of N elements")));
    sub->add_option("--kv-gen", opt->kv_gen, tr(N_("KV case: generated K and V of TOKENSxCHANNELS")));
    sub->add_option("--outlier-channels", opt->outlier_channels, tr(N_("KV case: K channels scaled up (default 4)")));
    sub->add_option("--outlier-factor", opt->outlier_factor, tr(N_("KV case: their scale (default 20)")));
    sub->add_option("--k-file", opt->k_file, tr(N_("KV case: K matrix CSV [tokens, channels]")));
    sub->add_option("--v-file", opt->v_file, tr(N_("KV case: V matrix CSV [tokens, channels]")));
    sub->add_option("--model", opt->model,
                    tr(N_("a shipped model: its KV cache at int8/int4 with metadata (kv-mem's formula), and its weights")));
    sub->add_option("--config", opt->config, tr(N_("a config.json, as --model")));
    sub->add_option("--seq-len", opt->seq_len, tr(N_("tokens, with --model/--config")));
    sub->add_option("--kv-dtype", opt->kv_dtype,
                    tr(N_("KV precision before quantizing, with --model/--config (default: the config's torch_dtype)")));
    sub->add_option("--bytes-per-elem", opt->bytes_per_elem,
                    tr(N_("the same precision as bytes per element (2, 0.5), instead of --kv-dtype")));
    add_output_flags(*sub, opt->out, true);
    add_svg_flag(*sub, opt->out, tr(N_("the result (the grid; the error histogram and grid; the KV MSE; the bytes)")));
    // Example commands stay as typed; what they print, and the notes, are in the reader's language.
    // Each note is one paragraph: the help formatter wraps it to the width.
    sub->footer(examples_footer(
        {"inferlab quantize --x 0.37 --step 0.1 --qmax 7",
         "    " + tr(N_("→ level 4, x̂ = 0.4, error 0.03 (first document §4.1)")),
         "inferlab quantize --gen normal:64x256 --outliers 0.01:20 --bits 4 --group-size 32 --scheme both",
         "inferlab quantize --elements 32 --bits 8 --group-size 32 --scale-dtype fp16   " +
             tr(N_("(34 B, 8.5 bits/element)")),
         "inferlab quantize --gen normal:64x256 --bits 4 --group-size 32 --svg error.svg   " +
             tr(N_("(histogram and grid drawn)")),
         "inferlab quantize --kv-gen 512x128 --outlier-channels 4 --bits 4",
         "inferlab quantize --model llama-3-8b --seq-len 8192 --group-size 64"},
        tr(N_("CSV tables (--csv --table NAME): values (the default) and storage for --values, --file and --gen; kv for "
              "the KV case; precisions (the default) and weights for --model and --config. --x and --elements print no "
              "table.")) +
            "\n" +
            tr(N_("JSON keys: the README's table (one set per kind of input, null where a value is not computed)."))));
    sub->callback([opt, sub] { run(*opt, *sub); });
}

}  // namespace inferlab::app
