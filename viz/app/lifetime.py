"""Callbacks that die with the widget that asked for them.

Whatever a widget schedules or registers outside itself must not outlive it: timers are
children of the widget (``QTimer(self)``) or ``QTimer.singleShot(ms, self, fn)`` with the
widget as context; results from pool threads arrive through signals whose receivers are
the widget's own QObjects (Qt drops them once those are deleted); and listeners kept by
plain Python code, such as the language listeners of ``viz.i18n``, are removed here when
the widget is destroyed.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject

from .. import i18n


def on_language_change(owner: QObject, fn: Callable[[str], None]) -> None:
    """``i18n.on_change(fn)`` for as long as ``owner`` lives."""
    remove = i18n.on_change(fn)
    owner.destroyed.connect(lambda *_args: remove())
