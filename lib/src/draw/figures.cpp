#include "inferlab/draw/figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/answer/best_of_n.hpp"
#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/best_of_n.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/calc/quant.hpp"
#include "inferlab/calc/roofline.hpp"
#include "inferlab/calc/spec.hpp"
#include "inferlab/draw/plots.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::figures {
namespace {

constexpr const char* kDoc1 = N_("first document (000_5f2b20623495609b.txt)");
constexpr const char* kDoc2 = N_("second document (003_02a045288fb34aae.txt)");

// Names the library's results carry and the figures print through tr(), marked for the catalogue:
// a step's phase (StepTrace::phase) and a paged sequence's state (PagedSeq::state). (A round's
// fates and reasons are marked where spec.cpp writes them.)
[[maybe_unused]] constexpr const char* kLibraryNames[] = {N_("prefill"), N_("decode"), N_("waiting"), N_("running"),
                                                          N_("finished")};

std::string source_line(const std::string& name) {
    for (const auto& f : catalog())
        if (f.name == name)
            return trf("Source: {0}, {1}, Figure {2}", tr(f.document), tr(f.section), name.substr(name.find("fig") + 3));
    return "";
}

std::string gb3(std::uint64_t bytes) { return fmt::format("{:.3f} GB", bytes_in_gb(bytes)); }
double gib(std::uint64_t bytes) { return bytes_in_gib(bytes); }

std::string shape_line(const KvShape& s) {
    return trf("L = {0}, S = {1} tokens, H_q = {2}, H_kv = {3}, d = {4}, b = {5} B ({6})", s.layers, group_thousands(s.seq_len),
               s.q_heads, s.kv_heads, s.head_dim, exact_ratio(s.bits, 8, 3), s.dtype);
}

// One colour per sequence of the paged cache (cycled past eight).
const char* seq_color(int i) {
    static const char* c[] = {svg::kBlue, svg::kOrange, svg::kGreen, "#8e5cb5", svg::kTeal, svg::kRed, "#6b7b2a", "#b5518e"};
    return c[static_cast<std::size_t>(i) % 8];
}

// "1,2,3;4,5": prompts as model paged's --prompts writes them.
std::string prompts_text(const std::vector<std::vector<int>>& prompts) {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "" + string chains.
    std::string t;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        if (i) t += ';';
        for (std::size_t j = 0; j < prompts[i].size(); ++j) {
            if (j) t += ',';
            t += std::to_string(prompts[i][j]);
        }
    }
    return t;
}

}  // namespace

const std::vector<FigureInfo>& catalog() {
    static const std::vector<FigureInfo> figures = {
        {"doc1-fig1", kDoc1, N_("opening"), N_("The prompt processed as a whole, the output fed back step by step"), false,
         N_("conceptual: the reading route of the article, no number or state")},
        {"doc1-fig2", kDoc1, "§1.1", N_("Updating parameters against computing the current request"), false,
         N_("conceptual: training against inference, nothing inferlab computes")},
        {"doc1-fig3", kDoc1, "§1.2", N_("Prefix processed in parallel, tokens generated one by one (original figure)"), false,
         N_("conceptual: the shapes it shows are the table of §1.2 (model generate --trace prints them)")},
        {"doc1-fig4", kDoc1, "§1.3", N_("The current query reads the history K/V and appends its own"), true, ""},
        {"doc1-fig5", kDoc1, "§1.3", N_("Each layer's input, cache and output belong together"), true, ""},
        {"doc1-fig6", kDoc1, "§2.1", N_("The same four query heads against different numbers of K/V heads"), true, ""},
        {"doc1-fig7", kDoc1, "§2.1.1", N_("Cache memory substituted: 32 layers, 8192 tokens, BF16"), true, ""},
        {"doc1-fig8", kDoc1, "§2.1.2", N_("Logical block order separate from physical cache position"), true, ""},
        {"doc1-fig9", kDoc1, "§2.1.3", N_("Weights read once per step, KV read per request"), true, ""},
        {"doc1-fig10", kDoc1, "§2.2", N_("Tiling the same dense relations, against removing relations"), true, ""},
        {"doc1-fig11", kDoc1, "§3.1.1", N_("Candidate distributions computed at once, accepted along the prefix"), true, ""},
        {"doc1-fig12", kDoc1, "§3.1.1", N_("Drafts verified in parallel, acceptance advancing along the prefix (original figure)"),
         true, ""},
        {"doc1-fig13", kDoc1, "§3.1.2", N_("Acceptance mass and residual on a three-token vocabulary"), true, ""},
        {"doc1-fig14", kDoc1, "§3.2", N_("Generating candidates and selecting the correct one are two steps"), true, ""},
        {"doc1-fig15", kDoc1, "§4.1", N_("Uniform quantization grid and dequantization error"), true, ""},
        {"doc1-fig16", kDoc1, "§4.2", N_("The product task loop against the model's forward pass (original figure)"), false,
         N_("conceptual: the harness loop (tools, RAG, stop rules) has no number inferlab computes")},
        {"doc1-fig17", kDoc1, "§4.3", N_("Three cache paths compared on fixed inputs"), true, ""},
        {"doc2-fig1", kDoc2, N_("from tokens to hidden states"), N_("Q/K/V produced from the hidden state by learned projections"),
         true, ""},
    };
    return figures;
}

