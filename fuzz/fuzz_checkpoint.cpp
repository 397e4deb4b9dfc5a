// The llama2.c checkpoint reader (header, sizes, body), then one forward pass of a model it
// accepts: logits must be finite or the pass must end in an Error.
#include <algorithm>
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
        // The cache holds the positions fed, as the model commands size theirs: a header's seq_len
        // of millions (a tied classifier's file without the RoPE tables does not bound it) costs
        // nothing here, as it must cost nothing there.
        Transformer m(*w);
        ContiguousCache cache(d, m.backend(), std::min(2, d.seq_len));
        const MatrixRM logits = m.forward({0, d.vocab_size - 1}, cache);
        for (Eigen::Index i = 0; i < logits.size(); ++i)
            if (!std::isfinite(logits.data()[i])) std::abort();  // non-finite logits given as output: a finding
    } catch (const inferlab::Error&) {
    }
    return 0;
}
