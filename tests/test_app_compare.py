"""Ctrl+M opens the partner a scenario names (its `compare` key) for every built-in."""

from pathlib import Path

from PySide6.QtCore import Qt

from app_helpers import after, make_window, user_dirs  # noqa: F401 - fixture
from viz import assets
from viz.scenario import ScenarioError, builtin_names, load


def press_ctrl_m(qtbot, w):
    w.activateWindow()                       # window shortcuts fire only in the active window
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    on = w.a_compare.isChecked()
    qtbot.keyClick(w, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)
    assert w.a_compare.isChecked() != on


def test_ctrl_m_opens_the_named_partner_for_every_builtin(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "coalesced")
    cp = w.compare
    checked = 0
    for name in builtin_names():
        try:
            sc = load(name)
        except ScenarioError:
            continue          # a lesson in an error: nothing to show on the left
        if not sc.compare:
            continue
        assert w.open_path(assets.scenario_dir() / f"{name}.toml")
        press_ctrl_m(qtbot, w)
        assert w.stack.currentIndex() == 1
        want = load(sc.compare).title
        qtbot.waitUntil(lambda: cp.view_right.options.title == want, timeout=10000)
        assert cp.right.path == assets.scenario_dir() / f"{sc.compare}.toml"
        assert want != sc.title
        # The left side shows its title; a lesson in an error (misaligned-int2) shows its message instead.
        assert cp.view_left.options.title == (sc.title if w.session.scenario is not None else None)
        press_ctrl_m(qtbot, w)
        assert w.stack.currentIndex() == 0
        checked += 1
    assert checked >= 50
    w.close()


def test_transpose_tile_gets_the_padded_tile_and_opening_another_repicks(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "transpose-tile")
    press_ctrl_m(qtbot, w)
    cp = w.compare
    qtbot.waitUntil(lambda: cp.right.analysis is not None, timeout=10000)
    assert cp.right.path.stem == "transpose-tile-pad"
    for _ in range(8):
        qtbot.keyClick(w, Qt.Key.Key_Down)
    assert w.session.cursor.instruction == 8 and cp.right.cursor == w.session.cursor
    qtbot.waitUntil(lambda: cp.right.analysis is not None and w.session.analysis is not None, timeout=10000)
    cp.refresh()
    rows = {cp.table.item(r, 0).text(): (cp.table.item(r, 1).text(), cp.table.item(r, 2).text())
            for r in range(cp.table.rowCount())}
    assert rows["wavefronts (this warp)"] == ("32", "1")   # the column read: unpadded 32, padded 1
    w.open_path(assets.scenario_dir() / "coalesced.toml")  # in compare mode: a new partner at once
    qtbot.waitUntil(lambda: cp.right.path is not None and cp.right.path.stem == "stride-32", timeout=10000)
    w.close()


def test_a_user_file_with_a_relative_compare(qtbot, user_dirs, tmp_path):  # noqa: F811
    other = tmp_path / "b.toml"
    other.write_text(assets.scenario_dir().joinpath("stride-2.toml").read_text()
                     .replace('title = "Strided float read: in[i*2]"', 'title = "my strided copy"'))
    mine = tmp_path / "a.toml"
    mine.write_text(assets.scenario_dir().joinpath("coalesced.toml").read_text()
                    .replace('compare = "stride-32"', 'compare = "b.toml"'))
    w = make_window(qtbot, str(mine))
    press_ctrl_m(qtbot, w)
    qtbot.waitUntil(lambda: w.compare.view_right.options.title == "my strided copy", timeout=10000)
    assert Path(w.compare.right.path) == other
    w.close()


def svg_texts(path) -> list[str]:
    import xml.etree.ElementTree as ET

    return [e.text for e in ET.parse(path).getroot().iter() if e.tag.endswith("text") and e.text]


def test_export_compare_without_a_name_uses_the_partner(qapp, tmp_path, capsys):
    from viz.cli import main

    out = tmp_path / "pair.svg"
    assert main(["export", "transpose-tile", "-i", "9", "--compare", "--out", str(out)]) == 0, capsys.readouterr().err
    texts = svg_texts(out)
    assert load("transpose-tile").title in texts and load("transpose-tile-pad").title in texts
    assert main(["export", "coalesced", "--compare", "--out", str(out)]) == 0
    assert load("stride-32").title in svg_texts(out)
    # A name still wins over the key.
    assert main(["export", "transpose-tile", "--compare", "transpose-tile-xor", "--out", str(out)]) == 0
    texts = svg_texts(out)
    assert load("transpose-tile-xor").title in texts and load("transpose-tile-pad").title not in texts


