"""Hardware counters: run kernels under Nsight Compute and compare with the model.

``ncu --metrics <the ten metrics> --csv`` profiles a small driver process
(``python -m viz.gpu.ncu_driver SPEC``) that loads each cubin and launches it once at
the scenario's own launch (R = 1), with distinct kernel names so many scenarios share
one ncu session. The CSV is parsed here; nothing in this module imports PyCUDA.
"""

from __future__ import annotations

import csv
import functools
import glob
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..engine import METRIC_NAMES
from . import GpuUnavailable

NCU_TIMEOUT_S = 1800


def find_ncu() -> str | None:
    from ..toolchain.compile import find_tool

    tool = find_tool("ncu")
    if tool:
        return tool
    for pattern in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/NVIDIA-Nsight-Compute*/ncu"):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


@dataclass(frozen=True)
class MetricRow:
    metric: str
    model: int
    hardware: int | None

    @property
    def match(self) -> bool:
        return self.hardware is not None and self.model == self.hardware

    def as_dict(self) -> dict:
        return {"metric": self.metric, "model": self.model, "hardware": self.hardware, "match": self.match}


def compare(model: dict[str, int], hardware: dict[str, int] | None) -> list[MetricRow]:
    """One row per contract metric, then one per further metric the model counts (an access
    kind's own counter, e.g. ``smsp__inst_executed_op_ldsm.sum``): the model's total and the
    counter's."""
    hw = hardware or {}
    names = list(METRIC_NAMES) + [m for m in model if m not in METRIC_NAMES]
    return [MetricRow(m, int(model.get(m, 0)), hw.get(m)) for m in names]


def extra_metrics(models: list[dict[str, int]]) -> tuple[str, ...]:
    """The metrics beyond the contract's ten that any of these model totals counts: ncu must
    be asked for them too (only then: ncu refuses a metric the GPU does not have)."""
    return tuple(dict.fromkeys(m for model in models for m in model if m not in METRIC_NAMES))


def _number(text: str) -> int | None:
    t = text.strip().replace(",", "").replace("\u202f", "")
    if not t or t.lower() in ("n/a", "nan"):
        return None
    try:
        return int(round(float(t)))
    except ValueError:
        return None


