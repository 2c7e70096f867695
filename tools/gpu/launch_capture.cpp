// launch_capture: an LD_PRELOAD library that writes down one kernel launch of a program
// warpviz does not control (a CUTLASS example with its own main()), so that a launch file
// can reproduce it (tools/gpu/capture_to_launch.py writes the launch file).
//
// It interposes the CUDA runtime's cudaMalloc / cudaFree (the program's buffers), the
// driver's cuTensorMapEncodeTiled (every argument of every host-built tensor map, and the
// 128 bytes it made) and cudaLaunchKernelExC / cudaLaunchKernel (the launch). At the first
// launch of a kernel whose mangled name contains $WV_CAPTURE_MATCH it writes, into
// $WV_CAPTURE_DIR: launch.json (kernel name, grid, block, cluster, dynamic shared memory,
// each parameter's offset, size and bytes from cuFuncGetParamInfo, the live allocations,
// the tensor maps encoded so far) and alloc_K.bin (each live allocation's contents at that
// moment). The launch itself then goes ahead unchanged.
//
// Needs: the program linked against the shared CUDA runtime (nvcc -cudart shared), CUDA 12.4
// or newer (cuFuncGetParamInfo, cudaFuncGetName). The program may call cuTensorMapEncodeTiled
// directly or, as CUTLASS does by default, through cudaGetDriverEntryPointByVersion (also
// interposed: it hands out this library's cuTensorMapEncodeTiled).
//
// Build: g++ -shared -fPIC -O2 -I$CUDA/include launch_capture.cpp -o liblaunch_capture.so -ldl
// (it links neither the runtime nor the driver: it finds the program's own with dlsym)
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Map {
  int dtype, rank, interleave, swizzle, l2, oob;
  unsigned long long address;
  unsigned long long dims[5], strides[5];
  unsigned box[5], estr[5];
  unsigned char bytes[128];
};

std::mutex mu;
std::map<unsigned long long, size_t> allocs;  // live cudaMalloc allocations
std::vector<Map> maps;
bool done = false;

void* driver(const char* name) {
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  return lib ? dlsym(lib, name) : nullptr;
}

template <class F>
F real(const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (!p) p = driver(name);
  if (!p) {
    fprintf(stderr, "launch_capture: %s not found\n", name);
    abort();
  }
  return reinterpret_cast<F>(p);
}

std::string hex(const void* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    s += d[b[i] >> 4];
    s += d[b[i] & 15];
  }
  return s;
}

std::string esc(const char* s) {
  std::string o;
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') o += '\\';
    if (static_cast<unsigned char>(*s) >= 32) o += *s;
  }
  return o;
}

void capture(const void* func, dim3 grid, dim3 block, size_t shared, dim3 cluster, void** args) {
  const char* match = getenv("WV_CAPTURE_MATCH");
  const char* dir = getenv("WV_CAPTURE_DIR");
  if (done || !dir) return;
  static auto func_name = real<cudaError_t (*)(const char**, const void*)>("cudaFuncGetName");
  static auto func_by_symbol = real<cudaError_t (*)(cudaFunction_t*, const void*)>("cudaGetFuncBySymbol");
  static auto sync = real<cudaError_t (*)()>("cudaDeviceSynchronize");
  const char* name = nullptr;
  if (func_name(&name, func) != cudaSuccess || !name) return;
  if (match && !strstr(name, match)) return;
  done = true;
  cudaFunction_t f;
  if (func_by_symbol(&f, func) != cudaSuccess) {
    fprintf(stderr, "launch_capture: cudaGetFuncBySymbol failed\n");
    return;
  }
  std::string js = "{\n  \"kernel\": \"" + esc(name) + "\",\n";
  char tmp[512];
  snprintf(tmp, sizeof tmp, "  \"grid\": [%u, %u, %u],\n  \"block\": [%u, %u, %u],\n  \"cluster\": [%u, %u, %u],\n"
           "  \"shared_bytes\": %zu,\n  \"params\": [", grid.x, grid.y, grid.z, block.x, block.y, block.z,
           cluster.x, cluster.y, cluster.z, shared);
  js += tmp;
  for (size_t i = 0;; ++i) {
    size_t off = 0, size = 0;
    static auto info = reinterpret_cast<CUresult (*)(CUfunction, size_t, size_t*, size_t*)>(
        driver("cuFuncGetParamInfo"));
    if (!info || info(reinterpret_cast<CUfunction>(f), i, &off, &size) != CUDA_SUCCESS) break;
    snprintf(tmp, sizeof tmp, "%s\n    {\"offset\": %zu, \"size\": %zu, \"hex\": \"", i ? "," : "", off, size);
    js += tmp;
    js += hex(args[i], size) + "\"}";
  }
  js += "\n  ],\n  \"allocations\": [";
  int k = 0;
  sync();
  auto memcpy_ = real<cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind)>("cudaMemcpy");
  for (auto& a : allocs) {
    std::vector<unsigned char> host(a.second);
    memcpy_(host.data(), reinterpret_cast<void*>(a.first), a.second, cudaMemcpyDeviceToHost);
    snprintf(tmp, sizeof tmp, "%s/alloc_%d.bin", dir, k);
    FILE* fp = fopen(tmp, "wb");
    if (fp) {
      fwrite(host.data(), 1, host.size(), fp);
      fclose(fp);
    }
    snprintf(tmp, sizeof tmp, "%s\n    {\"address\": %llu, \"bytes\": %zu, \"file\": \"alloc_%d.bin\"}", k ? "," : "",
             a.first, a.second, k);
    js += tmp;
    ++k;
  }
  js += "\n  ],\n  \"tensormaps\": [";
  for (size_t i = 0; i < maps.size(); ++i) {
    const Map& m = maps[i];
    snprintf(tmp, sizeof tmp, "%s\n    {\"dtype\": %d, \"rank\": %d, \"address\": %llu, \"interleave\": %d, "
             "\"swizzle\": %d, \"l2_promotion\": %d, \"oob_fill\": %d, ", i ? "," : "", m.dtype, m.rank, m.address,
             m.interleave, m.swizzle, m.l2, m.oob);
    js += tmp;
    std::string d = "\"dims\": [", s = "\"strides\": [", b = "\"box\": [", e = "\"element_strides\": [";
    for (int r = 0; r < m.rank; ++r) {
      d += (r ? ", " : "") + std::to_string(m.dims[r]);
      if (r + 1 < m.rank) s += (r ? ", " : "") + std::to_string(m.strides[r]);
      b += (r ? ", " : "") + std::to_string(m.box[r]);
      e += (r ? ", " : "") + std::to_string(m.estr[r]);
    }
    js += d + "], " + s + "], " + b + "], " + e + "], \"hex\": \"" + hex(m.bytes, 128) + "\"}";
  }
  js += "\n  ]\n}\n";
  snprintf(tmp, sizeof tmp, "%s/launch.json", dir);
  FILE* fp = fopen(tmp, "w");
  if (fp) {
    fputs(js.c_str(), fp);
    fclose(fp);
  }
  fprintf(stderr, "launch_capture: wrote %s (%s)\n", tmp, name);
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** p, size_t n) {
  static auto f = real<cudaError_t (*)(void**, size_t)>("cudaMalloc");
  cudaError_t r = f(p, n);
  if (r == cudaSuccess) {
    std::lock_guard<std::mutex> g(mu);
    allocs[reinterpret_cast<unsigned long long>(*p)] = n;
  }
  return r;
}

