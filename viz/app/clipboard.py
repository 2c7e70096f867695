"""Edit → Copy frame: the picture on screen drawn again by the painter into a QImage (never
grabbed from the screen) and put on the clipboard, to paste into a slide."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QAction, QImage, QKeySequence, QPainter, QShortcut
from PySide6.QtWidgets import QApplication

from ..i18n import tr
from ..render import PaintOptions, paint_compare, paint_frame
from .pen import paint_strokes

FALLBACK_SIZE = (1920, 1080)   # when the picture is not on screen
SLIDE_SIZE = (1920, 1080)
MIN_SIDE = 64


def _comparing(main) -> bool:
    right = main.compare.right
    return main.a_compare.isChecked() and right.detail is not None and right.frame is not None


def frame_image(main, size: tuple[int, int] | None = None) -> QImage | None:
    """The current frame (in compare mode both sides, as one picture) at ``size``, by
    default the size it has on screen, in the view's theme and options; None when there
    is nothing to show."""
    s = main.session
    d, f = s.detail, s.frame
    if d is None or f is None:
        return None
    comparing = _comparing(main)
    if size is None:
        if comparing:
            lv, rv = main.compare.view_left, main.compare.view_right
            size = (lv.width() + rv.width(), max(lv.height(), rv.height())) if lv.isVisible() else None
        else:
            size = (main.view.width(), main.view.height()) if main.view.isVisible() else None
        if size is None or min(size) < MIN_SIDE:
            size = FALLBACK_SIZE
    w, h = size
    img = QImage(w, h, QImage.Format.Format_RGB32)
    p = QPainter(img)
    try:
        rect = QRectF(0, 0, w, h)
        if comparing:
            right = main.compare.right
            labels = (s.scenario.shown_title, right.scenario.shown_title)
            lv = main.compare.view_left
            paint_compare(p, rect, (d, f), (right.detail, right.frame), lv.theme,
                          PaintOptions(min_px=lv.min_px(), rows=lv.rows), labels)
        else:
            paint_frame(p, rect, d, f, main.view.theme, main.view.paint_options())
            ink = getattr(main, "ink", None)   # the pen's strokes, when Edit → Keep pen strokes is on
            if ink is not None and main.a_keep_ink.isChecked():
                paint_strokes(p, rect, ink.strokes)
    finally:
        p.end()
    return img


def copy_frame(main, size: tuple[int, int] | None = None) -> QImage | None:
    """Put ``frame_image(main, size)`` on the clipboard and say so in the status bar."""
    img = frame_image(main, size)
    if img is None:
        main.statusBar().showMessage(tr("Nothing to copy: the scenario has an error."), 5000)
        return None
    QApplication.clipboard().setImage(img)
    main.statusBar().showMessage(tr("Copied the frame ({w}×{h}) to the clipboard", w=img.width(), h=img.height()),
                                 5000)
    return img


def install(main, menu) -> list[QAction]:
    """Copy frame (Ctrl+Shift+C anywhere in the window, Ctrl+C in the picture) and Copy frame
    at 1920×1080, added to ``menu``; returns the two actions (the caller names them)."""
    a_copy = QAction(main)
    a_copy.setObjectName("copyFrame")
    a_copy.setShortcut(QKeySequence("Ctrl+Shift+C"))
    a_copy.triggered.connect(lambda: copy_frame(main))
    a_slide = QAction(main)
    a_slide.setObjectName("copyFrameSlide")
    a_slide.triggered.connect(lambda: copy_frame(main, SLIDE_SIZE))
    for a in (a_copy, a_slide):
        main.addAction(a)
        menu.addAction(a)
    for view in (main.view, main.compare.view_left, main.compare.view_right):
        if view.focusPolicy() == Qt.FocusPolicy.NoFocus:
            view.setFocusPolicy(Qt.FocusPolicy.ClickFocus)   # a click in the picture, then Ctrl+C
        sc = QShortcut(QKeySequence(QKeySequence.StandardKey.Copy), view)
        sc.setContext(Qt.ShortcutContext.WidgetShortcut)
        sc.activated.connect(lambda: copy_frame(main))
    main.a_copy_frame, main.a_copy_frame_slide = a_copy, a_slide
    return [a_copy, a_slide]
