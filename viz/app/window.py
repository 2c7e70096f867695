"""The main window: docks around the warp/memory view, actions and keys, themes, languages,
presentation mode, open / drop / save, autosave and crash recovery, settings."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import weakref
from pathlib import Path
from typing import NamedTuple

from PySide6.QtCore import QByteArray, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (QAction, QActionGroup, QColor, QFont, QFontDatabase, QGuiApplication, QKeySequence,
                           QPalette)
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox,
                               QProgressBar, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget)

from .. import i18n
from ..fileio import WriteError, write_atomic, write_failure, write_new
from ..frames import Cursor
from ..i18n import tr
from ..render.theme import THEME_LABELS, THEMES, theme
from ..scenario import resolve
from . import settings
from .compare import ComparePage
from .editor import EditorPanel
from .figures import FiguresPanel
from .library import LibraryPanel, unique_user_path
from .lifetime import on_language_change
from .source import source_line, trace_source_line
from .state import Session
from .timeline import SPEEDS, Timeline
from .view import FrameView, ZoomArea
from .worker import wait_with_progress

PRESENTATION_THEME = "high-contrast"   # presentation mode's theme where View → Theme asks for it
PRESENTATION_CONTRAST = "presentation_high_contrast"   # that setting; off: presentation keeps your theme
PRESENTATION_SCALE = 1.35
RECOVERY_TEXT = "unsaved.toml"
QUICK_TRACE_BYTES = 8 << 20     # a trace file up to this size is read at once; a larger one off the GUI thread
RECOVERY_META = "unsaved.json"


def _only_current_page_sizes(stack: QStackedWidget) -> None:
    """A stacked widget is as wide as its widest page: let the hidden pages' sizes be ignored, so the
    compare page (two pictures side by side) does not keep the window wider than a 1280-px screen."""
    for k in range(stack.count()):
        page = stack.widget(k)
        policy = (QSizePolicy.Policy.Preferred if k == stack.currentIndex() else QSizePolicy.Policy.Ignored)
        page.setSizePolicy(policy, policy)
    stack.updateGeometry()


class MainWindow(QMainWindow):
    presentationLeft = Signal()   # the window and its panels are back as they were before presentation mode

    def __init__(self, open_arg: str | None = None):
        super().__init__()
        self.setObjectName("warpviz")
        self.setAcceptDrops(True)
        self.session = Session(self)
        self.theme_name = settings.get("theme", "light", str, choices=THEMES)
        self.presenting = False
        self.closed = False
        self.last_open_error = ""       # the message of the last file that could not be opened (a trace)
        self.last_write_error = ""      # the message of the last write of your text that failed ("" once one works)
        self._pre_presentation: _PrePresentation | None = None
        self._pre_compare_docks: dict[str, QSize] | None = None
        self._base_font = QApplication.font()

        # -- centre: source line, the view (or the comparison), the timeline
        self.source = QLabel()
        self.source.setObjectName("sourceLine")
        self._source_font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.source.setFont(self._source_font)
        self.source.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source.setContentsMargins(8, 4, 8, 4)
        self.source.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.view = FrameView(self.session)
        self.view.setObjectName("frameView")
        self.zoom = ZoomArea(self.view)
        self.compare = ComparePage(self.session)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.zoom)
        self.stack.addWidget(self.compare)
        _only_current_page_sizes(self.stack)
        self.timeline = Timeline(self.session)
        centre = QWidget()
        lay = QVBoxLayout(centre)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.source)
        lay.addWidget(self.stack, 1)
        lay.addWidget(self.timeline)
        self.setCentralWidget(centre)

        # -- docks
        self.library = LibraryPanel()
        self.editor = EditorPanel(self.session)
        self.figures = FiguresPanel(self.session)
        self._launch = self._sweep = None  # pyqtgraph panels: built after the first frame is painted
        self.docks: dict[str, QDockWidget] = {}
        self._dock("library", self.library, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._dock("editor", self.editor, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._dock("figures", self.figures, Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("launch", _Holder(), Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("sweep", _Holder(), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["launch"], self.docks["sweep"])
        from .trace_source import TraceSourcePanel   # a trace's CUDA source, line by line

        self.trace_source = TraceSourcePanel(self.session)
        self._dock("source", self.trace_source, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["sweep"], self.docks["source"])
        self.docks["launch"].raise_()
        self.gpu_panel = None  # built with the plot panels, after the first frame

        # -- status bar
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.statusBar().addPermanentWidget(self.progress)

        self._actions()
        self._menus()

        # -- wiring
        self.library.openRequested.connect(self.open_path)
        self.library.newRequested.connect(self.save_copy)
        self.library.deleteRequested.connect(self.delete_user_scenario)
        self.session.positionChanged.connect(self._update_source)
        self.session.changed.connect(self._scenario_shown)
        self.session.errorChanged.connect(self._error_changed)
        self.session.progress.connect(self._progress)
        self.session.busyChanged.connect(self._busy)
        self.view.hoveredLane.connect(self._update_source)
        self.editor.edited.connect(self._edited)
        self.timeline.playingChanged.connect(lambda on: self.a_play.setChecked(on))
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(800)
        self.autosave_timer.timeout.connect(self.autosave)
        # Owned by the window, so it dies with it (a QTimer.singleShot lambda outlived the
        # window and touched a deleted progress bar).
        self.progress_timer = QTimer(self)
        self.progress_timer.setSingleShot(True)
        self.progress_timer.setInterval(250)
        self.progress_timer.timeout.connect(lambda: self.progress.setVisible(self.session.busy))
        me = weakref.ref(self)
        on_language_change(self, lambda _code: _retranslate(me))

        screen = QGuiApplication.primaryScreen()  # a first start fits the screen (a 1280x720 projector too)
        room = screen.availableGeometry() if screen is not None else None
        self.resize(min(1600, room.width()) if room else 1600, min(980, room.height()) if room else 980)
        from .qt_translations import follow_language   # Qt's dialogs and buttons in the chosen language

        follow_language()
        self._restore_settings()
        self.apply_theme(self.theme_name)
        self.retranslate()
        self.settings_problem = settings.problem()    # a settings file that could not be used: said once
        settings.data_dir()                           # a data folder that cannot be used: said once too
        self.data_problem = settings.data_problem()
        said = " ".join(p for p in (self.settings_problem, self.data_problem) if p)
        if said:
            self.statusBar().showMessage(said, 30000)
        self._open_initial(open_arg)
        from .firstpaint import after_first_paint

        after_first_paint(self.view, self._build_plots)    # the picture first, then the plot panels

    # ------------------------------------------------------------------ plot panels (pyqtgraph)

    def _build_plots(self) -> None:
        """The heat map and sweep panels. Importing pyqtgraph costs a third of a second, so
        the first window shows the picture first and these a moment later."""
        if self._launch is not None:
            return
        from .launch import LaunchPanel
        from .sweep import SweepPanel

        self._launch = LaunchPanel(self.session)
        self._sweep = SweepPanel(self.session)
        self.docks["launch"].widget().set(self._launch)
        self.docks["sweep"].widget().set(self._sweep)
        self._launch.mode.setCurrentIndex(settings.get("heat_mode", 0, int, lo=0, hi=self._launch.mode.count() - 1))
        self.gpu_panel = self._gpu_panel()
        self._style_plots()
        if "gpu" in self.docks:
            self.m_panels.addAction(self.docks["gpu"].toggleViewAction())
            self.docks["gpu"].setWindowTitle(tr("GPU"))
            if self.presenting:
                self.docks["gpu"].hide()

    @property
    def launch(self):
        self._build_plots()
        return self._launch

    @property
    def sweep(self):
        self._build_plots()
        return self._sweep

    # ------------------------------------------------------------------ building

    def _dock(self, key: str, widget: QWidget, area) -> QDockWidget:
        d = QDockWidget(self)
        d.setObjectName(f"dock_{key}")
        d.setWidget(widget)
        d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                      | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                      | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, d)
        self.docks[key] = d
        return d

    def _gpu_panel(self):
        """The GPU panel, when its module is there (another issue builds it)."""
        try:
            from .gpu_panel import GpuPanel
        except ImportError:
            return None
        try:
            panel = GpuPanel(self)
        except Exception as err:  # noqa: BLE001 - the app must start without it
            self.statusBar().showMessage(tr("GPU panel unavailable: {err}", err=err), 10000)
            return None
        if isinstance(panel, QDockWidget):
            if not panel.objectName():
                panel.setObjectName("dock_gpu")
            if self.dockWidgetArea(panel) == Qt.DockWidgetArea.NoDockWidgetArea:
                self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, panel)
            self.docks["gpu"] = panel
        elif isinstance(panel, QWidget):
            self._dock("gpu", panel, Qt.DockWidgetArea.BottomDockWidgetArea)
            self.tabifyDockWidget(self.docks["sweep"], self.docks["gpu"])
        if "gpu" in self.docks:  # built after restoreState: its visibility is kept separately
            self.docks["gpu"].setVisible(settings.get("gpu_panel_shown", True, bool))
        return panel

    def _action(self, name: str, slot, keys=(), checkable: bool = False) -> QAction:
        a = QAction(self)
        a.setObjectName(name)
        a.setShortcuts([QKeySequence(k) for k in keys])
        a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        a.setCheckable(checkable)
        (a.toggled if checkable else a.triggered).connect(slot)
        self.addAction(a)  # keys work even when the menu bar is hidden (presentation)
        return a

    def _actions(self) -> None:
        s = self.session
        K = Qt.Key
        self.a_open = self._action("open", lambda: self.open_dialog(), [QKeySequence.StandardKey.Open])
        self.a_save = self._action("save", lambda: self.save(), [QKeySequence.StandardKey.Save])
        self.a_copy = self._action("saveCopy", lambda: self.save_copy())
        self.a_quit = self._action("quit", self.close, [QKeySequence.StandardKey.Quit])
        self.a_play = self._action("play", lambda on: self.timeline.play(on), [K.Key_Space], checkable=True)
        self.a_next = self._action("nextFrame", lambda: s.step("frame", 1), [K.Key_Right])
        self.a_prev = self._action("prevFrame", lambda: s.step("frame", -1), [K.Key_Left])
        self.a_next_i = self._action("nextInstruction", lambda: s.step("instruction", 1), [K.Key_Down])
        self.a_prev_i = self._action("prevInstruction", lambda: s.step("instruction", -1), [K.Key_Up])
        self.a_next_w = self._action("nextWarp", lambda: s.step("warp", 1), [K.Key_PageDown])
        self.a_prev_w = self._action("prevWarp", lambda: s.step("warp", -1), [K.Key_PageUp])
        self.a_next_b = self._action("nextBlock", lambda: s.step("block", 1), ["Ctrl+PgDown"])
        self.a_prev_b = self._action("prevBlock", lambda: s.step("block", -1), ["Ctrl+PgUp"])
        self.a_home = self._action("home", lambda: s.home(), [K.Key_Home])
        self.a_end = self._action("end", lambda: s.end(), [K.Key_End])
        self.a_first = self._action("first", lambda: s.home(whole=True), ["Ctrl+Home"])
        self.a_last = self._action("last", lambda: s.end(whole=True), ["Ctrl+End"])
        self.a_faster = self._action("faster", lambda: self.timeline.change_speed(1), [K.Key_Plus, K.Key_Equal])
        self.a_slower = self._action("slower", lambda: self.timeline.change_speed(-1), [K.Key_Minus])
        self.a_present = self._action("presentation", self.set_presentation, [K.Key_F11], checkable=True)
        self.a_escape = self._action("leavePresentation", lambda: self.a_present.setChecked(False), [K.Key_Escape])
        self.a_compare = self._action("compare", self.set_compare, ["Ctrl+M"], checkable=True)
        # Every lane row, folded as deep as it takes, instead of leaving detail rows out for room
        self.a_rows = self._action("everyLaneRow", self.set_every_row, ["Ctrl+R"], checkable=True)
        self.a_matrix = self._action("matrixFragments", lambda: self.show_matrix())   # ldmatrix / stmatrix
        self.a_zoom_in = self._action("zoomIn", lambda: self.zoom.set_zoom(self.zoom.zoom * 1.25), ["Ctrl++", "Ctrl+="])
        self.a_zoom_out = self._action("zoomOut", lambda: self.zoom.set_zoom(self.zoom.zoom / 1.25), ["Ctrl+-"])
        self.a_zoom_reset = self._action("zoomReset", lambda: self.zoom.set_zoom(1.0), ["Ctrl+0"])
        self.theme_group = QActionGroup(self)
        self.a_themes = {}
        for name in THEMES:
            a = QAction(self)
            a.setObjectName(f"theme_{name}")
            a.setCheckable(True)
            a.setChecked(name == self.theme_name)
            a.triggered.connect(lambda _=False, n=name: self.apply_theme(n))
            self.theme_group.addAction(a)
            self.a_themes[name] = a
        self.lang_group = QActionGroup(self)
        self.a_langs = {}
        for code, label in i18n.LANGUAGES.items():
            a = QAction(label, self)
            a.setObjectName(f"lang_{code}")
            a.setCheckable(True)
            a.triggered.connect(lambda _=False, c=code: self.set_language(c))
            self.lang_group.addAction(a)
            self.a_langs[code] = a
        self.a_keys = self._action("keys", self.show_keys, [QKeySequence.StandardKey.HelpContents])
        # Presentation mode keeps the chosen theme (the lesson plan recommends light on a
        # projector); this asks for the black high-contrast theme while presenting instead.
        self.a_present_contrast = QAction(self)
        self.a_present_contrast.setObjectName("presentationHighContrast")
        self.a_present_contrast.setCheckable(True)
        self.a_present_contrast.setChecked(settings.get(PRESENTATION_CONTRAST, False, bool))
        self.a_present_contrast.toggled.connect(self._presentation_contrast)

    def _menus(self) -> None:
        mb = self.menuBar()
        self.m_file = mb.addMenu("")
        for a in (self.a_open, self.a_save, self.a_copy):
            self.m_file.addAction(a)
        self.m_file.addSeparator()
        self.m_file.addAction(self.a_quit)
        self.m_play = mb.addMenu("")
        for a in (self.a_play, self.a_prev, self.a_next, self.a_prev_i, self.a_next_i, self.a_prev_w,
                  self.a_next_w, self.a_prev_b, self.a_next_b, self.a_home, self.a_end, self.a_first,
                  self.a_last, self.a_slower, self.a_faster):
            self.m_play.addAction(a)
        self.m_view = mb.addMenu("")
        self.m_theme = self.m_view.addMenu("")
        for a in self.a_themes.values():
            self.m_theme.addAction(a)
        self.m_theme.addSeparator()
        self.m_theme.addAction(self.a_present_contrast)
        self.m_lang = self.m_view.addMenu("")
        for a in self.a_langs.values():
            self.m_lang.addAction(a)
        self.m_view.addSeparator()
        for a in (self.a_zoom_in, self.a_zoom_out, self.a_zoom_reset):
            self.m_view.addAction(a)
        self.m_view.addSeparator()
        self.m_view.addAction(self.a_compare)
        self.m_view.addAction(self.a_matrix)
        self.m_view.addAction(self.a_present)
        self.m_view.addAction(self.a_rows)
        self.m_view.addSeparator()
        self.m_panels = self.m_view.addMenu("")
        for d in self.docks.values():
            self.m_panels.addAction(d.toggleViewAction())
        self.m_help = mb.addMenu("")
        self.m_help.addAction(self.a_keys)
        from .about import install as install_about  # Help → About warpviz, the window icon

        install_about(self)
        from .export_dialog import install as install_export  # File → Export…, Edit → Copy frame

        install_export(self)
        from .replay_dialog import install as install_replay  # View → Replay with layout… (a trace)

        install_replay(self)
        from .notes import install as install_notes  # the Notes dock, View → Notes in presentation mode

        install_notes(self)
        from .pen import install as install_pen  # draw on the picture: P, H, E, D; Edit → Keep pen strokes

        install_pen(self)
        from .undo import install as install_undo  # Edit → Undo / Redo over every edit, form or text

        install_undo(self)
        from .lesson_keys import install as install_lesson_keys  # Ctrl+Right / Ctrl+Left: next / previous scenario

        install_lesson_keys(self)

    # ------------------------------------------------------------------ opening and saving

    def _open_initial(self, arg: str | None) -> None:
        rec = self._recovery()
        if arg and str(arg).lower().endswith(".wvtrace"):
            if self.open_trace(Path(arg)):
                return
            arg = None         # the message is in the status bar; open what would open without it
        if arg:
            try:
                path = resolve(arg)
            except Exception as err:  # noqa: BLE001 - ScenarioError: show it, open nothing
                self.statusBar().showMessage(str(err), 15000)
                path = None
            if path is not None:
                if rec and rec[0] is not None and Path(rec[0]).resolve() == path.resolve():
                    self.open_path(path, text=rec[1], recovered=True)
                else:
                    self.open_path(path)
                return
        if rec:
            path, text = rec
            if path is not None and Path(path).is_file():
                self.open_path(Path(path), text=text, recovered=True)
            else:
                self.session.open_text(text, "recovered")
                self.editor.show_info(lambda: tr("Restored your unsaved edits from the last session."))
            return
        last = settings.get("last_scenario", "", str)
        cursor = settings.get("cursor", "", str)
        # a regular file only: a FIFO or a device named there would hang the start or fill the memory
        path = Path(last) if last and _is_regular(Path(last)) else resolve("transpose-tile")
        if last and path != Path(last) and os.path.lexists(last):
            self.last_open_error = tr("{path}: the file you had open last is no longer a regular file (a folder, a "
                                      "pipe or a device now has its name), so the default scenario opened. Fix: open "
                                      "the file you meant with File → Open", path=last)
            self.statusBar().showMessage(self.last_open_error, 30000)
        if not self.open_path(path) and path.suffix == ".wvtrace":
            path = resolve("transpose-tile")
            self.open_path(path)
        if cursor and last and Path(last) == path:
            at = _cursor_setting(cursor)
            if at is not None:
                self.session.move_to(at)

    def open_path(self, path: Path, text: str | None = None, recovered: bool = False) -> bool:
        path = Path(path)
        if path.suffix.lower() == ".wvtrace":
            return self.open_trace(path)
        from .state import is_launch_file

        if is_launch_file(path):
            return self.open_launch(path)
        if not self.secure_edits():
            return False               # the edits could not be written: they stay on screen
        try:
            self.session.cursor = Cursor()
            self.session.open(path, text=text)
        except (OSError, UnicodeDecodeError) as err:
            QMessageBox.warning(self, "warpviz", tr("Cannot open {path}: {err}", path=path, err=err))
            return False
        self.library.set_current(path)
        self.editor.show_info((lambda: tr("Restored your unsaved edits from the last session.")) if recovered else "")
        settings.put("last_scenario", str(path))
        if self.a_compare.isChecked():
            self.compare.right.clear()  # a new left side picks a new partner
            self.compare.ensure_partner()
        self._update_title()
        return True

    def open_trace(self, path: Path) -> bool:
        """Open a recorded trace: the picture, timeline, figures and heat map of what the kernel
        did; its launch file shows read-only. A bad file is a message; what was open stays."""
        from ..trace import TraceError

        if not self.secure_edits():
            return False               # the edits could not be written: they stay on screen
        try:
            src = self._load_trace(path)
            if src is None:
                self.statusBar().showMessage(tr("Opening {path} was cancelled.", path=path.name), 8000)
                return False
            self.session.open_trace(path, src)
        except TraceError as err:
            self.statusBar().showMessage(tr("Cannot open the trace: {err}", err=err.paragraph()), 30000)
            self.last_open_error = err.paragraph()
            return False
        self.last_open_error = ""
        if self.a_compare.isChecked():
            self.compare.right.clear()             # a new left side picks a new partner
            self.compare.ensure_partner()
        if not self.presenting:
            self.docks["source"].show()
            self.docks["source"].raise_()
        self.library.set_current(path)
        self.editor.show_info(lambda: tr("A recorded trace: the launch file below is shown read-only. To change "
                                         "the kernel or its launch, edit the launch file and record again (Record "
                                         "trace in the GPU panel, or `warpviz trace`)."))
        settings.put("last_scenario", str(path))
        self._update_title()
        return True

    def _load_trace(self, path: Path):
        """The trace file loaded and checked (``TraceSource``): a small file here, a large one
        (over ``QUICK_TRACE_BYTES``) off the GUI thread with a progress dialog that can cancel
        it (None then). TraceError for a bad file."""
        from ..trace.detail import TraceSource

        try:
            size = path.stat().st_size
        except (OSError, ValueError):
            size = 0                  # load says what is wrong with it
        if size <= QUICK_TRACE_BYTES:
            return TraceSource.open(path)
        ok, src = wait_with_progress(self, tr("Reading and checking the trace {name}…", name=path.name),
                                     lambda progress, cancel: TraceSource.open(
                                         path, lambda f, stage: progress(f, stage), cancel))
        return src if ok else None

    def open_launch(self, path: Path) -> bool:
        """Open a launch file (``*.launch.toml``): its kernel's source in the Source panel and
        the GPU panel's Record trace / Record and validate. A bad file opens with the CLI's
        message in the GPU panel; nothing else changes."""
        if not self.secure_edits():
            return False               # the edits could not be written: they stay on screen
        try:
            self.session.open_launch(path)
        except (OSError, UnicodeDecodeError) as err:
            QMessageBox.warning(self, "warpviz", tr("Cannot open {path}: {err}", path=path, err=err))
            return False
        if self.a_compare.isChecked():
            self.a_compare.setChecked(False)       # nothing to compare before it is recorded
        if not self.presenting:
            for key in ("source", "gpu"):
                if key in self.docks:
                    self.docks[key].show()
                    self.docks[key].raise_()
        self.library.set_current(path)
        self.editor.show_info(lambda: tr("A launch file: record a trace of its kernel with Record trace in the GPU "
                                         "panel. It is shown read-only; edit it in your editor, then open it again."))
        settings.put("last_scenario", str(path))
        self._update_title()
        return True

    def open_dialog(self) -> None:
        start = str(settings.user_scenario_dir())
        path, _ = QFileDialog.getOpenFileName(self, tr("Open a scenario"), start,
                                              tr("Scenarios and traces (*.toml *.wvtrace);;Scenarios (*.toml);;"
                                                 "Traces (*.wvtrace)") + ";;" + tr("Launch files (*.launch.toml)"))
        if path:
            self.open_path(Path(path))

    def is_user_file(self, path: Path | None) -> bool:
        return path is not None and path.parent.resolve() == settings.user_scenario_dir().resolve()

    def save(self) -> Path | None:
        """Save: your own scenario or an opened file in place; a built-in as a copy in your scenarios."""
        if self.session.is_trace:
            self.statusBar().showMessage(tr("A trace is read-only: there is nothing to save."), 8000)
            return None
        if self.session.is_launch:
            self.statusBar().showMessage(tr("A launch file is shown read-only: there is nothing to save here."), 8000)
            return None
        self.editor.flush()
        path = self.session.path
        if path is None or self.session.is_builtin:
            return self.save_copy()
        if not self._write(path, self.session.text):
            return None
        self._clear_recovery()
        self.statusBar().showMessage(tr("Saved {path}", path=path), 5000)
        self._update_title()
        return path

    def save_copy(self) -> Path | None:
        if self.session.is_trace:
            self.statusBar().showMessage(tr("A trace is read-only: there is nothing to save."), 8000)
            return None
        if self.session.is_launch:
            self.statusBar().showMessage(tr("A launch file is shown read-only: there is nothing to save here."), 8000)
            return None
        self.editor.flush()
        stem = (self.session.path.stem if self.session.path else "scenario") + "-mine"
        path = self._write_copy(stem.replace("-mine-mine", "-mine"))
        if not path:
            return None
        self._clear_recovery()
        self.session.path = path
        self.session.name = path.stem
        self.library.reload()
        self.library.set_current(path)
        settings.put("last_scenario", str(path))
        self.statusBar().showMessage(tr("Saved as {path}; it is autosaved from now on", path=path), 8000)
        self._update_title()
        return path

    def _keep_unsaved_edits(self) -> Path | bool | None:
        """Before another scenario replaces the text: edits to a built-in or an outside file
        go into your scenarios as a copy (nothing typed is lost; no dialog in the middle of a class).
        The copy's path; None when there was nothing to keep; False when it could not be written."""
        p = self.session.path
        if not self.session.text or self.is_user_file(p) or not self.modified():
            return None
        stem = (p.stem if p else "untitled") + "-edited"
        copy = self._write_copy(stem)
        if not copy:
            return False
        self._clear_recovery()
        self.library.reload()
        self.statusBar().showMessage(tr("Your edits were kept as {path}", path=copy), 10000)
        return copy

    def secure_edits(self) -> bool:
        """Before the editor's text is replaced (another file opens): the edits are written
        (autosave, or a copy in your scenarios). False, with the message shown, when they could
        not be: the caller then leaves the text where it is."""
        self.editor.flush()
        if self.autosave():
            return self._keep_unsaved_edits() is not False
        # the recovery file failed: a built-in's or an outside file's edits may still be kept as a copy
        return not self.is_user_file(self.session.path) and isinstance(self._keep_unsaved_edits(), Path)

    # ------------------------------------------------------------------ writing the user's text

    def _write(self, path: Path, text: str) -> bool:
        """Write the user's text atomically (``viz.fileio``: a temporary file, fsync, rename):
        the file has the new text or keeps its old one. False, with the message shown, when
        the write failed (a full disk, a size limit, no permission)."""
        try:
            write_atomic(path, text)
        except OSError as err:
            self._write_failed(path, err)
            return False
        self._wrote()
        return True

    def _write_copy(self, stem: str) -> Path | None:
        """The text as a new file in your scenarios (``stem.toml``, ``stem-2.toml``...), never
        over another: a name another window took a moment ago is skipped
        (``viz.fileio.write_new``). None, with the message shown, when it could not be written."""
        for _ in range(1000):
            try:
                path = unique_user_path(stem)
            except OSError as err:          # the scenarios folder cannot be made
                self._write_failed(_failed_path(err, "scenarios"), err)
                return None
            try:
                write_new(path, self.session.text)
            except FileExistsError:         # another window (or process) took the name first
                continue
            except OSError as err:
                self._write_failed(path, err)
                return None
            self._wrote()
            return path
        self._write_failed(settings.user_scenario_dir(), OSError(errno.EEXIST, "no free file name"))
        return None

    def _wrote(self) -> None:
        if self.last_write_error:           # it works again: the warning goes
            self.last_write_error = ""
            self.editor.show_info("")
            self.statusBar().clearMessage()
            self._update_title()

    def _write_failed(self, path: Path, err: OSError) -> None:
        """Say that ``path`` could not be written and why, in the status bar (until the next
        message) and above the editor (until a write succeeds); the text stays in the editor."""
        message = str(err) if isinstance(err, WriteError) else write_failure(path, err)
        message += " " + tr("Your text stays in the editor: fix the cause, then save again (Ctrl+S).")
        self.last_write_error = message
        self.statusBar().showMessage(message)
        self.editor.show_info(message)
        self._update_title()

    def delete_user_scenario(self, path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            return
        if self.session.path == path:
            self.session.path = None
        self.library.reload()

    # ------------------------------------------------------------------ autosave / recovery

    def _edited(self) -> None:
        self.autosave_timer.start()
        self._update_title()

    def modified(self) -> bool:
        p = self.session.path
        if self.session.is_trace or self.session.is_launch:
            return False            # read-only: nothing to save
        if p is None:
            return True
        from ..fileio import ReadRefused, read_text_limited
        from ..scenario import MAX_TEXT_BYTES

        try:        # bounded: the file may have been swapped for a FIFO or /dev/zero since it was opened
            return read_text_limited(p, MAX_TEXT_BYTES, "scenario") != self.session.text
        except ReadRefused:
            return True

    def autosave(self) -> bool:
        """Your own scenarios are written in place (atomically); any other unsaved text goes to
        the recovery file. False when the text could not be written (the message is shown)."""
        self.autosave_timer.stop()
        p = self.session.path
        if not self.session.text:
            return True
        if self.is_user_file(p):
            if self.modified() and not self._write(p, self.session.text):
                return False
            self._clear_recovery()
        elif self.modified():
            text = self.session.text
            if settings.autosave_off():       # no data folder this session: the status bar said why
                return True
            try:
                d = settings.recovery_dir()
            except OSError as err:
                self._write_failed(_failed_path(err, "recovery"), err)
                return False
            # The text first, then what it belongs to, with the text's hash: a half-done pair
            # (the second write failed) restores the text as untitled, never onto another file.
            meta = {"path": str(p) if p else None, "sha256": _digest(text)}
            return self._write(d / RECOVERY_TEXT, text) and self._write(d / RECOVERY_META, json.dumps(meta))
        else:
            self._clear_recovery()
        return True

    def _recovery(self) -> tuple[str | None, str] | None:
        """The unsaved text of the last session and the file it belongs to (None: untitled)."""
        try:
            d = settings.recovery_dir()
            text = _read_small(d / RECOVERY_TEXT)
            meta = json.loads(_read_small(d / RECOVERY_META))
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(meta, dict):
            return None, text           # the text is the user's; what it belonged to is unreadable
        path = meta.get("path")
        if not isinstance(path, str) or not path or "\0" in path:
            path = None
        digest = meta.get("sha256")
        if digest is not None and digest != _digest(text):
            path = None                 # the text of another save than its file name: keep it, untitled
        return path, text

    def _clear_recovery(self) -> None:
        try:
            d = settings.recovery_dir()
            for name in (RECOVERY_TEXT, RECOVERY_META):
                (d / name).unlink(missing_ok=True)
        except OSError:
            pass

    # ------------------------------------------------------------------ modes

    def show_matrix(self):
        """View → ldmatrix / stmatrix fragments (viz/app/matrix_dialog.py): one dialog, reused."""
        from .matrix_dialog import MatrixDialog

        dlg = getattr(self, "matrix_dialog", None)
        if dlg is None:
            dlg = self.matrix_dialog = MatrixDialog(self.session, self.theme_name, self)
        dlg.show()
        dlg.raise_()
        return dlg

    def set_every_row(self, on: bool) -> None:
        """View → Every lane row (Ctrl+R): the pictures keep every lane row (byte addresses,
        thread ids), folded as deep as it takes, instead of leaving some out for room."""
        for v in (self.view, self.compare.view_left, self.compare.view_right):
            v.rows = "all" if on else "auto"
            v.update()

    def set_compare(self, on: bool) -> None:
        if on and self.session.is_launch:
            self.statusBar().showMessage(tr("Record the launch file first (GPU panel): then its trace can be "
                                            "compared."), 8000)
            self.a_compare.setChecked(False)
            return
        # The comparison needs more room than one picture and squeezes the panels; they get their
        # sizes back when it is turned off (they lost rows every round trip before).
        if on and self.stack.currentIndex() == 0:
            self._pre_compare_docks = self._dock_sizes()
            self._pre_compare_geometry = None if self.presenting or self.isMaximized() else QRect(self.geometry())
        self.stack.setCurrentIndex(1 if on else 0)
        _only_current_page_sizes(self.stack)
        if not on and self._pre_compare_docks and not self.presenting:
            sizes, self._pre_compare_docks = self._pre_compare_docks, None
            geometry, self._pre_compare_geometry = getattr(self, "_pre_compare_geometry", None), None
            if geometry is not None and not self.isMaximized():
                self.setGeometry(self._on_screen(geometry))   # its room may have grown the window
            self._resize_docks(sizes)
        elif on and not self.presenting:
            QTimer.singleShot(0, self, self._keep_on_screen)
        self.compare.set_active(on)
        if on:
            self.compare.ensure_partner()
            self.compare.set_theme(self.view.theme)
        settings.put("compare", on)

    def _keep_on_screen(self) -> None:
        """Never wider or taller than the screen (the comparison's room grew a 1280-px window
        past it): the panels give way, not the picture."""
        if self.presenting or self.isMaximized() or self.isFullScreen():
            return
        room = self._on_screen(self.geometry())
        if room != self.geometry():
            if room.width() < self.width():
                self.default_layout(room.width())
            self.setGeometry(room)

    def _compare_restored(self) -> None:
        """Compare mode comes back as it was left, and says so (it is easy to miss that the
        right half is not part of the scenario just opened)."""
        self.a_compare.setChecked(True)
        if self.a_compare.isChecked():
            self.statusBar().showMessage(tr("Compare mode is on, as when warpviz was last closed (Ctrl+M turns it "
                                            "off)"), 15000)

    def set_presentation(self, on: bool) -> None:
        if on == self.presenting:
            return
        self.presenting = on
        self.compare.set_presenting(on)
        if on:
            # What leaving restores exactly: the panels (saveState), the window's own rectangle
            # (normalGeometry: restoreGeometry guesses a frame under X11 and moved the window
            # down 25 px, past a 720-px screen's bottom) and each shown panel's size, since
            # restoreState alone lets the docks drift a few pixels a round trip.
            self._pre_presentation = _PrePresentation(
                self.saveState(), self.theme_name, self.isMaximized(), QRect(self.normalGeometry()),
                self._dock_sizes())
            for d in self.docks.values():  # the picture alone; its figures row stays
                d.hide()
            self.menuBar().hide()
            self.statusBar().hide()
            f = QFont(self._base_font)
            f.setPointSizeF(self._base_font.pointSizeF() * 1.5)
            QApplication.setFont(f)
            mono = QFont(self._source_font)
            mono.setPointSizeF(self._source_font.pointSizeF() * 1.5)
            self.source.setFont(mono)
            self.apply_theme(self.presentation_theme(), remember=False)
            self.showFullScreen()
            QTimer.singleShot(0, self, self._cover_screen)
        else:
            pre = self._pre_presentation
            QApplication.setFont(self._base_font)
            self.source.setFont(self._source_font)
            self.menuBar().show()
            self.statusBar().show()
            self.apply_theme(pre.theme_name)
            if pre.maximized:
                self.showMaximized()
            else:
                self.showNormal()
                self.setGeometry(self._on_screen(pre.geometry))
            self.restoreState(pre.state)         # the panels are back at once; their sizes settle below
            # The panels once the window has its size back and the normal font has reached every
            # widget: restored while still full screen (or at 1.5x type) they keep full-screen
            # sizes and push the window past the screen's bottom.
            QTimer.singleShot(0, self, lambda: self._after_presentation(pre))
        self.view.setFocus()

    def _cover_screen(self) -> None:
        """Presentation mode covers the whole screen also where no window manager makes a window
        full screen (a kiosk, an X server alone: F11 left the window at its size under Xvfb)."""
        screen = self.screen()
        if self.presenting and screen is not None and self.frameGeometry() != screen.geometry():
            self.setGeometry(screen.geometry())

    def _dock_sizes(self) -> dict[str, QSize]:
        """The sizes of the panels on screen (a tab behind another lies outside the window, its size stale)."""
        return {k: d.size() for k, d in self.docks.items()
                if d.isVisible() and not d.isFloating() and self.rect().contains(d.geometry())}

    def _on_screen(self, rect: QRect) -> QRect:
        """``rect`` (the window's inside) moved and shrunk so the whole window, frame included,
        lies within the screen's available area (no panel or controls row below its bottom)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return QRect(rect)
        room = screen.availableGeometry()
        frame, inside = self.frameGeometry(), self.geometry()
        left, top = inside.left() - frame.left(), inside.top() - frame.top()
        right, bottom = frame.right() - inside.right(), frame.bottom() - inside.bottom()
        if self.isFullScreen() or not (0 <= top <= 64 and 0 <= left <= 32 and 0 <= right <= 32 and 0 <= bottom <= 32):
            left = top = right = bottom = 0          # no frame known yet: the window manager adds it
        w = max(1, min(rect.width(), room.width() - left - right))
        h = max(1, min(rect.height(), room.height() - top - bottom))
        x = min(max(rect.x(), room.left() + left), room.right() - right - w + 1)
        y = min(max(rect.y(), room.top() + top), room.bottom() - bottom - h + 1)
        return QRect(x, y, w, h)

    def presentation_theme(self) -> str:
        """The theme presentation mode shows: yours, or high contrast where View → Theme asks for it."""
        return PRESENTATION_THEME if self.a_present_contrast.isChecked() else self.theme_name

    def _presentation_contrast(self, on: bool) -> None:
        settings.put(PRESENTATION_CONTRAST, on)
        if self.presenting:
            self.apply_theme(self.presentation_theme(), remember=False)

    def _after_presentation(self, pre: "_PrePresentation") -> None:
        if self.presenting:
            return
        self.restoreState(pre.state)
        self._resize_docks(pre.docks)
        if not self.isMaximized():
            room = self._on_screen(self.geometry())
            if room != self.geometry():     # never past the screen: the panels give way, not the picture
                if room.width() < self.width():
                    self.default_layout(room.width())
                self.setGeometry(room)
        self.presentationLeft.emit()

    def _resize_docks(self, sizes: dict[str, QSize]) -> None:
        """Each panel back to the size it had (restoreState lets them drift a few pixels a round
        trip). resizeDocks counts a tabbed panel's tab bar in or out depending on the layout, so
        the sizes asked are corrected by what came out, a few times at most."""
        shown = {}
        for k, sz in sizes.items():
            d = self.docks.get(k)
            if d is not None and d.isVisible() and self.rect().contains(d.geometry()):
                shown[k] = (d, sz)
        ask = {k: (sz.width(), sz.height()) for k, (_, sz) in shown.items()}
        for _ in range(4):
            by_area: dict = {}
            for k, (d, _) in shown.items():
                by_area.setdefault(self.dockWidgetArea(d), []).append(k)
            for keys in by_area.values():
                docks = [shown[k][0] for k in keys]
                self.resizeDocks(docks, [ask[k][0] for k in keys], Qt.Orientation.Horizontal)
                self.resizeDocks(docks, [ask[k][1] for k in keys], Qt.Orientation.Vertical)
            self.layout().activate()
            off = {k: (sz.width() - d.width(), sz.height() - d.height()) for k, (d, sz) in shown.items()}
            if not any(dx or dy for dx, dy in off.values()):
                break
            ask = {k: (ask[k][0] + off[k][0], ask[k][1] + off[k][1]) for k in ask}

    def apply_theme(self, name: str, remember: bool = True) -> None:
        scale = PRESENTATION_SCALE if self.presenting else 1.0
        th = theme(name, scale)
        if remember:
            self.theme_name = name
            settings.put("theme", name)
        self.a_themes[name].setChecked(True)
        self.view.set_theme(th)
        self.compare.set_theme(th)
        dark = name in ("dark", "high-contrast")
        app = QApplication.instance()
        pal = QPalette()
        if dark:
            bg, base, text = QColor(th.colors["panel"]), QColor(th.colors["background"]), QColor(th.colors["text"])
            pal.setColor(QPalette.ColorRole.Window, bg)
            pal.setColor(QPalette.ColorRole.WindowText, text)
            pal.setColor(QPalette.ColorRole.Base, base)
            pal.setColor(QPalette.ColorRole.AlternateBase, bg)
            pal.setColor(QPalette.ColorRole.Text, text)
            pal.setColor(QPalette.ColorRole.Button, bg)
            pal.setColor(QPalette.ColorRole.ButtonText, text)
            pal.setColor(QPalette.ColorRole.ToolTipBase, base)
            pal.setColor(QPalette.ColorRole.ToolTipText, text)
            pal.setColor(QPalette.ColorRole.Highlight, QColor(th.colors["now"]))
            pal.setColor(QPalette.ColorRole.HighlightedText, QColor(th.colors["now_text"]))
            pal.setColor(QPalette.ColorRole.PlaceholderText, QColor(th.colors["muted"]))
        else:
            pal = app.style().standardPalette()
        app.setPalette(pal)
        self.editor.set_dark(dark)
        self.source.setStyleSheet(f"background: {th.colors['panel']}; color: {th.colors['text']};")
        self._style_plots()

    def _style_plots(self) -> None:
        if self._launch is None:
            return
        th = self.view.theme
        plot_bg, plot_fg = th.colors["background"], th.colors["text"]
        for w in (self.launch.glw, self.sweep.plot):
            w.setBackground(plot_bg)
        for item in (self.launch.plot, self.launch.hist, self.sweep.plot.getPlotItem()):
            for ax in ("left", "bottom"):
                item.getAxis(ax).setPen(plot_fg)
                item.getAxis(ax).setTextPen(plot_fg)
        if getattr(self, "gpu_panel", None) is not None and hasattr(self.gpu_panel, "set_theme"):
            self.gpu_panel.set_theme(th)        # its chart follows the theme too

    def set_language(self, code: str) -> None:
        i18n.set_language(code)  # listeners call retranslate
        settings.put("language", code)

    # ------------------------------------------------------------------ reacting

    def _scenario_shown(self) -> None:
        self._update_title()
        self._update_source()

    def _update_source(self, *_args) -> None:
        d = self.session.detail
        if d is None:
            self.source.setText("")
            return
        lane = self.view.hover
        if lane < 0 or lane >= 32:
            lane = next((ln.lane for ln in d.lanes if ln.active), 0)
        self.source.setText(trace_source_line(d, lane) if self.session.is_trace else source_line(d, lane))

    def _error_changed(self) -> None:
        err = self.session.error
        if err is not None:
            self.statusBar().showMessage(tr("Not applied: {problem}", problem=err.problem), 10000)
        else:
            self.statusBar().clearMessage()

    def _progress(self, fraction: float, text: str) -> None:
        self.progress.setValue(int(fraction * 100))
        self.progress.setFormat(tr("analysing {pct}%", pct=int(fraction * 100)))

    def _busy(self, busy: bool) -> None:
        # Only long analyses show the bar; short ones would flicker.
        if busy:
            self.progress_timer.start()
        else:
            self.progress_timer.stop()
            self.progress.hide()

    def _update_title(self) -> None:
        sc = self.session.scenario
        title = sc.shown_title if sc else (self.session.launch.title if self.session.launch else "")
        name = self.session.path.name if self.session.path else tr("untitled")
        p = self.session.path        # your own scenario is autosaved: marked only while that fails
        mark = " *" if p is not None and (not self.is_user_file(p) or self.last_write_error) and self.modified() else ""
        self.setWindowTitle(f"{title} — {name}{mark} — warpviz")

    def show_keys(self):
        """Help → Keys: the keys and what they do in a two-column table (the descriptions line
        up in any font and language; spaces after the keys did not, in Chinese)."""
        from PySide6.QtWidgets import QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QTableWidget, \
            QTableWidgetItem

        dlg = QDialog(self)
        dlg.setObjectName("keysDialog")
        dlg.setWindowTitle(tr("Keys"))
        rows = KEY_ROWS()
        table = QTableWidget(len(rows), 2, dlg)
        table.setObjectName("keysTable")
        table.setHorizontalHeaderLabels([tr("Key"), tr("What it does")])
        table.verticalHeader().hide()
        table.setShowGrid(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bold = QFont(table.font())
        bold.setBold(True)
        for i, (k, v) in enumerate(rows):
            key = QTableWidgetItem(k)
            key.setFont(bold)
            table.setItem(i, 0, key)
            table.setItem(i, 1, QTableWidgetItem(v))
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dlg)
        buttons.rejected.connect(dlg.reject)
        lay = QVBoxLayout(dlg)
        lay.addWidget(table)
        lay.addWidget(buttons)
        width = sum(table.columnWidth(c) for c in range(2)) + 2 * table.frameWidth() + 40
        height = sum(table.rowHeight(r) for r in range(len(rows))) + table.horizontalHeader().height() + 90
        room = self.screen().availableGeometry() if self.screen() is not None else None
        if room is not None:
            width, height = min(width, room.width() - 40), min(height, room.height() - 40)
        dlg.resize(width, height)
        self.keys_dialog = dlg
        dlg.open()
        return dlg

    # ------------------------------------------------------------------ drag and drop

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if self._dropped_file(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        path = self._dropped_file(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.open_path(path)

    @staticmethod
    def _dropped_file(mime) -> Path | None:
        for url in mime.urls() if mime.hasUrls() else []:
            if url.isLocalFile() and url.toLocalFile().lower().endswith((".toml", ".wvtrace")):
                return Path(url.toLocalFile())
        return None

    # ------------------------------------------------------------------ settings

    def _restore_settings(self) -> None:
        """The window as it was left, each setting checked (``settings.get``): a wrong type or
        a value out of range gives the default; unreadable window state, the default layout."""
        geo = settings.get("geometry", None, bytes)
        if geo is not None:
            self.restoreGeometry(geo)    # Qt brings a geometry that lies off every screen back onto one
        state = settings.get("windowState", None, bytes)
        if state is None or not self.restoreState(state):
            QTimer.singleShot(0, self, self.default_layout)
        self.timeline.set_speed(settings.get("speed", 1.0, float, lo=min(SPEEDS), hi=max(SPEEDS)))
        self.zoom.set_zoom(settings.get("zoom", 1.0, float, lo=1.0, hi=4.0))
        lang = settings.get("language", "en", str, choices=i18n.LANGUAGES)
        i18n.set_language(lang)
        self.a_langs[i18n.language()].setChecked(True)
        self.editor.tabs.setCurrentIndex(settings.get("editor_tab", 0, int, lo=0, hi=self.editor.tabs.count() - 1))
        if settings.get("compare", False, bool):
            QTimer.singleShot(0, self, self._compare_restored)

    def default_layout(self, width: int | None = None) -> None:
        """Panel sizes for a first start: the picture gets most of the window (330 + 480 px of
        panels at 1920 px, in proportion on a narrower screen such as a 1280-px projector)."""
        w = min(1920, max(width or self.width(), 1024))
        self.resizeDocks([self.docks["library"], self.docks["figures"]], [round(330 * w / 1920), round(480 * w / 1920)],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["library"], self.docks["editor"]], [280, 600], Qt.Orientation.Vertical)
        # a short window (720 px) gives the lower panels (GPU chart, Source table) the larger share
        self.resizeDocks([self.docks["figures"], self.docks["launch"]], [430, 470] if self.height() >= 800 else
                         [300, 600], Qt.Orientation.Vertical)

    def save_settings(self) -> None:
        s = settings.settings()
        if self.presenting:
            pre = self._pre_presentation
            self.set_presentation(False)
            self._after_presentation(pre)      # now: the panels as they were, not full screen's
        s.setValue("geometry", self.saveGeometry())
        s.setValue("windowState", self.saveState())
        s.setValue("speed", self.timeline.speed)
        s.setValue("zoom", self.zoom.zoom)
        s.setValue("theme", self.theme_name)
        s.setValue("language", i18n.language())
        if self._launch is not None:
            s.setValue("heat_mode", self._launch.mode.currentIndex())
        if "gpu" in self.docks:
            s.setValue("gpu_panel_shown", not self.docks["gpu"].isHidden())
        s.setValue("editor_tab", self.editor.tabs.currentIndex())
        s.setValue("compare", self.a_compare.isChecked())
        c = self.session.cursor
        s.setValue("cursor", f"{c.instruction},{c.block},{c.warp},{c.frame}")
        if self.session.path is not None:
            s.setValue("last_scenario", str(self.session.path))
        s.sync()

    def closeEvent(self, event) -> None:  # noqa: N802
        self.timeline.play(False)
        self.editor.flush()
        if not self.autosave() and not self.close_losing_edits():
            event.ignore()              # the text stays on screen: the user frees space and saves
            return
        self.closed = True
        self.save_settings()
        self.session.runner.cancel()
        if self._sweep is not None:
            self._sweep.runner.cancel()
        self.compare.right.runner.cancel()
        if self.gpu_panel is not None and hasattr(self.gpu_panel, "shutdown"):
            self.gpu_panel.shutdown()          # its GPU child processes (runs, recordings) end with the window
        super().closeEvent(event)

    def close_losing_edits(self) -> bool:
        """Asked when the window closes and your edits could not be written: close anyway
        (the edits are lost) or stay (the default)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "warpviz",
                          self.last_write_error + "\n\n" + tr("Close warpviz anyway and lose these edits?"),
                          QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("closeLosingEdits")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is box.button(QMessageBox.StandardButton.Discard)

    # ------------------------------------------------------------------ language

    def retranslate(self) -> None:
        titles = {"library": tr("Scenarios"), "editor": tr("Editor"), "figures": tr("Figures"),
                  "launch": tr("Whole launch"), "sweep": tr("Sweep"), "gpu": tr("GPU"), "source": tr("Source")}
        for key, d in self.docks.items():
            if key in titles:
                d.setWindowTitle(titles[key])
        names = {
            self.a_open: tr("&Open scenario…"), self.a_save: tr("&Save"), self.a_copy: tr("Save a copy to my scenarios"),
            self.a_quit: tr("&Quit"), self.a_play: tr("Play / pause"), self.a_next: tr("Next frame"),
            self.a_prev: tr("Previous frame"), self.a_next_i: tr("Next instruction"),
            self.a_prev_i: tr("Previous instruction"), self.a_next_w: tr("Next warp"),
            self.a_prev_w: tr("Previous warp"), self.a_next_b: tr("Next block"), self.a_prev_b: tr("Previous block"),
            self.a_home: tr("First frame of the instruction"), self.a_end: tr("Last frame of the instruction"),
            self.a_first: tr("First instruction"), self.a_last: tr("Last frame of the last instruction"),
            self.a_faster: tr("Faster"), self.a_slower: tr("Slower"), self.a_present: tr("Presentation mode"),
            self.a_escape: tr("Leave presentation mode"), self.a_compare: tr("Compare two scenarios"),
            self.a_matrix: tr("ldmatrix / stmatrix fragments…"),
            self.a_zoom_in: tr("Zoom in"), self.a_zoom_out: tr("Zoom out"), self.a_zoom_reset: tr("Fit to window"),
            self.a_keys: tr("Keys"), self.a_present_contrast: tr("High contrast in presentation mode"),
            self.a_rows: tr("Every lane row"),
        }
        for a, text in names.items():
            a.setText(text)
        for name, a in self.a_themes.items():
            a.setText(tr(THEME_LABELS[name]))
        self.m_file.setTitle(tr("&File"))
        self.m_play.setTitle(tr("&Playback"))
        self.m_view.setTitle(tr("&View"))
        self.m_theme.setTitle(tr("Theme"))
        self.m_lang.setTitle(tr("Language"))
        self.m_panels.setTitle(tr("Panels"))
        self.m_help.setTitle(tr("&Help"))
        self.a_langs[i18n.language()].setChecked(True)
        self.session.retranslate()
        for panel in (self.library, self.editor, self.figures, self._launch, self._sweep, self.timeline,
                      self.trace_source,
                      self.compare, getattr(self, "notes", None), getattr(self, "ink", None)):
            if panel is not None:
                panel.retranslate()
        if self.gpu_panel is not None and hasattr(self.gpu_panel, "retranslate"):
            self.gpu_panel.retranslate()
        self._update_source()
        self._update_title()


class _PrePresentation(NamedTuple):
    """The window as it was before presentation mode: what leaving it restores."""
    state: QByteArray
    theme_name: str
    maximized: bool
    geometry: QRect
    docks: dict


class _Holder(QWidget):
    """A dock's content before its panel is built."""

    def __init__(self):
        super().__init__()
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)

    def set(self, panel: QWidget) -> None:
        self._lay.addWidget(panel)


