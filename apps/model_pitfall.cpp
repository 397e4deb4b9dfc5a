// inferlab model pitfall: the documents' warnings run as experiments (lib: model/run/pitfall.hpp).
// This file declares the options, calls run_pitfall once, and prints its result four ways.
#include <fmt/format.h>

#include <memory>

#include "common.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/i18n.hpp"
#include "inferlab/base/units.hpp"
#include "inferlab/model/run/pitfall.hpp"
#include "inferlab/text/table.hpp"
#include "model_common.hpp"
#include "model_text.hpp"

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
// `text`: headers and words in the reader's language; else CSV (English headers, empty cells).
// "token" reads the same in the text, as it always has.
Table positions_table(const PitfallResult& r, bool text) {
    using P = PositionDiff;
    // --csv every digit, as the JSON; the text 3 significant digits.
    auto err = [](const char* key, const char* header, double P::*field) {
        return figure_column<P>(key, header, [field](const P& p) { return std::optional<double>(p.*field); },
                                [](double v) { return fmt::format("{:.2e}", v); });
    };
    const Column<P> correct = err("correct_err", N_("correct err"), &P::correct_err),
                    broken = err("broken_err", N_("broken err"), &P::broken_err);
    const std::vector<Column<P>> columns = {
        {"pos", N_("pos"), [](const P& p) { return std::to_string(p.pos); }},
        {"token", "token", [](const P& p) { return std::to_string(p.token); }, {}, "token"},
        correct,
        broken,
        {"correct_next", N_("next: correct"), [](const P& p) { return std::to_string(p.correct_argmax); }},
        {"broken_next", N_("broken"), [](const P& p) { return std::to_string(p.broken_argmax); }}};
    return text ? text_table(columns, r.positions) : columns_table(columns, r.positions);
}

Table checks_table(const PitfallResult& r, bool text) {
    using C = CheckOutcome;
    auto step = [](std::optional<int> C::*field) {
        return std::pair{[field](const C& c) { return opt_text(c.*field, ""); }, [field](const C& c) { return opt_text(c.*field); }};
    };
    const auto broken_step = step(&C::broken_step), broken_position = step(&C::broken_position);
    const std::vector<Column<C>> columns = {
        {"name", N_("§4.3 check"), [](const C& c) { return c.name; }},
        {"broken_step", N_("broken: step"), broken_step.first, broken_step.second},
        {"broken_position", N_("at pos"), broken_position.first, broken_position.second},
        {"fired_on_correct", N_("correct"), [](const C& c) { return csv_flag(c.fired_on_correct); },
         [](const C& c) { return tr(c.fired_on_correct ? N_("FIRED") : N_("quiet")); }}};
    return text ? text_table(columns, r.checks) : columns_table(columns, r.checks);
}

// `text` after `lead`, wrapped to text_width() (80, or $COLUMNS), continuation lines indented 4.
std::string wrapped(const std::string& lead, const std::string& text) {
    const std::size_t body = lead.find_first_not_of(' ');
    // A full-width colon ("出处：") carries its own space.
    const std::string fullwidth_colon = "：";
    const bool spaced = !(lead.size() >= fullwidth_colon.size() &&
                          lead.compare(lead.size() - fullwidth_colon.size(), fullwidth_colon.size(), fullwidth_colon) == 0);
    return wrap(lead.substr(body) + (spaced ? " " : "") + text, lead.substr(0, body), "    ");
}

std::string header_text(const PitfallResult& r) {
    std::string h = wrapped(trf(N_("{0}:"), r.info.name), tr(r.info.warning)) +
                    wrapped("  " + tr(N_("source:")), tr(r.info.source)) +
                    wrapped("  " + tr(N_("broken path:")), r.info.deviation.localized());
    for (const auto& in : r.inputs) h += wrapped("  " + trf(N_("{0}:"), tr(in.name)), in.value.localized());
    return h;
}

