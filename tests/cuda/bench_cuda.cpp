// GPU benchmark for scripts/gpu-check.sh: matrix-vector product and decode attention in GB/s
// against the card's measured device-to-device copy bandwidth, and whole-model decode tokens/s
// beside decode-roofline's bound for the same model and card.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "inferlab/cuda/backend.hpp"
#include "inferlab/cuda/ops.hpp"
#include "inferlab/model/bench.hpp"
#include "inferlab/model/transformer.hpp"
#include "inferlab/model_config.hpp"
#include "inferlab/roofline.hpp"

using namespace inferlab;
using namespace inferlab::cuda;

namespace {
struct MatvecArg {
    const float *w, *x;
    float* y;
    int rows, cols;
};
struct AttnArg {
    const float* q;
    KvLayout kv;
    int lo, len, heads;
    float *out, *scratch;
    std::size_t scratch_floats;
};
}  // namespace

int main() {
    std::string why;
    if (!available(&why)) {
        std::printf("no CUDA device: %s\n", why.c_str());
        return 77;
    }
    std::printf("device: %s\n", device_name().c_str());
    const double copy = copy_bandwidth_gbs(std::size_t(1) << 30, 20);
    std::printf("device-to-device copy: %.1f GB/s (read + write)\n\n", copy);
    std::printf("%-44s %12s %10s %12s\n", "op", "time", "GB/s", "of copy");

    for (auto [rows, cols] : std::vector<std::pair<int, int>>{{4096, 4096}, {14336, 4096}, {4096, 14336}, {32000, 4096}}) {
        DeviceBuffer w(std::size_t(rows) * cols * 4), x(std::size_t(cols) * 4), y(std::size_t(rows) * 4);
        MatvecArg a{w.f(), x.f(), y.f(), rows, cols};
        const double ms = time_ms([](void* p) { auto* m = static_cast<MatvecArg*>(p); matvec(m->w, m->x, m->y, m->rows, m->cols); }, &a, 50);
        const double bytes = (double(rows) * cols + cols + rows) * 4;
        std::printf("%-44s %9.3f ms %10.1f %11.1f%%\n", fmt::format("matvec {}x{} fp32", rows, cols).c_str(), ms, bytes / (ms * 1e-3) / 1e9,
                    100 * bytes / (ms * 1e-3) / 1e9 / copy);
    }
    for (int len : {4096, 32768, 131072}) {
        const int hq = 32, hkv = 8, d = 128;
        DeviceBuffer q(std::size_t(hq) * d * 4), k(std::size_t(hkv) * len * d * 4), v(std::size_t(hkv) * len * d * 4),
            out(std::size_t(hq) * d * 4);
        const std::size_t sf = decode_attention_scratch(len, hq, d);
        DeviceBuffer scratch(sf * 4);
        KvLayout kv;
        kv.k = k.f();
        kv.v = v.f();
        kv.n_kv_heads = hkv;
        kv.head_dim = d;
        kv.seq_max = len;
        AttnArg a{q.f(), kv, 0, len, hq, out.f(), scratch.f(), sf};
        const double ms = time_ms(
            [](void* p) {
                auto* m = static_cast<AttnArg*>(p);
                decode_attention(m->q, m->kv, m->lo, m->len, m->heads, m->out, m->scratch, m->scratch_floats);
            },
            &a, 20);
        const double bytes = 2.0 * hkv * double(len) * d * 4;  // K and V read once
        std::printf("%-44s %9.3f ms %10.1f %11.1f%%\n",
                    fmt::format("decode attention S={} H_q=32 H_kv=8 d=128", len).c_str(), ms, bytes / (ms * 1e-3) / 1e9,
                    100 * bytes / (ms * 1e-3) / 1e9 / copy);
    }

    // Whole model: ref-110m decode on the GPU beside decode-roofline's bound at the copy bandwidth.
    auto cfg = load_named_model("ref-110m");
    auto w = model::random_weights(model::dims_from_config(cfg), 1);
    auto backend = make_backend(*w);
    model::Transformer gpu(*w, *backend);
    model::ContiguousCache cache(w->dims(), *backend);
    std::vector<int> prompt(128, 5);
    gpu.forward(prompt, cache);
    const int steps = 64;
    synchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) gpu.forward(std::vector<int>{(i * 7) % 32000}, cache);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Machine hw;
    hw.bandwidth = copy / 2 * 1e9;  // read bandwidth: half of the copy's read + write
    DecodeStep bound = decode_step(model::reference_decode_model(w->dims()), {std::uint64_t(128 + steps / 2)}, hw);
    std::printf("\nref-110m decode, batch 1: %.1f tokens/s measured; decode-roofline bound %.1f tokens/s (%.1f%%)\n", steps / s,
                bound.aggregate_tokens_per_s, 100 * (steps / s) / bound.aggregate_tokens_per_s);
    return 0;
}
