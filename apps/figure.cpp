// inferlab figure: the documents' figures redrawn as SVG from the library's computation
// (lib: figures.hpp, svg.hpp). This file parses the flags with the sibling subcommands' rules,
// calls the figure's function and writes the SVG (or, with --all, every figure and a gallery).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "common.hpp"
#include "model_common.hpp"
#include "options.hpp"
#include "paged_options.hpp"
#include "inferlab/dtype.hpp"
#include "inferlab/error.hpp"
#include "inferlab/figures.hpp"
#include "inferlab/files.hpp"
#include "inferlab/model/kv_cache.hpp"
#include "inferlab/model/paged_sim.hpp"
#include "inferlab/model/transformer.hpp"
#include "inferlab/svg.hpp"
#include "inferlab/units.hpp"

namespace inferlab::app {
namespace {

using figures::FigureInfo;

struct FigureOptions {
    std::string name, out;
    bool list = false, all = false;
    // Shape (Figures 5, 7, 9) and head mapping (Figure 6).
    std::string layers, seq_len, q_heads, kv_heads, head_dim, kv_dtype, batch;
    // Figure 9's read model.
    std::string weights_bytes, bandwidth, kv_bytes_per_request;
    // Figure 8's paged cache (model paged's flags).
    ModelSource src;
    PagedFlags paged;  // its --steps is Figure 4's too
    // Figures 10 to 15.
    std::string tile, window, gamma, outcomes, alpha, p, q, n, tpr, fpr, x, step, bits;
    // Figure 4's run and the second document's Figure 1.
    std::string tokens, hidden, weight_dtype;
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
        {"doc1-fig9", {"--layers", "--seq-len", "--kv-heads", "--head-dim", "--kv-dtype", "--batch", "--weights-bytes",
                       "--bandwidth", "--kv-bytes-per-request"}},
        {"doc1-fig10", {"--seq-len", "--tile", "--window"}},
        {"doc1-fig11", {"--gamma", "--outcomes"}},
        {"doc1-fig12", {"--alpha", "--gamma"}},
        {"doc1-fig13", {"--p", "--q"}},
        {"doc1-fig14", {"--p", "--n", "--tpr", "--fpr"}},
        {"doc1-fig15", {"--x", "--step", "--bits"}},
    };
    return flags;
}

const FigureInfo& find_figure(const std::string& name) {
    for (const auto& f : figures::catalog())
        if (f.name == name) {
            if (!f.drawn) throw InputError("NAME", name, "is not drawn: " + f.reason);
            return f;
        }
    throw InputError("NAME", name, "is not a figure (see 'inferlab figure --list')");
}

std::uint64_t positive(const std::string& flag, const std::string& text, std::uint64_t max) {
    return parse_positive_int_at_most(flag, text, max, "");
}

figures::KvShape shape_of(const FigureOptions& o) {
    figures::KvShape s;
    if (!o.layers.empty()) s.layers = positive("--layers", o.layers, 1u << 20);
    if (!o.seq_len.empty()) {
        s.seq_len = parse_tokens("--seq-len", o.seq_len);
        if (s.seq_len == 0) throw InputError("--seq-len", o.seq_len, "must be a positive token count");
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
            throw InputError("--kv-heads", std::to_string(s.kv_heads), fmt::format("must divide H_q = {}", s.q_heads));
    return s;
}

std::vector<double> distribution(const std::string& flag, const std::string& text) {
    std::vector<double> v;
    for (const auto& item : split_list(flag, text)) v.push_back(parse_probability(flag, item));
    if (v.size() > 16) throw InputError(flag, text, "at most 16 tokens can be drawn");
    return v;
}

// Figure 4: a prompt, then greedy decode steps on the reference model, each step traced.
std::string draw_fig4(const FigureOptions& o) {
    auto w = load(o.src);
    model::Transformer m(*w);
    const model::Dims& d = w->dims();
    const std::vector<int> prompt = parse_token_list("--tokens", o.tokens.empty() ? "1,2,3,4" : o.tokens, d);
    if (prompt.empty()) throw InputError("--tokens", o.tokens, "needs at least one token");
    const int steps = parse_token_count("--steps", o.paged.steps.empty() ? "3" : o.paged.steps, prompt.size(),
                                        static_cast<std::uint64_t>(d.seq_len));
    if (steps > 16) throw InputError("--steps", o.paged.steps, "at most 16 decode steps can be drawn");
    model::ContiguousCache cache(d);
    std::vector<model::StepTrace> traces(1);
    model::MatrixRM logits = m.forward(prompt, cache, {}, &traces[0]);
    for (int i = 0; i < steps; ++i) {
        Eigen::Index next = 0;
        logits.row(logits.rows() - 1).maxCoeff(&next);  // greedy: the argmax of the last position
        traces.emplace_back();
        logits = m.forward({static_cast<int>(next)}, cache, {}, &traces.back());
    }
    return figures::fig4_cache_append(traces);
}

std::string draw_doc2_fig1(const FigureOptions& o) {
    figures::ProjectionInputs in;
    if (!o.hidden.empty()) in.hidden = positive("--hidden-size", o.hidden, 1u << 20);
    if (!o.q_heads.empty()) in.q_heads = positive("--q-heads", o.q_heads, 1u << 16);
    if (!o.kv_heads.empty()) in.kv_heads = positive("--kv-heads", o.kv_heads, 1u << 16);
    if (!o.head_dim.empty()) in.head_dim = positive("--head-dim", o.head_dim, 1u << 16);
    if (in.q_heads % in.kv_heads != 0)
        throw InputError("--kv-heads", std::to_string(in.kv_heads), fmt::format("must divide H_q = {}", in.q_heads));
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
    static const PagedDefaults d{"1,2,3,4,5;1,2,3,4,9,9;7,8", 16, 2, 2, 64, "blocks to be drawn", "Figure 8: ",
                                 "greedy tokens generated: Figure 8 per sequence (default 2), Figure 4 (default 3)"};
    return d;
}

std::string draw_doc1_fig8(const FigureOptions& o) {
    auto w = load(o.src);
    model::Transformer m(*w);
    const model::PagedSimOptions so = paged_sim_options(o.paged, w->dims(), fig8_defaults());
    const model::PagedSimResult sim = model::simulate_paged(m, so);
    // The last step at which the most blocks are held: every table at its longest.
    std::size_t shown = 0;
    for (std::size_t i = 0; i < sim.steps.size(); ++i)
        if (sim.steps[i].used_blocks >= sim.steps[shown].used_blocks) shown = i;
    return figures::fig8_paged_blocks(sim, shown);
}

std::string draw_doc1_fig9(const FigureOptions& o) {
    figures::DecodeReadInputs in;
    in.shape = shape_of(o);
    if (!o.batch.empty()) in.batches = parse_int_list_or_range("--batch", o.batch, 12);
    for (auto b : in.batches)
        if (b > (1u << 20)) throw InputError("--batch", std::to_string(b), "must be at most 1,048,576 requests");
    if (!o.weights_bytes.empty()) {
        in.weight_bytes = parse_bytes("--weights-bytes", o.weights_bytes);
        if (in.weight_bytes == 0) throw InputError("--weights-bytes", o.weights_bytes, "must be positive");
    }
    if (!o.bandwidth.empty()) in.bandwidth = parse_rate("--bandwidth", o.bandwidth);
    if (!o.kv_bytes_per_request.empty()) {
        // M_KV given outright leaves nothing for the shape to decide.
        for (const auto& [flag, value] : {std::pair{"--layers", &o.layers}, {"--kv-heads", &o.kv_heads},
                                          {"--head-dim", &o.head_dim}, {"--kv-dtype", &o.kv_dtype}})
            if (!value->empty()) throw InputError(std::string(flag) + " does not apply with --kv-bytes-per-request (it gives M_KV)");
        in.kv_bytes_per_request = parse_bytes("--kv-bytes-per-request", o.kv_bytes_per_request);
    }
    return figures::fig9_decode_reads(in);
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
    if (in.p.size() != in.q.size())
        throw InputError(fmt::format("--p has {} tokens and --q {}: they share one vocabulary", in.p.size(), in.q.size()));
    return figures::fig13_acceptance(in);
}

std::string draw_doc1_fig14(const FigureOptions& o) {
    figures::CoverageInputs in;
    if (!o.p.empty()) in.p = parse_probability("--p", o.p);
    if (!o.n.empty()) {
        in.n = parse_int_list_or_range("--n", o.n, 256);
        in.marked_n = in.n.back();
    }
    if (!o.tpr.empty()) in.tpr = parse_probability("--tpr", o.tpr);
    if (!o.fpr.empty()) in.fpr = parse_probability("--fpr", o.fpr);
    return figures::fig14_coverage(in);
}

std::string draw_doc1_fig15(const FigureOptions& o) {
    figures::GridInputs in;
    if (!o.x.empty()) in.x = parse_real("--x", o.x);
    if (!o.step.empty()) in.step = parse_positive_real("--step", o.step);
    if (!o.bits.empty()) in.bits = parse_bits_in(o.bits, 2, 16);
    return figures::fig15_quant_grid(in);
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
    };
    return table;
}

std::string draw(const std::string& name, const FigureOptions& o) {
    const auto it = drawers().find(name);
    if (it == drawers().end()) throw InputError("NAME", name, "is not a figure (see 'inferlab figure --list')");
    return it->second(o);
}

// Each figure: its name and place, then its caption (and why it is not drawn) wrapped to the
// terminal's width like every human output.
std::string list_text() {
    std::string drawn = "Figures drawn from the computation (inferlab figure NAME):\n";
    std::string not_drawn = "\nNot drawn:\n";
    const std::string hang(14, ' ');
    for (const auto& f : figures::catalog()) {
        const std::string doc = f.name.rfind("doc1", 0) == 0 ? "first document" : "second document";
        std::string entry = fmt::format("  {:<11} {}, {}\n", f.name, doc, f.section) + wrap(f.caption, hang, hang);
        if (!entry.empty() && entry.back() != '\n') entry += '\n';
        if (f.drawn) {
            drawn += entry;
        } else {
            not_drawn += entry + wrap(f.reason, hang, hang);
            if (not_drawn.back() != '\n') not_drawn += '\n';
        }
    }
    return drawn + not_drawn;
}

std::string html_escape(const std::string& s) { return svg::escape(s); }

void write_all(const FigureOptions& o) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(o.out, ec);
    if (ec || !fs::is_directory(o.out)) throw FileError(o.out, "is not a directory that can be created");
    std::string html =
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>inferlab: the documents' figures</title>\n"
        "<style>body{font-family:sans-serif;max-width:980px;margin:2em auto;color:#222}figure{margin:2em 0}"
        "img{max-width:100%;border:1px solid #ddd}code{background:#f4f4f4;padding:2px 4px}</style></head><body>\n"
        "<h1>The documents' figures, redrawn from inferlab's computation</h1>\n";
    std::string not_drawn;
    int drawn = 0;
    for (const auto& f : figures::catalog()) {
        if (!f.drawn) {
            not_drawn += fmt::format("<li>{}, {}, {}: {} ({})</li>\n", f.name, html_escape(f.document), html_escape(f.section),
                                     html_escape(f.caption), html_escape(f.reason));
            continue;
        }
        const std::string file = f.name + ".svg";
        write_text_file((fs::path(o.out) / file).string(), draw(f.name, FigureOptions{}));
        ++drawn;
        html += fmt::format("<figure id=\"{0}\"><img src=\"{1}\" alt=\"{2}\"><figcaption><b>{0}</b>: {2} ({3}, {4})<br>"
                            "Made by <code>inferlab figure {0}</code></figcaption></figure>\n",
                            f.name, file, html_escape(f.caption), html_escape(f.document), html_escape(f.section));
    }
    html += "<h2>Not drawn</h2><ul>\n" + not_drawn + "</ul>\n</body></html>\n";
    write_text_file((fs::path(o.out) / "index.html").string(), html);
    std::cout << fmt::format("wrote {} figures and index.html to {}\n", drawn, o.out);
}

