"""A trace is what the GPU ran, not what the PTX says (viz.trace.reconcile): the mapping of
every PTX memory instruction to the plain kernel's SASS, on real SASS (tests/data/sass:
nvcc 13.0, ptxas and nvdisasm -gp, made by tools/trace/sass_fixtures.py; with the tools
here the same is checked live), and the rewrite of recorded streams, on synthetic traces
whose counts follow from the engine's rules."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viz.trace import TraceError, tracefile
from viz.trace.analysis import analyze_trace, explain_trace, to_table
from viz.trace.ptx import parse
from viz.trace.reconcile import apply, parse_sass_lines, ptx_loop_depths, reconcile, split_address

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "sass"
LD, WF = "smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
ST, WFS = "smsp__inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"


def fixture(name: str):
    ptx = (DATA / f"{name}.ptx").read_text()
    parsed = parse(ptx)
    return ptx, parsed.instrs, reconcile(ptx, parsed.instrs, (DATA / f"{name}.gp.sass").read_text())


def states(mapping, instrs, function):
    return [mapping["instructions"][i.id].state for i in instrs if i.function == function]


# ---------------------------------------------------------------------------- the mapping, real SASS


def test_unrolled_sgemm_fuses_four_as_loads_into_each_lds128_and_keeps_bs_scalar():
    _ptx, instrs, m = fixture("sgemm_tile16")
    mine = [i for i in instrs if i.function == "sgemm_tile16"]
    info = {i.id: m["instructions"][i.id] for i in mine}
    loads = [i for i in mine if i.kind == "load" and i.space == "shared"]
    assert len(loads) == 32
    fused = [i for i in loads if info[i.id].state == "fused"]
    members = [i for i in loads if info[i.id].state == "member"]
    same = [i for i in loads if info[i.id].state == "same"]
    # As[ty][k..k+3]: four groups of four ld.shared.f32 at [%r7 + 16j .. 16j + 12], each one LDS.128
    assert [split_address(i.address) for i in fused] == [("%r7", 0), ("%r7", 16), ("%r7", 32), ("%r7", 48)]
    assert len(members) == 12 and len(same) == 16
    assert {split_address(i.address)[0] for i in same} == {"%r8"}          # Bs[k][tx]: 16 scalar LDS
    for f in fused:
        g = info[f.id]
        assert g.certain and g.width == 16 and g.ptx_width == 4 and len(g.group) == 4 and g.group[0] == f.id
        assert [split_address(next(i for i in mine if i.id == k).address)[1] for k in g.group] == \
            [split_address(f.address)[1] + 4 * j for j in range(4)]
        assert g.sass[0].startswith("LDS.128") and g.source_lines == (27,) * 4
        assert f"into one LDS.128 of 16 bytes a lane" in g.note and "source line 27" in g.note
    assert all(info[i.id].first in {f.id for f in fused} for i in members)
    # 32 PTX loads -> 20 SASS load instructions per tile step
    assert len(fused) + len(same) == 20
    assert m["certain"] and m["notes"] == []


def test_rolled_sgemm_runs_as_the_ptx_says():
    _ptx, instrs, m = fixture("sgemm_tile16")
    got = states(m, instrs, "sgemm_tile16_rolled")
    assert got == ["same"] * 7 and all(m["instructions"][i.id].certain for i in instrs)


def test_shared_reads_and_writes_of_consecutive_floats_fuse_and_the_volatile_control_does_not():
    _ptx, instrs, m = fixture("shared_fused")
    info = m["instructions"]
    quad = [i for i in instrs if i.function == "quad_read" and i.kind == "load" and i.space == "shared"]
    # the SASS names the first in program order ([%r+4]); the group starts at the lowest address
    first = next(i for i in quad if info[i.id].state == "fused")
    assert split_address(first.address)[1] == 0 and info[first.id].width == 16
    assert sorted(info[i.id].state for i in quad) == ["fused", "member", "member", "member"]
    pair = [i for i in instrs if i.function == "pair_write" and i.kind == "store" and i.space == "shared"]
    assert [info[i.id].state for i in pair] == ["fused", "member"] and info[pair[0].id].width == 8
    assert info[pair[0].id].sass[0].startswith("STS.64") and info[pair[0].id].source_lines == (23, 24)
    assert set(states(m, instrs, "quad_read_volatile")) == {"same"}


def test_kernels_with_the_same_register_names_each_find_their_own_group():
    """Two kernels of one module whose PTX is the same, registers included (NVIDIA's
    matrixMul sample compiled for two tile sizes is such a module): each fused group is
    made of its own function's loads."""
    _ptx, instrs, m = fixture("two_kernels")
    for fn in ("quad_a", "quad_b"):
        loads = [i for i in instrs if i.function == fn and i.kind == "load" and i.space == "shared"]
        info = [m["instructions"][i.id] for i in loads]
        assert sorted(v.state for v in info) == ["fused", "member", "member", "member"]
        assert {g for v in info for g in v.group} == {i.id for i in loads}
    assert m["certain"]


def _copies(instrs, m):
    """tile8_copies' shared loads in program order, cut into the k loop's three copies
    (16 loads each: nvcc's peeled tile step, then the two of the loop unrolled by 2)."""
    loads = sorted((i for i in instrs if i.function == "sgemm_tile8" and i.kind == "load" and i.space == "shared"),
                   key=lambda i: i.line_no)
    return [loads[16 * c:16 * c + 16] for c in range(3)]


def test_each_copy_of_a_peeled_and_unrolled_loop_fuses_its_own_loads():
    """MatrixMulCUDA<8>'s shape: three copies of the k loop read As[ty][k] through the same
    register at the same offsets; each copy's eight As loads are two LDS.128 of that copy
    (10 shared load instructions per tile step, not 16), found within the copy."""
    ptx, instrs, m = fixture("tile8_copies")
    info = m["instructions"]
    copies = _copies(instrs, m)
    assert len(copies[2]) == 16 and m["certain"] and m["notes"] == []
    lines = ptx.split("\n")
    for copy in copies:
        ids = {i.id for i in copy}
        fused = [i for i in copy if info[i.id].state == "fused"]
        assert [split_address(i.address)[1] for i in fused] == [0, 16]
        assert sorted(info[i.id].state for i in copy) == ["fused"] * 2 + ["member"] * 6 + ["same"] * 8
        for f in fused:
            g = info[f.id]
            assert set(g.group) <= ids and g.width == 16 and g.sass[0].startswith("LDS.128") and g.certain
            # no barrier or label between the group's first and last PTX line
            between = lines[min(g.ptx_lines) - 1:max(g.ptx_lines)]
            assert not any("bar.sync" in ln or ln.startswith("$L") for ln in between)
        same = [i for i in copy if info[i.id].state == "same"]
        assert len({split_address(i.address)[0] for i in same}) == 1 and len(fused) + len(same) == 10


