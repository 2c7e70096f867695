"""In the window: a Triton trace's Source panel shows the Python first and
says that tl.dot's wgmma reads are not recorded; the picture and the Figures of a
cp.async.cg agree (no wavefront); the address line writes device addresses in hex."""

from __future__ import annotations

from pathlib import Path

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures

TRACES = Path(__file__).resolve().parents[1] / "assets" / "traces"


def test_triton_matmul_in_the_window(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, str(TRACES / "triton_matmul.wvtrace"))
    w.docks["source"].show()
    w.docks["source"].raise_()
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=120000)
    panel = w.trace_source
    qtbot.waitUntil(lambda: panel.lines.topLevelItemCount() > 0, timeout=120000)
    text = panel.source.toPlainText()
    assert text.startswith("// triton_kernels.py")                         # the Python, not the PTX
    assert text.index("// triton_matmul.ptx") > text.index("tl.dot")
    line76 = next(ln for ln in text.splitlines() if ln.lstrip().startswith("76 "))
    assert "tl.dot" in line76 and "wgmma.mma_async not recorded" in line76
    assert "Not recorded: wgmma.mma_async at triton_kernels.py:76" in panel.note.text()
    # instruction 1, a cp.async.cg's shared side: 0 wavefronts in the picture and the Figures
    w.session.go(instr=0, block=0, warp=0, frame=0)
    d = w.session.detail
    assert d.op == "cp.async" and d.space == "shared" and d.wavefronts == 0
    assert [f.kind for f in w.session.frames] == ["compute", "request", "summary"]
    first = next(x for x in w.session.trace_analysis.per_access() if x.number == 1)
    assert first.wavefronts == 0 and first.ldgsts_side == "cg"
    # a global instruction: the address line in hex, as the picture
    w.session.go(instr=1, frame=0)
    d = w.session.detail
    assert d.space == "global"
    ln = next(x for x in d.lanes if x.active)
    assert f"byte 0x{ln.byte_addr:x}, line at byte 0x{ln.line * 128:x}" in w.source.text()
    w.close()
