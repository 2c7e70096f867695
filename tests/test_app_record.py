"""Recording a trace from the app, as a kernel engineer does it: open a launch file (File →
Open, drag and drop, the library), read its kernel in the Source panel, press Record trace
or Record and validate in the GPU panel, watch the stages, Cancel, read the messages of a
bad launch file, save the new trace; compare two traces side by side (Ctrl+M).

No GPU is needed: the GPU panel's recorder runs its real worker thread and its real child
process, which serves ``fake_gpu.ReplaySession`` (the records of a shipped H100 trace);
Nsight Compute's counters are the ones shipped with that trace. The ``-m gpu`` test at the
end records for real.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog  # noqa: E402

from app_helpers import make_window, user_dirs, window  # noqa: E402,F401 - fixtures
from fake_gpu import TRACES, replayed_counters  # noqa: E402
from helpers import HAVE_NVCC, have_pycuda
from viz.app.gpu_panel import OTHER_LABELS  # noqa: E402
from viz.engine import METRIC_NAMES  # noqa: E402
from viz.trace import tracefile  # noqa: E402
from viz.trace.analysis import analyze_trace  # noqa: E402
from viz.trace.launch import load_launch  # noqa: E402
from viz.gpu.trace_pipeline import Recorder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REDUCE = ROOT / "kernels" / "trace" / "reduce_shfl.launch.toml"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas (the recording compiles the kernel)")


def panel(w):
    if w.gpu_panel is None:
        w._build_plots()
    assert w.gpu_panel is not None
    return w.gpu_panel


def table(p) -> dict[str, list[str]]:
    """The GPU panel's trace table: {Nsight Compute metric name: [trace, Nsight Compute, mark]}."""
    return {p.table.item(i, 0).data(Qt.ItemDataRole.UserRole): [p.table.item(i, j).text() for j in (1, 2, 3)]
            for i in range(p.table.rowCount())}


def click(qtbot, button):
    assert button.isVisible() and button.isEnabled(), (button.objectName(), button.toolTip())
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class NoNcuRecorder(Recorder):
    """The fake GPU with this machine's tools (no ncu here, or perhaps there is)."""


class ReplayRecorder(Recorder):
    """The fake GPU, and the Nsight Compute counters shipped with the replayed trace."""

    def missing(self, validate):
        return None


@pytest.fixture
def fake_gpu(monkeypatch):
    """The panel's recorder replays reduce_shfl's H100 recording; the panel sees that GPU."""
    trace = TRACES / "reduce_shfl.wvtrace"
    monkeypatch.setenv("WARPVIZ_FAKE_TRACE", str(trace))
    monkeypatch.delenv("WARPVIZ_FAKE_HANG", raising=False)
    monkeypatch.delenv("WARPVIZ_FAKE_FAULT", raising=False)

    def install(w, recorder_class=ReplayRecorder):
        p = panel(w)
        p.recorder.close()
        p.recorder = recorder_class(child="fake_gpu:ReplaySession", counters=replayed_counters(trace))
        p.set_device(tracefile.load(trace).header["gpu"])
        return p

    return install


