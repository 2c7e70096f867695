"""File → Export… and Edit → Copy frame, used as a lecturer would: open the dialog from
the menu, change options and watch the preview, export small files, cancel, hit a bad
path; copy the frame and find it on the clipboard."""

from __future__ import annotations

import imageio.v3 as iio
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app_helpers import make_window, user_dirs, window  # noqa: F401 - fixtures
from viz import export as ex


def open_dialog(qtbot, w):
    qtbot.keyClick(w.view, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    d = w.export_dialog
    assert d is not None and d.isVisible()
    d.update_preview()              # what the preview timer does a moment later
    return d


def type_into(qtbot, field, text: str) -> None:
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def pick(combo, data: str) -> None:
    combo.setCurrentIndex(combo.findData(data))


def small(qtbot, d, w=160, h=90) -> None:
    pick(d.size, "custom")
    d.width_.setValue(w)
    d.height_.setValue(h)


def export_now(qtbot, d):
    d.update_preview()
    assert d.problem is None, d.problem
    qtbot.mouseClick(d.b_export, Qt.MouseButton.LeftButton)
    assert d.wait(600_000)
    return d.message.text()


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_the_dialog_opens_from_the_file_menu_on_the_position_shown(qtbot, window):
    w = window
    assert w.a_export in w.m_file.actions() and w.a_export.shortcut().toString() == "Ctrl+E"
    w.session.go(instr=8, frame=4)
    d = open_dialog(qtbot, w)
    assert (d.instructions.text(), d.block.text(), d.warp.text()) == ("9", "0", "0")
    assert d.theme.currentData() == "light" and d.size.currentData() == "1080p"    # slides: light, 1080p
    assert d.path.text().endswith("transpose-tile-9.mp4")
    assert not d.compare.isEnabled()                    # no compare mode, no pair
    assert d.preview.image.size().toTuple() == (1920, 1080)
    assert d.picture.text().startswith("picture 5 of 35")   # the frame on screen: wavefront 3


def test_the_preview_follows_size_theme_and_frames(qtbot, window):
    d = open_dialog(qtbot, window)
    light = d.preview.image.pixelColor(2, 2).lightness()
    pick(d.size, "720p")
    d.update_preview()
    assert d.preview.image.size().toTuple() == (1280, 720)
    pick(d.theme, "dark")
    d.update_preview()
    assert d.preview.image.pixelColor(2, 2).lightness() < light - 100
    small(qtbot, d, 320, 200)
    d.update_preview()
    assert d.preview.image.size().toTuple() == (320, 200)
    before = d.preview.image.copy()
    type_into(qtbot, d.frames, "summary")
    d.update_preview()
    assert d.picture.text().startswith("picture 1 of 1") and d.preview.image != before
    type_into(qtbot, d.frames, "sometimes")
    d.update_preview()
    assert "not understood" in d.message.text() and not d.b_export.isEnabled()


def test_export_a_small_gif_and_a_png(qtbot, window, tmp_path):
    w = window
    w.session.go(instr=8, frame=0)
    d = open_dialog(qtbot, w)
    small(qtbot, d)
    out = tmp_path / "column-read.gif"
    type_into(qtbot, d.path, str(out))
    assert d.format.currentData() == "gif"              # the typed extension picks the format
    type_into(qtbot, d.frames, "1-4")
    msg = export_now(qtbot, d)
    assert msg.startswith("Wrote") and d.result.pictures == 4
    imgs = list(iio.imiter(out))
    assert len(imgs) == 4 and imgs[0].shape[:2] == (90, 160)

    pick(d.format, "png")                               # the path follows the format
    assert d.path.text() == str(tmp_path / "column-read.png")
    d.frames.clear()                                    # a still of the frame on screen
    msg = export_now(qtbot, d)
    img = iio.imread(tmp_path / "column-read.png")
    assert img.shape[:2] == (90, 160) and msg.startswith("Wrote")
    assert not leftovers(tmp_path)


def test_the_compare_pair_exports_side_by_side(qtbot, window, tmp_path):
    w = window
    w.a_compare.setChecked(True)
    w.compare.open_right(str(w.compare.pick.itemData(w.compare.pick.findText("transpose-tile-pad",
                                                                              Qt.MatchFlag.MatchContains))))
    w.compare.right.wait(600_000)      # a ceiling: returns when the analysis ends
    w.session.go(instr=8, frame=0)
    d = open_dialog(qtbot, w)
    assert d.compare.isEnabled() and d.compare.isChecked()
    assert "-vs-transpose-tile-pad-9" in d.path.text()
    small(qtbot, d, 320, 90)
    type_into(qtbot, d.path, str(tmp_path / "pair.gif"))
    type_into(qtbot, d.frames, "3-5")                   # wavefront 1..3 of 32 beside the padded one's 1 and summary
    export_now(qtbot, d)
    assert len(list(iio.imiter(tmp_path / "pair.gif"))) == 3


def test_cancel_mid_export_leaves_no_file_and_the_app_keeps_working(qtbot, window, tmp_path, monkeypatch):
    from viz.app import export_dialog

    def progress_then_hold(job, done, total):
        """Midway is an event, not a moment: from the second picture on, the export says so
        and waits for the Cancel (a loaded machine could otherwise finish it first)."""
        if done < 2:
            return real_progress(job, done, total)
        job._emit(job.signals.progress, done, total)
        job.cancel.wait(600)

    real_progress = export_dialog._ExportJob._progress
    monkeypatch.setattr(export_dialog._ExportJob, "_progress", progress_then_hold)
    w = window
    d = open_dialog(qtbot, w)
    small(qtbot, d)
    out = tmp_path / "long.gif"
    type_into(qtbot, d.path, str(out))
    type_into(qtbot, d.instructions, "all")             # 188 pictures: long enough to cancel midway
    d.update_preview()
    qtbot.mouseClick(d.b_export, Qt.MouseButton.LeftButton)
    assert d.running and not d.g_look.isEnabled()
    qtbot.waitUntil(lambda: d.progress.value() >= 2, timeout=30000)
    before = w.session.cursor.frame
    qtbot.mouseClick(w.timeline.b_next, Qt.MouseButton.LeftButton)   # the window answers meanwhile
    assert w.session.cursor.frame == before + 1
    qtbot.mouseClick(d.b_cancel, Qt.MouseButton.LeftButton)
    assert d.wait(600_000)
    assert "Cancelled" in d.message.text() and d.result is None
    assert not out.exists() and not leftovers(tmp_path)
    assert d.g_look.isEnabled() and d.b_export.isEnabled()


def test_an_unwritable_path_is_a_message_in_the_dialog(qtbot, window, tmp_path, monkeypatch):
    w = window
    d = open_dialog(qtbot, w)
    small(qtbot, d)
    type_into(qtbot, d.path, str(tmp_path / "no" / "such" / "folder" / "x.png"))
    msg = export_now(qtbot, d)
    assert msg.startswith("Not exported") and "does not exist" in msg and d.message.property("error")
    real = ex.os.access
    monkeypatch.setattr(ex.os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real(p, mode))
    type_into(qtbot, d.path, str(tmp_path / "x.png"))
    assert "permission denied" in export_now(qtbot, d)
    monkeypatch.undo()
    assert w.isVisible() and d.isVisible()
    w.activateWindow()                                  # back to the window: its keys work
    qtbot.waitUntil(w.isActiveWindow)
    qtbot.keyClick(w.view, Qt.Key.Key_Right)
    assert w.session.cursor.frame == 1
    assert export_now(qtbot, d).startswith("Wrote") and (tmp_path / "x.png").exists()


def test_missing_ffmpeg_is_a_message(qtbot, window, tmp_path, monkeypatch):
    import imageio_ffmpeg

    def missing():
        raise RuntimeError("No ffmpeg exe could be found")

    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", missing)
    d = open_dialog(qtbot, window)
    small(qtbot, d)
    type_into(qtbot, d.path, str(tmp_path / "x.mp4"))
    assert "ffmpeg" in export_now(qtbot, d)
    assert not list(tmp_path.glob("*.mp4")) and not leftovers(tmp_path)


def test_the_dialog_remembers_folder_and_options(qtbot, user_dirs, tmp_path):
    w = make_window(qtbot)
    d = open_dialog(qtbot, w)
    small(qtbot, d, 200, 120)
    pick(d.theme, "colorblind")
    d.title_card.setChecked(True)
    type_into(qtbot, d.path, str(tmp_path / "out" / "t.gif"))
    (tmp_path / "out").mkdir()
    type_into(qtbot, d.frames, "1")
    export_now(qtbot, d)
    w.close()
    w2 = make_window(qtbot)
    d2 = open_dialog(qtbot, w2)
    assert d2.format.currentData() == "gif" and d2.theme.currentData() == "colorblind"
    assert d2.size.currentData() == "custom" and (d2.width_.value(), d2.height_.value()) == (200, 120)
    assert d2.title_card.isChecked() and d2.path.text().startswith(str(tmp_path / "out"))
    w2.close()


def test_copy_frame_puts_the_picture_on_the_clipboard(qtbot, window):
    w = window
    clip = QApplication.clipboard()
    clip.clear()
    qtbot.keyClick(w.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    img = clip.image()
    assert not img.isNull() and img.size() == w.view.size()
    assert "Copied the frame" in w.statusBar().currentMessage()
    clip.clear()
    w.view.setFocus()
    qtbot.keyClick(w.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)   # Ctrl+C in the picture
    assert clip.image().size() == w.view.size()
    w.a_copy_frame_slide.trigger()
    assert clip.image().size().toTuple() == (1920, 1080)
    assert w.a_copy_frame in w.m_edit.actions()


def test_a_png_sequence_into_the_users_folder_keeps_their_files(qtbot, window, tmp_path):
    """File → Export… → PNG sequence into a folder of the user's (it used to be emptied:
    holiday.png, .notes and .git gone): the frames go in beside them; a frame file warpviz
    did not write is a message in the dialog, and nothing changes."""
    pics = tmp_path / "pics"
    (pics / ".git").mkdir(parents=True)
    (pics / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (pics / "album.png").mkdir()
    (pics / "album.png" / "a.jpg").write_bytes(b"a photo")
    (pics / "holiday.png").write_bytes(b"my holiday")
    (pics / ".notes").write_text("notes")
    w = window
    w.session.go(instr=8, frame=0)
    d = open_dialog(qtbot, w)
    small(qtbot, d)
    type_into(qtbot, d.path, str(pics) + "/")
    assert d.format.currentData() == "png-sequence"
    type_into(qtbot, d.frames, "1-3")
    msg = export_now(qtbot, d)
    assert msg.startswith("Wrote") and d.result.pictures == 3
    assert sorted(p.name for p in pics.iterdir()) == [".git", ".notes", ".warpviz-frames.json", "album.png",
                                                      "frame_00001.png", "frame_00002.png", "frame_00003.png",
                                                      "holiday.png"]
    assert (pics / "holiday.png").read_bytes() == b"my holiday" and (pics / "album.png" / "a.jpg").exists()
    assert (pics / ".git" / "HEAD").exists() and (pics / ".notes").read_text() == "notes"

    (pics / "frame_00002.png").write_bytes(b"drawn over by hand")
    msg = export_now(qtbot, d)
    assert msg.startswith("Not exported") and "frame_00002.png" in msg and "did not write" in msg
    assert (pics / "frame_00002.png").read_bytes() == b"drawn over by hand"
    assert leftovers(pics) == [".git", ".notes", ".warpviz-frames.json"] and not leftovers(tmp_path)   # no .warpviz-part-*
    assert w.isVisible() and d.isVisible()


def test_the_format_list_and_its_options_come_from_the_one_table(qtbot, window):
    """The dialog lists viz/export_formats.py's formats in its order, with their labels, and
    enables only the options a format reads (fps: video; a title card: animated)."""
    from viz.export_formats import FORMATS

    d = open_dialog(qtbot, window)
    assert [d.format.itemData(i) for i in range(d.format.count())] == [f.name for f in FORMATS]
    assert [d.format.itemText(i) for i in range(d.format.count())] == [f.label() for f in FORMATS]
    type_into(qtbot, d.path, str(d.folder / "talk.mp4"))
    for f in FORMATS:
        pick(d.format, f.name)
        assert d.fps.isEnabled() == f.video == ("fps" in f.options), f.name
        assert d.title_card.isEnabled() == ("title_card" in f.options), f.name
        assert d.path.text().endswith("talk" + f.extension), (f.name, d.path.text())
