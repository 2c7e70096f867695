"""A recorded trace in the app, used as a user would: open it (command line, File → Open,
drag and drop, the library's Traces group), step frames with keys through each warp's own
stream, read the header, Figures and heat map; a corrupt or newer trace is a message and
the app keeps what it showed."""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app_helpers import make_window, said, user_dirs, window  # noqa: F401 - fixtures
from viz.cli import main
from viz.trace.analysis import analyze_trace, explain_trace
from viz.trace.tracefile import load as load_trace

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
PAD = TRACES / "transpose_pad.wvtrace"


def key(qtbot, w, k, mod=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(w.view, k, mod)


def wait_trace(qtbot, w):
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)


def header_texts(w) -> str:
    w.view.repaint()
    return " ".join(t.text for t in w.view.layout_.texts)


def test_open_a_trace_from_the_command_line_and_step_with_keys(qtbot, user_dirs):
    w = make_window(qtbot, str(PAD))
    s = w.session
    assert s.is_trace and s.path == PAD and s.error is None
    wait_trace(qtbot, w)
    n = s.trace.stream_length(0, 0)
    assert s.instruction_count == n == 16
    assert f"step 1 of {n} · instruction " in header_texts(w)
    assert "transpose_pad.cu:" in header_texts(w)
    # Right walks the frames of instruction 1, then on into instruction 2 of this warp
    frames = len(s.frames)
    for _ in range(frames):
        key(qtbot, w, Qt.Key.Key_Right)
    assert (s.cursor.instruction, s.cursor.frame) == (1, 0)
    assert f"step 2 of {n} · instruction " in header_texts(w)
    assert w.timeline.instr.value() == 2
    key(qtbot, w, Qt.Key.Key_Down)
    assert s.cursor.instruction == 2
    # the picture is the recorded execution: its instruction is the record's
    rows = s.trace.stream(0, 0)
    assert s.detail.access.index == int(s.trace.trace.instr[rows[2]])
    key(qtbot, w, Qt.Key.Key_End)
    assert s.frame.kind == "summary"
    # PgDn: the next warp, same instruction position
    key(qtbot, w, Qt.Key.Key_PageDown)
    assert (s.cursor.block, s.cursor.warp, s.cursor.instruction) == (0, 1, 2)
    assert "warp 1" in w.timeline.where.text()
    assert "transpose_pad.cu:" in w.source.text() and "lane" in w.source.text()
    # the launch file shows read-only; nothing to save
    assert w.editor.text.isReadOnly() and w.editor.text.toPlainText().startswith("title")
    assert "read-only" in w.editor.info.text()
    assert w.save() is None and not w.modified()
    w.close()


def test_figures_and_heat_map_equal_the_analysis(qtbot, user_dirs):
    w = make_window(qtbot, str(TRACES / "shared_stride--shared-stride-32.wvtrace"))
    wait_trace(qtbot, w)
    an = analyze_trace(load_trace(TRACES / "shared_stride--shared-stride-32.wvtrace"))
    vals = w.figures.values()
    for k, v in an.metrics.items():
        assert vals[k] == f"{v:,}"
    assert any(v > 0 for v in an.metrics.values())
    for d in an.per_access():
        for name, value, _why in explain_trace(d):
            if name:
                assert vals[(d.index, name)] == value
    conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    assert int(vals[conflicts].replace(",", "")) == an.metrics[conflicts] > 0
    lp = w.launch
    qtbot.waitUntil(lambda: lp.values is not None, timeout=20000)
    d = w.session.detail
    assert np.array_equal(lp.values, an.per_warp(d.access.index))
    w.close()


def test_drop_a_trace_and_the_library_lists_the_shipped_ones(qtbot, window):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(PAD))])
    pos = QPointF(window.width() / 2, window.height() / 2)
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, drop)
    assert window.session.is_trace and window.session.path == PAD
    assert "transpose_pad.wvtrace" in window.windowTitle()
    # the library: a Traces group with every shipped trace, and the "trace" tag
    lib = window.library
    names = lib.visible_names()
    assert all(p.stem in names for p in TRACES.glob("*.wvtrace"))
    assert lib.tag.findData("trace") >= 0
    lib.tag.setCurrentIndex(lib.tag.findData("trace"))
    assert sorted(lib.visible_names()) == sorted(p.stem for p in TRACES.glob("*.wvtrace"))
    # clicking a trace in the library opens it; clicking a scenario goes back to editing
    item = lib.item_for("reduce_tree")
    lib.tree.itemClicked.emit(item, 0)
    assert window.session.path.name == "reduce_tree.wvtrace"
    qtbot.waitUntil(lambda: window.session.trace_analysis is not None, timeout=20000)
    lib.tag.setCurrentIndex(0)
    lib.tree.itemClicked.emit(lib.item_for("coalesced"), 0)
    assert not window.session.is_trace and window.session.scenario.name == "coalesced"
    assert not window.editor.text.isReadOnly()


