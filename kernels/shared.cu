// Shared-memory access patterns (shared-stride-*, shared-broadcast, char-*, short-shared).
// Every access is volatile so each source line is exactly one LDS/STS, as in the scenario.
#include "common.cuh"

// cache[tid*S] stored then read back: S = 1 conflict-free, 2: 2 wavefronts, 32: 32,
// 33: 1 again (33 is odd, so lanes land on distinct banks).
extern "C" __global__ void shared_stride(int S, float* __restrict__ sink) {
    extern __shared__ float cache[];
    volatile float* c = cache;
    const int tid = threadIdx.x;
    c[tid * S] = (float)tid;
    const float v = c[tid * S];
    if (v < -1.0f) *sink = v;   // never true: keeps the load without a store
}

// cache[0] read by every lane: one word, a broadcast, 1 wavefront.
extern "C" __global__ void shared_broadcast(float* __restrict__ sink) {
    __shared__ float cache[32];
    volatile float* c = cache;
    WARP_IF(threadIdx.x == 0) c[0] = 1.0f;
    const float v = c[0];
    if (v < -1.0f) *sink = v;
}

// Bytes: four lanes share a word (char-shared), or one lane per word (char-stride-4).
extern "C" __global__ void shared_char(int S, char* __restrict__ sink) {
    extern __shared__ char bytes[];
    volatile char* c = bytes;
    const int tid = threadIdx.x;
    c[tid * S] = (char)tid;
    const char v = c[tid * S];
    if (v == (char)200 && tid > 4096) *sink = v;
}

// Halfwords: two lanes per word (short-shared).
extern "C" __global__ void shared_short(short* __restrict__ sink) {
    __shared__ short s[256];
    volatile short* c = s;
    const int tid = threadIdx.x;
    c[tid] = (short)tid;
    const short v = c[tid];
    if (v < -1) *sink = v;
}
