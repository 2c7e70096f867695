"""Undo / Redo over every edit (form or text), and the form's `for` and `when` fields."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from app_helpers import undo_clock, wait_analysis, user_dirs, window  # noqa: F401 - fixtures
from test_app_editor import type_at

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
ORIGINAL_PAD = "PAD = 0       # try --set PAD=1"


def picture(w) -> QImage:
    w.view.repaint()
    return w.view.grab().toImage()


def header_pixels(w) -> QImage:
    """The picture's header band, as drawn."""
    w.view.repaint()
    return w.view.grab(w.view.layout_.header.toAlignedRect()).toImage()


def header(w) -> str:
    """What the picture's header says about the array (painter: ``array.describe()``)."""
    return w.session.detail.array.describe()


def type_in_field(qtbot, w, path, text):
    f = w.editor.fields[path].widget
    w.editor.tabs.setCurrentIndex(0)
    f.setFocus()
    f.selectAll()
    if text:
        qtbot.keyClicks(f, text)
    else:
        qtbot.keyClick(f, Qt.Key.Key_Backspace)
    assert f.text() == text
    return f


def test_undo_and_redo_a_form_edit_restore_text_form_and_picture(qtbot, window):
    w = window
    w.session.go(instr=8)                      # the column read of the tile
    before_text, before_pic = w.editor.text.toPlainText(), picture(w)
    before_header = header_pixels(w)
    assert header(w) == "shared float tile[32][32]"
    pad = type_in_field(qtbot, w, ("params", "PAD"), "1")
    wait_analysis(qtbot, w)
    assert "PAD = 1" in w.editor.text.toPlainText()
    assert header(w) == "shared float tile[32][32] (pad 1)"
    after_pic, after_header = picture(w), header_pixels(w)
    assert after_pic != before_pic and after_header != before_header
    qtbot.keyClick(pad, Qt.Key.Key_Z, CTRL)   # Ctrl+Z in the field: the app's undo
    assert w.editor.text.toPlainText() == before_text
    assert pad.text() == "0"
    assert header(w) == "shared float tile[32][32]"
    assert header_pixels(w) == before_header and picture(w) == before_pic
    qtbot.keyClick(pad, Qt.Key.Key_Z, CTRL | SHIFT)
    assert "PAD = 1" in w.editor.text.toPlainText() and pad.text() == "1"
    assert header(w) == "shared float tile[32][32] (pad 1)"
    assert header_pixels(w) == after_header and picture(w) == after_pic


def test_form_and_text_edits_are_separate_steps(qtbot, window):
    w = window
    type_at(qtbot, w, "ROWS = 8", "ROWS = 4")          # a text edit, typed key by key: one step
    w.editor.flush()
    type_in_field(qtbot, w, ("params", "PAD"), "1")    # a form edit
    assert w.session.scenario.params["ROWS"] == 4 and w.session.scenario.params["PAD"] == 1
    assert w.editor.undo_stack.count() == 2
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    t = w.editor.text.toPlainText()
    assert ORIGINAL_PAD in t and "ROWS = 4" in t
    assert w.editor.fields[("params", "PAD")].widget.text() == "0"
    assert w.editor.fields[("params", "ROWS")].widget.text() == "4"
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL)
    assert "ROWS = 8" in w.editor.text.toPlainText()
    assert w.session.scenario.params["ROWS"] == 8
    assert not w.a_undo.isEnabled() and w.a_redo.isEnabled()
    qtbot.keyClick(w.view, Qt.Key.Key_Z, CTRL | SHIFT)
    qtbot.keyClick(w.view, Qt.Key.Key_Y, CTRL)          # Ctrl+Y redoes too
    assert w.session.scenario.params["ROWS"] == 4 and w.session.scenario.params["PAD"] == 1
    assert not w.a_redo.isEnabled()


def test_ctrl_z_in_the_toml_text_undoes_typing_as_one_step(qtbot, window):
    w = window
    before = w.editor.text.toPlainText()
    type_at(qtbot, w, "W = 256", "W = 512")
    qtbot.keyClick(w.editor.text, Qt.Key.Key_Z, CTRL)   # straight after typing (debounce pending)
    assert w.editor.text.toPlainText() == before
    assert w.session.scenario.params["W"] == 256
    qtbot.keyClick(w.editor.text, Qt.Key.Key_Z, CTRL | SHIFT)
    assert "W = 512" in w.editor.text.toPlainText() and w.session.scenario.params["W"] == 512