def test_a_corrupt_or_newer_trace_is_a_message_and_the_app_keeps_running(qtbot, window, tmp_path):
    before = window.session.path
    bad = tmp_path / "broken.wvtrace"
    bad.write_bytes(PAD.read_bytes()[:700])
    assert not window.open_path(bad)
    assert "corrupt or truncated" in window.last_open_error and "broken.wvtrace" in window.last_open_error
    assert "broken.wvtrace" in window.statusBar().currentMessage()
    assert window.session.path == before and not window.session.is_trace
    # a newer format
    newer = tmp_path / "newer.wvtrace"
    with zipfile.ZipFile(PAD) as src, zipfile.ZipFile(newer, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "header.json":
                h = json.loads(data)
                h["version"] = 99
                data = json.dumps(h).encode()
            dst.writestr(item, data)
    assert not window.open_path(newer)
    assert "newer" in window.last_open_error
    # still working: keys step the scenario on screen
    key(qtbot, window, Qt.Key.Key_Right)
    assert window.session.cursor.frame == 1


def test_cli_refuses_an_unreadable_trace_before_any_window(tmp_path, capsys):
    bad = tmp_path / "bad.wvtrace"
    bad.write_text("not a zip")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.wvtrace" in err and "corrupt or truncated" in err


def test_export_dialog_exports_the_trace_on_screen(qtbot, user_dirs, tmp_path):
    import imageio.v3 as iio
    from test_app_export import export_now, open_dialog, small, type_into

    from viz.frames import Cursor

    w = make_window(qtbot, str(PAD))
    wait_trace(qtbot, w)
    w.session.go(instr=3, block=2, warp=5, frame=0)
    d = open_dialog(qtbot, w)
    assert d.instructions.text() == "4" and d.block.text() == "2" and d.warp.text() == "5"
    assert d.problem is None, d.problem
    small(qtbot, d)
    out = tmp_path / "trace.gif"
    type_into(qtbot, d.path, str(out))
    msg = export_now(qtbot, d)
    want = w.session.timeline.frame_count(Cursor(3, 2, 5))
    assert msg.startswith("Wrote") and d.result.pictures == want
    assert len(list(iio.imiter(out))) == want
    d.close()
    w.close()


def test_source_panel_lists_the_worst_lines_and_steps_to_a_line(qtbot, user_dirs):
    from viz.trace.analysis import source_lines

    path = TRACES / "reduce_tree.wvtrace"
    w = make_window(qtbot, str(path))
    wait_trace(qtbot, w)
    panel = w.trace_source
    qtbot.waitUntil(lambda: panel.lines.topLevelItemCount() > 0, timeout=10000)
    an = analyze_trace(load_trace(path))
    rows = source_lines(an)        # the traced kernel's lines that ran; the module's other kernels stay out
    assert rows and all(r["warp_instructions"] for r in rows)
    assert panel.lines.topLevelItemCount() == len(rows)
    # worst first: bank conflicts, then sectors, never grow down the list (tests/test_app_source_panel.py sorts)
    rows = panel.visible_rows()
    worst = [(r["bank_conflicts"], r["sectors"]) for r in rows]
    assert worst == sorted(worst, reverse=True) and worst[0] > (0, 0)
    # per-line figures sum to the totals of analyze
    m = an.metrics
    assert sum(r["sectors"] for r in rows) == sum(v for k, v in m.items() if "sectors" in k)
    assert sum(r["wavefronts"] for r in rows) == sum(v for k, v in m.items() if "wavefronts" in k)
    first = panel.lines.topLevelItem(0)
    assert first.text(6) == rows[0]["source"] and first.text(2) == f"{rows[0]['sectors']:,}"
    # the source shows the figures beside its lines
    assert f"wf {rows[0]['wavefronts']} conf {rows[0]['bank_conflicts']} sec {rows[0]['sectors']}" \
        in panel.source.toPlainText()
    # go to warp 4 (a short stream), then click the line of the final global store (warp 0 only)
    store = next(r for r in rows if any("st.global" in p for p in r["ptx"]) and r["warp_instructions"])
    w.session.go(block=1, warp=4, instr=0)
    k = rows.index(store)
    item = panel.lines.topLevelItem(k)
    panel.lines.itemClicked.emit(item, 0)
    c = w.session.cursor
    d = w.session.detail
    assert d.access.index in store["instructions"]
    assert (c.block, c.warp) == (1, 0) and c.frame == 0     # warp 4 never runs it: the block's first warp that does
    rows_w = w.session.trace.stream(c.block, c.warp)
    first_k = next(j for j, r in enumerate(rows_w) if int(w.session.trace.trace.instr[r]) in store["instructions"])
    assert c.instruction == first_k
    assert "st.global" in panel.ptx.toPlainText() and store["source"] in panel.ptx.toPlainText()
    assert str(store["line"]) in panel.source.textCursor().selectedText()[:6]
    # a line the warp on screen runs: stays in that warp
    loop = next(r for r in rows if r["wavefronts"] and not r["sectors"])
    panel.lines.itemClicked.emit(panel.lines.topLevelItem(rows.index(loop)), 0)
    assert (w.session.cursor.block, w.session.cursor.warp) == (1, 0)
    assert w.session.detail.access.index in loop["instructions"]
    w.close()


def _damage(path: Path, how: str) -> None:
    """Make the trace at ``path`` unreadable in one of the ways a review found."""
    import os

    from test_trace_hostile import entries_of, raw_zip

    if how == "corrupt deflate data":
        blob = path.read_bytes()
        k = blob.index(b"offset.npy") + 60               # inside the deflated array
        path.write_bytes(blob[:k] + b"\xff" * 64 + blob[k + 64:])
    elif how == "deep JSON":
        with zipfile.ZipFile(PAD) as z:
            parts = {n: z.read(n) for n in z.namelist()}
        parts["header.json"] = b'{"format": "warpviz-trace", "version": 1, "launch": ' + b"[" * 100_000 \
            + b"]" * 100_000 + b"}"
        with zipfile.ZipFile(path, "w") as z:
            for n, b in parts.items():
                z.writestr(n, b)
    elif how == "a block outside the grid":
        h = json.loads(zipfile.ZipFile(PAD).read("header.json"))
        h["launch"]["grid"] = [1, 1, 1]
        entries = entries_of(PAD)
        blob = json.dumps(h).encode()
        co = zlib.compressobj(6, zlib.DEFLATED, -15)
        data = co.compress(blob) + co.flush()
        path.write_bytes(raw_zip([e if e[0] != "header.json" else ("header.json", 8, zlib.crc32(blob), len(data),
                                                                     len(blob), data) for e in entries]))
    elif how == "a folder":
        path.unlink()
        path.mkdir()
    elif how == "a named pipe":
        path.unlink()
        os.mkfifo(path)


@pytest.mark.parametrize("how", ["corrupt deflate data", "deep JSON", "a block outside the grid", "a folder",
                                 "a named pipe"])
def test_the_app_starts_when_the_trace_it_had_open_became_unreadable(qtbot, user_dirs, tmp_path, how):
    """The app remembers the last file (settings' last_scenario) and opens it at start; a
    trace that was damaged since is refused with its paragraph and the default scenario opens."""
    import shutil

    if how == "a named pipe" and not hasattr(__import__("os"), "mkfifo"):
        pytest.skip("named pipes")
    mine = tmp_path / "mine.wvtrace"
    shutil.copyfile(PAD, mine)
    w = make_window(qtbot, str(mine))
    assert w.session.is_trace and w.session.path == mine
    w.close()
    _damage(mine, how)
    w2 = make_window(qtbot, None)
    assert not w2.session.is_trace and w2.session.path.stem == "transpose-tile" and w2.session.error is None
    assert w2.last_open_error.startswith(str(mine)) and "Fix:" in w2.last_open_error
    assert "mine.wvtrace" in said(w2)                 # shown while the window was built
    key(qtbot, w2, Qt.Key.Key_Right)                     # and it works
    assert w2.session.cursor.frame == 1
    w2.close()


def test_a_trace_of_a_huge_grid_shows_the_heat_map_of_its_first_blocks(qtbot, user_dirs, tmp_path):
    """A header grid of 2^27 blocks (195 recorded would be as good as 64): the heat map draws
    the grid's first 2^21 warps, not an array of 2^27 blocks, and says so."""
    from test_trace_hostile import members, mutated

    from viz.trace.analysis import HEAT_MAP_WARPS

    h = json.loads(members(TRACES / "copy_guarded.wvtrace")["header.json"])
    h["launch"]["grid"] = [2**27]
    path = mutated(tmp_path, "copy_guarded", header=h)
    w = make_window(qtbot, str(path))
    wait_trace(qtbot, w)
    lp = w.launch
    qtbot.waitUntil(lambda: lp.values is not None, timeout=20000)
    assert lp.values.shape == (HEAT_MAP_WARPS // 2, 2) and lp.shown_blocks == HEAT_MAP_WARPS // 2
    assert lp.image.image.size < 1.01 * HEAT_MAP_WARPS            # (a 1-D grid wraps into a square)
    assert "first 1,048,576 of 134,217,728 blocks" in lp.info.text()
    assert lp.warp_at(1.5, 0.5) == (0, 1)                                  # block 0, warp 1
    assert lp.warp_at(0.5, 10**6) is None                                  # below the drawn rows
    w.session.go(block=15, warp=1)
    assert w.session.cursor.block == 15 and w.session.detail is not None
    w.session.go(block=2**27 - 1, warp=0)                 # a block that was not recorded, outside the map
    assert w.session.cursor.block == 2**27 - 1 and not lp.marker.isVisible()
    w.close()


def test_a_large_trace_opens_off_the_gui_thread_and_the_open_can_be_cancelled(qtbot, window, monkeypatch):
    """A trace over QUICK_TRACE_BYTES is read and checked on a worker thread behind a progress
    dialog: the window keeps running its timers meanwhile, and Cancel leaves what was open."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QProgressDialog, QPushButton

    from viz.app import window_files as window_module
    from viz.engine import Cancelled
    from viz.trace import detail

    w = window
    monkeypatch.setattr(window_module, "QUICK_TRACE_BYTES", 0)     # every trace takes the large path
    assert w.open_trace(PAD) and w.session.trace is not None      # the worker's result is shown
    assert w.session.name == "transpose_pad"

    import threading

    ticks, real_open, gone = [], detail.TraceSource.open, threading.Event()   # gone: never set
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: ticks.append(1))
    heartbeat.start(20)

    def slow_open(path, progress=None, cancelled=None):
        for _ in range(60000):                  # a load that only ends when it is cancelled (gives up after
            if cancelled():                     # 10 minutes, long after a loaded machine clicks Cancel)
                raise Cancelled()
            progress(0.25, "read")
            gone.wait(0.01)
        return real_open(path, progress, cancelled)

    clicked = []

    def press_cancel():                         # as a user does: click the dialog's Cancel button
        dialogs = [d for d in w.findChildren(QProgressDialog) if d.isVisible()]
        if dialogs:
            clicked.append(len(ticks))
            button = dialogs[0].findChild(QPushButton)
            assert button.text() == "Cancel"
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        else:
            QTimer.singleShot(50, press_cancel)

    monkeypatch.setattr(detail.TraceSource, "open", staticmethod(slow_open))
    QTimer.singleShot(400, press_cancel)
    other = TRACES / "copy_float.wvtrace"
    assert not w.open_trace(other)
    heartbeat.stop()
    # the GUI thread ran its event loop while the load was running: the heartbeat ticked and
    # the Cancel button was clicked through it (no wall-clock count: under load the timer
    # coalesces its ticks)
    assert clicked and clicked[0] >= 1 and len(ticks) >= 1
    assert "cancelled" in w.statusBar().currentMessage()
    assert w.session.name == "transpose_pad"        # what was open stays


def test_one_instruction_number_in_the_picture_figures_and_analyze(qtbot, user_dirs, capsys):
    """transpose.cu holds 12 kernels: the Figures panel lists only the traced kernel's
    executed instructions, numbered as `warpviz analyze` numbers them, and the picture's
    header names the same number for every step of the warp's stream."""
    import json

    from viz.cli import main

    path = TRACES / "transpose_tile_unpadded.wvtrace"
    assert main(["analyze", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    numbers = {a["index"]: a["number"] for a in doc["accesses"]}
    assert sorted(numbers.values()) == list(range(1, len(numbers) + 1)) and len(numbers) < len(load_trace(path).instructions)
    w = make_window(qtbot, str(path))
    wait_trace(qtbot, w)
    qtbot.waitUntil(lambda: w.figures.tree.topLevelItemCount() > 0, timeout=20000)
    tree = w.figures.tree
    heads = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    listed = [h for h in heads if h.startswith("instruction ")]
    assert listed == [f"instruction {n}" for n in sorted(numbers.values())], heads
    s = w.session
    for k in range(s.instruction_count):
        s.go(instr=k)
        d = s.detail
        assert f"step {k + 1} of {s.instruction_count} · instruction {numbers[d.access.index]}" in header_texts(w)
    w.close()
