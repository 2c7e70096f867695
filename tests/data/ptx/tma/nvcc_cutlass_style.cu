#include <cuda.h>
#include <cstdint>
extern "C" __global__ void __cluster_dims__(2,1,1) k(const __grid_constant__ CUtensorMap map, float* out, uint64_t policy) {
  __shared__ alignas(1024) float tile[64 * 32];
  __shared__ alignas(8) uint64_t bar;
  unsigned s = (unsigned)__cvta_generic_to_shared(tile), b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("{ .reg .pred p; elect.sync _|p, 0xffffffff; @p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5; }"
                 :: "r"(s), "l"((uint64_t)&map), "r"(0), "r"((int)blockIdx.x * 64), "r"(b), "l"(policy) : "memory");
    uint16_t mask = 3;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 :: "r"(s), "l"((uint64_t)&map), "r"(0), "r"(0), "r"(b), "h"(mask) : "memory");
  }
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}
