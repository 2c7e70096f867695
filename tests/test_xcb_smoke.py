"""UI smoke tests on a real X server: Xvfb with Qt's xcb platform.

The rest of the suite runs Qt offscreen, which has no window system at all. These start an
Xvfb, open the app in a process of its own on it, press keys with ``xdotool`` (real key
events through the X server), grab the X screen and check what it shows. They skip, saying
why, where Xvfb, xdotool or Qt's X11 libraries are missing; ``.ci/run`` installs them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from viz.app.display import missing_libraries

ROOT = Path(__file__).resolve().parents[1]


def _why_not() -> str | None:
    if sys.platform != "linux":
        return "X11 smoke tests run on Linux"
    for tool, package in (("Xvfb", "xvfb"), ("xdotool", "xdotool")):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian/Ubuntu: apt-get install {package}; .ci/run installs it)"
    missing = missing_libraries()
    if missing:
        return ("Qt's X11 libraries are missing: " + ", ".join(lib.soname for lib in missing)
                + " (docs/guide/install.md; .ci/run installs them)")
    return None


# One parallel worker runs this module, so that one Xvfb (``xserver``) serves its tests.
pytestmark = [pytest.mark.skipif(_why_not() is not None, reason=_why_not() or ""), pytest.mark.xdist_group("xcb")]


def _start_xvfb(log: Path) -> tuple[subprocess.Popen, str | None]:
    """One Xvfb at 1920×1080×24; ``-displayfd`` makes it claim a free display number itself
    (atomically: parallel test runs never pick the same one) and write it once it accepts
    connections. Returns the process and its display number (None if it did not start)."""
    r, w = os.pipe()
    with open(log, "ab") as err:
        proc = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1920x1080x24", "-nolisten", "tcp",
                                 "-noreset"],   # no reset when a client leaves: the next one could meet it half-reset
                                pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=err)
    os.close(w)
    with os.fdopen(r) as f:
        number = f.readline().strip()
    return proc, number or None


def _answers(display: str, proc: subprocess.Popen) -> bool:
    """Our server is running and a client reaches it at ``display`` with our screen size."""
    if proc.poll() is not None:
        return False
    got = subprocess.run(["xdotool", "getdisplaygeometry"], env={**os.environ, "DISPLAY": display},
                         capture_output=True, text=True, timeout=120)
    return got.returncode == 0 and got.stdout.split() == ["1920", "1080"]


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def xserver(tmp_path_factory):
    """An Xvfb of our own at 1920×1080×24; its DISPLAY, checked to answer before the tests
    use it (three suites side by side each get their own: ``-displayfd``)."""
    log = tmp_path_factory.mktemp("xvfb") / "xvfb.log"
    for _ in range(3):
        proc, number = _start_xvfb(log)
        if number is not None and _answers(f":{number}", proc):
            break
        _stop(proc)
    else:
        pytest.fail(f"Xvfb did not start: {log.read_text(errors='replace')}")
    yield f":{number}"
    _stop(proc)


def qt_warnings(stderr: str) -> list[str]:
    """Qt's own complaints (``qt.qpa.xcb: ...``, ``QXcbConnection: XCB error``, ``QWidget::...``)."""
    return [line for line in stderr.splitlines() if re.match(r"\s*(qt\.|Q[A-Z]\w*(::|:)|This plugin)", line)]


def app_env(display: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE")}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", WARPVIZ_SETTINGS=str(tmp_path / "settings.ini"),
               WARPVIZ_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return env


def test_the_app_on_x11_follows_real_keys_and_shows_its_picture(xserver, tmp_path):
    shots = Path(os.environ.get("WARPVIZ_SMOKE_SHOTS", tmp_path / "shots"))
    shots.mkdir(parents=True, exist_ok=True)
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "xcb_smoke_app.py"), str(shots)], cwd=ROOT,
                         env=app_env(xserver, tmp_path), capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-4000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert qt_warnings(out.stderr) == []
    assert r["cannot_start"] is None and r["platform"] == "xcb"
    assert r["screen"] == [1920, 1080]
    title = "Transpose through a shared tile (unpadded) — transpose-tile.toml — warpviz"
    assert r["title"] == title and r["x_title"] == title       # the X server has the window's title
    assert r["active"]
    # Right: the next frame, and the frame counter on screen says so.
    # transpose-tile opens on its focus, instruction 9 (the column read: 32 wavefronts, 35 frames)
    assert r["start"] == {"instruction": 8, "frame": 0, "label": "frame 1 / 35"}
    assert r["right_arrived"] and r["after_right"] == {"instruction": 8, "frame": 1, "label": "frame 2 / 35"}
    # The server's pixels where the picture is are the ones the app painted, and Right changed them.
    assert r["view_matches_widget"] and r["view_changed"]
    assert r["down_arrived"] and r["after_down"]["instruction"] == 9 and r["after_down"]["frame"] == 0
    # Not a blank screen: hundreds of colours (text, cells, plots), half the pixels not background.
    for key in ("before", "full", "presentation"):
        assert r[key]["colours"] > 200 and r[key]["not_background"] > 0.25, (key, r[key])
    assert r["f11_arrived"] and r["escape_arrived"] and r["quit_arrived"]
    for name in ("1280x720-before", "1280x720-after-right", "1280x720-instruction9", "1920x1080-instruction9",
                 "1920x1080-presentation"):
        assert (shots / f"{name}.png").stat().st_size > 10_000


def test_warpviz_starts_on_x11_and_quits_with_ctrl_q(xserver, tmp_path):
    """The real entry point (``warpviz transpose-tile``): its window appears with the
    scenario's title, and Ctrl+Q sent through the X server ends it with status 0."""
    proc = subprocess.Popen([sys.executable, "-m", "viz.cli", "transpose-tile"], cwd=ROOT,
                            env=app_env(xserver, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    env = {**os.environ, "DISPLAY": xserver}
    try:
        found = subprocess.run(["xdotool", "search", "--sync", "--onlyvisible", "--name", "— warpviz$"],
                               env=env, capture_output=True, text=True, timeout=120)
        wid = found.stdout.split()[0]
        name = subprocess.run(["xdotool", "getwindowname", wid], env=env, capture_output=True, text=True,
                              timeout=120).stdout.strip()
        assert name == "Transpose through a shared tile (unpadded) — transpose-tile.toml — warpviz"
        subprocess.run(["xdotool", "windowfocus", "--sync", wid], env=env, check=True, timeout=120)
        subprocess.run(["xdotool", "key", "--clearmodifiers", "ctrl+q"], env=env, check=True, timeout=120)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-4000:]
    assert qt_warnings(err) == []