std::string model_text(const PitfallResult& r) {
    std::string h = header_text(r);
    h += "  " + (r.other_row_correct_err
                     ? trf(N_("tokens: a prompt of {0}, then greedy tokens of the correct path (batch row 1)"), r.prompt_len)
                     : trf(N_("tokens: a prompt of {0}, then greedy tokens of the correct path"), r.prompt_len)) + "\n";
    h += "  " + tr(N_("err: max |logit − no-cache logit| over the vocabulary at that position")) + "\n\n";
    h += render_table(positions_table(r, true));
    h += "\n  " + trf(N_("correct path: max error {0} (tolerance {1})"), fmt::format("{:.2e}", r.correct_max_err),
                      fmt::format("{:.0e}", r.tolerance)) + "\n";
    h += "  " + trf(N_("broken path:  max error {0}, past the tolerance from position {1}"), fmt::format("{:.2e}", r.broken_max_err),
                    opt_text(r.first_wrong_pos)) + "\n";
    if (r.other_row_correct_err)
        h += "  " + trf(N_("batch row 0 (no padding): max error {0} correct, {1} broken"),
                        fmt::format("{:.2e}", *r.other_row_correct_err), fmt::format("{:.2e}", *r.other_row_broken_err)) + "\n";
    h += "  " + (r.parts_at ? trf(N_("generation parts after position {0}"), *r.parts_at)
                            : tr(N_("greedy generation does not part on these tokens"))) + "\n";
    h += "\n" + render_table(checks_table(r, true));
    h += wrapped("  " + tr(N_("caught by:")), r.caught_by.localized());
    return h;
}

Table quantities_table(const PitfallResult& r, bool text) {
    using Q = PitfallQuantity;
    const std::vector<Column<Q>> columns = {
        {"name", N_("quantity"), [](const Q& q) { return q.name.text(); }, [](const Q& q) { return q.name.localized(); }},
        {"correct", N_("correct"), [](const Q& q) { return csv_number(q.correct); },
         [](const Q& q) { return format_real(q.correct, 10); }},
        {"shortcut", N_("shortcut"), [](const Q& q) { return csv_number(q.broken); },
         [](const Q& q) { return format_real(q.broken, 10); }},
        {"unit", N_("unit"), [](const Q& q) { return q.unit; }, [](const Q& q) { return q.unit.empty() ? "" : tr(q.unit); }}};
    return text ? text_table(columns, r.quantities) : columns_table(columns, r.quantities);
}

std::string calculator_text(const PitfallResult& r) {
    std::string h = header_text(r) + "\n" + render_table(quantities_table(r, true));
    if (r.fit_p_correct)
        h += "  " + trf(N_("χ² p-value against p: min(1, p/q) {0}, shortcut {1}"), fmt::format("{:.3g}", *r.fit_p_correct),
                        fmt::format("{:.3g}", *r.fit_p_broken)) + "\n";
    h += wrapped("  " + tr(N_("caught by:")), r.caught_by.localized());
    return h;
}

// One row per χ² cell, by its index into same_distribution's arrays.
Table same_table(const SameDistribution& s, bool text) {
    const std::vector<Column<std::size_t>> columns = {
        {"cells", N_("first token"), [&s](std::size_t c) { return s.cells[c].text(); },
         [&s](std::size_t c) { return s.cells[c].localized(); }},
        {"cell_p", "p", [&s](std::size_t c) { return csv_number(s.cell_p[c]); },
         [&s](std::size_t c) { return fmt::format("{:.4f}", s.cell_p[c]); }},
        {"plain_counts", N_("plain"), [&s](std::size_t c) { return std::to_string(s.plain_counts[c]); }},
        {"speculative_counts", N_("speculative"), [&s](std::size_t c) { return std::to_string(s.speculative_counts[c]); }}};
    std::vector<std::size_t> cells(s.cells.size());
    for (std::size_t c = 0; c < cells.size(); ++c) cells[c] = c;
    return text ? text_table(columns, cells) : columns_table(columns, cells);
}

