"""Rewrite the shipped traces (assets/traces) to what the plain kernel's SASS runs, as
`warpviz trace` now does when it records (viz.trace.reconcile), without the GPU.

The SASS mapping is a function of the plain PTX and ptxas: for each shipped trace this
compiles its launch file's source here, and only where the PTX's memory instructions are
exactly those the trace recorded (text, PTX line, function) and nvcc is the version that
recorded it, reconciles them with `nvdisasm -gp` of the cubin ptxas makes here and
rewrites the trace in place (atomically). A trace that already has its SASS mapping is
left alone; with --again it is mapped anew where its earlier mapping changed no record
(every instruction `same` or `uncertain`: the records are still those recorded), e.g.
after warpviz learnt to map what was uncertain. Needs nvcc, ptxas and nvdisasm; no GPU.

    python tools/trace/reconcile_shipped.py [--again] [NAME ...]
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


def as_recorded(trace, kinds: list[str]):
    """The trace as it was recorded, from one whose SASS mapping changed no record (every
    instruction `same` or `uncertain`), or None. ``kinds``: the PTX's kind of each
    instruction (the mapping names a global atomic `atomic` or `reduction` as the SASS has it)."""
    from dataclasses import replace

    table = trace.header["instructions"]
    if len(kinds) != len(table) or any((i.get("sass") or {}).get("state") not in ("same", "uncertain")
                                       or "ptx_width" in i for i in table):
        return None
    header = dict(trace.header, instructions=[{k: v for k, v in dict(i, kind=kind).items() if k != "sass"}
                                              for i, kind in zip(table, kinds)])
    header.pop("sass_map", None)
    return replace(trace, header=header)


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
    again = "--again" in argv
    argv = [a for a in argv if a != "--again"]
    rc = 0
    for path in tracefile.shipped():
        if argv and path.stem not in argv:
            continue
        trace = tracefile.load(path)
        h = trace.header
        if h.get("sass_map") and not again:
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
        if h.get("sass_map"):
            trace = as_recorded(trace, [i.as_dict()["kind"] for i in instrs])
            if trace is None:
                print(f"{path.stem}: skipped (its mapping rewrote records: only a new recording maps it anew)")
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
