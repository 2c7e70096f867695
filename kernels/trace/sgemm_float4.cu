// Tiled SGEMM, C = A * B for row-major N x N matrices, 64x64 tiles per block of 16x16 threads,
// each thread computes a 4x4 block of C. Tiles of A and B are loaded with float4 loads
// (16 bytes per lane) into shared memory; the inner product reads B's tile as float4 too.
#define TILE 64

extern "C" __global__ void sgemm_float4(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int N) {
#ifdef SCALAR_AS_STORES
    __shared__ float As[TILE][TILE];                       // nvcc does not know it is 16-byte aligned
#else
    __shared__ __align__(16) float As[TILE][TILE];
#endif
    __shared__ __align__(16) float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;          // 16 x 16
    const int tid = ty * 16 + tx;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < N; k0 += TILE) {
        // 64x64 floats = 1024 float4, 256 threads: four float4 per thread per matrix
        for (int q = 0; q < 4; ++q) {
            int f = tid + q * 256;                         // float4 index in the tile
            int r = f / (TILE / 4), c4 = f % (TILE / 4);
            float4 a = *reinterpret_cast<const float4*>(&A[(row0 + r) * N + k0 + c4 * 4]);
            float4 b = *reinterpret_cast<const float4*>(&B[(k0 + r) * N + col0 + c4 * 4]);
#ifdef SCALAR_AS_STORES
            // four scalar stores: ptxas merges them into one STS.128 in the plain kernel
            As[r][c4 * 4 + 0] = a.x; As[r][c4 * 4 + 1] = a.y; As[r][c4 * 4 + 2] = a.z; As[r][c4 * 4 + 3] = a.w;
#else
            *reinterpret_cast<float4*>(&As[r][c4 * 4]) = a;
#endif
            *reinterpret_cast<float4*>(&Bs[r][c4 * 4]) = b;
        }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            float4 b = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            for (int i = 0; i < 4; ++i) {
                float a = As[ty * 4 + i][k];
                acc[i][0] += a * b.x; acc[i][1] += a * b.y; acc[i][2] += a * b.z; acc[i][3] += a * b.w;
            }
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        *reinterpret_cast<float4*>(&C[(row0 + ty * 4 + i) * N + col0 + tx * 4]) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
