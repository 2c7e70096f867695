// Generic pointers and atomics: a device function that does not know whether its pointer
// is shared or global (nvcc keeps it generic when it is not inlined), a shared histogram
// with atomicAdd, and a global atomicAdd per block.
__device__ __noinline__ float load_any(const float* p, int i) { return p[i]; }

extern "C" __global__ void generic_atomic(const float* __restrict__ in, int* __restrict__ hist, float* out) {
    __shared__ float buf[256];
    __shared__ int bins[16];
    int t = threadIdx.x;
    if (t < 16) bins[t] = 0;
    buf[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    float a = load_any(buf, (t * 2) % 256);             // generic -> shared
    float b = load_any(in, blockIdx.x * 256 + t);       // generic -> global
    atomicAdd(&bins[t % 16], 1);
    __syncthreads();
    if (t < 16) atomicAdd(&hist[t], bins[t]);
    out[blockIdx.x * 256 + t] = a + b;
}
