"""docs/examples/layouts-and-frames.ipynb runs from top to bottom in a fresh kernel and shows
what it says: the layout maps as pictures, the figures, a frame, the video."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "examples" / "layouts-and-frames.ipynb"


def test_example_notebook_runs(tmp_path, monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "ship it without outputs"
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    kinds = [set(k for o in c.outputs for k in o.get("data", {})) for c in code]
    texts = ["".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in c.outputs) for c in code]
    assert "image/svg+xml" in kinds[1]                       # the documented example, 8 cells: SVG
    assert " 0  | 0 | 2 | 1 | 3 |" in texts[1]               # print_layout's table
    assert "image/png" in kinds[2]                           # the 512-cell swizzled tile
    assert "[72 73 74 75 76 77 78 79 64 65 66 67 68 69 70 71]" in texts[2]
    assert texts[3].strip() == "True"                        # Triton's layout is the same map
    assert "totals (Nsight Compute metric names)" in texts[4]
    assert texts[5].strip() == "(128, 0)"
    assert "image/png" in kinds[7] and "wavefront" in texts[7].lower()
    assert texts[8].strip() == "(256, 32)"       # 8 column reads: 32 wavefronts each plain, 4 swizzled
    assert texts[-1].startswith("4 0\n") and "image/svg+xml" in kinds[-1]   # ldmatrix.x4, swizzled: 4, 0
    assert "text/html" in kinds[9]
    html = "".join(o["data"]["text/html"] for o in code[9].outputs if "text/html" in o.get("data", {}))
    assert html.startswith("<video") and "base64," in html
    saved = Path(texts[-2].strip().splitlines()[-1])             # the frame saved into a folder of its own
    assert saved.name == "plain-column-read.svg" and saved.read_text().lstrip().startswith("<?xml")
    assert saved.parent != tmp_path and not (tmp_path / "plain-column-read.svg").exists()
    assert not (NOTEBOOK.parent / "plain-column-read.svg").exists()
