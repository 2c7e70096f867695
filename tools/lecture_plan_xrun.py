"""The class plan of a lecture, run on a real X server with real key events, screen by screen.

    Xvfb :93 -screen 0 1280x720x24 -noreset &      # tools/install-x11.sh installs Xvfb, xdotool
    DISPLAY=:93 QT_QPA_PLATFORM=xcb WARPVIZ_SETTINGS=/tmp/s.ini WARPVIZ_DATA_DIR=/tmp/d \\
        .venv/bin/python tools/lecture_plan_xrun.py OUT_DIR

What a lecturer does in a 50-minute class, in order: the window filling the screen; each of
the shipped lessons (Playback → Lessons) walked in presentation mode (F11, then Ctrl+Right
through its steps, Esc); the padding-vs-XOR comparison in the window and in presentation
mode (Ctrl+M, F11); the GPU panel's chart; a trace's Source panel stepped with Down; the
Chinese interface in the window and in presentation mode; and frames exported at the
screen's size (``warpviz export``, single and compared). Grabs every screen into
OUT_DIR/*.png (the X screen, as the projector shows it) and prints one JSON line per screen:
the picture's canvas, its smallest text and the least allowed, the lane rows left out, what
the memory view leaves out, and for the exported frames the tallest empty band. Look at the
PNGs. Run it again with a 1920x1080x24 screen. (xdotool's keys go through the X server, as a
keyboard's would; no window manager is needed.)
"""
import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, QTimer

from viz.app.main import make_app

OUT = Path(sys.argv[1])
OUT.mkdir(parents=True, exist_ok=True)
app = make_app()
from viz.app.window import MainWindow  # noqa: E402 - after the QApplication


def spin(until, msecs=60000):
    d = QDeadlineTimer(msecs)
    while not until():
        if d.hasExpired():
            return False
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return True


def settle(ms=600):
    st = []
    QTimer.singleShot(ms, lambda: st.append(1))
    spin(lambda: bool(st))
    app.sync()


def key(*keys):
    for k in keys:
        subprocess.run(["xdotool", "key", "--clearmodifiers", k], check=True, capture_output=True, timeout=60)


def idle():
    spin(lambda: not w.session.busy and w.session.detail is not None)
    if w.a_compare.isChecked():
        spin(lambda: not w.compare.right.busy)
    settle()


def picture(v) -> dict:
    L = v.layout_
    if L is None:
        return {"picture": None}
    from viz.render.shared_view import plan_shared, shows_everything

    out = {"canvas": [v.width(), v.height()], "smallest_px": min((t.px for t in L.texts), default=None),
           "least_px": L.min_px, "rows_left_out": list(L.hidden_rows or []), "dropped": list(L.dropped)}
    d = v.session.detail
    if d is not None and d.space == "shared" and L.memory is not None and getattr(d.access, "op", "") != "wgmma":
        plan = plan_shared(L, v.theme, d)
        out["memory_whole"] = shows_everything(plan)
        out["memory_note"] = [t.text for t in L.texts if t.key == "mem-note"]
    return out


def grab(name, **extra):
    app.primaryScreen().grabWindow(0).save(str(OUT / f"{name}.png"))
    views = ([w.compare.view_left, w.compare.view_right] if w.stack.currentIndex() == 1 else [w.view])
    print(json.dumps({"screen": name, "scenario": w.session.name, "instruction": w.session.cursor.instruction + 1,
                      "pictures": [picture(v) for v in views], **extra}, ensure_ascii=False), flush=True)


w = MainWindow("transpose-tile")
w.show()
spin(lambda: w.isVisible() and w.windowHandle().isExposed())
spin(lambda: w._launch is not None and w.gpu_panel is not None)
room = app.primaryScreen().availableGeometry()
w.setGeometry(room)
settle()
w.default_layout()
wid = str(int(w.winId()))
subprocess.run(["xdotool", "windowfocus", "--sync", wid], check=True, capture_output=True, timeout=60)
spin(lambda: w.isActiveWindow())
w.view.setFocus()
idle()
grab("00-window")

