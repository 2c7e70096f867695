// A TMA tile load whose tensor map is encoded on the host (cuTensorMapEncodeTiled) and passed
// inside a structure by value, as CUTLASS 3 passes its Params: the launch file
// tma_struct_param.launch.toml describes the structure ([[arg]] type = "struct") and the map
// ([[tensormap]]); warpviz encodes the map for its own buffer on the GPU machine.
#include <cuda.h>

struct Params {
  CUtensorMap a;     // offset 0 (CUDA 13: aligned to 128 bytes, so the structure is 256 bytes)
  float* out;        // offset 128
  int rows, cols;    // offsets 136, 140
};

extern "C" __global__ void __launch_bounds__(128) tma_struct_param(const __grid_constant__ Params p) {
  __shared__ alignas(1024) float tile[32][32];           // a 32 x 32 float box, 128-byte swizzle
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[0][0]));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  int x = blockIdx.x * 32, y = blockIdx.y * 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(32 * 32 * 4) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(&p.a), "r"(x), "r"(y), "r"(b) : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], 0; selp.u32 %0, 1, 0, q; }"
                 : "=r"(done) : "r"(b) : "memory");
  // each warp sums a row of the swizzled tile (the 16-byte chunks of row r sit at chunk ^ (r % 8))
  for (int r = threadIdx.x / 32; r < 32; r += 4) {
    int c = threadIdx.x % 32;
    int phys = ((c / 4) ^ (r % 8)) * 4 + c % 4;
    float v = tile[r][phys];
    if (y + r < p.rows && x + c < p.cols) p.out[(y + r) * p.cols + x + c] = v;
  }
}