std::uint64_t gqa_kv_head(std::uint64_t h, std::uint64_t h_q, std::uint64_t h_kv) {
    if (h_kv == 0 || h_q % h_kv != 0)
        throw InputError("H_kv", std::to_string(h_kv), N_("must divide H_q = {0} (a whole group per K/V head)"),
                         {std::to_string(h_q)});
    if (h >= h_q) throw InputError(N_("query head {0} does not exist: H_q = {1}"), {std::to_string(h), std::to_string(h_q)});
    return h / (h_q / h_kv);
}

std::string fig4_cache_append(const std::vector<model::StepTrace>& steps) {
    if (steps.empty()) throw InputError(N_("the run recorded no step"));
    const int longest = steps.back().cache_len.empty() ? 0 : steps.back().cache_len[0];
    const double cell = std::min(28.0, 520.0 / std::max(1, longest)), left = 200, top = 70, row_h = 62;
    svg::Document doc(760, top + row_h * static_cast<double>(steps.size()) + 16 + 15.0 * 3,
                      tr("Figure 4: the query reads the cached K/V and appends its own"));
    doc.heading(tr("Layer 0's cache after each step of a real run: old entries stay as they are, new ones are appended"));
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const model::StepTrace& st = steps[i];
        const double y = top + row_h * static_cast<double>(i);
        const int after = st.cache_len.empty() ? 0 : st.cache_len[0];
        doc.text(16, y + 18, i == 0 ? tr(st.phase) : trf("{0} step {1}", tr(st.phase), i), {.size = 12, .bold = true});
        doc.text(16, y + 34, trf("Q {0} reads K/V {1}", st.q_shape, st.kv_cached_shape), {.size = 10, .fill = "#555555"});
        for (int p = 0; p < after; ++p) {
            const bool fresh = p >= st.start_pos;
            const double x = left + cell * p;
            // K above V; this step's entries in blue, the history in teal (K) and amber (V).
            doc.rect(x, y + 4, cell - 3, 16, fresh ? svg::kBlue : svg::kTeal);
            doc.rect(x, y + 22, cell - 3, 16, fresh ? svg::kBlue : svg::kAmber);
        }
        doc.text(left + cell * after + 6, y + 26, fmt::format("S = {}", after),
                 {.size = 12, .cls = "cache-length", .value = static_cast<double>(after)});
    }
    const model::StepTrace& first = steps.front();
    doc.inputs({trf("Prompt of {0} tokens, then {1} greedy decode steps; K/V [batch, H_kv, S, d] per layer, every layer alike",
                    first.tokens.size(), steps.size() - 1),
                tr("Lengths read from the cache after each step (Transformer::forward with a StepTrace, lib/model)"),
                source_line("doc1-fig4")});
    return doc.str();
}

std::string doc2_fig1_projections(const ProjectionInputs& in) {
    const std::vector<Requests> one{{1, 1}};
    // The K (and V) projection width H_kv·d, as kv-mem's head-sharing table computes it.
    std::uint64_t kv_width = 0;
    for (const HeadSharing& h : compare_head_sharing(1, in.q_heads, in.kv_heads, in.head_dim, in.bits, one))
        if (h.kv_heads == in.kv_heads) kv_width = h.kv_proj_width;
    const std::uint64_t q_width = checked_mul(in.q_heads, in.head_dim, N_("H_q·d"));
    const std::uint64_t widest = std::max({in.hidden, q_width, kv_width});
    const double scale = 240.0 / static_cast<double>(widest), top = 70;
    svg::Document doc(760, top + 250 + 16 + 15.0 * 3, tr("Second document, Figure 1: Q, K and V from the hidden state"));
    doc.heading(tr("Learned projections W_Q, W_K, W_V; Q serves the current step, K and V stay as history"));
    const double hx = 16, hw = static_cast<double>(in.hidden) * scale;
    doc.rect(hx, top + 100, std::max(hw, 40.0), 30, svg::ShapeStyle{.fill = "#e8eef8", .stroke = svg::kBlue});
    doc.text(hx, top + 92, trf("hidden state x: {0} wide", in.hidden), {.size = 12, .cls = "width", .value = static_cast<double>(in.hidden)});
    struct Out { const char* name; std::uint64_t width; const char* color; std::string role; };
    const Out outs[] = {{"Q", q_width, svg::kBlue, tr("not cached")},
                        {"K", kv_width, svg::kTeal, tr("cached")},
                        {"V", kv_width, svg::kAmber, tr("cached")}};
    for (int i = 0; i < 3; ++i) {
        const double y = top + 20 + 80.0 * i, x = 440;
        const std::uint64_t wbytes = checked_mul(checked_mul(in.hidden, outs[i].width, N_("weight elements")), in.bits, N_("weight bits")) / 8;
        doc.arrow(hx + std::max(hw, 40.0) + 4, top + 115, x - 160, y + 15, svg::kGrey);
        doc.text(x - 154, y + 20, fmt::format("W_{} [{} × {}]", outs[i].name, in.hidden, outs[i].width), {.size = 11});
        doc.text(x - 154, y + 36, trf("{0} per layer", binary_size(wbytes)), {.size = 10, .fill = "#555555"});
        doc.rect(x, y, std::max(static_cast<double>(outs[i].width) * scale, 6.0), 30, outs[i].color);
        doc.text(x, y + 48, trf("{0}: {1} wide = {2} heads × {3}, {4}", outs[i].name, outs[i].width,
                                i == 0 ? in.q_heads : in.kv_heads, in.head_dim, outs[i].role),
                 {.size = 11, .cls = "width", .value = static_cast<double>(outs[i].width)});
    }
    doc.inputs({trf("hidden {0}, H_q = {1}, H_kv = {2}, d = {3}, weights {4} ({5} B each); one row x per token", in.hidden,
                    in.q_heads, in.kv_heads, in.head_dim, in.dtype, exact_ratio(in.bits, 8, 3)),
                tr("Widths from compare_head_sharing (lib/kv.hpp): Q is H_q·d wide, K and V H_kv·d each"),
                source_line("doc2-fig1")});
    return doc.str();
}

