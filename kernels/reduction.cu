// Block sums of 256 floats (reduction-tree, reduction-interleaved): out[b] = sum of the
// block's inputs. Shared accesses are volatile so each is exactly one LDS/STS.
#include "common.cuh"

// Sequential addressing: active threads are contiguous, both operands consecutive words:
// no bank conflicts at any step.
extern "C" __global__ void reduce_tree(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float cache_[256];
    volatile float* cache = cache_;
    const int tid = threadIdx.x;
    cache[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        WARP_IF(tid < s) cache[tid] = cache[tid] + cache[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = cache[0];
}

// Interleaved addressing: thread t works on cache[2*d*t] with d = 1, 2, 4, ...: the
// active words are 2d apart, so the even strides pile onto few banks (conflicts).
extern "C" __global__ void reduce_interleaved(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float cache_[256];
    volatile float* cache = cache_;
    const int tid = threadIdx.x;
    cache[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int d = 1; d < 256; d <<= 1) {
        WARP_IF(tid < 128 / d) cache[2 * d * tid] = cache[2 * d * tid] + cache[2 * d * tid + d];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = cache[0];
}
