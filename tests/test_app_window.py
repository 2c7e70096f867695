"""The main window acted on as a user would: keys, buttons, themes, languages, modes."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app_helpers import make_window, user_dirs, window  # noqa: F401 - fixtures
from viz import i18n
from viz.frames import frames
from viz.scenario import resolve


def key(qtbot, w, k, mod=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(w.view, k, mod)


def test_right_and_left_step_frames(qtbot, window):
    s = window.session
    assert s.cursor.frame == 0
    key(qtbot, window, Qt.Key.Key_Right)
    key(qtbot, window, Qt.Key.Key_Right)
    assert s.cursor.frame == 2
    assert s.frame.kind == "wavefront" or s.frame.kind == "line"
    key(qtbot, window, Qt.Key.Key_Left)
    assert s.cursor.frame == 1


def test_right_runs_on_into_the_next_instruction(qtbot, window):
    s = window.session
    n = len(s.frames)
    for _ in range(n):
        key(qtbot, window, Qt.Key.Key_Right)
    assert s.cursor.instruction == 1 and s.cursor.frame == 0


def test_up_down_step_instructions_and_the_source_line_follows(qtbot, window):
    s = window.session
    for _ in range(4):  # access 0 runs for j = 0, 8, 16, 24: the 5th instruction is the tile store
        key(qtbot, window, Qt.Key.Key_Down)
    assert s.cursor.instruction == 4
    assert window.timeline.instr.value() == 5   # the box counts from 1, as the header does
    assert window.source.text().startswith("store tile[") and "bank 0" in window.source.text()
    key(qtbot, window, Qt.Key.Key_Up)
    assert s.cursor.instruction == 3


def test_page_keys_step_warps_across_blocks(qtbot, window):
    s = window.session
    for _ in range(8):  # 8 warps per block: the 8th PgDn enters block 1
        key(qtbot, window, Qt.Key.Key_PageDown)
    assert (s.cursor.block, s.cursor.warp) == (1, 0)
    key(qtbot, window, Qt.Key.Key_PageUp)
    assert (s.cursor.block, s.cursor.warp) == (0, 7)
    assert "warp 7" in window.timeline.where.text()


def test_home_end_and_ctrl_end(qtbot, window):
    s = window.session
    key(qtbot, window, Qt.Key.Key_End)
    assert s.cursor.frame == len(s.frames) - 1 and s.frame.kind == "summary"
    key(qtbot, window, Qt.Key.Key_Home)
    assert s.cursor.frame == 0
    key(qtbot, window, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert s.at_end()


def test_space_plays_and_stops_at_the_end(qtbot, window):
    s = window.session
    key(qtbot, window, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    key(qtbot, window, Qt.Key.Key_Home)
    for _ in range(9):
        key(qtbot, window, Qt.Key.Key_Plus)  # fastest
    assert window.timeline.speed == 8.0
    key(qtbot, window, Qt.Key.Key_Space)
    assert window.timeline.playing and window.a_play.isChecked()
    qtbot.waitUntil(lambda: not window.timeline.playing, timeout=5000)
    assert s.at_end()
    key(qtbot, window, Qt.Key.Key_Minus)
    assert window.timeline.speed == 6.0


def test_space_pauses(qtbot, window):
    key(qtbot, window, Qt.Key.Key_Space)
    assert window.timeline.playing
    key(qtbot, window, Qt.Key.Key_Space)
    assert not window.timeline.playing


def test_timeline_buttons_and_scrub_bar(qtbot, window):
    s = window.session
    qtbot.mouseClick(window.timeline.b_next, Qt.MouseButton.LeftButton)
    assert s.cursor.frame == 1
    qtbot.mouseClick(window.timeline.b_end, Qt.MouseButton.LeftButton)
    assert s.frame.kind == "summary"
    window.timeline.scrub.setValue(1)
    assert s.cursor.frame == 1
    window.timeline.block.setValue(5)
    assert s.cursor.block == 5 and s.detail.block == 5


def test_caption_and_view_show_the_current_frame(qtbot, window):
    s = window.session
    key(qtbot, window, Qt.Key.Key_Right)
    assert s.frame.caption == frames(s.detail)[1].caption
    window.view.repaint()
    assert window.view.layout_ is not None and len(window.view.layout_.lanes) == 32


def test_hover_a_lane_fills_in_its_values(qtbot, window):
    v = window.view
    v.repaint()
    cell = v.layout_.lanes[5]
    qtbot.mouseMove(v, cell.center().toPoint())
    assert v.hover == 5
    assert "lane 5" in window.source.text()
    assert "Lane 5" in v.lane_tooltip(5) and "byte address" in v.lane_tooltip(5)


def test_theme_switch_and_colour_blind_palette(qtbot, window):
    window.a_themes["dark"].trigger()
    assert window.view.theme.name == "dark"
    assert QApplication.palette().window().color().lightness() < 100
    window.a_themes["colorblind"].trigger()
    assert window.view.theme.name == "colorblind"
    assert window.view.theme.colors["served"] == "#009e73"
    window.view.repaint()


def test_language_switch_at_run_time(qtbot, window):
    window.a_langs["zh_CN"].trigger()
    assert i18n.language() == "zh_CN"
    assert window.docks["figures"].windowTitle() == "统计"
    assert window.m_view.title() != "&View"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in window.session.frame.caption)
    window.a_langs["en"].trigger()
    assert window.docks["figures"].windowTitle() == "Figures"


def test_presentation_mode(qtbot, window):
    key(qtbot, window, Qt.Key.Key_F11)
    assert window.presenting and window.isFullScreen()
    assert not window.docks["editor"].isVisible()
    assert not window.menuBar().isVisible()
    assert window.view.theme.name == "light" and window.view.theme.scale > 1   # your theme, larger
    key(qtbot, window, Qt.Key.Key_Right)  # keys still work without the menu bar
    assert window.session.cursor.frame == 1
    key(qtbot, window, Qt.Key.Key_Escape)
    assert not window.presenting and window.docks["editor"].isVisible()
    assert window.view.theme.name == "light" and window.view.theme.scale == 1


def test_presentation_keeps_the_chosen_theme_unless_asked_for_high_contrast(qtbot, user_dirs):  # noqa: F811
    """The lesson plan recommends a light theme on a projector: F11 keeps the theme of View →
    Theme (the picture, the comparison and the window's palette); View → Theme → High
    contrast in presentation mode (remembered) asks for the black theme while presenting."""
    from PySide6.QtGui import QPalette

    w = make_window(qtbot, "transpose-tile")
    for name in ("light", "colorblind", "dark"):
        w.a_themes[name].trigger()
        bg = w.palette().color(QPalette.ColorRole.Window).name()
        key(qtbot, w, Qt.Key.Key_F11)
        assert w.presenting
        assert w.view.theme.name == name and w.view.theme.scale > 1
        assert w.compare.view_left.theme.name == name and w.compare.view_right.theme.name == name
        assert w.palette().color(QPalette.ColorRole.Window).name() == bg
        key(qtbot, w, Qt.Key.Key_Escape)
        assert not w.presenting and w.view.theme.name == name and w.theme_name == name
    w.a_themes["light"].trigger()
    w.a_present_contrast.setChecked(True)
    assert w.view.theme.name == "light"                  # not presenting: nothing changes yet
    key(qtbot, w, Qt.Key.Key_F11)
    assert w.view.theme.name == "high-contrast" and w.compare.view_left.theme.name == "high-contrast"
    w.a_present_contrast.setChecked(False)               # switched back while presenting
    assert w.presenting and w.view.theme.name == "light"
    w.a_present_contrast.setChecked(True)
    key(qtbot, w, Qt.Key.Key_Escape)
    assert w.view.theme.name == "light" and w.theme_name == "light"
    w.close()
    w2 = make_window(qtbot, None)                        # the choice is remembered
    assert w2.a_present_contrast.isChecked() and w2.theme_name == "light"
    key(qtbot, w2, Qt.Key.Key_F11)
    assert w2.view.theme.name == "high-contrast"
    key(qtbot, w2, Qt.Key.Key_Escape)
    w2.close()


def test_zoom(qtbot, window):
    w0 = window.view.width()
    qtbot.keyClick(window.view, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert window.zoom.zoom > 1 and window.view.width() > w0
    qtbot.keyClick(window.view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert window.zoom.zoom == 1


def test_drop_a_toml_file_opens_it(qtbot, window, tmp_path):
    f = tmp_path / "dropped.toml"
    f.write_text(resolve("coalesced").read_text().replace('title = "', 'title = "Dropped: '))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(f))])
    pos = QPointF(window.width() / 2, window.height() / 2)
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    assert window.session.path == f
    assert window.session.scenario.title.startswith("Dropped:")
    assert "dropped.toml" in window.windowTitle()


def test_settings_are_restored_after_a_restart(qtbot, user_dirs):
    w = make_window(qtbot, "transpose-tile-pad")
    w.a_themes["dark"].trigger()
    w.timeline.change_speed(2)
    w.session.go(instr=2, block=3, warp=1)
    w.docks["sweep"].hide()
    w.close()
    w2 = make_window(qtbot, None)
    assert w2.session.path.stem == "transpose-tile-pad"
    assert w2.theme_name == "dark" and w2.view.theme.name == "dark"
    assert w2.timeline.speed == 2.0
    c = w2.session.cursor
    assert (c.instruction, c.block, c.warp) == (2, 3, 1)
    assert not w2.docks["sweep"].isVisible()
    w2.close()


def test_open_a_user_scenario_from_the_cli_argument(qtbot, user_dirs, tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text(resolve("stride-2").read_text())
    w = make_window(qtbot, str(f))
    assert w.session.path == f and w.session.error is None
    w.close()


def test_the_window_fits_a_1280x720_projector_and_the_picture_gets_most_of_it(qtbot, window):
    """Every panel (the GPU panel, the sweep, the hidden compare page) lets the window shrink to
    1280 px, and after the default layout the picture is the widest thing on the screen."""
    window.resize(1280, 720)
    window.default_layout()
    qtbot.waitUntil(lambda: window.width() == 1280 and window.height() == 720)
    assert window.minimumSizeHint().width() <= 1280
    qtbot.waitUntil(lambda: window.view.width() >= 0.45 * 1280)
    widest_dock = max(d.width() for d in window.docks.values() if d.isVisible())
    assert window.view.width() > widest_dock
    window.a_compare.setChecked(True)
    qtbot.waitUntil(lambda: window.compare.isVisible())
    assert window.minimumSizeHint().width() <= 1280 and window.width() == 1280
    assert window.compare.view_left.width() >= 280 and window.compare.view_right.width() >= 280
    window.a_compare.setChecked(False)


def test_transport_icons_are_drawn_in_the_themes_text_colour(qtbot, window):
    """The timeline's buttons stay visible on the black presentation theme (the style's own
    icons are dark grey on black there)."""
    from PySide6.QtGui import QPalette

    def ink(button):
        img = button.icon().pixmap(32, 32).toImage()
        return max((img.pixelColor(x, y) for x in range(32) for y in range(32) if img.pixelColor(x, y).alpha() > 200),
                   key=lambda c: c.alpha()).lightness()

    b = window.timeline.b_next
    window.set_presentation(True)
    try:
        qtbot.waitUntil(lambda: window.presenting)
        text = window.timeline.palette().color(QPalette.ColorRole.ButtonText).lightness()
        window_bg = window.timeline.palette().color(QPalette.ColorRole.Window).lightness()
        assert abs(ink(b) - text) < 40 and abs(ink(b) - window_bg) > 100
    finally:
        window.set_presentation(False)
    qtbot.waitUntil(lambda: abs(ink(b) - window.timeline.palette().color(QPalette.ColorRole.ButtonText).lightness()) < 40)


def test_the_source_line_of_a_tma_copy_names_its_tile_once(qtbot, user_dirs):  # noqa: F811
    """A TMA copy's operand is the whole tile: the line shows `tile`, not `tiletile`, and no
    empty bank list (the copy does not go through the banks)."""
    w = make_window(qtbot, "tma-swizzle-128b")
    text = w.source.text()
    assert text.startswith("tma.load tile")
    who = text.split("|", 1)[1]
    assert "tiletile" not in who and ": tile  ->  " in who
    assert not who.rstrip().endswith("bank")
    w.close()
