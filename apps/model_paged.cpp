// inferlab model paged: a paged KV cache to watch (lib: model/run/paged_sim.hpp). This file declares
// the options, calls compare_sharing once, and prints its result four ways.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "common.hpp"
#include "options.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/model/run/paged_sim.hpp"
#include "model_common.hpp"
#include "model_text.hpp"
#include "paged_options.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

struct PagedOptions {
    ModelSource src;
    PagedFlags paged;
    bool no_share = false;
    OutputFlags flags;
};

const PagedDefaults& defaults() {
    static const PagedDefaults d;
    return d;
}


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

// A row of the CSV: one logical block of a sequence at a step (no block: the sequence holds none).
struct BlockRow {
    const PagedStep* step;
    const SeqState* seq;
    std::optional<std::size_t> block;
};

// CSV: one row per logical block of each sequence at each step (a sequence holding no block: one
// row, its block cells empty), numbers only; the text shows the same as "0→5 1→7". The rows are
// steps[].seqs[] of --json (the step's number in the object that holds them), a block by its index
// in the sequence's table and refs; every block but the last is full, the last holds last_fill.
std::vector<Column<BlockRow>> block_columns(int block_size) {
    auto of_block = [](auto cell) {
        return [cell](const BlockRow& r) { return r.block ? cell(*r.seq, *r.block) : std::string(); };
    };
    const std::vector<Column<BlockRow>> c = {
        {"step", "step", [](const BlockRow& r) { return std::to_string(r.step->step); }},
        {"seq", "seq", [](const BlockRow& r) { return std::to_string(r.seq->seq); }},
        {"state", "state", [](const BlockRow& r) { return r.seq->state; }},
        {"length", "length (tokens)", [](const BlockRow& r) { return std::to_string(r.seq->length); }},
        {"#logical_block", "logical block", of_block([](const SeqState&, std::size_t b) { return std::to_string(b); })},
        {"table", "physical block", of_block([](const SeqState& s, std::size_t b) { return std::to_string(s.table[b]); })},
        {"refs", "refs", of_block([](const SeqState& s, std::size_t b) { return std::to_string(s.refs[b]); })},
        {"last_fill", "fill (tokens)", of_block([block_size](const SeqState& s, std::size_t b) {
             return std::to_string(b + 1 == s.table.size() ? s.last_fill : block_size);
         })}};
    return c;
}

Table steps_table(const PagedSimResult& r) {
    std::vector<BlockRow> rows;
    for (const auto& st : r.steps)
        for (const auto& s : st.seqs) {
            if (s.table.empty()) rows.push_back({&st, &s, std::nullopt});
            for (std::size_t b = 0; b < s.table.size(); ++b) rows.push_back({&st, &s, b});
        }
    return columns_table(block_columns(r.options.block_size), rows);
}

// Why bytes_saved is what it is (SharingComparison::blocks_saved): measured on the shared run at
// its peak; a zero, and an unshared run whose peak the pool capped, are said in words. `text`:
// in the reader's language (the text output), else English (--json's saving_note).
std::string saving_note(const SharingComparison& c, bool text) {
    const PagedSimResult& s = c.shared;
    const PagedSimResult& u = c.unshared;
    std::string n =
        c.blocks_saved > 0
            ? say(text, N_("sharing saves {0} at its peak (step {1}): the tables list {2}, {3} of them distinct"),
                  {counted(std::uint64_t(c.blocks_saved), "{0} block", N_("{0} blocks"), words_lang(text)), std::to_string(s.peak_step),
                   std::to_string(c.unshared_demand_blocks), std::to_string(s.peak_used_blocks)})
            : say(text, N_("sharing saves nothing at its peak (step {0}): no block is held by two sequences then"),
                  {std::to_string(s.peak_step)});
    // A sequence waits only when the pool is short (all are admitted at step 0 otherwise).
    if (u.waiting_steps > 0)
        n += say(text,
                 N_("; without sharing the pool of {0} blocks could not run every sequence at once (they waited {1} "
                    "sequence-steps; {2}, {3} recomputed), so the unshared peak of {4} blocks is what the pool allowed, "
                    "not what the run needed"),
                 {std::to_string(s.options.blocks), std::to_string(u.waiting_steps),
                  counted(std::uint64_t(u.preemptions), "{0} preemption", N_("{0} preemptions"), words_lang(text)),
                  counted(std::uint64_t(u.recomputed_tokens), "{0} token", N_("{0} tokens"), words_lang(text)),
                  std::to_string(u.peak_used_blocks)});
    return n;
}

