// The reference model's attention on CUDA (decode: flash-decoding split and merge; prefill; the K/V store), each kernel stating its work.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "check.cuh"
#include "device.cuh"
#include "inferlab/cuda/ops.hpp"

namespace inferlab::cuda {
namespace {

// Address of position `pos` of K/V head `h` under either layout.
__device__ size_t kv_offset(const KvLayout& kv, int h, int pos) {
    if (kv.block_table) {
        const int block = kv.block_table[pos / kv.block_size];
        return ((((static_cast<size_t>(block) * kv.n_layers + kv.layer) * kv.n_kv_heads + h) * kv.block_size) +
                pos % kv.block_size) *
               kv.head_dim;
    }
    return (static_cast<size_t>(h) * kv.seq_max + pos) * kv.head_dim;
}

constexpr int kAttnThreads = 128;  // 4 warps
constexpr int kWarpsPerBlock = kAttnThreads / 32;
constexpr int kKeyTile = 32;       // keys whose row addresses are resolved together, scored, then applied to V
constexpr int kKeysPerWarp = kKeyTile / kWarpsPerBlock;
static_assert(kKeysPerWarp == 8, "transpose_sum8 reduces eight values");

// Eight per-lane values v[0..7], each to be summed over the warp: after 4 + 2 + 1 + 1 + 1 = 9
// shuffles, v[0] of lane L holds the warp sum of value m = 4·bit4(L) + 2·bit3(L) + bit2(L),
// which is returned. Each step keeps half the values and sends the other half to the partner lane.
__device__ inline int transpose_sum8(float* v, int lane) {
    const bool h16 = lane & 16, h8 = lane & 8, h4 = lane & 4;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float send = h16 ? v[k] : v[k + 4], keep = h16 ? v[k + 4] : v[k];
        v[k] = keep + __shfl_xor_sync(0xffffffffu, send, 16);
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
        const float send = h8 ? v[k] : v[k + 2], keep = h8 ? v[k + 2] : v[k];
        v[k] = keep + __shfl_xor_sync(0xffffffffu, send, 8);
    }
    {
        const float send = h4 ? v[0] : v[1], keep = h4 ? v[1] : v[0];
        v[0] = keep + __shfl_xor_sync(0xffffffffu, send, 4);
    }
    v[0] += __shfl_xor_sync(0xffffffffu, v[0], 2);
    v[0] += __shfl_xor_sync(0xffffffffu, v[0], 1);
    return (h16 ? 4 : 0) + (h8 ? 2 : 0) + (h4 ? 1 : 0);
}

// Warp-wide sum and max that leave the result in every lane (butterfly).
__device__ float warp_allsum(float v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ float warp_allmax(float v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Shared memory of decode_attention_split, in this order: row offsets [kKeyTile] (size_t), then
// floats: q [g, d] (scaled by 1/√d), o [g, d], p [g, kKeyTile], m [g], l [g], correction [g].
__host__ __device__ inline std::size_t decode_shared_bytes(int g, int d) {
    return kKeyTile * sizeof(std::size_t) + (2 * std::size_t(g) * d + std::size_t(g) * kKeyTile + 3 * std::size_t(g)) * sizeof(float);
}

// Flash-decoding, pass 1. Block (K/V head kvh, split, row b) reads its split of K/V head kvh ONCE
// for all g = H_q/H_kv query heads that share it (FlashInfer's decode layout), so a step's K/V bytes
// come from memory once: 2·len·H_kv·d·4 B per row. Keys go by tiles of kKeyTile: one thread per
// key resolves its row address (the paged block-table divide and modulo once per key per tile,
// not per element), a warp scores one key with its lanes across d (16-byte loads: one warp reads a
// d = 128 row in one go), then each thread updates its g·d/4 output quads from the tile's V rows
// (16-byte loads, consecutive threads on consecutive bytes). Online softmax per query head: running
// max m, sum l, output o rescaled by e^(m_old − m_new). Writes m, l [B, H_q, splits] and o
// [B, H_q, splits, d]: (2 + d)·4 B per query head and split. An empty split writes m = −FLT_MAX,
// l = 0, o = 0, which the merge weighs by zero.
__global__ void decode_attention_split(const float* __restrict__ q, const DecodeRow* __restrict__ rows, int n_heads,
                                       int split_len, float* __restrict__ m_out, float* __restrict__ l_out,
                                       float* __restrict__ o_out) {
    INFERLAB_DYNAMIC_SHARED(unsigned char, raw);
    const DecodeRow& row = rows[blockIdx.z];
    const KvLayout& kv = row.kv;
    const int d = kv.head_dim, g = n_heads / kv.n_kv_heads;
    const int kvh = blockIdx.x, split = blockIdx.y, splits = gridDim.y, b = blockIdx.z;
    const int tid = threadIdx.x, nthreads = blockDim.x, warp = tid / kWarp, lane = tid % kWarp, warps = nthreads / kWarp;
    std::size_t* off = reinterpret_cast<std::size_t*>(raw);                   // [kKeyTile]
    float* qs = reinterpret_cast<float*>(raw + kKeyTile * sizeof(std::size_t));  // [g, d]
    float* os = qs + g * d;                                                     // [g, d]
    float* ps = os + g * d;                                                     // [g, kKeyTile]
    float* ms = ps + g * kKeyTile;                                              // [g]
    float* ls = ms + g;                                                         // [g]
    float* cs = ls + g;                                                         // [g]
    const int lo = row.lo + split * split_len, hi = min(row.hi, lo + split_len);
    const std::size_t qhead0 = std::size_t(b) * n_heads + std::size_t(kvh) * g;  // first query head of this group
    const float scale = rsqrtf(static_cast<float>(d));
    for (int e = tid; e < g * d; e += nthreads) {
        qs[e] = q[qhead0 * d + e] * scale;
        os[e] = 0.0f;
    }
    for (int j = tid; j < g; j += nthreads) {
        ms[j] = -FLT_MAX;
        ls[j] = 0.0f;
    }
    __syncthreads();
    // 16-byte path: d a multiple of 4 (rows stay 16-byte aligned) and d ≤ 256 (two quads per lane).
    const bool vec = d % 4 == 0 && d <= 256 && reinterpret_cast<std::uintptr_t>(kv.k) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(kv.v) % 16 == 0;
    const int d4 = d / 4;
    for (int t0 = lo; t0 < hi; t0 += kKeyTile) {
        const int n = min(kKeyTile, hi - t0);
        for (int i = tid; i < n; i += nthreads) off[i] = kv_offset(kv, kvh, t0 + i);
        __syncthreads();
        if (vec) {
            // A warp scores kKeysPerWarp keys: all their 16-byte loads issued first (bytes in
            // flight), then per query head 8 partial dots reduced together in 9 shuffles (a
            // transposing butterfly) rather than 8 × 5.
            float4 ka[kKeysPerWarp], kb[kKeysPerWarp];
            const float4 zero = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int m = 0; m < kKeysPerWarp; ++m) {
                const int i = warp + m * kWarpsPerBlock;
                const float4* k4 = reinterpret_cast<const float4*>(kv.k + (i < n ? off[i] : 0));
                ka[m] = i < n && lane < d4 ? k4[lane] : zero;
                kb[m] = i < n && lane + kWarp < d4 ? k4[lane + kWarp] : zero;
            }
            for (int j = 0; j < g; ++j) {
                const float4* q4 = reinterpret_cast<const float4*>(qs + j * d);
                const float4 qa = lane < d4 ? q4[lane] : zero, qb = lane + kWarp < d4 ? q4[lane + kWarp] : zero;
                float part[kKeysPerWarp];
#pragma unroll
                for (int m = 0; m < kKeysPerWarp; ++m)
                    part[m] = ka[m].x * qa.x + ka[m].y * qa.y + ka[m].z * qa.z + ka[m].w * qa.w + kb[m].x * qb.x +
                              kb[m].y * qb.y + kb[m].z * qb.z + kb[m].w * qb.w;
                const int m = transpose_sum8(part, lane);  // lane now holds key m's full dot
                const int i = warp + m * kWarpsPerBlock;
                if (lane % 4 == 0 && i < n) ps[j * kKeyTile + i] = part[0];
            }
        } else {
            for (int i = warp; i < n; i += warps) {  // a warp per key: lanes across d
                const float* kr = kv.k + off[i];
                for (int j = 0; j < g; ++j) {
                    float s = 0.0f;
                    for (int c = lane; c < d; c += kWarp) s += kr[c] * qs[j * d + c];
                    s = warp_allsum(s);
                    if (lane == 0) ps[j * kKeyTile + i] = s;
                }
            }
        }
        __syncthreads();
        for (int j = warp; j < g; j += warps) {  // a warp per query head: the tile's softmax update
            float mx = -FLT_MAX;
            for (int i = lane; i < n; i += kWarp) mx = fmaxf(mx, ps[j * kKeyTile + i]);
            const float m_old = ms[j], m_new = fmaxf(m_old, warp_allmax(mx));
            float sum = 0.0f;
            for (int i = lane; i < n; i += kWarp) {
                const float p = expf(ps[j * kKeyTile + i] - m_new);
                ps[j * kKeyTile + i] = p;
                sum += p;
            }
            sum = warp_allsum(sum);
            if (lane == 0) {
                const float c = expf(m_old - m_new);
                ms[j] = m_new;
                ls[j] = ls[j] * c + sum;
                cs[j] = c;
            }
        }
        __syncthreads();
        if (vec) {
            for (int u = tid; u < g * d4; u += nthreads) {  // output quad u = (query j, quad c)
                const int j = u / d4, c = u % d4;
                float4 acc = reinterpret_cast<float4*>(os)[u];
                const float cj = cs[j];
                acc.x *= cj, acc.y *= cj, acc.z *= cj, acc.w *= cj;
#pragma unroll 4
                for (int i = 0; i < n; ++i) {
                    const float p = ps[j * kKeyTile + i];
                    const float4 v = reinterpret_cast<const float4*>(kv.v + off[i])[c];
                    acc.x += p * v.x, acc.y += p * v.y, acc.z += p * v.z, acc.w += p * v.w;
                }
                reinterpret_cast<float4*>(os)[u] = acc;
            }
        } else {
            for (int e = tid; e < g * d; e += nthreads) {
                const int j = e / d, c = e % d;
                float acc = os[e] * cs[j];
                for (int i = 0; i < n; ++i) acc += ps[j * kKeyTile + i] * kv.v[off[i] + c];
                os[e] = acc;
            }
        }
        __syncthreads();  // the next tile overwrites off and ps
    }
    for (int e = tid; e < g * d; e += nthreads) {
        const int j = e / d, c = e % d;
        o_out[((qhead0 + j) * splits + split) * d + c] = os[e];
    }
    for (int j = tid; j < g; j += nthreads) {
        m_out[(qhead0 + j) * splits + split] = ms[j];
        l_out[(qhead0 + j) * splits + split] = ls[j];
    }
}

// 16 bytes at p: one vector load when p is 16-byte aligned, else four scalar loads.
__device__ inline float4 load4(const float* p) {
    if (reinterpret_cast<std::uintptr_t>(p) % 16 == 0) return *reinterpret_cast<const float4*>(p);
    return float4{p[0], p[1], p[2], p[3]};
}

// Flash-decoding, pass 1, for the common shapes: G = H_q/H_kv in {1, 2, 4, 8} and d ≤ 128 with
// d % 4 = 0 (Llama-3-8B: G = 4, d = 128). Block (K/V head, split, row) as above, K/V read once for
// the G query heads, but with no barrier per tile: each warp runs its own online softmax over its
// share of the split's keys (8 keys at a time, warps interleaved by 8), lanes across d (lane c
// holds quad c of q, of each key's K and V row, and of the G outputs, in registers). A warp
// issues the 16-byte loads of its 8 keys' K AND V rows together (8 KB in flight per warp, 32 KB per
// block), scores them against each query head with one transposing reduction (9 shuffles) and 8
// broadcasts, and updates its (m, l, o). Lane m < 8 resolves key m's row once (the paged divide and
// modulo once per key) and shuffles it to the warp. At the end the warps' partial (m, l, o) are
// merged in shared memory. Bytes as decode_attention_split: 2·len·d·4 B of K/V per K/V head and
// row, G·d·4 B of q, (2 + d)·4 B per (query head, split) written.
constexpr int kWarpKeys = 8;
static_assert(kWarpKeys == kKeysPerWarp, "transpose_sum8 reduces eight values");

// At most 128 registers a thread for G ≤ 4 (four blocks of 128 threads a multiprocessor, 64 KB of
// K/V loads in flight per SM); G = 8 keeps two blocks (its 8 query quads and 8 output quads).
template <int G>
__global__ void __launch_bounds__(kAttnThreads, G <= 4 ? 4 : 2) decode_attention_split_warps(const float* __restrict__ q, const DecodeRow* __restrict__ rows, int n_heads,
                                             int split_len, float* __restrict__ m_out, float* __restrict__ l_out,
                                             float* __restrict__ o_out) {
    INFERLAB_DYNAMIC_SHARED(float, sh);  // o [warps, G, d], then m [warps, G], then l [warps, G]
    const DecodeRow& row = rows[blockIdx.z];
    const KvLayout& kv = row.kv;
    const int d = kv.head_dim, d4 = d / 4;
    const int kvh = blockIdx.x, split = blockIdx.y, splits = gridDim.y, b = blockIdx.z;
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
    const int lo = row.lo + split * split_len, hi = min(row.hi, lo + split_len);
    const std::size_t qhead0 = std::size_t(b) * n_heads + std::size_t(kvh) * G;  // first query head of the group
    const float scale = rsqrtf(static_cast<float>(d));
    const bool active = lane < d4;  // lanes past d/4 hold zeros
    const float4 zero = {0.0f, 0.0f, 0.0f, 0.0f};
    float4 qv[G], o[G];
    float m[G], l[G];
#pragma unroll
    for (int j = 0; j < G; ++j) {
        qv[j] = active ? load4(q + (qhead0 + j) * d + 4 * lane) : zero;
        qv[j].x *= scale, qv[j].y *= scale, qv[j].z *= scale, qv[j].w *= scale;
        o[j] = zero;
        m[j] = -FLT_MAX;
        l[j] = 0.0f;
    }
    for (int t0 = lo + warp * kWarpKeys; t0 < hi; t0 += warps * kWarpKeys) {
        const int n = min(kWarpKeys, hi - t0);
        const std::size_t my_off = lane < n ? kv_offset(kv, kvh, t0 + lane) : 0;
        float4 kr[kWarpKeys], vr[kWarpKeys];
#pragma unroll
        for (int k = 0; k < kWarpKeys; ++k) {
            const std::size_t off = __shfl_sync(0xffffffffu, my_off, k) + 4 * std::size_t(lane);
            const bool ok = k < n && active;
            kr[k] = ok ? load4(kv.k + off) : zero;
            vr[k] = ok ? load4(kv.v + off) : zero;
        }
#pragma unroll
        for (int j = 0; j < G; ++j) {
            float part[kWarpKeys];
#pragma unroll
            for (int k = 0; k < kWarpKeys; ++k)
                part[k] = kr[k].x * qv[j].x + kr[k].y * qv[j].y + kr[k].z * qv[j].z + kr[k].w * qv[j].w;
            transpose_sum8(part, lane);  // lane L now holds the score of key 4·bit4(L) + 2·bit3(L) + bit2(L)
            float sc[kWarpKeys], mx = -FLT_MAX;
#pragma unroll
            for (int k = 0; k < kWarpKeys; ++k) {
                sc[k] = __shfl_sync(0xffffffffu, part[0], 4 * k);  // lane 4k holds key k's score
                sc[k] = k < n ? sc[k] : -INFINITY;
                mx = fmaxf(mx, sc[k]);
            }
            const float m_new = fmaxf(m[j], mx), c = expf(m[j] - m_new);
            float sum = 0.0f;
            float4 acc = {o[j].x * c, o[j].y * c, o[j].z * c, o[j].w * c};
#pragma unroll
            for (int k = 0; k < kWarpKeys; ++k) {
                const float p = expf(sc[k] - m_new);  // 0 for keys past n
                sum += p;
                acc.x += p * vr[k].x, acc.y += p * vr[k].y, acc.z += p * vr[k].z, acc.w += p * vr[k].w;
            }
            o[j] = acc;
            l[j] = l[j] * c + sum;
            m[j] = m_new;
        }
    }
    float* os = sh;                     // [warps, G, d]
    float* ms = os + warps * G * d;     // [warps, G]
    float* ls = ms + warps * G;         // [warps, G]
#pragma unroll
    for (int j = 0; j < G; ++j) {
        if (active) reinterpret_cast<float4*>(os + (warp * G + j) * d)[lane] = o[j];
        if (lane == 0) {
            ms[warp * G + j] = m[j];
            ls[warp * G + j] = l[j];
        }
    }
    __syncthreads();
    // Merge the warps: M = max m_w, L = Σ l_w·e^(m_w − M), o = Σ o_w·e^(m_w − M) (an empty warp
    // has m = −FLT_MAX, l = 0, o = 0 and weighs nothing).
    for (int e = threadIdx.x; e < G * d; e += blockDim.x) {
        const int j = e / d, c = e % d;
        float M = -FLT_MAX;
        for (int w = 0; w < warps; ++w) M = fmaxf(M, ms[w * G + j]);
        float L = 0.0f, O = 0.0f;
        for (int w = 0; w < warps; ++w) {
            const float f = expf(ms[w * G + j] - M);
            L += ls[w * G + j] * f;
            O += os[(w * G + j) * d + c] * f;
        }
        o_out[((qhead0 + j) * splits + split) * d + c] = O;
        if (c == 0) {
            m_out[(qhead0 + j) * splits + split] = M;
            l_out[(qhead0 + j) * splits + split] = L;
        }
    }
}

// Flash-decoding, pass 2: block (query head h, row b) merges its splits: M = max m_j,
// L = Σ l_j·e^(m_j − M), out = Σ o_j·e^(m_j − M) / L. The block finds M and L together and keeps
// the weights e^(m_j − M) in shared memory, so each thread's pass over the splits is independent
// loads (eight in flight), not a serial chain of loads and exponentials per split.
// Reads (2 + d)·4 B per split, writes d·4 B.
__global__ void decode_attention_merge(const float* __restrict__ m_in, const float* __restrict__ l_in,
                                       const float* __restrict__ o_in, int n_heads, int splits, int d, float* __restrict__ out) {
    INFERLAB_DYNAMIC_SHARED(float, sh);  // [32] block reductions, then the weights [splits]
    float* red = sh;
    float* wt = sh + 32;
    const std::size_t hb = std::size_t(blockIdx.y) * n_heads + blockIdx.x;  // (row, query head)
    const float* m = m_in + hb * splits;
    const float* l = l_in + hb * splits;
    float mx = -FLT_MAX;
    for (int j = threadIdx.x; j < splits; j += blockDim.x) mx = fmaxf(mx, m[j]);
    const float M = block_max(mx, red);
    float part = 0.0f;
    for (int j = threadIdx.x; j < splits; j += blockDim.x) {
        const float e = expf(m[j] - M);  // 0 for an empty split (m = −FLT_MAX)
        wt[j] = e;
        part += l[j] * e;
    }
    const float L = block_sum(part, red);  // its barriers also publish wt
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        const float* oi = o_in + hb * splits * d + i;
        float o = 0.0f;
#pragma unroll 8
        for (int j = 0; j < splits; ++j) o += oi[std::size_t(j) * d] * wt[j];
        out[hb * d + i] = o / L;
    }
}

// Prefill: block (t, h) runs one query over keys 0..start+t in tiles, FlashAttention's order:
// running max m, running sum l, output rescaled by e^(m_old − m_new) at each tile.
constexpr int kTile = 64;
__global__ void prefill_attention_kernel(const float* __restrict__ q, KvLayout kv, int start, int n_heads, int group,
                                         int window, float* out) {
    INFERLAB_DYNAMIC_SHARED(float, sh);  // q [d], tile scores [kTile], reduction [32], acc [d]
    const int d = kv.head_dim;
    const int t = blockIdx.x, h = blockIdx.y, kvh = h / group;
    float* qs = sh;
    float* sc = qs + d;
    float* red = sc + kTile;
    float* acc = red + 32;
    const float* qr = q + (static_cast<size_t>(t) * n_heads + h) * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        qs[i] = qr[i];
        acc[i] = 0.0f;
    }
    __syncthreads();
    const float scale = rsqrtf(static_cast<float>(d));
    const int len = start + t + 1;
    float m = -FLT_MAX, l = 0.0f;
    const int first = window > 0 ? max(0, len - window) : 0;
    for (int t0 = first; t0 < len; t0 += kTile) {
        const int t1 = min(len, t0 + kTile);
        float tmax = -FLT_MAX;
        for (int p = t0 + threadIdx.x; p < t1; p += blockDim.x) {
            const float* k = kv.k + kv_offset(kv, kvh, p);
            float s = 0.0f;
            for (int i = 0; i < d; ++i) s += qs[i] * k[i];
            s *= scale;
            sc[p - t0] = s;
            tmax = fmaxf(tmax, s);
        }
        const float m_new = fmaxf(m, block_max(tmax, red));
        const float correction = expf(m - m_new);
        float tsum = 0.0f;
        for (int p = t0 + threadIdx.x; p < t1; p += blockDim.x) {
            const float e = expf(sc[p - t0] - m_new);
            sc[p - t0] = e;
            tsum += e;
        }
        l = l * correction + block_sum(tsum, red);
        for (int i = threadIdx.x; i < d; i += blockDim.x) {
            float o = acc[i] * correction;
            for (int p = t0; p < t1; ++p) o += sc[p - t0] * kv.v[kv_offset(kv, kvh, p) + i];
            acc[i] = o;
        }
        m = m_new;
        __syncthreads();
    }
    float* orow = out + (static_cast<size_t>(t) * n_heads + h) * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) orow[i] = acc[i] / l;
}

