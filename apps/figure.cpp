// inferlab figure: the documents' figures redrawn as SVG from the library's computation
// (lib/include/inferlab/draw/). This file parses the flags with the sibling subcommands' rules,
// calls the figure's function and writes the SVG (or, with --all, every figure and a gallery).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "best_of_n_flags.hpp"
#include "common.hpp"
#include "roofline_flags.hpp"
#include "model_common.hpp"
#include "options.hpp"
#include "paged_options.hpp"
#include "inferlab/answer/spec_accept.hpp"
#include "inferlab/base/dtype.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/draw/best_of_n.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/decode_roofline.hpp"
#include "inferlab/draw/kv_mem.hpp"
#include "inferlab/draw/model.hpp"
#include "inferlab/draw/quantize.hpp"
#include "inferlab/draw/spec_accept.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/run/paged_sim.hpp"

namespace inferlab::app {
namespace {

using figures::FigureInfo;

struct FigureOptions {
    std::string name, out;
    bool list = false, all = false;
    OutputFlags flags;  // --json, --csv (--table), --explain: the figure's numbers or the catalogue
    // Shape (Figures 5, 7, 9) and head mapping (Figure 6).
    std::string layers, seq_len, q_heads, kv_heads, head_dim, kv_dtype, batch;
    // Figure 9's read model: decode-roofline's flags.
    std::string weights_bytes, bandwidth, kv_bytes_per_request, params, hw, peak_flops, bytes_per_elem;
    // Figure 8's paged cache (model paged's flags).
    ModelSource src;
    PagedFlags paged;  // its --steps is Figure 4's too
    // Figures 10 to 15.
    std::string tile, window, gamma, outcomes, alpha, p, q, n, tpr, fpr, x, step, bits;
    // Figure 4's run and the second document's Figure 1.
    std::string tokens, hidden, weight_dtype;
    // Figure 17: model check-cache's chunked prefill.
    std::string chunk;
    // Figure 14: best-of-n's flags beyond --p, --n, --tpr and --fpr (--fallback_given and the
    // rest are set from the command line in setup_figure).
    BestOfNFlags bestofn;
};

// The flags each drawn figure takes; any other figure flag given is an error naming both.
const std::map<std::string, std::set<std::string>>& figure_flags() {
    static const std::map<std::string, std::set<std::string>> flags = {
        {"doc1-fig4", {"--checkpoint", "--config", "--model", "--seed", "--tokens", "--steps"}},
        {"doc2-fig1", {"--hidden-size", "--q-heads", "--kv-heads", "--head-dim", "--weight-dtype"}},
        {"doc1-fig5", {"--layers", "--seq-len", "--kv-heads", "--head-dim", "--kv-dtype"}},
        {"doc1-fig6", {"--q-heads", "--kv-heads"}},
        {"doc1-fig7", {"--layers", "--seq-len", "--q-heads", "--kv-heads", "--head-dim", "--kv-dtype", "--batch"}},
        {"doc1-fig8", {"--checkpoint", "--config", "--model", "--seed", "--prompts", "--blocks", "--block-size", "--steps",
                       "--pool-seed"}},
        {"doc1-fig9", {"--layers", "--seq-len", "--kv-heads", "--head-dim", "--kv-dtype", "--bytes-per-elem", "--batch",
                       "--weights-bytes", "--params", "--weight-dtype", "--config", "--model", "--bandwidth", "--hw",
                       "--peak-flops", "--kv-bytes-per-request"}},
        {"doc1-fig10", {"--seq-len", "--tile", "--window"}},
        {"doc1-fig11", {"--gamma", "--outcomes"}},
        {"doc1-fig12", {"--alpha", "--gamma"}},
        {"doc1-fig13", {"--p", "--q"}},
        {"doc1-fig14", {"--p", "--n", "--tpr", "--fpr", "--verifier-accuracy", "--fallback", "--alternatives", "--answer-dist",
                        "--judge-bias", "--hard-fraction", "--rho", "--target"}},
        {"doc1-fig15", {"--x", "--step", "--bits"}},
        {"doc1-fig17", {"--checkpoint", "--config", "--model", "--seed", "--tokens", "--seq-len", "--chunk", "--block-size",
                        "--pool-seed"}},
    };
    return flags;
}

const FigureInfo& find_figure(const std::string& name) {
    for (const auto& f : figures::catalog())
        if (f.name == name) {
            if (!f.drawn) throw InputError("NAME", name, Prose{N_("is not drawn: {0}"), {f.reason}, {0}});
            return f;
        }
    throw InputError("NAME", name, N_("is not a figure (see 'inferlab figure --list')"));
}

std::uint64_t positive(const std::string& flag, const std::string& text, std::uint64_t max) {
    return parse_positive_int_at_most(flag, text, max, "");
}

figures::KvShape shape_of(const FigureOptions& o) {
    figures::KvShape s;
    if (!o.layers.empty()) s.layers = positive("--layers", o.layers, 1u << 20);
    if (!o.seq_len.empty()) {
        s.seq_len = parse_tokens("--seq-len", o.seq_len);
        if (s.seq_len == 0) throw InputError("--seq-len", o.seq_len, N_("must be a positive token count"));
    }
    if (!o.q_heads.empty()) s.q_heads = positive("--q-heads", o.q_heads, 1u << 16);
    if (!o.kv_heads.empty()) s.kv_heads = positive("--kv-heads", o.kv_heads, 1u << 16);
    if (!o.head_dim.empty()) s.head_dim = positive("--head-dim", o.head_dim, 1u << 20);
    if (!o.kv_dtype.empty()) {
        const DType t = parse_dtype("--kv-dtype", o.kv_dtype);
        s.bits = t.bits;
        s.dtype = t.name;
    }
    if (!o.q_heads.empty() || !o.kv_heads.empty())
        if (s.q_heads % s.kv_heads != 0)
            throw InputError("--kv-heads", std::to_string(s.kv_heads), N_("must divide H_q = {0}"), {std::to_string(s.q_heads)});
    return s;
}

std::vector<double> distribution(const std::string& flag, const std::string& text) {
    std::vector<double> v;
    for (const auto& item : split_list(flag, text)) v.push_back(parse_probability(flag, item));
    if (v.size() > 16) throw InputError(flag, text, N_("at most 16 tokens can be drawn"));
    return v;
}

// Figure 4: a prompt, then greedy decode steps on the reference model, each step traced: the
// run `model generate --steps N+1 --trace` makes (N decode steps after the prefill, the last
// step's chosen token fed to none), so the figure and that command show the same cache.
std::string draw_fig4(const FigureOptions& o) {
    auto w = load(o.src);
    model::CpuBackend cpu(cpu_backend_options(1, ""));  // INFERLAB_KERNELS, as the model commands read it
    model::Transformer m(*w, cpu);
    const model::Dims& d = w->dims();
    model::GenerateInputs in;
    in.prompt = parse_token_list("--tokens", o.tokens.empty() ? "1,2,3,4" : o.tokens, d);
    if (in.prompt.empty()) throw InputError("--tokens", o.tokens, N_("needs at least one token"));
    const std::string steps_text = o.paged.steps.empty() ? "3" : o.paged.steps;
    const std::uint64_t steps = parse_positive_int("--steps", steps_text);
    if (steps > 16) throw InputError("--steps", steps_text, N_("at most 16 decode steps can be drawn"));
    // generate(steps + 1) chooses one token after the last step drawn, at position prompt + steps:
    // that position must be within the model's maximum sequence length (generate's own rule, said
    // here of --steps). Before, the figure drew up to prompt + steps = S_max.
    if (in.prompt.size() + steps + 1 > static_cast<std::uint64_t>(d.seq_len))
        throw InputError("--steps", steps_text,
                         N_("with the {1}-token prompt and the token the last step chooses exceeds the model's maximum "
                            "sequence length {0}"),
                         {std::to_string(d.seq_len), std::to_string(in.prompt.size())});
    in.steps = steps + 1;
    return figures::fig4_cache_append(model::generate(m, in, {}).trace);
}

std::string draw_doc2_fig1(const FigureOptions& o) {
    figures::ProjectionInputs in;
    if (!o.hidden.empty()) in.hidden = positive("--hidden-size", o.hidden, 1u << 20);
    if (!o.q_heads.empty()) in.q_heads = positive("--q-heads", o.q_heads, 1u << 16);
    if (!o.kv_heads.empty()) in.kv_heads = positive("--kv-heads", o.kv_heads, 1u << 16);
    if (!o.head_dim.empty()) in.head_dim = positive("--head-dim", o.head_dim, 1u << 16);
    if (in.q_heads % in.kv_heads != 0)
        throw InputError("--kv-heads", std::to_string(in.kv_heads), N_("must divide H_q = {0}"), {std::to_string(in.q_heads)});
    if (!o.weight_dtype.empty()) {
        const DType t = parse_dtype("--weight-dtype", o.weight_dtype);
        in.bits = t.bits;
        in.dtype = t.name;
    }
    return figures::doc2_fig1_projections(in);
}

std::string draw_doc1_fig5(const FigureOptions& o) { return figures::fig5_layer_caches(shape_of(o)); }

std::string draw_doc1_fig6(const FigureOptions& o) {
    figures::HeadMapInputs in;
    if (!o.q_heads.empty()) in.q_heads = positive("--q-heads", o.q_heads, 64);
    if (!o.kv_heads.empty()) {
        in.kv_heads.clear();
        for (const auto& item : split_count_list("--kv-heads", o.kv_heads)) in.kv_heads.push_back(positive("--kv-heads", item, 64));
    }
    return figures::fig6_head_mapping(in);
}

std::string draw_doc1_fig7(const FigureOptions& o) {
    figures::KvSubstitutionInputs in{shape_of(o), 8};
    if (!o.batch.empty()) in.batch = positive("--batch", o.batch, 1u << 20);
    return figures::fig7_kv_substitution(in);
}

// Figure 8's defaults and limits for the paged flags (model paged's flags, declared once).
const PagedDefaults& fig8_defaults() {
    static const PagedDefaults d{"1,2,3,4,5;1,2,3,4,9,9;7,8", 16, 2, 2, 64, N_("must be at most {0} blocks to be drawn")};
    return d;
}

std::string draw_doc1_fig8(const FigureOptions& o) {
    auto w = load(o.src);
    model::CpuBackend cpu(cpu_backend_options(1, ""));  // INFERLAB_KERNELS, as the model commands read it
    model::Transformer m(*w, cpu);
    const model::PagedSimOptions so = paged_sim_options(o.paged, w->dims(), fig8_defaults());
    const model::PagedSimResult sim = model::simulate_paged(m, so);
    // The step model paged marks as the peak, so the figure and the command show the same tables.
    return figures::fig8_paged_blocks(sim, static_cast<std::size_t>(sim.peak_step));
}

// Figure 9 takes decode-roofline's flags, parsed by decode-roofline's own rules (gather_roofline),
// with the document's inputs where none is given: W = 14 GB, β = 1 TB/s, B = 1 and 8, and without
// a model M_KV from the shape flags (L = 32, S = 8192, H_kv = 8, d = 128, bf16: 1 GiB); with a
// model, --seq-len as decode-roofline requires it.
std::string draw_doc1_fig9(const FigureOptions& o) {
    RooflineFlags f;
    f.weights_bytes = o.weights_bytes, f.params = o.params, f.weight_dtype = o.weight_dtype;
    f.config = o.src.config, f.model = o.src.model;
    f.kv_bytes_per_request = o.kv_bytes_per_request, f.bytes_per_elem = o.bytes_per_elem;
    f.bandwidth = o.bandwidth, f.hw = o.hw, f.peak_flops = o.peak_flops;
    const bool model = !f.config.empty() || !f.model.empty();
    if (f.weights_bytes.empty() && f.params.empty() && !model) f.weights_bytes = "14GB";
    if (f.bandwidth.empty() && f.hw.empty()) f.bandwidth = "1TB/s";
    // A list of lengths is the batch itself (decode-roofline's rule): no default batch beside it.
    if (!o.batch.empty() || o.seq_len.find(',') == std::string::npos) {
        f.batch = o.batch.empty() ? "1,8" : o.batch;
        f.batch_given = true;
    }
    const std::pair<const char*, const std::string*> shape_flags[] = {
        {"--layers", &o.layers}, {"--q-heads", &o.q_heads}, {"--kv-heads", &o.kv_heads}, {"--head-dim", &o.head_dim}};
    if (!f.kv_bytes_per_request.empty()) {
        // M_KV given outright leaves nothing for the shape to decide.
        for (const auto& [flag, value] : shape_flags)
            if (!value->empty()) throw InputError(N_("{0} does not apply with --kv-bytes-per-request (it gives M_KV)"), {flag});
        if (!o.seq_len.empty()) throw InputError(N_("{0} does not apply with --kv-bytes-per-request (it gives M_KV)"), {"--seq-len"});
        if (!o.kv_dtype.empty()) throw InputError(N_("{0} does not apply with --kv-bytes-per-request (it gives M_KV)"), {"--kv-dtype"});
    } else {
        // The document's S = 8192 goes with its shape; a model's S is the user's to give, as
        // decode-roofline asks for it.
        f.seq_len = o.seq_len.empty() && !model ? "8192" : o.seq_len;
        if (model) {
            for (const auto& [flag, value] : shape_flags)
                if (!value->empty()) throw InputError(N_("{0} does not apply with --model/--config (the model gives the shape)"), {flag});
            f.kv_dtype = o.kv_dtype;
        } else {
            if (!o.bytes_per_elem.empty() && !o.kv_dtype.empty())
                throw InputError(N_("--kv-dtype and --bytes-per-elem both given: choose one"));
            FigureOptions shape_only = o;
            shape_only.seq_len.clear();  // S goes to decode-roofline's --seq-len, which also takes a list
            figures::KvShape s = shape_of(shape_only);
            if (!o.bytes_per_elem.empty()) {
                s.bits = parse_bytes_per_elem_bits("--bytes-per-elem", o.bytes_per_elem);
                s.dtype = trf("{0} B per element", o.bytes_per_elem);
            }
            f.kv_shape = uniform_kv(s.layers, s.kv_heads, s.head_dim, s.bits);
            f.kv_shape_from = trf("L = {0}, H_kv = {1}, d = {2}, {3}: 2·L·S·H_kv·d·b (kv-mem's formula)", s.layers, s.kv_heads,
                                  s.head_dim, s.dtype);
            f.bytes_per_elem.clear();
        }
    }
    const RooflineInputs in = gather_roofline(f);
    if (in.req.batches.size() > 12) throw InputError("--batch", o.batch, N_("at most 12 bars can be drawn"));
    // A value the figure filled in is the document's, not a flag the user gave.
    const bool w_default = o.weights_bytes.empty() && o.params.empty() && !model;
    const bool beta_default = o.bandwidth.empty() && o.hw.empty();
    return figures::fig9_decode_reads(in.req, decode_roofline(in.req),
                                      {"W: " + (w_default ? tr("the document's 14 GB") : in.weights_from.localized()), "M_KV: " + in.kv_from.localized(),
                                       "β: " + (beta_default ? tr("the document's 1 TB/s") : in.bandwidth_text)});
}

// Figure 17: model check-cache's comparison, with its defaults (model/runs.hpp: CheckCacheInputs
// and check_cache_tokens), so the figure shows what that command prints.
std::string draw_doc1_fig17(const FigureOptions& o) {
    auto w = load(o.src);
    model::CpuBackend cpu(cpu_backend_options(1, ""));  // INFERLAB_KERNELS, as the model commands read it
    model::Transformer m(*w, cpu);
    const model::Dims& d = w->dims();
    model::CheckCacheInputs in;
    if (!o.paged.pool_seed.empty()) in.pool_seed = parse_nonnegative_int("--pool-seed", o.paged.pool_seed);
    if (!o.tokens.empty()) {
        if (!o.seq_len.empty())
            throw InputError("--seq-len", o.seq_len, N_("has no effect with --tokens (the tokens given are the sequence)"));
        in.tokens = parse_token_list("--tokens", o.tokens, d);
    } else {
        const std::string n_text = o.seq_len.empty() ? std::to_string(model::kCheckCacheDefaultTokens) : o.seq_len;
        const int n = parse_token_count("--seq-len", n_text, 0, static_cast<std::uint64_t>(d.seq_len));
        in.tokens = model::check_cache_tokens(d, static_cast<std::size_t>(n), in.pool_seed);
    }
    if (!o.chunk.empty()) in.chunk = static_cast<int>(parse_positive_int_at_most("--chunk", o.chunk, INT32_MAX, ""));
    if (!o.paged.block_size.empty())
        in.block_size = static_cast<int>(
            parse_positive_int_at_most("--block-size", o.paged.block_size, model::kMaxBlockSize,
                                       N_("must be at most {0} tokens")));
    return figures::fig17_cache_paths(model::check_cache(m, in, {}));
}

std::string draw_doc1_fig10(const FigureOptions& o) {
    figures::AttentionMaskInputs in;
    if (!o.seq_len.empty()) in.seq_len = positive("--seq-len", o.seq_len, 64);
    if (!o.tile.empty()) in.tile = positive("--tile", o.tile, 64);
    if (!o.window.empty()) in.window = positive("--window", o.window, 64);
    return figures::fig10_attention_masks(in);
}

std::string draw_doc1_fig11(const FigureOptions& o) {
    figures::RoundInputs in;
    if (!o.gamma.empty()) in.gamma = positive("--gamma", o.gamma, 16);
    if (!o.outcomes.empty()) in.outcomes = split_list("--outcomes", o.outcomes);
    return figures::fig11_round(in);
}

std::string draw_doc1_fig12(const FigureOptions& o) {
    figures::AcceptedCountInputs in;
    if (!o.alpha.empty()) in.alpha = parse_probability("--alpha", o.alpha);
    if (!o.gamma.empty()) in.gamma = positive("--gamma", o.gamma, 16);
    return figures::fig12_accepted_counts(in);
}

std::string draw_doc1_fig13(const FigureOptions& o) {
    figures::AcceptanceInputs in;
    if (!o.p.empty()) in.p = distribution("--p", o.p);
    if (!o.q.empty()) in.q = distribution("--q", o.q);
    require_same_vocabulary("--p", in.p.size(), "--q", in.q.size());
    return figures::fig13_acceptance(in);
}

// Figure 14 takes best-of-n's flags, parsed by best-of-n's own rules, with the document's p = 0.3
// and N = 1..8, 10, 12, 16 (N = 4 marked) and, without a selection flag, a verifier of TPR 0.9 and
// FPR 0.2 so the figure shows the gap between presence and choice.
std::string draw_doc1_fig14(const FigureOptions& o) {
    BestOfNFlags f = o.bestofn;
    f.p = o.p.empty() ? "0.3" : o.p;
    f.n = o.n.empty() ? "1..8,10,12,16" : o.n;
    f.n_given = !o.n.empty();
    f.tpr = o.tpr, f.fpr = o.fpr;
    const bool selection = !f.tpr.empty() || !f.fpr.empty() || !f.verifier_accuracy.empty() || !f.alternatives.empty() ||
                           !f.answer_dist.empty() || !f.judge_bias.empty();
    if (!selection) f.tpr = "0.9", f.fpr = "0.2";
    const BestOfNRequest rq = parse_best_of_n(f);
    if (rq.ns.size() > 256) throw InputError("--n", o.n, N_("at most 256 values of N can be drawn"));
    const std::uint64_t marked = o.n.empty() ? 4 : rq.ns.back();
    // The search panel: a search that shows the crossing (best-of-N ahead at small T, the search at
    // large T), its outcome verifier the figure's, or TPR 0.9, FPR 0.1 without one.
    const SearchRequest s = accumulation_search(rq.verifier ? *rq.verifier : Verifier{0.9, 0.1, true});
    figures::SearchPanel panel{s, search_answer(s)};
    return figures::fig14_coverage(rq, compute_best_of_n(f, rq), marked, !selection, panel);
}

std::string draw_doc1_fig15(const FigureOptions& o) {
    figures::GridInputs in;
    if (!o.x.empty()) in.x = parse_real("--x", o.x);
    if (!o.step.empty()) in.step = parse_positive_real("--step", o.step);
    if (!o.bits.empty()) in.bits = parse_bits_in(o.bits, 2, 16);
    try {
        return figures::fig15_quant_grid(in);
    } catch (const InputError& e) {  // the library's "step Δ" and "x" are this command's flags
        // Renamed only where the user gave the flag: a default is nobody's typing.
        if (e.where() == "step Δ" && !o.step.empty()) throw e.renamed("--step").with_value(o.step);
        if (e.where() == "x" && !o.x.empty()) throw e.renamed("--x").with_value(o.x);
        throw;
    }
}

// The drawing of each figure, by name.
using Drawer = std::string (*)(const FigureOptions&);
const std::map<std::string, Drawer>& drawers() {
    static const std::map<std::string, Drawer> table = {
        {"doc1-fig4", draw_fig4},
        {"doc2-fig1", draw_doc2_fig1},
        {"doc1-fig5", draw_doc1_fig5},
        {"doc1-fig6", draw_doc1_fig6},
        {"doc1-fig7", draw_doc1_fig7},
        {"doc1-fig8", draw_doc1_fig8},
        {"doc1-fig9", draw_doc1_fig9},
        {"doc1-fig10", draw_doc1_fig10},
        {"doc1-fig11", draw_doc1_fig11},
        {"doc1-fig12", draw_doc1_fig12},
        {"doc1-fig13", draw_doc1_fig13},
        {"doc1-fig14", draw_doc1_fig14},
        {"doc1-fig15", draw_doc1_fig15},
        {"doc1-fig17", draw_doc1_fig17},
    };
    return table;
}

std::string draw(const std::string& name, const FigureOptions& o) {
    const auto it = drawers().find(name);
    if (it == drawers().end()) throw InputError("NAME", name, N_("is not a figure (see 'inferlab figure --list')"));
    // The drawings name their inputs by the documents' symbols; the user gave flags.
    static const std::map<std::string, std::string> flag_of = {
        {"H_q", "--q-heads"}, {"H_kv", "--kv-heads"}, {"S", "--seq-len"}, {"tile", "--tile"}, {"W", "--window"}};
    try {
        return it->second(o);
    } catch (const InputError& e) {
        const auto f = flag_of.find(e.where());
        if (f == flag_of.end()) throw;
        throw e.renamed(f->second);
    }
}

// Each figure: its name and place, then its caption (and why it is not drawn) wrapped to the
// terminal's width like every human output.
std::string list_text() {
    std::string drawn = tr("Figures drawn from the computation (inferlab figure NAME):") + "\n";
    std::string not_drawn = "\n" + tr("Not drawn:") + "\n";
    const std::string hang(14, ' ');
    for (const auto& f : figures::catalog()) {
        const std::string doc = f.name.rfind("doc1", 0) == 0 ? tr("first document") : tr("second document");
        std::string entry = fmt::format("  {:<11} {}, {}\n", f.name, doc, tr(f.section)) + wrap(tr(f.caption), hang, hang);
        if (!entry.empty() && entry.back() != '\n') entry += '\n';
        if (f.drawn) {
            drawn += entry;
        } else {
            not_drawn += entry + wrap(tr(f.reason), hang, hang);
            if (not_drawn.back() != '\n') not_drawn += '\n';
        }
    }
    return drawn + not_drawn;
}

std::string html_escape(const std::string& s) { return svg::escape(s); }

// A drawn figure's caption: the one it computed from the inputs drawn (its <desc>), else the
// catalogue's (a caption that states no input), in the language of `svg_text`.
std::string caption_of(const FigureInfo& f, const std::string& svg_text) {
    const std::string drawn = svg::read_back(svg_text).caption;
    return drawn.empty() ? tr(f.caption) : drawn;
}

// The gallery page: each figure with its caption and the command that made it, in the run's language.
void write_all(const FigureOptions& o) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(o.out, ec);
    if (ec || !fs::is_directory(o.out)) throw FileError(o.out, N_("is not a directory that can be created"));
    std::string html = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"{}\"><head><meta charset=\"utf-8\"><title>{}</title>\n"
        "<style>body{{font-family:{};max-width:980px;margin:2em auto;color:#222}}figure{{margin:2em 0}}"
        "img{{max-width:100%;border:1px solid #ddd}}code{{background:#f4f4f4;padding:2px 4px}}</style></head><body>\n"
        "<h1>{}</h1>\n",
        language() == Lang::zh ? "zh-CN" : "en", html_escape(tr("inferlab: the documents' figures")), svg::kFontFamily,
        html_escape(tr("The documents' figures, redrawn from inferlab's computation")));
    std::string not_drawn;
    int drawn = 0;
    for (const auto& f : figures::catalog()) {
        const std::string doc = html_escape(tr(f.document)), section = html_escape(tr(f.section)), caption = html_escape(tr(f.caption));
        if (!f.drawn) {
            not_drawn += fmt::format("<li>{}, {}, {}: {} ({})</li>\n", f.name, doc, section, caption, html_escape(tr(f.reason)));
            continue;
        }
        const std::string file = f.name + ".svg", svg_text = draw(f.name, FigureOptions{});
        write_text_file((fs::path(o.out) / file).string(), svg_text);
        ++drawn;
        html += fmt::format("<figure id=\"{0}\"><img src=\"{1}\" alt=\"{2}\"><figcaption><b>{0}</b>: {2} ({3}, {4})<br>{5} "
                            "<code>inferlab figure {0}</code></figcaption></figure>\n",
                            f.name, file, html_escape(caption_of(f, svg_text)), doc, section, html_escape(tr("Made by")));
    }
    html += "<h2>" + html_escape(tr("Not drawn")) + "</h2><ul>\n" + not_drawn + "</ul>\n</body></html>\n";
    write_text_file((fs::path(o.out) / "index.html").string(), html);
    std::cout << trf("wrote {0} figures and index.html to {1}", drawn, o.out) << "\n";
}

