// wgmma reads of shared memory on Hopper, for Nsight Compute (tools/gpu/probe_wgmma.sh runs
// it; viz/kinds/wgmma.py holds the model these counters are checked against).
//
// One warpgroup (128 threads, one block) issues `loops` times
//   wgmma.fence; wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16; commit_group; wait_group 0
// with A and B read through 64-bit matrix descriptors built ON THE DEVICE from the launch's
// parameters (start offset, leading byte offset, stride byte offset, swizzle mode, base
// offset; PTX ISA "Matrix Descriptor Format"), so one kernel per (N, imm-trans-a, imm-trans-b,
// A from shared or registers) serves many launches. Every launch is one row of the config
// table that the program writes (CSV, launch order = Nsight Compute's ID order).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -o probe_wgmma probe_wgmma.cu
//   ./probe_wgmma PART TABLE.csv        # PART: 1, 2 or all; writes the config table
//
// Offsets are bytes from the first 1024-byte aligned address of the dynamic shared memory
// (A's region starts at 0, B's at B_REGION). Data values do not matter (the counters do):
// shared memory is never written, so no shared store or load instruction runs besides the
// wgmma's own reads.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static constexpr unsigned SMEM_BYTES = 227u * 1024u;  // the H100/H200 opt-in maximum
static constexpr unsigned A_REGION = 0, B_REGION = 96u * 1024u;

struct Cfg {
  uint32_t a_off, a_lbo, a_sbo, a_swz, a_base;
  uint32_t b_off, b_lbo, b_sbo, b_swz, b_base;
  uint32_t loops;
};

__device__ __forceinline__ uint64_t make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo, uint32_t swz,
                                              uint32_t base) {
  uint64_t d = 0;
  d |= (uint64_t)((saddr & 0x3FFFFu) >> 4);
  d |= (uint64_t)((lbo & 0x3FFFFu) >> 4) << 16;
  d |= (uint64_t)((sbo & 0x3FFFFu) >> 4) << 32;
  d |= (uint64_t)(base & 7u) << 49;
  d |= (uint64_t)(swz & 3u) << 62;
  return d;
}

template <int N, int TA, int TB, int AREG> struct Mma;
template <int DT> struct MmaDt;  // 1 tf32 (k8), 2 e4m3 (k32), 3 s8 (k32); m64n64, K-major

// The inline-PTX wrappers: one per (N, A from shared memory or from registers) and one per
// other data type. Each is wgmma.fence, one wgmma.mma_async.sync.aligned, commit_group and
// wait_group 0; the accumulator is N/2 registers per thread, imm-trans-a / imm-trans-b are
// template immediates ("n" constraints). The operand numbers after the accumulators are
// written out per shape, since the preprocessor cannot add.
#define WV_S(x) #x
#define WV_D4 "%0,%1,%2,%3"                                                // accumulator operands
#define WV_D8 WV_D4 ",%4,%5,%6,%7"
#define WV_D16 WV_D8 ",%8,%9,%10,%11,%12,%13,%14,%15"
#define WV_D32 WV_D16 ",%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define WV_D64 WV_D32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define WV_D128 WV_D64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define WV_O4(c, i) c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3])        // their constraints
#define WV_O8(c, i) WV_O4(c, i), WV_O4(c, i + 4)
#define WV_O16(c, i) WV_O8(c, i), WV_O8(c, i + 8)
#define WV_O32(c, i) WV_O16(c, i), WV_O16(c, i + 16)
#define WV_O64(c, i) WV_O32(c, i), WV_O32(c, i + 32)
#define WV_O128(c, i) WV_O64(c, i), WV_O64(c, i + 64)
#define WV_BODY(setp_p, op)                                                                        \
  "{\n"                                                                                            \
  ".reg .pred p;\n"                                                                                \
  "setp.ne.b32 p, %" WV_S(setp_p) ", 0;\n"                                                         \
  "wgmma.fence.sync.aligned;\n" op "\n"                                                            \
  "wgmma.commit_group.sync.aligned;\n"                                                             \
  "wgmma.wait_group.sync.aligned 0;\n"                                                             \
  "}\n"
