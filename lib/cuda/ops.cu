// The reference model's ops on CUDA: written for this project, each kernel stating its work.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <utility>

#include "check.cuh"
#include "inferlab/cuda/ops.hpp"

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

// One warp per output row; lanes stride the row so loads coalesce; float4 when aligned.
__global__ void matvec_kernel(const float* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int rows,
                              int cols) {
    const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows) return;
    const float* wr = w + static_cast<size_t>(row) * cols;
    float acc = 0.0f;
    if (cols % 4 == 0 && (reinterpret_cast<uintptr_t>(wr) % 16 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0)) {
        const float4* w4 = reinterpret_cast<const float4*>(wr);
        const float4* x4 = reinterpret_cast<const float4*>(x);
        for (int i = lane; i < cols / 4; i += kWarp) {
            const float4 a = w4[i], b = x4[i];
            acc += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
        }
    } else {
        for (int i = lane; i < cols; i += kWarp) acc += wr[i] * x[i];
    }
    acc = warp_sum(acc);
    if (lane == 0) y[row] = acc;
}

// One warp per weight row, every input row accumulated from the same loaded weights.
template <int MaxRows>
__global__ void matmul_rows_kernel(const float* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int n,
                                   int rows, int cols) {
    const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows) return;
    const float* wr = w + static_cast<size_t>(row) * cols;
    float acc[MaxRows];
#pragma unroll
    for (int b = 0; b < MaxRows; ++b) acc[b] = 0.0f;
    for (int i = lane; i < cols; i += kWarp) {
        const float wv = wr[i];
#pragma unroll
        for (int b = 0; b < MaxRows; ++b)
            if (b < n) acc[b] += wv * x[static_cast<size_t>(b) * cols + i];
    }
#pragma unroll
    for (int b = 0; b < MaxRows; ++b) {
        const float s = warp_sum(acc[b]);
        if (lane == 0 && b < n) y[static_cast<size_t>(b) * rows + row] = s;
    }
}

__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n,
                               float eps) {
    __shared__ float shared[32];
    const float* xr = x + static_cast<size_t>(blockIdx.x) * n;
    float* yr = y + static_cast<size_t>(blockIdx.x) * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
    ss = block_sum(ss, shared);
    const float scale = rsqrtf(ss / static_cast<float>(n) + eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = w[i] * xr[i] * scale;
}

__global__ void rope_kernel(float* v, const int* __restrict__ pos, int rows, int width, int head_dim, float theta) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int pairs = width / 2;
    if (idx >= rows * pairs) return;
    const int r = idx / pairs, i = (idx % pairs) * 2;
    const int j = i % head_dim;
    // The CPU's float steps, with pow and sincos in double rounded to float (CUDA's powf may be
    // 4 ulp off; at position 10^3 that would move the angle by ~10^-4 rad).
    const float exponent = static_cast<float>(j) / static_cast<float>(head_dim);
    const float freq = 1.0f / static_cast<float>(pow(static_cast<double>(theta), static_cast<double>(exponent)));
    const float angle = static_cast<float>(pos[r]) * freq;
    double sd, cd;
    sincos(static_cast<double>(angle), &sd, &cd);
    const float s = static_cast<float>(sd), c = static_cast<float>(cd);
    float* p = v + static_cast<size_t>(r) * width + i;
    const float v0 = p[0], v1 = p[1];
    p[0] = v0 * c - v1 * s;
    p[1] = v0 * s + v1 * c;
}

__global__ void swiglu_kernel(float* a, const float* __restrict__ b, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] / (1.0f + expf(-a[i])) * b[i];
}

__global__ void add_kernel(float* y, const float* __restrict__ x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

__global__ void softmax_kernel(float* x, int n) {
    __shared__ float shared[32];
    float* r = x + static_cast<size_t>(blockIdx.x) * n;
    float m = -FLT_MAX;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, r[i]);
    m = block_max(m, shared);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += expf(r[i] - m);
    s = block_sum(s, shared);
    for (int i = threadIdx.x; i < n; i += blockDim.x) r[i] = expf(r[i] - m) / s;
}

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

