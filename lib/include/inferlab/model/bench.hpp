#pragma once
// Measurements of the reference model on this machine: read bandwidth (STREAM-style, on huge
// pages), matrix-multiply rate, and what one decode step must read.
#include <cstdint>

#include "inferlab/model/transformer.hpp"
#include "inferlab/model/weights.hpp"
#include "inferlab/roofline.hpp"

namespace inferlab::model {

// Bytes one decode step reads at S cached tokens: every weight matrix once (the embedding table
// only when it doubles as the LM head; otherwise one row of it) plus K and V of all S positions
// of every layer, the latter from kv-mem's formula at float32.
// `weight_bits` is 32 for float32 weights, 16 for bf16 ones (the KV cache stays float32).
std::uint64_t decode_step_bytes(const Dims& d, std::uint64_t seq_len, unsigned weight_bits = 32);

struct BandwidthProbe {
    double read_gbs = 0;       // best of `repeats` passes, decimal GB/s
    std::uint64_t bytes = 0;   // buffer size
    bool huge_pages = false;   // madvise(MADV_HUGEPAGE) accepted
    int threads = 1;
};
// Sums a 2 MiB-aligned buffer of `bytes` with several accumulators per thread.
BandwidthProbe measure_read_bandwidth(std::uint64_t bytes, int threads, int repeats);

// decode-roofline's read-volume model of this reference model: W = the weight bytes one step
// reads, M_KV from kv-mem's formula at float32, P = the parameter count for FLOPs.
DecodeModel reference_decode_model(const Dims& d, unsigned weight_bits = 32);

// Seconds per decode step (best of `repeats`) for `batch` sequences, each with its own cache
// holding `context` tokens, one token each per step (one forward over all rows).
double time_decode_step(const Transformer& m, int batch, int context, int repeats, const ForwardOptions& opt);

// GFLOP/s of an n×n float32 matrix product through Eigen (2n³ FLOPs), best of `repeats`.
double measure_matmul_gflops(int n, int threads, int repeats);

}  // namespace inferlab::model
