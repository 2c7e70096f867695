"""Record a trace of a launch file: the one pipeline behind `warpviz trace` and the app's
GPU panel (Record trace / Record and validate).

Stages, in this order, each reported as ``progress(fraction, stage)`` with ``stage`` one of
``STAGES``: ``compile`` (start the GPU process, nvcc, instrument, ptxas), ``count`` (the
counting run), ``record`` (the recording run), ``ncu`` (Nsight Compute on the plain kernel,
only when validating), ``write`` (the ``.wvtrace``, atomically) and ``analyse``.
``cancelled()`` is polled between the stages and, while the GPU child process or Nsight
Compute runs, every 50 ms: a cancel kills that process and raises
``viz.gpu.worker.Cancelled``; the next recording starts a fresh child.

``Recorder`` is what the GPU panel drives: a Qt-free object holding the GPU child process
between recordings, which turns every failure into the paragraph the CLI prints. Nothing
here imports Qt; PyCUDA is used only in the child process.
"""

from __future__ import annotations

import base64
import dataclasses
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..trace import TraceError
from ..trace.schema import blocks_text, partial_note

MAX_RETRIES = 3
SELECTABLE_BLOCKS = 65536   # the recorder's block bitmap (viz.trace.ptx.BITMAP_WORDS x 32)

STAGES = ("compile", "count", "record", "ncu", "write", "analyse")
# Where each stage starts on the progress bar, without and with Nsight Compute.
_AT = {False: {"compile": 0.0, "count": 0.3, "record": 0.45, "write": 0.7, "analyse": 0.8},
       True: {"compile": 0.0, "count": 0.15, "record": 0.25, "ncu": 0.4, "write": 0.8, "analyse": 0.87}}


def _stderr(text: str) -> None:
    print(f"warpviz: {text}", file=sys.stderr)


MAX_BLOCK_RANGES = 256      # comma-separated parts of one --blocks (each a block or a range)


def parse_blocks(text: str, nblocks: int, path) -> list[int]:
    """``--blocks``: linear block indices and ranges, comma-separated (``0-3,7,9``), at most
    MAX_BLOCK_RANGES parts, each inside the grid and below SELECTABLE_BLOCKS (so the result
    holds at most 65,536 blocks); the ranges are merged before they are expanded, so the
    work is bounded whatever the text repeats. ``TraceError`` (exit 2) names the part."""
    fix = "write e.g. `--blocks 0`, `--blocks 0-15` or `--blocks 0,7,63`"
    from ..argcheck import RangeTextError, out_of_range, range_parts

    spans: list[tuple[int, int]] = []
    try:
        for lo, hi, part in range_parts(text, MAX_BLOCK_RANGES):
            if hi < lo or hi >= nblocks:
                raise TraceError(path, "--blocks", f"`{part}` is outside the grid's blocks 0..{nblocks - 1}",
                                 "give linear block indices inside the grid")
            if hi >= SELECTABLE_BLOCKS:
                raise TraceError(path, "--blocks", f"`{part}`: only blocks 0..{SELECTABLE_BLOCKS - 1:,} can be "
                                 "selected one by one", "choose blocks below that, or record every block")
            spans.append((lo, hi))
    except RangeTextError as e:
        if e.problem == "parts":
            raise TraceError(path, "--blocks", f"{e.count:,} blocks or ranges, over warpviz's limit of "
                             f"{MAX_BLOCK_RANGES}", "join neighbouring blocks into ranges (`--blocks 0-1023`)") from None
        if e.problem == "form":
            raise TraceError(path, "--blocks", f"`{e.part[:40]}` is not a block index or range", fix) from None
        raise TraceError(path, "--blocks", out_of_range("--blocks", e.part, 0, nblocks - 1),
                         "give linear block indices inside the grid") from None
    out: list[int] = []
    end = -1
    for lo, hi in sorted(spans):
        if hi > end:
            out.extend(range(max(lo, end + 1), hi + 1))
            end = hi
    return out


# ---------------------------------------------------------------------------- Nsight Compute

