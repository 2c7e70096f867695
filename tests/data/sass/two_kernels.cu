// Two kernels whose PTX uses the same register names, both read four consecutive shared
// floats that ptxas fuses into one LDS.128 (tests/test_trace_reconcile.py): a group is
// found among its own function's instructions only.
__device__ __forceinline__ void quad(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[1024];
    const int t = threadIdx.x;
    for (int k = t; k < 1024; k += blockDim.x) s[k] = in[k];
    __syncthreads();
    const int i = 4 * (t & 255);
    out[t] = s[i] + s[i + 1] + s[i + 2] + s[i + 3];
}
extern "C" __global__ void quad_a(const float* __restrict__ in, float* __restrict__ out) { quad(in, out); }
extern "C" __global__ void quad_b(const float* __restrict__ in, float* __restrict__ out) { quad(in, out); }
