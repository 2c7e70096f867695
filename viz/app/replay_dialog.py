"""View → Replay with layout…: a trace compared with itself replayed under another layout of
one shared array (``viz.trace.replay``), in compare mode: same instruction, same warp, before
on the left and after on the right, with the figures' differences in the compare table;
File → Export's "side by side" exports the pair.

The replayed trace lives in memory (a ``TraceSource`` of the replayed ``Trace``): nothing is
written; File → Save a copy is not offered for it (the right side is not the window's file).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QSpinBox,
                               QVBoxLayout)

from ..i18n import tr
from .lifetime import on_language_change

LAYOUTS = ("pad:1", "xor", "swizzle:5,0,5", "swizzle:3,2,3", "diag", "bitrev", "xor:7", "pad:4")


class ReplayDialog(QDialog):
    """Array, shape, element bytes and layout; Replay builds the replay and opens the compare."""

    def __init__(self, window):
        super().__init__(window)
        self.window_ = window
        self.setObjectName("replayDialog")
        self.array = QComboBox()
        self.array.setObjectName("replayArray")
        self.array.setEditable(True)
        self.shape = QLineEdit()
        self.shape.setObjectName("replayShape")
        self.shape.setPlaceholderText("32,32")
        self.elem = QSpinBox()
        self.elem.setObjectName("replayElemBytes")
        self.elem.setRange(0, 256)
        self.layout_ = QComboBox()
        self.layout_.setObjectName("replayLayout")
        self.layout_.setEditable(True)
        self.layout_.addItems(LAYOUTS)
        self.error = QLabel()
        self.error.setObjectName("replayError")
        self.error.setWordWrap(True)
        self.l_array, self.l_shape, self.l_elem, self.l_layout = QLabel(), QLabel(), QLabel(), QLabel()
        form = QFormLayout()
        form.addRow(self.l_array, self.array)
        form.addRow(self.l_shape, self.shape)
        form.addRow(self.l_elem, self.elem)
        form.addRow(self.l_layout, self.layout_)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.run)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self.replay = None
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Replay with layout"))
        self.l_array.setText(tr("Shared array:"))
        self.l_shape.setText(tr("Shape (rows,cols):"))
        self.l_elem.setText(tr("Bytes per element (0: declared):"))
        self.l_layout.setText(tr("Layout:"))
        self.elem.setSpecialValueText(tr("declared"))

    def fill(self) -> None:
        """The arrays of the trace on the left (its source's declarations), the first one's shape."""
        from ..trace.replay import declared_arrays

        s = self.window_.session
        self.array.clear()
        self.error.clear()
        if not s.is_trace:
            return
        arrays = [a for a in declared_arrays(s.trace.trace) if a.size]
        for a in arrays:
            self.array.addItem(a.name)
        if arrays and arrays[0].dims and len(arrays[0].dims) >= 2:
            d = arrays[0].dims
            rows = 1
            for x in d[:-1]:
                rows *= x
            self.shape.setText(f"{rows},{d[-1]}")

    def _shape(self):
        from ..argcheck import to_int
        from ..trace.replay import MAX_ELEMENTS

        text = self.shape.text().strip()
        if not text:
            return None
        parts = text.split(",")
        if len(parts) != 2:
            raise ValueError(tr("Shape: give ROWS,COLS, e.g. 32,32"))
        return (to_int(parts[0], tr("rows"), 1, MAX_ELEMENTS), to_int(parts[1], tr("columns"), 1, MAX_ELEMENTS))

    def run(self) -> bool:
        """Replay and show it in compare mode; on a bad option, say why here and keep the dialog open."""
        from ..trace import TraceError

        try:
            rp = replay_into_compare(self.window_, self.array.currentText().strip() or None, self._shape(),
                                     self.elem.value() or None, self.layout_.currentText().strip())
        except (TraceError, ValueError) as err:
            self.error.setText(str(err))
            return False
        self.replay = rp
        self.accept()
        return True


def replay_into_compare(window, array, shape, elem_bytes, layout):
    """The trace on the window's left replayed (``viz.trace.replay.replay``) and opened on the
    compare page's right side, compare mode on. Returns the ``Replay``; raises ``TraceError`` /
    ``ValueError`` with the reason and changes nothing then."""
    from ..trace.detail import TraceSource
    from ..trace.replay import replay

    s = window.session
    if not s.is_trace:
        raise ValueError(tr("Open a trace first: a replay re-maps a recorded kernel's shared addresses."))
    rp = replay(s.trace.trace, array, shape, elem_bytes, layout)
    src = TraceSource(rp.trace)
    left = Path(s.path) if s.path is not None else Path("trace.wvtrace")
    name = f"{left.stem}+{rp.array.name}-{rp.layout.text}".replace(":", "").replace(",", "-")
    page = window.compare
    if not window.a_compare.isChecked():
        window.a_compare.setChecked(True)         # compare mode on (it may pick a partner first)
    page.right.cursor = s.cursor
    page.right.open_trace(left.with_name(name + ".wvtrace"), src=src)
    page.partner_of = s.path                      # keeps this partner for this left side
    page.pick.setToolTip(tr("Replay of {name} with {array} laid out as {layout}", name=left.name,
                            array=rp.array.name, layout=rp.layout.text))
    window.statusBar().showMessage(tr("Replayed: shared wavefronts {before} → {after}; shared memory per block "
                                      "{b0} → {b1} bytes", before=f"{_wf(rp.before):,}", after=f"{_wf(rp.analysis):,}",
                                      b0=f"{rp.shared_before:,}", b1=f"{rp.shared_after:,}"), 15000)
    return rp


def _wf(an) -> int:
    from ..trace.replay import shared_wavefronts

    return shared_wavefronts(an)


def show(window) -> ReplayDialog:
    dlg = getattr(window, "replay_dialog", None)
    if dlg is None:
        dlg = window.replay_dialog = ReplayDialog(window)
    dlg.fill()
    dlg.show()
    dlg.raise_()
    return dlg


def install(window) -> QAction:
    """View → Replay with layout… (enabled while a trace is open)."""
    action = QAction(window)
    action.setObjectName("replayLayout")
    action.triggered.connect(lambda: show(window))
    window.m_view.addAction(action)
    window.addAction(action)

    def enable() -> None:
        try:
            action.setEnabled(window.session.is_trace)
        except RuntimeError:        # the window is gone
            pass

    window.session.changed.connect(enable)
    enable()

    def retranslate(_code: str = "") -> None:
        try:
            action.setText(tr("Replay with layout…"))
            dlg = getattr(window, "replay_dialog", None)
            if dlg is not None:
                dlg.retranslate()
        except RuntimeError:
            pass

    retranslate()
    on_language_change(window, retranslate)
    window.a_replay = action
    return action
