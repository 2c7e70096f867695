"""wgmma reads of shared memory (viz.kinds.wgmma): descriptors, core matrices, the rule, the PTX
recorder's slots, the trace analysis' gmma counters."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viz.kinds import wgmma as W
from viz.trace import ptx as P

DATA = Path(__file__).parent / "data" / "wgmma"
TRITON = DATA / "triton35_matmul_128x128x64.ptx"
HAVE_PTXAS = shutil.which("ptxas") is not None


# ---------------------------------------------------------------------------- descriptors


def test_decode_the_descriptors_triton_builds():
    """Triton 3.5's tl.dot fp16 GEMM (the fixture) ORs these constants into its start addresses."""
    a = W.decode(4611686293372403712)
    assert (a.start, a.lbo, a.sbo, a.base_offset, a.swizzle_name) == (0, 16384, 1024, 0, "128B")
    b = W.decode(4611686293338849280)
    assert (b.start, b.lbo, b.sbo, b.base_offset, b.swizzle_name) == (0, 8192, 1024, 0, "128B")
    assert W.decode(4611686293372403712 | (18432 >> 4)).start == 18432


@given(start=st.integers(0, (1 << 18) - 1), lbo=st.integers(0, (1 << 18) - 1), sbo=st.integers(0, (1 << 18) - 1),
       sw=st.integers(0, 3), base=st.integers(0, 7))
def test_encode_decode_round_trip(start, lbo, sbo, sw, base):
    d = W.decode(W.encode(start, lbo, sbo, sw, base))
    assert (d.start, d.lbo, d.sbo, d.swizzle, d.base_offset) == (start & ~15, lbo & ~15, sbo & ~15, sw, base)
    assert W.encode(d.start, d.lbo, d.sbo, d.swizzle, d.base_offset) == d.raw


def test_encode_refuses_out_of_range_fields():
    with pytest.raises(ValueError):
        W.encode(0, 16, 16, 4)
    with pytest.raises(ValueError):
        W.encode(0, 16, 16, 0, 8)


# ---------------------------------------------------------------------------- core matrices


def test_k_major_without_swizzle_core_matrices_are_128_contiguous_bytes():
    cms = W.core_matrices("A", W.decode(W.encode(1024, 128, 256, 0)), 64, "K")
    assert len(cms) == 16
    assert cms[0].rows == tuple(1024 + 16 * r for r in range(8))
    assert cms[1].rows == tuple(1024 + 128 + 16 * r for r in range(8))      # K-adjacent: LBO
    assert cms[2].rows == tuple(1024 + 256 + 16 * r for r in range(8))      # MN-adjacent: SBO


def test_128b_swizzle_k_major_rows_are_128_bytes_apart_and_chunks_xor_the_row():
    cms = W.core_matrices("A", W.decode(W.encode(2048 + 32, 16, 1024, 1)), 64, "K")
    # chunk 2 (the k16 slice at byte 32 of a 128-byte row), row r: chunk index 2 ^ r
    assert cms[0].rows == tuple(2048 + 128 * r + 16 * (2 ^ r) for r in range(8))
    assert cms[1].rows == tuple(2048 + 128 * r + 16 * (3 ^ r) for r in range(8))
    assert cms[2].rows[0] == 2048 + 1024 + 32


def test_mn_major_128b_swizzle_atoms_are_lbo_apart_k_groups_sbo():
    """Triton's B (imm-trans-b 1): 64 halves of N per 128-byte row, N atoms LBO apart."""
    cms = W.core_matrices("B", W.decode(W.encode(0, 8192, 1024, 1)), 128, "MN")
    assert len(cms) == 32
    by = {(c.mn, c.k): c for c in cms}
    assert by[(0, 0)].rows == tuple(128 * r + 16 * (0 ^ r) for r in range(8))
    assert by[(0, 1)].rows == tuple(1024 + 128 * r + 16 * (0 ^ r) for r in range(8))
    assert by[(9, 0)].rows == tuple(8192 + 128 * r + 16 * (1 ^ r) for r in range(8))


def test_swizzle_patterns():
    assert [W.swizzle_address(128 * r, 1) for r in range(8)] == [128 * r + 16 * r for r in range(8)]
    assert [W.swizzle_address(128 * r, 2) for r in range(8)] == [128 * r + 16 * (r % 4) for r in range(8)]
    assert [W.swizzle_address(128 * r, 3) for r in range(8)] == [128 * r + 16 * (r % 2) for r in range(8)]
    assert W.swizzle_address(1234, 0) == 1234


# ---------------------------------------------------------------------------- the rule


def test_measured_baseline_m64n128k16_f16():
    """Nsight Compute on the H200 (TRACE_FORMAT.md): 6,144 bytes in 48 wavefronts, 0 conflicts
    per warpgroup instruction of Triton's GEMM (A K-major, B MN-major, 128B swizzle)."""
    op = W.parse_ptx_line("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1}, %rd1, %rd2, %p3, 1, 1, 0, 1;")
    c = W.count(op, W.encode(32, 16384, 1024, 1), W.encode(18432, 8192, 1024, 1))
    assert (c.bytes, c.wavefronts, c.ideal, c.conflicts) == (6144, 48, 48, 0)


