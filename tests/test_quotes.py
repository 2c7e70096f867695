"""Every H100 figure the lessons quote equals the shipped measurements.

The built-ins' notes, the scenarios README, the README, the guide, docs/GPU.md and
docs/memory-model.md quote
times, bandwidths and counter values measured on an H100. QUOTES ties each quote (the
exact text, with ``{}`` where the number stands) to the entry of
``assets/measurements/h100.json`` (timings, and the counters of the built-ins and kernels)
or ``h100-counters-2026-11-23.json`` (the wide shared-access probes) it comes from, and
how it is rounded. A scan then finds every "N GB/s", "N ms", "N µs" and "H100 measured N"
in those files and fails on any that no quote covers, so a new figure cannot slip in
unchecked: add it to QUOTES (or, when it is not an H100 measurement, to NOT_MEASURED
with the reason). docs/GPU.md's generated tables must equal ``tools/gpu/report_md.py``'s
output for the shipped file. Nothing is run on a GPU (milliseconds).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from viz import assets
from viz.scenario import builtin_names, load

ROOT = Path(__file__).resolve().parent.parent
H = json.loads((assets.measurements_dir() / "h100.json").read_text())
C = json.loads((assets.measurements_dir() / "h100-counters-2026-11-23.json").read_text())

SEC_LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQ_LD = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
WF_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
INST_LD = "smsp__inst_executed_op_shared_ld.sum"
CONF_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


def timing(name: str, key: str, section: str = "scenarios") -> float:
    return H[section][name]["timing"][key]


def per_request(name: str, section: str = "scenarios") -> float:
    """Global load sectors per request, from the H100's counters."""
    c = H[section][name]["counters"]
    return c[SEC_LD] / c[REQ_LD]


def per_load(name: str, section: str = "scenarios") -> float:
    """Shared load wavefronts per warp instruction, from the H100's counters."""
    c = H[section][name]["counters"]
    return c[WF_LD] / c[INST_LD]


T = json.loads((assets.measurements_dir() / "h100-traces.json").read_text())


def traced(name: str, key: str) -> float:
    """A traced launch's predicted input (``own_issue_ns``, ``chain_ns``) in µs, its measured
    median or its prediction (``measured``, ``predicted``) in µs, or its measured / predicted
    (``ratio``), from the shipped h100-traces.json."""
    t = T["traces"][name]["timing"]
    if key == "ratio":
        return t["median_ms"] / t["predicted"]["ms"]
    if key in ("measured", "predicted"):
        return 1e3 * (t["median_ms"] if key == "measured" else t["predicted"]["ms"])
    return t["predicted"]["inputs"][key] / 1e3


HO = json.loads((assets.measurements_dir() / "h100-heldout-2026-11-26.json").read_text())
HELD_US = sorted(1e3 * e["timing"]["median_ms"] for e in HO["traces"].values())


def probe(label: str, key: str) -> int:
    return C["scenarios"][f"probe: {label}"]["hardware"][key]


def sweep(name: str, value, key: str = "median_ms") -> float:
    return next(p[key] for p in H["sweeps"][name]["points"] if p["value"] == value)


def slower(a: str, b: str) -> float:
    """How much slower scenario a ran than b, in percent."""
    return 100 * (timing(a, "median_ms") / timing(b, "median_ms") - 1)


MEMCPY = H["ceiling"]["memcpy_d2d"]["gbps"]
N0, N1, N3, N4, C0, C1 = "{:.0f}", "{:.1f}", "{:.3f}", "{:.4f}", "{:,.0f}", "{:,.1f}"
TINY = ("reduce_interleaved", "reduce_tree", "copy_guarded", "copy_grid_stride")   # the 16- and 32-block launches
TOML = "assets/scenarios/{}.toml".format
COPIES = "the hand-written copy kernel ran at {} GB/s with float, {} GB/s with float2 and {} GB/s with float4, against {} GB/s for cudaMemcpy"