cudaError_t cudaFree(void* p) {
  static auto f = real<cudaError_t (*)(void*)>("cudaFree");
  {
    std::lock_guard<std::mutex> g(mu);
    allocs.erase(reinterpret_cast<unsigned long long>(p));
  }
  return f(p);
}

CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType dtype, cuuint32_t rank, void* address,
                                const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                const cuuint32_t* estr, CUtensorMapInterleave inter, CUtensorMapSwizzle swz,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  static auto f = real<CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                    const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill)>(
      "cuTensorMapEncodeTiled");
  CUresult r = f(map, dtype, rank, address, dims, strides, box, estr, inter, swz, l2, oob);
  if (r == CUDA_SUCCESS && rank >= 1 && rank <= 5) {
    Map m{};
    m.dtype = dtype;
    m.rank = rank;
    m.address = reinterpret_cast<unsigned long long>(address);
    m.interleave = inter;
    m.swizzle = swz;
    m.l2 = l2;
    m.oob = oob;
    for (unsigned i = 0; i < rank; ++i) {
      m.dims[i] = dims[i];
      m.box[i] = box[i];
      m.estr[i] = estr[i];
      if (i + 1 < rank) m.strides[i] = strides[i];
    }
    memcpy(m.bytes, map, 128);
    std::lock_guard<std::mutex> g(mu);
    maps.push_back(m);
  }
  return r;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned version,
                                             unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  static auto f = real<cudaError_t (*)(const char*, void**, unsigned, unsigned long long,
                                       cudaDriverEntryPointQueryResult*)>("cudaGetDriverEntryPointByVersion");
  cudaError_t r = f(symbol, fn, version, flags, status);
  if (r == cudaSuccess && symbol && strcmp(symbol, "cuTensorMapEncodeTiled") == 0 && fn && *fn)
    *fn = reinterpret_cast<void*>(&cuTensorMapEncodeTiled);
  return r;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  static auto f = real<cudaError_t (*)(const cudaLaunchConfig_t*, const void*, void**)>("cudaLaunchKernelExC");
  dim3 cluster(1, 1, 1);
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == cudaLaunchAttributeClusterDimension)
      cluster = dim3(config->attrs[i].val.clusterDim.x, config->attrs[i].val.clusterDim.y,
                     config->attrs[i].val.clusterDim.z);
  capture(func, config->gridDim, config->blockDim, config->dynamicSmemBytes, cluster, args);
  return f(config, func, args);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                             cudaStream_t stream) {
  static auto f = real<cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t)>("cudaLaunchKernel");
  capture(func, grid, block, shared, dim3(1, 1, 1), args);
  return f(func, grid, block, args, shared, stream);
}

}  // extern "C"