# The lessons, each in presentation mode, Ctrl+Right through its steps.
keys = w.lesson_keys
for li, lesson in enumerate(keys.lessons()):
    keys.start(lesson)
    idle()
    key("F11")
    spin(lambda: w.presenting)
    idle()
    for k in range(len(lesson.stops)):
        if k:
            key("ctrl+Right")
            spin(lambda: w.session.path == lesson.stops[k].path)
            idle()
        grab(f"1{li}-lesson-{lesson.name}-{k + 1}", lesson=lesson.name, step=k + 1, words=keys.words)
    key("Escape")
    spin(lambda: not w.presenting)
    idle()

# The comparison: padding against XOR at instruction 9, in the window and presenting.
from viz import assets  # noqa: E402
from viz.scenario import resolve  # noqa: E402

w.open_path(resolve("transpose-tile-pad"))
idle()
key("ctrl+m")
spin(lambda: w.stack.currentIndex() == 1)
w.compare.open_right(resolve("transpose-tile-xor"))
w.session.go(instr=8, frame=2)
idle()
grab("20-compare-window", panels_folded=w.compare.folded_state is not None)
key("F11")
spin(lambda: w.presenting)
idle()
grab("21-compare-presenting")
key("Escape")
spin(lambda: not w.presenting)
idle()
key("ctrl+m")
spin(lambda: w.stack.currentIndex() == 0)
idle()
grab("22-after-compare", docks=sorted(k for k, d in w.docks.items() if d.isVisible()))

# The GPU panel's chart.
gpu = w.gpu_panel
w.docks["gpu"].show()
w.docks["gpu"].raise_()
gpu.tabs.setCurrentWidget(gpu.chart_box)
gpu.sweep_choice.setCurrentIndex(gpu.sweep_choice.findData("transpose-pad"))
settle()
ch = gpu.chart
print(json.dumps({"gpu_chart": [ch.width(), ch.height()], "visible_height": ch.visibleRegion().boundingRect().height(),
                  "bottom_label": ch.getPlotItem().getAxis("bottom").labelText}), flush=True)
grab("30-gpu-panel")

# A trace's Source panel, stepped with Down.
w.open_trace(assets.traces_dir() / "numba_block_sum.wvtrace")
spin(lambda: w.session.trace_analysis is not None)
w.docks["source"].show()
w.docks["source"].raise_()
settle()
w.view.setFocus()
key(*["Down"] * 5)
idle()
tree = w.trace_source.lines
head = tree.header()
print(json.dumps({"source_columns_in_view": [head.sectionViewportPosition(c) + head.sectionSize(c) <= tree.viewport().width()
                                             for c in range(4)]}), flush=True)
grab("40-source-panel")

# Chinese, in the window and presenting.
w.set_language("zh_CN")
w.open_path(resolve("transpose-tile-xor"))
idle()
grab("50-chinese-window")
key("F11")
spin(lambda: w.presenting)
idle()
grab("51-chinese-presenting")
key("Escape")
spin(lambda: not w.presenting)
idle()
w.set_language("en")
from viz.app.main import close_window  # noqa: E402

close_window(w)

# Exported frames at the screen's size.
from PIL import Image  # noqa: E402

size = f"{room.width()}x{room.height()}"
for name, args in (("60-export-transpose", ["transpose-tile", "-i", "9", "--frames", "3-3"]),
                   ("61-export-stride-32", ["stride-32", "--frames", "3-3"]),
                   ("62-export-compare", ["transpose-tile-pad", "--compare", "transpose-tile-xor", "-i", "9",
                                          "--frames", "3-3"])):
    out = OUT / f"{name}.png"
    subprocess.run([sys.executable, "-m", "viz.cli", "export", *args, "--size", size, "--out", str(out), "--quiet"],
                   check=True, timeout=300)
    import numpy as np

    im = np.asarray(Image.open(out).convert("RGB")).astype(int)
    busy = (abs(im - im[2, -2]).sum(axis=2) > 30).any(axis=1)
    best = run = 0
    for b in busy:
        run = 0 if b else run + 1
        best = max(best, run)
    print(json.dumps({"screen": name, "size": size, "tallest_empty_band_px": best}), flush=True)
