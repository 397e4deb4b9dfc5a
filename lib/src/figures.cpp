#include "inferlab/figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inferlab/bestofn.hpp"
#include "inferlab/bestofn_result.hpp"
#include "inferlab/checked.hpp"
#include "inferlab/error.hpp"
#include "inferlab/kv.hpp"
#include "inferlab/quant.hpp"
#include "inferlab/report.hpp"
#include "inferlab/roofline.hpp"
#include "inferlab/roofline_result.hpp"
#include "inferlab/spec.hpp"
#include "inferlab/svg.hpp"
#include "inferlab/units.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::figures {
namespace {

constexpr const char* kDoc1 = "first document (000_5f2b20623495609b.txt)";
constexpr const char* kDoc2 = "second document (003_02a045288fb34aae.txt)";

std::string source_line(const std::string& name) {
    for (const auto& f : catalog())
        if (f.name == name) return fmt::format("Source: {}, {}, Figure {}", f.document, f.section, name.substr(name.find("fig") + 3));
    return "";
}

std::string gb3(std::uint64_t bytes) { return fmt::format("{:.3f} GB", bytes_in_gb(bytes)); }
double gib(std::uint64_t bytes) { return bytes_in_gib(bytes); }

std::string shape_line(const KvShape& s) {
    return fmt::format("L = {}, S = {} tokens, H_q = {}, H_kv = {}, d = {}, b = {} B ({})", s.layers,
                       group_thousands(s.seq_len), s.q_heads, s.kv_heads, s.head_dim, exact_ratio(s.bits, 8, 3), s.dtype);
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
        {"doc1-fig1", kDoc1, "opening", "The prompt processed as a whole, the output fed back step by step", false,
         "conceptual: the reading route of the article, no number or state"},
        {"doc1-fig2", kDoc1, "§1.1", "Updating parameters against computing the current request", false,
         "conceptual: training against inference, nothing inferlab computes"},
        {"doc1-fig3", kDoc1, "§1.2", "Prefix processed in parallel, tokens generated one by one (original figure)", false,
         "conceptual: the shapes it shows are the table of §1.2 (model generate --trace prints them)"},
        {"doc1-fig4", kDoc1, "§1.3", "The current query reads the history K/V and appends its own", true, ""},
        {"doc1-fig5", kDoc1, "§1.3", "Each layer's input, cache and output belong together", true, ""},
        {"doc1-fig6", kDoc1, "§2.1", "The same four query heads against different numbers of K/V heads", true, ""},
        {"doc1-fig7", kDoc1, "§2.1.1", "Cache memory substituted: 32 layers, 8192 tokens, BF16", true, ""},
        {"doc1-fig8", kDoc1, "§2.1.2", "Logical block order separate from physical cache position", true, ""},
        {"doc1-fig9", kDoc1, "§2.1.3", "Weights read once per step, KV read per request", true, ""},
        {"doc1-fig10", kDoc1, "§2.2", "Tiling the same dense relations, against removing relations", true, ""},
        {"doc1-fig11", kDoc1, "§3.1.1", "Candidate distributions computed at once, accepted along the prefix", true, ""},
        {"doc1-fig12", kDoc1, "§3.1.1", "Drafts verified in parallel, acceptance advancing along the prefix (original figure)",
         true, ""},
        {"doc1-fig13", kDoc1, "§3.1.2", "Acceptance mass and residual on a three-token vocabulary", true, ""},
        {"doc1-fig14", kDoc1, "§3.2", "Generating candidates and selecting the correct one are two steps", true, ""},
        {"doc1-fig15", kDoc1, "§4.1", "Uniform quantization grid and dequantization error", true, ""},
        {"doc1-fig16", kDoc1, "§4.2", "The product task loop against the model's forward pass (original figure)", false,
         "conceptual: the harness loop (tools, RAG, stop rules) has no number inferlab computes"},
        {"doc1-fig17", kDoc1, "§4.3", "Three cache paths compared on fixed inputs", true, ""},
        {"doc2-fig1", kDoc2, "from tokens to hidden states", "Q/K/V produced from the hidden state by learned projections",
         true, ""},
    };
    return figures;
}

std::uint64_t gqa_kv_head(std::uint64_t h, std::uint64_t h_q, std::uint64_t h_kv) {
    if (h_kv == 0 || h_q % h_kv != 0)
        throw InputError("H_kv", std::to_string(h_kv), fmt::format("must divide H_q = {} (a whole group per K/V head)", h_q));
    if (h >= h_q) throw InputError(fmt::format("query head {} does not exist: H_q = {}", h, h_q));
    return h / (h_q / h_kv);
}

