"""Where a cost-model prediction is outside what the model was checked on (no Qt, no GPU).

The cost model (``viz.gpu.costmodel``) was checked against timed launches on the H100: the
shipped ``bench`` entries (``h100.json``), the shipped traced launches (``h100-traces.json``)
and the held-out real kernels (``h100-heldout-*.json``), all in ``assets/measurements``. A
prediction for a launch unlike those is one number with less behind it; ``caveats`` says
so, beside it, in a few short messages. Each ``Caveat`` is an English template with its
arguments (the app translates the template, ``viz.i18n.tr``) and a machine key:

* ``untimed-mma``: the kernel executes tensor-core or ``tcgen05`` instructions (PTX
  ``wgmma``, ``mma``, ``wmma``, ``tcgen05``; SASS ``HGMMA``, ``HMMA``, ``IMMA``...), which the
  model has no term for: the prediction is the memory side only. Seen in the kernel's PTX
  (``untimed_ptx``: recorded as ``resources["untimed"]`` by ``tracebench.plain_build``, or
  read from a PTX module the trace carries) or its SASS profile (``viz.toolchain.sass``'s
  ``untimed`` counts).
* ``unrecorded-copies``: a traced kernel copies with TMA or bulk copies
  (``cp.async.bulk``, ``cp.reduce.async.bulk``; SASS ``UTMALDG``, ``UBLKCP``...), which a
  trace does not record: the prediction leaves their bytes out.
* ``scaled``: the prediction was made from a partial trace's first blocks and scaled to
  the grid (``tracemodel.coverage``).
* ``fused-shared`` / ``fused-shared-unchecked``: ptxas fused the trace's shared loads into
  wider ones (the trace's ``sass_map``) inside a loop whose instructions are mostly not
  memory instructions (the SASS profile: at least ``ARITH_SHARE`` of them): a wide shared
  load's wait under a stream of FMAs, which the latency chain does not see. The checked
  launches like it are counted from the shipped traces.
* ``bound-unchecked`` / ``bound-loose``: the term that bounds the prediction bounded fewer
  than ``MIN_CHECKED`` of the checked launches, or fewer than ``MIN_SHARE`` of those were
  within 20% of the measured time: the counts and the measured/predicted range are
  computed from the shipped results files (``checked_launches``).
* ``device``: the prediction is for a GPU other than the H100 and the H200, the ones it was checked on.
"""

from __future__ import annotations

import functools
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from ..toolchain.sass import SASS_COPIES, SASS_MMA, untimed_sass  # noqa: F401 - re-exported: the opcodes a SASS profile counts

WITHIN = 0.2            # "within 20%": |predicted - measured| <= WITHIN x measured
MIN_CHECKED = 5         # fewer checked launches bound by a term than this: say so
MIN_SHARE = 0.9         # fewer of them within 20% than this share: say so
ARITH_SHARE = 0.5       # a loop "mostly arithmetic": this share of its SASS instructions are not memory ones
CHECKED_ON = ("H100", "H200")     # the GPUs the shipped results were measured on (assets/measurements/)

TEMPLATES = {
    "untimed-mma": "the kernel executes {ops}, which the cost model does not time: the prediction is the "
                   "memory side only",
    "unrecorded-copies": "the kernel copies with {ops}, which a trace does not record: the prediction leaves "
                         "out the bytes they move",
    "scaled": "predicted from {used:,} of {grid:,} blocks, scaled by {scale:.4g}: the blocks not replayed are "
              "taken to do the same work",
    "fused-shared": "ptxas fused {n} shared loads into wider ones in a loop that is {pct:.0f}% arithmetic, whose "
                    "waits the model does not see; checked launches like it: {within} of {checked} within 20% "
                    "(measured/predicted {lo:.2f} to {hi:.2f})",
    "fused-shared-unchecked": "ptxas fused {n} shared loads into wider ones in a loop that is {pct:.0f}% "
                              "arithmetic, whose waits the model does not see: no checked launch is like it",
    "bound-unchecked": "the model's bound here is {bound}: none of the {total} launches it was checked on was "
                       "bound by it",
    "bound-loose": "the model's bound here is {bound}; checked launches bound by it: {within} of {checked} within "
                   "20% (measured/predicted {lo:.2f} to {hi:.2f})",
    "device": "the model was checked on the H100 and the H200 only; this prediction is for {device}",
}

