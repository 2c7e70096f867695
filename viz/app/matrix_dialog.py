"""View → ldmatrix / stmatrix fragments: the matrix map of the instruction on screen.

For the current warp of the current instruction, when it is an ldmatrix or stmatrix: each
matrix's rows (the lane that gives the address, its banks and wavefront) and the lane
whose register holds each element (``viz.render.matrix_view``, the same picture as
``warpviz matrix --out``). It follows the timeline (instruction, block, warp) while open;
on a plain load or store it says so. Its connections die with it.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QPixmap
from PySide6.QtWidgets import QDialog, QLabel, QScrollArea, QVBoxLayout

from ..i18n import tr
from ..kinds.ldmatrix import matrix_map
from ..render import theme
from ..render.matrix_view import paint_matrix_map
from .state import Session


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
        scroll = QScrollArea()
        scroll.setWidget(self.picture)
        scroll.setWidgetResizable(True)
        lay = QVBoxLayout(self)
        lay.addWidget(self.note)
        lay.addWidget(scroll, 1)
        self.map = None                 # the MatrixMap on show (None: not a matrix instruction)
        session.positionChanged.connect(self.refresh)
        session.changed.connect(self.refresh)
        self.resize(1000, 800)
        self.refresh()

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
        w, h = self.map.natural_size()
        img = QImage(w, h, QImage.Format.Format_RGB32)
        p = QPainter(img)
        try:
            paint_matrix_map(p, QRectF(0, 0, w, h), self.map, theme(self.theme_name), scale=1.0)
        finally:
            p.end()
        self.picture.setPixmap(QPixmap.fromImage(img))
        self.note.setText(tr("{op}: lane l gives row l % 8 of matrix l / 8; each cell is the lane whose register "
                             "holds that element.", op=matrix.text))


__all__ = ["MatrixDialog"]