def test_copies_that_no_barrier_or_label_separates_are_not_guessed_between():
    """The same SASS against PTX whose two unrolled copies are one straight stretch (their
    bar.sync gone): each offset has two candidate loads, so the fusion cannot be pinned
    down and stays uncertain, never a guess."""
    ptx, instrs, _ = fixture("tile8_copies")
    copies = _copies(instrs, None)
    lines = ptx.split("\n")
    lo, hi = copies[1][0].line_no, copies[2][-1].line_no
    for n in range(lo, hi):
        if "bar.sync" in lines[n - 1]:
            lines[n - 1] = "\t// (barrier taken out)"
    m = reconcile("\n".join(lines), instrs, (DATA / "tile8_copies.gp.sass").read_text())
    info = m["instructions"]
    assert sorted(info[i.id].state for i in copies[0])[:2] == ["fused", "fused"]
    for copy in copies[1:]:
        got = [info[i.id] for i in copy]
        assert {v.state for v in got} == {"same", "uncertain"} and not m["certain"]
        assert sum("copies of the same code that no barrier" in v.note for v in got) == 2


def test_ptx_segments_split_at_branch_targets_barriers_and_branches():
    from viz.trace.reconcile import ptx_segments

    lines = ["\tld.shared.f32 %f1, [%r1];", "\tbar.sync 0;", "\tld.shared.f32 %f2, [%r1+4];",
             "$L__BB0_1:", "\tld.shared.f32 %f3, [%r1+8];", "$L__unused:", "\tld.shared.f32 %f4, [%r1+12];",
             "\t@%p1 bra $L__BB0_1;", "\tld.shared.f32 %f5, [%r1+16];"]
    seg = ptx_segments(lines)
    assert seg[0] != seg[2] != seg[4] != seg[8]
    assert seg[4] == seg[6]                      # a label nothing branches to starts nothing
    assert len(set(seg)) == 4


def test_a_fusion_group_never_spans_a_write_of_its_address_register():
    """Two stretches of four loads from %r10 at offsets 0..12 with %r10 written between
    them: the LDS.128 made of the first four takes those, not the later ones."""
    ptx, instrs, _ = fixture("shared_fused")
    quad = [i for i in instrs if i.function == "quad_read" and i.kind == "load" and i.space == "shared"]
    reg = split_address(quad[0].address)[0]
    from viz.trace.reconcile import _writes

    lines = ptx.split("\n")
    lo, hi = min(i.line_no for i in quad), max(i.line_no for i in quad)
    assert not _writes(lines, reg, lo, hi)
    lines.insert(hi - 1, f"\tadd.s32 \t{reg}, {reg}, 4;")
    assert _writes(lines, reg, lo, hi + 1) and not _writes(lines, reg, lo, hi - 1)
    assert not _writes(["\tst.shared.f32 [%r1], %f1;"], "%r1", 0, 2)


def test_loops_ptxas_unrolled_again_fuse_per_iteration_or_say_they_are_uncertain():
    """softmax_row's two loops over partial[] (nvcc unrolled each by 4, with a remainder loop;
    ptxas unrolled the unrolled loop again, into copies of 4, 2 and 1 iterations):
    `for (w = 0; ...) s += partial[w]` reads partial+16j .. +16j+12 per iteration, and every
    copy reads an iteration's four floats with one LDS.128 from the first PTX line: a fused
    group, certain. `for (w = 1; ...) m = fmaxf(m, partial[w])` reads partial+16j+4 .. +16j+16:
    ptxas reads the aligned 16 bytes before (LDS.128 [UR6]) and the last float with an LDS of
    its own or inside the next LDS.128, so how many accesses run depends on which copies run:
    uncertain, and said why. The remainder loops run as the PTX has them; nothing is removed."""
    _ptx, instrs, m = fixture("softmax_row")
    info = m["instructions"]
    shared_loads = [i for i in instrs if i.kind == "load" and i.space == "shared"]
    by_line = {i.line_no: info[i.id] for i in shared_loads}
    assert sorted(by_line) == [126, 144, 146, 148, 151, 169, 281, 283, 285, 287, 304]
    # the sum loop: one LDS.128 per iteration in each of the 7 copies ptxas made
    fused = by_line[281]
    assert fused.state == "fused" and fused.certain and fused.width == 16 and len(fused.sass) == 7
    assert all(t.startswith("LDS.128") for t in fused.sass)
    assert fused.ptx_lines == (281, 283, 285, 287) and "in each of the 7 copies" in fused.note
    assert [by_line[n].state for n in (283, 285, 287)] == ["member"] * 3
    assert all(by_line[n].first == fused.group[0] for n in (283, 285, 287))
    # the max loop: uncertain, only in how its executions map (a recording where it never ran
    # does not depend on it), and its note says what ptxas did
    unc = [by_line[n] for n in (144, 146, 148, 151)]
    assert all(v.state == "uncertain" and not v.certain and v.runs_only for v in unc)
    assert "ptxas unrolled this loop again" in by_line[144].note and "which the trip count decides" in \
        by_line[144].note and "PTX line 151 of the same address register has SASS accesses" in by_line[144].note
    assert "are not its 4 bytes a lane" in by_line[151].note           # LDS.128 and LDS copies
    assert [by_line[n].state for n in (126, 169, 304)] == ["same"] * 3
    assert not any(v.state == "removed" for v in info.values()) and not m["certain"]
    assert "runs_only" not in fused.as_dict()        # the flag is apply's, not the file's


def test_a_device_function_that_ptxas_assembled_into_the_kernel_is_matched():
    _ptx, instrs, m = fixture("generic_atomic")
    assert m["certain"] and m["notes"] == []
    load_any = next(i for i in instrs if i.function != "generic_atomic")
    assert m["instructions"][load_any.id].state == "same" and m["instructions"][load_any.id].sass[0].startswith("LD.E")


def test_cp_async_keeps_both_operands():
    _ptx, instrs, m = fixture("cpasync_double")
    cps = [i for i in instrs if i.kind == "cp.async"]
    assert len(cps) == 4 and all(m["instructions"][i.id].state == "same" for i in cps)


ATOMIC_FORMS = {
    # kernel: (state, leader, shared rule, SASS op)
    "s_uniform_one_unused": ("same", "", "words", "atom"),          # ATOMS.POPC.INC on [UR]: all lanes, 1 word
    "s_uniform_one_used": ("aggregated", "highest", "lanes", "atom"),
    "s_uniform_v_unused": ("aggregated", "highest", "lanes", "atom"),   # REDUX.SUM, one ATOMS.ADD
    "s_uniform_v_used": ("aggregated", "lane31-full-warp", "lanes", "atom"),
    "s_lane_one_unused": ("same", "", "words", "atom"),
    "s_lane_v_used": ("same", "", "lanes", "atom"),
    "g_uniform_one_unused": ("aggregated", "highest", "", "red"),
    "g_uniform_v_used": ("aggregated", "lane31-full-warp", "", "atom"),
    "g_lane_one_unused": ("same", "", "", "red"),
    "g_lane_v_used": ("same", "", "", "atom"),
    "g_block_one_unused": ("aggregated", "highest", "", "red"),       # g[blockIdx.x]: uniform too
}


