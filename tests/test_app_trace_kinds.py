"""A traced ldmatrix / stmatrix / cp.async / atomic is drawn and named as the scenario kind is:
its top line and captions name the kind, an ldmatrix's phases are its 8x8 matrices, and
View → ldmatrix / stmatrix fragments opens on it. Only the description changes: the picture's
figures add up to what the analysis counts for the same records."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from viz.frames import access_op
from viz.kinds.ldmatrix import MatrixOp
from viz.trace.analysis import analyze_trace
from viz.trace.detail import open_source

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
KIND_TRACES = ("ldmatrix_cpasync", "stmatrix_frag", "cpasync_double", "generic_atomic", "triton_matmul")


def header_texts(w) -> str:
    w.view.repaint()
    return " ".join(t.text for t in w.view.layout_.texts)


@pytest.mark.parametrize("name", KIND_TRACES)
def test_each_traced_kind_is_the_scenario_kind_and_counts_as_before(name):
    src = open_source(TRACES / f"{name}.wvtrace")
    t = src.trace
    per = {d.index: d for d in analyze_trace(t).per_access()}
    wf: dict[int, int] = {}
    sec: dict[int, int] = {}
    for row in src.rows:
        d = src.record_detail(int(row))
        i = d.access.index
        ins = t.instructions[i]
        kind = ins["kind"]
        if kind in ("ldmatrix", "stmatrix"):
            m = d.access.matrix
            assert isinstance(m, MatrixOp) and m.kind == kind and access_op(d.access) == m.text
            assert m.text in ins["opcode"].replace(".sync.aligned.m8n8", "")          # ldmatrix.x4, stmatrix.x2.trans
            # one phase per 8x8 matrix; lanes past the last matrix give no row
            assert d.phases[:m.num] == tuple(tuple(range(8 * k, 8 * k + 8)) for k in range(m.num))
            assert not any(ln.active for ln in d.lanes[m.lanes_used:])
        elif kind == "cp.async":
            assert d.access.op == "cp.async" and access_op(d.access) == "cp.async" and d.access.matrix is None
        elif kind in ("atomic", "reduction"):
            assert d.access.op == "atomic" and access_op(d.access) == "atomic"      # all of these are adds (no other name)
        else:
            assert d.access.op == ins["op"] and d.access.matrix is None
        wf[i] = wf.get(i, 0) + d.wavefronts
        sec[i] = sec.get(i, 0) + len(d.sectors)
    kinds = {t.instructions[i]["kind"] for i in wf}
    assert kinds - {"load", "store"}, "the trace has none of the kinds"
    for i in wf:
        ins, d = t.instructions[i], per[i]
        if ins["kind"] == "cp.async" and ins["space"] == "shared":
            continue            # its shared side is drawn, and counted in none of the ten
        if d.wavefronts is not None:
            assert wf[i] == d.wavefronts, (name, i, ins["kind"])
        if d.sectors is not None:
            assert sec[i] == d.sectors, (name, i, ins["kind"])


def test_a_traced_ldmatrix_is_named_and_its_fragments_open(qtbot, user_dirs):
    w = make_window(qtbot, str(TRACES / "ldmatrix_cpasync.wvtrace"))
    try:
        s = w.session
        qtbot.waitUntil(lambda: s.trace_analysis is not None, timeout=20000)
        seen = []
        for _ in range(s.instruction_count):          # Down: the next instruction of this warp's stream
            if s.detail.access.matrix is not None:
                break
            seen.append(access_op(s.detail.access))
            qtbot.keyClick(w.view, Qt.Key.Key_Down)
        d = s.detail
        assert d.access.matrix is not None and "cp.async" in seen        # the cp.async came first, named so
        assert "ldmatrix.x4" in header_texts(w) and "int4" not in header_texts(w)
        assert w.source.text().startswith("ldmatrix.x4 ")
        assert "ldmatrix.x4" in s.frames[0].caption
        w.a_matrix.trigger()
        dlg = w.matrix_dialog
        qtbot.waitUntil(dlg.isVisible)
        m = dlg.map
        assert m is not None and m.op.text == "ldmatrix.x4" and not dlg.picture.pixmap().isNull()
        assert sorted({r.matrix for r in m.rows}) == [0, 1, 2, 3] and len(m.rows) == 32
        assert (m.wavefronts, m.conflicts) == (d.wavefronts, d.conflicts)
        assert [r.byte_addr for r in m.rows] == [ln.byte_addr for ln in d.lanes]
        assert "ldmatrix.x4: lane l gives row l % 8" in dlg.note.text()
        # a step back to the cp.async: the dialog says it is not a matrix op
        qtbot.keyClick(w.view, Qt.Key.Key_Up)
        qtbot.waitUntil(lambda: dlg.map is None)
        assert "not an ldmatrix or stmatrix" in dlg.note.text()
        assert "cp.async" in header_texts(w)
    finally:
        w.close()


def test_a_traced_atomic_is_named_as_the_atomic_kind(qtbot, user_dirs):
    w = make_window(qtbot, str(TRACES / "generic_atomic.wvtrace"))
    try:
        s = w.session
        qtbot.waitUntil(lambda: s.trace_analysis is not None, timeout=20000)
        ids = [i["id"] for i in s.trace.trace.instructions if i["kind"] == "atomic" and i["space"] == "shared"]
        hit = s.trace.first_execution(ids)
        assert hit is not None
        b, wp, k = hit
        s.go(block=b, warp=wp, instr=k)
        assert s.detail.access.op == "atomic"
        assert header_texts(w).startswith("atomic ") and w.source.text().startswith("atomic ")
        assert any("shared atomic request" in f.caption for f in s.frames)
    finally:
        w.close()