MAX_RECOVERY_BYTES = 64 << 20     # a recovery file larger than any scenario typed by hand is not one


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read_small(path: Path) -> str:
    """A recovery file's text: a regular file of reasonable size (a FIFO or a device put in its
    place must not hang or fill the memory at start), else OSError / ValueError."""
    from ..fileio import read_text_limited

    return read_text_limited(path, MAX_RECOVERY_BYTES, "recovery file")     # ReadRefused is a ValueError


def _failed_path(err: OSError, folder: str) -> Path:
    """The folder a failed ``mkdir`` names (the user data folder may be the one that failed)."""
    return Path(err.filename) if isinstance(err.filename, str) and err.filename else Path(folder)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def _cursor_setting(text: str) -> Cursor | None:
    """The remembered position ``"instruction,block,warp,frame"``; None unless four whole
    numbers in 0..2^31 (the position is then clamped to what the file has)."""
    parts = text.split(",")
    if len(parts) != 4 or any(len(p.strip()) > 10 for p in parts):
        return None
    try:
        values = [int(p) for p in parts]
    except ValueError:
        return None
    if not all(0 <= v < 2**31 for v in values):
        return None
    return Cursor(*values)


def _retranslate(ref) -> None:
    """Language listener that outlives nothing: a closed window is skipped."""
    w = ref()
    if w is None or w.closed:
        return
    try:
        w.retranslate()
    except RuntimeError:  # its Qt side is already deleted
        pass


