"""View → ldmatrix / stmatrix fragments: the matrix map of the instruction on screen.

For the current warp of the current instruction, when it is an ldmatrix or stmatrix: each
matrix's rows (the lane that gives the address, its banks and wavefront) and the lane
whose register holds each element (``viz.render.matrix_view``, the same picture as
``warpviz matrix --out``). It follows the timeline (instruction, block, warp) while open;
on a plain load or store it says so. Its connections die with it.

It opens beside the picture (to the right of the window where the screen has room, else
over the panels at the window's right edge, never over the picture), and the map is drawn
to fit the window's width (``FIT_FLOOR``: below that it scrolls, downwards only).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QImage, QPainter, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QSizePolicy, QVBoxLayout

from ..i18n import tr
from ..kinds.ldmatrix import matrix_map
from ..render import theme
from ..render.matrix_view import paint_matrix_map
from .state import Session


FIT_FLOOR = 0.6     # below this the whole map is not shown shrunk: it fits the width and scrolls down


class MatrixDialog(QDialog):
    def __init__(self, session: Session, theme_name: str = "light", parent=None):
        super().__init__(parent)
        self.setObjectName("matrixDialog")
        self.session = session
        self.theme_name = theme_name
        self.setWindowTitle(tr("ldmatrix / stmatrix fragments"))
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.scroll = scroll = QScrollArea()
        scroll.setWidget(self.picture)
        scroll.setWidgetResizable(True)
        # The map is drawn to the viewport's width (``fit``): it scrolls downwards only.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.picture.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay = QVBoxLayout(self)
        lay.addWidget(self.note)
        lay.addWidget(scroll, 1)
        self.map = None                 # the MatrixMap on show (None: not a matrix instruction)
        self.scale = 1.0                # the map's scale on show (1: its natural size, 16-px numbers)
        self.across = 2                 # matrices a row on show
        self.placed = False
        self._resized = QTimer(self)    # redraw once a resize settles
        self._resized.setSingleShot(True)
        self._resized.setInterval(60)
        self._resized.timeout.connect(self.refresh)
        session.positionChanged.connect(self.refresh)
        session.changed.connect(self.refresh)
        self.resize(720, 800)
        self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self.placed and self.parentWidget() is not None:
            self.placed = True
            self.place_beside(self.parentWidget())

    def place_beside(self, main) -> None:
        """Beside the main window where the screen has room, else over its right-hand panels
        (the picture stays in view); as tall as the window."""
        screen = main.screen() if main.screen() is not None else self.screen()
        room = screen.availableGeometry() if screen is not None else QRect(0, 0, 1920, 1080)
        frame = main.frameGeometry()
        inner = main.geometry()
        width = max(480, min(760, room.width() // 3))
        height = min(inner.height(), room.height())
        if room.right() - frame.right() >= 480:            # room to the right of the window
            x = frame.right() + 1
            width = min(width, room.right() - frame.right())
        elif frame.left() - room.left() >= 480:            # or to its left
            width = min(width, frame.left() - room.left())
            x = frame.left() - width
        else:                                               # over the panels at the right edge
            picture = getattr(main, "stack", None)
            right = (picture.mapToGlobal(picture.rect().topRight()).x() + 1) if picture is not None else None
            x = max(right if right is not None and inner.right() - right >= 360 else inner.right() - width,
                    inner.right() - width)
            width = inner.right() - x + 1
        y = max(room.top(), inner.top())
        self.setGeometry(x, y, width, min(height, room.bottom() - y + 1))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._resized.start()

    def fit(self) -> tuple[float, int]:
        """The scale and the matrices a row that fit the map to the viewport: whole where that
        keeps the scale at ``FIT_FLOOR`` or more; else to its width, scrolling downwards (one
        matrix a row in a narrow window); the largest scale wins, at most 1."""
        if self.map is None:
            return 1.0, 1
        vp = self.scroll.viewport().size()
        bar = self.scroll.verticalScrollBar().sizeHint().width()
        best = None
        for across in sorted({self.map.default_across(), 1}, reverse=True):
            w, h = self.map.natural_size(1.0, across)
            whole = min((vp.width() - 2) / w, (vp.height() - 2) / h)
            scale = whole if whole >= FIT_FLOOR else (vp.width() - bar - 2) / w
            scale = min(1.0, scale)
            if best is None or scale > best[0] + 0.02:
                best = (scale, across)
        return best

    def refresh(self) -> None:
        d = self.session.detail
        matrix = getattr(getattr(d, "access", None), "matrix", None)
        if d is None or matrix is None:
            self.map = None
            self.picture.clear()
            self.note.setText(tr("The instruction on screen is not an ldmatrix or stmatrix: step to one (its access "
                                 "has op = \"ldmatrix.x4\" or the like) to see its fragments."))
            return
        self.map = matrix_map(d)
        self.scale, self.across = self.fit()
        w, h = self.map.natural_size(self.scale, self.across)
        img = QImage(w, h, QImage.Format.Format_RGB32)
        p = QPainter(img)
        name = getattr(self.parentWidget(), "theme_name", self.theme_name)
        try:
            paint_matrix_map(p, QRectF(0, 0, w, h), self.map, theme(name), scale=self.scale, across=self.across)
        finally:
            p.end()
        self.picture.setPixmap(QPixmap.fromImage(img))
        self.note.setText(tr("{op}: lane l gives row l % 8 of matrix l / 8; each cell is the lane whose register "
                             "holds that element.", op=matrix.text))


__all__ = ["MatrixDialog"]
