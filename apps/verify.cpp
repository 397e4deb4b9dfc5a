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
            {"pass", res.pass}};
}

// Human text: one heading per document section (the source would make a table 157 columns
// wide), then that section's examples as printed and as computed.
std::string human_of(const std::vector<ExampleResult>& results) {
    std::string out;
    for (std::size_t i = 0; i < results.size();) {
        const std::string source = source_of(*results[i].example);
        Table t{{tr("id"), tr("expected"), tr("computed"), tr("result")}, {}, {false, false, false, false}};
        for (; i < results.size() && source_of(*results[i].example) == source; ++i) {
            const auto& res = results[i];
            t.rows.push_back({res.example->id, res.example->expected, res.computed.shown, verdict(res.pass)});
        }
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
    Table t{{"id", "document", "section", "unit", "expected_value", "tolerance", "computed_value", "exact", "result"},
            {},
            {}};
    for (const auto& res : results) {
        const Example& e = *res.example;
        t.rows.push_back({e.id, e.document, e.section, res.expected.unit, fmt::format("{}", res.expected.value),
                          fmt::format("{}", e.exact ? 0.0 : res.expected.half_unit),
                          fmt::format("{}", res.computed.value), e.exact ? "exact" : "rounded",
                          res.pass ? "PASS" : "FAIL"});
    }
    return t;
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
    r.add_table("examples", csv_of(v.results));
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
                                   "expected_value, unit, exact, computed, computed_value, pass}, passed, failed.")));
    sub->callback([opt] { run(*opt); });
}

}  // namespace inferlab::app
