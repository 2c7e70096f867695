"""Property tests: the engine equals the pure-Python reference on random scenarios,
and the model's invariants hold."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import reference
from viz.engine import analyze
from viz.warp import warp_detail
from viz.scenario import ScenarioError, loads

LEAVES = ["threadIdx.x", "threadIdx.y", "blockIdx.x", "blockIdx.y", "lane", "warp", "tid", "j"]
TYPES = ["char", "short", "int", "float", "double", "float2", "int4", "float4"]


@st.composite
def index_expr(draw, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LEAVES)) if draw(st.booleans()) else str(draw(st.integers(0, 40)))
    op = draw(st.sampled_from(["+", "-", "*", "^", "&", "|", "<<", ">>", "/", "%", "?:", "min"]))
    a = draw(index_expr(depth - 1))
    if op in ("<<", ">>"):
        return f"({a} {op} {draw(st.integers(0, 5))})"
    if op in ("/", "%"):
        return f"({a} {op} {draw(st.integers(1, 9))})"
    b = draw(index_expr(depth - 1))
    if op == "?:":
        return f"({a} < {draw(st.integers(0, 20))} ? {b} : {a})"
    if op == "min":
        return f"min({a}, {b})"
    return f"({a} {op} {b})"


def bounded(e: str, n: int) -> str:
    return f"((({e}) % {n}) + {n}) % {n}"


@st.composite
def scenarios(draw):
    bx, by = draw(st.integers(1, 70)), draw(st.integers(1, 3))
    gx, gy = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    cols = draw(st.sampled_from([8, 16, 32, 64]))
    rows = draw(st.integers(2, 40))
    stype = draw(st.sampled_from(TYPES))
    gtype = draw(st.sampled_from(TYPES))
    swz = draw(st.sampled_from(["none", "xor", "xor:3", "diagonal", "bitrev", "bitrev-xor",
                                "cute:2,0,3", "cute:3,1,3", "expr:(col * 5 + row) % COLS"]))
    pad = draw(st.integers(0, 3)) if not swz.startswith("cute") else 0
    gsize = 4096
    goff = draw(st.sampled_from([0, 16, 32, 48]))
    loops = draw(st.sampled_from(["", 'for = { j = "0:3" }', 'for = { j = "1:8:3" }']))
    text = f"""
[launch]
block = [{bx}, {by}]
grid = [{gx}, {gy}]
[params]
COLS = {cols}
[arrays.g]
space = "global"
type = "{gtype}"
shape = [{gsize}]
offset = {goff}
[arrays.s]
space = "shared"
type = "{stype}"
shape = [{rows}, {cols}]
pad = {pad}
swizzle = "{swz}"
"""
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["load", "store"]))
        if draw(st.booleans()):
            at = f"s[{bounded(draw(index_expr()), rows)}][{bounded(draw(index_expr()), cols)}]"
        else:
            at = f"g[{bounded(draw(index_expr()), gsize)}]"
        when = ""
        if draw(st.booleans()):
            when = f'when = "{draw(index_expr(2))} % {draw(st.integers(2, 5))} != 0"'
        lp = loops if "j" in at or "j" in when else ""
        if not lp and ("j" in at or "j" in when):
            continue
        if "j" in at + when and not lp:
            continue
        if "j" in at + when:
            lp = loops or 'for = { j = "0:2" }'
        text += f'[[access]]\nop = "{op}"\nat = "{at}"\n{when}\n{lp}\n'
    return text


def load_or_skip(text):
    try:
        return loads(text)
    except ScenarioError as err:
        # Only layout choices may be refused (e.g. a cute swizzle leaving a small array).
        assert "swizzle" in str(err) or "offset" in str(err) or "access" in str(err), str(err)
        assume(False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios())
def test_engine_equals_reference(text):
    sc = load_or_skip(text)
    try:
        ref_metrics, ref_warps = reference(sc)
    except Exception as ref_err:  # the reference refuses it (misaligned offset): so must the engine
        try:
            analyze(sc)
        except ScenarioError:
            return
        raise AssertionError(f"reference refused ({ref_err}) but the engine did not")
    for shortcuts in (True, False):
        an = analyze(sc, shortcuts=shortcuts)
        assert an.metrics == ref_metrics
        for s, ref in zip(an.stats, ref_warps):
            got = [int(v) for v, a in zip(s.per_warp.reshape(-1), s.per_warp_active.reshape(-1))]
            assert got == ref


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios())
def test_invariants(text):
    sc = load_or_skip(text)
    try:
        an = analyze(sc)
    except ScenarioError:
        assume(False)
    for s in an.stats:
        issued = s.per_warp_active > 0
        assert s.warp_instructions == int(issued.sum())
        if s.space == "shared":
            # Every active phase costs at least one wavefront.
            assert s.wavefronts >= s.phases >= s.warp_instructions
            assert int(s.per_warp.sum()) == s.wavefronts
        else:
            assert s.lines <= s.sectors <= 32 * s.warp_instructions
    # The single-warp detail (what the animation shows) agrees with the whole-launch figures,
    # and sectors can never carry fewer distinct bytes than the warp asked for.
    nb, nw = sc.launch.blocks, sc.launch.warps_per_block
    for s in an.stats:
        for block, warp in {(0, 0), (nb - 1, nw - 1)}:
            d = warp_detail(sc, s.instruction, block, warp)
            assert d.active_lanes == s.per_warp_active[block, warp]
            if s.space == "shared":
                assert d.wavefronts == s.per_warp[block, warp]
                assert d.active_phases <= d.wavefronts
                assert all(ln.wavefront < d.wavefronts for ln in d.lanes)
            else:
                assert len(d.sectors) == s.per_warp[block, warp]
                used = sum(sum(u.used) for u in d.sectors)
                assert len(d.sectors) >= -(-used // 32)
                assert len(d.lines) <= len(d.sectors)
    # Totals are the sum of the parts.
    per_access = an.per_access()
    m = an.metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == sum(
        d.get("sectors", 0) for d in per_access if d["op"] == "load")
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == sum(
        d.get("wavefronts", 0) for d in per_access if d["op"] == "store")
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == sum(
        d.get("bank_conflicts", 0) for d in per_access if d["op"] == "load")
