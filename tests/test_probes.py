"""Every measurement probe of tools/probes/ runs its --dry mode here, without a GPU, as
pyqtgraph runs its examples: the probe kernels compile (where nvcc is found), the cases and
plans are written, and the parsing of the profiler's output runs on made-up output. A probe
that no longer builds or plans fails here, not on the device machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBES = ROOT / "tools" / "probes"
ENTRIES = sorted(p.name for p in PROBES.iterdir() if p.suffix in (".sh", ".py"))
COMPILES = {"atomics.sh", "cp_async_tma_atomics.sh", "ldmatrix_wavefronts.sh", "loaded_latency.py", "block_launch.py"}


def test_the_probe_list_is_what_the_docs_name():
    doc = (ROOT / "docs" / "GPU.md").read_text()
    assert ENTRIES and all(f"`{name}`" in doc for name in ENTRIES), ENTRIES
    assert COMPILES <= set(ENTRIES)


@pytest.mark.parametrize("name", ENTRIES)
def test_a_probe_runs_dry(name, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHON=sys.executable, TMPDIR=str(tmp_path))
    cmd = ["bash", str(PROBES / name), "--dry"] if name.endswith(".sh") else [sys.executable, str(PROBES / name), "--dry"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("dry: ")]
    assert lines, proc.stdout[-2000:]
    if name in COMPILES and shutil.which("nvcc"):
        assert any("compiled" in ln and "not compiled" not in ln for ln in lines), lines
    assert not list(tmp_path.iterdir()), "a dry run leaves nothing behind"
