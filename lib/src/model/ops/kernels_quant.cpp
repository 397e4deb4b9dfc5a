// The CPU backend's int8 and int4 products: weights widened to float32 per group (QArith::Float),
// or llama.cpp-style integer dot products in AVX-512 VNNI (QArith::Int8Dot), and the activations
// quantized for them; the reference loops where the CPU lacks the instructions.
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
// How far ahead the quantized kernels prefetch their weight rows (same slice): four rows, one
// 4-row tile with batches and four rows of the one-row decode stream (1–16 measured: within the
// noise of a shared machine, see docs/bench-cpu.md).
constexpr std::size_t kQPrefetchRows = 4;
#endif

#if defined(__x86_64__)
// Quantized weights (qweights.hpp): per group of 32, each of the NW rows' levels widened to two
// float32 vectors (int8: 16 bytes sign-extended, twice; int4: one 16-byte load, low nibbles for
// weights 0–15 and high nibbles for 16–31, minus 8) and multiplied by the group's fp16 scale
// (Δ·q is exact in float32: 11 bits of Δ times at most 7 of q); then NW·NB fused multiply-adds
// per 16 lanes, as in tile_avx512. The packed bytes are all that is read from memory. (The
// conversions use their maskz forms with every lane set: GCC 12's plain ones trip
// -Wmaybe-uninitialized in its own header.)
template <unsigned BITS, int NW, int NB>
__attribute__((target("avx512f,avx512bw,f16c"))) static void qtile_avx512(const QMatrix& w, int r0, const float* x, float* y,
                                                                           std::size_t ldy) {
    const int n = w.in, groups = n / kQGroup;
    constexpr int kGroupBytes = kQGroup * int(BITS) / 8;
    const std::size_t rb = w.row_bytes();
    const std::uint8_t* lv = w.levels + std::size_t(r0) * rb;
    const std::uint16_t* sc = w.scales + std::size_t(r0) * std::size_t(groups);
    __m512 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
    for (int g = 0; g < groups; ++g) {
        __m512 lo[NW], hi[NW];
#pragma GCC unroll 16
        for (int i = 0; i < NW; ++i) {
            const std::uint8_t* q = lv + std::size_t(i) * rb + std::size_t(g) * kGroupBytes;
            // The next tile's rows, same slice (a hint: past the matrix's end it never faults).
            _mm_prefetch(reinterpret_cast<const char*>(q + kQPrefetchRows * rb), _MM_HINT_T0);
            const __m512 s = _mm512_set1_ps(_cvtsh_ss(sc[std::size_t(i) * std::size_t(groups) + std::size_t(g)]));
            if constexpr (BITS == 8) {
                lo[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
                hi[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16))));
            } else {
                const __m512i v = _mm512_maskz_cvtepu8_epi32(0xFFFF, _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
                const __m512i eight = _mm512_set1_epi32(8);
                lo[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_sub_epi32(_mm512_and_si512(v, _mm512_set1_epi32(15)), eight));
                hi[i] = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_sub_epi32(_mm512_maskz_srli_epi32(0xFFFF, v, 4), eight));
            }
            lo[i] = _mm512_mul_ps(lo[i], s);
            hi[i] = _mm512_mul_ps(hi[i], s);
        }
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            __m512 xl = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + std::size_t(g) * kQGroup);
            __m512 xh = _mm512_loadu_ps(x + std::size_t(b) * std::size_t(n) + std::size_t(g) * kQGroup + 16);
            __asm__("" : "+v"(xl), "+v"(xh));  // one load into a register, not one memory operand per FMA
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) acc[i][b] = _mm512_fmadd_ps(hi[i], xh, _mm512_fmadd_ps(lo[i], xl, acc[i][b]));
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) y[std::size_t(b) * ldy + std::size_t(i)] = hsum512(acc[i][b]);
}

#endif

