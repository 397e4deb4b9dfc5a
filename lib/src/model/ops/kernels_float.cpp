// The CPU backend's float32 and bf16 products (decode rows, batches, prefill): AVX-512 tiles, or
// the same sums in AVX2 + FMA, chosen at run time; Eigen or the reference loops where the CPU has
// neither.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "avx2.hpp"
#include "avx512.hpp"
#include "inferlab/model/ops/cpu_backend.hpp"
#include "inferlab/model/ops/kernels.hpp"
#include "inferlab/model/ops/qweights.hpp"
#include "inferlab/model/ops/transformer.hpp"

namespace inferlab::model {


#if defined(__x86_64__)
// AVX-512 products, chosen at run time (the default build has no -march): 16 floats per
// instruction, float32 fused multiply-adds, bf16 weights widened to float32 as they are loaded.
// One kernel for one row (decode) and for a few rows (a decode batch, a draft to verify): a tile
// of NW weight rows × NB input rows keeps NW·NB ≤ 16 accumulators in registers; per slice it
// loads NW weight vectors and NB input vectors for NW·NB fused multiply-adds (4×4: 8 loads, 16
// FMAs), so at NB ≥ 4 the loop is bound by the FMA units, not by loads, and at NB = 1 by memory.

static inline float widen(float v) { return v; }
static inline float widen(std::uint16_t v) { return bf16_to_float(v); }

// s + Σ_{k ≤ t < n} w[t]·x[t], one fused multiply-add per element in index order. Written out
// because a plain `s += w·x` leaves the compiler free to choose which products it rounds before
// adding (GCC 12 rounded the first 8 of a tail, fused the rest), and that choice differs between
// instruction sets; inlined, the fma is one instruction in each kernel's target.
template <typename WT>
__attribute__((always_inline)) static inline float tail_sum(float s, const WT* w, int k, int n, const float* x) {
    for (int t = k; t < n; ++t) s = std::fma(widen(w[t]), x[t], s);
    return s;
}

// Prefetch the same slice of the weight rows this many tiles ahead (past the matrix's end near
// its last rows: a prefetch is a hint and never faults).
constexpr int kPrefetchGroups = 1;

// y[b·ldy + i] = Σ_k w[i·n + k]·x[b·n + k] for i < NW, b < NB.
template <int NW, int NB, typename WT>
__attribute__((target("avx512f,avx512bw"))) static void tile_avx512(const WT* w, int n, const float* x, float* y, std::size_t ldy) {
    __m512 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
    int k = 0;
    if constexpr (std::is_same_v<WT, float>) {
        for (; k + 16 <= n; k += 16) {
            __m512 wv[NW];
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) {
                // The weights stream from memory once: ask for them a tile ahead (at NB ≥ 4 the loop
                // is compute-bound, and the hardware prefetcher alone falls behind).
                _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(i + kPrefetchGroups * NW) * std::size_t(n) + k), _MM_HINT_T0);
                wv[i] = _mm512_loadu_ps(w + std::size_t(i) * std::size_t(n) + k);
            }
#pragma GCC unroll 16
            for (int b = 0; b < NB; ++b) {
                __m512 xv = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + k);
                __asm__("" : "+v"(xv));  // one load into a register, not one memory operand per FMA
#pragma GCC unroll 16
                for (int i = 0; i < NW; ++i) acc[i][b] = _mm512_fmadd_ps(wv[i], xv, acc[i][b]);
            }
        }
    } else {
        // bf16: one 64-byte load holds 32 weights; interleaving zeros below each (unpack lo/hi)
        // makes them two float32 vectors, in the element order permute_for_bf16 gave x.
        const __m512i zero = _mm512_setzero_si512();
        for (; k + 32 <= n; k += 32) {
            __m512 lo[NW], hi[NW];
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) {
                _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(i + kPrefetchGroups * NW) * std::size_t(n) + k), _MM_HINT_T0);
                const __m512i h = _mm512_loadu_si512(w + std::size_t(i) * std::size_t(n) + k);
                lo[i] = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, h));
                hi[i] = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, h));
            }
