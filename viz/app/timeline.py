"""The timeline: play/pause with speed, frame scrub bar, instruction / block / warp pickers."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QIcon, QPainter, QPalette, QPixmap, QPolygonF
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QSlider, QSpinBox, QToolButton, QVBoxLayout,
                               QWidget)

from ..i18n import tr
from .state import Session


def media_icon(kind: str, color) -> QIcon:
    """A transport icon drawn in ``color`` (the palette's text colour), so it reads on every
    theme, the black presentation theme included (the style's own icons are dark grey).
    ``kind``: home, prev, play, pause, next, end."""
    pm = QPixmap(32, 32)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(color)

    def tri(x0: float, x1: float) -> None:  # a triangle pointing from x0 to x1
        p.drawPolygon(QPolygonF([QPointF(x0, 7), QPointF(x0, 25), QPointF(x1, 16)]))

    if kind == "play":
        tri(9, 25)
    elif kind == "pause":
        p.drawRect(9, 7, 5, 18)
        p.drawRect(18, 7, 5, 18)
    elif kind == "next":
        tri(5, 16)
        tri(16, 27)
    elif kind == "prev":
        tri(27, 16)
        tri(16, 5)
    elif kind == "end":
        tri(6, 22)
        p.drawRect(22, 7, 4, 18)
    elif kind == "home":
        p.drawRect(6, 7, 4, 18)
        tri(26, 10)
    p.end()
    return QIcon(pm)

SPEEDS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
BASE_MS = 1000  # one frame per second at 1x: time to say what a frame shows


class Timeline(QWidget):
    playingChanged = Signal(bool)

    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.speed_index = SPEEDS.index(1.0)
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._tick)

        def button(name: str, slot, icon=None) -> QToolButton:
            b = QToolButton()
            b.setProperty("media", icon)
            b.setObjectName(name)
            b.setAutoRaise(True)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.clicked.connect(slot)
            return b

        self.b_home = button("home", lambda: session.home(), "home")
        self.b_prev = button("prevFrame", lambda: session.step("frame", -1), "prev")
        self.b_play = button("play", self.toggle, "play")
        self.b_next = button("nextFrame", lambda: session.step("frame", 1), "next")
        self.b_end = button("end", lambda: session.end(), "end")
        self.b_slower = button("slower", lambda: self.change_speed(-1))
        self.b_faster = button("faster", lambda: self.change_speed(1))
        self.speed_label = QLabel()
        self.scrub = QSlider(Qt.Orientation.Horizontal)
        self.scrub.setObjectName("scrub")
        self.scrub.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scrub.valueChanged.connect(lambda v: session.go(frame=v))
        self.frame_label = QLabel()
        self.instr = QSpinBox()
        self.instr.setObjectName("instruction")
        self.block = QSpinBox()
        self.block.setObjectName("block")
        self.warp = QSpinBox()
        self.warp.setObjectName("warp")
        for sb in (self.instr, self.block, self.warp):
            sb.setKeyboardTracking(False)
        # Instructions count from 1 as in the picture's header; blocks and warps from 0 as in CUDA.
        self.instr.valueChanged.connect(lambda v: session.go(instr=v - 1, frame=0))
        self.block.valueChanged.connect(lambda v: session.go(block=v))
        self.warp.valueChanged.connect(lambda v: session.go(warp=v))
        self.l_instr, self.l_block, self.l_warp = QLabel(), QLabel(), QLabel()
        self.where = QLabel()
        self.where.setObjectName("where")

        top = QHBoxLayout()
        for w in (self.b_home, self.b_prev, self.b_play, self.b_next, self.b_end):
            top.addWidget(w)
        top.addWidget(self.scrub, 1)
        top.addWidget(self.frame_label)
        top.addSpacing(12)
        top.addWidget(self.b_slower)
        top.addWidget(self.speed_label)
        top.addWidget(self.b_faster)
        bottom = QHBoxLayout()
        for lab, sb in ((self.l_instr, self.instr), (self.l_block, self.block), (self.l_warp, self.warp)):
            bottom.addWidget(lab)
            bottom.addWidget(sb)
            bottom.addSpacing(10)
        bottom.addWidget(self.where, 1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 4)
        lay.setSpacing(2)
        lay.addLayout(top)
        lay.addLayout(bottom)
        session.positionChanged.connect(self.sync)
        session.changed.connect(self.sync)
        self.retranslate()

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    def set_speed(self, speed: float) -> None:
        self.speed_index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - speed))
        self.timer.setInterval(int(BASE_MS / self.speed))
        self.retranslate()

    def change_speed(self, delta: int) -> None:
        self.speed_index = max(0, min(len(SPEEDS) - 1, self.speed_index + delta))
        self.set_speed(SPEEDS[self.speed_index])

    def _paint_icons(self) -> None:
        color = self.palette().color(QPalette.ColorRole.ButtonText)
        for b in (self.b_home, self.b_prev, self.b_play, self.b_next, self.b_end):
            kind = b.property("media")
            b.setIcon(media_icon("pause" if kind == "play" and self.playing else kind, color))

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "b_end"):  # a theme change: icons in its text colour
            self._paint_icons()
        super().changeEvent(event)

    def toggle(self) -> None:
        self.play(not self.playing)

    def play(self, on: bool = True) -> None:
        if on and self.session.at_end():
            self.session.home(whole=True)
        if on:
            self.timer.start(int(BASE_MS / self.speed))
        else:
            self.timer.stop()
        self.retranslate()
        self.playingChanged.emit(on)

    def _tick(self) -> None:
        if not self.session.step("frame", 1):
            self.play(False)

    def sync(self) -> None:
        s = self.session
        sc = s.scenario
        if sc is None:
            if getattr(s, "is_launch", False):       # a launch file: nothing recorded to step through yet
                self.setEnabled(False)
                self.frame_label.setText("")
                self.where.setText("")
            return
        self.setEnabled(True)
        c = s.cursor
        for sb, low, top, v in ((self.instr, 1, s.instruction_count, c.instruction + 1),
                                (self.block, 0, sc.launch.blocks - 1, c.block),
                                (self.warp, 0, sc.launch.warps_per_block - 1, c.warp)):
            sb.blockSignals(True)
            sb.setRange(low, max(low, top))
            sb.setValue(v)
            sb.blockSignals(False)
        self.scrub.blockSignals(True)
        self.scrub.setRange(0, max(0, s.frame_count - 1))
        self.scrub.setValue(c.frame)
        self.scrub.blockSignals(False)
        self.frame_label.setText(tr("frame {k} / {n}", k=c.frame + 1, n=s.frame_count))
        d = s.detail
        if d is not None:
            bx, by, bz = d.block_xyz
            self.where.setText(tr("block ({x},{y},{z}), warp {w}: threads {a}-{b}", x=bx, y=by, z=bz, w=c.warp,
                                  a=c.warp * 32, b=min(sc.launch.threads_per_block, c.warp * 32 + 32) - 1))

    def retranslate(self) -> None:
        self._paint_icons()
        self.b_home.setToolTip(tr("First frame of this instruction (Home)"))
        self.b_prev.setToolTip(tr("Previous frame (Left)"))
        self.b_play.setToolTip(tr("Pause (Space)") if self.playing else tr("Play (Space)"))
        self.b_next.setToolTip(tr("Next frame (Right)"))
        self.b_end.setToolTip(tr("Last frame of this instruction (End)"))
        self.b_slower.setText("−")
        self.b_slower.setToolTip(tr("Slower (-)"))
        self.b_faster.setText("+")
        self.b_faster.setToolTip(tr("Faster (+)"))
        self.speed_label.setText(tr("speed {x}x", x=f"{self.speed:g}"))
        self.l_instr.setText(tr("Instruction"))
        self.l_instr.setToolTip(tr("Up/Down: previous/next warp instruction"))
        self.instr.setToolTip(tr("Warp instruction, counted from 1 as in the picture's header "
                                 "and in `warpviz export -i`"))
        self.block.setToolTip(tr("Linear block index, from 0 as blockIdx in CUDA"))
        self.warp.setToolTip(tr("Warp in the block, from 0: threads 32w to 32w + 31"))
        self.l_block.setText(tr("Block"))
        self.l_warp.setText(tr("Warp"))
        self.l_warp.setToolTip(tr("PageUp/PageDown: previous/next warp"))
        self.sync()