def plain_launch(launch, cubin: bytes, buffer: Path, name: str | None = None) -> dict:
    """One launch of the plain kernel for ``trace_ncu_driver``: its buffer contents (the
    launch file's fills) saved to ``buffer``, the cubin's kernel ``name`` (default
    ``launch.function``: a C++ kernel's PTX entry once resolved), grid, block and arguments."""
    import numpy as np

    from ..trace.record import host_buffer

    np.save(buffer, host_buffer(launch))
    return {"name": name or launch.function, "cubin": base64.b64encode(cubin).decode(),
            "buffer": str(buffer), "block": list(launch.block), "grid": list(launch.grid),
            "shared": launch.shared_bytes, "args": [a.as_dict() for a in launch.args],
            "offsets": launch.buffer_offsets(), "named": launch.named_offsets(),
            "tensormaps": {m.name: m.as_dict() for m in launch.tensormaps}}


def validate_counters(launch, build, blocks, metrics=None, cancelled=None) -> dict[str, int]:
    """Nsight Compute's ten metrics (or ``metrics``) on the plain kernel, same launch and buffers."""
    from .ncu import run_ncu

    with tempfile.TemporaryDirectory(prefix="warpviz-trace-ncu-") as tmp:
        spec = {"launches": [plain_launch(launch, build.cubin, Path(tmp) / "buffer.npy")]}
        kw = {"metrics": tuple(metrics)} if metrics else {}
        counters, log = run_ncu(spec, driver="viz.gpu.trace_ncu_driver", cancelled=cancelled, **kw)
    if not counters or counters[0] is None:
        tail = "\n".join(log.strip().splitlines()[-8:])
        raise RuntimeError(f"Nsight Compute did not profile {launch.kernel}:\n{tail}")
    return counters[0]


def other_counters(launch, build, blocks, counters=validate_counters, cancelled=None,
                   log=_stderr) -> dict[str, int] | None:
    """The counters of ``analysis.OTHER_METRICS`` (atomics, LDSM, STSM, LDGSTS), or None
    where this Nsight Compute cannot read them (they are outside the ten, so that is not
    an error)."""
    from .worker import Cancelled
    from ..trace.analysis import OTHER_METRIC_NAMES

    try:
        return counters(launch, build, blocks, list(OTHER_METRIC_NAMES), cancelled=cancelled)
    except Cancelled:
        raise
    except Exception as err:  # an unknown metric name, a profiler error: say so, carry on
        log(f"Nsight Compute did not read the atomic/LDSM/LDGSTS counters: {str(err)[:300]}")
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


# ---------------------------------------------------------------------------- failures

def locate_fault(launch, timeout_s: float = 120, child: str | None = None) -> str:
    """After a fault: run the fault-finding variant in a fresh GPU process and say which
    instruction and lanes left the launch's buffers (or were misaligned); "" if unknown."""
    from .worker import ProcessSession
    from ..trace.build import build_check
    from ..trace.record import request

    try:
        cubin, instrs = build_check(launch)
        session = ProcessSession(child=child)
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


def fault_message(launch, err, child: str | None = None) -> str:
    """The paragraph for a kernel that failed on the GPU (``KernelFault``)."""
    where = locate_fault(launch, child=child)
    return (f"{launch.path}: the kernel `{launch.kernel}` failed on the GPU: {err}. {where}Fix: check the "
            "kernel's indices against the [[arg]] counts" + ("" if where else
                                                              " (run it under compute-sanitizer to find the line)"))


class RecordingFailed(Exception):
    """A recording that could not be made: ``str(err)`` is the one paragraph the CLI prints
    (file, key or line, problem, fix)."""


def failure_message(err: BaseException, launch=None, child: str | None = None) -> str | None:
    """The CLI's paragraph for a failure of the pipeline, or None for an unexpected error."""
    from . import GpuUnavailable
    from ..toolchain.compile import CompileError
    from .runner import KernelFault

    if isinstance(err, TraceError):
        return str(err)
    if isinstance(err, GpuUnavailable):
        return f"cannot trace here: {err.reason}"
    if isinstance(err, KernelFault) and launch is not None:
        return fault_message(launch, err, child)
    if isinstance(err, CompileError):
        return str(err)
    return None


# ---------------------------------------------------------------------------- the pipeline

