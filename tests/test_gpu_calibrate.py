"""warpviz calibrate: the calibration file (pure), its checks, and on the GPU its stability."""

from __future__ import annotations

import json

import pytest

from viz.cli import main
from viz.gpu import calibrate as cal
from viz.gpu.calibration import FORMAT, CalibrationError, load_calibration, slug
from viz.gpu.plan import Timing

H100 = {"name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "clock_mhz": 1980, "peak_bandwidth_gbs": 3352.3,
        "driver": "580.159.04", "cuda_driver_api": "13.0", "compute_capability": "9.0"}


def _raw(**values) -> dict:
    figs = {k: cal.figure([v, v * 1.01, v * 0.99, v, v], *cal.FIGURES[k]) for k, v in values.items()}
    return {"device": dict(H100), "figures": figs, "state_before": None, "state_after": None, "sets": 5}


def test_a_figure_is_the_median_of_its_sets_with_its_spread():
    f = cal.figure([10.0, 11.0, 9.0, 10.0, 30.0], "GB/s", "how")
    assert f["value"] == 10.0 and f["runs"] == 5 and f["sets"] == [10.0, 11.0, 9.0, 10.0, 30.0]
    t = Timing((10.0, 11.0, 9.0, 10.0, 30.0))
    assert f["spread_pct"] == round(100 * t.spread, 2) > 5 and f["noisy"] is True
    assert "noisy" not in cal.figure([10.0, 10.1, 9.9, 10.0, 10.0], "GB/s", "how")


def test_several_runs_combine_into_the_median_of_all_their_sets(tmp_path):
    one = _raw(launch_overhead_us=1.62, dram_copy_gbps=2980.0)
    two = _raw(launch_overhead_us=1.88, dram_copy_gbps=2990.0)
    three = _raw(launch_overhead_us=1.84, dram_copy_gbps=2985.0)
    raw = cal.combine_runs([one, two, three])
    f = raw["figures"]["launch_overhead_us"]
    assert f["run_values"] == [1.62, 1.88, 1.84] and f["runs"] == 15
    assert f["value"] == 1.84    # the median of the 15 sets, not of the three medians' mean
    assert raw["sets"] == 15 and raw["runs"] == 3
    doc = cal.document(raw, "three runs")
    assert doc["runs"] == 3
    cal.save(doc, tmp_path / f"{slug(H100['name'])}.json")
    assert load_calibration(H100["name"], tmp_path).value("launch_overhead_us") == 1.84
    assert cal.combine_runs([one]) is one


