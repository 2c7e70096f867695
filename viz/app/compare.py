"""Compare mode: two scenarios or traces side by side (e.g. a tile plain, padded,
XOR-swizzled; a recorded kernel and its variant), stepping together, with their figures
next to each other. Any scenario or trace of the library (or a file) can be the partner."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QMainWindow,
                               QPushButton, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..engine import KIND_METRIC_NAMES, METRIC_NAMES
from ..fileio import inside
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


OTHER_FILE = "<file>"     # the pick list's "Other file…" item
TABLE_HEIGHT = 230        # the figures table's most height (px); in presentation mode, PRESENTING_ROWS rows
PRESENTING_ROWS = 3       # (the pictures keep 800 of 1080 px: their type stays at 14 px or more)
FOLD_BELOW_W = 540        # a half narrower than this (a 1280x720 window with every panel open: 361 px) would
                          # draw under 12 px: the panels fold while the comparison is on (``fold_panels``)


def trace_partner(header: dict, path: Path | None, entries_) -> Path | None:
    """The trace to compare a trace with: the one its launch file names (``compare``: a path
    relative to the trace, or a library name), else another trace of the same kernel
    function, else of the same CUDA source file (the closest name among them: a kernel's
    variant, e.g. ``sgemm_float4`` and ``sgemm_float4_scalar_sts``, the transpose tiles)."""
    named = header.get("compare")
    named = named if isinstance(named, str) else ""
    me = _same_file_key(path)
    if named:
        # a name in the trace's own folder (or below it): never a file elsewhere on the disk,
        # and never the trace itself
        if (path is not None and inside(path.parent, named) and (path.parent / named).is_file()
                and _same_file_key(path.parent / named) != me):
            return path.parent / named
        stem = Path(named).name.removesuffix(".wvtrace").removesuffix(".toml")
        for e in entries_:
            if e.name == stem and not e.launch:
                return e.path
    stem = path.stem if path is not None else str(header.get("name", ""))
    # never the trace itself, however its path is written (relative, through a link)
    traces = [e for e in entries_ if e.trace and (me is None or _same_file_key(e.path) != me)]
    for same in ([e for e in traces if e.kernel and e.kernel == header.get("kernel")],
                 [e for e in traces if e.source and e.source == header.get("source_name")]):
        got = partner_name(stem, [e.name for e in same if e.name != stem])
        if got:
            return next(e.path for e in same if e.name == got)
        if same:                    # only recordings of the same launch (yours and the shipped one)
            return same[0].path
    return None


def _same_file_key(path: Path | None):
    if path is None:
        return None
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(path).absolute()


def _metrics(s: Session) -> dict:
    """The whole launch's totals: a scenario's analysis, or a trace's (with the counters outside the ten)."""
    if s.is_trace:
        an = s.trace_analysis
        return {**an.metrics, **an.other_metrics} if an is not None and an.trace is s.trace.trace else {}
    return s.analysis.metrics if s.analysis else {}


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
        self.view_left.partner, self.view_right.partner = self.view_right, self.view_left   # laid out alike
        self.view_left.setObjectName("compareLeft")
        self.view_right.setObjectName("compareRight")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view_left)
        split.addWidget(self.view_right)
        self.table = QTableWidget(0, 3)
        self.table.setObjectName("compareFigures")
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # The value columns follow their contents at every font size (presentation mode
        # enlarges the font after the table is filled): a number is never elided.
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMaximumHeight(TABLE_HEIGHT)
        self.presenting = False
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.pick_row = QWidget()
        top = QHBoxLayout(self.pick_row)
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.l_pick)
        top.addWidget(self.pick, 1)
        # Shown while the panels are folded for the comparison's room: says so and brings them back.
        self.unfold_button = QPushButton()
        self.unfold_button.setObjectName("compareShowPanels")
        self.unfold_button.hide()
        self.unfold_button.clicked.connect(lambda: self.unfold_panels(by_user=True))
        top.addWidget(self.unfold_button)
        self.folded_state = None        # the window's saveState() before the panels folded (None: not folded)
        self._unfolded_by_user = False
        self._watched = None
        self.split_v = v = QSplitter(Qt.Orientation.Vertical)
        v.addWidget(split)
        v.addWidget(self.table)
        v.setStretchFactor(0, 4)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.pick_row)
        lay.addWidget(v, 1)
        self.entries: list = []
        self.pick.activated.connect(lambda _i: self._picked())
        left.positionChanged.connect(self._follow)
        left.changed.connect(self._titles)
        left.analysisChanged.connect(self.refresh)
        self.right.changed.connect(self._follow)
        self.right.changed.connect(self._recount)
        self.right.changed.connect(self._titles)
        self.right.changed.connect(self.view_left.update)     # the halves are laid out alike
        self.right.positionChanged.connect(self.view_left.update)
        self.right.analysisChanged.connect(self.refresh)
        self.right.positionChanged.connect(self.refresh)
        left.positionChanged.connect(self.refresh)
        self.retranslate()

    def fill_picks(self) -> None:
        keep = self.pick.currentData()
        self.pick.blockSignals(True)
        self.pick.clear()
        self.entries = [e for e in entries() if not e.launch]    # scenarios and traces
        for e in self.entries:
            self.pick.addItem(f"{e.title}  [{e.name}]", str(e.path))
        self.pick.addItem(tr("Other file (scenario or trace)…"), OTHER_FILE)
        self.pick.blockSignals(False)
        i = self.pick.findData(keep)
        if i >= 0:
            self.pick.setCurrentIndex(i)

    def _picked(self) -> None:
        data = self.pick.currentData()
        if data == OTHER_FILE:
            path, _ = QFileDialog.getOpenFileName(self, tr("Compare with"), "",
                                                  tr("Scenarios and traces (*.toml *.wvtrace)"))
            if not path:
                i = self.pick.findData(str(self.right.path)) if self.right.path else -1
                self.pick.setCurrentIndex(max(0, i))
                return
            data = path
        self.open_right(data)

    def open_right(self, path: str | Path | None) -> bool:
        """Show ``path`` (a scenario or a ``.wvtrace``) on the right; False (with the reason in
        the pick's tooltip) for a trace that cannot be read."""
        if not path:
            return False
        path = Path(path)
        i = self.pick.findData(str(path))
        if i >= 0:
            self.pick.setCurrentIndex(i)
        self.right.cursor = self.left.cursor
        self.partner_of = self.left.path
        if path.suffix.lower() == ".wvtrace":
            from ..trace import TraceError

            try:
                self.right.open_trace(path)
            except TraceError as err:
                self.pick.setToolTip(err.paragraph())
                return False
        else:
            self.right.open(path)
        self.pick.setToolTip(str(path))
        return True

    def ensure_partner(self) -> None:
        """Pick a partner for the left scenario if the right side is empty or was picked for
        another left scenario (one opened while compare mode was off)."""
        if self.left.path is None:
            return
        if self.right.scenario is not None and self.partner_of == self.left.path:
            return
        if self.left.is_trace:
            self.fill_picks()               # a trace recorded since is a candidate too
            other = trace_partner(self.left.trace.header, self.left.path, self.entries)
            if other is not None:
                self.open_right(other)
            return
        names = [e.name for e in self.entries if not e.trace]
        sc = self.left.scenario
        other = (partner(self.left.path.stem, names, sc.compare, sc.source) if sc is not None else
                 compare_in_text(self.left.text, str(self.left.path)) or partner_name(self.left.path.stem, names))
        if isinstance(other, Path):
            self.open_right(other)
        elif other:
            self.open_right(next(e.path for e in self.entries if e.name == other and not e.trace))

    def set_active(self, on: bool) -> None:
        """Compare mode on or off: on, the two sides step together and the longer story
        sets the length (``viz.frames.paired_length``, as a comparison export does)."""
        self.left.pair_with(self.right if on else None)

    def _recount(self) -> None:
        if self.left.partner is self.right:       # another partner: another length
            self.left.recount()

    def _follow(self) -> None:
        if self.right.scenario is not None:
            self.right.move_to(self.left.cursor)

    def _titles(self) -> None:
        titles = [s.scenario.shown_title if s.scenario else None for s in (self.left, self.right)]
        same = titles[0] is not None and titles[0] == titles[1]
        for view, s, title in ((self.view_left, self.left, titles[0]), (self.view_right, self.right, titles[1])):
            if same and s.path is not None:       # two recordings of one kernel: which file is which
                title = f"{title} ({s.path.name})"
            view.options = PaintOptions(title=title, figures=True)
            view.update()

    def set_presenting(self, on: bool) -> None:
        """Presentation mode: the figures table keeps its header and first rows (this warp's
        figures first; the rest scroll), so the two pictures get the height of the screen."""
        if on and not self.presenting:
            self._sizes_before = self.split_v.sizes()
        was = self.presenting
        self.presenting = on
        self.pick_row.setVisible(not on)      # the partner is picked before class; Ctrl+→ brings the next pair
        self._fit_table()
        if was and not on and getattr(self, "_sizes_before", None):
            self.split_v.setSizes(self._sizes_before)

    # ------------------------------------------------------------ panels folded for room

    def fold_panels(self) -> bool:
        """On a small screen (each half narrower than ``FOLD_BELOW_W``: a 1280x720 window with
        every panel open leaves 361 px), the window's docked panels fold away while the
        comparison is on, and the figures table keeps its first rows, so the two pictures get
        the window (636 x 500 px at 720p) and keep 12-px type. The pick row says so and its
        button brings the panels back; compare off, or closing the window, unfolds them.
        True if it folded them."""
        win = self.window()
        if (self.folded_state is not None or self._unfolded_by_user or self.presenting or not self.isVisible()
                or not isinstance(win, QMainWindow) or win.isFullScreen() or getattr(win, "presenting", False)):
            return False
        if min(self.view_left.width(), self.view_right.width()) >= FOLD_BELOW_W:
            return False
        docks = [d for d in win.findChildren(QDockWidget) if d.isVisible() and not d.isFloating()]
        if not docks:
            return False
        self.folded_state = win.saveState()
        while docks:                # hiding a tab shows the one behind it: until none is on screen
            for d in docks:
                d.hide()
            docks = [d for d in win.findChildren(QDockWidget) if d.isVisible() and not d.isFloating()]
        self._watch(win)
        self.unfold_button.show()
        self._fit_table()
        return True

    def unfold_panels(self, by_user: bool = False) -> None:
        """The panels back as they were before ``fold_panels`` (``restoreState``)."""
        state, self.folded_state = self.folded_state, None
        self._unfolded_by_user = self._unfolded_by_user or by_user
        self.unfold_button.hide()
        if state is not None:
            win = self.window()
            if isinstance(win, QMainWindow):
                win.restoreState(state)
        self._fit_table()

    def _watch(self, win) -> None:
        if self._watched is not win:
            win.installEventFilter(self)
            self._watched = win
            left = getattr(win, "presentationLeft", None)
            if left is not None:            # compare switched on while presenting: fold on the way out
                left.connect(self._fold_soon)

    def _fold_soon(self) -> None:
        QTimer.singleShot(0, self, self.fold_panels)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        # The window saves its panels when it closes: as they were, not folded.
        if obj is self._watched and event.type() == QEvent.Type.Close and self.folded_state is not None:
            self.unfold_panels()
        return False

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt's name
        # compare mode off (the window shows its one picture again): the panels come back first,
        # so the window can give them their sizes
        if not event.spontaneous() and self.folded_state is not None:
            self.unfold_panels()
        self._unfolded_by_user = False
        super().hideEvent(event)

    def _fit_table(self) -> None:
        vh = self.table.verticalHeader()
        vh.resetDefaultSectionSize()
        if not self.presenting and self.folded_state is None:
            self.table.setMaximumHeight(TABLE_HEIGHT)
            self.pick_row.setVisible(True)
            return
        row = max(vh.defaultSectionSize(), round(self.table.fontMetrics().height() * 1.35))
        vh.setDefaultSectionSize(row)
        screen = self.screen()
        # a 720p projector (or a window with its panels folded): the table keeps its first 2 rows
        # (this warp's figures), the pictures the rest
        n = (PRESENTING_ROWS if self.presenting and (screen is None or screen.geometry().height() >= 900)
             else 2)
        rows = row * n
        head = self.table.horizontalHeader().sizeHint().height()
        table_h = min(TABLE_HEIGHT, rows + head + 2 * self.table.frameWidth() + 2)
        self.table.setMaximumHeight(table_h)
        self._give_pictures_the_rest()

    def _give_pictures_the_rest(self) -> None:
        """Presenting (or folded): the pictures take every pixel the table does not use (a
        splitter keeps the sizes it had, which left a gap under the shortened table)."""
        if not self.presenting and self.folded_state is None:
            return
        table_h = self.table.maximumHeight()
        total = sum(self.split_v.sizes())
        if total > table_h and self.split_v.sizes()[1] != table_h:
            self.split_v.setSizes([total - table_h, table_h])

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._give_pictures_the_rest()
        if not event.spontaneous():
            self._watch_window()
            self._fold_soon()           # once the halves have their widths

    def _watch_window(self) -> None:
        win = self.window()
        if isinstance(win, QMainWindow):
            self._watch(win)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._give_pictures_the_rest()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.FontChange:      # presentation mode enlarges the font after it began
            self._fit_table()
        super().changeEvent(event)

    def set_theme(self, th) -> None:
        self.view_left.set_theme(th)
        self.view_right.set_theme(th)

    def refresh(self) -> None:
        rows: list[tuple[str, str, str]] = []
        wl, wr = dict(warp_figures(self.left)), dict(warp_figures(self.right))
        for k in list(dict.fromkeys([*wl, *wr])):
            rows.append((k, wl.get(k, ""), wr.get(k, "")))
        ml, mr = _metrics(self.left), _metrics(self.right)
        known = [*METRIC_NAMES, *KIND_METRIC_NAMES]
        for k in [*known, *sorted((set(ml) | set(mr)) - set(known))]:
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

    def retranslate(self) -> None:
        self.l_pick.setText(tr("Compare with:"))
        self.unfold_button.setText(tr("Panels folded for room: show them"))
        self.unfold_button.setToolTip(tr("Each half would be too narrow for 12-px type beside the panels, so they "
                                         "folded while the comparison is on; compare off brings them back too."))
        self.table.setHorizontalHeaderLabels([tr("Figure"), tr("Left"), tr("Right")])
        self.fill_picks()
        self.right.retranslate()
        self._titles()                  # a built-in's title_zh in Chinese
        self.refresh()
