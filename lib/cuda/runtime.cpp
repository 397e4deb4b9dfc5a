// The CUDA runtime side of lib/cuda: device memory, copies, timing and launch checks. Kept apart
// from the kernel files (ops.cu, attention.cu) so that the host emulation (tests/cuda/emu/) compiles their kernels and launch
// code unchanged and supplies its own version of these few functions.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "check.cuh"
#include "inferlab/cuda/ops.hpp"

namespace inferlab::cuda {

namespace {
std::uint64_t g_launches = 0;  // kernel launches so far (host thread of the backend; a count, not a lock)
}  // namespace

std::uint64_t launch_count() { return g_launches; }

namespace detail {
void after_launch(const char* kernel, const char* file, int line) {
    ++g_launches;
    // Read once: INFERLAB_CUDA_SYNC=1 turns every launch into launch + synchronize (debugging only).
    static const bool sync = [] {
        const char* e = std::getenv("INFERLAB_CUDA_SYNC");
        return e && std::strcmp(e, "0") != 0 && *e;
    }();
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && sync) e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        throw Error(std::string("CUDA kernel ") + kernel + " failed at " + file + ":" + std::to_string(line) + ": " +
                    cudaGetErrorString(e) + (sync ? "" : " (set INFERLAB_CUDA_SYNC=1 to report faults at the launch that caused them)"));
}
}  // namespace detail

int multiprocessor_count() {
    static const int n = [] {
        int dev = 0, sms = 0;
        INFERLAB_CUDA_CHECK(cudaGetDevice(&dev));
        INFERLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        return sms;
    }();
    return n;
}

bool available(std::string* why) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        if (why) *why = std::string("the CUDA runtime reports: ") + cudaGetErrorString(e);
        cudaGetLastError();
        return false;
    }
    if (count == 0) {
        if (why) *why = "no CUDA device is visible";
        return false;
    }
    return true;
}

std::string device_name() {
    cudaDeviceProp p{};
    INFERLAB_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    return p.name;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    INFERLAB_CUDA_CHECK(cudaMalloc(&p_, std::max<std::size_t>(bytes, 4)));
    // All-ones bytes: every float a NaN, so a kernel that reads what nothing wrote shows it.
    INFERLAB_CUDA_CHECK(cudaMemset(p_, 0xff, std::max<std::size_t>(bytes, 4)));
}
DeviceBuffer::~DeviceBuffer() {
    if (p_) cudaFree(p_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        if (p_) cudaFree(p_);
        p_ = std::exchange(o.p_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}
void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
    INFERLAB_CUDA_CHECK(cudaMemcpy(static_cast<char*>(p_) + offset, host, bytes, cudaMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
    INFERLAB_CUDA_CHECK(cudaMemcpy(host, static_cast<const char*>(p_) + offset, bytes, cudaMemcpyDeviceToHost));
}

void synchronize() { INFERLAB_CUDA_CHECK(cudaDeviceSynchronize()); }

void* malloc_device(std::size_t bytes) {
    void* p = nullptr;
    INFERLAB_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 4)));
    return p;
}
void free_device(void* p) noexcept {
    if (p) cudaFree(p);
}
void zero_device(void* p, std::size_t bytes) { INFERLAB_CUDA_CHECK(cudaMemset(p, 0, bytes)); }
void copy_to_device(void* dst, const void* host, std::size_t bytes) {
    INFERLAB_CUDA_CHECK(cudaMemcpy(dst, host, bytes, cudaMemcpyHostToDevice));
}
void copy_to_host(void* host, const void* src, std::size_t bytes) {
    INFERLAB_CUDA_CHECK(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost));
}
void copy_on_device(void* dst, const void* src, std::size_t bytes) {
    INFERLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
}

void* malloc_pinned(std::size_t bytes) {
    void* p = nullptr;
    INFERLAB_CUDA_CHECK(cudaMallocHost(&p, std::max<std::size_t>(bytes, 4)));
    return p;
}
void free_pinned(void* p) noexcept {
    if (p) cudaFreeHost(p);
}
void copy_to_device_async(void* dst, const void* pinned_host, std::size_t bytes) {
    INFERLAB_CUDA_CHECK(cudaMemcpyAsync(dst, pinned_host, bytes, cudaMemcpyHostToDevice));
}

double time_ms(void (*fn)(void*), void* arg, int reps) {
    cudaEvent_t a, b;
    INFERLAB_CUDA_CHECK(cudaEventCreate(&a));
    INFERLAB_CUDA_CHECK(cudaEventCreate(&b));
    fn(arg);
    INFERLAB_CUDA_CHECK(cudaEventRecord(a));
    for (int i = 0; i < reps; ++i) fn(arg);
    INFERLAB_CUDA_CHECK(cudaEventRecord(b));
    INFERLAB_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    INFERLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return static_cast<double>(ms) / reps;
}

double copy_bandwidth_gbs(std::size_t bytes, int reps) {
    DeviceBuffer src(bytes), dst(bytes);
    struct Arg {
        void* d;
        const void* s;
        std::size_t n;
    } arg{dst.f(), src.f(), bytes};
    const double ms = time_ms(
        [](void* p) {
            auto* x = static_cast<Arg*>(p);
            INFERLAB_CUDA_CHECK(cudaMemcpyAsync(x->d, x->s, x->n, cudaMemcpyDeviceToDevice));
        },
        &arg, reps);
    return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

}  // namespace inferlab::cuda
