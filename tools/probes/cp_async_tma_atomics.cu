// Probe kernels for cp.async (LDGSTS), TMA 2-D tile copies (UTMALDG) and shared atomics
// (ATOMS) on the H100. Host program: reads a cases file written by cp_async_tma_atomics.py, launches
// one kernel per case (one warp, one instruction of the kind under test per lane), and
// prints one status line per case; in "place" mode it also copies each TMA tile back and
// prints where every element landed. Run it under Nsight Compute in "count" mode.
//
//   nvcc -arch=sm_90a -O3 -std=c++17 -o probe cp_async_tma_atomics.cu
//   ./probe CASES.txt place|count [PREFIX,...]
//
// The per-lane offsets travel as a by-value kernel parameter (constant bank, LDC), so the
// only memory instructions a case runs are the ones it probes (plus the mbarrier work and
// the optional read of a TMA case; a mask of 0 gives each kernel's baseline).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

struct Pat {
  unsigned s[32];  // shared byte offset per lane (from a 1024-byte aligned base)
  unsigned g[32];  // global byte offset per lane
  unsigned mask;   // active lanes
  unsigned sink;   // never set: keeps results "used" without storing them
};

static constexpr unsigned SMEM_BYTES = 40960 + 1024 + 64;

__device__ __forceinline__ unsigned smem_base(unsigned char *raw) {
  unsigned a = (unsigned)__cvta_generic_to_shared(raw);
  return (a + 1023u) & ~1023u;
}

#define CPASYNC(NAME, QUAL, N)                                                                     \
  extern "C" __global__ void NAME(const char *__restrict__ g, unsigned *out, const Pat p) {        \
    extern __shared__ unsigned char sm_raw[];                                                     \
    unsigned base = smem_base(sm_raw);                                                            \
    unsigned lane = threadIdx.x & 31;                                                             \
    if ((p.mask >> lane) & 1u) {                                                                  \
      asm volatile("cp.async." QUAL ".shared.global [%0], [%1], " #N ";\n" ::"r"(base + p.s[lane]), \
                   "l"(g + p.g[lane])                                                             \
                   : "memory");                                                                   \
    }                                                                                             \
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");                \
    __syncwarp();                                                                                 \
    if (p.sink) out[threadIdx.x] = base;                                                          \
  }

CPASYNC(cp_ca4, "ca", 4)
CPASYNC(cp_ca8, "ca", 8)
CPASYNC(cp_ca16, "ca", 16)
CPASYNC(cp_cg16, "cg", 16)

#define ATOMK(NAME, BODY)                                                   \
  extern "C" __global__ void NAME(const char *__restrict__ g, unsigned *out, const Pat p) { \
    extern __shared__ unsigned char sm_raw[];                              \
    unsigned base = smem_base(sm_raw);                                     \
    unsigned lane = threadIdx.x & 31;                                      \
    if ((p.mask >> lane) & 1u) {                                           \
      unsigned a = base + p.s[lane];                                       \
      BODY                                                                 \
    }                                                                      \
  }

ATOMK(atom_u32, {
  unsigned r;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;\n" : "=r"(r) : "r"(a), "r"(lane + 1u) : "memory");
  if (p.sink) out[threadIdx.x] = r;
})
ATOMK(red_u32, { asm volatile("red.shared.add.u32 [%0], %1;\n" ::"r"(a), "r"(lane + 1u) : "memory"); })
ATOMK(atom_f32, {
  float r;
  asm volatile("atom.shared.add.f32 %0, [%1], %2;\n" : "=f"(r) : "r"(a), "f"(1.0f) : "memory");
  if (p.sink) out[threadIdx.x] = __float_as_uint(r);
})
ATOMK(red_f32, { asm volatile("red.shared.add.f32 [%0], %1;\n" ::"r"(a), "f"(1.0f) : "memory"); })
// What a histogram written in CUDA C++ compiles to: atomicAdd(&hist[bin], 1), result unused.
extern "C" __global__ void atomicadd_cpp(const char *__restrict__ g, unsigned *out, const Pat p) {
  extern __shared__ unsigned char sm_raw[];
  unsigned *hist = (unsigned *)(sm_raw + (smem_base(sm_raw) - (unsigned)__cvta_generic_to_shared(sm_raw)));
  unsigned lane = threadIdx.x & 31;
  if ((p.mask >> lane) & 1u) atomicAdd(&hist[p.s[lane] / 4], 1u);
}

// mode bits: 1 copy the box with TMA, 2 read the tile back to out, 4 LDS.128 of the active
// lanes at base + s[lane] after the copy, 8 fill the tile with 0xFFFFFFFF first.
extern "C" __global__ void tma2d(const __grid_constant__ CUtensorMap tm, unsigned *out, const Pat p, int x0,
                                 int y0, unsigned box_bytes, unsigned read_bytes, int mode) {
  extern __shared__ unsigned char sm_raw[];
  unsigned base = smem_base(sm_raw);
  unsigned *tile = (unsigned *)(sm_raw + (base - (unsigned)__cvta_generic_to_shared(sm_raw)));
  unsigned mbar = base + 40960;
  unsigned lane = threadIdx.x & 31;
  if (mode & 8) {
    for (unsigned i = threadIdx.x; i < read_bytes / 4; i += blockDim.x) tile[i] = 0xFFFFFFFFu;
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(mbar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (mode & 1) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mbar), "r"(box_bytes) : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
              base),
          "l"((unsigned long long)&tm), "r"(x0), "r"(y0), "r"(mbar)
          : "memory");
    } else {
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mbar) : "memory");
    }
  }
  asm volatile(
      "{\n.reg .pred P1;\nLAB_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n"
      "@P1 bra.uni DONE;\nbra.uni LAB_WAIT;\nDONE:\n}\n" ::"r"(mbar)
      : "memory");
  __syncthreads();
  if (mode & 2)
    for (unsigned i = threadIdx.x; i < read_bytes / 4; i += blockDim.x) out[i] = tile[i];
  if ((mode & 4) && ((p.mask >> lane) & 1u)) {
    unsigned a = base + p.s[lane], x, y, z, w;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a) : "memory");
    if (p.sink) out[threadIdx.x] = x + y + z + w;
  }
}

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct Case {
  int idx;
  std::string kernel;
  unsigned mask;
  int esize, swz, bw, bh, x0, y0, mode;
  Pat p;
};