@pytest.mark.parametrize("kernel", sorted(ATOMIC_FORMS))
def test_atomics_are_mapped_to_the_form_ptxas_emits(kernel):
    _ptx, instrs, m = fixture("atomic_forms")
    atom = [i for i in instrs if i.function == kernel and i.opcode.startswith(("atom", "red"))]
    assert len(atom) == 1
    info = m["instructions"][atom[0].id]
    assert (info.state, info.leader, info.atomic_rule, info.sass_op) == ATOMIC_FORMS[kernel]
    assert info.certain


def test_loops_that_wait_on_memory_are_said_to_depend_on_timing():
    """cooperative groups' two-warp tile waits on its barrier word with an ld.acquire spin,
    spin_flag on a volatile shared flag: how often those loads run depends on the other
    warps' timing (the H100 ran multi_warp_cg_reduce's spin 286 times, the recording 190),
    so they are not certain and say why; volatile_sum's fixed 8-step loop is no wait, and
    nothing else changes."""
    ptx, instrs, m = fixture("cg_wait")
    info = m["instructions"]
    unsure = {i.ptx.split()[0] for i in instrs if not info[i.id].certain}
    assert unsure == {"ld.acquire.cta.u32", "ld.volatile.shared.u32"} and not m["certain"]
    waits = [i for i in instrs if not info[i.id].certain]
    assert [i.function for i in waits] == ["tile64_sum", "spin_flag"]
    for i in waits:
        assert info[i.id].state == "same" and "waits for memory other threads write" in info[i.id].note
        assert f"PTX lines {i.line_no}\u2013" in info[i.id].note
    assert all(info[i.id].certain for i in instrs if i.function == "volatile_sum")
    assert [info[i.id].state for i in instrs if i.opcode.startswith(("atom", "red")) and i.space == "generic"] == \
        ["aggregated", "same", "aggregated"]


def test_ptx_wait_loops_follow_the_read_value_to_the_branch():
    from viz.trace.reconcile import ptx_wait_loops

    def body(read, cond):
        return ("\n".join([".visible .entry k(", ")", "{", "$L__BB0_1:", f"\t{read}", "\tadd.s32 %r2, %r1, 1;",
                            "\tand.b32 %r3, %r2, 7;", f"\tsetp.eq.s32 %p1, {cond}, 0;", "\t@%p1 bra $L__BB0_1;",
                            "\tst.global.u32 [%rd1], %r9;", "\tret;", "}"]))
    spin = ptx_wait_loops(body("ld.acquire.gpu.u32 %r1, [%rd2];", "%r3"))
    assert sorted(spin) == [5, 6, 7, 8, 9] and spin[5] == (5, 9, "ld.acquire.gpu.u32 %r1, [%rd2];")
    assert ptx_wait_loops(body("ld.volatile.global.u32 %r1, [%rd2];", "%r3"))
    assert ptx_wait_loops(body("atom.global.add.u32 %r1, [%rd2], 1;", "%r3"))
    assert not ptx_wait_loops(body("ld.acquire.gpu.u32 %r1, [%rd2];", "%r9"))    # the branch does not use it
    assert not ptx_wait_loops(body("ld.global.u32 %r1, [%rd2];", "%r3"))         # a plain load: data, not a wait


def test_without_nvdisasm_every_instruction_is_uncertain_and_says_why():
    ptx, instrs, _ = fixture("sgemm_tile16")
    m = reconcile(ptx, instrs, None)
    assert not m["certain"] and m["tool"] is None
    assert {v.state for v in m["instructions"].values()} == {"uncertain"}
    assert "nvdisasm is not installed" in m["notes"][0]


def test_sass_parser_reads_ptx_lines_widths_and_uniform_addresses():
    sass = parse_sass_lines((DATA / "sgemm_tile16.gp.sass").read_text())
    unrolled = sass["sgemm_tile16"]
    lds = [a for a in unrolled if a.cls == "load" and a.space == "shared"]
    assert sorted(a.width for a in lds) == [4] * 16 + [16] * 4
    assert all(a.ptx_line > 0 for a in unrolled)
    assert [a.depth for a in lds] == [1] * 20               # inside the tile loop
    forms = parse_sass_lines((DATA / "atomic_forms.gp.sass").read_text())
    atoms = [a for a in forms["s_uniform_one_unused"] if a.cls == "atomic"]
    assert [(a.opcode, a.uniform, a.pred) for a in atoms] == [("ATOMS.POPC.INC.32", True, "")]


def test_ptx_loop_depths_find_the_tile_loop_and_the_rolled_k_loop():
    ptx, instrs, _ = fixture("sgemm_tile16")
    d = ptx_loop_depths(ptx)
    unrolled = [d[i.line_no] for i in instrs if i.function == "sgemm_tile16"]
    rolled = [d[i.line_no] for i in instrs if i.function == "sgemm_tile16_rolled"]
    assert unrolled == [1] * 36 + [0]                # the tile loop around everything but C's store
    assert rolled == [1, 1, 1, 1, 2, 2, 0]           # the k loop inside the tile loop


def test_an_access_moved_out_of_a_loop_is_uncertain():
    """A PTX load in a loop whose only SASS copy is outside every loop: the GPU may run it
    less often than the trace records, so the trace says so."""
    ptx, instrs, _ = fixture("shared_fused")
    sass = (DATA / "shared_fused.gp.sass").read_text()
    # pretend the PTX runs quad_read's global store inside a loop: wrap it in a label and a back branch
    lines = ptx.split("\n")
    store = next(i for i in instrs if i.function == "quad_read" and i.kind == "store" and i.space == "global")
    k = store.line_no - 1
    lines[k] = "$L__fake:\n" + lines[k] + "\n\t@%p1 bra $L__fake;"
    shifted = "\n".join(lines)
    # line numbers after the store move by 2; the store itself is on line + 1
    moved = parse(shifted)
    sass2 = _shift_ptx_lines(sass, after=store.line_no - 1, by=1, upto=store.line_no, by_after=2)
    m = reconcile(shifted, moved.instrs, sass2)
    got = m["instructions"][next(i.id for i in moved.instrs if i.ptx == store.ptx)]
    assert got.state == "uncertain" and "out of a loop" in got.note


def _shift_ptx_lines(sass: str, after: int, by: int, upto: int, by_after: int) -> str:
    import re

    def sub(m):
        n = int(m.group(1))
        if n > upto:
            n += by_after
        elif n > after:
            n += by
        return f'line {n}'
    return re.sub(r'(?<=\.nv_debug_ptx_txt", )line (\d+)', sub, sass)


