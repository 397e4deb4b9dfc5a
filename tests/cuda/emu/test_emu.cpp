// The host emulation itself (tests/cuda/emu/cuda_runtime.h): the behaviours the kernel tests rely
// on, each checked with a small kernel written here.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "cuda_runtime.h"

namespace {

__global__ void shuffle_kernel(float* out) {
    float v = float(threadIdx.x);
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
    out[threadIdx.x] = v;
    out[64 + threadIdx.x] = __shfl_xor_sync(0xffffffffu, float(threadIdx.x), 1);
}

__global__ void barrier_kernel(int* out) {
    INFERLAB_DYNAMIC_SHARED(int, sh);
    sh[threadIdx.x] = int(blockIdx.x * 1000 + threadIdx.x);
    __syncthreads();
    // Reads a value another thread wrote before the barrier (the barrier makes it visible).
    out[blockIdx.x * blockDim.x + threadIdx.x] = sh[(threadIdx.x + 1) % blockDim.x];
}

__global__ void early_exit_kernel(int* out) {
    if (threadIdx.x >= 40) return;  // exited threads no longer hold the barrier
    __syncthreads();
    out[threadIdx.x] = 1;
}

__global__ void unwritten_kernel(float* out) {
    INFERLAB_DYNAMIC_SHARED(float, sh);
    if (threadIdx.x == 0) sh[0] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = sh[threadIdx.x];  // only sh[0] was written in this block
}

__global__ void nothing_kernel(int) {}

}  // namespace

TEST_CASE("emulation: warp shuffles sum across the warp and exchange lanes", "[emu]") {
    std::vector<float> out(128, NAN);
    INFERLAB_LAUNCH(shuffle_kernel, 1, 64, 0, out.data());
    REQUIRE(cudaGetLastError() == cudaSuccess);
    CHECK(out[0] == 496.0f);       // 0 + 1 + ... + 31
    CHECK(out[32] == 1520.0f);     // 32 + ... + 63: each warp on its own
    CHECK(out[64 + 6] == 7.0f);    // lane 6 reads lane 7
    CHECK(out[64 + 33] == 32.0f);  // lane 1 of the second warp reads its lane 0
}

TEST_CASE("emulation: __syncthreads orders shared memory and each block gets its own", "[emu]") {
    std::vector<int> out(3 * 96, -1);
    INFERLAB_LAUNCH(barrier_kernel, 3, 96, 96 * sizeof(int), out.data());
    REQUIRE(cudaGetLastError() == cudaSuccess);
    CHECK(out[0] == 1);
    CHECK(out[95] == 0);
    CHECK(out[2 * 96 + 5] == 2006);
    std::vector<int> flags(64, 0);
    INFERLAB_LAUNCH(early_exit_kernel, 1, 64, 0, flags.data());
    CHECK(flags[39] == 1);
    CHECK(flags[40] == 0);
}

TEST_CASE("emulation: shared memory nothing wrote reads as NaN", "[emu]") {
    std::vector<float> out(32, 0.0f);
    INFERLAB_LAUNCH(unwritten_kernel, 2, 32, 32 * sizeof(float), out.data());
    CHECK(out[0] == 1.0f);
    CHECK(std::isnan(out[1]));
    CHECK(std::isnan(out[31]));
}

TEST_CASE("emulation: launches the hardware would refuse are refused", "[emu]") {
    INFERLAB_LAUNCH(nothing_kernel, 1, 1025, 0, 0);  // over 1024 threads per block
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    INFERLAB_LAUNCH(nothing_kernel, dim3(1, 65536), 32, 0, 0);  // grid.y over 65535
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    INFERLAB_LAUNCH(nothing_kernel, 1, 32, 49 * 1024, 0);  // over 48 KiB without the opt-in
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    REQUIRE(cudaFuncSetAttribute(nothing_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
    INFERLAB_LAUNCH(nothing_kernel, 1, 32, 49 * 1024, 0);  // and accepted with it
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);  // reading the error clears it, as in CUDA
}
