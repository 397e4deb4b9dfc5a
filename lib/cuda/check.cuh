#pragma once
// Every CUDA call goes through INFERLAB_CUDA_CHECK: a failure throws inferlab::Error with the
// file, the line, CUDA's message and a hint.
#include <cuda_runtime.h>

#include <string>

#include "inferlab/error.hpp"

namespace inferlab::cuda::detail {

[[noreturn]] inline void fail(cudaError_t e, const char* call, const char* file, int line) {
    throw Error(std::string("CUDA call ") + call + " failed at " + file + ":" + std::to_string(line) + ": " +
                cudaGetErrorString(e) + " (hint: is a GPU visible to this process? check nvidia-smi and CUDA_VISIBLE_DEVICES)");
}

}  // namespace inferlab::cuda::detail

#define INFERLAB_CUDA_CHECK(call)                                                            \
    do {                                                                                      \
        cudaError_t inferlab_err_ = (call);                                                   \
        if (inferlab_err_ != cudaSuccess) ::inferlab::cuda::detail::fail(inferlab_err_, #call, __FILE__, __LINE__); \
    } while (0)

#define INFERLAB_CUDA_LAUNCH_CHECK() INFERLAB_CUDA_CHECK(cudaGetLastError())
