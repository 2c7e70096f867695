"""What the GPU panel says, without Qt: the names of the cost model's bounds and terms, of the
recording's stages and of Nsight Compute's counters outside the ten; the texts of a prediction,
a measured bottleneck and a traced launch's timing; where the app writes its recordings.
``viz.app.gpu_panel`` shows them (and re-exports every name).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..i18n import language, sep, tr
from ..kinds.registry import counter_labels


# What limits the cost model's time (viz.gpu.costmodel.Prediction.bound), as shown.
BOUND_NAMES = {"DRAM": "DRAM", "L1": "L1", "shared": "shared memory", "issue": "instruction issue"}


# The recording's stages (viz.gpu.trace_pipeline.STAGES), as the progress bar names them.
STAGE_LABELS = {"compile": "compiling and instrumenting", "count": "counting run", "record": "recording run",
                "ncu": "Nsight Compute on the plain kernel", "write": "writing the trace", "analyse": "analysing"}


# Nsight Compute's counters outside the ten (viz.trace.analysis.OTHER_METRICS), as the table
# names them: each kind's TraceForm.counters (viz.kinds.registry).
OTHER_LABELS = counter_labels()


def recordings_dir() -> Path:
    """Where the app writes the traces it records (the user data folder's ``traces``)."""
    from . import settings

    return settings.data_subdir("traces")     # a private folder this session when it cannot be made


def unique_recording_path(name: str) -> Path:
    d = recordings_dir()
    path, k = d / f"{name}.wvtrace", 2
    while path.exists():
        path, k = d / f"{name}-{k}.wvtrace", k + 1
    return path


def bound_name(name: str) -> str:
    """The cost model's limit in words: kept as the model names it in English, translated otherwise."""
    return name if language() == "en" else tr(BOUND_NAMES.get(name, name))


# The cost model's terms (viz.gpu.costmodel.Term.name) and Nsight Compute's units
# (viz.gpu.ncu.THROUGHPUT_UNITS), as shown.
TERM_NAMES = {"DRAM": "DRAM", "L2": "L2", "L1": "L1", "shared": "shared memory", "LSU issue": "LSU issue",
              "block launches": "block launches", "latency": "latency", "issue": "instruction issue",
              "shared pipe": "shared pipe", "L1 data": "L1 data", "TMA": "TMA box copies"}


def _term(name: str) -> str:
    return name if language() == "en" else tr(TERM_NAMES.get(name, name))


# Nsight Compute's stall reasons (viz.gpu.ncu.STALL_REASONS, and ``no_instruction`` as the
# H100's ncu names it), as the GPU panel names them in a translation: English keeps
# Nsight Compute's own names (long_scoreboard), as its reports print them.
STALL_WORDS = {r: f"stall: {r}" for r in (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "no_instructions", "not_selected",
    "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")}


def _stall(reason: str) -> str:
    return reason if language() == "en" or reason not in STALL_WORDS else tr(STALL_WORDS[reason])


def caveat_lines(e: dict | None, header: dict | None = None, device: str | None = None,
                 traced: bool = True) -> list[str]:
    """The caveats of an entry's prediction (``viz.gpu.caveats.entry_caveats``: computed from
    its prediction and resources and the open trace's ``header``, never read from the file),
    one line each, translated."""
    from ..gpu.front import entry_caveats

    try:
        got = entry_caveats(e or {}, header, device, traced)
    except (TypeError, ValueError, KeyError, AttributeError):    # a malformed entry: no caveat, not a crash
        return []
    out = []
    for c in got:
        args = dict(c.args)
        if "bound" in args:
            args["bound"] = _term(args["bound"])
        out.append(tr("Caveat: {text}", text=tr(c.template, **args)))
    return out


def bottleneck_text(e: dict | None, device: str | None = None) -> str:
    """Two lines: what bounds the cost model's prediction (and, under it, where the model is
    outside what it was checked on: ``caveat_lines``), and what Nsight Compute measured on
    the timed launch (the busiest unit as % of its peak, hit rates, occupancy, stalls)."""
    t = (e or {}).get("timing") or {}
    p = t.get("predicted") or {}
    lines = []
    if p.get("terms"):
        terms = sorted(p["terms"], key=lambda x: -x["ms"])
        nxt = sep(", ").join(tr("{name} {ms:.4f} ms", name=_term(x["name"]), ms=x["ms"]) for x in terms[1:3])
        lines.append(tr("Predicted: {bound}-bound ({b:.4f} ms of {ms:.4f} ms); next: {next}",
                        bound=_term(p["bound"]), b=p.get("bound_ms", terms[0]["ms"]), ms=p["ms"], next=nxt))
    elif p:
        lines.append(tr("Predicted: {bound}-bound ({ms:.4f} ms)", bound=_term(p.get("bound", "")), ms=p.get("ms", 0)))
    if p:
        lines += caveat_lines(e, None, device, traced=False)
    measured = measured_bottleneck_text(e)
    if measured:
        lines.append(measured)
    elif p:
        lines.append(tr("measured: no Nsight Compute bottleneck in this results file (warpviz bench records it "
                        "where ncu can read the GPU's counters)"))
    if t and t.get("fraction_of_memcpy") is None and "fraction_note" in t:
        pct = t.get("dram_pct_of_peak")
        lines.append(tr("Fraction of cudaMemcpy not shown: DRAM ran at {pct:.0f}% of its peak, so this kernel does "
                        "not stream DRAM", pct=pct) if pct is not None else
                     tr("Fraction of cudaMemcpy not shown: it needs the DRAM counters of the timed launch"))
    return "\n".join(lines)


def measured_bottleneck_text(e: dict | None) -> str:
    """What Nsight Compute measured on the timed launch (the busiest unit as % of its peak, hit
    rates, DRAM bytes, occupancy, stalls), or "" when the entry has no bottleneck."""
    b = (e or {}).get("bottleneck")
    if b and b.get("bound"):
        thr = b.get("throughput_pct") or {}
        others = sep(", ").join(tr("{unit} {pct:.0f}%", unit=_term(u), pct=v)
                                for u, v in sorted(thr.items(), key=lambda kv: -kv[1]) if u != b["bound"]["unit"])
        parts = [tr("measured: {unit} at {pct:.0f}% of peak ({others})", unit=_term(b["bound"]["unit"]),
                    pct=b["bound"]["pct_of_peak"], others=others)]
        if b.get("l2_hit_pct") is not None or b.get("l1_hit_pct") is not None:
            parts.append(tr("L1 hits {l1}, L2 hits {l2}", l1=_pct(b.get("l1_hit_pct")), l2=_pct(b.get("l2_hit_pct"))))
        if b.get("dram_bytes_read") is not None:
            parts.append(tr("DRAM {mb:,.0f} MB", mb=((b.get("dram_bytes_read") or 0)
                                                     + (b.get("dram_bytes_write") or 0)) / 1e6))
        if b.get("achieved_occupancy_pct") is not None:
            parts.append(tr("occupancy {pct:.0f}%", pct=b["achieved_occupancy_pct"])
                         + (tr(" ({regs} registers per thread)", regs=b["registers_per_thread"])
                            if b.get("registers_per_thread") else ""))
        if b.get("stalls"):
            parts.append(tr("top stalls: {stalls}", stalls=sep(", ").join(
                f"{_stall(x['reason'])} {100 * (x.get('share') or 0):.0f}%" for x in b["stalls"])))
        return sep("; ").join(parts)
    return ""


def trace_timing_text(e: dict | None, where: str = "", header: dict | None = None, device: str | None = None) -> str:
    """A traced launch's timing (``warpviz bench --traces``), in microseconds: the measured
    median and spread, the cost model's prediction with its bound and the next terms, its
    caveats (``caveat_lines``, with the open trace's ``header``), and what Nsight Compute
    measured on the same launch."""
    if e is None:
        return tr("No timing of this launch: `warpviz bench --traces` times a trace's launch on a GPU, "
                  "as bench times a kernel.")
    if e.get("error"):
        return tr("{where}: {error}", where=where, error=e["error"])
    t = e.get("timing") or {}
    if not t:
        return ""
    lines = [tr("Timed launch ({where}): median {us:.2f} µs over {n} runs (spread {sp:.1f}%{noisy}), {sets} buffer "
                "sets holding the launch file's data", where=where, us=1e3 * t["median_ms"], n=t.get("runs", 0),
                sp=100 * t.get("spread", 0), noisy=tr(", noisy") if t.get("noisy") else "",
                sets=(t.get("scale") or {}).get("buffer_sets", 1))]
    p = t.get("predicted") or {}
    if p.get("terms"):
        terms = sorted(p["terms"], key=lambda x: -x["ms"])
        nxt = sep(", ").join(tr("{name} {us:.2f} µs", name=_term(x["name"]), us=1e3 * x["ms"]) for x in terms[1:3])
        lines.append(tr("Predicted: {us:.2f} µs = launch overhead {over:.2f} µs + {bound}-bound {b:.2f} µs (next: "
                        "{next}); measured/predicted {r:.2f}", us=1e3 * p["ms"], over=1e3 * p.get("overhead_ms", 0),
                        bound=_term(p["bound"]), b=1e3 * p.get("bound_ms", terms[0]["ms"]), next=nxt,
                        r=t["median_ms"] / p["ms"] if p.get("ms") else 0))
    if p:
        lines += caveat_lines(e, header, device)
    elif t.get("predicted_error"):      # the model said it cannot predict this launch, and why
        lines.append(tr("No prediction: {why}", why=str(t["predicted_error"]).removeprefix("TraceError: ")))
    measured = measured_bottleneck_text(e)
    if measured:
        lines.append(measured)
    return "\n".join(lines)


def partial_text(note: str) -> str:
    """A partial trace's note (the header's ``note``: ``viz.trace.schema.PARTIAL_NOTES`` filled
    in by the recorder), in the language of the moment: each part's template translated and
    filled with its values; a note in no known form (another version's) as it is."""
    from ..trace.schema import PARTIAL_NOTES, note_parts

    parts = note_parts(note)
    if parts is None or language() == "en":
        return note if isinstance(note, str) else ""
    return sep("; ").join(tr(PARTIAL_NOTES[key], **values) for key, values in parts)


def unrecorded_text(header: dict) -> str:
    """The Figures panel's banner for a trace whose kernel ran memory instructions no kind
    records (``viz.trace.analysis.unrecorded_json``): how many, how often, and each one's PTX
    line, source line, text and executions, in the language of the moment; "" where none ran
    or the trace does not say (an older trace)."""
    from ..errors import safe_text
    from ..trace.analysis import unrecorded_json

    ran = unrecorded_json(header) or []
    if not ran:
        return ""
    lines = [tr("Not recorded: the kernel ran {n} memory instructions that warpviz does not record, "
                "{executed} warp-level executions; their traffic is in no figure here (Nsight Compute counts it).",
                n=len(ran), executed=f"{sum(d['executed'] for d in ran):,}")]
    for d in ran[:8]:          # the file's words: escaped and cut (viz.errors.safe_text)
        where = f"{safe_text(str(d['file']).rsplit('/', 1)[-1], 120)}:{d['line']}" if d["line"] else \
            tr("no source line")
        lines.append(tr("PTX line {ptx_line} ({where}): {instruction}, executed {executed} times",
                        ptx_line=d["ptx_line"], where=where, instruction=safe_text(d["instruction"], 160),
                        executed=f"{d['executed']:,}"))
    if len(ran) > 8:
        lines.append(tr("and {n} more", n=len(ran) - 8))
    return "\n".join(lines)


def _pct(v) -> str:
    return "-" if v is None else f"{v:.0f}%"


def kernel_line(lines: list[str], function: str) -> int:
    """The 1-based line where ``function`` is defined in a kernels/ file: its ``__global__``
    definition, else the macro line that defines it (``TRANSPOSE(transpose_tile_xor, ...)``),
    else its first mention; 1 if absent."""
    fn = re.escape(function)
    word = re.compile(rf"\b{fn}\b")
    for pattern in (rf"__global__.*\b{fn}\s*\(", rf"^\s*[A-Z_][A-Z0-9_]*\(\s*{fn}\s*,"):
        rx = re.compile(pattern)
        for n, ln in enumerate(lines, 1):
            if rx.search(ln):
                return n
    return next((n for n, ln in enumerate(lines, 1) if word.search(ln)), 1)


def dims_text(d) -> str:
    d = list(d)
    while len(d) > 1 and d[-1] == 1:
        d.pop()
    return " × ".join(str(x) for x in d)


def num_text(v) -> str:
    return "" if v is None else f"{v:,}"


def gpu_reason(why) -> str:
    """Why there is no GPU run (a ``viz.gpu.GpuUnavailable``, or a text) in the language of the
    moment: warpviz's own sentence (the error's ``template``) translated, with a driver's or a
    tool's own words (its ``fields``) kept as they printed them; a text as it is."""
    from ..gpu.front import GpuUnavailable

    if not isinstance(why, GpuUnavailable):
        return why if isinstance(why, str) else str(why)
    return why.reason if language() == "en" else tr(why.template, **why.fields)


# ---------------------------------------------------------------------- the chart and imported files

def time_unit(largest_ms: float) -> tuple[float, str]:
    """(factor from ms, unit) for a chart whose largest time is ``largest_ms``: ns below a
    microsecond, µs below a millisecond, else ms, so the ticks read 0 to a few hundred in the
    unit the axis names (pyqtgraph's own SI prefix, "(ms) (x0.001)", is turned off)."""
    if not largest_ms or largest_ms != largest_ms or largest_ms >= 1.0:
        return 1.0, "ms"
    if largest_ms >= 1e-3:
        return 1e3, "µs"
    return 1e6, "ns"


def _what_of(doc: dict) -> str:
    for key in ("what", "about", "label"):
        text = doc.get(key)
        if isinstance(text, str) and text.strip():
            text = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())   # no control codes
            return text if len(text) <= 220 else text[:219].rstrip() + "…"
    return ""


