// Loops that wait on memory other threads write (tests/test_trace_reconcile.py): a
// cooperative-groups tile of two warps syncs through a barrier word in the block's
// block_tile_memory, with generic atomics and an ld.acquire spin; a warp spins on a
// volatile shared flag. How often such a loop runs depends on timing, and the trace says
// so on its instructions. volatile_sum reads volatile memory in a loop with a fixed trip
// count: not a wait.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile64_sum(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ cg::block_tile_memory<256> scratch;
    auto block = cg::this_thread_block(scratch);
    auto tile = cg::tiled_partition<64>(block);
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    v = cg::reduce(tile, v, cg::plus<int>());
    if (tile.thread_rank() == 0) out[blockIdx.x * tile.meta_group_size() + tile.meta_group_rank()] = v;
}

extern "C" __global__ void spin_flag(int* __restrict__ out) {
    __shared__ int flag;
    __shared__ int data[32];
    if (threadIdx.x == 0) flag = 0;
    __syncthreads();
    if (threadIdx.x < 32) {
        data[threadIdx.x] = 2 * threadIdx.x;
        __threadfence_block();
        if (threadIdx.x == 0) atomicExch(&flag, 1);
    } else {
        while (*(volatile int*)&flag == 0) {
        }
        out[threadIdx.x] = data[threadIdx.x % 32];
    }
}

extern "C" __global__ void volatile_sum(const int* __restrict__ in, int* __restrict__ out) {
    __shared__ int s[64];
    s[threadIdx.x % 64] = in[threadIdx.x];
    __syncthreads();
    int acc = 0;
#pragma unroll 1
    for (int k = 0; k < 8; ++k) acc += ((volatile int*)s)[(threadIdx.x + k) % 64];
    out[threadIdx.x] = acc;
}
