// kv-mem's printers: text, --json, --csv tables and --explain of one KvMemResult, next to each
// other. They choose and format; every number is the library's (inferlab/answer/kv_mem.hpp).
#include "kv_mem_print.hpp"

#include "kv_mem_json.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"

namespace inferlab::app {
namespace {

using nlohmann::json;

const std::string kHang = "            ";  // continuation lines line up under the values

// A line's label ("model", "per token"), translated and padded to the values' column (kHang's
// width, in display columns: a Chinese label is narrower in characters than in columns).
std::string label(const std::string& msgid) {
    const std::string text = tr(msgid);
    const std::size_t w = display_width(text);
    return text + std::string(w < kHang.size() ? kHang.size() - w : 1, ' ');
}

std::string b_text(std::uint32_t bits) { return exact_ratio(bits, 8, 3); }

// A sub-line's label under a section ("  blocks     "): two spaces, then `text` (translated
// already) padded to `width` display columns with at least `gap` spaces after it.
std::string sublabel(const std::string& text, std::size_t width = 11, std::size_t gap = 1) {
    const std::size_t w = display_width(text);
    return "  " + text + std::string(std::max(w < width ? width - w : 0, gap), ' ');
}

// One line of human output, kept as written (its alignment) when it fits, else word-wrapped with
// continuation lines under `hanging`. A label padded to the hanging width ("per token   ") stays
// as it is, so the wrapped value lines up under its first line.
std::string fit(const std::string& text, const std::string& hanging = kHang) {
    if (display_width(text) <= text_width()) return text + "\n";
    std::size_t lead = text.find_first_not_of(' ');
    if (lead == std::string::npos) lead = 0;
    const bool label = text.size() > hanging.size() && text[hanging.size() - 1] == ' ' &&
                       text.rfind("  ", hanging.size()) != std::string::npos;
    if (label && text.find_first_not_of(' ', hanging.size() - 1) != std::string::npos)
        lead = text.find_first_not_of(' ', hanging.size() - 1);
    // wrap_text measures every line against the first line's indent: a deeper hanging indent
    // narrows them all by the difference, so no continuation line passes the width.
    const std::string indent = text.substr(0, lead);
    const std::size_t deeper =
        display_width(hanging) > display_width(indent) ? display_width(hanging) - display_width(indent) : 0;
    return wrap_text(text.substr(lead), text_width() - deeper, indent, hanging);
}

// ---------------------------------------------------------------- layers, in words


std::string describe_layer(const KvLayer& l) {
    std::string s = l.latent ? trf(N_("latent width {0} (MLA)"), l.d_k)
                             : (l.d_k == l.d_v ? fmt::format("H_kv={} d={}", l.h_kv, l.d_k)
                                               : fmt::format("H_kv={} d_k={} d_v={}", l.h_kv, l.d_k, l.d_v));
    s += l.bits_k == l.bits_v ? fmt::format(" b={} B", b_text(l.bits_k))
                              : fmt::format(" b_k={} B b_v={} B", b_text(l.bits_k), b_text(l.bits_v));
    if (l.window) s += trf(N_(" window={0}"), l.window);
    return s;
}

// The layers of one kind, exactly: ranges ("0–4, 6–10"), past 12 ranges counted, and an even
// stride (Gemma-2's alternation) as a progression.
std::string index_list(const std::vector<std::size_t>& idx) {
    std::vector<std::string> ranges;
    for (std::size_t i = 0; i < idx.size();) {
        std::size_t j = i;
        while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
        ranges.push_back(j == i ? std::to_string(idx[i]) : fmt::format("{}–{}", idx[i], idx[j]));
        i = j + 1;
    }
    std::string list =
        fmt::format("{}", fmt::join(ranges.begin(), ranges.begin() + std::min<std::size_t>(ranges.size(), 12), ", "));
    if (ranges.size() > 12) list += trf(N_(", … ({0} ranges in all)"), ranges.size());
    // (A plain local, not a structured binding: C++17 lambdas cannot capture those.)
    const std::size_t step = idx.size() > 1 ? idx[1] - idx[0] : 0;
    const bool stride = idx.size() > 6 && std::adjacent_find(idx.begin() + 1, idx.end(), [step](std::size_t a, std::size_t b) {
                                              return b - a != step;
                                          }) == idx.end();
    if (stride && step > 1) list = trf(N_("{0}, {1}, …, {2} in steps of {3}"), idx[0], idx[1], idx.back(), step);
    return list;
}

// Whether a run of layers_runs() names one layer ("27", not "0–26" or "0, 2, 4").
bool one_layer(const std::string& range) { return range.find_first_not_of("0123456789") == std::string::npos; }

// Runs of identical layers, or, when layers interleave (Gemma's alternating windows give 42
// runs), one line per distinct layer with its layer indices.
std::vector<std::string> layer_summary(const KvSpec& spec) {
    auto runs = layer_runs(spec);
    std::vector<std::string> out;
    if (runs.size() <= 8) {
        for (const auto& [range, l] : runs)
            out.push_back(trf(one_layer(range) ? N_("layer {0}: {1}") : N_("layers {0}: {1}"), range, describe_layer(l)));
        return out;
    }
    std::vector<std::pair<KvLayer, std::vector<std::size_t>>> kinds;
    for (std::size_t i = 0; i < spec.layers.size(); ++i) {
        auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == spec.layers[i]; });
        if (it == kinds.end()) kinds.push_back({spec.layers[i], {i}});
        else it->second.push_back(i);
    }
    for (const auto& [l, idx] : kinds)
        out.push_back(trf(N_("{0} ({1}): {2}"), counted(idx.size(), N_("{0} layer"), N_("{0} layers")), index_list(idx),
                          describe_layer(l)));
    return out;
}