@pytest.mark.parametrize("sw", [0, 1, 2, 3])
@pytest.mark.parametrize("n", [8, 64, 128, 256])
@pytest.mark.parametrize("ta,tb,areg", [(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0), (0, 0, 1), (0, 1, 1)])
def test_canonical_layouts_read_without_conflicts(sw, n, ta, tb, areg):
    op = W.WgmmaOp(n, 16, "f32", "f16", "f16", not areg, bool(ta), bool(tb))
    la, sa = W.canonical(sw, op.a_major)
    lb, sb = W.canonical(sw, op.b_major, n)
    c = W.count(op, None if areg else W.encode(0, la, sa, sw), W.encode(98304, lb, sb, sw))
    assert c.bytes == (0 if areg else 2048) + 32 * n
    assert c.wavefronts == c.ideal == c.bytes // 128 and c.conflicts == 0


desc_fields = st.tuples(st.integers(0, 4095).map(lambda x: x * 16), st.integers(0, 255).map(lambda x: x * 16),
                        st.integers(0, 255).map(lambda x: x * 16), st.integers(0, 3), st.integers(0, 7))


@settings(max_examples=150, deadline=None)
@given(n=st.sampled_from([8, 16, 24, 32, 64, 128, 256]), ta=st.booleans(), tb=st.booleans(), areg=st.booleans(),
       a=desc_fields, b=desc_fields)
def test_invariants(n, ta, tb, areg, a, b):
    """Bytes read = A + B bytes; wavefronts >= bytes / 128 (a phase delivers 128 bytes);
    conflicts = wavefronts - ideal >= 0; no phase costs more than its 8 rows."""
    op = W.WgmmaOp(n, 16, "f32", "f16", "f16", not areg, ta and not areg, tb)
    c = W.count(op, None if areg else W.encode(*a), W.encode(*b))
    assert c.bytes == (0 if areg else 64 * 32) + n * 32
    assert c.ideal == c.bytes // 128 and c.wavefronts >= c.ideal
    assert c.conflicts == c.wavefronts - c.ideal >= 0
    assert all(1 <= p <= 8 for p in c.per_phase) and len(c.per_phase) == c.bytes // 128
    rows = W.rows_of(op, None if areg else W.encode(*a), W.encode(*b))
    assert len(rows) == c.bytes // 16
    assert sum(1 for r in rows if r.conflict) >= c.conflicts


# ---------------------------------------------------------------------------- PTX forms


@pytest.mark.parametrize("line,want", [
    ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1,%r2}, %rd418, %rd419, %p3, 1, 1, 0, 1;",
     (128, 16, True, False, True, "%rd418", "%rd419")),
    ("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%f1}, {%r1,%r2,%r3,%r4}, %rd9, p, 1, 1, 1;",
     (64, 16, False, False, True, "", "%rd9")),
    ("@%p1 wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%f1}, %rd1, %rd2, p, 1, 1;",
     (64, 8, True, False, False, "%rd1", "%rd2")),
    ("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2 {%f1}, %rd1, %rd2, p, 1, 1;",
     (256, 32, True, False, False, "%rd1", "%rd2")),
    ("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8.satfinite {%r1}, %rd1, %rd2, p;",
     (64, 32, True, False, False, "%rd1", "%rd2")),
])
def test_parse_forms(line, want):
    op = W.parse_ptx_line(line)
    assert (op.n, op.k, op.a_shared, op.trans_a, op.trans_b, op.a_operand, op.b_operand) == want
    assert op.bytes == (2048 if op.a_shared else 0) + 32 * op.n


@pytest.mark.parametrize("line", [
    "wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16 {%f1}, %rd1, %rd2, %r1, 0, p, 1, 1, 0, 0;",
    "wgmma.mma_async.sync.aligned.m64n64k8.f32.f16.f16 {%f1}, %rd1, %rd2, p, 1, 1, 0, 0;",     # k8 is not f16's
    "wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {%f1}, %rd1, %rd2, p, 1, 1, 0, 0;",    # N not a multiple of 8
    "wgmma.fence.sync.aligned;", "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;",
])
def test_parse_refuses_what_it_does_not_record(line):
    assert W.parse_ptx_line(line) is None


