"""The settings file is hostile input: edited by hand, copied from elsewhere, truncated, or
not a file at all. Every setting is read with its type and range, a bad one is its default,
and the app always starts: with garbage, wrong types, huge or non-finite numbers, a window
off every screen, a FIFO or a device as the file, a FIFO named as the last scenario."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st
from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QTextCursor

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from viz import i18n
from viz.app import settings

ROOT = Path(__file__).resolve().parents[1]
# Qt says so on stderr when an ``@Variant(...)`` value names no type it knows: the file's fault, not ours
pytestmark = pytest.mark.qt_log_ignore(r"^QVariant::load")

GOOD = """[General]
theme=dark
speed=2
zoom=1.5
language=zh_CN
editor_tab=1
compare=true
heat_mode=1
export\\folder={folder}
export\\format=gif
export\\size=720p
export\\scale=1.3
export\\fps=24
export\\hold=0.5
export\\captions=false
"""

HOSTILE = """[General]
theme=../../etc/passwd
speed=nan
zoom=1e308
language=klingon
editor_tab=99999999999999999999999
compare=maybe
heat_mode=-7
cursor=1,2,3
last_scenario=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\x18garbage)
geometry=not bytes at all
windowState=@ByteArray(\\x1\\x2\\x3 garbage)
gpu_panel_shown=2
export\\folder=relative/nowhere
export\\format=exe
export\\size=99999x99999
export\\custom=99999999999999999999x1
export\\theme=1, 2, 3
export\\scale=inf
export\\fps=-1e400
export\\hold=1e9
export\\captions=[1, 2]
export\\title_card=@Invalid()
\xff\xfe garbage line without an equals sign
[[[ broken section
=value without a key
"""


def write_settings(path: Path, text: str | bytes) -> None:
    path.write_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)


def test_good_values_are_read_with_their_types(user_dirs, tmp_path):
    write_settings(user_dirs / "settings.ini", GOOD.format(folder=tmp_path))
    assert settings.get("theme", "light", str, choices=("light", "dark")) == "dark"
    assert settings.get("speed", 1.0, float, lo=0.25, hi=8.0) == 2.0
    assert settings.get("zoom", 1.0, float, lo=1.0, hi=4.0) == 1.5
    assert settings.get("editor_tab", 0, int, lo=0, hi=1) == 1
    assert settings.get("compare", False, bool) is True
    assert settings.get("export/captions", True, bool) is False
    assert settings.get("export/folder", "", str) == str(tmp_path)
    assert settings.problem() is None


@pytest.mark.parametrize("key, default, kind, bounds", [
    ("theme", "light", str, {"choices": ("light", "dark")}),
    ("speed", 1.0, float, {"lo": 0.25, "hi": 8.0}),
    ("zoom", 1.0, float, {"lo": 1.0, "hi": 4.0}),
    ("language", "en", str, {"choices": ("en", "zh_CN")}),
    ("editor_tab", 0, int, {"lo": 0, "hi": 1}),
    ("compare", False, bool, {}),
    ("heat_mode", 0, int, {"lo": 0, "hi": 3}),
    ("last_scenario", "", str, {}),
    ("geometry", None, bytes, {}),
    ("gpu_panel_shown", True, bool, {}),
    ("export/format", "mp4", str, {"choices": ("mp4", "gif")}),
    ("export/scale", 1.0, float, {"lo": 0.5, "hi": 3.0}),
    ("export/fps", 10.0, float, {"lo": 1, "hi": 240}),
    ("export/hold", 1.0, float, {"lo": 0.05, "hi": 600}),
    ("export/captions", True, bool, {}),
    ("export/title_card", False, bool, {}),
    ("export/theme", "light", str, {}),
])
def test_each_hostile_value_is_its_default(user_dirs, key, default, kind, bounds):
    write_settings(user_dirs / "settings.ini", HOSTILE)
    got = settings.get(key, default, kind, **bounds)
    if key == "last_scenario":          # a QVariant of no known type, or a text: never anything else
        assert got == default or isinstance(got, str)
    else:
        assert got == default, (key, got)
    # the window's state is binary data as it should be; Qt's restoreState refuses its content


def test_binary_settings_are_binary_data(user_dirs):
    write_settings(user_dirs / "settings.ini", HOSTILE)
    assert bytes(settings.get("windowState", None, bytes)) == b"\x01\x02\x03 garbage"
    settings.put("windowState", QByteArray(b"x" * (settings.MAX_BYTES_VALUE + 1)))
    assert settings.get("windowState", None, bytes) is None


def test_a_value_that_is_too_long_or_of_another_type_is_the_default(user_dirs):
    settings.put("last_scenario", "x" * 100_000)
    settings.put("zoom", [1, 2])
    settings.put("speed", True)
    settings.put("editor_tab", "1.5")
    assert settings.get("last_scenario", "", str) == ""
    assert settings.get("zoom", 1.0, float) == 1.0 and settings.get("speed", 1.0, float) == 1.0
    assert settings.get("editor_tab", 0, int) == 0


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])
@given(st.binary(max_size=600) | st.text(max_size=400).map(lambda t: "[General]\n" + t))
def test_any_bytes_as_the_settings_file_give_typed_values_in_range(user_dirs, data):
    write_settings(user_dirs / "settings.ini", data)
    assert settings.get("speed", 1.0, float, lo=0.25, hi=8.0) in _between(0.25, 8.0)
    assert 0 <= settings.get("editor_tab", 0, int, lo=0, hi=1) <= 1
    assert settings.get("theme", "light", str, choices=("light", "dark")) in ("light", "dark")
    assert isinstance(settings.get("compare", False, bool), bool)
    geo = settings.get("geometry", None, bytes)
    assert geo is None or isinstance(geo, QByteArray)


class _between:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __contains__(self, x):
        return isinstance(x, float) and self.lo <= x <= self.hi


def test_the_window_starts_on_a_hostile_settings_file_and_shows_the_defaults(qtbot, user_dirs):
    write_settings(user_dirs / "settings.ini", HOSTILE)
    w = make_window(qtbot, None)
    try:
        assert w.session.path is not None and w.session.path.stem == "transpose-tile"
        assert w.theme_name == "light" and w.a_themes["light"].isChecked()
        assert i18n.language() == "en" and w.a_langs["en"].isChecked()
        assert w.zoom.zoom == 1.0 and w.timeline.speed == 1.0
        assert w.editor.tabs.currentIndex() == 0 and not w.a_compare.isChecked()
        assert w.launch.mode.currentIndex() == 0
        assert w.session.cursor.instruction == 8 and w.session.error is None    # transpose-tile's focus
        w.a_export.trigger()
        d = w.export_dialog
        assert d.folder == Path.home() and d.kind() == "mp4" and d.size.currentData() == "1080p"
        assert (d.width_.value(), d.height_.value()) == (1600, 900)
        assert (d.scale.value(), d.fps.value(), d.hold.value()) == (1.0, 10.0, 1.0)
        assert d.captions.isChecked() and not d.title_card.isChecked() and d.theme.currentData() == "light"
        d.close()
    finally:
        w.close()
        i18n.set_language("en")


def test_good_settings_come_back(qtbot, user_dirs, tmp_path):
    """The checks keep what is right: the same keys with good values are used."""
    write_settings(user_dirs / "settings.ini", GOOD.format(folder=tmp_path))
    w = make_window(qtbot, None)
    try:
        assert w.theme_name == "dark" and i18n.language() == "zh_CN"
        assert w.zoom.zoom == 1.5 and w.timeline.speed == 2.0 and w.editor.tabs.currentIndex() == 1
        qtbot.waitUntil(lambda: w.a_compare.isChecked(), timeout=5000)
        assert w.launch.mode.currentIndex() == 1
        w.a_export.trigger()
        d = w.export_dialog
        assert d.folder == tmp_path and d.kind() == "gif" and d.size.currentData() == "720p"
        assert (d.scale.value(), d.fps.value(), d.hold.value()) == (1.3, 24.0, 0.5) and not d.captions.isChecked()
        d.close()
    finally:
        w.close()
        i18n.set_language("en")


def test_a_window_remembered_off_every_screen_comes_back_on_one(qtbot, user_dirs):
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QMainWindow

    from viz.app.main import make_app

    make_app()
    far = QMainWindow()
    far.move(50000, -40000)
    far.resize(30000, 20000)
    settings.put("geometry", far.saveGeometry())
    far.deleteLater()
    from viz.app.window import MainWindow

    w = MainWindow(None)               # as it starts (make_window would resize it)
    qtbot.addWidget(w)
    try:
        room = QGuiApplication.primaryScreen().availableGeometry()
        frame = w.frameGeometry()
        assert room.contains(frame.center()), (frame, room)
        assert frame.width() <= room.width() and frame.height() <= room.height()
    finally:
        w.close()


# ---------------------------------------------------------------------------- files that are not files

START = """
import json, os
from viz.app.main import make_app
app = make_app()
from viz.app.window import MainWindow
w = MainWindow(None)
w.show()
status = w.statusBar().currentMessage()      # now: it shows for 30 s, and the analysis may take longer
w.session.wait(600_000)      # returns when the analysis ends (a ceiling, not a sleep)
print(json.dumps({"path": str(w.session.path), "theme": w.theme_name, "problem": w.settings_problem,
                  "status": status}))
from viz.app.main import close_window
close_window(w)                 # as run_app does: deleting it at interpreter exit crashed
"""


def start_app(tmp_path: Path, settings_path: Path | str) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", WARPVIZ_SETTINGS=str(settings_path),
               WARPVIZ_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", START], env=env, capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_as_the_settings_file_does_not_hang_the_start(tmp_path):
    fifo = tmp_path / "settings.ini"
    os.mkfifo(fifo)
    r = start_app(tmp_path, fifo)          # reading it would wait for a writer forever (the timeout fails it)
    assert r["path"].endswith("transpose-tile.toml") and r["theme"] == "light"
    assert str(fifo) in r["problem"] and "not a regular file" in r["problem"] and r["status"] == r["problem"]
    assert fifo.is_fifo()                   # left as it was: settings are kept apart this session


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_or_a_huge_file_as_the_settings_file_is_not_read(tmp_path):
    r = start_app(tmp_path, "/dev/zero")    # would fill the memory
    assert "not a regular file" in r["problem"] and r["path"].endswith("transpose-tile.toml")
    big = tmp_path / "big.ini"
    big.write_bytes(b"[General]\ntheme=dark\n" + b"; padding\n" * 300_000)
    r = start_app(tmp_path, big)
    assert "3,000,021 bytes" in r["problem"] and r["theme"] == "light"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_remembered_as_the_last_scenario_is_not_opened(tmp_path):
    fifo = tmp_path / "lesson.toml"
    os.mkfifo(fifo)
    ini = tmp_path / "settings.ini"
    ini.write_text(f"[General]\nlast_scenario={fifo}\ncursor=3,0,0,2\n")
    r = start_app(tmp_path, ini)
    assert r["path"].endswith("transpose-tile.toml") and r["problem"] is None


# ---------------------------------------------------------------------------- the data folder

def _data_folder_cases(tmp_path):
    """(data folder, the reason the status bar must give): a file in its place, a folder
    below a file, and (not as root: root writes anywhere) a read-only folder."""
    blocker = tmp_path / "datafile"
    blocker.write_text("the user's file, not a folder\n")
    cases = [(blocker, "a file of that name is in the way"), (blocker / "below", "Not a directory")]
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        cases.append((ro, "it is read-only"))
    return cases


def test_an_unusable_data_folder_keeps_the_app_running_with_a_warning(qtbot, tmp_path, monkeypatch):
    """The data folder a file, below a file, or read-only: the window opens on its scenario,
    the status bar says which folder and why, My scenarios lists a private folder, typing and
    autosave work without writing a recovery file, and the user's file is left as it was."""
    monkeypatch.setenv("WARPVIZ_SETTINGS", str(tmp_path / "settings.ini"))
    monkeypatch.setattr(settings, "_data_refused", {})
    monkeypatch.setattr(settings, "_private_data", None)
    for folder, why in _data_folder_cases(tmp_path):
        monkeypatch.setenv("WARPVIZ_DATA_DIR", str(folder))
        settings._data_refused.clear()
        w = make_window(qtbot)
        try:
            message = w.statusBar().currentMessage()
            assert f"The data folder {folder} cannot be used ({why})" in message, message
            assert "autosave (crash recovery) is off" in message and w.data_problem in message
            assert w.session.path is not None and w.session.path.stem == "transpose-tile"
            private = settings.user_scenario_dir()
            assert private.is_dir() and not str(private).startswith(str(folder))
            w.editor.text.setFocus()
            w.editor.text.moveCursor(QTextCursor.MoveOperation.End)
            qtbot.keyClick(w.editor.text, Qt.Key.Key_Return)
            qtbot.keyClicks(w.editor.text, "# an edit")
            qtbot.waitUntil(w.modified, timeout=30000)            # the session takes the text after a pause
            assert w.autosave() is True
            assert settings.autosave_off() and not any(settings.recovery_dir().iterdir())   # no recovery written
        finally:
            w.close()
    assert (tmp_path / "datafile").read_text() == "the user's file, not a folder\n"


def test_a_usable_data_folder_is_used_and_says_nothing(user_dirs, monkeypatch):
    monkeypatch.setattr(settings, "_data_refused", {})
    d = settings.data_dir()
    assert d == user_dirs / "data" and d.is_dir() and settings.data_problem() is None
    assert settings.user_scenario_dir() == d / "scenarios" and settings.recovery_dir() == d / "recovery"
    assert not settings.autosave_off()
    (d / "traces").write_text("a file where the traces folder goes")
    from viz.app.gpu_texts import recordings_dir

    assert recordings_dir() != d / "traces" and recordings_dir().is_dir()
    assert settings.data_problem() == (f"The folder {d / 'traces'} cannot be used (a file of that name is in the way): "
                                       "warpviz keeps what goes there in a temporary folder this session. Fix the "
                                       "folder, then start warpviz again.")
    assert not settings.autosave_off()                 # the data folder itself is fine: autosave stays on
