// inferlab model paged: a paged KV cache to watch (lib: model/paged_sim.hpp). This file declares
// the options, calls compare_sharing once, and prints its result four ways.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "common.hpp"
#include "options.hpp"
#include "inferlab/error.hpp"
#include "inferlab/model/paged_sim.hpp"
#include "inferlab/units.hpp"
#include "model_common.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

struct PagedOptions {
    ModelSource src;
    std::string prompts = "1,2,3,4;1,2,3,9,9", blocks = "16", block_size = "2", steps = "3", pool_seed = "1";
    bool no_share = false;
    OutputFlags flags;
};


// `e` joined by spaces; longer than `max_cols` columns, its first and last entries kept around
// "…" (text only: --json and --csv give every entry). "-" when empty.
std::string elided(const std::vector<std::string>& e, std::size_t max_cols = 0) {
    if (e.empty()) return "-";
    auto joined = [&](std::size_t head) {
        std::string out;
        for (std::size_t i = 0; i < e.size(); ++i) {
            if (head + 1 < e.size() && i == head) out += " …", i = e.size() - 1;
            out += (out.empty() ? "" : " ") + e[i];
        }
        return out;
    };
    std::string out = joined(e.size());
    for (std::size_t keep = 3; max_cols && display_width(out) > max_cols && keep > 0; --keep) out = joined(keep);
    return out;
}

// "0→7 1→2": logical block → physical block.
std::string table_text(const SeqState& s, std::size_t max_cols = 0) {
    std::vector<std::string> e;
    for (std::size_t i = 0; i < s.table.size(); ++i) e.push_back(fmt::format("{}→{}", i, s.table[i]));
    return elided(e, max_cols);
}

std::string refs_text(const SeqState& s, std::size_t max_cols = 0) {
    std::vector<std::string> e;
    for (int r : s.refs) e.push_back(std::to_string(r));
    return elided(e, max_cols);
}

// CSV: one row per logical block of each sequence at each step (a sequence holding no block: one
// row, its block cells empty), numbers only; the text shows the same as "0→5 1→7".
Table steps_table(const PagedSimResult& r) {
    Table t{{"step", "seq", "state", "length (tokens)", "logical block", "physical block", "refs", "fill (tokens)"}, {}, {}};
    for (const auto& st : r.steps)
        for (const auto& s : st.seqs) {
            const std::vector<std::string> lead{std::to_string(st.step), std::to_string(s.seq), s.state, std::to_string(s.length)};
            if (s.table.empty()) {
                t.rows.push_back(lead);
                t.rows.back().insert(t.rows.back().end(), {"", "", "", ""});
            }
            for (std::size_t b = 0; b < s.table.size(); ++b) {
                t.rows.push_back(lead);
                // Every block but the last is full.
                const int fill = b + 1 == s.table.size() ? s.last_fill : r.options.block_size;
                t.rows.back().insert(t.rows.back().end(), {std::to_string(b), std::to_string(s.table[b]),
                                                           std::to_string(s.refs[b]), std::to_string(fill)});
            }
        }
    return t;
}

