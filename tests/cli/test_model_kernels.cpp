// --kernels and INFERLAB_KERNELS on the model commands, and bench's documented example.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>

#include "../support/cli.hpp"

using namespace inferlab::test;
using Catch::Matchers::WithinAbs;

namespace {

// Sets INFERLAB_KERNELS for the commands run in a scope (the child inherits it), then restores it.
class KernelsEnv {
public:
    explicit KernelsEnv(const char* value) {
        if (const char* v = std::getenv("INFERLAB_KERNELS")) saved_ = v;
        ::setenv("INFERLAB_KERNELS", value, 1);
    }
    ~KernelsEnv() {
        if (saved_) ::setenv("INFERLAB_KERNELS", saved_->c_str(), 1);
        else ::unsetenv("INFERLAB_KERNELS");
    }

private:
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
        KernelsEnv env("reference");
        CHECK(parse_json(run_inferlab(base))["kernels"] == "reference");
        CHECK(with("fast")["kernels"] == "fast");
    }
}

TEST_CASE("--kernels and INFERLAB_KERNELS: a wrong value exits 2 and names it", "[cli][model][errors]") {
    expect_error({"model", "logits", "--tokens", "1", "--kernels", "avx2"}, "--kernels 'avx2': must be fast or reference");
    expect_error({"model", "speculate", "--kernels", "x"}, "--kernels 'x': must be fast or reference");
    expect_error({"model", "roofline", "--kernels", "x"}, "--kernels 'x': must be fast or reference");
    expect_error({"model", "bench", "--kernels", "x"}, "--kernels 'x': must be fast or reference");
    KernelsEnv env("scalar");
    expect_error({"model", "logits", "--tokens", "1"}, "INFERLAB_KERNELS 'scalar': must be fast or reference");
}

TEST_CASE("model bench: default contexts come from the model and fit its maximum sequence length", "[cli][model]") {
    // tiny-model.json: S_max = 8, so the table starts at 8/8 = 1 and takes ×4 while S + 3 ≤ 8: 1 and 4.
    auto j = parse_json(run_inferlab({"model", "bench", "--config", data_path("tiny-model.json"), "--prompt-len", "2", "--gen", "2",
                                      "--probe-mib", "4", "--batches", "1", "--json"}));
    REQUIRE(j["context_scaling"].size() == 2);
    CHECK(j["context_scaling"][0]["seq_len"] == 1);
    CHECK(j["context_scaling"][1]["seq_len"] == 4);
    expect_error({"model", "bench", "--config", data_path("tiny-model.json"), "--prompt-len", "2", "--gen", "2", "--contexts", "6"},
                 "--contexts '6': exceeds the maximum sequence length 8 less the 3 timed steps");
}

TEST_CASE("model bench: the example in its --help runs", "[cli][model][slow]") {
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