// A sequence's state ("waiting", "running", "finished": the library's words, as JSON keeps them)
// in the reader's language.
std::string state_text(const std::string& state) {
    static const char* const kStates[] = {N_("waiting"), N_("running"), N_("finished")};
    for (const char* k : kStates)
        if (state == k) return tr(k);
    return state;
}

std::string yes_no(bool v) { return v ? tr("yes") : tr("NO"); }

// The text's table of one step: a row per sequence (steps[].seqs[] of --json), its blocks in one
// cell, long lists elided.
std::vector<Column<SeqState>> seq_columns(int block_size) {
    const std::vector<Column<SeqState>> c = {
        {"seq", N_("seq"), [](const SeqState& s) { return std::to_string(s.seq); }},
        {"state", N_("state"), [](const SeqState& s) { return state_text(s.state); }},
        {"length", N_("len"), [](const SeqState& s) { return std::to_string(s.length); }},
        {"table", N_("blocks (logical→physical)"), [](const SeqState& s) { return table_text(s, 28); }},
        {"refs", N_("refs"), [](const SeqState& s) { return refs_text(s, 12); }},
        {"last_fill", N_("last fill"), [block_size](const SeqState& s) {
             return s.table.empty() ? "-" : fmt::format("{}/{}", s.last_fill, block_size);
         }}};
    return c;
}

// "  6 × 9,216 B = 55,296 B = 54 KiB = 55.296 kB": a peak's blocks times the block's bytes.
std::string peak_bytes_line(int blocks, std::uint64_t block_bytes, std::uint64_t bytes) {
    return fmt::format("  {} × {} B = {}\n", blocks, group_thousands(block_bytes), bytes_all_units(bytes));
}

std::string step_text(const PagedStep& st, const PagedSimResult& r) {
    std::string line = trf(N_("step {0}: {1} used, {2} free{3}"), st.step, st.used_blocks, st.free_blocks,
                           st.step == r.peak_step ? tr(N_(" (the peak)")) : "");
    // The table shows the step at its fullest; the blocks finished sequences hand back come after.
    if (st.free_after != st.free_blocks) line += trf(N_("; {0} free once the finished return theirs"), st.free_after);
    std::string h = "\n" + wrap(line, "", "  ");
    for (const auto& e : st.events) h += wrap(e.localized(), "  ", "    ");
    Table t = text_table(seq_columns(r.options.block_size), st.seqs);
    t.right_align = {true, false, true, false, false, true};
    return h + render_table(t);
}

