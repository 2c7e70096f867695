"""The SASS reconciliation of wgmma.mma_async: each HGMMA / QGMMA / IGMMA / BGMMA (an operand
``gdesc[URx]``) goes to its PTX wgmma by commit group, whatever PTX line ptxas's line
information gives it (that of the code that built its descriptors, often another wgmma's or
another loop's line).

Fixtures (real compiler output):
* triton_matmul_wgmma.ptx / .gp.sass: Triton 3.6's tl.dot matmul (fp16 512^3, 128x128x64,
  pointer loads; tools/gpu/probe_tma.sh, case matmul, on the H200), ``nvdisasm -gp -c`` of its
  cubin: A and B from descriptors, 8 wgmma in one commit group.
* ../ptx/tma/triton_attention_fwd.ptx with triton_attention_fwd.gp.sass: QK^T with A and B
  from descriptors, then PV with A from registers.
* gmma_int8_fp8.ptx / .gp.sass: hand-written PTX (two s8 wgmma in one commit group, one e4m3
  in another), ``ptxas -arch=sm_90a -lineinfo`` (CUDA 13.0), ``nvdisasm -gp -c`` (12.8).
"""

from __future__ import annotations

from pathlib import Path

from viz.trace.ptx import parse
from viz.trace.reconcile import parse_sass_lines, reconcile

SASS = Path(__file__).parent / "data" / "sass"
MM = SASS / "triton_matmul_wgmma.ptx"
MM_GP = SASS / "triton_matmul_wgmma.gp.sass"
ATT = Path(__file__).parent / "data" / "ptx" / "tma" / "triton_attention_fwd.ptx"
ATT_GP = SASS / "triton_attention_fwd.gp.sass"
INT = SASS / "gmma_int8_fp8.ptx"
INT_GP = SASS / "gmma_int8_fp8.gp.sass"


def _wgmma(ptx: str, gp: str):
    p = parse(ptx)
    m = reconcile(ptx, p.instrs, gp)
    return m, [(i.line_no, m["instructions"][i.id]) for i in p.instrs if i.kind == "wgmma"]


def test_the_matmul_hgmma_with_both_descriptors_are_their_wgmma():
    m, rows = _wgmma(MM.read_text(), MM_GP.read_text())
    assert m["notes"] == []
    assert [ln for ln, _v in rows] == [702, 707, 712, 717, 721, 725, 729, 733]
    assert all(v.state == "same" and v.certain and v.width == 4 and v.ptx_width == 4 for _ln, v in rows)
    assert [v.sass for _ln, v in rows] == [
        ("HGMMA.64x128x16.F32 R88, gdesc[UR8].tnspB, R88",),
        ("HGMMA.64x128x16.F32 R88, gdesc[UR12].tnspB, R88",),
        ("HGMMA.64x128x16.F32 R88, gdesc[UR20].tnspB, R88",),
        ("HGMMA.64x128x16.F32 R88, gdesc[UR24].tnspB, R88",),
        ("HGMMA.64x128x16.F32 R24, gdesc[UR8].tnspB, R24",),
        ("HGMMA.64x128x16.F32 R24, gdesc[UR8].tnspB, R24",),
        ("HGMMA.64x128x16.F32 R24, gdesc[UR20].tnspB, R24",),
        ("HGMMA.64x128x16.F32 R24, gdesc[UR8].tnspB, R24, gsb0",)]
    # the line information is not the wgmma's: 704, 753, 727, 723, 731 (descriptor arithmetic)
    lines = [a.ptx_line for f in parse_sass_lines(MM_GP.read_text()).values() for a in f if a.cls == "wgmma"]
    assert lines == [704, 753, 753, 727, 727, 723, 731, 731]


def test_the_attention_hgmma_with_a_from_registers_are_their_wgmma():
    m, rows = _wgmma(ATT.read_text(), ATT_GP.read_text())
    assert not any("GMMA" in n for n in m["notes"])
    assert [ln for ln, _v in rows] == [306, 311, 315, 319, 587, 591, 595, 599]
    assert all(v.state == "same" and v.certain and v.width == 4 for _ln, v in rows)
    assert [v.sass[0] for _ln, v in rows] == [
        "HGMMA.64x64x16.F32 R24, gdesc[UR12], RZ, !UPT",
        "HGMMA.64x64x16.F32 R24, gdesc[UR8], R24",
        "HGMMA.64x64x16.F32 R24, gdesc[UR20], R24",
        "HGMMA.64x64x16.F32 R24, gdesc[UR24], R24, gsb0",
        "HGMMA.64x64x16.F32 R56, R88, gdesc[UR8].tnspB, R56",
        "HGMMA.64x64x16.F32 R56, R92, gdesc[UR8].tnspB, R56",
        "HGMMA.64x64x16.F32 R56, R96, gdesc[UR12].tnspB, R56",
        "HGMMA.64x64x16.F32 R56, R100, gdesc[UR8].tnspB, R56, gsb0"]


