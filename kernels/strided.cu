// Reads that waste sectors (stride-2, stride-16, stride-32, offset-by-one, random-gather,
// aos-float3-r, soa-float-r). The store is always coalesced; only the read pays.
#include "common.cuh"

// in[i*S]: a warp spans 128*S bytes; from S = 8 on every lane is in its own sector.
extern "C" __global__ void read_strided(const float* __restrict__ in, float* __restrict__ out, int S) {
    const int i = global_index();
    out[i] = in[(long long)i * S];
}

// in[i+1]: one element off a 128-byte boundary, 5 sectors instead of 4.
extern "C" __global__ void read_offset(const float* __restrict__ in, float* __restrict__ out) {
    const int i = global_index();
    out[i] = in[i + 1];
}

// in[hash(i)]: Knuth's multiplicative hash in 64-bit C arithmetic; 32 sectors per request.
extern "C" __global__ void read_gather(const float* __restrict__ in, float* __restrict__ out, int N) {
    const long long i = global_index();
    out[i] = in[(i * 2654435761LL) % N];
}

// Array of structs: p[i].r reads 4 of every 12 bytes, 12 sectors per request.
struct Pixel { float r, g, b; };
extern "C" __global__ void read_aos_r(const Pixel* __restrict__ p, float* __restrict__ out) {
    const int i = global_index();
    out[i] = p[i].r;
}

// Struct of arrays: the red channel is its own array, 4 sectors per request.
extern "C" __global__ void read_soa_r(const float* __restrict__ r, float* __restrict__ out) {
    const int i = global_index();
    out[i] = r[i];
}
