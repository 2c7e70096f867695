"""The real main window in Chinese shows no English, for every built-in and every shipped trace,
opened as a user opens them (the library's file, ``open_path``) and read as a user reads them:
each access's first frame (a built-in's at its first loop point, a trace's static instruction
where it first runs) with its source line, timeline and lane tooltips, and at the first and
last instruction the first frame and the summary as painted (the painter's own record,
``FrameView.layout_``); then every visible widget of the window (labels, buttons, group
boxes, tabs and their tooltips, dock titles, tree and table headers and cells, combo items,
tooltips), each tabbed dock raised in turn (Whole launch with the heat map's axis titles,
Sweep, Source, GPU and each of its tabs: a trace's measured time, prediction, caveats, every
stall reason), the pyqtgraph texts (axis titles, legends), the window title, status bar and
menus. The scanner is ``tests/zh_scan.py``'s; ``tests/test_zh_everywhere.py`` reads every frame
at the model level, this reads what the window puts on screen around them.

One test per built-in and per trace over one window per worker process (parallel workers share
them out, as tests/test_picture_text.py's). Its time is in docs/PERFORMANCE.md.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import tomllib

import pytest
from PySide6.QtWidgets import QComboBox, QGraphicsTextItem, QTreeWidget

from app_helpers import make_window
from test_app_chinese import menu_texts, widget_texts
from viz import i18n
from viz.frames import Cursor
from viz.scenario import builtin_names, load, resolve
from viz.trace.tracefile import shipped
from zh_scan import WORD, English

BUILTINS = builtin_names()
TRACES = shipped()


@pytest.fixture(scope="module")
def qtbot_module(qapp, request):
    from pytestqt.qtbot import QtBot

    return QtBot(request)


@pytest.fixture(scope="module")
def zh_window(qtbot_module):
    """One window of 1920x1080 in Chinese for the module (per worker), with folders of its own."""
    d = tempfile.mkdtemp(prefix="warpviz-zh-window-")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WARPVIZ_SETTINGS", os.path.join(d, "settings.ini"))
        mp.setenv("WARPVIZ_DATA_DIR", os.path.join(d, "data"))
        w = make_window(qtbot_module, "coalesced")
        w.resize(1920, 1080)
        w.default_layout(1920)
        w.set_language("zh_CN")
        qtbot_module.waitUntil(lambda: w.gpu_panel is not None and w._sweep is not None, timeout=30000)
        try:
            yield w
        finally:
            w.timeline.play(False)
            i18n.set_language("en")
            w.close()
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def base_scanner():
    """The scanner's allowed words and data, read once per worker (every built-in is loaded)."""
    from viz.gpu import results
    from viz.gpu.tracebench import SHIPPED

    eng = English(lessons_are_data=False)
    eng.builtin_names()
    # the traced-launch results file's own label (where it was measured), shown in brackets
    # after the timing as h100.json's is
    eng.data.add(results.load(results.shipped_path().with_name(SHIPPED))["label"])
    return eng


def scanner(base: English) -> English:
    eng = English.__new__(English)
    eng.__dict__.update(base.__dict__)
    eng.found, eng.seen, eng.scanned = {}, set(), 0
    eng.code, eng.data, eng.whole = set(base.code), set(base.data), set(base.whole)
    return eng


def graphics_texts(root) -> list[str]:
    """The texts of every visible pyqtgraph scene under ``root``: axis titles, legends, labels."""
    import pyqtgraph as pg

    out = []
    for view in root.findChildren(pg.GraphicsView):
        if not view.isVisible():
            continue
        for item in view.scene().items():
            if not item.isVisible():
                continue
            if isinstance(item, QGraphicsTextItem):
                out.append(item.toPlainText())
            elif isinstance(item, pg.LabelItem):
                out.append(re.sub(r"<[^>]*>", "", item.text or ""))
    return out


def read_position(win, eng: English, where: str, paint: bool) -> None:
    """What the window shows at the session's position: the source line, the timeline and three
    lanes' tooltips, and with ``paint`` the picture as painted (every frame's painted text is
    read at the model level by tests/test_zh_everywhere.py: painting each here would take minutes)."""
    if paint:
        win.view.repaint()
        L = win.view.layout_
        assert L is not None, f"{where}: nothing painted"
        eng.scan(f"{where} picture", [t.text for t in L.texts])
    eng.scan(f"{where} source line", [win.source.text()])
    eng.scan(f"{where} timeline", widget_texts(win.timeline))
    eng.scan(f"{where} lane tooltips", [win.view.lane_tooltip(k) for k in (0, 5, 31)])


