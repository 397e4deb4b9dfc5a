#pragma once
// The CPU backend's kernels in two forms with the same signatures: the fast ones (hand-written
// AVX-512 tiles where the CPU has AVX-512F/BW, the same sums in AVX2 + FMA where it has those,
// Eigen or the reference loops where it has neither; declared in transformer.hpp) and the
// reference ones below: plain loops, one accumulator, in the order a student would write them (llama2.c's run.c), simple enough to check by eye. Which ones a
// forward pass uses is CpuBackendOptions::kernels, fixed when the CPU backend is made (the app
// reads INFERLAB_KERNELS there); tests/unit/model/ops/test_kernels.cpp compares the two on random inputs.
#include <cstdint>
#include <string>
#include <vector>

#include "inferlab/model/ops/backend.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/kv_cache.hpp"
#include "inferlab/model/ops/weights.hpp"

namespace inferlab::model {

// "fast" or "reference"; InputError naming `where` otherwise.
Kernels parse_kernels(const std::string& where, const std::string& text);
std::string to_string(Kernels k);

namespace ref {

// y [out] = W [out, in] · x [in].
void matvec(const MatMap& w, const float* x, float* y, int threads);
// Y [rows, out] = X [rows, in] · Wᵀ for any number of rows (the fast form takes up to 16).
void matmul_few_rows(const MatMap& w, const float* x, int rows, float* y, int threads);
// The same with W stored as bf16 [out, in], each weight widened to float32 as it is read.
void matmul_few_rows_bf16(const std::uint16_t* w, Eigen::Index out, int in, const float* x, int rows, float* y,
                          int threads);
// One query head q [d] over positions [lo, hi) of K/V head `kvh` in `layer` of the cache, read in
// place: out [d] = Σ_p softmax(q·k_p/√d)_p · v_p, in the plain or online order of opt.attention.
// `scratch` holds the scores (resized here).
void attend(const float* q, KvCache& cache, int layer, int kvh, int lo, int hi, int d, const ForwardOptions& opt,
            float* out, std::vector<float>& scratch);

}  // namespace ref
}  // namespace inferlab::model
