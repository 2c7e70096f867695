"""A scenario opens on the instruction it is about (its ``focus``), from the library as from
a lesson; a lesson's step shows its words with the model's figures."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from app_helpers import make_window, said, user_dirs  # noqa: F401 - fixture
from viz import i18n


def click_in_library(qtbot, w, name: str) -> None:
    lib = w.library
    item = lib.item_for(name)
    assert item is not None, name
    lib.tree.scrollToItem(item)
    rect = lib.tree.visualItemRect(item)
    qtbot.mouseClick(lib.tree.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.center()))
    qtbot.waitUntil(lambda: w.session.path is not None and w.session.path.stem == name, timeout=10000)


def test_opening_transpose_tile_from_the_library_shows_its_column_read(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "coalesced")
    assert w.timeline.instr.value() == 1                  # coalesced says no focus: its first instruction
    click_in_library(qtbot, w, "transpose-tile")
    assert w.session.cursor.instruction == 8 and w.session.cursor.frame == 0
    assert w.timeline.instr.value() == 9                  # the Instruction box, counted from 1
    d = w.session.detail
    assert d.space == "shared" and d.op == "load" and d.wavefronts == 32
    click_in_library(qtbot, w, "tma-ldmatrix-128b")
    assert w.timeline.instr.value() == 2 and w.session.detail.access.matrix is not None
    click_in_library(qtbot, w, "stride-2")                # no focus: instruction 1
    assert w.timeline.instr.value() == 1
    w.close()


def test_a_lesson_opens_each_step_on_its_instruction_with_its_words(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "coalesced")
    keys = w.lesson_keys
    keys.menu.aboutToShow.emit()
    next(a for a in keys.menu.actions() if a.objectName() == "lesson_xor-vs-padding").trigger()
    assert w.session.path.stem == "transpose-tile" and w.timeline.instr.value() == 9
    assert "wavefronts: 32 for phases: 1" in said(w) and keys.words in w.statusBar().currentMessage()
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    qtbot.keyClick(w, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert w.session.path.stem == "transpose-tile-pad" and w.timeline.instr.value() == 9
    assert keys.words.startswith("Padding:") and "wavefronts: 1," in keys.words
    # in presentation mode the status bar is hidden: the Notes panel shows the words above the notes
    assert w.notes.markdown.startswith("> Padding:") and "wavefronts: 1," in w.notes.markdown.splitlines()[0]
    w.close()


def test_a_lesson_speaks_chinese(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "coalesced")
    try:
        i18n.set_language("zh_CN")
        keys = w.lesson_keys
        keys.menu.aboutToShow.emit()
        act = next(a for a in keys.menu.actions() if a.objectName() == "lesson_global-coalescing")
        assert "全局内存合并访问" in act.text()
        act.trigger()
        assert w.session.path.stem == "coalesced" and w.timeline.instr.value() == 1
        assert "搬运的扇区：4 个" in keys.words and "（其中 100% 的字节被用到）" in keys.words
    finally:
        i18n.set_language("en")
        w.close()
