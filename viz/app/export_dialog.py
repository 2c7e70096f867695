"""File → Export…: the scenario on screen (or the compare pair) to a video, a GIF, a still
or a folder of PNGs, with the options of ``warpviz export``.

The dialog only gathers options: they go through ``viz.export``'s own parsing and checks
(``parse_size``, ``selection``, ``check_settings``, ``make_plan``), and the file is written
by ``viz.export.export`` on a ``QThreadPool`` thread with a ``threading.Event`` to cancel
it, so a cancelled or failed export leaves nothing behind, exactly as on the command line.
The preview is one picture of the plan drawn by the same painter (``render_image``) at
the chosen size and theme, scaled into the dialog. The last folder and options are kept
in the app's settings.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QRectF, QRunnable, QSize, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QImage, QKeySequence, QPainter, QPen
from PySide6.QtWidgets import (QApplication, QCheckBox, QComboBox, QDialog, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QProgressBar,
                               QPushButton, QSlider, QSpinBox, QVBoxLayout, QWidget)

from ..export import (ExportCancelled, ExportError, Plan, Result, Selection, Settings, check_settings,
                      default_file_name, export, make_plan, output_kind, parse_size, path_in, render_image,
                      selection, trace_selection)
from ..export_formats import BY_NAME as FORMATS, NAMES as KINDS, SEQUENCE, STILLS, labels as format_labels
from ..i18n import tr
from ..render.theme import THEME_LABELS, THEMES
from ..scenario import Scenario, ScenarioError
from . import settings as app_settings
from .lifetime import on_language_change
from .worker import free_retired, retire

SIZE_PRESETS = ("720p", "1080p", "4k", "custom")
PREVIEW_DELAY_MS = 60      # options typed in a row make one preview
PREVIEW_WARPS = 1          # the preview plans the first selected warp only (a plan of many warps takes seconds)


def size_labels() -> dict[str, str]:
    return {"720p": tr("720p (1280×720)"), "1080p": tr("1080p (1920×1080)"), "4k": tr("4K (3840×2160)"),
            "custom": tr("Custom")}


@dataclass(frozen=True)
class Request:
    """Everything ``viz.export.export`` needs, read from the dialog."""

    scenario: Scenario
    out: Path
    kind: str
    settings: Settings
    selection: Selection
    compare: Scenario | None = None
    labels: tuple[str, str] | None = None

    @property
    def still(self) -> bool:
        return self.kind in STILLS

    def run(self, progress=None, cancel=None) -> Result:
        return export(self.scenario, self.out, self.settings, self.selection, compare=self.compare,
                      labels=self.labels, png_sequence=self.kind == SEQUENCE, progress=progress,
                      cancel=cancel)


# ---------------------------------------------------------------------------- the worker


class _Signals(QObject):
    progress = Signal(int, int)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()


class _ExportJob(QRunnable):
    """``request.run`` on a pool thread; its outcome comes back as a queued signal."""

    def __init__(self, request: Request, cancel: threading.Event, ended: threading.Event):
        super().__init__()
        self.request, self.cancel, self.ended = request, cancel, ended
        self.signals = _Signals()
        self._last = 0.0
        self.setAutoDelete(True)

    def _emit(self, signal, *args) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:      # the dialog is gone (its window closed): nobody to tell
            self.cancel.set()

    def _progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last > 0.05 or done >= total:
            self._last = now
            self._emit(self.signals.progress, done, total)

    def run(self) -> None:
        try:
            result = self.request.run(self._progress, self.cancel)
        except ExportCancelled:
            self._emit(self.signals.cancelled)
        except (ExportError, ScenarioError) as err:
            self._emit(self.signals.failed, str(err))
        except Exception as err:  # noqa: BLE001 - shown in the dialog, never a crash of the app
            self._emit(self.signals.failed, f"{type(err).__name__}: {err}")
        else:
            self._emit(self.signals.finished, result)
        finally:
            retire(self.signals)     # freed on the GUI thread, never on this one
            self.signals = None
            self.ended.set()


# ---------------------------------------------------------------------------- the preview


class Preview(QWidget):
    """One exported picture (a QImage at the export's size), scaled to fit, aspect kept."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.image: QImage | None = None
        self.setMinimumSize(320, 180)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(640, 360)

    def set_image(self, image: QImage | None) -> None:
        self.image = image
        self.update()

    def target(self) -> QRectF:
        """Where the picture is drawn: the widget's rect less a margin, at the picture's aspect."""
        r = QRectF(self.rect()).adjusted(4, 4, -4, -4)
        if self.image is None or self.image.isNull() or r.width() <= 0 or r.height() <= 0:
            return r
        k = min(r.width() / self.image.width(), r.height() / self.image.height())
        w, h = self.image.width() * k, self.image.height() * k
        return QRectF(r.center().x() - w / 2, r.center().y() - h / 2, w, h)

    def paintEvent(self, event) -> None:  # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().dark())
        if self.image is not None and not self.image.isNull():
            t = self.target()
            p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
            p.drawImage(t, self.image)
            p.setPen(QPen(self.palette().shadow().color(), 1))
            p.drawRect(t.adjusted(-0.5, -0.5, 0.5, 0.5))
        p.end()


# ---------------------------------------------------------------------------- the dialog


class ExportDialog(QDialog):
    """Options, preview, progress and Cancel; see the module docstring."""

    exported = Signal(object)      # the Result of a finished export

    def __init__(self, main):
        super().__init__(main)
        self.main = main
        self.session = main.session
        self.setObjectName("exportDialog")
        self.setSizeGripEnabled(True)
        self.running = False
        self.result: Result | None = None
        self.problem: str | None = None
        self.plan: Plan | None = None
        self._plan_key = None
        self._cancel: threading.Event | None = None
        self._ended = threading.Event()
        self._ended.set()
        self._signals: _Signals | None = None
        self._syncing = False
        self._want: tuple[int, int] | None = None
        self._build()
        self._load_settings()
        self.preview_timer = QTimer(self)
        self.preview_timer.setSingleShot(True)
        self.preview_timer.setInterval(PREVIEW_DELAY_MS)
        self.preview_timer.timeout.connect(self.update_preview)
        self._wire()
        self.retranslate()
        self.session.changed.connect(self.schedule_preview)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------------ building

    def _build(self) -> None:
        def named(w, name):
            w.setObjectName(name)
            return w

        # File
        self.path = named(QLineEdit(), "exportPath")
        self.b_choose = named(QPushButton(), "exportChoose")
        self.format = named(QComboBox(), "exportFormat")
        for k in KINDS:
            self.format.addItem(k, k)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.b_choose)
        self.g_file = QGroupBox()
        f_file = QFormLayout(self.g_file)
        self.l_format, self.l_path = QLabel(), QLabel()
        f_file.addRow(self.l_format, self.format)
        f_file.addRow(self.l_path, path_row)

        # What
        self.instructions = named(QLineEdit(), "exportInstructions")
        self.block = named(QLineEdit(), "exportBlock")
        self.warp = named(QLineEdit(), "exportWarp")
        self.frames = named(QLineEdit(), "exportFrames")
        self.compare = named(QCheckBox(), "exportCompare")
        self.g_what = QGroupBox()
        f_what = QFormLayout(self.g_what)
        self.l_instr, self.l_block, self.l_warp, self.l_frames = QLabel(), QLabel(), QLabel(), QLabel()
        bw = QHBoxLayout()
        bw.addWidget(self.block)
        bw.addWidget(self.l_warp)
        bw.addWidget(self.warp)
        f_what.addRow(self.l_instr, self.instructions)
        f_what.addRow(self.l_block, bw)
        f_what.addRow(self.l_frames, self.frames)
        f_what.addRow(self.compare)

        # Look
        self.size = named(QComboBox(), "exportSize")
        for k in SIZE_PRESETS:
            self.size.addItem(k, k)
        self.width_ = named(QSpinBox(), "exportWidth")
        self.height_ = named(QSpinBox(), "exportHeight")
        for box, hi in ((self.width_, 7680), (self.height_, 4320)):
            box.setRange(64, hi)
            box.setAccelerated(True)
        self.width_.setValue(1600)
        self.height_.setValue(900)
        size_row = QHBoxLayout()
        size_row.addWidget(self.size, 1)
        size_row.addWidget(self.width_)
        self.l_times = QLabel("×")
        size_row.addWidget(self.l_times)
        size_row.addWidget(self.height_)
        self.theme = named(QComboBox(), "exportTheme")
        for name in THEMES:
            self.theme.addItem(name, name)
        self.scale = named(QDoubleSpinBox(), "exportScale")
        self.scale.setRange(0.5, 3.0)
        self.scale.setSingleStep(0.05)
        self.scale.setDecimals(2)
        self.scale.setValue(1.0)
        self.captions = named(QCheckBox(), "exportCaptions")
        self.captions.setChecked(True)
        self.title = named(QLineEdit(), "exportTitle")
        self.title_card = named(QCheckBox(), "exportTitleCard")
        self.g_look = QGroupBox()
        f_look = QFormLayout(self.g_look)
        self.l_size, self.l_theme, self.l_scale, self.l_title = QLabel(), QLabel(), QLabel(), QLabel()
        f_look.addRow(self.l_size, size_row)
        f_look.addRow(self.l_theme, self.theme)
        f_look.addRow(self.l_scale, self.scale)
        f_look.addRow(self.l_title, self.title)
        f_look.addRow(self.captions)
        f_look.addRow(self.title_card)

        # Timing
        self.fps = named(QDoubleSpinBox(), "exportFps")
        self.fps.setRange(1, 240)
        self.fps.setDecimals(0)
        self.fps.setValue(10)
        self.hold = named(QDoubleSpinBox(), "exportHold")
        self.hold.setRange(0.05, 600)
        self.hold.setSingleStep(0.25)
        self.hold.setDecimals(2)
        self.hold.setValue(1.0)
        self.g_time = QGroupBox()
        f_time = QFormLayout(self.g_time)
        self.l_fps, self.l_hold = QLabel(), QLabel()
        f_time.addRow(self.l_fps, self.fps)
        f_time.addRow(self.l_hold, self.hold)

        left = QVBoxLayout()
        for g in (self.g_file, self.g_what, self.g_look, self.g_time):
            left.addWidget(g)
        left.addStretch(1)

        # Preview
        self.preview = named(Preview(), "exportPreview")
        self.step = named(QSlider(Qt.Orientation.Horizontal), "exportStep")
        self.step.setRange(0, 0)
        self.picture = named(QLabel(), "exportPicture")
        right = QVBoxLayout()
        right.addWidget(self.preview, 1)
        right.addWidget(self.step)
        right.addWidget(self.picture)

        top = QHBoxLayout()
        lw = QWidget()
        lw.setLayout(left)
        lw.setMaximumWidth(460)
        top.addWidget(lw)
        top.addLayout(right, 1)

        # Bottom: the message, the progress bar, the buttons
        self.message = named(QLabel(), "exportMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = named(QProgressBar(), "exportProgress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)      # a number only while something runs
        self.progress.setFormat("%v / %m")
        self.b_export = named(QPushButton(), "exportStart")
        self.b_export.setDefault(True)
        self.b_cancel = named(QPushButton(), "exportCancel")
        self.b_cancel.setEnabled(False)
        self.b_close = named(QPushButton(), "exportClose")
        buttons = QHBoxLayout()
        buttons.addWidget(self.progress, 1)
        buttons.addWidget(self.b_export)
        buttons.addWidget(self.b_cancel)
        buttons.addWidget(self.b_close)

        lay = QVBoxLayout(self)
        lay.addLayout(top, 1)
        lay.addWidget(self.message)
        lay.addLayout(buttons)
        self.option_widgets = [self.g_file, self.g_what, self.g_look, self.g_time]
        self.resize(1100, 680)

    def _wire(self) -> None:
        later = self.schedule_preview
        self.format.currentIndexChanged.connect(self._format_changed)
        self.path.textEdited.connect(self._path_edited)
        self.b_choose.clicked.connect(self.choose_path)
        for w in (self.instructions, self.block, self.warp, self.frames, self.title):
            w.textChanged.connect(later)
        for w in (self.size, self.theme):
            w.currentIndexChanged.connect(later)
        self.size.currentIndexChanged.connect(self._size_changed)
        for w in (self.width_, self.height_):
            w.valueChanged.connect(later)
        for w in (self.scale, self.fps, self.hold):
            w.valueChanged.connect(later)
        for w in (self.captions, self.title_card, self.compare):
            w.toggled.connect(later)
        self.step.valueChanged.connect(self._step_changed)
        self.b_export.clicked.connect(self.start)
        self.b_cancel.clicked.connect(self.cancel)
        self.b_close.clicked.connect(self.close)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Export for slides"))
        self.g_file.setTitle(tr("File"))
        self.g_what.setTitle(tr("What"))
        self.g_look.setTitle(tr("Look"))
        self.g_time.setTitle(tr("Timing"))
        self.l_format.setText(tr("Format"))
        self.l_path.setText(tr("Save to"))
        self.b_choose.setText(tr("Choose…"))
        for i, label in enumerate(format_labels()[k] for k in KINDS):
            self.format.setItemText(i, label)
        for i, label in enumerate(size_labels()[k] for k in SIZE_PRESETS):
            self.size.setItemText(i, label)
        for i, name in enumerate(THEMES):
            self.theme.setItemText(i, tr(THEME_LABELS.get(name, name)))
        self.l_instr.setText(tr("Instructions"))
        self.instructions.setToolTip(tr("Warp instructions, 1-based as on screen: 9, 9-12, 1,5 or all"))
        self.l_block.setText(tr("Block"))
        self.l_warp.setText(tr("Warp"))
        self.block.setToolTip(tr("Linear block index, 0-based as in CUDA: 0, 2-3 or all"))
        self.warp.setToolTip(tr("Warp in the block, 0-based: 0, 1-3 or all"))
        self.l_frames.setText(tr("Frames"))
        self.frames.setPlaceholderText(tr("all (PNG, SVG: the frame on screen)"))
        self.frames.setToolTip(tr("Numbers and ranges (1-based), first, last, or kinds: compute, request, "
                                  "wavefront, line, summary; comma-separated"))
        self.compare.setText(tr("Side by side with the compared scenario"))
        self.l_size.setText(tr("Size"))
        self.l_theme.setText(tr("Theme"))
        self.l_scale.setText(tr("Type size"))
        self.l_title.setText(tr("Title bar"))
        self.title.setPlaceholderText(tr("none"))
        self.captions.setText(tr("Captions (what happens in each frame)"))
        self.title_card.setText(tr("Open with a title card"))
        self.l_fps.setText(tr("Frames per second"))
        self.l_hold.setText(tr("Seconds per frame"))
        self.b_export.setText(tr("Export"))
        self.b_cancel.setText(tr("Cancel"))
        self.b_close.setText(tr("Close"))
        self._show_picture_label()

    # ------------------------------------------------------------------ settings

    def _load_settings(self) -> None:
        get = app_settings.get          # each checked: a wrong or out-of-range value is the default
        folder = Path(get("export/folder", "", str) or Path.home())
        self.folder = folder if _is_folder(folder) else Path.home()
        self._set_combo(self.format, get("export/format", KINDS[0], str, choices=KINDS))
        self._set_combo(self.size, get("export/size", "1080p", str, choices=SIZE_PRESETS))
        try:
            w, h = parse_size(get("export/custom", "1600x900", str))
        except ExportError:
            w, h = 1600, 900
        self.width_.setValue(w)
        self.height_.setValue(h)
        self._set_combo(self.theme, get("export/theme", "light", str, choices=THEMES))   # light: best on a projector
        for box, key, default in ((self.scale, "export/scale", 1.0), (self.fps, "export/fps", 10.0),
                                  (self.hold, "export/hold", 1.0)):
            box.setValue(get(key, default, float, lo=box.minimum(), hi=box.maximum()))
        self.captions.setChecked(get("export/captions", True, bool))
        self.title_card.setChecked(get("export/title_card", False, bool))
        self._size_changed()

    def save_settings(self) -> None:
        put = app_settings.put
        put("export/folder", str(self.folder))
        put("export/format", self.kind())
        put("export/size", self.size.currentData())
        put("export/custom", f"{self.width_.value()}x{self.height_.value()}")
        put("export/theme", self.theme.currentData())
        put("export/scale", self.scale.value())
        put("export/fps", self.fps.value())
        put("export/hold", self.hold.value())
        put("export/captions", self.captions.isChecked())
        put("export/title_card", self.title_card.isChecked())

    @staticmethod
    def _set_combo(combo: QComboBox, data: str) -> None:
        i = combo.findData(data)
        if i >= 0:
            combo.setCurrentIndex(i)

    # ------------------------------------------------------------------ what is on screen

    def compare_partner(self):
        """The right side, when the window is in compare mode and has one: a scenario, or a
        recorded trace (``viz.trace.detail.TraceSource``, exported from its own streams as the
        left side is; its ``scenario`` is only the painter's frame of it)."""
        m = self.main
        if getattr(m, "a_compare", None) is None or not m.a_compare.isChecked():
            return None
        right = m.compare.right
        if right.scenario is None:
            return None
        return right.trace if right.is_trace else right.scenario

    def refresh(self) -> None:
        """Take the window's position as the selection and make a file name for it."""
        s = self.session
        c = s.cursor
        self._syncing = True
        try:
            self.instructions.setText(str(c.instruction + 1))
            self.block.setText(str(c.block))
            self.warp.setText(str(c.warp))
            self.frames.clear()
            self.title.setText(s.scenario.shown_title if s.scenario is not None else "")
            other = self.compare_partner()
            self.compare.setEnabled(other is not None)
            self.compare.setChecked(other is not None)
            try:
                path = path_in(self.folder, self.default_name())
            except ExportError:
                path = self.folder / default_file_name(["warpviz", s.cursor.instruction + 1], FORMATS[self.kind()].extension)
            self.path.setText(str(path))
        finally:
            self._syncing = False
        self.result = None
        self._set_message("")
        self._want = (c.instruction, c.frame)    # the preview opens on the frame on screen
        self.schedule_preview()

    def default_name(self) -> str:
        """``<name>[-vs-<partner>]-<instruction><extension>``: the names are the files' own
        (a trace's header may say anything: each part becomes one safe file name)."""
        s = self.session
        parts = [s.name or (s.path.stem if s.path else "warpviz")]
        other = self.compare_partner() if self.compare.isChecked() else None
        if other is not None:
            right = self.main.compare.right
            parts += ["vs", right.name or (right.path.stem if right.path else "other")]
        parts.append(s.cursor.instruction + 1)
        return default_file_name(parts, FORMATS[self.kind()].extension)

    # ------------------------------------------------------------------ options

    def kind(self) -> str:
        return self.format.currentData()

    def _format_changed(self) -> None:
        """A new format gives the path its extension (a PNG sequence: a folder)."""
        if not self._syncing:
            text = self.path.text().strip()
            if text:
                p = Path(text.rstrip("/"))
                known = {f.extension for f in FORMATS.values() if not f.is_folder}
                stem = p.with_suffix("") if p.suffix.lower() in known else p
                self.path.setText(str(stem) + FORMATS[self.kind()].extension)
        options = FORMATS[self.kind()].options          # what this format reads (viz/export_formats.py)
        self.title_card.setEnabled("title_card" in options)
        for w in (self.fps, self.l_fps):
            w.setEnabled("fps" in options)
        self.schedule_preview()

    def _path_edited(self, text: str) -> None:
        """A typed extension picks the format."""
        try:
            kind = output_kind(Path(text.strip())) if text.strip() else None
        except ExportError:
            kind = None
        if kind is not None and kind != self.kind() and (kind != SEQUENCE or text.strip().endswith("/")):
            self._syncing = True
            try:
                self._set_combo(self.format, kind)
            finally:
                self._syncing = False
        self.schedule_preview()

    def _size_changed(self) -> None:
        custom = self.size.currentData() == "custom"
        for w in (self.width_, self.height_, self.l_times):
            w.setVisible(custom)

    def size_text(self) -> str:
        if self.size.currentData() == "custom":
            return f"{self.width_.value()}x{self.height_.value()}"
        return self.size.currentData()

    def choose_path(self) -> None:
        kind = self.kind()
        label = format_labels()[kind]
        ext = FORMATS[kind].extension
        filt = f"{label} (*{ext})" if not FORMATS[kind].is_folder else ""
        path, _ = QFileDialog.getSaveFileName(self, tr("Export to"), self.path.text(), filt)
        if path:
            if FORMATS[kind].is_folder:
                path = path.rstrip("/") + "/"
            elif not path.lower().endswith(ext):
                path += ext
            self.path.setText(path)
            self._path_edited(path)

    def request(self, first_warp: bool = False) -> Request:
        """The options as ``viz.export`` takes them; ExportError or ScenarioError with the
        message to show. ``first_warp``: only the first selected block and warp (the preview)."""
        s = self.session
        sc = s.scenario
        if sc is None and getattr(s, "is_launch", False):
            raise ExportError(tr("Nothing to export yet: record the launch file first (Record trace in the GPU "
                                 "panel), then export its trace."))
        if sc is None:
            raise ExportError(tr("Nothing to export: the scenario has an error (see the editor)."))
        kind = self.kind()
        text = self.path.text().strip()
        if not text:
            raise ExportError(tr("Choose where to save the file."))
        out = Path(text).expanduser()      # a PNG sequence: the folder (png_sequence=True says so)
        title = self.title.text().strip()
        if title == sc.shown_title:
            title = None                    # the scenario's own (a comparison's card: "A vs B")
        st = Settings(size=parse_size(self.size_text()), fps=self.fps.value(), hold=self.hold.value(),
                      theme=self.theme.currentData(), scale=round(self.scale.value(), 3),
                      captions=self.captions.isChecked(), title=title, title_card=self.title_card.isChecked())
        frames = self.frames.text().strip() or None
        if frames is None and kind in STILLS:
            # A still of what is on screen, when that instruction is the first one selected.
            frames = "last"
        # a recorded trace exports itself (its instructions are each warp's own stream)
        src = s.trace if getattr(s, "is_trace", False) else sc
        pick = trace_selection if src is not sc else selection
        sel = pick(src, self.instructions.text() or "all", self.block.text() or "0", self.warp.text() or "0",
                   frames, names=(tr("Instructions"), tr("Block"), tr("Warp")))
        if sel.frames == "last" and not self.frames.text().strip():
            first = sel.instructions[0] if sel.instructions else 0
            if first == s.cursor.instruction:
                sel = Selection(sel.instructions, sel.blocks, sel.warps, str(s.cursor.frame + 1))
        if first_warp:
            sel = Selection(sel.instructions, sel.blocks[:PREVIEW_WARPS], sel.warps[:PREVIEW_WARPS], sel.frames)
        other = self.compare_partner() if self.compare.isChecked() else None
        labels = None
        if other is not None:
            right = self.main.compare.right
            osc = other.scenario if getattr(other, "is_trace", False) else other
            labels = ((sc.shown_title, osc.shown_title) if sc.shown_title != osc.shown_title
                      else (s.name or sc.shown_title, right.name or osc.name or osc.shown_title))
        check_settings(st, kind)
        return Request(src, out, kind, st, sel, other, labels)

    # ------------------------------------------------------------------ preview

    def schedule_preview(self, *_args) -> None:
        if not self._syncing:
            self.preview_timer.start()

    def update_preview(self) -> None:
        """Plan the first selected warp and paint the chosen picture at the export's size."""
        self.preview_timer.stop()
        try:
            req = self.request(first_warp=True)
            key = (id(req.scenario), id(req.compare), req.selection, req.still, req.labels,
                   req.settings.title_card, req.settings.title, req.settings.hold, req.settings.fps)
            if key != self._plan_key:
                self.plan = make_plan(req.scenario, req.settings, req.selection, req.compare, req.labels,
                                      still=req.still)
                self._plan_key = key
        except (ExportError, ScenarioError) as err:
            self._set_problem(str(err))
            return
        self.preview_settings = req.settings
        self.preview_request = req
        self._set_problem(None)
        n = len(self.plan.steps)
        self.step.blockSignals(True)
        if self.step.maximum() != n - 1:
            self.step.setRange(0, n - 1)
        if self._want is not None:
            self.step.setValue(self.picture_of(*self._want))
            self._want = None
        self.step.blockSignals(False)
        self.step.setEnabled(n > 1)
        self._render_step()

    def picture_of(self, instruction: int, frame: int) -> int:
        """The preview plan's picture showing that frame of that instruction (else the first)."""
        for k, step in enumerate(self.plan.steps):
            if step.left is not None:
                d, f = step.left
                if d.instruction.number == instruction and f.index == frame:
                    return k
        return 0

    def _step_changed(self) -> None:
        if self.plan is not None and self.problem is None:
            self._render_step()

    def _render_step(self) -> None:
        k = min(self.step.value(), len(self.plan.steps) - 1)
        self.preview.set_image(render_image(self.plan.steps[k], self.preview_settings, self.plan))
        self._show_picture_label()

    def _show_picture_label(self) -> None:
        if self.plan is None or self.problem is not None:
            self.picture.setText("")
            return
        w, h = self.preview_settings.size
        req = self.preview_request
        text = tr("picture {k} of {n}, {w}×{h}", k=min(self.step.value(), len(self.plan.steps) - 1) + 1,
                  n=len(self.plan.steps), w=w, h=h)
        more = len(req.selection.blocks) * len(req.selection.warps)
        try:
            full = self.request()
            more = len(full.selection.blocks) * len(full.selection.warps)
        except (ExportError, ScenarioError):
            pass
        if more > 1:
            text += " · " + tr("the preview shows the first of {n} warps", n=more)
        self.picture.setText(text)

    def _set_problem(self, problem: str | None) -> None:
        self.problem = problem
        if problem is not None:
            self._set_message(problem, error=True)
        elif not self.running and self.result is None:
            self._set_message("")
        self.b_export.setEnabled(problem is None and not self.running)
        self._show_picture_label()

    def _set_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet("color: #c62828; font-weight: bold;" if error else "")
        self.message.setProperty("error", error)

    # ------------------------------------------------------------------ export

    def start(self) -> bool:
        """Start the export on a pool thread; False (with the message shown) if the options are wrong."""
        if self.running:
            return False
        try:
            req = self.request()
        except (ExportError, ScenarioError) as err:
            self._set_problem(str(err))
            return False
        self.folder = req.out.resolve().parent
        self.save_settings()
        self.result = None
        self._cancel = threading.Event()
        self._ended = threading.Event()
        job = _ExportJob(req, self._cancel, self._ended)
        self._signals = job.signals
        self.destroyed.connect(self._cancel.set)      # the window closes under a running export
        job.signals.progress.connect(self._progress)
        job.signals.finished.connect(self._finished)
        job.signals.failed.connect(self._failed)
        job.signals.cancelled.connect(self._cancelled)
        self._set_running(True)
        self.progress.setRange(0, 0)     # busy until the first picture is done
        self._set_message(tr("Exporting to {path}…", path=req.out))
        QThreadPool.globalInstance().start(job)
        return True

    def cancel(self) -> None:
        """Ask the export to stop; it deletes what it had written and says so."""
        if self.running and self._cancel is not None:
            self._cancel.set()
            self.b_cancel.setEnabled(False)
            self._set_message(tr("Cancelling…"))

    def wait(self, msecs: int = 60000) -> bool:
        """Process events until the running export has ended (tests, quitting)."""
        from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop

        deadline = QDeadlineTimer(msecs)
        while (self.running or not self._ended.is_set()) and not deadline.hasExpired():
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
            self._ended.wait(0.005)
        return not self.running

    def shutdown(self) -> None:
        """The app quits: cancel a running export and give it a moment to clean up."""
        if self._cancel is not None:
            self._cancel.set()
        self._ended.wait(10)

    def _set_running(self, on: bool) -> None:
        self.running = on
        self.progress.setTextVisible(on)
        for w in self.option_widgets:
            w.setEnabled(not on)
        self.b_export.setEnabled(not on and self.problem is None)
        self.b_cancel.setEnabled(on)

    def _progress(self, done: int, total: int) -> None:
        if self.running:
            self.progress.setRange(0, max(1, total))
            self.progress.setValue(done)

    def _done(self) -> None:
        self._set_running(False)
        self._signals = None

    def _finished(self, res: Result) -> None:
        QTimer.singleShot(0, free_retired)   # after this slot: its sender may be among them
        self._done()
        self.result = res
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        w, h = res.size
        if res.format in STILLS:
            what = tr("{w}×{h}, 1 frame", w=w, h=h)
        else:
            what = tr("{w}×{h}, {n} pictures, {s} s", w=w, h=h, n=res.pictures, s=f"{res.seconds:.1f}")
        self._set_message(tr("Wrote {path} ({what})", path=res.path, what=what))
        self.exported.emit(res)

    def _failed(self, message: str) -> None:
        QTimer.singleShot(0, free_retired)
        self._done()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self._set_message(tr("Not exported: {problem}", problem=message), error=True)

    def _cancelled(self) -> None:
        QTimer.singleShot(0, free_retired)
        self._done()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self._set_message(tr("Cancelled; nothing was written."))

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event) -> None:  # noqa: N802
        self.cancel()
        super().closeEvent(event)

    def reject(self) -> None:
        self.cancel()
        super().reject()


