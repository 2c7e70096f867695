"""Render assets/icons/warpviz.svg to the PNG sizes desktops and installers want.

    .venv/bin/python tools/render_icons.py            # writes assets/icons/png/warpviz-N.png
    .venv/bin/python tools/render_icons.py --ico F    # also a Windows .ico (needs Pillow)

Runs offscreen through Qt's QSvgRenderer (no display needed). The PNGs are committed, so
the app, the desktop entry and PyInstaller use them without rendering anything; run this
again after editing the SVG.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ICONS = Path(__file__).resolve().parent.parent / "assets" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def render(svg: Path, size: int) -> QImage:
    """One square, premultiplied-alpha rendering of the SVG at size x size pixels."""
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg} is not an SVG Qt can read")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--svg", type=Path, default=ICONS / "warpviz.svg")
    ap.add_argument("--out", type=Path, default=ICONS / "png")
    ap.add_argument("--ico", type=Path, help="also write a multi-size Windows icon here")
    args = ap.parse_args(argv)
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (fonts, image IO)
    args.out.mkdir(parents=True, exist_ok=True)
    written = []
    for size in SIZES:
        path = args.out / f"warpviz-{size}.png"
        if not render(args.svg, size).save(str(path), "PNG"):
            raise SystemExit(f"render_icons: cannot write {path}")
        written.append(path)
    if args.ico:
        from PIL import Image

        largest = Image.open(written[-1])
        largest.save(args.ico, sizes=[(s, s) for s in SIZES if s <= 256])
        written.append(args.ico)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
