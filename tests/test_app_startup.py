"""Start-up: the window comes first, then the first analysis
(``viz.app.main.open_window``, ``Runner.hold``); numba is not imported before the window."""

from __future__ import annotations

import subprocess
import sys

from app_helpers import user_dirs  # noqa: F401 - fixture
from viz.app.worker import Runner


def test_held_jobs_start_when_released_and_cancelled_ones_never(qtbot):
    ran = []
    r = Runner()
    Runner.hold()
    try:
        r.submit(lambda progress, cancel: ran.append("first"))
        r.submit(lambda progress, cancel: ran.append("second") or "second")   # cancels the first
        assert len(Runner._held) == 2 and r.busy
    finally:
        with qtbot.waitSignal(r.done, timeout=120000) as got:
            Runner.release()
    assert got.args == ["second"] and Runner._held is None
    assert Runner.wait_all(120000) and ran == ["second"]                      # the cancelled one never ran
    r.deleteLater()


def test_open_window_shows_the_window_then_analyses(qtbot, user_dirs):  # noqa: F811
    from viz.app.main import make_app, open_window

    make_app()
    w = open_window("transpose-tile")
    qtbot.addWidget(w)                                                  # closed by pytest-qt
    assert w.isVisible() and w.session.timeline is not None       # the picture is there at once
    assert w.session.cursor.instruction == 8                            # transpose-tile's focus
    qtbot.waitUntil(lambda: w.session.analysis is not None, timeout=120000)
    assert Runner._held is None
    assert w.session.analysis.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] > 0


def test_the_window_module_does_not_import_numba():
    code = ("import sys, viz.app.main, viz.app.window, viz.frames, viz.engine; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.stdout.strip() == "False", out.stderr
    code = "import sys; from viz.kernels_numba import global_counts; import numpy as np; " \
           "s = np.zeros((1, 1), np.int32); " \
           "global_counts(np.zeros((1, 32), np.int64), np.ones((1, 32), np.bool_), s, s.copy(), s.copy(), s.copy()); " \
           "print('numba' in sys.modules, int(s[0, 0]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.split() == ["True", "1"], out.stderr


def test_after_first_paint_runs_once_after_the_widget_paints_or_at_the_fallback(qtbot):
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QLabel

    from viz.app.firstpaint import after_first_paint

    events = []

    class Spy(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                events.append("paint")
            return False

    shown = QLabel("picture")
    qtbot.addWidget(shown)
    spy = Spy()
    shown.installEventFilter(spy)
    after_first_paint(shown, lambda: events.append("work"), fallback_ms=600000)
    shown.show()
    qtbot.waitUntil(lambda: "work" in events, timeout=120000)
    assert events[0] == "paint" and events.count("work") == 1
    shown.update()
    qtbot.waitUntil(lambda: events.count("paint") >= 2, timeout=120000)
    assert events.count("work") == 1                                  # once only
    hidden = QLabel("never shown")
    qtbot.addWidget(hidden)
    ran = []
    after_first_paint(hidden, lambda: ran.append(1), fallback_ms=50)
    qtbot.waitUntil(lambda: ran == [1], timeout=120000)               # the fallback


def test_the_gpu_panel_is_built_when_its_tab_is_first_shown(qtbot, user_dirs):  # noqa: F811
    """At a first start the GPU tab lies behind the heat map's: its panel (measurements,
    caveats, the GPU probe) is not built with the window; clicking its tab builds it once."""
    from PySide6.QtWidgets import QTabBar

    from viz.app.main import make_app, open_window

    make_app()
    w = open_window("transpose-tile")
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w._launch is not None and "gpu" in w.docks, timeout=120000)
    dock = w.docks["gpu"]
    assert w._gpu is None and dock.visibleRegion().isEmpty()         # a tab behind another, not built
    bar = next(b for b in w.findChildren(QTabBar) if "GPU" in [b.tabText(i) for i in range(b.count())])
    bar.setCurrentIndex([bar.tabText(i) for i in range(bar.count())].index("GPU"))    # what a click does
    qtbot.waitUntil(lambda: w._gpu is not None, timeout=120000)
    panel = w._gpu
    assert panel and dock.widget().isAncestorOf(panel)
    qtbot.waitUntil(panel.isVisible, timeout=120000)                   # shown by its layout a moment later
    assert w.gpu_panel is panel                                        # built once
    w.docks["launch"].raise_()
    bar.setCurrentIndex([bar.tabText(i) for i in range(bar.count())].index("GPU"))
    assert w.gpu_panel is panel
