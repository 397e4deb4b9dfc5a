#pragma once
// The reference model's ops as CUDA kernels (built with -DINFERLAB_CUDA=ON). Every pointer
// below is a device pointer; every call is checked and throws inferlab::Error naming the file,
// the line and a hint. This header has no CUDA types, so plain C++ code can call it.
#include <cstddef>
#include <cstdint>
#include <string>

namespace inferlab::cuda {

// True when a CUDA device can be used; otherwise `why` says what is missing.
bool available(std::string* why = nullptr);
std::string device_name();
// The device's streaming multiprocessors (132 on an H200): launch sizes are chosen from it.
int multiprocessor_count();
// Kernel launches made through lib/cuda so far (the benchmark reports launches per decode step).
std::uint64_t launch_count();

// Device memory, freed on destruction; new memory holds NaN in every float (all-ones bytes), so a
// kernel that reads what nothing wrote gives NaN, not a plausible zero.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    float* f() const { return static_cast<float*>(p_); }
    int* i() const { return static_cast<int*>(p_); }
    void* data() const { return p_; }
    std::size_t bytes() const { return bytes_; }
    void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
    void download(void* host, std::size_t bytes, std::size_t offset = 0) const;

private:
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

void synchronize();

// Raw device memory for the model backend's allocator (cuda/backend.hpp); every call checked.
void* malloc_device(std::size_t bytes);
void free_device(void* p) noexcept;
void zero_device(void* p, std::size_t bytes);
void copy_to_device(void* dst, const void* host, std::size_t bytes);
void copy_to_host(void* host, const void* src, std::size_t bytes);
void copy_on_device(void* dst, const void* src, std::size_t bytes);  // stream-ordered
// Page-locked host memory, and a copy from it that returns at once (stream-ordered: kernels
// launched before it finish first, kernels after it see the data). The host bytes must stay
// unchanged until the copy has run: see StagingRing.
void* malloc_pinned(std::size_t bytes);
void free_pinned(void* p) noexcept;
void copy_to_device_async(void* dst, const void* pinned_host, std::size_t bytes);

// Small host-to-device uploads without a synchronous copy each: each upload takes the next slot of
// a pinned ring and copies asynchronously; only when the ring wraps does the host wait for the
// device (one synchronize per ring's worth of uploads, so a slot is never rewritten in flight).
class StagingRing {
public:
    explicit StagingRing(std::size_t bytes);
    ~StagingRing();
    StagingRing(const StagingRing&) = delete;
    StagingRing& operator=(const StagingRing&) = delete;
    void upload(void* device_dst, const void* host, std::size_t bytes);

private:
    unsigned char* ring_ = nullptr;
    std::size_t size_ = 0, at_ = 0;
};

// Milliseconds per call of `fn` (CUDA events around `reps` calls after one warm-up call).
double time_ms(void (*fn)(void*), void* arg, int reps);
// Device-to-device copy bandwidth, counting bytes read plus bytes written, in GB/s.
double copy_bandwidth_gbs(std::size_t bytes, int reps);

// y[rows] = W[rows, cols]·x. Moves rows·cols·4 + (cols + rows)·4 B; 2·rows·cols FLOPs.
void matvec(const float* w, const float* x, float* y, int rows, int cols);
// Y[n, rows] = X[n, cols]·Wᵀ for n ≤ 16 rows, reading W once: (rows·cols + n·(cols + rows))·4 B; 2·n·rows·cols FLOPs.
void matmul_rows(const float* w, const float* x, float* y, int n, int rows, int cols);
// One row's q = rope(Wq·x), k = rope(Wk·x), v = Wv·x in one launch (Wq [dq, cols], Wk and Wv
// [dkv, cols]; RoPE at position pos[0], device). Reads (dq + 2·dkv)·cols·4 + cols·4 B, writes (dq + 2·dkv)·4 B.
void qkv_rope(const float* wq, const float* wk, const float* wv, const float* x, float* q, float* k, float* v, int dq,
              int dkv, int cols, const int* pos, int head_dim, float theta);
// One row's h3 = W3·x and h1 = silu(W1·x) ⊙ h3 in one launch (W1, W3 [rows, cols]).
// Reads 2·rows·cols·4 + cols·4 B, writes 2·rows·4 B.
void swiglu_matvec(const float* w1, const float* w3, const float* x, float* h1, float* h3, int rows, int cols);
// x += t, then y = w ⊙ x / sqrt(mean(x²) + eps), per row of n. Reads (2·rows·n + n)·4 B, writes 2·rows·n·4 B.
// With flags (device ints), also flags[index] = stamp when the new x holds NaN or ±inf (as record_finite).
void add_rmsnorm(float* x, const float* t, const float* w, float* y, int rows, int n, float eps, int* flags = nullptr,
                 int index = 0, int stamp = 0);
// flags[index] = stamp (device ints) when any of x[0, n) is NaN or ±inf; otherwise flags are left
// as they are. Reads n·4 B.
void record_finite(const float* x, std::size_t n, int* flags, int index, int stamp);
// y = w ⊙ x / sqrt(mean(x²) + eps), per row of n. Moves (2·rows·n + n)·4 B; ~3·rows·n FLOPs.
void rmsnorm(const float* x, const float* w, float* y, int rows, int n, float eps);
// RoPE on adjacent pairs of each head (run.c), row r at position pos[r] (device). Moves 2·rows·width·4 B.
void rope(float* v, const int* pos, int rows, int width, int head_dim, float theta);
// a = silu(a) ⊙ b. Moves 3·n·4 B; ~5·n FLOPs.
void swiglu(float* a, const float* b, int n);
// y += x. Moves 3·n·4 B; n FLOPs.
void add(float* y, const float* x, int n);
// Row-wise softmax in place. Moves 2·rows·n·4 B.
void softmax(float* x, int rows, int n);

// Where a layer's K/V live: contiguous [H_kv, S_max, d], or a paged pool
// [blocks, L, H_kv, block, d] with a block table (device ints) per sequence.
struct KvLayout {
    const float* k = nullptr;
    const float* v = nullptr;
    int n_kv_heads = 0, head_dim = 0;
    int seq_max = 0;                 // contiguous
    const int* block_table = nullptr;  // paged when non-null
    int block_size = 0, n_layers = 0, layer = 0;
};

// One row of a batched decode step: its cache, and the positions [lo, hi) its query attends to
// (lo > 0 is a sliding window; hi − 1 is the row's own position, where store_kv writes).
struct DecodeRow {
    KvLayout kv;
    int lo = 0, hi = 0;
};

// Decode attention of a batch of rows in one launch pair: q [B, H_q, d] against each row's cache
// (rows: device array [B]); query head h reads K/V head h / (H_q/H_kv), in place. A block holds the
// g = H_q/H_kv query heads of one K/V head and one split of keys, so K/V are read from memory once
// per step; splits (flash-decoding) are chosen from the multiprocessor count and merged by their
// softmax statistics. With len = hi − lo summed over rows: reads 2·len·H_kv·d·4 B of K/V plus
// B·H_q·d·4 B of q, writes B·H_q·d·4 B, plus (2 + d)·4 B per (row, query head, split) of scratch
// written and read back; 4·H_q·len·d FLOPs.
//
// Two kernels for pass 1: Warps (G = H_q/H_kv in {1, 2, 4, 8}, d ≤ 128 and d % 4 = 0: each warp an
// online softmax over its keys, no barrier per tile) and Block (any shape: a block-wide softmax
// per tile of 32 keys). Auto picks Warps where it fits, unless INFERLAB_CUDA_DECODE=block.
enum class DecodeKernel { Auto, Block, Warps };
void decode_attention(const float* q, const DecodeRow* rows, int n_rows, int max_len, int n_heads, int n_kv_heads,
                      int head_dim, float* out, float* scratch, std::size_t scratch_floats,
                      DecodeKernel kernel = DecodeKernel::Auto);
// Floats of scratch decode_attention needs for B rows whose longest span hi − lo is max_len.
std::size_t decode_attention_scratch(int n_rows, int max_len, int n_heads, int n_kv_heads, int head_dim);

// Prefill attention with an online softmax: T queries [T, H_q, d] at positions start..start+T−1
// over a contiguous or paged cache, causal; window > 0 keeps each query's last `window` positions.
// 4·H_q·d·Σ_t(start + t + 1) FLOPs (dense).
void prefill_attention(const float* q, const KvLayout& kv, int start, int t, int n_heads, int window, float* out);

// Writes each row's K and V [B, H_kv·d] into its cache at position rows[r].hi − 1 (rows: device
// array [B]), contiguous or paged, in one launch. Moves 2·B·H_kv·d·4 B in and out.
void store_kv(const float* k, const float* v, const DecodeRow* rows, int n_rows, int n_kv_heads, int head_dim);

}  // namespace inferlab::cuda
