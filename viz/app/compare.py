"""Compare mode: two scenarios side by side (e.g. a tile plain, padded, XOR-swizzled),
stepping together, with their figures next to each other."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QHeaderView, QLabel, QSplitter, QTableWidget,
                               QTableWidgetItem, QVBoxLayout, QWidget)

from ..engine import KIND_METRIC_NAMES, METRIC_NAMES
from ..i18n import tr
from ..render import PaintOptions
from ..scenario import compare_in_text, compare_path, partner_name
from .library import entries
from .state import Session
from .view import FrameView


def partner(name: str, names: list[str], compare: str = "", source: str = "") -> str | Path | None:
    """The scenario to compare ``name`` with: the file its ``compare`` key names (a Path),
    else a name among ``names`` by ``viz.scenario.partner_name`` (its ``-pad`` variant,
    the scenario it varies, a sibling, the closest name)."""
    named = compare_path(compare, source)
    if named is not None:
        return named
    return partner_name(name, names)


def warp_figures(session: Session) -> list[tuple[str, str]]:
    d = session.detail
    if d is None:
        return []
    if not d.issued:
        return [(tr("this warp instruction"), tr("not issued"))]
    if d.space == "shared":
        return [(tr("wavefronts (this warp)"), str(d.wavefronts)),
                (tr("bank conflicts (this warp)"), str(d.conflicts))]
    return [(tr("sectors (this warp)"), str(len(d.sectors))),
            (tr("lines (this warp)"), str(len(d.lines))),
            (tr("sector efficiency (this warp)"), f"{100 * d.sector_efficiency:.1f}%")]


class ComparePage(QWidget):
    def __init__(self, left: Session, parent=None):
        super().__init__(parent)
        self.left = left
        self.right = Session(self)
        self.partner_of: Path | None = None  # the left file the right side was picked for
        self.pick = QComboBox()
        self.pick.setObjectName("comparePick")
        self.l_pick = QLabel()
        self.view_left = FrameView(left)
        self.view_right = FrameView(self.right)
        for v in (self.view_left, self.view_right):  # two halves fit a 1280-px screen beside the docks
            v.setMinimumSize(280, 200)
        self.pick.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.pick.setMinimumContentsLength(16)
        self.view_left.setObjectName("compareLeft")
        self.view_right.setObjectName("compareRight")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view_left)
        split.addWidget(self.view_right)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("compareFigures")
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setMaximumHeight(230)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        top = QHBoxLayout()
        top.addWidget(self.l_pick)
        top.addWidget(self.pick, 1)
        v = QSplitter(Qt.Orientation.Vertical)
        v.addWidget(split)
        v.addWidget(self.table)
        v.setStretchFactor(0, 4)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(v, 1)
        self.pick.activated.connect(lambda _i: self.open_right(self.pick.currentData()))
        left.positionChanged.connect(self._follow)
        left.changed.connect(self._titles)
        left.analysisChanged.connect(self.refresh)
        self.right.changed.connect(self._follow)
        self.right.changed.connect(self._titles)
        self.right.analysisChanged.connect(self.refresh)
        self.right.positionChanged.connect(self.refresh)
        left.positionChanged.connect(self.refresh)
        self.retranslate()

    def fill_picks(self) -> None:
        keep = self.pick.currentData()
        self.pick.clear()
        for e in (e for e in entries() if not e.trace):   # a trace is not compared side by side
            self.pick.addItem(f"{e.title}  [{e.name}]", str(e.path))
        i = self.pick.findData(keep)
        if i >= 0:
            self.pick.setCurrentIndex(i)

    def open_right(self, path: str | Path | None) -> None:
        if not path:
            return
        i = self.pick.findData(str(path))
        if i >= 0:
            self.pick.setCurrentIndex(i)
        self.right.cursor = self.left.cursor
        self.partner_of = self.left.path
        self.right.open(Path(path))

    def ensure_partner(self) -> None:
        """Pick a partner for the left scenario if the right side is empty or was picked for
        another left scenario (one opened while compare mode was off)."""
        if self.left.path is None:
            return
        if self.right.scenario is not None and self.partner_of == self.left.path:
            return
        names = [Path(self.pick.itemData(i)).stem for i in range(self.pick.count())]
        sc = self.left.scenario
        other = (partner(self.left.path.stem, names, sc.compare, sc.source) if sc is not None else
                 compare_in_text(self.left.text, str(self.left.path)) or partner_name(self.left.path.stem, names))
        if isinstance(other, Path):
            self.open_right(other)
        elif other:
            self.open_right(self.pick.itemData(names.index(other)))

    def _follow(self) -> None:
        if self.right.scenario is not None:
            self.right.move_to(self.left.cursor)

    def _titles(self) -> None:
        for view, s in ((self.view_left, self.left), (self.view_right, self.right)):
            title = s.scenario.shown_title if s.scenario else None
            view.options = PaintOptions(title=title, figures=True)
            view.update()

    def set_theme(self, th) -> None:
        self.view_left.set_theme(th)
        self.view_right.set_theme(th)

    def refresh(self) -> None:
        rows: list[tuple[str, str, str]] = []
        wl, wr = dict(warp_figures(self.left)), dict(warp_figures(self.right))
        for k in list(dict.fromkeys([*wl, *wr])):
            rows.append((k, wl.get(k, ""), wr.get(k, "")))
        ml = self.left.analysis.metrics if self.left.analysis else {}
        mr = self.right.analysis.metrics if self.right.analysis else {}
        for k in METRIC_NAMES + KIND_METRIC_NAMES:
            a, b = ml.get(k), mr.get(k)
            if a or b:
                rows.append((k, "" if a is None else f"{a:,}", "" if b is None else f"{b:,}"))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)

    def retranslate(self) -> None:
        self.l_pick.setText(tr("Compare with:"))
        self.table.setHorizontalHeaderLabels([tr("Figure"), tr("Left"), tr("Right")])
        self.fill_picks()
        self.right.retranslate()
        self._titles()                  # a built-in's title_zh in Chinese
        self.refresh()
