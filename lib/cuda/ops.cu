// The reference model's matrix, norm, RoPE and elementwise ops on CUDA (attention: attention.cu), each kernel stating its work.
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

// Lane `lane`'s share of the dot product of a weight row with x (the caller reduces over the warp):
// 16-byte loads when cols % 4 = 0 and both are 16-byte aligned, else scalar loads with the same stride.
__device__ float lane_dot(const float* __restrict__ wr, const float* __restrict__ x, int cols, int lane) {
    float acc = 0.0f;
    if (cols % 4 == 0 && (reinterpret_cast<uintptr_t>(wr) % 16 == 0) && (reinterpret_cast<uintptr_t>(x) % 16 == 0)) {
        const float4* w4 = reinterpret_cast<const float4*>(wr);
        const float4* x4 = reinterpret_cast<const float4*>(x);
        const int n4 = cols / 4;
        int i = lane;
        // Four 16-byte weight loads in flight per lane (2 KB per warp) before any arithmetic: a
        // matrix of few rows has few warps per SM, and one load at a time leaves HBM idle.
        float a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        for (; i + 3 * kWarp < n4; i += 4 * kWarp) {
            const float4 w0 = w4[i], w1 = w4[i + kWarp], w2 = w4[i + 2 * kWarp], w3 = w4[i + 3 * kWarp];
            const float4 x0 = x4[i], x1 = x4[i + kWarp], x2 = x4[i + 2 * kWarp], x3 = x4[i + 3 * kWarp];
            acc += w0.x * x0.x + w0.y * x0.y + w0.z * x0.z + w0.w * x0.w;
            a1 += w1.x * x1.x + w1.y * x1.y + w1.z * x1.z + w1.w * x1.w;
            a2 += w2.x * x2.x + w2.y * x2.y + w2.z * x2.z + w2.w * x2.w;
            a3 += w3.x * x3.x + w3.y * x3.y + w3.z * x3.z + w3.w * x3.w;
        }
        for (; i < n4; i += kWarp) {
            const float4 a = w4[i], b = x4[i];
            acc += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
        }
        acc += a1 + a2 + a3;
    } else {
        for (int i = lane; i < cols; i += kWarp) acc += wr[i] * x[i];
    }
    return acc;
}

// run.c's rotation of the pair (2i, 2i+1) = (v0, v1) at position pos, j = 2i mod d: the CPU's float
// steps, with pow and sincos in double rounded to float (CUDA's powf may be 4 ulp off; at position
// 10^3 that would move the angle by ~10^-4 rad). One place for rope_kernel and qkv_rope_kernel.
__device__ void rope_pair(float& v0, float& v1, int pos, int j, int head_dim, float theta) {
    const float exponent = static_cast<float>(j) / static_cast<float>(head_dim);
    const float freq = 1.0f / static_cast<float>(pow(static_cast<double>(theta), static_cast<double>(exponent)));
    const float angle = static_cast<float>(pos) * freq;
    double sd, cd;
    sincos(static_cast<double>(angle), &sd, &cd);
    const float s = static_cast<float>(sd), c = static_cast<float>(cd);
    const float a = v0, b = v1;
    v0 = a * c - b * s;
    v1 = a * s + b * c;
}

// silu(a)·b, for swiglu_kernel and swiglu_matvec_kernel.
__device__ float silu_mul(float a, float b) { return a / (1.0f + expf(-a)) * b; }

// One warp per output row; lanes stride the row so loads coalesce; float4 when aligned.
__global__ void matvec_kernel(const float* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int rows,
                              int cols) {
    const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows) return;
    const float acc = warp_sum(lane_dot(w + static_cast<size_t>(row) * cols, x, cols, lane));
    if (lane == 0) y[row] = acc;
}

