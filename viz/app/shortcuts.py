"""An action on the main window with its own keys: added to the window, not only to a menu,
so that its keys work with the menu bar hidden (presentation mode)."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence


def window_action(main, name: str, keys, slot) -> QAction:
    """A QAction named ``name`` (its object name) on ``main`` that runs ``slot`` on ``keys``."""
    a = QAction(main)
    a.setObjectName(name)
    a.setShortcuts([QKeySequence(k) for k in keys])
    a.triggered.connect(slot)
    main.addAction(a)
    return a


__all__ = ["window_action"]
