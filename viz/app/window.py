"""The main window: the warp/memory view (or the comparison) between the source line and the
timeline, with panels (docks) around it. ``MainWindow`` builds the centre and wires the session
to the status bar; each of its parts is a module named by what it does:

- ``window_actions``: actions, keys and menus (stepping and playback too), Help → Keys, language;
- ``window_docks``: the panels (docks) and their layout; the plot and GPU panels built late;
- ``window_files``: open, drop, save, every write of your text, autosave and crash recovery;
- ``window_compare``: compare mode, Every lane row, the ldmatrix / stmatrix fragments dialog;
- ``window_presentation``: presentation mode (F11 / Esc) and putting the window back after it;
- ``window_theme``: the theme of the pictures, the palette and the plots;
- ``window_settings``: the settings restored at start and saved at close.
"""

from __future__ import annotations

import weakref

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (QApplication, QDockWidget, QLabel, QMainWindow, QProgressBar, QSizePolicy,
                               QStackedWidget, QVBoxLayout, QWidget)

from ..i18n import tr
from ..render.theme import THEME_LABELS, THEMES
from . import settings
from .compare import ComparePage
from .editor import EditorPanel
from .figures import FiguresPanel
from .library import LibraryPanel
from .lifetime import on_language_change
from .source import source_line, trace_source_line
from .state import Session
from .timeline import Timeline
from .view import FrameView, ZoomArea
from .window_actions import KEY_ROWS, KEYS_HELP, WindowActions, retranslate_window
from .window_compare import WindowCompare
from .window_docks import PanelHolder, WindowDocks, only_current_page_sizes
from .window_files import QUICK_TRACE_BYTES, RECOVERY_META, RECOVERY_TEXT, WindowFiles
from .window_presentation import PRESENTATION_CONTRAST, PRESENTATION_SCALE, PRESENTATION_THEME, \
    PrePresentation, WindowPresentation
from .window_settings import WindowSettings
from .window_theme import WindowTheme

__all__ = ["MainWindow", "KEY_ROWS", "KEYS_HELP", "RECOVERY_META", "RECOVERY_TEXT", "QUICK_TRACE_BYTES",
           "PRESENTATION_CONTRAST", "PRESENTATION_SCALE", "PRESENTATION_THEME", "THEME_LABELS", "THEMES"]


class MainWindow(WindowActions, WindowDocks, WindowFiles, WindowCompare, WindowPresentation, WindowTheme,
                 WindowSettings, QMainWindow):
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
        self._pre_presentation: PrePresentation | None = None
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
        only_current_page_sizes(self.stack)
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
        self._dock("launch", PanelHolder(), Qt.DockWidgetArea.RightDockWidgetArea)
        self._dock("sweep", PanelHolder(), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["launch"], self.docks["sweep"])
        from .trace_source import TraceSourcePanel   # a trace's CUDA source, line by line

        self.trace_source = TraceSourcePanel(self.session)
        self._dock("source", self.trace_source, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["sweep"], self.docks["source"])
        self.docks["launch"].raise_()
        self._gpu = None   # the GPU panel: its dock comes with the plot panels, it when first shown (gpu_panel)

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
        on_language_change(self, lambda _code: retranslate_window(me))

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
        if self._gpu and hasattr(self._gpu, "shutdown"):
            self._gpu.shutdown()          # its GPU child processes (runs, recordings) end with the window
        super().closeEvent(event)
