"""Seconds from a fresh process to a usable window: the real app (``viz.app.main``'s
``make_app`` and ``MainWindow``, as ``warpviz`` starts it), offscreen or under Xvfb.

    python benchmarks/bench_startup.py                 # 3 cold + 3 warm runs, offscreen
    python benchmarks/bench_startup.py --display :93   # under Xvfb (Xvfb :93 -screen 0 1920x1080x24 &)
    python benchmarks/bench_startup.py --runs 5 --scenario transpose-tile

Each run is a new Python process with its own HOME (no settings, no remembered scenario)
and its own cache folder (``WARPVIZ_CACHE``): "cold" starts with an empty one (numba
compiles the counting kernels and writes them there), "warm" reuses the folder a cold run
filled. A run reports three times, from the process's start (``time.perf_counter`` at the
top of the child, before any import) to:

- ``shown``: the window is shown and its first paint event arrives;
- ``usable``: shown, the deferred plot panels (heat map, sweep) are built, and the GUI thread
  answers: a timer posted every 20 ms fires within 60 ms of when it was due, three in a row
  (the GPU panel is built the first time its tab is shown: at a first start it lies behind
  the heat map's, so it is not part of this);
- ``analysed``: the whole-launch analysis of the open scenario is there (the Figures panel's numbers).

``python -c pass`` (the interpreter's own start, before the child's first line) is printed once.

Not a test: speed depends on the machine and its load (the load average is printed).
Figures go in docs/PERFORMANCE.md, "Start-up to a usable window".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import time
T0 = time.perf_counter()
import json, os, sys
from viz.app.main import make_app, open_window
app = make_app()
from PySide6.QtCore import QEvent, QObject, QTimer, QCoreApplication
out = {}

class FirstPaint(QObject):
    def eventFilter(self, obj, event):
        if event.type() == QEvent.Type.Paint and "shown" not in out:
            out["shown"] = time.perf_counter() - T0      # the picture's first paint starts
        return False
painted = FirstPaint()
app.installEventFilter(painted)
win = open_window(sys.argv[1])          # as `warpviz` opens its window (viz.app.main.run_app)
good = [0]
due = [time.perf_counter() + 0.02]

def probe():
    now = time.perf_counter()
    late = now - due[0]
    built = getattr(win, "_launch", None) is not None and "shown" in out
    good[0] = good[0] + 1 if (late < 0.06 and built) else 0
    if good[0] >= 3 and "usable" not in out:
        out["usable"] = now - T0 - 0.04          # the first of the three on-time probes
    if win.session.analysis is not None and "analysed" not in out:
        out["analysed"] = now - T0
    if "usable" in out and "analysed" in out:
        print("RESULT " + json.dumps(out), flush=True)
        QCoreApplication.quit()
        return
    if now - T0 > 120:
        print("RESULT " + json.dumps(out), flush=True)
        QCoreApplication.quit()
        return
    due[0] = time.perf_counter() + 0.02
    QTimer.singleShot(20, probe)
QTimer.singleShot(20, probe)
app.exec()
from viz.app.main import close_window
from viz.app.worker import Runner
Runner.wait_all(5000)
close_window(win)
"""


def run_once(python: str, cache: Path, scenario: str, display: str | None) -> dict:
    home = Path(tempfile.mkdtemp(prefix="warpviz-start-home-"))
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
           "WARPVIZ_CACHE": str(cache), "PYTHONPATH": str(ROOT),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share")}
    if display:
        env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
    else:
        env["QT_QPA_PLATFORM"] = "offscreen"
    t = time.perf_counter()
    p = subprocess.run([python, "-c", CHILD, scenario], env=env, capture_output=True, text=True, timeout=300,
                       cwd=str(home))
    wall = time.perf_counter() - t
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"the app did not report (exit {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}")
    got = json.loads(line[7:])
    got["process"] = wall
    return got


def python_start(python: str) -> float:
    best = 1e9
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([python, "-c", "pass"], check=True)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="cold runs and warm runs each (default 3)")
    ap.add_argument("--scenario", default="transpose-tile")
    ap.add_argument("--display", default=None, help="an X display (Xvfb) instead of the offscreen platform")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"
    print(f"bench_startup: {args.scenario}, {os.cpu_count()} CPUs, load average {load}, "
          f"{'Xvfb ' + args.display if args.display else 'offscreen'}")
    print(f"python -c pass: {python_start(args.python):.2f} s")
    rows: dict[str, list[dict]] = {"cold": [], "warm": []}
    for k in range(args.runs):
        cache = Path(tempfile.mkdtemp(prefix="warpviz-start-cache-"))
        rows["cold"].append(run_once(args.python, cache, args.scenario, args.display))
        rows["warm"].append(run_once(args.python, cache, args.scenario, args.display))
    for kind, rs in rows.items():
        for key in ("shown", "usable", "analysed"):
            v = [r[key] for r in rs if key in r]
            if v:
                print(f"{kind:5} {key:9} min {min(v):5.2f} s  median {statistics.median(v):5.2f} s  "
                      f"max {max(v):5.2f} s  ({len(v)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
