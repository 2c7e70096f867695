// 3-point stencil out[i] = in[i-1] + in[i] + in[i+1] for 1 <= i < N-1
// (stencil-global, stencil-shared).
#include "common.cuh"

// Straight from global memory: three overlapping loads per thread, two of them off a
// 128-byte boundary (5 sectors each); L1 serves the re-reads.
extern "C" __global__ void stencil_global(const float* __restrict__ in, float* __restrict__ out, int N) {
    const int i = global_index();
    if (i >= 1 && i < N - 1) out[i] = in[i - 1] + in[i] + in[i + 1];
}

// Through a shared tile with a one-element halo on each side: one coalesced load per
// thread plus two single-lane halo loads per block.
extern "C" __global__ void stencil_shared(const float* __restrict__ in, float* __restrict__ out, int N) {
    __shared__ float s_[256 + 2];
    volatile float* s = s_;
    const int tid = threadIdx.x;
    const int i = global_index();
    s[tid + 1] = in[i];
    if (tid == 0) s[0] = i >= 1 ? in[i - 1] : 0.0f;
    if (tid == blockDim.x - 1) s[blockDim.x + 1] = i + 1 < N ? in[i + 1] : 0.0f;
    __syncthreads();
    if (i >= 1 && i < N - 1) out[i] = s[tid] + s[tid + 1] + s[tid + 2];
}