def test_written_file_loads_through_the_loader(tmp_path):
    doc = cal.document(_raw(dram_read_gbps=3000.0, l2_latency_ns=250.0), label="here", now="2026-11-23T16:00:00+00:00")
    path = tmp_path / f"{slug(H100['name'])}.json"
    cal.save(doc, path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]     # no temporary file left behind
    c = load_calibration(H100["name"], tmp_path)
    assert c.value("dram_read_gbps") == 3000.0 and c.value("l2_latency_ns") == 250.0
    assert c.value("l1_latency_ns", 33.0) == 33.0                  # missing: the reader's default
    assert c.measured == "2026-11-23" and c.label == "here" and c.device["sm_count"] == 132
    assert c.extra["format"] == FORMAT and c.extra["tool"] == "warpviz calibrate"


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    path.write_text('{"format": 1, "figures": {}}')
    monkeypatch.setattr(cal, "dumps", lambda d: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        cal.save({"figures": {}}, path)
    assert path.read_text() == '{"format": 1, "figures": {}}' and len(list(tmp_path.iterdir())) == 1


@pytest.mark.parametrize("text, words", [
    ('{"format": 1, "figures": {', ["line 1, column 27", "warpviz calibrate"]),
    ('{"format": 2, "figures": {}}', ["format 2 is newer", "(1)", "update warpviz"]),
    ('{"format": "one"}', ['"format" must be an integer']),
    ('[1, 2]', ["JSON object"]),
    ('{"format": 1, "figures": {"dram_read_gbps": {"value": "fast"}}}', ["figures.dram_read_gbps.value", "'fast'"]),
    ('{"format": 1, "figures": []}', ['"figures" must be an object']),
])
def test_bad_or_newer_files_give_clear_messages(tmp_path, text, words):
    path = tmp_path / f"{slug(H100['name'])}.json"
    path.write_text(text)
    with pytest.raises(CalibrationError) as err:
        load_calibration(H100["name"], tmp_path)
    assert str(path) in str(err.value)
    for w in words:
        assert w in str(err.value)


def test_no_file_means_no_calibration(tmp_path):
    assert load_calibration("Some Other GPU", tmp_path) is None


def test_plausibility_accepts_h100_like_figures_and_names_broken_ones():
    good = dict(sm_clock_mhz=1980, dram_read_gbps=3000, dram_write_gbps=2900, dram_copy_gbps=2950,
                l2_read_gbps=9000, l1_read_gbps=30000, l1_sectors_per_clk_sm=3.8,
                shared_wavefronts_per_clk_sm=1.0, shared_conflict32_wavefronts_per_clk_sm=1.0,
                shared_lds128_wavefronts_per_clk_sm=1.0, lsu_inst_per_clk_sm=1.0, launch_overhead_us=2.0,
                launch_host_us=8.0, empty_grid_us=40.0, block_ns_per_sm=78.0, syncthreads_ns=12, syncthreads_1024_ns=20, dram_latency_ns=600,
                l2_latency_ns=260, l1_latency_ns=20, shared_latency_ns=15)
    checks = cal.plausibility(H100, cal.document(_raw(**good))["figures"])
    assert set(checks) == set(good) and all(c["ok"] for c in checks.values()), checks
    # a loop the compiler emptied, a buffer that stayed in L2, caches in the wrong order:
    bad = {**good, "dram_read_gbps": 9000.0, "shared_wavefronts_per_clk_sm": 7.5, "l2_latency_ns": 15.0}
    checks = cal.plausibility(H100, cal.document(_raw(**bad))["figures"])
    assert sorted(k for k, c in checks.items() if not c["ok"]) == [
        "dram_read_gbps", "l2_latency_ns", "l2_read_gbps", "shared_wavefronts_per_clk_sm"]
    assert "3352 GB/s DRAM peak" in checks["dram_read_gbps"]["expected"]


# The H200's figures as `warpviz calibrate --runs 3` measured them (2026-11-29, tools/gpu/h200_breakdown.sh)
H200 = {"name": "NVIDIA H200", "sm_count": 132, "clock_mhz": 1980, "peak_bandwidth_gbs": 4800.0,
        "driver": "580.159.04", "cuda_driver_api": "13.0", "compute_capability": "9.0"}
H200_FIGURES = dict(sm_clock_mhz=1973, dram_read_gbps=4513, dram_write_gbps=4302.3, dram_copy_gbps=4213.4,
                    l2_read_gbps=8437.3, l2_write_gbps=3983.2, l2_scatter_gsectors=158.44, dram_scatter_gbps=2569.5,
                    l2_partial_gstores=65.344, l2_partial_dram_gstores=63.448, l1_read_gbps=32374,
                    l1_sectors_per_clk_sm=3.8848, shared_wavefronts_per_clk_sm=0.99972,
                    shared_conflict32_wavefronts_per_clk_sm=1.0001, shared_lds128_wavefronts_per_clk_sm=0.99987,
                    lsu_inst_per_clk_sm=0.99971, launch_overhead_us=1.312, launch_host_us=7.7345, empty_grid_us=40.826,
                    block_ns_per_sm=79.588, syncthreads_ns=14.517, syncthreads_1024_ns=38.848, dram_latency_ns=320.81,
                    l2_latency_ns=142.46, l1_latency_ns=17.365, shared_latency_ns=11.699, ffma_latency_clk=4.099,
                    shfl_latency_clk=24.005, mufu_latency_clk=17.003, const_latency_clk=36.011,
                    other_latency_clk=17.004)


def _h200_raw(**over) -> dict:
    raw = _raw(**{**H200_FIGURES, **over})
    raw["device"] = dict(H200)
    return raw


def test_plausibility_is_the_gpus_own_the_h200_passes_where_h100_ratios_failed_it():
    """The H200 writes L2 (3,983 GB/s) slower than it reads DRAM (4,513): the old rule, L2
    writes above DRAM reads, rejected its real figures. Now every rule comes from the GPU's
    own description and measurements: the H200's and the H100's real figures pass."""
    checks = cal.plausibility(H200, cal.document(_h200_raw())["figures"])
    assert set(checks) == set(H200_FIGURES) and all(c["ok"] for c in checks.values()), \
        {k: c for k, c in checks.items() if not c["ok"]}
    assert H200_FIGURES["l2_write_gbps"] < H200_FIGURES["dram_read_gbps"]
    # the shipped H100 calibration passes its own checks too, by today's rules
    h100 = cal.read(cal.default_path(H100["name"]))
    assert all(c["ok"] for c in h100["checks"].values()), {k: c for k, c in h100["checks"].items() if not c["ok"]}
    # the DRAM peak is the H200's (the worker's, else its description's 4,814 GB/s), not the H100's
    no_peak = {k: v for k, v in H200.items() if k != "peak_bandwidth_gbs"}
    c = cal.plausibility(no_peak, cal.document(_h200_raw())["figures"])
    assert c["dram_read_gbps"]["ok"] and "4814 GB/s DRAM peak" in c["dram_read_gbps"]["expected"]
    on_h100 = cal.plausibility(dict(H100), cal.document(_h200_raw())["figures"])
    assert not on_h100["dram_read_gbps"]["ok"]       # 4.5 TB/s is beyond what an H100 can read


@pytest.mark.parametrize("key, value, words", [
    ("l2_write_gbps", 150.0, "a quarter of the L2 read rate"),          # a store loop the compiler emptied
    ("l2_write_gbps", 90000.0, "64 bytes per clock per SM"),
    ("dram_read_gbps", 12000.0, "4800 GB/s DRAM peak"),                  # a buffer that stayed in L2
    ("l1_sectors_per_clk_sm", 16.0, "at most 4"),
    ("loaded_latency_ns_4", 20000.0, "some microseconds"),
])
def test_nonsense_fails_naming_the_figure(key, value, words):
    extra = {}
    if key.startswith("loaded_latency"):
        extra = {f"loaded_latency_ns_{k}": 150.0 + 100 * k for k in cal.LOADED_STREAMS}
    doc = cal.document(_h200_raw(**{**extra, key: value}))
    bad = [k for k, c in doc["checks"].items() if not c["ok"]]
    assert bad == [key] or key in bad, bad
    assert words in doc["checks"][key]["expected"]
    assert f"{key}" in cal.format_table(doc) and "IMPLAUSIBLE" in cal.format_table(doc)


def test_a_loaded_latency_curve_whose_rates_fall_or_pass_the_peak_is_refused():
    raw = _h200_raw(**{f"loaded_latency_ns_{k}": 150.0 + 100 * k for k in cal.LOADED_STREAMS})
    for k, at in zip(cal.LOADED_STREAMS, (0.0, 1971.3, 3093.4, 3861.6, 3960.5)):
        raw["figures"][f"loaded_latency_ns_{k}"]["at_gbps"] = at
    assert all(c["ok"] for c in cal.document(raw)["checks"].values())
    raw["figures"]["loaded_latency_ns_4"]["at_gbps"] = 900.0
    raw["figures"]["loaded_latency_ns_8"]["at_gbps"] = 9000.0
    checks = cal.document(raw)["checks"]
    assert not checks["loaded_latency_ns_4"]["ok"] and "no lower than with fewer streams" in \
        checks["loaded_latency_ns_4"]["expected"]
    assert not checks["loaded_latency_ns_8"]["ok"] and "4800 GB/s peak" in checks["loaded_latency_ns_8"]["expected"]


def test_runs_that_differ_by_more_than_five_percent_are_named():
    """Unstable: fewer than a majority of the runs within 5% of their median (the figure).
    One process apart does not move the median: the H200's L2 read runs of one call."""
    runs = [_h200_raw(l2_write_gbps=v, launch_overhead_us=u, launch_host_us=h, l2_read_gbps=r)
            for v, u, h, r in ((4030.0, 1.40, 7.0, 8872.4), (3700.0, 1.26, 9.5, 8435.3), (3500.0, 1.30, 6.0, 8444.9))]
    doc = cal.document(cal.combine_runs(runs))
    f = doc["figures"]["l2_write_gbps"]
    assert f["run_values"] == [4030.0, 3700.0, 3500.0] and f["run_spread_pct"] == pytest.approx(14.32, abs=0.01)
    # launch_overhead_us: 0.14 us apart (RUN_SPREAD_ABS); launch_host_us: the host's, never held;
    # l2_read_gbps: one run 5.1% above the other two
    assert cal.unstable(doc) == {"l2_write_gbps": pytest.approx(14.32, abs=0.01)}
    assert "runs 14.3% apart UNSTABLE" in cal.format_table(doc)
    assert doc["figures"]["l2_read_gbps"]["run_spread_pct"] == pytest.approx(5.18, abs=0.01)
    steady = cal.document(cal.combine_runs([_h200_raw(l2_write_gbps=v) for v in (4030.0, 3700.0, 4010.0)]))
    assert cal.unstable(steady) == {}
    two = cal.document(cal.combine_runs([_h200_raw(l2_write_gbps=v) for v in (4030.0, 3700.0)]))
    assert set(cal.unstable(two)) == {"l2_write_gbps"}


def test_an_implausible_or_unstable_calibration_is_not_written(tmp_path, capsys, monkeypatch):
    """`warpviz calibrate` exits 1 and writes nothing (the file already there stays as it
    was) when a figure is implausible or its runs differ by more than 5%; --json still
    prints the measured document."""
    runs = iter([_h200_raw(l2_write_gbps=4030.0), _h200_raw(l2_write_gbps=3700.0), _h200_raw(l2_write_gbps=3500.0)])

    class FakeSession:
        def __init__(self, child=None):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def calibrate(self, quick=False, verbose=False):
            return next(runs)

    monkeypatch.setattr("viz.gpu.cli._require", lambda _c: {})
    monkeypatch.setattr("viz.gpu.worker.ProcessSession", FakeSession)
    out = tmp_path / "h200.json"
    out.write_text("the old one")
    assert main(["calibrate", "--runs", "3", "--out", str(out), "--json"]) == 1
    cap = capsys.readouterr()
    assert out.read_text() == "the old one"
    assert f"{out} NOT written" in cap.err and "l2_write_gbps (14.3%)" in cap.err and "warpviz calibrate" in cap.err
    assert json.loads(cap.out)["figures"]["l2_write_gbps"]["run_values"] == [4030.0, 3700.0, 3500.0]
    runs = iter([_h200_raw(dram_read_gbps=20000.0)])
    assert main(["calibrate", "--runs", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "implausible figures: dram_read_gbps (20000, expected" in err and out.read_text() == "the old one"
    runs = iter([_h200_raw()])
    assert main(["calibrate", "--runs", "1", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["device"]["name"] == "NVIDIA H200"


def test_every_figure_has_a_unit_and_a_how_and_the_table_shows_it():
    doc = cal.document(_raw(dram_read_gbps=100.0))
    text = cal.format_table(doc)
    assert "dram_read_gbps" in text and "IMPLAUSIBLE" in text
    for key, (unit, how) in cal.FIGURES.items():
        assert unit and how.endswith(".") and len(how) > 30, key


def test_calibrate_without_a_gpu_exits_2_with_the_reason(capsys, monkeypatch):
    from viz.gpu import GpuUnavailable

    def no_gpu(_counters):
        raise GpuUnavailable("no NVIDIA driver: test", "driver")

    monkeypatch.setattr("viz.gpu.cli._require", no_gpu)
    assert main(["calibrate", "--quick"]) == 2
    assert "cannot calibrate on this machine: no NVIDIA driver" in capsys.readouterr().err


def test_the_microbenchmarks_compile_for_sm_90(capsys):
    from viz.toolchain.compile import find_nvcc

    if not find_nvcc():
        pytest.skip("nvcc is not installed")
    assert main(["calibrate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "compiles" in out and all(k in out for k in cal.FIGURES)


# ---------------------------------------------------------------------------- on the GPU

HOST_FIGURES = {"launch_host_us"}   # the host's (Python's) time, not the GPU's: not held to 5%


@pytest.mark.gpu
def test_calibrate_runs_and_two_runs_agree_within_five_percent(tmp_path):
    pytest.importorskip("pycuda")
    from viz.gpu.worker import ProcessSession

    with ProcessSession(child=cal.CHILD) as s:
        a = s.calibrate(quick=True)
        b = s.calibrate(quick=True)
    doc = cal.document(a)
    cal.save(doc, tmp_path / f"{slug(doc['device']['name'])}.json")
    c = load_calibration(doc["device"]["name"], tmp_path)
    assert set(c.figures) == set(cal.FIGURES) and c.device["sm_count"] == a["device"]["sm_count"]
    bad = {k: (a["figures"][k]["value"], b["figures"][k]["value"]) for k in cal.FIGURES
           if k not in HOST_FIGURES
           and abs(a["figures"][k]["value"] - b["figures"][k]["value"]) > max(
               0.05 * abs(a["figures"][k]["value"]), cal.RUN_SPREAD_ABS.get(k, 0.0))}
    assert not bad, bad
    implausible = {k: c for k, c in doc["checks"].items() if not c["ok"]}
    assert not implausible, implausible


def test_show_prints_a_written_file_and_names_a_broken_one(tmp_path, capsys):
    path = tmp_path / "c.json"
    cal.save(cal.document(_raw(dram_read_gbps=3000.0, l1_latency_ns=20.0)), path)
    assert main(["calibrate", "--show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "dram_read_gbps" in out and "3000" in out and "l1_latency_ns" in out
    assert main(["calibrate", "--show", str(path), "--markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[0].startswith("| figure |") and len(md) == 2 + 2 and "| `l1_latency_ns` | 20 ns |" in md[3]
    doc = json.loads(path.read_text())
    del doc["figures"]["dram_read_gbps"]["how"]
    path.write_text(json.dumps(doc))
    assert main(["calibrate", "--show", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and 'figures.dram_read_gbps has no "how"' in err
    path.write_text("{")
    assert main(["calibrate", "--show", str(path)]) == 2
    assert "line 1, column 2" in capsys.readouterr().err
    assert main(["calibrate", "--show", str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the timing method (no GPU)


class _Clocked:
    """Just enough of ``runner.Session`` for its timing policy: samples whose noise shrinks
    with their length, as on the GPU (a host hiccup of ``hiccup_ms`` lands in one sample)."""

    def __init__(self, kernel_ms: float, hiccup_ms: float):
        self.kernel_ms, self.hiccup_ms, self.enqueue_s, self.calls = kernel_ms, hiccup_ms, 5e-6, []

    def batch_times(self, launch, per_sample, samples):
        self.calls.append((per_sample, samples))
        out = [self.kernel_ms + (self.hiccup_ms / per_sample if i % 5 == 0 else 0.0) for i in range(samples)]
        return out, False


def test_timing_records_noisy_and_its_scale():
    t = Timing((1.0,) * 8 + (1.2, 1.3), launches_per_sample=7, attempts=2)
    d = t.as_dict()
    assert d["noisy"] is True and d["launches_per_sample"] == 7 and d["attempts"] == 2 and d["runs"] == 10
    assert Timing((1.0,) * 10).as_dict()["noisy"] is False and "starved" not in Timing((1.0,)).as_dict()
    assert Timing((1.0, 1.0, 1.0, 1.0, 1.049)).noisy is False       # (p90 - p10) / median = 2.9%


def test_a_noisy_timing_is_retried_with_longer_samples_then_flagged():
    from viz.gpu.runner import MAX_ATTEMPTS, SAMPLE_MS, Session

    quiet = _Clocked(kernel_ms=0.5, hiccup_ms=0.0)
    t = Session._scaled_timing(quiet, lambda i: None, 30, lambda: False)
    assert t.attempts == 1 and not t.noisy and t.launches_per_sample == round(SAMPLE_MS / 0.5)
    # a hiccup of 0.1 ms in every fifth sample: a spread of 10% at 2 launches a sample, 2.5% at 8
    bumpy = _Clocked(kernel_ms=0.5, hiccup_ms=0.1)
    t = Session._scaled_timing(bumpy, lambda i: None, 30, lambda: False)
    assert [c[0] for c in bumpy.calls[-2:]] == [2, 8] and t.attempts == 2 and not t.noisy
    assert t.launches_per_sample == 8 and abs(t.spread - 0.025) < 1e-9 and abs(t.median_ms - 0.5) < 1e-9
    # a hiccup that longer samples cannot hide: retried while the time budget allows,
    # then flagged noisy
    awful = _Clocked(kernel_ms=0.5, hiccup_ms=100.0)
    t = Session._scaled_timing(awful, lambda i: None, 30, lambda: False)
    assert t.noisy and 2 <= t.attempts <= MAX_ATTEMPTS and t.spread > 0.05
    lengths = [c[0] for c in awful.calls[-t.attempts:]]
    assert lengths == [lengths[0] * 4 ** k for k in range(t.attempts)]


class _Queue:
    """A GPU stream as ``batch_times`` sees it: events time-stamped by the launches queued
    before them (each launch ``ms`` long); ``late`` says whether the spin kernel had already
    ended when the host finished queueing, per batch."""

    def __init__(self, ms: float, late: list[bool]):
        self.t, self.ms, self.late, self.spins, self.launched = 0.0, ms, list(late), [], 0
        q = self

        class Event:
            def record(self):
                self.t = q.t

            def time_till(self, other):
                return other.t - self.t

            def query(self):
                return q.late.pop(0) if q.late else False

            def synchronize(self):
                pass

        self.driver = type("driver", (), {"event": staticmethod(Event)})
        self.enqueue_s = 20e-6

    def spin(self, ns):
        self.spins.append(ns)

    def launch(self, _i):
        self.t += self.ms
        self.launched += 1


def test_batch_times_reruns_a_batch_the_spin_did_not_cover_and_says_when_it_could_not():
    from viz.gpu.runner import QUEUE_LAUNCHES, Session

    q = _Queue(0.002, late=[False])
    times, starved = Session.batch_times(q, q.launch, 100, 10)
    assert len(times) == 10 and all(abs(t - 0.002) < 1e-12 for t in times) and not starved
    assert len(q.spins) == -(-10 // (QUEUE_LAUNCHES // 100)) and q.launched == 1000
    q = _Queue(0.002, late=[True, False, False, False])
    times, starved = Session.batch_times(q, q.launch, 100, 3)
    assert len(times) == 3 and not starved and q.launched == 600      # the late batch ran again
    assert len(q.spins) == 2
    q = _Queue(0.002, late=[True, True])
    times, starved = Session.batch_times(q, q.launch, 100, 3)
    assert len(times) == 3 and starved                                 # late again: recorded, not hidden


def test_the_shipped_h100_calibration_loads_and_is_plausible():
    from viz import assets
    from viz.gpu.calibration import CALIBRATION_DIR

    assert CALIBRATION_DIR == assets.root() / "calibration"          # a wheel carries it under viz/_data
    c = load_calibration("NVIDIA H100 80GB HBM3")
    assert c is not None and c.device["name"] == "NVIDIA H100 80GB HBM3" and c.device["sm_count"] == 132
    assert c.measured and c.device["driver"] and c.extra["gpu_state"]["before"]["sm_clock_mhz"]
    doc = cal.read(c.path)
    assert set(doc["figures"]) <= set(cal.FIGURES) and len(doc["figures"]) >= 15
    assert all(f["runs"] >= 3 and len(f["sets"]) == f["runs"] and f["how"] for f in doc["figures"].values())
    bad = {k: ch for k, ch in doc["checks"].items() if not ch["ok"]}
    assert not bad, bad
    gpu = {k: f for k, f in doc["figures"].items() if k not in HOST_FIGURES}
    # below 5%, or flagged noisy with its spread (the empty launch moves ~10% between GPU processes)
    assert all(f["spread_pct"] < 5 or f.get("noisy") for f in gpu.values()), \
        {k: f["spread_pct"] for k, f in gpu.items()}
    assert all(f.get("noisy", False) == (f["spread_pct"] >= 5) for f in doc["figures"].values())
