"""The GPU panel: the current scenario on a real GPU, or the measurements of one.

It shows the device (or exactly why there is none), Run / Validate / Cancel, the model
vs the hardware counters per metric, the measured time beside the cost model's
prediction, the generated kernel's source and its SASS memory instructions, and a chart
of measured times over the prediction for the scenario and for a sweep.

Without a GPU it shows measurements from a results file: the shipped H100 file by
default, or one chosen with **Import measurements** (``warpviz bench --all --out F``).

With a launch file open (``*.launch.toml``) or a trace, the panel records instead:
**Record trace** and **Record and validate** run ``viz.gpu.trace_pipeline.Recorder`` (the
pipeline of `warpviz trace`) on the worker thread, with its stages on a progress bar and
Cancel killing the GPU child process; the new trace opens as the current source, and the
table compares a trace's ten metrics (and the others) with the Nsight Compute counters it
carries. **Save trace as…** copies the open trace elsewhere (atomically).

GPU work runs on a worker thread (``viz.app.worker.Runner``); the CUDA context lives
in a child process (``viz.gpu.worker.ProcessSession``), so a faulting or hanging kernel,
or Cancel, kills only that process and the next Run starts a fresh one.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QApplication, QComboBox, QFileDialog, QGridLayout, QHBoxLayout, QLabel, QPlainTextEdit,
                               QProgressBar, QPushButton, QSizePolicy, QTableWidget, QTableWidgetItem, QTabWidget,
                               QVBoxLayout, QWidget)

from ..engine import METRIC_NAMES
from ..gpu import GpuUnavailable, results
from ..i18n import language, sep, tr
from ..trace.launch import shipped_launch_file
from ..trace.schema import records_complete, unrecorded_ran
from .gpu_texts import (BOUND_NAMES, OTHER_LABELS, STAGE_LABELS, STALL_WORDS, TERM_NAMES, _bound,  # noqa: F401
                        _dims, _num, _pct, _stall, _term, bottleneck_text, kernel_line,  # (the panel's texts)
                        caveat_lines, gpu_reason, measured_bottleneck_text, partial_text, recordings_dir,
                        measured_names, not_results_text, time_unit, trace_timing_text,
                        unique_recording_path)
from .worker import Runner

MEASURED = "#2563eb"
PREDICTED = "#d97706"


def plain_for_qt(text: str) -> str:
    """``text`` for a widget that guesses rich text (a message box): as it is, unless Qt would
    take it for markup (a file's "<img ...>" quoted in a message), then escaped so it shows as
    written."""
    from PySide6 import QtGui

    if not QtGui.Qt.mightBeRichText(text):
        return text
    import html

    return "<p>" + html.escape(text).replace("\n", "<br>") + "</p>"


class _Said(QLabel):
    """The panel's status line: hidden while it says nothing (an empty line took a row of a
    1280x720 window's short dock)."""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self.setVisible(bool(text))

    def clear(self) -> None:
        self.setText("")


class _OneLine(QLabel):
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
        self._trace_doc: dict | None = None        # the shipped traced-launch timings, read when first needed
        self._timing_device: str | None = None     # the GPU of the traced-launch timing shown (its results file's)
        self.live: dict[str, dict] = {}          # this session's runs, by scenario name
        self.validation: dict[str, list] = {}    # this session's counter comparisons
        self.device_info: dict | None = None
        from ..gpu.trace_pipeline import Recorder

        self.recorder = Recorder()                # records traces in its own GPU child process
        self.recorded_from: dict[str, Path | None] = {}  # trace path -> the launch file it was recorded from
        self.last_recording = None                # viz.gpu.trace_pipeline.Recording
        self._recording: tuple[str, bool] | None = None  # (launch name, validate) while one runs
        self._launch_shown = ""                   # the launch file whose source the Kernel source tab shows
        self._shown_path = None                   # the file the status line speaks of
        self.stage = ""                           # the running recording's last stage
        self._reason: tuple[str, dict] | None = None  # why there is no GPU: (English template, fields)
        self._gpu = None                          # ProcessSession, made on first Run
        self._gpu_lock = threading.Lock()
        self._memcpy_gbps: float | None = None
        self.runner = Runner(self)
        self.runner.done.connect(self._job_done)
        self.runner.failed.connect(self._job_failed)
        self.runner.progress.connect(self._progress)
        self.runner.busyChanged.connect(self._busy)
        self.aux = Runner(self)                   # source, SASS, device probe: never blocks the GUI
        self.aux.done.connect(self._aux_done)
        self.aux.failed.connect(lambda err: self.status.setText(str(err)))
        self._build()
        self.session.changed.connect(self.refresh)
        self.session.analysisChanged.connect(lambda: self.refresh() if self.mode() == "trace" else None)
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
        self.source_label = _OneLine()     # one line, elided: the chart keeps its height in a short dock
        self.source_label.setObjectName("gpuMeasurements")
        self.b_run, self.b_validate, self.b_cancel, self.b_import = (QPushButton() for _ in range(4))
        self.b_record, self.b_record_validate, self.b_save_trace = (QPushButton() for _ in range(3))
        for b, name in ((self.b_run, "gpuRun"), (self.b_validate, "gpuValidate"), (self.b_cancel, "gpuCancel"),
                        (self.b_import, "gpuImport"), (self.b_record, "gpuRecord"),
                        (self.b_record_validate, "gpuRecordValidate"), (self.b_save_trace, "gpuSaveTrace")):
            b.setObjectName(name)
        self.b_cancel.setEnabled(False)
        self.status = _Said()
        self.status.setObjectName("gpuStatus")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)     # a file's words are never markup
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.trace_info = QLabel()                 # the launch file to record, or why it cannot be
        self.trace_info.setObjectName("gpuTraceInfo")
        self.trace_info.setWordWrap(True)
        self.trace_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bar = QProgressBar()
        self.bar.setObjectName("gpuProgress")
        self.bar.setRange(0, 100)
        self.bar.hide()
        top = QVBoxLayout()  # the buttons, then the status under them: the dock stays narrow
        buttons = QGridLayout()  # two by two: the dock fits beside the picture on a 1280-px screen
        # scenarios: Run, Validate / Cancel, Import; launch files and traces: Record, Record and
        # validate / Cancel, Save trace as (the others hidden, see _show_mode)
        for b, (r, c) in ((self.b_run, (0, 0)), (self.b_validate, (0, 1)), (self.b_record, (1, 0)),
                          (self.b_record_validate, (1, 1)), (self.b_cancel, (2, 0)), (self.b_import, (2, 1)),
                          (self.b_save_trace, (2, 1))):     # Import and Save trace as are never shown together
            buttons.addWidget(b, r, c)
        # The scenarios (and traced launches) the loaded results file measured: one click opens one
        # (under the buttons: beside them it widened the dock past a 1280-px window).
        self.measured_choice = QComboBox()
        self.measured_choice.setObjectName("gpuMeasuredChoice")
        self.measured_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.measured_choice.setMinimumContentsLength(12)
        self.measured_choice.activated.connect(self._open_measured)
        buttons.addWidget(self.measured_choice, 3, 0, 1, 3)
        buttons.setColumnStretch(2, 1)
        top.addWidget(self.trace_info)
        top.addLayout(buttons)
        top.addWidget(self.bar)
        top.addWidget(self.status)

        self.table = QTableWidget(0, 4)
        self.table.setObjectName("gpuTable")
        self.table.verticalHeader().hide()
        self.summary = QLabel()
        self.summary.setObjectName("gpuSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Predicted and measured bottleneck side by side.
        self.bottleneck = QLabel()
        self.bottleneck.setObjectName("gpuBottleneck")
        self.bottleneck.setWordWrap(True)
        self.bottleneck.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        numbers = QWidget()
        nl = QVBoxLayout(numbers)
        nl.setContentsMargins(0, 0, 0, 0)
        # The summary and the bottlenecks scroll rather than squeeze when the dock is small.
        from PySide6.QtWidgets import QFrame, QScrollArea

        texts = QWidget()
        tl = QVBoxLayout(texts)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(self.summary)
        tl.addWidget(self.bottleneck)
        tl.addStretch(1)
        self.texts = QScrollArea()
        self.texts.setObjectName("gpuTexts")
        self.texts.setWidgetResizable(True)
        self.texts.setFrameShape(QFrame.Shape.NoFrame)
        self.texts.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.texts.setWidget(texts)
        nl.addWidget(self.texts, 1)
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
        # The unit is chosen from the data (gpu_texts.time_unit) and named on the axis: pyqtgraph's
        # own SI prefix read "time per launch (ms) (x0.001)" with ticks that were really µs.
        self.chart.getAxis("left").enableAutoSIPrefix(False)
        self.chart.getAxis("bottom").enableAutoSIPrefix(False)
        self.chart.setMouseEnabled(x=False, y=False)
        self.chart.setMenuEnabled(False)
        self.chart.setMinimumHeight(80)       # fits a 1280x720 window's short dock, its axis titles and all
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
        self.chart_box = chart_box = QWidget()
        cl = QVBoxLayout(chart_box)
        cl.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(self.sweep_choice, 1)
        row.addWidget(self.b_sweep)
        cl.addLayout(row)
        cl.addWidget(self.key)
        cl.addWidget(self.ratio)
        cl.addWidget(self.chart, 1)
        cl.addWidget(self.chart_empty, 1)
        self.chart_empty.hide()

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
        # the lines of text keep their wrapped height in a short dock (a 1280x720 screen): the
        # table shrinks (it scrolls) instead of the words being cut off
        for label in (self.device, self.trace_info, self.status, self.summary):
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)

        self.b_run.clicked.connect(self.run)
        self.b_validate.clicked.connect(self.validate)
        self.b_cancel.clicked.connect(self.cancel)
        self.b_import.clicked.connect(self._import_dialog)
        self.b_record.clicked.connect(lambda: self.record(validate=False))
        self.b_record_validate.clicked.connect(lambda: self.record(validate=True))
        self.b_save_trace.clicked.connect(lambda: self.save_trace_as())
        self.b_sweep.clicked.connect(self.run_sweep)
        self.sweep_choice.currentIndexChanged.connect(lambda _i: self._draw_chart())
        self.tabs.currentChanged.connect(lambda _i: self._tab_shown())

    @property
    def device_reason(self) -> str | None:
        """Why there is no GPU, in the language of the moment."""
        if not self._reason:
            return None
        args = dict(self._reason[1])
        if "why" in args:
            args["why"] = gpu_reason(args["why"])       # warpviz's own reasons translated, a tool's words kept
        return tr(self._reason[0], **args)

    def retranslate(self) -> None:
        self.b_run.setText(tr("Run on GPU"))
        self.b_validate.setText(tr("Validate counters"))
        self.b_cancel.setText(tr("Cancel"))
        self.b_import.setText(tr("Import measurements…"))
        self.b_sweep.setText(tr("Run sweep on GPU"))
        self.b_record.setText(tr("Record trace"))
        self.b_record_validate.setText(tr("Record and validate"))
        self.b_save_trace.setText(tr("Save trace as…"))
        self.b_save_trace.setToolTip(tr("Copy the open trace to a file of your choice"))
        for i, name in enumerate((tr("Model vs hardware"), tr("Chart"), tr("Kernel source"), tr("Generated kernel"),
                                  tr("SASS"))):
            self.tabs.setTabText(i, name)
        self.tabs.setTabToolTip(2, tr("The hand-written CUDA kernel of this built-in scenario (kernels/*.cu)"))
        self.tabs.setTabToolTip(3, tr("The kernel warpviz generates from the scenario for a GPU run, with its "
                                      "helper macros"))
        self._hand_for = None   # the info lines follow the language (a built-in's kernels, a launch file's)
        self._launch_shown = ""
        self._headers()
        dock = self.parentWidget()
        if dock is not None and hasattr(dock, "setWindowTitle") and dock is not self.window_:
            dock.setWindowTitle(tr("GPU"))
        self._show_device()
        self._show_source()
        self._fill_measured()
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
                return ("reason", err)

        self.aux.submit(probe)

    def _show_device(self) -> None:
        if self.device_info:
            d = self.device_info
            text = tr("GPU: {name} (compute capability {cc}, {sms} SMs, driver {drv})",
                      name=d.get("name"), cc=d.get("compute_capability"), sms=d.get("sm_count"),
                      drv=d.get("driver") or d.get("cuda_driver_api"))
            if not _calibrated(d.get("name")):
                text += "\n" + tr("Not calibrated: predictions use the H100's figures; run `warpviz calibrate` to "
                                   "measure this GPU")
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
        self._show_record()

    def set_device(self, info: dict | None, reason=None) -> None:
        """The device found (``viz.gpu.runner.probe``'s dict), or None with the reason (a
        ``GpuUnavailable``, shown translated, or a text)."""
        self.device_info = info
        self._reason = None if info is not None else ("No GPU here: {why}", {"why": reason or "?"})
        self._show_device()

    def _aux_done(self, result) -> None:
        kind, value = result
        if kind == "device":
            self.set_device(value)
        elif kind == "reason":
            self.set_device(None, value)
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
                self.status.setText(not_results_text(path, str(err)))
            return False
        self.measurements = doc
        self.measurements_path = Path(path) if path else results.shipped_path()
        if path is not None:
            self.status.clear()           # an earlier import's error is about another file
            self.status.setToolTip("")
        self._fill_measured()
        self.sweep_choice.blockSignals(True)
        self.sweep_choice.clear()
        for name in (doc.get("sweeps") or {}):
            self.sweep_choice.addItem(name, name)
        self.sweep_choice.blockSignals(False)
        self._show_source()
        self.refresh()
        return True

    def import_folder(self) -> str:
        """Where Import opens: the folder of the last import, else the shipped measurements
        (assets/measurements), not the user's empty scenarios folder."""
        from . import settings

        last = settings.get("measurements_dir", "", str)
        try:
            if last and Path(last).is_dir():
                return last
        except (OSError, ValueError):
            pass
        return str(results.shipped_path().parent)

    def _import_dialog(self) -> None:
        from . import settings

        path, _ = QFileDialog.getOpenFileName(self, tr("Import measurements"), self.import_folder(),
                                              tr("Results files (*.json)"))
        if path:
            settings.put("measurements_dir", str(Path(path).parent))
        if path and not self.load_measurements(path):
            from PySide6.QtWidgets import QMessageBox

            # the panel keeps the measurements it had; the message names the file and the field
            QMessageBox.warning(self, tr("Import measurements"), plain_for_qt(self.status.text()))

    def _show_source(self) -> None:
        if not self.measurements:
            self.source_label.setText(tr("No measurements loaded."))
            return
        m = self.measurements
        file = self.measurements_path.name if self.measurements_path else ""
        label = str(m.get("label", ""))
        device = str((m.get("device") or {}).get("name") or "")
        if language() != "en" and device:
            # the file's label is English prose: in another language, its device and date in the
            # language's own sentence (the label in the tooltip)
            self.source_label.setText(tr("Measurements: {device}, measured {date} ({file})", device=device,
                                         date=str(m.get("measured_at", ""))[:10], file=file))
            self.source_label.setToolTip(label)
            return
        self.source_label.setText(tr("Measurements: {label} ({file})", label=label, file=file))
        self.source_label.setToolTip(self.source_label.text())

    def _fill_measured(self) -> None:
        """The list of what the loaded file measured (scenarios, then traced launches)."""
        scen, traced = measured_names(self.measurements)
        c = self.measured_choice
        c.blockSignals(True)
        c.clear()
        c.addItem(tr("Measured in this file ({n}): open one…", n=len(scen) + len(traced)), None)
        for n in scen:
            c.addItem(f"[{n}]", f"scenario:{n}")
        for n in traced:
            c.addItem(tr("[{name}] (traced launch)", name=n), f"trace:{n}")
        c.setCurrentIndex(0)
        c.blockSignals(False)
        c.setVisible(len(scen) + len(traced) > 0)

    def _open_measured(self, index: int) -> None:
        """Open the scenario (or traced launch) picked in the list, by name only: a built-in
        scenario, a shipped trace or a launch file in kernels/ (nothing the file says is a path
        warpviz opens)."""
        data = self.measured_choice.itemData(index)
        self.measured_choice.setCurrentIndex(0)
        if not data:
            return
        kind, _, name = str(data).partition(":")
        w = self.window_
        from .. import assets

        if kind == "scenario":
            from ..scenario import resolve

            try:
                path = resolve(name)
            except Exception:  # noqa: BLE001 - a name that is no built-in: say so
                path = None
            if path is not None and Path(path).exists():
                w.open_path(Path(path))
                return
        else:
            entry = (self.measurements.get("traces") or {}).get(name) or {}
            trace = assets.named_trace(Path(str(entry.get("trace") or "")).name or name)
            if trace is not None:
                w.open_trace(trace)
                return
            launch = assets.named_launch(Path(str(entry.get("launch_file") or "")).name or name)
            if launch is not None:
                w.open_launch(launch)
                return
        self.status.setText(tr("{name} is not one of warpviz's built-in scenarios or shipped traces: open its "
                               "file yourself.", name=name))

    def measured_where(self) -> str:
        """Where the loaded measurements come from: the file's label (English prose), or in
        another language its device and date in that language's sentence."""
        m = self.measurements or {}
        device = str((m.get("device") or {}).get("name") or "")
        if language() != "en" and device:
            return tr("{device}, measured {date}", device=device, date=str(m.get("measured_at", ""))[:10])
        return str(m.get("label", ""))

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
                return e, self.measured_where()
        return None, ""

    # ------------------------------------------------------------------ showing

    def refresh(self) -> None:
        if self.session.path != self._shown_path:  # another file: the last outcome was about the old one
            self._shown_path = self.session.path
            if not self.runner.busy:
                self.status.clear()
                self.status.setToolTip("")
        self._show_mode()
        if self.mode() != "scenario":
            self._refresh_trace()
            return
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
        self.bottleneck.setText(bottleneck_text(e, self._device_of(where)) if sc is not None else "")
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
            text = tr("No measurement of this scenario with these params; Run measures it on a GPU.")
            scen, traced = measured_names(self.measurements)
            name = self.measurements_path.name if self.measurements_path else ""
            if self.session.name not in scen and (scen or traced):
                text += " " + self._measured_sentence(name, scen, traced)
            return text
        if e.get("error"):
            return tr("{where}: {error}", where=where, error=e["error"])
        t = e.get("timing") or {}
        parts = [tr("Source: {where}", where=where)]
        if t:
            parts.append(tr("median {ms:.4f} ms over {n} runs (spread {sp:.1f}%)", ms=t["median_ms"],
                            n=t.get("runs", 0), sp=100 * t.get("spread", 0)))
            if t.get("useful_gbps"):
                parts.append(tr("{gbps:,.0f} GB/s useful", gbps=t["useful_gbps"]))
            if t.get("dram_gbps"):
                parts.append(tr("{gbps:,.0f} GB/s of DRAM traffic (counters)", gbps=t["dram_gbps"]))
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

    def _measured_sentence(self, file: str, scen: list[str], traced: list[str]) -> str:
        def some(names: list[str]) -> str:
            return sep(", ").join(names[:6]) + (sep(", ") + tr("{n} more", n=len(names) - 6) if len(names) > 6 else "")

        if scen and traced:
            return tr("{file} measured {n} scenarios ({names}) and {m} traced launches ({traced}): pick one in "
                      "the list above.", file=file, n=len(scen), names=some(scen), m=len(traced), traced=some(traced))
        if scen:
            return tr("{file} measured {n} scenarios ({names}): pick one in the list above.", file=file, n=len(scen),
                      names=some(scen))
        return tr("{file} measured no scenarios, only {m} traced launches ({traced}): pick one in the list above "
                  "to open its trace.", file=file, m=len(traced), traced=some(traced))

    def set_theme(self, th) -> None:
        """The chart in the app's theme (a black chart sat in the light theme's panel)."""
        self._theme = th
        bg, fg = th.colors["background"], th.colors["text"]
        self.chart.setBackground(bg)
        item = self.chart.getPlotItem()
        for ax in ("left", "bottom"):
            item.getAxis(ax).setPen(fg)
            item.getAxis(ax).setTextPen(fg)
        self._draw_chart()

    def _draw_chart(self) -> None:
        """The sweep's measured and predicted times (two labelled lines) and the open scenario's
        measured and predicted times side by side (two labelled bars, each with its value, and
        their ratio above them), in the unit the data needs; a sentence when there is nothing."""
        self.chart.clear()
        self.bar_labels = []
        name = self.sweep_choice.currentData()
        sweeps = (self.measurements or {}).get("sweeps") or {}
        if name in self.live.get("__sweeps__", {}):
            sweep = self.live["__sweeps__"][name]
        else:
            sweep = sweeps.get(name)
        e, _ = self.entry()
        t = (e or {}).get("timing") or {}
        pts = (sweep or {}).get("points") or []
        meas = np.array([p.get("median_ms") or np.nan for p in pts], float)
        pred = np.array([p.get("predicted_ms") or np.nan for p in pts], float)
        m = t.get("median_ms") or None
        p = (t.get("predicted") or {}).get("ms") or None
        values = [v for v in [*meas, *pred, m or np.nan, p or np.nan] if np.isfinite(v) and v > 0]
        axis = self.chart.getPlotItem()
        if not values:
            axis.setLabel("left", "")
            axis.setLabel("bottom", "")
            self.chart.getAxis("bottom").setTicks(None)
            self.chart.hide()
            self.key.hide()
            self.ratio.hide()
            self.chart_empty.setText(self.summary.text() or tr("No measurement of this scenario with these params; "
                                                               "Run measures it on a GPU."))
            self.chart_empty.show()
            return
        self.chart_empty.hide()
        self.chart.show()
        self.key.show()
        factor, unit = self.chart_unit = time_unit(max(values))
        fg = getattr(self, "_theme", None)
        fg = fg.colors["text"] if fg is not None else "#202020"
        ticks = []
        if len(pts):
            xs = np.arange(len(pts))
            self.chart.plot(xs, meas * factor, pen=pg.mkPen(MEASURED, width=2), symbol="o", symbolBrush=MEASURED,
                            name=tr("measured"))
            self.chart.plot(xs, pred * factor, pen=pg.mkPen(PREDICTED, width=2, style=Qt.PenStyle.DashLine),
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
                self.chart.addItem(pg.BarGraphItem(x=[x], height=[v * factor], width=0.4, brush=colour,
                                                   name=label))
                self.bar_labels.append(f"{v * factor:.3g} {unit}")
            ticks.append((x0, tr("this scenario")))
            if p:
                self.bar_labels.append(tr("measured / predicted = {r:.2f}", r=m / p))
                self.ratio.setText(tr("{name}: measured {m}, cost model {p}; {ratio}", name=self.session.name,
                                      m=self.bar_labels[0], p=self.bar_labels[1], ratio=self.bar_labels[2]))
            else:
                self.ratio.setText(tr("{name}: measured {m}; no prediction in this file", name=self.session.name,
                                      m=self.bar_labels[0]))
        self.chart.getAxis("bottom").setTicks([ticks])
        self.chart.setYRange(0, top * 1.1, padding=0)
        last = (len(pts) + 1 if len(pts) else 0) + 1.3 if m else len(pts) - 0.5     # room for "this scenario"
        self.chart.setXRange(-0.6 if len(pts) else -1.3, last, padding=0)
        where = ""
        if len(pts):
            where = (tr("{param} (sweep {name})", param=param, name=name) if numeric
                     else tr("sweep {name}", name=name))
        # (the bar's tick says "this scenario" and the ratio line above names it: the axis title
        # stays short enough for a 1280x720 window's 316-px dock, where the longer one was cut)
        axis.setLabel("bottom", where)
        axis.setLabel("left", tr("{unit} per launch", unit=unit))
        self.key_labels[0].setText(tr("measured on the GPU") + (sep(" (") + tr("solid line") + sep(")")
                                                                if len(pts) else ""))
        self.key_labels[1].setText(tr("cost model's prediction") + (sep(" (") + tr("dashed line") + sep(")")
                                                                    if len(pts) else ""))

    def chart_series(self) -> list[tuple[str, np.ndarray]]:
        """(name, y values) of the plotted lines (for tests and export)."""
        out = []
        for item in self.chart.getPlotItem().listDataItems():
            if not isinstance(item, pg.PlotDataItem):
                continue                    # the scenario's bars: see bar_labels
            _x, y = item.getData()
            out.append((item.name(), np.asarray(y)))
        return out

    def _tab_shown(self) -> None:
        sc = self.session.scenario
        if sc is None or self.mode() != "scenario":
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
                from ..toolchain.compile import compile_cubin, find_tool, sass_memory_instructions

                try:
                    cubin = compile_cubin(generate(sc).source)
                except GpuUnavailable as err:
                    return ("sass", tr("No SASS: {why}", why=gpu_reason(err)))
                if not find_tool("cuobjdump"):
                    return ("sass", tr("No SASS: cuobjdump is not installed (it comes with the CUDA toolkit)."))
                lines = sass_memory_instructions(cubin) or []
                return ("sass", "\n".join(lines) or tr("(no memory instructions)"))

            self.aux.submit(sass)

    # ------------------------------------------------------------------ launch files and traces

    def mode(self) -> str:
        """"launch" (a launch file is open), "trace" or "scenario"."""
        s = self.session
        return "launch" if getattr(s, "is_launch", False) else "trace" if s.is_trace else "scenario"

    def _show_mode(self) -> None:
        mode = self.mode()
        scen = mode == "scenario"
        for b in (self.b_run, self.b_validate, self.b_import):
            b.setVisible(scen)
        for b in (self.b_record, self.b_record_validate):
            b.setVisible(not scen)
        self.b_save_trace.setVisible(mode == "trace")
        self.source_label.setVisible(scen)
        self.trace_info.setVisible(not scen)
        for w in (self.chart_box, self.hand_box, self.kernel):
            i = self.tabs.indexOf(w)
            if w is self.hand_box and mode != "trace":
                continue     # a built-in's hand-written kernel (_show_handwritten), a launch file's source (below)
            if not scen and self.tabs.currentIndex() == i:
                self.tabs.setCurrentIndex(0)
            self.tabs.setTabVisible(i, scen)
        if not scen:
            self._hand_for = None
        if mode != "launch":
            self._launch_shown = ""
        self.tabs.setTabVisible(self.tabs.indexOf(self.sass), mode != "launch")
        if mode == "launch":
            self._show_launch_source()
        self._headers()
        self._show_record()

    def _show_launch_source(self) -> None:
        """The open launch file's kernel source in the Kernel source tab (shown at once when
        the file opens: the buttons and the kernel side by side)."""
        s = self.session
        i = self.tabs.indexOf(self.hand_box)
        key = f"launch:{s.launch_path}:{s.launch is not None}"
        if key == self._launch_shown:
            return
        self._launch_shown = key
        if s.launch is None:
            self.tabs.setTabVisible(i, False)
            return
        text = s.launch.source_text            # read (bounded, checked) when the launch file was opened
        self.hand.setPlainText(text)
        line = kernel_line(text.splitlines(), getattr(s.launch, "short_name", s.launch.kernel))
        self.hand_info.setText(tr("{file}: {names}.", file=s.launch.source.name,
                                  names=tr("{function} (line {line})", function=s.launch.kernel, line=line)))
        self._mark_line(line)
        self.hand.horizontalScrollBar().setValue(0)
        self.tabs.setTabVisible(i, True)
        self.tabs.setCurrentIndex(i)

    def _headers(self) -> None:
        if self.mode() == "scenario":
            self.table.setHorizontalHeaderLabels([tr("metric"), tr("model"), tr("hardware"), ""])
            self.tabs.setTabText(0, tr("Model vs hardware"))
        else:
            self.table.setHorizontalHeaderLabels([tr("metric"), tr("trace"), tr("Nsight Compute"), ""])
            self.tabs.setTabText(0, tr("Trace vs Nsight Compute"))

    def recordable(self) -> Path | None:
        """The launch file Record runs: the open one; for an open trace, the launch file it was
        recorded from in this session (Record), or for a shipped trace its launch file in
        kernels/ (by the trace's own file name). Never a file the trace's header names: a
        trace never chooses what warpviz compiles."""
        s = self.session
        if getattr(s, "is_launch", False):
            return s.launch_path
        if s.is_trace:
            key = str(s.path)
            if key not in self.recorded_from:    # looked for once per trace (kernels/ is walked)
                self.recorded_from[key] = shipped_launch_file(s.path)
            return self.recorded_from[key]
        return None

    def record_blocker(self, validate: bool) -> str | None:
        """Why Record trace (``validate``: Record and validate) cannot run now, in words; None if it can."""
        s = self.session
        if getattr(s, "is_launch", False) and s.launch is None:
            return tr("This launch file cannot be recorded: {error}", error=s.launch_error)
        if self.recordable() is None:
            return tr("Open a launch file (*.launch.toml) to record a trace of its kernel: this trace's launch "
                      "file is not known here.")
        if self.runner.busy:
            return tr("A GPU job is running: wait for it, or Cancel it.")
        if self.device_info is None:
            return self.device_reason or tr("GPU: checking…")
        why = self.recorder.missing(validate)
        return tr("Cannot record here: {why}", why=why) if why else None

    def _show_record(self) -> None:
        if not hasattr(self, "b_record"):
            return
        plain, valid = self.record_blocker(False), self.record_blocker(True)
        self.b_record.setEnabled(plain is None)
        self.b_record_validate.setEnabled(valid is None)
        self.b_record.setToolTip(plain or tr("Run the kernel once with every memory instruction recorded, write "
                                             "the trace and open it"))
        self.b_record_validate.setToolTip(valid or tr("Record, then count the plain kernel with Nsight Compute and "
                                                      "compare the ten metrics"))
        self.b_save_trace.setEnabled(self.session.is_trace and not self.runner.busy)
        mode = self.mode()
        if mode == "scenario":
            return
        parts = []
        s = self.session
        path = self.recordable()
        if mode == "launch" and s.launch is not None:
            L = s.launch
            parts.append(tr("Launch file {file}: kernel {kernel} of {source}, grid {grid} × block {block}, "
                            "{args} arguments.", file=s.launch_path.name, kernel=L.kernel, source=L.source.name,
                            grid=_dims(L.grid), block=_dims(L.block), args=len(L.args)))
        elif mode == "trace" and path is not None:
            for b in (self.b_record, self.b_record_validate):   # what Record runs, in its tooltip
                if b.isEnabled():
                    b.setToolTip(b.toolTip() + "\n" + tr("Recorded from {file}.", file=path))
        busy = self.runner.busy
        if plain is not None and not busy and plain == self.device_reason:
            pass        # the device line above already says why (no GPU): not twice
        elif plain is not None and not busy:
            parts.append(plain)
        elif valid is not None and not busy:
            parts.append(tr("Record and validate: {why}", why=valid))
        self.trace_info.setText(" ".join(parts))
        self.trace_info.setVisible(bool(parts))

    def record(self, validate: bool = False) -> None:
        """Record a trace of the launch file (Record trace; with ``validate`` Record and validate):
        on the worker thread, in the recorder's GPU child process; the new trace opens."""
        why = self.record_blocker(validate)
        if why is not None:
            self.status.setText(why)
            return
        path = self.recordable()
        from ..trace.launch import launch_name

        name = launch_name(path)
        out = unique_recording_path(name)
        recorder = self.recorder

        def job(progress, cancelled):
            return ("trace", str(path), recorder.record(path, validate=validate, out=out, progress=progress,
                                                          cancelled=cancelled))

        self._recording = (name, validate)
        self.stage = ""
        self.bar.setValue(0)
        self.status.setText(tr("Recording {name}…", name=name))
        self.runner.submit(job)
        self.bar.show()

    def _recorded(self, launch_path: Path, rec) -> None:
        """A recording finished: remember it, open its trace as the current source, say what it found."""
        self._recording = None
        self.last_recording = rec
        self.recorded_from[str(rec.path)] = launch_path
        w = self.window_
        if hasattr(w, "library"):
            w.library.reload()
        opened = w.open_trace(rec.path) if hasattr(w, "open_trace") else False
        dock = getattr(w, "docks", {}).get("gpu")
        if opened and dock is not None and not getattr(w, "presenting", False):
            dock.show()
            dock.raise_()                          # the outcome and the counter table, not the Source tab
        parts = [tr("Recorded {records} warp-level executions of {kernel} into {path}.", records=f"{rec.trace.records:,}",
                    kernel=rec.launch.kernel, path=rec.path.name)]
        self.status.setToolTip(str(rec.path))
        if not opened:
            parts.append(tr("It could not be opened: {err}", err=getattr(w, "last_open_error", "")))
        if rec.note:
            parts.append(tr("Partial trace: {note}", note=partial_text(rec.note)))
        if rec.rows is not None:
            n = sum(r.match for r in rec.rows)
            parts.append(tr("Nsight Compute: {n} of {total} metrics equal the trace.", n=n, total=len(rec.rows)))
        self.status.setText(" ".join(parts))
        self.refresh()

    def trace_rows(self) -> list[tuple[str, int | None, int | None, bool]]:
        """(metric, trace, Nsight Compute, one of the ten) of the open trace: the ten metrics, then
        the counters outside them that Nsight Compute read (atomics, LDSM, LDGSTS)."""
        s = self.session
        if not s.is_trace:
            return []
        an = s.trace_analysis if s.trace_analysis is not None and s.trace_analysis.trace is s.trace.trace else None
        h = s.trace.header
        hw, other = h.get("ncu") or {}, h.get("ncu_other") or {}
        model = an.metrics if an is not None else {}
        model_other = an.other_metrics if an is not None else {}
        rows = [(m, model.get(m), hw.get(m), True) for m in METRIC_NAMES]
        rows += [(k, int(model_other.get(k, 0)) if an is not None else None, other[k], False) for k in sorted(other)]
        return rows

    def _refresh_trace(self) -> None:
        s = self.session
        rows = self.trace_rows()
        self.table.setRowCount(len(rows))
        from .figures import METRIC_LABELS

        for i, (m, mv, hv, ten) in enumerate(rows):
            mark = "" if mv is None or hv is None else ("✓" if mv == hv else tr("differs"))
            # short names in the narrow dock (the Figures panel's); Nsight Compute's name in the tooltip;
            # the counters outside the ten in italics
            names = METRIC_LABELS if ten else OTHER_LABELS
            label = tr(names[m]) if m in names else m
            tip = m if ten else tr("{metric} (outside the ten)", metric=m)
            for j, v in enumerate((label, _num(mv), _num(hv), mark)):
                item = QTableWidgetItem(v)
                item.setToolTip(tip)
                item.setData(Qt.ItemDataRole.UserRole, m)
                if not ten:
                    f = item.font()
                    f.setItalic(True)
                    item.setFont(f)
                if j in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.summary.setText(self._trace_summary(rows))
        e, where = self.trace_timing()
        header = s.trace.header if s.is_trace and e is not None else None      # the trace of the entry's launch
        self.bottleneck.setText(trace_timing_text(e, where, header, self._timing_device))
        if s.is_trace:
            guard = s.trace.header.get("sass_guard") or {}
            sass = guard.get("sass") or []
            self.sass.setPlainText("\n".join(sass) if sass else tr("No SASS in this trace (cuobjdump was not "
                                                                    "installed where it was recorded)."))

    def trace_timing(self) -> tuple[dict | None, str]:
        """The timing of the open trace's (or launch file's) launch: its entry in the loaded
        results file's ``traces`` section, else in the shipped H100 one
        (``viz.gpu.tracebench.SHIPPED``), matched by launch file name, kernel and launch (block,
        grid, dynamic shared memory, arguments). (entry, where it comes from)."""
        s = self.session
        if getattr(s, "is_launch", False):
            L = s.launch
            if L is None:
                return None, ""
            name, kernel = s.launch_path.name, L.kernel
            launch = {"block": list(L.block), "grid": list(L.grid), "shared_bytes": L.shared_bytes,
                      "args": [a.as_dict() for a in L.args]}
        elif s.is_trace:
            h = s.trace.header
            name, kernel = h.get("launch_file_name") or "", h.get("kernel")
            hl = h.get("launch") or {}
            launch = {k: hl.get(k) for k in ("block", "grid", "shared_bytes", "args")}
        else:
            return None, ""
        docs = []
        if self.measurements and self.measurements.get("traces"):
            docs.append(self.measurements)
        if self._trace_doc is None:
            from ..gpu.tracebench import SHIPPED

            try:
                self._trace_doc = results.load(results.shipped_path().with_name(SHIPPED))
            except results.ResultsError:
                self._trace_doc = {}
        if self._trace_doc:
            docs.append(self._trace_doc)
        for doc in docs:
            for e in (doc.get("traces") or {}).values():
                if Path(e.get("launch_file") or "").name == name and e.get("kernel") == kernel \
                        and e.get("launch") == launch:
                    self._timing_device = (doc.get("device") or {}).get("name")
                    return e, doc.get("label", "")
        return None, ""

    def _device_of(self, where: str) -> str | None:
        """The GPU a scenario's shown measurement (and its prediction) is for: this machine's for
        a run made now, else the loaded results file's."""
        if where == tr("measured now"):
            return (self.device_info or {}).get("name")
        return ((self.measurements or {}).get("device") or {}).get("name")

    def _trace_summary(self, rows) -> str:
        s = self.session
        if self.mode() == "launch":
            return tr("Record and validate compares the recording's ten metrics with Nsight Compute on the "
                      "kernel without the recording code; the table shows both here.")
        h = s.trace.header
        if not h.get("ncu"):
            return tr("This trace carries no Nsight Compute counters: Record and validate measures them.")
        if s.trace_analysis is None:
            return tr("Analysing the whole launch…")
        ten = [r for r in rows if r[3]]
        others = [r for r in rows if not r[3]]
        text = tr("Nsight Compute on the plain kernel ({gpu}): {n} of {total} metrics equal the trace.",
                  gpu=(h.get("gpu") or {}).get("name", "?"), n=sum(r[1] == r[2] for r in ten), total=len(ten))
        if others:
            text += " " + tr("Outside the ten: {n} of {total} equal.", n=sum(r[1] == r[2] for r in others),
                             total=len(others))
        if not records_complete(h, True):
            text += " " + tr("A partial trace: expect differences.")
        missed = unrecorded_ran(h)
        if missed:
            text += " " + tr("Counters may differ: the kernel ran {n} memory instructions that warpviz does not "
                             "record (see the Figures panel).", n=len(missed))
        return text

    def save_trace_as(self, path: str | Path | None = None) -> Path | None:
        """Copy the open trace to ``path`` (asked for when None), atomically."""
        s = self.session
        if not s.is_trace or s.path is None:
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, tr("Save trace as"), str(Path.home() / s.path.name),
                                                  tr("Traces (*.wvtrace)"))
            if not path:
                return None
        path = Path(path)
        if path.suffix.lower() != ".wvtrace":
            path = path.with_name(path.name + ".wvtrace")
        from ..gpu.trace_pipeline import save_copy

        try:
            save_copy(s.path, path)
        except OSError as err:
            self.status.setText(tr("Cannot save the trace as {path}: {err}", path=path, err=err.strerror or err))
            return None
        self.status.setText(tr("Saved the trace as {path}.", path=path))
        return path

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
        recording = self.runner.busy and self._recording is not None
        self._recording = None
        self.runner.cancel()
        self.status.setText(tr("Cancelled: the GPU process was stopped; nothing was written.") if recording
                            else tr("Cancelled."))

    def _busy(self, busy: bool) -> None:
        self.b_cancel.setEnabled(busy)
        if not busy:
            self.bar.hide()
        self._show_device()

    def _progress(self, fraction: float, text: str) -> None:
        if self._recording is not None and text in STAGE_LABELS:
            stages = [st for st in STAGE_LABELS if self._recording[1] or st != "ncu"]
            k = stages.index(text) + 1 if text in stages else len(stages)
            self.status.setText(tr("Recording {name}: {stage} (step {k} of {n})…", name=self._recording[0],
                                   stage=tr(STAGE_LABELS[text]), k=k, n=len(stages)))
            self.stage = text
        else:
            self.status.setText(f"{int(fraction * 100)}% {text}")
        self.bar.setValue(int(fraction * 100))
        self.bar.setVisible(self.runner.busy)

    def _job_done(self, result) -> None:
        kind, name, value = result
        if kind == "trace":
            self._recorded(Path(name), value)
            return
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
        if self._recording is not None:
            self._recording = None
            self.status.setText(str(err))   # the CLI's paragraph (file, key or line, problem, fix)
            return
        if isinstance(err, GpuUnavailable):
            self.device_info, self._reason = None, ("No GPU here: {why}", {"why": err})
            self._show_device()
        self.status.setText(str(err))

    def shutdown(self) -> None:
        self.runner.cancel()
        if self._gpu is not None:
            self._gpu.close()
            self._gpu = None
        self.recorder.close()


def _calibrated(name) -> bool:
    """Whether this GPU has a calibration file the cost model reads (assets/calibration/)."""
    from ..gpu.calibration import CALIBRATION_DIR, slug

    return bool(name) and (CALIBRATION_DIR / f"{slug(str(name))}.json").is_file()
