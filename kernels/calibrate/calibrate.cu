// Microbenchmarks of `warpviz calibrate` (viz/gpu/calibrate.py): one kernel per figure.
// Every load is inline PTX (`asm volatile`), so the front end keeps it, and every kernel
// writes its accumulated value to `sink` only when it equals an impossible key, so the
// loads stay live. `asm volatile` does not stop ptxas, though: it merged a load with an
// identical load of the previous loop trip (the loop was unrolled 4 times), and the first
// H100 run read 4x the true L1 and shared rates. So shared loads are `ld.volatile.shared`
// and the L1 and L2 loops move their addresses on every pass.
// Per-clock kernels record, per block, the SM cycles (clock64) between two barriers into
// `cycles[blockIdx.x]`: figures per clock per SM come from these, not from a guessed clock.

typedef unsigned long long u64;

__device__ __forceinline__ u64 wv_globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// SM clock: cycles (clock64) and nanoseconds (globaltimer) of one thread busy for `ns`.
extern "C" __global__ void wv_clock(u64 ns, u64* out) {
    u64 t0 = wv_globaltimer();
    u64 c0 = clock64();
    u64 t1 = t0;
    while (t1 - t0 < ns) t1 = wv_globaltimer();
    u64 c1 = clock64();
    out[0] = c1 - c0;
    out[1] = t1 - t0;
}

extern "C" __global__ void wv_empty() {}

// The smallest kernel that touches global memory: one thread loads a word and stores it
// plus one (launch_touch_us: what a launch costs beyond an empty one when it reads and writes).
extern "C" __global__ void wv_touch(unsigned* p) {
    if (threadIdx.x == 0) {
        unsigned v;
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p + blockIdx.x));
        asm volatile("st.global.u32 [%0], %1;" :: "l"(p + blockIdx.x), "r"(v + 1u) : "memory");
    }
}

// ---------------------------------------------------------------- DRAM and L2 streams

// Reads n16 16-byte words, grid-stride, four loads in flight per thread per step.
extern "C" __global__ void wv_read(const uint4* __restrict__ p, u64 n16, unsigned* sink) {
    unsigned acc = 0;
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a, b, c, d;
        asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w) : "l"(p + i));
        asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(b.x), "=r"(b.y), "=r"(b.z), "=r"(b.w) : "l"(p + i + stride));
        asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(c.x), "=r"(c.y), "=r"(c.z), "=r"(c.w) : "l"(p + i + 2 * stride));
        asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(d.x), "=r"(d.y), "=r"(d.z), "=r"(d.w) : "l"(p + i + 3 * stride));
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n16; i += stride) {
        uint4 a;
        asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w) : "l"(p + i));
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x9E3779B9u) sink[0] = acc;
}

// Writes n16 16-byte words, grid-stride.
extern "C" __global__ void wv_write(uint4* __restrict__ p, u64 n16) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n16; i += stride) {
        unsigned v = (unsigned)i;
        asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p + i), "r"(v), "r"(v + 1), "r"(v + 2), "r"(v + 3) : "memory");
    }
}

// Re-reads a buffer of n16 16-byte words `passes` times through L2 only (ld.global.cg
// skips L1), grid-stride, each pass rotated: after the first pass every load hits L2.
extern "C" __global__ void wv_read_l2(const uint4* __restrict__ p, u64 n16, int passes, unsigned* sink) {
    unsigned acc = 0;
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (int r = 0; r < passes; ++r) {
        // pass r starts r * 16512 bytes further on, wrapping: no two passes of one
        // thread load the same addresses in the same order
        const u64 shift = ((u64)r * 1032u) % n16;
#pragma unroll 4
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n16; i += stride) {
            u64 e = i + shift;
            if (e >= n16) e -= n16;
            uint4 a;
            asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w) : "l"(p + e));
            acc ^= a.x ^ a.y ^ a.z ^ a.w;
        }
    }
    if (acc == 0x9E3779B9u) sink[0] = acc;
}

