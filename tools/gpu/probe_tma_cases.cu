// TMA and bulk-copy counting probe for warpviz (tools/gpu/probe_tma.sh builds and
// runs it under Nsight Compute on the H200). Written for warpviz; not from any sample.
//
//   probe_tma_cases CASES.json [FIRST LAST]
// Encodes one tensor map per case on the host (cuTensorMapEncodeTiled, through
// cudaGetDriverEntryPointByVersion: no -lcuda), launches one kernel per case (one block of
// `warps` warps; the lanes named by `lanes` in the first `issuing_warps` warps each issue one
// TMA / bulk copy, lane k of warp w at coordinate dim1 + (w*32+k)*step1), and writes every
// case (inputs, map bytes as hex, launch order, whether the mbarrier completed) to CASES.json.
// Each case is one launch, in order: ncu's launch IDs follow the "order" field.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

enum Op { LOAD = 0, STORE = 1, RED_ADD = 2, PREFETCH = 3, BULK_G2S = 4, BULK_S2G = 5, BULK_RED = 6, NOP = 7 };

struct Args {
  int op, rank, c[5], step1, lanes_lo, issuing_warps, bytes, expect, src_off;
};

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void tma_load(const CUtensorMap* m, unsigned dst, unsigned bar, int r, const int* c) {
  unsigned long long g = (unsigned long long)m;
  switch (r) {
    case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                         :: "r"(dst), "l"(g), "r"(c[0]), "r"(bar) : "memory"); break;
    case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         :: "r"(dst), "l"(g), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory"); break;
    case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"(dst), "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory"); break;
    case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                         :: "r"(dst), "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory"); break;
    default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                          :: "r"(dst), "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar) : "memory"); break;
  }
}

__device__ __forceinline__ void tma_store(const CUtensorMap* m, unsigned src, int r, const int* c, bool red) {
  unsigned long long g = (unsigned long long)m;
  if (red) {
    switch (r) {
      case 1: asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%1}], [%2];" :: "l"(g), "r"(c[0]), "r"(src) : "memory"); break;
      case 2: asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];" :: "l"(g), "r"(c[0]), "r"(c[1]), "r"(src) : "memory"); break;
      default: asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2, %3}], [%4];" :: "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src) : "memory"); break;
    }
  } else {
    switch (r) {
      case 1: asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%1}], [%2];" :: "l"(g), "r"(c[0]), "r"(src) : "memory"); break;
      case 2: asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" :: "l"(g), "r"(c[0]), "r"(c[1]), "r"(src) : "memory"); break;
      default: asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];" :: "l"(g), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(src) : "memory"); break;
    }
  }
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

extern "C" __global__ void __launch_bounds__(128) tma_case(const __grid_constant__ CUtensorMap map, Args a,
                                                          unsigned lanes, char* gmem, int* done) {
  extern __shared__ unsigned char raw[];
  unsigned base = (sa(raw) + 1023u) & ~1023u;          // 1024-byte aligned tile (swizzle 128B)
  unsigned char* tile = raw + (base - sa(raw));
  unsigned long long* bar = (unsigned long long*)(tile + 65536);
  unsigned b = sa(bar);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  bool issue = warp < a.issuing_warps && ((lanes >> lane) & 1u);
  for (int i = threadIdx.x; i < 65536 / 4; i += blockDim.x) ((unsigned*)tile)[i] = 0x3f800000u;  // 1.0f
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  int c[5] = {a.c[0], a.c[1], a.c[2], a.c[3], a.c[4]};
  c[1] += (warp * 32 + lane) * a.step1;
  if (a.op == LOAD || a.op == BULK_G2S) {
    if (threadIdx.x == 0)
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(a.expect) : "memory");
    __syncthreads();
    if (issue) {
      if (a.op == LOAD) tma_load(&map, base, b, a.rank, c);
      else asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                        :: "r"(base), "l"(gmem + a.src_off), "r"(a.bytes), "r"(b) : "memory");
    }
    if (threadIdx.x == 0) {   // bounded wait: a wrong expect_tx count must not hang the probe
      unsigned ok = 0;
      for (int i = 0; i < 2000000 && !ok; ++i)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(ok) : "r"(b) : "memory");
      *done = ok ? 1 : -1;
    }
    __syncthreads();
  } else if (issue) {
    if (a.op == STORE || a.op == RED_ADD) tma_store(&map, base, a.rank, c, a.op == RED_ADD);
    else if (a.op == PREFETCH) {
      unsigned long long g = (unsigned long long)&map;
      asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];" :: "l"(g), "r"(c[0]), "r"(c[1]) : "memory");
    } else if (a.op == BULK_S2G) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(gmem + a.src_off), "r"(base), "r"(a.bytes) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    } else if (a.op == BULK_RED) {
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], %2;" :: "l"(gmem + a.src_off), "r"(base), "r"(a.bytes) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    if (threadIdx.x == 0) *done = 1;
  } else if (threadIdx.x == 0) *done = 1;
}

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct Case {
  std::string label; int op; int dtype; int esize; int rank; unsigned long long dims[5]; unsigned box[5]; unsigned es[5];
  int swizzle; int coords[5]; unsigned lanes; int issuing_warps; int step1; int warps; int bytes; int src_off;
};

