// Device facts checked for the lessons' wording (one warp per kernel, one launch each):
// which STSM / LDGSTS counters Nsight Compute reads on the H100, what nvcc makes of
// atomicAdd on shared memory (result used, uniform address; weighted histogram), and
// where ptxas puts the never-true LDS of an unrolled pair of cp.async.
// Build: nvcc -arch=sm_90a -O3 -o /tmp/lesson_facts tools/gpu/session/lesson_facts.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>

__device__ __forceinline__ unsigned smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// stmatrix.x4, rows 16 B apart: 4 wavefronts, 0 conflicts; one STSM.
extern "C" __global__ void stsm_x4(int *out) {
  __shared__ __align__(128) unsigned short s[32 * 8];
  unsigned lane = threadIdx.x & 31;
  unsigned r = lane * 3u;
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem(&s[lane * 8])),
               "r"(r), "r"(r + 1), "r"(r + 2), "r"(r + 3)
               : "memory");
  __syncwarp();
  out[lane] = s[lane * 5 % 256];
}

// one cp.async.ca of 16 bytes per lane, both sides contiguous.
extern "C" __global__ void cp_ca16(const int *in, int *out) {
  __shared__ __align__(16) int s[32 * 4];
  unsigned lane = threadIdx.x & 31;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(smem(&s[lane * 4])), "l"(in + lane * 4) : "memory");
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncwarp();
  out[lane] = s[(lane * 7) % 128];
}

// two cp.async per thread in an unrolled loop (the first form of the cp-async-pipeline kernel).
extern "C" __global__ void cp_unrolled2(const int *in, int *out) {
  __shared__ __align__(16) int s[2][32 * 4];
  unsigned lane = threadIdx.x & 31;
#pragma unroll
  for (int j = 0; j < 2; ++j)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(smem(&s[j][lane * 4])),
                 "l"(in + j * 128 + lane * 4)
                 : "memory");
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncwarp();
  out[lane] = s[0][(lane * 7) % 128] + s[1][lane];
}

// atomicAdd on one shared address by every lane, the old value used.
extern "C" __global__ void atomic_used_uniform(const int *in, int *out) {
  __shared__ int h[64];
  unsigned lane = threadIdx.x & 31;
  h[lane] = 0;
  h[lane + 32] = 0;
  __syncwarp();
  int old = atomicAdd(&h[0], 1);
  out[lane] = old;
}

// atomicAdd, old value used, 16 addresses x 2 lanes (lane % 16).
extern "C" __global__ void atomic_used_16x2(const int *in, int *out) {
  __shared__ int h[64];
  unsigned lane = threadIdx.x & 31;
  h[lane] = 0;
  h[lane + 32] = 0;
  __syncwarp();
  int old = atomicAdd(&h[lane % 16], 1);
  out[lane] = old;
}

// a weighted histogram: atomicAdd(&h[bin], w), result unused, 8 bins x 4 lanes.
extern "C" __global__ void atomic_weighted_8x4(const int *in, int *out) {
  __shared__ int h[64];
  unsigned lane = threadIdx.x & 31;
  h[lane] = 0;
  h[lane + 32] = 0;
  __syncwarp();
  atomicAdd(&h[lane % 8], in[lane] + 1);
  __syncwarp();
  out[lane] = h[lane];
}

// the histogram's atomicAdd(&h[bin], 1), result unused, 8 bins x 4 lanes (ATOMS.POPC.INC).
extern "C" __global__ void atomic_inc_8x4(const int *in, int *out) {
  __shared__ int h[64];
  unsigned lane = threadIdx.x & 31;
  h[lane] = 0;
  h[lane + 32] = 0;
  __syncwarp();
  atomicAdd(&h[lane % 8], 1);
  __syncwarp();
  out[lane] = h[lane];
}

#define CK(x)                                                                     \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      printf("FATAL %s: %s\n", #x, cudaGetErrorString(e_));                      \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

int main(int argc, char **argv) {
  int *in, *out;
  CK(cudaMalloc(&in, 1 << 16));
  CK(cudaMemset(in, 0, 1 << 16));
  CK(cudaMalloc(&out, 1 << 16));
  const char *only = argc > 1 ? argv[1] : "";
#define RUN(name, ...)                                          \
  if (!*only || !strcmp(only, #name)) {                         \
    name<<<1, 32>>>(__VA_ARGS__);                               \
    CK(cudaDeviceSynchronize());                                \
    int h[32];                                                  \
    CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));   \
    printf("%s:", #name);                                       \
    for (int i = 0; i < 32; i++) printf(" %d", h[i]);           \
    printf("\n");                                               \
  }
  RUN(stsm_x4, out);
  RUN(cp_ca16, in, out);
  RUN(cp_unrolled2, in, out);
  RUN(atomic_used_uniform, in, out);
  RUN(atomic_used_16x2, in, out);
  RUN(atomic_weighted_8x4, in, out);
  RUN(atomic_inc_8x4, in, out);
  return 0;
}
