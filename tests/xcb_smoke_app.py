"""The app on a real X server (run by tests/test_xcb_smoke.py, in its own process, with
DISPLAY set to an Xvfb and QT_QPA_PLATFORM=xcb).

Opens the main window as ``warpviz transpose-tile`` does, presses keys with ``xdotool``
(real X key events through the X server, then Qt's xcb plugin), grabs the X screen
(``QScreen.grabWindow(0)``: the server's pixels) and prints one JSON line with what it saw.
Screenshots go to the folder in argv[1].
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, QRect

from viz.app.main import cannot_start, make_app

OUT = Path(sys.argv[1])
report: dict = {"cannot_start": cannot_start()}
app = make_app()
report["platform"] = app.platformName()

from viz.app.window import MainWindow  # noqa: E402 - after the QApplication, as run_app does


def spin(until, msecs: int = 20000) -> bool:
    deadline = QDeadlineTimer(msecs)
    while not until():
        if deadline.hasExpired():
            return False
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return True


def xdotool(*args: str) -> str:
    return subprocess.run(["xdotool", *args], check=True, capture_output=True, text=True, timeout=120).stdout


def settle() -> None:
    """Let the window paint: process events for a while after the last change."""
    stamp = []
    from PySide6.QtCore import QTimer

    QTimer.singleShot(300, lambda: stamp.append(1))
    spin(lambda: bool(stamp))
    app.sync()


def grab(name: str, rect: QRect | None = None):
    img = app.primaryScreen().grabWindow(0).toImage()
    if rect is not None:
        img = img.copy(rect)
    img.save(str(OUT / f"{name}.png"))
    return img


def stats(img) -> dict:
    """Distinct colours and the share of pixels that differ from the most common one."""
    from collections import Counter

    small = img.scaled(img.width() // 4, img.height() // 4)   # every 4th pixel is plenty
    counts = Counter(small.pixel(x, y) for y in range(small.height()) for x in range(small.width()))
    top = counts.most_common(1)[0][1]
    return {"colours": len(counts), "not_background": round(1 - top / sum(counts.values()), 3)}


w = MainWindow("transpose-tile")
w.move(0, 0)
w.resize(1280, 720)
w.show()
spin(lambda: w.isVisible() and w.windowHandle() is not None and w.windowHandle().isExposed())
spin(lambda: not w.session.busy)
spin(lambda: w._launch is not None)            # the plot panels come a moment later
wid = str(int(w.winId()))
xdotool("windowfocus", "--sync", wid)
spin(lambda: w.isActiveWindow())
w.view.setFocus()
settle()
report["title"] = w.windowTitle()
report["x_title"] = xdotool("getwindowname", wid).strip()
report["screen"] = [app.primaryScreen().size().width(), app.primaryScreen().size().height()]
report["active"] = w.isActiveWindow()
report["size"] = [w.width(), w.height()]
report["minimum"] = [w.minimumSizeHint().width(), w.minimumSizeHint().height()]

c = w.session.cursor
report["start"] = {"instruction": c.instruction, "frame": c.frame, "label": w.timeline.frame_label.text()}
shot = grab("1280x720-before", QRect(0, 0, 1280, 720))
report["before"] = stats(shot)
view_rect = QRect(w.view.mapTo(w, w.view.rect().topLeft()), w.view.size())
view_before = shot.copy(view_rect)
# What the X server shows where the picture is equals what the app painted there.
report["view_matches_widget"] = view_before == w.view.grab().toImage().convertToFormat(view_before.format())

xdotool("key", "--clearmodifiers", "Right")
report["right_arrived"] = spin(lambda: w.session.cursor.frame != c.frame, 10000)
settle()
c2 = w.session.cursor
report["after_right"] = {"instruction": c2.instruction, "frame": c2.frame, "label": w.timeline.frame_label.text()}
shot2 = grab("1280x720-after-right", QRect(0, 0, 1280, 720))
report["view_changed"] = shot2.copy(view_rect) != view_before

xdotool("key", "--clearmodifiers", "Down")
report["down_arrived"] = spin(lambda: w.session.cursor.instruction != c2.instruction, 10000)
settle()
report["after_down"] = {"instruction": w.session.cursor.instruction, "frame": w.session.cursor.frame,
                        "spinbox": w.timeline.instr.value()}

# The screenshots to look at: instruction 9 (the column read) at 1280×720 and 1920×1080,
# and in presentation mode (F11).
w.session.go(instr=8, frame=0)
w.session.end()
settle()
grab("1280x720-instruction9", QRect(0, 0, 1280, 720))
w.resize(1920, 1080)
spin(lambda: w.width() == 1920)
settle()
report["full"] = stats(grab("1920x1080-instruction9"))
xdotool("key", "--clearmodifiers", "F11")
report["f11_arrived"] = spin(lambda: w.presenting, 10000)
w.setGeometry(0, 0, 1920, 1080)                # no window manager under Xvfb to make it full screen
settle()
report["presentation"] = stats(grab("1920x1080-presentation"))
xdotool("key", "--clearmodifiers", "Escape")
report["escape_arrived"] = spin(lambda: not w.presenting, 10000)

xdotool("key", "--clearmodifiers", "ctrl+q")
report["quit_arrived"] = spin(lambda: not w.isVisible(), 10000)
print(json.dumps(report), flush=True)
from viz.app.main import close_window  # noqa: E402

close_window(w)