static Case mk(const char* label, int op, int rank, std::vector<unsigned long long> dims, std::vector<unsigned> box,
               std::vector<int> coords, int swizzle = 0, int dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32) {
  Case c{}; c.label = label; c.op = op; c.dtype = dtype; c.esize = dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 ? 2 : 4;
  c.rank = rank; for (int i = 0; i < 5; ++i) { c.dims[i] = i < (int)dims.size() ? dims[i] : 1; c.box[i] = i < (int)box.size() ? box[i] : 1;
    c.es[i] = 1; c.coords[i] = i < (int)coords.size() ? coords[i] : 0; }
  c.swizzle = swizzle; c.lanes = 1u; c.issuing_warps = 1; c.step1 = 0; c.warps = 4; c.bytes = 0; c.src_off = 0;
  return c;
}

int main(int argc, char** argv) {
  const char* out = argc > 1 ? argv[1] : "tma_cases.json";
  int first = argc > 3 ? atoi(argv[2]) : 0, last = argc > 3 ? atoi(argv[3]) : 1 << 30;
  std::vector<Case> cs;
  typedef std::vector<unsigned long long> D; typedef std::vector<unsigned> B; typedef std::vector<int> X;
  D d2 = {1024, 1024};
  cs.push_back(mk("load 2d 32x64 swz128 at (0,0)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 3));
  cs.push_back(mk("load 2d 32x64 swz none at (0,0)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 0));
  cs.push_back(mk("load 2d 64x64 swz none (256 B rows)", LOAD, 2, d2, B{64, 64}, X{0, 0}, 0));
  cs.push_back(mk("load 2d 8x8 (32 B rows)", LOAD, 2, d2, B{8, 8}, X{0, 0}, 0));
  cs.push_back(mk("load 2d 4x8 (16 B rows)", LOAD, 2, d2, B{4, 8}, X{0, 0}, 0));
  cs.push_back(mk("load 2d 4x8 (16 B rows) at (4,0)", LOAD, 2, d2, B{4, 8}, X{4, 0}, 0));
  cs.push_back(mk("load 2d 32x64 at (16,0) (64 B off the line)", LOAD, 2, d2, B{32, 64}, X{16, 0}, 0));
  // (an inner coordinate whose byte offset is not a multiple of 16 faults: illegal instruction, run 1)
  cs.push_back(mk("load 2d 32x64 at (4,5) (16 B off, row 5)", LOAD, 2, d2, B{32, 64}, X{4, 5}, 0));
  cs.push_back(mk("load 2d 32x64 at (1000,0) (24 of 32 columns in)", LOAD, 2, d2, B{32, 64}, X{1000, 0}, 3));
  cs.push_back(mk("load 2d 32x64 at (1020,1000) (4 cols, 24 rows in)", LOAD, 2, d2, B{32, 64}, X{1020, 1000}, 3));
  cs.push_back(mk("load 2d 32x64 at (-16,-8) (16 cols, 56 rows in)", LOAD, 2, d2, B{32, 64}, X{-16, -8}, 3));
  cs.push_back(mk("load 2d 32x64 at (-4,0) (28 cols in)", LOAD, 2, d2, B{32, 64}, X{-4, 0}, 0));
  cs.push_back(mk("load 2d 32x64 at (0,2000) (all rows out)", LOAD, 2, d2, B{32, 64}, X{0, 2000}, 3));
  cs.push_back(mk("load 2d 32x64 at (-64,0) (all columns out, left)", LOAD, 2, d2, B{32, 64}, X{-64, 0}, 3));
  cs.push_back(mk("load 2d 32x64 at (0,1000) (24 rows in)", LOAD, 2, d2, B{32, 64}, X{0, 1000}, 3));
  cs.push_back(mk("load 2d 32x64 at (2000,0) (all out)", LOAD, 2, d2, B{32, 64}, X{2000, 0}, 3));
  cs.push_back(mk("load 2d 32x64 1000x1000 array at (992,960)", LOAD, 2, D{1000, 1000}, B{32, 64}, X{992, 960}, 3));
  { Case c = mk("load 2d 32x64 element strides (2,1)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 0); c.es[0] = 2; cs.push_back(c); }
  { Case c = mk("load 2d 32x64 element strides (1,2)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 0); c.es[1] = 2; cs.push_back(c); }
  { Case c = mk("load 2d 32x64 element strides (4,3)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 0); c.es[0] = 4; c.es[1] = 3; cs.push_back(c); }
  { Case c = mk("load 2d 32x64 element strides (1,3) (64/3 rows)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 0); c.es[1] = 3; cs.push_back(c); }
  { Case c = mk("load 2d 32x64 element strides (8,1)", LOAD, 2, d2, B{32, 64}, X{0, 0}, 0); c.es[0] = 8; cs.push_back(c); }
  cs.push_back(mk("load 2d fp16 64x64 swz128", LOAD, 2, d2, B{64, 64}, X{0, 0}, 3, CU_TENSOR_MAP_DATA_TYPE_FLOAT16));
  cs.push_back(mk("load 2d 16x64 swz64", LOAD, 2, d2, B{16, 64}, X{0, 0}, 2));
  cs.push_back(mk("load 2d 8x64 swz32", LOAD, 2, d2, B{8, 64}, X{0, 0}, 1));
  cs.push_back(mk("load 1d 256", LOAD, 1, D{1 << 20}, B{256}, X{0}, 0));
  cs.push_back(mk("load 1d 256 at 1048500 (76 in)", LOAD, 1, D{1 << 20}, B{256}, X{1048500}, 0));
  cs.push_back(mk("load 3d 32x8x4", LOAD, 3, D{64, 64, 64}, B{32, 8, 4}, X{0, 0, 0}, 3));
  cs.push_back(mk("load 4d 32x4x2x2", LOAD, 4, D{64, 16, 16, 16}, B{32, 4, 2, 2}, X{0, 0, 0, 0}, 3));
  cs.push_back(mk("load 5d 32x2x2x2x2", LOAD, 5, D{32, 8, 8, 8, 8}, B{32, 2, 2, 2, 2}, X{0, 0, 0, 0, 0}, 3));
  { Case c = mk("load 2d 32x8, 32 lanes of warp 0 issue (rows +8 each)", LOAD, 2, d2, B{32, 8}, X{0, 0}, 3); c.lanes = 0xffffffffu; c.step1 = 8; cs.push_back(c); }
  { Case c = mk("load 2d 32x8, lanes 0 and 5 of warp 0 issue", LOAD, 2, d2, B{32, 8}, X{0, 0}, 3); c.lanes = 0x21u; c.step1 = 8; cs.push_back(c); }
  { Case c = mk("load 2d 32x8, lane 0 of each of 4 warps", LOAD, 2, d2, B{32, 8}, X{0, 0}, 3); c.issuing_warps = 4; c.step1 = 8; cs.push_back(c); }
  { Case c = mk("load 2d 32x8, no lane issues (predicate false)", LOAD, 2, d2, B{32, 8}, X{0, 0}, 3); c.lanes = 0; cs.push_back(c); }
  { Case c = mk("load 2d 32x8, one warp of 1", LOAD, 2, d2, B{32, 8}, X{0, 0}, 3); c.warps = 1; cs.push_back(c); }
  cs.push_back(mk("store 2d 32x64 swz128 at (0,0)", STORE, 2, d2, B{32, 64}, X{0, 0}, 3));
  cs.push_back(mk("store 2d 32x64 at (1000,0) (24 cols in)", STORE, 2, d2, B{32, 64}, X{1000, 0}, 3));
  cs.push_back(mk("store 2d 4x8 (16 B rows)", STORE, 2, d2, B{4, 8}, X{0, 0}, 0));
  cs.push_back(mk("store 2d 32x64 at (4,5)", STORE, 2, d2, B{32, 64}, X{4, 5}, 0));
  cs.push_back(mk("store 2d 32x64 at (2000,0) (all out)", STORE, 2, d2, B{32, 64}, X{2000, 0}, 3));
  cs.push_back(mk("store 2d 32x64 at (0,1000) (24 rows in)", STORE, 2, d2, B{32, 64}, X{0, 1000}, 3));
  cs.push_back(mk("store 3d 32x8x4", STORE, 3, D{64, 64, 64}, B{32, 8, 4}, X{0, 0, 0}, 3));
  { Case c = mk("store 2d 32x8, 32 lanes issue", STORE, 2, d2, B{32, 8}, X{0, 0}, 3); c.lanes = 0xffffffffu; c.step1 = 8; cs.push_back(c); }
  cs.push_back(mk("reduce add 2d 32x64 swz128", RED_ADD, 2, d2, B{32, 64}, X{0, 0}, 3));
  cs.push_back(mk("reduce add 2d 32x64 at (1000,0)", RED_ADD, 2, d2, B{32, 64}, X{1000, 0}, 3));
  cs.push_back(mk("prefetch 2d 32x64", PREFETCH, 2, d2, B{32, 64}, X{0, 0}, 3));
  { Case c = mk("bulk g2s 4096 B", BULK_G2S, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 4096; cs.push_back(c); }
  { Case c = mk("bulk g2s 16 B", BULK_G2S, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 16; cs.push_back(c); }
  { Case c = mk("bulk g2s 4096 B at +16", BULK_G2S, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 4096; c.src_off = 16; cs.push_back(c); }
  { Case c = mk("bulk g2s 48 B at +80", BULK_G2S, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 48; c.src_off = 80; cs.push_back(c); }
  { Case c = mk("bulk s2g 4096 B", BULK_S2G, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 4096; cs.push_back(c); }
  { Case c = mk("bulk s2g 48 B at +80", BULK_S2G, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 48; c.src_off = 80; cs.push_back(c); }
  { Case c = mk("bulk reduce add.u32 4096 B", BULK_RED, 2, d2, B{32, 64}, X{0, 0}, 0); c.bytes = 4096; cs.push_back(c); }
  { Case c = mk("nothing (baseline)", NOP, 2, d2, B{32, 64}, X{0, 0}, 0); cs.push_back(c); }

  CK(cudaSetDevice(0));
  EncodeTiled encode = nullptr;
  cudaDriverEntryPointQueryResult q;
  CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&encode, 12000, cudaEnableDefault, &q));
  if (!encode) { fprintf(stderr, "no cuTensorMapEncodeTiled\n"); return 1; }
  size_t gbytes = 64u << 20;
  char* g; int* done; CK(cudaMalloc(&g, gbytes)); CK(cudaMalloc(&done, 4));
  CK(cudaMemset(g, 0, gbytes));
  CK(cudaFuncSetAttribute(tma_case, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536 + 2048));
  FILE* f = fopen(out, "w");
  fprintf(f, "{\"buffer\": %llu, \"cases\": [\n", (unsigned long long)g);
  int order = 0;
  for (size_t i = 0; i < cs.size(); ++i) {
    if ((int)i < first || (int)i > last) continue;
    Case& c = cs[i];
    CUtensorMap m; memset(&m, 0, sizeof m);
    cuuint64_t strides[4]; unsigned long long s = c.esize;
    for (int k = 0; k < c.rank - 1; ++k) { s *= c.dims[k]; strides[k] = s; }
    CUresult r = encode(&m, (CUtensorMapDataType)c.dtype, c.rank, g, (const cuuint64_t*)c.dims, strides, c.box, c.es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, (CUtensorMapSwizzle)c.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    long long boxbytes = c.esize;
    for (int k = 0; k < c.rank; ++k) boxbytes *= (c.box[k] + c.es[k] - 1) / c.es[k];
    int issuers = __builtin_popcount(c.lanes) * c.issuing_warps;
    Args a{}; a.op = c.op; a.rank = c.rank; for (int k = 0; k < 5; ++k) a.c[k] = c.coords[k];
    a.step1 = c.step1; a.issuing_warps = c.issuing_warps; a.bytes = c.bytes; a.src_off = c.src_off;
    long long floorbytes = c.esize;   // the driver's box bytes (the map's word 16): floor(box / stride)
    for (int k = 0; k < c.rank; ++k) floorbytes *= c.box[k] / c.es[k];
    // the transaction count: try the driver's floor product where the strides do not divide the box
    a.expect = (int)((c.op == BULK_G2S ? c.bytes : floorbytes) * issuers);
    int hdone = 0;
    CK(cudaMemset(done, 0, 4));
    if (r == CUDA_SUCCESS || c.op >= BULK_G2S) {
      tma_case<<<1, 32 * c.warps, 65536 + 2048>>>(m, a, c.lanes, g, done);
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) { fprintf(stderr, "case %zu %s: %s\n", i, c.label.c_str(), cudaGetErrorString(e)); return 1; }
      CK(cudaMemcpy(&hdone, done, 4, cudaMemcpyDeviceToHost));
    }
    unsigned char* mb = (unsigned char*)&m;
    fprintf(f, "%s{\"index\": %zu, \"order\": %d, \"label\": \"%s\", \"op\": %d, \"dtype\": %d, \"esize\": %d, \"rank\": %d, "
               "\"dims\": [%llu,%llu,%llu,%llu,%llu], \"box\": [%u,%u,%u,%u,%u], \"estrides\": [%u,%u,%u,%u,%u], "
               "\"swizzle\": %d, \"coords\": [%d,%d,%d,%d,%d], \"lanes\": %u, \"issuing_warps\": %d, \"step1\": %d, "
               "\"warps\": %d, \"bytes\": %d, \"src_off\": %d, \"box_bytes\": %lld, \"expect_tx\": %d, \"encode\": %d, "
               "\"done\": %d, \"launched\": %d, \"map\": \"",
            order ? ",\n" : "", i, (r == CUDA_SUCCESS || c.op >= BULK_G2S) ? order : -1, c.label.c_str(), c.op, c.dtype,
            c.esize, c.rank, c.dims[0], c.dims[1], c.dims[2], c.dims[3], c.dims[4], c.box[0], c.box[1], c.box[2], c.box[3],
            c.box[4], c.es[0], c.es[1], c.es[2], c.es[3], c.es[4], c.swizzle, c.coords[0], c.coords[1], c.coords[2],
            c.coords[3], c.coords[4], c.lanes, c.issuing_warps, c.step1, c.warps, c.bytes, c.src_off, boxbytes, a.expect,
            (int)r, hdone, (r == CUDA_SUCCESS || c.op >= BULK_G2S) ? 1 : 0);
    for (int k = 0; k < 128; ++k) fprintf(f, "%02x", mb[k]);
    fprintf(f, "\"}");
    if (r == CUDA_SUCCESS || c.op >= BULK_G2S) ++order;
    fprintf(stderr, "case %zu %-55s encode %d done %d\n", i, c.label.c_str(), (int)r, hdone);
  }
  fprintf(f, "\n]}\n");
  fclose(f);
  return 0;
}
