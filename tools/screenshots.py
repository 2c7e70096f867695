"""Render the app's main views into docs/*.png for the README.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py [OUT_DIR]

The lecture screens (the window after presentation mode, the GPU panel, the Source
panel, Chinese dialogs) on a screen of one size, into docs/screenshots/:

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py --lecture 1280x720 [OUT_DIR]
    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py --lecture 1920x1080 [OUT_DIR]

Chinese needs a CJK font (e.g. Debian's fonts-wqy-microhei or fonts-noto-cjk).

The comparison slide (padding beside XOR, the column read) into docs/screenshots/: the
window and presentation mode on a 1920x1080 or 1280x720 screen, and a frame of a 720p GIF,
with the smallest text of each half printed (256-colour PNGs: small files)::

    .venv/bin/python tools/screenshots.py --compare-slide --screen 1920x1080
    .venv/bin/python tools/screenshots.py --compare-slide --screen 1280x720
    .venv/bin/python tools/screenshots.py --compare-export

(offscreen by default; under a real X server, e.g. ``Xvfb :91 -screen 0 1920x1080x24``,
with ``DISPLAY=:91 QT_QPA_PLATFORM=xcb``, the screen is the server's).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

_tmp = tempfile.mkdtemp(prefix="warpviz-shots-")
LECTURE = "--lecture" in sys.argv
SCREEN = (1920, 1080)
if LECTURE:
    _i = sys.argv.index("--lecture")
    SCREEN = tuple(int(v) for v in sys.argv[_i + 1].split("x"))
    del sys.argv[_i:_i + 2]
if "--screen" in sys.argv:
    _w, _h = sys.argv[sys.argv.index("--screen") + 1].lower().split("x")
    SCREEN = (int(_w), int(_h))
_SCREEN = SCREEN
if os.environ.get("QT_QPA_PLATFORM", "offscreen").startswith("offscreen"):
    # A virtual screen (1920x1080 unless --lecture or --screen names another), so full screen
    # (presentation mode) is that size too.
    with open(os.path.join(_tmp, "screen.json"), "w") as f:
        f.write('{"screens": [{"name": "hd", "x": 0, "y": 0, "width": %d, "height": %d, '
                '"logicalDpi": 96, "physicalWidth": %d, "physicalHeight": %d}]}'
                % (SCREEN[0], SCREEN[1], round(SCREEN[0] / 96 * 25.4), round(SCREEN[1] / 96 * 25.4)))
    os.environ["QT_QPA_PLATFORM"] = "offscreen:configfile=" + os.path.join(_tmp, "screen.json")
os.environ["WARPVIZ_SETTINGS"] = os.path.join(_tmp, "settings.ini")
os.environ["WARPVIZ_DATA_DIR"] = os.path.join(_tmp, "data")

SIZE = SCREEN


def settle(app, win, ms: int = 150) -> None:
    import time

    win.session.wait()
    if win.a_compare.isChecked():
        win.compare.right.wait()
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        app.processEvents()


def shoot(app, win, path: Path) -> None:
    settle(app, win)
    win.grab().save(str(path))
    print("wrote", path)


LEFT, RIGHT, INSTRUCTION, FRAME = "transpose-tile-pad", "transpose-tile-xor", 9, 3


def _small_png(src: Path, dest: Path) -> None:
    """``src`` as a 256-colour PNG at ``dest`` (the screenshots use few colours)."""
    from PIL import Image

    with Image.open(src) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(dest, optimize=True)
    src.unlink()


def _wait(app, cond, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > end:
            raise SystemExit("screenshots: the app did not get there in time")
        app.processEvents()
        time.sleep(0.02)


def _settle(app, seconds: float = 0.6) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def _report(where: str, views) -> None:
    for side, v in zip(("left", "right"), views):
        L = v.layout_
        if L is None:
            print(f"{where} {side}: no picture")
            continue
        px = min(t.px for t in L.texts)
        print(f"{where} {side}: {v.width()}x{v.height()} canvas, smallest text {px} px, min allowed {L.min_px} px, "
              f"rows left out {getattr(L, 'hidden_rows', None) or 'none'}, dropped {L.dropped or 'nothing'}")


def compare_slide(out: Path, language: str = "en") -> None:
    """The comparison slide in the window and in presentation mode on this screen."""
    from viz import i18n
    from viz.app.main import make_app
    from viz.app.window import MainWindow
    from viz.scenario import resolve

    app = make_app()
    i18n.set_language(language)
    w = MainWindow(LEFT)
    screen = app.primaryScreen().geometry()
    tag = f"{screen.height()}p" + ("" if language == "en" else f"-{language}")
    w.setGeometry(app.primaryScreen().availableGeometry())     # maximised (Xvfb has no window manager)
    w.show()
    _wait(app, lambda: w.session.detail is not None and not w.session.busy)
    # (a scenario's ``focus`` opens it on its lesson's instruction: go there, do not step from it)
    w.session.go(instr=INSTRUCTION - 1, frame=FRAME - 1)
    w.a_compare.setChecked(True)
    w.compare.open_right(resolve(RIGHT))
    _wait(app, lambda: w.compare.right.detail is not None and not w.compare.right.busy)
    w.compare.right.move_to(w.session.cursor)
    _settle(app, 1.5)
    views = (w.compare.view_left, w.compare.view_right)
    tmp = out / f"compare-window-{tag}.tmp.png"
    w.grab().save(str(tmp))
    _small_png(tmp, out / f"compare-window-{tag}.png")
    _report(f"window {screen.width()}x{screen.height()}", views)
    w.a_present.setChecked(True)
    w.setGeometry(screen)                 # full screen (Xvfb has no window manager to do it)
    _settle(app, 2.0)
    tmp = out / f"compare-presentation-{tag}.tmp.png"
    app.primaryScreen().grabWindow(0).save(str(tmp))
    _small_png(tmp, out / f"compare-presentation-{tag}.png")
    _report(f"presentation {screen.width()}x{screen.height()}", views)
    w.a_present.setChecked(False)
    _settle(app, 1.0)
    from viz.app.main import close_window

    close_window(w)


def export_shot(out: Path) -> None:
    """A frame of a 1280x720 GIF of the comparison, as a PNG (what `warpviz export` writes)."""
    from PIL import Image

    from viz.cli import _parser
    from viz.export_cli import cmd_export

    gif = out / "compare-export-720p.tmp.gif"
    rc = cmd_export(_parser().parse_args(["export", LEFT, "--compare", RIGHT, "-i", str(INSTRUCTION), "--frames",
                                          f"{FRAME}-{FRAME + 1}", "--size", "1280x720", "--out", str(gif),
                                          "--quiet"]))
    if rc:
        raise SystemExit(rc)
    with Image.open(gif) as im:
        im.seek(0)
        im.convert("RGB").save(out / "compare-export-720p.tmp.png")
    gif.unlink()
    _small_png(out / "compare-export-720p.tmp.png", out / "compare-export-720p.png")
    print(f"warpviz export {LEFT} --compare {RIGHT} -i {INSTRUCTION} --frames {FRAME}-{FRAME + 1} --size 1280x720 "
          f"--out x.gif  (its first frame)")


def main() -> None:
    if "--compare-slide" in sys.argv or "--compare-export" in sys.argv:
        out = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
        out.mkdir(parents=True, exist_ok=True)
        if "--compare-export" in sys.argv:
            export_shot(out)
        else:
            compare_slide(out, "zh_CN" if "--chinese" in sys.argv else "en")
        return
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs"
    out.mkdir(parents=True, exist_ok=True)
    from viz import i18n
    from viz.app.main import make_app
    from viz.app.window import MainWindow
    from viz.scenario import resolve

    app = make_app()
    win = MainWindow("transpose-tile")
    win.resize(*SIZE)
    win.show()
    settle(app, win, 300)
    win.default_layout()

    # 1. Shared memory: the transpose's column read, mid-animation (wavefront 6 of 32).
    s = win.session
    s.go(instr=8, frame=7)
    win.launch.mode.setCurrentIndex(0)
    win.editor.tabs.setCurrentIndex(0)
    shoot(app, win, out / "app-shared-transpose.png")

    # 2. Global memory: AoS red channel, 12 sectors per request, mid-animation.
    win.open_path(resolve("aos-float3-r"))
    settle(app, win)
    s.go(instr=0, frame=3)
    win.editor.tabs.setCurrentIndex(1)
    shoot(app, win, out / "app-global-aos.png")

    # 3. Compare: the unpadded tile against the padded one, same step.
    win.open_path(resolve("transpose-tile"))
    win.a_compare.setChecked(True)
    win.compare.open_right(str(resolve("transpose-tile-pad")))
    settle(app, win)
    s.go(instr=8, frame=4)
    shoot(app, win, out / "app-compare.png")
    win.a_compare.setChecked(False)

    # 4. Presentation mode (F11): full screen, large type, high contrast.
    s.go(instr=8, frame=3)
    win.a_present.setChecked(True)
    win.resize(*SIZE)
    shoot(app, win, out / "app-presentation.png")
    win.a_present.setChecked(False)
    win.resize(*SIZE)

    # 5. The interface in Simplified Chinese, dark theme.
    i18n.set_language("zh_CN")
    win.apply_theme("dark", remember=False)
    win.open_path(resolve("transpose-tile-xor"))
    settle(app, win)
    s.go(instr=8, frame=2)
    win.editor.tabs.setCurrentIndex(0)
    shoot(app, win, out / "app-chinese.png")
    i18n.set_language("en")
    win.apply_theme("light", remember=False)

    # 6. File → Export…: the column read, wavefront 3 of 32, as a 1080p MP4 for slides.
    shoot_export_dialog(app, win, out / "app-export-dialog.png")
    win.close()


def shoot_export_dialog(app, win, path: Path) -> None:
    """The export dialog on the transpose's column read (wavefront 3 of 32), light theme, 1080p."""
    from viz.app.export_dialog import show
    from viz.scenario import resolve

    win.open_path(resolve("transpose-tile"))
    settle(app, win)
    win.session.go(instr=8, frame=4)
    dialog = show(win)
    dialog.path.setText("~/slides/transpose-tile-9.mp4")
    dialog.resize(1200, 720)
    dialog.update_preview()
    settle(app, win)
    dialog.grab().save(str(path))
    print("wrote", path)
    dialog.close()


