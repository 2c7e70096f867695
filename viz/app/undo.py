"""Undo and redo over every edit of the scenario, in the form or in the TOML text.

The editor keeps one ``QUndoStack`` of TOML-text snapshots: each command holds the text
before and after one edit. Typing coalesces (keys in the same place within
``COALESCE_S`` seconds of each other make one step, and so do repeated changes of one form
field); a form edit and a text edit are separate steps. Undoing puts the old text back in
the editor, the form and the session, so the picture follows. Opening another scenario
starts a new history.

Edit → Undo (Ctrl+Z) and Redo (Ctrl+Shift+Z, Ctrl+Y) work everywhere in the window: the
text fields of the editor hand these keys to the window instead of keeping their own
history (``UndoKeys``).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeySequence, QUndoCommand

from ..i18n import tr
from .shortcuts import window_action

COALESCE_S = 1.0
clock = time.monotonic   # seconds; tests replace it with a clock they control (tests/app_helpers.py)
UNDO_KEYS = ("Ctrl+Z",)
REDO_KEYS = ("Ctrl+Shift+Z", "Ctrl+Y")


class Snapshot(QUndoCommand):
    """One edit: the scenario text before and after. ``kind`` is "text" or "form";
    ``key`` names the form field (commands of the same kind and key merge while fresh)."""

    ID = 0x7769

    def __init__(self, editor, before: str, after: str, kind: str, key=None):
        super().__init__()
        self.editor, self.before, self.after = editor, before, after
        self.kind, self.key = kind, key
        self.last = clock()
        self._applied = True   # pushed after the edit happened: the first redo() does nothing

    def id(self) -> int:
        return self.ID

    def mergeWith(self, other) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(other, Snapshot) or (other.kind, other.key) != (self.kind, self.key):
            return False
        if other.last - self.last > COALESCE_S:
            return False
        self.after, self.last = other.after, other.last
        self.setObsolete(self.after == self.before)   # typed and deleted again: no step at all
        return True

    def redo(self) -> None:
        if self._applied:
            self._applied = False
            return
        self.editor.restore(self.after)

    def undo(self) -> None:
        self.editor.restore(self.before)


class UndoKeys(QObject):
    """An event filter for the editor's text widgets: Ctrl+Z and its kin go to the window's
    Undo / Redo (the app's history) and not to the widget's own."""

    def __init__(self, stack, flush, parent=None):
        super().__init__(parent)
        self.stack, self.flush = stack, flush

    @staticmethod
    def which(event) -> str | None:
        combo = event.keyCombination().toCombined()
        for name, keys in (("undo", UNDO_KEYS), ("redo", REDO_KEYS)):
            if any(QKeySequence(k)[0].toCombined() == combo for k in keys):
                return name
        return None

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        t = event.type()
        if t not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        what = self.which(event)
        if what is None:
            return False
        if t == QEvent.Type.ShortcutOverride:
            self.flush()     # typing still waiting for its debounce becomes a step first
            event.ignore()   # not the widget's: the window's shortcut fires
            return True
        self.flush()         # reached the widget after all: do it here
        self.stack.undo() if what == "undo" else self.stack.redo()
        return True


def install(main) -> None:
    """Edit → Undo and Redo at the top of the Edit menu, over the editor's history."""
    editor = main.editor
    stack = editor.undo_stack

    a_undo = window_action(main, "undo", UNDO_KEYS, editor.undo)
    a_redo = window_action(main, "redo", REDO_KEYS, editor.redo)
    a_undo.setEnabled(stack.canUndo())
    a_redo.setEnabled(stack.canRedo())
    stack.canUndoChanged.connect(a_undo.setEnabled)
    stack.canRedoChanged.connect(a_redo.setEnabled)
    first = main.m_edit.actions()[0] if main.m_edit.actions() else None
    main.m_edit.insertAction(first, a_undo)
    main.m_edit.insertAction(first, a_redo)
    if first is not None:
        main.m_edit.insertSeparator(first)
    main.a_undo, main.a_redo = a_undo, a_redo

    def retranslate() -> None:
        a_undo.setText(tr("Undo"))
        a_redo.setText(tr("Redo"))

    editor.retranslate_undo = retranslate
    retranslate()