// A and B from shared memory: operands D..., descA nd, descB nd+1, pred nd+2, TA nd+3, TB nd+4
#define WV_MMA_SS(N, DREGS, OUTS, ia, ib, ip, ita, itb)                                            \
  template <int TA, int TB> struct Mma<N, TA, TB, 0> {                                             \
    static __device__ __forceinline__ void run(float *d, uint64_t da, uint64_t db, const uint32_t *a) { \
      (void)da; (void)a;                                                                           \
      asm volatile(WV_BODY(ip, "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" DREGS    \
                                   "}, %" #ia ", %" #ib ", p, 1, 1, %" #ita ", %" #itb ";")        \
                   : OUTS("+f", 0)                                                                 \
                   : "l"(da), "l"(db), "r"(1), "n"(TA), "n"(TB)                                    \
                   : "memory");                                                                    \
    }                                                                                              \
  };
// A from registers: operands D..., a[0..3] nd..nd+3, descB nd+4, pred nd+5, TB nd+7 (imm-trans-b only)
#define WV_MMA_RS(N, DREGS, OUTS, a0, a1, a2, a3, ib, ip, itb)                                     \
  template <int TA, int TB> struct Mma<N, TA, TB, 1> {                                             \
    static __device__ __forceinline__ void run(float *d, uint64_t da, uint64_t db, const uint32_t *a) { \
      (void)da; (void)a;                                                                           \
      asm volatile(WV_BODY(ip, "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" DREGS    \
                                   "}, {%" #a0 ",%" #a1 ",%" #a2 ",%" #a3 "}, %" #ib ", p, 1, 1, %" #itb ";") \
                   : OUTS("+f", 0)                                                                 \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1), "n"(TA), "n"(TB) \
                   : "memory");                                                                    \
    }                                                                                              \
  };
WV_MMA_SS(8, WV_D4, WV_O4, 4, 5, 6, 7, 8)
WV_MMA_RS(8, WV_D4, WV_O4, 4, 5, 6, 7, 8, 9, 11)
WV_MMA_SS(16, WV_D8, WV_O8, 8, 9, 10, 11, 12)
WV_MMA_RS(16, WV_D8, WV_O8, 8, 9, 10, 11, 12, 13, 15)
WV_MMA_SS(32, WV_D16, WV_O16, 16, 17, 18, 19, 20)
WV_MMA_RS(32, WV_D16, WV_O16, 16, 17, 18, 19, 20, 21, 23)
WV_MMA_SS(64, WV_D32, WV_O32, 32, 33, 34, 35, 36)
WV_MMA_RS(64, WV_D32, WV_O32, 32, 33, 34, 35, 36, 37, 39)
WV_MMA_SS(128, WV_D64, WV_O64, 64, 65, 66, 67, 68)
WV_MMA_RS(128, WV_D64, WV_O64, 64, 65, 66, 67, 68, 69, 71)
WV_MMA_SS(256, WV_D128, WV_O128, 128, 129, 130, 131, 132)
WV_MMA_RS(256, WV_D128, WV_O128, 128, 129, 130, 131, 132, 133, 135)
// Other data types, m64n64, A and B from shared memory, K-major (these types have no transpose).
#define WV_MMA_DT(DT, ACC, C, SHAPE_TYPES, SCALE)                                                  \
  template <> struct MmaDt<DT> {                                                                   \
    using acc = ACC;                                                                               \
    static __device__ __forceinline__ void run(acc *d, uint64_t da, uint64_t db) {                 \
      asm volatile(WV_BODY(34, "wgmma.mma_async.sync.aligned." SHAPE_TYPES " {" WV_D32 "}, %32, %33, p" SCALE ";") \
                   : WV_O32(C, 0)                                                                  \
                   : "l"(da), "l"(db), "r"(1)                                                      \
                   : "memory");                                                                    \
    }                                                                                              \
  };
WV_MMA_DT(1, float, "+f", "m64n64k8.f32.tf32.tf32", ", 1, 1")
WV_MMA_DT(2, float, "+f", "m64n64k32.f32.e4m3.e4m3", ", 1, 1")
WV_MMA_DT(3, uint32_t, "+r", "m64n64k32.s32.s8.s8", "")

template <int N, int TA, int TB, int AREG>
__global__ void __launch_bounds__(128) wgmma_probe(Cfg c, float *out, unsigned long long *info) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  const uint32_t al = (base + 1023u) & ~1023u;
  const uint64_t da = make_desc(al + c.a_off, c.a_lbo, c.a_sbo, c.a_swz, c.a_base);
  const uint64_t db = make_desc(al + c.b_off, c.b_lbo, c.b_sbo, c.b_swz, c.b_base);
  if (threadIdx.x == 0) {
    info[0] = da;
    info[1] = db;
    info[2] = base;
    info[3] = al;
  }
  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  uint32_t a[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = 0x3c003c00u ^ (threadIdx.x << (4 * i));
  for (uint32_t it = 0; it < c.loops; ++it) Mma<N, TA, TB, AREG>::run(d, da, db, a);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += d[i];
  out[threadIdx.x] = s;
}

// Other element types, N = 64, A and B from shared memory, K-major: same 16-byte rows.
template <int DT>
__global__ void __launch_bounds__(128) wgmma_probe_dt(Cfg c, float *out, unsigned long long *info) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
  const uint32_t al = (base + 1023u) & ~1023u;
  const uint64_t da = make_desc(al + c.a_off, c.a_lbo, c.a_sbo, c.a_swz, c.a_base);
  const uint64_t db = make_desc(al + c.b_off, c.b_lbo, c.b_sbo, c.b_swz, c.b_base);
  if (threadIdx.x == 0) {
    info[0] = da;
    info[1] = db;
    info[2] = base;
    info[3] = al;
  }
  typename MmaDt<DT>::acc d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0;
  for (uint32_t it = 0; it < c.loops; ++it) MmaDt<DT>::run(d, da, db);
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) s += (float)d[i];
  out[threadIdx.x] = s;
}

