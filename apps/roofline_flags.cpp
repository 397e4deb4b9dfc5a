// decode-roofline's flags read into a RooflineRequest (roofline_flags.hpp): shared by `inferlab
// decode-roofline` and `inferlab figure doc1-fig9`, one parser with one set of rules and messages.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "common.hpp"
#include "roofline_flags.hpp"
#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/data/hardware.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab::app {
namespace {

using Inputs = RooflineInputs;

// ---------------------------------------------------------------- parsing

std::uint64_t positive_tokens(const std::string& flag, const std::string& text) {
    const std::uint64_t v = parse_tokens(flag, text);
    if (v == 0) throw InputError(flag, text, N_("must be a positive token count"));
    return v;
}

void parse_weights(const RooflineFlags& o, Inputs& in) {
    DecodeModel& m = in.req.model;
    // One rule for a config without torch_dtype: name every precision flag this run still needs.
    if (in.config)
        require_precision_flags(*in.config, {{"--weight-dtype", !o.weight_dtype.empty() || !o.weights_bytes.empty()},
                                             {"--kv-dtype", !o.kv_dtype.empty() || !o.bytes_per_elem.empty() || !o.kv_bytes_per_request.empty()}});
    std::optional<DType> wdt;
    if (!o.weight_dtype.empty()) wdt = parse_dtype("--weight-dtype", o.weight_dtype);
    else if (in.config && in.config->dtype) wdt = in.config->dtype;
    if (in.config && o.params.empty()) in.counted = count_params(*in.config);
    if (!o.params.empty()) m.params = parse_count_with_suffix("--params", o.params);
    else if (in.counted) m.params = in.counted->active_per_token;
    if (!o.weights_bytes.empty()) {
        m.weight_bytes = parse_bytes("--weights-bytes", o.weights_bytes);
        if (m.weight_bytes == 0) throw InputError("--weights-bytes", o.weights_bytes, N_("must be positive"));
        in.weights_from = {"--weights-bytes", {}};
        if (!m.params && !o.weight_dtype.empty())
            m.params = params_of_weight_bytes(m.weight_bytes, *wdt);
    } else if (m.params) {
        if (!wdt) throw InputError(N_("--params needs --weight-dtype (bf16, fp8, int4, ...) to give the weight bytes"));
        // quantize's storage rule (int8/int4 with their fp16 group scales), as quantize --model and the model count.
        const std::uint64_t total = in.counted ? in.counted->total : *m.params;
        const StorageCost sc = weight_storage(total, *wdt);
        m.weight_bytes = sc.total_bytes;
        in.weights_from = weight_bytes_origin(total, *wdt, sc, in.counted ? &in.config->tied_rule : nullptr);
        if (in.counted && in.config->experts) m.moe = moe_weights_of(*in.config, *in.counted, *wdt);
    } else {
        throw InputError(N_("no weights: give --weights-bytes (e.g. 14GB), --params with --weight-dtype, or --config/--model"));
    }
}

void parse_machine(const RooflineFlags& o, Inputs& in) {
    Machine& hw = in.req.machine;
    if (!o.hw.empty()) {
        // The library's rule names no flag; the hint to the list is this command's to give.
        const Hardware* preset = lookup_hardware(o.hw);
        if (preset == nullptr)
            throw InputError("--hw", o.hw, N_("is not a known hardware preset (known: {0}; see 'inferlab decode-roofline --list-hw')"),
                             {hardware_names()});
        in.hw = *preset;
    }
    if (!o.bandwidth.empty()) {
        hw.bandwidth = parse_rate("--bandwidth", o.bandwidth);
        in.bandwidth_from = in.bandwidth_text = "--bandwidth " + o.bandwidth;
    } else if (in.hw) {
        hw.bandwidth = in.hw->bandwidth;
        in.bandwidth_from = fmt::format("{} ({}, {})", in.hw->bandwidth_text, in.hw->name, in.hw->source);
        in.bandwidth_text = fmt::format("{} ({}, {})", in.hw->bandwidth_text, in.hw->name, in.hw->source_text());
    } else {
        throw InputError(N_("no bandwidth: give --bandwidth (e.g. 1TB/s, 3.35e12) or --hw NAME (see --list-hw)"));
    }
    if (!o.peak_flops.empty()) {
        hw.peak_flops = parse_flops("--peak-flops", o.peak_flops);
        in.flops_from = {"--peak-flops {0}", {o.peak_flops}};
    } else if (in.hw && in.hw->peak_flops) {
        hw.peak_flops = in.hw->peak_flops;
        in.flops_from = {N_("{0} dense BF16 ({1})"), {in.hw->flops_text, in.hw->name}};
    }
    if (!o.memory.empty()) {
        hw.memory_bytes = parse_bytes("--memory", o.memory);
        if (*hw.memory_bytes == 0) throw InputError("--memory", o.memory, N_("must be positive (the device's capacity)"));
        in.memory_from = {"--memory {0}", {o.memory}};
    } else if (in.hw && in.hw->memory_bytes) {
        hw.memory_bytes = in.hw->memory_bytes;
        in.memory_from = {"{0} ({1})", {in.hw->memory_text, in.hw->name}};
    }
}

void parse_kv(const RooflineFlags& o, Inputs& in) {
    RooflineRequest& rq = in.req;
    if (!o.seq_len.empty()) {
        for (const auto& item : split_count_list("--seq-len", o.seq_len)) rq.seq_lens.push_back(positive_tokens("--seq-len", item));
    } else if (!o.prompt_len.empty() && in.config) {
        // A whole generation needs no separate --seq-len: the step table shows the first decode
        // step's read, at S = P cached tokens.
        rq.seq_lens.push_back(positive_tokens("--prompt-len", o.prompt_len));
        in.lens_from_prompt = true;
    }
    if (!o.kv_dtype.empty() && !o.bytes_per_elem.empty())
        throw InputError(N_("--kv-dtype and --bytes-per-elem both given: choose one"));
    if (!o.kv_bytes_per_request.empty()) {
        if (!o.kv_dtype.empty()) throw InputError(N_("--kv-dtype does not apply with --kv-bytes-per-request"));
        if (!o.bytes_per_elem.empty()) throw InputError(N_("--bytes-per-elem does not apply with --kv-bytes-per-request"));
        // The model's FLOPs would be those of --seq-len while M_KV is another request's bytes.
        if (in.config && !o.seq_len.empty())
            throw InputError(N_("--kv-bytes-per-request and --seq-len both give the KV read of a request with --model/--config: "
                                "choose one"));
        // Without a model no number depends on S: M_KV is given, and no attention shape reads it.
        if (!o.seq_len.empty())
            throw InputError(N_("--seq-len has no effect with --kv-bytes-per-request: M_KV is the same at every length "
                                "(give the number of requests with --batch)"));
        rq.model.kv_bytes_per_request = parse_bytes("--kv-bytes-per-request", o.kv_bytes_per_request);
        in.kv_from = {"--kv-bytes-per-request {0}", {o.kv_bytes_per_request}};
        const SizeSystem w = size_system(o.weights_bytes), k = size_system(o.kv_bytes_per_request);
        if (w != SizeSystem::none && k != SizeSystem::none && w != k)
            in.mixed_units = {o.weights_bytes, o.kv_bytes_per_request};
    } else if (in.config) {
        if (rq.seq_lens.empty() && !o.lengths_elsewhere)
            throw InputError(N_("--seq-len is required to derive the KV bytes from the model (or give --prompt-len)"));
        std::uint32_t bits = 0;
        if (!o.bytes_per_elem.empty()) {
            bits = parse_bytes_per_elem_bits("--bytes-per-elem", o.bytes_per_elem);
            in.kv_from = {in.lens_from_prompt
                              ? N_("{0} at {1} B per element (kv-mem's formula; S = --prompt-len, no --seq-len given)")
                              : N_("{0} at {1} B per element (kv-mem's formula)"),
                          {in.config->name, o.bytes_per_elem}};
        } else {
            const DType kd = !o.kv_dtype.empty() ? parse_dtype("--kv-dtype", o.kv_dtype) : *in.config->dtype;
            bits = kd.bits;
            in.kv_from = {in.lens_from_prompt ? N_("{0} at {1} (kv-mem's formula; S = --prompt-len, no --seq-len given)")
                                              : N_("{0} at {1} (kv-mem's formula)"),
                          {in.config->name, kd.name}};
        }
        rq.model.kv_spec = kv_spec_from_config(*in.config, bits);
    } else if (o.kv_shape) {
        if (rq.seq_lens.empty()) throw InputError(N_("--seq-len is required to derive the KV bytes from the shape"));
        rq.model.kv_spec = *o.kv_shape;
        // The caller's own words (figure's --layers/--kv-heads/--head-dim), already in the reader's language.
        in.kv_from = {"{0}", {o.kv_shape_from}};
    } else {
        throw InputError(N_("no KV size: give --kv-bytes-per-request (e.g. 1GiB), or a model with --config/--model and --seq-len"));
    }
    if (in.config) rq.model.attn_per_layer = attention_layers_of(*in.config);
}

void parse_batches_and_generation(const RooflineFlags& o, Inputs& in) {
    RooflineRequest& rq = in.req;
    if (rq.seq_lens.size() > 1) {
        if (o.batch_given)
            throw InputError("--batch", o.batch, N_("cannot be combined with a list of lengths: the list is the batch"));
        rq.lens_are_batch = true;
        rq.batches = {rq.seq_lens.size()};
    } else {
        rq.batches = parse_int_list_or_range("--batch", o.batch_given ? o.batch : "1");
    }
    for (std::size_t i = 1; i < rq.batches.size(); ++i)  // a row printed twice says nothing twice
        if (std::find(rq.batches.begin(), rq.batches.begin() + static_cast<std::ptrdiff_t>(i), rq.batches[i]) !=
            rq.batches.begin() + static_cast<std::ptrdiff_t>(i))
            throw InputError("--batch", o.batch, N_("lists the batch {0} twice"), {std::to_string(rq.batches[i])});
    for (std::uint64_t b : rq.batches)
        if (b > kMaxDecodeBatch)
            throw InputError("--batch", o.batch, N_("must be at most {0} requests per batch"), {group_thousands(kMaxDecodeBatch)});
    if (o.prompt_len.empty() && o.output_len.empty()) return;
    if (!rq.model.kv_spec)
        throw InputError(N_("--prompt-len/--output-len need the KV geometry: use --config or --model, not --kv-bytes-per-request"));
    if (rq.lens_are_batch)
        throw InputError(N_("--prompt-len/--output-len take requests of one length: give --batch, not a list of lengths"));
    if (o.prompt_len.empty() || o.output_len.empty()) throw InputError(N_("give both --prompt-len P and --output-len N"));
    rq.prompt_len = positive_tokens("--prompt-len", o.prompt_len);
    rq.output_len = positive_tokens("--output-len", o.output_len);
    if (*rq.output_len > kMaxOutputLen)
        throw InputError("--output-len", o.output_len, N_("must be at most {0} tokens"), {group_thousands(kMaxOutputLen)});
}

}  // namespace

