"""The GPU panel without a GPU: it says why, shows the shipped H100 measurements of the
open scenario, imports another results file, and shows the generated kernel."""

from __future__ import annotations

import importlib.util
import json

import pytest
from PySide6.QtCore import Qt

from app_helpers import make_window, user_dirs, wait_analysis, window  # noqa: F401 - fixtures
from viz.engine import METRIC_NAMES
from viz.gpu import results

pytestmark = pytest.mark.skipif(not results.shipped_path().exists(), reason="no shipped measurements")


def panel(w):
    assert w.gpu_panel is not None, "the GPU panel did not load"
    assert w.gpu_panel.measurements is not None       # the shipped file, read off the GUI thread: waited for
    return w.gpu_panel


def table(p) -> dict[str, tuple[str, str, str]]:
    return {p.table.item(i, 0).text(): (p.table.item(i, 1).text(), p.table.item(i, 2).text(),
                                        p.table.item(i, 3).text()) for i in range(p.table.rowCount())}


def test_the_panel_says_why_there_is_no_gpu(qtbot, window):
    p = panel(window)
    if importlib.util.find_spec("pycuda") is not None:
        pytest.skip("PyCUDA is installed here")
    assert "PyCUDA is not installed" in p.device.text()
    assert not p.b_run.isEnabled() and not p.b_validate.isEnabled()
    assert "PyCUDA" in p.b_run.toolTip()
    assert window.docks["gpu"].windowTitle() == "GPU"


def test_shipped_h100_counters_and_timing_are_shown(qtbot, window):
    wait_analysis(qtbot, window)
    p = panel(window)
    shipped = results.load()["scenarios"]["transpose-tile"]
    rows = table(p)
    assert set(rows) == set(METRIC_NAMES)
    for m in METRIC_NAMES:
        model, hw, mark = rows[m]
        assert model == f"{shipped['model'][m]:,}" and hw == f"{shipped['counters'][m]:,}" and mark == "✓"
    assert "H100" in p.source_label.text()
    assert f"{shipped['timing']['median_ms']:.4f} ms" in p.summary.text()
    assert "cost model" in p.summary.text()


def test_changed_params_are_not_shown_as_measured(qtbot, window):
    p = panel(window)
    window.editor.fields[("params", "PAD")].widget.setText("3")
    window.editor.fields[("params", "PAD")].widget.textEdited.emit("3")
    wait_analysis(qtbot, window)
    assert "No measurement of this scenario with these params" in p.summary.text()
    assert all(hw == "" for _m, hw, _k in table(p).values())


