"""Probe: how fast an SM starts and retires blocks (the cost model's ``block_launch_ns``).

Kernels that do almost nothing per block (the shared-memory lessons: one store, a barrier,
one load per thread) run at a rate set by block launches, not by any memory unit. This
probe times an empty kernel and a kernel whose threads load and store one word in a
1 MiB (L2-resident) buffer, at 32..1024 threads per block and 8..512 blocks per SM, with
CUDA events (median of 30 launches after a warm-up), and prints JSON:
``{"rows": [{"kernel", "threads", "blocks_per_sm", "median_ms", "ns_per_block_per_sm"}]}``.

    python3 tools/probes/block_launch.py --json OUT.json
    python3 tools/probes/block_launch.py --dry      (no GPU: compiles the kernels, prints the plan)
"""

from __future__ import annotations

import argparse
import json
import sys

from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SOURCE = r"""
extern "C" __global__ void wv_empty() {}
extern "C" __global__ void wv_touch(float* p, unsigned mask) {
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) & mask;
    p[i] = p[i] + 1.0f;
}
"""


THREADS = (32, 64, 256, 1024)
BLOCKS_PER_SM = (8, 64, 512)


def dry() -> int:
    """No GPU: compile both kernels and print the launches the probe would time."""
    from viz.toolchain.compile import compile_cubin, find_nvcc

    if find_nvcc():
        print(f"dry: kernels compiled, {len(compile_cubin(SOURCE))} bytes of cubin")
    else:
        print("dry: no nvcc here, kernels not compiled")
    plan = [(k, t, b) for k in ("empty", "touch") for t in THREADS for b in BLOCKS_PER_SM]
    print(f"dry: {len(plan)} launch shapes, 30 timed launches each after 10 warm-ups")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
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
    mod = cuda.module_from_buffer(compile_cubin(SOURCE))
    empty, touch = mod.get_function("wv_empty"), mod.get_function("wv_touch")
    buf = cuda.mem_alloc(1 << 20)
    cuda.memset_d32(buf, 0, (1 << 20) // 4)
    rows = []
    for name, fn, args in (("empty", empty, ()), ("touch", touch, (buf, np.uint32((1 << 18) - 1)))):
        for threads in THREADS:
            for per_sm in BLOCKS_PER_SM:
                grid = (sms * per_sm, 1, 1)

                def go(n):
                    st = [cuda.Event() for _ in range(n)]
                    en = [cuda.Event() for _ in range(n)]
                    for k in range(n):
                        st[k].record()
                        fn(*args, block=(threads, 1, 1), grid=grid)
                        en[k].record()
                    en[-1].synchronize()
                    return [st[k].time_till(en[k]) for k in range(n)]

                go(10)
                t = float(np.median(go(30)))
                rows.append({"kernel": name, "threads": threads, "blocks_per_sm": per_sm, "median_ms": round(t, 6),
                             "ns_per_block_per_sm": round(t * 1e6 / per_sm, 2)})
                print(json.dumps(rows[-1]))
    s.close()
    with open(a.json, "w") as f:
        json.dump({"device": s.info["name"], "sm_count": sms, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
