"""Scenario format 3 kinds cp.async, atomic and tma.load (viz/kinds): parsing, bad input
named by field with the fix (exit 2 on the CLI), the counting rules of
docs/memory-model.md, the generated kernels' real instructions, random scenarios."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viz.cli import main
from viz.engine import analyze
from viz.gpu.codegen import generate
from viz.toolchain.compile import find_nvcc
from viz.gpu.runner import generated_launch
from viz.kinds import ATOM_METRICS, LDGSTS_METRICS
from viz.gpu.randomkinds import scenarios as kind_scenarios
from viz.kinds.tensormap import TensorMapError, encode_args
from viz.report import explain_access
from viz.scenario import ScenarioError, load, loads

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")

LD_REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LD_SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
(INST,) = LDGSTS_METRICS
A_INST, A_WF, A_CONF = ATOM_METRICS
SH_LD = "smsp__inst_executed_op_shared_ld.sum"


def cp(at="s[lane]", src="g[lane]", t="float4", extra="", block="[32]", grid="[1]", fmt=3, sshape="[1024]"):
    return loads(f"""{f'format = {fmt}' if fmt else ''}
[launch]
block = {block}
grid = {grid}
[arrays.g]
space = "global"
type = "{t}"
shape = [65536]
[arrays.s]
space = "shared"
type = "{t}"
shape = {sshape}
[[access]]
op = "cp.async"
at = "{at}"
from = "{src}"
{extra}
""", source="case.toml")


def atomic(at="h[lane]", t="int", extra="", block="[32]", bins=1024, space="shared"):
    return loads(f"""format = 3
[launch]
block = {block}
grid = [1]
[arrays.h]
space = "{space}"
type = "{t}"
shape = [{bins}]
[[access]]
op = "atomic"
at = "{at}"
{extra}
""", source="case.toml")


def tma(swizzle="tma:128B", t="half", tile="[8, 64]", tensor="[64, 128]", src="A[blockIdx.x * 8][0]", extra="",
        grid="[4]", before=""):
    return loads(f"""format = 3
[launch]
block = [64]
grid = {grid}
{before}[arrays.tile]
space = "shared"
type = "{t}"
shape = {tile}
swizzle = "{swizzle}"
[arrays.A]
space = "global"
type = "{t}"
shape = {tensor}
[[access]]
op = "tma.load"
at = "tile"
from = "{src}"
{extra}
""", source="case.toml")


def err(fn, *args, **kw) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        sc = fn(*args, **kw)
        analyze(sc)
    return info.value


# ---------------------------------------------------------------------------- cp.async


def test_cp_async_16_bytes_counts_an_ldg128_and_three_dummy_lds():
    an = analyze(cp(block="[128]", grid="[2]"))
    m = an.metrics
    warps = 8
    assert m[LD_REQ] == warps and m[LD_SEC] == 16 * warps      # global side: LDG.128, in the ten
    assert m[INST] == warps
    assert m[SH_LD] == 3 * warps                                  # nvcc's predicated-off LDS before each LDGSTS
    # no shared wavefront of the ten counts it
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 0
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 0
    d = an.per_access()[0]
    assert d.wavefronts == 4 * warps and d.bank_conflicts == 0


@pytest.mark.parametrize("t,at,wf", [
    ("float", "s[lane]", 1), ("float", "s[0]", 32), ("float", "s[lane / 2]", 2), ("float", "s[lane * 32 % 1024]", 32),
    ("float2", "s[lane]", 2), ("float2", "s[0]", 32), ("float4", "s[lane]", 4), ("float4", "s[0]", 32),
    ("float4", "s[lane / 4]", 16), ("float4", "s[lane * 2]", 8),
])
def test_cp_async_shared_side_does_not_merge_lanes_on_one_address(t, at, wf):
    """Unlike a store (s[0] by every lane: 1 wavefront), LDGSTS writes each lane's copy:
    the busiest bank's lane-words per phase (measured, tests/test_kinds_h100.py)."""
    d = analyze(cp(at=at, t=t, src="g[lane]")).per_access()[0]
    assert d.wavefronts == wf, (t, at)