@pytest.mark.skipif(not os.environ.get("WARPVIZ_CUDA_SAMPLES"), reason="set WARPVIZ_CUDA_SAMPLES to a cuda-samples "
                    "checkout to check NVIDIA's matrixMul sample")
@pytest.mark.parametrize("tile,loads,sass,wide", [(32, 64, 40, 8), (16, 32, 20, 4), (8, 48, 30, 6)])
def test_matrixmul_sample_fuses_as_the_h100_counts(tmp_path, tile, loads, sass, wide):
    """NVIDIA's matrixMul sample (not shipped): MatrixMulCUDA<32> reads 64 scalar floats
    from shared memory per tile step in the PTX; ptxas makes 8 LDS.128 + 32 LDS of them,
    the 40 shared load instructions the H100 counts. MatrixMulCUDA<8>'s loop is in three
    copies (peeled, then unrolled by 2) of 16 loads, each 2 LDS.128 + 8 LDS."""
    import subprocess

    from viz.toolchain.compile import find_tool
    from viz.trace.build import assemble
    from viz.trace.reconcile import sass_with_ptx_lines

    if not (find_tool("nvcc") and find_tool("nvdisasm")):
        pytest.skip("needs nvcc and nvdisasm")
    src = Path(os.environ["WARPVIZ_CUDA_SAMPLES"]) / "Samples" / "0_Introduction" / "matrixMul" / "matrixMul.cu"
    text = src.read_text()
    start = text.index("template <int BLOCK_SIZE> __global__ void MatrixMulCUDA")
    body = text[start:text.index("\n}\n", start) + 3]
    cu = tmp_path / "mm.cu"
    cu.write_text(body + f"template __global__ void MatrixMulCUDA<{tile}>(float*, float*, float*, int, int);\n")
    subprocess.run([find_tool("nvcc"), "-ptx", "-arch=sm_90", "-O3", "-lineinfo", "-o", str(tmp_path / "mm.ptx"),
                    str(cu)], check=True, timeout=600)
    ptx = (tmp_path / "mm.ptx").read_text()
    instrs = parse(ptx).instrs
    m = reconcile(ptx, instrs, sass_with_ptx_lines(assemble(ptx)))
    lds = [m["instructions"][i.id] for i in instrs if i.kind == "load" and i.space == "shared"]
    assert len(lds) == loads and m["certain"]
    assert sum(v.state in ("same", "fused") for v in lds) == sass
    assert sum(v.state == "fused" and v.width == 16 for v in lds) == wide


# ---------------------------------------------------------------------------- the rewrite, synthetic traces

SHARED_AS, SHARED_BS = 0, 1024


def _table(instrs, function):
    mine = [i for i in instrs if i.function == function]
    ids = {i.id: k for k, i in enumerate(mine)}
    out = []
    for k, i in enumerate(mine):
        d = i.as_dict()
        d["id"] = k
        out.append(d)
    return mine, ids, out


def _sgemm_trace(steps: int, variant: str = "sgemm_tile16"):
    """One 16x16 block of the tiled SGEMM over ``steps`` tile steps, as the recorder would
    write it from the PTX: per warp, every PTX memory instruction in program order with each
    lane's address (As at shared byte 0, Bs at 1024; A, B and C in global memory)."""
    ptx, instrs, m = fixture("sgemm_tile16")
    mine, ids, table = _table(instrs, variant)
    n = 16 * steps
    heads, addrs = [], []
    full = 0xFFFFFFFF
    A, B, C = 1 << 20, 2 << 20, 3 << 20
    shared_stores = [i for i in mine if i.kind == "store" and i.space == "shared"]
    global_loads = [i for i in mine if i.kind == "load" and i.space == "global"]
    for w in range(8):
        tid = w * 32 + np.arange(32)
        tx, ty = tid % 16, tid // 16
        for t in range(steps):
            for i in mine:
                reg, off = split_address(i.address)
                if i.space == "global" and i.kind == "load":
                    a = (A + 4 * (ty * n + t * 16 + tx)) if i is global_loads[0] else (B + 4 * ((t * 16 + ty) * n + tx))
                elif i.space == "shared" and i.kind == "store":
                    a = (SHARED_AS if i is shared_stores[0] else SHARED_BS) + ty * 64 + tx * 4
                elif i.space == "shared":
                    if variant == "sgemm_tile16" and off % 64 == 0 and reg != "%r7":
                        a = SHARED_BS + tx * 4 + off                 # Bs[k][tx], k = off / 64
                    else:
                        a = SHARED_AS + ty * 64 + off                # As[ty][k], k = off / 4
                else:
                    continue
                sh = full if i.space == "shared" else 0
                heads.append([ids[i.id], 0, w, full, full, sh, full - sh, 0])
                addrs.append(np.asarray(a, np.uint64))
        store = next(i for i in mine if i.space == "global" and i.kind == "store")
        heads.append([ids[store.id], 0, w, full, full, 0, full, 0])
        addrs.append((C + 4 * (ty * n + tx)).astype(np.uint64))
    header = {"title": variant, "kernel": variant, "launch": {"block": [16, 16, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    trace = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32),
                                                   np.array(addrs, np.uint64)))
    local = {"tool": m["tool"], "notes": m["notes"],
             "instructions": {ids[k]: _renumber(v, ids) for k, v in m["instructions"].items() if k in ids}}
    return trace, local


def _renumber(info, ids):
    from dataclasses import replace

    return replace(info, group=tuple(ids[g] for g in info.group),
                   first=None if info.first is None else ids[info.first])