def test_fence_commit_and_wait_touch_no_memory():
    for op in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned"):
        assert P.classify(op) is None
    assert P.classify("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == ("wgmma", "shared")


# ---------------------------------------------------------------------------- the recorder


def test_triton_gemm_wgmma_instructions_are_recorded():
    parsed = P.parse(TRITON.read_text())
    w = [i for i in parsed.instrs if i.kind == "wgmma"]
    assert len(w) == 8
    ops = [W.parse(i.opcode, i.address) for i in w]       # the registry keeps the whole operand text
    assert (ops[0].a_operand, ops[0].b_operand) == ("%rd418", "%rd419")
    assert (ops[4].a_operand, ops[4].b_operand) == ("%rd426", "%rd419")
    assert all(i.space == "shared" and i.width == 4 for i in w)
    assert not [s for _, s in parsed.skipped if "wgmma" in s]


@pytest.mark.skipif(not HAVE_PTXAS, reason="needs ptxas")
@pytest.mark.nvcc
def test_instrumented_triton_gemm_assembles_for_sm_90a(tmp_path):
    out, instrs = P.instrument(TRITON.read_text())
    assert out.count("wgmma.mma_async") == 8
    assert out.count(f"mov.u64 %wvd0, {W.TAG};") == 8
    (tmp_path / "k.ptx").write_text(out)
    r = subprocess.run(["ptxas", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "k.cubin").read_bytes()[:4] == b"\x7fELF"


def _run_record_code(lines: list[str], regs: dict[str, int], lane: int) -> int:
    """A tiny interpreter of the instructions ``record_code`` emits (one lane): checks the PTX
    does what ``descriptors`` reads back."""
    r = dict(regs)
    p: dict[str, bool] = {}
    mask = (1 << 64) - 1

    def val(x: str) -> int:
        x = x.strip()
        if x == "%laneid":
            return lane
        return r[x] if x.startswith("%") else int(x, 0) & mask

    for ln in lines:
        m = re.fullmatch(r"(@(!?)(%\w+)\s+)?([\w.]+)\s+(.*);", ln.strip())
        assert m, ln
        if m.group(1) and p[m.group(3)] == bool(m.group(2)):
            continue
        op, args = m.group(4), [a.strip() for a in m.group(5).split(",")]
        head = op.split(".")[0]
        if head == "mov":
            r[args[0]] = val(args[1])
        elif head == "and":
            r[args[0]] = val(args[1]) & val(args[2])
        elif head == "shl":
            r[args[0]] = (val(args[1]) << val(args[2])) & mask
        elif head == "shr":
            r[args[0]] = val(args[1]) >> val(args[2])
        elif head == "selp":
            r[args[0]] = val(args[1]) if p[args[3]] else val(args[2])
        elif head == "setp":
            a, b = val(args[1]), val(args[2])
            p[args[0]] = {"lt": a < b, "ge": a >= b, "eq": a == b}[op.split(".")[1]]
        else:
            raise AssertionError(f"record_code emitted {op}")
    return r["%wvd0"]


@pytest.mark.parametrize("a_reg", [True, False])
def test_record_code_slots_read_back_as_the_descriptors(a_reg):
    da, db = W.encode(18432 + 32, 16384, 1024, 1, 3), W.encode(2048, 8192, 1024, 2)
    lines = W.record_code(None if a_reg else "%rd418", "%rd419")
    slots = np.array([[_run_record_code(lines, {"%rd418": da, "%rd419": db}, ln) for ln in range(32)]], np.uint64)
    assert int(slots.max()) < 1 << 16
    a, b, tagged = W.descriptors(slots)
    assert int(b[0]) == db and bool(tagged[0])
    assert int(a[0]) == (0 if a_reg else da)


# ---------------------------------------------------------------------------- the trace analysis


def _wgmma_trace(desc_pairs, warps=4, blocks=1, ptx_line=None):
    """A trace of one wgmma instruction run by ``warps`` warps per block, once per descriptor pair."""
    from viz.trace import tracefile

    line = ptx_line or ("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1}, %rd418, %rd419, %p3, 1, 1, 0, 1;")
    table = [{"id": 0, "line_no": 10, "ptx": line, "function": "k", "opcode": line.split()[0], "kind": "wgmma",
              "op": "load", "space": "shared", "width": 4, "predicate": "", "address": line.split(None, 1)[1],
              "operand": 0, "file": "k.py", "line": 7}]
    heads, slots = [], []
    for b in range(blocks):
        for w in range(warps):
            for da, db in desc_pairs:
                heads.append([0, b, w, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0])
                s = [0] * 32
                for k in range(4):
                    s[k] = (da >> (16 * k)) & 0xFFFF
                    s[4 + k] = (db >> (16 * k)) & 0xFFFF
                s[8] = W.TAG
                slots.append(s)
    header = {"title": "wgmma", "kernel": "k", "launch": {"block": [32 * warps], "grid": [blocks]},
              "instructions": table, "complete": True}
    return tracefile.from_records(header, np.array(heads, np.uint32).reshape(-1, 8),
                                  np.array(slots, np.uint64).reshape(-1, 32))


def test_trace_counts_gmma_like_the_h200_baseline(tmp_path):
    """Triton's GEMM counted per warpgroup instruction: 4 tensor-pipe warp instructions, 6,144
    bytes, 48 wavefronts, 0 conflicts; the counters are outside the ten."""
    from viz.trace import tracefile
    from viz.trace.analysis import analyze_trace, to_json, to_table

    pairs = [(W.encode(32 * k, 16384, 1024, 1), W.encode(16384 + 2048 * k, 8192, 1024, 1)) for k in range(4)]
    t = tracefile.load(tracefile.save(_wgmma_trace(pairs, blocks=2), tmp_path / "w.wvtrace"))
    an = analyze_trace(t)
    om = an.other_metrics
    assert om[W.INSTRUCTIONS] == 2 * 4 * 4
    assert om[W.BYTES] == 2 * 4 * 6144 and om[W.WAVEFRONTS] == 2 * 4 * 48 and om[W.CONFLICTS] == 0
    assert all(v == 0 for v in an.metrics.values())
    d = to_json(an)["accesses"][0]
    assert d["wgmma"]["warpgroup_instructions"] == 8 and d["bytes_requested"] == 8 * 6144
    assert d["wavefronts_per_instruction"] == 48 and d["bank_conflicts"] == 0
    text = to_table(an)
    assert "m64n128k16 f16, A from shared, 8 warpgroup instructions: 49,152 shared bytes in 384 wavefronts" in text
    assert f"{W.WAVEFRONTS:<58} {384:>14,}" in text


def test_trace_counts_conflicts_of_a_conflicting_layout():
    from viz.trace.analysis import analyze_trace, explain_trace, to_json

    da = W.encode(0, 128, 256, 0)
    db = W.encode(16384, 0, 0, 0)       # every core matrix of B on the same 128 bytes
    want = W.count(W.parse_ptx_line("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1}, %rd1, %rd2, p, "
                                    "1, 1, 0, 1;"), da, db)
    an = analyze_trace(_wgmma_trace([(da, db)]))
    assert an.other_metrics[W.WAVEFRONTS] == want.wavefronts
    assert an.other_metrics[W.CONFLICTS] == want.conflicts
    rows = explain_trace(to_json(an)["accesses"][0])
    names = [r[0] for r in rows]
    assert "wavefronts" in names and "tensor-pipe instructions" in names


def test_partial_warpgroup_and_predicated_off_warps():
    """Reads count on the warpgroup's first warp only; a warp whose predicate is off issues nothing."""
    from viz.trace.analysis import analyze_trace

    da, db = W.encode(0, 16, 1024, 1), W.encode(16384, 8192, 1024, 1)
    t = _wgmma_trace([(da, db)], warps=8)
    t.pred[t.warp >= 4] = 0
    an = analyze_trace(t)
    assert an.other_metrics[W.INSTRUCTIONS] == 4
    assert an.other_metrics[W.BYTES] == 6144 and an.other_metrics[W.WAVEFRONTS] == 48


def test_a_wgmma_entry_whose_ptx_is_not_a_wgmma_counts_nothing():
    from viz.trace.analysis import analyze_trace

    t = _wgmma_trace([(W.encode(0, 16, 1024, 1), W.encode(16384, 8192, 1024, 1))],
                     ptx_line="ld.shared.u32 %r1, [%r2];")
    assert all(v == 0 for v in analyze_trace(t).other_metrics.values())


# ---------------------------------------------------------------------------- SASS


SMALL_PTX = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<8>;
\t.reg .pred %p<2>;
\tld.shared.u32 %r1, [%r2];
\twgmma.fence.sync.aligned;
\twgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r3,%r4,%r5,%r6}, %rd1, %rd2, %p1, 1, 1, 0, 0;
\twgmma.commit_group.sync.aligned;
\twgmma.wait_group.sync.aligned 0;
\tret;
}
"""

SMALL_SASS = """//--------------------- .text.k        --------------------------
.text.k:
\t//## File ".nv_debug_ptx_txt", line 11
        /*0000*/                   LDS R0, [R2] ;