# (file, text with one or more {} for the numbers, [(value, format), ...])
QUOTES: list[tuple[str, str, list[tuple[float, str]]]] = [
    # timings of the built-ins and the hand-written kernels
    (TOML("transpose-naive"), "the naive 8192x8192 transpose ran at {} GB/s against {} GB/s for the padded",
     [(timing("transpose-naive", "useful_gbps"), N0), (timing("transpose-tile-pad", "useful_gbps"), N0)]),
    (TOML("transpose-tile"), "this 8192x8192 transpose ran at {} GB/s, against {} GB/s naive and {} GB/s with pad = 1",
     [(timing("transpose-tile", "useful_gbps"), N0), (timing("transpose-naive", "useful_gbps"), N0),
      (timing("transpose-tile-pad", "useful_gbps"), N0)]),
    (TOML("transpose-tile-pad"), "the 8192x8192 transpose went from {} GB/s unpadded to {} GB/s",
     [(timing("transpose-tile", "useful_gbps"), N0), (timing("transpose-tile-pad", "useful_gbps"), N0)]),
    (TOML("transpose-tile-xor"), "the 8192x8192 transpose ran at {} GB/s", [(timing("transpose-tile-xor", "useful_gbps"), N0)]),
    (TOML("transpose-tile-diagonal"), "with the diagonal layout ran at {} GB/s",
     [(timing("transpose-tile-diagonal", "useful_gbps"), N0)]),
    (TOML("transpose-tile-xor4"), "the 8192x8192 transpose ran at {} GB/s, no better than unswizzled ({} GB/s)",
     [(timing("transpose-tile-xor4", "useful_gbps"), N0), (timing("transpose-tile", "useful_gbps"), N0)]),
    *[(TOML(f), COPIES, [(timing("copy_float", "useful_gbps", "kernels"), N0),
                         (timing("copy_float2", "useful_gbps", "kernels"), N0),
                         (timing("copy_float4", "useful_gbps", "kernels"), N0), (MEMCPY, N0)])
      for f in ("vector-int", "vector-int2", "vector-int4")],
    (TOML("offset-by-one"), "it took {} ms against {} ms for coalesced, about {}% slower",
     [(timing("offset-by-one", "median_ms"), N4), (timing("coalesced", "median_ms"), N4),
      (slower("offset-by-one", "coalesced"), N0)]),
    (TOML("float3-whole"), "the H100 delivered {} GB/s of useful data, against {} GB/s for cudaMemcpy",
     [(timing("float3-whole", "useful_gbps"), N0), (MEMCPY, N0)]),
    (TOML("stride-32"), "stride 8 took {} ms, stride 16 {} ms and stride 32 {} ms",
     [(sweep("global-stride", 8), N3), (sweep("global-stride", 16), N3), (sweep("global-stride", 32), N3)]),
    (TOML("stencil-global"), "this version was the faster one, {} ms against {} ms",
     [(timing("stencil-global", "median_ms"), N4), (timing("stencil-shared", "median_ms"), N4)]),
    (TOML("stencil-global"), "(its useful bandwidth, {} GB/s, is above cudaMemcpy's {} GB/s)",
     [(timing("stencil-global", "useful_gbps"), N0), (MEMCPY, N0)]),
    (TOML("stencil-shared"), "it took {} ms against {} ms for stencil-global",
     [(timing("stencil-shared", "median_ms"), N4), (timing("stencil-global", "median_ms"), N4)]),
    (TOML("shared-stride-32"), "doubled the time, from {} ms to {} ms",
     [(sweep("shared-stride", 1), N3), (sweep("shared-stride", 32), N3)]),
    (TOML("shared-stride-32"), "({} ms at stride 1, {} ms at stride 32)",
     [(timing("shared-stride-1", "median_ms"), N4), (timing("shared-stride-32", "median_ms"), N4)]),
    (TOML("shared-stride-8"), "{} ms at stride 1, {} ms at stride 8",
     [(sweep("shared-stride", 1), N3), (sweep("shared-stride", 8), N3)]),
    ("docs/guide/lesson-plan.md", "the H100 ran the 8192² transpose at {} GB/s unpadded, {} GB/s padded",
     [(timing("transpose-tile", "useful_gbps"), N0), (timing("transpose-tile-pad", "useful_gbps"), N0)]),
    ("docs/guide/lesson-plan.md", "about {}% slower than `coalesced`", [(slower("offset-by-one", "coalesced"), N0)]),
    ("docs/memory-model.md", "the built-in `offset-by-one` ran about {}% slower than `coalesced`, {} ms against {} ms",
     [(slower("offset-by-one", "coalesced"), N0), (timing("offset-by-one", "median_ms"), N4),
      (timing("coalesced", "median_ms"), N4)]),
    ("docs/guide/gpu.md", "| useful bandwidth / `cudaMemcpy` ({} GB/s) |", [(MEMCPY, N0)]),
    *[("docs/guide/gpu.md", f"| `{name}` ({what}) | {{}} ms | {{}} GB/s |",
       [(timing(name, "median_ms"), N3), (timing(name, "useful_gbps"), N0)])
      for name, what in (("transpose-tile", "column read: 32 wavefronts"), ("transpose-tile-pad", "1 wavefront"))],
    # docs/GPU.md
    ("docs/GPU.md", "`softmax_row`: one warp per scheduler, {} µs of own issue beside a {} µs chain "
                    "(measured/predicted 1.28 before, {} now); `gemm_tiled` (traced): two warps per scheduler, "
                    "{} µs beside {} µs (1.19, now {}).",
     [(traced("softmax_row", "own_issue_ns"), "{:.2f}"), (traced("softmax_row", "chain_ns"), N1),
      (traced("softmax_row", "ratio"), "{:.2f}"), (traced("gemm_tiled", "own_issue_ns"), "{:.2f}"),
      (traced("gemm_tiled", "chain_ns"), N1), (traced("gemm_tiled", "ratio"), "{:.2f}")]),
    ("docs/GPU.md", "the H100 took {} µs, {} ns per tile step beyond the launch overhead",
     [(traced("sgemm_tile16", "measured"), "{:.2f}"),
      ((traced("sgemm_tile16", "measured") - T["cost_model"]["launch_overhead_us"]) / 8 * 1e3, N0)]),
    ("docs/GPU.md", "With the rule it is predicted at {} µs ({}, was 1.32); its rolled twin `sgemm_tile16_rolled`, "
                    "whose warps wait for each LDS in turn, is unchanged ({})",
     [(traced("sgemm_tile16", "predicted"), "{:.2f}"), (traced("sgemm_tile16", "ratio"), "{:.2f}"),
      (traced("sgemm_tile16_rolled", "ratio"), "{:.2f}")]),
    ("docs/GPU.md", "`gemm-nt-swizzle-add` / `-xor` (`h100.json`) to {} / {} (were 1.15 / 1.17)",
     [(timing(k, "median_ms") / H["scenarios"][k]["timing"]["predicted"]["ms"], "{:.2f}")
      for k in ("gemm-nt-swizzle-add", "gemm-nt-swizzle-xor")]),
    ("docs/GPU.md", "float4 copy vs D2D cudaMemcpy ({} GB/s) | DRAM traffic from the counters: {} GB/s = {}% "
     "(hand-written), {} GB/s = {}% (generated `vector-int4`)",
     [(MEMCPY, C0), (timing("copy_float4", "dram_gbps", "kernels"), C0),
      (100 * timing("copy_float4", "fraction_of_memcpy", "kernels"), N1),
      (timing("vector-int4", "dram_gbps"), C0), (100 * timing("vector-int4", "fraction_of_memcpy"), N1)]),
    ("docs/GPU.md", "| {} / {} GB/s = {}% (hand-written); {} / {} (generated)",
     [(timing("transpose_tile_pad1", "useful_gbps", "kernels"), C0),
      (timing("transpose_tile_xor", "useful_gbps", "kernels"), C0),
      (100 * timing("transpose_tile_pad1", "useful_gbps", "kernels") / timing("copy_float4", "useful_gbps", "kernels"), N1),
      (timing("transpose-tile-pad", "useful_gbps"), C0), (timing("transpose-tile-xor", "useful_gbps"), C0)]),
    ("docs/GPU.md", "pad: {} → {} ms, predicted {} → {}; shared stride 1…32: {} … {} ms",
     [(sweep("transpose-pad", 0), N3), (sweep("transpose-pad", 1), N3),
      (sweep("transpose-pad", 0, "predicted_ms"), N3), (sweep("transpose-pad", 1, "predicted_ms"), N3),
      (sweep("shared-stride", 1), N3), (sweep("shared-stride", 32), "{:.2f}")]),
    ("docs/GPU.md", "| timing spread < 5% | float4 copy {}%; every timed entry ≤ {}%, the largest `copy_guarded` "
     "({} µs launches, {}%); `char-stride-4` ({} µs launches) {}% |",
     [(100 * timing("copy_float4", "spread", "kernels"), N1),
      (100 * max(e["timing"]["spread"] for sec in ("scenarios", "kernels") for e in H[sec].values()), N1),
      (1000 * timing("copy_guarded", "median_ms", "kernels"), N1), (100 * timing("copy_guarded", "spread", "kernels"), N1),
      (1000 * timing("char-stride-4", "median_ms"), N0), (100 * timing("char-stride-4", "spread"), N1)]),
    ("docs/GPU.md", "they and `copy_grid_stride` take {}–{} µs with spreads of {}–{}%",
     [(1000 * min(timing(k, "median_ms", "kernels") for k in TINY), N1),
      (1000 * max(timing(k, "median_ms", "kernels") for k in TINY), N1),
      (100 * min(timing(k, "spread", "kernels") for k in TINY), N1),
      (100 * max(timing(k, "spread", "kernels") for k in TINY), N1)]),
    ("docs/GPU.md", "took {} ms against {} ms for stride 8",
     [(sweep("global-stride", 16), "{:.2f}"), (sweep("global-stride", 8), "{:.2f}")]),
    ("docs/GPU.md", "more than half the {} GB/s of the others", [(MEMCPY, C0)]),
    ("docs/GPU.md", "one every 160 ns (1,986 blocks per SM in {} ms)",
     [(timing("tma-swizzle-none", "median_ms"), N3)]),
    # counter values of the built-ins ("H100 measured N ...")
    (TOML("aos-float3-r"), "H100 measured {} sectors per request for AoS float3 .x", [(per_request("aos-float3-r"), N0)]),
    (TOML("float3-whole"), "H100 measured {} sectors per request for AoS float3 .x", [(per_request("aos-float3-r"), N0)]),
    (TOML("coalesced"), "H100 measured {} sectors per request", [(per_request("coalesced"), N0)]),
    (TOML("soa-float-r"), "H100 measured {} for a coalesced float read", [(per_request("copy_float", "kernels"), N0)]),
    (TOML("offset-by-one"), "H100 measured {} sectors per request instead of 4", [(per_request("offset-by-one"), N0)]),
    (TOML("stencil-global"), "H100 measured {} for a float read offset by one element", [(per_request("offset-by-one"), N0)]),
    (TOML("stride-2"), "H100 measured {} sectors per request for stride 2", [(per_request("stride-2"), N0)]),
    *[(TOML(f), "H100 measured {} sectors per request for any stride of 8 floats or more",
       [(min(per_request("stride-16"), per_request("stride-32")), N0)]) for f in ("stride-16", "stride-32")],
    (TOML("vector-int2"), "H100 measured {} sectors per request for sequential float2", [(per_request("copy_float2", "kernels"), N0)]),
    (TOML("vector-int4"), "H100 measured {} sectors per request for sequential float4", [(per_request("copy_float4", "kernels"), N0)]),
    (TOML("float4-tile"), "H100 measured the same {} wavefronts, {} conflicts for a float4 s[lane] read",
     [(probe("float4 s[lane]", WF_LD), N0), (probe("float4 s[lane]", CONF_LD), N0)]),
    (TOML("gemm-nt-swizzle-xor"), "H100 measured {} for tile[r][c ^ r]", [(per_load("transpose-tile-xor"), N0)]),
    (TOML("transpose-tile-xor"), "H100 measured {} for tile[r][c ^ r]", [(per_load("transpose-tile-xor"), N0)]),
    (TOML("gemm-nt-tile"), "H100 measured {} for tile[32][32] read down a column", [(per_load("transpose-tile"), N0)]),
    (TOML("transpose-tile"), "H100 measured {} for tile[32][32] read down a column", [(per_load("transpose-tile"), N0)]),
    (TOML("transpose-tile-pad"), "H100 measured {} for tile[32][33]", [(per_load("transpose-tile-pad"), N0)]),
    (TOML("transpose-tile-xor4"), "H100 measured {} for tile[r][c ^ 4]", [(per_load("transpose-tile-xor4"), N0)]),
    (TOML("shared-broadcast"), "H100 measured {} for s[0] read by all lanes", [(per_load("shared-broadcast"), N0)]),
    (TOML("shared-stride-2"), "H100 measured {} wavefronts for s[lane*2]", [(per_load("shared-stride-2"), N0)]),
    (TOML("shared-stride-33"), "H100 measured {} for s[lane*33]", [(per_load("shared-stride-33"), N0)]),
    # the held-out set's range of launch times, in the README
    ("README.md", "for the check, {} to {} µs each;", [(HELD_US[0], N0), (HELD_US[-1], N0)]),
    # the pair rule in the README, from the probes
    ("README.md", "`double s[0]` is {} wavefront, not 2; `float4 s[lane/2]` is {}, not 4; "
     "`double s[lane] when lane % 8 == 0` is {} wavefronts with {} bank conflict",
     [(probe("double s[0]", WF_LD), N0), (probe("float4 s[lane/2]", WF_LD), N0),
      (probe("double s[lane] when lane % 8 == 0", WF_LD), N0), (probe("double s[lane] when lane % 8 == 0", CONF_LD), N0)]),
]