std::string fig5_layer_caches(const KvShape& s, std::uint64_t shown_positions) {
    const KvBreakdown kv = kv_bytes(uniform_kv(s.layers, s.kv_heads, s.head_dim, s.bits), std::vector<std::uint64_t>{s.seq_len});
    // Rows: the first layers and the last; past four layers the middle ones stand behind "…".
    std::vector<std::uint64_t> rows;
    for (std::uint64_t l = 0; l < s.layers && rows.size() < 3; ++l) rows.push_back(l);
    if (s.layers > 3) rows.push_back(s.layers - 1);
    const double row_h = 70, top = 70;
    const std::vector<std::string> inputs = {
        shape_line(s),
        trf("Per layer 2·S·H_kv·d·b = {0}; all {1} layers {2} = {3} B (kv_bytes, lib/kv.hpp)", binary_size(kv.per_layer_bytes[0]),
            s.layers, binary_size(kv.total_bytes), group_thousands(kv.total_bytes)),
        source_line("doc1-fig5")};
    svg::Document doc(760, top + row_h * static_cast<double>(rows.size()) + 10 + 16 + 15.0 * 3,
                      tr("Figure 5: every layer keeps its own K/V cache"));
    doc.heading(tr("Layer l's K/V come from layer l's input; the next layer reads its own cache, never this one"));
    const std::uint64_t shown = std::min<std::uint64_t>(shown_positions, s.seq_len);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::uint64_t l = rows[r];
        const double y = top + row_h * static_cast<double>(r);
        if (r == 3 && l != 3) doc.text(30, y - 8, trf("… layers 3 to {0} alike …", l - 1), {.size = 11, .fill = "#555555"});
        doc.rect(16, y + 8, 110, 34, svg::ShapeStyle{.fill = "#e8eef8", .stroke = svg::kBlue});
        doc.text(71, y + 30, trf("layer {0} input", l), {.size = 12, .anchor = "middle"});
        doc.arrow(126, y + 25, 170, y + 25, svg::kInk);
        // K row (teal) above V row (amber): one cell per cached position.
        for (std::uint64_t p = 0; p < shown; ++p) {
            const double x = 176 + 24 * static_cast<double>(p);
            doc.rect(x, y + 6, 20, 16, svg::kTeal);
            doc.rect(x, y + 28, 20, 16, svg::kAmber);
        }
        const double end = 176 + 24 * static_cast<double>(shown);
        if (shown < s.seq_len) doc.text(end + 2, y + 30, "…", {.size = 14});
        doc.text(176, y + 58, trf("layer {0} cache: K and V of {1} positions", l, group_thousands(s.seq_len)),
                 {.size = 11, .fill = "#555555"});
        doc.text(end + 30, y + 30, binary_size(kv.per_layer_bytes[l]),
                 {.size = 13, .bold = true, .cls = "layer-bytes", .value = static_cast<double>(kv.per_layer_bytes[l])});
        doc.text(end + 30, y + 46, fmt::format("{} B", group_thousands(kv.per_layer_bytes[l])), {.size = 10, .fill = "#555555"});
    }
    doc.inputs(inputs);
    return doc.str();
}

std::string fig6_head_mapping(const HeadMapInputs& in) {
    if (in.q_heads == 0 || in.q_heads > 64)
        throw InputError("H_q", std::to_string(in.q_heads), N_("must be between 1 and 64 to be drawn"));
    if (in.kv_heads.empty() || in.kv_heads.size() > 4)
        throw InputError("H_kv", trf("{0} values", in.kv_heads.size()), N_("give 1 to 4 values to compare"));
    const double panel_h = 150, top = 64;
    svg::Document doc(760, top + panel_h * static_cast<double>(in.kv_heads.size()) + 16 + 15.0 * 2,
                      tr("Figure 6: which K/V head each query head reads"));
    doc.heading(trf("Query head h reads K/V head h / (H_q / H_kv); H_q = {0} throughout", in.q_heads));
    const double left = 150, right = 740;
    for (std::size_t p = 0; p < in.kv_heads.size(); ++p) {
        const std::uint64_t hkv = in.kv_heads[p];
        (void)gqa_kv_head(0, in.q_heads, hkv);  // refuses an H_kv that does not divide H_q
        const double y = top + panel_h * static_cast<double>(p);
        const char* kind = hkv == in.q_heads ? "MHA" : hkv == 1 ? "MQA" : "GQA";
        doc.text(16, y + 54, fmt::format("{}: H_kv = {}", kind, hkv), {.size = 13, .bold = true, .cls = "panel"});
        doc.text(16, y + 72, in.q_heads / hkv == 1 ? tr("1 query head per K/V head") : trf("{0} query heads per K/V head", in.q_heads / hkv),
                 {.size = 11, .fill = "#555555"});
        const double qw = (right - left) / static_cast<double>(in.q_heads);
        const double kw = (right - left) / static_cast<double>(hkv);
        for (std::uint64_t k = 0; k < hkv; ++k) {
            const double x = left + kw * static_cast<double>(k);
            doc.rect(x + 3, y + 92, kw - 6, 28, svg::ShapeStyle{.fill = svg::kTeal, .cls = "kv-head", .value = static_cast<double>(k)});
            doc.text(x + kw / 2, y + 110, fmt::format("KV {}", k), {.size = 11, .anchor = "middle", .fill = "#ffffff"});
        }
        for (std::uint64_t h = 0; h < in.q_heads; ++h) {
            const std::uint64_t k = gqa_kv_head(h, in.q_heads, hkv);
            const double x = left + qw * static_cast<double>(h);
            // data-value: the K/V head this query head reads.
            doc.rect(x + 2, y + 8, qw - 4, 26, svg::ShapeStyle{.fill = svg::kBlue, .cls = "q-head", .value = static_cast<double>(k),
                                                             .tooltip = trf("Q{0} reads KV {1}", h, k)});
            if (qw >= 22) doc.text(x + qw / 2, y + 25, fmt::format("Q{}", h), {.size = 10, .anchor = "middle", .fill = "#ffffff"});
            const double kx = left + kw * (static_cast<double>(k) + 0.5);
            doc.arrow(x + qw / 2, y + 34, kx, y + 90, svg::kGrey, 1.2);
        }
    }
    doc.inputs({trf("H_q = {0}, H_kv = {1}; the K/V heads are the cache's head axis: fewer heads, fewer bytes", in.q_heads,
                            [&] {
                                std::string t;
                                for (auto k : in.kv_heads) t += (t.empty() ? "" : ", ") + std::to_string(k);
                                return t;
                            }()),
                source_line("doc1-fig6")});
    return doc.str();
}