def parse_launches(text: str) -> list[tuple[str, dict[str, int]]]:
    """ncu's ``--csv`` details output -> [(kernel name, {metric: value})], one per profiled
    launch, in launch order (ncu's ID column)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    by_id: dict[int, tuple[str, dict[str, int]]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        name = row.get("Kernel Name") or row.get("Function Name") or ""
        metric = row.get("Metric Name")
        if not name or not metric:
            continue
        try:
            launch_id = int(row.get("ID", "0"))
        except ValueError:
            continue
        name = re.sub(r"\(.*\)$", "", name.strip())
        entry = by_id.setdefault(launch_id, (name, {}))
        value = _number(row.get("Metric Value", ""))
        if value is not None:
            entry[1][metric] = value
    return [by_id[k] for k in sorted(by_id)]


def parse_csv(text: str) -> dict[str, dict[str, int]]:
    """{kernel name: metrics} for output where every launch has its own kernel name."""
    return {name: m for name, m in parse_launches(text) if m}


def same_kernel(entry: str, printed: str) -> bool:
    """Whether ncu's name of a profiled kernel (``--kernel-name-base function``) is the
    launch's PTX entry: the same text, or, for a C++ kernel, whose entry is mangled
    (``_Z13MatrixMulCUDAILi16EEvPfS0_S0_ii``) while ncu prints it demangled
    (``MatrixMulCUDA<16>``, ``tiles::transpose_padded<float, 32, 8>``), the last name of
    the printed one, outside its template arguments, as the mangled entry spells it."""
    if entry == printed:
        return True
    if not entry.startswith("_Z"):
        return False
    base = printed.split("<", 1)[0].split("(", 1)[0].rsplit("::", 1)[-1].strip()
    return bool(base) and f"{len(base)}{base}" in entry


def match_launches(expected: list[str], profiled: list[tuple[str, dict]]) -> list[dict | None]:
    """The counters of each expected launch (by kernel name, in order). A launch that
    failed and was not profiled gets None; the ones after it still line up."""
    out: list[dict | None] = []
    k = 0
    for name in expected:
        j = k
        while j < len(profiled) and not same_kernel(name, profiled[j][0]):
            j += 1
        if j < len(profiled):
            out.append(profiled[j][1])
            k = j + 1
        else:
            out.append(None)
    return out


def explain_failure(text: str, returncode: int) -> GpuUnavailable | None:
    """The exact reason ncu read nothing, when it is one the user must know."""
    if "ERR_NVGPUCTRPERM" in text:
        return GpuUnavailable("Nsight Compute may not read the GPU's performance counters here "
                              "(ERR_NVGPUCTRPERM): run as root or allow profiling for all users "
                              "(NVreg_RestrictProfilingToAdminUsers=0)", "counters")
    if "LibraryNotLoaded" in text or "Failed to initialize the profiler" in text:
        return GpuUnavailable("Nsight Compute could not initialise its profiler on this machine "
                              "(counters not available in this environment)", "counters")
    if "No kernels were profiled" in text:
        return None
    return None


def run_ncu(spec: dict, timeout: float = NCU_TIMEOUT_S, python: str | None = None,
            cancelled=None, driver: str = "viz.gpu.ncu_driver",
            metrics: tuple[str, ...] = METRIC_NAMES) -> tuple[list, str]:
    """Profile every launch of ``spec`` (see ``ncu_driver``); returns ([counters or None per
    launch of the spec, in its order], log)."""
    stdout, stderr, returncode = _ncu_process(["--metrics", ",".join(metrics), "--csv", "--print-units", "base"],
                                              spec, timeout, python, cancelled, driver)
    log = stdout + "\n" + stderr
    counters = parse_launches(stdout)
    if not counters:
        reason = explain_failure(log, returncode)
        if reason:
            raise reason
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise RuntimeError(f"ncu returned no counters (exit {returncode}):\n{tail}")
    names = [d["name"] for d in spec["launches"]]
    matched = match_launches(names, counters)
    if len(names) == 1 and matched[0] is None and len(counters) == 1:
        # One launch asked for, one profiled: ncu prints a C++ kernel's name demangled
        # ("MatrixMulCUDA<32>"), the spec names its PTX entry ("_Z13MatrixMulCUDAILi32EE...").
        matched = [counters[0][1]]
    return matched, log


def _ncu_process(args: list[str], spec: dict, timeout: float, python: str | None, cancelled,
                 driver: str = "viz.gpu.ncu_driver") -> tuple[str, str, int]:
    """ncu ARGS over ``python -m DRIVER SPEC``: (stdout, stderr, exit status); cancellable."""
    ncu = find_ncu()
    if not ncu:
        raise GpuUnavailable("Nsight Compute (ncu) is not installed or not on the PATH", "ncu")
    repo_root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="warpviz-ncu-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ)
        env["PYTHONPATH"] = repo_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [ncu, *args, "--target-processes", "all", "--kernel-name-base", "function",
               python or sys.executable, "-m", driver, str(spec_path)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        waited = 0.0
        while True:
            try:
                stdout, stderr = proc.communicate(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                waited += 0.2
                if (cancelled is not None and cancelled()) or waited > timeout:
                    proc.kill()
                    proc.communicate()
                    if waited > timeout:
                        raise GpuUnavailable("Nsight Compute did not finish within {s} s", "ncu", s=f"{timeout:.0f}") from None
                    from .worker import Cancelled

                    raise Cancelled("Nsight Compute: cancelled") from None
    return stdout, stderr, proc.returncode


@functools.lru_cache(maxsize=16)
def ncu_listing(*args: str, timeout: float = 120) -> str:
    """The text of ``ncu ARGS`` (``--query-metrics``, ``--list-sections``), or "" when it fails
    (asked once per process: several batches of launches share it)."""
    ncu = find_ncu()
    if not ncu:
        return ""
    try:
        p = subprocess.run([ncu, *args], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout if p.returncode == 0 else ""


def run_bottlenecks(spec: dict, timeout: float = NCU_TIMEOUT_S, python: str | None = None,
                    cancelled=None, driver: str = "viz.gpu.ncu_driver",
                    launch_skip: int = 1) -> tuple[list, str, list[str]]:
    """Profile a ``"mode": "timed"`` spec (``viz.gpu.bottleneck``) with the bottleneck sections
    and metrics, names checked against this ncu first: ([raw counters or None per launch],
    log, [metrics this ncu does not know]). ``driver``/``launch_skip``: the process ncu
    profiles and its launches before the first profiled one (the traced launches use
    ``viz.gpu.trace_ncu_driver``, which fills nothing on the GPU: 0)."""
    base = ncu_listing("--query-metrics")
    full = ncu_listing("--query-metrics", "--query-metrics-mode", "all")
    sections_text = ncu_listing("--list-sections")
    ok, missing = choose_metrics(BOTTLENECK_METRICS, full, base)
    sections = [a for s in BOTTLENECK_SECTIONS if not sections_text or s in sections_text.split()
                for a in ("--section", s)]
    args = [*(["--launch-skip", str(launch_skip)] if launch_skip else []), "--clock-control", "none", *sections,
            *(["--metrics", ",".join(ok)] if ok else []), "--csv", "--page", "raw", "--print-units", "base"]
    stdout, stderr, returncode = _ncu_process(args, spec, timeout, python, cancelled, driver)
    log = stdout + "\n" + stderr
    profiled = parse_raw(stdout)
    if not profiled:
        reason = explain_failure(log, returncode)
        if reason:
            raise reason
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise RuntimeError(f"ncu returned no counters (exit {returncode}):\n{tail}")
    got = match_launches([d["name"] for d in spec["launches"]], profiled)
    return [None if m is None else {k: v for k, v in m.items() if k != "_id"} for m in got], log, missing


# ---------------------------------------------------------------------------- bottlenecks

# What the bottleneck measurement (``viz.gpu.bottleneck``) asks Nsight Compute for, beside
# the sections. Names are checked against ``ncu --query-metrics`` on the device before a
# run (ncu stops at an unknown name); launch__* figures come from the LaunchStats and
# Occupancy sections.
BOTTLENECK_SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats")
STALL_REASONS = ("barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
                 "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instructions",
                 "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait")
BOTTLENECK_METRICS = (
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.max",
    "sm__cycles_active.avg", "smsp__cycles_active.avg",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__t_sectors.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_srcunit_tex.sum",
    "lts__t_sectors_srcunit_tex_lookup_hit.sum", "lts__t_sectors_srcunit_tex_lookup_miss.sum",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sectors.sum", "l1tex__t_sector_hit_rate.pct", "l1tex__t_requests.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
    "l1tex__throughput.avg.pct_of_peak_sustained_active", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts.sum", "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_elapsed",
    "l1tex__m_xbar2l1tex_read_sectors.sum", "l1tex__m_l1tex2xbar_write_sectors.sum",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
    "smsp__warps_eligible.avg.per_cycle_active", "smsp__warps_active.avg.per_cycle_active",
    "smsp__average_warp_latency_per_inst_issued.ratio",
    *(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in STALL_REASONS),
    *METRIC_NAMES,
)


def available_metrics(query_all: str, query_base: str = "") -> tuple[set[str], set[str]]:
    """Full metric names (``ncu --query-metrics --query-metrics-mode all``) and base names
    (``ncu --query-metrics``) from ncu's listings; the first word of each line."""
    def words(text: str) -> set[str]:
        out = set()
        for line in text.splitlines():
            w = line.strip().split(" ", 1)[0] if line.strip() else ""
            if re.fullmatch(r"[a-z0-9_]+__[A-Za-z0-9_.]+", w):
                out.add(w)
        return out

    return words(query_all), words(query_base)


