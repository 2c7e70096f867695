"""The Source panel for a recorded trace: the CUDA source with per-line figures, and a table
of the lines that ran, the code first; clicking a line steps the picture to its first warp
instruction and shows the line's PTX under the source. Nsight Compute's Source page, with the
picture.

The table's columns sort on a click of their header (numbers largest first, the code and the
place in file order; a second click reverses). It opens sorted by bank conflicts, ties by
sectors: conflicts and sectors are different costs and never added into one number.

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

COLUMNS = ("code", "bank conflicts", "sectors", "wavefronts", "warp instructions", "sector efficiency",
           "source line")
CODE, CONFLICTS, SECTORS = 0, 1, 2
TEXT_COLUMNS = (0, 6)                 # sorted A to Z first; the others largest first
DEFAULT_SORT = CONFLICTS              # then sectors (the key of each column breaks ties)
CODE_WIDTH = 420                      # the code column's widest (px): the figures stay beside it
CODE_NARROWEST = 120                  # ... and its narrowest: longer code is elided in the middle
CODE_LEAST = 64                       # ... narrower still (to this) where the panel is narrow (a 1280x720
                                      # window: 316 px), so the wavefronts column stays in view whole
WIDE = 900                            # from this width (px) the table stands beside the code, not above it
FIRST_FIGURES = (1, 2, 3)             # the columns that stay in view beside the code: conflicts, sectors, wavefronts
TABLE_ROWS = 12                       # a narrow panel gives the table room for this many rows first


class _LineItem(QTreeWidgetItem):
    """A row of the table: it sorts by ``keys[column]`` (numbers as numbers, ties broken by
    the other costs, then the line)."""

    keys: tuple = ()

    def __lt__(self, other) -> bool:  # Qt's sort
        tree = self.treeWidget()
        c = tree.sortColumn() if tree is not None else DEFAULT_SORT
        return self.keys[c] < other.keys[c]


def line_keys(r: dict, code: str) -> tuple:
    """The sort key of each column for row ``r`` (a ``source_lines`` row)."""
    where = (str(r["file"]).rsplit("/", 1)[-1], r["line"])
    conf, sec = r["bank_conflicts"], r["sectors"]
    tie = (-where[1],)                 # equal costs: the earlier line first when largest-first
    return ((code.lower(), where), (conf, sec) + tie, (sec, conf) + tie, (r["wavefronts"], conf, sec) + tie,
            (r["warp_instructions"],) + tie, (r["sector_efficiency"], sec) + tie, where)


class TraceSourcePanel(QWidget):
    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.lines = QTreeWidget()
        self.lines.setObjectName("traceLines")
        self.lines.setRootIsDecorated(False)
        self.lines.setUniformRowHeights(True)
        self.lines.header().setStretchLastSection(False)  # the last column beside the others
        # long code loses its middle ("a = tl.load(…, other=0.0)"), not its end
        self.lines.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.lines.setColumnCount(len(COLUMNS))
        head = self.lines.header()
        head.setSectionsClickable(True)
        head.setSortIndicatorShown(True)
        head.sectionClicked.connect(self.sort_by)
        self.sort_column, self.sort_order = DEFAULT_SORT, Qt.SortOrder.DescendingOrder
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
        # the line's PTX under the code; the table above them in a narrow dock (the right-hand
        # panels, where it opens), beside them in a wide one (``WIDE``)
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.source)
        side.addWidget(self.ptx)
        side.setStretchFactor(0, 3)
        side.setStretchFactor(1, 1)
        split = self.split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.lines)
        split.addWidget(side)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self._split_sized: tuple | None = None   # (orientation, rows, height) the splitter was last sized for
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.note)
        lay.addWidget(split, 1)
        self.rows: list[dict] = []
        self.lines.itemClicked.connect(self._clicked)
        self.lines.itemActivated.connect(self._clicked)
        session.analysisChanged.connect(self.refresh)
        session.changed.connect(self.refresh)
        # the instruction on screen (Instruction box, keys, the picture) selects its line
        session.positionChanged.connect(self.follow_cursor)
        self.followed: int | None = None         # the row the cursor's instruction belongs to
        self.retranslate()

    def _header_labels(self) -> None:
        """The columns' names; in a narrow panel on two lines ("bank / conflicts"), so the
        figures beside the code fit (the full name in the tooltip)."""
        narrow = self.width() < WIDE
        self.lines.setHeaderLabels([_two_lines(tr(c)) if narrow else tr(c) for c in COLUMNS])
        head = self.lines.headerItem()
        for k, c in enumerate(COLUMNS):
            head.setToolTip(k, tr(c))

    def refresh(self) -> None:
        s = self.session
        self.followed = None
        self._header_labels()
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
        from ..trace.detail import source_line

        self.rows = [r for r in source_lines(an) if r["warp_instructions"]]
        self.lines.clear()
        header = s.trace.header
        mono = self.source.font()
        for k, r in enumerate(self.rows):
            code = source_line(header, {"file": r["file"], "line": r["line"]}) or r["source"]
            eff = f"{r['sector_efficiency'] * 100:.1f}%" if r["sectors"] else ""
            item = _LineItem([code, f"{r['bank_conflicts']:,}", f"{r['sectors']:,}", f"{r['wavefronts']:,}",
                              f"{r['warp_instructions']:,}", eff, r["source"]])
            item.keys = line_keys(r, code)
            item.setFont(CODE, mono)
            item.setToolTip(CODE, f"{r['source']}  {code}")
            for c in range(len(COLUMNS)):
                if c not in TEXT_COLUMNS:
                    item.setTextAlignment(c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setData(0, Qt.ItemDataRole.UserRole, k)
            self.lines.addTopLevelItem(item)
        self._sort()
        self._fit()
        self.note.setText(self._sort_note() + self._unrecorded_note())
        self.source.setPlainText(self.annotated())
        self.source.horizontalScrollBar().setValue(0)
        self.ptx.setPlainText("")
        self._split_sized = None
        self._size_split()
        self.follow_cursor()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """The table beside the code in a wide panel, above it in a narrow one; the number
        columns sized to their contents, the code column what is left of the room beside the
        first figures (conflicts, sectors, wavefronts), elided in the middle, never wider than
        its contents or ``CODE_WIDTH``."""
        wide = self.width() >= WIDE
        want = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.split.orientation() != want:
            self.split.setOrientation(want)
            self._split_sized = None
        if self.lines.headerItem().text(CONFLICTS) != (tr(COLUMNS[CONFLICTS]) if wide
                                                        else _two_lines(tr(COLUMNS[CONFLICTS]))):
            self._header_labels()
        if self.rows:
            for c in range(1, len(COLUMNS)):
                self.lines.setColumnWidth(c, self._content_width(c))
            room = (self.split.sizes()[0] if wide else self.width()) - 4
            room -= self.lines.verticalScrollBar().sizeHint().width()
            figures = sum(self.lines.columnWidth(c) for c in FIRST_FIGURES)
            self.lines.resizeColumnToContents(CODE)
            content = self.lines.columnWidth(CODE)
            least = max(CODE_LEAST, min(CODE_NARROWEST, room - figures))
            self.lines.setColumnWidth(CODE, max(least, min(content, CODE_WIDTH, room - figures)))
        self._size_split()

    def _content_width(self, c: int) -> int:
        """Column ``c`` as wide as its widest number and its name's longest line (Qt's own
        fit keeps room for the sort arrow in every column: the wavefronts fell off screen)."""
        fm = self.lines.fontMetrics()
        head = self.lines.header()
        name = self.lines.headerItem().text(c)
        w = max([fm.horizontalAdvance(line) for line in name.split("\n")]
                + [fm.horizontalAdvance(self.lines.topLevelItem(i).text(c))
                   for i in range(self.lines.topLevelItemCount())])
        pad = 2 * self.lines.style().pixelMetric(self.lines.style().PixelMetric.PM_HeaderMargin, None, head) + 8
        if c == head.sortIndicatorSection():
            pad += fm.height()                 # the sort arrow
        return w + pad

    def _size_split(self) -> None:
        """A narrow panel: the table gets the height of its rows (up to ``TABLE_ROWS``) before the
        code and the PTX share the rest (the table showed one or two rows at 1920x1080)."""
        if not self.rows or self.split.orientation() != Qt.Orientation.Vertical:
            return
        total = sum(self.split.sizes())
        key = (self.split.orientation(), len(self.rows), total)
        if total <= 0 or key == self._split_sized:
            return
        self._split_sized = key
        first = self.lines.topLevelItem(0)
        row = self.lines.visualItemRect(first).height() if first is not None else 0
        row = row or self.lines.fontMetrics().height() + 4
        head = self.lines.header().sizeHint().height()
        bar = self.lines.horizontalScrollBar().sizeHint().height()
        want = head + row * min(len(self.rows), TABLE_ROWS) + bar + 2 * self.lines.frameWidth() + 2
        table = min(want, round(total * 0.7))
        self.split.setSizes([table, total - table])

    def follow_cursor(self) -> None:
        """Select the line of the instruction on screen (chosen in the Instruction box, with
        the keys or by a click here), scroll the table and the code to it and show its PTX."""
        s = self.session
        if not self.rows or not s.is_trace or s.trace is None:
            return
        d = s.detail
        if d is None or getattr(d, "access", None) is None:
            return
        sid = d.access.index                    # the static instruction on screen
        k = next((k for k, r in enumerate(self.rows) if sid in r["instructions"]), None)
        if k is None or k == self.followed:
            return
        self.followed = k
        for i in range(self.lines.topLevelItemCount()):
            item = self.lines.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole) == k:
                self.lines.setCurrentItem(item)
                self.lines.scrollToItem(item)
                break
        r = self.rows[k]
        self.ptx.setPlainText(tr("PTX of {where}:", where=r["source"]) + "\n" + "\n".join(r["ptx"]))
        self._select_source_line(r)

    def sort_by(self, column: int) -> None:
        """A click on a column's header: sort by it, numbers largest first and the code and the
        place A to Z; a click on the column already sorted by reverses it."""
        if not 0 <= column < len(COLUMNS):
            return
        if column == self.sort_column:
            self.sort_order = (Qt.SortOrder.AscendingOrder if self.sort_order == Qt.SortOrder.DescendingOrder
                               else Qt.SortOrder.DescendingOrder)
        else:
            self.sort_column = column
            self.sort_order = Qt.SortOrder.AscendingOrder if column in TEXT_COLUMNS else Qt.SortOrder.DescendingOrder
        self._sort()
        if self.rows:
            self._fit()                     # the sort arrow moved to this column
            self.note.setText(self._sort_note() + self._unrecorded_note())

    def _sort(self) -> None:
        self.lines.sortItems(self.sort_column, self.sort_order)
        self.lines.header().setSortIndicator(self.sort_column, self.sort_order)

    def _sort_note(self) -> str:
        col = tr(COLUMNS[self.sort_column])
        if self.sort_column == DEFAULT_SORT and self.sort_order == Qt.SortOrder.DescendingOrder:
            return tr("Sorted by bank conflicts, then sectors (click a column's header to sort by it). Click a "
                      "line to see its first warp instruction in the picture.")
        return tr("Sorted by {column} (click a column's header to sort by it). Click a line to see its first "
                  "warp instruction in the picture.", column=col)

    def _unrecorded_note(self) -> str:
        """A line on the shared reads no record holds (``viz.trace.unrecorded``), or ""."""
        from ..trace.unrecorded import unrecorded

        found = unrecorded(self.session.trace.header)
        if not found:
            return ""
        where = ", ".join(f"{u['file']}:{u['line']}" for u in found[:4])
        return "\n" + tr("Not recorded: {what} at {where} read shared memory through descriptors (tl.dot); those "
                         "reads are in no figure here.", what=", ".join(sorted({u["mnemonic"] for u in found})),
                         where=where)

    def visible_rows(self) -> list[dict]:
        """The rows in the table's order (as sorted on screen)."""
        out = []
        for i in range(self.lines.topLevelItemCount()):
            out.append(self.rows[self.lines.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole)])
        return out

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
        from ..trace.schema import shown_sources

        h = self.session.trace.header
        sources = dict(shown_sources(h))        # the code the instructions' lines are in first, the PTX after
        from ..trace.unrecorded import note, unrecorded

        by_line = {}
        for r in self.rows:
            by_line.setdefault(str(r["file"]).rsplit("/", 1)[-1], {})[r["line"]] = r
        missing = {}                # lines whose shared reads no record holds (tl.dot's wgmma)
        for u in unrecorded(h):
            missing.setdefault(u["file"], {}).setdefault(u["line"], []).append(note(u))
        out = []
        for name, text in sources.items():
            figs = by_line.get(name, {})
            if len(sources) > 1:
                out.append(f"// {name}")
            for n, code in enumerate(str(text).splitlines(), 1):
                r = figs.get(n)
                tag = (tr("wf {wf} conf {conf} sec {sec}", wf=r["wavefronts"], conf=r["bank_conflicts"],
                          sec=r["sectors"]) if r else "")
                tag = "; ".join(([tag] if tag else []) + missing.get(name, {}).get(n, []))
                out.append(f"{n:>4}  {code}" + (f"    ◀ {tag}" if tag else ""))
        left = h.get("sources_left_out") or []
        if left:            # files the line information named that the trace does not carry (a .env)
            out.append("")
            out += [tr("// not carried in the trace: {file} ({why})", file=str(d.get("file", ""))[:300],
                       why=str(d.get("why", ""))[:300]) for d in left[:64] if isinstance(d, dict)]
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
        from ..trace.schema import shown_sources

        shown = dict(shown_sources(self.session.trace.header))     # as ``annotated`` lists them
        sources = list(shown)
        offset = 0
        if len(sources) > 1 and name in sources:
            k = sources.index(name)
            for other in sources[:k]:
                offset += 1 + len(shown[other].splitlines())
            offset += 1
        block = doc.findBlockByNumber(offset + r["line"] - 1) if r["line"] else doc.firstBlock()
        cur = QTextCursor(block)
        cur.select(QTextCursor.SelectionType.LineUnderCursor)
        self.source.setTextCursor(cur)
        self.source.centerCursor()
        self.source.horizontalScrollBar().setValue(0)      # the code in view, not the figures after it

    def retranslate(self) -> None:
        self.refresh()


def _two_lines(text: str) -> str:
    """A column name on two lines, split at the space nearest its middle ("bank\nconflicts");
    a name without a space (Chinese, "sectors") as it is."""
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if not spaces:
        return text
    i = min(spaces, key=lambda k: abs(k - len(text) / 2))
    return text[:i] + "\n" + text[i + 1:]


def kernel_definition(lines: list[str], kernel: str) -> int:
    """The 1-based line of ``kernel``'s ``__global__`` definition (else its first mention, else 1)."""
    import re

    word = re.compile(rf"\b{re.escape(kernel)}\b")
    for n, ln in enumerate(lines, 1):
        if word.search(ln) and "__global__" in " ".join(lines[max(0, n - 3):n]):
            return n
    return next((n for n, ln in enumerate(lines, 1) if word.search(ln)), 1)