// --list as a report: the text above, and the catalogue as JSON and as a CSV table.
void print_list(const FigureOptions& o) {
    if (o.flags.explain) throw InputError(N_("--explain does not apply with --list (a catalogue has no formula): use --json or --csv"));
    Report r;
    r.human = list_text();
    auto field = [](std::string FigureInfo::*member) { return [member](const FigureInfo& f) { return f.*member; }; };
    const std::vector<Column<FigureInfo>> columns = {
        {"name", "name", field(&FigureInfo::name)},
        {"document", "document", field(&FigureInfo::document)},
        {"section", "section", field(&FigureInfo::section)},
        {"caption", "caption", field(&FigureInfo::caption)},
        {"drawn", "drawn", [](const FigureInfo& f) { return csv_flag(f.drawn); }},
        {"reason", "reason", field(&FigureInfo::reason)}};
    r.json["figures"] = nlohmann::json::array();
    for (const auto& f : figures::catalog()) {
        r.json["figures"].push_back({{"name", f.name}, {"document", f.document}, {"section", f.section}, {"caption", f.caption},
                                     {"drawn", f.drawn}, {"reason", f.drawn ? nlohmann::json(nullptr) : nlohmann::json(f.reason)}});
    }
    r.add_table("figures", columns_table(columns, figures::catalog()), "/figures");
    emit(r, o.flags);
}