std::string window_text(std::uint64_t w) {
    return w ? trf(N_("sliding W={0}"), w) : tr("full attention");
}

// ---------------------------------------------------------------- text

std::string human_model(const KvMemResult& r) {
    const KvModel& m = r.model;
    std::string h;
    if (r.uniform) {
        const KvLayer& l0 = m.spec.layers.front();
        h += fit(label(N_("model")) + trf(N_("L={0} layers, H_kv={1} K/V heads, d={2}, {3} (b = {4} B)   [{5}]"),
                                          r.layers, l0.h_kv, l0.d_k, tr(m.dtype_name), b_text(l0.bits_k), tr(m.source)));
    } else {
        h += fit(label(N_("model")) + trf(N_("L={0} layers, {1}   [{2}]"), r.layers, tr(m.dtype_name), tr(m.source)));
        for (const auto& line : layer_summary(m.spec)) h += fit("  " + line, "    ");
    }
    if (m.config && !m.config->window_rule.empty()) {
        // The convention of a sliding layer, where one slides (a rule may leave every layer full).
        h += fit(trf(sliding_layer_count(*m.config) > 0 ? N_("  sliding window: {0} (a sliding layer keeps the last W positions, the newest included)")
                            : N_("  sliding window: {0}"),
                     m.config->window_rule.localized()),
                 "    ");
    }
    if (m.config && !m.config->defaults_applied.empty()) {
        std::string keys;
        for (const Prose& d : m.config->defaults_applied) keys += (keys.empty() ? "" : tr(N_("; "))) + d.localized();
        h += fit(trf(N_("  keys the config leaves out: {0}"), keys), "    ");
    }
    if (m.config && !r.requests.empty()) {
        if (const auto note = past_max_positions(*m.config, longest_seq_len(r))) h += fit("  " + note->localized(), "    ");
    }
    return h;
}

std::string human_per_token(const KvMemResult& r) {
    if (r.uniform)
        return fit(label(N_("per token")) + trf(N_("s_token = 2·L·H_kv·d·b = {0}   (per layer {1})"),
                                                bytes_all_units(r.bytes_per_token),
                                                bytes_all_units(r.bytes_per_token_per_layer.front())));
    return fit(label(N_("per token")) + "s_token = Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l) = " +
               bytes_all_units(r.bytes_per_token) + (r.has_window ? tr(" (before windows cap sliding layers)") : ""));
}

std::string human_requests(const KvMemResult& r) {
    const KvBreakdown& kv = *r.kv;
    std::string h;
    if (r.same_length)
        h += fit(label(N_("requests")) +
                 trf(N_("{0} × S={1}"), group_thousands(r.request_count),
                     counted(r.requests.front().seq_len, N_("{0} token"), N_("{0} tokens"))));
    else
        h += fit(label(N_("requests")) +
                 trf(N_("{0} of different lengths (summed exactly; an average is not a peak)"), r.request_count));
    if (!r.same_length) {
        const std::size_t shown = std::min<std::size_t>(r.requests.size(), 12);
        for (std::size_t i = 0; i < shown; ++i)
            h += fit(trf(N_("  request {0}: S={1} → {2}"), i, group_thousands(r.requests[i].seq_len),
                         bytes_all_units(kv.per_request_bytes[i])),
                     "    ");
        if (shown < r.requests.size()) h += trf(N_("  ... {0} more"), r.requests.size() - shown) + "\n";
    } else if (r.request_count > 1) {
        h += fit(label(N_("per request")) + bytes_all_units(kv.per_request_bytes.front()));
    }
    h += fit(label(N_("total")) + "M_KV = " + bytes_all_units(kv.total_bytes));
    if (r.mla)
        h += fit(label("MLA") + trf(N_("latent cache {0} per token per layer (kv_lora_rank {1} + qk_rope_head_dim {2}); "
                                        "decompressed per-head K/V would be {3} ({4}× the latent)"),
                             bytes_all_units(r.mla->latent_bytes_per_token_per_layer), r.model.config->kv_lora_rank,
                             r.model.config->qk_rope_head_dim, bytes_all_units(r.mla->decompressed_total_bytes),
                             format_real(r.mla->decompressed_ratio, 4)));
    return h;
}

