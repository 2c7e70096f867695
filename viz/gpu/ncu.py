"""Hardware counters: run kernels under Nsight Compute and compare with the model.

``ncu --metrics <the ten metrics> --csv`` profiles a small driver process
(``python -m viz.gpu.ncu_driver SPEC``) that loads each cubin and launches it once at
the scenario's own launch (R = 1), with distinct kernel names so many scenarios share
one ncu session. The CSV is parsed here; nothing in this module imports PyCUDA.
"""

from __future__ import annotations

import csv
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
    from .compile import find_tool

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


def match_launches(expected: list[str], profiled: list[tuple[str, dict]]) -> list[dict | None]:
    """The counters of each expected launch (by kernel name, in order). A launch that
    failed and was not profiled gets None; the ones after it still line up."""
    out: list[dict | None] = []
    k = 0
    for name in expected:
        j = k
        while j < len(profiled) and profiled[j][0] != name:
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
    ncu = find_ncu()
    if not ncu:
        raise GpuUnavailable("Nsight Compute (ncu) is not installed or not on the PATH", "ncu")
    repo_root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="warpviz-ncu-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ)
        env["PYTHONPATH"] = repo_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [ncu, "--metrics", ",".join(metrics), "--csv", "--print-units", "base",
               "--target-processes", "all", "--kernel-name-base", "function",
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
                        raise GpuUnavailable(f"Nsight Compute did not finish within {timeout:.0f} s", "ncu") from None
                    from .worker import Cancelled

                    raise Cancelled("Nsight Compute: cancelled") from None
    log = stdout + "\n" + stderr
    counters = parse_launches(stdout)
    if not counters:
        reason = explain_failure(log, proc.returncode)
        if reason:
            raise reason
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise RuntimeError(f"ncu returned no counters (exit {proc.returncode}):\n{tail}")
    return match_launches([d["name"] for d in spec["launches"]], counters), log


__all__ = ["find_ncu", "extra_metrics", "parse_csv", "parse_launches", "match_launches", "compare", "MetricRow", "run_ncu", "explain_failure"]