// Split-K: k warps share a row, each over cols/k columns, their sums added through shared memory
// (8 warps a block: 8/k rows). For a matrix with too few rows to give every SM enough warps (1024
// rows is 8 warps an SM on an H200, 16 KB of loads in flight: 36% of the copy bandwidth measured).
// Reads rows·cols·4 + k·cols·4 B (x once per piece), writes rows·4 B.
__global__ void matvec_splitk_kernel(const float* __restrict__ w, const float* __restrict__ x, float* __restrict__ y,
                                     int rows, int cols, int k) {
    INFERLAB_DYNAMIC_SHARED(float, part);  // [warps]: each warp's partial sum
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, per = blockDim.x / kWarp / k;
    const int row = blockIdx.x * per + warp / k, piece = warp % k, len = cols / k;  // len % 4 = 0 (the caller's rule)
    float acc = 0.0f;
    if (row < rows)
        acc = warp_sum(lane_dot(w + static_cast<size_t>(row) * cols + static_cast<size_t>(piece) * len,
                                x + static_cast<size_t>(piece) * len, len, lane));
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    const int r = blockIdx.x * per + threadIdx.x;
    if (threadIdx.x < per && r < rows) {
        float sum = 0.0f;
        for (int p = 0; p < k; ++p) sum += part[threadIdx.x * k + p];
        y[r] = sum;
    }
}

// Q, K and V of one row in one launch, RoPE applied as they are written. Rows of [Wq; Wk; Wv]
// ([dq + 2·dkv, cols], three separate matrices) go by pairs (2i, 2i+1), one warp a pair, so the
// pair RoPE rotates is in one warp's registers. Reads (dq + 2·dkv)·cols·4 B of weights + cols·4 B
// of x (once per warp: from L1/L2 after the first), writes (dq + 2·dkv)·4 B; 2·(dq + 2·dkv)·cols FLOPs.
__global__ void qkv_rope_kernel(const float* __restrict__ wq, const float* __restrict__ wk, const float* __restrict__ wv,
                                const float* __restrict__ x, float* __restrict__ q, float* __restrict__ k,
                                float* __restrict__ v, int dq, int dkv, int cols, const int* __restrict__ pos,
                                int head_dim, float theta) {
    const int pair = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    int r = 2 * pair;  // first row of the pair within its matrix
    const float* w = wq;
    float* y = q;
    bool rotate = true;
    if (r >= dq) {
        r -= dq;
        w = wk;
        y = k;
        if (r >= dkv) {
            r -= dkv;
            w = wv;
            y = v;
            rotate = false;
            if (r >= dkv) return;
        }
    }
    float a = warp_sum(lane_dot(w + static_cast<size_t>(r) * cols, x, cols, lane));
    float b = warp_sum(lane_dot(w + static_cast<size_t>(r + 1) * cols, x, cols, lane));
    if (lane != 0) return;
    if (rotate) rope_pair(a, b, pos[0], r % head_dim, head_dim, theta);
    y[r] = a;
    y[r + 1] = b;
}

// The FFN's two products of one row and SwiGLU in one launch: a warp per row reads W1's and W3's
// rows and writes h3 = W3·x and h1 = silu(W1·x)·h3. Reads 2·rows·cols·4 + cols·4 B, writes
// 2·rows·4 B; 4·rows·cols FLOPs.
__global__ void swiglu_matvec_kernel(const float* __restrict__ w1, const float* __restrict__ w3, const float* __restrict__ x,
                                     float* __restrict__ h1, float* __restrict__ h3, int rows, int cols) {
    const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows) return;
    const float a = warp_sum(lane_dot(w1 + static_cast<size_t>(row) * cols, x, cols, lane));
    const float b = warp_sum(lane_dot(w3 + static_cast<size_t>(row) * cols, x, cols, lane));
    if (lane == 0) {
        h3[row] = b;
        h1[row] = silu_mul(a, b);
    }
}

// One warp per weight row, every input row accumulated from the same loaded weights; N (the input
// rows) is a template argument so the accumulators stay in registers with no per-row guard.
// 16-byte loads of W and x when cols is a multiple of 4 (rows then stay 16-byte aligned).
template <int N>
__global__ void matmul_rows_kernel(const float* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, int rows,
                                   int cols) {
    const int row = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= rows) return;
    const float* wr = w + static_cast<size_t>(row) * cols;
    float acc[N];