// `c` is nullptr under --no-share: only the unshared run exists, and nothing is compared.
std::string human_text(const SharingComparison* c, const PagedSimResult& r) {
    std::string h = wrap(trf(N_("Block pool: {0} blocks of {1}, {2} each"), r.options.blocks,
                             counted(std::uint64_t(r.options.block_size), "{0} token", N_("{0} tokens")),
                             bytes_all_units(r.block_bytes)),
                         "", "  ");
    h += tr(r.options.share_prefix ? N_("Prefix sharing on") : N_("No sharing")) + "\n";
    for (const auto& st : r.steps) h += step_text(st, r);
    const std::string recomputed =
        trf(N_("{0} recomputed"), counted(std::uint64_t(r.recomputed_tokens), "{0} token", N_("{0} tokens")));
    if (!c) {
        h += "\n" + trf(N_("Peak: {0} blocks at step {1}"), r.peak_used_blocks, r.peak_step) + "\n" +
             peak_bytes_line(r.peak_used_blocks, r.block_bytes, r.peak_bytes);
        h += wrap(trf(N_("Preemptions: {0} ({1}); pool whole at the end: {2}"), r.preemptions, recomputed,
                      yes_no(r.pool_whole_at_end)),
                  "", "  ");
        return h;
    }
    h += "\n" + trf(N_("Peak with sharing:    {0} blocks at step {1}"), c->shared.peak_used_blocks, c->shared.peak_step) +
         "\n" + peak_bytes_line(c->shared.peak_used_blocks, r.block_bytes, c->peak_bytes_shared);
    h += trf(N_("Peak without sharing: {0} blocks at step {1}"), c->unshared.peak_used_blocks, c->unshared.peak_step) +
         "\n" + peak_bytes_line(c->unshared.peak_used_blocks, r.block_bytes, c->peak_bytes_unshared);
    h += wrap(trf(N_("Saved: {0} ({1})."), bytes_all_units(std::uint64_t(c->bytes_saved)), saving_note(*c, true)), "", "  ");
    h += wrap(trf(N_("Copies on write: {0}; preemptions: {1} ({2}); pool whole at the end: {3}"), r.copies_on_write,
                  r.preemptions, recomputed, yes_no(r.pool_whole_at_end)),
              "", "  ");
    h += trf(N_("Logits with sharing against without: max |difference| {0}"), fmt::format("{:.2e}", c->max_logit_diff)) + "\n";
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
    const PagedSimResult& u = c ? c->unshared : r;
    nlohmann::json j = {{"blocks", r.options.blocks},
                        {"block_size", r.options.block_size},
                        {"block_bytes", r.block_bytes},
                        {"prompts", r.options.prompts},
                        {"share_prefix", r.options.share_prefix},
                        {"generated", r.generated},
                        {"steps", nlohmann::json::array()},
                        {"copies_on_write", c ? nlohmann::json(r.copies_on_write) : null},
                        {"preemptions", r.preemptions},
                        {"recomputed_tokens", r.recomputed_tokens},
                        {"preemptions_unshared", u.preemptions},
                        {"policy", "each step decodes every running sequence first; when that needs more blocks than are "
                                   "free, the most recently admitted running sequence is preempted (blocks freed, "
                                   "recomputed on readmission); a step that preempted admits nobody; waiting sequences "
                                   "are admitted first come first served"},
                        {"peak_blocks_shared", c ? nlohmann::json(c->shared.peak_used_blocks) : null},
                        {"peak_step_shared", c ? nlohmann::json(c->shared.peak_step) : null},
                        {"peak_blocks_unshared", u.peak_used_blocks},
                        {"peak_step_unshared", u.peak_step},
                        {"peak_bytes_shared", c ? nlohmann::json(c->peak_bytes_shared) : null},
                        {"peak_bytes_unshared", u.peak_bytes},
                        {"bytes_saved", c ? nlohmann::json(c->bytes_saved) : null},
                        {"saving_note", c ? nlohmann::json(saving_note(*c, false)) : null},
                        {"max_logit_diff_vs_unshared", c ? nlohmann::json(c->max_logit_diff) : null},
                        {"pool_whole_at_end", r.pool_whole_at_end}};
    for (const auto& st : r.steps) {
        nlohmann::json s = {{"step", st.step},         {"events", texts(st.events)},         {"free_blocks", st.free_blocks},
                            {"used_blocks", st.used_blocks}, {"free_after", st.free_after}, {"seqs", nlohmann::json::array()}};
        for (const auto& q : st.seqs) s["seqs"].push_back(seq_json(q));
        j["steps"].push_back(s);
    }
    return j;
}