std::string fig7_kv_substitution(const KvSubstitutionInputs& in) {
    const KvShape& s = in.shape;
    svg::BarChart ch;
    ch.title = tr("Figure 7: M_KV = 2·L·B·S·H_kv·d·b, substituted");
    ch.subtitle = trf("H_kv from {0} (MHA) to {1}, then B from 1 to {2}", s.q_heads, s.kv_heads, in.batch);
    ch.y_label = tr("M_KV (GiB, 2^30 bytes)");
    for (std::uint64_t b : {std::uint64_t{1}, in.batch}) {
        for (std::uint64_t hkv : {s.q_heads, s.kv_heads}) {
            const std::uint64_t bytes = kv_bytes_uniform(s.layers, b, s.seq_len, hkv, s.head_dim, s.bits);
            svg::Bar bar;
            bar.label = fmt::format("H_kv = {}", hkv);
            bar.sublabel = fmt::format("{} B", group_thousands(bytes));
            bar.value = gib(bytes);
            bar.value_label = binary_size(bytes);
            bar.color = hkv == s.q_heads ? svg::kGrey : svg::kTeal;
            bar.group = fmt::format("B = {}", b);
            ch.bars.push_back(bar);
        }
        if (in.batch == 1) break;
    }
    ch.legend = {{fmt::format("MHA (H_kv = H_q = {})", s.q_heads), svg::kGrey}, {fmt::format("GQA (H_kv = {})", s.kv_heads), svg::kTeal}};
    ch.inputs = {shape_line(s), tr("Bytes from kv_bytes_uniform (lib/kv.hpp); 1 GiB = 2^30 bytes"), source_line("doc1-fig7")};
    return svg::bar_chart(ch);
}

std::string fig8_paged_blocks(const model::PagedSimResult& sim, std::size_t step) {
    if (sim.steps.empty()) throw InputError(N_("the paged simulation recorded no step"));
    const model::PagedStep& st = sim.steps[std::min(step, sim.steps.size() - 1)];
    const int pool = sim.options.blocks;
    const int per_row = std::min(pool, 12);
    const int pool_rows = (pool + per_row - 1) / per_row;
    const double top = 70, seq_h = 40, bw = 40;
    const double pool_y = top + seq_h * static_cast<double>(st.seqs.size()) + 60;
    svg::Document doc(760, pool_y + 50 * pool_rows + 30 + 16 + 15.0 * 3,
                      tr("Figure 8: logical block order, physical block position"));
    doc.heading(trf("Block tables of a real paged cache after step {0}: logical blocks in order, physical blocks anywhere", st.step));
    // Owner of each physical block (the first sequence whose table holds it) and its reference count.
    std::vector<int> owner(static_cast<std::size_t>(pool), -1), refs(static_cast<std::size_t>(pool), 0);
    for (const auto& s : st.seqs)
        for (std::size_t i = 0; i < s.table.size(); ++i) {
            const auto b = static_cast<std::size_t>(s.table[i]);
            if (owner[b] < 0) owner[b] = s.seq;
            refs[b] = s.refs[i];
        }
    auto pool_xy = [&](int b) {
        return std::pair{150 + (bw + 8) * (b % per_row), pool_y + 50.0 * (b / per_row)};
    };
    for (int b = 0; b < pool; ++b) {
        const auto [x, y] = pool_xy(b);
        const int o = owner[static_cast<std::size_t>(b)];
        doc.rect(x, y, bw, 30, svg::ShapeStyle{.fill = o < 0 ? "#f0f0f0" : seq_color(o), .stroke = refs[static_cast<std::size_t>(b)] > 1 ? svg::kInk : "#bbbbbb",
                                               .stroke_width = refs[static_cast<std::size_t>(b)] > 1 ? 2.5 : 1, .cls = "physical",
                                               .value = static_cast<double>(b)});
        doc.text(x + bw / 2, y + 19, fmt::format("#{}", b), {.size = 11, .anchor = "middle", .fill = o < 0 ? "#888888" : "#ffffff"});
        if (refs[static_cast<std::size_t>(b)] > 1)
            doc.text(x + bw / 2, y + 44, trf("refs {0}", refs[static_cast<std::size_t>(b)]), {.size = 9, .anchor = "middle"});
    }
    doc.text(16, pool_y + 20, tr("physical pool"), {.size = 12, .bold = true});
    for (std::size_t r = 0; r < st.seqs.size(); ++r) {
        const auto& s = st.seqs[r];
        const double y = top + seq_h * static_cast<double>(r);
        const char letter = static_cast<char>('A' + s.seq % 26);
        doc.text(16, y + 20, trf("seq {0} ({1}, {2} tokens)", letter, tr(s.state), s.length), {.size = 11});
        for (std::size_t i = 0; i < s.table.size(); ++i) {
            const double x = 230 + (bw + 8) * static_cast<double>(i);
            doc.rect(x, y + 4, bw, 26, svg::ShapeStyle{.fill = "#ffffff", .stroke = seq_color(s.seq), .stroke_width = 2,
                                                       .cls = "logical", .value = static_cast<double>(s.table[i])});
            doc.text(x + bw / 2, y + 22, fmt::format("{}{}", letter, i), {.size = 11, .anchor = "middle"});
            const auto [px, py] = pool_xy(s.table[i]);
            doc.line(x + bw / 2, y + 30, px + bw / 2, py, svg::ShapeStyle{.stroke = seq_color(s.seq), .stroke_width = 1.2});
        }
    }
    doc.inputs({trf("{0} blocks of {1} tokens ({2} each), prompts {3}, prefix sharing {4}", pool, sim.options.block_size,
                    bytes_all_units(sim.block_bytes), prompts_text(sim.options.prompts),
                    sim.options.share_prefix ? tr("on") : tr("off")),
                trf("Step {0}: {1} blocks used, {2} free; a thick border is a block shared (reference count above 1)", st.step,
                    st.used_blocks, st.free_blocks),
                source_line("doc1-fig8")});
    return doc.str();
}