std::string fig4_cache_append(const std::vector<model::StepTrace>& steps) {
    if (steps.empty()) throw InputError("the run recorded no step");
    const int longest = steps.back().cache_len.empty() ? 0 : steps.back().cache_len[0];
    const double cell = std::min(28.0, 520.0 / std::max(1, longest)), left = 200, top = 70, row_h = 62;
    svg::Document doc(760, top + row_h * static_cast<double>(steps.size()) + 16 + 15.0 * 3,
                      "Figure 4: the query reads the cached K/V and appends its own");
    doc.heading("Layer 0's cache after each step of a real run: old entries stay as they are, new ones are appended");
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const model::StepTrace& st = steps[i];
        const double y = top + row_h * static_cast<double>(i);
        const int after = st.cache_len.empty() ? 0 : st.cache_len[0];
        doc.text(16, y + 18, fmt::format("{} {}", st.phase, i == 0 ? "" : fmt::format("step {}", i)), {.size = 12, .bold = true});
        doc.text(16, y + 34, fmt::format("Q {} reads K/V {}", st.q_shape, st.kv_cached_shape), {.size = 10, .fill = "#555555"});
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
    doc.inputs({fmt::format("Prompt of {} tokens, then {} greedy decode steps; K/V [batch, H_kv, S, d] per layer, every layer alike",
                            first.tokens.size(), steps.size() - 1),
                "Lengths read from the cache after each step (Transformer::forward with a StepTrace, lib/model)",
                source_line("doc1-fig4")});
    return doc.str();
}