std::optional<TensorParallel> parse_tensor_parallel(const RooflineFlags& o, const RooflineInputs& in) {
    const std::uint64_t devices = o.tp.empty() ? 1 : parse_positive_int_at_most("--tp", o.tp, 64, N_("must be at most {0} devices"));
    if (devices == 1) {
        if (!o.link_bandwidth.empty() || !o.link_latency.empty())
            throw InputError(N_("--link-bandwidth and --link-latency have no effect without --tp N (N > 1)"));
        return std::nullopt;
    }
    if (!in.config)
        throw InputError("--tp", o.tp, N_("needs a model (--model or --config): the all-reduces carry its hidden width at every layer"));
    TensorParallel tp;
    tp.devices = devices;
    tp.layers = in.config->layers;
    tp.hidden = in.config->hidden;
    if (!o.link_bandwidth.empty()) tp.link_bandwidth = parse_rate("--link-bandwidth", o.link_bandwidth);
    else if (in.hw && in.hw->link_bandwidth) tp.link_bandwidth = *in.hw->link_bandwidth;
    else throw InputError("--tp", o.tp, N_("needs the link between devices: give --link-bandwidth (450GB/s) or a --hw preset with one"));
    if (!o.link_latency.empty()) tp.link_latency_s = parse_seconds("--link-latency", o.link_latency);
    else if (in.hw && in.hw->link_latency_s && o.link_bandwidth.empty()) tp.link_latency_s = *in.hw->link_latency_s;
    return tp;
}

RooflineInputs gather_roofline(const RooflineFlags& o) {
    Inputs in;
    if (!o.config.empty() && !o.model.empty()) throw InputError(N_("--config and --model both given: choose one"));
    if (!o.config.empty() || !o.model.empty())
        in.config = o.config.empty() ? load_named_model(o.model, "--model") : load_config_file(o.config, "--config");
    parse_weights(o, in);
    parse_machine(o, in);
    // π bounds a step only through its FLOPs, 2·P per token: without P it would change nothing.
    if (!o.peak_flops.empty() && !in.req.model.params)
        throw InputError(N_("--peak-flops has no effect without a parameter count (the FLOPs of a step): give --params, "
                            "--weight-dtype with --weights-bytes, or --model/--config"));
    parse_kv(o, in);
    if (!o.lengths_elsewhere) parse_batches_and_generation(o, in);
    return in;
}

}  // namespace inferlab::app