// One figure as a report: the SVG (or, with --out, the line saying where it went), and what it
// shows read back from it: --json the figure's place, inputs and every number drawn, --csv
// those numbers, --explain its title, caption and inputs (the formulas among them). `english`
// is the same figure drawn in English: --json and --csv read it, so they are byte-identical in
// every language (their prose fields, title, inputs and text, stay English).
Report figure_report(const FigureInfo& f, const std::string& svg_text, const std::string& english, const std::string& out) {
    const svg::Drawn d = svg::read_back(english);
    Report r;
    r.human = out.empty() || out == "-" ? svg_text : trf("wrote {0} ({1} bytes): {2}", out, svg_text.size(), caption_of(f, svg_text)) + "\n";
    r.json = {{"name", f.name}, {"document", f.document}, {"section", f.section},
              {"caption", d.caption.empty() ? f.caption : d.caption}, {"title", d.title},
              {"inputs", d.inputs}, {"values", nlohmann::json::array()}, {"out", out.empty() || out == "-" ? nlohmann::json(nullptr) : nlohmann::json(out)}};
    // The CSV holds the numbers only (a label such as "22.590 GB" is text: --json carries it).
    const std::vector<Column<svg::DrawnValue>> columns = {
        {"class", "class", [](const svg::DrawnValue& v) { return v.cls; }},
        // The shortest text that reads back exactly.
        {"value", "value", [](const svg::DrawnValue& v) { return fmt::format("{}", v.value); }}};
    Table t = columns_table(columns, d.values);
    t.right_align = {false, true};
    for (const auto& v : d.values) r.json["values"].push_back({{"class", v.cls}, {"value", v.value}, {"text", v.text}});
    r.add_table("values", t, "/values");
    const svg::Drawn shown = svg::read_back(svg_text);
    r.explain = wrap(fmt::format("{}: {} ({}, {})", f.name, shown.title, tr(f.document), tr(f.section)));
    for (const auto& line : shown.inputs) r.explain += wrap(line, "  ", "    ");
    return r;
}