#if defined(__x86_64__)
// qtile_avx512 in AVX2 + FMA (avx2.hpp), for CPUs without AVX-512: the same 16 lanes per output in
// two registers, the same widening, scaling and fused multiply-adds in the same order and the
// same halvings, so every output is the AVX-512 kernel's bit for bit. int8: four loads of 8
// levels sign-extended; int4: bytes 0–7 and 8–15 zero-extended, low nibbles the group's weights
// 0–15, high nibbles 16–31, minus 8. With 16 registers a tile holds NW·NB ≤ 4 accumulators.
template <unsigned BITS>
__attribute__((target("avx2,fma,f16c"))) static inline void qwiden_avx2(const std::uint8_t* q, Lanes16& lo, Lanes16& hi) {
    if constexpr (BITS == 8) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16));
        lo = {_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(a)), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(a, 8)))};
        hi = {_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)))};
    } else {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
        const __m256i v0 = _mm256_cvtepu8_epi32(a), v8 = _mm256_cvtepu8_epi32(_mm_srli_si128(a, 8));
        const __m256i fifteen = _mm256_set1_epi32(15), eight = _mm256_set1_epi32(8);
        lo = {_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(v0, fifteen), eight)), _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(v8, fifteen), eight))};
        hi = {_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(v0, 4), eight)), _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(v8, 4), eight))};
    }
}

template <unsigned BITS, int NW, int NB>
__attribute__((target("avx2,fma,f16c"))) static void qtile_avx2(const QMatrix& w, int r0, const float* x, float* y, std::size_t ldy) {
    const int n = w.in, groups = n / kQGroup;
    constexpr int kGroupBytes = kQGroup * int(BITS) / 8;
    const std::size_t rb = w.row_bytes();
    const std::uint8_t* lv = w.levels + std::size_t(r0) * rb;
    const std::uint16_t* sc = w.scales + std::size_t(r0) * std::size_t(groups);
    Lanes16 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = zero16();
    for (int g = 0; g < groups; ++g) {
        Lanes16 lo[NW], hi[NW];
#pragma GCC unroll 16
        for (int i = 0; i < NW; ++i) {
            const std::uint8_t* q = lv + std::size_t(i) * rb + std::size_t(g) * kGroupBytes;
            _mm_prefetch(reinterpret_cast<const char*>(q + kQPrefetchRows * rb), _MM_HINT_T0);
            const __m256 s = _mm256_set1_ps(_cvtsh_ss(sc[std::size_t(i) * std::size_t(groups) + std::size_t(g)]));
            qwiden_avx2<BITS>(q, lo[i], hi[i]);
            lo[i] = mul16(lo[i], s);
            hi[i] = mul16(hi[i], s);
        }
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            const float* xg = x + std::size_t(b) * std::size_t(n) + std::size_t(g) * kQGroup;
            const Lanes16 xl = load16(xg), xh = load16(xg + 16);
#pragma GCC unroll 16
            for (int i = 0; i < NW; ++i) acc[i][b] = fma16(hi[i], xh, fma16(lo[i], xl, acc[i][b]));
        }
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) y[std::size_t(b) * ldy + std::size_t(i)] = hsum16(acc[i][b]);
}

// Each instruction set's tile for the drivers below: at most kTileRows weight rows and
// kAccumulators sums in registers. Every tile shape gives an output the same sum (one
// accumulator each), so the two sets can tile differently.
struct QAvx512 {
    static constexpr int kTileRows = 4, kAccumulators = 16;
    template <unsigned BITS, int NW, int NB>
    static void tile(const QMatrix& w, int r0, const float* x, float* y, std::size_t ldy) { qtile_avx512<BITS, NW, NB>(w, r0, x, y, ldy); }
};
struct QAvx2 {
    static constexpr int kTileRows = 2, kAccumulators = 4;
    template <unsigned BITS, int NW, int NB>
    static void tile(const QMatrix& w, int r0, const float* x, float* y, std::size_t ldy) { qtile_avx2<BITS, NW, NB>(w, r0, x, y, ldy); }
};

template <class Isa, unsigned BITS, int NW, int K>
static void qtail(const QMatrix& w, int r0, const float* x, int k, float* y, std::size_t ldy) {
    if constexpr (K >= 1) {
        if (k == K) Isa::template tile<BITS, NW, K>(w, r0, x, y, ldy);
        else qtail<Isa, BITS, NW, K - 1>(w, r0, x, k, y, ldy);
    }
}

