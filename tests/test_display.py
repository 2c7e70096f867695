"""Starting without a display, or without Qt's X11 libraries: a paragraph and exit status 2,
never Qt's abort."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from viz.app import display
from viz.app.display import XCB_LIBRARIES, problem

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = lambda _soname: True  # noqa: E731 - every library loads
NO_SERVER_CALLED = lambda d: pytest.fail(f"connected to {d}")  # noqa: E731


def run_cli(env_changes: dict[str, str | None], tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE"):
        env.pop(k, None)
    env.update({k: v for k, v in env_changes.items() if v is not None})
    env["WARPVIZ_SETTINGS"] = str(tmp_path / "settings.ini")
    env["WARPVIZ_DATA_DIR"] = str(tmp_path / "data")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "viz.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("args", [("transpose-tile",), (), ("gui", "coalesced")])
def test_the_app_without_a_display_says_so_and_exits_2(tmp_path, args):
    out = run_cli({}, tmp_path, *args)
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    msg = out.stderr.strip()
    assert msg.startswith("warpviz: the app cannot open its window: there is no display here")
    assert "`warpviz export SCENARIO --out FILE`" in msg and "QT_QPA_PLATFORM=offscreen" in msg
    assert len(msg.splitlines()) == 1      # one paragraph, no Qt abort message after it
    assert "qt.qpa" not in out.stderr


def test_the_message_follows_the_saved_language(tmp_path):
    (tmp_path / "settings.ini").write_text("[General]\nlanguage=zh_CN\n", encoding="utf-8")
    out = run_cli({}, tmp_path, "transpose-tile")
    assert out.returncode == 2
    assert "应用无法打开窗口" in out.stderr and "QT_QPA_PLATFORM=offscreen" in out.stderr


def test_an_x_display_where_no_server_answers_exits_2(tmp_path):
    n = next(k for k in range(97, 200) if not Path(f"/tmp/.X11-unix/X{k}").exists())
    out = run_cli({"DISPLAY": f":{n}"}, tmp_path, "transpose-tile")
    assert out.returncode == 2, out.stderr
    if display.missing_libraries():
        assert "needs system libraries that are not installed" in out.stderr
    else:
        assert f"no X server answers at DISPLAY=:{n}" in out.stderr


def test_cli_commands_that_need_no_window_still_run_without_a_display(tmp_path):
    out = run_cli({}, tmp_path, "list")
    assert out.returncode == 0 and "transpose-tile" in out.stdout


def test_missing_xcb_libraries_are_named_with_their_packages():
    gone = {"libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-randr.so.0", "libxcb-shape.so.0"}
    asked = []

    def load(soname):
        asked.append(soname)
        return soname not in gone

    msg = problem({"DISPLAY": ":0"}, "linux", load=load, connect=NO_SERVER_CALLED)
    assert sorted(asked) == sorted(lib.soname for lib in XCB_LIBRARIES)
    assert "needs system libraries that are not installed: " in msg
    named = re.search(r"not installed: (.*)\.\n", msg).group(1).split(", ")
    assert sorted(named) == sorted(gone)
    # Each package once, in the order of the table; randr and shape are both in Fedora's libxcb.
    assert "  Debian, Ubuntu: sudo apt-get install libxcb-cursor0 libxcb-icccm4 libxcb-randr0 libxcb-shape0\n" in msg
    assert "  Fedora: sudo dnf install xcb-util-cursor xcb-util-wm libxcb\n" in msg
    assert "docs/guide/install.md" in msg


def test_the_install_guide_lists_every_package():
    guide = (ROOT / "docs" / "guide" / "install.md").read_text(encoding="utf-8")
    for lib in XCB_LIBRARIES:
        assert lib.debian in guide and lib.fedora in guide, lib


@pytest.mark.parametrize("env, system, expected", [
    ({}, "linux", "no display"),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", None),
    ({"QT_QPA_PLATFORM": "minimal"}, "linux", None),
    ({"QT_QPA_PLATFORM": "vnc:size=800x600"}, "linux", None),
    ({"QT_QPA_PLATFORM": "xcb"}, "linux", "no display"),
    ({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}, "linux", "no display"),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", None),
    ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"}, "linux", None),
    ({}, "win32", None),
    ({}, "darwin", None),
])
def test_which_environments_have_a_display(env, system, expected):
    msg = problem(env, system, load=EVERYTHING, connect=NO_SERVER_CALLED)
    assert (msg is None) if expected is None else (expected in msg)


def test_x_with_every_library_asks_the_server():
    asked = []

    def connect(d):
        asked.append(d)
        return 0

    assert problem({"DISPLAY": ":5", "QT_QPA_PLATFORM": "xcb"}, "linux", load=EVERYTHING, connect=connect) is None
    assert asked == [":5"]
    msg = problem({"DISPLAY": ":5"}, "linux", load=EVERYTHING, connect=lambda d: 2)
    assert "no X server answers at DISPLAY=:5" in msg


def qt_xcb_plugin() -> Path | None:
    try:
        import PySide6
    except ImportError:
        return None
    p = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return p if p.exists() else None


@pytest.mark.skipif(sys.platform != "linux" or shutil.which("ldd") is None or qt_xcb_plugin() is None,
                    reason="needs Linux, ldd and PySide6's xcb plugin")
def test_the_table_covers_every_x11_library_of_the_installed_qt():
    """``ldd`` on the xcb plugin lists every library it loads (found or not); the X11 ones
    must all be in XCB_LIBRARIES, so that a PySide6 upgrade that needs another is noticed."""
    out = subprocess.run(["ldd", str(qt_xcb_plugin())], capture_output=True, text=True, timeout=60).stdout
    needed = {line.split()[0] for line in out.splitlines()
              if re.match(r"\s*lib(xcb|X11|xkbcommon)", line)}
    assert "libxcb-cursor.so.0" in needed and "libxcb.so.1" in needed
    assert needed <= {lib.soname for lib in XCB_LIBRARIES}
