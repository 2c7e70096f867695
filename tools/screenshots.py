"""Render the app's main views into docs/*.png for the README.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py [OUT_DIR]

The lecture screens (issue 32: the window after presentation mode, the GPU panel, the Source
panel, Chinese dialogs) on a screen of one size, into docs/screenshots/:

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py --lecture 1280x720 [OUT_DIR]
    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py --lecture 1920x1080 [OUT_DIR]

Chinese needs a CJK font (e.g. Debian's fonts-wqy-microhei or fonts-noto-cjk).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

_tmp = tempfile.mkdtemp(prefix="warpviz-shots-")
LECTURE = "--lecture" in sys.argv
if LECTURE:
    _i = sys.argv.index("--lecture")
    SCREEN = tuple(int(v) for v in sys.argv[_i + 1].split("x"))
    del sys.argv[_i:_i + 2]
else:
    SCREEN = (1920, 1080)
if os.environ.get("QT_QPA_PLATFORM", "offscreen").startswith("offscreen"):
    # A virtual screen (1920x1080 unless --lecture names another), so full screen (presentation
    # mode) is that size too.
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


def main() -> None:
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
