"""The format 3 kinds in the app: the figures of a cp.async, a TMA copy and a shared
atomic on screen equal `warpviz analyze --json`, the editor lists their ops, and an edit
that breaks a TMA box shows the message naming `box` while the text is kept."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app_helpers import make_window, user_dirs, wait_analysis  # noqa: F401 - fixtures
from viz.report import explain_access


@pytest.mark.parametrize("name", ["cp-async-pipeline", "tma-swizzle-128b", "shared-histogram-many-bins"])
def test_kind_figures_on_screen_equal_warpviz_analyze(qtbot, user_dirs, name):  # noqa: F811
    w = make_window(qtbot, name)
    try:
        wait_analysis(qtbot, w)
        doc = json.loads(subprocess.run([sys.executable, "-m", "viz.cli", "analyze", name, "--json"],
                                        capture_output=True, text=True, check=True, timeout=600).stdout)
        shown = w.figures.values()
        for k, v in doc["metrics"].items():
            assert shown[k] == f"{v:,}", k
        for d in doc["accesses"]:
            for fig, value, _why in explain_access(d):
                if fig:
                    assert shown[(d["index"], fig)] == value, (d["index"], fig)
        kinds = {d.get("kind") for d in doc["accesses"]} - {None}
        assert kinds and kinds <= {"cp.async", "tma.load", "atomic"}
        # the editor's op box shows the kind, not "load"
        op = w.editor.fields[("access", 0, "op")].widget
        assert op.currentText() == doc["accesses"][0]["op"]
        # the picture steps through every frame of the first warp without an error
        s = w.session
        for _ in range(60):
            w.view.repaint()
            if not s.step("frame", 1):
                break
        assert s.error is None
    finally:
        w.close()


def test_a_bad_tma_box_is_reported_and_the_text_kept(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "tma-swizzle-128b")
    try:
        wait_analysis(qtbot, w)
        text = w.editor.text.toPlainText().replace('from = "A[blockIdx.x * 8][8]"',
                                                    'from = "A[blockIdx.x * 8][8]"\nbox = [8, 16]')
        assert "box = [8, 16]" in text
        w.editor.text.setPlainText(text)
        wait_analysis(qtbot, w)
        qtbot.waitUntil(lambda: w.session.error is not None, timeout=20000)
        msg = w.session.error.message()
        assert "box = [8, 16]" in msg and "at most 128 bytes (8 elements)" in msg
        assert "box = [8, 16]" in w.editor.text.toPlainText()     # the edit is kept
    finally:
        w.close()



def test_the_gpu_panel_lists_the_kinds_counters(qtbot, user_dirs):  # noqa: F811
    from viz.kinds import ATOM_METRICS

    w = make_window(qtbot, "shared-histogram-many-bins")
    try:
        wait_analysis(qtbot, w)
        qtbot.waitUntil(lambda: w.gpu_panel is not None, timeout=20000)   # built after the first frame
        p = w.gpu_panel
        p.refresh()
        shown = {p.table.item(i, 0).text(): p.table.item(i, 1).text() for i in range(p.table.rowCount())}
        m = w.session.analysis.metrics
        for k in ATOM_METRICS:
            assert shown[k] == f"{m[k]:,}", k
        assert len(shown) == 10 + len(ATOM_METRICS)
    finally:
        w.close()