// `c` is nullptr under --no-share: only the unshared run exists, and nothing is compared.
std::string human_text(const SharingComparison* c, const PagedSimResult& r) {
    std::string h = fmt::format("Block pool: {} blocks of {} tokens, {} each\n{}\n", r.options.blocks, r.options.block_size,
                                bytes_all_units(r.block_bytes), r.options.share_prefix ? "Prefix sharing on" : "No sharing");
    for (const auto& st : r.steps) {
        h += fmt::format("\nstep {}: {} free, {} used\n", st.step, st.free_blocks, st.used_blocks);
        for (const auto& e : st.events) h += "  " + e + "\n";
        Table t{{"seq", "state", "len", "blocks (logical→physical)", "refs", "last fill"}, {}, {}};
        t.right_align = {true, false, true, false, false, true};
        for (const auto& s : st.seqs)
            t.rows.push_back({std::to_string(s.seq), s.state, std::to_string(s.length), table_text(s, 28), refs_text(s, 12),
                              s.table.empty() ? "-" : fmt::format("{}/{}", s.last_fill, r.options.block_size)});
        h += render_table(t);
    }
    if (!c) {
        h += fmt::format("\nPeak: {} blocks = {}\n", r.peak_used_blocks, bytes_all_units(r.peak_bytes));
        h += fmt::format("Preemptions: {}; pool whole at the end: {}\n", r.preemptions, r.pool_whole_at_end ? "yes" : "NO");
        return h;
    }
    h += fmt::format("\nPeak with sharing:    {} blocks = {}\n", c->shared.peak_used_blocks, bytes_all_units(c->peak_bytes_shared));
    h += fmt::format("Peak without sharing: {} blocks = {}\n", c->unshared.peak_used_blocks, bytes_all_units(c->peak_bytes_unshared));
    h += fmt::format("Copies on write: {}; preemptions: {}; pool whole at the end: {}\n", r.copies_on_write, r.preemptions,
                     r.pool_whole_at_end ? "yes" : "NO");
    h += fmt::format("Logits with sharing against without: max |difference| {:.2e}\n", c->max_logit_diff);
    return h;
}

nlohmann::json seq_json(const SeqState& s) {
    return {{"seq", s.seq},   {"state", s.state}, {"length", s.length}, {"table", s.table}, {"refs", s.refs},
            {"last_fill", s.table.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.last_fill)},
            {"shared_from", s.shared_from < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.shared_from)},
            {"shared_tokens", s.shared_tokens}};
}

nlohmann::json result_json(const SharingComparison* c, const PagedSimResult& r) {
    const nlohmann::json null;
    nlohmann::json j = {{"blocks", r.options.blocks},
                        {"block_size", r.options.block_size},
                        {"block_bytes", r.block_bytes},
                        {"prompts", r.options.prompts},
                        {"share_prefix", r.options.share_prefix},
                        {"generated", r.generated},
                        {"steps", nlohmann::json::array()},
                        {"copies_on_write", c ? nlohmann::json(r.copies_on_write) : null},
                        {"preemptions", r.preemptions},
                        {"policy", "first come first served; when a step needs more blocks than are free, the most recently "
                                   "admitted running sequence is preempted (blocks freed, recomputed on readmission)"},
                        {"peak_blocks_shared", c ? nlohmann::json(c->shared.peak_used_blocks) : null},
                        {"peak_blocks_unshared", r.options.share_prefix ? c->unshared.peak_used_blocks : r.peak_used_blocks},
                        {"peak_bytes_shared", c ? nlohmann::json(c->peak_bytes_shared) : null},
                        {"peak_bytes_unshared", r.options.share_prefix ? c->peak_bytes_unshared : r.peak_bytes},
                        {"bytes_saved", c ? nlohmann::json(c->bytes_saved) : null},
                        {"max_logit_diff_vs_unshared", c ? nlohmann::json(c->max_logit_diff) : null},
                        {"pool_whole_at_end", r.pool_whole_at_end}};
    for (const auto& st : r.steps) {
        nlohmann::json s = {{"step", st.step}, {"events", st.events}, {"free_blocks", st.free_blocks},
                            {"used_blocks", st.used_blocks}, {"seqs", nlohmann::json::array()}};
        for (const auto& q : st.seqs) s["seqs"].push_back(seq_json(q));
        j["steps"].push_back(s);
    }
    return j;
}

std::string explain_text(const std::string& human) {
    return human +
           "\nFirst document, Figure 8: a sequence's logical blocks (its positions in order)\n"
           "map to physical blocks anywhere in the pool; the model reads them in logical\n"
           "order. A block shared by several sequences has a reference count above 1 and\n"
           "is never written: the first write into it copies it (copy-on-write).\n"
           "Peak bytes = peak blocks × block bytes; kv-mem --shared-prefix computes the\n"
           "same from the shapes alone.\n";
}