#pragma GCC unroll 16
            for (int b = 0; b < NB; ++b) {
                __m512 xl = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + k);
                __m512 xh = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + k + 16);
                __asm__("" : "+v"(xl), "+v"(xh));
#pragma GCC unroll 16
                for (int i = 0; i < NW; ++i) acc[i][b] = _mm512_fmadd_ps(hi[i], xh, _mm512_fmadd_ps(lo[i], xl, acc[i][b]));
            }
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            y[std::size_t(b) * ldy + std::size_t(i)] =
                tail_sum(hsum512(acc[i][b]), w + std::size_t(i) * std::size_t(n), k, n, x + std::size_t(b) * std::size_t(n));
        }
}

// Prefetch distance of the one-row decode stream, in bytes ahead of the slice being read.
constexpr std::size_t kRowPrefetchBytes = 1024;

// The longest float32 x (bf16: its widened copy) the one-row stream reads. Measured on a Zen 4
// with a 32 KiB L1: x of 2,048 (8 KiB) stays in L1 beside the stream; 5,632 (22 KiB) does not
// and reads faster through the tiles; widths between were not measured. See
// few_rows_avx512_threads and docs/bench-cpu.md.
constexpr std::size_t kRowStreamMaxXBytes = 12 * 1024;

// One weight row against one input row (decode): the weights read as one sequential stream.
// The sum runs in the tiles' order (one accumulator of 16 lanes, slice after slice; bf16's low
// half before its high half), so a decode step's logits equal the no-cache pass's bit for bit.
template <typename WT>
__attribute__((target("avx512f,avx512bw"))) static float row_avx512(const WT* w, int n, const float* x) {
    __m512 acc = _mm512_setzero_ps();
    const char* ahead = reinterpret_cast<const char*>(w) + kRowPrefetchBytes;
    int k = 0;
    if constexpr (std::is_same_v<WT, float>) {
        for (; k + 16 <= n; k += 16) {
            _mm_prefetch(ahead + std::size_t(k) * sizeof(float), _MM_HINT_T0);
            acc = _mm512_fmadd_ps(_mm512_loadu_ps(w + k), _mm512_loadu_ps(x + k), acc);
        }
    } else {
        const __m512i zero = _mm512_setzero_si512();
        for (; k + 32 <= n; k += 32) {
            _mm_prefetch(ahead + std::size_t(k) * sizeof(WT), _MM_HINT_T0);
            const __m512i h = _mm512_loadu_si512(w + k);
            acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, h)), _mm512_loadu_ps(x + k), acc);
            acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, h)), _mm512_loadu_ps(x + k + 16), acc);
        }
    }
    return tail_sum(hsum512(acc), w, k, n, x);
}

// The order the bf16 tile reads x in: within each 32 elements, lane L (of four) of the "lo"
// vector holds elements 8L..8L+3 and of the "hi" vector 8L+4..8L+7 (what unpacklo/hi_epi16 make
// of 32 packed bf16). Elements past the last whole 32 stay in place.
static void permute_for_bf16(const float* x, int n, float* xp) {
    int k = 0;
    for (; k + 32 <= n; k += 32)
        for (int lane = 0; lane < 4; ++lane)
            for (int j = 0; j < 4; ++j) {
                xp[k + 4 * lane + j] = x[k + 8 * lane + j];
                xp[k + 16 + 4 * lane + j] = x[k + 8 * lane + 4 + j];
            }
    for (; k < n; ++k) xp[k] = x[k];
}

