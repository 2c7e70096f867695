"""The GPU panel: the current scenario on a real GPU, or the measurements of one.

It shows the device (or exactly why there is none), Run / Validate / Cancel, the model
vs the hardware counters per metric, the measured time beside the cost model's
prediction, the generated kernel's source and its SASS memory instructions, and a chart
of measured times over the prediction for the scenario and for a sweep.

Without a GPU it shows measurements from a results file: the shipped H100 file by
default, or one chosen with **Import measurements** (``warpviz bench --all --out F``).

GPU work runs on a worker thread (``viz.app.worker.Runner``); the CUDA context lives
in a child process (``viz.gpu.worker.ProcessSession``), so a faulting or hanging kernel,
or Cancel, kills only that process and the next Run starts a fresh one.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QApplication, QComboBox, QFileDialog, QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton,
                               QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from ..engine import METRIC_NAMES
from ..gpu import GpuUnavailable, results
from ..i18n import language, sep, tr
from .worker import Runner

MEASURED = "#2563eb"
PREDICTED = "#d97706"


# What limits the cost model's time (viz.gpu.costmodel.Prediction.bound), as shown.
BOUND_NAMES = {"DRAM": "DRAM", "L1": "L1", "shared": "shared memory", "issue": "instruction issue"}


def _bound(name: str) -> str:
    """The cost model's limit in words: kept as the model names it in English, translated otherwise."""
    return name if language() == "en" else tr(BOUND_NAMES.get(name, name))


