// The config.json reader: parse (depth, number range), then every derived quantity the
// calculators read from a config. Any inferlab::Error is a correct answer to bad input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/data/model_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const inferlab::ModelConfig c = inferlab::parse_hf_config(inferlab::parse_json_text("--config", "fuzz.json", text), "fuzz.json");
        (void)inferlab::count_params(c);
        const inferlab::KvSpec spec = inferlab::kv_spec_from_config(c, 16);
        (void)inferlab::kv_bytes(spec, {1, 8192});
    } catch (const inferlab::Error&) {
    }
    return 0;
}
