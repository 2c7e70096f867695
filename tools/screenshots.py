"""Render the app's main views into docs/*.png for the README.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tools/screenshots.py [OUT_DIR]

Chinese needs a CJK font (e.g. Debian's fonts-wqy-microhei or fonts-noto-cjk).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

_tmp = tempfile.mkdtemp(prefix="warpviz-shots-")
if os.environ.get("QT_QPA_PLATFORM", "offscreen").startswith("offscreen"):
    # A 1920x1080 virtual screen, so full screen (presentation mode) is full HD too.
    with open(os.path.join(_tmp, "screen.json"), "w") as f:
        f.write('{"screens": [{"name": "hd", "x": 0, "y": 0, "width": 1920, "height": 1080, '
                '"logicalDpi": 96, "physicalWidth": 508, "physicalHeight": 286}]}')
    os.environ["QT_QPA_PLATFORM"] = "offscreen:configfile=" + os.path.join(_tmp, "screen.json")
os.environ["WARPVIZ_SETTINGS"] = os.path.join(_tmp, "settings.ini")
os.environ["WARPVIZ_DATA_DIR"] = os.path.join(_tmp, "data")

SIZE = (1920, 1080)


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


if __name__ == "__main__":
    main()