constexpr int kAttnThreads = 128;
constexpr int kChunk = 256;  // keys per split in decode attention

// Flash-decoding, pass 1: block (head, split) scores its chunk of keys, keeps the chunk's max m,
// sum l and unnormalised output o, all read in place from the cache of K/V head h / group.
__global__ void decode_attention_partial(const float* __restrict__ q, KvLayout kv, int first, int len, int group,
                                         float* m_out, float* l_out, float* o_out) {
    extern __shared__ float sh[];  // q [d], scores [kChunk], reduction [32]
    const int d = kv.head_dim;
    float* qs = sh;
    float* scores = sh + d;
    float* red = scores + kChunk;
    const int h = blockIdx.x, split = blockIdx.y, splits = gridDim.y;
    const int kvh = h / group;
    const int lo = first + split * kChunk, hi = min(len, lo + kChunk);
    for (int i = threadIdx.x; i < d; i += blockDim.x) qs[i] = q[static_cast<size_t>(h) * d + i];
    __syncthreads();
    const float scale = rsqrtf(static_cast<float>(d));
    float local_max = -FLT_MAX;
    for (int p = lo + threadIdx.x; p < hi; p += blockDim.x) {
        const float* k = kv.k + kv_offset(kv, kvh, p);
        float s = 0.0f;
        for (int i = 0; i < d; ++i) s += qs[i] * k[i];
        s *= scale;
        scores[p - lo] = s;
        local_max = fmaxf(local_max, s);
    }
    const float m = block_max(local_max, red);
    float local_sum = 0.0f;
    for (int p = lo + threadIdx.x; p < hi; p += blockDim.x) {
        const float e = expf(scores[p - lo] - m);
        scores[p - lo] = e;
        local_sum += e;
    }
    const float l = block_sum(local_sum, red);  // also a barrier: every score is written
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float o = 0.0f;
        for (int p = lo; p < hi; ++p) o += scores[p - lo] * kv.v[kv_offset(kv, kvh, p) + i];
        o_out[(static_cast<size_t>(h) * splits + split) * d + i] = o;
    }
    if (threadIdx.x == 0) {
        m_out[h * splits + split] = m;
        l_out[h * splits + split] = l;
    }
}

// Flash-decoding, pass 2: merge the splits of each head: M = max m_j, L = Σ l_j·e^(m_j − M),
// out = Σ o_j·e^(m_j − M) / L.
__global__ void decode_attention_merge(const float* __restrict__ m_in, const float* __restrict__ l_in,
                                       const float* __restrict__ o_in, int splits, int d, float* out) {
    const int h = blockIdx.x;
    float M = -FLT_MAX;
    for (int j = 0; j < splits; ++j) M = fmaxf(M, m_in[h * splits + j]);
    float L = 0.0f;
    for (int j = 0; j < splits; ++j) L += l_in[h * splits + j] * expf(m_in[h * splits + j] - M);
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float o = 0.0f;
        for (int j = 0; j < splits; ++j) o += o_in[(static_cast<size_t>(h) * splits + j) * d + i] * expf(m_in[h * splits + j] - M);
        out[static_cast<size_t>(h) * d + i] = o / L;
    }
}

// Prefill: block (t, h) runs one query over keys 0..start+t in tiles, FlashAttention's order:
// running max m, running sum l, output rescaled by e^(m_old − m_new) at each tile.
constexpr int kTile = 64;
__global__ void prefill_attention_kernel(const float* __restrict__ q, KvLayout kv, int start, int n_heads, int group,
                                         int window, float* out) {
    extern __shared__ float sh[];  // q [d], tile scores [kTile], reduction [32], acc [d]
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

__global__ void store_kv_kernel(const float* __restrict__ k, const float* __restrict__ v, float* kb, float* vb, KvLayout kv,
                                int pos) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int total = kv.n_kv_heads * kv.head_dim;
    if (idx >= total) return;
    const int h = idx / kv.head_dim, i = idx % kv.head_dim;
    const size_t off = kv_offset(kv, h, pos) + i;
    kb[off] = k[idx];
    vb[off] = v[idx];
}