// Writes K and V of every row of a step at its position rows[r].hi − 1: element (r, head, i).
// Reads and writes 2·B·H_kv·d·4 B.
__global__ void store_kv_kernel(const float* __restrict__ k, const float* __restrict__ v, const DecodeRow* __restrict__ rows,
                                int n_rows, int n_kv_heads, int head_dim) {
    const std::size_t per_row = std::size_t(n_kv_heads) * head_dim;
    const std::size_t idx = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= per_row * n_rows) return;
    const int r = int(idx / per_row), h = int(idx % per_row / head_dim), i = int(idx % head_dim);
    const KvLayout& kv = rows[r].kv;
    const std::size_t at = kv_offset(kv, h, rows[r].hi - 1) + i;
    const_cast<float*>(kv.k)[at] = k[idx];  // the cache's own storage: KvLayout is const for the readers
    const_cast<float*>(kv.v)[at] = v[idx];
}

}  // namespace

namespace {
// Keys per split: enough splits that H_kv·B·splits blocks give every multiprocessor about four,
// whole tiles per split, and no split shorter than two tiles (the merge costs (2 + d)·4 B per split).
int decode_split_len(int n_rows, int max_len, int n_kv_heads) {
    // Four blocks a multiprocessor: what fits at once (both pass-1 kernels use up to 128 registers
    // a thread, 128 threads a block), so short caches run in one wave and long ones in splits long
    // enough to stream (16 keys a warp and more). Sixteen, as before, gave 256 splits of 128 keys at
    // S = 32768 (B = 1, H_kv = 8): more waves of short blocks, and 256 splits for the merge to walk.
    const long long want = 4ll * multiprocessor_count();
    const long long per_split = std::max(1ll, (long long)n_rows * n_kv_heads);
    long long splits = std::max(1ll, (want + per_split - 1) / per_split);
    splits = std::min(splits, std::max(1ll, (long long)max_len / (2 * kKeyTile)));
    const long long len = (max_len + splits - 1) / splits;
    return int((len + kKeyTile - 1) / kKeyTile * kKeyTile);
}
}  // namespace

