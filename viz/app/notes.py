"""The Notes panel: the current scenario's notes (what happens, what the H100 measured),
rendered as Markdown. It follows the scenario on screen, and View → Notes in presentation
mode keeps it beside the picture while presenting (remembered in the settings)."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from ..i18n import tr
from ..scenario import Scenario
from . import settings
from .state import Session

SETTING = "notes_in_presentation"
_BLOCK = re.compile(r"^\s*([-*+]\s|\d+[.)]\s|#|>|\||```|~~~|    )")


def scenario_notes(sc: Scenario) -> str:
    """The notes to show: the Chinese ones where the interface is Chinese and the scenario has them."""
    return sc.shown_notes


_SENTENCE_END = tuple(".!?:;)]\"'`。！？：；）」』”’")


def line_per_paragraph(notes: str) -> bool:
    """Are ``notes`` written a paragraph a line (as the built-ins are): no blank line between
    its lines, and every line of text ends a sentence? Otherwise they are Markdown as written:
    lines run on into one paragraph, a blank line starts the next (the guide's own example
    wraps its lines at 90 characters)."""
    lines = notes.strip().splitlines()
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or _BLOCK.match(line):
            continue
        if not line.strip() or not line.rstrip().endswith(_SENTENCE_END):
            return False
    return True


def notes_markdown(title: str, notes: str) -> str:
    """Markdown for the panel: the title as a heading, then the notes: Markdown (a blank line
    starts a paragraph, the lines between run on), or, for notes written a paragraph a line as
    the built-ins are (``line_per_paragraph``), each line its own paragraph; lists, quotes,
    tables and code stay as written."""
    out: list[str] = [f"## {title}", ""] if title else []
    if not line_per_paragraph(notes):
        return "\n".join(out + [notes.strip()]) + "\n"
    fenced = prev_block = False
    for line in notes.strip().splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.strip():
            block = bool(_BLOCK.match(line))
            if out and out[-1].strip() and not (block and prev_block):
                out.append("")   # a new paragraph (or a list after a paragraph)
            prev_block = block
        out.append(line)
    return "\n".join(out) + "\n"


class NotesPanel(QWidget):
    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.browser = QTextBrowser()
        self.browser.setObjectName("notesText")
        self.browser.setOpenExternalLinks(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.browser)
        self.markdown = ""
        self.step: tuple | None = None    # (path, words) of the lesson step on screen (viz.app.lesson_keys)
        self.dock = self.action = None   # set by install()
        session.changed.connect(self.refresh)   # the session is this window's: it dies with it
        self.refresh()

    def refresh(self) -> None:
        sc = self.session.scenario
        if sc is None:
            md = ""
        else:
            notes = scenario_notes(sc)
            md = notes_markdown(sc.shown_title, notes) if notes.strip() else (
                notes_markdown(sc.shown_title, "") + "\n*" + tr("This scenario has no notes.") + "*\n")
        if self.step is not None and self.step[1] and self.session.path == self.step[0]:
            md = "> " + self.step[1].replace("\n", " ") + "\n\n" + md     # the step's words, above the notes
        if md != self.markdown:
            self.markdown = md
            self.browser.setMarkdown(md)

    def set_step(self, path, words: str) -> None:
        """Show a lesson step's words above the notes while its scenario is on screen (the
        Notes panel stays beside the picture in presentation mode, where the status bar is hidden)."""
        self.step = (path, words) if words else None
        self.refresh()

    def retranslate(self) -> None:
        if self.dock is not None:
            self.dock.setWindowTitle(tr("Notes"))
        if self.action is not None:
            self.action.setText(tr("Notes in presentation mode"))
        self.markdown = None   # the language picks the notes
        self.refresh()


def install(main) -> None:
    """The Notes dock (right, tabbed with the figures) and View → Notes in presentation mode."""
    panel = NotesPanel(main.session)
    dock = main.add_dock("notes", panel, Qt.DockWidgetArea.RightDockWidgetArea)
    main.tabifyDockWidget(main.docks["figures"], dock)
    main.docks["figures"].raise_()
    main.notes = panel
    main.m_panels.addAction(dock.toggleViewAction())
    a = QAction(main)
    a.setObjectName("notesInPresentation")
    a.setCheckable(True)
    a.setChecked(settings.get(SETTING, False, bool))
    main.m_view.insertAction(main.a_present, a)   # right above "Presentation mode"
    main.a_notes_presenting = a
    panel.dock, panel.action = dock, a

    def apply(_on: bool = False) -> None:
        if main.presenting:
            dock.setVisible(a.isChecked())
            if a.isChecked():
                dock.raise_()

    def toggled(on: bool) -> None:
        settings.put(SETTING, on)
        apply()

    a.toggled.connect(toggled)
    main.a_present.toggled.connect(apply)   # after set_presentation has hidden the docks