@dataclass
class Recording:
    """A recording made by ``record_trace``: the file written, its trace and analysis, and
    (when validated) Nsight Compute's counters and the comparison rows."""

    launch: object
    path: Path
    trace: object
    analysis: object
    complete: bool
    note: str
    guard: dict | None
    counters: dict | None = None
    other_counters: dict | None = None
    rows: list | None = None                  # viz.gpu.ncu.MetricRow, the ten
    other: list[dict] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)

    @property
    def match(self) -> bool | None:
        """All ten equal Nsight Compute (None: not validated)."""
        return None if self.rows is None else all(r.match for r in self.rows)

    def validation(self) -> dict | None:
        if self.rows is None:
            return None
        from ..trace.analysis import unrecorded_json

        # unrecorded: the memory instructions warpviz does not record that ran, the reason counters may differ
        return {"complete": self.complete, "rows": [r.as_dict() for r in self.rows], "match": self.match,
                "sass_guard": self.guard, "other": self.other, "sass_map": self.trace.header.get("sass_map"),
                "unrecorded": unrecorded_json(self.trace.header)}


def first_arch(launch) -> str:
    """The architecture a launch is built for before the GPU answers: a PTX module's own
    target (TraceError for a module whose header is wrong), else sm_90 (``ARCH``)."""
    from ..toolchain.compile import ARCH

    if not launch.ptx:
        return ARCH
    from ..trace import module
    from ..trace.build import compile_ptx

    try:
        return f"sm_{module.header(compile_ptx(launch)).sm}"
    except module.PtxModuleError as err:
        raise TraceError(launch.path, "ptx", err.problem, err.fix) from None


def check_out(launch, out: str | Path | None) -> Path:
    """Where the trace will be written (``out``, default ``NAME.wvtrace`` beside the launch
    file), checked before anything is compiled or run: a ``.wvtrace`` name (so that neither
    the launch file nor its source can be written over), in an existing folder, not an
    existing folder, pipe or device. Raises ``TraceError``."""
    import os
    import stat

    target = Path(out) if out else launch.path.with_name(f"{launch.name}.wvtrace")
    where = "--out" if out else ""
    if "\0" in str(target):
        raise TraceError(target, where, "the output path holds a NUL byte", "give a plain path")
    if not target.name.lower().endswith(".wvtrace"):
        raise TraceError(target, where, "a trace is written to a .wvtrace file", "give a name ending in .wvtrace")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise TraceError(target, where, f"the folder {folder} does not exist", "create it, or give another --out")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as err:
        raise TraceError(target, where, f"cannot write here: {err.strerror or err}", "give another --out") from None
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(target, where, "this is not a regular file (a folder, a pipe or a device)",
                         "give a .wvtrace file name")
    return target


