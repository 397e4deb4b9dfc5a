#pragma once
// Every CUDA call goes through INFERLAB_CUDA_CHECK: a failure throws inferlab::Error with the
// file, the line, CUDA's message and a hint. Every launch goes through INFERLAB_LAUNCH and then
// INFERLAB_CUDA_LAUNCH_CHECK, so that the host emulation (tests/cuda/emu/cuda_runtime.h, which
// defines both launch macros first) runs the same source with the host compiler.
#include <cuda_runtime.h>

#include <string>

#include "inferlab/base/error.hpp"

namespace inferlab::cuda::detail {

[[noreturn]] inline void fail(cudaError_t e, const char* call, const char* file, int line) {
    throw Error(std::string("CUDA call ") + call + " failed at " + file + ":" + std::to_string(line) + ": " +
                cudaGetErrorString(e) + " (hint: is a GPU visible to this process? check nvidia-smi and CUDA_VISIBLE_DEVICES)");
}

// After a launch: its configuration error now, and with INFERLAB_CUDA_SYNC=1 in the environment
// also its execution error (a synchronize after every launch), so a kernel fault is reported at
// the launch that caused it rather than at the next copy. Defined in runtime.cpp.
void after_launch(const char* kernel, const char* file, int line);

}  // namespace inferlab::cuda::detail

#define INFERLAB_CUDA_CHECK(call)                                                            \
    do {                                                                                      \
        cudaError_t inferlab_err_ = (call);                                                   \
        if (inferlab_err_ != cudaSuccess) ::inferlab::cuda::detail::fail(inferlab_err_, #call, __FILE__, __LINE__); \
    } while (0)

#define INFERLAB_CUDA_LAUNCH_CHECK(kernel) ::inferlab::cuda::detail::after_launch(kernel, __FILE__, __LINE__)

#ifndef INFERLAB_LAUNCH
#define INFERLAB_LAUNCH(kernel, grid, block, shared, ...) kernel<<<grid, block, shared>>>(__VA_ARGS__)
#endif
#ifndef INFERLAB_DYNAMIC_SHARED
// The block's dynamic shared memory as T[]; every kernel takes its shared memory this way (no
// static __shared__ arrays), so the emulation can fill all of it with NaN before each block.
#define INFERLAB_DYNAMIC_SHARED(T, name)                         \
    extern __shared__ __align__(16) unsigned char inferlab_shared_[]; \
    T* name = reinterpret_cast<T*>(inferlab_shared_)
#endif
