"""The GPU side's logic without a GPU: scaling, statistics, the cost model, counters parsing,
the results file, the CPU prediction of a kernel's output, the hand-written kernels'
checks, and the whole bench pipeline against a fake session."""

import json
from dataclasses import replace
from types import MappingProxyType

import numpy as np
import pytest

from helpers import access, global_array, scenario, shared_array
from viz.engine import METRIC_NAMES, analyze
from viz.gpu import GpuUnavailable, costmodel, handwritten, results
from viz.gpu.codegen import generate
from viz.gpu.ncu import compare, explain_failure, match_launches, parse_csv, same_kernel
from viz.gpu.plan import DeviceLimits, Timing, TimingError, plan_scale, scaled_scenario
from viz.gpu.runner import LaunchSpec, generated_launch
from viz.gpu.simulate import check as sim_check
from viz.gpu.simulate import global_footprint, predict
from viz.scenario import load


# ---------------------------------------------------------------------------- scale


def with_timing(sc, **t):
    return replace(sc, timing=MappingProxyType(t))


def test_timing_table_scales_params_and_grid():
    sc = with_timing(load("transpose-tile-pad"), params={"W": 8192}, grid=["W / TILE", "W / TILE"])
    unit, params, grid = scaled_scenario(sc)
    assert unit.params["W"] == 8192 and grid == (256, 256, 1) and unit.launch.grid == (256, 256, 1)
    s = plan_scale(sc, DeviceLimits(132, 50 << 20, 64 << 30))
    assert s.replicas == 1 and s.buffer_sets == 1 and s.unit_bytes == 2 * 8192 * 8192 * 4


def test_replicas_fill_the_gpu_and_sets_beat_the_l2():
    sc = load("coalesced")  # 128 KiB per launch
    s = plan_scale(sc, DeviceLimits(132, 50 << 20, 64 << 30))
    assert s.replicas * s.unit_bytes >= 512 << 20
    small = plan_scale(sc, DeviceLimits(132, 50 << 20, 64 << 30), target_bytes=1 << 20)
    assert small.launch_bytes < 4 * (50 << 20) and small.buffer_sets > 1
    shared_only = plan_scale(load("shared-stride-2"), DeviceLimits(132, 50 << 20, 64 << 30))
    assert shared_only.replicas * 16 >= 132 * 256


def test_bad_timing_tables_are_named():
    with pytest.raises(TimingError, match="unknown key"):
        scaled_scenario(with_timing(load("coalesced"), size=3))
    with pytest.raises(TimingError, match="unknown name"):
        scaled_scenario(with_timing(load("coalesced"), grid=["M / 2"]))


def test_timing_statistics():
    t = Timing(tuple([1.0] * 18 + [1.1, 5.0]))
    assert t.median_ms == 1.0 and t.runs == 20
    d = t.as_dict()
    assert d["max_ms"] == 5.0 and d["spread"] == pytest.approx(t.quantile(0.9) - 1.0)


# ---------------------------------------------------------------------------- cost model


def test_cost_model_predicts_the_transpose_sweeps_shape():
    def pred(name, **over):
        from viz.scenario import with_params

        sc = load(name) if not over else with_params(load(name), over)
        return costmodel.predict(analyze(sc).metrics, costmodel.H100, repeat=1024)

    unpadded, padded = pred("transpose-tile"), pred("transpose-tile", PAD=1)
    assert unpadded.bound == "shared" and padded.bound == "DRAM"
    assert unpadded.seconds > 1.3 * padded.seconds
    assert pred("transpose-tile-xor").seconds == pytest.approx(padded.seconds, rel=0.05)


# ---------------------------------------------------------------------------- counters


CSV = '''==PROF== Connected to process 1
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","python3","h","wv_000_coalesced","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum","","512"
"0","1","python3","h","wv_000_coalesced","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","sector","2,048"
"1","1","python3","h","wv_001_x","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0","Command line profiler metrics","smsp__inst_executed_op_shared_ld.sum","inst","n/a"
'''