// Each line of the note a paragraph, wrapped to the width (the English lines fit 80 as written).
std::string explain_text(const std::string& human) {
    return human + "\n" +
           wrap(tr(N_("First document, Figure 8: a sequence's logical blocks (its positions in order)\n"
                      "map to physical blocks anywhere in the pool; the model reads them in logical\n"
                      "order. A block shared by several sequences has a reference count above 1 and\n"
                      "is never written: the first write into it copies it (copy-on-write).\n"
                      "Each step is shown at its fullest: after its writes, before the sequences that\n"
                      "finished return their blocks, so the peak is the step marked \"the peak\".\n"
                      "Peak bytes = peak blocks × block bytes; kv-mem --shared-prefix computes the\n"
                      "same from the shapes alone.\n"
                      "Saved = at the shared run's peak step, the blocks its tables list minus the\n"
                      "distinct blocks held (each block held by r sequences counts r − 1), × block\n"
                      "bytes: what that moment would hold more without sharing. It is measured on the\n"
                      "shared run alone, so it is never negative; the unshared run's own peak can be\n"
                      "lower when the pool was too small for it and preempted it instead.")));
}

void run_model_paged(const PagedOptions& o) {
    auto w = load(o.src);
    CpuBackend cpu(cpu_backend_options(1, ""));  // INFERLAB_KERNELS, as on the other model commands
    Transformer m(*w, cpu);
    const PagedSimOptions so = paged_sim_options(o.paged, w->dims(), defaults());
    // --no-share runs only the unshared simulation: there is nothing to compare it with.
    std::optional<SharingComparison> c;
    std::optional<PagedSimResult> alone;
    if (o.no_share) {
        PagedSimOptions unshared = so;
        unshared.share_prefix = false;
        alone = simulate_paged(m, unshared);
    } else {
        c = compare_sharing(m, so);
    }
    const PagedSimResult& shown = c ? c->shared : *alone;
    const SharingComparison* cmp = c ? &*c : nullptr;
    Report r;
    r.json = result_json(cmp, shown);
    r.human = human_text(cmp, shown);
    r.explain = explain_text(r.human);
    r.add_table("steps", steps_table(shown), shown.steps.empty() ? "/steps" : "/steps/0/seqs");
    emit(r, o.flags);
}

}  // namespace

void setup_model_paged(CLI::App* model) {
    auto o = std::make_shared<PagedOptions>();
    CLI::App* s = model->add_subcommand("paged", tr("A paged KV cache to watch: block tables, shared prefixes, copy-on-write"));
    add_source(s, o->src);
    add_paged_flags(*s, o->paged, defaults());
    s->add_flag("--no-share", o->no_share, tr("show the run without prefix sharing"));
    add_output_flags(*s, o->flags, true);
    // Each note one paragraph: the help formatter wraps it to the width.
    s->footer(examples_footer({"inferlab model paged", "inferlab model paged --prompts '1,2,3,4,5;1,2,3,4,6;7' --blocks 8 --json"},
                              tr(N_("When the pool runs out, the most recently admitted running sequence is preempted: its "
                                    "blocks return to the pool and it is recomputed when blocks allow (vLLM's policy).\n"
                                    "JSON keys: blocks, block_size, block_bytes, prompts, share_prefix, generated, "
                                    "steps[]{step, events, free_blocks, used_blocks, free_after, seqs[]{seq, state, length, "
                                    "table, refs, last_fill, shared_from, shared_tokens}}, copies_on_write, preemptions, "
                                    "recomputed_tokens, preemptions_unshared, policy, peak_blocks_shared, peak_step_shared, "
                                    "peak_blocks_unshared, peak_step_unshared, peak_bytes_shared, peak_bytes_unshared, "
                                    "bytes_saved, saving_note, max_logit_diff_vs_unshared, pool_whole_at_end."))));
    s->callback([o] { run_model_paged(*o); });
}

}  // namespace inferlab::app