def read_window(win, qtbot, eng: English, where: str) -> None:
    """Every visible widget of the window, each tabbed dock raised in turn, the GPU panel's tabs,
    the plots' texts, the title, status bar and menus (the scenario editor's TOML values and the
    library's list of every lesson are data: tests/test_scenarios_zh.py reads the lessons)."""
    library = (win.library.findChild(QTreeWidget), *win.library.findChildren(QComboBox))
    toml_values = tuple(win.editor.findChildren(QComboBox))
    skip = library + toml_values
    tabs = win.editor.tabs
    shown = tabs.currentIndex()
    for tab in range(tabs.count()):
        if tabs.isTabEnabled(tab):                  # a trace's form tab is disabled: its text is shown
            tabs.setCurrentIndex(tab)
            eng.scan(f"{where} window", widget_texts(win, skip=skip))
    tabs.setCurrentIndex(shown)
    eng.scan(f"{where} editor tooltips", [c.toolTip() for c in toml_values if c.isVisible()])
    for dock in ("launch", "sweep", "source", "gpu"):
        win.docks[dock].show()
        win.docks[dock].raise_()
        qtbot.waitUntil(lambda: win.docks[dock].isVisible(), timeout=5000)
        eng.scan(f"{where} {dock} panel", widget_texts(win.docks[dock]) + graphics_texts(win.docks[dock]))
    tabs = win.gpu_panel.tabs
    for k in range(tabs.count()):
        if tabs.isTabVisible(k):
            tabs.setCurrentIndex(k)
            eng.scan(f"{where} GPU tab {k + 1}", widget_texts(tabs) + graphics_texts(tabs))
    tabs.setCurrentIndex(0)
    win.docks["launch"].raise_()
    eng.scan(f"{where} title and status", [win.windowTitle(), win.statusBar().currentMessage()])
    eng.scan(f"{where} menus", menu_texts(win))


def _report(eng: English) -> str:
    return "English in the Chinese window:\n" + "\n".join(f"  {w}  ({where})" for w, where in sorted(eng.found.items()))


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_in_the_chinese_window(zh_window, qtbot_module, base_scanner, name):
    win, qtbot = zh_window, qtbot_module
    eng = scanner(base_scanner)
    sc = load(name)
    eng.scenario(sc)
    s = win.session
    before = s.scenario
    assert win.open_path(resolve(name))
    win.editor.flush()
    qtbot.waitUntil(lambda: not s.busy, timeout=30000)
    if sc.expect_error:
        qtbot.waitUntil(lambda: s.error is not None, timeout=20000)
        eng.scan(f"{name} error", [win.editor.banner.text(), win.statusBar().currentMessage()])
        for shown in (s.scenario, before):   # the picture and the form keep the last valid scenario's names
            if shown is not None:
                eng.scenario(shown)
    else:
        assert s.error is None, s.error
        # each access (each part of its element) at its first loop point, and the last instruction:
        # a loop's other points show the same texts with other numbers
        ins = sc.instructions()
        assert len(ins) == s.instruction_count
        first = {}
        for i in ins:
            first.setdefault((i.access, i.part), i.number)
        n = len(ins)
        for k in sorted({*first.values(), n - 1}):
            for frame in (0, 10**6) if k in (0, n - 1) else (0,):      # the first frame; at the ends the summary
                s.go(instr=k, frame=frame)
                read_position(win, eng, f"{name} #{k + 1} frame {s.cursor.frame + 1}", paint=k in (0, n - 1))
    read_window(win, qtbot, eng, name)
    assert eng.scanned > 50, eng.scanned
    assert eng.found == {}, _report(eng)


def _trace_code(eng: English, src) -> None:
    """A trace's code: its kernel's and files' names, PTX and SASS, and its CUDA sources (the
    Source panel lists them line by line: comments included, they are code)."""
    eng.scenario(src.scenario)
    h = src.header
    words = [h.get("kernel", ""), h.get("launch_file_name", ""), h.get("source_name", ""), h.get("entry", ""),
             h.get("kernel_signature", "") or "", *(str(t) for t in (h.get("sources") or {}).values()),
             *(str(k) for k in (h.get("sources") or {}))]
    for ins in src.trace.instructions:
        words += [ins.get("ptx", ""), ins.get("function", ""), ins.get("file", ""), ins.get("sass", "") or ""]
    words += [a.text for a in src.scenario.accesses]
    try:                        # the launch file's arrays and arguments: the editor's form names them
        raw = tomllib.loads(h.get("launch_file", ""))
    except tomllib.TOMLDecodeError:
        raw = {}
    for key in ("arrays", "args", "arg", "params"):
        words += list(raw.get(key) or {}) if isinstance(raw.get(key), dict) else []
    for w in words:
        eng.code |= set(re.findall(r"[A-Za-z_]\w*", str(w))) | set(WORD.findall(str(w)))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.stem)
def test_shipped_trace_in_the_chinese_window(zh_window, qtbot_module, base_scanner, path):
    win, qtbot = zh_window, qtbot_module
    eng = scanner(base_scanner)
    assert win.open_path(path), win.last_open_error
    s = win.session
    src = s.trace
    _trace_code(eng, src)
    eng.data.add(src.title)
    qtbot.waitUntil(lambda: s.trace_analysis is not None, timeout=60000)
    qtbot.waitUntil(lambda: win.figures.tree.isEnabled(), timeout=10000)
    ran = [(sid, at) for sid in range(len(src.trace.instructions)) if (at := src.first_execution([sid])) is not None]
    assert ran
    ends = (ran[0][0], ran[-1][0])
    for sid, at in ran:
        for frame in (0, 10**6) if sid in ends else (0,):
            s.move_to(Cursor(at[2], at[0], at[1], frame))
            read_position(win, eng, f"{path.name} instruction {sid + 1} frame {s.cursor.frame + 1}",
                          paint=sid in ends)
    read_window(win, qtbot, eng, path.name)
    # Nsight Compute's stall reasons are snake_case names the scanner takes for code: every one
    # the GPU panel shows is in words (the catalogue's "stall: NAME").
    text = win.gpu_panel.bottleneck.text()
    for stalls in re.findall(i18n.tr("top stalls: {stalls}", stalls="(.*)"), text):
        assert not re.search("[a-z]{2,}", stalls), f"{path.name}: stall reasons shown untranslated: {stalls}"
    assert eng.found == {}, _report(eng)