def test_sgemm_tile_step_counts_20_shared_loads_and_24_wavefronts_per_warp_after_the_rewrite():
    steps = 2
    trace, m = _sgemm_trace(steps)
    before = analyze_trace(trace).metrics
    assert (before[LD], before[WF]) == (32 * 8 * steps, 32 * 8 * steps)      # the PTX's story
    after_trace = tracefile.check(apply(trace, m))
    after = analyze_trace(after_trace).metrics
    # 4 LDS.128 of As (lanes 0-15 one row, 16-31 the next: the pair rule makes 2 phases,
    # 1 wavefront each) + 16 LDS of Bs (1 wavefront): 20 instructions, 24 wavefronts
    assert (after[LD], after[WF]) == (20 * 8 * steps, 24 * 8 * steps)
    assert after["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    assert {k: v for k, v in after.items() if k not in (LD, WF)} == {k: v for k, v in before.items() if k not in (LD, WF)}
    # the whole launch of the issue (64 blocks, 8 tile steps): 131,072 -> 81,920 and 98,304
    assert 32 * 8 * 8 * 64 == 131_072 and 20 * 8 * 8 * 64 == 81_920 and 24 * 8 * 8 * 64 == 98_304
    fused = [i for i in after_trace.instructions if (i.get("sass") or {}).get("state") == "fused"]
    assert len(fused) == 4 and all(i["width"] == 16 and i["ptx_width"] == 4 for i in fused)
    assert after_trace.header["sass_map"]["certain"] and len(after_trace.header["sass_map"]["fused"]) == 4


def test_a_peeled_and_unrolled_tile8_loop_counts_what_the_h100_counts_after_the_rewrite():
    """tile8_copies run as the recorder writes it: per warp (8x8 block, two warps) the peeled
    copy, then the unrolled pair of copies ``pairs`` times. The H100 counted MatrixMulCUDA<8>
    (the same loop) at 20,480 shared load instructions and 24,576 wavefronts for 32,768 and
    32,768 in the PTX: 10 and 12 per warp and tile step, not 16 and 16."""
    _ptx, instrs, m = fixture("tile8_copies")
    copies = _copies(instrs, m)
    as_reg = split_address(next(i for i in copies[0] if m["instructions"][i.id].state == "fused").address)[0]
    table = [i.as_dict() for i in instrs]
    assert [r["id"] for r in table] == list(range(len(table)))
    pairs, full = 3, 0xFFFFFFFF
    heads, addrs = [], []
    for w in range(2):
        tid = w * 32 + np.arange(32)
        tx, ty = tid % 8, tid // 8
        for c in [0] + [1, 2] * pairs:
            for i in copies[c]:
                reg, off = split_address(i.address)
                a = (ty * 32 + off) if reg == as_reg else (256 + tx * 4 + off)
                heads.append([i.id, 0, w, full, full, full, 0, 0])
                addrs.append(np.asarray(a, np.uint64))
    header = {"title": "tile8", "kernel": "sgemm_tile8", "launch": {"block": [8, 8, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    trace = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs, np.uint64)))
    steps = 2 * (1 + 2 * pairs)                      # warp tile steps
    before = analyze_trace(trace).metrics
    assert (before[LD], before[WF]) == (16 * steps, 16 * steps)
    out = tracefile.check(apply(trace, m))
    after = analyze_trace(out).metrics
    assert (after[LD], after[WF]) == (10 * steps, 12 * steps)
    assert out.header["sass_map"]["certain"] and len(out.header["sass_map"]["fused"]) == 6
    # the whole MatrixMulCUDA<8> launch of the H100 run: 64 blocks x 2 warps x 16 tile steps
    assert (10 * 64 * 2 * 16, 12 * 64 * 2 * 16) == (20_480, 24_576)


def _softmax_passes(nw: int) -> tuple[list[int], list[int], int, int]:
    """softmax_row's PTX (tests/data/sass/softmax_row.ptx) for a block of ``nw`` warps, per
    warp: (byte offsets in partial[] of the max loop's unrolled iterations, of its remainder
    loop's loads, the sum loop's unrolled iterations, its remainder loop's loads)."""
    max_main, max_rest, r105 = [], [], 1
    if 32 * nw >= 64:                                         # setp.lt.u32 %p9, %r3, 64
        r8 = max(nw, 2)
        r107 = (r8 - 1) & 3
        if r8 - 2 >= 3:                                       # $L__BB0_8, until %r102 == 1
            r102, r103 = r8 - r107, 0
            while True:
                max_main.append(r103)
                r105, r102, r103 = r105 + 4, r102 - 4, r103 + 16
                if r102 == 1:
                    break
        max_rest = [4 * (r105 + j) for j in range(r107)]      # $L__BB0_11
    r114, r112 = nw & 3, 0
    sum_main = []
    if nw - 1 >= 3:                                           # $L__BB0_20, until %r111 == 0
        r111, r109 = nw - r114, 0
        while r111:
            sum_main.append(r109)
            r112, r109, r111 = r112 + 4, r109 + 16, r111 - 4
    return max_main, max_rest, sum_main, [4 * (r112 + j) for j in range(r114)]


def _softmax_trace(nw: int, partial: int = 0):
    """The shared accesses softmax_row's PTX records for one block of ``nw`` warps, partial[]
    at shared byte ``partial``: lane 0 stores its warp's partial twice, every lane reads
    them back in the loops (one address for the whole warp)."""
    _ptx, instrs, m = fixture("softmax_row")
    table = [i.as_dict() for i in instrs]
    assert [r["id"] for r in table] == list(range(len(table)))
    line = {r["line_no"]: r["id"] for r in table}
    max_main, max_rest, sum_main, sum_rest = _softmax_passes(nw)
    full = 0xFFFFFFFF
    heads, addrs = [], []

    def rec(ln, off, w, pred=full):
        heads.append([line[ln], 0, w, full, pred, full, 0, 0])
        addrs.append(np.full(32, partial + off, np.uint64))

    for w in range(nw):
        rec(120, 4 * w, w, pred=1)
        rec(126, 0, w)
        for base in max_main:
            for ln, off in ((144, 4), (146, 8), (148, 12), (151, 16)):
                rec(ln, base + off, w)
        for off in max_rest:
            rec(169, off, w)
        rec(258, 4 * w, w, pred=1)
        for base in sum_main:
            for ln, off in ((281, 0), (283, 4), (285, 8), (287, 12)):
                rec(ln, base + off, w)
        for off in sum_rest:
            rec(304, off, w)
    header = {"title": "softmax_row", "kernel": "softmax_row", "launch": {"block": [32 * nw, 1, 1],
              "grid": [1, 1, 1]}, "instructions": table, "complete": True}
    trace = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs, np.uint64)))
    return trace, m, line


