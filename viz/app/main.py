"""Start the app: ``run_app(scenario)`` (the CLI's ``warpviz`` and ``warpviz FILE``)."""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication


class GuiThreadGC(QObject):
    """Python's cycle collector, run on the GUI thread only.

    Left automatic, it runs in whichever thread happens to allocate, a pool thread painting
    an export included; collecting a cycle that holds a widget there deletes the widget off
    the GUI thread, which deadlocked (pool thread in ``gc_collect_main`` → ``~QMenu``,
    waiting for the GIL the GUI thread needed) or crashed test runs. So automatic collection
    is off and a timer on the GUI thread collects with the same generation thresholds.
    pyqtgraph's ``GarbageCollector`` does the same; it is not used because importing
    pyqtgraph costs about 0.45 s before the first window."""

    def __init__(self, app: QApplication, interval_ms: int = 500):
        super().__init__(app)
        self.threshold = gc.get_threshold()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(interval_ms)

    def check(self) -> None:
        counts, (t0, t1, t2) = gc.get_count(), self.threshold
        if counts[0] > t0:
            gc.collect(0)
            if counts[1] > t1:
                gc.collect(1)
                if counts[2] > t2:
                    gc.collect(2)


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("warpviz")
    app.setOrganizationName("warpviz")
    if app.style().name().lower() != "fusion":  # once: a new style would delete the one widgets use
        app.setStyle("Fusion")
    if app.findChild(GuiThreadGC) is None:
        GuiThreadGC(app)
    return app


def cannot_start() -> str | None:
    """Why no window can open here (no display, Qt's X11 libraries missing), in the user's
    language; None when it can. Checked before the QApplication, where Qt would abort."""
    if QApplication.instance() is not None:
        return None
    from .. import i18n
    from . import settings
    from .display import problem

    i18n.set_language(settings.get("language", "en", str, choices=i18n.LANGUAGES))
    return problem()


def run_app(scenario: str | None = None) -> int:
    """Open the main window (on ``scenario``: a file or a built-in's name) and run until it closes.
    Exit status 2, with the reason on stderr, when no window can open here."""
    why = cannot_start()
    if why is not None:
        print(f"warpviz: {why}", file=sys.stderr)
        return 2
    app = make_app()
    win = open_window(scenario)
    code = app.exec()
    from .worker import Runner

    Runner.wait_all(5000)
    close_window(win)
    return code


def open_window(scenario: str | None = None):
    """Build and show the main window as ``warpviz`` does. The analysis the window asks for
    while it is built waits until the picture has painted (``Runner.hold``): on a cold numba cache
    its compiling would otherwise hold the interpreter before the first frame
    (docs/PERFORMANCE.md, "Start-up to a usable window")."""
    from .window import MainWindow
    from .worker import Runner

    Runner.hold()
    try:
        win = MainWindow(scenario)
        win.show()
        win.view.setFocus()
    except BaseException:
        Runner.release()
        raise
    from .firstpaint import after_first_paint

    def after_paint() -> None:
        # The plot panels first, then the first analysis: importing pyqtgraph on this thread
        # while a worker imports numba failed one start in a few (both import colorama, and
        # two threads importing it at once gave KeyError: 'colorama' inside importlib).
        try:
            win._build_plots()
        finally:
            Runner.release()

    after_first_paint(win.view, after_paint)        # the first frame, then the plots, then the first analysis
    return win


def close_window(win) -> None:
    """Close ``win`` and delete it now, while Python is still whole.

    Left to the interpreter's shutdown, the window's pyqtgraph items could still receive
    layout events after Python had begun tearing down their wrappers: a segmentation fault
    at exit, about one start in two under the offscreen platform (shiboken's
    ``PepException_GetArgs`` from ``QGraphicsWidget::event``)."""
    from PySide6.QtCore import QCoreApplication, QEvent

    win.close()
    win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
