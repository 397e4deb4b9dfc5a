// The KV cache's figures (kv_mem.hpp).
#include "inferlab/draw/kv_mem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "inferlab/answer/decode_roofline.hpp"
#include "inferlab/base/checked.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/calc/kv.hpp"
#include "inferlab/draw/catalog.hpp"
#include "inferlab/draw/svg.hpp"
#include "inferlab/text/table.hpp"

// GCC 12 warns when a designated initializer leaves a defaulted member out (GCC bug 96868, fixed
// in 13); leaving them out is the point of svg.hpp's style structs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace inferlab::figures {

namespace {

double gib(std::uint64_t bytes) { return bytes_in_gib(bytes); }

std::string shape_line(const KvShape& s) {
    return trf("L = {0}, S = {1} tokens, H_q = {2}, H_kv = {3}, d = {4}, b = {5} B ({6})", s.layers, group_thousands(s.seq_len),
               s.q_heads, s.kv_heads, s.head_dim, exact_ratio(s.bits, 8, 3), s.dtype);
}

}  // namespace

std::uint64_t gqa_kv_head(std::uint64_t h, std::uint64_t h_q, std::uint64_t h_kv) {
    if (h_kv == 0 || h_q % h_kv != 0)
        throw InputError("H_kv", std::to_string(h_kv), N_("must divide H_q = {0} (a whole group per K/V head)"),
                         {std::to_string(h_q)});
    if (h >= h_q) throw InputError(N_("query head {0} does not exist: H_q = {1}"), {std::to_string(h), std::to_string(h_q)});
    return h / (h_q / h_kv);
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
                tr("Widths from inferlab kv-mem: Q is H_q·d wide, K and V H_kv·d each"),
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
        trf("Per layer 2·S·H_kv·d·b = {0}; all {1} layers {2} = {3} B (inferlab kv-mem)", binary_size(kv.per_layer_bytes[0]),
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
    std::string kv_list;
    for (auto k : in.kv_heads) kv_list += (kv_list.empty() ? "" : ", ") + std::to_string(k);
    // The document's "the same four query heads against different numbers of K/V heads", of the heads drawn.
    doc.caption(trf("The same {0} query heads against {1} K/V heads", in.q_heads, kv_list));
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
                    kv_list),
                source_line("doc1-fig6")});
    return doc.str();
}

std::string fig7_kv_substitution(const KvSubstitutionInputs& in) {
    const KvShape& s = in.shape;
    svg::BarChart ch;
    ch.title = tr("Figure 7: M_KV = 2·L·B·S·H_kv·d·b, substituted");
    // H_kv = H_q is MHA itself, and B = 1 the first group: each drawn once, and said as drawn.
    const bool gqa = s.kv_heads != s.q_heads;
    ch.subtitle = (gqa ? trf("H_kv from {0} (MHA) to {1}", s.q_heads, s.kv_heads) : trf("H_kv = H_q = {0} (MHA)", s.q_heads)) +
                  (in.batch > 1 ? trf(", then B from 1 to {0}", in.batch) : tr(", at B = 1"));
    // The document's caption "32 layers, 8192 tokens, BF16", of the shape drawn.
    std::string dtype = s.dtype;
    for (char& c : dtype) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ch.caption = trf("Cache memory substituted: {0} layers, {1} tokens, {2}", s.layers, s.seq_len, dtype);
    ch.y_label = tr("M_KV (GiB, 2^30 bytes)");
    for (std::uint64_t b : {std::uint64_t{1}, in.batch}) {
        for (std::uint64_t hkv : gqa ? std::vector<std::uint64_t>{s.q_heads, s.kv_heads} : std::vector<std::uint64_t>{s.q_heads}) {
            const std::uint64_t bytes = kv_bytes_uniform(s.layers, b, s.seq_len, hkv, s.head_dim, s.bits);
            svg::Bar bar;
            bar.label = fmt::format("H_kv = {}", hkv);
            bar.sublabels = {{fmt::format("{} B", group_thousands(bytes)), static_cast<double>(bytes)}};
            bar.value = gib(bytes);
            bar.value_label = binary_size(bytes);
            bar.color = hkv == s.q_heads ? svg::kGrey : svg::kTeal;
            bar.group = fmt::format("B = {}", b);
            ch.bars.push_back(bar);
        }
        if (in.batch == 1) break;
    }
    ch.legend = {{fmt::format("MHA (H_kv = H_q = {})", s.q_heads), svg::kGrey}};
    if (gqa) ch.legend.push_back({fmt::format("GQA (H_kv = {})", s.kv_heads), svg::kTeal});
    ch.inputs = {shape_line(s), tr("Bytes from inferlab kv-mem; 1 GiB = 2^30 bytes"), source_line("doc1-fig7")};
    return svg::bar_chart(ch);
}

}  // namespace inferlab::figures