class GpuPanel(QWidget):
    """Constructed as ``GpuPanel(main_window)``; reads ``main_window.session``."""

    deviceKnown = Signal(str)

    def __init__(self, main_window):
        super().__init__()
        self.setObjectName("gpuPanel")
        self.window_ = main_window
        self.session = main_window.session
        self.measurements: dict | None = None
        self.measurements_path: Path | None = None
        self.live: dict[str, dict] = {}          # this session's runs, by scenario name
        self.validation: dict[str, list] = {}    # this session's counter comparisons
        self.device_info: dict | None = None
        self._reason: tuple[str, dict] | None = None  # why there is no GPU: (English template, fields)
        self._gpu = None                          # ProcessSession, made on first Run
        self._gpu_lock = threading.Lock()
        self._memcpy_gbps: float | None = None
        self.runner = Runner(self)
        self.runner.done.connect(self._job_done)
        self.runner.failed.connect(self._job_failed)
        self.runner.progress.connect(lambda f, t: self.status.setText(f"{int(f * 100)}% {t}"))
        self.runner.busyChanged.connect(self._busy)
        self.aux = Runner(self)                   # source, SASS, device probe: never blocks the GUI
        self.aux.done.connect(self._aux_done)
        self.aux.failed.connect(lambda err: self.status.setText(str(err)))
        self._build()
        self.session.changed.connect(self.refresh)
        self.deviceKnown.connect(self.device.setText)
        self.load_measurements(None)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)  # the GPU child process goes with the app
        self._probe()
        self.retranslate()
        self.refresh()

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        self.device = QLabel()
        self.device.setObjectName("gpuDevice")
        self.device.setWordWrap(True)
        self.source_label = QLabel()
        self.source_label.setObjectName("gpuMeasurements")
        self.source_label.setWordWrap(True)
        self.b_run, self.b_validate, self.b_cancel, self.b_import = (QPushButton() for _ in range(4))
        for b, name in ((self.b_run, "gpuRun"), (self.b_validate, "gpuValidate"), (self.b_cancel, "gpuCancel"),
                        (self.b_import, "gpuImport")):
            b.setObjectName(name)
        self.b_cancel.setEnabled(False)
        self.status = QLabel()
        self.status.setObjectName("gpuStatus")
        self.status.setWordWrap(True)
        top = QVBoxLayout()  # the buttons, then the status under them: the dock stays narrow
        buttons = QGridLayout()  # two by two: the dock fits beside the picture on a 1280-px screen
        for k, b in enumerate((self.b_run, self.b_validate, self.b_cancel, self.b_import)):
            buttons.addWidget(b, k // 2, k % 2)
        buttons.setColumnStretch(2, 1)
        top.addLayout(buttons)
        top.addWidget(self.status)

        self.table = QTableWidget(0, 4)
        self.table.setObjectName("gpuTable")
        self.table.verticalHeader().hide()
        self.summary = QLabel()
        self.summary.setObjectName("gpuSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        numbers = QWidget()
        nl = QVBoxLayout(numbers)
        nl.setContentsMargins(0, 0, 0, 0)
        nl.addWidget(self.summary)
        nl.addWidget(self.table, 1)

        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        # The readable hand-written kernel of a built-in (kernels/*.cu) first, the generated one after it.
        self.hand = QPlainTextEdit()
        self.hand.setObjectName("gpuHandKernel")
        self.hand.setReadOnly(True)
        self.hand.setFont(mono)
        self.hand.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.hand_info = QLabel()
        self.hand_info.setObjectName("gpuHandKernelInfo")
        self.hand_info.setWordWrap(True)
        self.hand_box = QWidget()
        hl = QVBoxLayout(self.hand_box)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(self.hand_info)
        hl.addWidget(self.hand, 1)
        self._hand_for: str | None = None
        self.kernel = QPlainTextEdit()
        self.kernel.setObjectName("gpuKernel")
        self.kernel.setReadOnly(True)
        self.kernel.setFont(mono)
        self.sass = QPlainTextEdit()
        self.sass.setObjectName("gpuSass")
        self.sass.setReadOnly(True)
        self.sass.setFont(mono)

        self.chart = pg.PlotWidget()
        self.chart.setObjectName("gpuChart")
        self.chart.showGrid(x=True, y=True, alpha=0.3)
        self.legend = self.chart.addLegend()
        self.sweep_choice = QComboBox()
        self.sweep_choice.setObjectName("gpuSweep")
        self.b_sweep = QPushButton()
        self.b_sweep.setObjectName("gpuRunSweep")
        chart_box = QWidget()
        cl = QVBoxLayout(chart_box)
        cl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.sweep_choice, 1)
        row.addWidget(self.b_sweep)
        cl.addLayout(row)
        cl.addWidget(self.chart, 1)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("gpuTabs")
        self.tabs.addTab(numbers, "")
        self.tabs.addTab(chart_box, "")
        self.tabs.addTab(self.hand_box, "")
        self.tabs.addTab(self.kernel, "")
        self.tabs.addTab(self.sass, "")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.device)
        lay.addWidget(self.source_label)
        lay.addLayout(top)
        lay.addWidget(self.tabs, 1)

        self.b_run.clicked.connect(self.run)
        self.b_validate.clicked.connect(self.validate)
        self.b_cancel.clicked.connect(self.cancel)
        self.b_import.clicked.connect(self._import_dialog)
        self.b_sweep.clicked.connect(self.run_sweep)
        self.sweep_choice.currentIndexChanged.connect(lambda _i: self._draw_chart())
        self.tabs.currentChanged.connect(lambda _i: self._tab_shown())

    @property
    def device_reason(self) -> str | None:
        """Why there is no GPU, in the language of the moment."""
        return tr(self._reason[0], **self._reason[1]) if self._reason else None

    def retranslate(self) -> None:
        self.b_run.setText(tr("Run on GPU"))
        self.b_validate.setText(tr("Validate counters"))
        self.b_cancel.setText(tr("Cancel"))
        self.b_import.setText(tr("Import measurements…"))
        self.b_sweep.setText(tr("Run sweep on GPU"))
        for i, name in enumerate((tr("Model vs hardware"), tr("Chart"), tr("Kernel source"), tr("Generated kernel"),
                                  tr("SASS"))):
            self.tabs.setTabText(i, name)
        self.tabs.setTabToolTip(2, tr("The hand-written CUDA kernel of this built-in scenario (kernels/*.cu)"))
        self.tabs.setTabToolTip(3, tr("The kernel warpviz generates from the scenario for a GPU run, with its "
                                      "helper macros"))
        self._hand_for = None   # the info line follows the language
        self.table.setHorizontalHeaderLabels([tr("metric"), tr("model"), tr("hardware"), ""])
        dock = self.parentWidget()
        if dock is not None and hasattr(dock, "setWindowTitle") and dock is not self.window_:
            dock.setWindowTitle(tr("GPU"))
        self._show_device()
        self._show_source()
        self.refresh()

    # ------------------------------------------------------------------ device

    def _probe(self) -> None:
        """Why there is no GPU, or which one there is; never blocks the GUI."""
        if importlib.util.find_spec("pycuda") is None:
            self._reason = ("No GPU here: PyCUDA is not installed (pip install 'warpviz[gpu]').", {})
            self._show_device()
            return

        def probe(_progress, _cancel):
            from ..gpu.runner import probe as gpu_probe

            try:
                return ("device", gpu_probe())
            except GpuUnavailable as err:
                return ("reason", err.reason)

        self.aux.submit(probe)

    def _show_device(self) -> None:
        if self.device_info:
            d = self.device_info
            text = tr("GPU: {name} (compute capability {cc}, {sms} SMs, driver {drv})",
                      name=d.get("name"), cc=d.get("compute_capability"), sms=d.get("sm_count"),
                      drv=d.get("driver") or d.get("cuda_driver_api"))
        elif self.device_reason:
            text = self.device_reason
        else:
            text = tr("GPU: checking…")
        self.device.setText(text)
        has = self.device_info is not None
        self.b_run.setEnabled(has and not self.runner.busy)
        self.b_validate.setEnabled(has and not self.runner.busy)
        self.b_sweep.setEnabled(has and not self.runner.busy)
        tip = "" if has else (self.device_reason or "")
        for b in (self.b_run, self.b_validate, self.b_sweep):
            b.setToolTip(tip)

    def _aux_done(self, result) -> None:
        kind, value = result
        if kind == "device":
            self.device_info, self._reason = value, None
            self._show_device()
        elif kind == "reason":
            self.device_info, self._reason = None, ("No GPU here: {why}", {"why": value})
            self._show_device()
        elif kind == "source":
            self.kernel.setPlainText(value)
        elif kind == "sass":
            self.sass.setPlainText(value)

    # ------------------------------------------------------------------ measurements

    def load_measurements(self, path: str | Path | None) -> bool:
        """A results file (the shipped H100 one when ``path`` is None); False on a bad file."""
        try:
            doc = results.load(path)
        except results.ResultsError as err:
            if path is not None:
                self.status.setText(str(err))
            return False
        self.measurements = doc
        self.measurements_path = Path(path) if path else results.shipped_path()
        self.sweep_choice.blockSignals(True)
        self.sweep_choice.clear()
        for name in (doc.get("sweeps") or {}):
            self.sweep_choice.addItem(name, name)
        self.sweep_choice.blockSignals(False)
        self._show_source()
        self.refresh()
        return True

    def _import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("Import measurements"), "", "JSON (*.json)")
        if path:
            self.load_measurements(path)

    def _show_source(self) -> None:
        if not self.measurements:
            self.source_label.setText(tr("No measurements loaded."))
            return
        m = self.measurements
        self.source_label.setText(tr("Measurements: {label} ({file})", label=m.get("label", ""),
                                     file=self.measurements_path.name if self.measurements_path else ""))

    def entry(self) -> tuple[dict | None, str]:
        """The current scenario's measurement: this session's run first, then the file's
        entry when its params equal the scenario's. (entry, where it comes from)."""
        sc = self.session.scenario
        if sc is None:
            return None, ""
        name = self.session.name
        if name in self.live:
            return self.live[name], tr("measured now")
        if self.measurements and name in self.measurements.get("scenarios", {}):
            e = self.measurements["scenarios"][name]
            if e.get("params", {}) == dict(sc.params):
                return e, self.measurements.get("label", "")
        return None, ""

    # ------------------------------------------------------------------ showing

    def refresh(self) -> None:
        sc = self.session.scenario
        e, where = self.entry()
        rows = self.validation.get(self.session.name)
        model = None
        if self.session.analysis is not None:
            model = self.session.analysis.metrics
        elif e and e.get("model"):
            model = e["model"]
        hw = {r["metric"]: r["hardware"] for r in rows} if rows else (e or {}).get("counters")
        # the ten metrics, then an access kind's own counter where the model counts one (LDSM)
        names = list(METRIC_NAMES) + [m for m in (model or {}) if m not in METRIC_NAMES]
        self.table.setRowCount(len(names))
        for i, m in enumerate(names):
            mv = None if model is None else model.get(m)
            hv = None if hw is None else hw.get(m)
            mark = "" if mv is None or hv is None else ("✓" if mv == hv else tr("differs"))
            for j, v in enumerate((m, _num(mv), _num(hv), mark)):
                item = QTableWidgetItem(v)
                if j in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.summary.setText(self._summary_text(sc, e, where))
        self._show_handwritten()
        self._draw_chart()
        self._tab_shown()

    def handwritten(self) -> list:
        """The hand-written kernels (``viz.gpu.handwritten.HandKernel``) of the open scenario:
        those of ``kernels/manifest.toml`` for a built-in opened from the built-ins' folder."""
        path = self.session.path
        if path is None or self.session.scenario is None:
            return []
        from .. import assets

        try:
            if Path(path).resolve().parent != assets.scenario_dir().resolve():
                return []
            from ..gpu.handwritten import for_scenario

            return for_scenario(Path(path).stem)
        except (OSError, ValueError, KeyError):  # a broken manifest must not break the panel
            return []

    def _show_handwritten(self) -> None:
        kernels = self.handwritten()
        key = "|".join(k.name for k in kernels)
        if key == self._hand_for:
            return
        self._hand_for = key
        i = self.tabs.indexOf(self.hand_box)
        if not kernels:
            if self.tabs.currentIndex() == i:
                self.tabs.setCurrentWidget(self.kernel)
            self.tabs.setTabVisible(i, False)
            self.hand.clear()
            self.hand_info.setText("")
            return
        first = kernels[0]
        try:
            text = first.path.read_text(encoding="utf-8")
        except OSError as err:
            text = str(err)
        self.hand.setPlainText(text)
        lines = text.splitlines()
        where = [kernel_line(lines, k.function) for k in kernels]
        names = ", ".join(tr("{function} (line {line})", function=k.function, line=n) for k, n in zip(kernels, where))
        self.hand_info.setText(tr("kernels/{file}: {names}. The readable kernel this scenario copies, with the same "
                                  "memory instructions; the H100 timings are its. The next tab has the kernel "
                                  "warpviz generates.", file=first.file, names=names))
        self._mark_line(where[0])
        self.tabs.setTabVisible(i, True)

    def _mark_line(self, line: int) -> None:
        """Select and centre the kernel's definition (1-based ``line``)."""
        from PySide6.QtGui import QTextCursor

        block = self.hand.document().findBlockByLineNumber(max(0, line - 1))
        cur = QTextCursor(block)
        cur.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
        self.hand.setTextCursor(cur)
        self.hand.centerCursor()

    def _summary_text(self, sc, e, where: str) -> str:
        if sc is None:
            return ""
        if e is None:
            return tr("No measurement of this scenario with these params; Run measures it on a GPU.")
        if e.get("error"):
            return tr("{where}: {error}", where=where, error=e["error"])
        t = e.get("timing") or {}
        parts = [tr("Source: {where}", where=where)]
        if t:
            parts.append(tr("median {ms:.4f} ms over {n} runs (spread {sp:.1f}%)", ms=t["median_ms"],
                            n=t.get("runs", 0), sp=100 * t.get("spread", 0)))
            if t.get("useful_gbps"):
                parts.append(tr("{gbps:,.0f} GB/s useful", gbps=t["useful_gbps"]))
            if t.get("fraction_of_memcpy"):
                parts.append(tr("{pct:.0f}% of cudaMemcpy", pct=100 * t["fraction_of_memcpy"]))
            if t.get("ns_per_warp_instruction"):
                parts.append(tr("{ns:.4f} ns per warp instruction", ns=t["ns_per_warp_instruction"]))
            p = t.get("predicted")
            if p:
                parts.append(tr("cost model {ms:.4f} ms ({bound}-bound), measured/predicted {r:.2f}",
                                ms=p["ms"], bound=_bound(p["bound"]),
                                r=t["median_ms"] / p["ms"] if p["ms"] else 0))
            sc_ = t.get("scale") or {}
            parts.append(tr("timed at {reps} replicas, params {params}", reps=sc_.get("replicas", 1),
                            params=sc_.get("params") or "{}"))
        c = e.get("check")
        if c:
            parts.append(tr("result check: {status}", status=tr(str(c.get("status")))))
        return sep("; ").join(parts)

    def _draw_chart(self) -> None:
        self.chart.clear()
        self.legend.clear()
        name = self.sweep_choice.currentData()
        sweeps = (self.measurements or {}).get("sweeps") or {}
        if name in self.live.get("__sweeps__", {}):
            sweep = self.live["__sweeps__"][name]
        else:
            sweep = sweeps.get(name)
        e, _ = self.entry()
        t = (e or {}).get("timing") or {}
        if sweep and sweep.get("points"):
            pts = sweep["points"]
            xs = np.arange(len(pts))
            meas = np.array([p.get("median_ms") or np.nan for p in pts], float)
            pred = np.array([p.get("predicted_ms") or np.nan for p in pts], float)
            self.chart.plot(xs, meas, pen=pg.mkPen(MEASURED, width=2), symbol="o", symbolBrush=MEASURED,
                            name=tr("measured (ms)"))
            self.chart.plot(xs, pred, pen=pg.mkPen(PREDICTED, width=2, style=Qt.PenStyle.DashLine), symbol="s",
                            symbolBrush=PREDICTED, name=tr("cost model (ms)"))
            self.chart.getAxis("bottom").setTicks([[(i, str(p.get("label", p.get("value"))).replace(
                "transpose-tile", "tt")) for i, p in enumerate(pts)]])
            self.chart.setLabel("bottom", tr("sweep {name}", name=name))
        if t.get("median_ms"):
            x0 = len((sweep or {}).get("points", [])) + 1
            self.chart.addItem(pg.BarGraphItem(x=[x0], height=[t["median_ms"]], width=0.4, brush=MEASURED))
            p = (t.get("predicted") or {}).get("ms")
            if p:
                self.chart.addItem(pg.BarGraphItem(x=[x0 + 0.45], height=[p], width=0.4, brush=PREDICTED))
        self.chart.setLabel("left", tr("time per launch (ms)"))

    def chart_series(self) -> list[tuple[str, np.ndarray]]:
        """(name, y values) of the plotted lines (for tests and export)."""
        out = []
        for item in self.chart.getPlotItem().listDataItems():
            _x, y = item.getData()
            out.append((item.name(), np.asarray(y)))
        return out

    def _tab_shown(self) -> None:
        sc = self.session.scenario
        if sc is None:
            return
        w = self.tabs.currentWidget()
        if w is self.kernel:
            def source(_p, _c, sc=sc):
                from ..gpu.codegen import generate

                return ("source", generate(sc).source)

            self.aux.submit(source)
        elif w is self.sass:
            def sass(_p, _c, sc=sc):
                from ..gpu.codegen import generate
                from ..gpu.compile import compile_cubin, find_tool, sass_memory_instructions

                try:
                    cubin = compile_cubin(generate(sc).source)
                except GpuUnavailable as err:
                    return ("sass", tr("No SASS: {why}", why=err.reason))
                if not find_tool("cuobjdump"):
                    return ("sass", tr("No SASS: cuobjdump is not installed (it comes with the CUDA toolkit)."))
                lines = sass_memory_instructions(cubin) or []
                return ("sass", "\n".join(lines) or tr("(no memory instructions)"))

            self.aux.submit(sass)

    # ------------------------------------------------------------------ GPU jobs

    def _gpu_session(self):
        from ..gpu.worker import ProcessSession

        if self._gpu is None:
            self._gpu = ProcessSession()
        return self._gpu

    def run(self) -> None:
        """Measure the current scenario on this machine's GPU (worker thread)."""
        sc, name = self.session.scenario, self.session.name or "scenario"
        if sc is None or self.device_info is None:
            self.status.setText(self.device_reason or tr("Open a valid scenario first."))
            return

        def job(progress, cancelled):
            from ..gpu.bench import run_one
            from ..gpu.plan import gbps

            with self._gpu_lock:
                gpu = self._gpu_session()
                if self._memcpy_gbps is None:
                    progress(0.05, tr("cudaMemcpy ceiling"))
                    self._memcpy_gbps = gbps(2 * (256 << 20), gpu.time_memcpy(cancelled=cancelled).median_ms)
                progress(0.2, tr("compiling, checking and timing {name}", name=name))
                return ("run", name, run_one(gpu, name, sc, self._memcpy_gbps, cancelled))

        self.runner.submit(job)

    def validate(self) -> None:
        """Model vs Nsight Compute counters for the current scenario (worker thread)."""
        sc, name = self.session.scenario, self.session.name or "scenario"
        if sc is None or self.device_info is None:
            self.status.setText(self.device_reason or tr("Open a valid scenario first."))
            return

        def job(progress, cancelled):
            from ..gpu.bench import validate

            return ("validate", name, validate([(name, sc)], progress, cancelled)[0])

        self.runner.submit(job)

    def run_sweep(self) -> None:
        name = self.sweep_choice.currentData()
        if not name or self.device_info is None:
            self.status.setText(self.device_reason or "")
            return

        def job(progress, cancelled):
            from ..gpu import costmodel
            from ..gpu.bench import run_sweep
            from ..gpu.plan import gbps

            with self._gpu_lock:
                gpu = self._gpu_session()
                if self._memcpy_gbps is None:
                    self._memcpy_gbps = gbps(2 * (256 << 20), gpu.time_memcpy(cancelled=cancelled).median_ms)
                model = costmodel.DeviceModel.from_device(gpu.info, self._memcpy_gbps)
                progress(0.1, tr("sweep {name}", name=name))
                return ("sweep", name, run_sweep(gpu, name, self._memcpy_gbps, model,
                                                 (self.measurements or {}).get("scenarios"), cancelled))

        self.runner.submit(job)

    def cancel(self) -> None:
        self.runner.cancel()
        self.status.setText(tr("Cancelled."))

    def _busy(self, busy: bool) -> None:
        self.b_cancel.setEnabled(busy)
        self._show_device()

    def _job_done(self, result) -> None:
        kind, name, value = result
        if kind == "run":
            self.live[name] = value
            self.status.setText(value.get("error") or tr("Measured {name}.", name=name))
        elif kind == "validate":
            if value.get("error"):
                self.status.setText(value["error"])
            else:
                self.validation[name] = value["rows"]
                self.status.setText(tr("Counters match the model.") if value["match"] else
                                    tr("Counters differ from the model: see the table."))
        elif kind == "sweep":
            self.live.setdefault("__sweeps__", {})[name] = value
            self.status.setText(tr("Swept {name}.", name=name))
        self.refresh()

    def _job_failed(self, err) -> None:
        if isinstance(err, GpuUnavailable):
            self.device_info, self._reason = None, ("No GPU here: {why}", {"why": err.reason})
            self._show_device()
        self.status.setText(str(err))

    def shutdown(self) -> None:
        self.runner.cancel()
        if self._gpu is not None:
            self._gpu.close()
            self._gpu = None


def kernel_line(lines: list[str], function: str) -> int:
    """The 1-based line where ``function`` is defined in a kernels/ file: its ``__global__``
    definition, else the macro line that defines it (``TRANSPOSE(transpose_tile_xor, ...)``),
    else its first mention; 1 if absent."""
    import re

    fn = re.escape(function)
    word = re.compile(rf"\b{fn}\b")
    for pattern in (rf"__global__.*\b{fn}\s*\(", rf"^\s*[A-Z_][A-Z0-9_]*\(\s*{fn}\s*,"):
        rx = re.compile(pattern)
        for n, ln in enumerate(lines, 1):
            if rx.search(ln):
                return n
    return next((n for n, ln in enumerate(lines, 1) if word.search(ln)), 1)


def _num(v) -> str:
    return "" if v is None else f"{v:,}"
