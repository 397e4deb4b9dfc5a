// --kernels and INFERLAB_KERNELS on the model commands, and bench's documented example.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>

#include "../support/cli.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;

namespace {

// Sets an environment variable for the commands run in a scope (the child inherits it), then
// restores it, also when a REQUIRE ends the test early.
class EnvVar {
public:
    EnvVar(const char* name, const char* value) : name_(name) {
        if (const char* v = std::getenv(name)) saved_ = v;
        set(value);
    }
    void set(const char* value) { ::setenv(name_.c_str(), value, 1); }
    ~EnvVar() {
        if (saved_) ::setenv(name_.c_str(), saved_->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }

private:
    std::string name_;
    std::optional<std::string> saved_;
};

}  // namespace

TEST_CASE("model logits: --kernels reference and fast give the same logits, and say which ran", "[cli][model][kernels]") {
    // demo-gqa: d = 48, one of the register-held attention widths.
    const std::vector<std::string> base = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,5,9,2,7,3,11", "--json"};
    auto with = [&](const std::string& k) {
        auto args = base;
        args.insert(args.end(), {"--kernels", k});
        return parse_json(run_inferlab(args));
    };
    const auto fast = with("fast"), plain = with("reference");
    CHECK(fast["kernels"] == "fast");
    CHECK(plain["kernels"] == "reference");
    REQUIRE(fast["logits"].size() == 7);
    for (std::size_t i = 0; i < 7; ++i)
        for (std::size_t t = 0; t < fast["logits"][i].size(); ++t)
            // 1e-4 absolute (logits of this model are O(1)): six layers of float32 sums in another order.
            REQUIRE_THAT(fast["logits"][i][t].get<double>(), WithinAbs(plain["logits"][i][t].get<double>(), 1e-4));
    // The environment variable chooses when the flag is absent; the flag wins over it.
    {
        EnvVar env("INFERLAB_KERNELS", "reference");
        CHECK(parse_json(run_inferlab(base))["kernels"] == "reference");
        CHECK(with("fast")["kernels"] == "fast");
    }
}

TEST_CASE("model commands: a wrong --kernels or INFERLAB_KERNELS value exits 2 and names it", "[cli][model][errors]") {
    expect_error({"model", "logits", "--tokens", "1", "--kernels", "avx2"}, "--kernels 'avx2': must be fast or reference");
    expect_error({"model", "speculate", "--kernels", "x"}, "--kernels 'x': must be fast or reference");
    expect_error({"model", "roofline", "--kernels", "x"}, "--kernels 'x': must be fast or reference");
    expect_error({"model", "bench", "--kernels", "x"}, "--kernels 'x': must be fast or reference");
    EnvVar env("INFERLAB_KERNELS", "scalar");
    expect_error({"model", "logits", "--tokens", "1"}, "INFERLAB_KERNELS 'scalar': must be fast or reference");
}

TEST_CASE("INFERLAB_ISA caps the kernels: avx2 gives the float32 and bf16 greedy tokens of the default, a wrong value exits 2 naming it", "[cli][model][errors]") {
    const std::vector<std::string> gen = {"model", "generate", "--model", "demo-gqa", "--prompt", "1,2,3", "--steps", "6", "--json"};
    for (const char* dtype : {"fp32", "bf16"}) {
        INFO(dtype);
        const auto base = parse_json(run_inferlab(with(gen, {"--weight-dtype", dtype})));
        EnvVar env("INFERLAB_ISA", "avx2");
        CHECK(parse_json(run_inferlab(with(gen, {"--weight-dtype", dtype})))["generated"] == base["generated"]);
    }
    EnvVar env("INFERLAB_ISA", "avx3");
    expect_error({"model", "logits", "--tokens", "1"}, "INFERLAB_ISA 'avx3': must be avx512, avx2 or scalar");
    expect_error({"model", "pitfall", "stale-cache"}, "INFERLAB_ISA 'avx3': must be avx512, avx2 or scalar");
}

TEST_CASE("model bench: default contexts come from the model and fit its maximum sequence length", "[cli][model]") {
    // tiny-model.json: S_max = 8, so the table starts at 8/8 = 1 and takes ×4 while S + 3 ≤ 8: 1 and 4.
    auto j = parse_json(run_inferlab({"model", "bench", "--config", data_path("tiny-model.json"), "--prompt-len", "2", "--steps", "2",
                                      "--probe-mib", "4", "--batch", "1", "--json"}));
    REQUIRE(j["context_scaling"].size() == 2);
    CHECK(j["context_scaling"][0]["seq_len"] == 1);
    CHECK(j["context_scaling"][1]["seq_len"] == 4);
    expect_error({"model", "bench", "--config", data_path("tiny-model.json"), "--prompt-len", "2", "--steps", "2", "--contexts", "6"},
                 "--contexts '6': exceeds the maximum sequence length 8 less the 3 timed steps");
}

TEST_CASE("model bench: the example in its --help runs", "[cli][model][bench]") {
    // Exactly as `inferlab model bench --help` prints it: ref-110m (S_max = 1024), whose contexts
    // used to default to 128,512,1024 and exit 2.
    auto help = run_inferlab({"model", "bench", "--help"});
    REQUIRE(help.status == 0);
    REQUIRE(help.out.find("inferlab model bench --model ref-110m --threads 2") != std::string::npos);
    auto r = run_inferlab({"model", "bench", "--model", "ref-110m", "--threads", "2"});
    INFO("stderr: " << r.err);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("One decode step at context S") != std::string::npos);
}

