// inferlab serve-sim (issue #31) through the real binary: its ties to decode-roofline, its forms
// of output, and its refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include "../support/cli.hpp"
#include "../support/svg_check.hpp"

using namespace inferlab::test;

namespace {

const std::vector<std::string> kBase = {"serve-sim", "--model", "llama-3-8b", "--hw", "h100-sxm"};

bool close(double a, double b, double rel) { return std::abs(a - b) <= rel * std::abs(b); }

// A trace file in the test case's scratch folder (never the working directory).
std::string write_trace(const Scratch& dir, const std::string& name, const std::string& text) {
    const std::string path = (dir.path / name).string();
    std::ofstream(path) << text;
    return path;
}

}  // namespace

namespace {

// serve-sim's one request against decode-roofline's whole generation for the same flags: one
// chunk of P positions priced by the same step_cost, the decode steps summed one by one there and
// in closed form here, equal to 1e-12. Returns both documents.
std::pair<nlohmann::json, nlohmann::json> one_request_tie(const std::vector<std::string>& extra, const std::string& P,
                                                          const std::string& N) {
    auto s = run_inferlab(with(with(kBase, extra), {"--requests", "1", "--prompt-len", P, "--output-len", N, "--json"}));
    REQUIRE(s.status == 0);
    CHECK(s.err.empty());
    auto d = run_inferlab(with(with({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm"}, extra),
                               {"--prompt-len", P, "--output-len", N, "--batch", "1", "--json"}));
    REQUIRE(d.status == 0);
    CHECK(d.err.empty());
    const auto sj = parse_json(s), dj = parse_json(d);
    const auto& g = dj["generation"][0];
    const auto& q = sj["requests"][0];
    CHECK(q["ttft_s"].get<double>() == g["ttft_s"].get<double>());
    CHECK(close(q["e2e_s"].get<double>(), g["end_to_end_s"].get<double>(), 1e-12));
    CHECK(close(q["tpot_s"].get<double>(), g["tpot_s"].get<double>(), 1e-9));
    CHECK(sj["summary"]["steps"] == std::stoi(N));
    return {sj, dj};
}

}  // namespace

TEST_CASE("serve-sim: one request alone prints decode-roofline's TTFT, TPOT and end-to-end", "[cli][serve]") {
    one_request_tie({}, "2048", "512");
}

TEST_CASE("serve-sim under --tp 2: one request alone prints decode-roofline --tp 2's TTFT, TPOT and end-to-end", "[cli][serve]") {
    // One device's share and the same all-reduces on both sides: one step_cost.
    const auto [sj, dj] = one_request_tie({"--tp", "2"}, "1000", "64");
    CHECK(dj["inputs"]["devices"] == 2);
    CHECK(dj["inputs"]["weight_bytes"] == sj["weight_bytes_per_device"]);
    // The all-reduces of a one-token step: 2·32 × (5 µs + 2 × 1/2 × 4096 × 2 B / 450 GB/s).
    const double comm = 64 * (5e-6 + 8192.0 / 450e9);
    const auto& row = dj["rows"][0];
    CHECK(close(row["comm_time_s"].get<double>(), comm, 1e-12));
    CHECK(close(row["step_time_s"].get<double>(), row["memory_time_s"].get<double>() + comm, 1e-12));
    auto e = run_inferlab({"decode-roofline", "--model", "llama-3-8b", "--hw", "h100-sxm", "--tp", "2", "--seq-len", "1000",
                           "--batch", "8", "--explain"});
    REQUIRE(e.status == 0);
    CHECK(e.out.find("all-reduces = 2·L × (latency + 2(N − 1)/N × T·hidden·2 B / link) = 2 × 32 × (5") != std::string::npos);
    CHECK(e.out.find("µs + 2 × 1/2 × 8 × 4096 × 2 / 450 GB/s") != std::string::npos);
    CHECK(e.out.find("t_8 = max(t_mem, t_compute) + all-reduces = ") != std::string::npos);
}

TEST_CASE("serve-sim: the text within 80 columns, one JSON document, CSV tables, the explanation", "[cli][serve]") {
    const auto args = with(kBase, {"--requests", "300", "--rate", "20", "--slo-ttft", "1s", "--slo-tpot", "50ms"});
    auto t = run_inferlab(args, "", {"COLUMNS=80"});
    REQUIRE(t.status == 0);
    CHECK(t.err.empty());
    std::size_t start = 0, widest = 0;
    for (std::size_t nl; (nl = t.out.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::size_t cols = 0;  // code points
        for (std::size_t i = start; i < nl; ++i) cols += (static_cast<unsigned char>(t.out[i]) & 0xC0) != 0x80;
        widest = std::max(widest, cols);
    }
    CHECK(widest <= 80);
    CHECK(t.out.find("TTFT (ms)") != std::string::npos);
    CHECK(t.out.find("goodput:") != std::string::npos);
    CHECK(t.out.find("limit: memory bandwidth") != std::string::npos);
    auto j = run_inferlab(with(args, {"--json"}));
    REQUIRE(j.status == 0);
    const auto doc = parse_json(j);
    CHECK(doc["requests"].size() == 300);
    CHECK(doc["summary"]["slo_met"].get<int>() <= 300);
    CHECK(doc["summary"]["limit"] == "bandwidth");
    CHECK(doc["sweep"].is_null());
    for (const char* table : {"summary", "requests", "steps"}) {
        auto c = run_inferlab(with(args, {"--csv", "--table", table}));
        CHECK(c.status == 0);
        CHECK(c.out.find(',') != std::string::npos);
    }
    auto e = run_inferlab(with(args, {"--explain", "--explain-request", "7"}));
    REQUIRE(e.status == 0);
    CHECK(e.out.find("t = max(t_mem, t_compute) + all-reduces + overhead") != std::string::npos);
    CHECK(e.out.find("Request 7's timeline") != std::string::npos);
    CHECK(e.out.find("TTFT = first token − arrival") != std::string::npos);
}

TEST_CASE("serve-sim: the same seed gives the same bytes, another seed another run", "[cli][serve]") {
    const auto args = with(kBase, {"--requests", "200", "--rate", "25", "--json"});
    auto a = run_inferlab(args), b = run_inferlab(args), c = run_inferlab(with(args, {"--seed", "2"}));
    REQUIRE(a.status == 0);
    CHECK(a.out == b.out);
    CHECK(a.out != c.out);
}

TEST_CASE("serve-sim: a rate sweep finds the highest rate within the SLOs, throughput rising with the rate", "[cli][serve]") {
    auto r = run_inferlab(with(kBase, {"--requests", "1500", "--sweep-rate", "2..400", "--slo-ttft", "1s", "--slo-tpot",
                                       "50ms", "--json"}));
    REQUIRE(r.status == 0);
    const auto j = parse_json(r);
    REQUIRE(!j["sweep"]["best_rate"].is_null());
    const double best = j["sweep"]["best_rate"].get<double>();
    CHECK(best > 2);
    CHECK(best < 400);
    double last = 0;
    for (const auto& p : j["sweep"]["points"]) {
        // A rate whose server falls behind never meets the SLOs, whatever its p99 over this run.
        if (p["pace"] == "falls_behind") CHECK(p["meets"] == false);
        if (p["rate"].get<double>() <= best) {
            CHECK(p["meets"] == true);
            CHECK(p["pace"] != "falls_behind");
            CHECK(p["output_tokens_per_s"].get<double>() >= last);
            last = p["output_tokens_per_s"].get<double>();
        }
    }
    auto t = run_inferlab(with(kBase, {"--requests", "100", "--sweep-rate", "1..2", "--slo-ttft", "1us"}));
    REQUIRE(t.status == 0);  // an SLO no rate meets is a result, said in words
    CHECK(t.out.find("no rate in 1..2 req/s meets the SLOs") != std::string::npos);
    auto e = run_inferlab(with(kBase, {"--requests", "100", "--sweep-rate", "1..2", "--slo-ttft", "1us", "--explain"}));
    REQUIRE(e.status == 0);  // --explain keeps the sweep's table and verdict
    CHECK(e.out.find("no rate in 1..2 req/s meets the SLOs") != std::string::npos);
}

TEST_CASE("serve-sim: tensor parallelism adds the all-reduces, prefix caching counts its hits", "[cli][serve]") {
    auto r = run_inferlab(with(kBase, {"--tp", "2", "--requests", "50", "--rate", "10", "--json"}));
    REQUIRE(r.status == 0);
    const auto j = parse_json(r);
    CHECK(j["summary"]["comm_s"].get<double>() > 0);
    CHECK(j["link_bandwidth"].get<double>() == 450e9);
    CHECK(j["weight_bytes_per_device"].get<std::uint64_t>() == 16060522496ULL / 2);
    auto p = run_inferlab(with(kBase, {"--requests", "50", "--rate", "50", "--shared-prefix", "512", "--prefix-caching", "--json"}));
    REQUIRE(p.status == 0);
    CHECK(parse_json(p)["summary"]["prefix_hit_tokens"].get<int>() > 0);
}

TEST_CASE("serve-sim: a trace of arrivals, CSV or JSON Lines, and its bad lines named", "[cli][serve]") {
    const Scratch dir("serve-sim-trace");
    const std::string csv = write_trace(dir, "ok.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,200,20\n");
    auto r = run_inferlab(with(kBase, {"--arrivals", csv, "--json"}));
    REQUIRE(r.status == 0);
    CHECK(parse_json(r)["requests"].size() == 2);
    const std::string jl = write_trace(dir, "ok.jsonl", "{\"arrival_s\": 0, \"prompt_tokens\": 64, \"output_tokens\": 8}\n");
    CHECK(run_inferlab(with(kBase, {"--arrivals", jl})).status == 0);
    expect_error(with(kBase, {"--arrivals", write_trace(dir, "bad.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n1,0,5\n")}),
                 "line 3 prompt_tokens '0'");
    expect_error(with(kBase, {"--arrivals", write_trace(dir, "order.csv", "arrival_s,prompt_tokens,output_tokens\n2,1,1\n1,1,1\n")}),
                 "line 3 arrival_s '1': comes before the line above's 2");
    expect_error(with(kBase, {"--arrivals", write_trace(dir, "col.csv", "arrival,prompt_tokens,output_tokens\n")}),
                 "'arrival': is not a column of a trace");
    expect_error(with(kBase, {"--arrivals", write_trace(dir, "late.csv", "arrival_s,prompt_tokens,output_tokens\n1e300,100,10\n")}),
                 "line 2 arrival_s '1e300': must be at most 1e8 seconds from the trace's start");
    // The figure never replaces the trace it draws (it once did, silently).
    const std::string trace = write_trace(dir, "kept.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n");
    expect_error(with(kBase, {"--arrivals", trace, "--svg", trace}), "an output never replaces an input");
    std::ifstream kept(trace);
    std::string first;
    std::getline(kept, first);
    CHECK(first == "arrival_s,prompt_tokens,output_tokens");
}

TEST_CASE("serve-sim: bad input is one error line naming the flag, the value and the rule", "[cli][serve]") {
    expect_error(with(kBase, {"--requests", "10", "--rate", "0"}), "--rate '0': must be greater than 0");
    expect_error(with(kBase, {"--requests", "10", "--rate", "nan"}), "--rate 'nan'");
    // Rates whose arrival times a double cannot resolve to the millisecond (1e-14 req/s once gave TTFT 0).
    expect_error(with(kBase, {"--requests", "10", "--rate", "1e-14"}), "--rate '1e-14': must be from 1e-6 to 1e9 requests/s");
    expect_error(with(kBase, {"--requests", "10", "--sweep-rate", "1e-9..1e300", "--slo-ttft", "1s"}),
                 "--sweep-rate '1e-9': must be from 1e-6 to 1e9 requests/s");
    expect_error(with(kBase, {"--requests", "10", "--slo-ttft", "1"}), "--slo-ttft '1': needs a unit");
    expect_error(with(kBase, {"--requests", "10", "--max-batch-tokens", "0"}), "--max-batch-tokens '0'");
    expect_error(with(kBase, {"--requests", "10", "--prompt-len", "20..10"}), "--prompt-len '20..10': is an empty range");
    expect_error(with(kBase, {"--requests", "10", "--sweep-rate", "5..5", "--slo-ttft", "1s"}), "--sweep-rate '5..5': is an empty range");
    expect_error(with(kBase, {"--requests", "10", "--tp", "2", "--link-bandwidth", "0"}), "--link-bandwidth '0'");
    expect_error(with(kBase, {"--requests", "1", "--prompt-len", "8000", "--output-len", "100", "--kv-blocks", "10"}),
                 "request 0 cannot fit the KV pool even alone");
    expect_error({"serve-sim", "--model", "llama-3.1-70b", "--hw", "h100-sxm", "--requests", "1"},
                 "the weights leave no room for the KV cache");
    expect_error(with(kBase, {"--rate", "5"}), "no requests");
}