std::string doc2_fig1_projections(const ProjectionInputs& in) {
    const std::vector<Requests> one{{1, 1}};
    // The K (and V) projection width H_kv·d, as kv-mem's head-sharing table computes it.
    std::uint64_t kv_width = 0;
    for (const HeadSharing& h : compare_head_sharing(1, in.q_heads, in.kv_heads, in.head_dim, in.bits, one))
        if (h.kv_heads == in.kv_heads) kv_width = h.kv_proj_width;
    const std::uint64_t q_width = checked_mul(in.q_heads, in.head_dim, "H_q·d");
    const std::uint64_t widest = std::max({in.hidden, q_width, kv_width});
    const double scale = 240.0 / static_cast<double>(widest), top = 70;
    svg::Document doc(760, top + 250 + 16 + 15.0 * 3, "Second document, Figure 1: Q, K and V from the hidden state");
    doc.heading("Learned projections W_Q, W_K, W_V; Q serves the current step, K and V stay as history");
    const double hx = 16, hw = static_cast<double>(in.hidden) * scale;
    doc.rect(hx, top + 100, std::max(hw, 40.0), 30, svg::ShapeStyle{.fill = "#e8eef8", .stroke = svg::kBlue});
    doc.text(hx, top + 92, fmt::format("hidden state x: {} wide", in.hidden), {.size = 12, .cls = "width", .value = static_cast<double>(in.hidden)});
    struct Out { const char* name; std::uint64_t width; const char* color; const char* role; };
    const Out outs[] = {{"Q", q_width, svg::kBlue, "not cached"},
                        {"K", kv_width, svg::kTeal, "cached"},
                        {"V", kv_width, svg::kAmber, "cached"}};
    for (int i = 0; i < 3; ++i) {
        const double y = top + 20 + 80.0 * i, x = 440;
        const std::uint64_t wbytes = checked_mul(checked_mul(in.hidden, outs[i].width, "weight elements"), in.bits, "weight bits") / 8;
        doc.arrow(hx + std::max(hw, 40.0) + 4, top + 115, x - 160, y + 15, svg::kGrey);
        doc.text(x - 154, y + 20, fmt::format("W_{} [{} × {}]", outs[i].name, in.hidden, outs[i].width), {.size = 11});
        doc.text(x - 154, y + 36, binary_size(wbytes) + " per layer", {.size = 10, .fill = "#555555"});
        doc.rect(x, y, std::max(static_cast<double>(outs[i].width) * scale, 6.0), 30, outs[i].color);
        doc.text(x, y + 48, fmt::format("{}: {} wide = {} heads × {}, {}", outs[i].name, outs[i].width,
                                        i == 0 ? in.q_heads : in.kv_heads, in.head_dim, outs[i].role),
                 {.size = 11, .cls = "width", .value = static_cast<double>(outs[i].width)});
    }
    doc.inputs({fmt::format("hidden {}, H_q = {}, H_kv = {}, d = {}, weights {} ({} B each); one row x per token",
                            in.hidden, in.q_heads, in.kv_heads, in.head_dim, in.dtype, exact_ratio(in.bits, 8, 3)),
                "Widths from compare_head_sharing (lib/kv.hpp): Q is H_q·d wide, K and V H_kv·d each",
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
        fmt::format("Per layer 2·S·H_kv·d·b = {}; all {} layers {} = {} B (kv_bytes, lib/kv.hpp)", binary_size(kv.per_layer_bytes[0]),
                    s.layers, binary_size(kv.total_bytes), group_thousands(kv.total_bytes)),
        source_line("doc1-fig5")};
    svg::Document doc(760, top + row_h * static_cast<double>(rows.size()) + 10 + 16 + 15.0 * 3, "Figure 5: every layer keeps its own K/V cache");
    doc.heading("Layer l's K/V come from layer l's input; the next layer reads its own cache, never this one");
    const std::uint64_t shown = std::min<std::uint64_t>(shown_positions, s.seq_len);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::uint64_t l = rows[r];
        const double y = top + row_h * static_cast<double>(r);
        if (r == 3 && l != 3) doc.text(30, y - 8, fmt::format("… layers 3 to {} alike …", l - 1), {.size = 11, .fill = "#555555"});
        doc.rect(16, y + 8, 110, 34, svg::ShapeStyle{.fill = "#e8eef8", .stroke = svg::kBlue});
        doc.text(71, y + 30, fmt::format("layer {} input", l), {.size = 12, .anchor = "middle"});
        doc.arrow(126, y + 25, 170, y + 25, svg::kInk);
        // K row (teal) above V row (amber): one cell per cached position.
        for (std::uint64_t p = 0; p < shown; ++p) {
            const double x = 176 + 24 * static_cast<double>(p);
            doc.rect(x, y + 6, 20, 16, svg::kTeal);
            doc.rect(x, y + 28, 20, 16, svg::kAmber);
        }
        const double end = 176 + 24 * static_cast<double>(shown);
        if (shown < s.seq_len) doc.text(end + 2, y + 30, "…", {.size = 14});
        doc.text(176, y + 58, fmt::format("layer {} cache: K and V of {} positions", l, group_thousands(s.seq_len)),
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
        throw InputError("H_q", std::to_string(in.q_heads), "must be between 1 and 64 to be drawn");
    if (in.kv_heads.empty() || in.kv_heads.size() > 4)
        throw InputError("H_kv", fmt::format("{} values", in.kv_heads.size()), "give 1 to 4 values to compare");
    const double panel_h = 150, top = 64;
    svg::Document doc(760, top + panel_h * static_cast<double>(in.kv_heads.size()) + 16 + 15.0 * 2,
                      "Figure 6: which K/V head each query head reads");
    doc.heading(fmt::format("Query head h reads K/V head h / (H_q / H_kv); H_q = {} throughout", in.q_heads));
    const double left = 150, right = 740;
    for (std::size_t p = 0; p < in.kv_heads.size(); ++p) {
        const std::uint64_t hkv = in.kv_heads[p];
        (void)gqa_kv_head(0, in.q_heads, hkv);  // refuses an H_kv that does not divide H_q
        const double y = top + panel_h * static_cast<double>(p);
        const char* kind = hkv == in.q_heads ? "MHA" : hkv == 1 ? "MQA" : "GQA";
        doc.text(16, y + 54, fmt::format("{}: H_kv = {}", kind, hkv), {.size = 13, .bold = true, .cls = "panel"});
        doc.text(16, y + 72, fmt::format("{} query head{} per K/V head", in.q_heads / hkv, in.q_heads / hkv == 1 ? "" : "s"), {.size = 11, .fill = "#555555"});
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
                                                             .tooltip = fmt::format("Q{} reads KV {}", h, k)});
            if (qw >= 22) doc.text(x + qw / 2, y + 25, fmt::format("Q{}", h), {.size = 10, .anchor = "middle", .fill = "#ffffff"});
            const double kx = left + kw * (static_cast<double>(k) + 0.5);
            doc.arrow(x + qw / 2, y + 34, kx, y + 90, svg::kGrey, 1.2);
        }
    }
    doc.inputs({fmt::format("H_q = {}, H_kv = {}; the K/V heads are the cache's head axis: fewer heads, fewer bytes", in.q_heads,
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
    ch.title = "Figure 7: M_KV = 2·L·B·S·H_kv·d·b, substituted";
    ch.subtitle = fmt::format("H_kv from {} (MHA) to {}, then B from 1 to {}", s.q_heads, s.kv_heads, in.batch);
    ch.y_label = "M_KV (GiB, 2^30 bytes)";
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
    ch.inputs = {shape_line(s), "Bytes from kv_bytes_uniform (lib/kv.hpp); 1 GiB = 2^30 bytes", source_line("doc1-fig7")};
    return svg::bar_chart(ch);
}

std::string fig8_paged_blocks(const model::PagedSimResult& sim, std::size_t step) {
    if (sim.steps.empty()) throw InputError("the paged simulation recorded no step");
    const model::PagedStep& st = sim.steps[std::min(step, sim.steps.size() - 1)];
    const int pool = sim.options.blocks;
    const int per_row = std::min(pool, 12);
    const int pool_rows = (pool + per_row - 1) / per_row;
    const double top = 70, seq_h = 40, bw = 40;
    const double pool_y = top + seq_h * static_cast<double>(st.seqs.size()) + 60;
    svg::Document doc(760, pool_y + 50 * pool_rows + 30 + 16 + 15.0 * 3,
                      "Figure 8: logical block order, physical block position");
    doc.heading(fmt::format("Block tables of a real paged cache after step {}: logical blocks in order, physical blocks anywhere",
                            st.step));
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
            doc.text(x + bw / 2, y + 44, fmt::format("refs {}", refs[static_cast<std::size_t>(b)]), {.size = 9, .anchor = "middle"});
    }
    doc.text(16, pool_y + 20, "physical pool", {.size = 12, .bold = true});
    for (std::size_t r = 0; r < st.seqs.size(); ++r) {
        const auto& s = st.seqs[r];
        const double y = top + seq_h * static_cast<double>(r);
        const char letter = static_cast<char>('A' + s.seq % 26);
        doc.text(16, y + 20, fmt::format("seq {} ({}, {} tokens)", letter, s.state, s.length), {.size = 11});
        for (std::size_t i = 0; i < s.table.size(); ++i) {
            const double x = 230 + (bw + 8) * static_cast<double>(i);
            doc.rect(x, y + 4, bw, 26, svg::ShapeStyle{.fill = "#ffffff", .stroke = seq_color(s.seq), .stroke_width = 2,
                                                       .cls = "logical", .value = static_cast<double>(s.table[i])});
            doc.text(x + bw / 2, y + 22, fmt::format("{}{}", letter, i), {.size = 11, .anchor = "middle"});
            const auto [px, py] = pool_xy(s.table[i]);
            doc.line(x + bw / 2, y + 30, px + bw / 2, py, svg::ShapeStyle{.stroke = seq_color(s.seq), .stroke_width = 1.2});
        }
    }
    doc.inputs({fmt::format("{} blocks of {} tokens ({} each), prompts {}, prefix sharing {}", pool, sim.options.block_size,
                            bytes_all_units(sim.block_bytes), prompts_text(sim.options.prompts),
                            sim.options.share_prefix ? "on" : "off"),
                fmt::format("Step {}: {} blocks used, {} free; a thick border is a block shared (reference count above 1)",
                            st.step, st.used_blocks, st.free_blocks),
                source_line("doc1-fig8")});
    return doc.str();
}

std::string fig9_decode_reads(const RooflineRequest& req, const RooflineResult& res, const std::vector<std::string>& sources) {
    const DecodeModel& m = req.model;
    svg::BarChart ch;
    ch.title = "Figure 9: bytes one decode step reads, D_B = W + B·M_KV";
    ch.subtitle = "The weights are read once per step; every request's K/V is read for that request";
    ch.y_label = "D_B (GB, 10^9 bytes)";
    for (const DecodeStep& step : res.rows) {
        const std::uint64_t b = step.batch;
        svg::Bar bar;
        bar.label = fmt::format("B = {}", b);
        bar.sublabel = fmt::format("≤ {:.2f} tok/s all, {:.2f} each", step.aggregate_tokens_per_s, step.per_request_tokens_per_s);
        bar.value = bytes_in_gb(step.bytes);
        bar.value_label = gb3(step.bytes);
        bar.segments.push_back({bytes_in_gb(step.weight_bytes), svg::kBlue, "weights W"});
        // K and V of each request as a teal and an amber band, while they stay wide enough to see;
        // requests of their own lengths (a list of --seq-len) each get their own M_KV.
        if (b <= 16) {
            for (std::uint64_t i = 0; i < b; ++i) {
                const double per = req.lens_are_batch ? bytes_in_gb(request_kv_bytes(m, req.seq_lens[i]))
                                                      : bytes_in_gb(step.kv_bytes) / static_cast<double>(b);
                bar.segments.push_back({per / 2, svg::kTeal, fmt::format("request {} K", i + 1)});
                bar.segments.push_back({per / 2, svg::kAmber, fmt::format("request {} V", i + 1)});
            }
        } else {
            bar.segments.push_back({bytes_in_gb(step.kv_bytes), svg::kTeal, "K/V of every request"});
        }
        ch.bars.push_back(bar);
    }
    ch.legend = {{"weights W (once)", svg::kBlue}, {"K of each request", svg::kTeal}, {"V of each request", svg::kAmber}};
    std::string kv;
    if (req.lens_are_batch) {
        kv = "M_KV per request from its own length";
    } else {
        const std::uint64_t m_kv = request_kv_bytes(m, req.seq_lens.empty() ? 0 : req.seq_lens.front());
        kv = fmt::format("M_KV = {} B ({}) per request", group_thousands(m_kv), binary_size(m_kv));
    }
    ch.inputs = {fmt::format("W = {} B ({}), {}", group_thousands(m.weight_bytes), decimal_size(m.weight_bytes), kv),
                 fmt::format("β = {}{}", format_bandwidth(req.machine.bandwidth),
                             req.machine.peak_flops ? ", π = " + format_flops(*req.machine.peak_flops) : ", no π: memory bound only")};
    ch.inputs.insert(ch.inputs.end(), sources.begin(), sources.end());
    ch.inputs.push_back("t_B ≥ D_B / β; aggregate ≤ B / t_B, each request ≤ 1 / t_B (decode_roofline, lib/roofline_result.hpp)");
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
                             {in.kv_bytes_per_request ? std::string("M_KV as given") : "M_KV from " + shape_line(s)});
}

