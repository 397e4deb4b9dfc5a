#include "inferlab/model/run/probe.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "inferlab/base/error.hpp"
#include "inferlab/base/format.hpp"
#include "inferlab/base/memory.hpp"
#include "inferlab/base/rng.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/qweights.hpp"

namespace inferlab::model {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::uint64_t last_level_cache_bytes() {
    std::uint64_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 8; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        std::ifstream level(dir + "level"), size(dir + "size");
        int lv = 0;
        std::string sz;
        if (!(level >> lv) || !(size >> sz) || sz.empty()) continue;
        std::uint64_t v = 0;
        std::size_t k = 0;
        while (k < sz.size() && std::isdigit(static_cast<unsigned char>(sz[k]))) v = v * 10 + std::uint64_t(sz[k++] - '0');
        if (k < sz.size() && sz[k] == 'K') v <<= 10;
        else if (k < sz.size() && sz[k] == 'M') v <<= 20;
        if (lv > best_level || (lv == best_level && v > best)) best_level = lv, best = v;
    }
    return best;
}

namespace {
std::uint64_t budgeted(std::uint64_t bytes) {
    require_memory(bytes, "bandwidth probe", bytes_all_units(bytes));
    return bytes;
}
}  // namespace

ReadProbe::ReadProbe(std::uint64_t bytes, int threads) : mem_(budgeted(bytes)) {  // the same placement as the weights
    p_.threads = threads;
    p_.bytes = mem_.bytes();
    p_.huge_pages = mem_.huge();
    float* buf = static_cast<float*>(mem_.data());
    const std::size_t n = mem_.bytes() / sizeof(float);
    for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<float>(i & 1023) * 1e-3f;
}

double ReadProbe::pass() {
    float* buf = static_cast<float*>(mem_.data());
    const std::size_t size = mem_.bytes(), n = size / sizeof(float);
    const int threads = p_.threads;
    volatile float sink = 0;
    auto t0 = std::chrono::steady_clock::now();
    float total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total) schedule(static) if (threads > 1)
    for (std::size_t blk = 0; blk < n / 4096; ++blk) {
        const float* a = buf + blk * 4096;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (int i = 0; i < 4096; i += 8)
            for (int k = 0; k < 8; ++k) acc[k] += a[i + k];
        total += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
    sink = sink + total;
    const double sum_gbs = static_cast<double>(size) / seconds_since(t0) / 1e9;
    double kernel_gbs = 0;
    // The decode kernel's stream over the same pages: W [rows, 4096] float32 times x.
    constexpr int kCols = 4096;
    const Eigen::Index rows = static_cast<Eigen::Index>(n / kCols);
    if (rows > 0) {
        const MatMap w(buf, rows, kCols);
        std::vector<float> x(kCols, 1e-3f), y(static_cast<std::size_t>(rows));
        t0 = std::chrono::steady_clock::now();
        matvec(w, x.data(), y.data(), threads);
        kernel_gbs = double(rows) * kCols * sizeof(float) / seconds_since(t0) / 1e9;
        sink = sink + y[0];
    }
    p_.sum_gbs = std::max(p_.sum_gbs, sum_gbs);
    p_.kernel_gbs = std::max(p_.kernel_gbs, kernel_gbs);
    p_.read_gbs = std::max(p_.sum_gbs, p_.kernel_gbs);
    ++p_.passes;
    last_gbs_ = std::max(sum_gbs, kernel_gbs);
    return last_gbs_;
}

BandwidthProbe measure_read_bandwidth(std::uint64_t bytes, int threads, int repeats) {
    ReadProbe probe(bytes, threads);
    for (int rep = 0; rep < repeats; ++rep) probe.pass();
    return probe.result();
}

double measure_matmul_gflops(int n, int threads, int repeats) {
    Eigen::setNbThreads(threads);
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
    double best = 0;
    for (int rep = 0; rep < repeats; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        c.noalias() = a * b;
        auto t1 = std::chrono::steady_clock::now();
        best = std::max(best, 2.0 * n * n * double(n) / std::chrono::duration<double>(t1 - t0).count() / 1e9);
    }
    volatile float sink = c(0, 0);
    (void)sink;
    return best;
}

double measure_batch_product_gflops(int rows, int threads, int repeats, unsigned weight_bits) {
    const int out = 256 * threads, n = 768;
    std::vector<float> w(std::size_t(out) * n), x(std::size_t(rows) * n), y(std::size_t(rows) * out);
    std::vector<std::uint16_t> wb(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 97) * 1e-3f;
    for (std::size_t i = 0; i < w.size(); ++i) wb[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(w[i]) >> 16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 89) * 1e-3f;
    const MatMap wm(w.data(), out, n);
    // int8/int4: the same matrix quantized (qweights.hpp's layout), through the quantized kernel of
    // the arithmetic the run's weights use (make_weights_at's default: Int8Dot where VNNI is).
    const bool int8dot = default_quant_arith() == QArith::Int8Dot;
    const unsigned qbits = weight_bits == 8 || weight_bits == 4 ? weight_bits : 8;
    std::vector<std::uint8_t> levels(std::size_t(out) * n * qbits / 8);
    std::vector<std::uint16_t> scales(std::size_t(out) * (n / kQGroup));
    quantize_rows(w.data(), out, n, qbits, levels.data(), scales.data(), 1);
    const QMatrix qm{out, n, qbits, levels.data(), scales.data()};
    constexpr int kCalls = 2000;  // ~1.5 GFLOP per batch row: long enough to time
    double best = 0;
    for (int rep = 0; rep < repeats; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < kCalls; ++c) {
            if (weight_bits == 16) matmul_few_rows_bf16(wb.data(), out, n, x.data(), rows, y.data(), threads);
            else if (weight_bits == 8 || weight_bits == 4)
                (int8dot ? matmul_quantized_int8dot : matmul_quantized)(qm, x.data(), rows, y.data(), threads);
            else matmul_few_rows(wm, x.data(), rows, y.data(), threads);
        }
        auto t1 = std::chrono::steady_clock::now();
        best = std::max(best, 2.0 * rows * double(out) * n * kCalls / std::chrono::duration<double>(t1 - t0).count() / 1e9);
    }
    volatile float sink = y[0];
    (void)sink;
    return best;
}

Machine measured_machine(const BandwidthProbe& bw, double product_gflops) {
    Machine m;
    m.bandwidth = bw.read_gbs * 1e9;
    m.peak_flops = product_gflops * 1e9;
    return m;
}

}  // namespace inferlab::model