\t//## File ".nv_debug_ptx_txt", line 12
        /*0010*/                   WARPGROUP.ARRIVE ;
\t//## File ".nv_debug_ptx_txt", line 13
        /*0020*/                   HGMMA.64x8x16.F32 R24, gdesc[UR4], R24, gsb0 ;
\t//## File ".nv_debug_ptx_txt", line 15
        /*0030*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0040*/                   EXIT ;
"""


def test_reconcile_matches_a_wgmma_with_its_hgmma():
    from viz.trace.reconcile import parse_sass_lines, reconcile

    accs = [a for f in parse_sass_lines(SMALL_SASS).values() for a in f]
    assert [(a.opcode, a.cls, a.width) for a in accs] == [("LDS", "load", 4), ("HGMMA.64x8x16.F32", "wgmma", 4)]
    instrs = P.parse(SMALL_PTX).instrs
    m = reconcile(SMALL_PTX, instrs, SMALL_SASS)
    w = next(i for i in instrs if i.kind == "wgmma")
    assert m["instructions"][w.id].state == "same" and m["instructions"][w.id].certain
    assert not m["notes"]


# ---------------------------------------------------------------------------- the Triton GEMM, built and traced

LAUNCH = DATA / "triton35_matmul_128x128x64.launch.toml"


@pytest.mark.skipif(not HAVE_PTXAS, reason="needs ptxas")
@pytest.mark.nvcc
def test_triton_gemm_launch_builds_with_its_wgmma_recorded():
    from viz.trace.build import build
    from viz.trace.launch import load_launch

    b = build(load_launch(LAUNCH))
    assert b.arch == "sm_90a"
    w = [i for i in b.instrs if i.kind == "wgmma"]
    assert len(w) == 8 and all(i.file.endswith(".py") and i.line > 0 for i in w)
    assert b.instrumented_cubin[:4] == b"\x7fELF"


def _gpu_ready() -> bool:
    try:
        from helpers import HAVE_NVCC, have_pycuda
    except ImportError:
        return False
    return HAVE_NVCC and have_pycuda()


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_ready(), reason="needs PyCUDA, a GPU and nvcc")
def test_gpu_triton_gemm_gmma_counters_equal_nsight_compute(tmp_path, capsys):
    """On the H200: the trace's gmma counters (and the ten) equal Nsight Compute's on the plain
    kernel; 4,096 tensor-pipe instructions, 6,291,456 bytes, 49,152 wavefronts, 0 conflicts."""
    import json

    from viz.cli import main

    rc = main(["trace", str(LAUNCH), "--validate", "--json", "--out", str(tmp_path / "t.wvtrace")])
    doc = json.loads(capsys.readouterr().out)
    for name, want in ((W.INSTRUCTIONS, 4096), (W.BYTES, 6291456), (W.WAVEFRONTS, 49152), (W.CONFLICTS, 0)):
        assert doc["other_metrics"][name] == want
    bad = [r for r in doc["validation"]["rows"] if not r["match"]]
    assert rc == 0 and not bad, bad
    other = {r["metric"]: r for r in doc["validation"]["other"]}
    for name in W.GMMA_METRICS:
        assert other[name]["match"], other[name]


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([8, 24, 64, 256]), ta=st.booleans(), tb=st.booleans(), areg=st.booleans(),
       pairs=st.lists(st.tuples(desc_fields, desc_fields), min_size=1, max_size=6))
def test_the_vectorised_count_is_the_scalar_one(n, ta, tb, areg, pairs):
    op = W.WgmmaOp(n, 16, "f32", "f16", "f16", not areg, ta and not areg, tb)
    da = np.array([W.encode(*a) for a, _ in pairs], np.uint64)
    db = np.array([W.encode(*b) for _, b in pairs], np.uint64)
    wf, ideal, nbytes = W.count_batch(op, None if areg else da, db)
    for k in range(len(pairs)):
        c = W.count(op, None if areg else int(da[k]), int(db[k]))
        assert (int(wf[k]), ideal, nbytes) == (c.wavefronts, c.ideal, c.bytes)
    for k in range(len(pairs)):
        for name, desc, mn, major in (("B", int(db[k]), n, op.b_major),):
            want = [cm.rows for cm in W.core_matrices(name, W.decode(desc), mn, major)]
            assert W.rows_batch(np.array([desc], np.uint64), mn, major)[0].tolist() == [list(r) for r in want]


def test_a_trace_of_many_distinct_descriptors_is_counted_in_bounded_time():
    """A hostile trace whose every record has other descriptors (1,000 warpgroups) takes the
    vectorised path and counts what the scalar rule counts."""
    from viz.trace.analysis import analyze_trace

    rng = np.random.default_rng(5)
    pairs = [(W.encode(int(s) * 16, int(l) * 16, int(b) * 16, int(w)), W.encode(int(s2) * 16, 16, 1024, 1))
             for s, l, b, w, s2 in rng.integers(0, [4096, 256, 256, 4, 4096], size=(1000, 5))]
    t = _wgmma_trace(pairs, warps=4)
    an = analyze_trace(t)
    op = W.parse_ptx_line("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%r1}, %rd1, %rd2, p, 1, 1, 0, 1;")
    assert an.other_metrics[W.WAVEFRONTS] == sum(W.count(op, a, b).wavefronts for a, b in pairs)
    assert an.other_metrics[W.INSTRUCTIONS] == 4000


# ---------------------------------------------------------------------------- the rule against the H200

PROBE = DATA / "probe" / "probe_wgmma_h200.csv"
PROBE_K = {"f16": 16, "tf32": 8, "e4m3": 32, "s8": 32}
PROBE_ACC = {"f16": "f32", "tf32": "f32", "e4m3": "f32", "s8": "s32"}


def _probe_rows() -> list[dict]:
    import csv

    lines = [ln for ln in PROBE.read_text().splitlines() if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def test_the_probe_fixture_holds_the_whole_sweep():
    rows = _probe_rows()
    assert len(rows) == 371
    groups = {r["group"] for r in rows}
    assert {"base", "loops3", "base-dtype", "B-none-lbo", "B-none-sbo", "B8-none-lbo", "A-none-lbo", "A-none-sbo",
            "B-swz-off", "B-swz-sbo", "B-swz-lbo", "B-swz-base", "A-swz-off", "A-swz-sbo", "A-swz-base"} <= groups
    assert {r["dtype"] for r in rows} == {"f16", "tf32", "e4m3", "s8"}
    assert {int(r["n"]) for r in rows} == {8, 64, 128, 256}
    assert {(r["b_swz"], r["trans_b"]) for r in rows} >= {(str(s), str(t)) for s in range(4) for t in range(2)}


def test_every_probe_is_predicted_exactly():
    """All 371 launches of tools/gpu/probe_wgmma.sh on the H200: the tensor-pipe instructions,
    wavefronts, bank conflicts and bytes of ``..._op_gmma`` are the model's, to the unit."""
    for r in _probe_rows():
        dt = r["dtype"]
        op = W.WgmmaOp(int(r["n"]), PROBE_K[dt], PROBE_ACC[dt], dt, dt, r["a_regs"] == "0", r["trans_a"] == "1",
                       r["trans_b"] == "1")
        c = W.count(op, None if r["a_regs"] == "1" else int(r["desc_a"], 16), int(r["desc_b"], 16))
        loops = int(r["loops"])
        got = tuple(int(r[m]) for m in (W.INSTRUCTIONS, W.WAVEFRONTS, W.CONFLICTS, W.BYTES))
        assert got == (4 * loops, c.wavefronts * loops, c.conflicts * loops, c.bytes * loops), r["launch"]