def test_igmma_and_qgmma_are_four_bytes_and_their_wgmma():
    """IGMMA.64x8x32.S8.S8 is no 1-byte access: every GMMA form reads as the 4 bytes "a lane"
    the wgmma trace form records (the kind counts A's and B's bytes itself)."""
    accs = [a for f in parse_sass_lines(INT_GP.read_text()).values() for a in f if a.cls == "wgmma"]
    assert [(a.opcode, a.width, a.ptx_line) for a in accs] == [
        ("IGMMA.64x8x32.S8.S8", 4, 21), ("IGMMA.64x8x32.S8.S8", 4, 37), ("QGMMA.64x8x32.F32.E4M3.E4M3", 4, 29)]
    m, rows = _wgmma(INT.read_text(), INT_GP.read_text())
    assert m["notes"] == [] and m["certain"]
    assert [(ln, v.state, v.certain, v.width, v.sass) for ln, v in rows] == [
        (20, "same", True, 4, ("IGMMA.64x8x32.S8.S8 R24, gdesc[UR8], RZ, !UPT",)),
        (22, "same", True, 4, ("IGMMA.64x8x32.S8.S8 R24, gdesc[UR4], R24, gsb0",)),
        (30, "same", True, 4, ("QGMMA.64x8x32.F32.E4M3.E4M3 R28, gdesc[UR4], RZ, !UPT, gsb0",))]


def test_a_gmma_group_of_another_shape_stays_unmatched():
    """A SASS group whose shapes no PTX commit group has (here the e4m3 wgmma made n16 in the
    PTX, the SASS still n8) goes to no wgmma: it is listed, and the wgmma is uncertain."""
    ptx = INT.read_text().replace("m64n8k32.f32.e4m3.e4m3", "m64n16k32.f32.e4m3.e4m3").replace(
        "{%f1,%f2,%f3,%f4}, %rd3", "{%f1,%f2,%f3,%f4,%f5,%f6,%f7,%f8}, %rd3")
    m, rows = _wgmma(ptx, INT_GP.read_text())
    assert [(ln, v.state) for ln, v in rows] == [(20, "same"), (22, "same"), (30, "uncertain")]
    assert len(m["notes"]) == 1
    assert m["notes"][0].startswith("the kernel: 1 SASS memory instruction(s) come from no PTX memory instruction")
    assert "`QGMMA.64x8x32.F32.E4M3.E4M3 R28, gdesc[UR4], RZ, !UPT, gsb0` (PTX line 29)" in m["notes"][0]


def test_a_gmma_line_without_operands_is_no_crash():
    """A hostile listing: an HGMMA without operands or shape is unmatched, not a failure."""
    gp = INT_GP.read_text().replace("IGMMA.64x8x32.S8.S8 R24, gdesc[UR8], RZ, !UPT", "HGMMA")
    m, rows = _wgmma(INT.read_text(), gp)
    assert [v.state for _ln, v in rows] == ["uncertain", "uncertain", "same"]
    assert "`HGMMA` (PTX line 21)" in m["notes"][0]


def test_a_gsb0_inside_a_commit_group_still_matches_the_group():
    """Should ptxas put ``gsb0`` on a GMMA inside a commit group, the runs after one
    WARPGROUP.ARRIVE that match no PTX group alone are matched together."""
    gp = MM_GP.read_text().replace("HGMMA.64x128x16.F32 R88, gdesc[UR24].tnspB, R88 ;",
                                   "HGMMA.64x128x16.F32 R88, gdesc[UR24].tnspB, R88, gsb0 ;")
    m, rows = _wgmma(MM.read_text(), gp)
    assert m["notes"] == []
    assert [v.state for _ln, v in rows] == ["same"] * 8
    assert rows[3][1].sass == ("HGMMA.64x128x16.F32 R88, gdesc[UR24].tnspB, R88, gsb0",)
