// Row softmax, the usual way to combine the warps: one block per row, 128 threads striding
// over a row of n floats (guarded tail); each warp reduces with shuffles and writes its
// partial to a shared array; then every warp reads the partials back with one guarded
// load per lane (`lane < nwarps ? partial[lane] : identity`) and reduces them with
// shuffles again. (softmax_row.cu reads them in a loop instead, which ptxas vectorises.)
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void softmax_warp(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float partial[32];
    const float* x = in + (size_t)blockIdx.x * n;
    float* y = out + (size_t)blockIdx.x * n;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;

    float m = -3.0e38f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, x[i]);
    m = warp_max(m);
    if (lane == 0) partial[warp] = m;
    __syncthreads();
    m = warp_max(lane < nwarps ? partial[lane] : -3.0e38f);
    __syncthreads();

    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += __expf(x[i] - m);
    s = warp_sum(s);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    s = warp_sum(lane < nwarps ? partial[lane] : 0.0f);
    float inv = 1.0f / s;

    for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = __expf(x[i] - m) * inv;
}