// NW weight rows from r0 against `rows` ≤ 16 input rows, in blocks of NB = kAccumulators/NW.
template <class Isa, unsigned BITS, int NW>
static void qgroup(const QMatrix& w, int r0, const float* x, int rows, float* y, std::size_t ldy) {
    constexpr int NB = Isa::kAccumulators / NW;
    const std::size_t n = std::size_t(w.in);
    int b = 0;
    for (; b + NB <= rows; b += NB) Isa::template tile<BITS, NW, NB>(w, r0, x + std::size_t(b) * n, y + std::size_t(b) * ldy, ldy);
    if (b < rows) qtail<Isa, BITS, NW, NB - 1>(w, r0, x + std::size_t(b) * n, rows - b, y + std::size_t(b) * ldy, ldy);
}

// Up to 16 input rows; the weight rows split over threads in whole tiles of four.
template <class Isa, unsigned BITS>
static void qrows(const QMatrix& w, const float* x, int rows, float* y, int threads) {
    constexpr int NW = Isa::kTileRows;
    const std::size_t ldy = std::size_t(w.out);
    const int chunk = ((w.out + threads - 1) / threads + 3) / 4 * 4;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
        const int r0 = std::min(w.out, t * chunk), r1 = std::min(w.out, r0 + chunk);
        int r = r0;
        if (rows == 1)  // decode: one sequential stream, as in qdot_rows_avx512
            for (; r < r1; ++r) Isa::template tile<BITS, 1, 1>(w, r, x, y + r, ldy);
        for (; r + NW <= r1; r += NW) qgroup<Isa, BITS, NW>(w, r, x, rows, y + r, ldy);
        for (; r < r1; ++r) qgroup<Isa, BITS, 1>(w, r, x, rows, y + r, ldy);
    }
}

// Any number of input rows, 16 at a time.
template <class Isa>
static void qmatmul(const QMatrix& w, const float* x, int rows, float* y, int threads) {
    for (int b0 = 0; b0 < rows; b0 += 16) {
        const float* xb = x + std::size_t(b0) * std::size_t(w.in);
        float* yb = y + std::size_t(b0) * std::size_t(w.out);
        if (w.bits == 8) qrows<Isa, 8>(w, xb, std::min(16, rows - b0), yb, threads);
        else qrows<Isa, 4>(w, xb, std::min(16, rows - b0), yb, threads);
    }
}

#endif

void matmul_quantized(const QMatrix& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (has_avx512()) return qmatmul<QAvx512>(w, x, rows, y, threads);
    // No AVX-512: the same sums in AVX2. F16C (the scales) came before AVX2 on every x86 CPU, and
    // clang 14's __builtin_cpu_supports does not know "f16c", so it is not asked.
    if (has_avx2_fma()) return qmatmul<QAvx2>(w, x, rows, y, threads);
#endif
    ref::matmul_quantized(w, x, rows, y, threads);  // neither: the plain loops
}

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
    static const bool yes = has_avx512() && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
    return yes;
#else
    return false;
#endif
}

#if defined(__x86_64__)
// Int8Dot (qweights.hpp), llama.cpp's Q8_0 × Q8_0 / Q4_0 × Q8_0 dot products in AVX-512 VNNI.
// vpdpbusd multiplies UNSIGNED bytes (first operand) by SIGNED bytes (second) and adds each four
// products into one of 16 int32 lanes. The activations are signed, so the levels go first as
// unsigned: int8 q + 128 (the sign bit flipped, one XOR), int4 q + 8 (as stored). Then
// Σ (q + K)·x = Σ q·x + K·Σ x, so each step's sums start at −K·Σ x: computed once per activation
// row by qdot_prepare_avx512 (a decode step has one activation row and thousands of weight rows).
// Every lane stays exact in int32: a step adds 4 products of at most 255 · 127 (int8) or 8 of
// at most 15 · 127 (int4) to it.
//
// A step reads one 64-byte load of a row's levels:
//   int8: two groups in order; lanes 0–7 end with group g's partial sums, lanes 8–15 with g + 1's.
//   int4: four groups of 16 bytes. The low nibbles are weights 0–15 of each group and the high
//         nibbles weights 16–31, so the activations are laid out once per row to match (per four
//         groups, 128 bytes: the first 16 of each group, then the last 16 of each): two vpdpbusd,
//         low nibbles then high, end with group g + k's sums in lanes 4k..4k+3, and the levels
//         need one shift and two ANDs, no shuffle (one thread over one large matrix: 25–28
//         against 19–20 GB/s for two groups a step widened by a broadcast and a shuffle,
//         docs/bench-cpu.md).
// Each lane is then converted to float32 and multiplied by its group's Δ_w·d, and the lanes are
// summed once at the end of the row.
//
// Scales: 16 groups' fp16 Δ_w of a row are converted in one instruction, and with one input row
// multiplied by its 16 d's at once; a step then moves its groups' Δ_w·d to their lanes with one
// permute. (Converting the scales each step cost five instructions of the twelve in an int4
// step, so the kernel was bound by instructions before memory on two threads.)
template <unsigned BITS>
constexpr int kStepGroups = BITS == 8 ? 2 : 4;
// An int4 step's activations as laid out: the first 16 of each of its four groups, then the last 16.
constexpr std::size_t kInt4StepBytes = std::size_t(kStepGroups<4>) * kQGroup;  // 128