def drop(w, path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    pos = QPointF(w.width() / 2, w.height() / 2)
    enter = QDragEnterEvent(pos.toPoint(), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(w, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(w, QDropEvent(pos, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                         Qt.KeyboardModifier.NoModifier))


# ---------------------------------------------------------------------------- opening a launch file


def test_open_a_launch_file_shows_its_kernel_and_why_it_cannot_record_here(qtbot, window, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(REDUCE), ""))
    window.a_open.trigger()                                       # File → Open…
    s, p = window.session, panel(window)
    assert s.is_launch and s.launch.kernel == "reduce_shfl" and s.scenario is None
    assert window.windowTitle().startswith(load_launch(REDUCE).title)
    # the Source panel: the kernel's CUDA source, its definition selected
    src = window.trace_source
    assert "reduce_shfl.cu: the kernel reduce_shfl (line 3)" in src.note.text()
    assert src.source.textCursor().selectedText().strip().startswith('3  extern "C" __global__ void reduce_shfl(')
    # the GPU panel offers recording, not the scenario buttons; the launch file read-only
    assert p.b_record.isVisible() and p.b_record_validate.isVisible() and not p.b_run.isVisible()
    assert "kernel reduce_shfl of reduce_shfl.cu, grid 20 × block 256, 3 arguments" in p.trace_info.text()
    assert window.editor.text.isReadOnly() and window.editor.text.toPlainText() == REDUCE.read_text()
    assert window.save() is None and window.save_copy() is None and not window.modified()   # nothing to save
    assert "read-only" in window.statusBar().currentMessage()
    from viz.app.export_dialog import show as show_export

    dialog = show_export(window)                                                            # Ctrl+E: says why not
    dialog.update_preview()
    assert dialog.problem.startswith("Nothing to export yet: record the launch file first")
    assert not dialog.b_export.isEnabled()
    dialog.close()
    from viz.app import settings

    assert list(settings.user_scenario_dir().glob("*")) == []                             # no copy made
    if p.device_info is None:                                     # this machine: no GPU
        qtbot.waitUntil(lambda: p.device_reason is not None, timeout=20000)
        assert not p.b_record.isEnabled() and not p.b_record_validate.isEnabled()
        assert p.b_record.toolTip() == p.device_reason and p.device.text() == p.device_reason
        assert p.device_reason not in p.trace_info.text()             # said once, on the device line
        p.record(validate=True)                                   # refused, with the reason
        assert p.status.text() == p.device_reason
    # the picture says what to do
    window.view.repaint()
    assert window.view._launch_note().startswith("Launch file of the kernel reduce_shfl (reduce_shfl.cu)")
    # the library lists the launch files of kernels/ and opens them; a scenario opens as before
    lib = window.library
    lib.search.setText("reduce_shfl")
    item = lib.item_for("reduce_shfl.launch")
    assert item is not None and item.parent().isExpanded()
    lib.tree.itemClicked.emit(item, 0)
    assert s.is_launch and s.launch_path == REDUCE
    lib.search.clear()
    lib.tree.itemClicked.emit(lib.item_for("coalesced"), 0)
    assert not s.is_launch and s.scenario.name == "coalesced" and p.b_run.isVisible() and not p.b_record.isVisible()


def test_a_bad_launch_file_is_the_clis_paragraph_and_the_app_keeps_running(qtbot, window, tmp_path):
    bad = tmp_path / "mine.launch.toml"
    bad.write_text(REDUCE.read_text().replace('source = "reduce_shfl.cu"', 'source = "missing.cu"'))
    with pytest.raises(Exception) as cli:
        load_launch(bad)
    drop(window, bad)
    s, p = window.session, panel(window)
    assert s.is_launch and s.launch is None
    paragraph = str(cli.value)
    assert paragraph.startswith(f"{bad} (source): the source `missing.cu` does not exist") and "Fix: " in paragraph
    assert paragraph in p.trace_info.text() and paragraph in window.trace_source.note.text()
    assert not p.b_record.isEnabled() and paragraph in p.b_record.toolTip()
    window.view.repaint()
    assert paragraph in window.view._launch_note()
    assert not window.timeline.isEnabled() and window.timeline.frame_label.text() == ""   # nothing to step
    # a TOML error names the line
    bad.write_text("title = 'x'\nkernel = = 3\n")
    window.open_path(bad)
    assert "line 2" in p.trace_info.text() and str(bad) in p.trace_info.text()
    # the app goes on: a scenario opens and plays
    window.open_path(ROOT / "assets" / "scenarios" / "coalesced.toml")
    assert window.session.scenario is not None and window.session.step("frame", 1)
    assert window.timeline.isEnabled()


def test_an_unreadable_launch_file_or_source_is_a_paragraph_not_a_hang(qtbot, window, tmp_path):
    """A FIFO (reading it would wait for a writer for ever), a device, a non-UTF-8 file and a
    2 GiB source: each opens at once with the paragraph in the GPU and Source panels; nothing
    is read unbounded on the GUI thread."""
    from viz.trace.launch import MAX_SOURCE_BYTES

    s, p = window.session, panel(window)
    fifo = tmp_path / "fifo.launch.toml"
    os.mkfifo(fifo)
    latin = tmp_path / "latin.launch.toml"
    latin.write_bytes(REDUCE.read_bytes().replace(b'title = "', b'title = "caf\xe9 '))
    huge = tmp_path / "huge.launch.toml"
    huge.write_text(REDUCE.read_text().replace('source = "reduce_shfl.cu"', 'source = "huge.cu"'))
    with open(tmp_path / "huge.cu", "wb") as f:
        f.truncate(2 << 30)                                     # sparse: no disk used
    device = tmp_path / "dev.launch.toml"
    device.symlink_to("/dev/zero")
    for path, words in [(fifo, "not a regular file"), (device, "not a regular file"),
                        (latin, "is not UTF-8 text: line 1"), (huge, f"over warpviz's limit of {MAX_SOURCE_BYTES:,}")]:
        assert window.open_path(path)
        assert s.is_launch and s.launch is None and words in str(s.launch_error), (path, s.launch_error)
        assert str(s.launch_error) in p.trace_info.text() and str(s.launch_error) in window.trace_source.note.text()
        assert not p.b_record.isEnabled()
    window.open_path(ROOT / "assets" / "scenarios" / "coalesced.toml")
    assert window.session.scenario is not None and window.session.step("frame", 1)


def test_a_trace_outside_the_shipped_folder_never_chooses_the_launch_file_to_record(qtbot, window, fake_gpu,
                                                                                    tmp_path):
    """A trace's header names the launch file it was recorded from; Record never uses that name
    (a shared trace would choose what warpviz compiles): a copy of a shipped trace, or one whose
    header names a path out of kernels/, records only from a launch file the user opens."""
    p = fake_gpu(window)
    shipped = tracefile.load(TRACES / "copy_float.wvtrace")
    for k, name in enumerate(("copy_float.launch.toml", "../../../../tmp/evil.launch.toml",
                              str(tmp_path / "evil.launch.toml"), "trace/reduce_shfl.launch.toml")):
        shipped.header["launch_file_name"] = name
        (tmp_path / str(k)).mkdir()
        copy = tracefile.save(shipped, tmp_path / str(k) / "copy_float.wvtrace")     # a shipped name, elsewhere
        opened = window.open_path(copy)
        assert opened or k > 0                     # (a trace reader may refuse the odd names outright)
        if opened:
            assert window.session.is_trace and p.recordable() is None
            assert not p.b_record.isEnabled() and "launch file is not known here" in p.b_record.toolTip()
    window.open_path(TRACES / "copy_float.wvtrace")                # the shipped one: its launch file in kernels/
    assert p.recordable() == ROOT / "kernels" / "copy_float.launch.toml"


# ---------------------------------------------------------------------------- recording


@nvcc
def test_record_and_validate_opens_the_new_trace_with_the_counter_table(qtbot, window, fake_gpu, tmp_path,
                                                                        monkeypatch):
    window.open_path(REDUCE)
    p = fake_gpu(window)
    stages = []
    p.runner.progress.connect(lambda f, t: stages.append(t))
    assert p.b_record_validate.toolTip().startswith("Record, then count the plain kernel")
    click(qtbot, p.b_record_validate)
    assert p.b_cancel.isEnabled() and not p.b_record.isEnabled() and p.bar.isVisible()
    qtbot.waitUntil(lambda: window.session.is_trace, timeout=60000)
    s = window.session
    assert s.path.parent == Path(os.environ["WARPVIZ_DATA_DIR"]) / "traces" and s.path.name == "reduce_shfl.wvtrace"
    assert stages[0] == "compile" and stages[-1] == "analyse" and "ncu" in stages
    assert not p.b_cancel.isEnabled() and not p.bar.isVisible() and p.b_record.isEnabled()
    # what it says: records, file, and all ten equal
    rec = p.last_recording
    assert p.status.text() == (f"Recorded {rec.trace.records:,} warp-level executions of reduce_shfl into "
                               "reduce_shfl.wvtrace. Nsight Compute: 10 of 10 metrics equal the trace.")
    assert p.status.toolTip() == str(s.path)
    assert p.b_record.toolTip().endswith(f"Recorded from {REDUCE}.")
    # the table: the trace's analysis beside the counters stored in it, each marked
    qtbot.waitUntil(lambda: s.trace_analysis is not None, timeout=20000)
    shipped = tracefile.load(TRACES / "reduce_shfl.wvtrace")
    an = analyze_trace(shipped)
    rows = table(p)
    for m in METRIC_NAMES:
        assert rows[m] == [f"{an.metrics[m]:,}", f"{shipped.header['ncu'][m]:,}", "✓"]
    for k, v in shipped.header["ncu_other"].items():
        assert rows[k] == [f"{an.other_metrics.get(k, 0):,}", f"{v:,}", "✓"]
    labels = [p.table.item(i, 0).text() for i in range(p.table.rowCount())]
    assert labels[:2] == ["shared load instructions", "shared store instructions"]   # short, as in Figures
    assert labels[10:] == [OTHER_LABELS[k] for k in sorted(shipped.header["ncu_other"])] != []
    assert p.table.item(10, 0).font().italic() and "(outside the ten)" in p.table.item(10, 0).toolTip()
    assert p.tabs.tabText(0) == "Trace vs Nsight Compute"
    assert "10 of 10 metrics equal the trace" in p.summary.text()
    # the trace is the current source everywhere: picture, Source panel, library
    assert window.view.layout_ is not None or s.detail is not None
    qtbot.waitUntil(lambda: window.trace_source.lines.topLevelItemCount() > 0, timeout=20000)
    assert window.library.item_for("reduce_shfl") is not None
    # Record trace again (from the trace): a second file, nothing overwritten
    click(qtbot, p.b_record)
    qtbot.waitUntil(lambda: s.path.name == "reduce_shfl-2.wvtrace", timeout=60000)
    assert p.last_recording.rows is None and "Nsight Compute" not in p.status.text()
    # Save trace as…: a copy where the user says, written atomically
    target = tmp_path / "keep" / "mine.wvtrace"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    click(qtbot, p.b_save_trace)
    assert target.read_bytes() == s.path.read_bytes() and p.status.text() == f"Saved the trace as {target}."
    assert [f.name for f in target.parent.iterdir()] == ["mine.wvtrace"]
    # Ctrl+M: my recording beside the shipped H100 recording of the same kernel
    press_ctrl_m(qtbot, window)
    qtbot.waitUntil(lambda: window.compare.right.path == TRACES / "reduce_shfl.wvtrace", timeout=20000)
    title = load_launch(REDUCE).title                               # one title: the file names tell them apart
    assert window.compare.view_left.options.title == f"{title} (reduce_shfl-2.wvtrace)"
    assert window.compare.view_right.options.title == f"{title} (reduce_shfl.wvtrace)"


@nvcc
def test_a_counter_that_differs_is_marked_in_the_table(qtbot, window, fake_gpu):
    window.open_path(REDUCE)
    p = fake_gpu(window)
    key = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    p.recorder.counters = replayed_counters(TRACES / "reduce_shfl.wvtrace", {key: 7})
    click(qtbot, p.b_record_validate)
    qtbot.waitUntil(lambda: window.session.is_trace and window.session.trace_analysis is not None, timeout=60000)
    rows = {m: v[2] for m, v in table(p).items()}
    assert rows[key] == "differs" and [m for m in METRIC_NAMES if rows[m] != "✓"] == [key]
    assert p.status.text().endswith("Nsight Compute: 9 of 10 metrics equal the trace.")
    assert "9 of 10 metrics equal the trace" in p.summary.text()


@nvcc
def test_cancel_stops_the_gpu_process_and_the_app_stays_usable(qtbot, window, fake_gpu, monkeypatch):
    window.open_path(REDUCE)
    p = fake_gpu(window)
    monkeypatch.setenv("WARPVIZ_FAKE_HANG", "1")           # the kernel never ends
    click(qtbot, p.b_record)
    qtbot.waitUntil(lambda: "recording run" in p.status.text(), timeout=60000)
    assert p.status.text() == "Recording reduce_shfl: recording run (step 3 of 5)…"
    pid = p.recorder.pid
    assert pid is not None and alive(pid)
    click(qtbot, p.b_cancel)
    assert p.status.text() == "Cancelled: the GPU process was stopped; nothing was written."
    qtbot.waitUntil(lambda: not alive(pid), timeout=20000)
    assert not p.b_cancel.isEnabled() and not p.bar.isVisible()
    assert window.session.is_launch and not list((Path(os.environ["WARPVIZ_DATA_DIR"]) / "traces").glob("*"))
    # the app answers: keys, another file, and a new recording in a fresh GPU process
    window.open_path(ROOT / "assets" / "scenarios" / "coalesced.toml")
    assert window.session.step("frame", 1)
    assert p.status.text() == ""                         # the outcome spoke of the launch file
    window.open_path(REDUCE)
    monkeypatch.delenv("WARPVIZ_FAKE_HANG")
    qtbot.waitUntil(p.b_record.isEnabled, timeout=20000)
    click(qtbot, p.b_record)
    qtbot.waitUntil(lambda: window.session.is_trace, timeout=60000)
    second = p.recorder.pid
    assert second not in (None, pid)
    window.close()                                        # the GPU process ends with the window
    qtbot.waitUntil(lambda: not alive(second), timeout=20000)


@nvcc
def test_record_time_failures_are_paragraphs_in_the_panel(qtbot, window, fake_gpu, tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text('extern "C" __global__ void reduce_shfl(const float* a, float* b, int n) { b[0] = a[0] +; }\n')
    launch = tmp_path / "k.launch.toml"
    launch.write_text(REDUCE.read_text().replace('source = "reduce_shfl.cu"', 'source = "k.cu"'))
    window.open_path(launch)
    p = fake_gpu(window)
    click(qtbot, p.b_record)
    qtbot.waitUntil(lambda: "does not compile" in p.status.text(), timeout=60000)
    assert p.status.text().startswith(f"{src.resolve()} (nvcc): the source does not compile: ")
    assert window.session.is_launch and p.b_record.isEnabled()
    # wrong argument count: checked against the compiled kernel, as the CLI does (the source beside the
    # launch file: a launch file's source stays inside its folder)
    (tmp_path / "r.cu").write_text(REDUCE.with_suffix("").with_suffix(".cu").read_text())
    launch.write_text(REDUCE.read_text().replace('source = "reduce_shfl.cu"', 'source = "r.cu"')
                      .replace('[[arg]]\ntype = "int"\nvalue = 5000\n', ""))
    window.open_path(launch)
    click(qtbot, p.b_record)
    qtbot.waitUntil(lambda: "parameter(s)" in p.status.text(), timeout=60000)
    assert p.status.text().startswith(f"{launch} (arg): `reduce_shfl` takes 3 parameter(s) but the file gives 2")


@nvcc
def test_without_ncu_only_record_and_validate_says_why(qtbot, window, fake_gpu):
    from viz.gpu.ncu import find_ncu

    if find_ncu():
        pytest.skip("Nsight Compute is installed here")
    window.open_path(REDUCE)
    p = fake_gpu(window, NoNcuRecorder)
    assert p.b_record.isEnabled() and not p.b_record_validate.isEnabled()
    assert p.b_record_validate.toolTip() == ("Cannot record here: Nsight Compute (ncu) is not installed or not on "
                                             "the PATH: Record trace works without it")
    assert p.trace_info.text().endswith("Record and validate: " + p.b_record_validate.toolTip())


# ---------------------------------------------------------------------------- compare


def compare_rows(cp) -> dict[str, tuple[str, str]]:
    return {cp.table.item(r, 0).text(): (cp.table.item(r, 1).text(), cp.table.item(r, 2).text())
            for r in range(cp.table.rowCount())}


def press_ctrl_m(qtbot, w):
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    qtbot.keyClick(w, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier)


def test_compare_two_traces_of_one_kernel_side_by_side(qtbot, user_dirs):
    left = TRACES / "sgemm_float4_scalar_sts.wvtrace"
    w = make_window(qtbot, str(left))
    press_ctrl_m(qtbot, w)
    assert w.a_compare.isChecked() and w.stack.currentIndex() == 1
    cp = w.compare
    qtbot.waitUntil(lambda: cp.right.trace_analysis is not None and w.session.trace_analysis is not None,
                    timeout=30000)
    assert cp.right.path == TRACES / "sgemm_float4.wvtrace"           # the same kernel, the other variant
    assert cp.pick.currentData() == str(TRACES / "sgemm_float4.wvtrace")
    a, b = analyze_trace(tracefile.load(left)), analyze_trace(tracefile.load(cp.right.path))
    cp.refresh()
    rows = compare_rows(cp)
    for m in METRIC_NAMES:
        if a.metrics[m] or b.metrics[m]:
            assert rows[m] == (f"{a.metrics[m]:,}", f"{b.metrics[m]:,}")
    st = "smsp__inst_executed_op_shared_st.sum"
    # ptxas fuses the four scalar stores into one STS.128: on the GPU both store A's tile alike
    assert a.metrics[st] == b.metrics[st] and a.trace.header["sass_map"]["fused"]
    # both pictures: their titles, and they step together through each warp's own stream
    cp.view_left.repaint()
    cp.view_right.repaint()
    assert cp.view_left.options.title == a.trace.header["title"] and cp.view_right.options.title == b.trace.header["title"]
    assert cp.view_left.layout_ is not None and cp.view_right.layout_ is not None
    for _ in range(3):
        qtbot.keyClick(w, Qt.Key.Key_Down)
    assert w.session.cursor.instruction == 3 and cp.right.cursor.instruction == 3
    dl, dr = w.session.detail, cp.right.detail
    rows = compare_rows(cp)
    if dl.space == "shared":
        assert rows["wavefronts (this warp)"] == (str(dl.wavefronts), str(dr.wavefronts) if dr.space == "shared" else "")
    # the user picks any other trace or scenario: the padded transpose scenario
    i = cp.pick.findData(str(ROOT / "assets" / "scenarios" / "transpose-tile-pad.toml"))
    assert i >= 0 and cp.pick.findData(str(TRACES / "reduce_shfl.wvtrace")) >= 0
    cp.pick.setCurrentIndex(i)
    cp.pick.activated.emit(i)
    qtbot.waitUntil(lambda: cp.right.analysis is not None, timeout=20000)
    assert not cp.right.is_trace and cp.right.scenario.name == "transpose-tile-pad"
    rows = compare_rows(cp)
    assert rows["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == (
        f"{a.metrics['l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum']:,}",
        f"{cp.right.analysis.metrics['l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum']:,}")
    w.close()


def test_any_file_can_be_the_partner(qtbot, user_dirs, tmp_path, monkeypatch):
    w = make_window(qtbot, str(TRACES / "stencil2d.wvtrace"))
    press_ctrl_m(qtbot, w)
    cp = w.compare
    mine = tmp_path / "elsewhere.wvtrace"
    mine.write_bytes((TRACES / "transpose_pad.wvtrace").read_bytes())
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(mine), ""))
    i = cp.pick.findData("<file>")
    assert i == cp.pick.count() - 1 and cp.pick.itemText(i) == "Other file (scenario or trace)…"
    cp.pick.setCurrentIndex(i)
    cp.pick.activated.emit(i)
    qtbot.waitUntil(lambda: cp.right.trace_analysis is not None, timeout=20000)
    assert cp.right.path == mine and cp.pick.toolTip() == str(mine)
    bad = tmp_path / "bad.wvtrace"
    bad.write_bytes(b"not a zip")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    cp.pick.setCurrentIndex(i)
    cp.pick.activated.emit(i)
    assert cp.right.path == mine and str(bad) in cp.pick.toolTip()      # refused with the reason; kept
    w.close()


def test_transpose_tiles_pair_by_source_and_a_named_partner_wins(qtbot, user_dirs, tmp_path):
    w = make_window(qtbot, str(TRACES / "transpose_tile_pad1.wvtrace"))
    press_ctrl_m(qtbot, w)
    cp = w.compare
    qtbot.waitUntil(lambda: cp.right.is_trace, timeout=20000)
    assert cp.right.path.name == "transpose_tile_unpadded.wvtrace"       # another kernel of transpose.cu
    # opening another trace in compare mode picks its partner at once
    w.open_path(TRACES / "transpose_tile_xor.wvtrace")
    qtbot.waitUntil(lambda: cp.right.path is not None and cp.right.path.name == "transpose_tile_xor4.wvtrace",
                    timeout=20000)
    # a launch file's `compare` key, carried in the trace, names the partner
    t = tracefile.load(TRACES / "stencil2d.wvtrace")
    t.header["compare"] = "reduce_shfl"
    mine = tracefile.save(t, tmp_path / "stencil_mine.wvtrace")
    w.open_path(mine)
    qtbot.waitUntil(lambda: cp.right.path is not None and cp.right.path.name == "reduce_shfl.wvtrace", timeout=20000)
    qtbot.waitUntil(lambda: cp.right.trace_analysis is not None and w.session.trace_analysis is not None,
                    timeout=20000)
    an = analyze_trace(tracefile.load(TRACES / "reduce_shfl.wvtrace"))
    cp.refresh()
    rows = compare_rows(cp)
    k = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert rows[k][1] == f"{an.metrics[k]:,}"
    w.close()


# ---------------------------------------------------------------------------- on the GPU



@pytest.mark.gpu
@pytest.mark.skipif(not (have_pycuda() and HAVE_NVCC and shutil.which("ncu")), reason="needs PyCUDA, a GPU, nvcc and ncu")
def test_record_and_validate_reduce_shfl_through_the_panel_on_the_gpu(qtbot, window):
    window.open_path(REDUCE)
    p = panel(window)
    qtbot.waitUntil(lambda: p.device_info is not None, timeout=60000)
    click(qtbot, p.b_record_validate)
    qtbot.waitUntil(lambda: window.session.is_trace and window.session.trace_analysis is not None, timeout=180000)
    assert p.last_recording.match is True, p.last_recording.validation()
    assert "10 of 10 metrics equal the trace" in p.status.text()
    rows = table(p)
    assert all(rows[m][2] == "✓" for m in METRIC_NAMES)


def test_a_shipped_trace_shows_its_counters_and_records_again_from_kernels(qtbot, window, fake_gpu, tmp_path):
    window.open_path(TRACES / "copy_float.wvtrace")
    p = fake_gpu(window)
    launch = ROOT / "kernels" / "copy_float.launch.toml"
    assert p.recordable() == launch                           # found in kernels/ by its keys
    assert p.b_record.isEnabled() and p.b_record.toolTip().endswith(f"Recorded from {launch}.")
    qtbot.waitUntil(lambda: window.session.trace_analysis is not None, timeout=20000)
    shipped = tracefile.load(TRACES / "copy_float.wvtrace")
    an = analyze_trace(shipped)
    assert {m: v[:2] for m, v in table(p).items() if m in METRIC_NAMES} == {
        m: [f"{an.metrics[m]:,}", f"{shipped.header['ncu'][m]:,}"] for m in METRIC_NAMES}
    assert all(table(p)[m][2] == "✓" for m in METRIC_NAMES) and "10 of 10 metrics" in p.summary.text()
    assert p.b_save_trace.isVisible() and not p.b_import.isVisible()
    p.tabs.setCurrentWidget(p.sass)
    assert p.sass.toPlainText().splitlines() == shipped.header["sass_guard"]["sass"]
    # a trace whose launch file is nowhere to be found: Record says what to do
    shipped.header["launch_file_name"] = "somewhere_else.launch.toml"
    del shipped.header["ncu"]
    window.open_path(tracefile.save(shipped, tmp_path / "moved.wvtrace"))
    assert not p.b_record.isEnabled() and "launch file is not known here" in p.b_record.toolTip()
    assert p.b_record.toolTip() in p.trace_info.text()
    assert p.summary.text() == "This trace carries no Nsight Compute counters: Record and validate measures them."
