#pragma once
// A host emulation of the CUDA execution model, just enough of it to run lib/cuda/ops.cu's kernels
// compiled from the same source by the host compiler (tests/cuda/emu_ops.cpp includes ops.cu; this
// header stands in for <cuda_runtime.h>). One host thread (a fiber) per CUDA thread of a block,
// blocks one after another; __syncthreads is a block barrier; warp shuffles go through per-warp slots behind
// a warp barrier; dynamic shared memory is refilled with NaN before every block so that a read of
// anything unwritten shows up in the result; launches are checked as the hardware checks them
// (threads per block, grid limits, dynamic shared memory over 48 KiB without the opt-in).
// Not modelled: memory ordering between blocks (they run one at a time), timing, the rounding of
// fused multiply-adds and of CUDA's approximate intrinsics, and warp divergence beyond barriers.
#include <math.h>  // the C names (expf, fmaxf, sincos) that CUDA device code calls unqualified
#include <setjmp.h>
#include <ucontext.h>

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#define INFERLAB_CUDA_EMU 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct alignas(16) float4 {
    float x, y, z, w;
};
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorInvalidConfiguration = 9 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
inline const char* cudaGetErrorString(cudaError_t e) {
    return e == cudaSuccess ? "no error" : e == cudaErrorInvalidConfiguration ? "invalid configuration argument" : "invalid argument";
}

inline dim3 threadIdx, blockIdx;  // of the thread now running (one at a time)
inline dim3 blockDim, gridDim;
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