// The activation rows as the steps read them.
struct QDotRows {
    const std::int8_t* x = nullptr;  // [rows, x_row]: int8 the levels in order; int4 kInt4StepBytes a step
    std::size_t x_row = 0;
    const std::int32_t* start = nullptr;  // [rows, steps, 16]: each step's −K·Σx lanes
    std::size_t start_row = 0;
    const float* scale = nullptr;  // [rows, groups]: the activations' d
};

// The first `bytes` (0–64) lanes of a byte mask.
inline __mmask64 first_bytes(int bytes) { return bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1; }

template <unsigned BITS>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) static QDotRows qdot_prepare_avx512(
    const QActivations& a, LineVector<std::int8_t>& xbuf, LineVector<std::int32_t>& starts) {
    constexpr int S = kStepGroups<BITS>;
    const int n = a.in, groups = n / kQGroup, steps = (groups + S - 1) / S;
    QDotRows r;
    r.scale = a.scale.data();
    r.start_row = std::size_t(steps) * 16;
    starts.resize(std::size_t(a.rows) * r.start_row);
    r.start = starts.data();
    if constexpr (BITS == 8) {
        r.x = a.q.data();
        r.x_row = std::size_t(n);
    } else {
        r.x_row = std::size_t(steps) * kInt4StepBytes;
        xbuf.resize(std::size_t(a.rows) * r.x_row);
        r.x = xbuf.data();
    }
    const __m512i K = _mm512_set1_epi8(static_cast<char>(BITS == 8 ? 0x80 : 8));
    const __m512i zero = _mm512_setzero_si512();
    for (int b = 0; b < a.rows; ++b)
        for (int s = 0; s < steps; ++s) {
            const int bytes = std::min(S, groups - s * S) * kQGroup;  // the activations this step covers
            const std::int8_t* p = a.q.data() + std::size_t(b) * std::size_t(n) + std::size_t(s) * S * kQGroup;
            __m512i sum;
            if constexpr (BITS == 8) {
                sum = _mm512_dpbusd_epi32(zero, K, _mm512_maskz_loadu_epi8(first_bytes(bytes), p));
            } else {
                // Groups g..g+3 as 128-bit lanes [g lo, g hi, g+1 lo, g+1 hi] and [g+2 …, g+3 …]:
                // the lo halves gathered into one vector and the hi halves into another (zeros past the row).
                const __m512i v0 = _mm512_maskz_loadu_epi8(first_bytes(std::min(bytes, 64)), p);
                const __m512i v1 = _mm512_maskz_loadu_epi8(first_bytes(std::max(bytes - 64, 0)), p + 64);
                const __m512i lo = _mm512_maskz_shuffle_i64x2(0xFF, v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
                const __m512i hi = _mm512_maskz_shuffle_i64x2(0xFF, v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
                std::int8_t* out = xbuf.data() + std::size_t(b) * r.x_row + std::size_t(s) * kInt4StepBytes;
                _mm512_storeu_si512(out, lo);
                _mm512_storeu_si512(out + 64, hi);
                sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(zero, K, lo), K, hi);
            }
            _mm512_storeu_si512(starts.data() + std::size_t(b) * r.start_row + std::size_t(s) * 16, _mm512_sub_epi32(zero, sum));
        }
    return r;
}

// One step of qdot_tile_avx512: `live` groups from g (all kStepGroups of them when FULL), NW
// weight rows × NB input rows; `in` points at the tile's first input row.
template <unsigned BITS, int NW, int NB, bool FULL>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"), always_inline)) static inline void qdot_step_avx512(
    __m512 (&acc)[NW][NB], const __m512 (&ws)[NW], const __m512 (&xs16)[NB], __m512i idx, const std::uint8_t* lv, std::size_t rb,
    const QDotRows& in, int g, int live) {
    constexpr int kGroupBytes = kQGroup * int(BITS) / 8;
    const int s = g / kStepGroups<BITS>;
    const __mmask64 levels = FULL ? ~__mmask64{0} : first_bytes(live * kGroupBytes);
    __m512i xv[NB], xh[NB], start[NB];
    __m512 xsv[NB] = {};
#pragma GCC unroll 16
    for (int b = 0; b < NB; ++b) {
        if constexpr (BITS == 8) {
            const std::int8_t* p = in.x + std::size_t(b) * in.x_row + std::size_t(g) * kQGroup;
            xv[b] = FULL ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(first_bytes(live * kQGroup), p);
        } else {
            const std::int8_t* p = in.x + std::size_t(b) * in.x_row + std::size_t(s) * kInt4StepBytes;  // zeros past the row
            xv[b] = _mm512_loadu_si512(p);
            xh[b] = _mm512_loadu_si512(p + 64);
        }
        start[b] = _mm512_loadu_si512(in.start + std::size_t(b) * in.start_row + std::size_t(s) * 16);
        if constexpr (NB > 1) xsv[b] = _mm512_maskz_permutexvar_ps(0xFFFF, idx, xs16[b]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i) {
        const std::uint8_t* q = lv + std::size_t(i) * rb + std::size_t(g) * kGroupBytes;
        // The next tile's rows, same slice (a hint: past the matrix's end it never faults). Not
        // in the one-row int8 stream, where the hardware's prefetch alone read 27–30 GB/s on one
        // thread against 19–21 with it (docs/bench-cpu.md).
        if constexpr (BITS == 4 || NW > 1 || NB > 1) _mm_prefetch(reinterpret_cast<const char*>(q + kQPrefetchRows * rb), _MM_HINT_T0);
        const __m512i v = FULL ? _mm512_loadu_si512(q) : _mm512_maskz_loadu_epi8(levels, q);
        __m512i lo, hi = _mm512_setzero_si512();
        if constexpr (BITS == 8) {
            lo = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
        } else {
            lo = _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
            hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
        }
        const __m512 wsv = _mm512_maskz_permutexvar_ps(0xFFFF, idx, ws[i]);
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) {
            __m512i dot = _mm512_dpbusd_epi32(start[b], lo, xv[b]);
            if constexpr (BITS == 4) dot = _mm512_dpbusd_epi32(dot, hi, xh[b]);
            // (Δ_w·d) · float(Σ): the reference's order of the two multiplies
            __m512 scale = wsv;  // NB = 1: ws already holds Δ_w·d
            if constexpr (NB > 1) scale = _mm512_mul_ps(wsv, xsv[b]);
            acc[i][b] = _mm512_fmadd_ps(scale, _mm512_maskz_cvtepi32_ps(0xFFFF, dot), acc[i][b]);
        }
    }
}