// The global tensors of the TMA cases: W x H elements, element (row, col) = row * W + col.
static const int TW = 256, TH = 128;

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      printf("FATAL %s: %s\n", #x, cudaGetErrorString(e_));                                       \
      fflush(stdout);                                                                              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s CASES.txt place|count [PREFIX,...]\n", argv[0]);
    return 2;
  }
  bool place = std::string(argv[2]) == "place";
  std::vector<std::string> prefixes;
  if (argc > 3) {
    std::stringstream ss(argv[3]);
    std::string t;
    while (std::getline(ss, t, ',')) prefixes.push_back(t);
  }
  std::vector<Case> cases;
  std::ifstream in(argv[1]);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    Case c{};
    ss >> c.idx >> c.kernel >> std::hex >> c.mask >> std::dec >> c.esize >> c.swz >> c.bw >> c.bh >> c.x0 >> c.y0 >>
        c.mode;
    for (int i = 0; i < 32; i++) ss >> c.p.s[i];
    for (int i = 0; i < 32; i++) ss >> c.p.g[i];
    if (ss.fail()) {
      printf("FATAL bad case line: %s\n", line.c_str());
      return 2;
    }
    c.p.mask = c.mask;
    c.p.sink = 0;
    bool keep = prefixes.empty();
    for (auto &pre : prefixes)
      if (c.kernel.rfind(pre, 0) == 0) keep = true;
    if (keep) cases.push_back(c);
  }

  EncodeTiled encode = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000, cudaEnableDefault, &q));
  if (!encode) {
    printf("FATAL no cuTensorMapEncodeTiled\n");
    return 1;
  }

  char *g;
  unsigned *out;
  CK(cudaMalloc(&g, 1 << 20));
  CK(cudaMemset(g, 0, 1 << 20));
  CK(cudaMalloc(&out, 1 << 16));
  void *t16, *t32;
  CK(cudaMalloc(&t16, TW * TH * 2));
  CK(cudaMalloc(&t32, TW * TH * 4));
  {
    std::vector<unsigned short> h16(TW * TH);
    std::vector<unsigned> h32(TW * TH);
    for (int i = 0; i < TW * TH; i++) h16[i] = (unsigned short)i, h32[i] = (unsigned)i;
    CK(cudaMemcpy(t16, h16.data(), h16.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(t32, h32.data(), h32.size() * 4, cudaMemcpyHostToDevice));
  }
  struct {
    const char *n;
    void *f;
  } kernels[] = {{"cp_ca4", (void *)cp_ca4},       {"cp_ca8", (void *)cp_ca8},     {"cp_ca16", (void *)cp_ca16},
                 {"cp_cg16", (void *)cp_cg16},     {"atom_u32", (void *)atom_u32}, {"red_u32", (void *)red_u32},
                 {"atom_f32", (void *)atom_f32},   {"red_f32", (void *)red_f32},   {"atomicadd_cpp", (void *)atomicadd_cpp},
                 {"tma2d", (void *)tma2d}};
  for (auto &k : kernels) CK(cudaFuncSetAttribute(k.f, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));

  for (auto &c : cases) {
    if (c.kernel == "tma2d" || c.kernel == "tma_encode") {
      CUtensorMap tm;
      memset(&tm, 0, sizeof tm);
      cuuint64_t dims[2] = {(cuuint64_t)TW, (cuuint64_t)TH};
      cuuint64_t strides[1] = {(cuuint64_t)TW * c.esize};
      cuuint32_t box[2] = {(cuuint32_t)c.bw, (cuuint32_t)c.bh};
      cuuint32_t estr[2] = {1, 1};
      CUtensorMapSwizzle sw[4] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                                  CU_TENSOR_MAP_SWIZZLE_128B};
      CUresult r = encode(&tm, c.esize == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32, 2,
                          c.esize == 2 ? t16 : t32, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw[c.swz],
                          CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
      if (r != CUDA_SUCCESS) {
        printf("CASE %d ENCODE_FAIL %d\n", c.idx, (int)r);
        continue;
      }
      if (c.kernel == "tma_encode") {
        printf("CASE %d ENCODE_OK\n", c.idx);
        continue;
      }
      unsigned box_bytes = (unsigned)(c.bw * c.bh * c.esize);
      unsigned read_bytes = box_bytes * 2 < 2048 ? 2048 : box_bytes * 2;
      if (read_bytes > 40960) read_bytes = 40960;
      int mode = c.mode;
      if (place) mode |= 2 | 8;
      tma2d<<<1, 32, SMEM_BYTES>>>(tm, out, c.p, c.x0, c.y0, box_bytes, read_bytes, mode);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        printf("CASE %d ERROR %s\n", c.idx, cudaGetErrorString(e));
        fflush(stdout);
        return 1;
      }
      printf("CASE %d LAUNCHED tma2d\n", c.idx);
      if (place) {
        std::vector<unsigned> h(read_bytes / 4);
        CK(cudaMemcpy(h.data(), out, read_bytes, cudaMemcpyDeviceToHost));
        printf("PLACE %d %u", c.idx, read_bytes);
        for (unsigned w : h) printf(" %x", w);
        printf("\n");
      }
      continue;
    }
    void *f = nullptr;
    for (auto &k : kernels)
      if (c.kernel == k.n) f = k.f;
    if (!f) {
      printf("CASE %d UNKNOWN_KERNEL %s\n", c.idx, c.kernel.c_str());
      continue;
    }
    void *args[] = {&g, &out, &c.p};
    CK(cudaLaunchKernel(f, dim3(1), dim3(32), args, SMEM_BYTES, 0));
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      printf("CASE %d ERROR %s\n", c.idx, cudaGetErrorString(e));
      fflush(stdout);
      return 1;
    }
    printf("CASE %d LAUNCHED %s\n", c.idx, c.kernel.c_str());
  }
  fflush(stdout);
  return 0;
}
