#pragma once
// This machine's probes: the read bandwidth β (STREAM-style, on huge pages, and the decode kernel's
// own stream), the product rate π, and the last-level cache's size. model bench and model roofline
// (measure.hpp) both read the machine through these.
#include <cstdint>

#include "inferlab/calc/roofline.hpp"
#include "inferlab/model/ops/weights.hpp"
#include "inferlab/model/ops/transformer.hpp"

namespace inferlab::model {

// The last-level cache's size in bytes from /sys (0 when the system does not say): a model whose
// weights fit there is read from cache, and the DRAM bound does not apply to it.
std::uint64_t last_level_cache_bytes();

struct BandwidthProbe {
    double read_gbs = 0;       // best of the passes, decimal GB/s
    int passes = 0;            // passes of each loop
    std::uint64_t bytes = 0;   // buffer size
    bool huge_pages = false;   // madvise(MADV_HUGEPAGE) accepted
    int threads = 1;
    double sum_gbs = 0;        // the plain sum loop (several accumulators per thread)
    double kernel_gbs = 0;     // the decode kernel's own stream: matvec over the buffer as a float32 matrix
};
// Reads a 2 MiB-aligned buffer of `bytes` (on huge pages where granted, like the weights) two
// ways, best of `repeats` passes each: a plain sum loop, and the decode kernel itself (the fast
// matvec over the buffer as a [rows, 4096] float32 matrix, threads splitting rows as in decode).
// read_gbs is the faster of the two: a bound the decode can beat is not a bound.
BandwidthProbe measure_read_bandwidth(std::uint64_t bytes, int threads, int repeats);

// The same probe as an object whose passes can be spread over a run (compare_decode_dtypes):
// each pass() reads the buffer once with each loop and keeps the best.
class ReadProbe {
public:
    ReadProbe(std::uint64_t bytes, int threads);
    // One pass of each loop; returns this pass's figure (the faster loop's GB/s).
    double pass();
    double last_gbs() const { return last_gbs_; }  // the latest pass's figure (0 before the first)
    const BandwidthProbe& result() const { return p_; }

private:
    HugePageBuffer mem_;
    BandwidthProbe p_;
    double last_gbs_ = 0;
};

// GFLOP/s of an n×n float32 matrix product through Eigen (2n³ FLOPs), best of `repeats`.
double measure_matmul_gflops(int n, int threads, int repeats);

// GFLOP/s of the batch-decode product (matmul_few_rows, matmul_few_rows_bf16 for weight_bits
// 16, for 8 and 4 matmul_quantized_int8dot or matmul_quantized as default_quant_arith() says;
// `rows` input rows) over weights small enough to stay in cache (256 rows of 768
// per thread): this machine's compute roof π for a decode step, where the read bandwidth is its
// β. Best of `repeats`.
double measure_batch_product_gflops(int rows, int threads, int repeats, unsigned weight_bits = 32);

// This machine as decode-roofline sees it: β from the read probe (GB/s), π from the batch
// product (GFLOP/s).
Machine measured_machine(const BandwidthProbe& bw, double product_gflops);

}  // namespace inferlab::model
