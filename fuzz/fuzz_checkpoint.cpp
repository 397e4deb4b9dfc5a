// The llama2.c checkpoint reader (header, sizes, body), then one forward pass of a model it
// accepts when that model is small: logits must be finite or the pass must end in an Error.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "inferlab/base/error.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/transformer.hpp"
#include "inferlab/model/ops/weights.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size), std::ios::binary);
    using namespace inferlab::model;
    try {
        auto w = read_checkpoint(in, size, "fuzz.bin");
        const Dims& d = w->dims();
        // A forward pass allocates the KV cache for seq_len positions: only small ones here.
        if (std::uint64_t(d.n_layers) * std::uint64_t(d.seq_len) * std::uint64_t(d.kv_dim()) > (1u << 20)) return 0;
        Transformer m(*w);
        ContiguousCache cache(d, m.backend());
        const MatrixRM logits = m.forward({0, d.vocab_size - 1}, cache);
        for (Eigen::Index i = 0; i < logits.size(); ++i)
            if (!std::isfinite(logits.data()[i])) std::abort();  // non-finite logits given as output: a finding
    } catch (const inferlab::Error&) {
    }
    return 0;
}
