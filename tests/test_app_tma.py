"""A trace with TMA copies in the app: it opens, the issued copy is a step of its
warp whose picture shows the box's first chunks on the banks, the Figures panel lists the
copy's figures and the Source panel counts its sectors on its line."""

from __future__ import annotations

import sys
from pathlib import Path


from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from viz.kinds import tma_copy as T
from viz.trace import tracefile

sys.path.insert(0, str(Path(__file__).parent))
import test_tma_copy as X  # noqa: E402


def test_a_tma_trace_opens_steps_to_its_copy_and_lists_its_figures(qtbot, user_dirs, tmp_path):
    tm = T.TensorMap(1 << 24, 7, 2, (1024, 1024), (4096,), (32, 64), (1, 1), 0, 3)
    t, _m = X._copy_trace(blocks=1, map_bytes=T.encode_map(tm))
    path = tracefile.save(t, tmp_path / "copy.wvtrace")
    w = make_window(qtbot, str(path))
    s = w.session
    qtbot.waitUntil(lambda: not s.busy and s.is_trace, timeout=20000)
    rows = s.trace.stream(0, 0)
    k = next(i for i, r in enumerate(rows) if int(s.trace.trace.flags[r]) == 2)
    s.go(block=0, warp=0, instr=k)
    qtbot.waitUntil(lambda: s.detail is not None and s.detail.access.index == int(s.trace.trace.instr[rows[k]]),
                    timeout=10000)
    assert s.detail.space == "shared" and s.detail.active_lanes == 32
    w.view.repaint()
    texts = " ".join(x.text for x in w.view.layout_.texts)
    assert "cp.async.bulk.tensor" in texts
    qtbot.waitUntil(lambda: w.figures.tree.topLevelItemCount() > 0, timeout=20000)
    panel = w.trace_source
    qtbot.waitUntil(lambda: panel.lines.topLevelItemCount() > 0, timeout=10000)
    shown = {r["line"]: r["sectors"] for r in panel.visible_rows()}
    assert shown[46] == 512 and shown[49] == 512          # one block: two 32 x 64 boxes loaded, two stored
    w.close()
