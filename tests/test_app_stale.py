"""While the edited text has an error the picture shows the last valid state, and says so
in the picture itself (a muted band along the top), not only in the editor's banner."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCursor

from app_helpers import make_window, user_dirs, window  # noqa: F401 - fixtures

NOTE = "Showing the last valid version: the text has an error"


def type_over(qtbot, w, needle: str, replacement: str):
    w.editor.tabs.setCurrentIndex(1)
    ed = w.editor.text
    i = ed.toPlainText().index(needle)
    cur = ed.textCursor()
    cur.setPosition(i)
    cur.setPosition(i + len(needle), QTextCursor.MoveMode.KeepAnchor)
    ed.setTextCursor(cur)
    ed.setFocus()
    qtbot.keyClicks(ed, replacement)
    w.editor.flush()


def notes(view) -> list[str]:
    return [t.text for t in view.layout_.texts if t.key == "stale"]


def band_color(view) -> QColor:
    img = view.grab().toImage()
    return QColor(img.pixel(4, 4))


def test_an_invalid_edit_marks_the_picture_until_the_text_is_valid_again(qtbot, window):
    view = window.view
    view.repaint()
    assert notes(view) == []
    clean = band_color(view)
    type_over(qtbot, window, "W = 256", "W = 25six")
    assert window.session.error is not None
    qtbot.waitUntil(lambda: view.layout_ is not None and notes(view) == [NOTE])
    assert band_color(view) == view.theme.q("muted") != clean
    # the picture underneath is still the last valid frame: its lanes are drawn and hit-testable
    assert len(view.layout_.lanes) == 32
    type_over(qtbot, window, "W = 25six", "W = 512")
    assert window.session.error is None
    qtbot.waitUntil(lambda: notes(view) == [])
    assert band_color(view) == clean