def choose_metrics(wanted, query_all: str, query_base: str = "") -> tuple[list[str], list[str]]:
    """(metrics ncu knows, metrics it does not) of ``wanted``: a full name is known when the
    full listing has it, or (no full listing) when the base listing has its base name."""
    full, base = available_metrics(query_all, query_base)

    def split(check):
        ok, missing = [], []
        for m in wanted:
            (ok if check(m) else missing).append(m)
        return ok, missing

    if full:
        ok, missing = split(lambda m: m in full)
        if len(ok) >= len(wanted) / 2 or not base:
            return ok, missing
        # The full listing knew less than half: its layout is not the one expected; use the base names.
    return split(lambda m: m.split(".", 1)[0] in base)


def _value(text: str):
    t = text.strip().replace(",", "").replace("\u202f", "")
    if not t or t.lower() in ("n/a", "nan"):
        return None
    try:
        return float(t)
    except ValueError:
        return text.strip()


def parse_raw(text: str) -> list[tuple[str, dict]]:
    """ncu's ``--page raw --csv`` output -> [(kernel name, {metric: float or text})], in launch
    order. The first CSV row names the columns, the second gives units, then one row per launch."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if len(lines) < 2:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    head = rows[0]
    units = rows[1] if len(rows) > 1 and not (rows[1] and rows[1][0].strip().isdigit()) else None
    body = rows[2:] if units is not None else rows[1:]
    out = []
    for r in body:
        d = dict(zip(head, r))
        name = re.sub(r"\(.*\)$", "", (d.get("Kernel Name") or d.get("Function Name") or "").strip())
        try:
            launch_id = int(d.get("ID", "0"))
        except ValueError:
            continue
        metrics = {}
        for col, v in d.items():
            if "__" in col:
                val = _value(v)
                if val is not None:
                    metrics[col] = val
        metrics["_id"] = launch_id
        out.append((name, metrics))
    out.sort(key=lambda t: t[1]["_id"])
    return out


THROUGHPUT_UNITS = (  # (unit, metric of its throughput as % of peak, in order of preference)
    ("DRAM", ("dram__throughput.avg.pct_of_peak_sustained_elapsed",)),
    ("L2", ("lts__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed")),
    ("L1", ("l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed")),
    ("shared pipe", ("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",)),
    ("LSU issue", ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
                   "smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active")),
    ("issue", ("smsp__issue_active.avg.pct_of_peak_sustained_active",)),
)


def summarize(m: dict) -> dict:
    """The measured bottleneck of one launch from its raw counters: DRAM bytes, hit rates,
    throughput of each unit as % of its peak, occupancy, registers and the top stalls."""
    def num(*keys):
        for k in keys:
            v = m.get(k)
            if isinstance(v, (int, float)):
                return v
        return None

    thr = {}
    for unit, keys in THROUGHPUT_UNITS:
        v = num(*keys)
        if v is not None:
            thr[unit] = round(float(v), 2)
    stalls = []
    for k, v in m.items():
        hit = re.fullmatch(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio", k)
        if hit and isinstance(v, (int, float)) and hit.group(1) not in ("selected",):
            stalls.append((hit.group(1), float(v)))
    stalls.sort(key=lambda t: -t[1])
    total_stall = sum(v for _, v in stalls)
    dur = num("gpu__time_duration.sum")
    clk = num("sm__cycles_elapsed.avg.per_second")
    out = {
        "duration_ms": round(dur * 1e-6, 6) if dur is not None else None,   # ns with --print-units base
        "sm_clock_mhz": round(clk / 1e6, 1) if clk else None,
        "dram_bytes_read": _int(num("dram__bytes_read.sum")),
        "dram_bytes_write": _int(num("dram__bytes_write.sum")),
        "l2_sectors": _int(num("lts__t_sectors.sum")),
        "l2_sectors_from_l1": _int(num("lts__t_sectors_srcunit_tex.sum")),
        "l2_hit_pct": _round(num("lts__t_sector_hit_rate.pct")),
        "l1_sectors": _int(num("l1tex__t_sectors.sum")),
        "l1_hit_pct": _round(num("l1tex__t_sector_hit_rate.pct")),
        "shared_wavefronts": _int(num("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")),
        "warp_instructions": _int(num("smsp__inst_executed.sum")),
        "shared_bank_conflicts": _int(num("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")),
        "throughput_pct": thr,
        "registers_per_thread": _int(num("launch__registers_per_thread")),
        "shared_bytes_per_block": _int((num("launch__shared_mem_per_block_static") or 0)
                                       + (num("launch__shared_mem_per_block_dynamic") or 0))
        if num("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic") is not None else None,
        "achieved_occupancy_pct": _round(num("sm__warps_active.avg.pct_of_peak_sustained_active")),
        "theoretical_occupancy_pct": _round(num("sm__maximum_warps_per_active_cycle_pct")),
        "waves_per_sm": _round(num("launch__waves_per_multiprocessor")),
        "stalls": [{"reason": r, "cycles_per_issue": round(v, 3),
                    "share": round(v / total_stall, 3) if total_stall else None} for r, v in stalls[:3]],
    }
    if thr:
        unit = max(thr, key=thr.get)
        out["bound"] = {"unit": unit, "pct_of_peak": thr[unit]}
    return out


def _int(v):
    return None if v is None else int(round(float(v)))


def _round(v, nd: int = 2):
    return None if v is None else round(float(v), nd)


__all__ = ["find_ncu", "extra_metrics", "parse_csv", "parse_launches", "match_launches", "compare", "MetricRow", "run_ncu", "explain_failure",
           "BOTTLENECK_METRICS", "BOTTLENECK_SECTIONS", "choose_metrics", "available_metrics", "parse_raw",
           "summarize", "THROUGHPUT_UNITS", "run_bottlenecks", "ncu_listing"]
