// A program written the way CUDA samples are: kernels in a namespace and as templates, a
// helper header, host code and main(). warpviz traces its kernels as they are (launch-file
// format 2): tiles_transpose_padded.launch.toml and block_sum_cg.launch.toml.
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

namespace tiles {

// out = in^T through a TILE x (TILE + 1) shared tile: the padding column moves each row of
// the tile to the next bank, so reading a column of the tile is one wavefront.
template <typename T, int TILE, int ROWS>
__global__ void transpose_padded(T *out, const T *in, int width, int height)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

}  // namespace tiles

// One sum per block: a grid-stride load, a tree in dynamic shared memory down to one warp,
// then cooperative groups' warp reduction.
template <typename T, unsigned BLOCK>
__global__ void block_sum(const T *in, T *out, unsigned n)
{
    extern __shared__ unsigned char smem[];
    T *s = reinterpret_cast<T *>(smem);
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    T v = T(0);
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK)
        v += in[i];
    s[threadIdx.x] = v;
    block.sync();
    for (unsigned stride = BLOCK / 2; stride >= 32; stride /= 2) {
        if (threadIdx.x < stride)
            s[threadIdx.x] = v = v + s[threadIdx.x + stride];
        block.sync();
    }
    if (warp.meta_group_rank() == 0) {
        for (int offset = 16; offset > 0; offset /= 2)
            v += warp.shfl_down(v, offset);
        if (warp.thread_rank() == 0)
            out[blockIdx.x] = v;
    }
}

int main()
{
    const int w = 100, h = 70;
    std::vector<float> host(w * h);
    for (int i = 0; i < w * h; ++i)
        host[i] = float(i);
    float *in = nullptr, *out = nullptr;
    CHECK(cudaMalloc(&in, w * h * sizeof(float)));
    CHECK(cudaMalloc(&out, w * h * sizeof(float)));
    CHECK(cudaMemcpy(in, host.data(), w * h * sizeof(float), cudaMemcpyHostToDevice));
    tiles::transpose_padded<float, 32, 8><<<dim3((w + 31) / 32, (h + 31) / 32), dim3(32, 8)>>>(out, in, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(host.data(), out, w * h * sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("out[1] = %g (expect %d)\n", host[1], w);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return 0;
}