// AVX2 + FMA where the CPU lacks AVX-512 (avx2.hpp): the AVX-512 kernels' sums bit for bit, so
// that decode equals a batch's row and the no-cache pass on these CPUs too, and a result does not
// depend on which of the two instruction sets ran it. With 16 registers instead of 32, a tile
// holds 4 accumulators (2 weight rows × 2 input rows, or 1 × 4).
// 32 packed bf16 as the "lo" and "hi" vectors of tile_avx512: unpacklo/hi_epi16 work within each
// 128-bit lane, so on each 16-weight half they give the matching half of the 512-bit result.
__attribute__((target("avx2,fma"))) static inline void widen_bf16x32(const std::uint16_t* w, Lanes16& lo, Lanes16& hi) {
    const __m256i zero = _mm256_setzero_si256();
    const __m256i h0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    const __m256i h1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16));
    lo = {_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, h0)), _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, h1))};
    hi = {_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, h0)), _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, h1))};
}

// tile_avx512 in AVX2: y[b·ldy + i] = Σ_k w[i·n + k]·x[b·n + k] for i < NW, b < NB.
template <int NW, int NB, typename WT>
__attribute__((target("avx2,fma"))) static void tile_avx2(const WT* w, int n, const float* x, float* y, std::size_t ldy) {
    Lanes16 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = zero16();
    int k = 0;
    if constexpr (std::is_same_v<WT, float>) {
        for (; k + 16 <= n; k += 16) {
            Lanes16 wv[NW];
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) {
                _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(i + kPrefetchGroups * NW) * std::size_t(n) + k), _MM_HINT_T0);
                wv[i] = load16(w + std::size_t(i) * std::size_t(n) + k);
            }
#pragma GCC unroll 16
            for (int b = 0; b < NB; ++b) {
                const Lanes16 xv = load16(x + std::size_t(b) * std::size_t(n) + k);
#pragma GCC unroll 16
                for (int i = 0; i < NW; ++i) acc[i][b] = fma16(wv[i], xv, acc[i][b]);
            }
        }
    } else {
        for (; k + 32 <= n; k += 32) {
            Lanes16 lo[NW], hi[NW];
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) {
                _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(i + kPrefetchGroups * NW) * std::size_t(n) + k), _MM_HINT_T0);
                widen_bf16x32(w + std::size_t(i) * std::size_t(n) + k, lo[i], hi[i]);
            }
#pragma GCC unroll 16
            for (int b = 0; b < NB; ++b) {
                const Lanes16 xl = load16(x + std::size_t(b) * std::size_t(n) + k), xh = load16(x + std::size_t(b) * std::size_t(n) + k + 16);
#pragma GCC unroll 16
                for (int i = 0; i < NW; ++i) acc[i][b] = fma16(hi[i], xh, fma16(lo[i], xl, acc[i][b]));
            }
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b)
            y[std::size_t(b) * ldy + std::size_t(i)] =
                tail_sum(hsum16(acc[i][b]), w + std::size_t(i) * std::size_t(n), k, n, x + std::size_t(b) * std::size_t(n));
}

// row_avx512 in AVX2: one weight row against one input row, read as one stream.
template <typename WT>
__attribute__((target("avx2,fma"))) static float row_avx2(const WT* w, int n, const float* x) {
    Lanes16 acc = zero16();
    const char* ahead = reinterpret_cast<const char*>(w) + kRowPrefetchBytes;
    int k = 0;
    if constexpr (std::is_same_v<WT, float>) {
        for (; k + 16 <= n; k += 16) {
            _mm_prefetch(ahead + std::size_t(k) * sizeof(float), _MM_HINT_T0);
            acc = fma16(load16(w + k), load16(x + k), acc);
        }
    } else {
        for (; k + 32 <= n; k += 32) {
            _mm_prefetch(ahead + std::size_t(k) * sizeof(WT), _MM_HINT_T0);
            Lanes16 lo, hi;
            widen_bf16x32(w + k, lo, hi);
            acc = fma16(hi, load16(x + k + 16), fma16(lo, load16(x + k), acc));
        }
    }
    return tail_sum(hsum16(acc), w, k, n, x);
}