// The figure drawn in English whatever the run's language (restored after, also on an error).
std::string draw_in_english(const std::string& name, const FigureOptions& o) {
    struct Restore {
        Lang was = language();
        ~Restore() { set_language(was); }
    } restore;
    set_language(Lang::en);
    return draw(name, o);
}

void run_figure(const FigureOptions& o, const CLI::App& sub) {
    // Every figure flag the command line gave, by its long name (the output forms apart).
    static const std::set<std::string> not_figure_flags = {"--out", "--list", "--all", "--json", "--csv", "--explain", "--table", "--lang"};
    std::vector<std::string> given_flags;
    for (const CLI::Option* opt : sub.get_options())
        if (opt->count() > 0 && !opt->get_lnames().empty()) {
            const std::string f = "--" + opt->get_lnames().front();
            if (!not_figure_flags.count(f)) given_flags.push_back(f);
        }
    const bool output_form = o.flags.json || o.flags.csv || o.flags.explain;
    if (o.list) {
        if (!o.name.empty() || o.all) throw InputError(N_("--list takes no figure name and no --all"));
        if (!given_flags.empty()) throw InputError(N_("{0} does not apply with --list (it draws nothing)"), {given_flags.front()});
        if (!o.out.empty()) throw InputError(N_("{0} does not apply with --list (it draws nothing)"), {"--out"});
        return print_list(o);
    }
    if (o.all) {
        if (!o.name.empty()) throw InputError(N_("--all draws every figure: give no NAME with it"));
        if (o.out.empty()) throw InputError(N_("--all needs --out DIR (the folder for the SVG files and index.html)"));
        if (!given_flags.empty())
            throw InputError(N_("{0} does not apply with --all (it draws the documents' inputs)"), {given_flags.front()});
        if (output_form) throw InputError(N_("--json, --csv and --explain do not apply with --all (it writes files and index.html)"));
        write_all(o);
        return;
    }
    if (o.name.empty()) throw InputError(N_("give a figure NAME, --list or --all (see 'inferlab figure --list')"));
    const FigureInfo& info = find_figure(o.name);
    const auto& allowed = figure_flags().at(o.name);
    for (const auto& f : given_flags)
        if (!allowed.count(f)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : " ") + a;
            throw InputError(N_("{0} does not apply to {1} (it takes {2})"), {f, o.name, list});
        }
    const std::string text = draw(o.name, o);
    const bool machine = o.flags.json || o.flags.csv;
    const Report r = figure_report(info, text, machine && language() != Lang::en ? draw_in_english(o.name, o) : text, o.out);
    // The file first: one that cannot be written leaves stdout empty.
    if (!o.out.empty() && o.out != "-") write_text_file(o.out, text);
    emit(r, o.flags);
}

