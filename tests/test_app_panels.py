"""Panels: figures equal `warpviz analyze`, the heat map jumps, sweeps, compare, library."""

from __future__ import annotations

import json
import subprocess
import sys

from PySide6.QtCore import QPointF, Qt

from app_helpers import after, make_window, user_dirs, wait_analysis, window  # noqa: F401 - fixtures
from viz.engine import analyze
from viz.report import explain_access
from viz.scenario import load


def test_figures_on_screen_equal_warpviz_analyze(qtbot, window):
    out = subprocess.run([sys.executable, "-m", "viz.cli", "analyze", "transpose-tile", "--json"],
                         capture_output=True, text=True, check=True, timeout=600)
    doc = json.loads(out.stdout)
    shown = window.figures.values()
    for k, v in doc["metrics"].items():
        assert shown[k] == f"{v:,}"
    for d in doc["accesses"]:
        for name, value, _why in explain_access(d):
            if name:
                assert shown[(d["index"], name)] == value


def test_figures_follow_an_edit(qtbot, window):
    window.editor.fields[("params", "PAD")].widget.setText("1")
    window.editor.fields[("params", "PAD")].widget.textEdited.emit("1")
    wait_analysis(qtbot, window)
    expected = analyze(load("transpose-tile", {"PAD": "1"})).metrics
    shown = window.figures.values()
    for k, v in expected.items():
        assert shown[k] == f"{v:,}"


def test_heat_map_click_jumps_to_that_warp(qtbot, window):
    lp = window.launch
    window.docks["launch"].show()
    window.docks["launch"].raise_()
    qtbot.waitUntil(lambda: lp.glw.isVisible())
    lp.plot.autoRange()
    after(qtbot, 50)
    block, warp = 10, 3  # grid 8x8: block 10 is (2, 1)
    x, y = lp.cell_of(block, warp)
    scene_pt = lp.image.mapToScene(QPointF(x + 0.5, y + 0.5))
    view_pt = lp.glw.mapFromScene(scene_pt)
    qtbot.mouseClick(lp.glw.viewport(), Qt.MouseButton.LeftButton, pos=view_pt)
    assert (window.session.cursor.block, window.session.cursor.warp) == (block, warp)
    assert window.session.detail.block_xyz == (2, 1, 0)


def test_heat_map_values_are_the_per_warp_figures(qtbot, window):
    window.session.go(instr=8)  # the column read: 32 wavefronts per warp
    vals, _unit = window.launch.per_warp()
    assert (vals == 32).all()
    window.launch.mode.setCurrentIndex(1)
    vals, _unit = window.launch.per_warp()
    assert (vals == 4 * 32).all()


def test_sweep_a_param_plots_the_figure(qtbot, window):
    sw = window.sweep
    i = next(k for k in range(sw.dim.count()) if sw.dim.itemData(k).target == "PAD")
    sw.dim.setCurrentIndex(i)
    sw.values.setText("0:3")
    sw.figure.setCurrentIndex(sw.figure.findData("wavefronts per shared instruction"))
    qtbot.mouseClick(sw.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(sw.results) == 3, timeout=20000)
    xs, ys = sw.series()
    assert xs == [0, 1, 2]
    assert ys[1] == 1.0 and ys[0] > ys[1]
    assert len(sw.plot.getPlotItem().listDataItems()) == 1


def test_sweep_swizzle_is_categorical(qtbot, window):
    sw = window.sweep
    i = next(k for k in range(sw.dim.count())
             if (sw.dim.itemData(k).kind, sw.dim.itemData(k).target) == ("swizzle", "tile"))
    sw.dim.setCurrentIndex(i)
    sw.values.setText("none, xor, xor:4")
    sw.figure.setCurrentIndex(sw.figure.findData("bank conflicts"))
    sw.start()
    qtbot.waitUntil(lambda: len(sw.results) == 3, timeout=20000)
    _xs, ys = sw.series()
    assert ys[1] == 0 and ys[0] == ys[2] > 0  # XOR with the row fixes it, a constant mask does not


def test_compare_mode_steps_both_sides_together(qtbot, window):
    qtbot.keyClick(window.view, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert window.stack.currentIndex() == 1
    cp = window.compare
    qtbot.waitUntil(lambda: cp.right.scenario is not None and not cp.right.busy, timeout=10000)
    assert cp.right.path.stem.startswith("transpose-tile-")
    for _ in range(8):
        qtbot.keyClick(window.view, Qt.Key.Key_Down)
    qtbot.keyClick(window.view, Qt.Key.Key_Right)
    assert cp.right.cursor == window.session.cursor
    cp.refresh()
    rows = {cp.table.item(r, 0).text(): (cp.table.item(r, 1).text(), cp.table.item(r, 2).text())
            for r in range(cp.table.rowCount())}
    assert rows["wavefronts (this warp)"][0] == "32"
    cp.view_left.repaint()
    cp.view_right.repaint()
    assert cp.view_right.layout_ is not None


def test_compare_pick_another_scenario(qtbot, window):
    window.a_compare.setChecked(True)
    cp = window.compare
    i = cp.pick.findText("[transpose-tile-xor]", Qt.MatchFlag.MatchContains)
    cp.pick.setCurrentIndex(i)
    cp.pick.activated.emit(i)
    qtbot.waitUntil(lambda: cp.right.analysis is not None, timeout=10000)
    assert cp.right.path.stem == "transpose-tile-xor"
    m = cp.right.analysis.metrics
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


def test_library_search_tag_and_open(qtbot, window):
    lib = window.library
    qtbot.keyClicks(lib.search, "stride")
    names = lib.visible_names()
    assert "shared-stride-33" in names and "coalesced" not in names
    lib.search.clear()
    lib.tag.setCurrentIndex(lib.tag.findData("swizzle"))
    assert all("swizzle" in e.tags for e in lib.entries if e.name in lib.visible_names())
    lib.tag.setCurrentIndex(0)
    item = lib.item_for("shared-stride-33")
    rect = lib.tree.visualItemRect(item)
    lib.tree.scrollToItem(item)
    rect = lib.tree.visualItemRect(item)
    qtbot.mouseClick(lib.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.session.path.stem == "shared-stride-33"
    wait_analysis(qtbot, window)
    assert window.session.analysis.scenario.name == "shared-stride-33"


def test_new_and_delete_user_scenario(qtbot, window):
    qtbot.mouseClick(window.library.b_new, Qt.MouseButton.LeftButton)
    path = window.session.path
    assert path.exists() and window.library.item_for(path.stem) is not None
    window.library.tree.setCurrentItem(window.library.item_for(path.stem))
    qtbot.mouseClick(window.library.b_delete, Qt.MouseButton.LeftButton)
    assert not path.exists() and window.library.item_for(path.stem) is None


def test_large_launch_shows_progress_and_an_edit_cancels_it(qtbot, user_dirs):
    w = make_window(qtbot, "random-gather")
    text = w.session.text
    import re
    big = re.sub(r"grid\s*=\s*\[[^\]]*\]", "grid = [4096]", text, count=1)
    w.editor.text.setPlainText(big)
    w.editor.flush()
    assert w.session.busy and w.session.detail is not None  # the view redraws before the analysis ends
    w.editor.text.setPlainText(text)  # edit again: the running analysis is cancelled
    w.editor.flush()
    wait_analysis(qtbot, w)
    assert w.session.analysis.scenario.launch.blocks == load("random-gather").launch.blocks
    w.close()