# Figures with a unit that are not H100 measurements: (file, text, why).
NOT_MEASURED = [
    ("README.md", "edit shows in well under 100 ms", "the app's own speed (docs/PERFORMANCE.md)"),
    ("README.md", "a frame paints in about 4–5 ms", "the painter's speed (docs/PERFORMANCE.md)"),
    ("docs/GPU.md", "First at least 100 ms of warm-up launches", "the benchmark's warm-up rule"),
    ("docs/GPU.md", "enough back-to-back launches to take 1 ms of GPU time", "the timing method's sample rule"),
    ("docs/GPU.md", "for launches ≥ 50 µs", "a threshold; test_spread_is_small_for_launches_of_50_us"),
    ("docs/GPU.md", "measured 0.1919 ms on the H200", "an H200 measurement (tools/gpu/h200_breakdown.sh, 2026-11-29)"),
    ("docs/GPU.md", "cudaMemcpy 4,181 GB/s", "an H200 measurement (assets/measurements/h200.json)"),
    ("docs/GPU.md", "(measured 0.524 ms, predicted 0.081", "an H200 measurement (assets/measurements/h200.json)"),
    ("docs/GPU.md", "`tma-oob-edge` (0.331 ms against", "an H200 measurement (assets/measurements/h200.json)"),
    ("docs/GPU.md", "`tma-store-swizzle-128b` measured 0.117 ms against 0.131", "an H200 measurement (h200-tma-store-planes-2026-11-29.json)"),
    ("docs/GPU.md", "`tma-oob-edge` 0.145 ms against 0.051", "an H200 measurement (h200-tma-store-planes-2026-11-29.json)"),
    ("docs/GPU.md", "(`tma-swizzle-128b` 0.160 against 0.160", "an H200 measurement (h200-tma-store-planes-2026-11-29.json)"),
    ("docs/GPU.md", "`launch_touch_us` (1.57 µs against an", "an H200 calibration (assets/calibration/nvidia-h200.json)"),
]

