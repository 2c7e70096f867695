"""No English in the Chinese interface over every built-in and every shipped trace, read from
the functions the window shows them with (so the whole set runs in CI time; one window pass
over a trace is in tests/test_app_chinese.py): every frame's caption and every text the
painter draws, the Figures panel's rows (headers, names, values, reasons), the built-ins'
Chinese titles and notes, a partial trace's warning, and the GPU panel's texts for every
measured entry (cost-model terms, Nsight Compute's bottleneck and stalls, traced-launch
timings) and for every reason a GPU job can give for not running. The scanner's rules are
``tests/zh_scan.py``'s (code, metric names, units, file names pass)."""

from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF  # noqa: E402

from viz import i18n  # noqa: E402
from viz.engine import analyze  # noqa: E402
from viz.frames import frames  # noqa: E402
from viz.render import NullPainter, PaintOptions, paint_frame, theme  # noqa: E402
from viz.scenario import builtin_names, load  # noqa: E402
from viz.warp import warp_detail  # noqa: E402
from zh_scan import WORD, English  # noqa: E402

RECT = QRectF(0, 0, 1920, 1080)


@pytest.fixture(scope="module")
def chinese():
    i18n.set_language("zh_CN")
    yield
    i18n.set_language("en")


def _report(eng: English) -> str:
    return "English in the Chinese interface:\n" + "\n".join(
        f"  {w}  ({where})" for w, where in sorted(eng.found.items()))


def _frames(eng: English, where: str, d, p, th, opts) -> int:
    n = 0
    for f in frames(d):
        eng.scan(f"{where} frame {f.index + 1} caption", [f.caption])
        eng.scan(f"{where} frame {f.index + 1} picture", [t.text for t in paint_frame(p, RECT, d, f, th, opts).texts])
        n += 1
    return n


def test_every_builtin_in_chinese(qapp, chinese):
    from viz.app.figures import figure_name, metric_label, scenario_rows
    from viz.errors import WarpvizError

    eng = English(lessons_are_data=False)
    eng.builtin_names()
    p, th = NullPainter(), theme("light")
    names, count = builtin_names(), 0
    for name in names:
        sc = load(name)
        eng.scenario(sc)
        eng.scan(f"{name} title_zh/notes_zh", [sc.title_zh, *sc.notes_zh.splitlines()])
        opts = PaintOptions(title=sc.title_zh)
        try:
            an = analyze(sc)
        except WarpvizError as err:         # a lesson in an error (expect_error): the error is what shows
            eng.scan(f"{name} error", [str(err)])
            continue
        for k in range(len(sc.instructions())):
            count += _frames(eng, f"{name} #{k + 1}", warp_detail(sc, k), p, th, opts)
        for _index, head, figures in scenario_rows(sc, an):
            eng.scan(f"{name} Figures", head)
            eng.scan(f"{name} Figures", [x for name_, value, why in figures for x in (figure_name(name_), value, why)])
        eng.scan(f"{name} Figures totals", [metric_label(m) for m in an.metrics])
    assert len(names) >= 70 and count > 1000, (len(names), count)
    assert eng.found == {}, _report(eng)


def _trace_code(eng: English, src, an) -> None:
    """A trace's code: its kernel's names, PTX and SASS mnemonics, source file names."""
    eng.scenario(src.scenario)
    h = src.header
    words = [h.get("kernel", ""), h.get("launch_file_name", "")]
    for ins in src.trace.instructions:
        words += [ins.get("ptx", ""), ins.get("function", ""), ins.get("file", ""), ins.get("sass", "") or ""]
    words += [a.text for a in src.scenario.accesses]    # the source lines, comments included, are code
    for w in words:
        eng.code |= set(re.findall(r"[A-Za-z_]\w*", str(w))) | set(WORD.findall(str(w)))


def test_every_shipped_trace_in_chinese(qapp, chinese):
    from viz.app.figures import figure_name, metric_label, trace_rows
    from viz.app.gpu_texts import partial_text
    from viz.trace.analysis import analyze_trace, sass_rows
    from viz.trace.detail import TraceSource
    from viz.trace.tracefile import shipped

    eng = English()
    eng.builtin_names()
    p, th = NullPainter(), theme("light")
    paths, count = shipped(), 0
    for path in paths:
        src = TraceSource.open(path)
        an = analyze_trace(src.trace)
        _trace_code(eng, src, an)
        opts = PaintOptions(title=src.title)
        for sid in range(len(src.trace.instructions)):
            at = src.first_execution([sid])
            if at is not None:
                count += _frames(eng, f"{path.name} instruction {sid + 1}", src.detail(*at), p, th, opts)
        for _index, head, figures in trace_rows(an):
            eng.scan(f"{path.name} Figures", head)
            eng.scan(f"{path.name} Figures", [x for n, v, why in figures for x in (figure_name(n), v, why)])
        for d in an.per_access():
            eng.scan(f"{path.name} SASS", [x for row in sass_rows(d) for x in row])
        eng.scan(f"{path.name} Figures totals", [metric_label(m) for m in [*an.metrics, *an.other_metrics]])
        if not src.header.get("complete", False):
            note = partial_text(src.header.get("note", ""))
            eng.scan(f"{path.name} partial", [i18n.tr("Partial trace: {note}", note=note)])
    assert len(paths) >= 60 and count > 100, (len(paths), count)
    assert eng.found == {}, _report(eng)


def test_gpu_panel_measurements_in_chinese(qapp, chinese):
    """What the GPU panel says of every measured built-in, kernel and traced launch: the cost
    model's bound and terms, what Nsight Compute measured (units, hit rates, stalls)."""
    from viz.app.gpu_panel import bottleneck_text, trace_timing_text
    from viz.gpu import results
    from viz.gpu.tracebench import SHIPPED

    eng = English()
    doc = results.load(None)
    tdoc = results.load(results.shipped_path().with_name(SHIPPED))
    eng.data.add(tdoc["label"])   # the results file's own label (where it was measured), as h100.json's
    entries = [*doc["scenarios"].items(), *doc.get("kernels", {}).items()]
    for name, e in entries:
        eng.scan(f"{name} bottleneck", bottleneck_text(e).splitlines())
    for name, e in tdoc["traces"].items():
        eng.scan(f"{name} traced launch", trace_timing_text(e, tdoc.get("label", "")).splitlines())
    assert len(entries) > 100 and len(tdoc["traces"]) >= 50, (len(entries), len(tdoc["traces"]))
    assert eng.found == {}, _report(eng)
