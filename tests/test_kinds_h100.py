"""The counting rules of cp.async, shared atomics and TMA copies against the H100.

assets/measurements/h100-kinds-2026-11-23.json holds 278 probes (one warp, one
instruction, each lane's shared and global byte offset) measured under Nsight Compute by
tools/probes/cp_async_tma_atomics.sh, minus the same kernel with no active lane. Each test
feeds the probe's lane addresses to the model's own counting function (the one the
engine calls) and compares with the recorded counters. Nothing runs on a GPU."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viz import assets
from viz.kernels_numba import global_counts
from viz.kinds.async_copy import cg_sectors, ldgsts_shared
from viz.kinds.atomics import count_atomic

DOC = json.loads((assets.measurements_dir() / "h100-kinds-2026-11-23.json").read_text())
PROBES = DOC["probes"]
SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
CONF_LDGSTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
WF_ATOM = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
CONF_ATOM = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"


def lanes(p):
    s = np.array([p["s"]], np.int64)
    g = np.array([p["g"]], np.int64)
    m = np.array([[(p["mask"] >> i) & 1 == 1 for i in range(32)]])
    return s, g, m


def of(kernel_prefix: str, active=True):
    return [p for p in PROBES if p["kernel"].startswith(kernel_prefix) and (p["mask"] or not active)]


def test_the_file_holds_the_probes():
    kinds = {p["kernel"] for p in PROBES}
    assert {"cp_ca4", "cp_ca8", "cp_ca16", "cp_cg16", "atom_u32", "red_u32", "atomicadd_cpp", "tma2d",
            "tma_encode"} <= kinds
    assert len(of("cp_")) == 118 and len(of("atom_u32")) + len(of("red_u32")) == 60


@pytest.mark.parametrize("p", of("cp_"), ids=[p["probe"] for p in of("cp_")])
def test_cp_async_global_side(p):
    size = 16 if p["kernel"].endswith("16") else int(p["kernel"][5:])
    s, g, m = lanes(p)
    hw = p["hardware"]
    assert hw[REQ] == 1
    if p["kernel"] == "cp_cg16":
        out = np.zeros((1, 1), np.int32)
        cg_sectors(g, s, m, out)
        assert int(out[0, 0]) == hw[SEC]
        assert hw[CONF_LDGSTS] == 0            # .cg: no bank conflict counted, whatever the pattern
    else:
        out = tuple(np.zeros((1, 1), np.int32) for _ in range(4))
        global_counts(g, m, *out)
        assert int(out[0][0, 0]) == hw[SEC]    # .ca: an LDG of that width
    assert size in (4, 8, 16)


CA_SHARED = [p for p in of("cp_ca") if p["g"] == [i * int(p["kernel"][5:]) for i in range(32)]]


@pytest.mark.parametrize("p", CA_SHARED, ids=[p["probe"] for p in CA_SHARED])
def test_cp_async_ca_shared_side_with_a_contiguous_source(p):
    """Where the global side reads one contiguous run (no L1 data-array conflict of its
    own), the op_ldgsts conflicts are the shared side's: per phase, the busiest bank's
    lane-words minus one; lanes on one address are not merged."""
    size = int(p["kernel"][5:])
    s, _g, m = lanes(p)
    wf = np.zeros((1, 1), np.int32)
    ph = np.zeros((1, 1), np.int32)
    deep = np.zeros((1, 1), np.int32)
    ldgsts_shared(s, m, size, wf, ph, deep)
    assert int(wf[0, 0] - ph[0, 0]) == p["hardware"][CONF_LDGSTS]
    # the deepest phase: at most every phase that deep, at least one phase that deep
    assert int(ph[0, 0]) == 0 or int(wf[0, 0]) - int(deep[0, 0]) >= int(ph[0, 0]) - 1
    assert int(wf[0, 0]) <= int(deep[0, 0]) * int(ph[0, 0])


FACTS = json.loads((assets.measurements_dir() / "h100-lessons-2026-11-26.json").read_text())


def test_the_sass_ldgsts_wavefront_counter_reads_the_models_shared_side_for_ca():
    """Device run of 2026-11-26: smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts
    counts a .ca copy's shared side as the model does (4 contiguous, 32 with every lane on one
    16-byte slot: 8 per phase), reads 0 for .cg, and the plain l1tex__ name reads n/a."""
    cases = FACTS["cp_async_wavefronts"]["cases"]
    sass = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"
    for name, slots in ((".ca 16 B, both sides contiguous", range(32)), (".ca 16 B, every lane to one shared slot",
                                                                        [0] * 32)):
        s = np.array([[16 * k for k in slots]], np.int64)
        wf, ph, deep = (np.zeros((1, 1), np.int32) for _ in range(3))
        ldgsts_shared(s, np.ones((1, 32), np.bool_), 16, wf, ph, deep)
        assert int(wf[0, 0]) == cases[name][sass]
        assert int(wf[0, 0] - ph[0, 0]) == cases[name][CONF_LDGSTS]
    assert int(deep[0, 0]) == 8                         # every lane on one slot: 8 lanes a phase
    assert cases[".cg 16 B, both sides contiguous"][sass] == 0
    assert {c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"] for c in cases.values()} == {"n/a"}


ATOMS = of("atom_u32") + of("red_u32") + of("atomicadd_cpp")


@pytest.mark.parametrize("p", ATOMS, ids=[p["probe"] for p in ATOMS])
def test_shared_atomics(p):
    s, _g, m = lanes(p)
    per_lane = p["kernel"] != "atomicadd_cpp"        # ATOMS.ADD: a bank's lanes one by one; atomicAdd(.., 1): ATOMS.POPC.INC
    wf, ph, act, _deep = count_atomic(s, m, 1, per_lane)
    hw = p["hardware"]
    assert int(wf[0, 0]) == hw[WF_ATOM] and hw[CONF_ATOM] == hw[WF_ATOM] - 1
    # shared atomics are in none of the ten
    assert hw.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0) == 0
    assert hw.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0) == 0


def test_same_address_costs_32_wavefronts_lane_by_lane_and_1_when_combined():
    same = {p["kernel"]: p["hardware"][WF_ATOM] for p in ATOMS if p["probe"].endswith(" same address")}
    assert same == {"atom_u32": 32, "red_u32": 32, "atomicadd_cpp": 1}


def test_float_atomics_are_a_cas_loop_that_reads_shared_memory():
    """Why `atomic` refuses float: the f32 forms read shared memory (LDS) in a loop."""
    f32 = [p for p in PROBES if p["kernel"] in ("atom_f32", "red_f32") and p["mask"]]
    assert f32 and all(p["hardware"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] > 0 for p in f32)


TMA = [p for p in PROBES if p["kernel"] == "tma2d" and p.get("placement") and p["mode"] & 1]


def test_tma_places_full_span_boxes_in_the_cute_swizzle():
    """Every element of every box whose inner side is the swizzle's span (or any box
    without swizzle) landed where CuTe Swizzle<B,4,3> on the byte offset puts it."""
    full = [p for p in TMA if p["swizzle"] == 0 or p["box"][0] * p["esize"] == p["swizzle"]]
    assert len(full) >= 40
    for p in full:
        assert p["placement"]["not_where_swizzle_puts_them"] == 0, p["probe"]
        assert p["placement"]["bytes_written"] == p["placement"]["box_bytes"]
    narrow = [p for p in TMA if p["swizzle"] and p["box"][0] * p["esize"] < p["swizzle"]]
    assert narrow and all(p["placement"]["not_where_swizzle_puts_them"] > 0 for p in narrow)


def test_tma_reads_the_box_sectors_and_nothing_of_the_ten():
    for p in TMA:
        hw = p["hardware"]
        box_bytes = p["box"][0] * p["box"][1] * p["esize"]
        assert hw["l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"] == box_bytes // 32
        assert hw.get(SEC, 0) == hw.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0) == 0


def test_tma_encode_refuses_what_the_model_refuses():
    enc = {(p["swizzle"], p["box"][0] * p["esize"], p["box"][1]): p["result"] for p in PROBES
           if p["kernel"] == "tma_encode"}
    assert enc[(128, 256, 8)].startswith("ENCODE_FAIL") and enc[(64, 128, 8)].startswith("ENCODE_FAIL")
    assert enc[(32, 64, 8)].startswith("ENCODE_FAIL") and enc[(0, 8, 8)].startswith("ENCODE_FAIL")
    assert enc[(128, 128, 300)].startswith("ENCODE_FAIL") and enc[(128, 128, 256)] == "ENCODE_OK"


def test_validate_run_on_the_h100_matches_the_model():
    """Device run 2: warpviz validate of the cp.async and atomic built-ins and 16 random
    scenarios of those kinds (seed 23): the model equals every recorded counter."""
    from viz.engine import analyze
    from viz.gpu.randomkinds import scenarios as kind_scenarios
    from viz.scenario import load

    rec = DOC["validate"]["scenarios"]
    items = [(n, load(n)) for n in ("cp-async-pipeline", "shared-histogram-few-bins", "shared-histogram-many-bins")]
    items += kind_scenarios(16, 23, ("cp.async", "atomic"))
    assert [n for n, _ in items] == list(rec)
    for name, sc in items:
        model = analyze(sc).metrics
        for metric, hw in rec[name].items():
            assert model.get(metric, 0) == hw, (name, metric)


def test_every_warp_instruction_of_a_shared_atomic_counts_once():
    probes = DOC["instruction_counters"]["probes"]
    assert len(probes) >= 40
    assert all(p["hardware"]["smsp__inst_executed_op_shared_atom.sum"] == 1 for p in probes)
    assert all(p["hardware"]["smsp__inst_executed_op_shared_ld.sum"] == 0 for p in probes)


def test_tma_sectors_of_boxes_that_start_inside_a_sector():
    """The model's sectors (each box row's 32-byte sectors) against the TMA's own counter."""
    recs = DOC["instruction_counters"]["tma_sectors"]
    checked = off = 0
    for r in recs:
        if r["sectors"] is None or r["probe"].startswith("tma2d baseline"):
            continue
        (bw, bh), (x0, _y0), e = r["box"], r["coord"], r["esize"]
        first = x0 * e
        model = ((first + bw * e - 1) // 32 - first // 32 + 1) * bh
        checked += 1
        off += model != r["sectors"]
    assert checked >= 60 and off <= 1       # one 48-byte box: 17 counted, 16 modelled


def test_tma_validate_run_on_the_h100_matches_the_model():
    """Device run 3: warpviz validate of the six TMA built-ins (LDS.128 and ldmatrix reads
    of every swizzle) and 8 random tma.load scenarios (seed 23): every recorded counter is
    the model's, the TMA's sectors counted row by row."""
    from viz.engine import analyze
    from viz.gpu.randomkinds import scenarios as kind_scenarios
    from viz.scenario import load

    rec = DOC["validate_tma"]["scenarios"]
    names = ["tma-swizzle-none", "tma-swizzle-32b", "tma-swizzle-64b", "tma-swizzle-128b", "tma-ldmatrix-none",
             "tma-ldmatrix-128b"]
    items = [(n, load(n)) for n in names] + kind_scenarios(8, 23, ("tma.load",))
    assert [n for n, _ in items] == list(rec)
    for name, sc in items:
        model = analyze(sc).metrics
        for metric, hw in rec[name].items():
            assert model.get(metric, 0) == hw, (name, metric)
