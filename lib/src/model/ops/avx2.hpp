#pragma once
// What the CPU backend's AVX2 + FMA kernels share (kernels_float.cpp, kernels_quant.cpp): the
// run-time check and one AVX-512 vector's 16 lanes held in two 8-float registers. These kernels
// run where the CPU lacks AVX-512 (every x86 CPU since Haswell and Zen 1 has AVX2 + FMA) and
// give the AVX-512 kernels' sums bit for bit: each lane is fed the same fused multiply-adds in
// the same order and reduced by the same halvings. Private to lib/src/model/ops, like avx512.hpp.
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "inferlab/model/ops/cpu_backend.hpp"

namespace inferlab::model {

// AVX2 and FMA, unless INFERLAB_ISA caps the kernels at the plain loops (isa_cap).
inline bool has_avx2_fma() {
#if defined(__x86_64__)
    static const bool yes = isa_cap() != Isa::Scalar && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
#else
    return false;
#endif
}

#if defined(__x86_64__)

struct Lanes16 {
    __m256 l0, l8;  // lanes 0–7 and 8–15 of one AVX-512 vector
};

__attribute__((target("avx2,fma"))) inline Lanes16 zero16() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
__attribute__((target("avx2,fma"))) inline Lanes16 load16(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
__attribute__((target("avx2,fma"))) inline Lanes16 mul16(Lanes16 a, __m256 s) { return {_mm256_mul_ps(a.l0, s), _mm256_mul_ps(a.l8, s)}; }
__attribute__((target("avx2,fma"))) inline Lanes16 fma16(Lanes16 a, Lanes16 b, Lanes16 c) {
    return {_mm256_fmadd_ps(a.l0, b.l0, c.l0), _mm256_fmadd_ps(a.l8, b.l8, c.l8)};
}
// hsum512's halvings (avx512.hpp): its first step adds lanes 8–15 to lanes 0–7.
__attribute__((target("avx2,fma"))) inline float hsum16(Lanes16 v) {
    const __m256 r8 = _mm256_add_ps(v.l0, v.l8);
    __m128 r4 = _mm_add_ps(_mm256_castps256_ps128(r8), _mm256_extractf128_ps(r8, 1));
    r4 = _mm_add_ps(r4, _mm_movehl_ps(r4, r4));
    r4 = _mm_add_ps(r4, _mm_movehdup_ps(r4));
    return _mm_cvtss_f32(r4);
}

#endif

}  // namespace inferlab::model
