// Matrix transpose, W x W floats, 32 x 8 threads per 32 x 32 tile (transpose-naive and
// the transpose-tile family). Each thread moves TILE / ROWS = 4 elements.
//
// Through shared memory, the tile is stored row by row (tile[ty+j][tx]) and read down
// its columns (tile[tx][ty+j]). How a column lands on the 32 banks is the tile's layout,
// written as a function from (row, col) to the element offset, exactly the scenario's
// swizzle formula:
//   none        row*32 + col                    column read: 32 wavefronts
//   pad P       row*(32+P) + col                P = 1: 1 wavefront
//   xor         row*32 + (col ^ row)            1 wavefront
//   xor:4       row*32 + (col ^ 4)              32: a constant mask moves the whole column
//   diagonal    row*32 + (col + row) % 32       1
//   bitrev      row*32 + rev5(col)              32: the same permutation in every row
//   bitrev-xor  row*32 + (col ^ rev5(row))      1
//   cute:5,0,5  o ^ ((o >> 5) & 31), o = row*32 + col   1 (equals xor for 32 columns)
//   lcg         row*32 + (5*col + row) % 32     1
//   lcg-norow   row*32 + (5*col + 3) % 32       32
#include "common.cuh"

#define TILE 32
#define ROWS 8

__device__ __forceinline__ int rev5(int x) { return __brev(x) >> 27 & 31; }

struct None      { __device__ static int at(int r, int c) { return r * TILE + c; } };
struct Pad1      { __device__ static int at(int r, int c) { return r * (TILE + 1) + c; } };
struct Xor       { __device__ static int at(int r, int c) { return r * TILE + (c ^ (r % TILE)); } };
struct Xor4      { __device__ static int at(int r, int c) { return r * TILE + (c ^ 4); } };
struct Diagonal  { __device__ static int at(int r, int c) { return r * TILE + (c + r) % TILE; } };
struct Bitrev    { __device__ static int at(int r, int c) { return r * TILE + rev5(c); } };
struct BitrevXor { __device__ static int at(int r, int c) { return r * TILE + (c ^ rev5(r % TILE)); } };
struct Cute505   { __device__ static int at(int r, int c) { int o = r * TILE + c; return o ^ ((o >> 5) & 31); } };
struct Lcg       { __device__ static int at(int r, int c) { return r * TILE + (c * 5 + r) % 32; } };
struct LcgNoRow  { __device__ static int at(int r, int c) { return r * TILE + (c * 5 + 3) % 32; } };

// Naive: coalesced reads, but each store instruction writes one column: 32 sectors.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int W) {
    const int x = blockIdx.x * TILE + threadIdx.x;
    const int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[x * W + y + j] = in[(y + j) * W + x];
}

template <class Layout, int PITCH_ROWS_PLUS>
__device__ __forceinline__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int W) {
    __shared__ float tile[TILE * (TILE + PITCH_ROWS_PLUS)];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[Layout::at(threadIdx.y + j, threadIdx.x)] = in[(y + j) * W + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * W + x] = tile[Layout::at(threadIdx.x, threadIdx.y + j)];
}

#define TRANSPOSE(NAME, LAYOUT, PLUS) \
    extern "C" __global__ void NAME(const float* __restrict__ in, float* __restrict__ out, int W) { \
        transpose_tile<LAYOUT, PLUS>(in, out, W); }

TRANSPOSE(transpose_tile_none, None, 0)
TRANSPOSE(transpose_tile_pad1, Pad1, 1)
TRANSPOSE(transpose_tile_xor, Xor, 0)
TRANSPOSE(transpose_tile_xor4, Xor4, 0)
TRANSPOSE(transpose_tile_diagonal, Diagonal, 0)
TRANSPOSE(transpose_tile_bitrev, Bitrev, 0)
TRANSPOSE(transpose_tile_bitrev_xor, BitrevXor, 0)
TRANSPOSE(transpose_tile_cute, Cute505, 0)
TRANSPOSE(transpose_tile_lcg, Lcg, 0)
TRANSPOSE(transpose_tile_lcg_norow, LcgNoRow, 0)

// Any pad at run time (transpose-tile with --set PAD=P): the tile is dynamic shared memory
// of 32 x (32 + P) floats.
extern "C" __global__ void transpose_tile_padded(const float* __restrict__ in, float* __restrict__ out, int W, int P) {
    extern __shared__ float tile[];
    const int pitch = TILE + P;
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[(threadIdx.y + j) * pitch + threadIdx.x] = in[(y + j) * W + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * W + x] = tile[threadIdx.x * pitch + threadIdx.y + j];
}
