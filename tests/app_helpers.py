"""Fixtures for the app tests: a main window with its own settings and user data folder."""

from __future__ import annotations

import pytest

from viz import i18n


@pytest.fixture
def user_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPVIZ_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("WARPVIZ_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


class FakeClock:
    """A clock the test controls: it stands still until ``advance`` (for the undo history's
    "edits within a second are one step": a loaded machine must not split a step)."""

    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def undo_clock(monkeypatch):
    from viz.app import undo

    clock = FakeClock()
    monkeypatch.setattr(undo, "clock", clock)
    return clock


_SAID: dict[int, list[str]] = {}


def _remember_status_messages() -> None:
    """Every message a status bar shows is kept (``said``): a message shows for a few seconds,
    and a loaded machine can spend those seconds before the test looks at the bar. Nothing to do
    where Qt is not installed (the GPU machine runs the non-Qt test files without it)."""
    try:
        import shiboken6
        from PySide6.QtWidgets import QStatusBar
    except ImportError:
        return

    real = QStatusBar.showMessage
    if getattr(real, "remembers", False):
        return

    def show_message(bar, text, *args):
        key = shiboken6.getCppPointer(bar)[0]
        if key not in _SAID:
            _SAID[key] = []
            bar.destroyed.connect(lambda *_: _SAID.pop(key, None))
        _SAID[key].append(text)
        return real(bar, text, *args)

    show_message.remembers = True
    QStatusBar.showMessage = show_message


_remember_status_messages()


def said(w) -> str:
    """What ``w``'s status bar has shown, message after message (the one showing now last)."""
    import shiboken6

    bar = w.statusBar()
    return "\n".join([*_SAID.get(shiboken6.getCppPointer(bar)[0], []), bar.currentMessage()])


def wait_idle(qtbot, session) -> None:
    """Until ``session``'s analysis has ended: on its event, however long a loaded machine takes
    (``Session.wait`` gives up silently after 30 s; this fails the test, naming the wait)."""
    qtbot.waitUntil(lambda: not session.busy, timeout=600_000)


def after(qtbot, ms: int = 0) -> None:
    """Process events until a timer of ``ms`` started now has fired. Qt fires timers in the order
    they fall due, so every timer and posted event that was due earlier has run too: an
    event-ordered wait, where ``qtbot.wait(ms)`` is a sleep that a loaded machine can outrun."""
    from PySide6.QtCore import QTimer

    fired = []
    QTimer.singleShot(ms, lambda: fired.append(True))
    qtbot.waitUntil(lambda: bool(fired), timeout=ms + 10000)


def make_window(qtbot, scenario: str | None = "transpose-tile", at_focus: bool = False):
    """The main window on ``scenario``, at its first instruction (the tests step from there);
    ``at_focus`` (or no scenario: what the app opens by itself) keeps it where the scenario's
    ``focus`` opened it (transpose-tile: instruction 9)."""
    from viz.app.main import make_app
    from viz.app.window import MainWindow

    make_app()
    w = MainWindow(scenario)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    if scenario is not None and not at_focus and w.session.scenario is not None and w.session.scenario.focus:
        w.session.go(instr=0, frame=0)
    wait_idle(qtbot, w.session)
    w.view.setFocus()
    return w


@pytest.fixture
def window(qtbot, user_dirs, undo_clock):
    w = make_window(qtbot)
    yield w
    w.timeline.play(False)
    i18n.set_language("en")


def wait_analysis(qtbot, w):
    w.editor.flush()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=20000)