def test_undo_brings_back_an_invalid_text_and_its_error(qtbot, window):
    w = window
    type_at(qtbot, w, "W = 256", "W = x")
    w.editor.flush()
    assert w.session.error is not None
    type_at(qtbot, w, "W = x", "W = 64")
    w.editor.flush()
    assert w.session.error is None
    # typed within a second: one step back to the valid original
    w.editor.undo()
    assert w.session.error is None and "W = 256" in w.editor.text.toPlainText()


def test_edit_menu_has_undo_and_redo_and_opening_starts_a_new_history(qtbot, window):
    w = window
    names = [a.objectName() for a in w.m_edit.actions()]
    assert names[:2] == ["undo", "redo"]
    assert w.a_undo.text() == "Undo" and w.a_undo.shortcut().toString() == "Ctrl+Z"
    type_in_field(qtbot, w, ("params", "PAD"), "1")
    assert w.a_undo.isEnabled()
    w.library._clicked(w.library.item_for("coalesced"))
    assert w.editor.undo_stack.count() == 0 and not w.a_undo.isEnabled()


def test_form_for_field_edits_the_loops(qtbot, window):
    w = window
    path = ("access", 2, "for")
    f = w.editor.fields[path]
    assert f.widget.text() == "j = 0:TILE:ROWS"
    type_in_field(qtbot, w, path, "j = 0:16:8")
    wait_analysis(qtbot, w)
    assert 'for = {j = "0:16:8"}' in w.editor.text.toPlainText().replace("{ ", "{").replace('" }', '"}')
    assert w.session.instruction_count == 4 + 4 + 2 + 4
    type_in_field(qtbot, w, path, "j 0:16")                 # not name = range: said at the field
    assert f.error.isVisibleTo(w.editor) and "name = start:stop" in f.error.text()
    assert w.session.error is None and w.session.instruction_count == 14   # nothing was written
    type_in_field(qtbot, w, path, "j = 0:32:0")              # the loader's message, at the field
    assert f.error.isVisibleTo(w.editor) and "step 0" in f.error.text()
    type_in_field(qtbot, w, path, "")                        # no loop: the key goes
    assert "for =" not in w.session.text.split("[[access]]")[3]
    assert w.session.error is not None and "j" in w.session.error.problem   # j is unknown in `at` now
    assert f.error.isVisibleTo(w.editor)
    # Changes of one field within a second of each other are one step: undo goes back to
    # the loop the file had.
    w.editor.undo()
    assert w.session.error is None and w.session.instruction_count == 16
    assert f.widget.text() == "j = 0:TILE:ROWS" and not f.error.isVisibleTo(w.editor)
    assert w.editor.text.toPlainText() == w.session.text and 'for = { j = "0:TILE:ROWS" }' in w.session.text


def test_changes_of_one_field_more_than_a_second_apart_are_separate_steps(qtbot, window, undo_clock):
    from viz.app.undo import COALESCE_S

    w = window
    path = ("params", "PAD")
    type_in_field(qtbot, w, path, "1")
    w.editor.flush()
    undo_clock.advance(COALESCE_S / 2)          # within the window: the same step
    type_in_field(qtbot, w, path, "2")
    w.editor.flush()
    assert w.editor.undo_stack.count() == 1
    undo_clock.advance(COALESCE_S + 0.5)        # a pause: the next change is a step of its own
    type_in_field(qtbot, w, path, "3")
    w.editor.flush()
    assert w.editor.undo_stack.count() == 2
    w.editor.undo()
    assert w.session.scenario.params["PAD"] == 2 and w.editor.fields[path].widget.text() == "2"
    w.editor.undo()
    assert w.session.scenario.params["PAD"] == 0 and ORIGINAL_PAD in w.editor.text.toPlainText()


def test_form_when_field_masks_lanes(qtbot, window):
    w = window
    path = ("access", 0, "when")
    f = w.editor.fields[path]
    assert f.widget.text() == "" and f.widget.placeholderText()
    type_in_field(qtbot, w, path, "threadIdx.x < 16")
    wait_analysis(qtbot, w)
    text = w.editor.text.toPlainText()
    assert 'when = "threadIdx.x < 16"' in text
    assert text.index('when = "threadIdx.x < 16"') < text.index("[[access]]", text.index("[[access]]") + 1)
    w.session.go(instr=0)
    assert sum(ln.active for ln in w.session.detail.lanes) == 16
    type_in_field(qtbot, w, path, "threadIdx.q < 16")
    assert f.error.isVisibleTo(w.editor)
    assert w.session.error is not None and "threadIdx.q" in f.error.text()
    type_in_field(qtbot, w, path, "")
    wait_analysis(qtbot, w)
    assert "when" not in w.editor.text.toPlainText().split("[[access]]")[1]
    assert sum(ln.active for ln in w.session.detail.lanes) == 32
