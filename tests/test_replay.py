"""Replay a trace under another shared layout (viz.trace.replay) and `warpviz replay` / `suggest`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from viz.assets import traces_dir
from viz.cli import main
from viz.trace import tracefile
from viz.trace.analysis import analyze_trace
from viz.trace.replay import (RESERVED, ReplayError, blocks_per_sm, declared_arrays, parse_layout, recorded_extent,
                              replay, suggest)

LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
ST_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
LD_CONF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
LD_INST = "smsp__inst_executed_op_shared_ld.sum"

SOURCE = """
#define TILE 32
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float tile[TILE][TILE];
    __shared__ float other[32];
    __shared__ __align__(16) float4 vec[32][8];
    // ...
}
"""


def _ins(k: int, op: str, width: int = 4, kind: str | None = None, space: str = "shared") -> dict:
    return {"id": k, "kind": kind or op, "op": op, "space": space, "width": width, "ptx": f"{op} {k}",
            "function": "k", "opcode": f"{'ld' if op == 'load' else 'st'}.shared.f32", "predicate": "",
            "address": "", "file": "k.cu", "line": 10 + k}


def hand_trace(rows_of_lanes: list[tuple[int, str, np.ndarray]], widths: dict[int, int] | None = None,
               shared_bytes: int = 0) -> tracefile.Trace:
    """A one-warp trace: per record (instruction, op, 32 addresses); every lane on."""
    widths = widths or {}
    table, seen = [], {}
    for k, op, _a in rows_of_lanes:
        if k not in seen:
            seen[k] = op
    for k in range(max(seen) + 1):
        table.append(_ins(k, seen.get(k, "load"), widths.get(k, 4)))
    heads = [[k, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0] for k, _op, _a in rows_of_lanes]
    addr = np.array([a for _k, _op, a in rows_of_lanes], np.uint64).reshape(-1, 32)
    header = {"format": "warpviz-trace", "version": 1, "title": "hand", "kernel": "k",
              "launch": {"block": [32, 1, 1], "grid": [1, 1, 1], "shared_bytes": shared_bytes},
              "sources": {"k.cu": SOURCE}, "instructions": table, "complete": True}
    header = tracefile.check_header("hand.wvtrace", header)
    return tracefile.from_records(header, np.array(heads, np.uint32), addr)


def transpose_trace() -> tracefile.Trace:
    """A 32 x 32 float tile written by rows (32 records) and read by columns (32 records)."""
    lane = np.arange(32, dtype=np.int64)
    recs = [(0, "store", RESERVED + (r * 32 + lane) * 4) for r in range(32)]
    recs += [(1, "load", RESERVED + (lane * 32 + c) * 4) for c in range(32)]
    return hand_trace(recs)


def test_declarations_placed_as_ptxas_places_them():
    # nvcc 13.0 -arch=sm_90 places A, c, B, D at 0, 0x400, 0x404, 0x850 after the reserved 1 KiB
    # (read from the SASS of __cvta_generic_to_shared of each): declaration order, each aligned
    src = """extern "C" __global__ void k(unsigned* o){
  __shared__ float A[16][16];
  __shared__ char c[3];
  __shared__ float B[16][17];
  __shared__ __align__(16) float4 D[4];
}"""
    t = transpose_trace()
    t.header["sources"] = {"t.cu": src}
    got = {a.name: (a.start - RESERVED, a.size) for a in declared_arrays(t)}
    assert got == {"A": (0, 1024), "c": (0x400, 3), "B": (0x404, 1088), "D": (0x850, 64)}


def test_transpose_column_reads_32_way_then_one_wavefront_each():
    t = transpose_trace()
    an = analyze_trace(t)
    assert an.metrics[LD_WF] == 32 * 32 and an.metrics[ST_WF] == 32
    expected = {"pad:1": 32, "xor": 32, "xor:31": 32, "swizzle:5,0,5": 32, "diag": 32, "expr:(c + r) % 32": 32,
                "expr:(c * 5 + r) % 32": 32, "bitrev": 1024, "xor:0": 1024, "pad:0": 1024, "pad:2": 64,
                "xor:1": 512, "xor:3": 256, "swizzle:3,0,5": 128}
    for layout, wf in expected.items():
        rp = replay(t, "tile", (32, 32), None, layout)
        m = rp.analysis.metrics
        assert (layout, m[LD_WF]) == (layout, wf)
        assert m[ST_WF] == 32                 # rows stay in distinct banks under every one of them
        assert m[LD_CONF] == wf - 32


def test_pad_moves_the_arrays_after_it_and_costs_shared_memory():
    lane = np.arange(32, dtype=np.int64)
    other = RESERVED + 4096                  # `other` follows the 32 x 32 tile
    t = hand_trace([(0, "load", RESERVED + lane * 128), (1, "load", other + lane * 4)])
    rp = replay(t, "tile", None, None, "pad:1")
    assert rp.moved == [{"name": "other", "from": other, "to": other + 128},
                        {"name": "vec", "from": other + 128, "to": other + 256}]
    rows1 = np.nonzero(rp.trace.instr == 1)[0]
    assert rp.trace.addresses(rows1)[0].tolist() == (other + 128 + lane * 4).tolist()
    assert rp.trace.addresses(np.nonzero(rp.trace.instr == 0)[0])[0].tolist() == (RESERVED + lane * 132).tolist()
    assert (rp.shared_before, rp.shared_after) == (4096 + 128 + 4096, 4096 + 128 + 128 + 4096)
    # 228 KiB per SM, 1 KiB reserved per block: 8,320 -> 25 blocks by shared memory; 8,448 -> 24
    assert rp.occupancy_before["by_shared"] == 228 * 1024 // (8320 + 1024)
    assert rp.occupancy_after["by_shared"] == 228 * 1024 // (8448 + 1024)


def test_blocks_per_sm_limits():
    assert blocks_per_sm(0, 32)["blocks"] == 32
    assert blocks_per_sm(100 * 1024, 256) == {**blocks_per_sm(100 * 1024, 256), "blocks": 2, "limit": "shared memory"}
    assert blocks_per_sm(228 * 1024, 32)["blocks"] == 0      # over the 227 KiB a block may have


def test_vector_accesses_the_layout_splits_or_misaligns():
    # float4 reads of `vec` (32 rows x 8 float4 = 32 floats a row), lane l reads row l, column 0..3
    lane = np.arange(32, dtype=np.int64)
    start = RESERVED + 4096 + 128
    t = hand_trace([(0, "load", start + lane * 128)], widths={0: 16})
    assert replay(t, "vec", (32, 32), 4, "pad:4").split_lanes == 0
    assert replay(t, "vec", (32, 32), 4, "pad:2").splits[0]["into_bytes"] == 8     # 136-byte rows keep float2s
    # pad:1 puts rows off 16-byte boundaries (132 r bytes); c ^ r keeps a float4's 4 words together
    # only where r % 4 == 0: the compiler cannot emit the float4 and loads 4 floats instead, each
    # lane's row on another bank: 4 instructions of 1 wavefront where the float4 took 32
    for layout in ("pad:1", "xor"):
        rp = replay(t, "vec", (32, 32), 4, layout)
        assert rp.split_lanes == 32
        assert rp.splits == [{"instruction": 0, "line": 10, "bytes": 16, "into_bytes": 4, "parts": 4,
                              "executions": 1, "executions_after": 4, "lanes": 32}]
        assert rp.analysis.metrics[LD_WF] == 4 and rp.analysis.metrics[LD_INST] == 4
        assert rp.trace.instructions[0]["width"] == 4 and t.instructions[0]["width"] == 16
    assert replay(t, "vec", (32, 32), 4, "swizzle:3,2,3").split_lanes == 0    # M = 2 keeps 4 words together
    # unswizzled: 4 phases of 8 lanes all on banks 0-3: 32 wavefronts; Swizzle<3,2,3> puts rows 0-7 of a
    # phase on 8 different 16-byte chunks (1 each); Swizzle<3,2,5> takes row bits 2-4: 4-way
    assert analyze_trace(t).metrics[LD_WF] == 32
    assert replay(t, "vec", (32, 32), 4, "swizzle:3,2,3").analysis.metrics[LD_WF] == 4
    assert replay(t, "vec", (32, 32), 4, "swizzle:3,2,5").analysis.metrics[LD_WF] == 16


def test_layout_errors_name_the_problem():
    with pytest.raises(ReplayError, match="not a bijection"):
        parse_layout("expr:c / 2", 32, 32)
    with pytest.raises(ReplayError, match="power of two"):
        parse_layout("xor", 32, 33)
    with pytest.raises(ReplayError, match="outside"):
        parse_layout("expr:c + 1", 4, 4)
    with pytest.raises(ReplayError, match="unknown layout"):
        parse_layout("rotate", 4, 4)
    with pytest.raises(ReplayError, match="S>=B"):
        parse_layout("swizzle:5,0,2", 32, 32)
    with pytest.raises(ReplayError, match="no __shared__ array `nope`"):
        replay(transpose_trace(), "nope", (32, 32), None, "pad:1")
    with pytest.raises(ReplayError, match="more than the 4,096 bytes"):
        replay(transpose_trace(), "tile", (64, 32), None, "pad:1")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=st.one_of(st.integers(0, 31).map(lambda m: f"xor:{m}"), st.integers(0, 9).map(lambda n: f"pad:{n}"),
                        st.tuples(st.integers(1, 5), st.integers(0, 2), st.integers(5, 7)).map(
                            lambda t: f"swizzle:{t[0]},{t[1]},{t[2]}"),
                        st.sampled_from(["xor", "diag", "bitrev", "expr:(c * 3 + r) % 32"])),
       seed=st.integers(0, 2**31))
def test_a_bijective_layout_keeps_each_records_distinct_addresses(layout, seed):
    rng = np.random.default_rng(seed)
    recs = [(k % 3, "load", RESERVED + rng.integers(0, 1024, 32) * 4) for k in range(6)]
    t = hand_trace(recs)
    try:
        rp = replay(t, "tile", (32, 32), None, layout)
    except ReplayError as err:
        assert "inside the array" in str(err) or "bijection" in str(err)
        return
    before = t.addresses()
    after = rp.trace.addresses()
    for i in range(t.records):
        assert len(set(before[i].tolist())) == len(set(after[i].tolist()))
    assert rp.trace.lane_accesses() == t.lane_accesses()
    assert all(RESERVED <= a < RESERVED + rp.layout.elements * 4 for a in after.reshape(-1).tolist())


def _shipped():
    return sorted(traces_dir().glob("*.wvtrace"))


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: p.stem)
def test_identity_replay_reproduces_analyze_on_every_shipped_trace(path):
    t = tracefile.load(path)
    lo, hi = recorded_extent(t)
    if hi == lo:
        pytest.skip("no shared traffic")
    n = -(-(hi - lo) // 4)
    from viz.kinds.registry import trace_kind
    from viz.trace.analysis import to_json
    from viz.trace.replay import OPERAND_REPLAY

    # every kind whose records hold operands replays them (TraceForm.replay: TMA boxes, wgmma descriptors)
    operands = sorted({i["kind"] for k, i in enumerate(t.instructions)
                       if (f := trace_kind(i.get("kind"))) is not None and f.slots == "operands"
                       and f.replay is None and i["kind"] not in OPERAND_REPLAY and np.any(t.instr == k)})
    assert operands == []
    rp = replay(t, None, (1, n), 4, "pad:0", (lo, lo + 4 * n))
    an = analyze_trace(t)
    assert rp.analysis.metrics == an.metrics
    assert rp.analysis.other_metrics == an.other_metrics
    assert [s.wavefronts for s in rp.analysis.stats] == [s.wavefronts for s in an.stats]
    assert to_json(rp.analysis)["accesses"] == to_json(an)["accesses"]


# The real kernels of kernels/transpose.cu and kernels/gemm.cu with the layout changed in the
# source, traced on an H100 with Nsight Compute's figures in their headers: the replay of the
# unchanged kernel's trace equals both on every shared-memory counter.
REAL = [("transpose_tile_unpadded", "tile", (32, 32), "pad:1", "transpose_tile_pad1"),
        ("transpose_tile_unpadded", "tile", (32, 32), "xor", "transpose_tile_xor"),
        ("transpose_tile_unpadded", "tile", (32, 32), "diag", "transpose_tile_diagonal"),
        ("transpose_tile_unpadded", "tile", (32, 32), "bitrev", "transpose_tile_bitrev"),
        ("transpose_tile_unpadded", "tile", (32, 32), "swizzle:5,0,5", "transpose_tile_cute"),
        ("transpose_tile_unpadded", "tile", (32, 32), "expr:(c * 5 + r) % 32", "transpose_tile_lcg"),
        ("transpose_tile_unpadded", "tile", (32, 32), "expr:c ^ rev(r % 32, 5)", "transpose_tile_bitrev_xor"),
        ("gemm_nt_tile", "Bs", None, "xor", "gemm_nt_swizzle_xor"),
        ("gemm_nt_tile", "Bs", None, "expr:(c + r) & 31", "gemm_nt_swizzle_add")]


@pytest.mark.parametrize("name,array,shape,layout,real", REAL, ids=lambda x: str(x))
def test_replay_equals_the_changed_kernel_and_nsight_compute(name, array, shape, layout, real):
    t = tracefile.load(traces_dir() / f"{name}.wvtrace")
    rp = replay(t, array, shape, None, layout)
    changed = tracefile.load(traces_dir() / f"{real}.wvtrace")
    want = analyze_trace(changed).metrics
    ncu = changed.header["ncu"]
    shared = [k for k in want if "shared" in k]
    assert {k: rp.analysis.metrics[k] for k in shared} == {k: want[k] for k in shared}
    assert {k: rp.analysis.metrics[k] for k in shared} == {k: int(ncu[k]) for k in shared}


# The replay proof on the H200 (tools/gpu/replay_proof.py, tests/data/replay/README.md): the kernels
# of kernels/replay/replay_proof.cu as written and as changed, each validated equal to Nsight Compute.
# sgemm_nt reads `Bs` as float4 (ptxas fuses 4 scalar loads into one LDS.128); under pad:1 or xor the
# compiler cannot keep them and runs 4 scalar loads: the replay counts them so.
PROOF = [("sgemm_nt", "Bs", None, "pad:1", "sgemm_nt_pad1", 2),
         ("sgemm_nt", "Bs", None, "xor", "sgemm_nt_xor", 2),
         ("ldmatrix_tile", "tile", (64, 64), "swizzle:3,3,3", "ldmatrix_tile_swz", 0)]
SHARED = ["smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum", LD_WF, ST_WF, LD_CONF,
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]


@pytest.mark.parametrize("name,array,shape,layout,real,splits", PROOF, ids=lambda x: str(x))
def test_replay_equals_the_changed_kernel_on_the_h200(name, array, shape, layout, real, splits):
    from pathlib import Path

    data = Path(__file__).parent / "data" / "replay"
    t = tracefile.load(data / f"{name}.wvtrace")
    rp = replay(t, array, shape, None, layout)
    want = analyze_trace(tracefile.load(data / f"{real}.wvtrace")).metrics
    assert {k: rp.analysis.metrics[k] for k in SHARED} == {k: want[k] for k in SHARED}
    assert len(rp.splits) == splits
    if splits:     # 2 float4 reads, 16,384 times each -> 4 scalar loads each
        assert [(s["bytes"], s["into_bytes"], s["executions"], s["executions_after"]) for s in rp.splits] == \
            [(16, 4, 16384, 65536)] * 2
        assert rp.analysis.metrics[LD_INST] - rp.before.metrics[LD_INST] == 3 * 32768
        assert rp.analysis.metrics[LD_CONF] == 0 and rp.before.metrics[LD_CONF] == 917504


def test_suggest_finds_the_tile_and_a_layout_without_conflicts():
    t = tracefile.load(traces_dir() / "transpose_tile_unpadded.wvtrace")
    doc = suggest(t, predict=None)
    assert doc["hot"][0]["array"] == "tile" and doc["hot"][0]["conflicts"] == 63488
    cands = doc["arrays"][0]["candidates"]
    assert cands[0]["conflicts"] == 0 and cands[0]["extra_shared_bytes"] == 0
    pad = next(c for c in cands if c["layout"].startswith("pad:"))
    assert pad["layout"] == "pad:1" and pad["extra_shared_bytes"] == 128 and pad["conflicts"] == 0
    assert pad["source"]["cuda"]["index"] == "tile[r * 33 + c]"


# ---------------------------------------------------------------------------- the command line

def test_cli_replay_json_and_text(capsys):
    assert main(["replay", "transpose_tile_unpadded", "--array", "tile", "--shape", "32,32", "--layout", "pad:1",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["metrics"][LD_WF] == 2048 and doc["replay"]["shared_wavefronts"] == {"before": 67584, "after": 4096}
    assert doc["replay"]["shared_bytes_per_block"] == {"before": 4096, "after": 4224}
    assert set(doc) >= {"metrics", "other_metrics", "accesses"}
    assert main(["replay", "transpose_tile_unpadded", "--array", "tile", "--shape", "32,32", "--layout", "xor"]) == 0
    out = capsys.readouterr().out
    assert "shared wavefronts: 67,584 -> 4,096" in out


@pytest.mark.parametrize("argv,needle", [
    (["--array", "tile", "--shape", "32", "--layout", "pad:1"], "ROWS,COLS"),
    (["--array", "tile", "--shape", "0,32", "--layout", "pad:1"], "out of range"),
    (["--array", "tile", "--shape", "32,32", "--layout", "pad:x"], "not a whole number"),
    (["--array", "tile", "--shape", "32,32", "--layout", "pad:-1"], "out of range"),
    (["--array", "tile", "--shape", "32,32", "--layout", "spiral"], "unknown layout"),
    (["--array", "nope", "--shape", "32,32", "--layout", "pad:1"], "no __shared__ array"),
    (["--array", "tile", "--shape", "32,32", "--elem-bytes", "0", "--layout", "pad:1"], "out of range"),
    (["--range", "9:3", "--shape", "32,32", "--layout", "pad:1"], "START must be below END"),
    (["--range", "a:b", "--shape", "32,32", "--layout", "pad:1"], "START:END"),
    (["--array", "tile", "--shape", "64,64", "--layout", "pad:1"], "more than the 4,096 bytes"),
    (["--array", "tile", "--shape", "32,32", "--layout", "expr:c +"], "expr"),
])
def test_cli_replay_refuses_bad_options_with_exit_2(argv, needle, capsys):
    assert main(["replay", "transpose_tile_unpadded", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_cli_refuses_a_missing_or_bad_trace(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "no.wvtrace"), "--array", "t", "--layout", "pad:1"]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.wvtrace"
    bad.write_bytes(b"PK not a zip")
    assert main(["suggest", str(bad)]) == 2
    assert "not a warpviz trace" in capsys.readouterr().err
    assert main(["suggest", "transpose_tile_unpadded", "--top", "0"]) == 2


def test_cli_suggest(capsys):
    assert main(["suggest", "transpose_tile_unpadded", "--no-predict", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["arrays"][0]["array"] == "tile"
    assert main(["suggest", "transpose_pad", "--no-predict"]) == 0
    assert "nothing to suggest" in capsys.readouterr().out


# ---------------------------------------------------------------------------- Python

def test_api_replay_and_suggest(tmp_path):
    from viz import api

    t = api.open_trace("transpose_tile_unpadded")
    r = t.replay("tile", "pad:1", shape=(32, 32))
    assert r.analysis().metrics[LD_WF] == 2048
    assert r.replayed["shared_bytes_per_block"] == {"before": 4096, "after": 4224}
    with pytest.raises(ReplayError, match="shape must be"):
        t.replay("tile", "pad:1", shape=32)
    with pytest.raises(ReplayError, match="elem_bytes"):
        t.replay("tile", "pad:1", shape=(32, 32), elem_bytes=0)
    with pytest.raises(ReplayError, match="unknown layout"):
        t.replay("tile", "spin", shape=(32, 32))
    # the replayed trace is a trace like any other: saved, loaded (every check of `load`), analysed
    saved = r.save(tmp_path / "replayed.wvtrace")
    again = api.open_trace(saved)
    assert again.analysis().metrics == r.analysis().metrics and "ncu" not in again.header
    doc = t.suggest(predict=False, top=2)
    assert len(doc["arrays"][0]["candidates"]) == 2 and doc["arrays"][0]["candidates"][0]["conflicts"] == 0


def test_arrays_of_templates_macros_and_helpers_are_found():
    # a template kernel: its parameters bound to the instantiation the trace names
    t = tracefile.load(traces_dir() / "tiles_transpose_padded.wvtrace")
    assert [(a.name, a.type, a.dims, a.start) for a in declared_arrays(t)] == [("tile", "float", (32, 33), RESERVED)]
    # arrays declared in a __device__ template the kernel calls
    t = tracefile.load(traces_dir() / "gemm_nt_tile.wvtrace")
    assert [(a.name, a.dims, a.start) for a in declared_arrays(t)] == [("As", (32, 32), RESERVED),
                                                                       ("Bs", (32, 32), RESERVED + 4096)]
    # #ifdef branches follow the launch file's defines
    t = tracefile.load(traces_dir() / "sgemm_float4_scalar_sts.wvtrace")
    assert [(a.name, a.align) for a in declared_arrays(t)] == [("As", 4), ("Bs", 16)]
    t = tracefile.load(traces_dir() / "sgemm_float4.wvtrace")
    assert [(a.name, a.align) for a in declared_arrays(t)] == [("As", 16), ("Bs", 16)]