std::string fig9_decode_reads(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources) {
    const DecodeModel& m = req.model;
    svg::BarChart ch;
    ch.title = tr("Figure 9: bytes one decode step reads, D_B = W + B·M_KV");
    ch.subtitle = tr("The weights are read once per step; every request's K/V is read for that request");
    ch.y_label = tr("D_B (GB, 10^9 bytes)");
    for (const DecodeStep& step : res.rows) {
        const std::uint64_t b = step.batch;
        svg::Bar bar;
        bar.label = fmt::format("B = {}", b);
        bar.sublabel = trf("≤ {0} tok/s all, {1} each", fmt::format("{:.2f}", step.aggregate_tokens_per_s),
                           fmt::format("{:.2f}", step.per_request_tokens_per_s));
        bar.value = bytes_in_gb(step.bytes);
        bar.value_label = gb3(step.bytes);
        bar.segments.push_back({bytes_in_gb(step.weight_bytes), svg::kBlue, tr("weights W")});
        // K and V of each request as a teal and an amber band, while they stay wide enough to see;
        // requests of their own lengths (a list of --seq-len) each get their own M_KV.
        if (b <= 16) {
            for (std::uint64_t i = 0; i < b; ++i) {
                const double per = req.lens_are_batch ? bytes_in_gb(request_kv_bytes(m, req.seq_lens[i]))
                                                      : bytes_in_gb(step.kv_bytes) / static_cast<double>(b);
                bar.segments.push_back({per / 2, svg::kTeal, trf("request {0} K", i + 1)});
                bar.segments.push_back({per / 2, svg::kAmber, trf("request {0} V", i + 1)});
            }
        } else {
            bar.segments.push_back({bytes_in_gb(step.kv_bytes), svg::kTeal, tr("K/V of every request")});
        }
        ch.bars.push_back(bar);
    }
    ch.legend = {{tr("weights W (once)"), svg::kBlue}, {tr("K of each request"), svg::kTeal}, {tr("V of each request"), svg::kAmber}};
    std::string kv;
    if (req.lens_are_batch) {
        kv = tr("M_KV per request from its own length");
    } else {
        const std::uint64_t m_kv = request_kv_bytes(m, req.seq_lens.empty() ? 0 : req.seq_lens.front());
        kv = trf("M_KV = {0} B ({1}) per request", group_thousands(m_kv), binary_size(m_kv));
    }
    ch.inputs = {fmt::format("W = {} B ({}), {}", group_thousands(m.weight_bytes), decimal_size(m.weight_bytes), kv),
                 "β = " + format_bandwidth(req.machine.bandwidth) +
                     (req.machine.peak_flops ? ", π = " + format_flops(*req.machine.peak_flops) : tr(", no π: memory bound only"))};
    ch.inputs.insert(ch.inputs.end(), sources.begin(), sources.end());
    ch.inputs.push_back(tr("t_B ≥ D_B / β; aggregate ≤ B / t_B, each request ≤ 1 / t_B (decode_roofline, lib/roofline_result.hpp)"));
    ch.inputs.push_back(source_line("doc1-fig9"));
    ch.height = 425 + 15.0 * static_cast<double>(sources.size());
    return svg::bar_chart(ch);
}

