"""The one front door to the GPU (``viz.gpu.front``): the app imports nothing else of
``viz.gpu``, the API and the CLI go through it, and its calls do what they say.

Without a GPU the door's calls run against the real worker process serving a stand-in
session (``fake_gpu.ReplaySession`` or the small classes here), so the pipe, the child and
the combining of runs are real; ``-m gpu`` runs the probe and a recording on the device."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from helpers import HAVE_NVCC
from viz.gpu import front

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- who imports what


def _gpu_imports(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, module) of every import of a ``viz.gpu`` module in ``path`` (a module of
    ``package``), relative imports resolved; ``from ..gpu import front`` is ``viz.gpu.front``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("viz.gpu")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == "viz.gpu":
                out += [(node.lineno, f"viz.gpu.{a.name}" if a.name == "front" else "viz.gpu") for a in node.names]
            elif module.startswith("viz.gpu."):
                out.append((node.lineno, module))
    return [(n, m) for n, m in out if m == "viz.gpu" or m.startswith("viz.gpu.")]


def _outside_the_door(paths, package: str) -> list[str]:
    return [f"{p.relative_to(ROOT)}:{n}: {m}" for p in paths for n, m in _gpu_imports(p, package)
            if m != "viz.gpu.front"]


def test_the_app_imports_only_the_front_door_of_viz_gpu():
    app = sorted((ROOT / "viz" / "app").glob("*.py"))
    assert len(app) > 20
    assert _outside_the_door(app, "viz.app") == []
    # and it does import it (the scan sees relative imports)
    assert any(m == "viz.gpu.front" for p in app for _n, m in _gpu_imports(p, "viz.app"))


def test_the_api_imports_only_the_front_door_of_viz_gpu():
    assert _outside_the_door([ROOT / "viz" / "api.py"], "viz") == []


def test_the_scan_sees_a_reach_behind_the_door(tmp_path):
    bad = tmp_path / "panel.py"
    bad.write_text("from ..gpu.worker import ProcessSession\nfrom ..gpu import results\nimport viz.gpu.runner\n"
                   "from ..gpu import front\nfrom ..gpus import for_device\n")
    assert [m for _n, m in _gpu_imports(bad, "viz.app")] == ["viz.gpu.worker", "viz.gpu", "viz.gpu.runner",
                                                             "viz.gpu.front"]


def test_the_commands_start_no_gpu_process_of_their_own():
    """``warpviz validate / calibrate / trace`` reach the GPU through the door: no command
    module imports the runner or the worker."""
    for name in ("cli", "trace_cli"):
        mods = [m for _n, m in _gpu_imports(ROOT / "viz" / "gpu" / f"{name}.py", "viz.gpu")]
        assert "viz.gpu.runner" not in mods and "viz.gpu.worker" not in mods, name
        assert "viz.gpu.front" in mods, name


def test_importing_the_door_imports_nothing_behind_it():
    import subprocess
    import sys

    code = ("import sys, viz.gpu.front as f\n"
            "behind = sorted(m for m in sys.modules if m.startswith('viz.gpu.') and m != 'viz.gpu.front')\n"
            "print(behind)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------- the calls


def test_probe_says_why_there_is_no_gpu_and_never_raises():
    p = front.probe()
    if importlib.util.find_spec("pycuda") is not None and p.available:
        pytest.skip("a GPU is here: test_gpu_probe_finds_the_device")
    assert not p.available and p.device is None
    assert isinstance(p.reason, front.GpuUnavailable) and p.reason.kind in ("pycuda", "driver", "device")
    with pytest.raises(front.GpuUnavailable):
        front.device()
    assert front.pycuda_installed() == (importlib.util.find_spec("pycuda") is not None)


def test_the_lazy_names_are_the_classes_behind_the_door():
    from viz.gpu.driver import KernelFault
    from viz.gpu.results import ResultsError
    from viz.gpu.trace_pipeline import Recording, RecordingFailed
    from viz.gpu.worker import Cancelled

    assert (front.KernelFault, front.Cancelled, front.RecordingFailed, front.ResultsError, front.Recording) == (
        KernelFault, Cancelled, RecordingFailed, ResultsError, Recording)
    with pytest.raises(AttributeError):
        front.NoSuchThing  # noqa: B018


def test_the_shipped_results_and_calibrations_read_through_the_door():
    doc = front.load_results(None)
    assert front.shipped_results_path().is_file() and "transpose-tile" in doc["scenarios"]
    assert front.load_results(front.shipped_trace_timings_path())["traces"]
    fmt, limit = front.results_limits()
    assert fmt == doc["format"] and limit > front.shipped_results_path().stat().st_size
    assert front.is_calibrated("NVIDIA H100 80GB HBM3") and not front.is_calibrated("NVIDIA Nonexistent 1")
    assert not front.is_calibrated(None)


class FakeMemcpy:
    """A session for ``Gpu``: a cudaMemcpy of 256 MiB each way taking 0.2 ms."""

    def __init__(self):
        self.info = {"name": "NVIDIA Fake", "compute_capability": "9.0", "sm_count": 132}
        self.memcpys = 0

    def time_memcpy(self, nbytes=0, runs=0, cancelled=None):
        from viz.gpu.plan import Timing

        self.memcpys += 1
        return Timing((0.2, 0.2, 0.2))

    def memcpy_count(self):
        return self.memcpys


def test_a_run_measures_the_memcpy_ceiling_once_and_hands_it_to_the_timed_run(monkeypatch):
    from viz.gpu import bench
    from viz.scenario import load

    seen = []

    def run_one(session, label, sc, memcpy_gbps=None, cancelled=None):
        seen.append((label, memcpy_gbps, session.call_timeout_s > 0))
        return {"timing": {"median_ms": 1.0}}

    monkeypatch.setattr(bench, "run_one", run_one)
    gpu = front.Gpu(child="test_gpu_front:FakeMemcpy")
    try:
        sc = load("transpose-tile")
        stages = []
        first = gpu.run(front.RunRequest("transpose-tile", sc), lambda f, t: stages.append((f, t)))
        second = gpu.run(front.RunRequest("again", sc))
        assert isinstance(first, front.RunResult) and first.entry == {"timing": {"median_ms": 1.0}}
        assert first.error is None and second.name == "again"
        ceiling = 2 * (256 << 20) / 0.2e-3 / 1e9
        assert [(label, round(g, 3), ok) for label, g, ok in seen] == [("transpose-tile", round(ceiling, 3), True),
                                                                        ("again", round(ceiling, 3), True)]
        assert stages == [(0.05, "cudaMemcpy"), (0.2, "transpose-tile")]
        assert gpu._session._call("memcpy_count") == 1          # measured once for both runs
        assert gpu.info()["name"] == "NVIDIA Fake"
    finally:
        gpu.close()
    assert gpu._session is None


class FakeCalibration:
    """A calibration child: one figure whose value is this process's id (so two runs differ)."""

    def __init__(self):
        self.info = {"name": "NVIDIA Fake"}

    def calibrate(self, quick=False, verbose=False):
        import os

        return {"device": dict(self.info), "sets": 2, "figures": {
            "dram_read_gbps": {"value": float(os.getpid()), "unit": "GB/s", "how": "x", "spread_pct": 0.0,
                               "sets": [float(os.getpid())] * 2}}}


