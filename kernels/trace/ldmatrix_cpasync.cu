// ldmatrix from shared memory and a cp.async (LDGSTS) copy into shared memory: a 16x16
// half tile per warp copied with 16-byte cp.async, then read as four 8x8 matrices.
#include <cuda_fp16.h>

extern "C" __global__ void ldmatrix_cpasync(const half* __restrict__ in, unsigned* __restrict__ out) {
    __shared__ __align__(16) half tile[16 * 16];
    int lane = threadIdx.x;                               // one warp
    const half* src = in + blockIdx.x * 256 + lane * 8;
    unsigned dst = (unsigned)__cvta_generic_to_shared(tile + lane * 8);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(src));
    asm volatile("cp.async.wait_all;\n" ::);
    __syncwarp();
    unsigned r0, r1, r2, r3;
    unsigned row = (unsigned)__cvta_generic_to_shared(tile + (lane % 16) * 16 + (lane / 16) * 8);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row));
    out[blockIdx.x * 128 + lane * 4 + 0] = r0;
    out[blockIdx.x * 128 + lane * 4 + 1] = r1;
    out[blockIdx.x * 128 + lane * 4 + 2] = r2;
    out[blockIdx.x * 128 + lane * 4 + 3] = r3;
}