def test_cp_async_in_a_loop_runs_the_dummy_lds_before_every_copy():
    m = analyze(load("cp-async-pipeline")).metrics
    assert m[INST] == 64 and m[SH_LD] == 64 + 3 * 64      # 64 LDS.128 and 3 per LDGSTS


def test_every_generated_ldgsts_has_its_own_region():
    """The generated kernel keeps each cp.async in a one-trip loop (or its `when` region),
    so nvcc puts its three predicated-off LDS before every LDGSTS, whatever it unrolls."""
    src = generate(load("cp-async-pipeline")).source
    body = src[src.index("// access 0"):src.index("// access 1")]
    assert body.count("for (int wv_r = 0; wv_r < wv_one; ++wv_r) {") == 1 and "#pragma unroll 1" in body


def test_cp_async_cg_sectors_pair_global_lines_with_shared_sectors():
    same_dst = analyze(cp(at="s[0]", src="g[lane]", extra='cache = "cg"')).metrics
    assert same_dst[LD_SEC] == 1              # only the last lane's copy survives: one pair
    ca = analyze(cp(at="s[0]", src="g[lane]", extra='cache = "ca"')).metrics
    assert ca[LD_SEC] == 16                   # .ca reads every lane's sector
    stride = analyze(cp(at="s[lane]", src="g[lane * 4]", extra='cache = "cg"')).metrics   # 64-byte stride
    assert stride[LD_SEC] == 16


def test_cp_async_global_stride_counts_sectors_like_a_load():
    m = analyze(cp(at="s[lane]", src="g[lane * 8]", t="float4")).metrics      # 128-byte stride
    assert m[LD_SEC] == 32 and m[LD_REQ] == 1


def test_cp_async_when_counts_only_active_warps():
    m = analyze(cp(block="[64]", extra='when = "warp == 1"')).metrics
    assert m[INST] == 1 and m[LD_REQ] == 1


def test_cp_async_per_access_has_both_sides_and_reasons():
    d = analyze(cp(block="[64]")).per_access()[0]
    assert d.kind == "cp.async" and d.requests == 2 and d.sectors == 32 and d.wavefronts == 8
    rows = explain_access(d)
    assert [r[0] for r in rows][-2:] == ["requests", "sectors"]
    assert "LDG" in rows[-2][2] and rows[-1][2].startswith("16.00 per request")


@pytest.mark.parametrize("kw,fragments", [
    ({"t": "float", "extra": 'cache = "cg"'}, ["cache", "cp.async.cg copies 16 bytes only", 'cache = "ca"']),
    ({"t": "short"}, ["cp.async copies 4, 8 or 16 bytes per lane", "float4"]),
    ({"extra": 'cache = "cx"'}, ['cache must be "ca" or "cg"']),
    ({"src": "s[lane]"}, ["from names the shared array s", "global array in from"]),
    ({"at": "g[lane]"}, ["cp.async writes shared memory", "g is a global array"]),
    ({"src": "g[lane + 70000]"}, ["(cp.async s[lane], from = g[lane + 70000])", "out of bounds", "line 16"]),
    ({"src": "g[lane"}, ['from = "g[lane": ', "never closed", "line 16"]),
    ({"fmt": 2}, ["part of scenario format 3", "format = 3"]),
    ({"fmt": 0}, ["part of scenario format 3", "format = 3"]),
])
def test_cp_async_bad_input_names_the_field_and_the_fix(kw, fragments):
    e = err(cp, **kw)
    for f in fragments:
        assert f in str(e), str(e)


def test_cp_async_without_from_says_so():
    with pytest.raises(ScenarioError) as info:
        loads('format = 3\n[launch]\nblock = [32]\ngrid = [1]\n[arrays.s]\nspace = "shared"\ntype = "float"\n'
              'shape = [32]\n[[access]]\nop = "cp.async"\nat = "s[lane]"\n', source="x.toml")
    assert "the key from is missing" in str(info.value) and "Add from" in str(info.value)


