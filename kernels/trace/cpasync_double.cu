// Double-buffered copy through shared memory: each block streams tiles of 128 16-byte
// chunks; the next tile is fetched with cp.async.cg (16 bytes per thread) into the other
// shared stage while the current one is consumed with 16-byte shared loads (LDS.128).
// commit_group / wait_group 1 keep one tile in flight. nchunks is not a multiple of the
// tile: the last tile's copies and stores are guarded.
extern "C" __global__ void cpasync_double(const float4* __restrict__ in, float4* __restrict__ out, int nchunks) {
    __shared__ __align__(16) float4 stage[2][128];
    int ntiles = (nchunks + 127) / 128;
    int tid = threadIdx.x;
    int t = blockIdx.x, s = 0;
    if (t < ntiles && t * 128 + tid < nchunks) {
        unsigned dst = (unsigned)__cvta_generic_to_shared(&stage[0][tid]);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(in + t * 128 + tid));
    }
    asm volatile("cp.async.commit_group;\n" ::);
    for (; t < ntiles; t += gridDim.x) {
        int nt = t + gridDim.x;
        if (nt < ntiles && nt * 128 + tid < nchunks) {
            unsigned dst = (unsigned)__cvta_generic_to_shared(&stage[s ^ 1][tid]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(in + nt * 128 + tid));
        }
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::);
        __syncthreads();
        int c = t * 128 + tid;
        if (c < nchunks) {
            float4 v = stage[s][tid];
            out[c] = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);
        }
        __syncthreads();
        s ^= 1;
    }
    asm volatile("cp.async.wait_all;\n" ::);
}
