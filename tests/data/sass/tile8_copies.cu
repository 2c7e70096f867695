// A tiled SGEMM with 8x8 tiles (tests/test_trace_reconcile.py): nvcc peels one tile step
// and unrolls the rest by two, so the PTX holds three copies of the k loop that read
// As[ty][k] through the same register at the same offsets. ptxas fuses each copy's four
// consecutive As reads into one LDS.128; a fusion group is found within its own copy
// (the stretch between labels and barriers), not among all three.
#define T 8
extern "C" __global__ void sgemm_tile8(float* __restrict__ c, const float* __restrict__ a,
                                       const float* __restrict__ b, int wa, int wb) {
    __shared__ float as[T][T];
    __shared__ float bs[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int first = wa * T * blockIdx.y, last = first + wa - 1;
    float acc = 0.0f;
    for (int i = first, j = T * blockIdx.x; i <= last; i += T, j += T * wb) {
        as[ty][tx] = a[i + wa * ty + tx];
        bs[ty][tx] = b[j + wb * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    c[wb * T * blockIdx.y + T * blockIdx.x + wb * ty + tx] = acc;
}