def test_cp_async_unknown_key_suggests_the_right_one():
    e = err(cp, extra='form = "g[lane]"')
    assert "unknown key 'form'" in str(e) and "line 17" in str(e)


# ---------------------------------------------------------------------------- atomics


def _ref_atomic_wavefronts(words: list[int], per_lane: bool) -> int:
    """The rules in plain Python: the busiest bank's active lanes (atom, used) or distinct
    words (atomicAdd(.., 1) unused, combined by nvcc)."""
    banks: dict[int, list[int]] = {}
    for w in words:
        banks.setdefault(w % 32, []).append(w)
    return max(len(v) if per_lane else len(set(v)) for v in banks.values())


@pytest.mark.parametrize("at,unused,used", [
    # h[0] with the old value read: ptxas aggregates the warp on the uniform address (one
    # lane's ATOMS); h[warp] is one address too, but ptxas cannot prove it: lane by lane
    ("h[lane]", 1, 1), ("h[0]", 1, 1), ("h[warp]", 1, 32), ("h[lane / 4]", 1, 4), ("h[lane * 32]", 32, 32), ("h[lane * 2]", 2, 2),
    ("h[(lane % 4) * 32]", 4, 32), ("h[(lane / 16) * 32]", 2, 32), ("h[lane < 16 ? 0 : lane]", 1, 16),
    ("h[lane % 8]", 1, 4),
])
def test_atomic_wavefronts_combined_or_lane_by_lane(at, unused, used):
    for result, wf in (("unused", unused), ("used", used)):
        m = analyze(atomic(at, extra=f'result = "{result}"')).metrics
        # the aggregated form (h[0], old value read) also runs ptxas's every-lane fallback
        # ATOMS with every lane off in a whole warp: the H100 counts 2 instructions
        inst = 2 if (at, result) == ("h[0]", "used") else 1
        assert m[A_INST] == inst and m[A_WF] == wf and m[A_CONF] == wf - 1, (at, result)
        assert all(m[k] == 0 for k in ("smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"))


def test_atomic_few_bins_versus_many_bins_builtins():
    few = analyze(load("shared-histogram-few-bins")).metrics
    many = analyze(load("shared-histogram-many-bins")).metrics
    assert few[A_INST] == many[A_INST] == 16 * 8
    assert few[A_CONF] == 0 < many[A_CONF]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, 1023), min_size=32, max_size=32), st.integers(1, 2**32 - 1))
def test_atomic_rule_matches_the_reference_on_random_bins(bins, mask):
    table = "[" + ", ".join(map(str, bins)) + "]"
    # the bin of each lane through a lookup expression: ((lane == 0) ? b0 : (lane == 1) ? b1 : ...)
    expr = " : ".join(f"lane == {i} ? {b}" for i, b in enumerate(bins[:-1])) + f" : {bins[-1]}"
    when = f"(({mask} >> lane) & 1) == 1"
    active = [b for i, b in enumerate(bins) if (mask >> i) & 1]
    assert table
    for result in ("unused", "used"):
        m = analyze(atomic(f"h[{expr}]", extra=f'when = "{when}"\nresult = "{result}"')).metrics
        assert m[A_WF] == _ref_atomic_wavefronts(active, result == "used")
        assert m[A_INST] == 1


@pytest.mark.parametrize("kw,fragments", [
    ({"t": "double"}, ["atomic adds to a 4-byte int", "double"]),
    ({"t": "float"}, ["compare-and-swap loop on the H100", "int histogram"]),
    ({"space": "global", "t": "char"}, ["a global atomic adds to an int, a float or a double", "char"]),
    ({"extra": 'result = "maybe"'}, ['result must be "used" or "unused"']),
    ({"at": "h[lane + 2000]"}, ["out of bounds"]),
])
def test_atomic_bad_input_names_the_field_and_the_fix(kw, fragments):
    e = err(atomic, **kw)
    for f in fragments:
        assert f in str(e), str(e)


