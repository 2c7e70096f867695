"""The GPU panel on a slide: the chart follows the theme, names its unit
(µs for a few hundred microseconds, no pyqtgraph "(x0.001)"), labels every bar and line,
keeps its key off the points and shows measured beside predicted with their ratio; Import
opens where the shipped measurement files are, imports every shipped results file or says
what the file is instead, clears an old error on success, and after a file without this
scenario says which scenarios it has and opens the one picked."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app_helpers import make_window, user_dirs, wait_analysis, window  # noqa: F401 - fixtures
from viz import assets
from viz.gpu import results
from viz.i18n import tr

SHIPPED = sorted(assets.measurements_dir().glob("*.json"))
pytestmark = pytest.mark.skipif(not SHIPPED, reason="no shipped measurements")


def panel(w):
    assert w.gpu_panel is not None, "the GPU panel did not load"
    assert w.gpu_panel.measurements is not None       # the shipped file, read off the GUI thread: waited for
    return w.gpu_panel


def background(p) -> str:
    return QColor(p.chart.backgroundBrush().color()).name()


def axis_label(p, side: str) -> str:
    return p.chart.getPlotItem().getAxis(side).labelText


def test_the_chart_follows_the_theme(qtbot, window):
    p = panel(window)
    for name in ("light", "dark", "light"):
        window.apply_theme(name)
        th = window.view.theme
        assert background(p) == QColor(th.colors["background"]).name()
        ax = p.chart.getPlotItem().getAxis("left")
        assert ax.textPen().color().name() == QColor(th.colors["text"]).name()
    assert background(p) != "#000000"         # the light theme's chart is not black


def test_the_axis_names_the_unit_the_ticks_are_in(qtbot, window):
    wait_analysis(qtbot, window)
    p = panel(window)
    p.tabs.setCurrentWidget(p.chart_box)
    p.sweep_choice.setCurrentIndex(p.sweep_choice.findData("transpose-pad"))
    label = axis_label(p, "left")
    assert label == "µs per launch"
    ax = p.chart.getPlotItem().getAxis("left")
    assert ax.autoSIPrefix is False and ax.autoSIPrefixScale == 1.0       # no "(x0.001)"
    top = p.chart.getPlotItem().vb.viewRange()[1][1]
    sweep = results.load()["sweeps"]["transpose-pad"]["points"]
    biggest_us = max(max(q["median_ms"], q["predicted_ms"]) for q in sweep) * 1e3
    assert 1 < biggest_us < 1000 and biggest_us <= top < 1.5 * biggest_us


def test_every_bar_and_line_is_labelled_and_the_ratio_is_drawn(qtbot, window):
    wait_analysis(qtbot, window)
    p = panel(window)
    p.tabs.setCurrentWidget(p.chart_box)
    p.sweep_choice.setCurrentIndex(p.sweep_choice.findData("transpose-pad"))
    import pyqtgraph as pg

    items = p.chart.getPlotItem().items
    bars = [i for i in items if isinstance(i, pg.BarGraphItem)]
    lines = [i for i in items if isinstance(i, pg.PlotDataItem)]
    assert len(bars) == 2 and len(lines) == 2
    assert sorted(b.opts["name"] for b in bars) == ["cost model", "measured"]
    assert sorted(x.name() for x in lines) == ["cost model", "measured"]
    ticks = dict(p.chart.getAxis("bottom")._tickLevels[0])
    assert list(ticks.values()) == ["0", "1", "2", "3", "4", "this scenario"]
    assert axis_label(p, "bottom") == "PAD (sweep transpose-pad); this scenario (transpose-tile)"
    t = results.load()["scenarios"]["transpose-tile"]["timing"]
    m, pr = t["median_ms"], t["predicted"]["ms"]
    assert p.bar_labels == [f"{m * 1e3:.3g} µs", f"{pr * 1e3:.3g} µs", f"measured / predicted = {m / pr:.2f}"]
    # the two bars side by side (measured left, the model right), their values and ratio in words above
    assert sorted((b.opts["x"][0], b.opts["name"]) for b in bars)[0][1] == "measured"
    assert p.ratio.isVisibleTo(p)
    assert p.ratio.text() == (f"transpose-tile: measured {m * 1e3:.3g} µs, cost model {pr * 1e3:.3g} µs; "
                              f"measured / predicted = {m / pr:.2f}")
    # the key is a row above the chart, not a legend over the points
    assert p.chart.getPlotItem().legend is None
    assert [lab.text() for lab in p.key_labels] == ["measured on the GPU (solid line)",
                                                    "cost model's prediction (dashed line)"]


def test_import_opens_where_the_measurement_files_are(qtbot, window, monkeypatch):
    p = panel(window)
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda parent, title, folder, *a, **k: (asked.append(folder), ("", ""))[1]))
    p._import_dialog()
    assert Path(asked[0]).resolve() == assets.measurements_dir().resolve()
    other = SHIPPED[-1]
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda parent, title, folder, *a, **k: (asked.append(folder), (str(other), ""))[1]))
    p._import_dialog()
    p._import_dialog()        # the second time: the folder of the last import
    assert Path(asked[2]) == other.parent


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_file_imports_or_is_refused_saying_what_it_is(qtbot, window, monkeypatch, path):
    p = panel(window)
    warned = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: warned.append(a[2])))
    is_results = True
    try:
        results.load(path)
    except results.ResultsError:
        is_results = False
    p._import_dialog()
    if is_results:
        assert warned == [] and p.measurements_path == path and p.status.text() == ""
        assert path.name in p.source_label.text()
    else:
        assert len(warned) == 1
        said = warned[0]
        assert said.startswith(f"{path.name} is not a results file: it is a record of")
        assert "format is None" not in said and "h100.json" in said
        assert p.measurements_path != path


def test_a_successful_import_clears_the_last_error(qtbot, window, monkeypatch):
    p = panel(window)
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: None))
    lessons = assets.measurements_dir() / "h100-lessons-2026-11-26.json"
    assert not p.load_measurements(lessons)
    assert "is not a results file" in p.status.text()
    assert p.load_measurements(assets.measurements_dir() / "h100.json")
    assert p.status.text() == ""


def test_a_file_without_this_scenario_clears_the_chart_and_offers_its_own(qtbot, window):
    wait_analysis(qtbot, window)
    p = panel(window)
    p.tabs.setCurrentWidget(p.chart_box)
    p.sweep_choice.setCurrentIndex(p.sweep_choice.findData("transpose-pad"))
    assert p.chart.isVisibleTo(p) and not p.chart_empty.isVisibleTo(p)
    traces = assets.measurements_dir() / "h100-traces.json"
    assert p.load_measurements(traces)
    doc = results.load(traces)
    assert not doc["scenarios"] and doc["traces"]
    assert "No measurement of this scenario with these params" in p.summary.text()
    assert f"h100-traces.json measured no scenarios, only {len(doc['traces'])} traced launches" in p.summary.text()
    # no stale axes: the chart gives way to the sentence
    assert not p.chart.isVisibleTo(p) and p.chart_empty.isVisibleTo(p)
    assert p.chart.getPlotItem().listDataItems() == []
    assert axis_label(p, "left") == ""
    assert "traced launches" in p.chart_empty.text()
    # the list names every traced launch; picking one opens its shipped trace
    c = p.measured_choice
    assert c.isVisibleTo(p) and c.count() == 1 + len(doc["traces"])
    i = c.findData("trace:copy_float")
    assert i > 0
    c.activated.emit(i)
    qtbot.waitUntil(lambda: window.session.is_trace and window.session.path.name == "copy_float.wvtrace",
                    timeout=30000)


def test_picking_a_measured_scenario_opens_it(qtbot, window):
    p = panel(window)
    assert p.load_measurements(assets.measurements_dir() / "h100.json")
    i = p.measured_choice.findData("scenario:aos-float3-r")
    assert i > 0
    p.measured_choice.activated.emit(i)
    qtbot.waitUntil(lambda: window.session.name == "aos-float3-r", timeout=30000)
    wait_analysis(qtbot, window)
    assert p.entry()[0] is not None and "No measurement" not in p.summary.text()


def test_the_measurement_label_is_translated(qtbot, window):
    from viz import i18n

    p = panel(window)
    doc = results.load()
    i18n.set_language("zh_CN")
    try:
        text = p.source_label.text()
        assert text == f"实测数据：{doc['device']['name']}，{doc['measured_at'][:10]} 测得（h100.json）"
        assert "measured" not in text and p.source_label.toolTip() == doc["label"]
        assert p.source_label.sizeHint().height() <= 2 * p.source_label.fontMetrics().height()    # one line
        assert axis_label(p, "left") == "每次启动耗时（µs）"
        assert p.b_import.text() == "导入实测数据…"
        assert p.summary.text().startswith(f"来源：{doc['device']['name']}，{doc['measured_at'][:10]} 测得；")
        assert doc["label"] not in p.summary.text()
    finally:
        i18n.set_language("en")
    assert p.source_label.text().startswith("Measurements: NVIDIA H100")


def test_a_probe_record_with_markup_is_refused_as_written(qtbot, window, monkeypatch, tmp_path):
    """A hostile record's ``what`` is quoted as text: no markup reaches the label or the box."""
    import json

    from PySide6 import QtGui

    p = panel(window)
    f = tmp_path / "probe.json"
    f.write_text(json.dumps({"what": "<img src=x><b>bold</b>\x1b[2J " + "probe " * 500}))
    warned = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(f), "")))
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: warned.append(a[2])))
    p._import_dialog()
    said = p.status.text()
    assert said.startswith('probe.json is not a results file') and '"<img src=x><b>bold</b> [2J probe probe' in said
    assert "\x1b" not in said and len(said) < 700
    assert p.status.textFormat() == Qt.TextFormat.PlainText
    doc = QtGui.QTextDocument()
    doc.setHtml(warned[0])                          # what the box shows: the text as written
    assert QtGui.Qt.mightBeRichText(warned[0]) and doc.toPlainText() == said