def test_calibrate_runs_separate_gpu_processes_and_combines_them(monkeypatch):
    from viz.gpu import calibrate

    monkeypatch.setattr(calibrate, "CHILD", "test_gpu_front:FakeCalibration")
    said = []
    doc = front.calibrate(front.CalibrateRequest(quick=True, runs=2), said.append)
    assert said == ["calibrate: run 1 of 2", "calibrate: run 2 of 2"]
    runs = doc["figures"]["dram_read_gbps"]["run_values"]
    assert len(runs) == 2 and runs[0] != runs[1]              # two processes
    assert doc["runs"] == 2 and doc["sets"] == 4
    # the median of both runs' sets (a figure keeps 5 significant digits)
    assert doc["figures"]["dram_read_gbps"]["value"] == pytest.approx(float(np.median(runs * 2)), rel=1e-4)


def test_validate_answers_typed_validations(monkeypatch):
    from viz.gpu import bench

    monkeypatch.setattr(bench, "validate", lambda items, progress, cancelled: [
        {"label": n, "title": "", "error": None, "rows": [{"metric": "m", "model": 1, "hardware": 1, "match": True}],
         "match": True} for n, _sc in items])
    got = front.validate(front.ValidateRequest([("a", None), ("b", None)]))
    assert [(v.label, v.match, v.error, len(v.rows)) for v in got] == [("a", True, None, 1), ("b", True, None, 1)]
    assert got[0].raw["label"] == "a"


REDUCE = ROOT / "kernels" / "trace" / "reduce_shfl.launch.toml"


@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas (the recording compiles the kernel)")
def test_record_runs_the_pipeline_through_the_door(tmp_path, monkeypatch):
    from fake_gpu import TRACES

    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(TRACES / "reduce_shfl.wvtrace"))
    out = tmp_path / "r.wvtrace"
    notes = []
    rec = front.record(front.TraceRequest(REDUCE, out=out), log=notes.append, child="fake_gpu:ReplaySession")
    assert isinstance(rec, front.Recording) and rec.path == out and out.is_file()
    from viz.trace import tracefile

    assert rec.trace.records == tracefile.load(TRACES / "reduce_shfl.wvtrace").records


@pytest.mark.gpu
def test_gpu_probe_finds_the_device():
    p = front.probe()
    assert p.available and p.reason is None
    assert p.device["sm_count"] > 0 and p.device["compute_capability"]
    assert front.device()["name"] == p.device["name"]


@pytest.mark.gpu
def test_gpu_a_recording_through_the_door(tmp_path):
    rec = front.record(front.TraceRequest(REDUCE, out=tmp_path / "r.wvtrace"))
    assert rec.trace.records > 0 and (tmp_path / "r.wvtrace").is_file()
