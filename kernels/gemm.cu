// Matrix products C = A*B (row-major floats) with the loads of gemm-naive, gemm-tiled
// and the A*B^T tiles of gemm-nt-*. The k loops are not unrolled, so each source load
// stays one instruction (unrolled, nvcc would merge As[ty][k..k+3] into one LDS.128 and
// the kernel would no longer match its scenario instruction for instruction).
#include "common.cuh"

// One thread per C element, 32 x 8 threads: A[row][k] is a broadcast within a warp,
// B[k][col] a coalesced row piece.
extern "C" __global__ void gemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
    const int row = blockIdx.y * 8 + threadIdx.y;
    const int col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

// 16 x 16 shared tiles: each element of A and B is fetched once per block, then read 16
// times from shared memory.
extern "C" __global__ void gemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[16][16];
    __shared__ float Bs[16][16];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
    float acc = 0.0f;
    for (int t = 0; t < K / 16; ++t) {
        As[ty][tx] = A[row * K + t * 16 + tx];
        Bs[ty][tx] = B[(t * 16 + ty) * N + col];
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}

// A*B^T with 32 x 32 tiles: Bs is read down a column (Bs[tx][k]), so its layout decides
// the bank conflicts: none (32-way), col ^ row (none), (col + row) & 31 (none).
template <int SWZ>
__device__ __forceinline__ int bs_col(int r, int c) {
    return SWZ == 0 ? c : SWZ == 1 ? (c ^ r) : ((c + r) & 31);
}

template <int SWZ>
__device__ __forceinline__ void gemm_nt(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.0f;
    for (int t = 0; t < K / 32; ++t) {
        As[ty][tx] = A[(blockIdx.y * 32 + ty) * K + t * 32 + tx];
        Bs[ty][bs_col<SWZ>(ty, tx)] = B[(blockIdx.x * 32 + ty) * K + t * 32 + tx];
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[tx][bs_col<SWZ>(tx, k)];
        __syncthreads();
    }
    C[(blockIdx.y * 32 + ty) * N + blockIdx.x * 32 + tx] = acc;
}

extern "C" __global__ void gemm_nt_tile(const float* A, const float* B, float* C, int M, int N, int K) {
    gemm_nt<0>(A, B, C, M, N, K);
}
extern "C" __global__ void gemm_nt_swizzle_xor(const float* A, const float* B, float* C, int M, int N, int K) {
    gemm_nt<1>(A, B, C, M, N, K);
}
extern "C" __global__ void gemm_nt_swizzle_add(const float* A, const float* B, float* C, int M, int N, int K) {
    gemm_nt<2>(A, B, C, M, N, K);
}