FILES = sorted({*(ROOT / "assets" / "scenarios").glob("*.toml"), ROOT / "assets" / "scenarios" / "README.md",
                ROOT / "README.md", *(ROOT / "docs" / "guide").glob("*.md"), ROOT / "docs" / "GPU.md",
                ROOT / "docs" / "memory-model.md"})
FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?\s*(?:GB/s|ms|µs)(?!\w)|H100 measured (?:the same )?\d+")
GENERATED = "## Tables of the shipped file"


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def text_of(path: Path) -> str:
    """The file with line breaks as spaces; docs/GPU.md without its generated tables."""
    text = path.read_text(encoding="utf-8")
    if path.name == "GPU.md":
        text = text[:text.index(GENERATED)]
    if path.suffix == ".toml":      # the Chinese notes repeat the English figures (test below)
        text = re.sub(r'^notes_zh = """.*?^"""', "", text, flags=re.M | re.S)
    return norm(text)


def expected(template: str, values: list[tuple[float, str]]) -> str:
    return norm(template).format(*(fmt.format(v) for v, fmt in values))


@pytest.mark.parametrize("path,template,values", QUOTES, ids=[f"{p}:{t[:40]}" for p, t, _ in QUOTES])
def test_quote_equals_the_shipped_measurements(path, template, values):
    want = expected(template, values)
    assert want in text_of(ROOT / path), f"{path} should say: {want!r}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_figure_is_a_checked_quote(path):
    rel = str(path.relative_to(ROOT))
    text = text_of(path)
    covered = []
    for p, template, values in QUOTES:
        if p == rel:
            want = expected(template, values)
            covered += [(m.start(), m.end()) for m in re.finditer(re.escape(want), text)]
    for p, quote, _why in NOT_MEASURED:
        if p == rel:
            assert quote in text, f"{rel}: NOT_MEASURED quote {quote!r} is gone; drop it from the list"
            covered += [(m.start(), m.end()) for m in re.finditer(re.escape(quote), text)]
    loose = [m.group(0) for m in FIGURE.finditer(text)
             if not any(a <= m.start() and m.end() <= b for a, b in covered)]
    assert not loose, (f"{rel}: figures not tied to assets/measurements by tests/test_quotes.py QUOTES: {loose}")