TEST_CASE("model bench --weight-dtype all: four dtypes in one run, bytes equal quantize's and kv-mem's figures", "[cli][model][qweights]") {
    auto j = parse_json(run_inferlab({"model", "bench", "--model", "demo-gqa", "--weight-dtype", "all", "--prompt-len", "8", "--steps", "4",
                                      "--probe-mib", "8", "--contexts", "16", "--batch", "1", "--skip-nocache", "--json"}));
    REQUIRE(j["dtypes"].size() == 4);
    const char* names[] = {"fp32", "bf16", "int8", "int4"};
    for (std::size_t i = 0; i < 4; ++i) CHECK(j["dtypes"][i]["dtype"] == names[i]);
    // demo-gqa: L = 6, dim 288, tied head. The products' matrices are every parameter but the
    // 2L + 1 RMSNorm vectors of 288; those stay float32. One step at S = 8 + 4/2 = 10.
    const std::uint64_t params = j["parameters"].get<std::uint64_t>(), norms = 13 * 288;
    const std::uint64_t kv = parse_json(run_inferlab({"kv-mem", "--model", "demo-gqa", "--seq-len", "10", "--kv-dtype", "fp32", "--json"}))["total_bytes"];
    CHECK(j["dtypes"][0]["bytes_per_step"].get<std::uint64_t>() == params * 4 + kv);
    for (auto [i, bits] : {std::pair<std::size_t, const char*>{2, "8"}, {3, "4"}}) {
        INFO("int" << bits);
        auto q = parse_json(run_inferlab({"quantize", "--elements", std::to_string(params - norms), "--bits", bits, "--group-size", "32",
                                          "--scale-dtype", "fp16", "--json"}));
        CHECK(j["dtypes"][i]["bytes_per_step"].get<std::uint64_t>() == q["total_bytes"].get<std::uint64_t>() + norms * 4 + kv);
    }
    // float32 against itself is exact; the others move the logits, int4 by more than int8.
    CHECK(j["dtypes"][0]["max_rel_logit_diff"] == 0.0);
    CHECK(j["dtypes"][0]["greedy_agreement"] == 1.0);
    CHECK(j["dtypes"][2]["max_rel_logit_diff"].get<double>() > 0);
    CHECK(j["dtypes"][2]["mean_kl"].get<double>() < j["dtypes"][3]["mean_kl"].get<double>());
    CHECK(j["fp32_decode_tokens_per_s"] == j["dtypes"][0]["tokens_per_s"]);
    CHECK(j["probe_kernel_gbs"].get<double>() > 0);
    CHECK(j["measured_read_gbs"].get<double>() >= j["probe_kernel_gbs"].get<double>());
    CHECK(j["probe_passes"] == 5 + 1 + 4);  // five before the run, one before the first round of steps, one after each of 4
    // Each round's bound uses the β beside it, at most the best pass's: paired, a dtype's fraction
    // of its bound is at least as high as against the best β, and its median bound at most the best one.
    for (const auto& x : j["dtypes"]) {
        INFO(x["dtype"]);
        const double paired = x["fraction_of_bound"], best = x["fraction_of_best_bound"];
        CHECK(best > 0);
        CHECK(best <= paired * (1 + 1e-12));
        CHECK(x["bound_tokens_per_s"].get<double>() <= x["tokens_per_s"].get<double>() / best * (1 + 1e-12));
    }
    // A dtype whose weights (demo-gqa: 22 MB at float32, 3 MB at int4) fit the machine's
    // last-level cache is read from there: the DRAM bound does not apply, so a batch row faster
    // than it is no probe defect.
    if (!j["last_level_cache_bytes"].is_null())
        for (const auto& row : j["batch"]) {
            const auto dt = std::find_if(j["dtypes"].begin(), j["dtypes"].end(), [&](const auto& x) { return x["dtype"] == row["weight_dtype"]; });
            REQUIRE(dt != j["dtypes"].end());
            if ((*dt)["bytes_per_step"].get<std::uint64_t>() <= j["last_level_cache_bytes"].get<std::uint64_t>()) {
                CHECK(row["weights_fit_in_last_level_cache"] == true);
                CHECK(row["probe_defect"] == false);
            }
        }
    expect_error({"model", "bench", "--weight-dtype", "int3"}, "--weight-dtype 'int3': must be fp32, bf16, int8, int4 or all");
    expect_error({"model", "bench", "--config", data_path("tiny-model.json"), "--weight-dtype", "int8", "--prompt-len", "2", "--steps", "2"},
                 "'16': is a product's input width (dim or hidden); int8/int4 weights need multiples of 32");
}

