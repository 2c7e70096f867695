"""`warpviz trace LAUNCH.toml` and `warpviz analyze FILE.wvtrace` (docs/trace-format.md)."""

from __future__ import annotations

import base64
import json
import re
import sys
import tempfile
from pathlib import Path

from . import TraceError

MAX_RETRIES = 3
SELECTABLE_BLOCKS = 65536   # the recorder's block bitmap (viz.trace.ptx.BITMAP_WORDS x 32)


def add_parser(sub) -> None:
    tr = sub.add_parser("trace", help="run a CUDA kernel with every memory instruction recorded (a launch file)")
    tr.add_argument("launch", metavar="LAUNCH.toml")
    tr.add_argument("--blocks", metavar="RANGE", help="linear block indices to record: 0, 0-15, 0,7,63")
    tr.add_argument("--out", metavar="FILE.wvtrace", help="where to write the trace (default: beside the launch file)")
    tr.add_argument("--json", action="store_true", help="print the analysis as JSON")
    tr.add_argument("--validate", action="store_true",
                    help="also count the plain kernel with Nsight Compute and compare the ten metrics (exit 1 on a mismatch)")


def parse_blocks(text: str, nblocks: int, path) -> list[int]:
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise TraceError(path, "--blocks", f"`{part}` is not a block index or range",
                             "write e.g. `--blocks 0`, `--blocks 0-15` or `--blocks 0,7,63`")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if hi < lo or hi >= nblocks:
            raise TraceError(path, "--blocks", f"`{part}` is outside the grid's blocks 0..{nblocks - 1}",
                             "give linear block indices inside the grid")
        if hi >= SELECTABLE_BLOCKS:
            raise TraceError(path, "--blocks", f"`{part}`: only blocks 0..{SELECTABLE_BLOCKS - 1:,} can be "
                             "selected one by one", "choose blocks below that, or record every block")
        out.update(range(lo, hi + 1))
    return sorted(out)


def blocks_text(blocks: list[int] | None) -> str:
    if blocks is None:
        return "all"
    out, i = [], 0
    while i < len(blocks):
        j = i
        while j + 1 < len(blocks) and blocks[j + 1] == blocks[j] + 1:
            j += 1
        out.append(str(blocks[i]) if i == j else f"{blocks[i]}-{blocks[j]}")
        i = j + 1
    return ",".join(out)


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def validate_counters(launch, build, blocks, metrics=None) -> dict[str, int]:
    """Nsight Compute's ten metrics (or ``metrics``) on the plain kernel, same launch and buffers."""
    import numpy as np

    from ..gpu.ncu import run_ncu
    from .record import host_buffer

    with tempfile.TemporaryDirectory(prefix="warpviz-trace-ncu-") as tmp:
        buf = Path(tmp) / "buffer.npy"
        np.save(buf, host_buffer(launch))
        spec = {"launches": [{"name": launch.kernel, "cubin": base64.b64encode(build.cubin).decode(),
                              "buffer": str(buf), "block": list(launch.block), "grid": list(launch.grid),
                              "shared": launch.shared_bytes, "args": [a.as_dict() for a in launch.args],
                              "offsets": launch.buffer_offsets()}]}
        kw = {"metrics": tuple(metrics)} if metrics else {}
        counters, log = run_ncu(spec, driver="viz.trace.ncu_driver", **kw)
    if not counters or counters[0] is None:
        tail = "\n".join(log.strip().splitlines()[-8:])
        raise RuntimeError(f"Nsight Compute did not profile {launch.kernel}:\n{tail}")
    return counters[0]


def _other_counters(launch, build, blocks) -> dict[str, int] | None:
    """The counters of ``analysis.OTHER_METRICS`` (atomics, LDSM, STSM, LDGSTS), or None
    where this Nsight Compute cannot read them (they are outside the ten, so that is not
    an error)."""
    from .analysis import OTHER_METRICS

    try:
        return validate_counters(launch, build, blocks, sorted(set(OTHER_METRICS.values())))
    except Exception as err:  # an unknown metric name, a profiler error: say so, carry on
        print(f"warpviz: Nsight Compute did not read the atomic/LDSM/LDGSTS counters: {str(err)[:300]}",
              file=sys.stderr)
        return None


def other_rows(model: dict[str, int], hardware: dict[str, int] | None) -> list[dict]:
    """Comparison rows for the instructions outside the ten (only where ncu read a value)."""
    if not hardware:
        return []
    out = []
    for k in sorted(set(model) | set(hardware)):
        if k in hardware:
            m = int(model.get(k, 0))
            out.append({"metric": k, "model": m, "hardware": hardware[k], "match": m == hardware[k]})
    return out


