// Kernels for the replay proof (tools/gpu/replay_proof.sh, docs/guide/fix-a-conflict.md): each has
// one shared array whose layout the launch file picks with -D, so the kernel as written
// (PAD=0, XOR=0, SWZ=0) and the kernel with the change `warpviz suggest` proposes are the
// same source. `warpviz replay` of the first's trace must count what the second's trace
// (and Nsight Compute) counts.
#include <cuda_fp16.h>
#ifndef PAD
#define PAD 0        // pad:N   elements after each row
#endif
#ifndef XOR
#define XOR 0        // xor     column ^ (row % cols)
#endif
#ifndef SWZ
#define SWZ 0        // swizzle:3,3,3 on halves: 16-byte chunk ^ (row % 8)
#endif
#define TILE 32
#define ROWS 8

__device__ __forceinline__ int col_of(int r, int c, int cols) { return XOR ? (c ^ (r % cols)) : c; }

// The CUDA samples' transposeCoalesced: a 32 x 32 tile written by rows, read by columns (32-way).
extern "C" __global__ void transpose_coalesced(float* odata, const float* idata, int width, int height) {
    __shared__ float tile[TILE][TILE + PAD];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][col_of(threadIdx.y + j, threadIdx.x, TILE)] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        odata[(y + j) * height + x] = tile[threadIdx.x][col_of(threadIdx.x, threadIdx.y + j, TILE)];
}

// A tiled SGEMM C = A * B^T, 32 x 32 tiles, block 32 x 8 (4 outputs a thread): Bs is read down a column.
extern "C" __global__ void sgemm_nt(const float* A, const float* B, float* C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE, col = blockIdx.x * TILE;
    float acc[4] = {0, 0, 0, 0};
    for (int t = 0; t < N; t += TILE) {
        for (int j = 0; j < TILE; j += ROWS) {
            As[ty + j][tx] = A[(row + ty + j) * N + t + tx];
            Bs[ty + j][col_of(ty + j, tx, TILE)] = B[(col + ty + j) * N + t + tx];
        }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            const float b = Bs[tx][col_of(tx, k, TILE)];
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[q] += As[ty + q * ROWS][k] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) C[(row + ty + q * ROWS) * N + col + tx] = acc[q];
}

// A 2-D 5-point stencil through a 34 x 34 halo tile; each warp computes one column of the
// output (lane = row), so it reads the tile down columns: pitch 34 floats, 2-way conflicts.
extern "C" __global__ void stencil_halo(const float* in, float* out, int n) {
    __shared__ float s[TILE + 2][TILE + 2 + PAD];
    const int tx = threadIdx.x, ty = threadIdx.y;           // 32 x 8
    const int x0 = blockIdx.x * TILE - 1, y0 = blockIdx.y * TILE - 1;
    for (int i = ty * 32 + tx; i < (TILE + 2) * (TILE + 2); i += 256) {
        const int r = i / (TILE + 2), c = i % (TILE + 2);
        const int gx = min(max(x0 + c, 0), n - 1), gy = min(max(y0 + r, 0), n - 1);
        s[r][c] = in[gy * n + gx];
    }
    __syncthreads();
    for (int cc = ty; cc < TILE; cc += ROWS) {              // warp ty: columns ty, ty + 8, ...
        const int r = tx + 1, c = cc + 1;
        const float v = 0.2f * (s[r][c] + s[r - 1][c] + s[r + 1][c] + s[r][c - 1] + s[r][c + 1]);
        out[(blockIdx.y * TILE + tx) * n + blockIdx.x * TILE + cc] = v;
    }
}

// A histogram privatised per lane: bins[lane][v] with 64 bins; every lane adds to its own
// copy, so lanes whose values are equal hit the same bank (64 words apart): a padded row fixes it.
#define NBINS 64
extern "C" __global__ void histogram_lanes(const unsigned* data, unsigned* hist, int n) {
    __shared__ unsigned bins[32][NBINS + PAD];
    const int lane = threadIdx.x & 31;
    for (int i = threadIdx.x; i < 32 * NBINS; i += blockDim.x) bins[i / NBINS][i % NBINS] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[lane][data[i] % NBINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) {
        unsigned sum = 0;
        for (int l = 0; l < 32; ++l) sum += bins[l][b];
        atomicAdd(&hist[b], sum);
    }
}

// ldmatrix.x4 of a 64 x 64 half tile with 128-byte rows: the 8 rows of each 8 x 8 matrix sit
// in the same banks (8-way); Swizzle<3,3,3> (chunk ^ row % 8) spreads them.
__device__ __forceinline__ int hswz(int r, int c) {
    return SWZ ? (r * 64 + ((((c >> 3) ^ (r & 7)) << 3) | (c & 7))) : (r * 64 + c);
}
extern "C" __global__ void ldmatrix_tile(const half* in, float* out) {
    __shared__ __align__(128) half tile[64 * 64];
    const int t = threadIdx.x;                               // 128 threads: 4 warps
    const half* src = in + blockIdx.x * 64 * 64;
    for (int i = t * 8; i < 64 * 64; i += 128 * 8) {         // 16-byte stores, a chunk each
        const int r = i / 64, c = i % 64;
        *reinterpret_cast<int4*>(&tile[hswz(r, c)]) = *reinterpret_cast<const int4*>(&src[i]);
    }
    __syncthreads();
    const int warp = t >> 5, lane = t & 31;
    float acc = 0.f;
    for (int kc = 0; kc < 64; kc += 16) {                    // warp w: rows 16w..16w+15, 16 columns at a time
        const int r = warp * 16 + (lane & 15), c = kc + (lane >> 4) * 8;
        unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(&tile[hswz(r, c)]));
        unsigned x0, x1, x2, x3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x0), "=r"(x1), "=r"(x2), "=r"(x3) : "r"(a));
        acc += __half2float(__ushort_as_half((unsigned short)(x0 ^ x1 ^ x2 ^ x3)));
    }
    out[blockIdx.x * 128 + t] = acc;
}