// The head-sharing table, for --csv (machine names, numbers only) and the text: there the
// documents' symbols keep it within 80 columns (H_kv·d: the K and the V projection's width), the
// ratio is the exact fraction and the bytes are in every unit.
std::vector<Column<HeadSharing>> head_sharing_columns(const KvMemResult& r) {
    const std::string q_heads = std::to_string(*r.model.q_heads);
    const std::vector<Column<HeadSharing>> c = {
        {"structure", "structure", [](const HeadSharing& h) { return h.name; }, {}, tr("kind")},
        {"q_heads", "q_heads", [q_heads](const HeadSharing&) { return q_heads; }, {}, "H_q"},
        {"kv_heads", "kv_heads", [](const HeadSharing& h) { return std::to_string(h.kv_heads); }, {}, "H_kv"},
        {"ratio_to_mha", "kv_vs_mha", [](const HeadSharing& h) { return format_short(h.ratio, 9); },
         [](const HeadSharing& h) { return h.ratio_num == h.ratio_den ? "1" : fmt::format("{}/{}", h.ratio_num, h.ratio_den); },
         tr("vs MHA")},
        {"kv_proj_width", "kv_proj_width", [](const HeadSharing& h) { return std::to_string(h.kv_proj_width); }, {}, "H_kv·d"},
        {"total_bytes", "kv_bytes", [](const HeadSharing& h) { return std::to_string(h.total_bytes); },
         [](const HeadSharing& h) { return bytes_all_units(h.total_bytes); }, tr("KV bytes")}};
    return c;
}

std::string human_head_sharing(const KvMemResult& r) {
    return "\n" +
           fit(trf(N_("Head sharing (same L, d, b; Q projection width H_q·d = {0}{1}):"), *r.q_proj_width,
                   r.model.hidden ? trf(N_(", hidden size {0}"), *r.model.hidden) : ""),
               "  ") +
           render_table(text_table(head_sharing_columns(r), r.head_sharing));
}

std::string blocks_per_request_text(const PagedGroup& g) {
    return g.blocks_per_request.size() <= 8 ? fmt::format("{}", fmt::join(g.blocks_per_request, ", ")) : tr("varies");
}

// A block table's rule for the blocks of one request (kv.hpp's window_blocks): a window's
// positions S − W .. S − 1 start inside a block unless S − W is a multiple of it.
std::string blocks_rule(const PagedGroup& g, std::uint64_t bs) {
    if (g.window == 0) return fmt::format("ceil(S / {})", bs);
    return fmt::format("floor((S − 1) / {0}) − floor((S − min(S, {1})) / {0}) + 1", bs, g.window);
}

std::string human_paged(const PagedUsage& p, double waste_percent) {
    const std::uint64_t bs = p.block_size;
    std::string h;
    if (p.groups.size() == 1) {
        h += "\n" + fit(trf(N_("Paged      blocks of {0} ({1} each across all layers)"), tokens_count(bs),
                            bytes_all_units(p.block_bytes)),
                        std::string(11, ' '));
        h += fit(sublabel(tr(N_("blocks"))) + trf(N_("{0} in all ({1} per request: {2})"), p.total_blocks,
                                              blocks_per_request_text(p.groups.front()), blocks_rule(p.groups.front(), bs)));
    } else {
        // Sliding layers hold fewer positions, so they get their own block table each.
        h += "\n" + fit(trf(N_("Paged      blocks of {0}, one block table per attention kind:"), tokens_count(bs)),
                        std::string(11, ' '));
        for (const auto& g : p.groups)
            h += fit(trf(N_("  {0} ({1}): {2} blocks ({4} per request: {5}), each {3}, in all {6}"), window_text(g.window),
                         counted(g.layers, N_("{0} layer"), N_("{0} layers")), group_thousands(g.total_blocks),
                         bytes_all_units(g.block_bytes), blocks_per_request_text(g), blocks_rule(g, bs),
                         bytes_all_units(g.allocated_bytes)),
                     "    ");
    }
    h += fit(sublabel(tr(N_("used"))) + bytes_all_units(p.used_bytes), kHang + " ");
    h += fit(sublabel(tr(N_("allocated"))) + bytes_all_units(p.allocated_bytes), kHang + " ");
    h += fit(sublabel(tr(N_("waste"))) + trf(N_("{0} ({1}% of allocated, the blocks' empty slots)"),
                                         bytes_all_units(p.waste_bytes), format_real(waste_percent, 4)),
             kHang + " ");
    return h;
}

