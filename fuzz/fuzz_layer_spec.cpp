// kv-mem's --layer-spec reader, then the KV arithmetic over the spec it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "inferlab/base/error.hpp"
#include "inferlab/base/files.hpp"
#include "inferlab/data/layer_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const inferlab::KvSpec spec =
            inferlab::parse_layer_spec(inferlab::parse_json_text("--layer-spec", "fuzz.json", text), "fuzz.json");
        (void)inferlab::bytes_per_token(spec);
        (void)inferlab::kv_bytes(spec, {1, 4096, 1u << 20});
        (void)inferlab::kv_paged(spec, {4097}, 16);
    } catch (const inferlab::Error&) {
    }
    return 0;
}
