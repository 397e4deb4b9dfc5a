// inferlab verify: every worked example of the documents, recomputed and compared.
#include <fmt/format.h>

#include <memory>

#include "common.hpp"
#include "inferlab/error.hpp"
#include "inferlab/verify.hpp"

namespace inferlab::app {
namespace {

struct VerifyOptions {
    std::string id;   // prefix filter
    bool list = false;
    OutputFlags out;
};

void run(const VerifyOptions& o) {
    std::vector<ExampleResult> results;
    for (const auto& e : examples())
        if (o.id.empty() || e.id.rfind(o.id, 0) == 0) results.push_back(check_example(e));
    if (results.empty()) throw InputError("--id", o.id, "matches no example id (run 'inferlab verify' to list them)");
    Report r;
    Table t{{"id", "source", "expected", "computed", "result"}, {}, {false, false, true, false, false}};
    r.json["examples"] = nlohmann::json::array();
    int passed = 0, failed = 0;
    for (const auto& res : results) {
        const Example& e = *res.example;
        std::string source = fmt::format("{} §{}", e.document, e.section);
        t.rows.push_back({e.id, source, e.expected, res.computed.shown, res.pass ? "PASS" : "FAIL"});
        r.json["examples"].push_back({{"id", e.id},
                                      {"document", e.document},
                                      {"section", e.section},
                                      {"description", e.description},
                                      {"inputs", e.inputs},
                                      {"expected", e.expected},
                                      {"expected_value", res.expected.value},
                                      {"exact", e.exact},
                                      {"computed", res.computed.shown},
                                      {"computed_value", res.computed.value},
                                      {"pass", res.pass}});
        (res.pass ? passed : failed)++;
        r.explain += fmt::format("{}  [{} §{}]\n  {}: {}\n  expected {} ({}), computed {} → {}\n\n", e.id, e.document,
                                 e.section, e.description, e.inputs, e.expected,
                                 e.exact ? "exact" : "as rounded in the document", res.computed.shown,
                                 res.pass ? "PASS" : "FAIL");
    }
    r.json["passed"] = passed;
    r.json["failed"] = failed;
    r.human = render_table(t, "") + fmt::format("\n{} passed, {} failed\n", passed, failed);
    r.explain += fmt::format("{} passed, {} failed\n", passed, failed);
    r.add_table("examples", t);
    emit(r, o.out);
    if (failed) throw ExitCode{1};
}

}  // namespace

void setup_verify(CLI::App& app) {
    auto opt = std::make_shared<VerifyOptions>();
    CLI::App* sub = app.add_subcommand("verify", "Recompute every worked example of the two documents (exit 1 on any failure)");
    sub->add_option("--id", opt->id, "only examples whose id starts with this (e.g. kv. or kv.doc2)");
    add_output_flags(*sub, opt->out, true);
    sub->footer(examples_footer({"inferlab verify", "inferlab verify --id kv.doc2 --explain", "inferlab verify --json"},
                                "Documents: 000_5f2b20623495609b.txt (08｜推理计算、KV 缓存与部署系统) and\n"
                                "003_02a045288fb34aae.txt (推理与 KV Cache 01), under shared/seeds/.\n"
                                "JSON keys: examples[] {id, document, section, description, inputs, expected,\n"
                                "expected_value, exact, computed, computed_value, pass}, passed, failed."));
    sub->callback([opt] { run(*opt); });
}

}  // namespace inferlab::app