// L2 requests of one sector each: every lane loads 4 bytes (ld.global.cg.u32, L1 skipped)
// from its own pseudo-random sector of an L2-resident buffer of (mask + 1) sectors, four
// loads in flight per thread: 32 requests of one sector per warp instruction, as a random
// gather makes. Sectors loaded = grid threads x iters x 4.
extern "C" __global__ void wv_l2_scatter(const unsigned* __restrict__ p, unsigned mask, int iters, unsigned* sink) {
    unsigned acc = 0;
    unsigned x = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u + 12345u;
    for (int r = 0; r < iters; ++r) {
        unsigned a, b, c, d;
        x = x * 1664525u + 1013904223u;
        const unsigned s0 = (x >> 7) & mask;
        x = x * 1664525u + 1013904223u;
        const unsigned s1 = (x >> 7) & mask;
        x = x * 1664525u + 1013904223u;
        const unsigned s2 = (x >> 7) & mask;
        x = x * 1664525u + 1013904223u;
        const unsigned s3 = (x >> 7) & mask;
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(a) : "l"(p + (u64)s0 * 8u));
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(b) : "l"(p + (u64)s1 * 8u));
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(c) : "l"(p + (u64)s2 * 8u));
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(d) : "l"(p + (u64)s3 * 8u));
        acc ^= a ^ b ^ c ^ d;
    }
    if (acc == 0x9E3779B9u) sink[0] = acc;
}

// Partial-sector stores, the way a naive transpose writes: the matrix has `rows` (a
// multiple of 32) rows of 1024 floats; warp task t writes column t % 1024 of the 32 rows
// starting at 32 * ((t / 1024) % (rows / 32)): lane l writes 4 bytes into row 32k + l, so
// every lane hits a different line and writes 4 of its sector's 32 bytes; the 8 tasks of
// consecutive columns (neighbouring warps) fill a sector. Stores = grid threads x iters.
extern "C" __global__ void wv_l2_partial(float* p, unsigned rows, int iters) {
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warps = (gridDim.x * blockDim.x) >> 5;
    const unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned groups = rows >> 5;
    for (int r = 0; r < iters; ++r) {
        const unsigned t = w + (unsigned)r * warps;
        const unsigned col = t & 1023u;
        const unsigned row = 32u * ((t >> 10) % groups) + lane;
        asm volatile("st.global.f32 [%0], %1;" :: "l"(p + (u64)row * 1024u + col), "f"((float)t) : "memory");
    }
}

// Coalesced 16-byte stores into an L2-resident buffer of n16 16-byte words, `passes`
// times, grid-stride (st.global.v4: every warp writes 4 whole lines).
extern "C" __global__ void wv_write_l2(uint4* p, u64 n16, int passes) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    for (int r = 0; r < passes; ++r) {
        for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n16; i += stride) {
            const unsigned v = (unsigned)i + r;
            asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" :: "l"(p + i), "r"(v), "r"(v), "r"(v), "r"(v) : "memory");
        }
    }
}

// ---------------------------------------------------------------- L1 hits

// Each block re-reads its own 16 KiB (1024 16-byte words) `iters` times with
// ld.global.ca (cached in L1): 8 coalesced float4 loads per thread per iteration,
// 16 sectors each per warp, 640 bytes further on each trip (wrapping in the 16 KiB). The
// first trips bring the lines in; the rest hit L1.
extern "C" __global__ void wv_read_l1(const uint4* __restrict__ p, int iters, unsigned* sink, u64* cycles) {
    const uint4* q = p + (u64)blockIdx.x * 1024;
    const unsigned t = threadIdx.x;
    unsigned acc = 0;
    __syncthreads();
    u64 c0 = clock64();
    for (int r = 0; r < iters; ++r) {
        const unsigned o = t + (unsigned)r * 40u;   // 640 bytes on per trip: 128 trips before a repeat
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            uint4 a;
            asm volatile("ld.global.ca.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a.x), "=r"(a.y), "=r"(a.z), "=r"(a.w)
                         : "l"(q + ((o + j * 128u) & 1023u)));
            acc ^= a.x ^ a.y ^ a.z ^ a.w;
        }
    }
    __syncthreads();
    u64 c1 = clock64();
    if (t == 0) cycles[blockIdx.x] = c1 - c0;
    if (acc == 0x9E3779B9u) sink[0] = acc;
}