def test_compare_values_are_never_elided_in_presentation_mode(qtbot, user_dirs):  # noqa: F811
    """Presentation mode enlarges the font after the table is filled: the value columns
    must still be wide enough for every number (at 1280x720 they showed "1…" for 1,024)."""
    w = make_window(qtbot, "tma-ldmatrix-128b")
    w.resize(1280, 720)
    press_ctrl_m(qtbot, w)
    cp = w.compare
    qtbot.waitUntil(lambda: cp.right.analysis is not None and cp.table.rowCount() > 0, timeout=10000)
    before = cp.table.font().pointSizeF()
    w.a_present.setChecked(True)
    qtbot.waitUntil(lambda: cp.table.isVisible() and cp.table.font().pointSizeF() > before * 1.4, timeout=5000)
    try:
        def elided():
            fm = cp.table.fontMetrics()
            return [(c, r, cp.table.item(r, c).text(), cp.table.columnWidth(c))
                    for c in (1, 2) for r in range(cp.table.rowCount())
                    if cp.table.item(r, c).text()
                    and fm.horizontalAdvance(cp.table.item(r, c).text()) >= cp.table.columnWidth(c)]

        assert sum(bool(cp.table.item(r, c).text()) for c in (1, 2) for r in range(cp.table.rowCount())) > 10
        try:
            qtbot.waitUntil(lambda: not elided(), timeout=3000)
        except Exception:
            pass
        assert not elided(), elided()
    finally:
        w.a_present.setChecked(False)
        w.close()


def test_compare_steps_to_the_last_wavefront_of_the_longer_side(qtbot, user_dirs):  # noqa: F811
    """The 128-byte-swizzled ldmatrix.x4 tells 4 wavefronts (7 frames), its plain partner 32
    (35 frames): Right walks through all 35, the short side holding its summary, before
    the next instruction; Left walks back; leaving compare mode clamps to 7 again."""
    from viz.frames import frames as frames_of

    w = make_window(qtbot, "ldmatrix-x4-tile-sw128")
    press_ctrl_m(qtbot, w)
    cp, s = w.compare, w.session
    qtbot.waitUntil(lambda: cp.right.path is not None and cp.right.path.stem == "ldmatrix-x4-tile", timeout=10000)
    short, long_ = len(frames_of(s.detail)), len(frames_of(cp.right.detail))
    assert (short, long_) == (7, 35)
    assert w.timeline.frame_label.text() == "frame 1 / 35" and w.timeline.scrub.maximum() == 34
    for k in range(1, long_):
        qtbot.keyClick(w, Qt.Key.Key_Right)
        assert s.cursor.instruction == 0 and s.cursor.frame == k
        assert cp.right.cursor.frame == k and cp.right.frame.index == k
        assert s.frame.index == min(k, short - 1)          # the short story holds its last frame
    assert cp.right.frame.kind == "summary" and cp.right.frame.wavefront is None
    prev = frames_of(cp.right.detail)[-2]
    assert prev.kind == "wavefront" and prev.wavefront == 31
    assert w.timeline.frame_label.text() == "frame 35 / 35"
    qtbot.keyClick(w, Qt.Key.Key_Left)
    assert cp.right.frame.wavefront == 31 and s.frame.kind == "summary"
    qtbot.keyClick(w, Qt.Key.Key_Right)
    qtbot.keyClick(w, Qt.Key.Key_Right)                    # past the end of both: the next instruction
    assert s.cursor.instruction == 1 and s.cursor.frame == 0 and cp.right.cursor.instruction == 1
    qtbot.keyClick(w, Qt.Key.Key_Left)                     # back: the last frame of the longer story
    assert s.cursor.instruction == 0 and s.cursor.frame == 34
    qtbot.keyClick(w, Qt.Key.Key_End)
    assert s.cursor.frame == 34 and s.at_end() is False
    press_ctrl_m(qtbot, w)                                 # alone again: the short story's 7 frames
    assert s.cursor.frame == short - 1 and w.timeline.frame_label.text() == "frame 7 / 7"
    qtbot.keyClick(w, Qt.Key.Key_Right)
    assert s.cursor.instruction == 1 and s.cursor.frame == 0
    w.close()


