"""Fixtures for the app tests: a main window with its own settings and user data folder."""

from __future__ import annotations

import pytest

from viz import i18n


@pytest.fixture
def user_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPVIZ_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setenv("WARPVIZ_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


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
def window(qtbot, user_dirs):
    w = make_window(qtbot)
    yield w
    w.timeline.play(False)
    i18n.set_language("en")


def wait_analysis(qtbot, w):
    w.editor.flush()
    qtbot.waitUntil(lambda: not w.session.busy, timeout=20000)
