// A microbenchmark for tools/gpu/ncu_breakdown.sh: the L2 rate of cp.async (LDGSTS) traffic,
// which the calibration does not measure (its L2 figures come from ld.global.cg loads).
//
// wv_l2_cpasync copies an L2-resident buffer into shared memory with cp.async.cg of 16 bytes
// per lane, `passes` times, grid-stride over warp tasks of 512 bytes. row_bytes = 128: a warp
// reads 4 whole 128-byte lines (4 sectors per request); row_bytes = 64: it reads 8 rows of 64
// bytes 128 bytes apart, half of 8 lines (2 sectors per request, as the A tile of a 64x64x32
// fp16 GEMM), and the neighbouring task reads the other halves. Each thread keeps up to 4
// copy groups in flight; nothing reads the copied data but the last check. Bytes copied per
// launch = passes x bytes.
typedef unsigned long long u64;

extern "C" __global__ void wv_l2_cpasync(const char* __restrict__ p, u64 bytes, int row_bytes, int passes,
                                         unsigned* sink) {
    __shared__ __align__(16) char stage[4][512 * 16];
    const int lane = threadIdx.x & 31;
    const u64 tasks = bytes / 512;
    const u64 warps = (u64)gridDim.x * (blockDim.x / 32);
    const u64 warp = (u64)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int per_row = row_bytes / 16;                 // lanes per row
    int k = 0;
    for (int r = 0; r < passes; ++r) {
        for (u64 t = warp; t < tasks; t += warps) {
            u64 at;
            if (row_bytes >= 128) {
                at = t * 512 + lane * 16;
            } else {                                    // 8 rows 128 bytes apart, one half of each line
                at = (t / 2) * 1024 + (t % 2) * 64 + (u64)(lane / per_row) * 128 + (lane % per_row) * 16;
            }
            const unsigned dst = (unsigned)__cvta_generic_to_shared(&stage[k & 3][threadIdx.x * 16]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(p + at));
            asm volatile("cp.async.commit_group;");
            asm volatile("cp.async.wait_group 3;");
            ++k;
        }
    }
    asm volatile("cp.async.wait_group 0;");
    if (*(const unsigned*)&stage[0][threadIdx.x * 16] == 0x9E3779B9u) sink[0] = 1;
}
