// Copies: one element per thread, out[i] = in[i] (scenarios coalesced, vector-int,
// vector-int2, vector-int4, float3-whole, boundary-n1003, grid-stride-loop, block-2d).
// A warp of 4-byte copies is 1 request and 4 sectors per direction; 8- and 16-byte types
// are single LDG.64 / LDG.128 instructions (8 and 16 sectors), so the same bytes need a
// half or a quarter of the instructions.
#include "common.cuh"

template <typename T>
__device__ __forceinline__ void copy_one(const T* __restrict__ in, T* __restrict__ out) {
    const int i = global_index();
    out[i] = in[i];
}

extern "C" __global__ void copy_float(const float* __restrict__ in, float* __restrict__ out) { copy_one(in, out); }
extern "C" __global__ void copy_float2(const float2* __restrict__ in, float2* __restrict__ out) { copy_one(in, out); }
extern "C" __global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out) { copy_one(in, out); }
extern "C" __global__ void copy_int(const int* __restrict__ in, int* __restrict__ out) { copy_one(in, out); }
extern "C" __global__ void copy_int2(const int2* __restrict__ in, int2* __restrict__ out) { copy_one(in, out); }
extern "C" __global__ void copy_int4(const int4* __restrict__ in, int4* __restrict__ out) { copy_one(in, out); }

// A whole float3 is 12 bytes with 4-byte alignment: nvcc emits three 4-byte loads and
// three 4-byte stores (float3-whole).
extern "C" __global__ void copy_float3(const float3* __restrict__ in, float3* __restrict__ out) { copy_one(in, out); }

// The i < n guard (boundary-n1003): inactive lanes make no access.
extern "C" __global__ void copy_guarded(const float* __restrict__ in, float* __restrict__ out, int n) {
    const int i = global_index();
    if (i < n) out[i] = in[i];
}

// Grid-stride loop (grid-stride-loop): the grid walks the array in strides of its size.
extern "C" __global__ void copy_grid_stride(const float* __restrict__ in, float* __restrict__ out, int n) {
    const int stride = blockDim.x * gridDim.x;
    for (int i = global_index(); i < n; i += stride) out[i] = in[i];
}

// A 2-D image with 32 x 16 blocks (block-2d): each warp is one 128-byte row piece.
extern "C" __global__ void copy_2d(const float* __restrict__ img, float* __restrict__ out, int W) {
    const int x = blockIdx.x * 32 + threadIdx.x;
    const int y = blockIdx.y * 16 + threadIdx.y;
    out[y * W + x] = img[y * W + x];
}