std::string human_shared_prefix(const SharedPrefixUsage& u) {
    std::string h = "\n" + fit(trf(N_("Shared prefix of {0}, {1}, blocks of {2} (copy-on-write)"), tokens_count(u.prefix),
                                   counted(u.requests, N_("{0} request"), N_("{0} requests")), tokens_count(u.block_size)));
    h += fit(sublabel(tr(N_("shared"))) + trf(N_("{0} full blocks, held once"), u.shared_blocks), kHang + " ");
    h += fit(sublabel(tr(N_("partial"))) +
                 (u.partial_tokens ? trf(N_("the last prefix block holds {0} of {1} tokens: each request copies it on "
                                            "its first write"),
                                         u.partial_tokens, u.block_size)
                                   : tr("none: the prefix ends on a block boundary")),
             kHang + " ");
    h += fit(sublabel(tr(N_("blocks"))) + trf(N_("{0} = {1} + {2} × {3} (unshared: {4})"), u.total_blocks, u.shared_blocks,
                                          u.requests, u.own_blocks, u.unshared_blocks),
             kHang + " ");
    h += fit(sublabel(tr(N_("bytes"))) + bytes_all_units(u.total_bytes), kHang + " ");
    h += fit(sublabel(tr(N_("unshared"))) + bytes_all_units(u.unshared_bytes), kHang + " ");
    h += fit(sublabel(tr(N_("saved"))) + bytes_all_units(u.saved_bytes), kHang + " ");
    return h;
}

std::string human_tp(const TpShare& t) {
    const std::uint64_t n = t.devices;
    std::string h = "\n" + fit(trf(N_("Tensor parallel over {0}: each holds {1}"),
                                   counted(n, N_("{0} device"), N_("{0} devices")), bytes_all_units(t.per_device_bytes)),
                               "  ");
    if (t.latent_replicated)
        h += fit(tr("  the MLA latent is shared by all heads, so every device holds all of it: no saving from --tp"), "  ");
    else if (t.replicated)
        h += fit(trf(N_("  {0} devices > H_kv: each K/V head is replicated on {1} devices, so the per-device figure "
                        "stops shrinking at 1 head ({2} in all, over the {0} devices)"),
                     n, t.replication, bytes_all_units(t.all_devices_bytes)),
                 "  ");
    else
        h += fit(trf(N_("  {0} per device per layer (H_kv / {1})"),
                     counted(t.heads_per_device, N_("{0} K/V head"), N_("{0} K/V heads")), n),
                 "  ");
    return h;
}

std::string concurrency_parts(const PagedUsage& one) {
    std::string parts;
    for (const auto& g : one.groups)
        parts += fmt::format("{}{} × {} ({})", parts.empty() ? "" : " + ", g.total_blocks, bytes_all_units(g.block_bytes),
                             g.window ? trf(N_("sliding W={0}"), g.window) : tr("full"));
    return parts;
}

// What one device of a tensor-parallel group holds of the cache (TpShare, as kv_spec_per_device split it).
std::string kv_share(const TpShare& t) {
    if (t.latent_replicated) return tr(N_("each device holds the whole MLA latent (it is not split by heads)"));
    if (t.replicated)
        return trf(N_("each device holds 1 K/V head (each head on {0} devices)"), t.replication);
    return trf(N_("each device holds 1/{0} of the K/V heads"), t.devices);
}

std::string human_budget(const KvMemBudget& b) {
    const KvBudget& f = b.fit;
    const std::string per_dev = b.devices > 1 ? trf(N_(" per device (--tp {0})"), b.devices) : "";
    std::string h = "\n" + fit(label(N_("Budget")) + trf(N_("{0} per device"), bytes_all_units(f.budget_bytes)));
    h += fit(sublabel(tr(N_("weights")), 10) + bytes_all_units(b.weights_bytes) + "   [" +
             (b.weights_given ? std::string("--weights-bytes") : b.weights_from.localized()) + "]");
    if (b.devices > 1)
        h += fit(sublabel(tr(N_("weights per device")), 20) + trf(N_("ceil(W / {0}) = {1}; {2} ({3} per token)"), b.devices,
                                                                  bytes_all_units(f.weights_bytes), kv_share(b.share),
                                                                  bytes_all_units(b.bytes_per_token_per_device)));
    h += fit(sublabel(tr(N_("for KV")), 10) + bytes_all_units(f.available_bytes) + per_dev);
    if (f.max_tokens)
        h += fit(sublabel(tr(N_("most tokens cached")), 25) +
                 trf(N_("{0} (floor(available / s_token) = floor({1} / {2})){3}"), group_thousands(*f.max_tokens),
                     f.available_bytes, b.bytes_per_token_per_device, per_dev));
    if (f.max_batch)
        h += fit(sublabel(trf(N_("largest batch at S={0}"), group_thousands(*f.seq_len)), 0, 3) +
                 trf(b.devices > 1 ? N_("{0} ({1} each per device)") : N_("{0} ({1} each)"),
                     counted(*f.max_batch, N_("{0} request"), N_("{0} requests")), bytes_all_units(*f.request_bytes)));
    if (f.max_blocks)
        h += fit(sublabel(trf(N_("whole blocks of {0}"), *f.block_size), 0, 6) +
                 trf(N_("{0} ({1} each)"), group_thousands(*f.max_blocks), bytes_all_units(*f.block_bytes)));
    if (f.max_concurrency && f.blocks_per_request)
        h += fit(sublabel(tr(N_("concurrent requests")), 25) +
                 trf(N_("{0} (each needs {1} blocks at S={2})"), *f.max_concurrency, *f.blocks_per_request,
                     group_thousands(*f.seq_len)));
    else if (f.max_concurrency)
        h += fit(sublabel(tr(N_("concurrent requests")), 25) +
                 trf(N_("{0} (each allocates {1} = {2} at S={3})"), *f.max_concurrency,
                     bytes_all_units(f.request_paged->allocated_bytes), concurrency_parts(*f.request_paged),
                     group_thousands(*f.seq_len)));
    return h;
}

