"""The figures panel: the same numbers as `warpviz analyze`, each with its one-line why."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from ..frames import kind_name, op_name, space_name
from ..i18n import sep, tr
from ..kinds import KIND_METRIC_LABELS
from ..report import access_size_text, explain_access, instruction_numbers, numbers_text
from ..scenario import warnings
from ..trace.schema import records_complete
from .gpu_texts import partial_text, unrecorded_text
from .state import Session
from .source import op_label

METRIC_LABELS = {
    "smsp__inst_executed_op_shared_ld.sum": "shared load instructions",
    "smsp__inst_executed_op_shared_st.sum": "shared store instructions",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "shared load wavefronts",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "shared store wavefronts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared load bank conflicts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "shared store bank conflicts",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "global load requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "global load sectors",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "global store requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "global store sectors",
    "smsp__inst_executed_op_ldsm.sum": "ldmatrix instructions (LDSM)",
    "smsp__inst_executed_op_shared_stsm.sum": "stmatrix instructions (STSM)",
}
METRIC_LABELS.update(KIND_METRIC_LABELS)   # cp.async, shared atomics (viz.kinds)

# Figure names as report.explain_access writes them, for the catalog.
FIGURE_NAMES = ("warp instructions", "active lanes", "wavefronts", "phases", "bank conflicts", "requests",
                "sectors", "lines", "bytes requested", "bytes moved", "sector efficiency")


def TERM_TIPS() -> dict[str, str]:  # noqa: N802 - a translated constant
    """The tooltip of a figure's name: the term, glossed where a classroom says it otherwise
    (bank 冲突 beside 存储体冲突; 波前 is AMD's name for a warp too). docs/guide/glossary.zh.md
    has them all."""
    return {"wavefronts": tr("A wavefront is one pass of the shared-memory banks (L1) serving part of a warp's "
                             "request: one per phase, more where a bank must deliver several words. Not AMD's "
                             "\"wavefront\", which is a warp."),
            "bank conflicts": tr("Bank conflicts: the wavefronts beyond one per phase, because a bank must deliver "
                                 "several distinct words in one phase.")}


def figure_name(name: str) -> str:
    """A figure's name in the first column ("" for a note row)."""
    return tr(name) if name else ""


def metric_label(metric: str) -> str:
    """A total's label: its plain name where it has one, else Nsight Compute's metric name."""
    return tr(METRIC_LABELS[metric]) if metric in METRIC_LABELS else metric


def scenario_rows(sc, an) -> list[tuple[int, list[str], list[tuple[str, str, str]]]]:
    """A scenario's figures as the panel shows them: per access (its index, the three columns
    of its row, its figures as (name, value, why))."""
    numbers = instruction_numbers(sc)
    out = []
    for d in an.per_access():
        a = sc.accesses[d.index]
        arr = sc.array(d.array)
        out.append((d.index, [tr("access {k}", k=d.index), op_label(a) if a.matrix is not None else op_name(d.op),
                                 f"{a.text}   {sep(' (').strip()}{arr.describe()}{sep(', ')}{access_size_text(d)}"
                                 f"{sep(')')}   [{numbers_text(numbers[d.index])}]"],
                    explain_access(d)))
    return out


def trace_rows(an) -> list[tuple[int, list[str], list[tuple[str, str, str]]]]:
    """A trace's figures as the panel shows them: per executed instruction of the traced kernel
    (its static index; its row says its number, as analyze and the picture do; the three
    columns of its row, its figures as (name, value, why))."""
    from ..trace.analysis import explain_trace

    out = []
    for d in an.per_access():
        ptx = " ".join(d.ptx.rstrip(";").split())
        out.append((d.index, [tr("instruction {k}", k=d.number), d.source,
                                 f"{ptx}   {sep(' (').strip()}"
                                 + tr("{kind} {space} {bytes} B", kind=kind_name(d.kind), space=space_name(d.space),
                                      bytes=d.access_bytes) + sep(")")],
                    explain_trace(d)))
    return out


class FiguresPanel(QWidget):
    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.warn = QLabel()            # allowed, but no GPU could run it (e.g. a 4 TB array)
        self.warn.setObjectName("figuresWarnings")
        self.warn.setWordWrap(True)
        self.warn.setTextFormat(Qt.TextFormat.PlainText)
        self.warn.setStyleSheet("QLabel { background: #fef3c7; color: #78350f; border: 1px solid #d97706; "
                                "border-radius: 3px; padding: 4px; }")
        self.warn.hide()
        # a trace whose kernel ran memory instructions no kind records (complete: false)
        self.unrecorded = QLabel()
        self.unrecorded.setObjectName("figuresUnrecorded")
        self.unrecorded.setWordWrap(True)
        self.unrecorded.setTextFormat(Qt.TextFormat.PlainText)
        self.unrecorded.setStyleSheet("QLabel { background: #fee2e2; color: #7f1d1d; border: 1px solid #dc2626; "
                                      "border-radius: 3px; padding: 4px; }")
        self.unrecorded.hide()
        self.tree = QTreeWidget()
        self.tree.setObjectName("figures")
        self.tree.setColumnCount(3)
        self.tree.setRootIsDecorated(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.header().setStretchLastSection(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.status)
        lay.addWidget(self.warn)
        lay.addWidget(self.unrecorded)
        lay.addWidget(self.tree, 1)
        session.analysisChanged.connect(self.refresh)
        session.changed.connect(self.refresh)
        session.progress.connect(self._progress)
        session.positionChanged.connect(self._highlight)
        self.refresh()

    def _progress(self, fraction: float, text: str) -> None:
        if self.session.busy:
            self.status.setText(tr("Analysing the whole launch: {pct}% ({what})", pct=int(fraction * 100),
                                   what=text))

    def refresh(self) -> None:
        self.tree.setHeaderLabels([tr("Figure"), tr("Value"), tr("Why")])
        an = self.session.analysis
        sc = self.session.scenario
        if sc is None:
            self.tree.clear()
            self.status.setText("")
            self.warn.hide()
            self.unrecorded.hide()
            return
        if self.session.is_trace:
            self.warn.hide()
            text = unrecorded_text(self.session.trace.header) if getattr(self.session, "trace", None) else ""
            self.unrecorded.setText(text)
            self.unrecorded.setVisible(bool(text))
            self._refresh_trace()
            return
        self.unrecorded.hide()
        found = warnings(sc)
        self.warn.setText("\n".join(tr("Warning: {w}", w=w) for w in found))
        self.warn.setVisible(bool(found))
        if an is None or an.scenario is not sc:
            # Keep the previous figures (dimmed) until the new analysis arrives: no flicker while typing.
            self.tree.setEnabled(False)
            self.status.setText(tr("Analysing the whole launch…"))
            return
        self.tree.setEnabled(True)
        self.tree.clear()
        lw = sc.launch
        self.status.setText(tr("Whole launch: {threads} threads, {warps} warps ({wpb} per block)",
                               threads=f"{lw.threads:,}", warps=f"{lw.blocks * lw.warps_per_block:,}",
                               wpb=lw.warps_per_block))
        bold = QFont()
        bold.setBold(True)
        for index, head, figures in scenario_rows(sc, an):
            top = QTreeWidgetItem(head)
            top.setFont(0, bold)
            top.setFont(2, bold)
            top.setData(0, Qt.ItemDataRole.UserRole, ("access", index))
            self._add_access(top, index, figures)
        self._add_totals(an.metrics.items(), bold)
        self._highlight()

    def _add_access(self, top: QTreeWidgetItem, index: int, figures) -> None:
        """An access's (or traced instruction's) figures under its row: name, value, why."""
        for name, value, why in figures:
            item = QTreeWidgetItem([figure_name(name), value, why])
            item.setToolTip(2, why)
            tip = TERM_TIPS().get(name)
            if tip:
                item.setToolTip(0, tip)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setData(0, Qt.ItemDataRole.UserRole, ("figure", index, name))
            top.addChild(item)
        self.tree.addTopLevelItem(top)
        top.setExpanded(True)

    def _add_totals(self, metrics, bold: QFont) -> None:
        """The whole launch's totals under Nsight Compute's metric names."""
        tot = QTreeWidgetItem([tr("Totals"), "", tr("Nsight Compute metric names, whole launch")])
        tot.setFont(0, bold)
        tot.setData(0, Qt.ItemDataRole.UserRole, ("totals",))
        for k, v in metrics:
            item = QTreeWidgetItem([metric_label(k), f"{v:,}", k])
            item.setToolTip(2, k)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            item.setData(0, Qt.ItemDataRole.UserRole, ("metric", k))
            tot.addChild(item)
        self.tree.addTopLevelItem(tot)
        tot.setExpanded(True)

    def _refresh_trace(self) -> None:
        """A recorded trace: per static instruction the figures of `warpviz analyze FILE.wvtrace`,
        with what each counts, then the ten metrics and the other counters."""
        an = self.session.trace_analysis
        if an is None or an.trace is not self.session.trace.trace:
            self.tree.setEnabled(False)
            self.status.setText(tr("Analysing the whole launch…"))
            return
        self.tree.setEnabled(True)
        self.tree.clear()
        h = an.trace.header
        lw = self.session.scenario.launch
        self.status.setText(tr("Trace of {kernel} recorded on {gpu}: {records} warp-level executions, "
                               "{warps} warps ({wpb} per block)", kernel=h.get("kernel", "?"),
                               gpu=h.get("gpu", {}).get("name", "?"), records=f"{an.trace.records:,}",
                               warps=f"{lw.blocks * lw.warps_per_block:,}", wpb=lw.warps_per_block))
        if not records_complete(h):      # blocks or executions missing (unrecorded instructions: the banner above)
            self.warn.setText(tr("Partial trace: {note}", note=partial_text(h.get("note", ""))))
            self.warn.show()
        bold = QFont()
        bold.setBold(True)
        for index, head, figures in trace_rows(an):
            top = QTreeWidgetItem(head)
            top.setFont(0, bold)
            top.setFont(2, bold)
            top.setData(0, Qt.ItemDataRole.UserRole, ("access", index))
            self._add_access(top, index, figures)
        self._add_totals(list(an.metrics.items()) + list(an.other_metrics.items()), bold)
        self._highlight()

    def _highlight(self) -> None:
        d = self.session.detail
        if d is None:
            return
        for i in range(self.tree.topLevelItemCount()):
            it = self.tree.topLevelItem(i)
            data = it.data(0, Qt.ItemDataRole.UserRole)
            current = data is not None and data[0] == "access" and data[1] == d.access.index
            f = it.font(0)
            f.setUnderline(current)
            it.setFont(0, f)

    def values(self) -> dict:
        """What the panel shows: {(access, figure): value text} and {metric: value text} (tests)."""
        out = {}
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                it = top.child(j)
                data = it.data(0, Qt.ItemDataRole.UserRole)
                if data and data[0] == "figure" and data[2]:
                    out[(data[1], data[2])] = it.text(1)
                elif data and data[0] == "metric":
                    out[data[1]] = it.text(1)
        return out

    def retranslate(self) -> None:
        self.refresh()
