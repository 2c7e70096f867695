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


def make_window(qtbot, scenario: str | None = "transpose-tile"):
    from viz.app.main import make_app
    from viz.app.window import MainWindow

    make_app()
    w = MainWindow(scenario)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.session.wait()
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