#pragma unroll
    for (int b = 0; b < N; ++b) acc[b] = 0.0f;
    if (cols % 4 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0) {
        const float4* w4 = reinterpret_cast<const float4*>(wr);
        for (int i = lane; i < cols / 4; i += kWarp) {
            const float4 a = w4[i];
#pragma unroll
            for (int b = 0; b < N; ++b) {
                const float4 v = reinterpret_cast<const float4*>(x + static_cast<size_t>(b) * cols)[i];
                acc[b] += a.x * v.x + a.y * v.y + a.z * v.z + a.w * v.w;
            }
        }
    } else {
        for (int i = lane; i < cols; i += kWarp) {
            const float wv = wr[i];
#pragma unroll
            for (int b = 0; b < N; ++b) acc[b] += wv * x[static_cast<size_t>(b) * cols + i];
        }
    }
#pragma unroll
    for (int b = 0; b < N; ++b) {
        const float s = warp_sum(acc[b]);
        if (lane == 0) y[static_cast<size_t>(b) * rows + row] = s;
    }
}

__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n,
                               float eps) {
    INFERLAB_DYNAMIC_SHARED(float, shared);  // [32] warp partials
    const float* xr = x + static_cast<size_t>(blockIdx.x) * n;
    float* yr = y + static_cast<size_t>(blockIdx.x) * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ss += xr[i] * xr[i];
    ss = block_sum(ss, shared);
    const float scale = rsqrtf(ss / static_cast<float>(n) + eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = w[i] * xr[i] * scale;
}

// The residual add and the next RMSNorm of a row in one pass: x += t, then y = w ⊙ x / rms(x).
// A block per row; each thread rereads only its own writes. With flags, also the finiteness check
// of the new x (flags[index] = stamp when an element is NaN or ±inf), as finite_kernel: no
// launch of its own. Reads 2·rows·n·4 + n·4 B, writes 2·rows·n·4 B.
__global__ void add_rmsnorm_kernel(float* __restrict__ x, const float* __restrict__ t, const float* __restrict__ w,
                                   float* __restrict__ y, int n, float eps, int* __restrict__ flags, int index, int stamp) {
    INFERLAB_DYNAMIC_SHARED(float, shared);  // [32] warp partials
    float* xr = x + static_cast<size_t>(blockIdx.x) * n;
    const float* tr = t + static_cast<size_t>(blockIdx.x) * n;
    float* yr = y + static_cast<size_t>(blockIdx.x) * n;
    float ss = 0.0f;
    unsigned bad = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float s = xr[i] + tr[i];
        xr[i] = s;
        ss += s * s;
        bad |= (__float_as_uint(s) & 0x7f800000u) == 0x7f800000u;
    }
    if (bad && flags) flags[index] = stamp;
    ss = block_sum(ss, shared);
    const float scale = rsqrtf(ss / static_cast<float>(n) + eps);
    for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = w[i] * xr[i] * scale;
}

// flags[index] = stamp when any of x[0, n) is NaN or ±inf (exponent bits all ones). Threads that
// find one all store the same value, so no atomic is needed. Reads n·4 B, writes at most 4 B.
__global__ void finite_kernel(const float* __restrict__ x, size_t n, int* __restrict__ flags, int index, int stamp) {
    unsigned bad = 0;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        bad |= (__float_as_uint(x[i]) & 0x7f800000u) == 0x7f800000u;
    if (bad) flags[index] = stamp;
}

__global__ void rope_kernel(float* v, const int* __restrict__ pos, int rows, int width, int head_dim, float theta) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int pairs = width / 2;
    if (idx >= rows * pairs) return;
    const int r = idx / pairs, i = (idx % pairs) * 2;
    float* p = v + static_cast<size_t>(r) * width + i;
    rope_pair(p[0], p[1], pos[r], i % head_dim, head_dim, theta);
}