def test_library_menus_and_keys_in_the_chinese_window(zh_window, base_scanner):
    """The parts of the window the per-item tests leave out: the library's list of every lesson
    and trace (their titles are lesson text), the menus and the keys' help."""
    from viz.app.window import KEYS_HELP

    win = zh_window
    eng = scanner(base_scanner)
    for sc_name in BUILTINS:
        eng.scenario(sc_name)
    from viz.app.library import launch_files, read_launch_entry

    eng.data |= {load(n).title_zh for n in BUILTINS}
    launches = [read_launch_entry(p) for p in launch_files()]
    eng.data |= {e.title for e in launches}                 # the launch files' own titles
    eng.code |= {w for e in launches for w in WORD.findall(e.kernel or "")}     # and their kernels' names
    eng.scan("library", widget_texts(win.docks["library"]))
    eng.scan("menus", menu_texts(win))
    eng.scan("keys", [KEYS_HELP()])
    assert eng.scanned > 100
    assert eng.found == {}, _report(eng)


def test_partial_trace_in_the_chinese_window(zh_window, qtbot_module, base_scanner, tmp_path):
    """A trace the recorder capped: its note (the recorder's templates, filled in) reads in
    Chinese in the Figures panel, and nothing else in the window is English."""
    from viz.gpu.tracemodel import first_blocks
    from viz.trace import tracefile
    from viz.trace.schema import partial_note

    win, qtbot = zh_window, qtbot_module
    full = tracefile.load(next(p for p in TRACES if p.stem == "copy_float"))
    sub = first_blocks(full, 8)
    note = partial_note(("over-limit", {"executed": 9_000_000, "limit": 4_000_000, "blocks": "0-7"}),
                        ("runs-differ", {"counted": 9_000_000, "recorded": 9_000_002}))
    sub.header = dict(full.header, complete=False, recorded_blocks="0-7", note=note)
    path = tracefile.save(sub, tmp_path / "copy_float_partial.wvtrace")
    eng = scanner(base_scanner)
    assert win.open_path(path), win.last_open_error
    _trace_code(eng, win.session.trace)
    eng.data.add(win.session.trace.title)
    qtbot.waitUntil(lambda: win.session.trace_analysis is not None and win.figures.warn.isVisible(), timeout=60000)
    shown = win.figures.warn.text()
    assert shown == ("不完整的追踪：整次启动需要 9,000,000 条记录，超过上限 4,000,000：只录制了线程块 0-7；"
                     "计数运行看到 9,000,000 次执行，录制运行看到 9,000,002 次（内核的控制流取决于时序或它自己修改的数据）"), shown
    read_position(win, eng, "partial trace", paint=True)
    read_window(win, qtbot, eng, "partial trace")
    assert eng.found == {}, _report(eng)


@pytest.mark.parametrize("kind", ["trace", "builtin", "launch"])
def test_switching_to_chinese_with_a_file_open(zh_window, qtbot_module, base_scanner, kind):
    """A file opened in English, then the language switched to Chinese: every text the window
    shows follows (the editor's line about a read-only trace or launch file stayed English)."""
    from viz.app.library import launch_files

    win, qtbot = zh_window, qtbot_module
    eng = scanner(base_scanner)
    path = {"trace": next(p for p in TRACES if p.stem == "gemm_tiled"), "builtin": resolve("transpose-tile"),
            "launch": next(p for p in launch_files() if p.name.startswith("gemm_tiled"))}[kind]
    win.set_language("en")
    try:
        assert win.open_path(path)
        s = win.session
        if kind == "trace":
            _trace_code(eng, s.trace)
            eng.data.add(s.trace.title)
            qtbot.waitUntil(lambda: s.trace_analysis is not None, timeout=60000)
        elif kind == "builtin":
            eng.scenario("transpose-tile")
            win.editor.flush()
            qtbot.waitUntil(lambda: not s.busy, timeout=30000)
        else:
            eng.data.add(s.launch.title)
            eng.code |= set(WORD.findall(s.launch.kernel)) | set(WORD.findall(s.launch.source.name))
        assert kind == "builtin" or win.editor.info.isVisibleTo(win.editor)
    finally:
        win.set_language("zh_CN")
    if kind != "launch":
        read_position(win, eng, f"{kind} after the switch", paint=True)
    read_window(win, qtbot, eng, f"{kind} after the switch")
    assert eng.found == {}, _report(eng)
