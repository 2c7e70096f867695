"""Sweeps: pick a param (or an array's pad, swizzle or type, or the block size), give its
values, and plot a figure of the whole launch against it. Runs off the GUI thread.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
import tomlkit
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QBoxLayout, QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QSizePolicy, QStyle, QStyleOptionComboBox, QStylePainter, QVBoxLayout, QWidget)

from ..engine import Analysis, analyze
from ..i18n import tr
from ..scenario import ScenarioError, loads
from .state import Session
from .worker import Runner

_M = {"wf": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{}.sum",
      "inst": "smsp__inst_executed_op_shared_{}.sum",
      "sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_{}.sum",
      "req": "l1tex__t_requests_pipe_lsu_mem_global_op_{}.sum"}


def _ratio(num: str, den: str, ops=("ld", "st")):
    return lambda m: _div(sum(m[_M[num].format(o)] for o in ops), sum(m[_M[den].format(o)] for o in ops))


# Loads and stores apart: a tile stored by rows and read down columns has 1 wavefront per
# store and 32 per load, which the mixed figure averages to 16.5.
FIGURES = {
    "wavefronts per shared load": _ratio("wf", "inst", ("ld",)),
    "wavefronts per shared store": _ratio("wf", "inst", ("st",)),
    "wavefronts per shared instruction": _ratio("wf", "inst"),
    "bank conflicts": lambda m: m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]
    + m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"],
    "sectors per global load request": _ratio("sectors", "req", ("ld",)),
    "sectors per global store request": _ratio("sectors", "req", ("st",)),
    "sectors per global request": _ratio("sectors", "req"),
}
MAX_POINTS = 200   # a sweep analyses at most this many values (and says so when cut)


def _div(a: float, b: float) -> float:
    return a / b if b else float("nan")


def figure_value(an: Analysis, figure: str) -> float:
    m = an.metrics
    return float(FIGURES[figure](m)) if figure in FIGURES else float(m[figure])


@dataclass(frozen=True)
class Dimension:
    kind: str      # "param" | "pad" | "swizzle" | "type" | "block"
    target: str    # param or array name ("" for block)

    def label(self) -> str:
        if self.kind == "param":
            return self.target
        if self.kind == "block":
            return tr("block size (x)")
        return tr("{what} of {array}", what=tr(self.kind), array=self.target)

    @property
    def categorical(self) -> bool:
        return self.kind in ("swizzle", "type")

    def apply(self, text: str, value) -> str:
        doc = tomlkit.parse(text)
        if self.kind == "param":
            doc["params"][self.target] = value
        elif self.kind == "block":
            block = doc["launch"]["block"]
            rest = list(block[1:]) if isinstance(block, list) else []
            doc["launch"]["block"] = [value, *rest]
        else:
            doc["arrays"][self.target][self.kind] = value
        return tomlkit.dumps(doc)


def dimensions(text: str) -> list[Dimension]:
    try:
        raw = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    out = [Dimension("param", k) for k in (raw.get("params") or {})]
    for name, spec in (raw.get("arrays") or {}).items():
        if not isinstance(spec, dict):
            continue
        two_d = isinstance(spec.get("shape"), list) and len(spec["shape"]) == 2
        if two_d:
            out += [Dimension("pad", name), Dimension("swizzle", name)]
        if "type" in spec:
            out.append(Dimension("type", name))
    out.append(Dimension("block", ""))
    return out


def default_values(dim: Dimension, raw_value) -> str:
    if dim.kind == "pad":
        return "0:5"
    if dim.kind == "swizzle":
        return "none, xor, diagonal, bitrev, xor:4"
    if dim.kind == "type":
        return "float, float2, float4, double"
    if dim.kind == "block":
        return "32, 64, 128, 256, 512, 1024"
    v = raw_value if isinstance(raw_value, int) else 1
    if v > 0 and v & (v - 1) == 0 and v >= 2:
        return ", ".join(str(v >> k) for k in range(min(3, int(math.log2(v))), 0, -1)) + f", {v}, {2 * v}, {4 * v}"
    return f"{max(0, v - 2)}:{v + 3}"


def parse_values(text: str, categorical: bool) -> tuple[list, int]:
    """The values to sweep (at most ``MAX_POINTS``) and how many the text asked for."""
    text = text.strip()
    if categorical:
        vals = [x.strip() for x in text.split(",") if x.strip()]
        return vals[:MAX_POINTS], len(vals)
    if ":" in text and "," not in text:
        parts = [int(p, 0) for p in text.split(":")]
        start, stop, step = (parts + [1])[:3] if len(parts) >= 2 else (0, parts[0], 1)
        if step == 0:
            raise ValueError("step 0")
        r = range(start, stop, step)
        return list(r[:MAX_POINTS]), len(r)
    vals = [int(x, 0) for x in text.split(",") if x.strip()]
    return vals[:MAX_POINTS], len(vals)


def run_sweep(text: str, source: str, dim: Dimension, values: list, progress, cancel) -> list:
    """[(value, Analysis | ScenarioError)] for each value."""
    out = []
    for k, v in enumerate(values):
        if cancel():
            break
        progress(k / len(values), f"{dim.label()} = {v}")
        try:
            sc = loads(dim.apply(text, v), source=source)
            out.append((v, analyze(sc, cancel=cancel)))
        except ScenarioError as err:
            out.append((v, err))
    return out


class ElidingCombo(QComboBox):
    """A combo box whose width does not follow its longest item: the shown text is elided in
    the middle, and the full text is its tooltip (and each item's in the list)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(10)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.view().setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.currentIndexChanged.connect(self.sync_tooltip)
        self.model().dataChanged.connect(self.sync_tooltip)
        self.model().rowsInserted.connect(self._items_added)

    def _items_added(self, _parent, first: int, last: int) -> None:
        for k in range(first, last + 1):
            self.setItemData(k, self.itemText(k), Qt.ItemDataRole.ToolTipRole)
        self.sync_tooltip()

    def sync_tooltip(self, *_args) -> None:
        self.setToolTip(self.currentText())

    def _label_option(self) -> tuple[QStyleOptionComboBox, int]:
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        r = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                        QStyle.SubControl.SC_ComboBoxEditField, self)
        return opt, r.width()

    def shown_text(self) -> str:
        """The text drawn in the box: the current text, elided to the box's width."""
        _opt, w = self._label_option()
        return self.fontMetrics().elidedText(self.currentText(), Qt.TextElideMode.ElideMiddle, max(0, w - 2))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        p = QStylePainter(self)
        opt, _w = self._label_option()
        p.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        opt.currentText = self.shown_text()
        p.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)