// The model and paged-cache flags, declared once for every command that runs them; their
// descriptions here say which figures read them.
void add_shared_inputs(CLI::App* s, FigureOptions* o) {
    add_source(s, o->src);
    add_paged_flags(*s, o->paged, fig8_defaults());
    const std::pair<const char*, std::string> shared[] = {
        {"--checkpoint", tr("Figures 4, 8 and 17: a llama2.c version-0 checkpoint")},
        {"--config", tr("Figures 4, 8, 9 and 17: a config.json (Hugging Face keys); random weights for 4, 8 and 17")},
        {"--model", tr("Figures 4, 8, 9 and 17: a shipped config (default demo-gqa); random weights for 4, 8 and 17")},
        {"--seed", tr("Figures 4, 8 and 17: seed of the random weights (default 1)")},
        {"--prompts", trf(N_("Figure 8: prompts separated by ';' (default {0})"), fig8_defaults().prompts)},
        {"--blocks", trf(N_("Figure 8: blocks in the pool, at most {0} (default {1})"), fig8_defaults().max_blocks,
                         fig8_defaults().blocks)},
        {"--block-size", trf(N_("Figure 8: tokens per block (default {0}); Figure 17: paged cache (default {1})"),
                             fig8_defaults().block_size, model::CheckCacheInputs{}.block_size)},
        {"--steps", trf(N_("greedy tokens generated: Figure 8 per sequence (default {0}), Figure 4 (default 3)"),
                        fig8_defaults().steps)},
        {"--pool-seed", trf(N_("Figures 8 and 17: shuffles the pool's free list (default 1); Figure 17: its tokens "
                               "(seed + {0})"),
                            model::kCheckCacheTokenSeedOffset)},
    };
    for (const auto& [flag, text] : shared) s->get_option(flag)->description(text);
}

