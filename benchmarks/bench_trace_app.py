"""Open a large trace in the app: time to the first frame on screen (no GPU needed).

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_trace_app.py [--w 2048] [--json OUT.json]

Builds a synthetic trace of a W x W float transpose through a padded 32x33 shared tile
(blocks of 32x8 threads, each moving four elements: 4 global loads, 4 shared stores, 4
shared loads, 4 global stores per thread), the addresses the kernel's lanes would record,
and writes it with ``viz.trace.tracefile.save``. Then, in this process, it opens the
trace in the main window as `warpviz FILE.wvtrace` does and times: reading the file,
building the per-warp streams, the first warp's detail and frames, and the first paint
(the whole-launch analysis runs on the worker afterwards; its time is reported too).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def synthetic(w: int):
    from viz.trace import tracefile

    gx = gy = w // 32
    nb, nw = gx * gy, 8
    lane = np.arange(32)
    heads, addrs = [], []
    table = []
    kinds = [("ld.global.nc.f32", "load", "global"), ("st.shared.f32", "store", "shared"),
             ("ld.shared.f32", "load", "shared"), ("st.global.f32", "store", "global")]
    for k, (opc, op, space) in enumerate(kinds):
        table.append({"id": k, "line_no": k, "ptx": f"{opc} [%r{k}];", "function": "t", "opcode": opc, "kind": op,
                      "op": op, "space": space, "width": 4, "predicate": "", "address": "", "operand": 0,
                      "file": "t.cu", "line": 10 + k})
    base_in, base_out = 1 << 40, (1 << 40) + 4 * w * w
    b = np.arange(nb)
    bx, by = b % gx, b // gx
    rows = []
    for warp in range(nw):
        for j in range(0, 32, 8):
            ty = warp + j
            x, y = bx[:, None] * 32 + lane, by[:, None] * 32 + ty
            rows.append((0, warp, base_in + 4 * (y * w + x)))
            rows.append((1, warp, np.broadcast_to(4 * (ty * 33 + lane), (nb, 32))))
        for j in range(0, 32, 8):
            ty = warp + j
            rows.append((2, warp, np.broadcast_to(4 * (lane * 33 + ty), (nb, 32))))
            x, y = by[:, None] * 32 + lane, bx[:, None] * 32 + ty
            rows.append((3, warp, base_out + 4 * (y * w + x)))
    full = 0xFFFFFFFF
    for instr, warp, a in rows:
        h = np.zeros((nb, 8), np.uint32)
        h[:, 0], h[:, 1], h[:, 2], h[:, 3], h[:, 4] = instr, b, warp, full, full
        h[:, 5 if kinds[instr][2] == "shared" else 6] = full
        heads.append(h)
        addrs.append(np.asarray(a, np.uint64))
    header = {"title": f"Synthetic padded transpose {w} x {w}", "kernel": "t", "name": "bench",
              "launch": {"block": [32, 8, 1], "grid": [gx, gy, 1]}, "instructions": table, "complete": True,
              "sources": {"t.cu": "\n" * 9 + "in\nstore tile\nload tile\nout\n"}, "launch_file": "title = \"t\"\n"}
    return tracefile.from_records(header, np.concatenate(heads), np.concatenate(addrs))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--w", type=int, default=2048)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from viz.trace import tracefile

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WARPVIZ_SETTINGS"] = str(Path(tmp) / "settings.ini")
        os.environ["WARPVIZ_DATA_DIR"] = str(Path(tmp) / "data")
        t0 = time.perf_counter()
        tr = synthetic(args.w)
        path = tracefile.save(tr, Path(tmp) / "big.wvtrace")
        out["build_and_write_s"] = round(time.perf_counter() - t0, 3)
        out["lane_accesses"] = tr.lane_accesses()
        out["records"] = tr.records
        out["file_bytes"] = path.stat().st_size
        del tr

        from PySide6.QtCore import QCoreApplication

        from viz.app.main import make_app
        from viz.app.window import MainWindow

        make_app()
        t0 = time.perf_counter()
        from viz.trace.detail import TraceSource, TraceTimeline
        from viz.frames import Cursor

        src = TraceSource.open(path)
        out["load_and_streams_s"] = round(time.perf_counter() - t0, 3)
        t1 = time.perf_counter()
        tl = TraceTimeline(src)
        tl.frames(Cursor())
        out["first_detail_s"] = round(time.perf_counter() - t1, 4)
        del src, tl

        t0 = time.perf_counter()
        w = MainWindow(str(path))
        w.resize(1600, 980)
        w.show()
        while w.view.layout_ is None:
            QCoreApplication.processEvents()
        out["app_first_frame_s"] = round(time.perf_counter() - t0, 3)
        while w.session.trace_analysis is None:
            QCoreApplication.processEvents()
        out["app_analysis_done_s"] = round(time.perf_counter() - t0, 3)
        out["header"] = [t.text for t in w.view.layout_.texts if "instruction" in t.text][:1]
        w.close()
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