std::string fig9_decode_reads(const DecodeReadInputs& in) {
    const KvShape& s = in.shape;
    RooflineRequest req;
    req.model.weight_bytes = in.weight_bytes;
    if (in.kv_bytes_per_request)
        req.model.kv_bytes_per_request = in.kv_bytes_per_request;
    else
        req.model.kv_spec = uniform_kv(s.layers, s.kv_heads, s.head_dim, s.bits);
    req.machine.bandwidth = in.bandwidth;
    req.batches = in.batches;
    req.seq_lens = {s.seq_len};
    return fig9_decode_reads(req, decode_roofline(req),
                             {in.kv_bytes_per_request ? tr("M_KV as given") : trf("M_KV from {0}", shape_line(s))});
}

std::string fig10_attention_masks(const AttentionMaskInputs& in) {
    const std::uint64_t S = in.seq_len;
    if (S < 2 || S > 64) throw InputError("S", std::to_string(S), N_("must be between 2 and 64 positions to be drawn"));
    if (in.tile == 0 || in.tile > S)
        throw InputError("tile", std::to_string(in.tile), N_("must be between 1 and S = {0}"), {std::to_string(S)});
    if (in.window == 0 || in.window > S)
        throw InputError("W", std::to_string(in.window), N_("must be between 1 and S = {0}"), {std::to_string(S)});
    const double cell = std::min(16.0, 220.0 / static_cast<double>(S)), top = 90;
    svg::Document doc(760, top + cell * static_cast<double>(S) + 50 + 16 + 15.0 * 2,
                      tr("Figure 10: tiles keep the relations; a window removes some"));
    doc.heading(tr("Rows are queries, columns keys; a filled cell is a relation the attention computes"));
    struct Panel { std::string name; bool tiled; bool windowed; };
    const Panel panels[] = {{tr("dense causal"), false, false}, {tr("FlashAttention tiles"), true, false}, {tr("sliding window"), false, true}};
    for (int p = 0; p < 3; ++p) {
        const double x0 = 16 + 248.0 * p;
        std::uint64_t relations = 0;
        for (std::uint64_t i = 0; i < S; ++i)
            for (std::uint64_t j = 0; j < S; ++j) {
                const bool causal = j <= i;
                const bool kept = causal && (!panels[p].windowed || i - j < in.window);
                if (kept) ++relations;
                doc.rect(x0 + cell * static_cast<double>(j), top + cell * static_cast<double>(i), cell - 1, cell - 1,
                         kept ? svg::kBlue : (causal ? "#f3c6b4" : "#eeeeee"));
            }
        if (panels[p].tiled)
            for (std::uint64_t t = 0; t <= S; t += in.tile) {
                const double o = cell * static_cast<double>(t);
                doc.line(x0 + o, top, x0 + o, top + cell * static_cast<double>(S), svg::ShapeStyle{.stroke = svg::kOrange, .stroke_width = 2});
                doc.line(x0, top + o, x0 + cell * static_cast<double>(S), top + o, svg::ShapeStyle{.stroke = svg::kOrange, .stroke_width = 2});
            }
        doc.text(x0, top - 10, panels[p].name, {.size = 13, .bold = true});
        doc.text(x0, top + cell * static_cast<double>(S) + 20, trf("{0} relations", relations),
                 {.size = 12, .cls = "relations", .value = static_cast<double>(relations)});
    }
    doc.inputs({trf("S = {0} positions, tile = {1}, window W = {2} (a query keeps keys i − W < j ≤ i); pale red: causal relations the window drops",
                    S, in.tile, in.window),
                source_line("doc1-fig10")});
    return doc.str();
}

std::string fig11_round(const RoundInputs& in) {
    const RoundWalkthrough w = walk_round(in.gamma, in.outcomes);
    const double col = std::min(120.0, 560.0 / static_cast<double>(w.steps.size())), left = 170, top = 70;
    svg::Document doc(760, top + 250 + 16 + 15.0 * 3, tr("Figure 11: verified at once, accepted along the prefix"));
    doc.heading(tr("The target computes every draft position in one pass; acceptance still moves left to right"));
    const std::string rows[] = {tr("draft proposes"), tr("target, one pass"), tr("judged in order")};
    for (int r = 0; r < 3; ++r) doc.text(16, top + 30 + 64.0 * r, rows[r], {.size = 12, .bold = true});
    doc.rect(left - 6, top + 66, col * static_cast<double>(std::count_if(w.steps.begin(), w.steps.end(),
                                                                          [](const RoundStep& s) { return s.target_verified; })) + 12,
             48, svg::ShapeStyle{.stroke = svg::kBlue, .dashed = true});
    for (std::size_t i = 0; i < w.steps.size(); ++i) {
        const RoundStep& s = w.steps[i];
        const double x = left + col * static_cast<double>(i);
        if (s.drafted) {
            doc.rect(x, top + 10, col - 12, 30, svg::ShapeStyle{.fill = "#dde6f3", .stroke = svg::kBlue});
            doc.text(x + (col - 12) / 2, top + 30, trf("draft {0}", s.position), {.size = 11, .anchor = "middle"});
        }
        if (s.target_verified) {
            doc.rect(x, top + 74, col - 12, 30, svg::ShapeStyle{.fill = svg::kBlue});
            doc.text(x + (col - 12) / 2, top + 94, trf("p at {0}", s.position), {.size = 11, .anchor = "middle", .fill = "#ffffff"});
        }
        const bool accepted = s.fate == "accepted", bonus = s.fate == "bonus", discarded = s.fate == "discarded";
        const char* color = accepted || bonus ? svg::kGreen : discarded ? svg::kGrey : svg::kRed;
        const std::string word = accepted ? tr("accepted") : bonus ? tr("bonus token") : discarded ? tr("discarded") : tr("rejected");
        doc.rect(x, top + 138, col - 12, 30, svg::ShapeStyle{.fill = color, .cls = "fate", .tooltip = tr(s.why)});
        doc.text(x + (col - 12) / 2, top + 158, word, {.size = 11, .anchor = "middle", .fill = "#ffffff", .cls = "fate-label"});
        if (s.fate.rfind("rejected", 0) == 0)
            doc.text(x + (col - 12) / 2, top + 184, tr("resampled from r"), {.size = 10, .anchor = "middle", .fill = svg::kRed});
        if (i > 0 && !discarded) doc.arrow(x - 12, top + 153, x, top + 153, svg::kInk, 1.2);
    }
    doc.text(16, top + 220,
             trf("{0} drafts proposed, {1} positions verified, {2} accepted, {3} discarded: the round advances {4} tokens",
                 w.draft_proposals, w.target_positions, w.accepted, w.discarded, w.tokens_advanced),
             {.size = 13, .bold = true, .cls = "advanced", .value = static_cast<double>(w.tokens_advanced)});
    std::string outcomes;
    for (const auto& o : in.outcomes) outcomes += (outcomes.empty() ? "" : ",") + o;
    doc.inputs({trf("γ = {0}, outcomes {1} (walk_round, lib/spec.hpp)", in.gamma, outcomes),
                tr("A draft after a rejection was computed on a prefix that no longer exists, so it is discarded"),
                source_line("doc1-fig11")});
    return doc.str();
}

