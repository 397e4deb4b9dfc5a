#pragma once
// What lib/cuda's kernel files share: warp and block reductions, and the grid size of a launch.
// Private to lib/cuda (ops.cu: the matrix, norm and elementwise kernels; attention.cu: the
// attention kernels and the K/V store). Each file gets its own copies (anonymous namespace).
#include <cuda_runtime.h>

#include <cfloat>

namespace inferlab::cuda {
namespace {

constexpr int kWarp = 32;

__device__ float warp_sum(float v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ float warp_max(float v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

// Block-wide reductions through shared memory (blockDim.x a multiple of 32, at most 1024).
__device__ float block_sum(float v, float* shared) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warp_sum(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    const int warps = blockDim.x / kWarp;
    v = threadIdx.x < warps ? shared[threadIdx.x] : 0.0f;
    if (warp == 0) v = warp_sum(v);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}

__device__ float block_max(float v, float* shared) {
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    v = warp_max(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    const int warps = blockDim.x / kWarp;
    v = threadIdx.x < warps ? shared[threadIdx.x] : -FLT_MAX;
    if (warp == 0) v = warp_max(v);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}

inline int blocks_for(int n, int threads) { return (n + threads - 1) / threads; }

}  // namespace
}  // namespace inferlab::cuda