def test_softmax_row_as_the_h100_ran_it_counts_what_nsight_compute_counts_after_the_rewrite():
    """The shipped launch: 4 warps a block, so the max loop runs only its remainder loop
    (partial[1..3], 3 LDS) and the sum loop one unrolled iteration (partial[0..3]: one
    LDS.128, 2 wavefronts: every lane reads the same 16 bytes, the pair rule's 2 phases).
    Per warp 5 shared load instructions and 6 wavefronts: the H100 counted 120 and 144 for
    the 24 warps of 6 blocks. The max loop's unrolled body never ran, so its uncertain
    mapping leaves the trace certain, and its loads say why."""
    trace, m, line = _softmax_trace(4)
    before = analyze_trace(trace).metrics
    assert (before[LD], before[WF]) == (8 * 4, 8 * 4)
    out = tracefile.check(apply(trace, m))
    after = analyze_trace(out).metrics
    assert (after[LD], after[WF], after[ST], after[WFS]) == (5 * 4, 6 * 4, 2 * 4, 2 * 4)
    assert (after[LD] * 6, after[WF] * 6) == (120, 144)                  # the whole launch: 6 blocks
    smap = out.header["sass_map"]
    assert smap["certain"] and smap["uncertain"] == [] and smap["fused"] == [line[281]]
    for n in (144, 146, 148, 151):
        info = out.instructions[line[n]]["sass"]
        assert info["state"] == "uncertain" and not info["certain"]
        assert info["note"].endswith("it did not run in this recording, so the trace does not depend on it")
    fused = out.instructions[line[281]]
    assert fused["width"] == 16 and fused["sass"]["certain"]
    rows = np.flatnonzero(out.instr == line[281])
    assert rows.size == 4 and (out.addresses(rows) == 0).all()            # partial+0, 16 bytes
    text = to_table(analyze_trace(out))
    assert "in each of the 7 copies of this code in the SASS" in text and "SASS: not certain for" not in text


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 32))
def test_softmax_row_is_certain_exactly_where_the_restructured_loop_did_not_run(nw):
    """Any block size: the sum loop's unrolled iterations become one LDS.128 each (2
    wavefronts), its remainder loop's loads stay; the max loop's loads stay as recorded,
    and the trace is not certain exactly when its unrolled body ran (then those 4 loads,
    and only they, are listed as uncertain)."""
    trace, m, line = _softmax_trace(nw)
    out = tracefile.check(apply(trace, m))
    after = analyze_trace(out).metrics
    max_main, max_rest, sum_main, sum_rest = _softmax_passes(nw)
    per_warp = 1 + 4 * len(max_main) + len(max_rest)                  # as recorded: 1 wavefront each
    assert after[LD] == nw * (per_warp + len(sum_main) + len(sum_rest))
    assert after[WF] == nw * (per_warp + 2 * len(sum_main) + len(sum_rest))
    smap = out.header["sass_map"]
    ran = bool(max_main)
    assert smap["uncertain"] == (sorted(line[n] for n in (144, 146, 148, 151)) if ran else [])
    assert smap["certain"] == (not ran)
    assert smap["fused"] == [line[281]] and ran == (nw >= 5)


def test_a_fusion_in_unrolled_copies_is_checked_per_execution_like_any_other():
    """partial[] 4 bytes past a 16-byte boundary (no real kernel: ptxas knows the array's
    alignment): the sum loop's groups would start unaligned, which an LDS.128 cannot do, so
    the mapping is not borne out: the loads stay as recorded and say why."""
    trace, m, line = _softmax_trace(4, partial=4)
    out = apply(trace, m)
    info = out.instructions[line[281]]["sass"]
    assert info["state"] == "uncertain" and "a first address is not a multiple of 16" in info["note"]
    assert (out.instr == line[283]).sum() == 4 and not out.header["sass_map"]["certain"]
    assert line[281] in out.header["sass_map"]["uncertain"]
    assert analyze_trace(out).metrics[LD] == analyze_trace(trace).metrics[LD]