def test_ncu_csv_is_parsed_per_kernel():
    got = parse_csv(CSV)
    assert got == {"wv_000_coalesced": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 512,
                                        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 2048}}


def test_a_cpp_kernels_mangled_entry_matches_the_name_ncu_prints():
    """ncu prints a C++ kernel demangled (--kernel-name-base function); the launch spec names
    its PTX entry (what the cubin is asked for). Names as seen on the H100 (cu++filt 13.0)."""
    assert same_kernel("_Z13MatrixMulCUDAILi16EEvPfS0_S0_ii", "MatrixMulCUDA<16>")
    assert same_kernel("_ZN5tiles16transpose_paddedIfLi32ELi8EEEvPT_PKS1_ii", "tiles::transpose_padded<float, 32, 8>")
    assert same_kernel("copy", "copy") and not same_kernel("copy", "copy2")
    assert not same_kernel("_Z13MatrixMulCUDAILi16EEvPfS0_S0_ii", "MatrixMul<16>")
    assert not same_kernel("block_sum", "block_sum<float, 256>")      # a C entry is compared as it is
    got = match_launches(["_Z9block_sumIfLi256EEvPKT_PS0_i", "add_kernel", "_Z13MatrixMulCUDAILi16EEvPfS0_S0_ii"],
                         [("add_kernel", {"a": 1}), ("MatrixMulCUDA<16>", {"a": 2})])
    assert got == [None, {"a": 1}, {"a": 2}]       # the failed first launch: None, the rest still line up


