"""On a real GPU (pytest -m gpu): the model equals the counters, results are right, timings repeat.

Skips cleanly where there is no PyCUDA, driver, device or ncu. Run on the device machine:
``source tools/gpu/device_setup.sh && python3 -m pytest -m gpu tests/test_gpu_device.py``.
"""

import pytest

from viz.gpu import GpuUnavailable

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def session():
    from viz.gpu.runner import probe
    from viz.gpu.worker import ProcessSession

    try:
        probe()
    except GpuUnavailable as err:
        pytest.skip(err.reason)
    s = ProcessSession()
    yield s
    s.close()


def _need_ncu():
    from viz.gpu.ncu import find_ncu

    if not find_ncu():
        pytest.skip("ncu is not installed")


def _builtins():
    from viz.scenario import runnable_builtins

    return runnable_builtins()


def _assert_all_match(results):
    bad = []
    for r in results:
        if r["match"] is not True:
            rows = [x for x in r["rows"] if not x["match"]]
            bad.append((r["label"], r["error"], [(x["metric"], x["model"], x["hardware"]) for x in rows]))
    assert not bad, bad


def test_model_equals_counters_for_every_builtin(session):
    _need_ncu()
    from viz.gpu.bench import validate

    _assert_all_match(validate(_builtins()))


ST_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
ST_CF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
ST_INST = "smsp__inst_executed_op_shared_st.sum"


def _assert_match_allowing_store_extra(results):
    """Exact on every metric, except one measured non-determinism: the H100 sometimes spends
    extra shared *store* wavefronts (seen: 16 all-lanes-same-halfword stores counted 20
    once; 1836 vs 1837; the same scenario 879 in one run and 883 in the next). Those two
    metrics may exceed the model by at most one wavefront per store instruction, never
    fall below it."""
    bad = []
    for r in results:
        rows = {x["metric"]: x for x in r["rows"]}
        if r["error"] or not rows:
            bad.append((r["label"], r["error"]))
            continue
        inst = rows[ST_INST]["model"]
        for m, x in rows.items():
            if m in (ST_WF, ST_CF):
                ok = x["hardware"] is not None and x["model"] <= x["hardware"] <= x["model"] + inst
            else:
                ok = x["match"]
            if not ok:
                bad.append((r["label"], m, x["model"], x["hardware"]))
    assert not bad, bad


def test_model_equals_counters_for_random_scenarios(session):
    _need_ncu()
    from viz.gpu.bench import validate
    from viz.gpu.randomgen import scenarios

    _assert_match_allowing_store_extra(validate(scenarios(40, seed=7, wide_shared=False)))


def test_model_equals_counters_for_random_wide_shared_scenarios(session):
    """8/16-byte shared accesses, loads merging phases where lanes repeat addresses in pairs."""
    _need_ncu()
    from viz.gpu.bench import validate
    from viz.gpu.randomgen import scenarios

    _assert_match_allowing_store_extra(validate(scenarios(30, seed=7, wide_shared=True)))


def test_generated_kernels_write_what_the_model_predicts(session):
    from viz.gpu.bench import _check_generated, prepare
    from viz.scenario import load

    names = ["coalesced", "vector-int4", "float3-whole", "transpose-tile-pad", "transpose-tile-cute",
             "stencil-shared", "aos-float3-r", "grid-stride-loop", "gemm-tiled"]
    for p in prepare([(n, load(n)) for n in names]):
        res = _check_generated(session, p)
        assert res["status"] == "passed", (p.label, res)


def test_hand_written_kernels_compute_the_right_result(session):
    from viz.gpu import handwritten
    from viz.toolchain.compile import compile_cubin

    for k in handwritten.manifest():
        if k.check == "none":
            continue
        sc = handwritten.scenario_of(k, False)
        spec = handwritten.launch_spec(k, sc, compile_cubin(handwritten.file_source(k.file)))
        before = handwritten.initial_bytes(sc)
        res = handwritten.check(k, sc, before, session.run_once(spec, before))
        assert res["status"] == "passed", (k.name, res)


def test_timing_spread_is_under_five_percent(session):
    from viz.gpu import handwritten
    from viz.toolchain.compile import compile_cubin

    k = next(k for k in handwritten.manifest() if k.name == "copy_float4")
    sc = handwritten.scenario_of(k, True)
    spec = handwritten.launch_spec(k, sc, compile_cubin(handwritten.file_source(k.file)))
    t = session.time_launch(spec, 1)
    assert t.runs >= 20
    assert t.spread < 0.05, t.as_dict()


def test_a_faulting_kernel_is_reported_and_the_session_recovers(session):
    from viz.gpu.runner import KernelFault, LaunchSpec
    from viz.toolchain.compile import compile_cubin

    bad = compile_cubin('extern "C" __global__ void boom(float* p) { p[(1LL << 40) + threadIdx.x] = 1.0f; }')
    spec = LaunchSpec("boom", bad, (32, 1, 1), (1, 1, 1), 0, 256, [("ptr", 0)], label="boom")
    import numpy as np

    with pytest.raises(KernelFault):
        session.run_once(spec, np.zeros(256, np.uint8))
    # The faulting process is gone; the next run gets a fresh one and works.
    ok = compile_cubin('extern "C" __global__ void fine(float* p) { p[threadIdx.x] = 2.0f; }')
    out = session.run_once(LaunchSpec("fine", ok, (32, 1, 1), (1, 1, 1), 0, 256, [("ptr", 0)]), np.zeros(256, np.uint8))
    assert np.all(out[:128].view(np.float32) == 2.0)
