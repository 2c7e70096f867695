"""Property tests: the engine equals the pure-Python reference on random scenarios,
and the model's invariants hold."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import reference
from viz.engine import analyze
from viz.gpu.randomgen import scenario_text
from viz.warp import warp_detail
from viz.scenario import ScenarioError, loads

def scenarios():
    """Random scenario texts from the same generator the GPU checks use (viz.gpu.randomgen:
    every operator and function, partial warps, all types and swizzles, offsets, masks,
    loops), driven by hypothesis so failures are reproducible and shrink."""
    return st.randoms(use_true_random=False).map(scenario_text)


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
        (d.sectors or 0) for d in per_access if d.op == "load")
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == sum(
        (d.wavefronts or 0) for d in per_access if d.op == "store")
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == sum(
        (d.bank_conflicts or 0) for d in per_access if d.op == "load")