// The inputs of every drawn figure: each figure's own, and the flags of the subcommand behind it.
void add_figure_inputs(CLI::App* s, FigureOptions* o) {
    s->add_option("--layers", o->layers, tr("L, layers (Figures 5, 7, 9; default 32)"));
    s->add_option("--seq-len", o->seq_len,
                  trf(N_("S, cached tokens (Figures 5, 7, 9; default 8192, required for 9 with --model/--config); Figure 10: "
                         "positions (default 12); Figure 17: random tokens (default {0})"),
                      model::kCheckCacheDefaultTokens));
    s->add_option("--q-heads", o->q_heads, tr("H_q, query heads (Figure 6 default 4; otherwise 32)"));
    s->add_option("--kv-heads", o->kv_heads, tr("H_kv, K/V heads (default 8); Figure 6: a list (default 4,2,1)"));
    s->add_option("--head-dim", o->head_dim, tr("d, width of one head (default 128)"));
    s->add_option("--kv-dtype", o->kv_dtype, tr("K/V precision: bf16 (default), fp16, fp8, int8, int4, fp32"));
    s->add_option("--batch", o->batch, tr("B: Figure 9 a list or range of batches (default 1,8); Figure 7 one batch (default 8)"));
    s->add_option("--weights-bytes", o->weights_bytes, tr("W, weight bytes read per step (Figure 9; default 14GB)"));
    s->add_option("--kv-bytes-per-request", o->kv_bytes_per_request, tr("M_KV, instead of the shape flags (Figure 9)"));
    s->add_option("--bandwidth", o->bandwidth, tr("β, sustained bandwidth (Figure 9; default 1TB/s)"));
    s->add_option("--params", o->params, tr("Figure 9: weight parameters (7e9), W with --weight-dtype (as decode-roofline)"));
    s->add_option("--hw", o->hw, tr("Figure 9: a hardware preset for β and π (decode-roofline --list-hw)"));
    s->add_option("--peak-flops", o->peak_flops, tr("Figure 9: π, dense peak FLOP/s: a compute-bound step's tok/s"));
    s->add_option("--bytes-per-elem", o->bytes_per_elem, tr("Figure 9: b, KV bytes per element instead of --kv-dtype"));
    add_shared_inputs(s, o);
    s->add_option("--tile", o->tile, tr("Figure 10: tile size (default 4)"));
    s->add_option("--window", o->window, tr("Figure 10: sliding window W (default 4)"));
    s->add_option("--gamma", o->gamma, tr("γ, drafts per round (Figures 11, 12; default 4)"));
    s->add_option("--outcomes", o->outcomes, tr("Figure 11: the round, accept,accept,reject (default)"));
    s->add_option("--alpha", o->alpha, tr("Figure 12: acceptance rate α (default 0.8)"));
    s->add_option("--p", o->p, tr("Figure 13: target distribution (default 0.6,0.3,0.1); Figure 14: p per candidate (default 0.3)"));
    s->add_option("--q", o->q, tr("Figure 13: draft distribution (default 0.4,0.4,0.2)"));
    s->add_option("--n", o->n, tr("Figure 14: candidates, a list or range (default 1..8,10,12,16)"));
    s->add_option("--tpr", o->tpr, tr("Figure 14: verifier P(accept | correct) (default 0.9)"));
    s->add_option("--fpr", o->fpr, tr("Figure 14: verifier P(accept | wrong) (default 0.2)"));
    s->add_option("--verifier-accuracy", o->bestofn.verifier_accuracy, tr("Figure 14: verifier with TPR = a, FPR = 1 − a"));
    s->add_option("--fallback", o->bestofn.fallback, tr("Figure 14: when the verifier accepts none: random (default) or abstain"));
    s->add_option("--alternatives", o->bestofn.alternatives, tr("Figure 14: majority vote over k equally likely wrong answers"));
    s->add_option("--answer-dist", o->bestofn.answer_dist, tr("Figure 14: majority vote, answer probabilities (correct first)"));
    s->add_option("--judge-bias", o->bestofn.judge_bias, tr("Figure 14: a judge biased to wrong answers"));
    s->add_option("--hard-fraction", o->bestofn.hard_fraction, tr("Figure 14: fraction of problems no sample solves"));
    s->add_option("--rho", o->bestofn.rho, tr("Figure 14: correlated errors, p ~ Beta with this correlation"));
    s->add_option("--target", o->bestofn.target, tr("Figure 14: the coverage to reach, and the smallest N that does"));
    s->add_option("--tokens", o->tokens, tr("Figure 4: the prompt's token ids (default 1,2,3,4); Figure 17: the tokens compared"));
    s->add_option("--chunk", o->chunk, tr("Figure 17: tokens per forward of the chunked prefill (default 5)"));
    s->add_option("--hidden-size", o->hidden, tr("second document's Figure 1: hidden width (default 4096)"));
    s->add_option("--weight-dtype", o->weight_dtype, tr("weight precision: second document's Figure 1 (default bf16); Figure 9 with --params"));
    s->add_option("--x", o->x, tr("Figure 15: the value quantized (default 0.37)"));
    s->add_option("--step", o->step, tr("Figure 15: Δ, the grid step (default 0.1)"));
    s->add_option("--bits", o->bits, tr("Figure 15: bits, Q = 2^(b−1) − 1 (default 4: Q = 7)"));
}

