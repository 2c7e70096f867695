"""Rewrite the shipped traces (assets/traces) to what the plain kernel's SASS runs, as
`warpviz trace` now does when it records (viz.trace.reconcile), without the GPU.

The SASS mapping is a function of the plain PTX and ptxas: for each shipped trace this
compiles its launch file's source here, and only where the PTX's memory instructions are
exactly those the trace recorded (text, PTX line, function) and nvcc is the version that
recorded it, reconciles them with `nvdisasm -gp` of the cubin ptxas makes here and
rewrites the trace in place (atomically). A trace that already has its SASS mapping is
left alone. Needs nvcc, ptxas and nvdisasm; no GPU.

    python tools/trace/reconcile_shipped.py [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def launch_of(header: dict) -> Path | None:
    name = header.get("launch_file_name") or ""
    for folder in (ROOT / "kernels", ROOT / "kernels" / "trace"):
        if name and (folder / name).exists():
            return folder / name
    return None


def main(argv: list[str]) -> int:
    from viz.toolchain.compile import find_tool, nvcc_version
    from viz.trace import tracefile
    from viz.trace.build import assemble, compile_ptx
    from viz.trace.launch import load_launch
    from viz.trace.ptx import parse
    from viz.trace.reconcile import apply, reconcile, sass_with_ptx_lines

    if not (find_tool("nvcc") and find_tool("nvdisasm")):
        print("reconcile_shipped: needs nvcc and nvdisasm on the PATH", file=sys.stderr)
        return 2
    rc = 0
    for path in tracefile.shipped():
        if argv and path.stem not in argv:
            continue
        trace = tracefile.load(path)
        h = trace.header
        if h.get("sass_map"):
            print(f"{path.stem}: already mapped")
            continue
        lf = launch_of(h)
        if lf is None or h.get("nvcc") != nvcc_version():
            print(f"{path.stem}: skipped (launch file {h.get('launch_file_name')!r} not found, or recorded with nvcc "
                  f"{h.get('nvcc')}, here {nvcc_version()})")
            rc = 1
            continue
        ptx = compile_ptx(load_launch(lf), h.get("arch") or "sm_90")
        instrs = parse(ptx).instrs
        key = lambda rows: [(r["ptx"], r["line_no"], r["function"]) for r in rows]  # noqa: E731
        if key([i.as_dict() for i in instrs]) != key(trace.instructions):
            print(f"{path.stem}: skipped (the PTX compiled here is not the one recorded)")
            rc = 1
            continue
        mapping = reconcile(ptx, instrs, sass_with_ptx_lines(assemble(ptx, h.get("arch") or "sm_90")))
        out = tracefile.check(apply(trace, mapping), path)
        tracefile.save(out, path)
        smap = out.header["sass_map"]
        print(f"{path.stem}: {trace.records:,} -> {out.records:,} records; fused {smap['fused']}, removed "
              f"{smap['removed']}, not certain {smap['uncertain']}")
    return rc


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
