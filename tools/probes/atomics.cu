// Probe kernels for atomics on the H100 (tools/probes/atomics.sh runs them under Nsight
// Compute; tools/probes/atomics.py writes the cases and reads the counters). One warp,
// one atomic instruction per case:
//
// * per-lane address (the lane's byte offset comes from a by-value parameter, so ptxas
//   cannot prove lanes share one): shared ATOMS.ADD (atom, old value read), ATOMS.ADD RZ
//   (red), ATOMS.POPC.INC (C++ atomicAdd(p, 1u), result unused); global REDG / ATOMG of
//   4 and 8 bytes (u32, u64, f32, f64);
// * uniform address (a scalar parameter: ptxas proves every lane has it and aggregates):
//   C++ atomicAdd(&x[u], 1) and atomicAdd(&x[u], v), result used and unused, shared and
//   global, int and float.
//
//   nvcc -arch=sm_90 -O3 -std=c++17 -o probe atomics.cu
//   ./probe CASES.txt
//
// A case line: INDEX KERNEL MASK(hex) UNIFORM_OFFSET then 32 per-lane byte offsets. Lanes
// whose bit is clear in MASK skip the atomic (mask 0: the kernel's baseline). Offsets are
// bytes from an 8-byte aligned shared base and from a 256-byte aligned global buffer.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct Pat {
  unsigned off[32];  // per-lane byte offset
  unsigned mask;     // active lanes
  unsigned uoff;     // the uniform byte offset
  unsigned sink;     // never set: keeps results "used" without storing them
};

static constexpr unsigned SMEM_BYTES = 16384;

#define LANE_K(NAME, BODY)                                                                            \
  extern "C" __global__ void NAME(unsigned char *__restrict__ g, unsigned *out, const Pat p) {       \
    extern __shared__ __align__(16) unsigned char sm[];                                              \
    const unsigned lane = threadIdx.x & 31;                                                          \
    if ((p.mask >> lane) & 1u) {                                                                     \
      const unsigned o = p.off[lane];                                                                \
      BODY                                                                                           \
    }                                                                                                \
  }

// shared, per-lane address
LANE_K(s_atom_u32, {
  unsigned r;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(r) : "r"((unsigned)__cvta_generic_to_shared(sm + o)),
               "r"(lane + 1u) : "memory");
  if (p.sink) out[threadIdx.x] = r;
})
LANE_K(s_red_u32, {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(sm + o)), "r"(lane + 1u)
               : "memory");
})
LANE_K(s_popc_inc, { atomicAdd((unsigned *)(sm + o), 1u); })
// global, per-lane address
LANE_K(g_red_u32, { atomicAdd((unsigned *)(g + o), 1u); })
LANE_K(g_atom_u32, {
  unsigned r;
  asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(r) : "l"(g + o), "r"(lane + 1u) : "memory");
  if (p.sink) out[threadIdx.x] = r;
})
LANE_K(g_red_u64, { atomicAdd((unsigned long long *)(g + o), 1ull); })
LANE_K(g_atom_u64, {
  unsigned long long r;
  asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(r) : "l"(g + o), "l"(lane + 1ull) : "memory");
  if (p.sink) out[threadIdx.x] = (unsigned)r;
})
LANE_K(g_red_f32, { atomicAdd((float *)(g + o), 1.0f); })
LANE_K(g_atom_f32, {
  float r = atomicAdd((float *)(g + o), 1.0f);
  if (p.sink) out[threadIdx.x] = __float_as_uint(r);
})
LANE_K(g_red_f64, { atomicAdd((double *)(g + o), 1.0); })

#define UNI_K(NAME, BODY)                                                                             \
  extern "C" __global__ void NAME(unsigned char *__restrict__ g, unsigned *out, const Pat p) {       \
    extern __shared__ __align__(16) unsigned char sm[];                                              \
    const unsigned lane = threadIdx.x & 31;                                                          \
    if ((p.mask >> lane) & 1u) {                                                                     \
      const unsigned u = p.uoff;                                                                     \
      BODY                                                                                           \
    }                                                                                                \
  }

