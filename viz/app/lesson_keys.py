"""Next / previous scenario (Ctrl+Right / Ctrl+Left), in a lesson's order, and Playback →
Lessons: change scenario during a lecture with one key, also in presentation mode.

The order (``viz.lessons.neighbour``): the lesson the scenario on screen belongs to (the
shipped ``assets/lessons``, then the user data folder's ``lessons``); for a scenario in no
lesson, the library's order as shown (its tag filter and search applied).
"""

from __future__ import annotations

import weakref
from pathlib import Path

from PySide6.QtWidgets import QMenu

from ..i18n import tr
from ..lessons import Lesson, fill, lessons, neighbour
from . import settings
from .lifetime import on_language_change
from .shortcuts import window_action

NEXT_KEYS = ("Ctrl+Right",)
PREV_KEYS = ("Ctrl+Left",)


def user_lessons_dir() -> Path:
    return settings.data_dir() / "lessons"


class LessonKeys:
    """The actions and the lesson being followed (the one last opened through them)."""

    def __init__(self, main):
        self.main = weakref.proxy(main)
        self.lesson: Lesson | None = None
        self.words = ""                 # the words of the step on screen, figures filled in
        self.a_next = window_action(main, "nextScenario", NEXT_KEYS, lambda: self.step(1))
        self.a_prev = window_action(main, "prevScenario", PREV_KEYS, lambda: self.step(-1))
        self.menu = QMenu(main.m_play)
        self.menu.aboutToShow.connect(self._fill)
        main.m_play.addSeparator()
        main.m_play.addAction(self.a_prev)
        main.m_play.addAction(self.a_next)
        main.m_play.addMenu(self.menu)

    def lessons(self) -> list[Lesson]:
        found, problems = lessons(user_lessons_dir())
        if problems:
            self.main.statusBar().showMessage(problems[0].message(), 15000)
        return found

    def library_order(self) -> list[Path]:
        return [p for p in self.main.library.visible_paths() if not p.name.lower().endswith(".launch.toml")]

    def step(self, delta: int) -> bool:
        """Open the next (``delta`` = 1) or previous (-1) scenario; False at the end."""
        m = self.main
        current = m.session.path
        found = self.lessons()
        prefer = next((x for x in found if self.lesson is not None and x.path == self.lesson.path), None)
        got = neighbour(current, delta, found, self.library_order(), prefer)
        if got is None:
            where = self.lesson_of(current, found, prefer)
            m.statusBar().showMessage(
                (tr("The last scenario of the lesson “{title}”", title=where.title) if delta > 0 else
                 tr("The first scenario of the lesson “{title}”", title=where.title)) if where is not None else
                (tr("The last scenario of the library") if delta > 0 else tr("The first scenario of the library")),
                8000)
            return False
        stop, lesson = got
        self.lesson = lesson
        return self.open(stop, lesson)

    @staticmethod
    def lesson_of(path, found, prefer) -> Lesson | None:
        for lesson in ([prefer] if prefer is not None else []) + found:
            if lesson.index(path) is not None:
                return lesson
        return None

    def open(self, stop, lesson: Lesson | None) -> bool:
        m = self.main
        if not m.open_path(stop.path):
            return False
        if stop.instruction is not None:       # else the scenario's own focus (viz.app.state.Session.open)
            m.session.go(instr=stop.instruction, frame=0)
        # the step's words, their figures filled from the picture on screen (viz.lessons.fill)
        self.words = fill(stop.say, m.session.detail)
        notes = getattr(m, "notes", None)
        if notes is not None:
            notes.set_step(m.session.path, self.words)
        if lesson is not None:
            k = lesson.index(stop.path)
            head = tr("Lesson “{title}”: {k} of {n}", title=lesson.title, k=k + 1, n=len(lesson.stops))
            m.statusBar().showMessage(head + ("  " + self.words if self.words else ""), 0 if self.words else 8000)
        return True

    def start(self, lesson: Lesson) -> bool:
        """Open a lesson's first scenario (Playback → Lessons)."""
        self.lesson = lesson
        return self.open(lesson.stops[0], lesson)

    def _fill(self) -> None:
        self.menu.clear()
        found = self.lessons()
        for lesson in found:
            a = self.menu.addAction(tr("{title} ({n} scenarios)", title=lesson.title, n=len(lesson.stops)))
            a.setObjectName(f"lesson_{lesson.name}")
            a.triggered.connect(lambda _=False, x=lesson: self.start(x))
        if not found:
            self.menu.addAction(tr("No lessons")).setEnabled(False)

    def retranslate(self) -> None:
        self.a_next.setText(tr("Next scenario of the lesson"))
        self.a_prev.setText(tr("Previous scenario of the lesson"))
        self.menu.setTitle(tr("Lessons"))


def install(main) -> LessonKeys:
    keys = main.lesson_keys = LessonKeys(main)
    keys.retranslate()
    me = weakref.ref(main)

    def again(_code: str) -> None:
        w = me()
        if w is not None and not w.closed:
            keys.retranslate()

    on_language_change(main, again)
    return keys