struct Kern {
  int n, ta, tb, areg;
  const void *fn;
  int dt = 0;  // 0 f16, 1 tf32, 2 e4m3, 3 s8
};

#define K6(N)                                                                                                       \
  {N, 0, 0, 0, (const void *)wgmma_probe<N, 0, 0, 0>}, {N, 0, 1, 0, (const void *)wgmma_probe<N, 0, 1, 0>},         \
      {N, 1, 0, 0, (const void *)wgmma_probe<N, 1, 0, 0>}, {N, 1, 1, 0, (const void *)wgmma_probe<N, 1, 1, 0>},     \
      {N, 0, 0, 1, (const void *)wgmma_probe<N, 0, 0, 1>}, {N, 0, 1, 1, (const void *)wgmma_probe<N, 0, 1, 1>}

static const Kern KERNS[] = {K6(8), K6(64), K6(128), K6(256),
                             {64, 0, 0, 0, (const void *)wgmma_probe_dt<1>, 1},
                             {64, 0, 0, 0, (const void *)wgmma_probe_dt<2>, 2},
                             {64, 0, 0, 0, (const void *)wgmma_probe_dt<3>, 3}};
static const char *DTNAME[] = {"f16", "tf32", "e4m3", "s8"};
static const int NKERN = sizeof(KERNS) / sizeof(KERNS[0]);

static int find_kernel(int n, int ta, int tb, int areg, int dt = 0) {
  for (int i = 0; i < NKERN; ++i)
    if (KERNS[i].dt == dt && KERNS[i].n == n && KERNS[i].ta == (areg ? 0 : ta) && KERNS[i].tb == tb && KERNS[i].areg == areg) return i;
  fprintf(stderr, "no kernel N=%d ta=%d tb=%d areg=%d\n", n, ta, tb, areg);
  exit(2);
}

// The canonical leading / stride byte offsets of a 16-deep (k16, f16) operand tile, after
// CUTLASS's GMMA layout atoms (cute/atom/mma_traits_sm90_gmma.hpp):
//   K-major:  none ((8,m),(T,2)):((1T,SBO),(1,LBO)); 32/64/128B ((8,m),(T,2)):((wT,SBO),(1,T))
//   MN-major: none ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)); swizzled ((T,w,m),(8,k)):((1,T,LBO),(wT,SBO))
// (T = 8 halves = 16 bytes, w = swizzle width / 16). Swizzle codes: 0 none, 1 128B, 2 64B, 3 32B.
static unsigned swz_bytes(unsigned swz) { return swz == 1 ? 128 : swz == 2 ? 64 : swz == 3 ? 32 : 16; }
static void canonical(unsigned swz, int mn_major, uint32_t &lbo, uint32_t &sbo) {
  if (swz == 0) {
    lbo = 128;
    sbo = 256;
  } else if (!mn_major) {
    lbo = 16;
    sbo = 8 * swz_bytes(swz);
  } else {
    sbo = 8 * swz_bytes(swz);
    lbo = 2 * sbo;
  }
}

struct Launch {
  int k;
  Cfg c;
  const char *group;
  int part;
};