std::string fig10_attention_masks(const AttentionMaskInputs& in) {
    const std::uint64_t S = in.seq_len;
    if (S < 2 || S > 64) throw InputError("S", std::to_string(S), "must be between 2 and 64 positions to be drawn");
    if (in.tile == 0 || in.tile > S) throw InputError("tile", std::to_string(in.tile), fmt::format("must be between 1 and S = {}", S));
    if (in.window == 0 || in.window > S) throw InputError("W", std::to_string(in.window), fmt::format("must be between 1 and S = {}", S));
    const double cell = std::min(16.0, 220.0 / static_cast<double>(S)), top = 90;
    svg::Document doc(760, top + cell * static_cast<double>(S) + 50 + 16 + 15.0 * 2,
                      "Figure 10: tiles keep the relations; a window removes some");
    doc.heading("Rows are queries, columns keys; a filled cell is a relation the attention computes");
    struct Panel { const char* name; bool tiled; bool windowed; };
    const Panel panels[] = {{"dense causal", false, false}, {"FlashAttention tiles", true, false}, {"sliding window", false, true}};
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
        doc.text(x0, top + cell * static_cast<double>(S) + 20, fmt::format("{} relations", relations),
                 {.size = 12, .cls = "relations", .value = static_cast<double>(relations)});
    }
    doc.inputs({fmt::format("S = {} positions, tile = {}, window W = {} (a query keeps keys i − W < j ≤ i); pale red: causal relations the window drops",
                            S, in.tile, in.window),
                source_line("doc1-fig10")});
    return doc.str();
}