// ---------------------------------------------------------------- shared memory

// mode 0: LDS.32 conflict-free (lane l reads word l of a 32-word row: 1 wavefront)
// mode 1: LDS.32 32-way conflict (lane l reads word 32*l + j: one bank, 32 wavefronts)
// mode 2: LDS.32 broadcast (every lane reads the same word: 1 wavefront)
// mode 3: LDS.128 conflict-free (lane l reads 16 bytes at 16*l: 4 wavefronts)
// 16 loads per iteration, `iters` iterations; cycles per block as above.
extern "C" __global__ void wv_shared(int mode, int iters, unsigned* sink, u64* cycles) {
    __shared__ __align__(16) unsigned s[32 * 33 + 64];
    const unsigned t = threadIdx.x, lane = t & 31u;
    for (unsigned i = t; i < 32 * 33 + 64; i += blockDim.x) s[i] = i * 2654435761u;
    __syncthreads();
    unsigned base = (unsigned)__cvta_generic_to_shared(s);
    unsigned addr = base + 4u * (mode == 0 ? lane : mode == 1 ? 32u * lane : mode == 2 ? 0u : 4u * lane);
    unsigned acc = 0;
    u64 c0 = clock64();
    if (mode == 3) {
        for (int r = 0; r < iters; ++r) {
#pragma unroll
            for (int j = 0; j < 16; ++j) {
                unsigned a, b, c, d;
                asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                             : "r"(addr + 16u * (unsigned)(j & 1)));
                acc ^= a ^ b ^ c ^ d;
            }
        }
    } else {
        for (int r = 0; r < iters; ++r) {
#pragma unroll
            for (int j = 0; j < 16; ++j) {
                unsigned a;
                asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr + 4u * (unsigned)j));
                acc ^= a;
            }
        }
    }
    __syncthreads();
    u64 c1 = clock64();
    if (t == 0) cycles[blockIdx.x] = c1 - c0;
    if (acc == 0x9E3779B9u) sink[0] = acc;
}

// __syncthreads cost: `iters` barriers, each after one cheap dependent step.
extern "C" __global__ void wv_sync(int iters, unsigned* sink, u64* cycles) {
    unsigned acc = threadIdx.x;
    __syncthreads();
    u64 c0 = clock64();
    for (int r = 0; r < iters; ++r) {
        acc = acc * 1664525u + 1013904223u;
        __syncthreads();
    }
    u64 c1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = c1 - c0;
    if (acc == 0x9E3779B9u) sink[0] = acc;
}

// ---------------------------------------------------------------- latency chains