TEST_CASE("model logits and generate --weight-dtype int8/int4: fast equals reference kernels, wrong values exit 2", "[cli][model][qweights]") {
    for (const char* t : {"int8", "int4"}) {
        INFO(t);
        const std::vector<std::string> base = {"model", "logits", "--model", "demo-gqa", "--tokens", "1,5,9,2", "--weight-dtype", t, "--json"};
        auto fast = base, plain = base;
        fast.insert(fast.end(), {"--kernels", "fast"});
        plain.insert(plain.end(), {"--kernels", "reference"});
        // The float path (levels widened, float32 activations), on any CPU.
        std::optional<EnvVar> arith(std::in_place, "INFERLAB_QUANT_ARITH", "float");
        const auto a = parse_json(run_inferlab(fast)), b = parse_json(run_inferlab(plain));
        // The int8 dot-product path (VNNI here where the CPU has it, the plain loops otherwise).
        arith->set("int8");
        const auto ai = parse_json(run_inferlab(fast)), bi = parse_json(run_inferlab(plain));
        arith->set("int16");
        expect_error(fast, "INFERLAB_QUANT_ARITH 'int16': must be float or int8");
        arith.reset();
        CHECK(a["weight_dtype"] == t);
        for (std::size_t i = 0; i < 4; ++i)
            for (std::size_t k = 0; k < a["logits"][i].size(); ++k) {
                // 1e-4 absolute (logits O(1)): the same dequantized weights, float32 sums in another order.
                REQUIRE_THAT(a["logits"][i][k].get<double>(), WithinAbs(b["logits"][i][k].get<double>(), 1e-4));
                // 0.02 absolute (measured 0.003 at int8, logits up to 1.2): the kernels' integer sums are
                // equal (unit tests), but the float32 activations that reach them differ in their last
                // bits (attention and norms sum in another order), and where one sits on a rounding
                // boundary its int8 level differs by one, moving that product by Δ_w·d.
                REQUIRE_THAT(ai["logits"][i][k].get<double>(), WithinAbs(bi["logits"][i][k].get<double>(), 0.02));
            }
        auto g = run_inferlab({"model", "generate", "--model", "demo-gqa", "--steps", "4", "--weight-dtype", t});
        CHECK(g.status == 0);
    }
    expect_error({"model", "logits", "--tokens", "1", "--weight-dtype", "fp8"}, "--weight-dtype 'fp8': must be fp32, bf16, int8 or int4");
    expect_error({"model", "generate", "--config", data_path("tiny-model.json"), "--prompt", "1", "--steps", "2", "--weight-dtype", "int4"},
                 "int8/int4 weights need multiples of 32");
}

TEST_CASE("model check-cache --weight-dtype int8/int4: float32 activations, paths agree, int8 activations refused", "[cli][model][qweights]") {
    for (const char* t : {"int8", "int4"}) {
        INFO(t);
        const std::vector<std::string> args = {"model", "check-cache", "--model", "demo-gqa", "--seq-len", "24", "--weight-dtype", t};
        const auto r = run_inferlab(args);
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        std::string flat;  // the text with its line wrapping undone
        for (char c : r.out)
            if (!(c == ' ' || c == '\n') || (!flat.empty() && flat.back() != ' ')) flat += c == '\n' ? ' ' : c;
        CHECK(flat.find("all paths agree") != std::string::npos);
        CHECK(flat.find(std::string(t) + " weights with float32 activations") != std::string::npos);
        const auto j = parse_json(run_inferlab(with(args, {"--json"})));
        CHECK(j["weight_dtype"] == t);
        CHECK(j["agree"] == true);
        // Asked for int8 activations, it says why it cannot compare rather than failing the paths.
        EnvVar arith("INFERLAB_QUANT_ARITH", "int8");
        expect_error(args, "INFERLAB_QUANT_ARITH 'int8': cannot compare cache paths through int8 activations");
    }
}