@pytest.mark.parametrize("name", builtin_names())
def test_chinese_notes_quote_the_same_figures(name):
    """A figure with a unit in notes_zh is one of the English notes' (checked above)."""
    sc = load(name)
    english = [norm(f) for f in FIGURE.findall(sc.notes)]
    assert [norm(f) for f in FIGURE.findall(sc.notes_zh)] == [f for f in english if not f.startswith("H100")]


def test_gpu_md_tables_are_the_shipped_file():
    """docs/GPU.md's generated part is tools/gpu/report_md.py's output for h100.json."""
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "gpu" / "report_md.py")], capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600).stdout
    doc = (ROOT / "docs" / "GPU.md").read_text(encoding="utf-8")
    assert out.strip() in doc[doc.index(GENERATED):]


def test_spread_is_small_for_launches_of_50_us():
    """docs/GPU.md: timing spread < 5% for every launch of at least 50 µs."""
    entries = [e["timing"] for sec in ("scenarios", "kernels") for e in H[sec].values()]
    long = [t for t in entries if t["median_ms"] >= 0.05]
    assert long and all(t["spread"] < 0.05 for t in long)


def test_the_scan_catches_an_unchecked_figure(tmp_path):
    text = norm("On the H100 it ran at 1234 GB/s in 0.5 ms; H100 measured 7 for s[x].")
    assert [m.group(0) for m in FIGURE.finditer(text)] == ["1234 GB/s", "0.5 ms", "H100 measured 7"]


def test_the_cost_models_h100_is_the_shipped_device():
    from viz.gpu import costmodel

    dev = H["device"]
    assert costmodel.H100.dram_bytes_per_s / 1e9 == pytest.approx(MEMCPY, abs=0.5)
    assert (costmodel.H100.sm_count, costmodel.H100.clock_hz / 1e6) == (dev["sm_count"], dev["clock_mhz"])
    # The other figures (launch overhead, latencies) are the ones the shipped predictions were
    # made with, recorded with their sources in the file (calibration, default or measured).
    assert set(H["cost_model"]["sources"]) >= {"launch_overhead_us", "dram_latency_ns", "block_ns_per_sm"}