void run_figure(const FigureOptions& o, const CLI::App& sub) {
    if (o.list) {
        if (!o.name.empty() || o.all) throw InputError("--list takes no figure name and no --all");
        std::cout << list_text();
        return;
    }
    // Every figure flag the command line gave, by its long name.
    std::vector<std::string> given_flags;
    for (const CLI::Option* opt : sub.get_options())
        if (opt->count() > 0 && !opt->get_lnames().empty()) {
            const std::string f = "--" + opt->get_lnames().front();
            if (f != "--out" && f != "--list" && f != "--all") given_flags.push_back(f);
        }
    if (o.all) {
        if (!o.name.empty()) throw InputError("--all draws every figure: give no NAME with it");
        if (o.out.empty()) throw InputError("--all needs --out DIR (the folder for the SVG files and index.html)");
        if (!given_flags.empty()) throw InputError(given_flags.front() + " does not apply with --all (it draws the documents' inputs)");
        write_all(o);
        return;
    }
    if (o.name.empty()) throw InputError("give a figure NAME, --list or --all (see 'inferlab figure --list')");
    find_figure(o.name);
    const auto& allowed = figure_flags().at(o.name);
    for (const auto& f : given_flags)
        if (!allowed.count(f)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : " ") + a;
            throw InputError(fmt::format("{} does not apply to {} (it takes {})", f, o.name, list));
        }
    const std::string text = draw(o.name, o);
    if (o.out.empty() || o.out == "-")
        std::cout << text;
    else {
        write_text_file(o.out, text);
        // One line, so a script or a class sees what was written where.
        std::cout << fmt::format("wrote {} ({} bytes): {}\n", o.out, text.size(), find_figure(o.name).caption);
    }
}

}  // namespace

