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
    name = "transpose_tile_unpadded"
    e = doc["traces"][name]
    w = make_window(qtbot, str(TRACES / f"{name}.wvtrace"))
    _wait(qtbot, w)
    p = panel(w)
    p.refresh()
    text = p.bottleneck.text()
    assert f"median {1e3 * e['timing']['median_ms']:.2f} µs" in text
    assert f"Predicted: {1e3 * e['timing']['predicted']['ms']:.2f} µs" in text
    w.close()


def test_a_prediction_outside_what_the_model_was_checked_on_shows_its_caveats(qtbot, user_dirs, tmp_path):
    """The kernel executes wgmma (as plain_build records from its PTX) and the prediction was
    scaled from 8 of the grid's blocks: both are said under the prediction, as visible lines,
    in English and in Chinese; the same launch without them shows no caveat."""
    path, entry = _results_with(tmp_path, "copy_float", 0.00194)
    w = make_window(qtbot, str(TRACES / "copy_float.wvtrace"))
    _wait(qtbot, w)
    p = panel(w)
    assert p.load_measurements(path)
    p.refresh()
    assert "Caveat" not in p.bottleneck.text()
    doc = results.load(path)
    e = doc["traces"]["copy_float"]
    e["resources"]["untimed"] = {"wgmma.mma_async": 2}
    grid = int(e["launch"]["grid"][0])
    e["timing"]["predicted"]["coverage"] = {"grid_blocks": grid, "recorded_blocks": 8, "used_blocks": 8,
                                            "scale": grid / 8}
    assert p.load_measurements(results.save(doc, tmp_path / "with-caveats.json"))
    p.refresh()
    lines = p.bottleneck.text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("Predicted:"))
    assert lines[k + 1] == ("Caveat: the kernel executes wgmma.mma_async, which the cost model does not time: "
                            "the prediction is the memory side only")
    assert lines[k + 2].startswith(f"Caveat: predicted from 8 of {grid} blocks, scaled by {grid / 8:g}")
    assert p.bottleneck.isVisible() or not p.isVisible()
    i18n.set_language("zh_CN")
    try:
        p.refresh()
        zh = p.bottleneck.text()
        assert "注意：该内核执行 wgmma.mma_async，代价模型不为这些指令计时" in zh
        assert f"由 {grid} 个线程块中的 8 个预测" in zh and "Caveat" not in zh
    finally:
        i18n.set_language("en")
    w.close()
