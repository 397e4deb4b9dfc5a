#pragma once
// What the CPU backend's AVX-512 files share (cpu_backend.cpp, kernels_float.cpp, kernels_quant.cpp):
// the run-time check for AVX-512 and the horizontal reductions. Private to lib/src/model/ops; each
// kernel file includes this header and none includes another kernel file.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "inferlab/model/ops/cpu_backend.hpp"

namespace inferlab::model {

// AVX-512F (unless INFERLAB_ISA caps it: isa_cap), and BW for the bf16 unpacking (every AVX-512 CPU since Skylake-SP has both). The
// int8/int4 kernels also use F16C for their scales, which every AVX-512 CPU has (clang 14's
// __builtin_cpu_supports does not know "f16c", so it is not asked).
inline bool has_avx512() {
#if defined(__x86_64__)
    static const bool yes = isa_cap() == Isa::Avx512 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    return yes;
#else
    return false;
#endif
}

#if defined(__x86_64__)

// Horizontal reductions by halving, 512 → 256 → 128 → 64 → 32 bits, with Op's add or max (the
// extracts through the maskz forms: GCC 12's plain ones trip -Wuninitialized in its own header).
struct AddLanes {
    __attribute__((target("avx512f"))) __m256 operator()(__m256 a, __m256 b) const { return _mm256_add_ps(a, b); }
    __attribute__((target("avx512f"))) __m128 operator()(__m128 a, __m128 b) const { return _mm_add_ps(a, b); }
};
struct MaxLanes {  // of lanes that are not NaN
    __attribute__((target("avx512f"))) __m256 operator()(__m256 a, __m256 b) const { return _mm256_max_ps(a, b); }
    __attribute__((target("avx512f"))) __m128 operator()(__m128 a, __m128 b) const { return _mm_max_ps(a, b); }
};
template <class Op>
__attribute__((target("avx512f"))) inline float reduce512(__m512 v) {
    const Op op;
    const __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 0));
    const __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 1));
    const __m256 r8 = op(lo, hi);
    __m128 r4 = op(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    r4 = op(r4, _mm_movehl_ps(r4, r4));
    r4 = op(r4, _mm_movehdup_ps(r4));
    return _mm_cvtss_f32(r4);
}
__attribute__((target("avx512f"))) inline float hsum512(__m512 v) { return reduce512<AddLanes>(v); }
__attribute__((target("avx512f"))) inline float hmax512(__m512 v) { return reduce512<MaxLanes>(v); }
#endif

}  // namespace inferlab::model