def record_trace(launch, *, blocks: list[int] | None = None, validate: bool = False, out: str | Path | None = None,
                 session=None, counters=None, progress=None, cancelled=None, log=_stderr,
                 child: str | None = None) -> Recording:
    """Compile, count, record, (validate,) write and analyse ``launch`` (a ``viz.trace.launch.Launch``).

    ``session``: a ``viz.gpu.worker.ProcessSession`` to use and keep open (else one is
    started, with ``child``'s session class, and closed here). ``counters``: reads Nsight
    Compute's counters (default ``validate_counters``). ``out``: the ``.wvtrace`` (default
    beside the launch file). Raises TraceError, GpuUnavailable, KernelFault, CompileError
    (see ``failure_message``) or ``viz.gpu.worker.Cancelled``."""
    from .. import __version__
    from .ncu import compare
    from .runner import driver_version_string
    from .worker import Cancelled, ProcessSession
    from ..trace import record, tracefile
    from ..trace.analysis import analyze_trace
    from ..trace.build import build, sass_guard
    from ..trace.record import request

    out = check_out(launch, out)        # before the GPU process starts or nvcc runs
    counters_fn = counters or validate_counters
    at = _AT[bool(validate)]
    seen: list[str] = []

    def mark(name: str) -> None:
        if not seen or seen[-1] != name:
            seen.append(name)
        if progress is not None:
            progress(at[name], name)

    def stage(name: str) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled(f"recording {launch.name}: cancelled")
        mark(name)

    def sub(name: str, nxt: str):
        """progress inside a stage, from its start to the next stage's."""
        lo, hi = at[name], at[nxt] if nxt else 1.0
        return None if progress is None else (lambda f, _t="": progress(lo + (hi - lo) * min(max(f, 0.0), 1.0), name))

    stage("compile")
    # Built before the GPU process starts (for sm_90, or a PTX module's own target), so that
    # everything a launch file can get wrong (its kernel's name, its arguments, its PTX) is
    # reported first; built again below only for a GPU of another architecture.
    b = build(launch, first_arch(launch))
    own = session is None
    if own:
        session = ProcessSession(child=child, cancelled=cancelled)
    try:
        info = session.info
        cc = info.get("compute_capability", "9.0").replace(".", "")
        free = session.limits(cancelled=cancelled).free_bytes
        try:                        # a launch.py that names the largest buffer
            from ..trace.launch import check_fits
        except ImportError:
            check_fits = None
        if check_fits is not None:
            check_fits(launch, free, f"the GPU ({info.get('name', 'GPU 0')})")
        elif launch.buffer_bytes > free:
            raise TraceError(launch.path, "arg", f"the buffers need {launch.buffer_bytes / 2**20:,.0f} MiB but the GPU "
                             f"has {free / 2**20:,.0f} MiB free", "use smaller `count`s")
        if int("".join(c for c in b.arch if c.isdigit()) or 0) != int(cc or 0):
            b = build(launch, f"sm_{cc}")
        launch = dataclasses.replace(launch, entry=b.entry)     # the cubin's kernel is its PTX entry
        log(f"{len(b.instrs)} memory instruction(s) instrumented in {launch.source.name}"
            + (f" ({b.label})" if b.label and b.label != launch.kernel else ""))
        chosen = blocks
        parts: list = []                # the partial-trace note's parts (schema.PARTIAL_NOTES)
        max_records = record.MAX_RECORDS
        for _ in range(MAX_RETRIES):
            stage("count")
            res = session.trace_record(request(launch, b.instrumented_cubin, chosen, max_records),
                                       cancelled=cancelled, progress=lambda s: mark(s) if s in at else None)
            if res["executed"] <= res["capacity"]:
                break
            per_block = res["executed"] / (len(chosen) if chosen is not None else launch.blocks)
            fit = min(SELECTABLE_BLOCKS, max(1, int(max_records / max(per_block, 1) * 0.9)))
            base = chosen if chosen is not None else list(range(launch.blocks))
            if fit >= len(base):
                fit = max(1, len(base) // 2)
            chosen = base[:fit]
            parts = [("over-limit", {"executed": res["executed"], "limit": max_records, "blocks": blocks_text(chosen)})]
            log(partial_note(*parts))
        if "record" not in seen:
            stage("record")     # a child that does not report its stages
        if res["executed"] > res["capacity"]:
            parts = [("size-limit", {"recorded": res["capacity"], "executed": res["executed"]})]
        if res["executed"] != res["executed_again"]:
            parts.append(("runs-differ", {"counted": res["executed"], "recorded": res["executed_again"]}))
        note = partial_note(*parts)     # English; the app translates it (schema.note_parts)
        hw = other_hw = None
        if validate:
            stage("ncu")
            hw = counters_fn(launch, b, chosen, cancelled=cancelled)
            other_hw = other_counters(launch, b, chosen, counters_fn, cancelled, log)
        guard = sass_guard(b)
    finally:
        if own:
            session.close()
    stage("write")
    complete = chosen is None and res["executed"] <= res["capacity"] and res["executed"] == res["executed_again"]
    left_out: list[dict] = []
    sources = trace_sources(launch, b.instrs + list(getattr(b, "events", ()) or ()), left_out)
    header = {
        "title": launch.title, "name": launch.name, "kernel": launch.kernel, "notes": launch.notes,
        "entry": b.entry, "kernel_signature": b.label, "input": "ptx" if launch.ptx else "cuda",
        **({"instantiated": True} if b.instantiated else {}),
        **({"compare": launch.compare} if launch.compare else {}),
        "launch": {"block": list(launch.block), "grid": list(launch.grid), "shared_bytes": launch.shared_bytes,
                   "args": [a.as_dict() for a in launch.args]},
        "launch_file": launch.text, "launch_file_name": launch.path.name, "source_name": launch.source.name,
        "sources": sources, **({"sources_left_out": left_out} if left_out else {}), "gpu": info, "driver": driver_version_string() or info.get("driver"),
        "nvcc": b.nvcc, "arch": b.arch, "warpviz": __version__,
        "recorded_blocks": blocks_text(chosen), "complete": complete, "note": note,
        "instructions": [dict(i.as_dict(), **_where(i, launch, sources),
                              sass_predicated=_predicated(guard, i.id)) for i in b.instrs],
        "skip_regions": [{"ptx_line": r.line_no, "predicate": r.predicate, "instructions": list(r.ids)}
                         for r in b.regions],
        "sass_guard": guard, "ncu": hw, "ncu_other": other_hw,
    }
    rows, addr = res["header"], res["addr"]
    events = getattr(b, "events", None)          # cp.async commit/wait executions, unrecorded memory instructions
    if events is not None:
        from ..kinds.registry import unrecorded_of
        from ..trace.ptx import EVENT_BASE, UNRECORDED_KIND
        from ..trace.schema import set_unrecorded

        is_event = rows[:, 0] >= EVENT_BASE
        ran = {e.id: int((rows[is_event, 0] == e.id).sum()) for e in events}
        header["events"] = [dict(e.as_dict(), **_where(e, launch, sources), executed=ran[e.id])
                             for e in events if e.kind != UNRECORDED_KIND]
        set_unrecorded(header, [
            {"id": e.id, "ptx": e.ptx, "function": e.function, "opcode": e.opcode, "predicate": e.predicate,
             "line_no": e.line_no, "file": e.file, "line": e.line, **_where(e, launch, sources),
             "why": getattr(unrecorded_of(e.opcode), "why", ""), "executed": ran[e.id]}
            for e in events if e.kind == UNRECORDED_KIND])
        complete, note = bool(header["complete"]), header.get("note", note)
        rows, addr = rows[~is_event], addr[~is_event]
    # the rows come from a buffer the kernel could have written over: checked as a file is
    trace = tracefile.check(tracefile.from_records(header, rows, addr), out)
    trace = tracefile.check(_as_the_sass_runs(trace, b, log), out)
    tracefile.save(trace, out)
    trace.path = out
    stage("analyse")
    an = analyze_trace(trace, sub("analyse", ""), cancelled)
    rec = Recording(launch, out, trace, an, complete, note, guard, hw, other_hw, stages=seen)
    if hw is not None:
        rec.rows = compare(an.metrics, hw)
        rec.other = other_rows(an.other_metrics, other_hw)
    if progress is not None:
        progress(1.0, "analyse")
    return rec


def _as_the_sass_runs(trace, b, log):
    """The trace rewritten to what the plain kernel's SASS executes (``viz.trace.reconcile``):
    fused, split, removed and aggregated accesses; what is not certain is said on the
    instruction."""
    from ..trace.reconcile import apply, reconcile_build

    mapping = reconcile_build(b)
    for note in mapping.get("notes", []):
        log(f"SASS: {note}")
    return apply(trace, mapping)


def _source_text(launch) -> str:
    """The source's text, read as ``load_launch`` reads it (a ``Launch`` made without it)."""
    from ..trace.launch import MAX_PTX_BYTES, MAX_SOURCE_BYTES, read_text_file

    if launch.ptx:
        return read_text_file(launch.source, "PTX file", MAX_PTX_BYTES, report=(launch.path, "ptx"))
    return read_text_file(launch.source, "CUDA source", MAX_SOURCE_BYTES, report=(launch.path, "source"))


MAX_EXTRA_SOURCES = 32          # files besides the source that a trace carries (headers, a Triton kernel's .py)
# A trace is shared: besides the launch file's own source it carries only files the kernel was
# compiled from, by their extension (CUDA, C and C++ sources and headers; Python for Triton and
# Numba kernels), inside the launch file's folder, none hidden (a dot-file or a file in a dot-
# folder: ``.env``, ``.git/``), each of at most MAX_CARRIED_FILE_BYTES and all of them together at
# most MAX_CARRIED_BYTES. A PTX's ``.file`` lines (and a CUDA file's ``#line``) are the file's
# word, not the user's: whatever else they name is listed in the header's ``sources_left_out``
# with the reason, never read (docs/trace-format.md, "What a trace carries").
SOURCE_SUFFIXES = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".py")
MAX_CARRIED_FILE_BYTES = 1 << 20
MAX_CARRIED_BYTES = 8 << 20
MAX_LEFT_OUT = 64               # entries of sources_left_out (a module may name hundreds of headers)