class SweepPanel(QWidget):
    WIDE = 760   # narrower than this, the plot goes under the form and gets the whole width

    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.runner = Runner(self)
        self.runner.done.connect(self._done)
        self.runner.failed.connect(lambda err: self.status.setText(str(err)))
        self.runner.progress.connect(lambda f, t: self.status.setText(tr("Sweeping: {pct}% ({what})",
                                                                             pct=int(f * 100), what=t)))
        self.dim = ElidingCombo()
        self.dim.setObjectName("sweepDimension")
        self.values = QLineEdit()
        self.values.setObjectName("sweepValues")
        self.figure = ElidingCombo()
        self.figure.setObjectName("sweepFigure")
        self.run = QPushButton()
        self.run.setObjectName("sweepRun")
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.notice = QLabel()   # "only the first 200 of N values": shown while it applies
        self.notice.setObjectName("sweepNotice")
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet("color: #b45309; font-weight: bold;")
        self.notice.hide()
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("sweepPlot")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.plot.setMinimumSize(160, 120)
        self.legend = self.plot.addLegend()
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.l_dim, self.l_values, self.l_fig = QLabel(), QLabel(), QLabel()
        self.form.addRow(self.l_dim, self.dim)
        self.form.addRow(self.l_values, self.values)
        self.form.addRow(self.l_fig, self.figure)
        row = QHBoxLayout()
        row.addWidget(self.run)
        row.addWidget(self.status, 1)
        self.controls = QWidget()
        left = QVBoxLayout(self.controls)
        left.setContentsMargins(4, 4, 4, 4)
        left.addLayout(self.form)
        left.addLayout(row)
        left.addWidget(self.notice)
        left.addStretch(1)
        self.box = QBoxLayout(QBoxLayout.Direction.TopToBottom, self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.addWidget(self.controls, 0)
        self.box.addWidget(self.plot, 1)
        self.dim.currentIndexChanged.connect(self._dim_changed)
        self.figure.currentIndexChanged.connect(self._replot)
        self.run.clicked.connect(self.start)
        session.changed.connect(self._scenario_changed)
        self.results: list = []
        self._dims: list[Dimension] = []
        self.counts = (0, 0)   # (values swept, values asked for) of the last sweep started
        self.retranslate()
        self._arrange(self.width())

    def _arrange(self, width: int) -> None:
        """Wide: the form at the left (at most a third); narrow: the form above the plot."""
        if width >= self.WIDE:
            self.box.setDirection(QBoxLayout.Direction.LeftToRight)
            self.controls.setMaximumWidth(max(240, width // 3))
            self.controls.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        else:
            self.box.setDirection(QBoxLayout.Direction.TopToBottom)
            self.controls.setMaximumWidth(16777215)
            self.controls.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

    def resizeEvent(self, event) -> None:  # noqa: N802
        self._arrange(event.size().width())
        super().resizeEvent(event)

    def _scenario_changed(self) -> None:
        dims = dimensions(self.session.text)
        if dims != self._dims:
            keep = self.dim.currentData()
            self._dims = dims
            self.dim.blockSignals(True)
            self.dim.clear()
            for d in dims:
                self.dim.addItem(d.label(), d)
            i = next((k for k, d in enumerate(dims) if d == keep), 0)
            self.dim.setCurrentIndex(i)
            self.dim.blockSignals(False)
            self.dim.sync_tooltip()
            self._dim_changed()

    def _dim_changed(self) -> None:
        d: Dimension | None = self.dim.currentData()
        if d is None:
            return
        raw_value = None
        if d.kind == "param" and self.session.scenario is not None:
            raw_value = self.session.scenario.params.get(d.target)
        self.values.setText(default_values(d, raw_value))

    def start(self) -> None:
        d: Dimension | None = self.dim.currentData()
        if d is None or self.session.scenario is None:
            return
        try:
            values, asked = parse_values(self.values.text(), d.categorical)
        except ValueError:
            self.status.setText(tr("Values: give a list (1, 2, 4) or a range start:stop[:step]"))
            return
        if not values:
            return
        self.counts = (len(values), asked)
        self._show_notice()
        text, source = self.session.text, self.session.source
        self.sweep_dim = d
        self.runner.submit(lambda progress, cancel: run_sweep(text, source, d, values, progress, cancel))

    def _done(self, results: list) -> None:
        self.results = results
        bad = [(v, r) for v, r in results if isinstance(r, ScenarioError)]
        ok = len(results) - len(bad)
        msg = tr("{ok} of {n} points analysed.", ok=ok, n=len(results))
        if bad:
            msg += " " + tr("{v}: {problem}", v=bad[0][0], problem=bad[0][1].problem)
        self.status.setText(msg)
        self._show_notice()
        self._replot()

    def _show_notice(self) -> None:
        swept, asked = self.counts
        cut = asked > swept
        if cut:
            self.notice.setText(tr("Cut to the first {n} of {total} values: a sweep runs at most {n} points.",
                                   n=swept, total=f"{asked:,}"))
        self.notice.setVisible(cut)

    def series(self) -> tuple[list, list[float]]:
        fig = self.figure.currentData()
        xs, ys = [], []
        for v, r in self.results:
            xs.append(v)
            ys.append(figure_value(r, fig) if isinstance(r, Analysis) else float("nan"))
        return xs, ys

    def _replot(self) -> None:
        self.plot.clear()
        self.legend.clear()
        if not self.results:
            return
        xs, ys = self.series()
        d = getattr(self, "sweep_dim", None)
        cat = d is not None and d.categorical
        x_num = list(range(len(xs))) if cat else xs
        ax = self.plot.getAxis("bottom")
        ax.setTicks([list(enumerate(map(str, xs)))] if cat else None)
        self.plot.plot(x_num, np.asarray(ys, float), pen=pg.mkPen("#2563eb", width=2), symbol="o",
                       symbolBrush="#2563eb", name=self.figure.currentText(), connect="finite")
        self.plot.setLabel("bottom", d.label() if d else "")
        self.plot.setLabel("left", self.figure.currentText())

    def retranslate(self) -> None:
        self.l_dim.setText(tr("Vary"))
        self.l_values.setText(tr("Values"))
        self.l_fig.setText(tr("Figure"))
        self.values.setToolTip(tr("A list (1, 2, 4) or a range start:stop[:step]"))
        self.run.setText(tr("Run sweep"))
        keep = self.figure.currentData()
        self.figure.blockSignals(True)
        self.figure.clear()
        for name in FIGURES:
            self.figure.addItem(tr(name), name)
        from ..engine import METRIC_NAMES

        for name in METRIC_NAMES:
            self.figure.addItem(name, name)
        i = self.figure.findData(keep)
        self.figure.setCurrentIndex(max(0, i))
        self.figure.blockSignals(False)
        self.figure.sync_tooltip()
        self._dims = []
        self._scenario_changed()
        self._show_notice()
        self._replot()
