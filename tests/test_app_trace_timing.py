"""The GPU panel with a trace or a launch file open: the traced launch's measured time, the cost
model's prediction and its bound (``warpviz bench --traces``), as it shows them for scenarios."""

from __future__ import annotations

from pathlib import Path

import pytest

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from viz import i18n
from viz.gpu import costmodel, results, tracebench
from viz.gpu.plan import Timing
from viz.gpu.predict import predict_trace
from viz.trace import tracefile

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
SHIPPED = ROOT / "assets" / "measurements" / tracebench.SHIPPED


def _results_with(tmp_path, name: str, median_ms: float) -> tuple[Path, dict]:
    """A results file whose traces section times the shipped trace ``name``: its launch as
    the trace's header has it, a timing of ``median_ms`` and the model's prediction."""
    tr = tracefile.load(TRACES / f"{name}.wvtrace")
    h = tr.header
    launch = {k: h["launch"][k] for k in ("block", "grid", "shared_bytes", "args")}
    t = Timing(tuple(median_ms * (1 + 0.001 * (i % 3 - 1)) for i in range(40)), launches_per_sample=400)
    res = {"registers": 10, "shared_bytes": 1024, "static_shared_bytes": 1024, "flow": {"barriers": [], "loops": []}}
    pred = predict_trace(tr, costmodel.H100, resources=res, buffer_sets=8)
    entry = {"trace": f"{name}.wvtrace", "launch_file": f"kernels/{h['launch_file_name']}", "kernel": h["kernel"],
             "launch": launch, "resources": res,
             "timing": {"scale": {"grid": launch["grid"], "buffer_sets": 8}, **t.as_dict(), "predicted": pred.as_dict()}}
    doc = tracebench.new_document({"name": "NVIDIA H100 80GB HBM3"}, "traced here", "2026-11-23T19:00:00+00:00")
    doc["traces"][name] = entry
    return results.save(doc, tmp_path / "traces.json"), entry


def _wait(qtbot, w):
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)


def panel(w):
    if w.gpu_panel is None:
        w._build_plots()           # the plot panels come a moment after the first frame
    assert w.gpu_panel is not None
    return w.gpu_panel


def test_an_open_trace_shows_its_timed_launch_and_prediction(qtbot, user_dirs, tmp_path):
    path, entry = _results_with(tmp_path, "reduce_tree", 0.002263)
    w = make_window(qtbot, str(TRACES / "reduce_tree.wvtrace"))
    _wait(qtbot, w)
    p = panel(w)
    assert p.load_measurements(path)
    p.refresh()
    text = p.bottleneck.text()
    t, pr = entry["timing"], entry["timing"]["predicted"]
    assert f"median {1e3 * t['median_ms']:.2f} µs over {t['runs']} runs" in text
    assert f"Predicted: {1e3 * pr['ms']:.2f} µs = launch overhead {1e3 * pr['overhead_ms']:.2f} µs" in text
    assert f"{pr['bound']}-bound {1e3 * pr['bound_ms']:.2f} µs" in text
    assert f"measured/predicted {t['median_ms'] / pr['ms']:.2f}" in text
    assert "traced here" in text and "8 buffer sets" in text
    # in Chinese, the same figures
    i18n.set_language("zh_CN")
    try:
        p.refresh()
        zh = p.bottleneck.text()
        assert f"{1e3 * t['median_ms']:.2f}" in zh and f"{1e3 * pr['ms']:.2f}" in zh and "µs" in zh
        assert "Timed launch" not in zh
    finally:
        i18n.set_language("en")
    w.close()


def test_a_launch_file_shows_the_timing_of_its_launch_and_another_launch_does_not(qtbot, user_dirs, tmp_path):
    path, entry = _results_with(tmp_path, "copy_guarded", 0.00193)
    w = make_window(qtbot, str(ROOT / "kernels" / "copy_guarded.launch.toml"))
    p = panel(w)
    assert p.load_measurements(path)
    p.refresh()
    assert p.mode() == "launch"
    assert f"median {1e3 * 0.00193:.2f} µs" in p.bottleneck.text()
    # a trace of another launch (another grid) is not given this timing
    w.open_trace(TRACES / "reduce_tree.wvtrace")
    _wait(qtbot, w)
    p.refresh()
    assert "median 1.93 µs" not in p.bottleneck.text()
    if not SHIPPED.exists():
        assert "No timing of this launch" in p.bottleneck.text()
    w.close()


@pytest.mark.skipif(not SHIPPED.exists(), reason="no shipped traced-launch timings yet")
def test_the_shipped_h100_timing_of_a_trace_is_shown(qtbot, user_dirs):
    doc = results.load(SHIPPED)
    name = "transpose_tile_padded"
    e = doc["traces"][name]
    w = make_window(qtbot, str(TRACES / f"{name}.wvtrace"))
    _wait(qtbot, w)
    p = panel(w)
    p.refresh()
    text = p.bottleneck.text()
    assert f"median {1e3 * e['timing']['median_ms']:.2f} µs" in text
    assert f"Predicted: {1e3 * e['timing']['predicted']['ms']:.2f} µs" in text
    w.close()
