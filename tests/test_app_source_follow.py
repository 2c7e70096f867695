"""The Source panel docked as it opens: at 1920x1080 the table shows ten
rows or more, its code column elided in the middle with the wavefronts column in view, and
the line of the instruction on screen is selected (table, code and PTX) when the instruction
is chosen with the keys or the Instruction box, not only after a click."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[1]
MANY = ROOT / "assets" / "traces" / "numba_block_sum.wvtrace"       # 28 source lines that ran
QUAD = ROOT / "assets" / "traces" / "quad_read_volatile.wvtrace"


def open_docked(qtbot, path: Path, size: tuple[int, int]):
    w = make_window(qtbot, str(path))
    w.resize(*size)
    qtbot.waitUntil(lambda: (w.width(), w.height()) == size)
    w.default_layout()                 # the panels as a first start at this size has them
    w.docks["source"].show()
    w.docks["source"].raise_()
    panel = w.trace_source
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=30000)
    qtbot.waitUntil(lambda: panel.lines.topLevelItemCount() > 0 and panel.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: panel.lines.viewport().height() > 0)
    return w, panel


def whole_rows(tree) -> int:
    vp = tree.viewport().rect()
    n = 0
    for i in range(tree.topLevelItemCount()):
        r = tree.visualItemRect(tree.topLevelItem(i))
        if r.isValid() and vp.contains(r.topLeft()) and r.bottom() <= vp.bottom():
            n += 1
    return n


@pytest.mark.parametrize("size", [(1920, 1080), (1600, 980)])
def test_the_docked_table_shows_ten_rows_and_the_wavefronts(qtbot, user_dirs, size):
    w, panel = open_docked(qtbot, MANY, size)
    tree = panel.lines
    assert tree.topLevelItemCount() == 28
    assert whole_rows(tree) >= 10
    head = tree.header()
    vp = tree.viewport().width()
    for c in (0, 1, 2, 3):        # code, bank conflicts, sectors, wavefronts
        assert head.sectionViewportPosition(c) + head.sectionSize(c) <= vp, tree.headerItem().text(c)
    assert tree.headerItem().text(3) == "wavefronts"
    assert tree.headerItem().text(1) == "bank\nconflicts"            # two lines in the narrow dock
    assert tree.headerItem().toolTip(1) == "bank conflicts"
    # long code is elided in the middle, not cut at its end
    assert tree.textElideMode() == Qt.TextElideMode.ElideMiddle
    fm = tree.fontMetrics()
    longest = max((tree.topLevelItem(i).text(0) for i in range(28)), key=fm.horizontalAdvance)
    assert fm.horizontalAdvance(longest) > head.sectionSize(0) >= 120
    w.close()


def current_row(panel) -> dict:
    item = panel.lines.currentItem()
    assert item is not None and item.isSelected()
    return panel.rows[item.data(0, Qt.ItemDataRole.UserRole)]


def assert_follows(w, panel) -> dict:
    r = current_row(panel)
    assert w.session.detail.access.index in r["instructions"]
    tree = panel.lines
    assert tree.viewport().rect().intersects(tree.visualItemRect(tree.currentItem()))
    assert panel.ptx.toPlainText().startswith(f"PTX of {r['source']}:")
    sel = panel.source.textCursor()
    assert sel.hasSelection() and sel.selectedText().lstrip().startswith(str(r["line"]))
    return r


def test_the_current_instruction_selects_its_line_without_a_click(qtbot, user_dirs):
    w, panel = open_docked(qtbot, MANY, (1920, 1080))
    s = w.session
    assert s.cursor.instruction == 0
    first = assert_follows(w, panel)              # at once: not line 1 of the listing until a click
    seen = {first["line"]}
    for _ in range(12):                            # the keys: Down steps warp instructions
        before = s.cursor.instruction
        qtbot.keyClick(w.view, Qt.Key.Key_Down)
        qtbot.waitUntil(lambda: s.cursor.instruction == before + 1)
        seen.add(assert_follows(w, panel)["line"])
    assert len(seen) >= 3
    # the Instruction box (it counts from 1)
    box = w.timeline.instr
    box.setValue(box.maximum())
    qtbot.waitUntil(lambda: s.cursor.instruction == box.maximum() - 1)
    last = assert_follows(w, panel)
    box.setValue(1)
    qtbot.waitUntil(lambda: s.cursor.instruction == 0)
    assert assert_follows(w, panel) == first
    assert last is not None
    w.close()


def test_a_click_still_steps_the_picture_and_the_selection_stays(qtbot, user_dirs):
    w, panel = open_docked(qtbot, QUAD, (1280, 720))
    item = panel.lines.topLevelItem(panel.lines.topLevelItemCount() - 1)
    r = panel.rows[item.data(0, Qt.ItemDataRole.UserRole)]
    panel.lines.itemClicked.emit(item, 0)
    qtbot.waitUntil(lambda: w.session.detail.access.index in r["instructions"])
    assert current_row(panel) is r
    w.close()
