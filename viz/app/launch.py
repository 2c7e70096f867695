"""The whole-launch panel: a heat map of wavefronts or sectors per warp over the grid, and
their histogram. Clicking a cell shows that warp in the warp view."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPen, QColor
from PySide6.QtWidgets import QComboBox, QGraphicsRectItem, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..i18n import tr
from ..scenario import Launch
from .state import Session


def grid_shape(grid: tuple[int, int, int], wpb: int) -> tuple[int, int]:
    """(block columns, rows) of the picture: the grid's x by y·z, or a 1-D grid wrapped to a square."""
    gx, gy, gz = grid
    if gy * gz > 1:
        return gx, gy * gz
    cols = max(1, min(gx, math.ceil(math.sqrt(gx / wpb))))
    return cols, math.ceil(gx / cols)


def shown_grid(grid: tuple[int, int, int], n: int) -> tuple[int, int, int]:
    """The grid of a launch's first ``n`` blocks, as the heat map draws them: the grid itself
    when ``n`` covers it; else its first whole rows of blockIdx.x (over y, then z) when one
    row fits in ``n``, else the first ``n`` blocks as one row of blockIdx.x. (Only a trace of
    a grid larger than ``viz.trace.analysis.HEAT_MAP_WARPS`` warps draws part of it.)"""
    gx, gy, gz = grid
    if n >= gx * gy * gz:
        return grid
    if gy * gz > 1 and n >= gx:
        rows = n // gx
        return (gx, rows, 1) if rows < gy else (gx, gy, rows // gy)
    return (max(1, n), 1, 1)


NICE_STEPS = (1, 2, 5)


def nice_step(units_visible: float, pixels: float, min_px: float) -> int:
    """The smallest step of 1, 2, 5, 10, 20, 50, ... units whose ticks are ``min_px`` apart."""
    px_per_unit = pixels / max(units_visible, 1e-9)
    decade = 1
    while True:
        for m in NICE_STEPS:
            if m * decade * px_per_unit >= min_px:
                return m * decade
        decade *= 10


class CellAxis(pg.AxisItem):
    """An axis over whole cells: a tick at the middle of every ``step``-th unit of ``cells``
    cells (a block of ``wpb`` warps on x, a row on y), labelled by ``label(unit)``; the
    step grows in 1-2-5 steps with the zoom, so labels never crowd and are never fractional."""

    def __init__(self, orientation: str, **kw):
        super().__init__(orientation, **kw)
        self.cells, self.count = 1, 1
        self.label_of = str

    def set_units(self, cells: int, count: int, label_of) -> None:
        self.cells, self.count, self.label_of = max(1, cells), max(1, count), label_of
        self.picture = None
        self.update()

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 - pyqtgraph's name
        lo, hi = sorted((minVal, maxVal))
        first = max(0, math.floor(lo / self.cells))
        last = min(self.count - 1, math.ceil(hi / self.cells) - 1)
        if last < first or size <= 0:
            return []
        horizontal = self.orientation in ("bottom", "top")
        step = nice_step((hi - lo) / self.cells, size, 56 if horizontal else 26)
        start = -(-first // step) * step
        values = [(k + 0.5) * self.cells for k in range(start, last + 1, step)]
        return [(step * self.cells, values)]

    def tickStrings(self, values, scale, spacing):  # noqa: N802
        return [self.label_of(int(v // self.cells)) for v in values]

    def resizeEvent(self, ev=None):  # noqa: N802 - Qt's name
        if self.label is not None:
            self.wrap_label()
        super().resizeEvent(ev)

    def wrap_label(self) -> None:
        """The axis title on as many lines as its length needs (centred), so it is never cut at
        the edges of a narrow dock: "blockIdx.x = the row's first + this (8 warps per block,
        warp 0 on the left)" is wider than the heat map in the default window."""
        horizontal = self.orientation in ("bottom", "top")
        room = (self.size().width() if horizontal else self.size().height()) - 6
        lab = self.label
        before = lab.textWidth()
        lab.setTextWidth(-1)
        want = -1.0
        if room > 40 and lab.boundingRect().width() > room:
            want = float(room)
            lab.setTextWidth(want)
            opt = lab.document().defaultTextOption()
            opt.setAlignment(Qt.AlignmentFlag.AlignHCenter)
            lab.document().setDefaultTextOption(opt)
        elif before != -1:
            lab.setTextWidth(-1)
        if abs(want - before) > 0.5:             # another number of lines: room for them
            (self._updateHeight if horizontal else self._updateWidth)()


def integer_ticks(axis: pg.AxisItem, minVal, maxVal, size) -> list:  # noqa: N803 - pyqtgraph's names
    """pyqtgraph's tick levels for ``axis`` with the fractional ones dropped (for counts)."""
    levels = []
    for spacing, values in pg.AxisItem.tickValues(axis, minVal, maxVal, size):
        if spacing >= 1:
            levels.append((spacing, [v for v in values if float(v).is_integer()]))
    if not levels and size > 0:
        lo, hi = sorted((minVal, maxVal))
        step = nice_step(hi - lo, size, 40)
        levels = [(step, [float(k) for k in range(math.ceil(lo / step) * step, math.floor(hi) + 1, step)])]
    return levels


def integer_strings(values) -> list[str]:
    return [f"{int(round(v)):,}" for v in values]


class IntAxis(pg.AxisItem):
    """A count axis (warps, wavefronts): integer ticks only."""

    def tickValues(self, minVal, maxVal, size):  # noqa: N802
        return integer_ticks(self, minVal, maxVal, size)

    def tickStrings(self, values, scale, spacing):  # noqa: N802
        return integer_strings(values)


def axis_texts(lw, wpb: int, cols: int, rows: int) -> tuple[str, str, object, object]:
    """(bottom label, left label, label of a block column, label of a row) for the heat map."""
    gx, gy, gz = lw.grid
    warps = tr("{wpb} warps per block, warp 0 on the left", wpb=wpb) if wpb > 1 else tr("1 warp per block")
    if gy * gz == 1:
        if rows == 1:
            left = tr("one block") if gx == 1 else tr("one row of {n} blocks", n=gx)
            return tr("blockIdx.x ({warps})", warps=warps), left, str, lambda r: ""
        return (tr("blockIdx.x = the row's first + this ({warps})", warps=warps),
                tr("row's first blockIdx.x ({c} per row)", c=cols),
                lambda b: f"+{b}", lambda r: f"{r * cols:,}")
    if gz == 1:
        return tr("blockIdx.x ({warps})", warps=warps), tr("blockIdx.y"), str, str
    return (tr("blockIdx.x ({warps})", warps=warps), tr("blockIdx.y, blockIdx.z ({gy} rows per z)", gy=gy),
            str, lambda r: f"{r % gy}, {r // gy}")


class LaunchPanel(QWidget):
    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.mode = QComboBox()
        self.mode.setObjectName("heatMode")
        self.mode.currentIndexChanged.connect(self.refresh)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setObjectName("heatmap")
        self.x_axis, self.y_axis = CellAxis("bottom"), CellAxis("left")
        self.plot = self.glw.addPlot(row=0, col=0, axisItems={"bottom": self.x_axis, "left": self.y_axis})
        self.plot.invertY(True)
        self.plot.setAspectLocked(False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.image = pg.ImageItem()
        self.plot.addItem(self.image)
        self.marker = QGraphicsRectItem()
        pen = QPen(QColor("#ff3d00"))
        pen.setWidthF(0)
        pen.setCosmetic(True)
        pen.setWidth(3)
        self.marker.setPen(pen)
        self.marker.setZValue(10)
        self.plot.addItem(self.marker)
        self.bar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False, width=12)
        self.bar.setImageItem(self.image, insert_in=self.plot)
        # The colour bar counts wavefronts or sectors: whole numbers only.
        self.bar.axis.tickValues = lambda lo, hi, size, axis=self.bar.axis: integer_ticks(axis, lo, hi, size)
        self.bar.axis.tickStrings = lambda values, scale, spacing: integer_strings(values)
        self.hist = self.glw.addPlot(row=1, col=0, axisItems={"bottom": IntAxis("bottom"), "left": IntAxis("left")})
        self.hist.setMenuEnabled(False)
        self.hist.hideButtons()
        self.hist.setMaximumHeight(170)
        self.bars: pg.BarGraphItem | None = None
        self.glw.scene().sigMouseClicked.connect(self._clicked)
        top = QHBoxLayout()
        top.addWidget(self.mode)
        top.addWidget(self.info, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.glw, 1)
        self.values: np.ndarray | None = None
        self.cols = 1
        self.shown_blocks = 1          # the blocks the picture draws (a trace of a huge grid: its first ones)
        self._key = None
        session.analysisChanged.connect(self.refresh)
        session.changed.connect(self.refresh)
        session.positionChanged.connect(self._position)
        self.retranslate()

    # -- data ----------------------------------------------------------------

    def per_warp(self) -> tuple[np.ndarray, str] | None:
        """(blocks × warps values, unit) for the chosen mode, or None before the analysis."""
        if self.session.is_trace:
            return self._trace_per_warp()
        an, d = self.session.analysis, self.session.detail
        if an is None or d is None or an.scenario is not self.session.scenario:
            return None
        i = self.session.cursor.instruction
        st = an.stats[i]
        unit = tr("wavefronts") if st.space == "shared" else tr("sectors")
        if self.mode.currentIndex() == 1:
            rows = [s.per_warp.astype(np.int64) for s in an.stats if s.instruction.access == st.instruction.access]
            return np.sum(rows, axis=0), unit
        return st.per_warp.astype(np.int64), unit

    def _trace_per_warp(self) -> tuple[np.ndarray, str] | None:
        """A trace: wavefronts + sectors per recorded (block, warp), of the static instruction on
        screen (or of all); blocks that were not recorded are 0 (``TraceAnalysis.per_warp``)."""
        an, d = self.session.trace_analysis, self.session.detail
        if an is None or an.trace is not self.session.trace.trace:
            return None
        if self.mode.currentIndex() == 1 or d is None:
            return an.per_warp(None), tr("wavefronts + sectors")
        return an.per_warp(d.access.index), tr("wavefronts") if d.space == "shared" else tr("sectors")

    def _instr_key(self) -> int:
        """What the "this instruction" map depends on: the instruction on screen (a trace: its static instruction)."""
        if self.session.is_trace:
            d = self.session.detail
            return -1 if d is None else d.access.index
        return self.session.cursor.instruction

    def refresh(self) -> None:
        got = self.per_warp()
        sc = self.session.scenario
        if got is None or sc is None:
            if sc is None or self.values is None:
                self.image.clear()
                self.values = None
                for plot in (self.plot, self.hist):     # no map: no axis titles of the last one left behind
                    plot.setLabel("bottom", "")
                    plot.setLabel("left", "")
            self.info.setText(tr("Analysing the whole launch…") if sc is not None else "")
            return
        vals, unit = got
        lw = sc.launch
        wpb = lw.warps_per_block
        shown = Launch(lw.block, shown_grid(lw.grid, vals.shape[0]))
        cols, rows = grid_shape(shown.grid, wpb)
        self.cols = cols
        img = np.full((rows, cols * wpb), np.nan)
        n = self.shown_blocks = shown.blocks
        flat = np.full(rows * cols, -1, np.int64)
        flat[:n] = np.arange(n)
        blocks = flat.reshape(rows, cols)
        have = blocks >= 0
        for w in range(wpb):
            col = img[:, w::wpb]
            col[have] = vals[blocks[have], w]
        self.values = vals
        drawn = vals[:n]
        key = (id(self.session.trace_analysis or self.session.analysis), self.mode.currentIndex(), self._instr_key())
        self.image.setImage(img.T, autoLevels=False)
        lo, hi = float(np.nanmin(img)), float(np.nanmax(img))
        self.bar.setLevels((lo, hi if hi > lo else lo + 1))
        self.image.setRect(QRectF(0, 0, cols * wpb, rows))
        bottom, left, col_label, row_label = axis_texts(shown, wpb, cols, rows)
        self.x_axis.set_units(wpb, cols, col_label)
        self.y_axis.set_units(1, rows, row_label)
        vb = self.plot.getViewBox()
        vb.setLimits(xMin=0, xMax=cols * wpb, yMin=0, yMax=rows)
        if key != self._key:
            self.plot.setRange(xRange=(0, cols * wpb), yRange=(0, rows), padding=0)
            self._key = key
        self.plot.setLabel("bottom", bottom)
        self.plot.setLabel("left", left)
        counts = np.bincount(drawn.reshape(-1).clip(0)) if drawn.size else np.zeros(1)
        xs = np.arange(len(counts))
        nz = counts > 0
        if self.bars is not None:
            self.hist.removeItem(self.bars)
        self.bars = pg.BarGraphItem(x=xs[nz], height=counts[nz], width=0.8, brush="#3b82f6")
        self.hist.addItem(self.bars)
        self.hist.setLabel("bottom", tr("{unit} per warp", unit=unit))
        self.hist.setLabel("left", tr("warps"))
        self.hist.getViewBox().setLimits(xMin=-1, yMin=0)
        self.hist.autoRange()
        text = tr("{unit} per warp over the grid: min {lo}, max {hi}, mean {mean}. Click a cell to see that warp.",
                  unit=unit, lo=int(lo), hi=int(hi), mean=f"{np.mean(drawn):.2f}")
        if n < lw.blocks:
            text += " " + tr("The map shows the grid's first {n} of {total} blocks.", n=f"{n:,}",
                             total=f"{lw.blocks:,}")
        self.info.setText(text)
        self._position()

    def _position(self) -> None:
        sc = self.session.scenario
        if sc is None or self.values is None:
            return
        c = self.session.cursor
        key = (id(self.session.trace_analysis or self.session.analysis), self.mode.currentIndex(), self._instr_key())
        if self.mode.currentIndex() == 0 and key != self._key:
            self.refresh()
            return
        x, y = self.cell_of(c.block, c.warp)
        self.marker.setVisible(c.block < self.shown_blocks)     # a block the map does not draw: no marker
        self.marker.setRect(QRectF(x, y, 1, 1))

    def cell_of(self, block: int, warp: int) -> tuple[int, int]:
        wpb = self.session.scenario.launch.warps_per_block
        return (block % self.cols) * wpb + warp, block // self.cols

    def warp_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(block, warp) of the picture cell at image coordinates (x, y), or None."""
        sc = self.session.scenario
        if sc is None:
            return None
        wpb = sc.launch.warps_per_block
        xi, yi = int(math.floor(x)), int(math.floor(y))
        if xi < 0 or yi < 0 or xi >= self.cols * wpb:
            return None
        block = yi * self.cols + xi // wpb
        if block >= min(sc.launch.blocks, self.shown_blocks):
            return None
        return block, xi % wpb

    def _clicked(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            return
        pt = self.image.mapFromScene(ev.scenePos())
        hit = self.warp_at(pt.x(), pt.y())
        if hit is not None:
            self.session.go(block=hit[0], warp=hit[1])

    def retranslate(self) -> None:
        i = max(0, self.mode.currentIndex())
        self.mode.blockSignals(True)
        self.mode.clear()
        self.mode.addItems([tr("This instruction"), tr("All instructions of this access")])
        self.mode.setCurrentIndex(i)
        self.mode.blockSignals(False)
        self._key = None
        self.refresh()
