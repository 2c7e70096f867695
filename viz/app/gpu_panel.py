"""The GPU panel: the current scenario on a real GPU, or the measurements of one.

It shows the device (or exactly why there is none), Run / Validate / Cancel, the model
vs the hardware counters per metric, the measured time beside the cost model's
prediction, the generated kernel's source and its SASS memory instructions, and a chart
of measured times over the prediction for the scenario and for a sweep.

``GpuPanel`` is made of parts, each in a module named by what it does:

* ``gpu_panel_measurements`` — the results file shown (the shipped H100 one, read off the GUI
  thread; **Import measurements**), what it measured, the entry of the open scenario;
* ``gpu_panel_chart`` — the Chart tab (``ResultsChart``: measured over predicted, a sweep's lines);
* ``gpu_panel_kernels`` — the Kernel source, Generated kernel and SASS tabs;
* ``gpu_panel_record`` — Record trace, Record and validate, Save trace as, the trace's table;
* ``gpu_panel_jobs`` — Run, Validate, Sweep, Cancel and the worker-thread bridge;
* ``gpu_panel_widgets`` — the status line and other small widgets; ``gpu_texts`` — its words.

This module builds the widgets and lays them out, shows the device and the mode (scenario,
launch file or trace), and refreshes the parts. Everything the panel asks of the GPU goes
through ``viz.gpu.front`` (the one front door: probe, run, validate, trace, calibrate).
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QApplication, QComboBox, QGridLayout, QLabel, QPlainTextEdit, QProgressBar, QPushButton,
                               QSizePolicy, QTableWidget, QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from ..engine import METRIC_NAMES
from ..gpu import front
from ..i18n import tr
from .gpu_panel_chart import MEASURED, PREDICTED, ResultsChart  # noqa: F401 - the chart's colours, named here too
from .gpu_panel_jobs import GpuJobsPart
from .gpu_panel_kernels import KernelTabsPart
from .gpu_panel_measurements import MeasurementsPart
from .gpu_panel_record import RecordPart
from .gpu_panel_widgets import OneLine, SaidLine, plain_for_qt  # noqa: F401 - plain_for_qt: the window's messages
from .gpu_texts import (BOUND_NAMES, OTHER_LABELS, STAGE_LABELS, STALL_WORDS, TERM_NAMES,  # noqa: F401
                        bottleneck_text, bound_name, dims_text, kernel_line, num_text,  # (the panel's texts)
                        caveat_lines, gpu_reason, measured_bottleneck_text, partial_text, recordings_dir,
                        measured_names, not_results_text, time_unit, trace_timing_text,
                        unique_recording_path)
from .worker import Runner


class GpuPanel(MeasurementsPart, KernelTabsPart, RecordPart, GpuJobsPart, QWidget):
    """Constructed as ``GpuPanel(main_window)``; reads ``main_window.session``."""

    deviceKnown = Signal(str)
    shippedRead = Signal()          # the shipped results file was read (off the GUI thread)

    def __init__(self, main_window):
        super().__init__()
        self.setObjectName("gpuPanel")
        self.window_ = main_window
        self.session = main_window.session
        self._measurements: dict | None = None
        self.measurements_path: Path | None = None
        self._shipped: tuple | bool | None = None  # (document, error) once read; False once shown
        self._shipped_ready = threading.Event()
        self._trace_doc: dict | None = None        # the shipped traced-launch timings, read when first needed
        self._timing_device: str | None = None     # the GPU of the traced-launch timing shown (its results file's)
        self.live: dict[str, dict] = {}          # this session's runs, by scenario name
        self.validation: dict[str, list] = {}    # this session's counter comparisons
        self.device_info: dict | None = None
        self.gpu = front.Gpu()                    # runs and recordings, each in a GPU child process of its own
        self.recorded_from: dict[str, Path | None] = {}  # trace path -> the launch file it was recorded from
        self.last_recording = None                # viz.gpu.trace_pipeline.Recording
        self._recording: tuple[str, bool] | None = None  # (launch name, validate) while one runs
        self._launch_shown = ""                   # the launch file whose source the Kernel source tab shows
        self._shown_path = None                   # the file the status line speaks of
        self.stage = ""                           # the running recording's last stage
        self._reason: tuple[str, dict] | None = None  # why there is no GPU: (English template, fields)
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
        self.shippedRead.connect(self._shipped_arrived)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)  # the GPU child process goes with the app
        self._probe()
        self.retranslate()                          # (refreshes)
        # The shipped measurements take 0.4-1.3 s to read and check: read on a thread of their
        # own, so that building the panel (after the window's first paint) does not hold the GUI.
        threading.Thread(target=self._read_shipped, daemon=True, name="warpviz-shipped-results").start()

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        self.device = QLabel()
        self.device.setObjectName("gpuDevice")
        self.device.setWordWrap(True)
        self.source_label = OneLine()     # one line, elided: the chart keeps its height in a short dock
        self.source_label.setObjectName("gpuMeasurements")
        self.b_run, self.b_validate, self.b_cancel, self.b_import = (QPushButton() for _ in range(4))
        self.b_record, self.b_record_validate, self.b_save_trace = (QPushButton() for _ in range(3))
        for b, name in ((self.b_run, "gpuRun"), (self.b_validate, "gpuValidate"), (self.b_cancel, "gpuCancel"),
                        (self.b_import, "gpuImport"), (self.b_record, "gpuRecord"),
                        (self.b_record_validate, "gpuRecordValidate"), (self.b_save_trace, "gpuSaveTrace")):
            b.setObjectName(name)
        self.b_cancel.setEnabled(False)
        self.status = SaidLine()
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

        self.results_chart = chart_box = ResultsChart()     # the pyqtgraph plot is built when first shown
        self.results_chart.setObjectName("gpuChartBox")

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
        if not front.pycuda_installed():
            self._reason = ("No GPU here: PyCUDA is not installed (pip install 'warpviz[gpu]').", {})
            self._show_device()
            return

        def probe(_progress, _cancel):
            found = front.probe()
            return ("device", found.device) if found.available else ("reason", found.reason)

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
            for j, v in enumerate((m, num_text(mv), num_text(hv), mark)):
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

    def set_theme(self, th) -> None:
        """The chart in the app's theme (a black chart sat in the light theme's panel)."""
        self._theme = th
        self.results_chart.set_theme(th)

    def _draw_chart(self) -> None:
        """The chart of the sweep picked and of the open scenario's measured and predicted
        times (``ResultsChart.draw``; drawn when the plot is built)."""
        name = self.sweep_choice.currentData()
        sweeps = (self._measurements or {}).get("sweeps") or {}
        if name in self.live.get("__sweeps__", {}):
            sweep = self.live["__sweeps__"][name]
        else:
            sweep = sweeps.get(name)
        e, _ = self.entry()
        empty = self.summary.text() or tr("No measurement of this scenario with these params; Run measures it on a GPU.")
        self.results_chart.draw(sweep, name, (e or {}).get("timing") or {}, self.session.name, empty)

    def chart_series(self) -> list:
        """(name, y values) of the plotted lines (for tests and export)."""
        return self.results_chart.series()

    # the chart's widgets, by the names the panel has always had
    chart_box = property(lambda self: self.results_chart)
    chart = property(lambda self: self.results_chart.chart)
    key = property(lambda self: self.results_chart.key)
    key_labels = property(lambda self: self.results_chart.key_labels)
    ratio = property(lambda self: self.results_chart.ratio)
    chart_empty = property(lambda self: self.results_chart.chart_empty)
    sweep_choice = property(lambda self: self.results_chart.sweep_choice)
    b_sweep = property(lambda self: self.results_chart.b_sweep)
    bar_labels = property(lambda self: self.results_chart.bar_labels)
    chart_unit = property(lambda self: self.results_chart.chart_unit)

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

    def _headers(self) -> None:
        if self.mode() == "scenario":
            self.table.setHorizontalHeaderLabels([tr("metric"), tr("model"), tr("hardware"), ""])
            self.tabs.setTabText(0, tr("Model vs hardware"))
        else:
            self.table.setHorizontalHeaderLabels([tr("metric"), tr("trace"), tr("Nsight Compute"), ""])
            self.tabs.setTabText(0, tr("Trace vs Nsight Compute"))



def _calibrated(name) -> bool:
    """Whether this GPU has a calibration file the cost model reads (assets/calibration/)."""
    return front.is_calibrated(name)
