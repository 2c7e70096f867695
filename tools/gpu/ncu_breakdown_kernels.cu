// Microbenchmarks for tools/gpu/ncu_breakdown.sh: the L2 rate of cp.async (LDGSTS) traffic,
// which the calibration does not measure (its L2 figures come from ld.global.cg loads), and
// the L2 cost of scalar stores that write sectors in part (wv_st_fields, below).
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

// wv_st_fields: thread i stores `fields` consecutive 4-byte words at p[i * stride + f], one
// st.global.f32 per word (f = 0 .. fields - 1, fields <= 8), nothing loaded, `passes` times
// over n threads' words (grid-stride). stride 7, fields 6 is the store half of an AoS update
// of 28-byte structs (a warp's store writes 4 of a sector's bytes per lane, 28 sectors in 7
// lines; its next store the next 4 bytes of the same sectors); stride 8, fields 1 one
// partial word per sector (32 sectors in 8 lines per store); stride 32, fields 1 one word
// per line (as a naive transpose's column write); stride 1, fields 1 coalesced whole lines.
extern "C" __global__ void wv_st_fields(float* p, unsigned n, int stride, int fields, int passes) {
    const unsigned step = gridDim.x * blockDim.x;
    for (int r = 0; r < passes; ++r) {
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
            float* q = p + (u64)i * (unsigned)stride;
#pragma unroll
            for (int f = 0; f < 8; ++f) {
                if (f < fields) asm volatile("st.global.f32 [%0], %1;" ::"l"(q + f), "f"((float)(r + f)) : "memory");
            }
        }
    }
}