std::string fig11_round(const RoundInputs& in) {
    const RoundWalkthrough w = walk_round(in.gamma, in.outcomes);
    const double col = std::min(120.0, 560.0 / static_cast<double>(w.steps.size())), left = 170, top = 70;
    svg::Document doc(760, top + 250 + 16 + 15.0 * 3, "Figure 11: verified at once, accepted along the prefix");
    doc.heading("The target computes every draft position in one pass; acceptance still moves left to right");
    const char* rows[] = {"draft proposes", "target, one pass", "judged in order"};
    for (int r = 0; r < 3; ++r) doc.text(16, top + 30 + 64.0 * r, rows[r], {.size = 12, .bold = true});
    doc.rect(left - 6, top + 66, col * static_cast<double>(std::count_if(w.steps.begin(), w.steps.end(),
                                                                          [](const RoundStep& s) { return s.target_verified; })) + 12,
             48, svg::ShapeStyle{.stroke = svg::kBlue, .dashed = true});
    for (std::size_t i = 0; i < w.steps.size(); ++i) {
        const RoundStep& s = w.steps[i];
        const double x = left + col * static_cast<double>(i);
        if (s.drafted) {
            doc.rect(x, top + 10, col - 12, 30, svg::ShapeStyle{.fill = "#dde6f3", .stroke = svg::kBlue});
            doc.text(x + (col - 12) / 2, top + 30, fmt::format("draft {}", s.position), {.size = 11, .anchor = "middle"});
        }
        if (s.target_verified) {
            doc.rect(x, top + 74, col - 12, 30, svg::ShapeStyle{.fill = svg::kBlue});
            doc.text(x + (col - 12) / 2, top + 94, fmt::format("p at {}", s.position), {.size = 11, .anchor = "middle", .fill = "#ffffff"});
        }
        const bool accepted = s.fate == "accepted", bonus = s.fate == "bonus", discarded = s.fate == "discarded";
        const char* color = accepted || bonus ? svg::kGreen : discarded ? svg::kGrey : svg::kRed;
        const std::string word = accepted ? "accepted" : bonus ? "bonus token" : discarded ? "discarded" : "rejected";
        doc.rect(x, top + 138, col - 12, 30, svg::ShapeStyle{.fill = color, .cls = "fate", .tooltip = s.why});
        doc.text(x + (col - 12) / 2, top + 158, word, {.size = 11, .anchor = "middle", .fill = "#ffffff", .cls = "fate-label"});
        if (s.fate.rfind("rejected", 0) == 0)
            doc.text(x + (col - 12) / 2, top + 184, "resampled from r", {.size = 10, .anchor = "middle", .fill = svg::kRed});
        if (i > 0 && !discarded) doc.arrow(x - 12, top + 153, x, top + 153, svg::kInk, 1.2);
    }
    doc.text(16, top + 220,
             fmt::format("{} drafts proposed, {} positions verified, {} accepted, {} discarded: the round advances {} tokens",
                         w.draft_proposals, w.target_positions, w.accepted, w.discarded, w.tokens_advanced),
             {.size = 13, .bold = true, .cls = "advanced", .value = static_cast<double>(w.tokens_advanced)});
    std::string outcomes;
    for (const auto& o : in.outcomes) outcomes += (outcomes.empty() ? "" : ",") + o;
    doc.inputs({fmt::format("γ = {}, outcomes {} (walk_round, lib/spec.hpp)", in.gamma, outcomes),
                "A draft after a rejection was computed on a prefix that no longer exists, so it is discarded",
                source_line("doc1-fig11")});
    return doc.str();
}