def test_import_measurements_replaces_the_shipped_file(qtbot, window, tmp_path):
    wait_analysis(qtbot, window)
    p = panel(window)
    doc = results.load()
    doc["label"] = "my laptop's friend's GPU"
    e = doc["scenarios"]["transpose-tile"]
    e["counters"] = dict(e["counters"], **{"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 1})
    e["timing"]["median_ms"] = 1.2345
    path = results.save(doc, tmp_path / "other.json")
    assert p.load_measurements(path)
    assert "my laptop's friend's GPU" in p.source_label.text()
    assert table(p)["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"][1:] == ("1", "differs")
    assert "1.2345 ms" in p.summary.text()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    assert not p.load_measurements(bad)
    assert "not a warpviz measurements file" in p.status.text()


def test_sweep_chart_shows_measured_over_predicted(qtbot, window):
    p = panel(window)
    p.tabs.setCurrentIndex(1)
    i = p.sweep_choice.findData("transpose-pad")
    assert i >= 0
    p.sweep_choice.setCurrentIndex(i)
    series = dict(p.chart_series())
    sweep = results.load()["sweeps"]["transpose-pad"]["points"]
    factor, unit = p.chart_unit          # the transpose sweep is a few hundred µs: drawn in µs
    assert (factor, unit) == (1e3, "µs")
    assert list(series["measured"]) == pytest.approx([pt["median_ms"] * 1e3 for pt in sweep])
    assert list(series["cost model"]) == pytest.approx([pt["predicted_ms"] * 1e3 for pt in sweep])
    # The measured shape follows the prediction: the unpadded tile is the slowest point.
    assert series["measured"].argmax() == series["cost model"].argmax() == 0


def test_kernel_source_tab_shows_the_generated_kernel(qtbot, window):
    p = panel(window)
    p.tabs.setCurrentWidget(p.kernel)
    qtbot.waitUntil(lambda: "extern \"C\" __global__" in p.kernel.toPlainText(), timeout=20000)
    assert "ld.volatile.shared.b32" in p.kernel.toPlainText()
    p.tabs.setCurrentWidget(p.sass)
    qtbot.waitUntil(lambda: p.sass.toPlainText() != "", timeout=60000)
    text = p.sass.toPlainText()
    assert "No SASS" in text or "LDS" in text


def test_run_without_a_gpu_says_why_and_keeps_working(qtbot, window):
    p = panel(window)
    if p.device_info is not None:
        pytest.skip("a GPU is here")
    qtbot.mouseClick(p.b_cancel, Qt.MouseButton.LeftButton)  # disabled: nothing happens
    p.run()
    assert p.status.text() == p.device.text()


def test_predicted_and_measured_bottlenecks_side_by_side(qtbot, window, tmp_path):
    """A results file with the cost model's terms and Nsight Compute's summary of the timed
    launch: the panel names the predicted bound and the measured busiest unit."""
    from viz.gpu import ncu
    from viz.gpu.predict import predict_document

    wait_analysis(qtbot, window)
    p = panel(window)
    doc = results.load()
    e = doc["scenarios"]["transpose-tile"]
    pred, _res = predict_document(doc, names={"transpose-tile"})[("scenarios", "transpose-tile")]
    e["timing"]["predicted"] = pred.as_dict()
    raw = {"dram__throughput.avg.pct_of_peak_sustained_elapsed": 54.0,
           "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed": 92.0,
           "lts__throughput.avg.pct_of_peak_sustained_elapsed": 30.0, "dram__bytes_read.sum": 268435456,
           "dram__bytes_write.sum": 268435456, "lts__t_sector_hit_rate.pct": 1.0,
           "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio": 6.0,
           "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 2.0,
           "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 2.0}
    results.apply_bottleneck(e, ncu.summarize(raw), doc["ceiling"]["memcpy_d2d"]["gbps"])
    assert p.load_measurements(results.save(doc, tmp_path / "with-bottleneck.json"))
    text = p.bottleneck.text()
    assert f"Predicted: {pred.bound}-bound ({pred.bound_s * 1e3:.4f} ms of {pred.ms:.4f} ms)" in text
    assert "measured: shared pipe at 92% of peak (DRAM 54%, L2 30%)" in text
    assert "top stalls: mio_throttle 60%, barrier 20%, long_scoreboard 20%" in text
    assert "DRAM 537 MB" in text
    # DRAM at 54% of its peak: this transpose streams DRAM, so its fraction of memcpy is shown.
    assert "% of cudaMemcpy" in p.summary.text()


def test_why_there_is_no_gpu_reads_in_chinese_with_the_tools_detail_kept(qtbot, window):
    """Every reason warpviz itself gives for no GPU run (viz.gpu.GpuUnavailable: its template,
    every one raised in viz/) is shown in Chinese; a driver's own detail (the error's fields)
    stays as the driver wrote it, also through the GPU child process's pipe."""
    import re

    from test_app_i18n import gpu_unavailable_templates
    from viz.gpu import GpuUnavailable
    from viz.gpu.worker import _unavailable

    p = panel(window)
    window.set_language("zh_CN")
    try:
        details = {"detail": "cuInit failed: unknown error (libcuda.so.1)", "s": "120"}
        templates = gpu_unavailable_templates()
        assert len(templates) >= 12
        for template in templates:
            fields = {k: v for k, v in details.items() if "{" + k + "}" in template}
            err = _unavailable(GpuUnavailable(template, "driver", **fields).payload())    # as the child sends it
            assert err.reason == template.format(**fields)
            p._job_failed(err)
            shown = p.device.text()
            assert shown.startswith("本机没有可用的 GPU："), shown
            assert all(v in shown for v in fields.values()), shown
            rest = shown.replace(details["detail"], "")
            words = re.findall(r"[A-Za-z_]{4,}", rest)
            allowed = {"Nsight", "Compute", "PyCUDA", "libcuda", "nvcc", "ptxas", "NVIDIA", "CUDA", "root",
                       "warpviz", "install", "ERR_NVGPUCTRPERM", "NVreg_RestrictProfilingToAdminUsers", "PATH"}
            assert set(words) <= allowed, (template, shown)
    finally:
        window.set_language("en")
    p._job_failed(GpuUnavailable("the NVIDIA driver is loaded but there is no CUDA device"))
    assert p.device.text() == "No GPU here: the NVIDIA driver is loaded but there is no CUDA device"


def test_an_uncalibrated_gpu_gets_a_one_line_caveat_with_the_fix(qtbot, window):
    p = panel(window)
    p.device_info = {"name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0", "sm_count": 108,
                     "driver": "580.159.04"}
    p._show_device()
    lines = p.device.text().splitlines()
    assert lines[0].startswith("GPU: NVIDIA A100-SXM4-80GB (compute capability 8.0, 108 SMs")
    assert lines[1] == ("Not calibrated: predictions use the H100's figures; run `warpviz calibrate` to measure "
                        "this GPU")
    p.device_info = {"name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132, "driver": "580.159.04"}
    p._show_device()
    assert len(p.device.text().splitlines()) == 1          # the H200 has its shipped calibration


def test_the_shipped_measurements_are_read_off_the_gui_thread_and_an_import_made_first_wins(qtbot, window,
                                                                                             monkeypatch, tmp_path):
    """Building the panel (after the window's first paint) does not read the 1 MB shipped
    results file on the GUI thread: a thread reads it and the panel shows it when it arrives;
    a file imported before it arrives stays."""
    import threading

    from viz.app.gpu_panel import GpuPanel
    from viz.gpu import front

    gui = threading.current_thread()
    release, readers = threading.Event(), []
    real = front.load_results

    def slow_load(path):
        if path is None:
            readers.append(threading.current_thread())
            assert release.wait(60)
        return real(path)

    monkeypatch.setattr(front, "load_results", slow_load)
    p = GpuPanel(window)
    qtbot.addWidget(p)
    qtbot.waitUntil(lambda: len(readers) == 1, timeout=20000)
    assert readers[0] is not gui and p._measurements is None
    assert p.source_label.text() == "No measurements loaded."
    release.set()
    qtbot.waitUntil(lambda: p.measurements_path == results.shipped_path(), timeout=20000)
    assert "transpose-tile" in p.measurements["scenarios"] and p.measured_choice.count() > 1
    # an import that comes before the shipped file is read is not replaced by it
    release.clear()
    mine = tmp_path / "mine.json"
    doc = results.load(None)
    doc["label"] = "my own measurements"
    mine.write_text(json.dumps(doc))
    q = GpuPanel(window)
    qtbot.addWidget(q)
    assert q.load_measurements(mine)
    release.set()
    qtbot.waitUntil(lambda: q._shipped is False, timeout=20000)
    assert q.measurements_path == mine and q.measurements["label"] == "my own measurements"
    assert "my own measurements" in q.source_label.text()
