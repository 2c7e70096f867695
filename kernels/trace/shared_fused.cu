// Scalar shared accesses of consecutive floats that ptxas fuses into one wide access:
//
// * quad_read: each thread sums s[4t], s[4t+1], s[4t+2], s[4t+3]: four ld.shared.f32 in
//   the PTX, one LDS.128 on the GPU (4 wavefronts a warp: a conflict-free float4 read).
// * pair_write: each thread writes s[2t] and s[2t+1]: two st.shared.f32 in the PTX, one
//   STS.64 on the GPU (2 wavefronts a warp, not 2 x 2).
// * quad_read_volatile: the same sum through a volatile pointer, the control: ptxas keeps
//   the four scalar loads, and as the lanes read words 4 apart each is a 4-way bank
//   conflict (4 instructions and 16 wavefronts a warp, where the fused LDS.128 is 1 and 4).
extern "C" __global__ void quad_read(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[1024];
    const int t = threadIdx.x;
    for (int k = t; k < 1024; k += blockDim.x) s[k] = in[blockIdx.x * 1024 + k];
    __syncthreads();
    const int i = 4 * (t & 255);
    out[blockIdx.x * blockDim.x + t] = s[i] + s[i + 1] + s[i + 2] + s[i + 3];
}

extern "C" __global__ void pair_write(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[512];
    const int t = threadIdx.x;
    const float v = in[blockIdx.x * blockDim.x + t];
    s[2 * t] = v;
    s[2 * t + 1] = -v;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[(t * 7) & 511];
}

extern "C" __global__ void quad_read_volatile(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[1024];
    const int t = threadIdx.x;
    for (int k = t; k < 1024; k += blockDim.x) s[k] = in[blockIdx.x * 1024 + k];
    __syncthreads();
    const int i = 4 * (t & 255);
    volatile float* v = s;
    out[blockIdx.x * blockDim.x + t] = v[i] + v[i + 1] + v[i + 2] + v[i + 3];
}
