"""Record + write + analyse a large trace end to end (needs a GPU, PyCUDA, nvcc).

    python benchmarks/bench_trace.py [--n 8388608] [--json OUT.json]

Traces the transpose of a W x W float matrix through a padded shared tile
(kernels/transpose.cu: transpose_tile_pad1; 4 loads and 4 stores per thread, half global
and half shared) and times each phase: compile + instrument, the counting and recording
runs with the transfer of the records (one call into the GPU process), building the
arrays, writing the compressed file, loading it and analysing it. Prints lane accesses
per second end to end and the file's bytes per lane access.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--w", type=int, default=2048, help="matrix width (a multiple of 32)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    from viz.gpu.worker import ProcessSession
    from viz.trace import tracefile
    from viz.trace.analysis import analyze_trace
    from viz.trace.build import build
    from viz.trace.launch import parse_launch
    from viz.trace.record import request

    w = args.w
    with tempfile.TemporaryDirectory() as tmp:
        lp = Path(tmp) / "big.launch.toml"
        # a launch file names its source relative to its own folder (inside it)
        shutil.copytree(ROOT / "kernels", Path(tmp) / "kernels")
        text = (f'title = "transpose {w}x{w}"\nsource = "kernels/transpose.cu"\n'
                f'kernel = "transpose_tile_pad1"\nblock = [32, 8]\ngrid = [{w // 32}, {w // 32}]\n'
                f'[[arg]]\ntype = "float*"\ncount = {w * w}\nfill = "random"\n'
                f'[[arg]]\ntype = "float*"\ncount = {w * w}\nfill = "zero"\n'
                f'[[arg]]\ntype = "int"\nvalue = {w}\n')
        lp.write_text(text)
        launch = parse_launch(text, lp)
        t = {}
        t0 = time.perf_counter()
        session = ProcessSession()
        t["gpu process start"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        b = build(launch)
        t["compile + instrument + ptxas"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = session.trace_record(request(launch, b.instrumented_cubin))
        t["count + record runs + transfer"] = time.perf_counter() - t0
        session.close()
        t0 = time.perf_counter()
        header = {"title": launch.title, "kernel": launch.kernel, "instructions": [i.as_dict() for i in b.instrs],
                  "launch": {"block": list(launch.block), "grid": list(launch.grid)}, "complete": True}
        trace = tracefile.from_records(header, res["header"], res["addr"])
        t["arrays"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = tracefile.save(trace, Path(tmp) / "big.wvtrace")
        t["write (compress)"] = time.perf_counter() - t0
        size = os.path.getsize(out)
        t0 = time.perf_counter()
        back = tracefile.load(out)
        t["load"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        an = analyze_trace(back)
        t["analyse"] = time.perf_counter() - t0
    lanes = back.lane_accesses()
    recorded = sum(v for k, v in t.items() if k not in ("gpu process start", "compile + instrument + ptxas"))
    doc = {"w": w, "records": back.records, "lane_accesses": lanes, "file_bytes": size,
           "bytes_per_lane_access": round(size / lanes, 4), "seconds": {k: round(v, 3) for k, v in t.items()},
           "record_write_analyse_s": round(recorded, 3),
           "lane_accesses_per_s": round(lanes / recorded), "metrics": an.metrics}
    print(json.dumps(doc, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
