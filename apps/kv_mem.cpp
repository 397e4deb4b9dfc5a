// inferlab kv-mem: how many bytes does the KV cache hold? Options, their parsing into the
// library's inputs, and one call to kv_mem(); kv_mem_print.cpp renders the result.
#include <memory>
#include <set>

#include "common.hpp"
#include "inferlab/answer/kv_mem.hpp"
#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/data/layer_spec.hpp"
#include "inferlab/data/model_config.hpp"
#include "kv_mem_print.hpp"

namespace inferlab::app {
namespace {

struct KvMemOptions {
    std::string layers, kv_heads, head_dim, hidden_size, q_heads;
    std::string seq_len, batch = "1", kv_dtype, bytes_per_elem;
    std::string layer_spec, config, model;
    std::string block_size, tp, budget, weights_bytes, weight_dtype;
    std::string shared_prefix;  // P prompt tokens shared by every request (paged, copy-on-write)
    bool list_models = false;
    OutputFlags out;
};

// The flags the library's messages name.
KvWhere flag_names() {
    KvWhere w;
    w.block_size = "--block-size";
    w.prefix = "--shared-prefix";
    w.seq_len = "--seq-len";
    w.devices = "--tp";
    w.q_heads = "--q-heads";
    w.kv_heads = "--kv-heads";
    w.budget = "--budget";
    return w;
}

// The requests: one entry per listed length, or one entry of --batch equal requests.
std::vector<Requests> parse_lengths(const KvMemOptions& o) {
    if (o.seq_len.empty()) return {};
    std::vector<std::uint64_t> lens;
    for (const auto& item : split_count_list("--seq-len", o.seq_len)) {
        std::uint64_t s = parse_tokens("--seq-len", item);
        if (s == 0) throw InputError("--seq-len", item, N_("must be a positive token count"));
        lens.push_back(s);
    }
    std::uint64_t batch = parse_count("--batch", o.batch);
    if (batch == 1) return one_each(lens);
    if (lens.size() != 1)
        throw InputError("--batch", o.batch,
                         N_("cannot be combined with a list of lengths: list every request in --seq-len instead"));
    return {{lens.front(), batch}};
}

// The KV precision in bits and its name; `fallback` is a config's own precision.
std::uint32_t precision_bits(const KvMemOptions& o, const std::optional<DType>& fallback, std::string* name) {
    if (!o.kv_dtype.empty()) {
        DType d = parse_dtype("--kv-dtype", o.kv_dtype);
        *name = d.name;
        return d.bits;
    }
    if (!o.bytes_per_elem.empty()) {
        std::uint32_t bits = parse_bytes_per_elem_bits("--bytes-per-elem", o.bytes_per_elem);
        *name = bits_as_bytes(bits) + " per element";
        return bits;
    }
    if (fallback) {
        *name = fallback->name;
        return fallback->bits;
    }
    throw InputError(N_("no KV precision: give --kv-dtype (fp32, fp16, bf16, fp8, int8, int4) or --bytes-per-elem"));
}

KvModel model_from_config(const KvMemOptions& o) {
    if (!o.q_heads.empty()) throw InputError(N_("--q-heads comes from the config; do not give it with --config/--model"));
    ModelConfig c = o.config.empty() ? load_named_model(o.model, "--model") : load_config_file(o.config, "--config");
    // Every precision this run needs, in one message: the KV's, and the weights' for --budget.
    const bool weights_known = o.budget.empty() || !o.weights_bytes.empty() || !o.weight_dtype.empty();
    require_precision_flags(c, {{"--kv-dtype", !o.kv_dtype.empty() || !o.bytes_per_elem.empty()},
                                {"--weight-dtype", weights_known}});
    std::string name;
    const std::uint32_t bits = precision_bits(o, c.dtype, &name);
    return kv_model_from_config(c, bits, name);
}

KvModel model_from_layer_spec(const KvMemOptions& o) {
    if (!o.kv_dtype.empty() || !o.bytes_per_elem.empty())
        throw InputError(N_("--layer-spec gives b_k and b_v per layer: do not give --kv-dtype or --bytes-per-elem"));
    if (!o.q_heads.empty()) throw InputError(N_("--q-heads has no effect with --layer-spec (its layers may differ in H_kv)"));
    KvModel m;
    m.spec = read_layer_spec(o.layer_spec, "--layer-spec");
    m.source = o.layer_spec;
    m.dtype_name = N_("per layer");  // a msgid: the text translates it
    return m;
}

// d from --head-dim, or hidden / H_q from --hidden-size with --q-heads.
std::uint64_t head_width(const KvMemOptions& o, std::optional<std::uint64_t> q_heads) {
    if (!o.head_dim.empty() && !o.hidden_size.empty())
        throw InputError(N_("--head-dim and --hidden-size both given: choose one (d = hidden / H_q)"));
    if (!o.head_dim.empty()) return parse_positive_int("--head-dim", o.head_dim);
    if (o.hidden_size.empty()) throw InputError(N_("--head-dim is required (or --hidden-size with --q-heads)"));
    const std::uint64_t hidden = parse_positive_int("--hidden-size", o.hidden_size);
    if (!q_heads) throw InputError(N_("--hidden-size needs --q-heads to derive the head width d = hidden / H_q"));
    if (hidden % *q_heads != 0)
        throw InputError("--hidden-size", o.hidden_size,
                         N_("must be divisible by --q-heads {0} to derive d"), {std::to_string(*q_heads)});
    return hidden / *q_heads;
}

KvModel model_from_flags(const KvMemOptions& o) {
    if (o.layers.empty()) throw InputError(N_("--layers is required with --kv-heads/--head-dim"));
    if (o.kv_heads.empty()) throw InputError(N_("--kv-heads is required (H_kv, the K/V heads per layer)"));
    const std::uint64_t layers = parse_positive_int("--layers", o.layers);
    if (layers > kMaxKvLayers) throw InputError("--layers", o.layers, N_("must be at most {0}"), {std::to_string(kMaxKvLayers)});
    const std::uint64_t h_kv = parse_positive_int("--kv-heads", o.kv_heads);
    std::optional<std::uint64_t> q_heads;
    if (!o.q_heads.empty()) {
        q_heads = parse_positive_int("--q-heads", o.q_heads);
        if (*q_heads % h_kv != 0)
            throw InputError("--q-heads", o.q_heads,
                             N_("must be divisible by --kv-heads {0} (each K/V head serves a whole group of query heads)"),
                             {std::to_string(h_kv)});
    }
    const std::uint64_t d = head_width(o, q_heads);
    std::string name;
    const std::uint32_t bits = precision_bits(o, std::nullopt, &name);
    KvModel m = kv_model_uniform(layers, h_kv, d, bits, name);
    m.q_heads = q_heads;
    if (!o.hidden_size.empty()) m.hidden = parse_positive_int("--hidden-size", o.hidden_size);
    return m;
}

KvModel parse_model(const KvMemOptions& o, const CLI::App& sub) {
    const bool manual = given(sub, "--layers") || given(sub, "--kv-heads") || given(sub, "--head-dim") ||
                        given(sub, "--hidden-size");
    const int sources = (manual ? 1 : 0) + (!o.layer_spec.empty()) + (!o.config.empty()) + (!o.model.empty());
    if (sources == 0)
        throw InputError(
            N_("no model given: use --layers/--kv-heads/--head-dim, --layer-spec FILE, --config FILE or --model NAME"));
    if (sources > 1)
        throw InputError(N_("choose one model source: --layers/--kv-heads/--head-dim, --layer-spec, --config or --model"));
    if (!o.kv_dtype.empty() && !o.bytes_per_elem.empty())
        throw InputError(N_("--kv-dtype and --bytes-per-elem both given: choose one"));
    if (!o.config.empty() || !o.model.empty()) return model_from_config(o);
    if (!o.layer_spec.empty()) return model_from_layer_spec(o);
    return model_from_flags(o);
}

std::optional<std::uint64_t> positive_or_none(const std::string& flag, const std::string& text) {
    if (text.empty()) return std::nullopt;
    return parse_positive_int(flag, text);
}

KvMemInputs parse_inputs(const KvMemOptions& o, const CLI::App& sub) {
    KvMemInputs in;
    in.where = flag_names();
    in.model = parse_model(o, sub);
    in.requests = parse_lengths(o);
    in.block_size = positive_or_none("--block-size", o.block_size);
    in.devices = positive_or_none("--tp", o.tp);
    if (!o.shared_prefix.empty()) in.shared_prefix = parse_tokens("--shared-prefix", o.shared_prefix);
    if (o.budget.empty()) return in;
    in.budget_bytes = parse_bytes("--budget", o.budget);
    if (*in.budget_bytes == 0) throw InputError("--budget", o.budget, N_("must be positive"));
    if (!o.weights_bytes.empty()) in.weights_bytes = parse_bytes("--weights-bytes", o.weights_bytes);
    else if (!in.model.config)
        throw InputError(N_("--budget needs the weights: give --weights-bytes (e.g. 14GB), or a model with --config/--model"));
    if (!o.weight_dtype.empty()) in.weight_dtype = parse_dtype("--weight-dtype", o.weight_dtype);
    return in;
}

void list_models(const OutputFlags& out) {
    std::vector<ShippedModel> models = shipped_models();
    emit(kv_mem_models_report(models), out);
}

// --list-models computes nothing: a flag of the computation beside it would have no effect, and
// a user who typed one meant something that did not happen.
void refuse_beside_list_models(const CLI::App& sub) {
    static const std::set<std::string> listing = {"list-models", "json", "csv", "table", "explain", "lang", "help"};
    for (const CLI::Option* opt : sub.get_options())
        if (opt->count() > 0 && !opt->get_lnames().empty() && !listing.count(opt->get_lnames().front()))
            throw InputError(N_("--list-models and {0} both given: --list-models computes nothing, so {0} has no effect"),
                             {"--" + opt->get_lnames().front()});
}

void run(const KvMemOptions& o, const CLI::App& sub) {
    if (o.list_models) {
        refuse_beside_list_models(sub);
        return list_models(o.out);
    }
    const KvMemInputs in = parse_inputs(o, sub);
    KvMemResult r;
    try {
        r = kv_mem(in);
    } catch (const InputError& e) {
        // The library echoes the budget as the bytes it read ("1 B"); the user typed "1B".
        if (e.where() == "--budget") throw e.with_value(o.budget);
        throw;
    }
    emit(kv_mem_report(r), o.out);
}

}  // namespace

void setup_kv_mem(CLI::App& app) {
    auto opt = std::make_shared<KvMemOptions>();
    CLI::App* sub = app.add_subcommand("kv-mem", tr("KV-cache bytes of a model: per token, per request, per layer, in total"));
    sub->add_option("--layers", opt->layers, tr("L, number of layers"));
    sub->add_option("--kv-heads", opt->kv_heads, tr("H_kv, K/V heads per layer"));
    sub->add_option("--head-dim", opt->head_dim, tr("d, width of one head"));
    sub->add_option("--hidden-size", opt->hidden_size, tr("hidden size; with --q-heads gives d = hidden / H_q"));
    sub->add_option("--q-heads", opt->q_heads, tr("H_q, query heads: adds the MHA/GQA/MQA comparison"));
    auto* seq = sub->add_option("--seq-len", opt->seq_len, tr("S, tokens per request; a list (8192,4096,300) for requests of different lengths; 8Ki = 8192, 8k = 8000 (8K rejected)"));
    sub->add_option("--batch", opt->batch, tr("B, requests of the same length (default 1)"))->needs(seq);
    sub->add_option("--kv-dtype", opt->kv_dtype, tr("KV precision: fp32, fp16, bf16, fp8, int8, int4"));
    sub->add_option("--bytes-per-elem", opt->bytes_per_elem, tr("b, bytes per element instead of --kv-dtype (0.5 for 4 bits)"));
    sub->add_option("--layer-spec", opt->layer_spec, tr("JSON file of per-layer h_kv, d_k, d_v, b_k, b_v (optional window, repeat)"));
    sub->add_option("--config", opt->config, tr("a Hugging Face config.json"));
    sub->add_option("--model", opt->model, tr("a shipped config (see --list-models)"));
    sub->add_flag("--list-models", opt->list_models, tr("list the shipped model configs"));
    sub->add_option("--block-size", opt->block_size, tr("tokens per block: paged allocation, waste"));
    sub->add_option("--shared-prefix", opt->shared_prefix, tr("P: every request shares its first P prompt tokens (paged, with --block-size)"));
    sub->add_option("--tp", opt->tp, tr("devices the K/V heads are split across (tensor parallelism)"));
    auto* budget = sub->add_option("--budget", opt->budget, tr("memory per device (80GiB, 141GB): what fits after the weights (with --tp: W/N and 1/N of the heads per device)"));
    auto* wb = sub->add_option("--weights-bytes", opt->weights_bytes, tr("weight bytes for --budget (14GB)"))->needs(budget);
    sub->add_option("--weight-dtype", opt->weight_dtype, tr("weight precision for --budget with a model (default: its torch_dtype)"))
        ->needs(budget)
        ->excludes(wb);
    add_output_flags(*sub, opt->out, true);
    sub->footer(kv_mem_footer());
    sub->callback([opt, sub] { run(*opt, *sub); });
}

}  // namespace inferlab::app
