// inferlab verify: every worked example of the documents, recomputed and compared.
#include <fmt/format.h>

#include <memory>

#include "common.hpp"
#include "inferlab/answer/verify.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/base/i18n.hpp"

namespace inferlab::app {
namespace {

struct VerifyOptions {
    std::string id;   // prefix filter
    bool list = false;
    OutputFlags out;
};

std::string source_of(const Example& e) { return fmt::format("{} §{}", e.document, e.section); }

// The verdict as the text output prints it (--json and --csv keep their fixed forms).
std::string verdict(bool pass) { return pass ? tr("PASS") : tr("FAIL"); }

// How far the computed value may be from the expected one, in its base unit: 0 for an exact
// example, else half a unit of the document's last printed digit.
double tolerance(const ExampleResult& res) { return res.example->exact ? 0.0 : res.expected.half_unit; }

nlohmann::json json_of(const ExampleResult& res) {
    const Example& e = *res.example;
    return {{"id", e.id},
            {"document", e.document},
            {"section", e.section},
            {"description", e.description_en()},
            {"inputs", e.inputs},
            {"expected", e.expected},
            {"expected_value", res.expected.value},
            {"unit", res.expected.unit},
            {"exact", e.exact},
            {"computed", res.computed.shown},
            {"computed_value", res.computed.value},
            {"tolerance", tolerance(res)},
            {"pass", res.pass}};
}

// Human text: one heading per document section (the source would make a table 157 columns
// wide), then that section's examples as printed and as computed: a shape of its own, beside the
// CSV's one table of every example.
std::vector<Column<ExampleResult>> text_columns() {
    const std::vector<Column<ExampleResult>> c = {
        {"id", N_("id"), [](const ExampleResult& r) { return r.example->id; }},
        {"expected", N_("expected"), [](const ExampleResult& r) { return r.example->expected; }},
        {"computed", N_("computed"), [](const ExampleResult& r) { return r.computed.shown; }},
        {"pass", N_("result"), [](const ExampleResult& r) { return verdict(r.pass); }}};
    return c;
}

std::string human_of(const std::vector<ExampleResult>& results) {
    std::string out;
    for (std::size_t i = 0; i < results.size();) {
        const std::string source = source_of(*results[i].example);
        std::vector<ExampleResult> section;
        for (; i < results.size() && source_of(*results[i].example) == source; ++i) section.push_back(results[i]);
        Table t = text_table(text_columns(), section);
        t.right_align = {false, false, false, false};
        out += (out.empty() ? "" : "\n") + wrap(source) + render_table(t);
    }
    return out;
}

std::string explain_of(const ExampleResult& res) {
    const Example& e = *res.example;
    return wrap(fmt::format("{}  [{}]", e.id, source_of(e)), "", "  ") +
           wrap(trf(N_("{0}: {1}"), e.description_shown(), tr(e.inputs)), "  ", "    ") +
           wrap(trf(N_("expected {0} ({1}), computed {2} → {3}"), e.expected,
                    e.exact ? tr("exact") : tr("as rounded in the document"), res.computed.shown, verdict(res.pass)),
                "  ", "    ") +
           "\n";
}

// The CSV table: numbers in their own columns (the value in its base unit, named in `unit`; the
// tolerance 0 for an exact example), text in others. The printed forms ("1 GiB", "1/4") are in
// the text output and in --json.
Table csv_of(const std::vector<ExampleResult>& results) {
    const std::vector<Column<ExampleResult>> columns = {
        {"id", "id", [](const ExampleResult& r) { return r.example->id; }},
        {"document", "document", [](const ExampleResult& r) { return r.example->document; }},
        {"section", "section", [](const ExampleResult& r) { return r.example->section; }},
        {"unit", "unit", [](const ExampleResult& r) { return r.expected.unit; }},
        {"expected_value", "expected_value", [](const ExampleResult& r) { return csv_number(r.expected.value); }},
        {"tolerance", "tolerance", [](const ExampleResult& r) { return csv_number(tolerance(r)); }},
        {"computed_value", "computed_value", [](const ExampleResult& r) { return csv_number(r.computed.value); }},
        {"exact", "exact", [](const ExampleResult& r) { return csv_flag(r.example->exact); }},
        {"pass", "pass", [](const ExampleResult& r) { return csv_flag(r.pass); }}};
    return columns_table(columns, results);
}

void run(const VerifyOptions& o) {
    const VerifyResult v = verify_examples(o.id);
    if (v.results.empty())
        throw InputError("--id", o.id, N_("matches no example id (run 'inferlab verify' to list them)"));
    const std::string tally = trf(N_("{0} passed, {1} failed"), v.passed, v.failed) + "\n";
    Report r;
    r.json["examples"] = nlohmann::json::array();
    for (const auto& res : v.results) {
        r.json["examples"].push_back(json_of(res));
        r.explain += explain_of(res);
    }
    r.json["passed"] = v.passed;
    r.json["failed"] = v.failed;
    r.human = human_of(v.results) + "\n" + tally;
    r.explain += tally;
    r.add_table("examples", csv_of(v.results), "/examples");
    emit(r, o.out);
    if (v.failed) throw ExitCode{1};
}

}  // namespace

void setup_verify(CLI::App& app) {
    auto opt = std::make_shared<VerifyOptions>();
    CLI::App* sub =
        app.add_subcommand("verify", tr("Recompute every worked example of the two documents (exit 1 on any failure)"));
    sub->add_option("--id", opt->id, tr("only examples whose id starts with this (e.g. kv. or kv.doc2)"));
    add_output_flags(*sub, opt->out, true);
    sub->footer(examples_footer({"inferlab verify", "inferlab verify --id kv.doc2 --explain", "inferlab verify --json"},
                                tr("Documents: 000_5f2b20623495609b.txt (08｜推理计算、KV 缓存与部署系统) and\n"
                                   "003_02a045288fb34aae.txt (推理与 KV Cache 01), under shared/seeds/.\n"
                                   "JSON keys: examples[] {id, document, section, description, inputs, expected,\n"
                                   "expected_value, unit, tolerance, exact, computed, computed_value, pass}, passed,\n"
                                   "failed.")));
    sub->callback([opt] { run(*opt); });
}

}  // namespace inferlab::app
