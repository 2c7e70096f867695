"""The pen: strokes drawn with the mouse over the picture, cleared on a frame change and
on E, kept in Copy frame when asked."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage

from app_helpers import user_dirs, window  # noqa: F401 - fixtures
from viz.app import clipboard
from viz.app.pen import PEN_COLOURS


def grab(w) -> QImage:
    w.view.repaint()
    return w.view.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def draw(qtbot, w, points):
    v = w.view
    qtbot.mousePress(v, Qt.MouseButton.LeftButton, pos=points[0])
    for q in points[1:]:
        qtbot.mouseMove(v, q)
    qtbot.mouseRelease(v, Qt.MouseButton.LeftButton, pos=points[-1])


def diff_pixels(a: QImage, b: QImage) -> list[tuple[int, int]]:
    assert a.size() == b.size()
    return [(x, y) for y in range(0, a.height(), 2) for x in range(0, a.width(), 2) if a.pixel(x, y) != b.pixel(x, y)]


def stroke(w):
    """A diagonal across the middle of the picture."""
    W, H = w.view.width(), w.view.height()
    return [QPoint(int(W * f), int(H * (0.3 + f / 2))) for f in (0.2, 0.3, 0.4, 0.5, 0.6)]


def test_pen_draws_over_the_picture_and_a_frame_change_clears_it(qtbot, window):
    w = window
    w.session.go(instr=8)                       # the column read: several frames
    qtbot.keyClick(w.view, Qt.Key.Key_Right)
    after_step = grab(w)                        # frame 2 without ink
    qtbot.keyClick(w.view, Qt.Key.Key_Left)
    clean = grab(w)
    qtbot.keyClick(w.view, Qt.Key.Key_P)        # the pen
    assert w.a_pen.isChecked() and w.ink.tool == "pen"
    pts = stroke(w)
    draw(qtbot, w, pts)
    assert len(w.ink.strokes) == 1 and len(w.ink.strokes[0].points) == len(pts) + 1
    inked = grab(w)
    changed = diff_pixels(clean, inked)
    assert len(changed) > 50
    red = QColor(PEN_COLOURS[0]).rgb()
    mid = pts[2]
    assert inked.pixel(mid.x(), mid.y()) == red  # the pen's colour where the mouse went
    assert w.session.cursor.frame == 0           # drawing does not move the animation
    second = [QPoint(q.x(), q.y() - w.view.height() // 5) for q in pts]
    draw(qtbot, w, second)                       # a second stroke: both stay on the picture
    both = grab(w)
    assert both.pixel(mid.x(), mid.y()) == red and both.pixel(second[2].x(), second[2].y()) == red
    qtbot.keyClick(w.view, Qt.Key.Key_Right)     # the next frame: the ink is gone
    assert w.ink.strokes == []
    assert diff_pixels(after_step, grab(w)) == []


def test_highlighter_is_translucent_and_e_erases(qtbot, window):
    w = window
    clean = grab(w)
    qtbot.keyClick(w.view, Qt.Key.Key_H)
    assert w.ink.tool == "highlighter"
    pts = stroke(w)
    draw(qtbot, w, pts)
    inked = grab(w)
    mid = pts[2]
    before, after = QColor(clean.pixel(mid.x(), mid.y())), QColor(inked.pixel(mid.x(), mid.y()))
    assert before != after and after.blue() < before.blue() + 1   # yellow laid over what was there
    assert after.red() >= 100 and after.green() >= 100           # translucent: not a solid pen
    qtbot.keyClick(w.view, Qt.Key.Key_E)
    assert w.ink.strokes == []
    assert diff_pixels(clean, grab(w)) == []


def test_pen_again_switches_colour_and_d_stops_drawing(qtbot, window):
    w = window
    qtbot.keyClick(w.view, Qt.Key.Key_P)
    qtbot.keyClick(w.view, Qt.Key.Key_P)
    assert w.ink.tool == "pen" and w.ink.pen_colour == 1
    draw(qtbot, w, stroke(w))
    assert w.ink.strokes[0].colour == QColor(PEN_COLOURS[1])
    qtbot.keyClick(w.view, Qt.Key.Key_D)
    assert w.ink.tool is None and not w.a_pen.isChecked()
    n = len(w.ink.strokes)
    draw(qtbot, w, stroke(w))                     # no tool: the mouse hovers lanes again
    assert len(w.ink.strokes) == n


def test_copy_frame_keeps_the_strokes_only_when_asked(qtbot, window):
    w = window
    plain = clipboard.frame_image(w, (960, 540))
    qtbot.keyClick(w.view, Qt.Key.Key_P)
    draw(qtbot, w, stroke(w))
    assert not w.a_keep_ink.isChecked()
    assert diff_pixels(plain, clipboard.frame_image(w, (960, 540))) == []
    w.a_keep_ink.setChecked(True)
    inked = clipboard.frame_image(w, (960, 540))
    assert len(diff_pixels(plain, inked)) > 20


def test_pen_toolbar_shows_in_presentation_mode(qtbot, window):
    w = window
    assert w.pen_toolbar.isHidden()
    w.a_present.setChecked(True)
    assert not w.pen_toolbar.isHidden()
    w.a_present.setChecked(False)
    assert w.pen_toolbar.isHidden()


def test_ink_follows_a_resized_view(qtbot, window):
    w = window
    qtbot.keyClick(w.view, Qt.Key.Key_P)
    draw(qtbot, w, stroke(w))
    w.resize(w.width() - 200, w.height() - 100)
    qtbot.waitUntil(lambda: w.ink.size() == w.view.size())
    assert w.ink.strokes                         # a resize is no frame change


def test_pen_draws_on_the_compare_pair_too(qtbot, window):
    w = window
    w.a_compare.setChecked(True)
    right = w.compare.view_right
    qtbot.waitUntil(lambda: w.compare.right.frame is not None and right.isVisible(), timeout=10000)
    right.repaint()
    clean = right.grab().toImage()
    right.setFocus()
    qtbot.keyClick(right, Qt.Key.Key_H)
    W, H = right.width(), right.height()
    pts = [QPoint(int(W * f), H // 2) for f in (0.2, 0.4, 0.6)]
    qtbot.mousePress(right, Qt.MouseButton.LeftButton, pos=pts[0])
    for q in pts[1:]:
        qtbot.mouseMove(right, q)
    qtbot.mouseRelease(right, Qt.MouseButton.LeftButton, pos=pts[-1])
    layer = w.ink_layers[2]
    assert layer.view is right and len(layer.strokes) == 1
    right.repaint()
    assert right.grab().toImage() != clean
    qtbot.keyClick(right, Qt.Key.Key_E)
    assert layer.strokes == []


def test_pen_letters_stay_type_ahead_in_the_panels(qtbot, window):
    w = window
    tree = w.library.tree
    tree.setFocus()
    qtbot.keyClick(tree, Qt.Key.Key_P)
    assert w.ink.tool is None and not w.a_pen.isChecked()
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_P)
    assert w.ink.tool == "pen"
