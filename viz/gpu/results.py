"""The measurements file: what ``warpviz bench --json`` writes and the app imports.

A versioned JSON document, so a file recorded on one machine (the shipped H100 file in
``assets/measurements/h100.json``) shows real numbers on a laptop without a GPU::

    {
      "format": "warpviz-measurements", "version": 1,
      "label": "where and when it was measured",
      "measured_at": "2026-11-23T10:00:00+00:00", "warpviz": "0.1.0",
      "device": {"name", "compute_capability", "sm_count", "clock_mhz", "driver", ...},
      "ceiling": {"memcpy_d2d": {"bytes", "gbps", "timing": {median_ms, ...}}},
      "scenarios": {NAME: {"title", "params", "launch", "model": {10 metrics},
                           "counters": {10 metrics} | null, "match": true | false | null,
                           "mismatches": [{metric, model, hardware}], "check": {status, detail},
                           "timing": {scale, median_ms, ..., gbps, ns_per_warp_instruction,
                                      fraction_of_memcpy, predicted: {ms, bound, ...}},
                           "error": "why it could not run" (only then)}},
      "kernels": {NAME: {"scenario", "counters", "match", "check", "timing"}},
      (version 2) every timed entry may add "bottleneck": what Nsight Compute measured on
      the timed launch itself (``viz.gpu.ncu.summarize``: DRAM bytes, L1/L2 hit rates,
      % of peak of DRAM / L2 / L1 / shared pipe / LSU, occupancy, registers, top stalls),
      and its timing "dram_bytes", "dram_gbps" (from those counters) and
      "fraction_of_memcpy" (only where DRAM ran at >= 50% of its peak, else null with
      "fraction_note" saying why); "predicted" carries the cost model's "terms" and
      "explain"; "resources" the compiled kernel's registers and shared memory.
      "sweeps": {NAME: {"param", "scenario", "points": [{"value", "label", "median_ms",
                                                        "predicted_ms", "model": {...}}]}},
      "traces": {NAME: {"trace": FILE.wvtrace, "launch_file", "kernel", "launch", "resources":
                        {registers, shared_bytes, flow}, "timing": {scale, median_ms, ...,
                        predicted: {ms, bound, terms, ...}}, "error" (only then)}}
    }

``traces`` (optional, any version: a file without it loads as before) holds traced launches
timed by ``warpviz bench --traces`` (``viz.gpu.tracebench``); the shipped H100 ones are in
their own file, ``assets/measurements/h100-traces.json``.

``load`` validates the structure and refuses a newer version with a clear message.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from .. import assets
from ..errors import WarpvizError
from ..engine import KIND_METRIC_NAMES, METRIC_NAMES

FORMAT = "warpviz-measurements"
VERSION = 2
STREAMING_PCT = 50.0   # DRAM % of peak from which "fraction of memcpy" is shown
SHIPPED = "h100.json"


class ResultsError(WarpvizError, ValueError):
    """A measurements file that cannot be used; the message names the file and the problem."""


def shipped_path() -> Path:
    return assets.measurements_dir() / SHIPPED


def _fail(source: str, problem: str):
    raise ResultsError(f"{source}: {problem}")


def _kinds_metrics() -> tuple[str, ...]:
    """The counters of the format-3 kinds (cp.async, atomics, TMA: ``viz.kinds``)."""
    from ..kinds import KIND_METRICS

    return KIND_METRICS


MAX_RESULTS_BYTES = 64 << 20   # a results file (the shipped H100 one: ~1 MB)
MAX_NODES = 2_000_000          # values in one results file, all levels together
MAX_ITEMS = 200_000            # entries of one object or list
MAX_STRING = 1_000_000         # characters of one string
MAX_NUMBER = 1e18              # the largest magnitude of a number (bytes of a GPU's memory: ~1e11)

# The value a key holds wherever it appears (types checked before a value reaches the table,
# the panel or the cost model): numbers (or null where nothing was measured), texts, yes/no.
_NUMBER_KEYS = re.compile(r"(?:.*_(?:ms|us|ns|pct|gbps|gbs|bytes|sectors|mhz|clk|bits|count|per_sm|per_thread|"
                          r"per_block|per_sample|of_memcpy|of_peak|instruction|instructions|wavefronts|"
                          r"conflicts|hit_pct)|ms|gbps|bytes|runs|attempts|spread|sm_count|registers|"
                          r"median_ms|predicted_ms|waves)")
_TEXT_KEYS = {"title", "label", "measured_at", "warpviz", "scenario", "kernel", "function", "file", "note",
              "detail", "status", "error", "param", "trace", "launch_file", "name", "compute_capability",
              "driver", "fraction_note", "explain"}
_FLAG_KEYS = {"match", "noisy"}
_OBJECT_KEYS = {"device", "ceiling", "scenarios", "kernels", "sweeps", "traces", "timing", "check", "resources",
                "bottleneck", "predicted", "throughput_pct", "model", "counters"}
_LIST_KEYS = {"mismatches", "points"}
_NAMED = {"scenarios", "kernels", "sweeps", "traces", "ceiling"}
_FREE = {"params", "launch", "scale", "mismatches", "sources", "terms", "model", "counters", "throughput_pct", "stalls", "cost_model",
         "state_after_memcpy", "cases", "explain", "top_stalls", "caveats"}


def _where(path: tuple) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[") or "the top level"


def _check_values(doc: Any, source: str) -> None:
    """Every value of the document, walked without recursion: sizes, finite numbers in range,
    and the type each known key holds (``_NUMBER_KEYS``...). ``ResultsError`` names the field.

    Each value to visit carries whether a key above it names a table of free names
    (``_FREE``), so that is not worked out again from its path at every value."""
    todo: list[tuple[tuple, Any, bool]] = [((), doc, False)]
    nodes = 0
    number_key = _NUMBER_KEYS.fullmatch
    while todo:
        path, x, free = todo.pop()
        nodes += 1
        if nodes > MAX_NODES:
            _fail(source, f"more than {MAX_NODES:,} values: not a results file warpviz wrote")
        key = path[-1] if path and isinstance(path[-1], str) else None
        if isinstance(x, bool) or x is None:
            if key in _FLAG_KEYS or x is None:
                continue
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            if not math.isfinite(x) or abs(x) > MAX_NUMBER:
                _fail(source, f"{_where(path)}: {x!r:.40} is not a finite number of at most {MAX_NUMBER:.0e}")
        elif isinstance(x, str):
            if len(x) > MAX_STRING:
                _fail(source, f"{_where(path)}: a text of {len(x):,} characters (at most {MAX_STRING:,})")
        elif isinstance(x, (dict, list)):
            if len(x) > MAX_ITEMS:
                _fail(source, f"{_where(path)}: {len(x):,} entries (at most {MAX_ITEMS:,})")
            items = x.items() if isinstance(x, dict) else enumerate(x)
            below = free or (bool(path) and path[-1] in _FREE)      # this value's key, for its children
            todo.extend((path + (k,), v, below) for k, v in items)
        if key is None or free or len(path) == 2 and path[0] in _NAMED:
            continue            # a name (scenarios.NAME), or a table of free names (params, model...)
        want = (dict if key in _OBJECT_KEYS else list if key in _LIST_KEYS else
                bool if key in _FLAG_KEYS else str if key in _TEXT_KEYS else
                (int, float) if number_key(key) else None)
        if want is None or x is None or isinstance(x, want) and not (want is not bool and isinstance(x, bool)):
            continue
        words = {dict: "an object", list: "a list", bool: "true or false", str: "a text"}.get(want, "a number")
        _fail(source, f"{_where(path)} must be {words}, not {type(x).__name__} {str(x)[:40]!r}")


def validate(doc: Any, source: str = "<measurements>") -> dict:
    """Check a parsed document completely (its structure, then every value: ``_check_values``)
    before any of it is used; return it unchanged."""
    if not isinstance(doc, dict):
        _fail(source, "not a measurements file (the top level must be a JSON object)")
    if doc.get("format") != FORMAT:
        _fail(source, f"not a warpviz measurements file (format is {doc.get('format')!r}, expected {FORMAT!r})")
    v = doc.get("version")
    if not isinstance(v, int) or v < 1:
        _fail(source, f"version must be a positive integer, not {v!r}")
    if v > VERSION:
        _fail(source, f"written by a newer warpviz (version {v}; this one reads {VERSION}): update warpviz")
    for key, kind in (("device", dict), ("scenarios", dict), ("label", str), ("measured_at", str)):
        if not isinstance(doc.get(key), kind):
            _fail(source, f"missing or malformed {key!r}")
    for name, entry in doc["scenarios"].items():
        if not isinstance(entry, dict):
            _fail(source, f"scenario {name!r} must be an object")
        for key in ("model", "counters"):
            m = entry.get(key)
            if m is None:
                continue
            if not isinstance(m, dict) or any(not isinstance(m.get(k, 0), int) for k in m):
                _fail(source, f"scenario {name!r}: {key} must map metric names to integers")
            unknown = set(m) - set(METRIC_NAMES) - set(KIND_METRIC_NAMES) - set(_kinds_metrics())
            if unknown:
                _fail(source, f"scenario {name!r}: unknown metric {sorted(unknown)[0]!r}")
        t = entry.get("timing")
        if t is not None and (not isinstance(t, dict) or not isinstance(t.get("median_ms"), (int, float))):
            _fail(source, f"scenario {name!r}: timing needs a numeric median_ms")
    for section in ("scenarios", "kernels"):
        for name, entry in (doc.get(section) or {}).items():
            b = entry.get("bottleneck") if isinstance(entry, dict) else None
            if b is not None and (not isinstance(b, dict) or not isinstance(b.get("throughput_pct", {}), dict)):
                _fail(source, f"{section[:-1]} {name!r}: bottleneck must be an object with a throughput_pct table")
    for key in ("kernels", "sweeps", "ceiling", "traces"):
        if key in doc and not isinstance(doc[key], dict):
            _fail(source, f"{key!r} must be an object")
    for name, entry in (doc.get("traces") or {}).items():
        if not isinstance(entry, dict):
            _fail(source, f"traced launch {name!r} must be an object")
        t = entry.get("timing")
        if t is not None and (not isinstance(t, dict) or not isinstance(t.get("median_ms"), (int, float))):
            _fail(source, f"traced launch {name!r}: timing needs a numeric median_ms")
    _check_values(doc, source)
    return doc


def loads(text: str, source: str = "<measurements>") -> dict:
    """A results document from JSON text (``fileio.parse_json``: nesting, integer digits and
    NaN refused before ``json`` sees them), validated completely."""
    from ..fileio import ReadRefused, parse_json

    try:
        doc = parse_json(text, source, "results file")
    except ReadRefused as err:
        raise ResultsError(str(err)) from None
    return validate(doc, source)


def load(path: str | Path | None = None) -> dict:
    """A measurements file (the shipped H100 file by default): a regular file of at most
    MAX_RESULTS_BYTES of UTF-8 JSON (``fileio.read_text_limited``: a FIFO or a device is
    refused before it is opened for reading), validated completely."""
    from ..fileio import ReadRefused, read_text_limited

    p = Path(path) if path else shipped_path()
    try:
        text = read_text_limited(p, MAX_RESULTS_BYTES, "results file")
    except ReadRefused as err:
        raise ResultsError(str(err)) from None
    return loads(text, str(p))


def dumps(doc: dict) -> str:
    validate(doc)
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def save(doc: dict, path: str | Path) -> Path:
    """Write atomically: a temporary file beside ``path``, then renamed over it."""
    from ..fileio import write_atomic

    return write_atomic(path, dumps(doc))


def new_document(device: dict, label: str, measured_at: str, version: str) -> dict:
    return {"format": FORMAT, "version": VERSION, "label": label, "measured_at": measured_at,
            "warpviz": version, "device": device, "ceiling": {}, "scenarios": {}, "kernels": {}, "sweeps": {}}


def apply_bottleneck(entry: dict, summary: dict | None, memcpy_gbps: float | None) -> None:
    """Attach a measured bottleneck (``viz.gpu.ncu.summarize`` of the timed launch) to a
    timed entry and fill its DRAM columns from the counters."""
    from .plan import gbps

    if not summary:
        return
    entry["bottleneck"] = summary
    t = entry.get("timing")
    if not isinstance(t, dict) or not t.get("median_ms"):
        return
    rd, wr = summary.get("dram_bytes_read"), summary.get("dram_bytes_write")
    if rd is None and wr is None:
        return
    dram = (rd or 0) + (wr or 0)
    t["dram_bytes"] = dram
    t["dram_gbps"] = round(gbps(dram, t["median_ms"]), 2)
    pct = (summary.get("throughput_pct") or {}).get("DRAM")
    t["dram_pct_of_peak"] = pct
    if memcpy_gbps and pct is not None and pct >= STREAMING_PCT:
        t["fraction_of_memcpy"] = round(t["dram_gbps"] / memcpy_gbps, 4)
        t.pop("fraction_note", None)
    else:
        t["fraction_of_memcpy"] = None
        t["fraction_note"] = (f"not shown: DRAM ran at {pct:.0f}% of its peak (the kernel does not stream DRAM)"
                              if pct is not None else "not shown: no DRAM throughput counter")


def mismatches(entry: dict) -> list[dict]:
    """Metrics where the counters differ from the model (an empty list when they agree)."""
    model, hw = entry.get("model") or {}, entry.get("counters")
    if hw is None:
        return []
    return [{"metric": m, "model": model.get(m, 0), "hardware": hw.get(m)} for m in METRIC_NAMES + KIND_METRIC_NAMES
            if (m in model or m in hw) and model.get(m, 0) != hw.get(m)]


__all__ = ["load", "loads", "save", "dumps", "validate", "new_document", "shipped_path", "ResultsError",
           "mismatches", "FORMAT", "VERSION", "apply_bottleneck", "STREAMING_PCT"]
