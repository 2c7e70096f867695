"""Numbers a person reads: instructions, phases, wavefronts and lines count from 1 on the
screen, in the Timeline's box, in the export dialog, in `warpviz export -i` and in
`warpviz analyze`; lanes, warps and blocks from 0. And the warning for an array larger
than any GPU's memory."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator

from app_helpers import make_window, user_dirs, window  # noqa: F401 - fixtures
from viz.cli import main
from viz.engine import analyze
from viz.render import PaintOptions, paint_frame
from viz.scenario import MAX_GPU_MEMORY, builtin_names, load, loads, resolve, warnings


def view_texts(view) -> list[str]:
    """The text the view paints for its current frame (the same painter call, into an SVG)."""
    s = view.session
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(1920, 1080))
    gen.setViewBox(QRectF(0, 0, 1920, 1080))
    p = QPainter(gen)
    paint_frame(p, QRectF(0, 0, 1920, 1080), s.detail, s.frame, view.theme, view.options)
    p.end()
    root = ET.fromstring(bytes(buf.data()))
    return [e.text for e in root.iter() if e.tag.endswith("text") and e.text]


def header_of(texts: list[str]) -> str:
    return next(t for t in texts if "instruction " in t and " of " in t)


def type_instruction(qtbot, w, text: str) -> None:
    box = w.timeline.instr
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), text)
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)


def test_the_instruction_box_counts_as_the_header_does(qtbot, window):
    w = window
    n = w.session.instruction_count
    assert w.timeline.instr.minimum() == 1 and w.timeline.instr.maximum() == n == 16
    assert w.timeline.instr.value() == 1 and f"instruction 1 of {n}" in header_of(view_texts(w.view))
    type_instruction(qtbot, w, "9")
    assert w.session.cursor.instruction == 8                      # the first column read
    assert w.session.detail.access.text == "tile[threadIdx.x][threadIdx.y + j]"
    assert f"instruction 9 of {n}" in header_of(view_texts(w.view))
    qtbot.keyClick(w.view, Qt.Key.Key_Down)
    assert w.timeline.instr.value() == 10 and "instruction 10 of 16" in header_of(view_texts(w.view))
    # Blocks and warps count from 0, as blockIdx and warp ids do in CUDA.
    assert w.timeline.block.minimum() == 0 and w.timeline.warp.minimum() == 0
    assert w.timeline.warp.maximum() == w.session.scenario.launch.warps_per_block - 1
    # The Figures panel names each access's instructions with the same numbers.
    qtbot.waitUntil(lambda: w.figures.tree.topLevelItemCount() == 5, timeout=20000)
    tops = [w.figures.tree.topLevelItem(i).text(2) for i in range(4)]
    assert tops[2].startswith("tile[threadIdx.x][threadIdx.y + j]") and tops[2].endswith("[instructions 9-12]")
    assert [t.rsplit("[", 1)[1] for t in tops] == ["instructions 1-4]", "instructions 5-8]", "instructions 9-12]",
                                                    "instructions 13-16]"]
    # The export dialog proposes the same number.
    type_instruction(qtbot, w, "9")
    qtbot.keyClick(w.view, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert w.export_dialog.instructions.text() == "9"
    w.export_dialog.close()


def test_lane_tooltips_count_phases_wavefronts_and_lines_from_1(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "float4-tile")
    s = w.session
    k = next(i for i, st in enumerate(s.timeline.scenario.instructions()) if st.access == 1)  # the column read
    s.go(instr=k)
    d = s.detail
    assert len(d.phases) == 4
    for lane in (0, 8, 31):
        tip = w.view.lane_tooltip(lane)
        ln = d.lanes[lane]
        assert f"phase {lane // 8 + 1};" in tip
        assert f"served in wavefront {ln.wavefront + 1}" in tip
    assert "phase 0;" not in w.view.lane_tooltip(0)
    w.close()
    g = make_window(qtbot, "offset-by-one")            # in[i+1]: 5 sectors in 2 lines
    d = g.session.detail
    assert len(d.lines) == 2
    assert "line 1 of 2 of this request" in g.view.lane_tooltip(0)
    assert "line 2 of 2 of this request" in g.view.lane_tooltip(31)
    # the address line names the line by its first byte and counts it from 1: "line at byte 0 (1/2)"
    assert "(1/2)" in g.source.text() or "(2/2)" in g.source.text()
    g.close()


def svg_texts(path) -> list[str]:
    return [e.text for e in ET.parse(path).getroot().iter() if e.tag.endswith("text") and e.text]


def test_export_i_selects_the_instruction_the_header_names(qapp, tmp_path, capsys):
    sc = load("transpose-tile")
    instrs = sc.instructions()
    for k in (1, 9, 16):
        out = tmp_path / f"i{k}.svg"
        assert main(["export", "transpose-tile", "-i", str(k), "--frames", "1", "--out", str(out)]) == 0
        texts = svg_texts(out)
        assert f"instruction {k} of {len(instrs)}" in header_of(texts)
        access = sc.accesses[instrs[k - 1].access]
        assert any(access.text in t for t in texts)
    assert main(["export", "transpose-tile", "-i", "0", "--out", str(tmp_path / "x.png")]) == 2
    assert "outside 1..16" in capsys.readouterr().err


def test_analyze_names_each_access_s_instruction_numbers(capsys):
    sc = load("transpose-tile")
    assert main(["analyze", "transpose-tile", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = [(a["index"], a["instruction_numbers"]) for a in doc["accesses"]]
    assert got == [(0, [1, 4]), (1, [5, 8]), (2, [9, 12]), (3, [13, 16])]
    for a in doc["accesses"]:                 # the numbers are the ones -i and the header use
        first, last = a["instruction_numbers"]
        assert {sc.instructions()[n - 1].access for n in range(first, last + 1)} == {a["index"]}
    assert main(["analyze", "transpose-tile"]) == 0
    table = capsys.readouterr().out
    line = next(ln for ln in table.splitlines() if ln.startswith("access 2:"))
    assert "tile[threadIdx.x][threadIdx.y + j]" in line and line.endswith("[instructions 9-12]")
    assert main(["analyze", "float3-whole", "--json"]) == 0   # one access, three instructions (x, y, z)
    doc = json.loads(capsys.readouterr().out)
    assert [a["instruction_numbers"] for a in doc["accesses"]] == [[1, 3], [4, 6]]


# ---------------------------------------------------------------------------- huge arrays


def _coalesced_with(n: str, ty: str = "float") -> str:
    text = resolve("coalesced").read_text()
    return text.replace("shape = [\"N\"]", f"shape = [{n}]").replace('type  = "float"', f'type  = "{ty}"')


def test_no_builtin_warns():
    for name in builtin_names():
        try:
            sc = load(name)
        except Exception:  # noqa: BLE001 - the lessons in an error
            continue
        assert warnings(sc) == [], name


def test_an_array_larger_than_any_gpu_warns_and_is_still_analysed(tmp_path, capsys):
    text = resolve("coalesced").read_text()
    assert text.count('shape = ["N"]') == 2, "coalesced.toml's arrays changed"
    big = tmp_path / "big.toml"
    big.write_text(text.replace('shape = ["N"]', "shape = [1000000000000]", 1))   # only `in`
    sc = load(big)
    ws = warnings(sc)
    assert len(ws) == 1 and "global array in is 3.6 TiB" in ws[0] and "192 GiB" in ws[0]
    assert "(1,000,000,000,000 elements of float, 4,000,000,000,000 bytes)" in ws[0]
    assert "analysis still runs" in ws[0]
    assert main(["analyze", str(big), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["warnings"] == ws
    small = json.loads((main(["analyze", "coalesced", "--json"]), capsys.readouterr().out)[1])
    assert small["warnings"] == [] and doc["metrics"] == small["metrics"]   # the warp sees the same addresses
    assert main(["analyze", str(big)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[3] == "warning: " + ws[0]


def test_the_limit_is_exact_and_arrays_add_up():
    limit_floats = MAX_GPU_MEMORY // 4
    text = resolve("coalesced").read_text()

    def with_shapes(a: int, b: int):
        t = text.replace('shape = ["N"]', f"shape = [{a}]", 1).replace('shape = ["N"]', f"shape = [{b}]", 1)
        return loads(t, name="coalesced")

    assert warnings(with_shapes(limit_floats - 16384, 16384)) == []     # the two fill 192 GiB exactly
    # One float more and `out` starts at the next 256-byte boundary: 256 bytes over.
    assert len(warnings(with_shapes(limit_floats - 16384 + 1, 16384))) == 1
    over = warnings(with_shapes(limit_floats + 1, 16384))
    assert len(over) == 1 and "global array in is" in over[0]
    both = warnings(with_shapes(limit_floats // 2 + 64, limit_floats // 2 + 64))   # each fits, not together
    assert len(both) == 1 and "the global arrays together" in both[0] and "bytes: in, out)" in both[0]
    assert analyze(with_shapes(limit_floats + 1, 16384)).metrics == analyze(load("coalesced")).metrics


def test_the_figures_panel_shows_the_warning(qtbot, user_dirs, tmp_path):  # noqa: F811
    big = tmp_path / "big.toml"
    big.write_text(resolve("coalesced").read_text().replace('shape = ["N"]', "shape = [1000000000000]", 1))
    w = make_window(qtbot, str(big))
    panel = w.figures
    assert panel.warn.isVisibleTo(panel)
    assert "global array in is 3.6 TiB" in panel.warn.text() and "analysis still runs" in panel.warn.text()
    qtbot.waitUntil(lambda: bool(panel.values()), timeout=20000)            # the figures are there too
    assert panel.values()["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == "2,048"
    w.open_path(resolve("coalesced"))
    assert not panel.warn.isVisibleTo(panel) and panel.warn.text() == ""
    w.close()