// One thread follows a chain of 8-byte pointers for `steps` dependent loads.
// cache 0: ld.global.cg (L2, then DRAM), 1: ld.global.ca (L1 first).
extern "C" __global__ void wv_chase(const u64* start, int steps, int cache, u64* out) {
    u64 p = (u64)start;
    u64 c0 = clock64();
    if (cache == 1) {
        for (int i = 0; i < steps; ++i) asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
    } else {
        for (int i = 0; i < steps; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
    }
    u64 c1 = clock64();
    out[0] = p;
    out[1] = c1 - c0;
}

// Shared-memory chain: `next` holds n (<= 2048) word indices of a random cycle; each step
// is one dependent LDS.32 of the next shared address.
extern "C" __global__ void wv_chase_shared(const unsigned* next, int n, int steps, u64* out) {
    __shared__ unsigned s[2048];
    const unsigned base = (unsigned)__cvta_generic_to_shared(s);
    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = base + 4u * next[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned p = base;
    u64 c0 = clock64();
    for (int i = 0; i < steps; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p));
    u64 c1 = clock64();
    out[0] = p;
    out[1] = c1 - c0;
}

// ---------------------------------------------------------------- a warp's dependent issue

// Constant-memory chain for wv_dep op 3: entry i holds the next index (set by the host).
__constant__ unsigned wv_ctab[64];

// One warp runs `steps` x 32 dependent instructions of one kind, each using the result of
// the one before, and records the SM cycles (clock64) they took: op 0 FFMA (fixed latency:
// the check that ptxas's stall count is the whole wait), 1 SHFL.BFLY, 2 MUFU.EX2, 3 LDC of
// the next index from constant memory, 4 BREV. Cycles per instruction = cycles from one
// instruction's issue to the issue of the next, which waits for its result.
extern "C" __global__ void wv_dep(int op, int steps, unsigned seed, u64* out) {
    unsigned x = seed + threadIdx.x;
    float f = __uint_as_float(0x3f000000u + (seed & 1u));
    u64 c0 = clock64();
    if (op == 0) {
        for (int i = 0; i < steps; ++i) {
#pragma unroll
            for (int j = 0; j < 32; ++j) asm volatile("fma.rn.f32 %0, %0, 0f3F7FFFFF, 0f3A83126F;" : "+f"(f));
        }
    } else if (op == 1) {
        for (int i = 0; i < steps; ++i) {
#pragma unroll
            for (int j = 0; j < 32; ++j) asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;" : "+r"(x));
        }
    } else if (op == 2) {
        for (int i = 0; i < steps; ++i) {
#pragma unroll
            for (int j = 0; j < 32; ++j) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(f));
        }
    } else if (op == 3) {
        unsigned y = seed;      // the same index in every lane: one constant-cache access each
        for (int i = 0; i < steps; ++i) {
#pragma unroll
            for (int j = 0; j < 32; ++j) y = wv_ctab[y & 63u];
        }
        x += y;
    } else {
        for (int i = 0; i < steps; ++i) {
#pragma unroll
            for (int j = 0; j < 32; ++j) asm volatile("brev.b32 %0, %0;" : "+r"(x));
        }
    }
    u64 c1 = clock64();
    if (threadIdx.x == 0) {
        out[0] = c1 - c0;
        out[1] = x + __float_as_uint(f);
    }
}

// ---------------------------------------------------------------- loaded latency

// The latency of a dependent load while DRAM streams (the cost model's loaded-latency
// curve, ``loaded_latency_ns_K``): block 0's thread 0 follows a random cycle of 4-byte
// indices (`chase`, ld.global.cg: each step one sector 4 KiB or more from the last) for
// `steps` dependent loads and records the cycles (clock64) they took; the other blocks
// copy n4 float4s from `src` to `dst`, grid-stride, `passes` times, so they overlap. With
// `steps` 0 the copy runs alone (its bandwidth, timed by CUDA events). The same kernel as
// tools/probes/loaded_latency.py, which measured the H100's shipped curve.
extern "C" __global__ void wv_loaded(const unsigned* __restrict__ chase, unsigned steps, u64* out,
                                     const uint4* __restrict__ src, uint4* __restrict__ dst, u64 n4,
                                     unsigned passes) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0 && steps) {
            unsigned p = 0;
            u64 t0 = clock64();
            for (unsigned i = 0; i < steps; ++i) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(p) : "l"(chase + p));
            u64 t1 = clock64();
            out[0] = t1 - t0;
            out[1] = p;
        }
        return;
    }
    const u64 stride = (u64)(gridDim.x - 1) * blockDim.x;
    for (unsigned r = 0; r < passes; ++r)
        for (u64 i = (u64)(blockIdx.x - 1) * blockDim.x + threadIdx.x; i < n4; i += stride) dst[i] = src[i];
}
