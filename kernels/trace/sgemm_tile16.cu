// The textbook tiled SGEMM with 16x16 shared tiles, C = A * B (N x N, row-major floats),
// in two builds of one loop:
//
// * sgemm_tile16: the k loop fully unrolled (nvcc's default for 16 trips). ptxas then
//   fuses the four scalar loads As[ty][k..k+3] into one LDS.128 (a warp's lanes read two
//   rows of As, so the fused load is 2 wavefronts), while Bs[k][tx] stays 16 scalar LDS:
//   20 shared load instructions and 24 wavefronts per warp and tile step, where the PTX
//   has 32 loads.
// * sgemm_tile16_rolled: the same loop with `#pragma unroll 1`: one scalar LDS of each
//   tile per k, 32 instructions and 32 wavefronts per warp and tile step.
#define TILE 16

template <bool UNROLL>
__device__ __forceinline__ void sgemm_tile(const float* __restrict__ A, const float* __restrict__ B,
                                           float* __restrict__ C, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < N / TILE; ++t) {
        As[ty][tx] = A[row * N + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * N + col];
        __syncthreads();
        if (UNROLL) {
#pragma unroll
            for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        } else {
#pragma unroll 1
            for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * N + col] = acc;
}

extern "C" __global__ void sgemm_tile16(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int N) {
    sgemm_tile<true>(A, B, C, N);
}

extern "C" __global__ void sgemm_tile16_rolled(const float* __restrict__ A, const float* __restrict__ B,
                                               float* __restrict__ C, int N) {
    sgemm_tile<false>(A, B, C, N);
}