def _not_carried(f: str, here: Path) -> tuple[str | None, Path | None]:
    """Why the file ``f`` (a name from line information) is not carried, or (None, its path)."""
    from ..trace.launch import inside_folder

    if "\0" in f:
        return "its name holds a NUL byte", None
    try:
        p = (here / f).resolve() if not Path(f).is_absolute() else Path(f).resolve()
    except (OSError, RuntimeError, ValueError):
        return "its path cannot be resolved", None
    if not inside_folder(p, here):
        return "outside the launch file's folder", None
    rel = p.relative_to(here).parts
    if any(part.startswith(".") for part in rel) or any(part.startswith(".") for part in Path(f).parts
                                                       if part not in (".", "..")):
        return "a hidden file or folder (its name starts with a dot): never carried", None
    if p.suffix.lower() not in SOURCE_SUFFIXES:
        return "not a source file by its extension (carried: " + " ".join(SOURCE_SUFFIXES) + ")", None
    try:
        st = p.stat()
    except OSError:
        return "does not exist", None
    if not p.is_file():
        return "not a regular file", None
    if st.st_size > MAX_CARRIED_FILE_BYTES:
        return f"{st.st_size:,} bytes, over the {MAX_CARRIED_FILE_BYTES >> 20} MiB a carried source may be", None
    return None, p


