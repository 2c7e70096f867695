"""Traces as sources for the picture: a recorded warp-level execution becomes a WarpDetail
through the same function as a scenario's warp instruction (``viz.warp.lanes_detail``), and
stepping walks each warp's own dynamic instruction stream."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from test_trace import _scenario_trace  # noqa: E402

from viz.frames import Cursor  # noqa: E402
from viz.trace.analysis import analyze_trace  # noqa: E402
from viz.trace.detail import TraceSource, TraceTimeline  # noqa: E402
from viz.warp import warp_detail  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"


@pytest.mark.parametrize("name", ["transpose-tile-pad", "vector-int4", "char-stride-4", "boundary-n1003",
                                  "shared-stride-2", "random-gather"])
def test_trace_detail_equals_the_scenarios_warp_detail(name):
    """A trace made of a scenario's own addresses draws exactly the scenario's pictures."""
    trace, sc = _scenario_trace(name)
    src = TraceSource(trace)
    instrs = sc.instructions()
    checked = 0
    for b in range(sc.launch.blocks):
        for w in range(sc.launch.warps_per_block):
            # the warp's stream: the scenario's instructions where it has an active lane
            want = [d for d in (warp_detail(sc, i, b, w) for i in instrs) if d.issued]
            assert src.stream_length(b, w) == len(want)
            for k, d in enumerate(want):
                got = src.detail(b, w, k)
                assert got.instruction.number == k and got.instruction_count == len(want)
                assert (got.space, got.op, got.size) == (d.space, d.op, d.size)
                assert got.wavefronts == d.wavefronts and got.active_phases == d.active_phases
                assert got.bank_words == d.bank_words
                assert got.sectors == d.sectors and got.lines == d.lines
                assert got.phases == d.phases
                assert [(ln.active, ln.byte_addr if ln.active else 0, ln.thread, ln.wavefront) for ln in got.lanes] \
                    == [(ln.active, ln.byte_addr if ln.active else 0, ln.thread, ln.wavefront) for ln in d.lanes]
                assert got.block_xyz == d.block_xyz
                checked += 1
    assert checked > 0


COUNTED_SHARED = ("load", "store", "ldmatrix")


@pytest.mark.parametrize("name", ["transpose_pad", "gemm_tiled", "shared_stride--shared-stride-32", "copy_float4",
                                  "ldmatrix_cpasync", "generic_atomic", "copy_guarded", "sgemm_float4"])
def test_shipped_trace_pictures_sum_to_the_analysis(name):
    """Summed over every recorded execution, the pictures' wavefronts and sectors are the
    analysis's (the figures `warpviz analyze` prints)."""
    src = TraceSource.open(TRACES / f"{name}.wvtrace")
    an = analyze_trace(src.trace)
    t = src.trace
    wf = np.zeros(len(an.stats), np.int64)
    sectors = np.zeros(len(an.stats), np.int64)
    requests = np.zeros(len(an.stats), np.int64)
    for row in np.flatnonzero(t.flags == 0):
        d = src.record_detail(int(row))
        sid = int(t.instr[row])
        if d.space == "shared":
            wf[sid] += d.wavefronts
        else:
            sectors[sid] += len(d.sectors)
            requests[sid] += d.issued
    for k, s in enumerate(an.stats):
        if s.instr["space"] == "generic":
            continue           # both parts of one instruction: the picture shows the larger
        if s.instr["kind"] in COUNTED_SHARED or s.instr["space"] == "global":
            assert wf[k] == s.wavefronts, s.instr
        assert sectors[k] == s.sectors and requests[k] == s.requests, s.instr


def test_stepping_walks_each_warps_own_stream():
    src = TraceSource.open(TRACES / "transpose_pad.wvtrace")
    tl = TraceTimeline(src)
    t = src.trace
    rows = src.stream(0, 0)
    assert len(rows) == src.stream_length(0, 0) > 1
    assert (t.block[rows] == 0).all() and (t.warp[rows] == 0).all()
    c = Cursor()
    seen = []
    while True:
        d = tl.detail(c)
        if not seen or seen[-1] != d.instruction.number:
            seen.append(d.instruction.number)
            assert int(t.instr[rows[d.instruction.number]]) == d.access.index
        nxt = tl.step(c, "frame", 1)
        if nxt == c:
            break
        c = nxt
    assert seen == list(range(len(rows)))
    assert tl.frame(c).kind in ("summary", "idle")
    # every warp's stream has its own length; a step to another warp stays inside it
    lengths = {(b, w): src.stream_length(b, w) for b in range(src.blocks) for w in range(src.warps)}
    short = min(lengths, key=lengths.get)
    far = Cursor(instruction=lengths[(0, 0)] - 1, block=0, warp=0)
    moved = tl.step(far, "block", short[0]) if short[0] else tl.step(far, "warp", short[1])
    moved = tl.step(moved, "warp", short[1] - moved.warp) if moved.warp != short[1] else moved
    assert (moved.block, moved.warp) == short
    assert moved.instruction <= max(0, lengths[short] - 1)
    assert tl.detail(moved).instruction_count == lengths[short]


def test_trace_frames_paint_with_the_stream_position_and_all_their_text(qapp):
    from PySide6.QtCore import QRectF

    from viz.render import NullPainter, PaintOptions, paint_frame, theme

    src = TraceSource.open(TRACES / "transpose_pad.wvtrace")
    tl = TraceTimeline(src)
    n = src.stream_length(0, 1)
    p, th = NullPainter(), theme("light", 1.0)
    for k in range(n):
        c = Cursor(instruction=k, block=0, warp=1)
        d = tl.detail(c)
        for f in tl.frames(c):
            L = paint_frame(p, QRectF(0, 0, 1920, 1080), d, f, th, PaintOptions(title=src.title))
            assert not L.dropped
            texts = " ".join(x.text for x in L.texts)
            assert f"step {k + 1} of {n} · instruction " in texts
            assert "transpose_pad.cu:" in texts          # the access is its CUDA source line
            assert min(x.px for x in L.texts) >= 14 - 1e-6


@pytest.mark.parametrize("name", ["transpose_pad", "sgemm_float4", "shared_char--char-stride-4", "ldmatrix_cpasync"])
def test_trace_frames_keep_the_rules_of_the_pictures_text(name, qapp):
    """No text under 14 px at 1080p, none overlapping, none dropped (test_picture_text's
    checker) for every frame of warp 0's stream, with the long device addresses."""
    from PySide6.QtCore import QRectF
    from test_picture_text import Checker

    from viz.render import NullPainter, PaintOptions, paint_frame, theme

    src = TraceSource.open(TRACES / f"{name}.wvtrace")
    tl = TraceTimeline(src)
    p = NullPainter()
    problems = []
    for W, H in [(1280, 720), (1920, 1080)]:
        th = theme("light", 1.0)
        for k in range(src.stream_length(0, 0)):
            c = Cursor(k, 0, 0)
            d = tl.detail(c)
            chk = Checker(H, 1.0, f"{name} #{k + 1} {W}x{H}")
            for f in tl.frames(c):
                chk.check(paint_frame(p, QRectF(0, 0, W, H), d, f, th, PaintOptions(title=src.title)), f)
            problems += chk.problems
    assert not problems, "\n".join(problems[:10])