// Each instruction set's kernels for the drivers below: tiles of up to kTileRows weight rows
// holding at most kAccumulators sums in registers, and the one-row stream. Any tile shape gives
// each output the same sum (one accumulator per output), so the shapes can differ.
struct Avx512 {
    static constexpr int kTileRows = 4, kAccumulators = 16;
    template <int NW, int NB, typename WT>
    static void tile(const WT* w, int n, const float* x, float* y, std::size_t ldy) { tile_avx512<NW, NB>(w, n, x, y, ldy); }
    template <typename WT>
    static float row(const WT* w, int n, const float* x) { return row_avx512(w, n, x); }
};
struct Avx2 {
    static constexpr int kTileRows = 2, kAccumulators = 4;
    template <int NW, int NB, typename WT>
    static void tile(const WT* w, int n, const float* x, float* y, std::size_t ldy) { tile_avx2<NW, NB>(w, n, x, y, ldy); }
    template <typename WT>
    static float row(const WT* w, int n, const float* x) { return row_avx2(w, n, x); }
};

// The last K < NB input rows of a block: tile<NW, K>, K chosen at run time.
template <class Isa, int NW, int K, typename WT>
static void tail_tiles(const WT* w, int n, const float* x, int k, float* y, std::size_t ldy) {
    if constexpr (K >= 1) {
        if (k == K) Isa::template tile<NW, K>(w, n, x, y, ldy);
        else tail_tiles<Isa, NW, K - 1>(w, n, x, k, y, ldy);
    }
}

// NW weight rows against `rows` input rows in blocks of NB = kAccumulators/NW (the group's NW·n
// weights stay in L1 from one block to the next; the input rows stay in L1 throughout).
template <class Isa, int NW, typename WT>
static void group_tiles(const WT* w, int n, const float* x, int rows, float* y, std::size_t ldy) {
    constexpr int NB = Isa::kAccumulators / NW;
    int b = 0;
    for (; b + NB <= rows; b += NB) Isa::template tile<NW, NB>(w, n, x + std::size_t(b) * n, y + std::size_t(b) * ldy, ldy);
    if (b < rows) tail_tiles<Isa, NW, NB - 1>(w, n, x + std::size_t(b) * n, rows - b, y + std::size_t(b) * ldy, ldy);
}

template <class Isa, typename WT>
static void few_rows_tiles(const WT* w, Eigen::Index out, int n, const float* x, int rows, float* y, Eigen::Index r0,
                           Eigen::Index r1) {
    constexpr int NW = Isa::kTileRows;
    const std::size_t ldy = std::size_t(out);
    Eigen::Index r = r0;
    for (; r + NW <= r1; r += NW) group_tiles<Isa, NW>(w + r * n, n, x, rows, y + r, ldy);
    for (; r < r1; ++r) group_tiles<Isa, 1>(w + r * n, n, x, rows, y + r, ldy);
}

// Splits the weight rows over threads in even chunks of whole 4-row tiles.
template <class Isa, typename WT>
static void few_rows_threads(const WT* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
    if constexpr (std::is_same_v<WT, std::uint16_t>) {
        thread_local std::vector<float> xp;
        xp.resize(std::size_t(rows) * std::size_t(n));
        for (int b = 0; b < rows; ++b) permute_for_bf16(x + std::size_t(b) * n, n, xp.data() + std::size_t(b) * n);
        x = xp.data();
    }
    // Each thread takes whole tiles of four rows (two AVX2 tiles).
    const Eigen::Index chunk = ((out + threads - 1) / threads + 3) / 4 * 4;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
        const Eigen::Index r0 = std::min(out, Eigen::Index(t) * chunk), r1 = std::min(out, r0 + chunk);
        // One input row (decode): the weight rows one after another, one sequential stream (as
        // the quantized kernels read them; see docs/bench-cpu.md), while x fits in L1 beside the
        // stream. A longer x is reloaded from L2 on every row; the tiles share each of its loads
        // between their rows (the same sums, bit for bit).
        if (rows == 1 && std::size_t(n) * sizeof(float) <= kRowStreamMaxXBytes)
            for (Eigen::Index r = r0; r < r1; ++r) y[r] = Isa::row(w + std::size_t(r) * std::size_t(n), n, x);
        else if (r0 < r1)
            few_rows_tiles<Isa>(w, out, n, x, rows, y, r0, r1);
    }
}