std::string to_human(const KvMemResult& r) {
    std::string h = human_model(r) + human_per_token(r);
    if (r.kv) h += human_requests(r);
    if (!r.head_sharing.empty()) h += human_head_sharing(r);
    if (r.paged) h += human_paged(*r.paged, *r.paged_waste_percent);
    if (r.shared_prefix) h += human_shared_prefix(*r.shared_prefix);
    if (r.tensor_parallel) h += human_tp(*r.tensor_parallel);
    if (r.budget) h += human_budget(*r.budget);
    return h;
}

// ---------------------------------------------------------------- --explain

std::string explain_per_token(const KvMemResult& r) {
    std::string x;
    if (r.uniform) {
        const KvLayer& l0 = r.model.spec.layers.front();
        // A sub-byte product (1-bit elements, odd int4 widths) is stored in whole bytes: say so.
        const std::string rounded =
            r.token_bits % 8 ? trf(N_("{0} B, rounded up to whole bytes: "), exact_ratio(r.token_bits, 8)) : "";
        x += tr("Bytes per token (K and V, every layer):") + "\n";
        x += fit(fmt::format("  s_token = 2·L·H_kv·d·b = 2 × {} × {} × {} × {} = {}{}", r.layers, l0.h_kv, l0.d_k,
                             b_text(l0.bits_k), rounded, bytes_all_units(r.bytes_per_token)),
                 "    ");
        return x;
    }
    x += tr("Bytes per token, layer by layer (second document's general form):") + "\n";
    x += "  s_token = Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l)\n";
    for (const auto& [range, l] : layer_runs(r.model.spec)) {
        // The layer's bytes as a fraction where its bits do not fill the last byte.
        const std::uint64_t bits = static_cast<std::uint64_t>(l.h_kv) * (static_cast<std::uint64_t>(l.d_k) * l.bits_k +
                                                                        static_cast<std::uint64_t>(l.d_v) * l.bits_v);
        const std::string value = exact_ratio(bits, 8);  // exact: the sum over layers rounds once, below
        x += fit(trf(one_layer(range) ? N_("  layer {0}: {1} × ({2} × {3} + {4} × {5}) = {6} B per layer")
                         : N_("  layers {0}: {1} × ({2} × {3} + {4} × {5}) = {6} B per layer"),
                     range, l.h_kv, l.d_k, b_text(l.bits_k), l.d_v, b_text(l.bits_v), value),
                 "    ");
    }
    const std::string rounded =
        r.token_bits % 8 ? trf(N_("{0} B, rounded up to whole bytes: "), exact_ratio(r.token_bits, 8)) : "";
    x += fit("  s_token = " + rounded + bytes_all_units(r.bytes_per_token), "    ");
    return x;
}

std::string explain_sum(const KvMemResult& r) {
    std::string sum;
    for (std::size_t i = 0; i < r.requests.size() && i < 8; ++i) {
        const auto& [len, count] = r.requests[i];
        sum += (i ? " + " : "") + (count == 1 ? std::to_string(len) : fmt::format("{} × {}", count, len));
    }
    if (r.requests.size() > 8) sum += fmt::format(" + … ({} requests)", r.request_count);
    return sum;
}

// Some layer's bytes a token are a fraction: each layer of each request holds whole bytes,
// ceil(s_l × S_i), so M_KV is the sum of the requests' rounded layers, not s_token × Σ S_i.
bool fractional_layers(const KvMemResult& r) {
    for (const auto& l : r.model.spec.layers)
        if (layer_token_bits(l) % 8 != 0) return true;
    return false;
}

std::string explain_rounded_requests(const KvMemResult& r) {
    const KvBreakdown& kv = *r.kv;
    std::string values;
    for (std::size_t i = 0; i < r.requests.size() && i < 8; ++i) {
        const std::uint64_t count = r.requests[i].count;
        values += (i ? " + " : "") + (count == 1 ? "" : fmt::format("{} × ", count)) + std::to_string(kv.per_request_bytes[i]);
    }
    std::string x = "  " + tr("M_KV = Σ_i Σ_l ceil(s_l × S_i)   (each layer of each request holds whole bytes)") + "\n";
    if (r.requests.size() <= 8) x += fit("       = " + values, "         ");
    x += fit("       = " + bytes_all_units(kv.total_bytes), "         ");
    return x;
}

