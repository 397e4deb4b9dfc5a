#pragma once
// decode-roofline's flags and their parsing into a RooflineRequest (roofline_flags.cpp), shared
// with `inferlab figure doc1-fig9`, which takes the same flags (one parser, one set of rules and
// messages).
#include <optional>
#include <string>

#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/data/hardware.hpp"
#include "inferlab/data/model_config.hpp"

namespace inferlab::app {

// Each flag's text as given (empty: not given).
struct RooflineFlags {
    std::string weights_bytes, params, weight_dtype, config, model;
    std::string kv_bytes_per_request, seq_len, kv_dtype, bytes_per_elem;
    std::string batch, bandwidth, hw, peak_flops, memory;
    std::string prompt_len, output_len;
    std::string tp, link_bandwidth, link_latency;  // tensor parallelism (decode-roofline, serve-sim)
    bool batch_given = false;  // given, even as an empty string
    // serve-sim: the lengths come from its workload, not from --seq-len or a generation, so the
    // model's KV geometry is taken without them and no batch rows are made.
    bool lengths_elsewhere = false;
    // A KV geometry the caller supplies without a model (figure's --layers/--kv-heads/--head-dim):
    // M_KV = kv_bytes(spec, S) with --seq-len, as from a model's config. `kv_shape_from` says where.
    std::optional<KvSpec> kv_shape;
    std::string kv_shape_from;
};

// The request and where each of its inputs came from (for the text's [brackets]).
struct RooflineInputs {
    RooflineRequest req;
    // Where each came from: --json prints text() (the same English in every language, issue #18),
    // the text and the figures' lines localized().
    Prose weights_from, kv_from, flops_from, memory_from;
    // The same for β, whose preset's source is data with its own Chinese (examples/hardware.json),
    // not a catalogue message: English for --json, the reader's language for the text.
    std::string bandwidth_from, bandwidth_text;
    std::optional<ModelConfig> config;
    std::optional<ParamCount> counted;   // the config's parameters, unless --params overrides them
    std::optional<Hardware> hw;
    bool lens_from_prompt = false;       // no --seq-len: the per-step table reads S = --prompt-len
    // --weights-bytes and --kv-bytes-per-request typed in the two systems (GB and GiB): the
    // --explain's caution, with both as typed; empty otherwise.
    std::vector<std::string> mixed_units;
};

// decode-roofline's rules: InputError naming the flag for anything missing or malformed.
RooflineInputs gather_roofline(const RooflineFlags& f);

// --tp N with its link, one rule for decode-roofline and serve-sim: none for N = 1 (where a link
// flag is refused, having no effect); else the all-reduces' machine, the link from --link-bandwidth
// and --link-latency or the --hw preset's, the layers and hidden width from the model's config.
std::optional<TensorParallel> parse_tensor_parallel(const RooflineFlags& f, const RooflineInputs& in);

}  // namespace inferlab::app
