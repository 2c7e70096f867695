"""The measured bottleneck without a GPU: metric names checked against ncu's listing, ncu's
raw CSV parsed, the summary (DRAM bytes, % of peak, stalls), and the launches it profiles
being the very launches that the shipped results file timed."""

import json

import pytest

from viz.gpu import bottleneck, ncu, results
from viz.toolchain.compile import find_nvcc
from viz.gpu.plan import DeviceLimits
from viz.scenario import load

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")

QUERY_BASE = """Device NVIDIA H100 80GB HBM3 (GH100)
---------------------------------------------------- ------------------------------------
Metric Name                                          Metric Description
dram__bytes_read                                     # of bytes read from DRAM
lts__t_sectors                                       # of LTS sectors
gpu__time_duration                                   total duration in nanoseconds
"""
QUERY_ALL = """dram__bytes_read.sum                                 # of bytes read from DRAM
dram__bytes_read.sum.per_second                      # of bytes read from DRAM per second
lts__t_sectors.sum                                   # of LTS sectors
"""


def test_metric_names_are_checked_against_the_devices_listing():
    ok, missing = ncu.choose_metrics(["dram__bytes_read.sum", "lts__t_sectors.sum", "gpu__time_duration.sum"],
                                     QUERY_ALL, QUERY_BASE)
    assert ok == ["dram__bytes_read.sum", "lts__t_sectors.sum"] and missing == ["gpu__time_duration.sum"]
    # Without the full listing the base names decide.
    ok, missing = ncu.choose_metrics(["dram__bytes_read.sum", "l1tex__t_sectors.sum"], "", QUERY_BASE)
    assert ok == ["dram__bytes_read.sum"] and missing == ["l1tex__t_sectors.sum"]
    # A full listing that knows less than half of the names is not trusted over the base names.
    ok, _ = ncu.choose_metrics(["dram__bytes_read.sum", "gpu__time_duration.sum", "lts__t_sectors.avg"],
                               "dram__bytes_read.sum x\n", QUERY_BASE)
    assert ok == ["dram__bytes_read.sum", "gpu__time_duration.sum", "lts__t_sectors.avg"]


def raw_csv(rows: list[dict]) -> str:
    """ncu --page raw --csv: a header row, a units row, one row per launch."""
    fixed = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
             "Grid Size", "Device", "CC"]
    metrics = sorted({k for r in rows for k in r if "__" in k})
    units = {m: ("byte" if "bytes" in m else "%" if "pct" in m else "nsecond" if "duration" in m else "") for m in metrics}
    q = lambda vals: ",".join(f'"{v}"' for v in vals)  # noqa: E731
    lines = ["==PROF== Disconnected from process 1234", q(fixed + metrics), q([""] * len(fixed) + [units[m] for m in metrics])]
    for i, r in enumerate(rows):
        lines.append(q([str(i), "1234", "python3", "127.0.0.1", r["name"], "1", "7", "(256, 1, 1)", "(528, 1, 1)",
                        "0", "9.0"] + [r.get(m, "") for m in metrics]))
    return "\n".join(lines) + "\n"


STALLS = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
ROWS = [
    {"name": "wv_000_coalesced", "gpu__time_duration.sum": "228,600", "dram__bytes_read.sum": "536,870,912",
     "dram__bytes_write.sum": "536870912", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "88.5",
     "lts__throughput.avg.pct_of_peak_sustained_elapsed": "45.25", "lts__t_sector_hit_rate.pct": "50.1",
     "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed": "0",
     "launch__registers_per_thread": "16", "launch__shared_mem_per_block_static": "0",
     "launch__shared_mem_per_block_dynamic": "0", "sm__warps_active.avg.pct_of_peak_sustained_active": "81.2",
     STALLS.format("long_scoreboard"): "20.5", STALLS.format("lg_throttle"): "3.5",
     STALLS.format("selected"): "1", STALLS.format("wait"): "1.0", STALLS.format("barrier"): "0"},
    {"name": "wv_001_shared_stride_32", "gpu__time_duration.sum": "76400", "dram__bytes_read.sum": "0",
     "dram__bytes_write.sum": "1024", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "0.1",
     "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed": "92.4",
     "smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active": "3.1",
     "launch__registers_per_thread": "n/a", STALLS.format("mio_throttle"): "30", STALLS.format("short_scoreboard"): "5"},
]


def test_raw_csv_is_parsed_and_summarised():
    launches = ncu.parse_raw(raw_csv(ROWS))
    assert [n for n, _ in launches] == ["wv_000_coalesced", "wv_001_shared_stride_32"]
    m = launches[0][1]
    assert m["dram__bytes_read.sum"] == 536870912 and m["gpu__time_duration.sum"] == 228600
    s = ncu.summarize(m)
    assert s["dram_bytes_read"] + s["dram_bytes_write"] == 1 << 30
    assert s["duration_ms"] == pytest.approx(0.2286)
    assert s["bound"] == {"unit": "DRAM", "pct_of_peak": 88.5}
    assert s["throughput_pct"] == {"DRAM": 88.5, "L2": 45.25, "shared pipe": 0.0}
    # "selected" is issuing, not a stall; the top three in order, with their share of all stalls.
    assert [x["reason"] for x in s["stalls"]] == ["long_scoreboard", "lg_throttle", "wait"]
    assert s["stalls"][0]["share"] == pytest.approx(20.5 / 25.0, abs=1e-3)
    assert (s["registers_per_thread"], s["shared_bytes_per_block"], s["achieved_occupancy_pct"]) == (16, 0, 81.2)
    s2 = ncu.summarize(launches[1][1])
    assert s2["bound"] == {"unit": "shared pipe", "pct_of_peak": 92.4}
    assert s2["registers_per_thread"] is None and s2["stalls"][0]["reason"] == "mio_throttle"
    assert ncu.parse_raw("==ERROR== no kernels were profiled\n") == []