std::string explain_totals(const KvMemResult& r) {
    const KvBreakdown& kv = *r.kv;
    std::string x = "\n" + tr("KV bytes of the requests:") + "\n";
    if (r.uniform && r.same_length) {
        const KvLayer& l0 = r.model.spec.layers.front();
        x += "  M_KV = 2·L·B·S·H_kv·d·b\n";
        if (fractional_layers(r)) {
            // Sub-byte elements: one layer of one request is a fraction of a byte; each is rounded up.
            const std::uint64_t layer_request = kv.per_layer_bytes.front() / r.request_count;
            x += fit(fmt::format("       = {} × {} × ceil(2 × {} × {} × {} × {}) = {} × {} × {}", r.layers, r.request_count,
                                 r.requests.front().seq_len, l0.h_kv, l0.d_k, b_text(l0.bits_k), r.layers, r.request_count,
                                 layer_request),
                     "         ");
            x += fit("         " + tr("(each layer of each request holds whole bytes)"), "         ");
        } else {
            x += fit(fmt::format("       = 2 × {} × {} × {} × {} × {} × {}", r.layers, r.request_count,
                                 r.requests.front().seq_len, l0.h_kv, l0.d_k, b_text(l0.bits_k)),
                     "         ");
        }
        x += fit("       = " + bytes_all_units(kv.total_bytes), "         ");
    } else if (!r.has_window && fractional_layers(r)) {
        x += explain_rounded_requests(r);
    } else if (!r.has_window) {
        x += "  " + tr("M_KV = s_token × Σ_i S_i   (each request summed at its own length)") + "\n";
        x += fit(fmt::format("       = {} × ({}) = {} × {}", r.bytes_per_token, explain_sum(r), r.bytes_per_token,
                             r.total_tokens),
                 "         ");
        x += fit("       = " + bytes_all_units(kv.total_bytes), "         ");
    } else {
        x += fractional_layers(r) ? "  M_KV = Σ_i Σ_l ceil(H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l)·min(S_i, W_l))\n"
                                  : "  M_KV = Σ_i Σ_l H_kv,l·(d_k,l·b_k,l + d_v,l·b_v,l)·min(S_i, W_l)\n";
        for (std::size_t i = 0; i < r.requests.size() && i < 8; ++i)
            x += fit(r.requests[i].count == 1
                         ? trf(N_("  request {0} (S={1}): {2}"), i, r.requests[i].seq_len,
                               bytes_all_units(kv.per_request_bytes[i]))
                         : trf(N_("  {0} requests (S={1}): {2} each"), r.requests[i].count, r.requests[i].seq_len,
                               bytes_all_units(kv.per_request_bytes[i])),
                     "    ");
        x += fit("       = " + bytes_all_units(kv.total_bytes), "         ");
    }
    x += "  " + tr("(1 KiB = 1024 B, 1 GiB = 2^30 B; 1 GB = 10^9 B)") + "\n";
    return x;
}

// Each block table's blocks for the first requests, substituted: ceil(S / block) with full
// attention; a window's positions S − W .. S − 1 lie in blocks floor((S − W) / block) to
// floor((S − 1) / block), one more than ceil(W / block) when they straddle a boundary.
std::string explain_paged(const KvMemResult& r, const PagedUsage& p) {
    const std::uint64_t bs = p.block_size;
    std::string x = "\n" + fit(trf(N_("Paged allocation, blocks of {1}: a request holds ceil(S / {0}) blocks with full "
                                      "attention; with a window W < S it keeps positions S − W .. S − 1, in blocks "
                                      "floor((S − W) / {0}) to floor((S − 1) / {0})"),
                                  bs, tokens_count(bs)),
                              "  ");
    for (const auto& g : p.groups)
        for (std::size_t i = 0; i < r.requests.size() && i < 4; ++i) {
            const std::uint64_t s = r.requests[i].seq_len;
            const std::string head = "  " + window_text(g.window) + fmt::format(", S={}: ", s);
            if (g.window == 0 || g.window >= s)
                x += fit(head + fmt::format("ceil({} / {}) = {}", s, bs, g.blocks_per_request[i]), "    ");
            else
                x += fit(head + fmt::format("floor(({} − 1) / {}) − floor(({} − {}) / {}) + 1 = {} − {} + 1 = {}", s, bs, s,
                                            g.window, bs, g.spans_per_request[i].last, g.spans_per_request[i].first,
                                            g.blocks_per_request[i]),
                         "    ");
        }
    x += fit("  " + trf(N_("allocated = Σ blocks × block bytes = {0}; waste = allocated − used = {1}"),
                 bytes_all_units(p.allocated_bytes), bytes_all_units(p.waste_bytes)),
             "    ");
    return x;
}

std::string explain_options(const KvMemResult& r) {
    std::string x;
    if (!r.head_sharing.empty()) {
        const KvLayer& l0 = r.model.spec.layers.front();
        const std::uint64_t hq = *r.model.q_heads;
        x += "\n" + fit(trf(N_("Head sharing: KV bytes scale with H_kv/H_q; K and V projections are H_kv·d wide each "
                                "({0} × {1} = {2}), Q is H_q·d ({3} × {1} = {4})."),
                             l0.h_kv, l0.d_k, *r.kv_proj_width, hq, *r.q_proj_width),
                         "  ");
    }
    if (const auto& p = r.paged)
        x += explain_paged(r, *p);
    if (const auto& t = r.tensor_parallel)
        x += "\n" + fit(t->latent_replicated
                             ? trf(N_("Per device with {0}-way tensor parallelism: the MLA latent is not split by heads, so "
                                      "every device holds all of it, {1}."),
                                   t->devices, bytes_all_units(t->per_device_bytes))
                             : trf(N_("Per device with {0}-way tensor parallelism: H_kv per device = {1}, so {2} per "
                                      "device."),
                                   t->devices, t->heads_per_device, bytes_all_units(t->per_device_bytes)),
                         "  ");
    return x;
}