def locate_fault(launch, timeout_s: float = 120) -> str:
    """After a fault: run the fault-finding variant in a fresh GPU process and say which
    instruction and lanes left the launch's buffers (or were misaligned); "" if unknown."""
    from ..gpu.worker import ProcessSession
    from .build import build_check
    from .record import request

    try:
        cubin, instrs = build_check(launch)
        session = ProcessSession()
        try:
            hit = session.trace_check(request(launch, cubin), timeout=timeout_s)
        finally:
            session.close()
    except Exception:
        return ""
    if not hit:
        return ""
    ins = instrs[hit["instr"]]
    lanes = [k for k in range(32) if hit["lanes"] >> k & 1]
    lo, hi = hit["base"], hit["base"] + hit["size"]
    a = int(hit["addr"][lanes[0]])
    why = (f"{a - lo:+,} bytes from the start of the buffers (valid: 0..{hi - lo - 1:,})" if not lo <= a < hi
           else f"not aligned to {ins.width} bytes")
    src = f"{Path(ins.file).name}:{ins.line}" if ins.line else "(no line information)"
    lane_text = ", ".join(str(k) for k in lanes[:8]) + (f" and {len(lanes) - 8} more" if len(lanes) > 8 else "")
    return (f"The first faulting access found: instruction {ins.id + 1} at {src} (`{' '.join(ins.ptx.split())}`), "
            f"block {hit['block']} warp {hit['warp']}, lanes {lane_text}: lane {lanes[0]}'s address is {why}. ")


def cmd_trace(args) -> int:
    from ..gpu import GpuUnavailable
    from ..gpu.compile import CompileError
    from ..gpu.runner import KernelFault
    from .launch import load_launch

    try:
        launch = load_launch(args.launch)
        blocks = parse_blocks(args.blocks, launch.blocks, launch.path) if args.blocks else None
    except TraceError as err:
        return _fail(str(err))
    try:
        return _trace(launch, blocks, args)
    except TraceError as err:
        return _fail(str(err))
    except GpuUnavailable as err:
        return _fail(f"cannot trace here: {err.reason}")
    except KernelFault as err:
        where = locate_fault(launch)
        return _fail(f"{launch.path}: the kernel `{launch.kernel}` failed on the GPU: {err}. {where}Fix: check the "
                     "kernel's indices against the [[arg]] counts" + ("" if where else
                     " (run it under compute-sanitizer to find the line)"))
    except CompileError as err:
        return _fail(str(err))


