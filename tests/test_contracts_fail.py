"""Each import contract of pyproject.toml (``[tool.importlinter]``, docs/ARCHITECTURE.md "The
contracts") fails when the diagram is broken: on a copy of ``viz/`` in ``tmp_path`` with one
deliberate violation added, ``lint-imports`` reports exactly the contracts named here as BROKEN,
names the import that breaks them and exits with 1; on the unchanged copy every contract is kept.

The violations are those a review found passing the first contracts: the pictures importing the GPU
branch, two modules of ``viz.gpu``'s bottom layer importing each other, an upward import inside
``app/``, ``trace/``, ``render/``, ``kinds/``, ``toolchain/``, a new model module importing PySide6,
plus PyCUDA outside the runner, a command line imported from below and a cycle between packages.
The added imports sit inside a function, as the lazy imports of warpviz do: they count the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
CONTRACTS = {c["name"]: c["id"] for c in
             tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]}


def copy_viz(tmp_path: Path) -> Path:
    """``viz/`` (its sources only) copied to ``tmp_path/copy/viz``; returns ``tmp_path/copy``."""
    root = tmp_path / "copy"
    shutil.copytree(ROOT / "viz", root / "viz", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return root


def add_import(root: Path, module: str, line: str) -> None:
    """Append a function holding the import ``line`` to ``module`` of the copy (the module is
    created when it does not exist: a new module)."""
    path = root / (module.replace(".", "/") + ".py")
    text = path.read_text(encoding="utf-8") if path.exists() else '"""A new module."""\n'
    path.write_text(text + "\n\ndef _added_by_the_test():\n    " + line + "  # noqa\n", encoding="utf-8")


def lint(root: Path) -> tuple[int, dict[str, bool], str]:
    """``lint-imports`` with this project's contracts over the ``viz`` in ``root``: its exit
    status, each contract's id -> kept, and its output. A wide console keeps each contract's
    result on the line of its name."""
    env = dict(os.environ, COLUMNS="1000", PYTHONPATH=str(root), NO_COLOR="1")
    out = subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    results = {}
    for line in out.stdout.splitlines():
        m = re.fullmatch(r"(.+?) (KEPT|BROKEN)( \(.*\))?", line.strip())
        if m and m.group(1) in CONTRACTS:
            results[CONTRACTS[m.group(1)]] = m.group(2) == "KEPT"
    return out.returncode, results, out.stdout + out.stderr


def test_every_contract_is_kept_on_the_unchanged_copy(tmp_path):
    code, results, text = lint(copy_viz(tmp_path))
    assert code == 0, text
    assert results == {i: True for i in CONTRACTS.values()}, text      # every contract ran, none broke
    assert len(results) >= 13


# (what the diagram forbids, the module changed, the import added, the contracts it breaks,
#  the text the report shows)
VIOLATIONS = [
    ("the pictures import the GPU branch (render is above gpu in the one column of 'layers')",
     "viz.render.painter", "from ..gpu import costmodel", {"pictures-not-gpu"},
     "viz.render.painter -> viz.gpu.costmodel"),
    ("the export imports a trace", "viz.export", "from .trace import tracefile",
     {"pictures-not-gpu"}, "viz.export -> viz.trace.tracefile"),
    # the Qt contract stays kept: render's own Qt import is allowed, the layers catch the chain
    ("the GPU branch imports a picture", "viz.trace.analysis", "from ..render import theme",
     {"gpu-not-pictures", "layers"}, "viz.trace.analysis -> viz.render.theme"),
    ("two modules of viz.gpu's no-GPU bottom layer import each other",
     "viz.gpu.codegen", "from . import calibration", {"gpu"}, "viz.gpu.codegen -> viz.gpu.calibration"),
    ("a lower module of viz.gpu's bottom imports a higher one", "viz.gpu.plan",
     "from . import results", {"gpu", "no-package-cycle"}, "viz.gpu.plan -> viz.gpu.results"),
    ("an upward import inside app/", "viz.app.settings", "from . import window",
     {"app", "no-package-cycle"}, "viz.app.settings -> viz.app.window"),
    ("two panels of app/ import each other", "viz.app.sweep", "from . import compare",
     {"app"}, "viz.app.sweep -> viz.app.compare"),
    ("an upward import inside trace/", "viz.trace.ptx", "from . import analysis",
     {"trace", "no-package-cycle"}, "viz.trace.ptx -> viz.trace.analysis"),
    ("an upward import inside render/", "viz.render.theme", "from . import painter",
     {"render", "no-package-cycle"}, "viz.render.theme -> viz.render.painter"),
    ("an upward import inside kinds/: the registry imports a kind", "viz.kinds.registry",
     "from . import plain", {"kinds", "no-package-cycle"}, "viz.kinds.registry -> viz.kinds.plain"),
    ("one kind module imports another of its layer", "viz.kinds.wgmma", "from . import atomic",
     {"kinds"}, "viz.kinds.wgmma -> viz.kinds.atomic"),
    ("an upward import inside toolchain/", "viz.toolchain.compile", "from . import sass",
     {"toolchain", "no-package-cycle"}, "viz.toolchain.compile -> viz.toolchain.sass"),
    ("a model module imports a picture (Qt through render)", "viz.scenario_parts",
     "from .render import theme", {"layers", "gpu-not-pictures", "no-package-cycle"},
     "viz.scenario_parts -> viz.render.theme"),   # the GPU branch and render reach scenario_parts
    ("a model module imports Qt", "viz.engine", "from PySide6 import QtCore",
     {"qt"}, "viz.engine -> PySide6"),
    ("a model module imports pyqtgraph", "viz.kinds.plain", "import pyqtgraph",
     {"qt"}, "viz.kinds.plain -> pyqtgraph"),
    ("a NEW model module imports PySide6 (and has no place in the layers)", "viz.occupancy",
     "from PySide6.QtGui import QColor", {"qt", "layers"}, "viz.occupancy -> PySide6"),
    ("a NEW module of trace/ imports shiboken6", "viz.trace.pictures", "import shiboken6",
     {"qt", "trace"}, "viz.trace.pictures -> shiboken6"),
    ("PyCUDA outside the runner", "viz.gpu.worker", "import pycuda.driver",
     {"pycuda"}, "viz.gpu.worker -> pycuda"),
    ("a library module imports a command line", "viz.app.figures", "from ..gpu import replay_cli",
     {"no-cli-from-below"}, "viz.app.figures -> viz.gpu.replay_cli"),
    ("two front ends import each other (app | api on one line)", "viz.api", "from .app import state",
     {"layers"}, "viz.api -> viz.app.state"),
    ("two model modules of one line import each other (frames | report | lessons)", "viz.report",
     "from . import frames", {"layers"}, "viz.report -> viz.frames"),
    ("a lower package imports a higher one, closing a cycle between packages", "viz.trace.analysis",
     "from ..gpu import costmodel", {"layers", "gpu", "no-package-cycle"},
     "viz.trace.analysis -> viz.gpu.costmodel"),   # and viz.gpu.trace_pipeline reaches costmodel through it
]


@pytest.mark.parametrize("what, module, line, broken, shown", VIOLATIONS, ids=[v[0][:60] for v in VIOLATIONS])
def test_a_violation_breaks_its_contracts(tmp_path, what, module, line, broken, shown):
    root = copy_viz(tmp_path)
    add_import(root, module, line)
    code, results, text = lint(root)
    assert code == 1, text
    assert set(results) == set(CONTRACTS.values()), text                 # every contract ran
    assert {i for i, kept in results.items() if not kept} == broken, text
    assert shown in text


def test_the_architecture_document_lists_every_contract_and_violation_count():
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z-]+)` \| [a-z_]+ \|", doc, re.M)
    assert sorted(rows) == sorted(CONTRACTS.values())
    assert f"as {len(CONTRACTS)} contracts" in doc and f"for {len(VIOLATIONS)} violations" in doc
