"""Replay of records that name shared memory by their operands: a wgmma's core
matrices and a TMA box, through their forms' ``replay`` hook (``viz.kinds.registry.TraceForm``).

Exact counts on hand-built records (worked out by hand in each test's comments), and on the
shipped traces of Triton's TMA copy and wgmma matmul: the identity layout reproduces
``analyze`` exactly (tests/test_replay.py checks every shipped trace), and a padded layout of
the matmul's A tile gives the wavefronts an independent count of the re-mapped core matrices
gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from viz.kinds import tma_copy as T
from viz.kinds import wgmma as W
from viz.trace import tracefile
from viz.trace.analysis import analyze_trace, explain_trace, to_json, to_table
from viz.trace.replay import ReplayError, replay
from viz.trace.tracefile import shipped_dir as traces_dir

FULL = 0xFFFFFFFF
WGMMA = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, p, 1, 1, 0, 0;"
A_AT, B_AT = 2048, 8192


def _header(table: list[dict], shared_bytes: int = 0) -> dict:
    h = {"format": "warpviz-trace", "version": 1, "title": "hand", "kernel": "k",
         "launch": {"block": [128, 1, 1], "grid": [1, 1, 1], "shared_bytes": shared_bytes},
         "instructions": table, "complete": True}
    return tracefile.check_header("hand.wvtrace", h)


def _wgmma_trace() -> tracefile.Trace:
    """One warpgroup's m64n8k16 wgmma: A (64 x 16 f16, K-major, no swizzle) at 2048, its 16
    core matrices 128 contiguous bytes each (LBO 128, SBO 256); B (8 x 16 f16) at 8192, its 2
    core matrices at 8192 and 8320 (LBO 128): rows of 16 bytes, one after the other."""
    table = [{"id": 0, "line_no": 10, "ptx": WGMMA, "function": "k", "opcode": WGMMA.split()[0], "kind": "wgmma",
              "op": "load", "space": "shared", "width": 4, "predicate": "", "address": WGMMA.split(None, 1)[1],
              "operand": 0, "file": "k.cu", "line": 7}]
    da, db = W.encode(A_AT, 128, 256, 0), W.encode(B_AT, 128, 256, 0)
    heads, slots = [], []
    for w in range(4):
        heads.append([0, 0, w, FULL, FULL, 0, 0, 0])
        s = [0] * 32
        for k in range(4):
            s[k] = (da >> (16 * k)) & 0xFFFF
            s[4 + k] = (db >> (16 * k)) & 0xFFFF
        s[8] = W.TAG
        slots.append(s)
    return tracefile.from_records(_header(table, 16384), np.array(heads, np.uint32), np.array(slots, np.uint64))


def test_wgmma_replay_counts_the_core_matrices_at_their_new_places():
    t = _wgmma_trace()
    an = analyze_trace(t)
    # as recorded: 18 core matrices (16 of A, 2 of B), each 8 rows on the 8 groups of four banks: 1 wavefront
    assert an.other_metrics[W.WAVEFRONTS] == 18 and an.other_metrics[W.CONFLICTS] == 0
    assert an.other_metrics[W.BYTES] == 18 * 128 and an.other_metrics[W.INSTRUCTIONS] == 4
    # B as 16 rows x 8 halves; pad:8 gives each row 16 more bytes: row k at 8192 + 32 k, so a core matrix's
    # rows fall on groups 0, 2, 4, 6, 0, 2, 4, 6: 2 wavefronts each, 4 for B; A does not move
    rp = replay(t, None, (16, 8), 2, "pad:8", (B_AT, B_AT + 256))
    om = rp.analysis.other_metrics
    assert om[W.WAVEFRONTS] == 16 + 4 and om[W.CONFLICTS] == 2
    assert om[W.BYTES] == 18 * 128 and om[W.INSTRUCTIONS] == 4
    # pad:16 (48-byte pitch): rows k at chunk 512 + 3 k, on groups 0, 3, 6, 1, 4, 7, 2, 5: conflict-free again
    rp = replay(t, None, (16, 8), 2, "pad:16", (B_AT, B_AT + 256))
    assert rp.analysis.other_metrics[W.WAVEFRONTS] == 18 and rp.analysis.other_metrics[W.CONFLICTS] == 0
    # xor permutes the halves inside each 16-byte row: the same words, the same banks
    rp = replay(t, None, (16, 8), 2, "xor", (B_AT, B_AT + 256))
    assert rp.analysis.other_metrics[W.WAVEFRONTS] == 18
    # A as 64 rows x 16 halves (32 bytes) with pad:8: a 48-byte pitch. Core matrix (i, j)'s row r was at
    # 2048 + 256 i + 128 j + 16 r: tile row 8 i + 4 j + r // 2, its half r % 2; now at
    # 2048 + 48 (8 i + 4 j + r // 2) + 16 (r % 2): chunk groups 24 i + 12 j + {0, 1, 3, 4, 6, 7, 9, 10} mod 8,
    # one group twice: 2 wavefronts for each of A's 16 core matrices; B, moved by A's 1,024 bytes of
    # growth (a multiple of 128), keeps its 1 each
    rp = replay(t, None, (64, 16), 2, "pad:8", (A_AT, A_AT + 2048))
    want = 0
    for i in range(8):
        for j in range(2):
            groups = [((A_AT + 48 * (8 * i + 4 * j + r // 2) + 16 * (r % 2)) >> 4) & 7 for r in range(8)]
            want += max(groups.count(g) for g in set(groups))
    assert want == 32
    assert rp.analysis.other_metrics[W.WAVEFRONTS] == 32 + 2 and rp.analysis.other_metrics[W.CONFLICTS] == 16


def test_wgmma_replay_of_the_identity_is_analyze():
    t = _wgmma_trace()
    rp = replay(t, None, (16, 8), 2, "pad:0", (B_AT, B_AT + 256))
    assert to_json(rp.analysis)["accesses"] == to_json(analyze_trace(t))["accesses"]


def _tma_trace(swizzle: int = 0) -> tracefile.Trace:
    """One TMA load of an 8 x 32 f32 box (8 rows of 128 bytes) to shared 8192, issued by lane 0."""
    ship = tracefile.load(traces_dir() / "tma_copy_triton.wvtrace")
    ins = dict(next(i for i in ship.instructions if i["kind"] == "tma" and i["op"] == "load"), id=0)
    tm = T.TensorMap(address=1 << 20, dtype=7, rank=2, dims=(1024, 1024), strides=(4096,), box=(32, 8),
                     estrides=(1, 1), swizzle=swizzle)
    w = np.zeros(64, np.uint32)
    w[:32] = np.frombuffer(T.encode_map(tm), np.uint32)
    w[37] = 8192                         # SLOT_SHARED's high word
    w[2 * T.SLOT_SIZE + 1] = 1           # issuers
    w[2 * T.SLOT_LANE] = 0
    w[2 * T.SLOT_LANE + 1] = 1
    heads = [[0, 0, 0, FULL, 1, 1, 0, T.RECORD_FLAG]]
    return tracefile.check(tracefile.from_records(_header([ins], 16384), np.array(heads, np.uint32),
                                                  w.view(np.uint64)[None, :].copy()))


def test_tma_replay_moves_the_boxs_chunks_and_says_which_the_tma_cannot_write():
    t = _tma_trace()
    an = analyze_trace(t)
    d0 = to_json(an)["accesses"][0]
    assert d0["tma"]["box_bytes"] == 1024 and "replayed_shared" not in d0["tma"]
    # pad:1 on 8 rows x 32 floats: row r moves 4 r bytes. 64 chunks; rows 1-7 move (56); rows 4's start
    # (8192 + 4 x 132 = 8720) is on a 16-byte boundary, rows 1, 2, 3, 5, 6, 7 are not: 48 chunks not whole
    rp = replay(t, None, (8, 32), 4, "pad:1", (8192, 8192 + 1024))
    d = to_json(rp.analysis)["accesses"][0]
    assert d["tma"]["replayed_shared"] == {"chunks": 64, "moved": 56, "not_whole": 48}
    # the global side and the counters do not change
    assert {k: v for k, v in d["tma"].items() if k != "replayed_shared"} == d0["tma"]
    assert rp.analysis.other_metrics == an.other_metrics
    assert "replayed: 56 of 64 16-byte chunks in shared memory moved, 48 of them" in to_table(rp.analysis)
    assert "chunks not whole" in [r[0] for r in explain_trace(d)]
    # pad:4 (16 bytes a row): every chunk of rows 1-7 moves, all stay whole
    rp = replay(t, None, (8, 32), 4, "pad:4", (8192, 8192 + 1024))
    assert to_json(rp.analysis)["accesses"][0]["tma"]["replayed_shared"] == {"chunks": 64, "moved": 56,
                                                                          "not_whole": 0}
    # the identity: analyze's figures exactly, no replayed entry
    rp = replay(t, None, (8, 32), 4, "pad:0", (8192, 8192 + 1024))
    assert to_json(rp.analysis)["accesses"] == to_json(an)["accesses"]


def test_tma_replay_follows_the_maps_swizzle():
    """With the 128-byte swizzle the box's chunks are where the map puts them (row r's chunk c
    at c ^ r); xor:7 on 16-byte elements then moves element c of row r to c ^ r: every chunk of
    rows 1-7 moves (56 of 64), and all stay whole (an element is a chunk)."""
    t = _tma_trace(swizzle=3)
    rp = replay(t, None, (8, 8), 16, "xor:7", (8192, 8192 + 1024))
    assert to_json(rp.analysis)["accesses"][0]["tma"]["replayed_shared"] == {"chunks": 64, "moved": 56,
                                                                          "not_whole": 0}


def test_shipped_matmul_replayed_with_a_padded_a_tile():
    """triton_wgmma_matmul: A's first stage (1024..9216, 64 x 64 halves, 128-byte swizzle) padded
    by 8 halves a row. Expected: each lead record's core matrices, their rows re-mapped by hand
    (rows of A's stage move 16 bytes per 128-byte row, everything after it by the 1,024 bytes it
    grew) and counted by the chunk rule."""
    t = tracefile.load(traces_dir() / "triton_wgmma_matmul.wvtrace")
    rp = replay(t, None, (64, 64), 2, "pad:8", (1024, 9216))

    def moved(a: int) -> int:
        if 1024 <= a < 9216:
            return a + 16 * ((a - 1024) // 128)
        return a + 1024 if a >= 9216 else a

    want = 0
    for k, ins in enumerate(t.instructions):
        if ins["kind"] != "wgmma":
            continue
        op = W.op_of(ins)
        rows = np.flatnonzero(t.instr == k)
        slots = t.addresses(rows)
        da, db, tagged = W.descriptors(slots)
        lead = (t.pred[rows] != 0) & (t.warp[rows] % 4 == 0) & tagged
        for a, b in zip(da[lead], db[lead]):
            for cm in W.operand_matrices(op, int(a), int(b)):
                chunks = {moved(r) >> 4 for r in cm.rows}
                want += max(sum(1 for c in chunks if c & 7 == g) for g in range(8))
    assert rp.analysis.other_metrics[W.WAVEFRONTS] == want
    before = analyze_trace(t).other_metrics
    assert want > before[W.WAVEFRONTS]                      # the padding breaks the swizzle: conflicts
    assert rp.analysis.other_metrics[W.CONFLICTS] == want - before[W.WAVEFRONTS] + before[W.CONFLICTS]


def test_a_kind_with_operands_and_no_replay_is_still_refused(monkeypatch):
    from dataclasses import replace as dc_replace

    from viz.kinds import registry

    t = _wgmma_trace()
    forms = [dc_replace(f, replay=None) if f.kind == "wgmma" else f for f in registry._FORMS]
    monkeypatch.setattr(registry, "_FORMS", forms)
    with pytest.raises(ReplayError, match="hold operands"):
        replay(t, None, (16, 8), 2, "pad:8", (B_AT, B_AT + 256))