__global__ void swiglu_kernel(float* a, const float* __restrict__ b, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = silu_mul(a[i], b[i]);
}

__global__ void add_kernel(float* y, const float* __restrict__ x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

__global__ void softmax_kernel(float* x, int n) {
    INFERLAB_DYNAMIC_SHARED(float, shared);  // [32] warp partials
    float* r = x + static_cast<size_t>(blockIdx.x) * n;
    float m = -FLT_MAX;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, r[i]);
    m = block_max(m, shared);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += expf(r[i] - m);
    s = block_sum(s, shared);
    for (int i = threadIdx.x; i < n; i += blockDim.x) r[i] = expf(r[i] - m) / s;
}

}  // namespace

namespace {
// Warps (rows) per block: 8, or fewer when that would leave multiprocessors idle (a 1024-row
// matrix in blocks of 8 rows is 128 blocks for 132 SMs).
int rows_per_block(int rows) {
    int per = 8;
    while (per > 1 && (rows + per - 1) / per < 4 * multiprocessor_count()) per /= 2;
    return per;
}
template <int N>
void launch_matmul_rows(const float* w, const float* x, float* y, int rows, int cols) {
    const int per = rows_per_block(rows);
    INFERLAB_LAUNCH(matmul_rows_kernel<N>, blocks_for(rows, per), per * kWarp, 0, w, x, y, rows, cols);
    INFERLAB_CUDA_LAUNCH_CHECK("matmul_rows_kernel");
}
}  // namespace

namespace {
// Warps per row for matvec: doubled (up to 8) while the matrix has fewer than 24 warps an SM,
// each piece keeps at least 128 columns, and the pieces stay 16-byte aligned.
int matvec_split(int rows, int cols) {
    int k = 1;
    while (k < 8 && (long long)rows * k < 24ll * multiprocessor_count() && cols % (8 * k) == 0 && cols / (2 * k) >= 128) k *= 2;
    return k;
}
}  // namespace

void matvec(const float* w, const float* x, float* y, int rows, int cols) {
    if (const int k = matvec_split(rows, cols); k > 1) {
        constexpr int kWarps = 8;
        INFERLAB_LAUNCH(matvec_splitk_kernel, blocks_for(rows, kWarps / k), kWarps * kWarp, kWarps * sizeof(float), w, x, y,
                        rows, cols, k);
        INFERLAB_CUDA_LAUNCH_CHECK("matvec_splitk_kernel");
        return;
    }
    const int per = rows_per_block(rows);
    INFERLAB_LAUNCH(matvec_kernel, blocks_for(rows, per), per * kWarp, 0, w, x, y, rows, cols);
    INFERLAB_CUDA_LAUNCH_CHECK("matvec_kernel");
}

void qkv_rope(const float* wq, const float* wk, const float* wv, const float* x, float* q, float* k, float* v, int dq,
              int dkv, int cols, const int* pos, int head_dim, float theta) {
    if (dq % 2 != 0 || dkv % 2 != 0 || head_dim % 2 != 0)
        throw Error("cuda::qkv_rope: the output widths and the head width must be even (RoPE rotates pairs)");
    const int pairs = (dq + 2 * dkv) / 2;
    const int per = rows_per_block(pairs);
    INFERLAB_LAUNCH(qkv_rope_kernel, blocks_for(pairs, per), per * kWarp, 0, wq, wk, wv, x, q, k, v, dq, dkv, cols, pos,
                    head_dim, theta);
    INFERLAB_CUDA_LAUNCH_CHECK("qkv_rope_kernel");
}

void swiglu_matvec(const float* w1, const float* w3, const float* x, float* h1, float* h3, int rows, int cols) {
    const int per = rows_per_block(rows);
    INFERLAB_LAUNCH(swiglu_matvec_kernel, blocks_for(rows, per), per * kWarp, 0, w1, w3, x, h1, h3, rows, cols);
    INFERLAB_CUDA_LAUNCH_CHECK("swiglu_matvec_kernel");
}

