"""Editing live: typing into the TOML text and the form, invalid edits, autosave and recovery."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from app_helpers import make_window, user_dirs, wait_analysis, window  # noqa: F401 - fixtures
from viz import i18n
from viz.engine import analyze
from viz.scenario import loads


def type_at(qtbot, w, needle: str, replacement: str):
    """Select ``needle`` in the TOML text and type ``replacement`` over it, key by key."""
    w.editor.tabs.setCurrentIndex(1)
    ed = w.editor.text
    doc_text = ed.toPlainText()
    i = doc_text.index(needle)
    cur = ed.textCursor()
    cur.setPosition(i)
    cur.setPosition(i + len(needle), QTextCursor.MoveMode.KeepAnchor)
    ed.setTextCursor(cur)
    ed.setFocus()
    qtbot.keyClicks(ed, replacement)


def test_typing_a_param_reanalyses_and_redraws(qtbot, window):
    s = window.session
    assert s.analysis.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] > 0
    type_at(qtbot, window, "PAD = 0", "PAD = 1")
    wait_analysis(qtbot, window)
    assert s.scenario.params["PAD"] == 1
    assert s.error is None
    assert s.analysis.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


def test_arrow_keys_in_the_editor_move_the_text_cursor_not_the_animation(qtbot, window):
    window.editor.tabs.setCurrentIndex(1)
    ed = window.editor.text
    ed.setFocus()
    qtbot.keyClick(ed, Qt.Key.Key_Right)
    qtbot.keyClick(ed, Qt.Key.Key_Space)
    assert window.session.cursor.frame == 0 and not window.timeline.playing
    assert ed.textCursor().position() == 2


def test_invalid_edit_keeps_the_last_valid_state_and_the_text(qtbot, window):
    s = window.session
    before = s.scenario
    type_at(qtbot, window, "W = 256", "W = 25six")
    window.editor.flush()
    assert s.error is not None and s.error.line is not None
    assert s.scenario is before                       # the views keep the last valid state
    assert "25six" in window.editor.text.toPlainText()  # nothing typed is lost
    assert window.editor.banner.isVisible()
    assert "line" in window.editor.banner.text()
    sels = window.editor.text.extraSelections()
    assert sels and sels[0].cursor.blockNumber() + 1 == s.error.line
    window.view.repaint()                             # still paints the old frame
    assert window.view.layout_ is not None
    type_at(qtbot, window, "W = 25six", "W = 512")
    window.editor.flush()
    assert s.error is None and s.scenario.params["W"] == 512
    assert not window.editor.banner.isVisible()


def test_error_found_only_by_the_whole_launch_analysis_reverts_to_the_last_good_state(qtbot, window):
    s = window.session
    good = s.scenario
    # block 0 stays in bounds (the view shows it at once); later blocks index past the array.
    type_at(qtbot, window, 'shape = ["W", "W"]', 'shape = [64, "W"]')
    wait_analysis(qtbot, window)
    assert s.error is not None and "out of bounds" in s.error.problem
    assert s.scenario.text == good.text
    assert s.analysis is not None and s.analysis.scenario.text == good.text


def test_form_pad_field_edits_the_toml_and_keeps_comments(qtbot, window):
    pad = window.editor.fields[("params", "PAD")].widget
    window.editor.tabs.setCurrentIndex(0)
    pad.setFocus()
    pad.selectAll()
    qtbot.keyClicks(pad, "1")
    wait_analysis(qtbot, window)
    text = window.editor.text.toPlainText()
    assert "PAD = 1" in text
    assert "# W/TILE in x and y" in text  # comments survive a form edit
    assert window.session.analysis.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


def test_form_swizzle_choice_removes_the_conflicts(qtbot, window):
    sw = window.editor.fields[("arrays", "tile", "swizzle")].widget
    sw.setCurrentText("xor")
    wait_analysis(qtbot, window)
    assert 'swizzle = "xor"' in window.editor.text.toPlainText()
    m = window.session.analysis.metrics
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


def test_form_error_is_shown_at_the_field(qtbot, window):
    grid = window.editor.fields[("launch", "grid")].widget
    grid.setFocus()
    grid.selectAll()
    qtbot.keyClicks(grid, "8, 0")
    f = window.editor.fields[("launch", "grid")]
    assert window.session.error is not None
    assert f.error.isVisibleTo(window.editor) and "at least 1" in f.error.text()
    assert window.session.scenario.launch.grid == (8, 1, 1)  # "8" and "8," were valid on the way


def test_form_type_change(qtbot, user_dirs):
    w = make_window(qtbot, "coalesced")
    t = w.editor.fields[("arrays", "in", "type")].widget
    t.setCurrentText("float4")
    wait_analysis(qtbot, w)
    assert w.session.scenario.array("in").type.name == "float4"
    assert w.session.detail.size == 16
    w.close()


def test_undo_restores_a_form_edit(qtbot, window):
    pad = window.editor.fields[("params", "PAD")].widget
    pad.setText("1")
    pad.textEdited.emit("1")
    assert window.session.scenario.params["PAD"] == 1
    window.editor.text.undo()
    window.editor.flush()
    assert window.session.scenario.params["PAD"] == 0


def test_user_scenario_is_autosaved(qtbot, window, user_dirs):
    path = window.save_copy()
    assert path.parent.name == "scenarios" and path.exists()
    assert window.library.item_for(path.stem) is not None
    type_at(qtbot, window, "ROWS = 8", "ROWS = 4")
    window.editor.flush()
    qtbot.waitUntil(lambda: "ROWS = 4" in path.read_text(), timeout=3000)


def test_crash_recovery_restores_unsaved_edits(qtbot, user_dirs):
    w = make_window(qtbot, "transpose-tile")
    type_at(qtbot, w, "W = 256", "W = 12")  # invalid as a whole launch? W=12 still parses
    w.editor.flush()
    w.autosave()
    text = w.editor.text.toPlainText()
    # Simulate a crash: the window goes away without closeEvent's bookkeeping.
    w.autosave_timer.stop()
    w.hide()
    w2 = make_window(qtbot, None)
    assert w2.editor.text.toPlainText() == text
    assert w2.session.path.stem == "transpose-tile"
    assert w2.editor.info.isVisibleTo(w2.editor) and "unsaved" in w2.editor.info.text()


def test_editor_in_chinese(qtbot, window):
    i18n.set_language("zh_CN")
    assert window.editor.tabs.tabText(0) == "表单"
    type_at(qtbot, window, "W = 256", "W = x")
    window.editor.flush()
    assert "未应用" in window.editor.banner.text()


def test_switching_scenarios_keeps_edits_to_a_builtin(qtbot, window, user_dirs):
    type_at(qtbot, window, "ROWS = 8", "ROWS = 4")
    window.editor.flush()
    window.library._clicked(window.library.item_for("coalesced"))
    assert window.session.path.stem == "coalesced"
    kept = list((user_dirs / "data" / "scenarios").glob("transpose-tile-edited*.toml"))
    assert len(kept) == 1 and "ROWS = 4" in kept[0].read_text()
    assert window.library.item_for(kept[0].stem) is not None
