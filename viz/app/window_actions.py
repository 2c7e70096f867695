"""The main window's actions, keys and menus (File, Playback: stepping and playing, View,
Help), Help → Keys, and the interface language (every text set again when it changes).
Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QFont, QKeySequence
from PySide6.QtWidgets import QVBoxLayout

from .. import i18n
from ..i18n import tr
from ..render.theme import THEME_LABELS, THEMES
from . import settings
from .window_presentation import PRESENTATION_CONTRAST


class WindowActions:
    """Actions, keys, menus and the interface language. A part of ``MainWindow``: it uses the
    window's widgets and the other parts' methods through ``self``."""

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

    def set_language(self, code: str) -> None:
        i18n.set_language(code)  # listeners call retranslate
        settings.put("language", code)

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
        if self._gpu and hasattr(self._gpu, "retranslate"):      # the GPU panel, once built
            self._gpu.retranslate()
        self._update_source()
        self._update_title()


def retranslate_window(ref) -> None:
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