def test_a_trace_opened_by_a_relative_path_is_not_its_own_partner(qapp, user_dirs, monkeypatch):  # noqa: F811
    """`warpviz app gemm_naive.wvtrace` from the traces folder: the partner is another
    recording of the same source (as for the absolute path), never the trace itself."""
    from viz.app.compare import trace_partner
    from viz.app.library import entries
    from viz.trace.tracefile import load as load_trace, shipped_dir

    folder = shipped_dir()
    es = [e for e in entries() if not e.launch]
    monkeypatch.chdir(folder)
    checked = 0
    for name in ("gemm_naive", "read_aos_r", "copy_float", "reduce_tree", "generic_atomic"):
        rel = Path(f"{name}.wvtrace")
        header = load_trace(rel).header
        got = trace_partner(header, rel, es)
        assert got == trace_partner(header, (folder / rel).resolve(), es)
        assert got is None or got.resolve() != (folder / rel).resolve(), name
        checked += got is not None
    assert checked >= 4


def test_compare_mode_comes_back_after_a_restart_and_says_so(qtbot, user_dirs):  # noqa: F811
    """Compare mode is remembered (README: what is kept between runs); when it comes back
    the status bar says so, and a window closed without it starts without it."""
    w = make_window(qtbot, "transpose-tile")
    press_ctrl_m(qtbot, w)
    w.close()
    w2 = make_window(qtbot, None)
    qtbot.waitUntil(lambda: w2.a_compare.isChecked() and w2.stack.currentIndex() == 1, timeout=5000)
    assert "Compare mode is on" in w2.statusBar().currentMessage()
    assert w2.compare.right.path is not None and w2.compare.right.path.stem == "transpose-tile-pad"
    press_ctrl_m(qtbot, w2)
    w2.close()
    w3 = make_window(qtbot, None)
    after(qtbot, 50)                  # past the restore that the window posts when compare was on
    assert not w3.a_compare.isChecked() and w3.stack.currentIndex() == 0
    assert "Compare mode" not in w3.statusBar().currentMessage()
    w3.close()


def test_compare_in_presentation_at_1080p_keeps_every_text_in_its_cell(qtbot, user_dirs):  # noqa: F811
    """A 1920x1080 screen in presentation mode, `ldmatrix-x4-tile-sw128` beside its plain
    partner, every frame of the longer story: the two pictures get the screen's height (the
    figures table keeps three rows), and every text the painter draws is at 14 px or more,
    inside its cell (a lane's box, a word, the figures row), on no other text (the rules of
    tests/test_picture_text.py, on the record of the paint the app did)."""
    from test_picture_text import Checker

    w = make_window(qtbot, "ldmatrix-x4-tile-sw128")
    press_ctrl_m(qtbot, w)
    cp, s = w.compare, w.session
    qtbot.waitUntil(lambda: cp.right.path is not None and cp.right.path.stem == "ldmatrix-x4-tile", timeout=10000)
    qtbot.keyClick(w, Qt.Key.Key_F11)
    assert w.presenting and w.view.theme.scale > 1
    w.setGeometry(0, 0, 1920, 1080)           # offscreen has no 1080p screen to fill
    views = (cp.view_left, cp.view_right)
    qtbot.waitUntil(lambda: all(v.height() >= 800 for v in views), timeout=5000)
    assert not cp.pick_row.isVisible() and cp.table.isVisible() and cp.table.height() < 200
    scale = w.view.theme.scale
    checkers = [Checker(v.height(), scale, name) for v, name in zip(views, ("left", "right"))]
    smallest = 99
    try:
        for k in range(35):
            assert s.cursor.frame == k and s.cursor.instruction == 0
            for v, c, side in zip(views, checkers, (s, cp.right)):
                v.grab()                      # the paint the screen gets, with its record
                L = v.layout_
                assert L is not None and L.texts
                c.check(L, side.frame)
                smallest = min(smallest, min(t.px for t in L.texts))
            qtbot.keyClick(w, Qt.Key.Key_Right)
        assert s.cursor.instruction == 1                 # the 35 frames of the longer story, then on
    finally:
        qtbot.keyClick(w, Qt.Key.Key_Escape)
        w.close()
    problems = checkers[0].problems + checkers[1].problems
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])
    assert smallest >= 14