static unsigned extent(int mn, uint32_t off, uint32_t lbo, uint32_t sbo) {
  uint32_t m = lbo > sbo ? lbo : sbo;
  return off + (unsigned)(mn / 8 + 2) * (m + 128) + 2048;
}

static std::vector<Launch> sweep() {
  std::vector<Launch> v;
  auto add = [&](int part, const char *group, int n, int ta, int tb, int areg, Cfg c, int dt = 0) {
    int k = find_kernel(n, ta, tb, areg, dt);
    if (areg) c.a_off = c.a_lbo = c.a_sbo = c.a_swz = c.a_base = 0;
    c.a_off += A_REGION;
    c.b_off += B_REGION;
    if (!areg && extent(64, c.a_off, c.a_lbo, c.a_sbo) > B_REGION) return;
    if (extent(n, c.b_off, c.b_lbo, c.b_sbo) > SMEM_BYTES - 1024) return;
    v.push_back({k, c, group, part});
  };
  auto canon = [&](unsigned aswz, int ta, unsigned bswz, int tb, uint32_t loops) {
    Cfg c{};
    c.a_swz = aswz;
    c.b_swz = bswz;
    canonical(aswz, ta, c.a_lbo, c.a_sbo);
    canonical(bswz, tb, c.b_lbo, c.b_sbo);
    c.loops = loops;
    return c;
  };
  // 1. every kernel, every swizzle mode, the canonical layout (A and B in the same mode)
  for (int i = 0; i < NKERN; ++i)
    for (unsigned s = 0; s < 4; ++s) {
      const Kern &K = KERNS[i];
      add(1, K.dt ? "base-dtype" : "base", K.n, K.ta, K.tb, K.areg, canon(s, K.ta, s, K.tb, 1), K.dt);
    }
  // 2. the loop count separates a launch's constant part from the per-instruction one
  for (int i = 0; i < NKERN; ++i)
    if (KERNS[i].n == 64 && KERNS[i].dt == 0)
      for (unsigned s = 0; s < 2; ++s) {
        const Kern &K = KERNS[i];
        add(1, "loops3", K.n, K.ta, K.tb, K.areg, canon(s, K.ta, s, K.tb, 3));
      }
  const uint32_t L0[] = {0, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2064};
  const uint32_t S0[] = {0, 16, 32, 64, 96, 128, 192, 384, 512, 1024, 2064};
  // 3. B alone (A from registers, N = 64), no swizzle: LBO and SBO swept
  for (int tb = 0; tb < 2; ++tb) {
    for (uint32_t l : L0) {
      Cfg c = canon(0, 0, 0, tb, 1);
      c.b_lbo = l;
      add(1, "B-none-lbo", 64, 0, tb, 1, c);
    }
    for (uint32_t s : S0) {
      Cfg c = canon(0, 0, 0, tb, 1);
      c.b_sbo = s;
      add(1, "B-none-sbo", 64, 0, tb, 1, c);
    }
  }
  // 3b. two core matrices of B alone (N = 8, K-major, no swizzle), LBO apart
  const uint32_t L8[] = {0, 16, 64, 128, 256};
  for (uint32_t l : L8) {
    Cfg c = canon(0, 0, 0, 0, 1);
    c.b_lbo = l;
    add(1, "B8-none-lbo", 8, 0, 0, 1, c);
  }
  // 4. A (N = 8, B canonical without swizzle, measured alone in group 1), no swizzle
  for (int ta = 0; ta < 2; ++ta) {
    for (uint32_t l : L0) {
      Cfg c = canon(0, ta, 0, 0, 1);
      c.a_lbo = l;
      add(1, "A-none-lbo", 8, ta, 0, 0, c);
    }
    for (uint32_t s : S0) {
      Cfg c = canon(0, ta, 0, 0, 1);
      c.a_sbo = s;
      add(1, "A-none-sbo", 8, ta, 0, 0, c);
    }
  }
  // 5. B alone, swizzled: start offsets (aligned and not to the atom), SBO, LBO, base offset
  for (unsigned s = 1; s < 4; ++s)
    for (int tb = 0; tb < 2; ++tb) {
      const uint32_t offs[] = {16, 32, 64, 96, 128, 512};
      for (uint32_t o : offs) {
        Cfg c = canon(0, 0, s, tb, 1);
        c.b_off = o;
        add(2, "B-swz-off", 64, 0, tb, 1, c);
      }
      Cfg c0 = canon(0, 0, s, tb, 1);
      const uint32_t sbos[] = {2 * c0.b_sbo, c0.b_sbo + 16, 128, 0};
      for (uint32_t x : sbos) {
        Cfg c = c0;
        c.b_sbo = x;
        add(2, "B-swz-sbo", 64, 0, tb, 1, c);
      }
      const uint32_t lbos[] = {0, 128, 4096};
      for (uint32_t x : lbos) {
        Cfg c = c0;
        c.b_lbo = x;
        add(2, "B-swz-lbo", 64, 0, tb, 1, c);
      }
      const uint32_t bases[][2] = {{0, 1}, {0, 7}, {128, 1}};
      for (auto &ob : bases) {
        Cfg c = c0;
        c.b_off = ob[0];
        c.b_base = ob[1];
        add(2, "B-swz-base", 64, 0, tb, 1, c);
      }
    }
  // 6. A, swizzled (N = 8, B canonical without swizzle)
  for (unsigned s = 1; s < 4; ++s)
    for (int ta = 0; ta < 2; ++ta) {
      const uint32_t offs[] = {16, 32, 64, 96, 128};
      for (uint32_t o : offs) {
        Cfg c = canon(s, ta, 0, 0, 1);
        c.a_off = o;
        add(2, "A-swz-off", 8, ta, 0, 0, c);
      }
      Cfg c0 = canon(s, ta, 0, 0, 1);
      const uint32_t sbos[] = {2 * c0.a_sbo, c0.a_sbo + 16, 128};
      for (uint32_t x : sbos) {
        Cfg c = c0;
        c.a_sbo = x;
        add(2, "A-swz-sbo", 8, ta, 0, 0, c);
      }
      Cfg c = c0;
      c.a_off = 128;
      c.a_base = 1;
      add(2, "A-swz-base", 8, ta, 0, 0, c);
    }
  return v;
}

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