def _is_folder(path: Path) -> bool:
    try:
        return path.is_absolute() and path.is_dir()
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------------------- the window's menus


def show(main) -> ExportDialog:
    """Open the dialog (not modal: the window stays usable), on the window's position."""
    dialog = getattr(main, "export_dialog", None)
    if dialog is None:
        dialog = main.export_dialog = ExportDialog(main)
    if not dialog.running:
        dialog.refresh()
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog


def install(main) -> None:
    """File → Export… (Ctrl+E), and an Edit menu with Copy frame (Ctrl+Shift+C, or Ctrl+C
    in the picture) and Copy frame at 1920×1080; kept translated."""
    from . import clipboard

    main.export_dialog = None
    a_export = QAction(main)
    a_export.setObjectName("export")
    a_export.setShortcut(QKeySequence("Ctrl+E"))
    a_export.triggered.connect(lambda: show(main))
    main.addAction(a_export)
    main.m_file.insertAction(main.a_quit, a_export)
    main.m_file.insertSeparator(main.a_quit)
    m_edit = main.menuBar().addMenu("")
    main.menuBar().insertMenu(main.m_play.menuAction(), m_edit)
    actions = clipboard.install(main, m_edit)
    main.a_export, main.m_edit = a_export, m_edit

    def retranslate(_code: str = "") -> None:
        try:
            a_export.setText(tr("&Export…"))
            m_edit.setTitle(tr("&Edit"))
            for a, text in zip(actions, (tr("Copy frame"), tr("Copy frame at 1920×1080"))):
                a.setText(text)
            if main.export_dialog is not None:
                main.export_dialog.retranslate()
        except RuntimeError:  # the window is gone
            pass

    retranslate()
    on_language_change(main, retranslate)