TEST_CASE("model roofline --weight-dtype int8: the timed steps and the bound use the int8 bytes", "[cli][model][qweights]") {
    const std::vector<std::string> base = {"model", "roofline", "--model", "demo-gqa", "--batch", "1", "--contexts", "16", "--probe-mib", "8",
                                           "--repeats", "2", "--json"};
    auto f = parse_json(run_inferlab(base));
    auto args = base;
    args.insert(args.end(), {"--weight-dtype", "int8"});
    auto q = parse_json(run_inferlab(args));
    CHECK(q["weight_dtype"] == "int8");
    // The same K/V; the weights at 8.5 bits instead of 32: demo-gqa's 2L + 1 = 13 norm vectors of 288 stay float32.
    const std::uint64_t fb = f["rows"][0]["bytes_per_step"], qb = q["rows"][0]["bytes_per_step"];
    auto kv = parse_json(run_inferlab({"kv-mem", "--model", "demo-gqa", "--seq-len", "16", "--kv-dtype", "fp32", "--json"}))["total_bytes"].get<std::uint64_t>();
    const std::uint64_t products = (fb - kv) / 4 - 13 * 288;
    CHECK(qb == products + products / 32 * 2 + 13 * 288 * 4 + kv);
    expect_error({"model", "roofline", "--weight-dtype", "int2"}, "--weight-dtype 'int2': must be fp32, bf16, int8 or int4");
}

TEST_CASE("int8/int4 weight bytes: decode-roofline, quantize --model and the model's step count them by one rule", "[cli][model][qweights]") {
    // demo-gqa: 2L + 1 = 13 RMSNorm vectors of 288 stay float32 in the model; everything else is
    // a product's matrix, quantized in groups of 32 with fp16 scales.
    const auto f = parse_json(run_inferlab({"model", "roofline", "--model", "demo-gqa", "--batch", "1", "--contexts", "16", "--probe-mib", "8",
                                            "--repeats", "1", "--json"}));
    const std::uint64_t kv = parse_json(run_inferlab({"kv-mem", "--model", "demo-gqa", "--seq-len", "16", "--kv-dtype", "fp32", "--json"}))["total_bytes"];
    const std::uint64_t norms = 13 * 288, products = (f["rows"][0]["bytes_per_step"].get<std::uint64_t>() - kv) / 4 - norms;
    for (const char* t : {"int8", "int4"}) {
        INFO(t);
        const std::string bits = t == std::string("int8") ? "8" : "4";
        // The model's step: the products at the dtype, the norms at float32, the K/V.
        const auto m = parse_json(run_inferlab({"model", "roofline", "--model", "demo-gqa", "--batch", "1", "--contexts", "16", "--probe-mib", "8",
                                                "--repeats", "1", "--weight-dtype", t, "--json"}));
        const std::uint64_t model_products = m["rows"][0]["bytes_per_step"].get<std::uint64_t>() - kv - norms * 4;
        // decode-roofline on the same element count, and quantize's storage rule.
        const auto r = parse_json(run_inferlab({"decode-roofline", "--params", std::to_string(products), "--weight-dtype", t, "--bandwidth",
                                                "10GB/s", "--kv-bytes-per-request", "0", "--json"}));
        const auto q = parse_json(run_inferlab({"quantize", "--elements", std::to_string(products), "--bits", bits, "--group-size", "32",
                                                "--scale-dtype", "fp16", "--json"}));
        CHECK(model_products == q["total_bytes"].get<std::uint64_t>());
        CHECK(r["inputs"]["weight_bytes"].get<std::uint64_t>() == model_products);
        // The whole model (every parameter at the dtype): decode-roofline --model and quantize --model agree.
        const auto rm = parse_json(run_inferlab({"decode-roofline", "--model", "demo-gqa", "--weight-dtype", t, "--bandwidth", "10GB/s",
                                                 "--seq-len", "1", "--json"}));
        const auto qm = parse_json(run_inferlab({"quantize", "--model", "demo-gqa", "--seq-len", "1", "--json"}));
        bool found = false;
        for (const auto& row : qm["weights"])
            if (row["precision"] == t) {
                found = true;
                CHECK(row["total_bytes"] == rm["inputs"]["weight_bytes"]);
                CHECK(row["params"] == rm["inputs"]["params"]);
            }
        CHECK(found);
    }
}