# ---------------------------------------------------------------------------- tma.load


def test_tma_is_one_instruction_per_block_and_reads_swizzled_tiles_without_conflicts():
    sc = tma(extra="", grid="[4]")
    an = analyze(sc)
    d = an.per_access()[0]
    assert d.kind == "tma.load" and d.warp_instructions == 4 and d.bytes_copied == 4 * 8 * 128
    assert d.box == [8, 64] and d.swizzle == "tma:128B"
    rows = explain_access(d)
    assert [r[0] for r in rows] == ["warp instructions", "bytes copied", "swizzle"]
    assert rows[1][1] == "4,096" and "8 x 64" in rows[1][2]
    # the built-ins: the column read of a tma:NB tile is conflict-free, the unswizzled one is not
    for n in ("tma-swizzle-32b", "tma-swizzle-64b", "tma-swizzle-128b"):
        assert analyze(load(n)).metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0, n
    assert analyze(load("tma-swizzle-none")).metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] > 0


@pytest.mark.parametrize("kw,key,fragments", [
    ({"extra": "box = [8, 128]"}, "box",
     ["with swizzle tma:128B the box's inner side may be at most 128 bytes (64 elements), but it is 256 bytes",
      "box = [8, 64]"]),
    ({"swizzle": "tma:64B", "tile": "[8, 32]", "extra": "box = [8, 64]"}, "box",
     ["at most 64 bytes (32 elements)"]),
    ({"extra": "box = [16, 64]"}, "box", ["does not fit the tile tile[8][64]", "[16, 64]"]),
    ({"extra": "box = [8, 300]"}, "box", ["each side must be 1 to 256 elements"]),
    ({"extra": 'box = "8x64"'}, "box", ["box must be [ROWS, COLS]"]),
    ({"swizzle": "none", "tile": "[8, 4]", "extra": "box = [8, 4]"}, "box", ["multiple of 16 bytes"]),
    ({"tensor": "[64, 32]", "swizzle": "none", "tile": "[8, 64]"}, "box", ["does not fit the tensor A[64][32]"]),
    ({"src": "A[lane][0]"}, "from", ["cannot depend on lane"]),
    ({"swizzle": "xor"}, "at", ["one of its own swizzles", 'swizzle = "tma:128B"']),
    ({"before": '[arrays.x]\nspace = "shared"\ntype = "float"\nshape = [40]\n'}, "at",
     ["must start at a multiple of 1024", "Declare the tile first"]),
])
def test_tma_bad_input_names_the_field_and_the_fix(kw, key, fragments):
    e = err(tma, **kw)
    for f in fragments:
        assert f in str(e), str(e)
    assert e.line is not None


def test_tma_box_leaving_the_tensor_is_counted_and_a_first_element_outside_names_the_block():
    # block 3 starts at row 60 of 64: 4 of its 8 rows lie past the edge, fetched all the same
    # (rows of 128 bytes: 4 sectors each, inside the tensor or not; tests/test_kinds_tma_store.py)
    an = analyze(tma(src="A[blockIdx.x * 20][0]"))
    assert an.metrics["l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"] == 4 * 8 * 4
    e = err(tma, src="A[blockIdx.x * 22][0]")     # block 3 starts at row 66 of 64
    assert "row 66 of A" in str(e) and "block (3,0,0)" in str(e) and "from = A[blockIdx.x * 22][0]" in str(e)


def test_tma_box_must_start_on_16_bytes():
    """A box starting at a byte that is not a multiple of 16 faults on the H100: boxes at bytes
    2 and 12 ended their kernel with an illegal instruction (assets/measurements/
    h100-lessons-2026-11-26.json), boxes at byte 16 copied every element."""
    e = err(tma, src="A[blockIdx.x * 8][3]", swizzle="none")
    assert "byte 6 of the tensor, not a multiple of 16" in str(e) and "a multiple of 8" in str(e)


