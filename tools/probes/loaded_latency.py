"""Probe: the latency of a dependent DRAM load while DRAM is busy (the cost model's
``dram_loaded_latency_ns``).

A streaming copy keeps DRAM at some share of its peak while one extra block's single
thread follows a random cycle of pointers through 256 MiB (each step a DRAM miss, 4 KiB+
apart) and reads ``clock64`` around it. One kernel does both (block 0 chases, the other
blocks copy float4s grid-stride, ``passes`` times over 2 x 256 MiB), so they overlap. The
streaming blocks are 0, 1, 2, 4 and 8 per SM; the copy's bandwidth comes from a CUDA-event
time of the same launch without the chase. Prints and writes JSON rows:
``{"stream_blocks_per_sm", "copy_gbps", "chase_ns", "chase_clocks"}``.

    python3 tools/probes/loaded_latency.py --json OUT.json
    python3 tools/probes/loaded_latency.py --dry      (no GPU: compiles the kernel, checks the chase plan)
"""

from __future__ import annotations

import argparse
import json
import sys

from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SOURCE = r"""
extern "C" __global__ void wv_loaded(const unsigned* __restrict__ chase, unsigned steps,
                                     unsigned long long* out, const float4* __restrict__ src,
                                     float4* __restrict__ dst, unsigned long long n4, unsigned passes) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0 && steps) {
            unsigned p = 0;
            long long t0 = clock64();
            for (unsigned i = 0; i < steps; ++i) p = __ldcg(chase + p);
            long long t1 = clock64();
            out[0] = (unsigned long long)(t1 - t0);
            out[1] = p;
        }
        return;
    }
    unsigned long long stride = (unsigned long long)(gridDim.x - 1) * blockDim.x;
    for (unsigned r = 0; r < passes; ++r)
        for (unsigned long long i = (unsigned long long)(blockIdx.x - 1) * blockDim.x + threadIdx.x; i < n4; i += stride)
            dst[i] = src[i];
}
"""


STREAM_BLOCKS_PER_SM = (0, 1, 2, 4, 8)


def chase_words(nodes: int, spacing: int, seed: int = 5) -> np.ndarray:
    """One random cycle through ``nodes`` nodes ``spacing`` 4-byte words apart: the word at a
    node holds the index of the next node's word."""
    order = np.random.default_rng(seed).permutation(nodes)
    words = np.zeros(nodes * spacing, np.uint32)
    words[order * spacing] = (np.roll(order, -1) * spacing).astype(np.uint32)
    return words


def dry() -> int:
    """No GPU: compile the kernel and check that the chase is one cycle through every node."""
    from viz.toolchain.compile import compile_cubin, find_nvcc

    if find_nvcc():
        print(f"dry: kernel compiled, {len(compile_cubin(SOURCE))} bytes of cubin")
    else:
        print("dry: no nvcc here, kernel not compiled")
    nodes, spacing = 4096, 16
    words, p, seen = chase_words(nodes, spacing), 0, set()
    for _ in range(nodes):
        seen.add(p)
        p = int(words[p])
    assert p == 0 and len(seen) == nodes, (p, len(seen))
    print(f"dry: the chase visits all {nodes} nodes once; stream blocks per SM {STREAM_BLOCKS_PER_SM}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--dry", action="store_true", help="no GPU: compile and plan only")
    a = ap.parse_args(argv)
    if a.dry:
        return dry()
    if not a.json:
        ap.error("--json OUT.json is needed (or --dry)")
    import pycuda.driver as cuda

    from viz.toolchain.compile import compile_cubin
    from viz.gpu.runner import Session

    s = Session()
    sms = s.info["sm_count"]
    clock_hz = s.info["clock_mhz"] * 1e6
    fn = cuda.module_from_buffer(compile_cubin(SOURCE)).get_function("wv_loaded")
    # A random cycle of 65536 nodes, 4 KiB apart, through 256 MiB (5x the L2).
    words = chase_words(65536, 1024)                  # spacing in 4-byte words
    chase = cuda.mem_alloc(words.nbytes)
    cuda.memcpy_htod(chase, words)
    out = cuda.mem_alloc(16)
    n4 = (256 << 20) // 16
    src, dst = cuda.mem_alloc(n4 * 16), cuda.mem_alloc(n4 * 16)
    cuda.memset_d32(src, 0, n4 * 4)
    rows = []
    for per_sm in STREAM_BLOCKS_PER_SM:
        grid = (1 + sms * per_sm, 1, 1)
        passes = 12 if per_sm else 0

        def launch(steps):
            st, en = cuda.Event(), cuda.Event()
            st.record()
            fn(chase, np.uint32(steps), out, src, dst, np.uint64(n4), np.uint32(passes), block=(256, 1, 1), grid=grid)
            en.record()
            en.synchronize()
            return st.time_till(en)

        launch(200)                                        # warm-up (and the clocks)
        copy_ms = float(np.median([launch(0) for _ in range(3)])) if per_sm else 0.0
        chase_clk = []
        for _ in range(3):
            launch(a.steps)
            h = np.zeros(2, np.uint64)
            cuda.memcpy_dtoh(h, out)
            chase_clk.append(float(h[0]) / a.steps)
        clk = float(np.median(chase_clk))
        row = {"stream_blocks_per_sm": per_sm, "copy_gbps": round(2 * n4 * 16 * passes / (copy_ms * 1e-3) / 1e9, 1)
               if per_sm else 0.0, "copy_ms": round(copy_ms, 4), "chase_clocks": round(clk, 1),
               "chase_ns": round(clk / clock_hz * 1e9, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    s.close()
    with open(a.json, "w") as f:
        json.dump({"device": s.info["name"], "clock_mhz": s.info["clock_mhz"], "steps": a.steps, "rows": rows}, f,
                  indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
