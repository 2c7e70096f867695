"""One number everywhere: for every instruction of every shipped trace, the picture (the
per-warp detail the painter draws), ``analyze``'s text, its JSON and the Source panel's
per-line table give the same wavefronts and sectors.

A ``cp.async``'s shared side is the case that disagreed: ``.cg`` copies show no wavefront
anywhere (no counter counts one), ``.ca`` copies show their LDGSTS wavefronts everywhere,
labelled as such (docs/memory-model.md, "cp.async (LDGSTS)")."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from viz.frames import frames
from viz.trace.analysis import analyze_trace, ldgsts_side, source_lines, to_json, to_table
from viz.trace.detail import TraceSource

TRACES = sorted((Path(__file__).resolve().parents[1] / "assets" / "traces").glob("*.wvtrace"))
PER_INSTRUCTION = 3           # records of each instruction drawn and compared (first, middle, last)


def _records(src: TraceSource, an, k: int) -> list[tuple[int, int]]:
    """(record row, its figure in the analysis) for a few executed records of instruction ``k``."""
    t = src.trace
    rows = np.flatnonzero((t.instr == k) & (t.flags == 0))
    st = an.stats[k]
    per = st.per_record + (st.ldgsts_per_record if st.ldgsts_per_record is not None else 0)   # LDGSTS: its own
    if not rows.size:
        return []
    pick = sorted({0, rows.size // 2, rows.size - 1})[:PER_INSTRUCTION]
    return [(int(rows[j]), int(per[j])) for j in pick]


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_picture_table_analyze_and_json_agree(path):
    src = TraceSource.open(path)
    an = analyze_trace(src.trace)
    accesses = an.per_access(True)
    doc = to_json(an, never_executed=True)
    assert doc["accesses"] == [d.to_dict() for d in accesses]   # the JSON is the analysis, entry for entry
    text = to_table(an, never_executed=True)
    blocks = {int(m.group(1)): m.group(2) for m in re.finditer(r"^instruction (\d+): [^\n]*\n  ([^\n]*)$", text, re.M)}
    for d in accesses:
        k = d.index
        ins = src.trace.instructions[k]
        line = blocks[d.number]
        # analyze's text quotes the JSON's numbers
        if d.ldgsts_side == "cg":
            assert d.wavefronts == 0 and "no shared wavefronts" in line, (d.number, line)
        elif d.ldgsts_side == "ca":
            assert f"LDGSTS wavefronts {d.wavefronts:,} " in line, (d.number, line)
        elif d.kind == "wgmma":             # its own line: "... shared bytes in N wavefronts (ideal ..."
            assert f" in {d.wavefronts:,} wavefronts (" in line, (d.number, line)
        elif d.wavefronts is not None:
            assert f"wavefronts {d.wavefronts:,} " in line, (d.number, line)
        if d.sectors is not None:
            assert f"sectors {d.sectors:,} " in line, (d.number, line)
        # the picture: each drawn record's wavefronts (shared) or sectors (global) are the
        # analysis's figure of that record
        if ins["space"] not in ("shared", "global") or ins["kind"] in ("atomic", "reduction"):
            continue
        for row, figure in _records(src, an, k):
            det = src.record_detail(row)
            drawn = det.wavefronts if det.space == "shared" else len(det.sectors)
            assert drawn == figure, (path.name, d["number"], row, drawn, figure)
            fs = frames(det)
            if det.space == "shared" and det.issued:
                assert sum(f.kind == "wavefront" for f in fs) == drawn
    # the Source panel's table: per line, the sums of its instructions
    for r in source_lines(an):
        mine = [d for d in an.per_access() if (d.file, d.line) == (r["file"], r["line"])]
        for key in ("wavefronts", "bank_conflicts", "sectors", "requests", "warp_instructions"):
            # a TMA copy's sectors are its boxes' (`tma.sectors_counted`, what Nsight Compute counts)
            tma = sum((d.kind_figures("tma") or {}).get("sectors_counted", 0) for d in mine) if key == "sectors" else 0
            assert r[key] == sum(getattr(d, key) or 0 for d in mine) + tma, (path.name, r["line"], key)


def test_triton_matmul_cp_async_cg_shows_no_wavefront_anywhere():
    src = TraceSource.open(TRACES[0].parent / "triton_matmul.wvtrace")
    an = analyze_trace(src.trace)
    first = next(d for d in an.per_access() if d.number == 1)
    assert first.kind == "cp.async" and first.space == "shared" and first.ldgsts_side == "cg"
    assert first.wavefronts == 0 and first.phases == 0
    det = src.detail(0, 0, 0)
    assert det.op == "cp.async" and det.wavefronts == 0 and not det.bank_words
    caps = [f.caption for f in frames(det)]
    assert [f.kind for f in frames(det)] == ["compute", "request", "summary"]
    assert "No counter shows a wavefront" in caps[1] and "no shared wavefront counted" in caps[-1]


def test_triton_softmax_cp_async_ca_shows_ldgsts_wavefronts_in_both_places():
    src = TraceSource.open(TRACES[0].parent / "triton_softmax.wvtrace")
    an = analyze_trace(src.trace)
    first = next(d for d in an.per_access() if d.number == 1)
    assert first.ldgsts_side == "ca" and first.wavefronts == 32 and first.executed == 32
    det = src.detail(0, 0, 0)
    assert det.wavefronts == 1
    assert frames(det)[-1].caption.startswith("Summary: 1 LDGSTS wavefront for 1 phase")
    assert ldgsts_side(src.trace.instructions[0]) == "ca"


def test_inline_asm_points_at_the_mnemonic_line_not_the_operand_line():
    """ldmatrix_cpasync: nvcc's .loc for the ldmatrix is the asm statement's last line
    (`: "=r"(r0)... : "r"(row));`); the header, the table and the caption quote the
    `ldmatrix` line."""
    from viz.trace.detail import access_label
    from viz.trace.schema import mnemonic_line, source_line

    src = TraceSource.open(TRACES[0].parent / "ldmatrix_cpasync.wvtrace")
    h = src.trace.header
    lines = h["sources"]["ldmatrix_cpasync.cu"].splitlines()
    ld = next(i for i in src.trace.instructions if i["kind"] == "ldmatrix")
    assert ld["line"] == next(n for n, t in enumerate(lines, 1) if "ldmatrix.sync" in t) == 15
    assert source_line(h, ld).startswith('asm volatile("ldmatrix.sync.aligned.m8n8.x4')
    assert access_label(h, ld).endswith("(ldmatrix_cpasync.cu:15)")
    an = analyze_trace(src.trace)
    row = next(r for r in source_lines(an) if r["instructions"] == [ld["id"]])
    assert row["line"] == 15
    text = to_table(an)
    assert "ldmatrix_cpasync.cu:15  ldmatrix.sync" in text and '"r"(row));' not in text
    # the rule itself: only an asm statement's lines, only where the .loc line lacks the mnemonic
    hdr = {"sources": {"k.cu": 'int a = 1;\nasm("ld.shared.u32 %0, [%1];"\n    : "=r"(x) : "r"(p));\nx += 1;\n'}}
    ins = {"file": "k.cu", "line": 3, "opcode": "ld.shared.u32"}
    assert mnemonic_line(hdr, ins) == 2
    assert mnemonic_line(hdr, {**ins, "line": 4}) == 4          # not inside an asm statement
    assert mnemonic_line(hdr, {**ins, "opcode": "st.shared.u32"}) == 3     # no line names it: unchanged
    assert mnemonic_line({"sources": {}}, ins) == 3


def test_a_triton_trace_lists_its_python_before_its_ptx_and_says_what_is_not_recorded():
    from viz.trace.schema import shown_sources
    from viz.trace.unrecorded import unrecorded

    h = TraceSource.open(TRACES[0].parent / "triton_matmul.wvtrace").trace.header
    assert list(h["sources"]) == ["triton_matmul.ptx", "triton_kernels.py"]         # as the file has them
    assert [name for name, _ in shown_sources(h)] == ["triton_kernels.py", "triton_matmul.ptx"]
    u = unrecorded(h)
    assert u == [{"file": "triton_kernels.py", "line": 76, "mnemonic": "wgmma.mma_async", "count": 2,
                  "why": u[0]["why"]}]
    code = h["sources"]["triton_kernels.py"].splitlines()[75]
    assert "tl.dot" in code
    an = analyze_trace(TraceSource.open(TRACES[0].parent / "triton_matmul.wvtrace").trace)
    assert "not recorded: triton_kernels.py:76  2 x wgmma.mma_async" in to_table(an)
    assert to_json(an)["trace"]["unrecorded_in_ptx"] == u
    assert unrecorded(TraceSource.open(TRACES[0].parent / "ldmatrix_cpasync.wvtrace").trace.header) == []


def test_the_address_line_writes_addresses_as_the_picture_does():
    from viz.app.source import address_text, trace_source_line
    from viz.render.global_view import _addr

    for a in (0, 96, 9_999_999, 10 ** 7, 140421739054080):
        assert address_text(a) == _addr(a)
    src = TraceSource.open(TRACES[0].parent / "copy_float.wvtrace")
    t = src.trace
    k = next(i["id"] for i in t.instructions if i["space"] == "global")
    det = src.record_detail(int(np.flatnonzero((t.instr == k) & (t.flags == 0))[0]))
    ln = next(x for x in det.lanes if x.active)
    text = trace_source_line(det, ln.lane)
    assert f"byte 0x{ln.byte_addr:x}, line at byte 0x{ln.line * 128:x} (" in text
    assert f"sector {ln.sector % 4}" in text and str(ln.byte_addr) not in text and str(ln.sector) not in text