# PTX opcodes the model does not time (tensor cores) or a trace does not record (bulk copies):
# (regular expression on the opcode, the family's key).
_PTX_UNTIMED = ((re.compile(r"^(wgmma\.mma_async|mma\.(sync|sp)|wmma\.(mma|load|store))\b"), "mma"),
                (re.compile(r"^tcgen05\.(mma|cp|ld|st|shift)\b"), "mma"),
                (re.compile(r"^cp\.(reduce\.)?async\.bulk\b"), "copies"))
_STATEMENT = re.compile(r"^(?:@!?%?[\w$]+\s+)?([a-z][\w.:]*)")
_MAX_OPS_SHOWN = 3


@dataclass(frozen=True)
class Caveat:
    """One message: ``TEMPLATES[key]`` filled with ``args``."""

    key: str
    args: dict = field(default_factory=dict)

    @property
    def template(self) -> str:
        return TEMPLATES[self.key]

    def text(self) -> str:
        return self.template.format(**self.args)

    def as_dict(self) -> dict:
        return {"key": self.key, "text": self.text(), "args": dict(self.args)}


def _fields(template: str) -> dict[str, str]:
    return {name: spec or "" for _, name, spec, _ in string.Formatter().parse(template) if name}


def from_dict(d) -> Caveat | None:
    """A caveat read back from a file (a results file's ``caveats``), or None where it is not
    one this version writes: the key must be known, its arguments exactly the template's,
    each a finite number or a short printable text, a number where the template formats one. The text
    shown is always made from the template, never taken from the file."""
    if not isinstance(d, dict) or d.get("key") not in TEMPLATES or not isinstance(d.get("args"), dict):
        return None
    want = _fields(TEMPLATES[d["key"]])
    args = d["args"]
    if set(args) != set(want):
        return None
    for k, spec in want.items():
        v = args[k]
        number = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        text = isinstance(v, str) and len(v) <= 200 and v.isprintable()
        if not (number or text) or spec and not number or "," in spec and not isinstance(v, int):
            return None
    return Caveat(d["key"], dict(args))


# ---------------------------------------------------------------------------- what the kernel executes


def untimed_ptx(ptx: str, entry: str | None = None) -> dict[str, int]:
    """{opcode family: static count} of the PTX instructions the cost model does not time or a
    trace does not record (``_PTX_UNTIMED``), in ``entry`` and the device functions it calls
    (the whole text when ``entry`` is None), keyed by the opcode's first words as written
    (``wgmma.mma_async``, ``mma.sync``, ``cp.async.bulk.tensor``). Comments are not code."""
    from ..trace import module

    if entry is not None:
        try:
            ptx = module.prune(ptx, entry)
        except (module.PtxModuleError, ValueError):
            return {}
    out: dict[str, int] = {}
    for line in module.code_lines(ptx):
        for stmt in line.split(";"):
            m = _STATEMENT.match(stmt.strip().lstrip("{").strip())
            if not m:
                continue
            op = m.group(1)
            for rx, _family in _PTX_UNTIMED:
                if rx.match(op):
                    words = op.split(".")
                    key = ".".join(words[:4 if op.startswith(("cp.async.bulk.tensor", "cp.reduce")) else
                                         3 if op.startswith("cp.async.bulk") else 2])
                    out[key] = out.get(key, 0) + 1
                    break
    return dict(sorted(out.items()))