def trace_sources(launch, instrs, left_out: list | None = None) -> dict[str, str]:
    """{file name: text} the trace carries: the source (the CUDA file, or the PTX module),
    then the files the instructions' line information names that are source files inside
    the launch file's folder (a helper header, a Triton kernel's Python file: see
    SOURCE_SUFFIXES and the limits above), read with the source's checks, and the texts
    ``viz.api`` gave (``launch.extra_sources``), within the same limits. A file outside the
    folder, a hidden one or one of another kind is never read; ``left_out`` (a list) receives
    ``{"file": name, "why": reason}`` for each file named and not carried."""
    from ..errors import cut
    from ..trace.launch import read_text_file

    out = {str(launch.source.name): launch.source_text or _source_text(launch)}
    total = 0

    def leave(name: str, why: str) -> None:
        if left_out is not None and len(left_out) < MAX_LEFT_OUT and all(d["file"] != name for d in left_out):
            left_out.append({"file": cut(name, 300), "why": why})

    def room(name: str, size: int) -> bool:
        if len(out) > MAX_EXTRA_SOURCES:
            leave(name, f"the trace carries at most {MAX_EXTRA_SOURCES} files besides its source")
            return False
        if size > MAX_CARRIED_FILE_BYTES:
            leave(name, f"{size:,} bytes, over the {MAX_CARRIED_FILE_BYTES >> 20} MiB a carried source may be")
            return False
        if total + size > MAX_CARRIED_BYTES:
            leave(name, f"the carried sources would pass {MAX_CARRIED_BYTES >> 20} MiB in all")
            return False
        return True

    for name, text in (getattr(launch, "extra_sources", None) or {}).items():
        name = Path(str(name)).name
        if not isinstance(text, str) or name in out:
            continue
        if room(name, len(text.encode("utf-8", "surrogatepass"))):
            out[name] = text
            total += len(text.encode("utf-8", "surrogatepass"))
    try:
        here = launch.path.parent.resolve()
    except (OSError, RuntimeError):
        return out
    for f in sorted({i.file for i in instrs if i.file}):
        name = Path(f).name
        if name in out:
            continue
        why, p = _not_carried(f, here)
        if why is not None:
            leave(_rel(f, here), why)
            continue
        size = p.stat().st_size
        if not room(_rel(f, here), size):
            continue
        try:
            out[name] = read_text_file(p, "source", MAX_CARRIED_FILE_BYTES)
        except TraceError as err:
            leave(_rel(f, here), f"cannot be read as text ({cut(err.problem, 200)})")
            continue
        total += size
    return out


def _where(ins, launch, sources: dict[str, str]) -> dict:
    """An instruction's ``file`` and ``line`` for the trace: its source line where the trace
    carries that file; else, for a PTX module, its line in the PTX (carried as the source),
    with the line information the PTX gave kept as ``loc`` (``file.py:12``)."""
    file = _rel(ins.file, launch.path.parent) if ins.file else ""
    if file and Path(file).name in sources:
        return {"file": file}
    if launch.ptx:
        out = {"file": launch.source.name, "line": ins.line_no}
        if ins.file:
            out["loc"] = f"{Path(ins.file).name}:{ins.line}"
        return out
    return {"file": file}


def _rel(file: str, here: Path) -> str:
    """A source path relative to the launch file's folder (the trace travels), else as is. A
    relative name (a ``#line`` directive's, a PTX's ``.file``) is relative to that folder, as
    ``trace_sources`` reads it, never to warpviz's working folder."""
    try:
        base = here.resolve()
        return str((base / file).resolve().relative_to(base))
    except (ValueError, OSError, RuntimeError):
        return file


