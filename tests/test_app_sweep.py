"""The Sweep panel: the plot gets its dock, long names elide, cut sweeps say so, and loads
and stores have their own wavefront figures."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app_helpers import user_dirs, window  # noqa: F401 - fixtures
from viz.app.sweep import MAX_POINTS, FIGURES, figure_value, parse_values
from viz.engine import analyze
from viz.scenario import load

LONG = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


def show_sweep(qtbot, w):
    sw = w.sweep
    w.docks["sweep"].show()
    w.docks["sweep"].raise_()
    qtbot.waitUntil(lambda: sw.plot.isVisible())
    return sw


def pick_dim(sw, kind, target):
    i = next(k for k in range(sw.dim.count())
             if (sw.dim.itemData(k).kind, sw.dim.itemData(k).target) == (kind, target))
    sw.dim.setCurrentIndex(i)


def test_plot_gets_most_of_its_dock_after_the_default_layout_at_1080p(qtbot, window):
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: window.width() == 1920)
    window.default_layout()
    sw = show_sweep(qtbot, window)
    sw.figure.setCurrentIndex(sw.figure.findData(LONG))   # the longest name on offer
    dock = window.docks["sweep"].widget()
    qtbot.waitUntil(lambda: sw.plot.width() >= 0.8 * dock.width())
    assert sw.plot.width() >= 0.8 * dock.width() and sw.plot.width() >= 300
    assert sw.plot.height() >= 0.5 * dock.height()


def test_a_wide_dock_puts_the_form_beside_the_plot(qtbot, window):
    sw = show_sweep(qtbot, window)
    dock = window.docks["sweep"]
    dock.setFloating(True)
    dock.resize(1400, 400)
    qtbot.waitUntil(lambda: sw.width() >= sw.WIDE)
    qtbot.waitUntil(lambda: sw.plot.x() > sw.controls.x())   # side by side
    assert sw.plot.width() >= 0.6 * sw.width()


def test_long_figure_names_elide_with_the_full_name_in_a_tooltip(qtbot, window):
    sw = show_sweep(qtbot, window)
    dock = window.docks["sweep"]
    dock.setFloating(True)
    dock.resize(300, 420)
    sw.figure.setCurrentIndex(sw.figure.findData(LONG))
    qtbot.waitUntil(lambda: sw.figure.width() < sw.figure.fontMetrics().horizontalAdvance(LONG))
    shown = sw.figure.shown_text()
    assert "…" in shown and shown != LONG
    assert shown.startswith(LONG[:3]) and shown.endswith(LONG[-3:])   # elided in the middle
    assert sw.figure.toolTip() == LONG
    i = sw.figure.findData(LONG)
    assert sw.figure.itemData(i, Qt.ItemDataRole.ToolTipRole) == LONG
    sw.figure.setCurrentIndex(sw.figure.findData("bank conflicts"))
    assert sw.figure.toolTip() == "bank conflicts" and sw.figure.shown_text() == "bank conflicts"


def test_parse_values_says_how_many_were_asked_for():
    assert parse_values("0:1000", False) == (list(range(MAX_POINTS)), 1000)
    assert parse_values("0:10:2", False) == ([0, 2, 4, 6, 8], 5)
    assert parse_values("1, 2, 4", False) == ([1, 2, 4], 3)
    assert parse_values("none, xor", True) == (["none", "xor"], 2)
    with pytest.raises(ValueError):
        parse_values("0:10:0", False)


def test_a_sweep_cut_to_200_points_says_so_in_the_panel(qtbot, window):
    sw = show_sweep(qtbot, window)
    pick_dim(sw, "block", "")
    sw.values.setText("32:1000000:32")   # 31,249 block sizes asked for
    sw.start()
    qtbot.waitUntil(lambda: sw.notice.isVisible())
    assert "200" in sw.notice.text() and "31,249" in sw.notice.text()
    sw.runner.cancel()
    qtbot.waitUntil(lambda: not sw.runner.busy, timeout=20000)
    pick_dim(sw, "pad", "tile")
    sw.values.setText("0:3")
    qtbot.mouseClick(sw.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(sw.results) == 3, timeout=20000)
    assert not sw.notice.isVisible()


def test_loads_and_stores_have_their_own_wavefront_figures(qtbot, window):
    """transpose-tile's tile is stored by rows (1 wavefront) and read down columns: a row of
    32 + PAD floats puts lane t's word at (32 + PAD)·t + c, bank (PAD·t + c) mod 32, so the
    column read needs 32, 1, 2, 1, 4 wavefronts for PAD = 0..4 (gcd(PAD, 32)-way, 32 for 0)."""
    sw = show_sweep(qtbot, window)
    pick_dim(sw, "pad", "tile")
    sw.values.setText("0:5")
    qtbot.mouseClick(sw.run, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(sw.results) == 5, timeout=30000)
    got = {}
    for fig in ("wavefronts per shared load", "wavefronts per shared store", "wavefronts per shared instruction"):
        sw.figure.setCurrentIndex(sw.figure.findData(fig))
        xs, got[fig] = sw.series()
        assert xs == [0, 1, 2, 3, 4]
        items = sw.plot.getPlotItem().listDataItems()
        assert len(items) == 1 and list(items[0].yData) == got[fig]
    assert got["wavefronts per shared load"] == [32, 1, 2, 1, 4]
    assert got["wavefronts per shared store"] == [1, 1, 1, 1, 1]
    assert got["wavefronts per shared instruction"][0] == 16.5   # (32 + 1) / 2: why loads and stores are apart
    for pad, ld, st in zip(xs, got["wavefronts per shared load"], got["wavefronts per shared store"]):
        m = analyze(load("transpose-tile", {"PAD": str(pad)})).metrics
        assert ld == (m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
                      / m["smsp__inst_executed_op_shared_ld.sum"])
        assert st == (m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
                      / m["smsp__inst_executed_op_shared_st.sum"])


def test_sector_figures_split_loads_and_stores():
    an = analyze(load("transpose-naive"))
    m = an.metrics
    ld = figure_value(an, "sectors per global load request")
    st = figure_value(an, "sectors per global store request")
    assert ld == (m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                  / m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"])
    assert st == (m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
                  / m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"])
    assert ld != st
    assert set(FIGURES) >= {"wavefronts per shared load", "wavefronts per shared store"}