void setup_figure(CLI::App& app) {
    auto o = std::make_shared<FigureOptions>();
    CLI::App* s = app.add_subcommand("figure", "The documents' figures redrawn as SVG from inferlab's own computation");
    s->add_option("NAME", o->name, "the figure, as --list names it (doc1-fig9)");
    s->add_flag("--list", o->list, "list every figure with its document, section and caption");
    s->add_flag("--all", o->all, "draw every figure with the documents' inputs, and index.html, into --out DIR");
    s->add_option("--out", o->out, "the SVG file (default: standard output); with --all, the folder");
    s->add_option("--layers", o->layers, "L, layers (Figures 5, 7, 9; default 32)");
    s->add_option("--seq-len", o->seq_len, "S, cached tokens (Figures 5, 7, 9; default 8192); Figure 10: positions (default 12)");
    s->add_option("--q-heads", o->q_heads, "H_q, query heads (Figure 6 default 4; otherwise 32)");
    s->add_option("--kv-heads", o->kv_heads, "H_kv, K/V heads (default 8); Figure 6: a list (default 4,2,1)");
    s->add_option("--head-dim", o->head_dim, "d, width of one head (default 128)");
    s->add_option("--kv-dtype", o->kv_dtype, "K/V precision: bf16 (default), fp16, fp8, int8, int4, fp32");
    s->add_option("--batch", o->batch, "B: Figure 9 a list or range of batches (default 1,8); Figure 7 one batch (default 8)");
    s->add_option("--weights-bytes", o->weights_bytes, "W, weight bytes read per step (Figure 9; default 14GB)");
    s->add_option("--kv-bytes-per-request", o->kv_bytes_per_request, "M_KV, instead of the shape flags (Figure 9)");
    s->add_option("--bandwidth", o->bandwidth, "β, sustained bandwidth (Figure 9; default 1TB/s)");
    add_source(s, o->src);
    add_paged_flags(*s, o->paged, fig8_defaults());
    s->add_option("--tile", o->tile, "Figure 10: tile size (default 4)");
    s->add_option("--window", o->window, "Figure 10: sliding window W (default 4)");
    s->add_option("--gamma", o->gamma, "γ, drafts per round (Figures 11, 12; default 4)");
    s->add_option("--outcomes", o->outcomes, "Figure 11: the round, accept,accept,reject (default)");
    s->add_option("--alpha", o->alpha, "Figure 12: acceptance rate α (default 0.8)");
    s->add_option("--p", o->p, "Figure 13: target distribution (default 0.6,0.3,0.1); Figure 14: p per candidate (default 0.3)");
    s->add_option("--q", o->q, "Figure 13: draft distribution (default 0.4,0.4,0.2)");
    s->add_option("--n", o->n, "Figure 14: candidates, a list or range (default 1..8,10,12,16)");
    s->add_option("--tpr", o->tpr, "Figure 14: verifier P(accept | correct) (default 0.9)");
    s->add_option("--fpr", o->fpr, "Figure 14: verifier P(accept | wrong) (default 0.2)");
    s->add_option("--tokens", o->tokens, "Figure 4: the prompt's token ids (default 1,2,3,4)");
    s->add_option("--hidden-size", o->hidden, "second document's Figure 1: hidden width (default 4096)");
    s->add_option("--weight-dtype", o->weight_dtype, "second document's Figure 1: weight precision (default bf16)");
    s->add_option("--x", o->x, "Figure 15: the value quantized (default 0.37)");
    s->add_option("--step", o->step, "Figure 15: Δ, the grid step (default 0.1)");
    s->add_option("--bits", o->bits, "Figure 15: bits, Q = 2^(b−1) − 1 (default 4: Q = 7)");
    s->footer(examples_footer(
        {"inferlab figure --list", "inferlab figure doc1-fig9 --batch 1,2,4,8,16 --out fig9.svg", "inferlab figure --all --out figures", "inferlab figure doc1-fig6 --q-heads 8 --kv-heads 8,2,1",
         "inferlab figure doc1-fig13 --p 0.5,0.5 --q 0.9,0.1", "inferlab figure doc1-fig7 --kv-dtype fp8 --batch 4"},
        "Every figure prints its inputs and the document section it redraws. SVG is self-contained\n"
        "(text as text, no external font); 'inferlab figure --all --out DIR' writes every figure\n"
        "and DIR/index.html, a gallery with each figure's caption and the command that made it."));
    s->callback([o, s] { run_figure(*o, *s); });
}

}  // namespace inferlab::app
