// inferlab decode-roofline: what one decode step reads, and what that bounds. This file holds the
// subcommand's flags and its run: roofline_flags.cpp reads the flags into a RooflineRequest,
// decode_roofline() computes, decode_roofline_print.cpp prints the result.
#include <memory>

#include "common.hpp"
#include "decode_roofline_print.hpp"
#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/decode_roofline.hpp"
#include "roofline_flags.hpp"

namespace inferlab::app {
namespace {

struct RooflineOptions : RooflineFlags {
    bool list_hw = false;
    OutputFlags out;
};

// --list-hw prints the presets and computes nothing: a flag beside it would be ignored.
void refuse_beside_list_hw(const RooflineOptions& o) {
    const std::pair<const char*, const std::string*> flags[] = {
        {"--weights-bytes", &o.weights_bytes}, {"--params", &o.params}, {"--weight-dtype", &o.weight_dtype},
        {"--config", &o.config}, {"--model", &o.model}, {"--kv-bytes-per-request", &o.kv_bytes_per_request},
        {"--seq-len", &o.seq_len}, {"--kv-dtype", &o.kv_dtype}, {"--bytes-per-elem", &o.bytes_per_elem}, {"--bandwidth", &o.bandwidth}, {"--hw", &o.hw},
        {"--peak-flops", &o.peak_flops}, {"--memory", &o.memory}, {"--prompt-len", &o.prompt_len},
        {"--output-len", &o.output_len}, {"--tp", &o.tp}, {"--link-bandwidth", &o.link_bandwidth},
        {"--link-latency", &o.link_latency}};
    if (!o.out.svg.empty())
        throw InputError("--svg", o.out.svg, N_("--list-hw draws no figure: it lists the presets and computes nothing"));
    const char* const beside = N_("--list-hw and {0} both given: --list-hw computes nothing, so {0} has no effect");
    if (o.batch_given) throw InputError(beside, {"--batch"});
    for (const auto& [flag, value] : flags)
        if (!value->empty()) throw InputError(beside, {flag});
}

// The result; an exact byte count past 64 bits is said of the flags that set the lengths (the
// library names only the count: "KV bytes of the batch overflows 64 bits").
RooflineResult computed(const RooflineOptions& o, const RooflineInputs& in) {
    try {
        return decode_roofline(in.req);
    } catch (const OverflowError& e) {
        // The flag that set the lengths: the prompt and output, the sequence, or a request's KV bytes given whole.
        const bool whole = !o.prompt_len.empty(), per_request = o.seq_len.empty() && !whole;
        const std::string flag = whole ? "--prompt-len" : per_request ? "--kv-bytes-per-request" : "--seq-len";
        const std::string value = whole ? o.prompt_len : per_request ? o.kv_bytes_per_request : o.seq_len;
        std::string sizes = whole ? "--prompt-len " + o.prompt_len + ", --output-len " + o.output_len : flag + " " + value;
        if (!o.batch.empty()) sizes += ", --batch " + o.batch;
        throw InputError(flag, value, N_("with {0}: {1}"), {sizes, e.localized()});
    }
}

void run(const RooflineOptions& o) {
    if (o.list_hw) {
        refuse_beside_list_hw(o);
        return emit(hardware_report(), o.out);
    }
    RooflineInputs in = gather_roofline(o);
    // Tensor parallelism: one device's share of the model, and the all-reduces in every step (the
    // one step_cost that serve-sim prices its steps with).
    if (auto tp = parse_tensor_parallel(o, in)) {
        // A given M_KV has no heads to split as kv-mem does (a device may hold a head twice).
        if (!o.kv_bytes_per_request.empty())
            throw InputError("--kv-bytes-per-request", o.kv_bytes_per_request,
                             N_("cannot be split under --tp: give --seq-len so the KV comes from the config's heads"));
        in.req.model = tensor_parallel_share(in.req.model, tp->devices);
        in.req.machine.tp = tp;
        const std::string n = std::to_string(tp->devices);
        in.weights_from = Prose{N_("{1}, ÷ {0} devices (rounded up)"), {n}, {}, {in.weights_from}};
        in.kv_from = Prose{N_("{1}, one device's share under --tp {0} (kv-mem's split)"), {n}, {}, {in.kv_from}};
    }
    const RooflineResult res = computed(o, in);
    Report r = decode_roofline_report(in, res);
    // The figure's input lines are prose for the reader, as the text's [sources] are; M_KV's names
    // the model or shape and the KV dtype it was computed at.
    if (!o.out.svg.empty())
        r.svg = plots::decode_roofline_svg(in.req, res,
                                           {"W: " + in.weights_from.localized(), "M_KV: " + in.kv_from.localized(),
                                            "β: " + in.bandwidth_text});
    emit(r, o.out);
}

// The notes under the examples: one paragraph per line, which the help formatter wraps to the width.
std::string footer_notes() {
    return tr("Mixture of experts: a step reads the non-expert weights, the shared experts and, per MoE layer, the "
              "experts its B tokens route to: E·(1 − (1 − k/E)^B) in expectation, assuming each token picks k of E "
              "experts uniformly and independently (exactly k at B = 1). FLOPs count the active parameters; "
              "attention FLOPs are 2·H_q·(d_qk + d_v) per layer and cached position, min(S, W) positions on a "
              "sliding layer.\n"
              "\n"
              "A config without torch_dtype needs --weight-dtype and --kv-dtype (one error names both). Without "
              "--seq-len, --prompt-len P sets the per-step table's S = P.\n"
              "\n"
              "Tables for --csv --table NAME: rows, and with --prompt-len/--output-len generation; --list-hw: "
              "hardware. JSON keys: the README's table (every key present in every run, null where not computed).");
}

}  // namespace


void setup_decode_roofline(CLI::App& app) {
    auto opt = std::make_shared<RooflineOptions>();
    CLI::App* sub = app.add_subcommand("decode-roofline", tr("Bytes one decode step reads, and the time and tokens/s that bounds"));
    sub->add_option("--weights-bytes", opt->weights_bytes, tr("W, weight bytes read per step (14GB)"));
    sub->add_option("--params", opt->params, tr("weight parameters (7e9, 7B): W with --weight-dtype, and 2 FLOPs per parameter per token"));
    sub->add_option("--weight-dtype", opt->weight_dtype, tr("weight precision (default: the config's torch_dtype)"));
    sub->add_option("--config", opt->config, tr("a Hugging Face config.json (weights counted, KV from kv-mem's formula)"));
    sub->add_option("--model", opt->model, tr("a shipped config (inferlab kv-mem --list-models)"));
    sub->add_option("--kv-bytes-per-request", opt->kv_bytes_per_request, tr("M_KV per request (1GiB)"));
    sub->add_option("--seq-len", opt->seq_len, tr("tokens cached per request (with a model); a list = requests of different lengths"));
    sub->add_option("--kv-dtype", opt->kv_dtype, tr("KV precision with a model (default: torch_dtype)"));
    sub->add_option("--bytes-per-elem", opt->bytes_per_elem, tr("b, KV bytes per element instead of --kv-dtype (0.5 for 4 bits)"));
    sub->add_option("--batch", opt->batch,
                    trf(N_("batch sizes: 1,8 or a range 1..64 (default 1; at most {0})"), group_thousands(kMaxDecodeBatch)));
    sub->add_option("--bandwidth", opt->bandwidth, tr("β, sustained memory bandwidth (1TB/s, 3.35e12)"));
    sub->add_option("--hw", opt->hw, tr("a hardware preset (see --list-hw)"));
    sub->add_option("--peak-flops", opt->peak_flops, tr("π, dense peak FLOP/s (989TFLOPS): adds the compute bound"));
    sub->add_option("--memory", opt->memory, tr("device memory (80GiB, positive): marks batches that do not fit"));
    sub->add_option("--prompt-len", opt->prompt_len, tr("P: prefill bound, TTFT, TPOT and end-to-end"));
    sub->add_option("--output-len", opt->output_len, tr("N: a whole generation, the context growing one token a step"));
    sub->add_option("--tp", opt->tp, tr("devices in tensor parallelism (default 1): one device's share, plus the all-reduces"));
    sub->add_option("--link-bandwidth", opt->link_bandwidth, tr("one direction of a device's link, with --tp (450GB/s)"));
    sub->add_option("--link-latency", opt->link_latency, tr("latency of one all-reduce call, with --tp (5us)"));
    sub->add_flag("--list-hw", opt->list_hw, tr("list the hardware presets with their sources"));
    add_output_flags(*sub, opt->out, true);
    add_svg_flag(*sub, opt->out, tr("tokens/s against batch with the bounds, and the roofline chart (with π)"));
    sub->footer(examples_footer(
        {"inferlab decode-roofline --weights-bytes 14GB --kv-bytes-per-request 1GiB --bandwidth 1TB/s --batch 1,8",
         "    → B=1: 15.074 GB, 15.074 ms, 66.34 tok/s;  B=8: 22.590 GB, 22.590 ms, 354.14 aggregate, 44.27 per request",
         "inferlab decode-roofline --model llama-3-8b --seq-len 8192 --hw h100-sxm --batch 1..64",
         "inferlab decode-roofline --model llama-3-8b --hw h100-sxm --prompt-len 2048 --output-len 512 --batch 1,8",
         "inferlab decode-roofline --model mixtral-8x7b --hw h100-sxm --seq-len 4096 --batch 1,8,64",
         "inferlab decode-roofline --model llama-3.1-70b --hw h100-sxm --tp 4 --seq-len 4096 --batch 1,8,64",
         "inferlab decode-roofline --model llama-3-8b --seq-len 1024 --hw h100-sxm --batch 1..512 --svg roofline.svg"},
        footer_notes()));
    sub->callback([opt, sub] {
        opt->batch_given = sub->count("--batch") > 0;
        run(*opt);
    });
}

}  // namespace inferlab::app