#ifndef PROBE_WGMMA_NO_MAIN   // tools/gpu/probe_wgmma_mix.cu includes the kernels only
int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PART(1|2|all|count) TABLE.csv\n", argv[0]);
    return 2;
  }
  const std::string part = argv[1];
  std::vector<Launch> all = sweep();
  if (part == "count") {
    int n1 = 0, n2 = 0;
    for (auto &l : all) (l.part == 1 ? n1 : n2)++;
    printf("part 1: %d launches, part 2: %d launches\n", n1, n2);
    return 0;
  }
  FILE *t = fopen(argv[2], "w");
  if (!t) {
    perror(argv[2]);
    return 2;
  }
  fprintf(t, "launch,part,group,kernel,dtype,n,trans_a,trans_b,a_regs,a_off,a_lbo,a_sbo,a_swz,a_base,b_off,b_lbo,b_sbo,"
             "b_swz,b_base,loops,desc_a,desc_b,smem_base,aligned_base\n");
  for (int i = 0; i < NKERN; ++i)
    CK(cudaFuncSetAttribute(KERNS[i].fn, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
  float *out;
  unsigned long long *info, hinfo[4];
  CK(cudaMalloc(&out, 128 * sizeof(float)));
  CK(cudaMalloc(&info, 4 * sizeof(unsigned long long)));
  int n = 0;
  for (const Launch &l : all) {
    if (part != "all" && std::to_string(l.part) != part) continue;
    const Kern &K = KERNS[l.k];
    Cfg c = l.c;
    void *args[] = {&c, &out, &info};
    CK(cudaLaunchKernel(K.fn, dim3(1), dim3(128), args, SMEM_BYTES, 0));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
    fprintf(t, "%d,%d,%s,wgmma_probe<%d;%d;%d;%d>,%s,%d,%d,%d,%d,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,%u,0x%016llx,0x%016llx,%llu,%llu\n",
            n, l.part, l.group, K.n, K.ta, K.tb, K.areg, DTNAME[K.dt], K.n, K.ta, K.tb, K.areg, c.a_off, c.a_lbo, c.a_sbo, c.a_swz,
            c.a_base, c.b_off, c.b_lbo, c.b_sbo, c.b_swz, c.b_base, c.loops, hinfo[0], hinfo[1], hinfo[2], hinfo[3]);
    fflush(t);
    ++n;
  }
  fclose(t);
  printf("probe_wgmma: part %s, %d launches done\n", part.c_str(), n);
  return 0;
}
#endif  // PROBE_WGMMA_NO_MAIN
