// inferlab model pitfall: the documents' warnings run as experiments (lib: model/pitfall.hpp).
// This file declares the options, calls run_pitfall once, and prints its result four ways.
#include <fmt/format.h>

#include <memory>

#include "common.hpp"
#include "inferlab/error.hpp"
#include "inferlab/model/pitfall.hpp"
#include "inferlab/report.hpp"
#include "inferlab/units.hpp"
#include "model_common.hpp"

namespace inferlab::app {
namespace {

using namespace inferlab::model;

struct PitfallOptions {
    ModelSource src;
    std::string name, sample_seed = "1";
    bool list = false;
    OutputFlags flags;
};

nlohmann::json opt_json(const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
// A missing number: "-" in text, an empty cell in CSV.
std::string opt_text(const std::optional<int>& v, const char* missing = "-") { return v ? std::to_string(*v) : missing; }

// ---- printers ----
Table positions_table(const PitfallResult& r) {
    Table t{{"pos", "token", "correct err", "broken err", "next: correct", "broken"}, {}, {}};
    for (const auto& p : r.positions)
        t.rows.push_back({std::to_string(p.pos), std::to_string(p.token), fmt::format("{:.2e}", p.correct_err),
                          fmt::format("{:.2e}", p.broken_err), std::to_string(p.correct_argmax), std::to_string(p.broken_argmax)});
    return t;
}

Table checks_table(const PitfallResult& r, const char* missing = "-") {
    Table t{{"§4.3 check", "broken: step", "at pos", "correct"}, {}, {}};
    for (const auto& c : r.checks)
        t.rows.push_back({c.name, opt_text(c.broken_step, missing), opt_text(c.broken_position, missing),
                          c.fired_on_correct ? "FIRED" : "quiet"});
    return t;
}

// `text` after `lead`, wrapped at word boundaries to text_width() (80, or $COLUMNS), continuation
// lines indented 4.
std::string wrapped(const std::string& lead, const std::string& text) {
    std::string out = lead, word;
    std::size_t col = display_width(lead);
    auto flush = [&] {
        if (word.empty()) return;
        if (col + 1 + display_width(word) > text_width()) out += "\n   ", col = 3;
        out += " " + word;
        col += 1 + display_width(word);
        word.clear();
    };
    for (char c : text) c == ' ' ? flush() : void(word += c);
    flush();
    return out + "\n";
}

std::string header_text(const PitfallResult& r) {
    std::string h = wrapped(r.info.name + ":", r.info.warning) + wrapped("  source:", r.info.source) +
                    wrapped("  broken path:", r.info.deviation);
    for (const auto& in : r.inputs) h += wrapped("  " + in.name + ":", in.value);
    return h;
}

std::string model_text(const PitfallResult& r) {
    std::string h = header_text(r);
    h += fmt::format("  tokens: a prompt of {}, then greedy tokens of the correct path{}\n", r.prompt_len,
                     r.other_row_correct_err ? " (batch row 1)" : "");
    h += "  err: max |logit − no-cache logit| over the vocabulary at that position\n\n";
    h += render_table(positions_table(r));
    h += fmt::format("\n  correct path: max error {:.2e} (tolerance {:.0e})\n", r.correct_max_err, r.tolerance);
    h += fmt::format("  broken path:  max error {:.2e}, past the tolerance from position {}\n", r.broken_max_err,
                     opt_text(r.first_wrong_pos));
    if (r.other_row_correct_err)
        h += fmt::format("  batch row 0 (no padding): max error {:.2e} correct, {:.2e} broken\n", *r.other_row_correct_err,
                         *r.other_row_broken_err);
    h += r.parts_at ? fmt::format("  generation parts after position {}\n", *r.parts_at)
                    : std::string("  greedy generation does not part on these tokens\n");
    h += "\n" + render_table(checks_table(r));
    h += wrapped("  caught by:", r.caught_by);
    return h;
}

Table quantities_table(const PitfallResult& r) {
    Table t{{"quantity", "correct", "shortcut", "unit"}, {}, {}};
    for (const auto& q : r.quantities)
        t.rows.push_back({q.name, format_real(q.correct, 10), format_real(q.broken, 10), q.unit});
    return t;
}

std::string calculator_text(const PitfallResult& r) {
    std::string h = header_text(r) + "\n" + render_table(quantities_table(r));
    if (r.fit_p_correct)
        h += fmt::format("  χ² p-value against p: min(1, p/q) {:.3g}, shortcut {:.3g}\n", *r.fit_p_correct, *r.fit_p_broken);
    h += wrapped("  caught by:", r.caught_by);
    return h;
}

Table same_table(const SameDistribution& s) {
    Table t{{"first token", "p", "plain", "speculative"}, {}, {}};
    for (std::size_t c = 0; c < s.cells.size(); ++c)
        t.rows.push_back({s.cells[c], fmt::format("{:.4f}", s.cell_p[c]), std::to_string(s.plain_counts[c]),
                          std::to_string(s.speculative_counts[c])});
    return t;
}

std::string same_text(const PitfallResult& r) {
    const SameDistribution& s = *r.same;
    auto join = [](const std::vector<int>& v) {
        std::string out;
        for (int t : v) out += (out.empty() ? "" : ",") + std::to_string(t);
        return out;
    };
    std::string h = header_text(r);
    h += fmt::format("  sample seed {}: plain       {}\n", s.first_seed, join(s.plain_text));
    h += fmt::format("  sample seed {}: speculative {}\n\n", s.first_seed, join(s.speculative_text));
    h += render_table(same_table(s));
    h += fmt::format("  {} seeds, χ² against p: plain p-value {:.3g}, speculative {:.3g}\n", s.seeds, s.plain_p_value,
                     s.speculative_p_value);
    h += wrapped("  caught by:", r.caught_by);
    return h;
}

nlohmann::json result_json(const PitfallResult& r) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& in : r.inputs) inputs.push_back({{"name", in.name}, {"value", in.value}});
    nlohmann::json j = {{"inputs", inputs}, {"derivation", r.derivation},
                        {"other_row_correct_err", opt_json(r.other_row_correct_err)},
                        {"other_row_broken_err", opt_json(r.other_row_broken_err)},
                        {"name", r.info.name},       {"warning", r.info.warning},       {"source", r.info.source},
                        {"deviation", r.info.deviation}, {"uses_model", r.info.uses_model}, {"caught_by", r.caught_by},
                        {"tokens", r.tokens},         {"prompt_len", nullptr},          {"tolerance", nullptr},
                        {"correct_max_err", nullptr}, {"broken_max_err", nullptr},      {"first_wrong_pos", opt_json(r.first_wrong_pos)},
                        {"parts_at", opt_json(r.parts_at)}, {"positions", nlohmann::json::array()}, {"checks", nlohmann::json::array()},
                        {"quantities", nlohmann::json::array()}, {"fit_p_correct", opt_json(r.fit_p_correct)},
                        {"fit_p_broken", opt_json(r.fit_p_broken)}, {"same_distribution", nullptr}};
    if (!r.positions.empty())
        j["prompt_len"] = r.prompt_len, j["tolerance"] = r.tolerance, j["correct_max_err"] = r.correct_max_err,
        j["broken_max_err"] = r.broken_max_err;
    for (const auto& p : r.positions)
        j["positions"].push_back({{"pos", p.pos}, {"token", p.token}, {"correct_err", p.correct_err}, {"broken_err", p.broken_err},
                                  {"correct_next", p.correct_argmax}, {"broken_next", p.broken_argmax}});
    for (const auto& c : r.checks)
        j["checks"].push_back({{"name", c.name}, {"rule", c.rule}, {"broken_step", opt_json(c.broken_step)},
                               {"broken_position", opt_json(c.broken_position)}, {"fired_on_correct", c.fired_on_correct}});
    for (const auto& q : r.quantities)
        j["quantities"].push_back({{"name", q.name}, {"correct", q.correct}, {"shortcut", q.broken}, {"unit", q.unit}});
    if (r.same)
        j["same_distribution"] = {{"prompt", r.same->prompt}, {"plain_text", r.same->plain_text}, {"speculative_text", r.same->speculative_text},
                                  {"sample_seed", r.same->first_seed}, {"seeds", r.same->seeds}, {"cells", r.same->cells},
                                  {"cell_p", r.same->cell_p}, {"plain_counts", r.same->plain_counts},
                                  {"speculative_counts", r.same->speculative_counts},
                                  {"plain_p_value", r.same->plain_p_value}, {"speculative_p_value", r.same->speculative_p_value}};
    return j;
}

// --explain: the text, then the formula or deviation with its values and the result.
std::string explain_text(const PitfallResult& r, const std::string& text) {
    std::string h = text + "\nHow it is computed:\n";
    for (const auto& line : r.derivation) h += wrapped("  -", line);
    if (!r.positions.empty())
        h += "A check firing on the correct path would be a bug of the experiment itself;\n"
             "the tests assert that it never does.\n";
    return h;
}

void print_result(const PitfallResult& r, const OutputFlags& flags) {
    Report rep;
    rep.json = result_json(r);
    if (r.same) {
        rep.human = same_text(r);
        rep.add_table("cells", same_table(*r.same));
    }
    else if (r.positions.empty()) {
        rep.human = calculator_text(r);
        rep.add_table("quantities", quantities_table(r));
    }
    else {
        rep.human = model_text(r);
        rep.add_table("positions", positions_table(r));
        rep.add_table("checks", checks_table(r, ""));
    }
    rep.explain = explain_text(r, rep.human);
    emit(rep, flags);
}

void print_list(const OutputFlags& flags) {
    Report rep;
    rep.json = {{"pitfalls", nlohmann::json::array()}};
    Table t{{"name", "what the documents warn against"}, {}, {false, false}};
    for (const auto& p : pitfall_list()) {
        rep.json["pitfalls"].push_back(
            {{"name", p.name}, {"warning", p.warning}, {"source", p.source}, {"deviation", p.deviation}, {"uses_model", p.uses_model}});
        t.rows.push_back({p.name, p.warning});
    }
    rep.human = render_table(t, "");
    rep.explain = rep.human;
    rep.add_table("pitfalls", t);
    emit(rep, flags);
}

void run_model_pitfall(const PitfallOptions& o, const CLI::App& sub) {
    if (o.list && !o.name.empty()) throw InputError("NAME", o.name, "is not taken with --list (which lists them all)");
    if (o.list) return print_list(o.flags);
    if (o.name.empty()) throw InputError("NAME is required: a pitfall name, or --list to see them");
    // Before the weights are made: a bad name costs nothing.
    const PitfallInfo& info = find_pitfall("NAME", o.name);
    const std::uint64_t seed = parse_nonnegative_int("--sample-seed", o.sample_seed);
    if (!info.uses_model) {
        // A calculator: its numbers are the document's, no model is made, and a model flag would do nothing.
        for (const char* flag : {"--checkpoint", "--config", "--model", "--seed"})
            if (given(sub, flag))
                throw InputError(flag, sub.get_option(flag)->as<std::string>(),
                                 "has no effect on " + o.name + ", a calculator pitfall that uses no model");
        if (!info.uses_seed && given(sub, "--sample-seed"))
            throw InputError("--sample-seed", o.sample_seed, "has no effect on " + o.name + ", which draws nothing");
        return print_result(run_pitfall(o.name, nullptr, seed), o.flags);
    }
    auto w = load(o.src);
    CpuBackend cpu(cpu_backend_options(1, ""));  // INFERLAB_KERNELS, as on the other model commands
    Transformer m(*w, cpu);
    print_result(run_pitfall(o.name, &m, seed), o.flags);
}

}  // namespace