void matmul_rows(const float* w, const float* x, float* y, int n, int rows, int cols) {
    switch (n) {
        case 1: return launch_matmul_rows<1>(w, x, y, rows, cols);
        case 2: return launch_matmul_rows<2>(w, x, y, rows, cols);
        case 3: return launch_matmul_rows<3>(w, x, y, rows, cols);
        case 4: return launch_matmul_rows<4>(w, x, y, rows, cols);
        case 5: return launch_matmul_rows<5>(w, x, y, rows, cols);
        case 6: return launch_matmul_rows<6>(w, x, y, rows, cols);
        case 7: return launch_matmul_rows<7>(w, x, y, rows, cols);
        case 8: return launch_matmul_rows<8>(w, x, y, rows, cols);
        case 9: return launch_matmul_rows<9>(w, x, y, rows, cols);
        case 10: return launch_matmul_rows<10>(w, x, y, rows, cols);
        case 11: return launch_matmul_rows<11>(w, x, y, rows, cols);
        case 12: return launch_matmul_rows<12>(w, x, y, rows, cols);
        case 13: return launch_matmul_rows<13>(w, x, y, rows, cols);
        case 14: return launch_matmul_rows<14>(w, x, y, rows, cols);
        case 15: return launch_matmul_rows<15>(w, x, y, rows, cols);
        case 16: return launch_matmul_rows<16>(w, x, y, rows, cols);
        default: throw Error("cuda::matmul_rows takes 1 to 16 rows");
    }
}

void rmsnorm(const float* x, const float* w, float* y, int rows, int n, float eps) {
    INFERLAB_LAUNCH(rmsnorm_kernel, rows, 256, 32 * sizeof(float), x, w, y, n, eps);
    INFERLAB_CUDA_LAUNCH_CHECK("rmsnorm_kernel");
}

void add_rmsnorm(float* x, const float* t, const float* w, float* y, int rows, int n, float eps, int* flags, int index,
                 int stamp) {
    INFERLAB_LAUNCH(add_rmsnorm_kernel, rows, 256, 32 * sizeof(float), x, t, w, y, n, eps, flags, index, stamp);
    INFERLAB_CUDA_LAUNCH_CHECK("add_rmsnorm_kernel");
}

void record_finite(const float* x, std::size_t n, int* flags, int index, int stamp) {
    // One block of 256 for what a decode step checks (a few thousand floats); more for long prefills.
    const unsigned blocks = unsigned(std::min<std::size_t>(64, std::max<std::size_t>(1, n / (256 * 16))));
    INFERLAB_LAUNCH(finite_kernel, blocks, 256, 0, x, n, flags, index, stamp);
    INFERLAB_CUDA_LAUNCH_CHECK("finite_kernel");
}

void rope(float* v, const int* pos, int rows, int width, int head_dim, float theta) {
    INFERLAB_LAUNCH(rope_kernel, blocks_for(rows * width / 2, 256), 256, 0, v, pos, rows, width, head_dim, theta);
    INFERLAB_CUDA_LAUNCH_CHECK("rope_kernel");
}

void swiglu(float* a, const float* b, int n) {
    INFERLAB_LAUNCH(swiglu_kernel, blocks_for(n, 256), 256, 0, a, b, n);
    INFERLAB_CUDA_LAUNCH_CHECK("swiglu_kernel");
}

void add(float* y, const float* x, int n) {
    INFERLAB_LAUNCH(add_kernel, blocks_for(n, 256), 256, 0, y, x, n);
    INFERLAB_CUDA_LAUNCH_CHECK("add_kernel");
}

void softmax(float* x, int rows, int n) {
    INFERLAB_LAUNCH(softmax_kernel, rows, 256, 32 * sizeof(float), x, n);
    INFERLAB_CUDA_LAUNCH_CHECK("softmax_kernel");
}

}  // namespace inferlab::cuda