def _counts(v) -> dict[str, int]:
    """A checked {name: count} table from a file (anything else: empty)."""
    if not isinstance(v, dict):
        return {}
    return {k: int(n) for k, n in v.items() if isinstance(k, str) and len(k) <= 40 and k.isprintable()
            and isinstance(n, int) and not isinstance(n, bool) and n > 0}


def _family(op: str) -> str | None:
    if op in SASS_MMA:
        return "mma"
    if op in SASS_COPIES:
        return "copies"
    for rx, family in _PTX_UNTIMED:
        if rx.match(op):
            return family
    return None


def _header_ptx(header: dict | None) -> dict[str, int]:
    """``untimed_ptx`` of the PTX module a trace carries (a PTX launch's source), cut to the
    traced kernel; nothing for a CUDA source (its PTX is not in the trace)."""
    if not isinstance(header, dict):
        return {}
    sources = header.get("sources")
    if not isinstance(sources, dict):
        return {}
    names = {i.get("function") for i in header.get("instructions") or () if isinstance(i, dict)}
    names |= {header.get("kernel")}
    names = [n for n in names if isinstance(n, str) and n]
    out: dict[str, int] = {}
    for text in sources.values():
        if not isinstance(text, str) or ".entry" not in text:
            continue
        for n in names:
            got = untimed_ptx(text, n)
            for k, v in got.items():
                out[k] = max(out.get(k, 0), v)
            if got:
                break
    return out


# PTX memory instructions a trace does not record (viz.trace instruments ld/st, atomics,
# cp.async, ldmatrix/stmatrix): a trace of a kernel that executes them lacks their traffic.
_UNRECORDED_MEMORY = re.compile(r"^(wmma\.(load|store)|cp\.(reduce\.)?async\.bulk)\b")


def unrecorded_memory(resources: dict | None = None, header: dict | None = None) -> dict[str, int]:
    """{PTX opcode family: static count} of the memory instructions the kernel executes that a
    trace does not record (``wmma.load``/``wmma.store``, bulk and TMA copies), from the compiled
    kernel's ``resources["untimed"]`` and the PTX a trace carries; empty for a fully traced
    kernel."""
    res = resources if isinstance(resources, dict) else {}
    ops = dict(_counts(res.get("untimed")))
    for k, v in _header_ptx(header).items():
        ops[k] = max(ops.get(k, 0), v)
    return {k: v for k, v in ops.items() if _UNRECORDED_MEMORY.match(k)}


def _ops_text(ops: dict[str, int]) -> str:
    shown = sorted(ops, key=lambda k: (-ops[k], k))[:_MAX_OPS_SHOWN]
    more = len(ops) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


# ---------------------------------------------------------------------------- fused shared loads


def fused_shared_loads(header: dict | None, resources: dict | None) -> tuple[int, float] | None:
    """(fused shared loads, the arithmetic share of the loop) where ptxas fused a traced
    kernel's shared loads into wider ones (the trace's ``sass_map.fused``) and the SASS
    profile has a loop with shared loads of which at least ``ARITH_SHARE`` of the
    instructions are not memory instructions; else None. Cheap and coarse: the profile does
    not say which loop a fused load is in, nor which instructions are FMAs."""
    if not isinstance(header, dict):
        return None
    ins = header.get("instructions")
    fused = (header.get("sass_map") or {}).get("fused") if isinstance(header.get("sass_map"), dict) else None
    if not isinstance(ins, list) or not isinstance(fused, list):
        return None
    n = sum(1 for i in fused if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(ins)
            and isinstance(ins[i], dict) and ins[i].get("kind") == "load" and ins[i].get("space") == "shared")
    if not n:
        return None
    prof = (resources or {}).get("sass") if isinstance(resources, dict) else None
    regions = prof.get("regions") if isinstance(prof, dict) else None
    if not isinstance(regions, list):
        return None
    best = None
    for r in regions:
        if not isinstance(r, dict) or not r.get("loop"):
            continue
        mem, total = _counts(r.get("memory")), r.get("instructions")
        if not mem.get("shared.load") or not isinstance(total, int) or total <= 0:
            continue
        share = max(0.0, 1.0 - sum(mem.values()) / total)
        if share >= ARITH_SHARE and (best is None or share > best):
            best = share
    return None if best is None else (n, best)


