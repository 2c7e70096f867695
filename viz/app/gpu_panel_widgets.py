"""Small widgets of the GPU panel: its status line, a one-line elided label, and text made
safe for a widget that guesses rich text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy


def plain_for_qt(text: str) -> str:
    """``text`` for a widget that guesses rich text (a message box): as it is, unless Qt would
    take it for markup (a file's "<img ...>" quoted in a message), then escaped so it shows as
    written."""
    from PySide6 import QtGui

    if not QtGui.Qt.mightBeRichText(text):
        return text
    import html

    return "<p>" + html.escape(text).replace("\n", "<br>") + "</p>"


class SaidLine(QLabel):
    """The panel's status line: hidden while it says nothing (an empty line took a row of a
    1280x720 window's short dock)."""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self.setVisible(bool(text))

    def clear(self) -> None:
        self.setText("")


class OneLine(QLabel):
    """A label of one line whose text (``text()``, whole) is drawn elided at its end, the whole
    text in the tooltip."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt's name
        from PySide6.QtGui import QPainter

        painter = QPainter(self)
        r = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, r.width())
        painter.drawText(r, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown)


__all__ = ["plain_for_qt", "SaidLine", "OneLine"]
