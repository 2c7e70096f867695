"""TMA tensor copies and bulk copies (viz/kinds/tma_copy.py): the PTX forms and
operands, the recording block (assembled by ptxas for sm_90a), the expansion of a box into
global sectors and lines and swizzled shared bytes, and the records' counting.

The PTX fixtures (tests/data/ptx/tma/) were made here, without a GPU:
  triton_copy2d_tma_st.ptx, triton_load3d.ptx, triton_matmul_tma.ptx:
      Triton 3.5.0 (/work/tvenv), ``python tools/gpu/probe_tma_kernels.py ptx OUT
      copy2d_dev_st load3d matmul_tma`` (sm_90a, device-side tensor descriptors);
  nvcc_tma_cases.ptx: ``nvcc -arch=sm_90a -O2 -ptx tools/gpu/probe_tma_cases.cu`` (CUDA 13.0):
      tensor loads 1-D..5-D and stores / reductions 1-D..3-D through a __grid_constant__
      CUtensorMap, bulk copies both ways, a bulk reduction and a tensor prefetch;
  nvcc_cutlass_style.ptx: ``nvcc -arch=sm_90a -ptx nvcc_cutlass_style.cu`` (CUDA 13.0): CUTLASS's
      way of issuing a TMA (inline asm on one line, ``elect.sync`` into a predicate declared in
      the asm's own braces, an L2 cache policy) and a multicast load with a 16-bit CTA mask;
  triton_attention_fwd.ptx: the attention forward of tools/gpu/probe_tma_kernels.py as Triton
      3.6.0 compiled it on the H200 (device-results of tools/gpu/probe_tma.sh); its SASS
      (tests/data/sass/triton_attention_fwd.gp.sass / .memory.sass): ptxas 13.0 here, listed with
      nvdisasm -gp -c and cuobjdump -sass (12.8, Triton 3.5's wheel).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from viz.kinds import tma_copy as T
from viz.trace.ptx import instrument_full, parse

DATA = Path(__file__).parent / "data" / "ptx" / "tma"
FIXTURES = sorted(p for p in DATA.glob("*.ptx") if "cp.async.bulk" in p.read_text())


# ---------------------------------------------------------------------------- forms and operands

@pytest.mark.parametrize("opcode, kind, direction, rank, extra", [
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", "tma", "load", 2, {}),
    ("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint",
     "tma", "load", 5, {"multicast": True, "cache_hint": True}),
    ("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "tma", "store", 2, {}),
    ("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group", "tma", "reduce", 3, {"redop": "add"}),
    ("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes", "tma", "load", 4,
     {"mode": "im2col"}),
    ("cp.async.bulk.prefetch.tensor.2d.L2.global", "tma", "prefetch", 2, {}),
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", "bulk", "load", 0, {}),
    ("cp.async.bulk.global.shared::cta.bulk_group", "bulk", "store", 0, {}),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32", "bulk", "reduce", 0, {"dtype": "u32"}),
    ("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes", "bulk", "copy", 0, {}),
    ("cp.async.bulk.prefetch.L2.global", "bulk", "prefetch", 0, {}),
])
def test_forms(opcode, kind, direction, rank, extra):
    f = T.match(opcode)
    assert (f.kind, f.direction, f.rank) == (kind, direction, rank)
    for k, v in extra.items():
        assert getattr(f, k) == v
    assert f.recorded_fully == (f.kind == "bulk" or f.mode == "tile")


@pytest.mark.parametrize("opcode", ["cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read",
                                    "cp.async.bulk.wait_group", "cp.async.ca.shared.global", "ld.global.f32",
                                    "cp.async.mbarrier.arrive.b64", "tensormap.replace.tile.rank.shared::cta.b1024.b32"])
def test_not_forms(opcode):
    assert T.match(opcode) is None


def test_operands_of_a_load_with_multicast_and_policy():
    f = T.match("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                ".L2::cache_hint")
    ops = T.parse_operands(f, "[%r1+128], [%rd2, {%r3, %r4, 7}], [%r5], %rs6, %rd7")
    assert ops == T.Operands(map="%rd2", coords=("%r3", "%r4", "7"), shared="%r1+128", mbarrier="%r5",
                             cta_mask="%rs6", policy="%rd7")


def test_operands_of_a_store_and_bulk_forms():
    st_ = T.parse_operands(T.match("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"),
                           "[%rd38, {%r12, %r13}], [%r11]")
    assert (st_.map, st_.coords, st_.shared) == ("%rd38", ("%r12", "%r13"), "%r11")
    g2s = T.parse_operands(T.match("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"),
                           "[%r105], [%rd23], %r32, [%r107]")
    assert (g2s.shared, g2s.global_, g2s.size, g2s.mbarrier) == ("%r105", "%rd23", "%r32", "%r107")
    red = T.parse_operands(T.match("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32"),
                           "[%rd10], [%r57], %r32")
    assert (red.global_, red.shared, red.size) == ("%rd10", "%r57", "%r32")


def test_wrong_number_of_coordinates_is_refused():
    with pytest.raises(T.OperandError, match="3 coordinates for a 2-D copy"):
        T.parse_operands(T.match("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"), "[%rd1, {%r1, %r2, %r3}], [%r4]")


# ---------------------------------------------------------------------------- parsing and instrumenting real PTX

def test_triton_copy_has_one_load_and_one_store():
    p = parse((DATA / "triton_copy2d_tma_st.ptx").read_text())
    tma = [i for i in p.instrs if i.kind == "tma"]
    assert [(i.op, i.line_no, i.predicate, i.address) for i in tma] == [
        ("load", 142, "%p21", "%rd19"), ("store", 224, "%p41", "%rd38")]
    assert [i.line for i in tma] == [46, 49]        # probe_tma_kernels.py's lines of .load and .store
    # the commit/wait of the bulk group are no copies: TMA control, as is the building of the two maps
    ctl = [i for i in p.instrs if i.kind == T.KIND_CONTROL]
    assert sum("commit_group" in i.ptx for i in ctl) == 3 and sum("tensormap.replace" in i.ptx for i in ctl) == 26
    assert not any("commit_group" in i.ptx or "wait_group" in i.ptx for i in tma)


def test_nvcc_cases_every_form():
    p = parse((DATA / "nvcc_tma_cases.ptx").read_text())
    got = sorted({(i.kind, T.match(i.opcode).direction, T.match(i.opcode).rank) for i in p.instrs
                  if i.kind in T.TRACE_KINDS})
    assert got == [("bulk", "load", 0), ("bulk", "reduce", 0), ("bulk", "store", 0), ("tma", "load", 1),
                   ("tma", "load", 2), ("tma", "load", 3), ("tma", "load", 4), ("tma", "load", 5),
                   ("tma", "prefetch", 2), ("tma", "reduce", 1), ("tma", "reduce", 2), ("tma", "reduce", 3),
                   ("tma", "store", 1), ("tma", "store", 2), ("tma", "store", 3)]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_instrumented_block_is_straight_line(path):
    text = path.read_text()
    out, instrs, _ = instrument_full(text)
    tma = [i for i in instrs if i.kind in T.TRACE_KINDS]
    assert tma
    # the instrumented PTX has exactly the branches and labels of the original
    branches = lambda t: len(re.findall(r"\bbra(\.uni)?\b", t))  # noqa: E731
    labels = lambda t: len(re.findall(r"^\s*[\w$]+:\s*$", t, re.M))  # noqa: E731
    assert (branches(out), labels(out)) == (branches(text), labels(text))
    # one block per copy instruction, each writing flag 2 records
    assert out.count(f"mov.u32 %wvr15, {T.RECORD_FLAG};") == len(tma)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas (the CUDA toolkit)")
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_instrumented_ptx_assembles_for_sm90a(path, tmp_path):
    out, _, _ = instrument_full(path.read_text())
    src = tmp_path / "k.ptx"
    src.write_text(out)
    proc = subprocess.run(["ptxas", "-arch=sm_90a", "-O3", "-o", str(tmp_path / "k.cubin"), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[:2000]


# ---------------------------------------------------------------------------- expansion

def fp32_map(dims=(1024, 1024), box=(32, 64), swizzle=3, estrides=None, address=1 << 20, esize_type=7):
    rank = len(dims)
    strides, s = [], T.HW_DTYPES[esize_type][0]
    for d in dims[:-1]:
        s *= d
        strides.append(s)
    return T.TensorMap(address, esize_type, rank, tuple(dims), tuple(strides), tuple(box),
                       tuple(estrides or (1,) * rank), 0, swizzle)


def test_a_64x64_fp32_box_reads_512_sectors():
    tm = fp32_map(box=(64, 64), swizzle=0)
    ex = T.expand(tm, (0, 0))
    assert (ex.sectors, ex.lines, ex.global_bytes, ex.shared_bytes) == (512, 128, 16384, 16384)
    assert len(ex.rows) == 64 and all(n == 256 for _a, n in ex.rows)


def test_tritons_two_32x64_boxes_make_the_copy_of_the_contract():
    # 1024 x 1024 fp32 through 64 x 64 tiles: Triton issues two 32-column boxes per tile
    tm = fp32_map(box=(32, 64))
    per_tile = sum(T.expand(tm, (x, 0)).sectors for x in (0, 32))
    assert per_tile == 512 and per_tile * 16 * 16 == 131072      # TRACE_FORMAT.md: 131,072 sectors


def test_out_of_bounds_parts_fetch_nothing():
    tm = fp32_map()
    right = T.expand(tm, (1000, 0))          # 24 of 32 columns in: 96 bytes a row from byte 4000
    assert right.global_bytes == 64 * 96 and right.sectors == 64 * 3
    corner = T.expand(tm, (-16, -8))          # 16 columns, 56 rows in
    assert corner.global_bytes == 56 * 64 and corner.sectors == 56 * 2
    assert corner.elements - corner.elements_in_bounds == 32 * 64 - 16 * 56
    gone = T.expand(tm, (2000, 0))
    assert (gone.sectors, gone.global_bytes, gone.rows) == (0, 0, [])
    assert gone.shared_bytes == 32 * 64 * 4              # the box is still written (filled)


def test_unaligned_rows_touch_an_extra_sector():
    tm = fp32_map(swizzle=0)
    ex = T.expand(tm, (3, 5))                 # rows start 12 bytes into a sector: 128 bytes touch 5 sectors
    assert ex.sectors == 64 * 5 and ex.lines == 64 * 2


def test_element_strides_along_the_row_still_fetch_the_row():
    tm = fp32_map(box=(32, 64), swizzle=0, estrides=(2, 1))
    ex = T.expand(tm, (0, 0))
    assert tm.box_elements == (16, 64) and ex.global_bytes == 16 * 64 * 4
    assert ex.sectors == ex.full_sectors == 64 * 4      # the H200: 256 (a row of 32 elements, 128 bytes)


# The H200's TMA load sectors of one copy (tools/gpu/tma_validate.sh, the one-copy probe
# tools/gpu/probe_tma_cases.cu, Nsight Compute 2025.3.1): (dims, box, element strides), coordinates, sectors
H200_LOADS = [
    (((1024, 1024), (32, 64), None), (0, 0), 256), (((1024, 1024), (64, 64), None), (0, 0), 512),
    (((1024, 1024), (8, 8), None), (0, 0), 8), (((1024, 1024), (4, 8), None), (0, 0), 8),
    (((1024, 1024), (4, 8), None), (4, 0), 8), (((1024, 1024), (32, 64), None), (16, 0), 256),
    (((1024, 1024), (32, 64), None), (4, 5), 320), (((1024, 1024), (32, 64), None), (1000, 0), 256),
    (((1024, 1024), (32, 64), None), (1020, 1000), 280), (((1024, 1024), (32, 64), None), (-16, -8), 256),
    (((1024, 1024), (32, 64), None), (-4, 0), 320), (((1024, 1024), (32, 64), None), (0, 2000), 256),
    (((1024, 1024), (32, 64), None), (-64, 0), 256), (((1024, 1024), (32, 64), None), (0, 1000), 256),
    (((1024, 1024), (32, 64), None), (2000, 0), 256), (((1000, 1000), (32, 64), None), (992, 960), 256),
    (((1024, 1024), (32, 64), (2, 1)), (0, 0), 256), (((1024, 1024), (32, 64), (1, 2)), (0, 0), 128),
    (((1024, 1024), (32, 64), (4, 3)), (0, 0), 88), (((1024, 1024), (32, 64), (1, 3)), (0, 0), 88),
    (((1024, 1024), (32, 64), (8, 1)), (0, 0), 256), (((1 << 20,), (256,), None), (0,), 32),
    (((1 << 20,), (256,), None), (1048500,), 35), (((64, 64, 64), (32, 8, 4), None), (0, 0, 0), 128),
    (((64, 16, 16, 16), (32, 4, 2, 2), None), (0, 0, 0, 0), 64),
    (((32, 8, 8, 8, 8), (32, 2, 2, 2, 2), None), (0, 0, 0, 0, 0), 64),
]


@pytest.mark.parametrize("shape, coords, h200", H200_LOADS, ids=lambda v: str(v))
def test_load_sectors_as_the_h200_counts_them(shape, coords, h200):
    """A load fetches each box row in 128-byte chunks from its start: bytes in bounds count the
    sectors they touch, bytes out of bounds 32 a sector (rows outside the tensor included)."""
    dims, box, es = shape
    tm = fp32_map(dims=dims, box=box, swizzle=0, estrides=es)
    assert T.load_sectors(tm, coords) == h200
    assert T.expand(tm, coords).full_sectors == h200


def test_three_dimensional_box():
    tm = fp32_map(dims=(64, 64, 64), box=(32, 8, 4))
    ex = T.expand(tm, (0, 0, 0))
    assert ex.sectors == 8 * 4 * 4 and ex.global_bytes == 32 * 8 * 4 * 4
    starts = [a for a, _n in ex.rows]
    assert starts[:2] == [tm.address, tm.address + 64 * 4] and starts[8] == tm.address + 64 * 64 * 4


def test_swizzled_shared_rows_match_the_scenario_kinds_tma_128b():
    tm = fp32_map(box=(32, 8))
    ex = T.expand(tm, (0, 0), shared=0)
    # row r, chunk c (16 bytes) lands at chunk c ^ (r % 8) of row r
    for r in range(8):
        chunks = [a for a, _n in ex.shared[r * 8:(r + 1) * 8]]
        assert chunks == [r * 128 + 16 * (c ^ r) for c in range(8)]


def test_bulk_copy_expansion():
    ex = T.expand_bulk(80, 48)
    assert (ex.sectors, ex.lines, ex.global_bytes) == (2, 1, 48)
    assert T.expand_bulk(4096, 4096).sectors == 128


@settings(max_examples=150, deadline=None)
@given(rank=st.integers(1, 3), data=st.data())
def test_sectors_lie_in_the_array_and_bytes_are_the_box_in_bounds(rank, data):
    dims = tuple(data.draw(st.integers(1, 40)) for _ in range(rank))
    box = tuple(data.draw(st.integers(1, 16)) for _ in range(rank))
    es = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    coords = tuple(data.draw(st.integers(-20, 45)) for _ in range(rank))
    tm = fp32_map(dims=dims, box=box, swizzle=0, estrides=es)
    ex = T.expand(tm, coords, with_shared=False)
    end = tm.address + int(np.prod(dims)) * 4
    for a, n in ex.rows:
        assert tm.address <= a and a + n <= end
    # brute force: every element of the box, in bounds or not
    axes = [[coords[d] + k * es[d] for k in range(-(-box[d] // es[d]))] for d in range(rank)]
    inside = 1
    for d in range(rank):
        inside *= sum(1 for x in axes[d] if 0 <= x < dims[d])
    assert ex.global_bytes == 4 * inside
    assert ex.elements_in_bounds == inside
    touched = {(a + k) // 32 for a, n in ex.rows for k in range(n)}
    assert len(touched) <= ex.sectors


# ---------------------------------------------------------------------------- records

def payload(coords=(0, 0, 0, 0, 0), shared=0, lane=0, rank_in_warp=0, issuers=1, map_bytes=b"\0" * 128, size=0,
            address=0) -> np.ndarray:
    w = np.zeros(64, np.uint32)
    w[:32] = np.frombuffer(map_bytes, np.uint32)
    w[32:37] = np.asarray(coords, np.int64).astype(np.uint32)
    w[37] = shared
    w[2 * T.SLOT_SIZE] = size
    w[2 * T.SLOT_SIZE + 1] = issuers
    w[2 * T.SLOT_LANE] = 0xFFFFFFFF if lane < 0 else lane
    w[2 * T.SLOT_LANE + 1] = 0 if lane < 0 else rank_in_warp + 1
    q = w.view(np.uint64).copy()
    q[T.SLOT_ADDRESS] = address
    return q


def test_decode_record():
    r = T.decode_record(payload((-16, 8, 0, 0, 0), shared=0x4000, lane=5, issuers=2))
    assert (r.lane, r.issuers, r.rank_in_warp, r.coords[:2], r.shared) == (5, 2, 0, (-16, 8), 0x4000)
    assert T.decode_record(payload(lane=-1, issuers=0)).lane == -1


def test_bulk_records_count():
    f = T.match("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes")
    rows = np.stack([payload(lane=0, size=4096, address=1 << 20), payload(lane=-1, issuers=0),
                     payload(lane=3, size=48, address=(1 << 20) + 80)])
    s = T.count_records(f, rows, np.asarray([1, 0, 8], np.uint32))
    assert (s.warp_executions, s.issued, s.sectors, s.global_bytes) == (3, 2, 128 + 2, 4096 + 48)
    # every warp-level execution counts in the TMA pipe and its requests, the issuing ones as instructions
    assert s.counters[T.TMA_LD_SECTORS] == 130 and s.counters[T.TMA_REQUESTS] == s.counters[T.TMA_PIPE] == 3
    assert s.counters[T.TMA_SASS_LD] == 2


# ---------------------------------------------------------------------------- a trace of Triton's TMA copy

FULL = 0xFFFFFFFF
GP = Path(__file__).parent / "data" / "sass" / "triton_copy2d_tma_st.gp.sass"   # nvdisasm -gp of its plain cubin


def _copy_trace(blocks: int = 1, map_bytes: bytes = b"\0" * 128, grid_x: int = 1):
    """Records of Triton's 2-D TMA copy (load + store through device-built maps) as the
    recorder writes them for a block of 4 warps: %p1 = tid < 32, %p2 = tid == 0, the loads
    and stores issued by the elected lane of warps 0 and 1 (tid < 64)."""
    from viz.trace import tracefile
    from viz.trace.reconcile import apply, reconcile

    ptx = (DATA / "triton_copy2d_tma_st.ptx").read_text()
    p = parse(ptx)
    m = reconcile(ptx, p.instrs, GP.read_text())
    heads, addrs = [], []
    scratch = 1 << 24
    for b in range(blocks):
        for w in range(4):
            for ins in p.instrs:
                slots = np.zeros(32, np.uint64)
                if ins.kind in T.TRACE_KINDS:
                    issue = w < 2
                    pred = 1 if issue else 0
                    slots = payload((64 * (b % grid_x) + 32 * (w % 2), 64 * (b // grid_x), 0, 0, 0),
                                    shared=0x2000 * (w % 2), lane=0 if issue else -1,
                                    issuers=pred, map_bytes=map_bytes)
                    heads.append([ins.id, b, w, FULL, pred, pred, 0, T.RECORD_FLAG])
                    addrs.append(slots)
                    continue
                if ins.kind == T.KIND_CONTROL and ins.predicate == "":
                    pred = FULL
                elif ins.predicate in ("%p1",) or ins.line_no == 57 or ins.line_no == 164:
                    pred = FULL if w == 0 else 0
                else:                                  # %p2: tid == 0
                    pred = 1 if w == 0 else 0
                space_shared = ins.space == "shared"
                a = np.full(32, (0x4000 * (ins.line_no > 160)) if space_shared else scratch + 256 * b, np.uint64)
                if ins.kind == "store":               # st.shared.b32 [%r1]: lane k's word
                    a = a + 4 * np.arange(32, dtype=np.uint64)
                heads.append([ins.id, b, w, FULL, pred, FULL if space_shared else 0, 0 if space_shared else FULL, 0])
                addrs.append(a)
    header = {"title": "copy", "kernel": "copy2d_kernel",
              "launch": {"block": [128, 1, 1], "grid": [grid_x, blocks // grid_x, 1]},
              "instructions": [i.as_dict() for i in p.instrs], "complete": True}
    trace = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs, np.uint64)))
    return tracefile.check(apply(trace, m)), m


def test_the_sass_that_builds_tensor_maps_is_attributed_not_unmatched():
    _t, m = _copy_trace()
    assert m["notes"] == [] and "tensor_map_sass" not in m
    ctl = [v for k, v in m["instructions"].items() if v.state != "same"]
    assert ctl == []


D36 = DATA / "triton36_copy2d_dev.ptx"       # Triton 3.6.0's PTX on the H200 (probe_tma.sh, case copy2d_dev)
GP36 = Path(__file__).parent / "data" / "sass" / "triton36_copy2d_dev.gp.sass"   # ptxas 13.0 here, nvdisasm -gp


def test_building_a_map_counts_what_the_h200_ran():
    """Triton's 64 x 64 TMA copy with a pointer store (Triton 3.6, the H200's PTX): building the
    tensor map in shared memory ran, a block, 14 LDS and 21 STS (with the st.shared that zeroes
    the map) on the H200 (Nsight Compute's per-instruction counts: an @!P1 LDS/STS pair of
    tensormap.replace.fill_mode in all 4 warps, the @!P1 STS of global_dim[1] only in warp 0,
    ptxas branching around it). The trace of those instructions counts the same: a SASS access
    that a warp whose guard predicate holds on every lane cannot reach runs only where a lane is
    on. The wavefronts: 11 and 15, as the H200's 139 and 15 a block less the copy's 128 LDS.128
    wavefronts."""
    from viz.trace import tracefile
    from viz.trace.analysis import analyze_trace
    from viz.trace.reconcile import apply, reconcile

    ptx = D36.read_text()
    p = parse(ptx)
    m = reconcile(ptx, p.instrs, GP36.read_text())
    heads, addrs = [], []
    blocks = 2
    for b in range(blocks):
        for w in range(4):
            for ins in p.instrs:
                if ins.kind == "tma":
                    pred = 1 if w == 0 else 0          # %p3: tid < 64 and elected: one TMA (64 x 64 box? two)
                    heads.append([ins.id, b, w, FULL, pred, pred, 0, T.RECORD_FLAG])
                    addrs.append(payload(lane=0 if pred else -1, issuers=pred))
                    continue
                if not (ins.kind == T.KIND_CONTROL or (ins.kind == "store" and ins.space == "shared")):
                    continue
                pred = {"%p1": FULL if w == 0 else 0, "%p2": 1 if w == 0 else 0, "": FULL}[ins.predicate]
                sh = ins.space == "shared"
                a = np.full(32, 0 if sh else (1 << 24) + 128 * b, np.uint64)
                if ins.kind == "store":
                    a = a + 4 * np.arange(32, dtype=np.uint64)
                heads.append([ins.id, b, w, FULL, pred, FULL if sh else 0, 0 if sh else FULL, 0])
                addrs.append(a)
    header = {"title": "copy", "kernel": "copy2d_kernel", "launch": {"block": [128, 1, 1], "grid": [blocks, 1, 1]},
              "instructions": [i.as_dict() for i in p.instrs], "complete": True}
    t = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs, np.uint64)))
    ten = analyze_trace(tracefile.check(apply(t, m))).metrics
    per_block = {"smsp__inst_executed_op_shared_ld.sum": 14, "smsp__inst_executed_op_shared_st.sum": 21,
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 11,
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 15}
    for k, v in per_block.items():
        assert ten[k] == blocks * v, k


def test_the_tma_pipe_and_atomics_of_tritons_copy():
    """The copy with a TMA store too (Triton 3.5's PTX): UTMALDG and UTMASTG in all 4 warps, the
    maps' UTMACCTL and UTMACMDFLUSH in warp 0, the store's commit in all 4: 16 a block (the
    H200: 4,096 for 256 blocks); cp_fenceproxy: an ATOMG.E.EXCH a map."""
    from viz.trace.analysis import analyze_trace

    t, _m = _copy_trace(blocks=2)
    other = analyze_trace(t).other_metrics
    assert other[T.GLOBAL_ATOM_INST] == 2 * 2 and other[T.GLOBAL_ATOM_REQ] == 2 * 2
    assert other[T.GLOBAL_ATOM_SEC] == 2 * 8
    assert other[T.TMA_PIPE] == other[T.TMA_REQUESTS] == 2 * (4 + 4 + 2 + 2 + 4)
    # with the predicate on: warps 0 and 1 (512 for 256 blocks on the H200)
    assert other[T.TMA_SASS_LD] == 2 * 2 and other[T.TMA_SASS_ST] == 2 * 2


# ---------------------------------------------------------------------------- the tensor map's bytes

MAPS = Path(__file__).parent / "data" / "tma" / "tensormaps.json"   # tools/gpu/probe_tma_maps.py on the H200


def _encoded():
    import json

    d = json.loads(MAPS.read_text())
    return [e for e in d["tiled"] if e["result"] == 0]


@pytest.mark.parametrize("entry", _encoded(), ids=lambda e: e["label"])
def test_decode_the_drivers_maps(entry):
    """Every map the H200's driver encoded (one field changed at a time) decodes to its inputs."""
    i = entry["inputs"]
    tm = T.decode_map(bytes.fromhex(entry["hex"]))
    r = i["rank"]
    assert tm.rank == r and tm.address == i["address"]
    assert tm.dims == tuple(i["dims"][:r]) and tm.strides == tuple(i["strides"][:r - 1])
    assert tm.box == tuple(i["box"][:r]) and tm.estrides == tuple(i["estrides"][:r])
    assert (tm.interleave, tm.swizzle, tm.l2, tm.oob_nan, tm.im2col) == (i["interleave"], i["swizzle"], i["l2"],
                                                                         bool(i["oob"]), False)
    assert tm.dtype == T.CUDA_TO_HW[i["dtype"]]
    # encode_map writes the same fields back
    assert T.decode_map(T.encode_map(tm)) == tm


def test_im2col_maps_say_so():
    import json

    d = json.loads(MAPS.read_text())
    e = next(x for x in d["im2col"] if x["result"] == 0)
    assert T.decode_map(bytes.fromhex(e["hex"])).im2col


def test_a_map_not_built_yet_is_refused():
    with pytest.raises(T.MapError, match="all zero"):
        T.decode_map(b"\0" * 128)


@pytest.mark.parametrize("n, load_sectors, store_sectors", [(1024, 131072, 131072), (1000, 131072, 125000)])
def test_tritons_copy_counts_the_h200s_tma_sectors(n, load_sectors, store_sectors):
    """Triton's 64 x 64 copy of an n x n fp32 array (grid 16 x 16, two 32 x 64 boxes a tile):
    the H200 counted 131,072 sectors read by TMA for n = 1024 and for n = 1000 (a load counts
    its whole box, the parts out of bounds too) and 131,072 / 125,000 written (a store only
    its bytes in bounds): device-results of tools/gpu/probe_tma.sh, cases copy2d_dev_st and oob2d."""
    from viz.trace.analysis import analyze_trace

    tm = T.TensorMap(1 << 24, 7, 2, (n, n), (4 * n,), (32, 64), (1, 1), 0, 3)
    t, _m = _copy_trace(blocks=256, map_bytes=T.encode_map(tm), grid_x=16)
    other = analyze_trace(t).other_metrics
    assert other[T.TMA_LD_SECTORS] == load_sectors and other[T.TMA_LD_BYTES] == 32 * load_sectors
    assert other[T.TMA_ST_SECTORS] == store_sectors
    assert other[T.TMA_PIPE] == 4096 and other[T.TMA_SASS_LD] == other[T.TMA_SASS_ST] == 512


# ---------------------------------------------------------------------------- the attention's shared loads

ATT = DATA / "triton_attention_fwd.ptx"
ATT_GP = Path(__file__).parent / "data" / "sass" / "triton_attention_fwd.gp.sass"
ATT_MEM = Path(__file__).parent / "data" / "sass" / "triton_attention_fwd.memory.sass"


def test_never_true_loads_belong_to_the_ldgsts_right_after_them():
    """ptxas puts three `@!PT LDS RZ, [RZ]` right before the first LDGSTS of each group of
    cp.async, and one more before the MEMBAR of the fence.proxy.async that follows the
    prologue's groups (0x08f0). That one is not the loop's: the loop's first LDGSTS has 3."""
    from viz.trace.ptx import sass_ldgsts

    p = parse(ATT.read_text())
    sites = sass_ldgsts(ATT_MEM.read_text().splitlines(), p.instrs)
    cps = [i for i in p.instrs if i.kind == "cp.async" and i.space == "global"]
    assert [sites[i.id][1] for i in cps] == [3] + [0] * 7 + [3] + [0] * 7
    assert [i.line_no for i in cps][::8] == [155, 627]


def test_the_fence_after_the_prologue_owns_its_never_true_load():
    from viz.trace.reconcile import reconcile

    ptx = ATT.read_text()
    p = parse(ptx)
    m = reconcile(ptx, p.instrs, ATT_GP.read_text())
    fence = [i for i in p.instrs if i.opcode.startswith("fence.proxy.async")]
    assert [f.line_no for f in fence] == [197]
    assert list(m["instructions"][fence[0].id].sass) == ["@!PT LDS RZ, [RZ]"]
    assert not m["notes"]


@pytest.mark.parametrize("iterations, h200", [(4, 256), (16, 52 * 16)])
def test_attention_shared_loads_as_the_h200_counts_them(iterations, h200):
    """A trace of this attention forward counted 304 shared-load instructions
    where the H200 ran 256 (16 warps, 4 K/V blocks: N_CTX 256). Per warp the SASS runs 3
    never-true loads before the prologue's cp.async, 1 before the fence.proxy.async's MEMBAR
    and 3 in each loop iteration: 4 + 3 x 4 = 16 (the trace had 3 + 4 x 4 = 19: the fence's
    load was taken for the loop's). With N_CTX 1024 (16 iterations) the H200 counted 13,312
    for 256 warps: 52 a warp (probe_tma.sh, case attention)."""
    from viz.trace import tracefile
    from viz.trace.analysis import analyze_trace
    from viz.trace.reconcile import apply, reconcile

    ptx = ATT.read_text()
    p = parse(ptx)
    m = reconcile(ptx, p.instrs, ATT_GP.read_text())
    loop = {i.id for i in p.instrs if 600 < i.line_no < 670}
    warps = 16 if iterations == 4 else 1
    heads, addrs = [], []
    for w in range(warps):
        for ins in p.instrs:
            if not ((ins.kind == "cp.async" and ins.space == "global") or ins.opcode.startswith("fence.proxy.async")):
                continue
            runs = iterations if ins.id in loop else 1
            for _ in range(runs):
                g = ins.kind == "cp.async"
                heads.append([ins.id, w // 4, w % 4, FULL, FULL, 0, FULL, 0])
                addrs.append(np.full(32, (1 << 20) if g else 0, np.uint64) + (16 * np.arange(32, dtype=np.uint64)
                                                                              if g else 0))
    header = {"title": "attention", "kernel": "attention_kernel",
              "launch": {"block": [128, 1, 1], "grid": [max(1, warps // 4), 1, 1]},
              "instructions": [i.as_dict() for i in p.instrs], "complete": True,
              "sass_guard": {"sass": ATT_MEM.read_text().splitlines(), "problems": [], "note": ""}}
    t = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs, np.uint64)))
    t = tracefile.check(apply(t, m))
    got = analyze_trace(t).metrics["smsp__inst_executed_op_shared_ld.sum"]
    assert got == (h200 if iterations == 4 else 52)


def test_an_issued_copy_is_drawn_as_its_swizzled_chunks(tmp_path):
    """The picture of an issued TMA load: its first 32 16-byte chunks (the box's first four
    128-byte rows) where the 128B swizzle puts them: chunk c of row r at c ^ r; the warps that
    issued nothing have no step for it."""
    from viz.trace import tracefile
    from viz.trace.detail import open_source

    tm = T.TensorMap(1 << 24, 7, 2, (1024, 1024), (4096,), (32, 64), (1, 1), 0, 3)
    t, _m = _copy_trace(blocks=1, map_bytes=T.encode_map(tm))
    path = tracefile.save(t, tmp_path / "copy.wvtrace")
    s = open_source(path)
    steps = [k for k, r in enumerate(s.stream(0, 0)) if int(s.trace.flags[r]) == 2]
    assert len(steps) == 2                                   # the load and the store of warp 0
    d = s.detail(0, 0, steps[0])
    want = [r * 128 + 16 * (c ^ r) for r in range(4) for c in range(8)]
    assert [int(ln.byte_addr) for ln in d.lanes] == want and d.space == "shared"
    assert not any(int(s.trace.flags[r]) == 2 for r in s.stream(0, 2))     # warp 2 issued none


def test_a_box_larger_than_shared_memory_is_not_expanded():
    """A hostile or corrupt map (a 256 x 256 x 4 fp32 box: 1 MiB) is said, not expanded row by row."""
    tm = T.TensorMap(1 << 20, 7, 3, (4096, 4096, 64), (16384, 16384 * 4096), (256, 256, 4), (1, 1, 1), 0, 0)
    f = T.match("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes")
    s = T.count_records(f, payload(lane=0, map_bytes=T.encode_map(tm))[None, :], np.asarray([1], np.uint32))
    assert s.undecoded == 1 and s.sectors == 0 and "more than shared memory holds" in s.problems[0]


def test_figures_and_source_panel_show_a_copys_sectors():
    from viz.trace.analysis import analyze_trace, explain_trace, source_lines

    tm = T.TensorMap(1 << 24, 7, 2, (1000, 1000), (4000,), (32, 64), (1, 1), 0, 3)
    t, _m = _copy_trace(blocks=4, map_bytes=T.encode_map(tm), grid_x=2)
    an = analyze_trace(t)
    load = next(d for d in an.per_access() if (d.kind_figures("tma") or {}).get("direction") == "load")
    rows = {r[0]: r[1] for r in explain_trace(load)}
    assert rows["copies"] == "8" and rows["sectors"] == "2,048" and rows["bytes moved"] == "65,536"
    by_line = {r["line"]: r["sectors"] for r in source_lines(an)}
    assert by_line[46] == 2048 and by_line[49] == 2048        # the .load and the .store lines


def test_cutlass_style_inline_asm_with_cache_policy_and_multicast():
    """One line of inline asm holding ``{ .reg .pred p; elect.sync _|p, ...; @p cp.async.bulk.tensor...; }``:
    split into statements, the copy recorded under the asm's own predicate; the L2 cache policy
    and the multicast mask are operands the record keeps."""
    p = parse((DATA / "nvcc_cutlass_style.ptx").read_text())
    tma = [i for i in p.instrs if i.kind == "tma"]
    assert [i.predicate for i in tma] == ["p", ""]
    ops = [T.parse_operands(T.match(i.opcode), re.match(r"^(?:@\S+\s+)?\S+\s+(.*);", i.ptx).group(1)) for i in tma]
    assert (ops[0].policy, ops[0].cta_mask, ops[0].coords) == ("%rd3", "", ("%r9", "%r5"))
    assert (ops[1].policy, ops[1].cta_mask, T.match(tma[1].opcode).multicast) == ("", "%rs1", True)