def test_the_probes_made_to_conflict_read_without_conflicts_and_nothing_else_reads_shared():
    """The H200's finding: every descriptor layout reads each core matrix's 8 rows from 8
    different groups of four banks (rows 16 bytes apart without a swizzle, W apart and XOR-
    permuted with one), so LBO, SBO, start and base offset that put core matrices on the same
    banks, or on the same bytes (LBO 0), cost no conflict: bytes / 128 wavefronts, always."""
    rows = _probe_rows()
    sweeps = [r for r in rows if r["group"] not in ("base", "loops3", "base-dtype")]
    assert len(sweeps) >= 250
    for r in rows:
        assert int(r[W.CONFLICTS]) == 0
        assert int(r[W.WAVEFRONTS]) * 128 == int(r[W.BYTES])
        assert int(r["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]) == 0
        assert int(r["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]) == 0
        assert int(r["l1tex__lsuin_requests_op_gmma.sum"]) == 4 * int(r["loops"])


def test_the_probes_refute_phases_other_than_one_core_matrix():
    """The sweep tells groupings apart: read as halves of two K-adjacent core matrices (rows
    0-3 of both, then 4-7), or as row r of 8 matrices, the same launches would conflict where
    the H200 counted none."""
    def k_pairs(cms):
        by = {(cm.operand, cm.mn, cm.k): cm for cm in cms}
        out = []
        for (o, mn, k), cm in by.items():
            if k == 0 and (o, mn, 1) in by:
                other = by[(o, mn, 1)]
                out += [cm.rows[:4] + other.rows[:4], cm.rows[4:] + other.rows[4:]]
        return out

    def rows_across(cms):
        return [tuple(cms[i + j].rows[r] for j in range(8)) for i in range(0, len(cms) - 7, 8) for r in range(8)]

    for grouping in (k_pairs, rows_across):
        wrong = 0
        for r in _probe_rows():
            dt = r["dtype"]
            op = W.WgmmaOp(int(r["n"]), PROBE_K[dt], PROBE_ACC[dt], dt, dt, r["a_regs"] == "0", r["trans_a"] == "1",
                           r["trans_b"] == "1")
            cms = W.operand_matrices(op, None if r["a_regs"] == "1" else int(r["desc_a"], 16), int(r["desc_b"], 16))
            wf = sum(W.phase_wavefronts(p) for p in grouping(cms)) * int(r["loops"])
            wrong += wf != int(r[W.WAVEFRONTS])
        assert wrong >= 300, grouping.__name__


# ---------------------------------------------------------------------------- scenarios (format 3)

# The validate case of a TMA tile feeding wgmma m64n128k16 (tools/hostile.py starts from it too).
SCENARIO = (Path(__file__).resolve().parents[1] / "tools" / "gpu" / "wgmma_cases" / "wgmma-tma-128b.toml").read_text()
TMA_ACCESS = '[[access]]\nop   = "tma.load"\nat   = "As"\nfrom = "A[blockIdx.x * 64][0]"\n'


def _scenario(tmp_path, block=128, swz="tma:128B", extra="", tma=True):
    p = tmp_path / "w.toml"
    assert SCENARIO.count("block = [128]") == 1 and SCENARIO.count("n   = 128\n") == 1 and TMA_ACCESS in SCENARIO
    text = SCENARIO.replace("block = [128]", f"block = [{block}]").replace('"tma:128B"', f'"{swz}"')
    text = text.replace("n   = 128\n", f"n   = 128\n{extra}\n")
    if not tma:
        text = text.replace(TMA_ACCESS, "")
    p.write_text(text)
    return p


def test_scenario_wgmma_counts_per_warpgroup(tmp_path):
    from viz.engine import analyze
    from viz.scenario import load

    an = analyze(load(_scenario(tmp_path, block=256)))
    m = an.metrics
    # 2 blocks x 2 warpgroups x 4 k steps = 16 warpgroup instructions of m64n128k16
    assert m[W.INSTRUCTIONS] == 64 and m[W.BYTES] == 16 * 6144 and m[W.WAVEFRONTS] == 16 * 48
    assert m[W.CONFLICTS] == 0
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 0
    d = an.per_access()[1]
    assert d.kind_figures("wgmma")["warpgroup_instructions"] == 16 and d.wavefronts_per_instruction == 48
    assert d.kind_figures("wgmma")["shape"] == "m64n128k16" and d.kind_figures("wgmma")["a_major"] == "K"


def test_scenario_wgmma_descriptors_are_the_tiles(tmp_path):
    from viz.scenario import load

    sc = load(_scenario(tmp_path))
    instr = [i for i in sc.instructions() if sc.accesses[i.access].op == "wgmma"][2]     # k = 32
    da, db = W.scenario_descriptors(sc, instr, sc.accesses[1], np.array([0], np.int64), 1)
    a, b = W.decode(da[0][0]), W.decode(db[0][0])
    assert (a.start, a.sbo, a.swizzle_name) == (64, 1024, "128B")
    assert (b.start, b.sbo, b.swizzle_name) == (8192 + 64, 1024, "128B")


@pytest.mark.parametrize("extra,block,swz,words", [
    ("", 96, "tma:128B", "warpgroups of 128 threads"),
    ('dtype = "f64"', 128, "tma:128B", "dtype must be one of"),
    ('a_major = "M"', 128, "tma:128B", 'must be "K" or "MN"'),
    ('dtype = "tf32"\na_major = "MN"', 128, "tma:128B", "only f16 and bf16"),
    ("b_sbo = 1000", 128, "tma:128B", "multiple of 16"),
    ("", 128, "tma:64B", "needs rows of 64 bytes"),
    ("", 128, "xor", "reads no swizzle"),
])
def test_scenario_wgmma_refusals_name_the_key_and_the_fix(tmp_path, extra, block, swz, words):
    from viz.scenario import ScenarioError, load

    with pytest.raises(ScenarioError) as err:
        load(_scenario(tmp_path, block, swz, extra, tma=False))
    assert words in str(err.value)


def test_scenario_wgmma_whose_core_matrices_leave_the_array_is_refused_when_analysed(tmp_path):
    from viz.engine import analyze
    from viz.scenario import ScenarioError, load

    sc = load(_scenario(tmp_path, extra="b_sbo = 4096"))
    with pytest.raises(ScenarioError) as err:
        analyze(sc)
    assert "outside Bs" in str(err.value) and "block (0,0,0)" in str(err.value)


def test_scenario_wgmma_cuda_compiles_for_sm_90a(tmp_path):
    from viz.gpu.codegen import generate
    from viz.scenario import load

    src = generate(load(_scenario(tmp_path))).source
    assert src.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 1
    assert "((unsigned long long)64u << 32)" in src and "((unsigned long long)1u << 62)" in src
    if not HAVE_PTXAS or shutil.which("nvcc") is None:
        pytest.skip("needs nvcc")
    (tmp_path / "k.cu").write_text(src)
    r = subprocess.run(["nvcc", "-arch=sm_90a", "-cubin", "-O3", "-std=c++17", "-o", str(tmp_path / "k.cubin"),
                        str(tmp_path / "k.cu")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]


def test_matrix_command_draws_a_scenario_and_a_trace_wgmma(qapp, tmp_path, capsys):
    # qapp: pictures need a QApplication (a QGuiApplication made first would break later widget tests)
    from viz.cli import main
    from viz.trace import tracefile

    sc = _scenario(tmp_path)
    assert main(["matrix", str(sc), "-i", "3"]) == 0
    out = capsys.readouterr().out
    assert "6,144 bytes in 48 wavefronts (ideal 48, 0 bank conflicts)" in out and "B: start 8224" in out
    assert main(["matrix", str(sc), "-i", "3", "--out", str(tmp_path / "m.png")]) == 0
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"
    pairs = [(W.encode(32, 16384, 1024, 1), W.encode(18432, 8192, 1024, 1))]
    t = tracefile.save(_wgmma_trace(pairs), tmp_path / "w.wvtrace")
    capsys.readouterr()
    assert main(["matrix", str(t)]) == 0
    out = capsys.readouterr().out
    assert "A: start 32, LBO 16384, SBO 1024, swizzle 128B" in out and "B: start 18432, LBO 8192" in out
    assert main(["matrix", str(t), "--out", str(tmp_path / "t.svg")]) == 0


def test_a_frame_of_a_wgmma_shows_its_core_matrices(qapp, tmp_path):
    from viz.cli import main

    assert main(["export", str(_scenario(tmp_path)), "--out", str(tmp_path / "f.png"), "-i", "3"]) == 0
    assert (tmp_path / "f.png").stat().st_size > 0


# ---------------------------------------------------------------------------- validate cases (tools/gpu/wgmma_cases)

CASES = sorted((Path(__file__).resolve().parents[1] / "tools" / "gpu" / "wgmma_cases").glob("*.toml"))


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_validate_cases_expect_what_the_model_counts(path):
    from viz.engine import analyze
    from viz.scenario import load

    sc = load(path)
    assert sc.expected and all(k.endswith(".sum") for k in sc.expected)
    m = analyze(sc).metrics
    assert {k: m.get(k, 0) for k in sc.expected} == dict(sc.expected)


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_ready(), reason="needs PyCUDA, a GPU and nvcc")
def test_gpu_validate_cases_equal_nsight_compute(capsys):
    """On the H200: the generated kernels (inline wgmma for sm_90a) counted by Nsight Compute equal
    the model on every counter, the four gmma ones included (the one-core-matrix case is the
    layout made to collide: 0 conflicts on the GPU as in the model)."""
    import json

    from viz.cli import main

    rc = main(["validate", *map(str, CASES), "--json"])
    results = json.loads(capsys.readouterr().out)
    bad = [(r["label"], x) for r in results for x in r["rows"] if not x["match"]]
    assert rc == 0 and not bad, bad
    for r in results:
        names = {x["metric"] for x in r["rows"]}
        assert set(W.GMMA_METRICS) <= names, r["label"]


def test_a_wgmma_entry_whose_ptx_is_not_a_wgmma_is_explained_not_crashed():
    from viz.trace.analysis import analyze_trace, explain_trace, to_json, to_table

    t = _wgmma_trace([(W.encode(0, 16, 1024, 1), W.encode(16384, 8192, 1024, 1))],
                     ptx_line="wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16 {%f1}, %rd1, %rd2, %r1, 0, p, 1, 1, 0, 0;")
    an = analyze_trace(t)
    d = to_json(an)["accesses"][0]
    assert "wgmma" not in d
    assert any("nothing is counted" in r[2] for r in explain_trace(d))
    assert "nothing is counted" in to_table(an)


@settings(max_examples=200, deadline=None)
@given(n=st.sampled_from([8, 16, 24, 64, 256]), ta=st.booleans(), tb=st.booleans(), a=desc_fields, b=desc_fields)
def test_no_descriptor_makes_a_core_matrix_conflict(n, ta, tb, a, b):
    """docs/memory-model.md: whatever the start, LBO, SBO, swizzle and base offset, a core
    matrix's 8 rows lie on 8 different groups of four banks (the H200 counted 0 conflicts in all
    371 probes), so the rule never counts a conflict."""
    op = W.WgmmaOp(n, 16, "f32", "f16", "f16", True, ta, tb)
    for cm in W.operand_matrices(op, W.encode(*a), W.encode(*b)):
        assert len({(r >> 4) & 7 for r in cm.rows}) == 8
    assert W.count(op, W.encode(*a), W.encode(*b)).conflicts == 0


def test_records_without_the_tag_read_nothing():
    """A record whose lane 8 is not the wgmma tag (a file that lies) counts its warp's
    tensor-pipe instruction but no shared reads."""
    from viz.trace.analysis import analyze_trace

    t = _wgmma_trace([(W.encode(0, 16, 1024, 1), W.encode(16384, 8192, 1024, 1))])
    t.offset[:, 8] = 7
    om = analyze_trace(t).other_metrics
    assert om[W.INSTRUCTIONS] == 4 and om[W.BYTES] == 0 and om[W.WAVEFRONTS] == 0


def test_a_trace_that_recorded_its_wgmma_does_not_call_them_unrecorded():
    """viz.trace.unrecorded lists a carried PTX's wgmma.mma_async lines that the trace has no
    record of (traces made before this kind); the lines of its recorded wgmma are not listed."""
    from viz.trace.unrecorded import unrecorded

    text = TRITON.read_text()
    table = [i.as_dict() for i in P.parse(text).instrs]
    old = {"sources": {"k.ptx": text}, "instructions": [d for d in table if d["kind"] != "wgmma"]}
    assert sum(u["count"] for u in unrecorded(old)) == 8
    new = {"sources": {"k.ptx": text}, "instructions": table}
    assert unrecorded(new) == []
