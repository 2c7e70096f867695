"""The Source panel for a recorded trace: the CUDA source with per-line figures, the worst
lines first in a list; clicking a line steps the picture to its first warp instruction and
shows the line's PTX beside the source. Nsight Compute's Source page, with the picture.

Empty (with a note) while a scenario is open.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import (QLabel, QPlainTextEdit, QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from ..frames import Cursor
from ..i18n import tr
from .state import Session

COLUMNS = ("source line", "warp instructions", "wavefronts", "bank conflicts", "sectors", "sector efficiency")


class TraceSourcePanel(QWidget):
    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.lines = QTreeWidget()
        self.lines.setObjectName("traceLines")
        self.lines.setRootIsDecorated(False)
        self.lines.header().setStretchLastSection(False)  # the efficiency column beside the others
        self.lines.setColumnCount(len(COLUMNS))
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.source = QPlainTextEdit()
        self.source.setObjectName("traceSource")
        self.source.setReadOnly(True)
        self.source.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.source.setFont(mono)
        self.ptx = QPlainTextEdit()
        self.ptx.setObjectName("tracePtx")
        self.ptx.setReadOnly(True)
        self.ptx.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.ptx.setFont(mono)
        side = QSplitter(Qt.Orientation.Horizontal)
        side.addWidget(self.source)
        side.addWidget(self.ptx)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.lines)
        split.addWidget(side)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.note)
        lay.addWidget(split, 1)
        self.rows: list[dict] = []
        self.lines.itemClicked.connect(self._clicked)
        self.lines.itemActivated.connect(self._clicked)
        session.analysisChanged.connect(self.refresh)
        session.changed.connect(self.refresh)
        self.retranslate()

    def refresh(self) -> None:
        s = self.session
        self.lines.setHeaderLabels([tr(c) for c in COLUMNS])
        if getattr(s, "is_launch", False):
            self._show_launch()
            return
        self.lines.show()
        self.ptx.show()
        an = s.trace_analysis if s.is_trace else None
        if an is None or an.trace is not s.trace.trace:
            self.rows = []
            self.lines.clear()
            if not s.is_trace:
                self.source.setPlainText("")
                self.ptx.setPlainText("")
            self.note.setText(tr("Open a recorded trace (.wvtrace) to see its CUDA source here, line by line.")
                              if not s.is_trace else tr("Analysing the whole launch…"))
            return
        from ..trace.analysis import source_lines

        # lines whose instructions no recorded warp executed (another kernel of the module) stay out
        self.rows = [r for r in source_lines(an) if r["warp_instructions"]]
        self.lines.clear()
        for k, r in enumerate(self.rows):
            eff = f"{r['sector_efficiency'] * 100:.1f}%" if r["sectors"] else ""
            item = QTreeWidgetItem([r["source"], f"{r['warp_instructions']:,}", f"{r['wavefronts']:,}",
                                    f"{r['bank_conflicts']:,}", f"{r['sectors']:,}", eff])
            for c in range(1, len(COLUMNS)):
                item.setTextAlignment(c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setData(0, Qt.ItemDataRole.UserRole, k)
            self.lines.addTopLevelItem(item)
        for c in range(len(COLUMNS)):
            self.lines.resizeColumnToContents(c)
        self.note.setText(tr("Worst lines first (bank conflicts + sectors). Click a line to see its first warp "
                             "instruction in the picture."))
        self.source.setPlainText(self.annotated())
        self.ptx.setPlainText("")

    def _show_launch(self) -> None:
        """A launch file is open: its kernel's CUDA source, the kernel's definition selected;
        the per-line figures come with a recording."""
        s = self.session
        self.rows = []
        self.lines.clear()
        self.ptx.setPlainText("")
        self.lines.hide()               # nothing recorded yet: the source gets the whole panel
        self.ptx.hide()
        launch = s.launch
        if launch is None:
            self.note.setText(tr("This launch file cannot be recorded: {error}", error=s.launch_error))
            self.source.setPlainText("")
            return
        lines = launch.source_text.splitlines()     # read (bounded, checked) when the launch file was opened
        at = kernel_definition(lines, getattr(launch, "short_name", launch.kernel))     # MatrixMulCUDA<32>: MatrixMulCUDA
        self.note.setText(tr("{source}: the kernel {kernel} (line {line}) of the open launch file. Record trace (GPU "
                             "panel) runs it once and fills this panel with each line's figures.",
                             source=launch.source.name, kernel=launch.kernel, line=at))
        self.source.setPlainText("\n".join(f"{n:>4}  {code}" for n, code in enumerate(lines, 1)))
        block = self.source.document().findBlockByNumber(at - 1)
        cur = QTextCursor(block)
        cur.select(QTextCursor.SelectionType.LineUnderCursor)
        self.source.setTextCursor(cur)
        self.source.centerCursor()
        self.source.horizontalScrollBar().setValue(0)

    def annotated(self) -> str:
        """The CUDA source, each line with executed memory instructions followed by its figures
        (after the code, so the code stays in view in a narrow panel)."""
        h = self.session.trace.header
        sources = h.get("sources") or {}
        by_line = {}
        for r in self.rows:
            by_line.setdefault(str(r["file"]).rsplit("/", 1)[-1], {})[r["line"]] = r
        out = []
        for name, text in sources.items():
            figs = by_line.get(name, {})
            if len(sources) > 1:
                out.append(f"// {name}")
            for n, code in enumerate(str(text).splitlines(), 1):
                r = figs.get(n)
                tag = (tr("wf {wf} conf {conf} sec {sec}", wf=r["wavefronts"], conf=r["bank_conflicts"],
                          sec=r["sectors"]) if r else "")
                out.append(f"{n:>4}  {code}" + (f"    ◀ {tag}" if tag else ""))
        return "\n".join(out)

    def _clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        k = item.data(0, Qt.ItemDataRole.UserRole)
        if k is None or not 0 <= k < len(self.rows):
            return
        self.show_line(k)

    def show_line(self, k: int) -> bool:
        """Show row ``k``'s PTX and source line and step the picture to its first warp
        instruction (in the warp on screen if it runs the line, else the first warp that does)."""
        r = self.rows[k]
        s = self.session
        self.ptx.setPlainText(tr("PTX of {where}:", where=r["source"]) + "\n" + "\n".join(r["ptx"]))
        self._select_source_line(r)
        c = s.cursor
        hit = s.trace.first_execution(r["instructions"], c.block, c.warp)
        if hit is None:
            self.note.setText(tr("{where}: no warp executed it in the recorded blocks.", where=r["source"]))
            return False
        b, w, i = hit
        return s.move_to(Cursor(i, b, w, 0))

    def _select_source_line(self, r: dict) -> None:
        doc = self.source.document()
        name = str(r["file"]).rsplit("/", 1)[-1]
        sources = list((self.session.trace.header.get("sources") or {}).keys())
        offset = 0
        if len(sources) > 1 and name in sources:
            k = sources.index(name)
            for other in sources[:k]:
                offset += 1 + len(str(self.session.trace.header["sources"][other]).splitlines())
            offset += 1
        block = doc.findBlockByNumber(offset + r["line"] - 1) if r["line"] else doc.firstBlock()
        cur = QTextCursor(block)
        cur.select(QTextCursor.SelectionType.LineUnderCursor)
        self.source.setTextCursor(cur)
        self.source.centerCursor()

    def retranslate(self) -> None:
        self.refresh()


def kernel_definition(lines: list[str], kernel: str) -> int:
    """The 1-based line of ``kernel``'s ``__global__`` definition (else its first mention, else 1)."""
    import re

    word = re.compile(rf"\b{re.escape(kernel)}\b")
    for n, ln in enumerate(lines, 1):
        if word.search(ln) and "__global__" in " ".join(lines[max(0, n - 3):n]):
            return n
    return next((n for n, ln in enumerate(lines, 1) if word.search(ln)), 1)