std::string same_text(const PitfallResult& r) {
    const SameDistribution& s = *r.same;
    auto join = [](const std::vector<int>& v) {
        std::string out;
        for (int t : v) out += (out.empty() ? "" : ",") + std::to_string(t);
        return out;
    };
    std::string h = header_text(r);
    h += "  " + trf(N_("sample seed {0}: plain       {1}"), s.first_seed, join(s.plain_text)) + "\n";
    h += "  " + trf(N_("sample seed {0}: speculative {1}"), s.first_seed, join(s.speculative_text)) + "\n\n";
    h += render_table(same_table(s, true));
    h += "  " + trf(N_("{0} seeds, χ² against p: plain p-value {1}, speculative {2}"), s.seeds,
                    fmt::format("{:.3g}", s.plain_p_value), fmt::format("{:.3g}", s.speculative_p_value)) + "\n";
    h += wrapped("  " + tr(N_("caught by:")), r.caught_by.localized());
    return h;
}

nlohmann::json result_json(const PitfallResult& r) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& in : r.inputs) inputs.push_back({{"name", in.name}, {"value", in.value.text()}});
    nlohmann::json j = {{"inputs", inputs}, {"derivation", texts(r.derivation)},
                        {"other_row_correct_err", opt_json(r.other_row_correct_err)},
                        {"other_row_broken_err", opt_json(r.other_row_broken_err)},
                        {"name", r.info.name},       {"warning", r.info.warning},       {"source", r.info.source},
                        {"deviation", r.info.deviation.text()}, {"uses_model", r.info.uses_model}, {"caught_by", r.caught_by.text()},
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
        j["quantities"].push_back({{"name", q.name.text()}, {"correct", q.correct}, {"shortcut", q.broken}, {"unit", q.unit}});
    if (r.same)
        j["same_distribution"] = {{"prompt", r.same->prompt}, {"plain_text", r.same->plain_text}, {"speculative_text", r.same->speculative_text},
                                  {"sample_seed", r.same->first_seed}, {"seeds", r.same->seeds}, {"cells", texts(r.same->cells)},
                                  {"cell_p", r.same->cell_p}, {"plain_counts", r.same->plain_counts},
                                  {"speculative_counts", r.same->speculative_counts},
                                  {"plain_p_value", r.same->plain_p_value}, {"speculative_p_value", r.same->speculative_p_value}};
    return j;
}

// --explain: the text, then the formula or deviation with its values and the result.
std::string explain_text(const PitfallResult& r, const std::string& text) {
    std::string h = text + "\n" + tr(N_("How it is computed:")) + "\n";
    for (const auto& line : r.derivation) h += wrapped("  -", line.localized());
    if (!r.positions.empty())
        h += wrap(tr(N_("A check firing on the correct path would be a bug of the experiment itself;\n"
                        "the tests assert that it never does.")));
    return h;
}

void print_result(const PitfallResult& r, const OutputFlags& flags) {
    Report rep;
    rep.json = result_json(r);
    if (r.same) {
        rep.human = same_text(r);
        rep.add_table("cells", same_table(*r.same, false), "/same_distribution");
    }
    else if (r.positions.empty()) {
        rep.human = calculator_text(r);
        rep.add_table("quantities", quantities_table(r, false), "/quantities");
    }
    else {
        rep.human = model_text(r);
        rep.add_table("positions", positions_table(r, false), "/positions");
        rep.add_table("checks", checks_table(r, false), "/checks");
    }
    rep.explain = explain_text(r, rep.human);
    emit(rep, flags);
}