std::string explain_budget(const KvMemBudget& b) {
    const KvBudget& f = b.fit;
    // Per device the weights are ceil(W / N): each device holds a whole byte of a split one.
    std::string x = "\n" + fit(b.devices > 1 ? trf(N_("Budget: available = budget − ceil(weights / {0}) = {1} − {2} = {3} B"),
                                                   b.devices, f.budget_bytes, f.weights_bytes, f.available_bytes)
                                             : trf(N_("Budget: available = budget − weights = {0} − {1} = {2} B"),
                                                   f.budget_bytes, f.weights_bytes, f.available_bytes),
                               "  ");
    if (f.max_tokens)
        x += fit(trf(N_("  max tokens = floor({0} / {1}) = {2}"), f.available_bytes, b.bytes_per_token_per_device,
                             *f.max_tokens), "    ");
    if (f.max_batch)
        x += fit(trf(N_("  max batch at S={0} = floor({1} / {2}) = {3}"), *f.seq_len, f.available_bytes, *f.request_bytes,
                             *f.max_batch), "    ");
    if (f.max_blocks)
        x += fit(trf(N_("  blocks = floor({0} / {1}) = {2}"), f.available_bytes, *f.block_bytes, *f.max_blocks), "    ");
    if (f.max_concurrency && f.blocks_per_request)
        x += fit(trf(N_("  concurrency = floor(blocks / blocks per request) = floor({0} / {1}) = {2}"), *f.max_blocks,
                             *f.blocks_per_request, *f.max_concurrency), "    ");
    else if (f.max_concurrency)
        x += fit(trf(N_("  concurrency = floor(available / allocated per request) = floor({0} / {1}) = {2}"),
                             f.available_bytes, f.request_paged->allocated_bytes, *f.max_concurrency), "    ");
    return x;
}

std::string to_explain(const KvMemResult& r) {
    std::string x = explain_per_token(r);
    if (r.kv) x += explain_totals(r) + explain_options(r);
    // The shared prefix has no formula of its own beyond the text's block count.
    if (r.shared_prefix) x += human_shared_prefix(*r.shared_prefix);
    if (r.budget) x += explain_budget(*r.budget);
    return x;
}

// ---------------------------------------------------------------- --csv tables (the JSON's names and exact figures)
// Only --csv prints these, and it names each column by its key (csv_column_name): the headers say the same.

std::string num(std::uint64_t v) { return std::to_string(v); }