def _trace(launch, blocks, args) -> int:
    from ..gpu.runner import driver_version_string
    from ..gpu.worker import ProcessSession
    from . import tracefile
    from .analysis import analyze_trace, to_json, to_table
    from .build import build, sass_guard
    from .launch import check_fits
    from .ptx import EVENT_BASE
    from . import record
    from .record import request

    MAX_RECORDS = record.MAX_RECORDS
    session = ProcessSession()
    try:
        info = session.info
        cc = info.get("compute_capability", "9.0").replace(".", "")
        check_fits(launch, session.limits().free_bytes, f"the GPU ({info.get('name', 'GPU 0')})")
        b = build(launch, f"sm_{cc}")
        print(f"warpviz: {len(b.instrs)} memory instruction(s) instrumented in {launch.source.name}", file=sys.stderr)
        chosen = blocks
        note = ""
        for _ in range(MAX_RETRIES):
            res = session.trace_record(request(launch, b.instrumented_cubin, chosen, MAX_RECORDS))
            if res["executed"] <= res["capacity"]:
                break
            per_block = res["executed"] / (len(chosen) if chosen is not None else launch.blocks)
            fit = min(SELECTABLE_BLOCKS, max(1, int(MAX_RECORDS / max(per_block, 1) * 0.9)))
            base = chosen if chosen is not None else list(range(launch.blocks))
            if fit >= len(base):
                fit = max(1, len(base) // 2)
            chosen = base[:fit]
            note = (f"the whole launch needs {res['executed']:,} records, over the limit of {MAX_RECORDS:,}: "
                    f"recorded blocks {blocks_text(chosen)} only")
            print(f"warpviz: {note}", file=sys.stderr)
        if res["executed"] > res["capacity"]:
            note = f"recorded {res['capacity']:,} of {res['executed']:,} warp-level executions (the size limit)"
        if res["executed"] != res["executed_again"]:
            note += (f"; the counting run saw {res['executed']:,} executions and the recording run "
                     f"{res['executed_again']:,} (the kernel's control flow depends on timing or data it changes)")
        counters = None
        other_counters = None
        if args.validate:
            counters = validate_counters(launch, b, chosen)
            other_counters = _other_counters(launch, b, chosen)
        guard = sass_guard(b)
    finally:
        session.close()
    complete = chosen is None and res["executed"] <= res["capacity"] and res["executed"] == res["executed_again"]
    from .. import __version__

    sources = {str(launch.source.name): launch.source.read_text()}
    header = {
        "title": launch.title, "name": launch.name, "kernel": launch.kernel, "notes": launch.notes,
        "launch": {"block": list(launch.block), "grid": list(launch.grid), "shared_bytes": launch.shared_bytes,
                   "args": [a.as_dict() for a in launch.args]},
        "launch_file": launch.text, "launch_file_name": launch.path.name, "source_name": launch.source.name,
        "sources": sources, "gpu": info, "driver": driver_version_string() or info.get("driver"),
        "nvcc": b.nvcc, "arch": b.arch, "warpviz": __version__,
        "recorded_blocks": blocks_text(chosen), "complete": complete, "note": note,
        "instructions": [dict(i.as_dict(), file=_rel(i.file, launch.path.parent),
                              sass_predicated=_predicated(guard, i.id)) for i in b.instrs],
        "skip_regions": [{"ptx_line": r.line_no, "predicate": r.predicate, "instructions": list(r.ids)}
                         for r in b.regions],
        "sass_guard": guard, "ncu": counters, "ncu_other": other_counters,
    }
    rec, addr = res["header"], res["addr"]
    is_event = rec[:, 0] >= EVENT_BASE
    header["events"] = [dict(e.as_dict(), file=_rel(e.file, launch.path.parent),
                             executed=int((rec[is_event, 0] == e.id).sum())) for e in b.events]
    trace = tracefile.from_records(header, rec[~is_event], addr[~is_event])
    out = Path(args.out) if args.out else launch.path.with_name(f"{launch.name}.wvtrace")
    tracefile.save(trace, out)
    trace.path = out
    an = analyze_trace(trace)
    doc = to_json(an)
    rc = 0
    rows = None
    if counters is not None:
        from ..gpu.ncu import compare

        rows = compare(an.metrics, counters)
        doc["validation"] = {"complete": complete, "rows": [r.as_dict() for r in rows],
                             "match": all(r.match for r in rows), "sass_guard": guard,
                             "other": other_rows(an.other_metrics, other_counters)}
        if not all(r.match for r in rows):
            rc = 1
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(to_table(an))
        if rows is not None:
            print()
            print(f"Nsight Compute on the plain kernel ({'all blocks' if complete else 'partial trace: expect differences'}):")
            for r in rows:
                print(f"  {r.metric:<58} trace {r.model:>12,}  ncu {r.hardware if r.hardware is not None else '-':>12}"
                      f"  {'ok' if r.match else 'MISMATCH'}")
            for r in doc["validation"]["other"]:
                print(f"  {r['metric']:<58} trace {r['model']:>12,}  ncu {r['hardware'] if r['hardware'] is not None else '-':>12}"
                      f"  {'ok' if r['match'] else 'differs'} (outside the ten)")
            if guard and guard["problems"]:
                print("  SASS guard: ptxas changed memory instructions: " + "; ".join(guard["problems"]))
            if guard and guard["note"]:
                print("  note: " + guard["note"])
    print(f"warpviz: wrote {out} ({out.stat().st_size:,} bytes, {trace.records:,} records)", file=sys.stderr)
    return rc


def _rel(file: str, here: Path) -> str:
    """A source path relative to the launch file's folder (the trace travels), else as is."""
    try:
        return str(Path(file).resolve().relative_to(here.resolve()))
    except (ValueError, OSError):
        return file


def _predicated(guard: dict | None, ins_id: int) -> bool | None:
    """Did ptxas predicate this shared load/store in the plain kernel? None: not known."""
    if not guard or guard.get("predicated") is None:
        return None
    return guard["predicated"].get(str(ins_id))


def cmd_analyze_trace(path: str, as_json: bool) -> int:
    from . import tracefile
    from .analysis import analyze_trace, to_json, to_table

    try:
        trace = tracefile.load(path)
    except TraceError as err:
        return _fail(str(err))
    an = analyze_trace(trace)
    if as_json:
        print(json.dumps(to_json(an), indent=2))
    else:
        print(to_table(an))
    return 0


__all__ = ["add_parser", "cmd_trace", "cmd_analyze_trace", "parse_blocks", "blocks_text"]