namespace emu {

// Each CUDA thread of a block is a host thread of its own, run as a fiber (ucontext) on the calling
// OS thread: a barrier switches to the next thread instead of waking OS threads, so the kernels'
// many warp shuffles cost microseconds, not scheduler round trips. Threads run one at a time up to
// the next barrier, in index order: a race between threads that the kernel's barriers do not order
// is not shuffled as on a GPU (not modelled), but every read before a barrier of what another
// thread writes after it still sees NaN.
struct Barrier {
    int expected = 0, arrived = 0;
    long gen = 0;
};

struct Thread {
    ucontext_t ctx;  // only to enter the thread; switches after that are _setjmp/_longjmp (no signal-mask syscalls)
    jmp_buf at;
    bool started = false;
    std::vector<char> stack = std::vector<char>(256 * 1024);  // kernels keep small frames; room for sanitizers
    bool done = false;
};

struct Block {
    Barrier all;
    Barrier warps[32];
    std::uint64_t slots[1024];                   // one shuffle slot per thread
    alignas(16) unsigned char shared[227 * 1024];  // Hopper's most per block
    std::vector<Thread> threads;
    ucontext_t scheduler;
    jmp_buf scheduler_at;
    std::function<void()> body;
    bool progress = false;
};
inline Block* block_ = nullptr;
inline int tid_ = 0;
inline cudaError_t last_error_ = cudaSuccess;
inline std::map<const void*, std::size_t> shared_opt_in_;  // cudaFuncSetAttribute's dynamic limits

inline void yield() {
    if (!_setjmp(block_->threads[std::size_t(tid_)].at)) _longjmp(block_->scheduler_at, 1);
}

inline void release(Barrier& b) { b.arrived = 0, ++b.gen, block_->progress = true; }
inline void wait(Barrier& b) {
    const long g = b.gen;
    if (++b.arrived == b.expected) return release(b);
    while (b.gen == g) yield();
}
inline void drop(Barrier& b) {  // a returned CUDA thread no longer holds the others back
    if (--b.expected == b.arrived && b.arrived > 0) release(b);
}

inline void thread_entry() {
    block_->body();
    Thread& me = block_->threads[std::size_t(tid_)];
    drop(block_->all);
    drop(block_->warps[tid_ / 32]);
    me.done = true;
    block_->progress = true;
    _longjmp(block_->scheduler_at, 1);
}

template <class T>
T shuffle(T v, int src_lane) {
    static_assert(sizeof(T) <= sizeof(std::uint64_t));
    const int warp = tid_ / 32;
    std::memcpy(&block_->slots[tid_], &v, sizeof(T));
    wait(block_->warps[warp]);
    T r;
    std::memcpy(&r, &block_->slots[warp * 32 + src_lane], sizeof(T));
    wait(block_->warps[warp]);  // nobody overwrites a slot before every lane has read it
    return r;
}

template <class... P, class... A>
void launch(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t shared, A&&... args) {
    const unsigned long long threads = 1ull * block.x * block.y * block.z;
    auto opt = shared_opt_in_.find(reinterpret_cast<const void*>(kernel));
    const std::size_t limit = opt == shared_opt_in_.end() ? 48 * 1024 : opt->second;
    if (threads == 0 || threads > 1024 || block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 2147483647u ||
        grid.y > 65535 || grid.z > 65535 || shared > limit) {
        last_error_ = cudaErrorInvalidConfiguration;
        return;
    }
    blockDim = block, gridDim = grid;
    static Block b;
    block_ = &b;
    if (b.threads.size() < threads) b.threads.resize(threads);
    const std::tuple<std::decay_t<P>...> params(std::forward<A>(args)...);
    b.body = [&] { std::apply(kernel, params); };
    const unsigned long long blocks = 1ull * grid.x * grid.y * grid.z;
    for (unsigned long long i = 0; i < blocks; ++i) {
        blockIdx = dim3(unsigned(i % grid.x), unsigned(i / grid.x % grid.y), unsigned(i / (1ull * grid.x * grid.y)));
        std::memset(b.shared, 0xff, shared);  // all-ones bytes: a NaN in every float
        std::memset(b.slots, 0xff, sizeof(b.slots));
        b.all = Barrier{int(threads), 0, 0};
        for (unsigned w = 0; w < (threads + 31) / 32; ++w) b.warps[w] = Barrier{int(std::min<unsigned long long>(32, threads - 32 * w)), 0, 0};
        for (unsigned long long t = 0; t < threads; ++t) {
            Thread& th = b.threads[t];
            th.done = false;
            th.started = false;
            getcontext(&th.ctx);
            th.ctx.uc_stack.ss_sp = th.stack.data();
            th.ctx.uc_stack.ss_size = th.stack.size();
            th.ctx.uc_link = &b.scheduler;
            makecontext(&th.ctx, thread_entry, 0);
        }
        for (bool all_done = false; !all_done;) {  // round robin until every thread has returned
            all_done = true;
            b.progress = false;
            for (unsigned long long t = 0; t < threads; ++t) {
                if (b.threads[t].done) continue;
                tid_ = int(t);
                threadIdx = dim3(unsigned(t % block.x), unsigned(t / block.x % block.y), unsigned(t / (1ull * block.x * block.y)));
                Thread& th = b.threads[t];
                if (!_setjmp(b.scheduler_at)) {
                    if (th.started) _longjmp(th.at, 1);
                    th.started = true;
                    swapcontext(&b.scheduler, &th.ctx);
                }
                all_done = all_done && b.threads[t].done;
            }
            if (!all_done && !b.progress) {
                std::fprintf(stderr, "cuda emulation: deadlock: threads wait at barriers the others never reach\n");
                std::abort();
            }
        }
    }
}

}  // namespace emu

inline void __syncthreads() { emu::wait(emu::block_->all); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::wait(emu::block_->warps[emu::tid_ / 32]); }
template <class T>
T __shfl_down_sync(unsigned, T v, int delta) {
    const int lane = emu::tid_ % 32;
    return emu::shuffle(v, lane + delta < 32 ? lane + delta : lane);
}
template <class T>
T __shfl_xor_sync(unsigned, T v, int mask) {
    return emu::shuffle(v, (emu::tid_ % 32) ^ mask);
}
template <class T>
T __shfl_sync(unsigned, T v, int src) {
    return emu::shuffle(v, src % 32);
}
inline cudaError_t cudaGetLastError() { return std::exchange(emu::last_error_, cudaSuccess); }
inline cudaError_t cudaPeekAtLastError() { return emu::last_error_; }
template <class... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute, int bytes) {
    if (bytes < 0 || bytes > 227 * 1024) return cudaErrorInvalidValue;
    emu::shared_opt_in_[reinterpret_cast<const void*>(kernel)] = std::size_t(bytes);
    return cudaSuccess;
}

// Dynamic shared memory: the block's buffer, refilled with NaN before each block.
#define INFERLAB_DYNAMIC_SHARED(T, name) T* name = reinterpret_cast<T*>(emu::block_->shared)
#define INFERLAB_LAUNCH(kernel, grid, block, shared, ...) ::emu::launch(kernel, grid, block, shared, __VA_ARGS__)