Table requests_table(const KvMemResult& r) {
    std::vector<std::size_t> rows(r.requests.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    const std::vector<Column<std::size_t>> columns = {
        {"seq_lens", "seq_lens", [&](std::size_t i) { return num(r.requests[i].seq_len); }},
        {"request_counts", "request_counts", [&](std::size_t i) { return num(r.requests[i].count); }},
        {"per_request_bytes", "per_request_bytes", [&](std::size_t i) { return num(r.kv->per_request_bytes[i]); }}};
    return columns_table(columns, rows);
}

// A row per layer; the JSON keeps the layers as runs of equal ones (model.layer_runs), so the keys
// name a run's figures, the first run standing for all in the check, and each layer's bytes are
// in /bytes_per_token_per_layer, at the layer's index.
Table layers_table(const KvMemResult& r) {
    const std::vector<KvLayer>& layers = r.model.spec.layers;
    auto field = [&layers](auto f) { return [&layers, f](std::size_t i) { return num(layers[i].*f); }; };
    const std::vector<Column<std::size_t>> columns = {
        {"#layer", "layer", [](std::size_t i) { return num(i); }},
        {"h_kv", "h_kv", field(&KvLayer::h_kv)},
        {"d_k", "d_k", field(&KvLayer::d_k)},
        {"d_v", "d_v", field(&KvLayer::d_v)},
        {"bits_k", "bits_k", field(&KvLayer::bits_k)},
        {"bits_v", "bits_v", field(&KvLayer::bits_v)},
        {"window", "window", [&layers](std::size_t i) { return num(layers[i].window); }},  // 0: full attention
        {"latent", "latent", [&layers](std::size_t i) { return csv_flag(layers[i].latent); }},
        {"/bytes_per_token_per_layer", "bytes_per_token_per_layer", [&r](std::size_t i) { return num(r.bytes_per_token_per_layer[i]); }}};
    std::vector<std::size_t> rows(layers.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    return columns_table(columns, rows);
}

Table paged_table(const PagedUsage& p) {
    const std::uint64_t block_size = p.block_size;
    const std::vector<Column<PagedGroup>> columns = {
        {"window", "window", [](const PagedGroup& g) { return num(g.window); }},  // 0: full attention
        {"layers", "layers", [](const PagedGroup& g) { return num(g.layers); }},
        {"block_size", "block_size", [block_size](const PagedGroup&) { return num(block_size); }},
        {"block_bytes", "block_bytes", [](const PagedGroup& g) { return num(g.block_bytes); }},
        {"total_blocks", "total_blocks", [](const PagedGroup& g) { return num(g.total_blocks); }},
        {"allocated_bytes", "allocated_bytes", [](const PagedGroup& g) { return num(g.allocated_bytes); }}};
    return columns_table(columns, p.groups);
}

}  // namespace

Report kv_mem_report(const KvMemResult& r) {
    Report rep;
    rep.json = kv_mem_json(r);
    rep.human = to_human(r);
    rep.explain = to_explain(r);
    if (r.kv) rep.add_table("requests", requests_table(r), "");
    rep.add_table("layers", layers_table(r), "/model/layer_runs");
    if (!r.head_sharing.empty()) rep.add_table("head-sharing", columns_table(head_sharing_columns(r), r.head_sharing), "/head_sharing");
    if (r.paged) rep.add_table("paged", paged_table(*r.paged), "/paged/groups");
    return rep;
}

Report kv_mem_models_report(const std::vector<ShippedModel>& models) {
    Report rep;
    const std::vector<Column<ShippedModel>> columns = {
        {"name", NC_("models", "model"), [](const ShippedModel& m) { return m.name; }},
        {"source", NC_("models", "source"), [](const ShippedModel& m) { return m.source; }}};
    Table t = columns_table(columns, models);
    t.right_align = {false, false};
    rep.json["models"] = json::array();
    for (const auto& m : models) rep.json["models"].push_back({{"name", m.name}, {"source", m.source}});
    rep.human = tr("Shipped model configs (examples/models/, use with --model NAME):") + "\n" +
                render_table(in_words(t, "models"));
    rep.explain = rep.human;
    rep.add_table("models", t, "/models");
    return rep;
}

std::string kv_mem_footer() {
    return examples_footer(
        {"inferlab kv-mem --layers 32 --kv-heads 8 --head-dim 128 --seq-len 8192 --kv-dtype bf16",
         "    → s_token = 131,072 B = 128 KiB; M_KV = 1,073,741,824 B = 1 GiB = 1.073741824 GB",
         "inferlab kv-mem --layers 40 --kv-heads 8 --head-dim 128 --kv-dtype bf16 --seq-len 8192,8192,4096",
         "inferlab kv-mem --layers 32 --kv-heads 8 --q-heads 32 --hidden-size 4096 --seq-len 8Ki --kv-dtype bf16",
         "inferlab kv-mem --model llama-3-8b --seq-len 8192 --batch 8 --block-size 16 --tp 4",
         "inferlab kv-mem --model llama-3-8b --budget 80GiB --seq-len 8192 --block-size 16",
         "inferlab kv-mem --model llama-3-8b --seq-len 8192,4096 --block-size 16 --csv --table paged"},
        // One paragraph per line: the help formatter wraps each at the terminal's width.
        tr("Sizes: B, kB/MB/GB/TB (10^3k) or KiB/MiB/GiB/TiB (2^10k); bare G is rejected as ambiguous.\n"
           "Token counts: 8192, 8Ki (= 8192) or 8k (= 8000); uppercase 8K is rejected as ambiguous.\n"
           "Lists: commas separate requests (8192,4096); a list that reads as one number with thousands groups "
           "(8,192 or 1,000,000) is rejected: write 8192, or put a space after each comma (8, 192).\n"
           "CSV tables (--csv --table NAME): requests (the default), layers, head-sharing (with H_q), paged (with "
           "--block-size); --list-models --csv: models.\n"
           "Rules for real configs (each stated in the output): sliding windows without layer_types: gemma2 "
           "alternates (even layers slide), gemma3 and cohere2 make every n-th layer global "
           "(sliding_window_pattern, default 6 and 4), mistral/mixtral/phi3 slide every layer, qwen2/qwen3 slide "
           "from max_window_layers on only with use_sliding_window; any other model_type with a window is refused "
           "(add layer_types). No tie_word_embeddings: the model type's Hugging Face default (Gemma, Gemma-2/3, "
           "Cohere-2, GPT-2 tied; Llama, Mistral, Qwen, Phi-3, DeepSeek untied). No torch_dtype: give --kv-dtype "
           "(and --weight-dtype for --budget); nothing is assumed.\n"
           "JSON keys (null where a figure does not apply): total_bytes, bytes_per_token (null with sliding layers), "
           "bytes_per_token_per_layer, per_request_bytes, per_layer_bytes, seq_lens, request_counts, model, "
           "head_sharing, paged, tensor_parallel, budget, mla, shared_prefix (see the README)."));
}

}  // namespace inferlab::app