# ---------------------------------------------------------------------------- the checked launches


@dataclass(frozen=True)
class CheckedLaunch:
    """One timed launch the model was checked on, from a shipped results file."""

    source: str              # the results file's name
    name: str
    bound: str               # the term that bounds its prediction
    ratio: float             # measured / predicted
    within: bool             # |predicted - measured| <= WITHIN x measured
    resources: dict | None = None
    trace: Path | None = None    # the shipped trace it was predicted from, where it is one


def _rows(doc: dict, source: str, traces: dict[str, Path]) -> list[CheckedLaunch]:
    out = []
    for section in ("scenarios", "kernels", "traces"):
        for name, e in (doc.get(section) or {}).items():
            t = (e or {}).get("timing") if isinstance(e, dict) else None
            p = (t or {}).get("predicted") if isinstance(t, dict) else None
            if not isinstance(p, dict):
                continue
            m, ms, bound = t.get("median_ms"), p.get("ms"), p.get("bound")
            if not all(isinstance(v, (int, float)) and v > 0 for v in (m, ms)) or not isinstance(bound, str):
                continue
            res = e.get("resources") if section == "traces" else None
            tp = traces.get(e.get("trace")) if section == "traces" and source == _TRACES_FILE else None
            out.append(CheckedLaunch(source, name, bound, m / ms, abs(ms - m) <= WITHIN * m,
                                     res if isinstance(res, dict) else None, tp))
    return out


_TRACES_FILE = "h100-traces.json"


def checked_files(directory: Path | None = None) -> list[Path]:
    """The shipped results files the model was checked on: ``h100.json``, the traced launches
    and every held-out set."""
    from .. import assets

    d = Path(directory) if directory is not None else assets.measurements_dir()
    return [p for p in [d / "h100.json", d / _TRACES_FILE, *sorted(d.glob("h100-heldout-*.json"))] if p.is_file()]


@functools.lru_cache(maxsize=4)
def checked_launches(directory: Path | None = None) -> tuple[CheckedLaunch, ...]:
    """Every timed and predicted launch of the shipped results files (``checked_files``)."""
    from ..trace import tracefile
    from . import results

    traces = {p.name: p for p in tracefile.shipped()}
    out: list[CheckedLaunch] = []
    for path in checked_files(directory):
        try:
            doc = results.load(path)
        except results.ResultsError:
            continue
        out += _rows(doc, path.name, traces)
    return tuple(out)


@functools.lru_cache(maxsize=256)
def _shipped_header(path: Path) -> dict | None:
    from ..trace import TraceError, tracefile

    try:
        return tracefile.read_header(path)
    except (TraceError, OSError):
        return None


def _range(rows) -> dict:
    r = [x.ratio for x in rows]
    return {"lo": round(min(r), 2), "hi": round(max(r), 2)}


# ---------------------------------------------------------------------------- the caveats


def _get(pred, key):
    return pred.get(key) if isinstance(pred, dict) else getattr(pred, key, None)