// uniform address: the forms ptxas aggregates (or not)
UNI_K(su_one_unused, { atomicAdd((unsigned *)(sm + u), 1u); })
UNI_K(su_one_used, {
  unsigned r = atomicAdd((unsigned *)(sm + u), 1u);
  if (p.sink) out[threadIdx.x] = r;
})
UNI_K(su_v_unused, { atomicAdd((unsigned *)(sm + u), lane + 1u); })
UNI_K(su_v_used, {
  unsigned r = atomicAdd((unsigned *)(sm + u), lane + 1u);
  if (p.sink) out[threadIdx.x] = r;
})
UNI_K(gu_one_unused, { atomicAdd((unsigned *)(g + u), 1u); })
UNI_K(gu_one_used, {
  unsigned r = atomicAdd((unsigned *)(g + u), 1u);
  if (p.sink) out[threadIdx.x] = r;
})
UNI_K(gu_v_used, {
  unsigned r = atomicAdd((unsigned *)(g + u), lane + 1u);
  if (p.sink) out[threadIdx.x] = r;
})
UNI_K(gu_u64_unused, { atomicAdd((unsigned long long *)(g + u), 1ull); })
UNI_K(gu_f32_unused, { atomicAdd((float *)(g + u), 1.0f); })

#define CK(x)                                                                                        \
  do {                                                                                               \
    cudaError_t e_ = (x);                                                                            \
    if (e_ != cudaSuccess) {                                                                         \
      printf("FATAL %s: %s\n", #x, cudaGetErrorString(e_));                                         \
      fflush(stdout);                                                                                \
      exit(1);                                                                                       \
    }                                                                                                \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CASES.txt [KERNEL,...]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> only;
  if (argc > 2) {
    std::stringstream ss(argv[2]);
    std::string t;
    while (std::getline(ss, t, ',')) only.push_back(t);
  }
  struct {
    const char *n;
    void *f;
  } kernels[] = {{"s_atom_u32", (void *)s_atom_u32},       {"s_red_u32", (void *)s_red_u32},
                 {"s_popc_inc", (void *)s_popc_inc},       {"g_red_u32", (void *)g_red_u32},
                 {"g_atom_u32", (void *)g_atom_u32},       {"g_red_u64", (void *)g_red_u64},
                 {"g_atom_u64", (void *)g_atom_u64},       {"g_red_f32", (void *)g_red_f32},
                 {"g_atom_f32", (void *)g_atom_f32},       {"g_red_f64", (void *)g_red_f64},
                 {"su_one_unused", (void *)su_one_unused}, {"su_one_used", (void *)su_one_used},
                 {"su_v_unused", (void *)su_v_unused},     {"su_v_used", (void *)su_v_used},
                 {"gu_one_unused", (void *)gu_one_unused}, {"gu_one_used", (void *)gu_one_used},
                 {"gu_v_used", (void *)gu_v_used},         {"gu_u64_unused", (void *)gu_u64_unused},
                 {"gu_f32_unused", (void *)gu_f32_unused}};
  unsigned char *g;
  unsigned *out;
  CK(cudaMalloc(&g, 1 << 20));
  CK(cudaMemset(g, 0, 1 << 20));
  CK(cudaMalloc(&out, 1 << 12));
  std::ifstream in(argv[1]);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    int idx;
    std::string kernel;
    Pat p{};
    ss >> idx >> kernel >> std::hex >> p.mask >> std::dec >> p.uoff;
    for (int i = 0; i < 32; i++) ss >> p.off[i];
    if (ss.fail()) {
      printf("FATAL bad case line: %s\n", line.c_str());
      return 1;
    }
    bool wanted = only.empty();
    for (auto &o : only) wanted |= kernel == o;
    if (!wanted) continue;
    void *f = nullptr;
    for (auto &k : kernels)
      if (kernel == k.n) f = k.f;
    if (!f) {
      printf("CASE %d UNKNOWN_KERNEL %s\n", idx, kernel.c_str());
      continue;
    }
    void *args[] = {&g, &out, &p};
    CK(cudaLaunchKernel(f, dim3(1), dim3(32), args, SMEM_BYTES, 0));
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      printf("CASE %d ERROR %s\n", idx, cudaGetErrorString(e));
      fflush(stdout);
      return 1;
    }
    printf("CASE %d LAUNCHED %s\n", idx, kernel.c_str());
  }
  fflush(stdout);
  return 0;
}
