// Matrix transpose through a 32x33 shared tile (one float of padding per row), blocks of
// 32x8 threads, each thread moving four elements; a guarded edge for widths that are not
// a multiple of 32.
#define TILE 32

extern "C" __global__ void transpose_pad(const float* __restrict__ in, float* __restrict__ out, int W, int H) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < W && y + j < H) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * W + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += 8)
        if (x < H && y + j < W) out[(y + j) * H + x] = tile[threadIdx.x][threadIdx.y + j];
}