std::size_t decode_attention_scratch(int n_rows, int max_len, int n_heads, int n_kv_heads, int head_dim) {
    const int split_len = decode_split_len(n_rows, max_len, n_kv_heads);
    const std::size_t splits = std::size_t((max_len + split_len - 1) / split_len);
    return std::size_t(n_rows) * n_heads * splits * (2 + std::size_t(head_dim));
}

void decode_attention(const float* q, const DecodeRow* rows, int n_rows, int max_len, int n_heads, int n_kv_heads,
                      int head_dim, float* out, float* scratch, std::size_t scratch_floats, DecodeKernel kernel) {
    if (n_rows < 1 || max_len < 1) throw Error("cuda::decode_attention needs at least one row with one cached position");
    if (n_kv_heads < 1 || n_heads % n_kv_heads != 0) throw Error("cuda::decode_attention: H_q must be a multiple of H_kv");
    if (scratch_floats < decode_attention_scratch(n_rows, max_len, n_heads, n_kv_heads, head_dim))
        throw Error("cuda::decode_attention: scratch too small");
    const int split_len = decode_split_len(n_rows, max_len, n_kv_heads);
    const int splits = (max_len + split_len - 1) / split_len;
    const std::size_t heads = std::size_t(n_rows) * n_heads * splits;
    float* m = scratch;  // [B, H_q, splits]
    float* l = m + heads;  // [B, H_q, splits]
    float* o = l + heads;  // [B, H_q, splits, d]
    const int g = n_heads / n_kv_heads;
    if (kernel == DecodeKernel::Auto) {
        // INFERLAB_CUDA_DECODE=block keeps the block-per-tile kernel (the benchmark compares both).
        const char* e = std::getenv("INFERLAB_CUDA_DECODE");
        const bool warps_fit = head_dim % 4 == 0 && head_dim <= 4 * kWarp && (g == 1 || g == 2 || g == 4 || g == 8);
        kernel = warps_fit && !(e && std::strcmp(e, "block") == 0) ? DecodeKernel::Warps : DecodeKernel::Block;
    }
    if (kernel == DecodeKernel::Warps) {
        if (head_dim % 4 != 0 || head_dim > 4 * kWarp) throw Error("cuda::decode_attention: the warp kernel takes d ≤ 128, a multiple of 4");
        const std::size_t shared = (std::size_t(kWarpsPerBlock) * g * head_dim + 2 * std::size_t(kWarpsPerBlock) * g) * sizeof(float);
        const dim3 grid(n_kv_heads, splits, n_rows);
        switch (g) {
            case 1: INFERLAB_LAUNCH(decode_attention_split_warps<1>, grid, kAttnThreads, shared, q, rows, n_heads, split_len, m, l, o); break;
            case 2: INFERLAB_LAUNCH(decode_attention_split_warps<2>, grid, kAttnThreads, shared, q, rows, n_heads, split_len, m, l, o); break;
            case 4: INFERLAB_LAUNCH(decode_attention_split_warps<4>, grid, kAttnThreads, shared, q, rows, n_heads, split_len, m, l, o); break;
            case 8: INFERLAB_LAUNCH(decode_attention_split_warps<8>, grid, kAttnThreads, shared, q, rows, n_heads, split_len, m, l, o); break;
            default: throw Error("cuda::decode_attention: the warp kernel takes 1, 2, 4 or 8 query heads per K/V head");
        }
        INFERLAB_CUDA_LAUNCH_CHECK("decode_attention_split_warps");
        INFERLAB_LAUNCH(decode_attention_merge, dim3(n_heads, n_rows), kAttnThreads, (32 + std::size_t(splits)) * sizeof(float), m, l, o, n_heads, splits, head_dim, out);
        INFERLAB_CUDA_LAUNCH_CHECK("decode_attention_merge");
        return;
    }
    const std::size_t shared = decode_shared_bytes(g, head_dim);
    if (shared > 48 * 1024) {  // past the default limit only with the opt-in (227 KiB on Hopper)
        INFERLAB_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_split, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
    }
    INFERLAB_LAUNCH(decode_attention_split, dim3(n_kv_heads, splits, n_rows), kAttnThreads, shared, q, rows, n_heads, split_len, m, l, o);
    INFERLAB_CUDA_LAUNCH_CHECK("decode_attention_split");
    INFERLAB_LAUNCH(decode_attention_merge, dim3(n_heads, n_rows), kAttnThreads, (32 + std::size_t(splits)) * sizeof(float), m, l, o, n_heads, splits, head_dim, out);
    INFERLAB_CUDA_LAUNCH_CHECK("decode_attention_merge");
}

void prefill_attention(const float* q, const KvLayout& kv, int start, int t, int n_heads, int window, float* out) {
    const std::size_t shared = (2 * static_cast<std::size_t>(kv.head_dim) + kTile + 32) * sizeof(float);
    INFERLAB_LAUNCH(prefill_attention_kernel, dim3(t, n_heads), kAttnThreads, shared, q, kv, start, n_heads, n_heads / kv.n_kv_heads, window, out);
    INFERLAB_CUDA_LAUNCH_CHECK("prefill_attention_kernel");
}

void store_kv(const float* k, const float* v, const DecodeRow* rows, int n_rows, int n_kv_heads, int head_dim) {
    const std::size_t n = std::size_t(n_rows) * n_kv_heads * head_dim;
    INFERLAB_LAUNCH(store_kv_kernel, unsigned((n + 255) / 256), 256, 0, k, v, rows, n_rows, n_kv_heads, head_dim);
    INFERLAB_CUDA_LAUNCH_CHECK("store_kv_kernel");
}

}  // namespace inferlab::cuda