std::string fig12_accepted_counts(const AcceptedCountInputs& in) {
    const std::vector<double> dist = accepted_count_distribution(in.alpha, in.gamma);
    svg::BarChart ch;
    ch.title = tr("Figure 12: where a round stops");
    ch.subtitle = trf("P(k drafts accepted) at α = {0}, γ = {1}: expected tokens per round {2}", svg::number(in.alpha), in.gamma,
                      svg::number(expected_tokens_per_round(in.alpha, in.gamma), 4));
    ch.y_label = tr("probability");
    for (std::size_t k = 0; k < dist.size(); ++k) {
        svg::Bar b;
        b.label = fmt::format("k = {}", k);
        b.sublabel = k == in.gamma ? tr("all accepted, + bonus") : k == 0 ? tr("1 token out") : trf("{0} tokens out", k + 1);
        b.value = dist[k];
        b.value_label = svg::number(dist[k], 4);
        b.color = k == in.gamma ? svg::kGreen : svg::kBlue;
        ch.bars.push_back(b);
    }
    ch.inputs = {trf("α = {0} per position, independent; γ = {1} (accepted_count_distribution, lib/spec.hpp)", svg::number(in.alpha),
                     in.gamma),
                 source_line("doc1-fig12")};
    return svg::bar_chart(ch);
}

std::string fig13_acceptance(const AcceptanceInputs& in) {
    const Acceptance<double> a = acceptance(in.p, in.q);
    svg::BarChart ch;
    ch.title = tr("Figure 13: acceptance mass and residual");
    ch.subtitle = trf("Accepted mass Σ min(p, q) = {0}, rejected {1}; the residual r puts the rejected mass back where p > q",
                      svg::number(a.accept_prob, 4), svg::number(a.reject_prob, 4));
    ch.y_label = tr("probability");
    for (std::size_t v = 0; v < in.p.size(); ++v) {
        const std::string g = trf("token {0}", v + 1);
        ch.bars.push_back({.label = tr("q (draft)"), .value = in.q[v], .color = svg::kGrey, .group = g});
        ch.bars.push_back({.label = tr("p (target)"), .value = in.p[v], .color = svg::kBlue, .group = g});
        svg::Bar out{.label = tr("output"), .sublabel = "α = " + svg::number(a.alpha[v], 4), .value = a.output[v], .group = g};
        out.segments = {{a.accepted[v], svg::kGreen, tr("accepted q·α")}, {a.reject_prob * a.residual[v], svg::kRed, tr("rejected mass × r")}};
        ch.bars.push_back(out);
    }
    ch.legend = {{"q", svg::kGrey}, {"p", svg::kBlue}, {tr("accepted min(p, q)"), svg::kGreen}, {tr("rejection × residual r"), svg::kRed}};
    auto list = [](const std::vector<double>& v) {
        std::string t;
        for (double x : v) t += (t.empty() ? "" : ", ") + svg::number(x, 6);
        return t;
    };
    ch.inputs = {trf("p = [{0}], q = [{1}]; output = q·α + (1 − Σ q·α)·r = [{2}] (acceptance, lib/spec.hpp)", list(in.p), list(in.q),
                     list(a.output)),
                 source_line("doc1-fig13")};
    return svg::bar_chart(ch);
}