std::string fig12_accepted_counts(const AcceptedCountInputs& in) {
    const std::vector<double> dist = accepted_count_distribution(in.alpha, in.gamma);
    svg::BarChart ch;
    ch.title = "Figure 12: where a round stops";
    ch.subtitle = fmt::format("P(k drafts accepted) at α = {}, γ = {}: expected tokens per round {}", svg::number(in.alpha),
                              in.gamma, svg::number(expected_tokens_per_round(in.alpha, in.gamma), 4));
    ch.y_label = "probability";
    for (std::size_t k = 0; k < dist.size(); ++k) {
        svg::Bar b;
        b.label = fmt::format("k = {}", k);
        b.sublabel = k == in.gamma ? "all accepted, + bonus" : fmt::format("{} tokens out", k + 1);
        b.value = dist[k];
        b.value_label = svg::number(dist[k], 4);
        b.color = k == in.gamma ? svg::kGreen : svg::kBlue;
        ch.bars.push_back(b);
    }
    ch.inputs = {fmt::format("α = {} per position, independent; γ = {} (accepted_count_distribution, lib/spec.hpp)",
                             svg::number(in.alpha), in.gamma),
                 source_line("doc1-fig12")};
    return svg::bar_chart(ch);
}

std::string fig13_acceptance(const AcceptanceInputs& in) {
    const Acceptance<double> a = acceptance(in.p, in.q);
    svg::BarChart ch;
    ch.title = "Figure 13: acceptance mass and residual";
    ch.subtitle = fmt::format("Accepted mass Σ min(p, q) = {}, rejected {}; the residual r puts the rejected mass back where p > q",
                              svg::number(a.accept_prob, 4), svg::number(a.reject_prob, 4));
    ch.y_label = "probability";
    for (std::size_t v = 0; v < in.p.size(); ++v) {
        const std::string g = fmt::format("token {}", v + 1);
        ch.bars.push_back({.label = "q (draft)", .value = in.q[v], .color = svg::kGrey, .group = g});
        ch.bars.push_back({.label = "p (target)", .value = in.p[v], .color = svg::kBlue, .group = g});
        svg::Bar out{.label = "output", .sublabel = fmt::format("α = {}", svg::number(a.alpha[v], 4)), .value = a.output[v], .group = g};
        out.segments = {{a.accepted[v], svg::kGreen, "accepted q·α"}, {a.reject_prob * a.residual[v], svg::kRed, "rejected mass × r"}};
        ch.bars.push_back(out);
    }
    ch.legend = {{"q", svg::kGrey}, {"p", svg::kBlue}, {"accepted min(p, q)", svg::kGreen}, {"rejection × residual r", svg::kRed}};
    auto list = [](const std::vector<double>& v) {
        std::string t;
        for (double x : v) t += (t.empty() ? "" : ", ") + svg::number(x, 6);
        return t;
    };
    ch.inputs = {fmt::format("p = [{}], q = [{}]; output = q·α + (1 − Σ q·α)·r = [{}] (acceptance, lib/spec.hpp)", list(in.p),
                             list(in.q), list(a.output)),
                 source_line("doc1-fig13")};
    return svg::bar_chart(ch);
}

