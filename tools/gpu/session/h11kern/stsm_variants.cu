// One stmatrix form per kernel (same arguments as kernels/trace/stmatrix_frag.cu), so that
// Nsight Compute's shared-store counters can be read for each form alone
// (tools/gpu/session/h11kern/ncu_extra.py). Besides the STSM, one 2-byte shared load per lane.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

#define PROLOGUE                                                                   \
    __shared__ __align__(16) unsigned short tile[4][16 * 24];                                \
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;                          \
    int gw = blockIdx.x * (blockDim.x >> 5) + warp;                                \
    uint4 f = frag[gw * 32 + lane];                                                \
    int m = lane >> 3, row = (m & 1) * 8 + (lane & 7), col = (m >> 1) * 8; (void)row; (void)col;

#define EPILOGUE                                                                   \
    __syncwarp();                                                                  \
    out[gw * 96 + lane] = make_uint4(f.x, f.y, (unsigned)tile[warp][lane], 0);

extern "C" __global__ void s1_x4_dense(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    PROLOGUE
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem(&tile[warp][row * 16 + col])), "r"(f.x), "r"(f.y), "r"(f.z), "r"(f.w) : "memory");
    EPILOGUE
}
extern "C" __global__ void s2_x4_trans_padded(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    PROLOGUE
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem(&tile[warp][row * 24 + col])), "r"(f.x), "r"(f.y), "r"(f.z), "r"(f.w) : "memory");
    EPILOGUE
}
extern "C" __global__ void s3_x4_padded(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    PROLOGUE
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem(&tile[warp][row * 24 + col])), "r"(f.x), "r"(f.y), "r"(f.z), "r"(f.w) : "memory");
    EPILOGUE
}
extern "C" __global__ void s4_x2_upper_lanes_conflicting(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    PROLOGUE
    // lanes 0..15: 16 rows of 16 bytes, contiguous; lanes 16..31 (unused by .x2): all in bank 0..3
    const unsigned short* p = lane < 16 ? &tile[warp][lane * 8] : &tile[warp][(lane - 16) * 64 % 384];
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n"
                 :: "r"(smem(p)), "r"(f.x), "r"(f.y) : "memory");
    EPILOGUE
}
extern "C" __global__ void s5_x1(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    PROLOGUE
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n"
                 :: "r"(smem(&tile[warp][(lane & 7) * 16])), "r"(f.x) : "memory");
    EPILOGUE
}
extern "C" __global__ void s6_x4_all_same_row(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    PROLOGUE
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem(&tile[warp][0])), "r"(f.x), "r"(f.y), "r"(f.z), "r"(f.w) : "memory");
    EPILOGUE
}
