"""`warpviz trace LAUNCH.toml` and `warpviz analyze FILE.wvtrace` (docs/trace-format.md)."""

from __future__ import annotations

import json
import sys

from ..trace import TraceError
from .trace_pipeline import (SELECTABLE_BLOCKS, blocks_text, locate_fault, other_rows,  # noqa: F401 - the CLI's names
                       parse_blocks, validate_counters)


def add_parser(sub) -> None:
    tr = sub.add_parser("trace", help="run a CUDA kernel with every memory instruction recorded (a launch file)")
    tr.add_argument("launch", metavar="LAUNCH.toml", help="a launch file, or a shipped one's name (e.g. "
                    "transpose_pad: kernels/**/NAME.launch.toml; the trace is then written here, NAME.wvtrace)")
    tr.add_argument("--blocks", metavar="RANGE", help="linear block indices to record: 0, 0-15, 0,7,63 "
                    "(each below the grid's number of blocks and below 65,536)")
    tr.add_argument("--out", metavar="FILE.wvtrace", help="where to write the trace (default: beside the launch "
                    "file; for a shipped one named, NAME.wvtrace here)")
    tr.add_argument("--json", action="store_true", help="print the analysis as JSON")
    tr.add_argument("--validate", action="store_true",
                    help="also count the plain kernel with Nsight Compute and compare the ten metrics (exit 1 on a mismatch)")


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def cmd_trace(args) -> int:
    from ..toolchain.compile import CompileError
    from .front import GpuUnavailable, KernelFault
    from ..trace.launch import load_launch

    if args.out:
        from ..argcheck import check_out_path

        try:
            check_out_path(args.out)
        except ValueError as err:
            return _fail(str(err))
    from ..assets import launch_argument, named_launch

    out = args.out
    path = launch_argument(args.launch)          # a file, or a shipped launch file's name (transpose_pad)
    if path != args.launch and out is None:
        out = f"{named_launch(args.launch).name[:-len('.launch.toml')]}.wvtrace"   # here, not into the install
    args.out = out
    try:
        launch = load_launch(path)
        blocks = parse_blocks(args.blocks, launch.blocks, launch.path) if args.blocks else None
    except TraceError as err:
        return _fail(str(err))
    if args.out:
        from ..fileio import WriteError, real_target

        try:
            real_target(args.out)           # a FIFO, a device, a folder: refused before the kernel runs
        except WriteError as err:
            return _fail(str(err))
    try:
        return _trace(launch, blocks, args)
    except TraceError as err:
        return _fail(str(err))
    except GpuUnavailable as err:
        return _fail(f"cannot trace here: {err.reason}")
    except KernelFault as err:
        from .trace_pipeline import fault_message

        return _fail(fault_message(launch, err))
    except CompileError as err:
        return _fail(str(err))


def _trace(launch, blocks, args) -> int:
    from ..trace.analysis import to_json, to_table
    from .front import TraceRequest, record

    rec = record(TraceRequest(launch, out=args.out, validate=args.validate, blocks=blocks))
    out, an, guard = rec.path, rec.analysis, rec.guard
    doc = to_json(an)
    rc = 0
    rows = rec.rows
    if rows is not None:
        doc["validation"] = rec.validation()
        if not rec.match:
            rc = 1
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(to_table(an))
        if rows is not None:
            print()
            from ..trace.analysis import unrecorded_json
            from ..trace.schema import records_complete

            print(f"Nsight Compute on the plain kernel ({'all blocks' if records_complete(rec.trace.header) else 'partial trace: expect differences'}):")
            for r in rows:
                print(f"  {r.metric:<58} trace {r.model:>12,}  ncu {r.hardware if r.hardware is not None else '-':>12}"
                      f"  {'ok' if r.match else 'MISMATCH'}")
            for r in doc["validation"]["other"]:
                print(f"  {r['metric']:<58} trace {r['model']:>12,}  ncu {r['hardware'] if r['hardware'] is not None else '-':>12}"
                      f"  {'ok' if r['match'] else 'differs'} (outside the ten)")
            missed = unrecorded_json(rec.trace.header) or []
            if missed:
                print(f"  counters may differ because the kernel ran {len(missed)} memory instruction(s) warpviz "
                      "does not record: " + "; ".join(f"{d['instruction']} (PTX line {d['ptx_line']}, "
                                                      f"{d['executed']:,} executions)" for d in missed[:8])
                      + (f"; and {len(missed) - 8} more" if len(missed) > 8 else ""))
            if guard and guard["problems"]:
                print("  SASS guard: ptxas changed memory instructions: " + "; ".join(guard["problems"]))
            if guard and guard["note"]:
                print("  note: " + guard["note"])
            from ..trace.analysis import instruction_numbers

            for line in sass_lines(rec.trace.header, instruction_numbers(rec.trace)):
                print("  " + line)
    print(f"warpviz: wrote {out} ({out.stat().st_size:,} bytes, {rec.trace.records:,} records)", file=sys.stderr)
    return rc


def sass_lines(header: dict, numbers: dict[int, int] | None = None) -> list[str]:
    """What ``--validate`` says about the SASS (``viz.trace.reconcile``): the instructions
    that ptxas rewrote, and every one whose mapping is not certain (named by ``numbers``,
    ``viz.trace.analysis.instruction_numbers``)."""
    smap = header.get("sass_map")
    if not smap:
        return ["SASS: not compared with the trace (a trace recorded before warpviz read the SASS)"]
    out = []
    numbers = numbers or {}
    for k, ins in enumerate(header["instructions"]):
        info = ins.get("sass") or {}
        if info.get("state") in ("fused", "split", "removed", "aggregated") or not info.get("certain", True):
            tag = "not certain" if not info.get("certain", True) else info["state"]
            out.append(f"SASS, instruction {numbers.get(k, k + 1)} ({tag}): {info.get('note', '')}")
    out += [f"SASS: {n}" for n in smap.get("notes") or []]
    if not out:
        out.append("SASS: every memory instruction runs as the PTX has it")
    return out


def cmd_analyze_trace(path: str, as_json: bool, never_executed: bool = False) -> int:
    """``warpviz analyze FILE.wvtrace``: the traced kernel's instructions that executed, by
    their number (``viz.trace.analysis.instruction_numbers``); ``never_executed`` (``--all``)
    lists the kernel's instructions no warp ran too."""
    from ..trace import tracefile
    from ..trace.analysis import analyze_trace, to_json, to_table

    try:
        trace = tracefile.load(path)
    except TraceError as err:
        return _fail(str(err))
    an = analyze_trace(trace)
    if as_json:
        print(json.dumps(to_json(an, never_executed), indent=2))
    else:
        print(to_table(an, never_executed))
    return 0


__all__ = ["add_parser", "cmd_trace", "cmd_analyze_trace", "parse_blocks", "blocks_text", "sass_lines"]
