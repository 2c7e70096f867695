// stmatrix: the epilogue of a tensor-core GEMM. Each warp holds a 16x16 half accumulator
// tile in the MMA fragment layout (lane l has, of each 8x8 matrix i, row l/4, columns
// 2*(l%4) and 2*(l%4)+1, packed in register i), scales it, and stores it to shared memory
// with stmatrix (lane l gives the address of row l%8 of matrix l/8):
//   .x4 into a dense 16x16 tile (32-byte rows: 2-way bank conflicts),
//   .x4.trans into a padded tile (48-byte rows: no conflict),
//   .x2 (matrices 0 and 1 only: lanes 16..31's addresses are not used) into a 16x8 tile.
// Then every lane reads 16 bytes of each tile back (LDS.128) and writes them to global.
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned h2u(__half2 h) { return *reinterpret_cast<unsigned*>(&h); }
__device__ __forceinline__ __half2 u2h(unsigned u) { return *reinterpret_cast<__half2*>(&u); }
__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void stmatrix_frag(const uint4* __restrict__ frag, uint4* __restrict__ out) {
    __shared__ __align__(16) half dense[4][16 * 16];
    __shared__ __align__(16) half padded[4][16 * 24];
    __shared__ __align__(16) half narrow[4][16 * 8];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int gw = blockIdx.x * (blockDim.x >> 5) + warp;
    uint4 f = frag[gw * 32 + lane];                          // the accumulator fragment
    __half2 two = __float2half2_rn(2.0f);
    unsigned r0 = h2u(__hmul2(u2h(f.x), two)), r1 = h2u(__hmul2(u2h(f.y), two));
    unsigned r2 = h2u(__hmul2(u2h(f.z), two)), r3 = h2u(__hmul2(u2h(f.w), two));

    int m = lane >> 3, row = (m & 1) * 8 + (lane & 7), col = (m >> 1) * 8;
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem(&dense[warp][row * 16 + col])), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem(&padded[warp][row * 24 + col])), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
    // .x2: lanes 0..15 address rows 0..15; lanes 16..31 point into `dense` (ignored by the hardware)
    const half* p2 = lane < 16 ? &narrow[warp][lane * 8] : &dense[warp][(lane - 16) * 16];
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n"
                 :: "r"(smem(p2)), "r"(r0), "r"(r1) : "memory");
    __syncwarp();

    uint4 a = *reinterpret_cast<const uint4*>(&dense[warp][lane * 8]);
    uint4 b = *reinterpret_cast<const uint4*>(&padded[warp][(lane >> 1) * 24 + (lane & 1) * 8]);
    uint4 c = *reinterpret_cast<const uint4*>(&narrow[warp][(lane & 15) * 8]);
    out[gw * 96 + lane] = a;
    out[gw * 96 + 32 + lane] = b;
    out[gw * 96 + 64 + lane] = c;
}
