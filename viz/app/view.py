"""The warp and memory view: a widget that draws the current frame with the one painter."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QScrollArea, QToolTip, QWidget

from ..i18n import tr
from ..render import PaintOptions, paint_frame
from ..render.painter import compare_options
from ..render.text import FLOOR_PX, presentation_floor
from ..render.theme import Theme, theme
from .state import Session


class FrameView(QWidget):
    """Paints ``session``'s current frame; hover a lane for all of its values."""

    hoveredLane = Signal(int)

    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.theme: Theme = theme("light")
        self.options = PaintOptions()
        self.rows = "auto"          # the lane rows: "auto" (those that fit; the picture names the rest) or "all"
        self.partner: FrameView | None = None   # the other half of a comparison: both are laid out alike
        self.layout_ = None
        self.hover = -1
        self.last_paint_ms = 0.0
        self.setMouseTracking(True)
        self.setMinimumSize(480, 300)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        session.positionChanged.connect(self.update)
        session.changed.connect(self.update)
        session.errorChanged.connect(self.update)

    def set_theme(self, th: Theme) -> None:
        self.theme = th
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        import time

        t0 = time.perf_counter()
        p = QPainter(self)
        rect = QRectF(self.rect())
        d, f = self.session.detail, self.session.frame
        if d is None or f is None:
            p.fillRect(rect, self.theme.q("background"))
            p.setPen(self.theme.q("muted"))
            msg = self.session.error.message() if self.session.error else (self._launch_note() or tr(
                "Open a scenario from the library, or drop a .toml file here."))
            p.drawText(rect.adjusted(40, 40, -40, -40), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, msg)
            self.layout_ = None
        else:
            options = self.paint_options()
            if self.session.error is not None:
                # The text has an error: the picture is the last valid state, and says so.
                options = replace(options, stale_note=tr("Showing the last valid version: the text has an error"))
            self.layout_ = paint_frame(p, rect, d, f, self.theme, options)
            if self.hover >= 0 and self.layout_ is not None and self.hover < len(self.layout_.lanes):
                p.setPen(QColor(self.theme.q("now")))
                p.drawRect(self.layout_.lanes[self.hover].adjusted(-1, -1, 1, 1))
        p.end()
        self.last_paint_ms = (time.perf_counter() - t0) * 1000

    def min_px(self) -> int:
        """The smallest type of this view's picture: 12 px, and in presentation mode (a theme
        scaled up) 18 px on a 1080-px screen, in proportion to the screen's height."""
        if self.theme.scale <= 1.0:
            return FLOOR_PX
        screen = self.screen()
        return presentation_floor(screen.geometry().height() if screen is not None else 1080)

    def paint_options(self) -> PaintOptions:
        """What this view paints with: its options, its smallest type, its lane rows, and in a
        comparison the alignment with the other half (``compare_options``)."""
        o = replace(self.options, min_px=self.min_px(), rows=self.rows)
        other = self.partner
        d = self.session.detail
        if other is None or d is None or other.session.detail is None:
            return o
        mine, theirs = QRectF(self.rect()), QRectF(other.rect())
        po = replace(other.options, min_px=o.min_px, rows=self.rows)
        got = compare_options([mine, theirs], (d, other.session.detail), self.theme, [o, po])
        return got[0]

    def _launch_note(self) -> str:
        """What stands in for the picture while a launch file is open (nothing is recorded yet)."""
        s = self.session
        if not getattr(s, "is_launch", False):
            return ""
        if s.launch is None:
            return tr("This launch file cannot be recorded: {error}", error=s.launch_error)
        return tr("Launch file of the kernel {kernel} ({source}): press Record trace in the GPU panel to run it "
                  "once with every memory instruction recorded; the picture shows each warp's accesses then.",
                  kernel=s.launch.kernel, source=s.launch.source.name)

    def lane_at(self, pos: QPointF) -> int:
        if self.layout_ is None:
            return -1
        for k, r in enumerate(self.layout_.lanes):
            if r.contains(pos):
                return k
        # Anywhere in a lane's column (down into the banks) counts as that lane.
        if self.layout_.lane_area is not None and self.layout_.col_w > 0:
            x0 = self.layout_.columns[0] - self.layout_.col_w / 2
            k = int((pos.x() - x0) // self.layout_.col_w)
            if 0 <= k < 32 and self.layout_.lane_area.top() <= pos.y() <= self.layout_.lane_area.bottom():
                return k
        return -1

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        k = self.lane_at(event.position())
        if k != self.hover:
            self.hover = k
            self.update()
            if k >= 0:
                self.hoveredLane.emit(k)
        if k >= 0:
            QToolTip.showText(event.globalPosition().toPoint(), self.lane_tooltip(k), self)
        else:
            QToolTip.hideText()

    def leaveEvent(self, event) -> None:  # noqa: N802
        if self.hover != -1:
            self.hover = -1
            self.update()

    def lane_tooltip(self, k: int) -> str:
        d = self.session.detail
        if d is None:
            return ""
        ln = d.lanes[k]
        if not ln.exists:
            return tr("Lane {lane}: no such thread (partial warp)", lane=k)
        rows = [tr("Lane {lane} (thread {tid} of the block)", lane=k, tid=ln.tid),
                tr("threadIdx = ({x}, {y}, {z})", x=ln.thread[0], y=ln.thread[1], z=ln.thread[2]),
                tr("blockIdx = ({x}, {y}, {z})", x=d.block_xyz[0], y=d.block_xyz[1], z=d.block_xyz[2])]
        if not ln.active:
            rows.append(tr("inactive: its `when` is false, it makes no access"))
            return "\n".join(rows)
        if ln.indices:    # a recorded trace has addresses, not subscripts
            rows.append(tr("index {idx} -> element {elem}", idx="".join(f"[{v}]" for v in ln.indices), elem=ln.elem))
        rows.append(tr("byte address {addr} (0x{hex}), {size} bytes", addr=ln.byte_addr,
                       hex=format(ln.byte_addr, "x"), size=ln.size))
        if d.space == "shared":
            rows.append(tr("words {words} in banks {banks}", words=", ".join(map(str, ln.words)),
                           banks=", ".join(map(str, ln.banks))))
            rows.append(tr("phase {phase}; served in wavefront {wf}", phase=ln.phase + 1, wf=ln.wavefront + 1))
        else:
            rows.append(tr("sector {s} (bytes {a}-{b}), line {k} of {n} of this request", s=ln.sector,
                           a=ln.sector * 32, b=ln.sector * 32 + 31, k=d.lines.index(ln.line) + 1, n=len(d.lines)))
        return "\n".join(rows)


class ZoomArea(QScrollArea):
    """Holds a FrameView; zoom 1 fits the window, larger zooms scroll."""

    def __init__(self, view: FrameView, parent=None):
        super().__init__(parent)
        self.view = view
        self.zoom = 1.0
        self.setWidget(view)
        self.setWidgetResizable(False)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setFrameShape(QScrollArea.Shape.NoFrame)

    def set_zoom(self, zoom: float) -> None:
        self.zoom = max(1.0, min(4.0, zoom))
        self._fit()

    def _fit(self) -> None:
        vp = self.viewport().size() if self.zoom > 1 else self.size()
        self.view.resize(QSize(max(480, int(vp.width() * self.zoom)), max(300, int(vp.height() * self.zoom))))

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def wheelEvent(self, event) -> None:  # noqa: N802
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.set_zoom(self.zoom * (1.15 if event.angleDelta().y() > 0 else 1 / 1.15))
            event.accept()
            return
        super().wheelEvent(event)
