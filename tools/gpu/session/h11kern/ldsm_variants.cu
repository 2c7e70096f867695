// Variants of kernels/trace/ldmatrix_cpasync.cu, to find which PTX instruction gives the
// plain SASS its three `@!PT LDS RZ, [RZ]` (tools/gpu/session/h11kern.sh dumps the SASS of
// each with cuobjdump). V_* switches are set per kernel by the macro below.
#include <cuda_fp16.h>

#define BODY(CPASYNC, COMMIT, WAIT, SYNC, LDSM)                                                         \
    __shared__ __align__(16) half tile[16 * 16];                                                       \
    int lane = threadIdx.x;                                                                            \
    const half* src = in + blockIdx.x * 256 + lane * 8;                                                \
    unsigned dst = (unsigned)__cvta_generic_to_shared(tile + lane * 8);                                \
    if (CPASYNC) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(src));   \
    else *reinterpret_cast<uint4*>(tile + lane * 8) = *reinterpret_cast<const uint4*>(src);           \
    if (COMMIT) asm volatile("cp.async.commit_group;\n" ::);                                          \
    if (WAIT == 1) asm volatile("cp.async.wait_all;\n" ::);                                           \
    if (WAIT == 2) asm volatile("cp.async.wait_group 0;\n" ::);                                       \
    if (WAIT == 3) asm volatile("cp.async.wait_group 1;\n" ::);                                       \
    if (SYNC == 1) __syncwarp();                                                                       \
    if (SYNC == 2) __syncthreads();                                                                    \
    unsigned r0, r1, r2, r3;                                                                           \
    unsigned row = (unsigned)__cvta_generic_to_shared(tile + (lane % 16) * 16 + (lane / 16) * 8);     \
    if (LDSM) asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"       \
                           : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row));                       \
    else { uint4 v = *reinterpret_cast<const uint4*>(tile + (lane ^ 5) * 8);                          \
           r0 = v.x; r1 = v.y; r2 = v.z; r3 = v.w; }                                                   \
    out[blockIdx.x * 128 + lane * 4 + 0] = r0;                                                         \
    out[blockIdx.x * 128 + lane * 4 + 1] = r1;                                                         \
    out[blockIdx.x * 128 + lane * 4 + 2] = r2;                                                         \
    out[blockIdx.x * 128 + lane * 4 + 3] = r3;

#define K(NAME, CPASYNC, COMMIT, WAIT, SYNC, LDSM) \
    extern "C" __global__ void NAME(const half* __restrict__ in, unsigned* __restrict__ out) { BODY(CPASYNC, COMMIT, WAIT, SYNC, LDSM) }

//                         cp.async commit wait(1 all,2 group0,3 group1) sync(1 warp,2 bar) ldmatrix
K(v01_as_shipped,           1, 0, 1, 1, 1)
K(v02_no_wait,              1, 0, 0, 1, 1)
K(v03_commit_wait_group0,   1, 1, 2, 1, 1)
K(v04_commit_only,          1, 1, 0, 1, 1)
K(v05_commit_wait_group1,   1, 1, 3, 1, 1)
K(v06_wait_all_no_sync,     1, 0, 1, 0, 1)
K(v07_wait_all_bar_sync,    1, 0, 1, 2, 1)
K(v08_no_ldmatrix,          1, 0, 1, 1, 0)
K(v09_no_cpasync,           0, 0, 0, 1, 1)
K(v10_no_cpasync_no_ldsm,   0, 0, 0, 1, 0)
K(v11_no_cpasync_wait_all,  0, 0, 1, 1, 0)
K(v12_cpasync_only,         1, 0, 0, 0, 0)
K(v13_commit_wait0_no_ldsm, 1, 1, 2, 1, 0)
K(v14_nothing_but_wait_all, 0, 0, 1, 0, 0)