def _predicated(guard: dict | None, ins_id: int) -> bool | None:
    """Did ptxas predicate this shared load/store in the plain kernel? None: not known."""
    if not guard or guard.get("predicated") is None:
        return None
    return guard["predicated"].get(str(ins_id))


def save_copy(src: str | Path, dst: str | Path) -> Path:
    """Copy a trace file to ``dst`` atomically (a temporary file beside it, then a rename)."""
    import shutil

    from ..fileio import atomic_target

    src, dst = Path(src), Path(dst)
    if dst.exists() and dst.resolve() == src.resolve():
        return dst
    with atomic_target(dst) as tmp:
        shutil.copyfile(src, tmp)
    return dst


# ---------------------------------------------------------------------------- the panel's controller

def missing_tools(validate: bool) -> str | None:
    """Why a recording (with Nsight Compute when ``validate``) cannot run here, as far as the
    tools on the PATH say; None when nvcc, ptxas (and ncu) are there. The GPU and PyCUDA
    are the device probe's business (``viz.gpu.runner.probe``)."""
    from ..toolchain.compile import find_nvcc, find_tool
    from .ncu import find_ncu

    if not find_nvcc():
        return "nvcc (the CUDA compiler) is not installed or not on the PATH"
    if not find_tool("ptxas"):
        return "ptxas (the PTX assembler, part of the CUDA toolkit) is not installed"
    if validate and not find_ncu():
        return "Nsight Compute (ncu) is not installed or not on the PATH: Record trace works without it"
    return None


class Recorder:
    """The GPU panel's recordings, without Qt: load the launch file, run ``record_trace`` in
    a GPU child process kept between recordings (restarted after a fault or a cancel), and
    turn any failure into ``RecordingFailed`` with the CLI's paragraph.

    ``child``: the child's session class (tests replay a shipped trace); ``counters``:
    replaces Nsight Compute (tests)."""

    def __init__(self, child: str | None = None, counters=None):
        self.child = child
        self.counters = counters
        self._session = None
        self._lock = threading.Lock()

    def missing(self, validate: bool) -> str | None:
        return missing_tools(validate)

    def session(self, cancelled=None):
        from .worker import ProcessSession

        if self._session is None:
            self._session = ProcessSession(child=self.child, cancelled=cancelled)
        return self._session

    @property
    def pid(self) -> int | None:
        """The GPU child process's id while it runs."""
        return None if self._session is None else self._session.pid

    def record(self, launch_path: str | Path, *, validate: bool, out: str | Path, blocks=None,
               progress=None, cancelled=None, log=None) -> Recording:
        from .worker import Cancelled
        from ..trace.launch import load_launch

        launch = None
        notes: list[str] = []
        try:
            launch = load_launch(launch_path)
            with self._lock:            # one recording at a time; a cancelled one lets go first
                if progress is not None and self._session is None:
                    progress(0.0, "compile")     # starting the GPU process (1.5 s on the H100) is part of it
                return record_trace(launch, blocks=blocks, validate=validate, out=out,
                                    session=self.session(cancelled), counters=self.counters, progress=progress,
                                    cancelled=cancelled, log=log or notes.append, child=self.child)
        except Cancelled:
            raise
        except Exception as err:  # noqa: BLE001 - every failure is a paragraph for the panel
            text = failure_message(err, launch, self.child)
            if text is None:
                raise
            raise RecordingFailed(text) from err

    def close(self) -> None:
        """End the GPU child process. While a recording runs (its caller cancelled it and
        it is stopping) the process is killed instead of waiting for it."""
        s, self._session = self._session, None
        if s is None:
            return
        if self._lock.acquire(timeout=2.0):
            try:
                s.close()
            finally:
                self._lock.release()
        else:
            s._stop()


__all__ = ["MAX_BLOCK_RANGES", "STAGES", "trace_sources", "SOURCE_SUFFIXES", "MAX_CARRIED_FILE_BYTES", "MAX_CARRIED_BYTES", "Recording", "Recorder", "RecordingFailed", "record_trace", "check_out", "validate_counters",
           "other_counters", "other_rows", "locate_fault", "fault_message", "failure_message", "missing_tools",
           "blocks_text", "save_copy"]