def test_cli_exit_status_2_with_one_paragraph(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    text = """format = 3
[launch]
block = [32]
grid = [1]
[arrays.tile]
space = "shared"
type = "half"
shape = [8, 64]
swizzle = "tma:128B"
[arrays.A]
space = "global"
type = "half"
shape = [64, 128]
[[access]]
op = "tma.load"
at = "tile"
from = "A[0][0]"
box = [8, 128]
"""
    bad.write_text(text)
    assert main(["analyze", str(bad)]) == 2
    out, e = capsys.readouterr()
    assert out == "" and "Traceback" not in e and e.count("\n") == 1
    assert "line 18" in e and "box" in e and "Make the box's inner side 64 elements" in e


# ---------------------------------------------------------------------------- generated kernels


def test_generated_kernels_emit_the_real_instructions():
    src = generate(load("cp-async-pipeline")).source
    assert 'cp.async.cg.shared.global [%0], [%1], 16;' in src and "cp.async.wait_all" in src
    src = generate(atomic("h[lane]", extra='result = "used"')).source
    assert "atom.shared.add.u32" in src and "WV_KEEP(wv_o)" in src
    src = generate(atomic("h[lane]")).source
    assert "atomicAdd((unsigned*)(wv_smem + " in src
    k = generate(load("tma-swizzle-128b"))
    assert "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes" in k.source
    assert '"r"((int)wv_row), "r"(0), "r"(wv_mbar)' in k.source     # a load reads the first replica's plane
    assert "const __grid_constant__ WvTensorMap wv_tmap0" in k.source
    assert k.source.index("wv_tmap0") < k.source.index("wv_g_A")    # the tensor map is the first parameter
    (tm,) = k.tensor_maps
    assert (tm.rows, tm.cols, tm.box_rows, tm.box_cols, tm.swizzle, tm.esize) == (32, 16, 8, 8, "tma:128B", 16)
    spec = generated_launch(k, b"", replicas=5)
    assert spec.args[0][0] == "tmap" and spec.arg_format.startswith("128sP")
    assert spec.args[0][1]["replicas"] == 5 and spec.args[0][1]["replica_bytes"] == k.replica_bytes


def test_tensor_map_arguments_are_in_bytes():
    k = generate(load("tma-swizzle-64b"))
    dtype, dims, strides, box, estr, swz = encode_args(k.tensor_maps[0].to_json(), 0x10000)
    # float4 as four UINT32 per element: a 16 x 4 box of a 64 x 8 tensor, one plane
    assert dtype == 2 and list(dims) == [32, 64, 1] and list(strides) == [128, 128 * 64] and list(box) == [16, 16, 1]
    assert swz == 2 and list(estr) == [1, 1, 1]
    # a launch of 7 replicas: one plane each, the replica's footprint apart
    spec = generated_launch(k, b"", replicas=7)
    dtype, dims, strides, box, estr, swz = encode_args(spec.args[0][1], 0x10000)
    assert list(dims) == [32, 64, 7] and list(strides) == [128, k.replica_bytes] and list(box) == [16, 16, 1]
    with pytest.raises(TensorMapError, match="multiple of 16 bytes apart"):
        encode_args({**spec.args[0][1], "replica_bytes": 1000}, 0x10000)
    assert "(int)(wv_col * 4)" in k.source


@needs_nvcc
def test_kind_kernels_compile_and_keep_their_instructions():
    from tests.test_gpu_codegen import nvcc

    items = [(n, load(n)) for n in ("cp-async-pipeline", "tma-swizzle-none", "tma-swizzle-32b", "tma-swizzle-64b",
                                    "tma-swizzle-128b", "shared-histogram-few-bins", "shared-histogram-many-bins")]
    items += kind_scenarios(9, seed=4)
    ptx = nvcc("\n".join(generate(sc, name=f"k{i}").source for i, (_, sc) in enumerate(items)), "-ptx")
    bodies = dict(zip(re.findall(r"\.entry\s+(\w+)\(", ptx), re.split(r"\.entry\s+\w+\(", ptx)[1:]))
    for i, (name, sc) in enumerate(items):
        body = bodies[f"k{i}"]
        ops = {a.op for a in sc.accesses}
        if "cp.async" in ops:
            assert re.search(r"cp\.async\.c[ag]\.shared\.global", body), name
        if "atomic" in ops:
            assert re.search(r"(atom|red)\.shared\.add", body), name
        if "tma.load" in ops:
            assert "cp.async.bulk.tensor.3d" in body and "mbarrier.try_wait.parity" in body, name


def test_random_scenarios_of_each_kind_are_seeded_and_valid():
    a = kind_scenarios(9, seed=7)
    b = kind_scenarios(9, seed=7)
    assert [n for n, _ in a] == [n for n, _ in b] and len(a) == 9
    assert [sc.text for _, sc in a] == [sc.text for _, sc in b]
    kinds = [{x.op for x in sc.accesses} & {"cp.async", "atomic", "tma.load"} for _, sc in a]
    assert kinds[:3] == [{"cp.async"}, {"atomic"}, {"tma.load"}]
    for _, sc in a:
        m = analyze(sc).metrics
        assert all(isinstance(v, int) and v >= 0 for v in m.values())


def test_validate_random_kinds_rejects_an_unknown_kind(capsys):
    assert main(["validate", "--random", "2", "--kinds", "ldgsts"]) == 2
    assert "unknown kind 'ldgsts'" in capsys.readouterr().err


def test_per_warp_figures_of_the_kinds_have_the_launch_shape():
    an = analyze(load("shared-histogram-many-bins"))
    s = an.stats[1]
    assert s.per_warp.shape == (16, 8) and int(s.per_warp.sum()) == s.wavefronts
    assert np.all(s.per_warp_active == 32)


def test_the_picture_counts_what_the_figures_count():
    """The single-warp view (viz.warp, what the painter draws) gives every cp.async and
    atomic the wavefronts the whole-launch analysis counts, lanes on one address included."""
    from viz.warp import warp_detail

    items = kind_scenarios(30, seed=11, kinds=("cp.async", "atomic"))
    items += [(n, load(n)) for n in ("cp-async-pipeline", "shared-histogram-few-bins", "shared-histogram-many-bins")]
    checked = 0
    for name, sc in items:
        an = analyze(sc)
        for st in an.stats:
            if st.op not in ("cp.async", "atomic") or not st.per_warp_active[0, 0]:
                continue
            d = warp_detail(sc, st.instruction, 0, 0)
            assert d.wavefronts == int(st.per_warp[0, 0]), name
            checked += 1
    assert checked >= 10


def test_the_notebook_api_builds_a_kind_scenario_from_keywords():
    from viz import api

    sc = api.scenario(block=[32], grid=[1], arrays={"h": {"space": "shared", "type": "int", "shape": [64]}},
                      access=[{"op": "atomic", "at": "h[lane % 4]", "result": "used"}])
    m = sc.analyze().metrics
    assert m[A_WF] == 8 and m[A_CONF] == 7       # 8 lanes on each of 4 banks, served in turn


def test_the_picture_of_a_tma_copy_has_no_wavefront_and_says_why():
    from viz.frames import frames
    from viz.warp import warp_detail

    sc = load("tma-swizzle-128b")
    ins = sc.instructions()[0]
    d = warp_detail(sc, ins, 0, 0)
    assert d.wavefronts == 0 and d.active_lanes == 1 and not d.bank_words
    assert analyze(sc).stats[0].per_warp[0, 0] == 0
    captions = " ".join(f.caption for f in frames(d))
    assert "one TMA copy of the 8 x 8 box (1024 bytes) into tile" in captions