template <unsigned BITS, int NW, int NB>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"))) static void qdot_tile_avx512(const QMatrix& w, int r0,
                                                                                                const QDotRows& a, int b0,
                                                                                                float* y, std::size_t ldy) {
    constexpr int S = kStepGroups<BITS>;
    const int groups = w.in / kQGroup;
    const std::size_t rb = w.row_bytes();
    const std::uint8_t* lv = w.levels + std::size_t(r0) * rb;                    // [NW, in·BITS/8]
    const std::uint16_t* sc = w.scales + std::size_t(r0) * std::size_t(groups);  // [NW, groups] fp16
    QDotRows in = a;                                                             // from input row b0
    in.x += std::size_t(b0) * a.x_row;
    in.start += std::size_t(b0) * a.start_row;
    const float* xs = a.scale + std::size_t(b0) * std::size_t(groups);  // [NB, groups]
    // Lane → its group's index within the block of 16: lane / (16 / S), then + S a step.
    const __m512i first = BITS == 8 ? _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0)
                                    : _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i next = _mm512_set1_epi32(S);
    __m512 acc[NW][NB];
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
    for (int blk = 0; blk < groups; blk += 16) {
        const int end = std::min(groups, blk + 16);
        const __mmask16 live = static_cast<__mmask16>((1u << (end - blk)) - 1u);
        // [16] per row: Δ_w of groups blk.. (0 past the row's end); with NB = 1 already × d.
        __m512 ws[NW], xs16[NB];
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) xs16[b] = _mm512_maskz_loadu_ps(live, xs + std::size_t(b) * std::size_t(groups) + std::size_t(blk));
#pragma GCC unroll 16
        for (int i = 0; i < NW; ++i) {
            ws[i] = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_maskz_loadu_epi16(live, sc + std::size_t(i) * std::size_t(groups) + std::size_t(blk)));
            if constexpr (NB == 1) ws[i] = _mm512_mul_ps(ws[i], xs16[0]);
        }
        __m512i idx = first;
        int g = blk;
        if (end - blk == 16) {  // a whole block: its steps unrolled
#pragma GCC unroll 8
            for (int k = 0; k < 16 / S; ++k, g += S, idx = _mm512_add_epi32(idx, next))
                qdot_step_avx512<BITS, NW, NB, true>(acc, ws, xs16, idx, lv, rb, in, g, S);
            continue;
        }
        for (; g + S <= end; g += S, idx = _mm512_add_epi32(idx, next))
            qdot_step_avx512<BITS, NW, NB, true>(acc, ws, xs16, idx, lv, rb, in, g, S);
        if (g < end) qdot_step_avx512<BITS, NW, NB, false>(acc, ws, xs16, idx, lv, rb, in, g, end - g);  // the row's last groups
    }