def test_the_plot_is_built_when_the_chart_tab_is_first_shown_and_drawn_with_what_came_before(qtbot, window):
    """Building the panel (after the window's first paint) builds no pyqtgraph plot; showing
    the Chart tab builds it and draws what the panel asked for while it was not there."""
    from viz.app.gpu_panel import GpuPanel

    wait_analysis(qtbot, window)
    p = GpuPanel(window)
    qtbot.addWidget(p)
    assert not p.results_chart.built
    p.measurements                                    # noqa: B018 - the shipped file, waited for
    p.sweep_choice.setCurrentIndex(p.sweep_choice.findData("transpose-pad"))
    p.show()
    qtbot.waitExposed(p)
    assert not p.results_chart.built                  # the first tab is the table
    p.tabs.setCurrentWidget(p.chart_box)
    qtbot.waitUntil(lambda: p.results_chart.built, timeout=10000)
    assert p.chart.isVisibleTo(p) and not p.chart_empty.isVisibleTo(p)
    names = [n for n, _y in p.chart_series()]
    assert names == ["measured", "cost model"]
    sweep = p.measurements["sweeps"]["transpose-pad"]["points"]
    assert len(p.chart_series()[0][1]) == len(sweep)
    assert axis_label(p, "left") == f"{p.chart_unit[1]} per launch"