// `text`: the reader's language; else CSV (English).
Table list_table(bool text) {
    const std::vector<Column<PitfallInfo>> columns = {
        {"name", N_("name"), [](const PitfallInfo& p) { return p.name; }},
        {"warning", N_("what the documents warn against"), [](const PitfallInfo& p) { return p.warning; },
         [](const PitfallInfo& p) { return tr(p.warning); }}};
    Table t = text ? text_table(columns, pitfall_list()) : columns_table(columns, pitfall_list());
    t.right_align = {false, false};
    return t;
}

void print_list(const OutputFlags& flags) {
    Report rep;
    rep.json = {{"pitfalls", nlohmann::json::array()}};
    for (const auto& p : pitfall_list())
        rep.json["pitfalls"].push_back(
            {{"name", p.name}, {"warning", p.warning}, {"source", p.source}, {"deviation", p.deviation.text()}, {"uses_model", p.uses_model}});
    rep.human = render_table(list_table(true), "");
    rep.explain = rep.human;
    rep.add_table("pitfalls", list_table(false), "/pitfalls");
    emit(rep, flags);
}

void run_model_pitfall(const PitfallOptions& o, const CLI::App& sub) {
    if (o.list && !o.name.empty()) throw InputError("NAME", o.name, N_("is not taken with --list (which lists them all)"));
    if (o.list) return print_list(o.flags);
    if (o.name.empty()) throw InputError(N_("NAME is required: a pitfall name, or --list to see them"));
    // Before the weights are made: a bad name costs nothing.
    const PitfallInfo& info = find_pitfall("NAME", o.name);
    const std::uint64_t seed = parse_nonnegative_int("--sample-seed", o.sample_seed);
    if (!info.uses_model) {
        // A calculator: its numbers are the document's, no model is made, and a model flag would do nothing.
        for (const char* flag : {"--checkpoint", "--config", "--model", "--seed"})
            if (given(sub, flag))
                throw InputError(flag, sub.get_option(flag)->as<std::string>(),
                                 N_("has no effect on {0}, a calculator pitfall that uses no model"), {o.name});
        if (!info.uses_seed && given(sub, "--sample-seed"))
            throw InputError("--sample-seed", o.sample_seed, N_("has no effect on {0}, which draws nothing"), {o.name});
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
    CLI::App* s = model->add_subcommand(
        "pitfall", tr("The documents' warnings as experiments: the right and the broken path, side by side"));
    s->add_option("NAME", o->name, tr("the pitfall (see --list)"));
    s->add_flag("--list", o->list, tr("list the pitfalls"));
    add_source(s, o->src);
    add_sample_seed(s, o->sample_seed);
    add_output_flags(*s, o->flags, true);
    // Each note one paragraph: the help formatter wraps it to the width.
    s->footer(examples_footer({"inferlab model pitfall --list", "inferlab model pitfall top-left-mask",
                               "inferlab model pitfall stale-cache --json", "inferlab model pitfall same-distribution"},
                              tr(N_("--sample-seed draws the prompt tokens (and, for same-distribution, the first sample seed).\n"
                                    "JSON keys: inputs[]{name, value}, derivation, other_row_correct_err, "
                                    "other_row_broken_err, name, warning, source, deviation, uses_model, caught_by, tokens, "
                                    "prompt_len, tolerance, correct_max_err, broken_max_err, first_wrong_pos, parts_at, "
                                    "positions[]{pos, token, correct_err, broken_err, correct_next, broken_next}, "
                                    "checks[]{name, rule, broken_step, broken_position, fired_on_correct}, "
                                    "quantities[]{name, correct, shortcut, unit}, fit_p_correct, fit_p_broken, "
                                    "same_distribution{prompt, plain_text, speculative_text, sample_seed, seeds, cells, cell_p, "
                                    "plain_counts, speculative_counts, plain_p_value, speculative_p_value} (null when absent).\n"
                                    "--list --json: pitfalls[]{name, warning, source, deviation, uses_model}."))));
    s->callback([o, s] { run_model_pitfall(*o, *s); });
}

}  // namespace inferlab::app
