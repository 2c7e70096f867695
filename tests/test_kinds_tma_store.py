"""tma.store and TMA boxes past the tensor's edge in scenarios: exact
sectors, the same counters as the trace side's functions (viz.kinds.tma_copy) for the same
map and box, clear parse errors, the built-ins, and CUDA that nvcc compiles for sm_90."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.test_tma_copy import payload
from viz.cli import main
from viz.engine import analyze
from viz.gpu.codegen import generate
from viz.kinds import tma_copy as T
from viz.kinds.async_copy import scenario_map
from viz.kinds.codegen import tensor_maps
from viz.scenario import ScenarioError, load, loads
from viz.toolchain.compile import find_nvcc

LD = T.TMA_LD_SECTORS
ST = T.TMA_ST_SECTORS

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def text(ops=("tma.load", "tma.store"), grows=64, gcols=64, rows=64, cols=64, tname="float", swizzle="none",
         grid="[1]", origin="[0][0]", extra=""):
    t = f"""format = 3
title = "t"
[launch]
block = [128]
grid = {grid}
[arrays.tile]
space = "shared"
type = "{tname}"
shape = [{rows}, {cols}]
swizzle = "{swizzle}"
[arrays.A]
space = "global"
type = "{tname}"
shape = [{grows}, {gcols}]
"""
    for op in ops:
        if op == "tma.load":
            t += f'[[access]]\nop = "tma.load"\nat = "tile"\nfrom = "A{origin}"\n{extra}\n'
        else:
            t += f'[[access]]\nop = "tma.store"\nat = "A{origin}"\nfrom = "tile"\n{extra}\n'
    return t


def test_a_64x64_fp32_box_in_bounds_is_512_sectors_each_way():
    sc = loads(text())
    m = analyze(sc).metrics
    assert m[LD] == 512 and m[ST] == 512          # 64 rows of 256 bytes, 8 sectors each
    d = analyze(sc).per_access()
    assert [x.kind for x in d] == ["tma.load", "tma.store"]
    assert d[1].bytes_copied == 64 * 64 * 4 and d[1].sectors == 512 and d[1].warp_instructions == 1


def brute_store_sectors(grows, gcols, esize, brows, bcols, origins, base=0) -> int:
    """Every row of every box: the 32-byte sectors of its bytes inside the tensor, byte by byte."""
    n = 0
    for r0, c0 in origins:
        for r in range(r0, min(r0 + brows, grows)):
            lo, hi = c0, min(c0 + bcols, gcols)
            if hi > lo:
                first = base + (r * gcols + lo) * esize
                last = base + (r * gcols + hi) * esize - 1
                n += last // 32 - first // 32 + 1
    return n


def test_an_edge_box_stores_only_its_bytes_in_bounds_and_loads_the_whole_box():
    # 100 x 100 floats (rows of 400 bytes: odd rows start 16 bytes into a sector), 64 x 32 boxes on a 4 x 2 grid
    sc = loads(text(grows=100, gcols=100, rows=64, cols=32, swizzle="tma:128B", grid="[4, 2]",
                    origin="[blockIdx.y * 64][blockIdx.x * 32]"))
    an = analyze(sc)
    m = an.metrics
    origins = [(64 * y, 32 * x) for y in range(2) for x in range(4)]
    assert m[ST] == brute_store_sectors(100, 100, 4, 64, 32, origins) == 1450
    # the load: 128-byte chunks from each box row's start; in-bounds bytes their sectors, others 32 bytes a sector
    assert m[LD] == 50 * 17 + 50 * 20 + 28 * 16 == 2298
    d = an.per_access()
    assert d[0].bytes_copied == 8 * 64 * 32 * 4          # the load fills the box
    assert d[1].bytes_copied == 100 * 100 * 4            # the store writes the tensor once, nothing past it


def test_the_scenario_counts_as_the_trace_side_counts_the_same_map_and_box():
    """One rule, one place: a record of the same map and coordinates, counted by the trace side
    (tma_copy.count_records), gives the scenario's counters, box by box."""
    sc = loads(text(grows=100, gcols=100, rows=64, cols=32, swizzle="tma:128B", grid="[4, 2]",
                    origin="[blockIdx.y * 64][blockIdx.x * 32]"))
    m = analyze(sc).metrics
    for a, key, opcode in ((sc.accesses[0], LD, "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"),
                           (sc.accesses[1], ST, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group")):
        tm, factor = scenario_map(sc, a)
        assert T.decode_map(T.encode_map(tm)) == tm
        rows = np.stack([payload((32 * x * factor, 64 * y, 0, 0, 0), map_bytes=T.encode_map(tm))
                         for y in range(2) for x in range(4)])
        st = T.count_records(T.match(opcode), rows, np.ones(8, np.uint32))
        assert st.counters[key] == m[key]


def test_the_built_ins_analyse_with_their_stated_figures(capsys):
    m = analyze(load("tma-store-swizzle-128b")).metrics
    assert m[ST] == 512 and m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 128
    m = analyze(load("tma-oob-edge")).metrics
    assert m[LD] == 2298 and m[ST] == 1450
    assert main(["analyze", "tma-oob-edge"]) == 0
    out = capsys.readouterr().out
    assert "bytes written" in out and "40,000" in out and "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st" in out


def fails(t: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        loads(t)
    return e.value


@pytest.mark.parametrize("bad,key,words", [
    ('from = "tile[0][0]"', "from", "tma.store's from names the whole shared source array"),
    ('from = 7', "from", "tma.store's from names the whole shared source array"),
    ('from = "A"', "from", "tma.store reads a 2-D shared array; A is not one"),
])
def test_a_store_whose_from_is_not_the_tile_is_refused(bad, key, words):
    t = text(ops=("tma.store",)).replace('from = "tile"', bad)
    e = fails(t)
    assert words in str(e) and e.line is not None


@pytest.mark.parametrize("at,words", [
    ('"tile[0][0]"', "at must name an element of a plain 2-D global array (the tensor)"),
    ('"A[tid][0]"', "is the box's first element, one per block: it cannot depend on tid"),
    ('"A[0]"', "A"),
])
def test_a_store_whose_at_is_not_a_tensor_element_is_refused(at, words):
    t = text(ops=("tma.store",)).replace('at = "A[0][0]"', f"at = {at}")
    assert words in str(fails(t))


@pytest.mark.parametrize("box", ["[64, 64, 1]", '"64x64"', "[true, 64]", "[64.0, 64]", "[0, 64]", "[99999999999, 64]",
                                 "[]"])
def test_hostile_boxes_are_refused_with_the_key_named(box):
    t = text(ops=("tma.store",), extra=f"box = {box}")
    e = fails(t)
    assert "box" in str(e)


def test_unknown_keys_and_format_2_are_refused():
    assert "when" in str(fails(text(ops=("tma.store",), extra='when = "tid == 0"')))
    assert "format" in str(fails(text(ops=("tma.store",)).replace("format = 3", "format = 2")))


def test_a_box_whose_first_element_lies_outside_the_tensor_is_refused_by_block():
    t = text(ops=("tma.store",), grows=100, gcols=100, rows=64, cols=32, grid="[4, 2]",
             origin="[blockIdx.y * 64][blockIdx.x * 32 + 32]")
    with pytest.raises(ScenarioError) as e:
        analyze(loads(t))
    msg = str(e.value)
    assert "tma.store tile, at = A[blockIdx.y * 64][blockIdx.x * 32 + 32]" in msg
    assert "column 128 of A" in msg and "block (3,0,0)" in msg
    assert "Keep the box's first element inside A (the box itself may run past the tensor's edge)" in msg
    assert "`when`" not in msg                     # a TMA copy has no `when` to guard it with
    assert e.value.line == t.splitlines().index('at = "A[blockIdx.y * 64][blockIdx.x * 32 + 32]"') + 1


def test_the_cli_says_a_bad_store_in_one_paragraph_with_status_2(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text(text(ops=("tma.store",)).replace('from = "tile"', 'from = "tile[0]"'))
    assert main(["analyze", str(p)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "tma.store's from names the whole shared source array" in err


def test_loads_and_stores_have_one_tensor_map_each_in_access_order():
    sc = load("tma-oob-edge")
    maps = tensor_maps(sc)
    assert [(t.array, t.box_rows, t.box_cols, t.swizzle) for t in maps] == [("A", 64, 32, "tma:128B"),
                                                                             ("C", 64, 32, "tma:128B")]
    k = generate(sc)
    assert "wv_tmap0" in k.source and "wv_tmap1" in k.source
    assert re.search(r"cp\.async\.bulk\.tensor\.3d\.global\.shared::cta\.bulk_group[^;]*;", k.source)
    store = k.source[k.source.index("tma.store"):]
    assert "&wv_tmap1" in store and "cp.async.bulk.wait_group.read 0" in store
    assert '"r"((int)wv_rep)' in store          # a replica stores into its own plane, not the first one's


@needs_nvcc
def test_store_kernels_compile_for_sm90():
    from tests.test_gpu_codegen import nvcc

    names = ["tma-store-swizzle-128b", "tma-oob-edge"]
    ptx = nvcc("\n".join(generate(load(n), name=f"k{i}").source for i, n in enumerate(names)), "-ptx")
    bodies = dict(zip(re.findall(r"\.entry\s+(\w+)\(", ptx), re.split(r"\.entry\s+\w+\(", ptx)[1:]))
    for i in range(2):
        assert "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group" in bodies[f"k{i}"]
        assert "cp.async.bulk.commit_group" in bodies[f"k{i}"]
    assert "cp.async.bulk.tensor.3d.shared::cluster.global" in bodies["k1"]
