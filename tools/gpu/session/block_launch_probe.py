"""Probe: how fast an SM starts and retires blocks (the cost model's ``block_launch_ns``).

Kernels that do almost nothing per block (the shared-memory lessons: one store, a barrier,
one load per thread) run at a rate set by block launches, not by any memory unit. This
probe times an empty kernel and a kernel whose threads load and store one word in a
1 MiB (L2-resident) buffer, at 32..1024 threads per block and 8..512 blocks per SM, with
CUDA events (median of 30 launches after a warm-up), and prints JSON:
``{"rows": [{"kernel", "threads", "blocks_per_sm", "median_ms", "ns_per_block_per_sm"}]}``.

    python3 tools/gpu/session/block_launch_probe.py --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

SOURCE = r"""
extern "C" __global__ void wv_empty() {}
extern "C" __global__ void wv_touch(float* p, unsigned mask) {
    unsigned i = (blockIdx.x * blockDim.x + threadIdx.x) & mask;
    p[i] = p[i] + 1.0f;
}
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    a = ap.parse_args(argv)
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
        for threads in (32, 64, 256, 1024):
            for per_sm in (8, 64, 512):
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
