"""A pen and a highlighter for presenting: draw on the picture with the mouse.

The strokes belong to the view, not to the model: an ``InkLayer`` is a transparent child of
a FrameView (the picture, and each side of the comparison) that paints them over the
painter's picture. Points are kept as fractions of
the view's size, so strokes follow a resized window. They are cleared when the frame, the
instruction or the scenario changes, and on E. Edit → Keep pen strokes in Copy frame draws
them into the copied picture too.

Keys (with the focus in the picture, the comparison or the timeline): P pen (again: its
other colour), H highlighter, E erase all, D stop drawing. The Pen toolbar shows in presentation mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QAction, QActionGroup, QColor, QKeySequence, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QToolBar, QWidget

from ..i18n import tr
from . import settings

PEN_COLOURS = ("#e11d48", "#2563eb")            # red, blue
HIGHLIGHT = QColor(255, 214, 0, 110)            # translucent yellow
PEN_W, HIGHLIGHT_W = 5.0, 28.0                  # px at 1080 lines, scaled with the picture
KEEP_SETTING = "pen_in_copy"


@dataclass
class Stroke:
    tool: str                                   # "pen" | "highlighter"
    colour: QColor
    points: list[QPointF] = field(default_factory=list)   # fractions of the picture's width and height


def paint_strokes(p: QPainter, rect: QRectF, strokes: list[Stroke]) -> None:
    """Draw ``strokes`` over a picture occupying ``rect`` (the screen's, or Copy frame's)."""
    if not strokes:
        return
    k = rect.height() / 1080.0
    p.save()
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for s in strokes:
        pts = [QPointF(rect.left() + q.x() * rect.width(), rect.top() + q.y() * rect.height()) for q in s.points]
        width = max(2.0, (HIGHLIGHT_W if s.tool == "highlighter" else PEN_W) * k)
        pen = QPen(s.colour, width, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        if len(pts) == 1:
            p.drawPoint(pts[0])
            continue
        path = QPainterPath(pts[0])   # one path: a highlighter stroke does not darken where it crosses itself
        for q in pts[1:]:
            path.lineTo(q)
        p.drawPath(path)
    p.restore()


class InkLayer(QWidget):
    """The strokes over one FrameView. Transparent to the mouse: it reads the view's mouse
    events through an event filter while a tool is on, so hovering lanes works when it is off."""

    def __init__(self, view: QWidget):
        super().__init__(view)
        self.setObjectName("inkLayer")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.view = view
        self.tool: str | None = None
        self.pen_colour = 0
        self.strokes: list[Stroke] = []
        self._drawing: Stroke | None = None
        self._cache: QPixmap | None = None   # the finished strokes, drawn once (wide antialiased paths are slow)
        self.resize(view.size())
        view.installEventFilter(self)
        session = view.session   # a signal of this window's session: gone with the window
        session.positionChanged.connect(self.clear)
        session.changed.connect(self.clear)
        self.hide()   # shown while it has strokes: no extra painting otherwise

    def set_tool(self, tool: str | None) -> None:
        self.tool = tool
        self._drawing = None
        self.view.setCursor(Qt.CursorShape.CrossCursor if tool else Qt.CursorShape.ArrowCursor)

    def clear(self) -> None:
        self._drawing = None
        self._cache = None
        if self.strokes:
            self.strokes = []
            self.hide()

    def _colour(self) -> QColor:
        return QColor(HIGHLIGHT) if self.tool == "highlighter" else QColor(PEN_COLOURS[self.pen_colour])

    def _point(self, pos: QPointF) -> QPointF:
        w, h = max(1, self.width()), max(1, self.height())
        return QPointF(pos.x() / w, pos.y() / h)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        t = event.type()
        if t == QEvent.Type.Resize:
            self._cache = None
            self.resize(event.size())
            return False
        if self.tool is None:
            return False
        if t == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton:
            self._drawing = Stroke(self.tool, self._colour(), [self._point(event.position())])
            self.strokes.append(self._drawing)
            self.show()
            self.raise_()
            self.update()
            return True
        if t == QEvent.Type.MouseMove:
            if self._drawing is not None:
                self._drawing.points.append(self._point(event.position()))
                self.update()
            return True   # no lane hover or tooltips while drawing
        if t == QEvent.Type.MouseButtonRelease and self._drawing is not None:
            self._drawing.points.append(self._point(event.position()))
            done, self._drawing = self._drawing, None
            if self._cache is not None:
                p = QPainter(self._cache)
                paint_strokes(p, QRectF(self.rect()), [done])
                p.end()
            self.update()
            return True
        return False

    def _finished(self) -> QPixmap:
        if self._cache is None or self._cache.deviceIndependentSize().toSize() != self.size():
            dpr = self.devicePixelRatioF()
            self._cache = QPixmap(self.size() * dpr)
            self._cache.setDevicePixelRatio(dpr)
            self._cache.fill(Qt.GlobalColor.transparent)
            p = QPainter(self._cache)
            paint_strokes(p, QRectF(self.rect()), [s for s in self.strokes if s is not self._drawing])
            p.end()
        return self._cache

    def paintEvent(self, event) -> None:  # noqa: N802
        cache = self._finished()
        p = QPainter(self)
        p.drawPixmap(0, 0, cache)
        if self._drawing is not None:
            paint_strokes(p, QRectF(self.rect()), [self._drawing])
        p.end()


def install(main) -> None:
    """The ink layer over the picture, its keys, Edit → Keep pen strokes in Copy frame, a
    Pen submenu in View, and the Pen toolbar (shown while presenting)."""
    ink = InkLayer(main.view)   # the one picture; Copy frame can keep its strokes
    layers = [ink, InkLayer(main.compare.view_left), InkLayer(main.compare.view_right)]   # and the compare pair
    main.ink, main.ink_layers = ink, layers

    def set_tool(tool: str | None) -> None:
        for layer in layers:
            layer.pen_colour = ink.pen_colour
            layer.set_tool(tool)

    def clear() -> None:
        for layer in layers:
            layer.clear()
    group = QActionGroup(main)
    group.setExclusionPolicy(QActionGroup.ExclusionPolicy.ExclusiveOptional)

    centre = main.centralWidget()

    def act(name: str, key: str, slot, checkable: bool = False) -> QAction:
        a = QAction(main)
        a.setObjectName(name)
        a.setShortcut(QKeySequence(key))
        # The letters act where the picture is (the view, the comparison, the timeline), also
        # with the menu bar hidden; in the panels they stay the lists' type-ahead.
        a.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        a.setCheckable(checkable)
        a.triggered.connect(slot)
        centre.addAction(a)
        return a

    def pen(_on: bool = False) -> None:
        if ink.tool == "pen" and not a_pen.isChecked():   # P again: the other colour, still drawing
            ink.pen_colour = (ink.pen_colour + 1) % len(PEN_COLOURS)
            a_pen.setChecked(True)
        set_tool("pen" if a_pen.isChecked() else None)

    def highlighter(_on: bool = False) -> None:
        set_tool("highlighter" if a_high.isChecked() else None)

    def stop() -> None:
        for a in (a_pen, a_high):
            a.setChecked(False)
        set_tool(None)

    a_pen = act("pen", "P", pen, checkable=True)
    a_high = act("highlighter", "H", highlighter, checkable=True)
    group.addAction(a_pen)
    group.addAction(a_high)
    a_clear = act("clearInk", "E", clear)
    a_stop = act("stopDrawing", "D", stop)
    a_keep = QAction(main)
    a_keep.setObjectName("keepInkInCopy")
    a_keep.setCheckable(True)
    a_keep.setChecked(settings.get(KEEP_SETTING, False, bool))
    a_keep.toggled.connect(lambda on: settings.put(KEEP_SETTING, on))
    main.m_edit.addSeparator()
    main.m_edit.addAction(a_keep)
    m_pen = main.m_view.addMenu("")
    for a in (a_pen, a_high, a_clear, a_stop):
        m_pen.addAction(a)
    bar = QToolBar(main)
    bar.setObjectName("penToolbar")
    for a in (a_pen, a_high, a_clear, a_stop):
        bar.addAction(a)
    main.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
    bar.hide()
    main.a_present.toggled.connect(lambda on: bar.setVisible(on))   # after set_presentation
    main.a_pen, main.a_highlighter, main.a_clear_ink, main.a_stop_ink = a_pen, a_high, a_clear, a_stop
    main.a_keep_ink, main.m_pen, main.pen_toolbar = a_keep, m_pen, bar

    def retranslate() -> None:
        a_pen.setText(tr("Pen (again: other colour)"))
        a_high.setText(tr("Highlighter"))
        a_clear.setText(tr("Erase the drawing"))
        a_stop.setText(tr("Stop drawing"))
        a_keep.setText(tr("Keep pen strokes in Copy frame"))
        m_pen.setTitle(tr("Pen"))
        bar.setWindowTitle(tr("Pen"))

    ink.retranslate = retranslate
    retranslate()
