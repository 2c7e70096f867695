"""The lecture screens on a real X server, driven by real key events.

    Xvfb :92 -screen 0 1280x720x24 -noreset &      # tools/install-x11.sh installs Xvfb, xdotool
    DISPLAY=:92 QT_QPA_PLATFORM=xcb WARPVIZ_SETTINGS=/tmp/s.ini WARPVIZ_DATA_DIR=/tmp/d \
        .venv/bin/python tools/lecture_xrun.py OUT_DIR

Opens transpose-tile, steps to instruction 9 with Down, then five times: F11, Esc, Ctrl+M,
Ctrl+M (xdotool key events through the X server), printing the window's frame, the scenario
list's whole rows and the controls row's bottom after each round trip (one JSON line each);
then the GPU panel's chart, a trace's Source panel after five Downs, and Chinese with
Ctrl+O's file dialog. Grabs the X screen (QScreen.grabWindow(0)) into OUT_DIR/*.png: look at
them. Run it again with a 1920x1080x24 screen.
"""
import json, subprocess, sys
from pathlib import Path
from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, QTimer
from viz.app.main import make_app
OUT = Path(sys.argv[1]); OUT.mkdir(parents=True, exist_ok=True)
app = make_app()
from viz.app.window import MainWindow
def spin(until, msecs=30000):
    d = QDeadlineTimer(msecs)
    while not until():
        if d.hasExpired(): return False
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return True
def settle(ms=500):
    st=[]; QTimer.singleShot(ms, lambda: st.append(1)); spin(lambda: bool(st)); app.sync()
def xdo(*a): return subprocess.run(["xdotool",*a],check=True,capture_output=True,text=True,timeout=60).stdout
def grab(name): app.primaryScreen().grabWindow(0).save(str(OUT/f"{name}.png")); print("grab", name, flush=True)
def rows():
    t = w.library.tree; vp = t.viewport().rect(); n = 0; it = t.topLevelItem(0)
    it = t.itemAt(5, 1)
    while it is not None and t.visualItemRect(it).bottom() <= vp.bottom(): n += 1; it = t.itemBelow(it)
    return n
def info(tag):
    g = w.frameGeometry(); b = w.timeline.instr.mapToGlobal(w.timeline.instr.rect().bottomLeft()).y()
    print(tag, json.dumps(dict(geo=[g.x(),g.y(),g.width(),g.height()], rows=rows(), controls_bottom=b,
          screen=app.primaryScreen().availableGeometry().getRect())), flush=True)
w = MainWindow("transpose-tile"); w.show()
spin(lambda: w.isVisible() and w.windowHandle().isExposed()); spin(lambda: w._launch is not None and w.gpu_panel is not None); settle()
wid=str(int(w.winId())); xdo("windowfocus","--sync",wid); spin(lambda: w.isActiveWindow())
w.view.setFocus(); settle()
for _ in range(8): xdo("key","--clearmodifiers","Down")
settle(); info("start"); grab("0-start")
for i in range(5):
    xdo("key","--clearmodifiers","F11"); spin(lambda: w.presenting); settle()
    if i == 0: grab("1-presenting")
    xdo("key","--clearmodifiers","Escape"); spin(lambda: not w.presenting); settle(); info(f"esc-{i+1}")
    xdo("key","--clearmodifiers","ctrl+m"); spin(lambda: w.stack.currentIndex()==1); settle(); info(f"compare-{i+1}")
    if i == 0: grab("2-compare")
    xdo("key","--clearmodifiers","ctrl+m"); spin(lambda: w.stack.currentIndex()==0); settle()
    info(f"trip-{i+1}")
grab("3-after-5-trips")
# GPU panel: click its tab with the mouse
w.docks["gpu"].raise_(); gpu = w.gpu_panel; gpu.tabs.setCurrentWidget(gpu.chart_box)
gpu.sweep_choice.setCurrentIndex(gpu.sweep_choice.findData("transpose-pad")); settle(); grab("4-gpu")
# Source panel: a trace, Down keys
from viz import assets
w.open_trace(assets.traces_dir() / "numba_block_sum.wvtrace"); spin(lambda: w.session.trace_analysis is not None)
w.docks["source"].raise_(); settle(); xdo("windowfocus","--sync",wid); w.view.setFocus()
for _ in range(5): xdo("key","--clearmodifiers","Down")
settle(); print("instr", w.session.cursor.instruction, "selected", w.trace_source.lines.currentItem().text(0) if w.trace_source.lines.currentItem() else None); grab("5-source")
# Chinese
w.set_language("zh_CN"); w.open_path(assets.scenario_dir() / "transpose-tile-pad.toml"); settle(); w.docks["gpu"].raise_(); settle(); grab("6-chinese")
def look():
    from PySide6.QtWidgets import QApplication, QFileDialog
    d = QApplication.activeModalWidget()
    if isinstance(d, QFileDialog):
        settle(); grab("7-chinese-open"); d.reject()
    else: QTimer.singleShot(100, look)
QTimer.singleShot(300, look)
xdo("key","--clearmodifiers","ctrl+o")
settle()
w.set_language("en")
from viz.app.main import close_window; close_window(w)