def lecture() -> None:
    """The lecture screens at SCREEN: the window after three presentation round trips, the GPU
    panel (chart, and after importing a file without the open scenario), the Source panel
    following the instruction on screen, and Chinese (window, GPU panel, Open dialog, Keys)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QFileDialog

    from viz import assets, i18n
    from viz.app.main import make_app
    from viz.app.window import MainWindow
    from viz.scenario import resolve

    w, h = SCREEN
    out = (Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    tag = f"{w}x{h}"
    app = make_app()
    win = MainWindow("transpose-tile")
    room = app.primaryScreen().availableGeometry()
    win.show()
    settle(app, win, 300)
    f, g = win.frameGeometry(), win.geometry()      # the window fills the screen, frame and all
    win.setGeometry(room.adjusted(g.left() - f.left(), g.top() - f.top(), g.right() - f.right(),
                                  g.bottom() - f.bottom()))
    settle(app, win, 300)
    win.default_layout()
    s = win.session
    s.go(instr=8, frame=4)
    for _ in range(3):                              # F11 / Esc three times, then compare on and off
        win.a_present.setChecked(True)
        settle(app, win)
        win.a_present.setChecked(False)
        settle(app, win)
    win.a_compare.setChecked(True)
    settle(app, win)
    win.a_compare.setChecked(False)
    shoot(app, win, out / f"{tag}-window-after-presentation.png")

    # The GPU panel: the chart of the transpose's padding sweep and the open scenario's bars.
    gpu = win.gpu_panel
    win.docks["gpu"].show()
    win.docks["gpu"].raise_()
    gpu.tabs.setCurrentWidget(gpu.chart_box)
    gpu.sweep_choice.setCurrentIndex(gpu.sweep_choice.findData("transpose-pad"))
    # the panel and its plot are built when first shown and the shipped measurements are read on
    # a thread: let the layout settle (150 ms under load caught the key over the ratio line)
    settle(app, win, 2000)
    shoot(app, win, out / f"{tag}-gpu-panel.png")
    gpu.load_measurements(assets.measurements_dir() / "h100-traces.json")
    shoot(app, win, out / f"{tag}-gpu-panel-traces-file.png")
    gpu.load_measurements(None)

    # The Source panel of a trace, the line of instruction 6 selected by the Down key's step.
    win.open_trace(assets.traces_dir() / "numba_block_sum.wvtrace")
    settle(app, win)
    while s.trace_analysis is None:
        settle(app, win, 100)
    win.docks["source"].show()
    win.docks["source"].raise_()
    s.go(instr=5, frame=0)
    shoot(app, win, out / f"{tag}-source-panel.png")

    # Chinese: the window, the GPU panel, the Open dialog and Help → Keys.
    win.set_language("zh_CN")
    win.open_path(resolve("transpose-tile-pad"))
    settle(app, win)
    s.go(instr=8, frame=2)
    win.docks["gpu"].raise_()
    shoot(app, win, out / f"{tag}-chinese-window.png")

    def grab_dialog() -> None:
        d = QApplication.activeModalWidget()
        if isinstance(d, QFileDialog):
            settle(app, win)
            d.grab().save(str(out / f"{tag}-chinese-open-dialog.png"))
            print("wrote", out / f"{tag}-chinese-open-dialog.png")
            d.reject()
        else:
            QTimer.singleShot(50, grab_dialog)

    QTimer.singleShot(0, grab_dialog)
    win.open_dialog()
    keys = win.show_keys()
    settle(app, win)
    keys.grab().save(str(out / f"{tag}-chinese-keys.png"))
    print("wrote", out / f"{tag}-chinese-keys.png")
    keys.close()
    win.set_language("en")
    i18n.set_language("en")
    win.close()


if __name__ == "__main__":
    lecture() if LECTURE else main()