def caveats(prediction, *, resources: dict | None = None, header: dict | None = None, coverage=None,
            device: str | None = None, traced: bool = True, checked=None) -> list[Caveat]:
    """The caveats of one prediction (module docstring).

    ``prediction``: a ``costmodel.Prediction`` or its ``as_dict()`` (a results file's
    ``predicted``; its ``coverage``, written by ``tracebench.entry_prediction`` for a scaled
    trace, is read). ``resources``: the compiled kernel's (``untimed`` PTX counts, the SASS
    profile). ``header``: the header of the trace it was predicted from. ``coverage``: a
    ``tracemodel.Coverage`` (or its dict). ``device``: the GPU's name. ``traced``: a traced
    launch (False: a scenario or ``kernels/`` entry, whose TMA loads the model does time).
    ``checked``: the checked launches (``checked_launches()`` when None)."""
    out: list[Caveat] = []
    res = resources if isinstance(resources, dict) else {}
    ops = dict(_counts(res.get("untimed")))
    sass = res.get("sass")
    for k, v in _counts(sass.get("untimed") if isinstance(sass, dict) else None).items():
        ops[k] = max(ops.get(k, 0), v)
    for k, v in _header_ptx(header).items():
        ops[k] = max(ops.get(k, 0), v)
    mma = {k: v for k, v in ops.items() if _family(k) == "mma"}
    copies = {k: v for k, v in ops.items() if _family(k) == "copies"}
    if mma:
        out.append(Caveat("untimed-mma", {"ops": _ops_text(mma)}))
    if copies and traced:
        out.append(Caveat("unrecorded-copies", {"ops": _ops_text(copies)}))
    cov = coverage if coverage is not None else _get(prediction, "coverage")
    if cov is not None:
        used, grid = _get(cov, "used_blocks"), _get(cov, "grid_blocks")
        if all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (used, grid)) and used < grid:
            out.append(Caveat("scaled", {"used": used, "grid": grid, "scale": round(grid / used, 4)}))
    rows = checked_launches() if checked is None else tuple(checked)
    fused = fused_shared_loads(header, res) if traced else None
    if fused is not None:
        like = [r for r in rows if r.trace is not None and fused_shared_loads(_shipped_header(r.trace), r.resources)]
        args = {"n": fused[0], "pct": round(100 * fused[1])}
        if like:
            out.append(Caveat("fused-shared", dict(args, checked=len(like), within=sum(r.within for r in like),
                                                   **_range(like))))
        else:
            out.append(Caveat("fused-shared-unchecked", args))
    bound = _get(prediction, "bound")
    if isinstance(bound, str) and bound and rows:
        same = [r for r in rows if r.bound == bound]
        if not same:
            out.append(Caveat("bound-unchecked", {"bound": bound, "total": len(rows)}))
        else:
            ok = sum(r.within for r in same)
            if len(same) < MIN_CHECKED or ok < MIN_SHARE * len(same):
                out.append(Caveat("bound-loose", {"bound": bound, "checked": len(same), "within": ok, **_range(same)}))
    if isinstance(device, str) and device and not any(g in device for g in CHECKED_ON):
        out.append(Caveat("device", {"device": device[:80]}))
    return out


def entry_caveats(entry: dict, header: dict | None = None, device: str | None = None, traced: bool = True,
                  checked=None) -> list[Caveat]:
    """The caveats of a results file's entry (a traced launch's ``timing.predicted`` or
    ``dry_run.predicted``, a bench entry's ``timing.predicted``) with its recorded resources;
    none where it has no prediction."""
    if not isinstance(entry, dict):
        return []
    t = entry.get("timing") if isinstance(entry.get("timing"), dict) else {}
    d = entry.get("dry_run") if isinstance(entry.get("dry_run"), dict) else {}
    p = t.get("predicted") or d.get("predicted")
    if not isinstance(p, dict):
        return []
    res = entry.get("resources") if isinstance(entry.get("resources"), dict) else t.get("resources")
    return caveats(p, resources=res if isinstance(res, dict) else None, header=header, device=device,
                   traced=traced, checked=checked)


__all__ = ["Caveat", "TEMPLATES", "caveats", "entry_caveats", "from_dict", "untimed_ptx", "untimed_sass", "unrecorded_memory",
           "fused_shared_loads", "checked_launches", "checked_files", "CheckedLaunch", "WITHIN", "MIN_CHECKED",
           "MIN_SHARE", "ARITH_SHARE"]