def KEYS_HELP() -> str:  # noqa: N802 - a translated constant
    """The keys as plain text, one a line (Help → Keys shows ``KEY_ROWS`` as a table)."""
    return "\n".join(f"{k:<22} {v}" for k, v in KEY_ROWS())


def KEY_ROWS() -> list[tuple[str, str]]:  # noqa: N802 - a translated constant
    """(keys, what they do) of Help → Keys, in the interface language."""
    return [("Space", tr("play / pause")), ("← →", tr("previous / next frame")),
            ("↑ ↓", tr("previous / next warp instruction")), ("PgUp PgDn", tr("previous / next warp")),
            ("Ctrl+PgUp Ctrl+PgDn", tr("previous / next block")),
            ("Home End", tr("first / last frame of the instruction")),
            ("Ctrl+Home Ctrl+End", tr("first instruction / last frame of all")),
            ("Ctrl+← Ctrl+→", tr("previous / next scenario of the lesson (or of the library's list)")),
            ("+ −", tr("faster / slower")), ("F11, Esc", tr("presentation mode on / off")),
            ("Ctrl+M", tr("compare two scenarios")), ("Ctrl+E", tr("export for slides")),
            ("Ctrl+R", tr("every lane row (none left out for room)")),
            ("Ctrl+Shift+C", tr("copy the frame to the clipboard")), ("Ctrl+= Ctrl+- Ctrl+0", tr("zoom in / out / fit")),
            ("Ctrl+O Ctrl+S", tr("open / save")),
            ("Ctrl+Z Ctrl+Shift+Z", tr("undo / redo an edit (form or text)")),
            ("P H", tr("draw on the picture: pen (again: other colour) / highlighter")),
            ("E D", tr("erase the drawing / stop drawing"))]