TEST_CASE("model kv-quant --weight-dtype int8: both caches serve the int8 model, which the output names", "[cli][model][qweights]") {
    auto r = run_inferlab({"model", "kv-quant", "--model", "demo-gqa", "--positions", "16", "--steps", "4", "--weight-dtype", "int8"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("weights int8 for both caches") != std::string::npos);
    // The KV error is measured against the float32 cache of the same int8 model, so it stays small.
    auto j = parse_json(run_inferlab({"model", "kv-quant", "--model", "demo-gqa", "--positions", "16", "--steps", "4", "--weight-dtype", "int8", "--json"}));
    CHECK(j["mean_kl"].get<double>() < 1e-3);
    expect_error({"model", "kv-quant", "--weight-dtype", "int5"}, "--weight-dtype 'int5': must be fp32, bf16, int8 or int4");
}

TEST_CASE("the model commands name the weights' dtype and arithmetic: a text line and quantized_arithmetic", "[cli][model][qweights]") {
    const auto flat = [](const std::string& s) {  // the text with its line wrapping undone
        std::string f;
        for (char c : s)
            if (!(c == ' ' || c == '\n') || (!f.empty() && f.back() != ' ')) f += c == '\n' ? ' ' : c;
        return f;
    };
    const std::vector<std::vector<std::string>> commands = {
        {"model", "logits", "--model", "demo-gqa", "--tokens", "1,2"},
        {"model", "generate", "--model", "demo-gqa", "--prompt", "1,2", "--steps", "2"},
        {"model", "speculate", "--model", "demo-gqa", "--steps", "8"},
        {"model", "kv-quant", "--model", "demo-gqa", "--positions", "8", "--steps", "2"},
        {"model", "roofline", "--model", "demo-gqa", "--batch", "1", "--contexts", "8", "--probe-mib", "8", "--repeats", "1"}};
    // int8 activations, named the same with VNNI and with the plain loops.
    std::optional<EnvVar> arith(std::in_place, "INFERLAB_QUANT_ARITH", "int8");
    const std::string int4_arith = "int8 activations (one float32 scale per 32) · int4 levels as exact int32 group sums";
    for (const auto& c : commands) {
        INFO(c[1]);
        const auto r = run_inferlab(with(c, {"--weight-dtype", "int4"}));
        REQUIRE(r.status == 0);
        CHECK(flat(r.out).find("weights: int4; arithmetic: " + int4_arith) != std::string::npos);
        const auto j = parse_json(run_inferlab(with(c, {"--weight-dtype", "int4", "--json"})));
        CHECK(j["weight_dtype"] == "int4");
        CHECK(j["quantized_arithmetic"].get<std::string>().find(int4_arith) == 0);
        // float32 weights: no line, and null in JSON; bf16: the line, still null.
        const auto f = run_inferlab(c);
        CHECK(f.out.find("arithmetic:") == std::string::npos);
        CHECK(parse_json(run_inferlab(with(c, {"--json"})))["quantized_arithmetic"].is_null());
        const auto b = run_inferlab(with(c, {"--weight-dtype", "bf16"}));
        CHECK(flat(b.out).find("weights: bf16; arithmetic: bf16 weights widened to float32, float32 FMAs") != std::string::npos);
        CHECK(parse_json(run_inferlab(with(c, {"--weight-dtype", "bf16", "--json"})))["quantized_arithmetic"].is_null());
    }
    // --kernels reference: the same arithmetic in plain loops, whatever the CPU has.
    const auto ref = parse_json(run_inferlab(with(commands[0], {"--weight-dtype", "int8", "--kernels", "reference", "--json"})));
    CHECK(ref["quantized_arithmetic"].get<std::string>().find("int8 levels as exact int32 group sums (plain loops: the reference kernels)") !=
          std::string::npos);
    arith.reset();
    // check-cache runs float32 activations (and says so in its text): the JSON names them too.
    const auto cc = parse_json(run_inferlab({"model", "check-cache", "--model", "demo-gqa", "--seq-len", "8", "--weight-dtype", "int8", "--json"}));
    CHECK(cc["quantized_arithmetic"].get<std::string>().find("levels × fp16 group scales widened to float32, float32 FMAs") == 0);
}