#pragma GCC unroll 16
    for (int i = 0; i < NW; ++i)
#pragma GCC unroll 16
        for (int b = 0; b < NB; ++b) y[std::size_t(b) * ldy + std::size_t(i)] = hsum512(acc[i][b]);
}

template <unsigned BITS, int NW, int K>
static void qdot_tail_avx512(const QMatrix& w, int r0, const QDotRows& a, int b0, int k, float* y, std::size_t ldy) {
    if constexpr (K >= 1) {
        if (k == K) qdot_tile_avx512<BITS, NW, K>(w, r0, a, b0, y, ldy);
        else qdot_tail_avx512<BITS, NW, K - 1>(w, r0, a, b0, k, y, ldy);
    }
}

// NW weight rows from r0 against the activations' rows [b0, b0 + rows), in blocks of NB = 16/NW.
template <unsigned BITS, int NW>
static void qdot_group_avx512(const QMatrix& w, int r0, const QDotRows& a, int b0, int rows, float* y, std::size_t ldy) {
    constexpr int NB = 16 / NW;
    int b = 0;
    for (; b + NB <= rows; b += NB) qdot_tile_avx512<BITS, NW, NB>(w, r0, a, b0 + b, y + std::size_t(b) * ldy, ldy);
    if (b < rows) qdot_tail_avx512<BITS, NW, NB - 1>(w, r0, a, b0 + b, rows - b, y + std::size_t(b) * ldy, ldy);
}

// Weight rows [r0, r1) against one activation row (decode), one weight row at a time, so that
// the levels are read as one sequential stream (measured faster than four interleaved row
// streams; see docs/bench-cpu.md). Flattened: each row's tile inlined into the loop, its setup
// hoisted (a call per row of 1 KiB cost a fifth of the one-thread speed).
template <unsigned BITS>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,f16c"), flatten)) static void qdot_stream_avx512(
    const QMatrix& w, const QDotRows& a, int b0, int r0, int r1, float* y) {
    for (int r = r0; r < r1; ++r) qdot_tile_avx512<BITS, 1, 1>(w, r, a, b0, y + r, 0);
}

// Up to 16 activation rows from b0; the weight rows split over threads in whole tiles of four.
template <unsigned BITS>
static void qdot_rows_avx512(const QMatrix& w, const QDotRows& a, int b0, int rows, float* y, int threads) {
    const std::size_t ldy = std::size_t(w.out);
    const int chunk = ((w.out + threads - 1) / threads + 3) / 4 * 4;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int t = 0; t < threads; ++t) {
        const int r0 = std::min(w.out, t * chunk), r1 = std::min(w.out, r0 + chunk);
        if (rows == 1) {
            qdot_stream_avx512<BITS>(w, a, b0, r0, r1, y);
            continue;
        }
        int r = r0;
        for (; r + 4 <= r1; r += 4) qdot_group_avx512<BITS, 4>(w, r, a, b0, rows, y + r, ldy);
        for (; r < r1; ++r) qdot_group_avx512<BITS, 1>(w, r, a, b0, rows, y + r, ldy);
    }
}