int blocks_for(int n, int threads) { return (n + threads - 1) / threads; }

}  // namespace

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
    INFERLAB_CUDA_CHECK(cudaMemset(p_, 0, std::max<std::size_t>(bytes, 4)));
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

void matvec(const float* w, const float* x, float* y, int rows, int cols) {
    const int threads = 256, rows_per_block = threads / kWarp;
    matvec_kernel<<<blocks_for(rows, rows_per_block), threads>>>(w, x, y, rows, cols);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void matmul_rows(const float* w, const float* x, float* y, int n, int rows, int cols) {
    if (n < 1 || n > 16) throw Error("cuda::matmul_rows takes 1 to 16 rows");
    const int threads = 256, rows_per_block = threads / kWarp;
    matmul_rows_kernel<16><<<blocks_for(rows, rows_per_block), threads>>>(w, x, y, n, rows, cols);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void rmsnorm(const float* x, const float* w, float* y, int rows, int n, float eps) {
    rmsnorm_kernel<<<rows, 256>>>(x, w, y, n, eps);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void rope(float* v, const int* pos, int rows, int width, int head_dim, float theta) {
    rope_kernel<<<blocks_for(rows * width / 2, 256), 256>>>(v, pos, rows, width, head_dim, theta);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void swiglu(float* a, const float* b, int n) {
    swiglu_kernel<<<blocks_for(n, 256), 256>>>(a, b, n);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void add(float* y, const float* x, int n) {
    add_kernel<<<blocks_for(n, 256), 256>>>(y, x, n);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void softmax(float* x, int rows, int n) {
    softmax_kernel<<<rows, 256>>>(x, n);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

std::size_t decode_attention_scratch(int len, int n_heads, int head_dim) {
    const std::size_t splits = static_cast<std::size_t>((len + kChunk - 1) / kChunk);
    return static_cast<std::size_t>(n_heads) * splits * (2 + static_cast<std::size_t>(head_dim));
}

void decode_attention(const float* q, const KvLayout& kv, int lo, int hi, int n_heads, float* out, float* scratch,
                      std::size_t scratch_floats) {
    if (lo < 0 || hi <= lo) throw Error("cuda::decode_attention needs at least one cached position");
    const int len = hi - lo;
    const int splits = (len + kChunk - 1) / kChunk;
    if (scratch_floats < decode_attention_scratch(len, n_heads, kv.head_dim)) throw Error("cuda::decode_attention: scratch too small");
    float* m = scratch;
    float* l = m + n_heads * splits;
    float* o = l + n_heads * splits;
    const std::size_t shared = (static_cast<std::size_t>(kv.head_dim) + kChunk + 32) * sizeof(float);
    decode_attention_partial<<<dim3(n_heads, splits), kAttnThreads, shared>>>(q, kv, lo, hi, n_heads / kv.n_kv_heads, m, l, o);
    INFERLAB_CUDA_LAUNCH_CHECK();
    decode_attention_merge<<<n_heads, kAttnThreads>>>(m, l, o, splits, kv.head_dim, out);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void prefill_attention(const float* q, const KvLayout& kv, int start, int t, int n_heads, int window, float* out) {
    const std::size_t shared = (2 * static_cast<std::size_t>(kv.head_dim) + kTile + 32) * sizeof(float);
    prefill_attention_kernel<<<dim3(t, n_heads), kAttnThreads, shared>>>(q, kv, start, n_heads, n_heads / kv.n_kv_heads, window, out);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

void store_kv(const float* k, const float* v, float* k_base, float* v_base, const KvLayout& kv, int pos) {
    store_kv_kernel<<<blocks_for(kv.n_kv_heads * kv.head_dim, 256), 256>>>(k, v, k_base, v_base, kv, pos);
    INFERLAB_CUDA_LAUNCH_CHECK();
}

}  // namespace inferlab::cuda