std::string fig14_coverage(const BestOfNRequest& req, const BestOfNResult& res, std::uint64_t marked_n) {
    std::vector<BestOfNRow> rows = res.rows;
    std::stable_sort(rows.begin(), rows.end(), [](const BestOfNRow& a, const BestOfNRow& b) { return a.n < b.n; });
    svg::LinePlot pl;
    pl.title = "Figure 14: a correct candidate appears; is it chosen?";
    pl.subtitle = req.verifier ? fmt::format("Coverage 1 − (1 − p)^N counts presence; a verifier (TPR {}, FPR {}) decides what is chosen",
                                             svg::number(req.verifier->tpr), svg::number(req.verifier->fpr))
                               : "Coverage 1 − (1 − p)^N counts presence; a selection step decides what is chosen";
    pl.x = {"N, candidates", false, 0.0, std::nullopt};
    pl.y = {"probability", false, 0.0, 1.0};
    svg::Series cov{"coverage (present)", {}, {}, svg::kGreen}, sel{"selected (verifier)", {}, {}, svg::kBlue},
        maj{"selected (majority vote)", {}, {}, svg::kAmber}, judge{"selected (biased judge)", {}, {}, svg::kRed},
        hard{"coverage, hard fraction", {}, {}, svg::kTeal, true}, beta{"coverage, correlated (ρ)", {}, {}, svg::kOrange, true},
        one{"one sample (p)", {}, {}, svg::kGrey, true, false};
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
                              fmt::format("N = {}: coverage {}{}", marked_n, svg::number(marked->coverage, 4),
                                          marked->verifier_selection ? ", selected " + svg::number(*marked->verifier_selection, 4) : ""),
                              svg::kInk});
    if (const auto& t = res.target) {
        pl.series.push_back({"target " + svg::number(t->target, 6), {cov.x.front(), cov.x.back()}, {t->target, t->target}, svg::kInk,
                             true, false});
        if (t->min_n)
            pl.markers.push_back({static_cast<double>(*t->min_n), fmt::format("N = {} reaches the target", *t->min_n), svg::kRed});
    }
    pl.inputs = {"p = " + svg::number(res.p) + " per independent candidate"};
    if (req.verifier)
        pl.inputs.push_back(fmt::format("verifier TPR = {}, FPR = {}, {} when it accepts none (not the document's: chosen to show the gap)",
                                        svg::number(req.verifier->tpr), svg::number(req.verifier->fpr),
                                        req.verifier->fallback_random ? "a random pick" : "abstains"));
    if (req.answer_dist) pl.inputs.push_back(fmt::format("answers (correct first): {}", svg::number(req.answer_dist->front()) +
                                                                                          fmt::format(" and {} wrong", req.answer_dist->size() - 1)));
    if (req.judge_bias) pl.inputs.push_back("judge bias = " + svg::number(*req.judge_bias));
    if (req.hard_fraction) pl.inputs.push_back("hard fraction h = " + svg::number(*req.hard_fraction));
    if (req.rho) pl.inputs.push_back("ρ = " + svg::number(*req.rho));
    pl.inputs.push_back("best_of_n (lib/bestofn_result.hpp): coverage and each selection strategy asked for");
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
    // At most 17 levels around the one chosen, so the grid stays readable at 16 bits.
    // The whole grid when it has at most 17 levels (4 bits: 15), else 17 around the chosen level.
    const std::int64_t hi = std::min(Q, std::max(-Q, q.level - 8) + 16), lo = std::max(-Q, hi - 16);
    const double left = 60, right = 700, y = 150;
    const double span = static_cast<double>(hi - lo);
    auto px = [&](double v) { return left + (v / in.step - static_cast<double>(lo)) / (span == 0 ? 1 : span) * (right - left); };
    svg::Document doc(760, 300 + 16 + 15.0 * 2, "Figure 15: the uniform grid and the dequantization error");
    doc.heading(fmt::format("x̂ = Δ·clip(round(x/Δ), −Q, Q): x = {} lands on level {}, x̂ = {}", svg::number(in.x, 6), q.level,
                            svg::number(q.dequantized, 6)));
    doc.line(left - 20, y, right + 20, y, svg::ShapeStyle{.stroke = svg::kInk, .stroke_width = 1.5});
    for (std::int64_t l = lo; l <= hi; ++l) {
        const double v = static_cast<double>(l) * in.step, x = px(v);
        doc.circle(x, y, l == q.level ? 7 : 5, svg::ShapeStyle{.fill = svg::kBlue, .cls = "level", .value = v});
        doc.text(x, y + 24, svg::number(v, 6), {.size = 11, .anchor = "middle"});
        doc.text(x, y + 40, std::to_string(l), {.size = 9, .anchor = "middle", .fill = "#777777"});
    }
    const double xx = std::clamp(px(in.x), left - 20, right + 20);
    doc.circle(xx, y - 50, 6, svg::ShapeStyle{.fill = svg::kRed, .cls = "input-x", .value = in.x});
    doc.text(xx, y - 64, fmt::format("x = {}", svg::number(in.x, 6)), {.size = 12, .anchor = "middle", .fill = svg::kRed});
    doc.arrow(xx, y - 44, px(q.dequantized), y - 9, svg::kRed);
    doc.text(px(q.dequantized) + 10, y - 20, fmt::format("x̂ = {}", svg::number(q.dequantized, 6)),
             {.size = 12, .fill = svg::kBlue, .cls = "dequantized", .value = q.dequantized});
    doc.text(left, y + 80,
             fmt::format("error x̂ − x = {}{}", svg::number(q.error, 4), q.clipped ? " (clipped to ±Q·Δ)" : "; within Δ/2"),
             {.size = 13, .bold = true, .cls = "error", .value = q.error});
    doc.text(left, y + 100, "level index k below each grid point; round half away from zero", {.size = 11, .fill = "#555555"});
    doc.inputs({fmt::format("x = {}, Δ = {}, {} bits: Q = 2^(b−1) − 1 = {} (quantize_scalar, lib/quant.hpp)", svg::number(in.x, 6),
                            svg::number(in.step, 6), in.bits, Q),
                source_line("doc1-fig15")});
    return doc.str();
}