// quantize_activations (qweights.hpp) in AVX-512 (the maskz forms with every lane set, as in
// reduce512, for GCC 12's header): a group of 32 is two vectors; its max |x|, d and 1/d are the
// reference's scalars, and each level round-half-to-even(x·(1/d)) clipped to ±127, so the bytes
// and scales equal ref::quantize_activations' bit for bit.
__attribute__((target("avx512f,avx512bw"))) static void quantize_activations_avx512(const float* x, int rows, int in,
                                                                                            QActivations& out) {
    const int groups = in / kQGroup;
    out.rows = rows;
    out.in = in;
    out.q.resize(std::size_t(rows) * std::size_t(in));
    out.scale.resize(std::size_t(rows) * std::size_t(groups));
    const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f), inf = _mm512_set1_ps(INFINITY);
    for (std::size_t gi = 0; gi < std::size_t(rows) * std::size_t(groups); ++gi) {
        const float* v = x + gi * kQGroup;
        std::int8_t* q = out.q.data() + gi * kQGroup;
        const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16);
        // |x| not below inf (an inf) or unordered (a NaN)
        if (_mm512_cmp_ps_mask(_mm512_abs_ps(v0), inf, _CMP_NLT_UQ) | _mm512_cmp_ps_mask(_mm512_abs_ps(v1), inf, _CMP_NLT_UQ)) {
            out.scale[gi] = NAN;  // as the reference: d = NaN, every level 0
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_setzero_si256());
            continue;
        }
        const float mx = hmax512(_mm512_maskz_max_ps(0xFFFF, _mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        float d = mx / 127.0f;
        if (!(d > 0 && std::isfinite(1.0f / d))) d = 0;  // as the reference: too small for 1/d, a zero group
        const __m512 id = _mm512_set1_ps(d > 0 ? 1.0f / d : 0.0f);
        out.scale[gi] = d;
        for (int h = 0; h < 2; ++h) {
            const __m512 t = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(h ? v1 : v0, id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            const __m512i l = _mm512_maskz_cvtps_epi32(0xFFFF, _mm512_maskz_min_ps(0xFFFF, _mm512_maskz_max_ps(0xFFFF, t, lo), hi));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16 * h), _mm512_maskz_cvtsepi32_epi8(0xFFFF, l));
        }
    }
}
#endif

void quantize_activations(const float* x, int rows, int in, QActivations& out) {
#if defined(__x86_64__)
    if (cpu_has_avx512_vnni()) {  // where the Int8Dot kernels that read them run
        quantize_activations_avx512(x, rows, in, out);
        return;
    }
#endif
    ref::quantize_activations(x, rows, in, out);
}

void matmul_quantized_int8dot(const QMatrix& w, const float* x, int rows, float* y, int threads) {
#if defined(__x86_64__)
    if (cpu_has_avx512_vnni()) {
        thread_local QActivations a;              // [rows, in] levels and [rows, in/32] scales, reused across calls
        thread_local LineVector<std::int8_t> x4;  // int4: the levels as the steps read them
        thread_local LineVector<std::int32_t> starts;
        quantize_activations(x, rows, w.in, a);
        const QDotRows in = w.bits == 8 ? qdot_prepare_avx512<8>(a, x4, starts) : qdot_prepare_avx512<4>(a, x4, starts);
        for (int b0 = 0; b0 < rows; b0 += 16) {
            float* yb = y + std::size_t(b0) * std::size_t(w.out);
            if (w.bits == 8) qdot_rows_avx512<8>(w, in, b0, std::min(16, rows - b0), yb, threads);
            else qdot_rows_avx512<4>(w, in, b0, std::min(16, rows - b0), yb, threads);
        }
        return;
    }
#endif
    ref::matmul_quantized_int8dot(w, x, rows, y, threads);  // no VNNI: the plain loops
}

}  // namespace inferlab::model