// The notes are paragraphs, one a line: the help formatter wraps each to the terminal's width.
void add_figure_footer(CLI::App* s) {
    s->footer(examples_footer(
        {"inferlab figure --list", "inferlab figure --list --csv",
         "inferlab figure doc1-fig9 --batch 1,2,4,8,16 --out fig9.svg",
         "inferlab figure doc1-fig9 --model llama-3-8b --hw h100-sxm --seq-len 8192 --batch 1,8,64 --out fig9-llama.svg",
         "inferlab figure --all --out figures", "inferlab figure doc1-fig6 --q-heads 8 --kv-heads 8,2,1",
         "inferlab figure doc1-fig13 --p 0.5,0.5 --q 0.9,0.1", "inferlab figure doc1-fig7 --kv-dtype fp8 --batch 4",
         "inferlab figure doc1-fig14 --p 0.4 --json", "inferlab figure doc1-fig17 --seq-len 32 --out fig17.svg"},
        tr("Every figure prints its inputs and the document section it redraws. SVG is self-contained (text as "
           "text, no external font); 'inferlab figure --all --out DIR' writes every figure and DIR/index.html, a "
           "gallery with each figure's caption and the command that made it.") +
            "\n" +
            tr("--json prints the figure's place, inputs and every number drawn (class, value, text); --csv those "
               "numbers, class and value (table: values); --list --json and --list --csv the catalogue (table: "
               "figures). Both stay in English whatever the language: their text fields are the English drawing's.")));
}

}  // namespace

void setup_figure(CLI::App& app) {
    auto o = std::make_shared<FigureOptions>();
    CLI::App* s = app.add_subcommand("figure", tr("The documents' figures redrawn as SVG from inferlab's own computation"));
    s->add_option("NAME", o->name, tr("the figure, as --list names it (doc1-fig9)"));
    s->add_flag("--list", o->list, tr("list every figure with its document, section and caption"));
    s->add_flag("--all", o->all, tr("draw every figure with the documents' inputs, and index.html, into --out DIR"));
    s->add_option("--out", o->out, tr("the SVG file (default: standard output); with --all, the folder"))
        ->check(output_file_name(true));
    add_output_flags(*s, o->flags, true);
    add_figure_inputs(s, o.get());
    add_figure_footer(s);
    s->callback([o, s] {
        o->bestofn.fallback_given = given(*s, "--fallback");
        run_figure(*o, *s);
    });
}

}  // namespace inferlab::app
