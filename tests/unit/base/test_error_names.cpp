// Library errors name no command-line flag (issue #15): each says the quantity in the library's
// own terms, or the `where` its caller passes ("--checkpoint" from the model commands).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "../../support/small_model.hpp"
#include "inferlab/base/error.hpp"
#include "inferlab/data/layer_spec.hpp"
#include "inferlab/data/model_config.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/weights.hpp"

using namespace inferlab;
using namespace inferlab::model;

TEST_CASE("library names: the draft's layers and perturbation in the library's terms, the value as the shortest double",
          "[unit][names]") {
    const Weights& w = test::small_gqa_weights(1);  // L = 2
    CHECK_THROWS_WITH(derive_draft(w, 3, 0, 1), "draft layers '3': must be between 1 and the target's 2");
    CHECK_THROWS_WITH(derive_draft(w, 1, -1, 1), "perturbation '-1': must not be negative");  // not "-1.000000"
    CHECK_THROWS_WITH(derive_draft(w, 1, -0.25, 1), "perturbation '-0.25': must not be negative");
    try {
        derive_draft(w, 0, 0, 1);
        FAIL("layers 0 accepted");
    } catch (const InputError& e) {
        CHECK(e.where() == "draft layers");  // the key a command maps to its flag
        CHECK(e.value() == "0");
    }
}

TEST_CASE("library names: file loaders name the file's role, or the caller's where", "[unit][names]") {
    const std::string path = "/tmp/inferlab-names-short.bin";
    {
        std::ofstream f(path, std::ios::binary);
        f << "short";  // 5 bytes: less than the 28-byte header
    }
    CHECK_THROWS_WITH(read_checkpoint(path), "checkpoint '" + path + "': is truncated: shorter than the 28-byte header");
    CHECK_THROWS_WITH(read_checkpoint(path, "--checkpoint"), Catch::StartsWith("--checkpoint '" + path + "': is truncated"));
    std::remove(path.c_str());

    CHECK_THROWS_WITH(load_named_model("gpt-5"), Catch::StartsWith("model 'gpt-5': is not a shipped model (known: "));
    CHECK_THROWS_WITH(load_named_model("gpt-5", "--model"), Catch::StartsWith("--model 'gpt-5': is not a shipped model"));
    const std::string bad = INFERLAB_TEST_DATA "/malformed.json";
    CHECK_THROWS_WITH(load_config_file(bad), Catch::StartsWith("config file '" + bad + "': is not valid JSON"));
    CHECK_THROWS_WITH(load_config_file(bad, "--config"), Catch::StartsWith("--config '" + bad + "': is not valid JSON"));
    CHECK_THROWS_WITH(read_layer_spec(bad), Catch::StartsWith("layer spec '" + bad + "': is not valid JSON"));
    CHECK_THROWS_WITH(parse_layer_spec(nlohmann::json::array(), "x.json"),
                      "layer spec 'x.json': must hold a non-empty list of layers (or {\"layers\": [...]})");
    CHECK_THROWS_WITH(parse_layer_spec(nlohmann::json::parse(R"([{"h_kv": 8}])"), "x.json", "--layer-spec"),
                      "--layer-spec layer 0: missing key 'd_k'");
}

TEST_CASE("library names: int8 weights on widths that are not whole groups name the dtype, not a flag", "[unit][names]") {
    Dims d;
    d.dim = 40;  // not a multiple of the 32-wide groups
    d.hidden_dim = 64;
    d.n_layers = 1;
    d.n_heads = 4;
    d.n_kv_heads = 2;
    d.vocab_size = 16;
    d.seq_len = 8;
    auto w = random_weights(d, 1);
    CHECK_THROWS_WITH(make_weights_at(*w, WeightDtype::Int8, 1),
                      "int8 weights: width '40': is a product's input width (dim or hidden); int8/int4 weights need multiples of 32");
}