def test_a_mapping_that_changed_no_record_can_be_undone_to_map_anew():
    """tools/trace/reconcile_shipped.py --again: a trace whose mapping left every record as
    recorded (only `same` and `uncertain`) comes back exactly as recorded, header and arrays,
    and maps as a fresh recording does; one whose mapping rewrote records does not."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reconcile_shipped", ROOT / "tools" / "trace" / "reconcile_shipped.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    trace, m, _line = _softmax_trace(4, partial=4)         # the sum loop's fusion is refused: no record changes
    kinds = [i["kind"] for i in trace.instructions]
    mapped = tracefile.check(apply(trace, m))
    assert {i["sass"]["state"] for i in mapped.instructions} == {"same", "uncertain"}
    back = tracefile.check(tool.as_recorded(mapped, kinds))
    assert back.header == trace.header
    for name in ("instr", "block", "warp", "active", "pred", "shared", "global_", "base", "offset", "flags"):
        assert np.array_equal(getattr(back, name), getattr(trace, name)), name
    assert tracefile.check(apply(back, m)).header == mapped.header
    fused = tracefile.check(apply(_softmax_trace(4)[0], m))
    assert tool.as_recorded(fused, kinds) is None and tool.as_recorded(mapped, kinds[:-1]) is None


def test_the_rewritten_trace_round_trips_and_analyze_names_the_fusion(tmp_path):
    trace, m = _sgemm_trace(1)
    out = tmp_path / "s.wvtrace"
    tracefile.save(tracefile.check(apply(trace, m)), out)
    back = tracefile.load(out)
    an = analyze_trace(back)
    text = to_table(an)
    assert "SASS: ptxas fused 4 PTX loads of 4 bytes (PTX lines" in text
    # the members the GPU does not run on their own are listed with --all
    assert "fused by ptxas into instruction" not in text
    assert "fused by ptxas into instruction" in to_table(an, never_executed=True)
    d = next(a for a in an.per_access() if (a.sass or {}).get("state") == "fused")
    assert d.access_bytes == 16 and d.ptx_width == 4 and d.executed == 8
    rows = explain_trace(d)
    sass = [r for r in rows if r[0] == "SASS"]
    assert sass and sass[0][1] == "LDS.128" and "into this one access of 16 bytes" in sass[0][2]
    assert not any((a.sass or {}).get("state") == "member" for a in an.per_access())
    member = next(a for a in an.per_access(never_executed=True) if (a.sass or {}).get("state") == "member")
    assert member.executed == 0 and member.sass["first"] == d.index
    assert member.sass["first_number"] == d.number


def test_a_fusion_the_records_do_not_bear_out_stays_as_recorded_and_says_why():
    trace, m = _sgemm_trace(1)
    first = next(k for k, v in m["instructions"].items() if v.state == "fused")
    second = m["instructions"][first].group[1]
    rows = np.flatnonzero(trace.instr == second)
    trace.offset[rows[3], 5] += 64           # one lane of one warp reads another word
    after = apply(trace, m)
    info = after.instructions[first]["sass"]
    assert info["state"] == "uncertain" and not info["certain"]
    assert "is not 4 bytes after its first" in info["note"] and "block 0 warp 3" in info["note"]
    assert after.instructions[first]["width"] == 4
    assert (after.instr == second).sum() == 8                   # the member keeps its records
    assert not after.header["sass_map"]["certain"] and first in after.header["sass_map"]["uncertain"]


def test_removed_split_and_aggregated_records():
    from viz.trace.reconcile import SassInfo

    full = 0xFFFFFFFF
    table = [{"id": k, "line_no": k + 1, "ptx": p, "function": "k", "opcode": o, "kind": kind, "op": op,
              "space": sp, "width": w, "predicate": "", "address": "%r1", "operand": 0, "file": "k.cu", "line": 3}
             for k, (p, o, kind, op, sp, w) in enumerate([
                 ("ld.shared.f32 %f1, [%r1];", "ld.shared.f32", "load", "load", "shared", 4),
                 ("ld.shared.v2.f32 {%f1, %f2}, [%r1];", "ld.shared.v2.f32", "load", "load", "shared", 8),
                 ("atom.shared.add.u32 %r2, [%r1], %r3;", "atom.shared.add.u32", "atomic", "load", "shared", 4),
                 ("atom.global.add.u32 %r2, [%rd1], %r3;", "atom.global.add.u32", "atomic", "load", "global", 4)])]
    lane = np.arange(32, dtype=np.uint64)
    heads = [[0, 0, 0, full, full, full, 0, 0], [1, 0, 0, full, full, full, 0, 0],
             [2, 0, 0, full, full, full, 0, 0], [2, 0, 1, 0xFFFF, 0xFFFF, 0xFFFF, 0, 0],
             [3, 0, 0, full, full, 0, full, 0]]
    addrs = [lane * 4, lane * 8, np.full(32, 64, np.uint64), np.where(lane < 16, 64, 0).astype(np.uint64),
             np.full(32, 1 << 20, np.uint64)]
    header = {"title": "t", "kernel": "k", "launch": {"block": [64, 1, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    trace = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs, np.uint64)))
    m = {"tool": "nvdisasm -gp", "notes": [], "instructions": {
        0: SassInfo("removed", True, ptx_width=4, note="ptxas removed it"),
        1: SassInfo("split", True, ("LDS R1, [R2]", "LDS R3, [R2+0x4]"), width=4, ptx_width=8, parts=2, note="split"),
        2: SassInfo("aggregated", True, ("@!P0 ATOMS.ADD", "@P1 ATOMS.ADD"), width=4, ptx_width=4,
                    leader="lane31-full-warp", atomic_rule="lanes", sass_op="atom", note="agg"),
        3: SassInfo("aggregated", True, ("@P0 REDG.E.ADD",), width=4, ptx_width=4, leader="highest", sass_op="red",
                    note="agg")}}
    before = analyze_trace(trace)
    assert before.other_metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] == 32 + 16
    after = tracefile.check(apply(trace, m))
    assert (after.instr == 0).sum() == 0                              # removed
    split = np.flatnonzero(after.instr == 1)
    assert split.size == 2 and after.instructions[1]["width"] == 4 and after.instructions[1]["ptx_width"] == 8
    assert int(after.base[split[1]]) - int(after.base[split[0]]) == 4
    agg = np.flatnonzero(after.instr == 2)
    assert [int(p) for p in after.pred[agg]] == [1 << 31, 0xFFFF]      # full warp: lane 31; half a warp: every lane
    red = np.flatnonzero(after.instr == 3)
    assert [int(p) for p in after.pred[red]] == [1 << 31] and after.instructions[3]["kind"] == "reduction"
    an = analyze_trace(after)
    o = an.other_metrics
    assert o["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] == 1 + 16
    assert o["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"] == 0 + 15
    # 2 executions, and the whole warp also runs the every-lane fallback ATOMS with its lanes
    # off, which Nsight Compute counts (H100: 2 a warp for a whole warp)
    assert o["smsp__inst_executed_op_shared_atom.sum"] == 2 + 1
    assert (o["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"], o["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"],
            o["smsp__inst_executed_op_global_red.sum"]) == (1, 1, 1)
    a = analyze_trace(after).metrics
    # the split v2 load: two LDS of 4 bytes at lane*8 and lane*8 + 4: 2 wavefronts each
    assert (a[LD], a[WF]) == (2, 4)


def test_an_aggregated_atomic_whose_lanes_are_on_several_addresses_is_uncertain():
    from viz.trace.reconcile import SassInfo

    full = 0xFFFFFFFF
    table = [{"id": 0, "line_no": 1, "ptx": "atom.shared.add.u32 %r2, [%r1], 1;", "function": "k",
              "opcode": "atom.shared.add.u32", "kind": "atomic", "op": "load", "space": "shared", "width": 4,
              "predicate": "", "address": "%r1", "operand": 0, "file": "k.cu", "line": 3}]
    header = {"title": "t", "kernel": "k", "launch": {"block": [32, 1, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    trace = tracefile.from_records(header, np.array([[0, 0, 0, full, full, full, 0, 0]], np.uint32),
                                   (np.arange(32, dtype=np.uint64) * 4)[None, :])
    m = {"tool": "t", "notes": [], "instructions": {0: SassInfo("aggregated", True, ("@P0 ATOMS.ADD",), width=4,
                                                                ptx_width=4, leader="highest", note="agg")}}
    after = apply(trace, m)
    assert after.instructions[0]["sass"]["state"] == "uncertain"
    assert "several addresses" in after.instructions[0]["sass"]["note"] and int(after.pred[0]) == full


def test_shared_atomic_wavefronts_follow_the_scenario_kinds_rules():
    """Traced shared atomics are counted as the scenario kind counts them
    (viz.kinds.atomics): ATOMS.POPC.INC by the busiest bank's distinct words, the rest
    lane by lane. 8 words of bank 0, 4 lanes each: 8 and 32 wavefronts (H100 probes)."""
    full = 0xFFFFFFFF
    addr = (np.arange(32, dtype=np.uint64) // 4) * 128
    for opcode, ptx, rule, want in [("atom.shared.add.u32", "atom.shared.add.u32 %r2, [%r1], 1;", "words", 8),
                                    ("atom.shared.add.u32", "atom.shared.add.u32 %r2, [%r1], %r5;", "lanes", 32)]:
        table = [{"id": 0, "line_no": 1, "ptx": ptx, "function": "k", "opcode": opcode, "kind": "atomic",
                  "op": "load", "space": "shared", "width": 4, "predicate": "", "address": "%r1", "operand": 0,
                  "file": "k.cu", "line": 3}]
        header = {"title": "t", "kernel": "k", "launch": {"block": [32, 1, 1], "grid": [1, 1, 1]},
                  "instructions": table, "complete": True}
        t = tracefile.from_records(header, np.array([[0, 0, 0, full, full, full, 0, 0]], np.uint32), addr[None, :])
        an = analyze_trace(t)
        assert an.other_metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] == want
        assert an.other_metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"] == want - 1
        assert an.per_access()[0].atomic_rule == rule
        assert an.metrics[WF] == 0                      # not in the ten


def test_generic_atomics_on_shared_memory_count_as_shared_atomic_wavefronts():
    """cooperative groups' tile barrier: generic ATOMs whose addresses are in shared memory.
    Their shared lanes cost shared atomic wavefronts by the shared atomics' rules (a generic
    ATOM serves lanes on one word one by one), their global lanes global atomic requests
    and sectors; no ATOMS/ATOMG/RED instruction is counted. multi_warp_cg_reduce on the
    H100: 144 of its 146 atom wavefronts are such one-lane ATOMs."""
    from viz.trace.analysis import GLOBAL_ATOMIC_METRICS, SHARED_ATOM_WAVEFRONTS

    _ptx, instrs, m = fixture("cg_wait")
    mine, ids, table = _table(instrs, "tile64_sum")
    local = {"tool": m["tool"], "notes": [], "instructions": {ids[k]: _renumber(v, ids)
                                                                 for k, v in m["instructions"].items() if k in ids}}
    atom_or = next(ids[i.id] for i in mine if i.opcode.startswith("atom"))
    red_and = [ids[i.id] for i in mine if i.opcode.startswith("red")]
    full, lo16 = 0xFFFFFFFF, 0x0000FFFF
    word, glob = 0x40, 1 << 20
    lanes = np.arange(32)
    heads = [[atom_or, 0, 0, full, 1, 1, 0, 0],                       # one lane, shared: 1 wavefront
             [atom_or, 0, 1, full, full, lo16, full - lo16, 0],       # 16 lanes on one shared word + 16 global
             [red_and[1], 0, 2, full, full, full, 0, 0]]              # aggregated: the highest lane only
    addrs = [np.full(32, word, np.uint64),
             np.where(lanes < 16, word, glob + 4 * (lanes - 16)).astype(np.uint64),
             np.full(32, word, np.uint64)]
    header = {"title": "cg", "kernel": "tile64_sum", "launch": {"block": [128, 1, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    trace = tracefile.check(tracefile.from_records(header, np.array(heads, np.uint32), np.array(addrs)))
    out = tracefile.check(apply(trace, local))
    assert out.instructions[red_and[1]]["kind"] == "atomic"           # the SASS is an ATOM (RZ result)
    other = analyze_trace(out).other_metrics
    assert other[SHARED_ATOM_WAVEFRONTS] == 1 + 16 + 1
    req, sec = GLOBAL_ATOMIC_METRICS["atomic"]
    assert (other[req], other[sec]) == (1, 2)                        # 16 consecutive words: 2 sectors
    assert other.get("smsp__inst_executed_op_shared_atom.sum", 0) == 0
    assert other.get("smsp__sass_inst_executed_op_global_atom.sum", 0) == 0


def test_hostile_sass_entries_are_refused(tmp_path):
    trace, m = _sgemm_trace(1)
    t = apply(trace, m)
    t.header["instructions"][5]["sass"] = dict(t.header["instructions"][5]["sass"], group=[999])
    with pytest.raises(TraceError, match=r"instructions\[5\]\.sass\.group\[0\]"):
        tracefile.check(t)
    t.header["instructions"][5]["sass"] = dict(t.header["instructions"][5]["sass"], group=[], state="melted")
    with pytest.raises(TraceError, match=r"instructions\[5\]\.sass\.state"):
        tracefile.check(t)


@settings(max_examples=30, deadline=None)
@given(shift=st.integers(0, 7), lanes=st.integers(1, 2**32 - 1), k=st.sampled_from([2, 4]))
def test_a_fused_group_covers_exactly_the_members_bytes(shift, lanes, k):
    """Property: whenever ``apply`` fuses a group, the fused access's bytes are the union of
    the members' bytes, lane by lane; where they are not, it refuses (uncertain)."""
    from viz.trace.reconcile import SassInfo

    table = [{"id": j, "line_no": j + 1, "ptx": f"ld.shared.f32 %f{j}, [%r1+{4 * j}];", "function": "k",
              "opcode": "ld.shared.f32", "kind": "load", "op": "load", "space": "shared", "width": 4,
              "predicate": "", "address": f"%r1+{4 * j}", "operand": 0, "file": "k.cu", "line": 3} for j in range(k)]
    base = np.arange(32, dtype=np.uint64) * (4 * k) + 4 * shift
    heads = np.array([[j, 0, 0, lanes, lanes, lanes, 0, 0] for j in range(k)], np.uint32)
    addrs = np.stack([base + 4 * j for j in range(k)]).astype(np.uint64)
    header = {"title": "t", "kernel": "k", "launch": {"block": [32, 1, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    trace = tracefile.check(tracefile.from_records(header, heads, addrs))
    group = tuple(range(k))
    m = {"tool": "t", "notes": [], "instructions": {
        j: SassInfo("fused" if j == 0 else "member", True, ("LDS",), width=4 * k, ptx_width=4, group=group,
                    first=None if j == 0 else 0) for j in range(k)}}
    after = apply(trace, m)
    aligned = (4 * shift) % (4 * k) == 0
    assert (after.instructions[0]["sass"]["state"] == "fused") == aligned
    if aligned:
        assert after.records == 1 and after.instructions[0]["width"] == 4 * k
        a = after.addresses(slice(0, 1))[0]
        on = [ln for ln in range(32) if lanes >> ln & 1]
        got = {(ln, int(a[ln]) + b) for ln in on for b in range(4 * k)}
        want = {(ln, int(addrs[j][ln]) + b) for ln in on for j in range(k) for b in range(4)}
        assert got == want
    else:
        assert after.records == k


# ---------------------------------------------------------------------------- live, with the CUDA tools


def _tools() -> bool:
    from viz.toolchain.compile import find_tool

    return bool(find_tool("nvcc") and find_tool("ptxas") and find_tool("nvdisasm"))


@pytest.mark.skipif(not _tools(), reason="needs nvcc, ptxas and nvdisasm (the CUDA toolkit or the "
                    "nvidia-cuda-nvdisasm wheel)")
@pytest.mark.parametrize("name", ["sgemm_tile16", "sgemm_tile16_rolled", "quad_read", "quad_read_volatile",
                                  "pair_write"])
def test_shipped_fusion_kernels_map_as_their_fixtures_say(name):
    from viz.trace.build import assemble, compile_ptx
    from viz.trace.launch import load_launch
    from viz.trace.reconcile import sass_with_ptx_lines

    launch = load_launch(ROOT / "kernels" / "trace" / f"{name}.launch.toml")
    ptx = compile_ptx(launch)
    instrs = parse(ptx).instrs
    m = reconcile(ptx, instrs, sass_with_ptx_lines(assemble(ptx)))
    got = sorted(m["instructions"][i.id].state for i in instrs if i.function == launch.kernel)
    want = {"sgemm_tile16": ["fused"] * 4 + ["member"] * 12 + ["same"] * 21,
            "sgemm_tile16_rolled": ["same"] * 7, "quad_read": ["fused"] + ["member"] * 3 + ["same"] * 3,
            "quad_read_volatile": ["same"] * 7, "pair_write": ["fused", "member"] + ["same"] * 3}[name]
    assert got == want and m["certain"]


def test_a_listing_that_cannot_be_matched_leaves_every_instruction_uncertain(monkeypatch):
    """Recording never fails for the SASS mapping: an unexpected listing is said on every
    instruction instead."""
    from types import SimpleNamespace

    from viz.trace import reconcile as rec

    ptx, instrs, _ = fixture("shared_fused")

    def broken(_text):
        raise ValueError("a listing nobody expected")

    monkeypatch.setattr(rec, "sass_with_ptx_lines", lambda cubin: "/*0000*/ garbage")
    monkeypatch.setattr(rec, "parse_sass_lines", broken)
    m = rec.reconcile_build(SimpleNamespace(ptx=ptx, instrs=instrs, cubin=b""))
    assert not m["certain"] and {v.state for v in m["instructions"].values()} == {"uncertain"}
    assert all("could not be matched with the PTX (ValueError: a listing nobody expected)" in v.note
               for v in m["instructions"].values())
