"""The GPU panel's results chart: measured times over the cost model's prediction.

A sweep's measured and predicted times are two labelled lines; the open scenario's measured
and predicted times are two labelled bars side by side, each with its value, and their ratio
in words above the chart. The unit is chosen from the data and named on the axis; with
nothing to draw the chart gives way to a sentence.

The pyqtgraph plot is built when first needed (the Chart tab shown, or ``chart`` read): it is
the most expensive widget of the panel, and the panel is built while the app starts.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ..i18n import sep, tr
from .gpu_texts import time_unit

MEASURED = "#2563eb"
PREDICTED = "#d97706"


class ResultsChart(QWidget):
    """The Chart tab: the sweep list and its Run button, the key, the ratio line, the plot."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._chart = None                    # pyqtgraph's PlotWidget, built by ``chart``
        self._theme = None
        self._drawn_with: tuple | None = None  # the last draw's arguments, drawn again once the plot exists
        self.chart_unit: tuple[float, str] = (1.0, "ms")
        self.bar_labels: list[str] = []       # the texts drawn above the bars (values and the ratio)
        # The key above the chart, never over its points (a legend inside covered PAD = 0).
        self.key = QWidget()
        self.key.setObjectName("gpuChartKey")
        kl = QGridLayout(self.key)             # one row per series: never wider than the dock
        kl.setContentsMargins(4, 0, 4, 0)
        kl.setVerticalSpacing(0)
        self.key_labels: list[QLabel] = []
        for row, colour in enumerate((MEASURED, PREDICTED)):
            swatch = QLabel("■")
            swatch.setStyleSheet(f"color: {colour};")
            text = QLabel()
            text.setTextFormat(Qt.TextFormat.PlainText)
            text.setWordWrap(True)
            kl.addWidget(swatch, row, 0)
            kl.addWidget(text, row, 1)
            self.key_labels.append(text)
        kl.setColumnStretch(1, 1)
        # the open scenario's measured and predicted times and their ratio, in words beside the bars
        self.ratio = QLabel()
        self.ratio.setObjectName("gpuChartRatio")
        self.ratio.setWordWrap(True)
        self.ratio.setTextFormat(Qt.TextFormat.PlainText)
        # Nothing to draw: a sentence instead of empty axes, and the scenarios the file has.
        self.chart_empty = QLabel()
        self.chart_empty.setObjectName("gpuChartEmpty")
        self.chart_empty.setWordWrap(True)
        self.chart_empty.setTextFormat(Qt.TextFormat.PlainText)
        self.chart_empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.sweep_choice = QComboBox()
        self.sweep_choice.setObjectName("gpuSweep")
        self.b_sweep = QPushButton()
        self.b_sweep.setObjectName("gpuRunSweep")
        self._layout = cl = QVBoxLayout(self)
        cl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.sweep_choice, 1)
        row.addWidget(self.b_sweep)
        cl.addLayout(row)
        cl.addWidget(self.key)
        cl.addWidget(self.ratio)
        cl.addWidget(self.chart_empty, 1)
        self.chart_empty.hide()

    # ------------------------------------------------------------------ the plot, built when first needed

    @property
    def built(self) -> bool:
        return self._chart is not None

    @property
    def chart(self):
        """pyqtgraph's PlotWidget (built now if it is not yet)."""
        if self._chart is None:
            import pyqtgraph as pg

            c = self._chart = pg.PlotWidget()
            c.setObjectName("gpuChart")
            c.showGrid(x=True, y=True, alpha=0.3)
            # The unit is chosen from the data (gpu_texts.time_unit) and named on the axis: pyqtgraph's
            # own SI prefix read "time per launch (ms) (x0.001)" with ticks that were really µs.
            c.getAxis("left").enableAutoSIPrefix(False)
            c.getAxis("bottom").enableAutoSIPrefix(False)
            c.setMouseEnabled(x=False, y=False)
            c.setMenuEnabled(False)
            c.setMinimumHeight(150)      # room for its axis label in a 1280x720 window's short dock
            self._layout.insertWidget(self._layout.indexOf(self.chart_empty), c, 1)
            if self._theme is not None:
                self._apply_theme()
            if self._drawn_with is not None:
                self._draw(*self._drawn_with)
        return self._chart

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.chart                      # noqa: B018 - the tab is shown: build (and draw) the plot
        super().showEvent(event)

    def set_theme(self, th) -> None:
        """The chart in the app's theme (a black chart sat in the light theme's panel)."""
        self._theme = th
        if self._chart is not None:
            self._apply_theme()
            if self._drawn_with is not None:
                self._draw(*self._drawn_with)

    def _apply_theme(self) -> None:
        bg, fg = self._theme.colors["background"], self._theme.colors["text"]
        self._chart.setBackground(bg)
        item = self._chart.getPlotItem()
        for ax in ("left", "bottom"):
            item.getAxis(ax).setPen(fg)
            item.getAxis(ax).setTextPen(fg)

    # ------------------------------------------------------------------ drawing

    def draw(self, sweep: dict | None, sweep_name, timing: dict, scenario: str, empty_text: str) -> None:
        """Draw ``sweep`` (its ``points``; named ``sweep_name``) and the open scenario's
        ``timing`` (``median_ms``, ``predicted.ms``); ``empty_text`` when there is nothing. Kept
        until the plot is built when it is not yet."""
        self._drawn_with = (sweep, sweep_name, timing, scenario, empty_text)
        if self._chart is not None:
            self._draw(*self._drawn_with)

    def _draw(self, sweep: dict | None, name, t: dict, scenario: str, empty_text: str) -> None:
        import pyqtgraph as pg

        chart = self._chart
        chart.clear()
        self.bar_labels = []
        pts = (sweep or {}).get("points") or []
        meas = np.array([p.get("median_ms") or np.nan for p in pts], float)
        pred = np.array([p.get("predicted_ms") or np.nan for p in pts], float)
        m = t.get("median_ms") or None
        p = (t.get("predicted") or {}).get("ms") or None
        values = [v for v in [*meas, *pred, m or np.nan, p or np.nan] if np.isfinite(v) and v > 0]
        axis = chart.getPlotItem()
        if not values:
            axis.setLabel("left", "")
            axis.setLabel("bottom", "")
            chart.getAxis("bottom").setTicks(None)
            chart.hide()
            self.key.hide()
            self.ratio.hide()
            self.chart_empty.setText(empty_text)
            self.chart_empty.show()
            return
        self.chart_empty.hide()
        chart.show()
        self.key.show()
        factor, unit = self.chart_unit = time_unit(max(values))
        ticks = []
        param = numeric = None
        if len(pts):
            xs = np.arange(len(pts))
            chart.plot(xs, meas * factor, pen=pg.mkPen(MEASURED, width=2), symbol="o", symbolBrush=MEASURED,
                       name=tr("measured"))
            chart.plot(xs, pred * factor, pen=pg.mkPen(PREDICTED, width=2, style=Qt.PenStyle.DashLine),
                       symbol="s", symbolBrush=PREDICTED, name=tr("cost model"))
            param = (sweep or {}).get("param")
            numeric = param and param != "scenario" and all(isinstance(q.get("value"), (int, float)) for q in pts)
            # the values alone under the points ("PAD = 0 PAD = 1 ..." ran together in a narrow dock),
            # the parameter's name on the axis
            ticks += [(i, str(q["value"]) if numeric else str(q.get("label", q.get("value"))).replace(
                "transpose-tile", "tt")) for i, q in enumerate(pts)]
        top = max(values) * factor
        self.ratio.setVisible(bool(m))
        if m:
            x0 = len(pts) + 1 if len(pts) else 0
            bars = [(x0 - 0.22 if p else x0, m, MEASURED, tr("measured"))]
            if p:
                bars.append((x0 + 0.22, p, PREDICTED, tr("cost model")))
            for x, v, colour, label in bars:
                chart.addItem(pg.BarGraphItem(x=[x], height=[v * factor], width=0.4, brush=colour, name=label))
                self.bar_labels.append(f"{v * factor:.3g} {unit}")
            ticks.append((x0, tr("this scenario")))
            if p:
                self.bar_labels.append(tr("measured / predicted = {r:.2f}", r=m / p))
                self.ratio.setText(tr("{name}: measured {m}, cost model {p}; {ratio}", name=scenario,
                                      m=self.bar_labels[0], p=self.bar_labels[1], ratio=self.bar_labels[2]))
            else:
                self.ratio.setText(tr("{name}: measured {m}; no prediction in this file", name=scenario,
                                      m=self.bar_labels[0]))
        chart.getAxis("bottom").setTicks([ticks])
        chart.setYRange(0, top * 1.1, padding=0)
        last = (len(pts) + 1 if len(pts) else 0) + 1.3 if m else len(pts) - 0.5     # room for "this scenario"
        chart.setXRange(-0.6 if len(pts) else -1.3, last, padding=0)
        where = ""
        if len(pts):
            where = (tr("{param} (sweep {name})", param=param, name=name) if numeric
                     else tr("sweep {name}", name=name))
        if m:
            here = tr("this scenario ({name})", name=scenario)
            where = f"{where}{sep('; ')}{here}" if where else here
        axis.setLabel("bottom", where)
        axis.setLabel("left", tr("{unit} per launch", unit=unit))
        self.key_labels[0].setText(tr("measured on the GPU") + (sep(" (") + tr("solid line") + sep(")")
                                                                if len(pts) else ""))
        self.key_labels[1].setText(tr("cost model's prediction") + (sep(" (") + tr("dashed line") + sep(")")
                                                                    if len(pts) else ""))

    def series(self) -> list[tuple[str, np.ndarray]]:
        """(name, y values) of the plotted lines (for tests and export)."""
        import pyqtgraph as pg

        out = []
        for item in self.chart.getPlotItem().listDataItems():
            if not isinstance(item, pg.PlotDataItem):
                continue                    # the scenario's bars: see bar_labels
            _x, y = item.getData()
            out.append((item.name(), np.asarray(y)))
        return out


__all__ = ["ResultsChart", "MEASURED", "PREDICTED"]
