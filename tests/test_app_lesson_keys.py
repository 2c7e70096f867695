"""Ctrl+Right / Ctrl+Left change scenario in a lesson's order, also in presentation mode and
in compare mode; for a scenario in no lesson, in the library's order as shown."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app_helpers import make_window, user_dirs  # noqa: F401 - fixture
from viz import assets
from viz.lessons import lessons_dir, load_lesson


def press(qtbot, w, k, mod=Qt.KeyboardModifier.NoModifier):
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    qtbot.keyClick(w, k, mod)


CTRL = Qt.KeyboardModifier.ControlModifier


def test_ctrl_right_walks_the_lesson_in_presentation_mode(qtbot, user_dirs):  # noqa: F811
    lesson = load_lesson(lessons_dir() / "coalescing-and-banks.toml")
    names = [s.path.stem for s in lesson.stops]
    w = make_window(qtbot, "coalesced")
    press(qtbot, w, Qt.Key.Key_F11)
    assert w.presenting
    seen = [w.session.path.stem]
    for _ in range(len(names) + 2):                      # two presses past the end change nothing
        press(qtbot, w, Qt.Key.Key_Right, CTRL)
        if w.session.path.stem != seen[-1]:
            seen.append(w.session.path.stem)
            if seen[-1] == "transpose-tile":             # the lesson opens it at instruction 9
                assert w.session.cursor.instruction == 8 and w.session.cursor.frame == 0
                assert w.view.theme.scale > 1 and w.presenting
    assert seen == names
    for _ in range(3):
        press(qtbot, w, Qt.Key.Key_Left, CTRL)
    assert w.session.path.stem == names[-4]
    assert w.presenting and w.isFullScreen()
    press(qtbot, w, Qt.Key.Key_Escape)
    w.close()


def test_in_compare_mode_the_next_scenario_brings_its_partner(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "shared-stride-33")
    w.a_compare.setChecked(True)
    cp = w.compare
    qtbot.waitUntil(lambda: cp.right.path is not None, timeout=10000)
    press(qtbot, w, Qt.Key.Key_Right, CTRL)               # shared-stride-33 → shared-broadcast
    assert w.session.path.stem == "shared-broadcast" and w.stack.currentIndex() == 1
    qtbot.waitUntil(lambda: cp.right.path is not None and cp.right.path != w.session.path, timeout=10000)
    assert cp.partner_of == w.session.path
    w.a_compare.setChecked(False)
    w.close()


def test_a_scenario_in_no_lesson_follows_the_library_as_filtered(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "vector-int")
    lib = w.library
    i = lib.tag.findData("vector")
    assert i > 0
    lib.tag.setCurrentIndex(i)
    shown = lib.visible_paths()
    assert 3 <= len(shown) < 20 and all("vector" in e.tags for e in lib.entries if e.path in shown)
    k = shown.index(w.session.path)
    assert k + 2 < len(shown)
    press(qtbot, w, Qt.Key.Key_Right, CTRL)
    assert w.session.path == shown[k + 1]
    press(qtbot, w, Qt.Key.Key_Right, CTRL)
    assert w.session.path == shown[k + 2]
    press(qtbot, w, Qt.Key.Key_Left, CTRL)
    assert w.session.path == shown[k + 1]
    w.close()


def test_playback_lessons_opens_a_lesson_and_a_users_lesson_is_listed(qtbot, user_dirs):  # noqa: F811
    from viz.app.lesson_keys import user_lessons_dir

    d = user_lessons_dir()
    d.mkdir(parents=True, exist_ok=True)
    (d / "mine.toml").write_text('title = "My banks"\nscenarios = ["shared-stride-8", "shared-stride-2"]\n')
    (d / "broken.toml").write_text("scenarios = [\n")
    w = make_window(qtbot, "coalesced")
    keys = w.lesson_keys
    keys.menu.aboutToShow.emit()
    titles = [a.text() for a in keys.menu.actions()]
    assert any("My banks" in t for t in titles) and any("coalescing" in t for t in titles)
    assert "broken.toml" in w.statusBar().currentMessage()        # said, not silently skipped
    next(a for a in keys.menu.actions() if "My banks" in a.text()).trigger()
    assert w.session.path.stem == "shared-stride-8"
    press(qtbot, w, Qt.Key.Key_Right, CTRL)
    assert w.session.path.stem == "shared-stride-2"
    press(qtbot, w, Qt.Key.Key_Right, CTRL)                       # the end of my lesson: stays
    assert w.session.path.stem == "shared-stride-2"
    assert "My banks" in w.statusBar().currentMessage()
    w.close()


def test_ctrl_arrows_in_the_text_editor_move_by_words_not_scenarios(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "coalesced")
    w.editor.tabs.setCurrentIndex(1)
    text = w.editor.text
    text.setFocus()
    qtbot.waitUntil(text.hasFocus)
    cur = text.textCursor()
    cur.setPosition(0)
    text.setTextCursor(cur)
    qtbot.keyClick(text, Qt.Key.Key_Right, CTRL)
    assert w.session.path.stem == "coalesced"            # the editor kept the key
    assert text.textCursor().position() > 0
    w.close()


def test_a_steps_words_leave_the_status_bar_when_another_file_opens(qtbot, user_dirs):  # noqa: F811
    """The lesson's words stayed in the status bar (shown without a timeout) after a trace was
    opened from the library: they belong to their step's scenario only."""
    lesson = load_lesson(lessons_dir() / "xor-vs-padding.toml")
    w = make_window(qtbot, "coalesced")
    keys = w.lesson_keys
    assert keys.start(lesson)
    msg = w.statusBar().currentMessage()
    assert lesson.title in msg and keys.words and keys.words in msg
    press(qtbot, w, Qt.Key.Key_Right, CTRL)                 # the next step: its own words
    qtbot.waitUntil(lambda: w.session.path == lesson.stops[1].path)
    assert "2" in w.statusBar().currentMessage() and keys.words in w.statusBar().currentMessage()
    w.open_trace(assets.traces_dir() / "numba_block_sum.wvtrace")
    qtbot.waitUntil(lambda: w.session.path is not None and w.session.path.suffix == ".wvtrace")
    qtbot.waitUntil(lambda: lesson.title not in w.statusBar().currentMessage())
    assert keys.words == ""
    w.close()