@needs_nvcc
def test_profiled_launches_are_the_timed_launches_of_the_shipped_file():
    """bench.timed_launches (what the device script profiles) gives, for every entry the
    shipped results file timed, the same grid, replicas, buffer sets and bytes."""
    doc = results.load()
    names = ["coalesced", "transpose-tile", "reduction-tree", "shared-stride-32", "gemm-naive", "random-gather"]
    items = [(n, load(n)) for n in names]
    from viz.gpu.bench import timed_launches

    launches = timed_launches(items, DeviceLimits(132, doc["device"]["l2_bytes"]), hand_kernels=True)
    seen = 0
    for d in launches:
        section = doc["scenarios" if d["kind"] == "scenario" else "kernels"]
        t = section[d["label"]]["timing"]
        sc = t["scale"]
        grid = sc["grid"] if d["kind"] == "kernel" else [sc["launch"]["grid"][0] * sc["replicas"],
                                                         *sc["launch"]["grid"][1:]]
        assert list(d["spec"].grid) == grid, d["label"]
        assert d["buffer_sets"] == sc["buffer_sets"], d["label"]
        # (a generated kernel without global arrays still gets 256 bytes per replica)
        floor = 256 * sc["replicas"] if d["kind"] == "scenario" else 0
        assert d["spec"].buffer_bytes == max(sc["launch_global_bytes"], floor), d["label"]
        seen += 1
    assert seen == len(names) + len(doc["kernels"])


@needs_nvcc
def test_prep_and_collect_round_trip(tmp_path):
    items = [("coalesced", load("coalesced")), ("shared-stride-32", load("shared-stride-32"))]
    s = bottleneck.prep(tmp_path, QUERY_ALL, QUERY_BASE, "SpeedOfLight LaunchStats", items=items,
                        hand_kernels=False)
    assert s["batches"] == {"batch-1a": 2}
    assert s["sections"] == ["SpeedOfLight", "LaunchStats"]
    # The tiny full listing knows under half of the names, so the base names decide.
    assert (tmp_path / "metrics.txt").read_text().strip() == (
        "gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors.sum,"
        "lts__t_sectors.avg.pct_of_peak_sustained_elapsed")
    spec = json.loads((tmp_path / "batch-1a.json").read_text())
    assert spec["mode"] == "timed" and [d["name"] for d in spec["launches"]] == ["wv_000_coalesced",
                                                                                 "wv_001_shared_stride_32"]
    # ncu profiled only the first launch (the second timed out): the second says so.
    (tmp_path / "batch-1a.raw.csv").write_text(raw_csv(ROWS[:1]))
    doc = bottleneck.collect(tmp_path)
    a, b = doc["entries"]["scenario:coalesced"], doc["entries"]["scenario:shared-stride-32"]
    assert a["summary"]["bound"]["unit"] == "DRAM" and a["launch"]["grid"] == list(spec["launches"][0]["grid"])
    assert "summary" not in b and "not profiled" in b["error"]


def test_merge_attaches_measured_bottlenecks_to_a_results_file():
    """bottleneck.merge: each profiled launch's summary lands on its entry, with the DRAM
    columns from its counters; a launch that ncu did not profile leaves its entry alone."""
    doc = results.load()
    doc["scenarios"]["coalesced"].pop("bottleneck", None)
    doc["scenarios"]["transpose-tile"].pop("bottleneck", None)
    bdoc = {"entries": {
        "scenario:coalesced": {"raw": {"dram__bytes_read.sum": 268435456.0, "dram__bytes_write.sum": 268435456.0,
                                       "dram__throughput.avg.pct_of_peak_sustained_elapsed": 70.0,
                                       "gpu__time_duration.sum": 228000.0}},
        "scenario:transpose-tile": {"error": "not profiled (ncu timed out or the launch failed)"}}}
    out = bottleneck.merge(doc, bdoc, repredict=False)
    results.validate(out)
    e = out["scenarios"]["coalesced"]
    assert e["bottleneck"]["bound"] == {"unit": "DRAM", "pct_of_peak": 70.0}
    assert e["bottleneck"]["duration_ms"] == pytest.approx(0.228)
    t = e["timing"]
    assert t["dram_bytes"] == 1 << 29 and t["dram_gbps"] == pytest.approx((1 << 29) / t["median_ms"] / 1e6, rel=1e-3)
    assert "bottleneck" not in out["scenarios"]["transpose-tile"] and out["version"] == results.VERSION


def test_a_real_nsight_compute_raw_page_is_read():
    """Two launches of run 1's H100 profile (tests/data, trimmed to the columns warpviz reads):
    names, DRAM bytes, the busiest unit, registers and the top stall come out as ncu wrote them."""
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "ncu_raw_h100_sample.csv").read_text()
    launches = ncu.parse_raw(text)
    assert [n for n, _ in launches] == ["wv_006_coalesced", "wv_027_reduction_tree"]
    copy = ncu.summarize(launches[0][1])
    assert (copy["dram_bytes_read"], copy["dram_bytes_write"]) == (268445440, 252622336)
    assert copy["bound"] == {"unit": "DRAM", "pct_of_peak": 69.46}
    assert copy["registers_per_thread"] == 16 and copy["stalls"][0]["reason"] == "long_scoreboard"
    assert copy["duration_ms"] == pytest.approx(0.223808)
    red = ncu.summarize(launches[1][1])
    assert red["bound"]["unit"] == "issue" and red["stalls"][0]["reason"] == "barrier"
    assert red["warp_instructions"] == 770722432
