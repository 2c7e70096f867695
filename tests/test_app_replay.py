"""View → Replay with layout…: a shipped trace replayed with pad:1 opens in compare mode, the
figures table shows before and after, and File → Export's side by side takes the pair."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app_helpers import make_window, user_dirs  # noqa: F401 - fixture

TRACE = Path(__file__).resolve().parents[1] / "assets" / "traces" / "transpose_tile_unpadded.wvtrace"
LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
LD_CONF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


def _row(table, name):
    for r in range(table.rowCount()):
        if table.item(r, 0).text() == name:
            return table.item(r, 1).text(), table.item(r, 2).text()
    return None


def test_replay_with_pad1_opens_the_compare_with_the_figures(qtbot, user_dirs):  # noqa: F811
    from viz.app.replay_dialog import show

    w = make_window(qtbot, str(TRACE))
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)
    assert w.a_replay.isEnabled()
    dlg = show(w)
    assert dlg.array.currentText() == "tile"
    # a bad shape is said in the dialog, which stays open
    dlg.shape.setText("64,64")
    qtbot.mouseClick(dlg.buttons.button(dlg.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton)
    assert "more than the 4,096 bytes" in dlg.error.text() and dlg.isVisible()
    dlg.shape.setText("32,32")
    dlg.layout_.setEditText("pad:1")
    qtbot.mouseClick(dlg.buttons.button(dlg.buttons.StandardButton.Ok), Qt.MouseButton.LeftButton)
    assert not dlg.isVisible() and dlg.replay is not None
    cp = w.compare
    assert w.a_compare.isChecked()
    qtbot.waitUntil(lambda: cp.right.trace_analysis is not None, timeout=20000)
    assert cp.right.trace.trace is dlg.replay.trace
    cp.refresh()
    assert _row(cp.table, LD_WF) == ("65,536", "2,048")
    assert _row(cp.table, LD_CONF) == ("63,488", "0")
    # same instruction, same warp on both sides
    w.session.step("instruction", 1)
    qtbot.waitUntil(lambda: cp.right.cursor.instruction == w.session.cursor.instruction, timeout=5000)
    wl = dict(_warp(cp.left)), dict(_warp(cp.right))
    assert set(wl[0]) == set(wl[1])
    # export's side by side takes the replay as the partner
    from viz.app.export_dialog import show as show_export

    ex = show_export(w)
    assert ex.compare_partner() is cp.right.trace
    ex.close()


def _warp(session):
    from viz.app.compare import warp_figures

    return warp_figures(session)
