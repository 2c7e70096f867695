// wgmma beside other shared-memory traffic, for Nsight Compute (tools/gpu/probe_wgmma_mix.sh).
//
// Do several warpgroups' wgmma reads, or a warpgroup's LDS/STS running at the same time,
// change the `..._shared_op_gmma` counters of tools/gpu/probe_wgmma.sh (one warpgroup alone:
// bytes / 128 wavefronts, no conflict)? One block of G warpgroups; the first W of them issue
// `loops` x wgmma m64n64k16 f16 (A and B K-major, 128B swizzle, canonical), each warpgroup's
// operands `stride` bytes after the previous one's (0: all read the same bytes); the others
// run 16 x `loops` shared accesses of one MODE at the same time:
//   1 ld.shared.u32 at lane * 4 (conflict-free)   2 st.shared.u32 at lane * 4
//   3 ld.shared.v4.u32 at lane * 16                4 ld.shared.u32 at lane * 128 (32-way conflicts)
// on the bytes the wgmma reads. Prints one config line per launch (launch order = ncu ID).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -o mix probe_wgmma_mix.cu
#define PROBE_WGMMA_NO_MAIN
#include "probe_wgmma.cu"

struct MixCfg {
  uint32_t gmma_groups, stride, mode, loops;
};

__global__ void __launch_bounds__(512) wgmma_mix(MixCfg c, float *out, unsigned *sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  const uint32_t al = (base + 1023u) & ~1023u;
  const uint32_t g = threadIdx.x / 128, lane = threadIdx.x % 32;
  if (g < c.gmma_groups) {
    const uint64_t da = make_desc(al + g * c.stride, 16, 1024, 1, 0);
    const uint64_t db = make_desc(al + 65536 + g * c.stride, 16, 1024, 1, 0);
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) d[i] = 0.f;
    uint32_t a[4] = {0, 0, 0, 0};
    for (uint32_t it = 0; it < c.loops; ++it) Mma<64, 0, 0, 0>::run(d, da, db, a);
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 32; ++i) s += d[i];
    out[threadIdx.x] = s;
  } else if (c.mode) {
    unsigned acc = 0;
    const uint32_t at = c.mode == 3 ? lane * 16 : c.mode == 4 ? lane * 128 : lane * 4;
    for (uint32_t it = 0; it < 16 * c.loops; ++it) {
      const uint32_t addr = al + ((at + it * 512) & 32767);
      if (c.mode == 1 || c.mode == 4) {
        unsigned v;
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
        acc += v;
      } else if (c.mode == 2) {
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(addr), "r"(it) : "memory");
      } else {
        unsigned v0, v1, v2, v3;
        asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "r"(addr)
                     : "memory");
        acc += v0 ^ v1 ^ v2 ^ v3;
      }
    }
    if (acc == 0x12345678u) sink[0] = acc;
  }
}

int main() {
  struct L {
    uint32_t groups;
    MixCfg c;
  };
  std::vector<L> v;
  for (uint32_t gr : {1u, 2u, 4u})
    for (uint32_t stride : {0u, 8192u}) v.push_back({gr, {gr, stride, 0, 8}});
  for (uint32_t gr : {2u, 4u})
    for (uint32_t mode = 1; mode <= 4; ++mode) v.push_back({gr, {gr / 2, 0, mode, 8}});
  CK(cudaFuncSetAttribute((const void *)wgmma_mix, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  float *out;
  unsigned *sink;
  CK(cudaMalloc(&out, 512 * sizeof(float)));
  CK(cudaMalloc(&sink, 64));
  printf("launch,block_threads,gmma_groups,stride,mode,loops\n");
  int n = 0;
  for (const L &l : v) {
    MixCfg c = l.c;
    void *args[] = {&c, &out, &sink};
    CK(cudaLaunchKernel((const void *)wgmma_mix, dim3(1), dim3(128 * l.groups), args, 100 * 1024, 0));
    CK(cudaDeviceSynchronize());
    printf("%d,%u,%u,%u,%u,%u\n", n++, 128 * l.groups, c.gmma_groups, c.stride, c.mode, c.loops);
  }
  return 0;
}