std::string fig17_cache_paths(const model::CheckCacheResult& r) {
    // Exact agreement cannot sit on a log axis: the floor is a tenth of the smallest difference or
    // tolerance drawn, so every drawn number stays above it.
    double floor = INFINITY;
    for (const auto& row : r.rows) {
        for (double v : {row.contiguous, row.paged, row.other_attention, row.chunked})
            if (v > 0) floor = std::min(floor, v);
        floor = std::min(floor, r.rel_tolerance * row.scale);
    }
    floor = std::isfinite(floor) && floor > 0 ? floor / 10 : 1e-12;
    const std::string other = r.other_attention == model::AttentionKind::Online ? "online" : "plain";
    svg::Series contiguous{"contiguous", {}, {}, svg::kBlue}, paged{"paged", {}, {}, svg::kTeal},
        attention{other + " attention", {}, {}, svg::kAmber}, chunked{"chunked prefill", {}, {}, svg::kOrange},
        tol{"tolerance", {}, {}, svg::kRed, true, false};
    bool any_zero = false;
    const auto add = [&](svg::Series& s, double x, double v) {
        s.x.push_back(x), s.y.push_back(v > 0 ? v : floor), s.values.push_back(v);
        any_zero = any_zero || v == 0;
    };
    for (const auto& row : r.rows) {
        const double x = row.pos;
        add(contiguous, x, row.contiguous), add(paged, x, row.paged), add(attention, x, row.other_attention),
            add(chunked, x, row.chunked);
        tol.x.push_back(x), tol.y.push_back(r.rel_tolerance * row.scale);
    }
    svg::LinePlot pl;
    pl.title = "Figure 17: the cache paths compared on fixed inputs";
    pl.subtitle = fmt::format("max |logit − no-cache logit| per position: {} (worst relative {} {} {}, on {})",
                              r.agree ? "agree" : "DISAGREE", svg::number(r.worst.max_rel, 3), r.agree ? "≤" : ">",
                              svg::number(r.rel_tolerance, 3), r.worst_path == "other_attention" ? other + " attention" : r.worst_path);
    pl.x = {"position", false, std::nullopt, std::nullopt};
    pl.y = {"max |Δlogit| against no cache", true, std::nullopt, std::nullopt};
    // Paths that agree exactly all lie on the floor, one over the other: the legend says so.
    for (svg::Series* s : {&contiguous, &paged, &attention, &chunked})
        if (std::all_of(s->values.begin(), s->values.end(), [](double v) { return v == 0; })) s->name += " (all 0)";
    pl.series = {contiguous, paged, attention, chunked, tol};
    std::string tokens;
    for (std::size_t i = 0; i < r.tokens.size() && i < 12; ++i) {
        if (i > 0) tokens += ',';  // appended apart: GCC 12 warns (-Wrestrict, a false positive) on "" + string
        tokens += std::to_string(r.tokens[i]);
    }
    if (r.tokens.size() > 12) tokens += fmt::format(",… ({} tokens)", r.tokens.size());
    pl.inputs = {"tokens " + tokens,
                 "reference: the no-cache pass; against it: contiguous, paged, " + other + " attention, chunked prefill",
                 fmt::format("tolerance: {} × max(1, max |logit|) at each position (float32 sums in a different order per path)",
                             svg::number(r.rel_tolerance, 3))};
    if (any_zero) pl.inputs.push_back(fmt::format("exact agreement (0) is drawn at the floor {}", svg::number(floor, 3)));
    pl.inputs.push_back(source_line("doc1-fig17"));
    pl.height = 440 + 15.0 * static_cast<double>(pl.inputs.size());
    return svg::line_plot(pl);
}

}  // namespace inferlab::figures