def not_results_text(path: str | Path, problem: str) -> str:
    """Why ``path`` cannot be imported as measurements, saying what the file is when it is one
    of warpviz's other JSON records (a device probe or counter record: ``what`` / ``about``
    but no ``"format": "warpviz-measurements"``); else the loader's own ``problem``."""
    from ..fileio import ReadRefused, parse_json, read_text_limited
    from ..gpu.front import results_limits

    FORMAT, MAX_RESULTS_BYTES = results_limits()

    name = Path(path).name
    try:
        doc = parse_json(read_text_limited(path, MAX_RESULTS_BYTES, "results file"), path, "results file")
    except (ReadRefused, OSError, ValueError):
        return problem
    if not isinstance(doc, dict) or doc.get("format") == FORMAT:
        return problem           # a results file with a fault: the loader's paragraph names the field
    what = _what_of(doc)
    if not what:
        return problem
    return tr("{file} is not a results file: it is a record of device probes or counters for warpviz's own "
              "checks (it says: \"{what}\"). It has no \"format\": \"{format}\", so it has no timed scenarios "
              "to show. Import a results file instead, such as h100.json (the shipped measurements) or one "
              "written by warpviz bench --all --out FILE.", file=name, what=what, format=FORMAT)


def measured_names(doc: dict | None) -> tuple[list[str], list[str]]:
    """(scenarios with a timing, traced launches with a timing) of a results document."""
    doc = doc or {}
    scen = [n for n, e in (doc.get("scenarios") or {}).items()
            if isinstance(e, dict) and isinstance(e.get("timing"), dict)]
    traced = [n for n, e in (doc.get("traces") or {}).items()
              if isinstance(e, dict) and isinstance(e.get("timing"), dict)]
    return sorted(scen), sorted(traced)