// Many input rows (a prefill): W in blocks of 64 rows (192 KiB of float32, kept in L2 while every
// block of 16 input rows passes over it), each block through the tiles above; blocks split over threads.
template <class Isa>
static void many_rows_threads(const float* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
    constexpr Eigen::Index kBlock = 64;
    const Eigen::Index blocks = (out + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (Eigen::Index blk = 0; blk < blocks; ++blk) {
        const Eigen::Index r0 = blk * kBlock, r1 = std::min(out, r0 + kBlock);
        for (int b0 = 0; b0 < rows; b0 += 16)
            few_rows_tiles<Isa>(w, out, n, x + std::size_t(b0) * std::size_t(n), std::min(16, rows - b0),
                                y + std::size_t(b0) * std::size_t(out), r0, r1);
    }
}

// Any number of input rows through the tiles, 16 at a time (the most a call reads W once for).
template <class Isa, typename WT>
static void rows_tiles(const WT* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
    for (int b0 = 0; b0 < rows; b0 += 16)
        few_rows_threads<Isa>(w, out, n, x + std::size_t(b0) * std::size_t(n), std::min(16, rows - b0),
                              y + std::size_t(b0) * std::size_t(out), threads);
}

// Calls f(Avx512{}) or f(Avx2{}), the wider of the two this CPU has; false, having called
// nothing, where it has neither.
template <class F>
static bool with_tiles(F&& f) {
    if (has_avx512()) return f(Avx512{}), true;
    if (has_avx2_fma()) return f(Avx2{}), true;
    return false;
}

#endif

bool matmul_many_rows(const MatMap& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    return with_tiles([&](auto isa) {
        many_rows_threads<decltype(isa)>(w.data(), w.rows(), static_cast<int>(w.cols()), x, rows, y, threads);
    });
#else
    (void)w, (void)x, (void)rows, (void)y, (void)threads;
    return false;
#endif
}

void matvec(const MatMap& w, const float* x, float* y, int threads) {
    matmul_few_rows(w, x, 1, y, threads);
}

void matmul_few_rows(const MatMap& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (with_tiles([&](auto isa) { rows_tiles<decltype(isa)>(w.data(), w.rows(), static_cast<int>(w.cols()), x, rows, y, threads); }))
        return;
#endif
    // Neither: Eigen's product (vectorised for what the CPU has), Y [rows, out] = X·Wᵀ, one row
    // at a time as decode evaluates it: several rows go through Eigen's GEMM (or, when small, its
    // coefficient loops), which sum in other orders, and a batch's row would differ from decode's.
    (void)threads;
    const Eigen::Map<const MatrixRM> xm(x, rows, w.cols());
    Eigen::Map<MatrixRM> ym(y, rows, w.rows());
    for (int b = 0; b < rows; ++b) ym.row(b).noalias() = xm.row(b) * w.transpose();
}


Bf16Weights to_bf16(const Weights& w) {
    Bf16Weights b;
    b.float_base = w.data();
    b.mem = HugePageBuffer(w.floats() * sizeof(std::uint16_t));
    auto* values = static_cast<std::uint16_t*>(b.mem.data());
    for (std::uint64_t i = 0; i < w.floats(); ++i) {
        std::uint32_t u;
        std::memcpy(&u, w.data() + i, sizeof u);
        u += 0x7FFFu + ((u >> 16) & 1u);  // round to nearest, ties to even (weights are finite)
        values[i] = static_cast<std::uint16_t>(u >> 16);
    }
    return b;
}

void matmul_few_rows_bf16(const std::uint16_t* w, Eigen::Index out, int n, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (with_tiles([&](auto isa) { rows_tiles<decltype(isa)>(w, out, n, x, rows, y, threads); })) return;
#endif
    ref::matmul_few_rows_bf16(w, out, n, x, rows, y, threads);  // neither: the plain loops
}

}  // namespace inferlab::model