std::vector<std::vector<int>> parse_prompts(const std::string& text, const Dims& d) {
    std::vector<std::vector<int>> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = text.find(';', start);
        if (text.find_first_not_of(' ', start) == (end == std::string::npos ? text.size() : end) ||
            text.find_first_not_of(' ', start) == std::string::npos)
            throw InputError("--prompts", text, "every prompt needs at least one token (a,b;c,d)");
        out.push_back(parse_token_list("--prompts", text.substr(start, end == std::string::npos ? end : end - start), d));
        if (out.back().empty()) throw InputError("--prompts", text, "every prompt needs at least one token (a,b;c,d)");
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

void run_model_paged(const PagedOptions& o) {
    auto w = load(o.src);
    CpuBackend cpu(cpu_backend_options(1, ""));  // INFERLAB_KERNELS, as on the other model commands
    Transformer m(*w, cpu);
    PagedSimOptions so;
    so.names = {"--prompts", "--blocks", "--steps"};
    so.prompts = parse_prompts(o.prompts, w->dims());
    // Checked before the int casts: a value past int's range must be an error, not a wrapped 0.
    so.blocks = static_cast<int>(parse_positive_int_at_most("--blocks", o.blocks, 1u << 20, "blocks"));
    so.block_size = static_cast<int>(parse_positive_int_at_most("--block-size", o.block_size, 65536, "tokens"));
    so.new_tokens = parse_token_count("--steps", o.steps, 0, static_cast<std::uint64_t>(w->dims().seq_len));
    so.seed = parse_nonnegative_int("--pool-seed", o.pool_seed);
    // --no-share runs only the unshared simulation: there is nothing to compare it with.
    std::optional<SharingComparison> c;
    std::optional<PagedSimResult> alone;
    if (o.no_share) {
        so.share_prefix = false;
        alone = simulate_paged(m, so);
    } else {
        c = compare_sharing(m, so);
    }
    const PagedSimResult& shown = c ? c->shared : *alone;
    const SharingComparison* cmp = c ? &*c : nullptr;
    Report r;
    r.json = result_json(cmp, shown);
    r.human = human_text(cmp, shown);
    r.explain = explain_text(r.human);
    r.add_table("steps", steps_table(shown));
    emit(r, o.flags);
}

}  // namespace

void setup_model_paged(CLI::App* model) {
    auto o = std::make_shared<PagedOptions>();
    CLI::App* s = model->add_subcommand("paged", "A paged KV cache to watch: block tables, shared prefixes, copy-on-write");
    add_source(s, o->src);
    s->add_option("--prompts", o->prompts, "prompts separated by ';' (default 1,2,3,4;1,2,3,9,9)");
    s->add_option("--blocks", o->blocks, "blocks in the pool (default 16)");
    s->add_option("--block-size", o->block_size, "tokens per block (default 2)");
    s->add_option("--steps", o->steps, "greedy tokens each sequence generates before it ends (default 3)");
    s->add_option("--pool-seed", o->pool_seed, "shuffles the pool's free list (default 1)");
    s->add_flag("--no-share", o->no_share, "show the run without prefix sharing");
    add_output_flags(*s, o->flags, true);
    s->footer(examples_footer({"inferlab model paged", "inferlab model paged --prompts '1,2,3,4,5;1,2,3,4,6;7' --blocks 8 --json"},
                              "When the pool runs out, the most recently admitted running sequence is preempted: its\n"
                              "blocks return to the pool and it is recomputed when blocks allow (vLLM's policy).\n"
                              "JSON keys: blocks, block_size, block_bytes, prompts, share_prefix, generated,\n"
                              "steps[]{step, events, free_blocks, used_blocks, seqs[]{seq, state, length, table, refs,\n"
                              "last_fill, shared_from, shared_tokens}}, copies_on_write, preemptions, policy,\n"
                              "peak_blocks_shared, peak_blocks_unshared, peak_bytes_shared, peak_bytes_unshared, bytes_saved,\n"
                              "max_logit_diff_vs_unshared, pool_whole_at_end."));
    s->callback([o] { run_model_paged(*o); });
}

}  // namespace inferlab::app