void setup_model_pitfall(CLI::App* model) {
    auto o = std::make_shared<PitfallOptions>();
    CLI::App* s = model->add_subcommand("pitfall", "The documents' warnings as experiments: the right and the broken path, side by side");
    s->add_option("NAME", o->name, "the pitfall (see --list)");
    s->add_flag("--list", o->list, "list the pitfalls");
    add_source(s, o->src);
    add_sample_seed(s, o->sample_seed);
    add_output_flags(*s, o->flags, true);
    s->footer(examples_footer({"inferlab model pitfall --list", "inferlab model pitfall top-left-mask",
                               "inferlab model pitfall stale-cache --json", "inferlab model pitfall same-distribution"},
                              "--sample-seed draws the prompt tokens (and, for same-distribution, the first sample seed).\n"
                              "JSON keys: inputs[]{name, value}, derivation, other_row_correct_err,\n"
                              "other_row_broken_err, name, warning, source, deviation, uses_model, caught_by, tokens,\n"
                              "prompt_len,\n"
                              "tolerance, correct_max_err, broken_max_err, first_wrong_pos, parts_at,\n"
                              "positions[]{pos, token, correct_err, broken_err, correct_next, broken_next},\n"
                              "checks[]{name, rule, broken_step, broken_position, fired_on_correct},\n"
                              "quantities[]{name, correct, shortcut, unit}, fit_p_correct, fit_p_broken,\n"
                              "same_distribution{prompt, plain_text, speculative_text, sample_seed, seeds, cells, cell_p,\n"
                              "plain_counts, speculative_counts, plain_p_value, speculative_p_value} (null when absent).\n"
                              "--list --json: pitfalls[]{name, warning, source, deviation, uses_model}."));
    s->callback([o, s] { run_model_pitfall(*o, *s); });
}

}  // namespace inferlab::app
