// The runtime functions of inferlab/cuda/ops.hpp for the host emulation: "device" memory is host
// memory, filled with NaN when allocated as on the GPU (lib/cuda/runtime.cpp), and the emulated
// device reports a few multiprocessors so that launch sizing picks several splits on small cases.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "cuda_runtime.h"
#include "inferlab/base/error.hpp"
#include "inferlab/cuda/ops.hpp"

namespace inferlab::cuda {

namespace {
std::uint64_t g_launches = 0;
}  // namespace
std::uint64_t launch_count() { return g_launches; }

namespace detail {
void after_launch(const char* kernel, const char* file, int line) {
    ++g_launches;
    const cudaError_t e = cudaGetLastError();  // the emulation runs each launch to completion, so this is also its result
    if (e != cudaSuccess)
        throw Error(std::string("CUDA kernel ") + kernel + " failed at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorString(e));
}
}  // namespace detail

bool available(std::string*) { return true; }
std::string device_name() { return "host emulation of the CUDA execution model (tests/cuda/emu)"; }
int multiprocessor_count() { return 4; }

void* malloc_device(std::size_t bytes) {
    const std::size_t n = (std::max<std::size_t>(bytes, 4) + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, n);  // cudaMalloc's alignment
    if (!p) throw std::bad_alloc();
    std::memset(p, 0xff, n);  // NaN in every float
    return p;
}
void free_device(void* p) noexcept { std::free(p); }
void zero_device(void* p, std::size_t bytes) { std::memset(p, 0, bytes); }
void copy_to_device(void* dst, const void* host, std::size_t bytes) { std::memcpy(dst, host, bytes); }
void copy_to_host(void* host, const void* src, std::size_t bytes) { std::memcpy(host, src, bytes); }
void copy_on_device(void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
void synchronize() {}
void* malloc_pinned(std::size_t bytes) { return malloc_device(bytes); }
void free_pinned(void* p) noexcept { free_device(p); }
void copy_to_device_async(void* dst, const void* pinned_host, std::size_t bytes) { std::memcpy(dst, pinned_host, bytes); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) : p_(malloc_device(bytes)), bytes_(bytes) {}
DeviceBuffer::~DeviceBuffer() { free_device(p_); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        free_device(p_);
        p_ = std::exchange(o.p_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}
void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
    std::memcpy(static_cast<char*>(p_) + offset, host, bytes);
}
void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
    std::memcpy(host, static_cast<const char*>(p_) + offset, bytes);
}

double time_ms(void (*fn)(void*), void* arg, int reps) {
    fn(arg);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) fn(arg);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}
double copy_bandwidth_gbs(std::size_t, int) { throw Error("the host emulation has no device bandwidth to measure"); }

}  // namespace inferlab::cuda
