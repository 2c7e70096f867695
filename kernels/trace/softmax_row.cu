// Row softmax: one block per row, 128 threads striding over a row of n floats (n is not a
// multiple of the block: the last pass is a guarded tail). Each warp reduces the row's
// max and then its sum with shuffles, writes its partial to a shared array, and every
// thread reads the partials back.
extern "C" __global__ void softmax_row(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float partial[32];
    const float* x = in + (size_t)blockIdx.x * n;
    float* y = out + (size_t)blockIdx.x * n;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;

    float m = -3.0e38f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, x[i]);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) partial[warp] = m;
    __syncthreads();
    m = partial[0];
    for (int w = 1; w < nwarps; ++w) m = fmaxf(m, partial[w]);
    __syncthreads();

    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += __expf(x[i] - m);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < nwarps; ++w) s += partial[w];
    float inv = 1.0f / s;

    for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = __expf(x[i] - m) * inv;
}