std::string fig14_coverage(const BestOfNRequest& req, const BestOfNResult& res, std::uint64_t marked_n) {
    std::vector<BestOfNRow> rows = res.rows;
    std::stable_sort(rows.begin(), rows.end(), [](const BestOfNRow& a, const BestOfNRow& b) { return a.n < b.n; });
    svg::LinePlot pl;
    pl.title = tr("Figure 14: a correct candidate appears; is it chosen?");
    pl.subtitle = req.verifier ? trf("Coverage 1 − (1 − p)^N counts presence; a verifier (TPR {0}, FPR {1}) decides what is chosen",
                                     svg::number(req.verifier->tpr), svg::number(req.verifier->fpr))
                               : tr("Coverage 1 − (1 − p)^N counts presence; a selection step decides what is chosen");
    pl.x = {tr("N, candidates"), false, 0.0, std::nullopt};
    pl.y = {tr("probability"), false, 0.0, 1.0};
    svg::Series cov{tr("coverage (present)"), {}, {}, svg::kGreen}, sel{tr("selected (verifier)"), {}, {}, svg::kBlue},
        maj{tr("selected (majority vote)"), {}, {}, svg::kAmber}, judge{tr("selected (biased judge)"), {}, {}, svg::kRed},
        hard{tr("coverage, hard fraction"), {}, {}, svg::kTeal, true}, beta{tr("coverage, correlated (ρ)"), {}, {}, svg::kOrange, true},
        one{tr("one sample (p)"), {}, {}, svg::kGrey, true, false};
    const auto add = [](svg::Series& s, double x, const std::optional<double>& y) {
        if (y) s.x.push_back(x), s.y.push_back(*y);
    };
    const BestOfNRow* marked = nullptr;
    for (const auto& r : rows) {
        const double x = static_cast<double>(r.n);
        add(cov, x, r.coverage), add(one, x, res.p), add(sel, x, r.verifier_selection), add(maj, x, r.majority_vote);
        add(judge, x, r.biased_judge), add(hard, x, r.coverage_hard_fraction), add(beta, x, r.coverage_beta);
        if (r.n == marked_n) marked = &r;
    }
    pl.series = {cov};
    for (svg::Series* s : {&sel, &maj, &judge, &hard, &beta})
        if (!s->x.empty()) pl.series.push_back(*s);
    pl.series.push_back(one);
    if (marked)
        pl.markers.push_back({static_cast<double>(marked_n),
                              trf("N = {0}: coverage {1}{2}", marked_n, svg::number(marked->coverage, 4),
                                  marked->verifier_selection ? trf(", selected {0}", svg::number(*marked->verifier_selection, 4)) : ""),
                              svg::kInk});
    if (const auto& t = res.target) {
        pl.series.push_back({trf("target {0}", svg::number(t->target, 6)), {cov.x.front(), cov.x.back()}, {t->target, t->target},
                             svg::kInk, true, false});
        if (t->min_n)
            pl.markers.push_back({static_cast<double>(*t->min_n), trf("N = {0} reaches the target", *t->min_n), svg::kRed});
    }
    pl.inputs = {trf("p = {0} per independent candidate", svg::number(res.p))};
    if (req.verifier)
        pl.inputs.push_back(trf("verifier TPR = {0}, FPR = {1}, {2} when it accepts none (not the document's: chosen to show the gap)",
                                svg::number(req.verifier->tpr), svg::number(req.verifier->fpr),
                                req.verifier->fallback_random ? tr("a random pick") : tr("abstains")));
    if (req.answer_dist)
        pl.inputs.push_back(trf("answers (correct first): {0} and {1} wrong", svg::number(req.answer_dist->front()),
                                req.answer_dist->size() - 1));
    if (req.judge_bias) pl.inputs.push_back(trf("judge bias = {0}", svg::number(*req.judge_bias)));
    if (req.hard_fraction) pl.inputs.push_back(trf("hard fraction h = {0}", svg::number(*req.hard_fraction)));
    if (req.rho) pl.inputs.push_back("ρ = " + svg::number(*req.rho));
    pl.inputs.push_back(tr("best_of_n (lib/bestofn_result.hpp): coverage and each selection strategy asked for"));
    pl.inputs.push_back(source_line("doc1-fig14"));
    pl.height = 425 + 15.0 * static_cast<double>(pl.inputs.size());
    return svg::line_plot(pl);
}

std::string fig14_coverage(const CoverageInputs& in) {
    BestOfNRequest req;
    req.p = in.p;
    req.ns = in.n;
    req.verifier = Verifier{in.tpr, in.fpr, true};
    return fig14_coverage(req, best_of_n(req), in.marked_n);
}

std::string fig15_quant_grid(const GridInputs& in) {
    const std::int64_t Q = symmetric_qmax(in.bits);
    const ScalarQuant q = quantize_scalar(in.x, in.step, Q, Rounding::HalfAwayFromZero, nullptr);
    return plots::quant_grid_figure(
        q, {tr("Figure 15: the uniform grid and the dequantization error"), to_string(Rounding::HalfAwayFromZero), within_half_step(q),
            {trf("x = {0}, Δ = {1}, {2} bits: Q = 2^(b−1) − 1 = {3} (quantize_scalar, lib/quant.hpp)", svg::number(in.x, 6),
                 svg::number(in.step, 6), in.bits, Q),
             source_line("doc1-fig15")}});
}

std::string fig17_cache_paths(const model::CheckCacheResult& r) {
    std::string tokens;
    for (std::size_t i = 0; i < r.tokens.size() && i < 12; ++i) {
        if (i > 0) tokens += ',';  // appended apart: GCC 12 warns (-Wrestrict, a false positive) on "" + string
        tokens += std::to_string(r.tokens[i]);
    }
    if (r.tokens.size() > 12) tokens += "," + trf("… ({0} tokens)", r.tokens.size());
    return plots::model_check_cache(
        r,
        {trf("tokens {0}", tokens),
         trf("tolerance: {0} × max(1, max |logit|) at each position (float32 sums in a different order per path)",
             svg::number(r.rel_tolerance, 3))},
        tr("Figure 17: the cache paths compared on fixed inputs"));
}

}  // namespace inferlab::figures