def test_compare_rows_and_failure_reasons():
    model = dict.fromkeys(METRIC_NAMES, 0)
    model["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 5
    rows = compare(model, {**model, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 6})
    assert [r.metric for r in rows if not r.match] == ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    err = explain_failure("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission", 1)
    assert isinstance(err, GpuUnavailable) and err.kind == "counters"


# ---------------------------------------------------------------------------- launches


def test_launch_spec_round_trips_and_generated_args():
    k = generate(load("transpose-tile-pad"))
    spec = generated_launch(k, b"\x01\x02", replicas=4)
    assert spec.grid == (32, 8, 1) and spec.buffer_bytes == 4 * k.replica_bytes
    assert spec.arg_format == "PPQPiii"
    assert LaunchSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_probe_says_why_there_is_no_gpu(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pycuda(name, *a, **k):
        if name.startswith("pycuda"):
            raise ImportError("No module named 'pycuda'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pycuda)
    from viz.gpu.runner import probe

    with pytest.raises(GpuUnavailable, match="PyCUDA is not installed") as err:
        probe()
    assert err.value.kind == "pycuda"


def test_cli_exits_2_with_the_reason(monkeypatch, capsys):
    from viz import cli
    from viz.gpu import runner

    def unavailable():
        raise GpuUnavailable("no NVIDIA driver: test", "driver")

    monkeypatch.setattr(runner, "probe", unavailable)
    assert cli.main(["validate", "coalesced"]) == 2
    assert "no NVIDIA driver: test" in capsys.readouterr().err
    assert cli.main(["bench", "--all", "--json"]) == 2


# ---------------------------------------------------------------------------- simulation


def test_prediction_of_a_copy_and_a_transpose():
    sc = load("vector-int4")
    init = np.random.default_rng(0).integers(0, 256, global_footprint(sc), dtype=np.uint8)
    p = predict(sc, init)
    assert np.array_equal(p.data[65536:], init[:65536]) and p.checked_bytes == 65536
    sc = load("transpose-tile-xor")
    init = np.random.default_rng(1).integers(0, 256, global_footprint(sc), dtype=np.uint8)
    p = predict(sc, init)
    a = init[:262144].view(np.uint32).reshape(256, 256)
    assert np.array_equal(p.data[262144:].view(np.uint32).reshape(256, 256), a.T)


def test_races_are_not_determined_and_wrong_bytes_are_found():
    race = scenario(global_array("a", "int", "[64]") + global_array("b", "int", "[64]")
                    + access("a[tid]") + access("b[tid % 4]", op="store"), block="[32]")
    init = np.arange(global_footprint(race), dtype=np.uint64).astype(np.uint8)
    assert sim_check(race, init, init).status == "not determined"
    sc = load("coalesced")
    init = np.random.default_rng(2).integers(0, 256, global_footprint(sc), dtype=np.uint8)
    good = predict(sc, init).data
    assert sim_check(sc, init, good).status == "passed"
    bad = good.copy()
    bad[65536 + 40] ^= 1
    res = sim_check(sc, init, bad)
    assert res.status == "failed" and res.wrong_bytes == 1 and "out[10]" in res.detail


def test_shared_values_flow_between_threads_across_a_barrier():
    sc = scenario(global_array("a", "int", "[64]") + global_array("b", "int", "[64]")
                  + shared_array("s", "int", "[64]") + access("a[tid]") + access("s[63 - tid]", op="store")
                  + access("s[tid]") + access("b[tid]", op="store"), block="[64]")
    init = np.random.default_rng(3).integers(0, 256, global_footprint(sc), dtype=np.uint8)
    p = predict(sc, init)
    a = init[:256].view(np.int32)
    assert np.array_equal(p.data[256:512].view(np.int32), a[::-1])


# ---------------------------------------------------------------------------- hand-written


def test_manifest_entries_name_real_scenarios_and_arguments():
    ks = handwritten.manifest()
    assert len(ks) >= 40 and len({k.name for k in ks}) == len(ks)
    for k in ks:
        sc = handwritten.scenario_of(k, False)
        spec = handwritten.launch_spec(k, sc, b"")
        assert spec.block == sc.launch.block
        assert k.function in handwritten.file_source(k.file)
        assert k.check == "none" or k.check in handwritten.CHECKS


@pytest.mark.parametrize("name", ["copy_float4", "transpose_tile_xor", "reduce_tree", "stencil_shared",
                                  "gemm_nt_swizzle_xor", "read_gather", "read_aos_r"])
def test_hand_kernel_checks_accept_the_right_answer_and_refuse_a_wrong_one(name):
    k = next(k for k in handwritten.manifest() if k.name == name)
    sc = handwritten.scenario_of(k, False)
    before = handwritten.initial_bytes(sc)
    after = before.copy()
    out = [a for a in sc.arrays if a.space == "global"][-1]
    v = lambda n: handwritten.view(sc, before, n)  # noqa: E731
    if k.check == "copy":
        want = v("in")
    elif k.check == "transpose":
        w = sc.params["W"]
        want = v("in").reshape(w, w).T.reshape(-1)
    elif k.check == "block_sum":
        want = v("in").astype(np.float64).reshape(-1, 256).sum(1).astype(np.float32)
    elif k.check == "stencil":
        x = v("in").astype(np.float64)
        want = v("out").copy()
        want[1:-1] = (x[:-2] + x[1:-1] + x[2:]).astype(np.float32)
    elif k.check == "gemm_nt":
        want = (v("A").astype(np.float64).reshape(64, 64) @ v("B").astype(np.float64).reshape(64, 64).T
                ).astype(np.float32).reshape(-1)
    elif k.check == "gather":
        i = np.arange(16384, dtype=np.int64)
        want = v("in")[(i * 2654435761) % 16384]
    else:  # first_field
        want = v("p")[::3]
    after[out.base:out.base + want.nbytes] = np.ascontiguousarray(want).view(np.uint8)
    assert handwritten.check(k, sc, before, after)["status"] == "passed"
    after[out.base + 11] ^= 0x40  # an exponent bit of the third element
    assert handwritten.check(k, sc, before, after)["status"] == "failed"


# ---------------------------------------------------------------------------- results file


def _doc():
    doc = results.new_document({"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sm_count": 132},
                               "test", "2026-11-23T00:00:00+00:00", "0.1.0")
    m = analyze(load("coalesced")).metrics
    doc["scenarios"]["coalesced"] = {"title": "t", "model": m, "counters": dict(m), "match": True,
                                     "timing": {"median_ms": 0.25, "spread": 0.01}}
    return doc


def test_results_round_trip(tmp_path):
    doc = _doc()
    p = results.save(doc, tmp_path / "r.json")
    assert results.load(p) == doc
    assert results.dumps(results.load(p)) == results.dumps(doc)


def test_results_refuse_bad_and_newer_files():
    doc = _doc()
    with pytest.raises(results.ResultsError, match="newer warpviz"):
        results.validate({**doc, "version": results.VERSION + 1})
    with pytest.raises(results.ResultsError, match="not a warpviz measurements file"):
        results.loads('{"format": "x"}')
    bad = json.loads(json.dumps(doc))
    bad["scenarios"]["coalesced"]["counters"]["bogus"] = 1
    with pytest.raises(results.ResultsError, match="unknown metric"):
        results.validate(bad)
    with pytest.raises(results.ResultsError, match="not valid JSON"):
        results.loads("{")


def test_mismatches_name_metric_model_and_hardware():
    e = {"model": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 4},
         "counters": {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 5}}
    assert results.mismatches(e)[0] == {"metric": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                                        "model": 4, "hardware": 5}


def test_the_shipped_h100_file_loads():
    p = results.shipped_path()
    if not p.exists():
        pytest.skip("no shipped measurements yet")
    doc = results.load(p)
    assert "H100" in doc["device"]["name"] and doc["scenarios"]


# ---------------------------------------------------------------------------- the pipeline


class FakeSession:
    """Stands in for runner.Session: 'runs' a generated kernel by the CPU prediction."""

    info = {"name": "Fake GPU", "compute_capability": "9.0", "sm_count": 132, "clock_mhz": 1980,
            "l2_bytes": 50 << 20, "driver": "0", "peak_bandwidth_gbs": 3000.0}

    def limits(self):
        return DeviceLimits(132, 50 << 20, 4 << 30)

    def time_memcpy(self, *a, **k):
        return Timing((0.2,) * 30)

    def time_launch(self, spec, sets=1, **k):
        return Timing(tuple(0.1 + 0.001 * (i % 3) for i in range(30)))

    def run_once(self, spec, initial):
        return self.answer(spec, initial)

    def close(self):
        pass


def test_bench_pipeline_with_a_fake_gpu(monkeypatch):
    from viz.gpu import bench as bench_mod

    items = [("coalesced", load("coalesced")), ("transpose-tile-pad", load("transpose-tile-pad"))]
    by_label = dict(items)

    def fake_counters(prepared, hand=None):
        c = {p.label: dict(p.analysis.metrics) for p in prepared}
        c["transpose-tile-pad"]["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] += 1
        return c, {}

    monkeypatch.setattr(bench_mod, "counters_for", fake_counters)
    from viz.gpu import ncu as ncu_mod

    profiled = []

    def fake_bottlenecks(spec, cancelled=None):
        """Nsight Compute on the timed launches: coalesced streams DRAM, the transpose does not."""
        profiled.extend((d["name"], tuple(d["grid"])) for d in spec["launches"])
        hot = ["coalesced" in d["name"] for d in spec["launches"]]
        return ([{"dram__bytes_read.sum": (1 << 29) * h, "dram__bytes_write.sum": (1 << 29) * h,
                  "dram__throughput.avg.pct_of_peak_sustained_elapsed": 88.0 if h else 10.0,
                  "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed": 0.0 if h else 31.0}
                 for h in hot], "", [])

    monkeypatch.setattr(ncu_mod, "run_bottlenecks", fake_bottlenecks)
    fake = FakeSession()

    def answer(spec, initial):
        sc = by_label.get(spec.label)
        return predict(sc, initial).data if sc is not None else initial

    fake.answer = answer
    doc = bench_mod.bench(items, session=fake, hand_kernels=False, sweeps=False)
    results.validate(doc)
    e = doc["scenarios"]["coalesced"]
    assert e["match"] is True and e["check"]["status"] == "passed"
    t = e["timing"]
    assert t["median_ms"] == pytest.approx(0.101) and t["runs"] == 30
    assert t["scale"]["replicas"] * 131072 >= 512 << 20
    # The profiled launches are the timed ones (replicas included).
    assert [n for n, _ in profiled] == ["wv_000_coalesced", "wv_001_transpose_tile_pad"]
    assert profiled[0][1][0] == 64 * t["scale"]["replicas"]
    # DRAM columns from the counters; "of memcpy" only where DRAM streams.
    memcpy = doc["ceiling"]["memcpy_d2d"]["gbps"]
    assert t["dram_bytes"] == 1 << 30 and e["bottleneck"]["bound"] == {"unit": "DRAM", "pct_of_peak": 88.0}
    assert t["fraction_of_memcpy"] == pytest.approx((1 << 30) / 0.101e-3 / 1e9 / memcpy, rel=1e-3)
    tp = doc["scenarios"]["transpose-tile-pad"]["timing"]
    assert tp["fraction_of_memcpy"] is None and "10%" in tp["fraction_note"]
    p = t["predicted"]
    assert p["bound"] in {x["name"] for x in p["terms"]} and p["explain"].startswith(f"bound by {p['bound']}")
    bad = doc["scenarios"]["transpose-tile-pad"]
    assert bad["match"] is False and bad["mismatches"][0]["hardware"] == bad["mismatches"][0]["model"] + 1
    from viz.gpu.cli import format_bench

    text = format_bench(doc)
    assert "coalesced" in text and "DIFFER" in text and "transpose-tile-pad" in text


def test_process_session_reports_why_it_cannot_start():
    pytest.importorskip("numpy")
    try:
        import pycuda  # noqa: F401
        pytest.skip("PyCUDA is installed here")
    except ImportError:
        pass
    from viz.gpu.worker import ProcessSession

    with pytest.raises(GpuUnavailable, match="PyCUDA is not installed"):
        ProcessSession()


def test_a_results_file_with_the_kinds_counters_validates():
    """cp.async, atomics and TMA scenarios carry their own counters (viz.kinds): a bench of
    cp-async-pipeline once failed at the very end, at saving, on them."""
    from viz.gpu import results as res
    from viz.kinds import KIND_METRICS

    doc = {"format": res.FORMAT, "version": res.VERSION, "device": {}, "label": "x", "measured_at": "now",
           "scenarios": {"cp-async-pipeline": {"model": {m: 1 for m in KIND_METRICS}, "counters": None}}}
    assert res.validate(doc) is doc
    doc["scenarios"]["cp-async-pipeline"]["model"]["no_such_metric.sum"] = 1
    with pytest.raises(res.ResultsError, match="no_such_metric"):
        res.validate(doc)


def test_bench_keeps_its_measurements_when_the_file_cannot_be_written(tmp_path, monkeypatch, capsys):
    """Minutes of GPU time are never lost to a failed check at saving: the document goes
    next to --out, unchecked, and the command exits 2 naming the problem."""
    import json

    from viz.cli import main
    from viz.gpu import bench as bench_mod
    from viz.gpu import cli as gcli
    from viz.gpu import results as res

    bad = {"format": res.FORMAT, "version": res.VERSION, "device": {}, "label": "x", "measured_at": "now",
           "scenarios": {"coalesced": {"model": {"no_such_metric.sum": 1}, "timing": {"median_ms": 0.2}}}}
    monkeypatch.setattr(gcli, "_require", lambda counters: {})
    monkeypatch.setattr(bench_mod, "bench", lambda *a, **k: bad)
    out = tmp_path / "h100.json"
    assert main(["bench", "coalesced", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no_such_metric" in err and "h100.json.unchecked.json" in err
    assert not out.exists()
    kept = json.loads((tmp_path / "h100.json.unchecked.json").read_text())
    assert kept["scenarios"]["coalesced"]["timing"]["median_ms"] == 0.2
