// inferlab serve-sim: a server under load, engine step by engine step. This file holds the flags
// and their parsing into a ServeSimRequest; serve_sim() (answer/serve_sim.hpp) computes and
// serve_sim_print.cpp prints.
#include <memory>

#include "common.hpp"
#include "inferlab/answer/serve_sim.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/data/arrivals.hpp"
#include "roofline_flags.hpp"
#include "serve_sim_print.hpp"

namespace inferlab::app {
namespace {

struct ServeOptions : RooflineFlags {
    std::string requests, rate, arrivals, workload, prompt, output, seed = "1";
    std::string block_size = "16", kv_blocks, max_batch_tokens, max_running = "256", step_overhead;
    std::string shared_prefix, prefix_groups;
    bool prefix_caching = false;
    std::string slo_ttft, slo_tpot, sweep_rate, sweep_points, explain_request;
    OutputFlags out;
};

// "512" (every request), "128..2048" (uniform), "lognormal:MEAN,SIGMA" (mean tokens, σ of the log).
LengthDist parse_lengths(const std::string& flag, const std::string& text) {
    const std::string lognormal = "lognormal:";
    if (text.rfind(lognormal, 0) == 0) {
        const auto parts = split_list(flag, text.substr(lognormal.size()));
        if (parts.size() != 2) throw InputError(flag, text, N_("lognormal takes a mean and a σ: lognormal:MEAN,SIGMA (lognormal:512,1)"));
        const double mean = static_cast<double>(parse_positive_int(flag, parts[0]));
        const double sigma = parse_positive_real(flag, parts[1]);
        if (sigma > 3) throw InputError(flag, text, N_("σ must be at most 3 (a wider spread puts nearly all tokens in a few requests)"));
        return {LengthDist::Kind::lognormal, mean, sigma};
    }
    const auto dots = text.find("..");
    if (dots != std::string::npos) {
        const std::uint64_t a = parse_positive_int(flag, text.substr(0, dots)), b = parse_positive_int(flag, text.substr(dots + 2));
        if (b < a) throw InputError(flag, text, N_("is an empty range: the first length must not exceed the second"));
        return {LengthDist::Kind::uniform, static_cast<double>(a), static_cast<double>(b)};
    }
    return {LengthDist::Kind::fixed, static_cast<double>(parse_positive_int(flag, text)), 0};
}

// A Poisson rate from 10^−6 to 10^9 requests/s: past those ends the arrival times (10^8 s and
// more, or 10^−9 s apart) leave too few of a double's digits for millisecond steps.
double rate_of(const std::string& flag, const std::string& text) {
    const double v = parse_positive_real(flag, text);
    if (v < 1e-6 || v > 1e9) throw InputError(flag, text, N_("must be from 1e-6 to 1e9 requests/s"));
    return v;
}

double positive_seconds(const std::string& flag, const std::string& text) {
    const double v = parse_seconds(flag, text);
    if (!(v > 0)) throw InputError(flag, text, N_("must be greater than 0"));
    return v;
}

void parse_workload(const ServeOptions& o, ServeSimRequest& r, const RooflineInputs& in) {
    if (!o.arrivals.empty()) {
        for (const auto& [flag, v] : {std::pair{"--requests", &o.requests}, {"--rate", &o.rate}, {"--workload", &o.workload},
                                      {"--prompt-len", &o.prompt}, {"--output-len", &o.output}, {"--sweep-rate", &o.sweep_rate},
                                      {"--shared-prefix", &o.shared_prefix}})
            if (!v->empty()) throw InputError(N_("--arrivals and {0} both given: the trace gives the requests"), {flag});
        r.trace = read_arrivals("--arrivals", o.arrivals);
        return;
    }
    if (o.requests.empty()) throw InputError(N_("no requests: give --requests N (with --rate R for Poisson arrivals) or --arrivals FILE"));
    WorkloadSpec w;
    w.requests = parse_count_at_most("--requests", o.requests, kMaxTraceRequests, N_("must be at most {0} requests"));
    if (!o.rate.empty()) w.rate = rate_of("--rate", o.rate);
    if (!o.workload.empty() && o.workload != "chat")
        throw InputError("--workload", o.workload, N_("is not a workload preset (known: chat)"));
    w.prompt = o.prompt.empty() ? chat_prompt_lengths() : parse_lengths("--prompt-len", o.prompt);
    w.output = o.output.empty() ? chat_output_lengths() : parse_lengths("--output-len", o.output);
    if (!o.workload.empty() && (!o.prompt.empty() || !o.output.empty()))
        throw InputError(N_("--workload chat sets the lengths: drop --prompt-len/--output-len, or --workload"));
    w.seed = parse_nonnegative_int("--seed", o.seed);
    w.context = in.config ? in.config->max_positions : 0;
    if (!o.shared_prefix.empty()) {
        w.prefix_len = parse_positive_int("--shared-prefix", o.shared_prefix);
        w.prefix_groups = o.prefix_groups.empty() ? 1 : parse_positive_int("--prefix-groups", o.prefix_groups);
    } else if (!o.prefix_groups.empty()) {
        throw InputError(N_("--prefix-groups needs --shared-prefix LEN"));
    }
    r.workload = w;
}

void parse_machine_and_tp(const ServeOptions& o, ServeSimRequest& r, const RooflineInputs& in) {
    r.layers = in.config ? in.config->layers : 0;
    r.hidden = in.config ? in.config->hidden : 0;
    if (const auto tp = parse_tensor_parallel(o, in)) {
        r.devices = tp->devices;
        r.link_bandwidth = tp->link_bandwidth;
        r.link_latency_s = tp->link_latency_s;
    }
}

void parse_scheduler(const ServeOptions& o, ServeSimRequest& r) {
    r.block_size = parse_positive_int_at_most("--block-size", o.block_size, 65536, N_("must be at most {0} tokens"));
    if (!o.kv_blocks.empty())
        r.kv_blocks = parse_positive_int_at_most("--kv-blocks", o.kv_blocks, 1ULL << 31, N_("must be at most {0} blocks"));
    r.max_batch_tokens = o.max_batch_tokens.empty() ? 0 : parse_count("--max-batch-tokens", o.max_batch_tokens);
    r.max_running = parse_count("--max-running", o.max_running);
    r.prefix_caching = o.prefix_caching;
    if (!o.step_overhead.empty()) r.step_overhead_s = parse_seconds("--step-overhead", o.step_overhead);
}

void parse_slo(const ServeOptions& o, ServeSimRequest& r) {
    if (!o.slo_ttft.empty()) r.slo_ttft_s = positive_seconds("--slo-ttft", o.slo_ttft);
    if (!o.slo_tpot.empty()) r.slo_tpot_s = positive_seconds("--slo-tpot", o.slo_tpot);
    if (!o.sweep_rate.empty()) {
        const auto dots = o.sweep_rate.find("..");
        if (dots == std::string::npos) throw InputError("--sweep-rate", o.sweep_rate, N_("must be a range of rates A..B (1..40)"));
        const double a = rate_of("--sweep-rate", o.sweep_rate.substr(0, dots));
        const double b = rate_of("--sweep-rate", o.sweep_rate.substr(dots + 2));
        if (!(b > a)) throw InputError("--sweep-rate", o.sweep_rate, N_("is an empty range: A must be below B"));
        if (!o.rate.empty()) throw InputError(N_("--rate and --sweep-rate both given: the sweep chooses the rates"));
        if (!r.slo_ttft_s && !r.slo_tpot_s) throw InputError(N_("--sweep-rate needs an SLO to meet: give --slo-ttft or --slo-tpot"));
        r.sweep = std::pair{a, b};
        if (!o.sweep_points.empty())
            r.sweep_points = parse_positive_int_at_most("--sweep-points", o.sweep_points, 64, N_("must be at most {0} rates"));
    } else if (!o.sweep_points.empty()) {
        throw InputError(N_("--sweep-points needs --sweep-rate A..B"));
    }
}

ServeSimRequest request_of(const ServeOptions& o, const RooflineInputs& in) {
    if (!in.config) throw InputError(N_("serve-sim needs a model's KV geometry: give --model or --config"));
    ServeSimRequest r;
    r.model = in.req.model;
    r.machine = in.req.machine;
    parse_machine_and_tp(o, r, in);
    parse_scheduler(o, r);
    parse_slo(o, r);
    parse_workload(o, r, in);
    // Rows only where they are printed or drawn: the text alone keeps memory flat in the requests.
    r.keep_steps = !o.out.svg.empty() || o.out.csv || o.out.json;
    r.keep_requests = r.keep_steps;
    if (!o.explain_request.empty()) r.explain_request = parse_nonnegative_int("--explain-request", o.explain_request);
    return r;
}

void run(const ServeOptions& o) {
    RooflineFlags f = o;
    f.lengths_elsewhere = true;
    const RooflineInputs in = gather_roofline(f);
    const ServeSimRequest req = request_of(o, in);
    const std::uint64_t count = req.workload ? req.workload->requests : req.trace.size();
    if (req.explain_request >= count)
        throw InputError("--explain-request", o.explain_request, N_("is past the last request ({0})"), {std::to_string(count - 1)});
    const ServeSimResult res = serve_sim(req);
    Report r = serve_sim_report(in, req, res, o.out.json || o.out.csv);
    if (!o.out.svg.empty()) r.svg = serve_sim_svg(in, req, res);
    emit(r, o.out);
}

void add_flags(CLI::App& sub, ServeOptions& o) {
    sub.add_option("--model", o.model, tr("a shipped config (inferlab kv-mem --list-models)"));
    sub.add_option("--config", o.config, tr("a Hugging Face config.json"));
    sub.add_option("--params", o.params, tr("weight parameters (8B), overriding the config's count"));
    sub.add_option("--weights-bytes", o.weights_bytes, tr("W, weight bytes (16GB), overriding the config's"));
    sub.add_option("--weight-dtype", o.weight_dtype, tr("weight precision (default: the config's torch_dtype)"));
    sub.add_option("--kv-dtype", o.kv_dtype, tr("KV precision (default: torch_dtype)"));
    sub.add_option("--hw", o.hw, tr("a hardware preset (inferlab decode-roofline --list-hw)"));
    sub.add_option("--bandwidth", o.bandwidth, tr("β, sustained memory bandwidth of one device (3.35TB/s)"));
    sub.add_option("--peak-flops", o.peak_flops, tr("π, dense peak FLOP/s of one device (989TFLOPS)"));
    sub.add_option("--memory", o.memory, tr("one device's memory (80GiB): the KV pool is what the weights leave"));
    sub.add_option("--tp", o.tp, tr("devices in tensor parallelism (default 1)"));
    sub.add_option("--link-bandwidth", o.link_bandwidth, tr("one direction of a device's link, with --tp (450GB/s)"));
    sub.add_option("--link-latency", o.link_latency, tr("latency of one all-reduce call, with --tp (5us)"));
    sub.add_option("--requests", o.requests, tr("requests to simulate"));
    sub.add_option("--rate", o.rate, tr("Poisson arrivals, requests/s (default: all at time 0)"));
    sub.add_option("--arrivals", o.arrivals, tr("a trace, CSV or JSON Lines: arrival_s, prompt_tokens, output_tokens[, prefix_id, prefix_len]"));
    sub.add_option("--workload", o.workload, tr("chat: lognormal lengths of ShareGPT's means (the default lengths)"));
    sub.add_option("--prompt-len", o.prompt, tr("prompt tokens: 512, a range 128..2048, or lognormal:MEAN,SIGMA"));
    sub.add_option("--output-len", o.output, tr("output tokens, as --prompt-len"));
    sub.add_option("--shared-prefix", o.shared_prefix, tr("every prompt starts with a shared prefix of this many tokens"));
    sub.add_option("--prefix-groups", o.prefix_groups, tr("distinct shared prefixes, request i in group i mod G (default 1)"));
    sub.add_option("--seed", o.seed, tr("seed of the arrivals and lengths (default 1)"));
    sub.add_option("--block-size", o.block_size, tr("tokens per KV block (default 16)"));
    sub.add_option("--kv-blocks", o.kv_blocks, tr("the KV pool in blocks, instead of sizing it from the memory"));
    sub.add_option("--max-batch-tokens", o.max_batch_tokens, tr("tokens one step may feed: chunked prefill (default: no limit)"));
    sub.add_option("--max-running", o.max_running, tr("requests running at once (default 256, vLLM's max_num_seqs)"));
    sub.add_flag("--prefix-caching", o.prefix_caching, tr("share whole blocks of a prefix with a running request of its group"));
    sub.add_option("--step-overhead", o.step_overhead, tr("a constant time per step for launches and scheduling (2ms; default 0)"));
    sub.add_option("--slo-ttft", o.slo_ttft, tr("the TTFT a request may take (1s): goodput, and the sweep's p99 target"));
    sub.add_option("--slo-tpot", o.slo_tpot, tr("the TPOT a request may take (50ms)"));
    sub.add_option("--sweep-rate", o.sweep_rate, tr("rates A..B: the highest Poisson rate whose p99 TTFT and TPOT meet the SLOs"));
    sub.add_option("--sweep-points", o.sweep_points, tr("rates on the sweep's grid before it bisects (default 8)"));
    sub.add_option("--explain-request", o.explain_request, tr("whose timeline --explain shows (default 0)"));
}

}  // namespace

void setup_serve_sim(CLI::App& app) {
    auto opt = std::make_shared<ServeOptions>();
    CLI::App* sub = app.add_subcommand("serve-sim", tr("A server under load, step by step: TTFT with queueing, TPOT, goodput"));
    add_flags(*sub, *opt);
    add_output_flags(*sub, opt->out, true);
    add_svg_flag(*sub, opt->out, tr("TTFT and TPOT distributions, batch, KV blocks and queue over time; a sweep's curves"));
    sub->footer(examples_footer(
        {"inferlab serve-sim --model llama-3-8b --hw h100-sxm --requests 1000 --rate 20 --slo-ttft 1s --slo-tpot 50ms",
         "inferlab serve-sim --model llama-3-8b --hw h100-sxm --requests 1 --prompt-len 2048 --output-len 512",
         "inferlab serve-sim --model llama-3-8b --hw h100-sxm --requests 2000 --sweep-rate 1..100 --slo-ttft 1s --slo-tpot 50ms",
         "inferlab serve-sim --model llama-3-8b --hw h100-sxm --tp 2 --requests 500 --rate 40 --max-batch-tokens 2048"},
        tr("Each step feeds the running requests (a decode: one token; a prefill: up to --max-batch-tokens), then admits "
           "waiting ones first come, first served; when blocks run out the newest running request is preempted and "
           "recomputed later (vLLM's policy, the one `model paged` follows). A step takes max(bytes/β, FLOPs/π) + "
           "all-reduces + --step-overhead: decode-roofline's bound. The KV pool is the memory the weights leave, in whole "
           "blocks of every layer (sliding-window layers held at every position).\n"
           "\n"
           "Tables for --csv --table NAME: summary, requests, steps, and with --sweep-rate sweep. JSON keys: the README's "
           "table.")));
    sub->callback([opt] { run(*opt); });
}

}  // namespace inferlab::app
