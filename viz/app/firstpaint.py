"""Run start-up work after the window's first frame: ``after_first_paint(widget, fn)`` calls
``fn`` on the GUI thread once ``widget`` has painted for the first time (or after
``fallback_ms`` when it is never painted, e.g. a window that is never shown), so the deferred
panels and the first analysis do not delay the first picture (docs/PERFORMANCE.md, "Start-up
to a usable window")."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

FALLBACK_MS = 1500


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, fns: list[Callable[[], None]], fallback_ms: int):
        super().__init__(widget)
        self.widget, self.fns, self.done = widget, fns, False
        widget.installEventFilter(self)
        QTimer.singleShot(fallback_ms, self, self.fire)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint and not self.done:
            QTimer.singleShot(0, self, self.fire)      # after this paint has finished
        return False

    def fire(self) -> None:
        if self.done:
            return
        self.done = True
        self.widget.removeEventFilter(self)
        fns, self.fns = self.fns, []
        for fn in fns:
            fn()


def after_first_paint(widget: QWidget, fn: Callable[[], None], fallback_ms: int = FALLBACK_MS) -> None:
    """Call ``fn`` once ``widget`` has painted its first frame (at the latest ``fallback_ms``
    from now). The hook is a child of ``widget``: it never fires after the widget is gone."""
    _FirstPaint(widget, [fn], fallback_ms)
