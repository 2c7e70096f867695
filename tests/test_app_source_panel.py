"""The Source panel of a recorded trace, used as a user would at a laptop's 1280x720 and a
desktop's 1920x1080: the code comes first (a code column in the table, the code pane in view),
bank conflicts and sectors are separate columns, and a click on a column's header sorts by it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QTextCursor

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from viz.trace.analysis import analyze_trace, source_lines
from viz.trace.detail import source_line
from viz.trace.tracefile import load as load_trace

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
# one line with 512 sectors and no conflict, one with 384 conflicts and 128 sectors: adding the
# two would put the sectors' line first
QUAD = TRACES / "quad_read_volatile.wvtrace"


def open_panel(qtbot, path: Path, size: tuple[int, int]):
    w = make_window(qtbot, str(path))
    w.resize(*size)
    w.docks["source"].show()
    w.docks["source"].raise_()
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)
    panel = w.trace_source
    qtbot.waitUntil(lambda: panel.lines.topLevelItemCount() > 0, timeout=10000)
    qtbot.waitUntil(lambda: panel.isVisible() and panel.lines.viewport().width() > 0, timeout=5000)
    return w, panel


def column_order(panel, column: int) -> list[str]:
    return [panel.lines.topLevelItem(i).text(column) for i in range(panel.lines.topLevelItemCount())]


def click_header(qtbot, panel, column: int) -> None:
    head = panel.lines.header()
    x = head.sectionViewportPosition(column) + head.sectionSize(column) // 2
    assert 0 <= x < head.viewport().width(), "the column's header is off screen"
    qtbot.mouseClick(head.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, head.height() // 2))


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_code_column_and_code_pane_are_in_view(qtbot, user_dirs, size):
    w, panel = open_panel(qtbot, QUAD, size)
    tree = panel.lines
    head = tree.header()
    code = head.logicalIndex(0)
    assert head.model().headerData(code, Qt.Orientation.Horizontal) == "code"
    # the code column's header and a cell of it lie inside the table's viewport
    vp = tree.viewport().rect()
    x0 = head.sectionViewportPosition(code)
    assert 0 <= x0 and x0 + min(head.sectionSize(code), 80) <= vp.width()
    item = tree.topLevelItem(0)
    cell = tree.visualItemRect(item)
    cell = QRect(x0, cell.top(), head.sectionSize(code), cell.height())
    assert vp.intersected(cell).width() >= min(80, cell.width()) and vp.contains(cell.topLeft())
    # it holds the line's code, not its place
    an = analyze_trace(load_trace(QUAD))
    rows = {r["source"]: r for r in source_lines(an) if r["warp_instructions"]}
    place = item.text(6)
    expect = source_line(w.session.trace.header, {"file": rows[place]["file"], "line": rows[place]["line"]})
    assert expect and item.text(code) == expect
    # the code pane is wide enough to read and, after a click on a line, shows the code (not the
    # figures after it) at its left edge
    tree.itemClicked.emit(item, 0)
    src = panel.source
    # the code spans the panel (the table above it in the narrow right-hand dock; beside it when wide)
    if panel.width() < 900:
        assert src.viewport().width() >= 0.85 * panel.width() and tree.mapTo(panel, QPoint(0, tree.height())).y() <= src.mapTo(panel, QPoint(0, 0)).y()
    else:
        assert src.viewport().width() >= 0.4 * panel.width()
    assert src.horizontalScrollBar().value() == 0
    start = QTextCursor(src.textCursor().block())              # the selected line's first character
    assert src.viewport().rect().contains(src.cursorRect(start).center())
    selected = src.textCursor().selectedText()
    assert expect in selected and selected.lstrip().startswith(str(rows[place]["line"]))
    w.close()


def test_conflicts_and_sectors_are_columns_of_their_own_sorted_by_a_click(qtbot, user_dirs):
    w, panel = open_panel(qtbot, QUAD, (1280, 720))
    an = analyze_trace(load_trace(QUAD))
    rows = [r for r in source_lines(an) if r["warp_instructions"]]
    # the opening order: most bank conflicts first, then most sectors (never their sum)
    shown = panel.visible_rows()
    assert [(r["bank_conflicts"], r["sectors"]) for r in shown] == \
        sorted(((r["bank_conflicts"], r["sectors"]) for r in rows), reverse=True)
    assert shown[0]["bank_conflicts"] == 384 and shown[0]["sectors"] == 128     # the 512-sector line second
    assert shown[1]["sectors"] == 512 and shown[1]["bank_conflicts"] == 0
    assert column_order(panel, 1) == [f"{r['bank_conflicts']:,}" for r in shown]
    assert column_order(panel, 2) == [f"{r['sectors']:,}" for r in shown]
    assert "bank conflicts, then sectors" in panel.note.text()
    # a click on "sectors": the most sectors first
    click_header(qtbot, panel, 2)
    shown = panel.visible_rows()
    assert [r["sectors"] for r in shown] == sorted((r["sectors"] for r in rows), reverse=True)
    assert shown[0]["sectors"] == 512
    assert panel.lines.header().sortIndicatorSection() == 2
    assert "Sorted by sectors" in panel.note.text()
    # a second click reverses it
    click_header(qtbot, panel, 2)
    assert [r["sectors"] for r in panel.visible_rows()] == sorted(r["sectors"] for r in rows)
    # the code column sorts A to Z
    click_header(qtbot, panel, 0)
    codes = column_order(panel, 0)
    assert codes == sorted(codes, key=str.lower)
    # clicking a line still steps to it, whatever the order
    item = panel.lines.topLevelItem(0)
    r = panel.rows[item.data(0, Qt.ItemDataRole.UserRole)]
    panel.lines.itemClicked.emit(item, 0)
    assert w.session.detail.access.index in r["instructions"]
    w.close()
