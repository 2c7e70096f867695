"""The cost model without a GPU: invariants (hypothesis), occupancy, where sectors are served
(L1 / L2 / DRAM from the addresses), the dependent chain, and the shipped predictions."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viz.engine import analyze
from viz.gpu import costmodel
from viz.gpu.costmodel import H100, Workload, occupancy, predict_launch
from viz.gpu.reuse import analyze_reuse
from viz.scenario import load, loads

from helpers import access, global_array, scenario

workloads = st.builds(
    Workload,
    blocks=st.integers(1, 2_000_000), threads_per_block=st.sampled_from([32, 64, 128, 256, 512, 1024]),
    sectors=st.integers(0, 10**9), wavefronts=st.integers(0, 10**9), instructions=st.integers(0, 10**9),
    dram_bytes=st.floats(0, 1e10), l2_sectors=st.floats(0, 1e9), chain_s=st.floats(0, 1e-4),
    registers=st.one_of(st.none(), st.integers(8, 255)), shared_bytes=st.integers(0, 200_000),
    l2_requests=st.floats(0, 1e9), l2_store_sectors=st.floats(0, 1e9), partial_store_sectors=st.floats(0, 1e9),
    dram_scatter_bytes=st.floats(0, 1e10), warp_instructions=st.floats(0, 1e10),
    global_instructions=st.integers(0, 10**9), tma_box_s=st.floats(0, 1e-6), own_issue_s=st.floats(0, 1e-5))
FIELDS = ["sectors", "wavefronts", "instructions", "dram_bytes", "l2_sectors", "chain_s", "l2_requests",
          "l2_store_sectors", "partial_store_sectors", "dram_scatter_bytes", "warp_instructions",
          "memory instructions", "tma_box_s", "own_issue_s"]


@settings(max_examples=300, deadline=None)
@given(workloads, st.sampled_from(FIELDS), st.floats(1.0, 10.0))
def test_more_work_never_predicts_less_time(w, name, factor):
    """More wavefronts, sectors, instructions, DRAM bytes (scattered ones too), L2 sectors or
    requests, stored or partly written sectors, warp instructions or latency: never a
    shorter prediction. The model's DeviceModel has the calibrated L2 and DRAM rates."""
    if name == "memory instructions":    # more of them, the same share of them global
        w = replace(w, global_instructions=min(w.global_instructions, w.instructions))
        bigger = replace(w, instructions=int(w.instructions * factor),
                         global_instructions=int(w.global_instructions * factor))
    elif name == "warp_instructions":    # from the same SASS: each warp's own issue grows with them
        bigger = replace(w, warp_instructions=w.warp_instructions * factor, own_issue_s=w.own_issue_s * factor)
    else:
        more = getattr(w, name) * factor
        bigger = replace(w, **{name: int(more) if isinstance(getattr(w, name), int) else more})
    assert predict_launch(bigger).seconds >= predict_launch(w).seconds * (1 - 1e-12)


def test_a_lone_warps_own_issue_adds_to_its_chain_and_many_warps_hide_it():
    """One block of four warps on one SM (one warp per scheduler): its own issue (1 us)
    is longer than the scheduler's share of the instructions, so it adds to the latency
    term in full. The same own issue beside a share longer than it (many warps) changes
    nothing: the share is the issue term."""
    base = Workload(blocks=1, threads_per_block=128, chain_s=1.5e-6, warp_instructions=4 * 500)
    lone = replace(base, own_issue_s=1e-6)
    p0, p1 = predict_launch(base), predict_launch(lone)
    # alone: block start + chain + own issue, not combined with the issue term again
    assert p1.term("latency") == pytest.approx(H100.block_launch_s + 1.5e-6 + 1e-6, rel=1e-9)
    assert p1.seconds > p0.seconds + 0.9e-6
    assert p1.bound == "latency" and "its own issue 1000 ns, alone on its scheduler" in next(
        t.what for t in p1.terms if t.name == "latency")
    busy = replace(base, blocks=132 * 16, threads_per_block=1024, warp_instructions=132 * 16 * 32 * 2000)
    assert predict_launch(replace(busy, own_issue_s=1e-7)).seconds == predict_launch(busy).seconds


def test_a_calibration_figure_that_failed_its_check_is_not_used(tmp_path):
    """The first const_latency_clk run (377 cycles, every lane its own constant address)
    failed its plausibility check: the model takes the default and says why."""
    import json

    from viz.gpu.calibration import CALIBRATION_DIR, Calibration

    d = json.loads((CALIBRATION_DIR / "nvidia-h100-80gb-hbm3.json").read_text())
    d["figures"]["const_latency_clk"]["value"] = 377.0
    d["checks"]["const_latency_clk"] = {"ok": False, "expected": "4..200: tens of cycles (a constant-cache hit)"}
    m = costmodel.DeviceModel.from_device(d["device"] | {"name": "NVIDIA H100 80GB HBM3"},
                                          calibration=Calibration.from_json(d))
    assert dict(m.issue_latency)["const"] == costmodel.DEFAULTS["const_latency_clk"][0]
    assert "failed its check" in dict(m.sources)["const_latency_clk"]
    assert dict(m.issue_latency)["shfl"] == d["figures"]["shfl_latency_clk"]["value"]


@settings(max_examples=200, deadline=None)
@given(workloads, st.integers(2, 8))
def test_more_blocks_doing_the_same_each_never_predicts_less_time(w, k):
    more = replace(w, blocks=w.blocks * k, sectors=w.sectors * k, wavefronts=w.wavefronts * k,
                   instructions=w.instructions * k, dram_bytes=w.dram_bytes * k, l2_sectors=w.l2_sectors * k,
                   l2_requests=w.l2_requests * k, l2_store_sectors=w.l2_store_sectors * k,
                   partial_store_sectors=w.partial_store_sectors * k, dram_scatter_bytes=w.dram_scatter_bytes * k,
                   warp_instructions=w.warp_instructions * k, global_instructions=w.global_instructions * k)
    assert predict_launch(more).seconds >= predict_launch(w).seconds * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(workloads, st.integers(1, 264))
def test_more_sms_never_slower_and_the_bound_is_the_largest_term(w, sms):
    few = replace(H100, sm_count=sms)
    many = replace(H100, sm_count=sms + 1)
    assert predict_launch(w, many).seconds <= predict_launch(w, few).seconds * (1 + 1e-12)
    p = predict_launch(w)
    top = max(p.terms, key=lambda t: t.seconds)
    assert p.bound == top.name and p.seconds == pytest.approx(top.seconds + H100.launch_overhead_s)
    assert p.explain() == f"bound by {top.name}: {top.seconds * 1e3:.4g} ms of {p.ms:.4g} ms"


@settings(max_examples=100, deadline=None)
@given(workloads, st.integers(8, 255), st.integers(0, 100_000))
def test_more_registers_or_shared_memory_never_raise_occupancy(w, regs, extra):
    a = occupancy(H100, w.threads_per_block, regs, w.shared_bytes)
    b = occupancy(H100, w.threads_per_block, min(255, regs + 8), w.shared_bytes + extra)
    assert 1 <= b["blocks_per_sm"] <= a["blocks_per_sm"] <= 32


def test_occupancy_limits():
    assert occupancy(H100, 256, 32, 0)["blocks_per_sm"] == 8                     # 2048 threads per SM
    o = occupancy(H100, 1024, 64, 0)
    assert (o["blocks_per_sm"], o["limited_by"]) == (1, "registers")             # 64 x 1024 = all 65536
    o = occupancy(H100, 128, 32, 48 * 1024)
    assert (o["blocks_per_sm"], o["limited_by"]) == (4, "shared memory")          # 228 KiB // 49 KiB
    assert occupancy(H100, 32, 16, 0)["blocks_per_sm"] == 32                     # at most 32 blocks


def test_the_tail_of_a_small_grid_costs_a_whole_block_time():
    """16 blocks on 132 SMs take as long as one block's chain, not 16/132 of it."""
    w = Workload(blocks=16, threads_per_block=256, chain_s=2e-6)
    p = predict_launch(w)
    assert p.term("latency") == pytest.approx(H100.block_launch_s + 2e-6)
    assert predict_launch(replace(w, blocks=132)).term("latency") == pytest.approx(p.term("latency"))
    assert predict_launch(replace(w, blocks=132 * 16)).term("latency") == pytest.approx(2 * p.term("latency"))


# ---------------------------------------------------------------------------- reuse


def test_a_copy_moves_each_byte_once_and_hits_no_cache():
    sc = load("coalesced")                       # 16384 floats in, 16384 out
    r = analyze_reuse(sc, 1056, 50 << 20)
    assert (r.load_sectors, r.store_sectors) == (2048, 2048)
    assert (r.l1_hit_sectors, r.l2_sectors) == (0, 4096)
    assert (r.dram_read_bytes, r.dram_write_bytes) == (65536, 65536)


def test_float3_parts_hit_in_l1_and_dram_moves_the_array_once():
    """x, y and z of a float3 are three loads over the same 12 sectors per warp: the 2nd and
    3rd find them in L1; DRAM moves the 192 KiB array once, not three times."""
    sc = load("float3-whole")
    r = analyze_reuse(sc, 1056, 50 << 20)
    assert r.load_sectors == 18432 and r.l1_hit_sectors == 18432 * 2 // 3
    assert r.dram_read_bytes == 16384 * 12 and r.dram_write_bytes == 16384 * 12
    an = analyze(sc)
    no_reuse = costmodel.dram_bytes((s.sectors, s.lines) for s in an.stats if s.space == "global")
    assert no_reuse > 2 * r.dram_bytes


def test_a_strided_read_pays_64_bytes_per_element_in_dram():
    text = """
[launch]
block = [256]
grid = [8]
[arrays.a]
space = "global"
type = "float"
shape = [32768]
[[access]]
op = "load"
at = "a[(blockIdx.x*blockDim.x + threadIdx.x) * 16]"
"""
    r = analyze_reuse(loads(text, name="s16"), 1056, 50 << 20)
    assert r.load_sectors == 2048 and r.dram_read_bytes == 2048 * 64 and r.l1_hit_sectors == 0


def test_a_repeated_volatile_load_does_not_hit_l1():
    """A thread that reads its word twice gets ``.volatile`` loads (codegen), which bypass L1:
    the second read is an L2 hit."""
    text = """
[launch]
block = [64]
grid = [2]
[arrays.a]
space = "global"
type = "float"
shape = [128]
[[access]]
op = "load"
at = "a[blockIdx.x*blockDim.x + threadIdx.x]"
for = { r = "0:2" }
"""
    r = analyze_reuse(loads(text, name="twice"), 1056, 50 << 20)
    assert r.load_sectors == 32 and r.l1_hit_sectors == 0 and r.l2_sectors == 32
    second = [x for x in r.per_instruction.values()][1]
    assert second.l2_hits == second.sectors == 16 and r.dram_read_bytes == 512


def test_a_large_launch_keeps_reuse_within_a_wave():
    """Arrays bigger than half of L2: the window is one wave of blocks, sampled."""
    sc = load("transpose-naive")
    whole = analyze_reuse(sc, 132 * 8, 50 << 20)
    small_l2 = analyze_reuse(sc, 16, 1 << 10)
    assert whole.window == "launch" and whole.sampled_blocks == sc.launch.blocks
    assert small_l2.window == "wave" and small_l2.sampled_blocks == 16
    # Reuse further apart than a wave is lost: never fewer DRAM bytes than with the whole replica.
    assert small_l2.dram_bytes >= whole.dram_bytes


# ---------------------------------------------------------------------------- the chain


def test_the_reduction_chain_counts_its_steps():
    """Warp 0 of reduction-tree waits for one DRAM load, 17 shared loads (2 per halving step
    and cache[0]), 26 predicated accesses and 3 barriers; no load of it overlaps another."""
    w = costmodel.workload(analyze(load("reduction-tree")))
    chain = {what: n for what, n, _s in w.chain}
    assert chain == {"shared load": 17, "L1 load": 0, "L2 load": 0, "DRAM load": 1, "predicated access": 26,
                     "__syncthreads": 3, costmodel.BURST_WHAT: 0}     # its warps' waits outlast the shared pipe
    d = H100
    expected = (d.dram_latency_s + 17 * d.shared_latency_s + 26 * costmodel.BRANCH_CYCLES / d.clock_hz
                + 3 * d.syncthreads_s)
    assert w.chain_s == pytest.approx(expected)


def test_a_barrier_segment_waits_for_the_blocks_shared_wavefronts():
    """shared-stride-32: 8 warps store and then (after a barrier) load with a 32-way
    conflict, 256 wavefronts a segment through the SM's one-per-clock pipe, where each warp's
    own chain is one shared latency: both segments last the block's wavefronts plus a shared
    latency."""
    d = H100
    assert costmodel.shared_burst_s(0, d) == 0.0
    one = costmodel.shared_burst_s(256, d)
    assert one == pytest.approx(d.shared_latency_s + 256 / (d.wavefronts_per_clock * d.clock_hz))
    w = costmodel.workload(analyze(load("shared-stride-32")))
    assert w.chain_s == pytest.approx(2 * one + d.syncthreads_s)
    burst = {what: (n, s) for what, n, s in w.chain}[costmodel.BURST_WHAT]
    # beyond the warps' own chains: the stores' segment has none, the loads' one shared latency
    assert burst[0] == 2 and burst[0] * burst[1] == pytest.approx(2 * one - d.shared_latency_s)
    # a faster pipe shortens it, never below the warps' own chain
    fast = replace(d, wavefronts_per_clock=1000.0)
    w2 = costmodel.workload(analyze(load("shared-stride-32")), device=fast)
    assert w2.chain_s < w.chain_s and w2.chain_s >= d.shared_latency_s + d.syncthreads_s


def test_independent_loads_overlap():
    """gemm-naive's 128 loads per thread are independent: the chain is far below their sum."""
    w = costmodel.workload(analyze(load("gemm-naive")))
    summed = sum(n * s for what, n, s in w.chain if what.endswith("load"))
    assert w.chain_s < summed / 8 and w.chain_s >= H100.dram_latency_s


def test_blocks_that_share_data_far_apart_in_launch_order_read_it_again():
    """gemm-naive's grid is (2 x replicas, 8): the 8 block rows that read one B are 2 x
    replicas blocks apart when the GPU starts them, so with 10923 replicas B comes from DRAM
    once per row: 8 x 16 KiB + A's 16 KiB per replica (Nsight Compute measured 1.61 GB of
    DRAM reads for the 10923 replicas, 147 KiB each)."""
    sc = load("gemm-naive")
    one = analyze_reuse(sc, 1056, 50 << 20, replicas=1)
    many = analyze_reuse(sc, 1056, 50 << 20, replicas=10923)
    assert one.window == "launch" and one.dram_read_bytes == 2 * 16384
    assert many.dram_read_bytes == pytest.approx(8 * 16384 + 16384, rel=0.02)
    assert many.dram_write_bytes == one.dram_write_bytes == 16384


def test_a_column_store_writes_every_sector_in_part():
    """transpose-naive stores 4 bytes per lane, one lane per line: every store sector is
    written in part, and L2 merges each (its second slot in the L2 term)."""
    r = analyze_reuse(load("transpose-naive"), 1056, 50 << 20)
    assert r.partial_store_sectors == r.store_sectors == 65536
    assert analyze_reuse(load("float3-whole"), 1056, 50 << 20).partial_store_sectors == 0


def test_the_shipped_predictions_are_reproduced():
    """The cost model, with the figures the shipped file records (its calibration at the
    time), rebuilds the shipped file's predictions exactly: terms, bound and time."""
    from viz.gpu import results
    from viz.gpu.predict import predict_document

    doc = results.load()
    names = {"transpose-tile", "transpose-tile-pad", "coalesced", "reduction-tree", "shared-stride-32",
             "gemm-naive", "copy_float4", "stencil_shared", "transpose_naive", "shared_stride@shared-stride-8"}
    got = predict_document(doc, names=names)
    assert len(got) == len(names)
    for (section, name), (p, _res) in got.items():
        assert p.as_dict() == doc[section][name]["timing"]["predicted"], name


def test_sweeps_follow_the_measured_shape():
    """Padding the transpose tile, global stride and shared stride: the predicted times
    rise and fall where the measured ones do, within 20% at every point."""
    from viz.gpu import results

    doc = results.load()
    for name in ("transpose-pad", "global-stride", "shared-stride"):
        pts = doc["sweeps"][name]["points"]
        meas = [p["median_ms"] for p in pts]
        pred = [p["predicted_ms"] for p in pts]
        for a, b in zip(zip(meas, meas[1:]), zip(pred, pred[1:])):
            # a step the measurement takes by more than 10% the prediction takes the same way
            if abs(a[1] / a[0] - 1) > 0.1:
                assert (a[1] > a[0]) == (b[1] > b[0]), name
        assert all(abs(p / m - 1) <= 0.2 for m, p in zip(meas, pred)), name


def test_hits_on_sectors_still_on_their_way_wait():
    """gemm-naive issues its loads back to back: the other warps of a block ask for the B
    sector one warp already fetches, and a row's A sector serves the next 7 iterations while
    it is still coming: nearly every L1 hit waits like a miss. stencil-global's neighbours are
    loaded inside ``when`` branches, each waited for: their hits are real hits, but for the
    one sector per warp that the next warp fetches in the same instruction."""
    g = analyze_reuse(load("gemm-naive"), 1056, 50 << 20)
    hits = sum(x.l1_hits for x in g.per_instruction.values())
    waits = sum(x.l1_waits for x in g.per_instruction.values())
    assert hits == waits == 35840
    s = analyze_reuse(load("stencil-global"), 1056, 50 << 20)
    hits = sum(x.l1_hits for x in s.per_instruction.values())
    waits = sum(x.l1_waits for x in s.per_instruction.values())
    assert hits == 4992 and waits == 448 == 64 * 7     # 7 warp boundaries in each of 64 blocks


# ---------------------------------------------------------------------------- L2 requests, gathers, residency


def test_l2_requests_are_one_per_warp_instruction_and_line():
    """A coalesced float copy: each warp's load and store cover one 128-byte line (1024
    requests for 4096 sectors); the random gather's lanes each hit a line of their own."""
    r = analyze_reuse(load("coalesced"), 1056, 50 << 20)
    assert r.l2_requests == 512 + 512 and r.l2_sectors == 4096 and r.dram_scatter_bytes == 0
    g = analyze_reuse(load("random-gather"), 1056, 50 << 20)
    assert g.l2_requests == 512 * 32 + 512
    # every chunk of `in` is fetched first by a warp whose lanes lie in many DRAM pages
    assert g.dram_scatter_bytes == 16384 * 4 and g.dram_read_bytes == 16384 * 4


def test_a_strided_read_is_not_a_scattered_read():
    """stride-32: every lane its own line, but the warp's 32 lines are 4 KiB in a row (two
    DRAM pages): it streams."""
    r = analyze_reuse(load("stride-32"), 1056, 50 << 20)
    assert r.dram_read_bytes > 0 and r.dram_scatter_bytes == 0


def test_a_resident_timed_loop_reads_from_l2_not_dram():
    sc = load("coalesced")
    r = analyze_reuse(sc, 1056, 50 << 20, resident=True)
    assert r.dram_bytes == 0 and r.window == "resident"
    assert r.l2_sectors == 4096 and all(st.l2_hits == st.sectors for st in r.per_instruction.values()
                                        if st.op == "load")
    from viz.gpu.plan import l2_resident

    assert l2_resident(400_384, 8, 50 << 20) and not l2_resident(512 << 20, 1, 50 << 20)


def test_l2_costs_reproduce_the_calibrated_rates():
    """Per request t_req, per sector t_sec, per partly written sector t_part: coalesced
    16-byte loads (4 sectors a request), one-sector requests and partial stores come out at
    the calibrated rates."""
    d = H100
    if not (d.l2_scatter_per_s and d.l2_partial_per_s):
        pytest.skip("the installed calibration has no L2 request rates")
    t_req, t_sec, t_st, t_part = d.l2_costs()
    assert t_req > 0 and t_sec > 0 and t_st == t_sec
    assert t_req / 4 + t_sec == pytest.approx(32 / d.l2_bytes_per_s)
    assert t_req + t_sec == pytest.approx(1 / d.l2_scatter_per_s)
    assert t_req + t_sec + t_part == pytest.approx(1 / d.l2_partial_per_s)
    w = Workload(blocks=132 * 64, threads_per_block=256, l2_sectors=1e8, l2_requests=1e8)
    assert predict_launch(w).term("L2") == pytest.approx(1e8 / d.l2_scatter_per_s)


def test_the_tma_term_follows_the_h100_box_probes():
    """Blocks of one TMA box each, timed on the H100 (assets/measurements/h100-tma-*.json, the
    probe scenarios in tools/probes/tma_boxes/): the model predicts each within 6%, and the
    box time is min(rows, 32) x TMA_ROW_NS_BYTES / row bytes."""
    import json
    from pathlib import Path

    from viz import assets
    from viz.gpu.predict import _res, limits_of, predict_scenario

    root = Path(__file__).resolve().parent.parent
    doc = json.loads((assets.measurements_dir() / "h100-tma-2026-11-23.json").read_text())
    assert len(doc["scenarios"]) == 8
    for i, (name, e) in enumerate(doc["scenarios"].items()):
        sc = load(root / "tools" / "probes" / "tma_boxes" / f"{name}.toml")
        p, _ = predict_scenario(sc, H100, limits_of(doc["device"]), f"wv_{i:03d}_{name}", resources=_res(e))
        assert p.bound == "TMA" and abs(p.ms / e["timing"]["median_ms"] - 1) < 0.06, name
    an = analyze(load("tma-swizzle-none"))        # 32 rows of 32 bytes, one box per block
    assert costmodel.tma_seconds_per_block(an) == pytest.approx(32 * costmodel.TMA_ROW_NS_BYTES / 32 * 1e-9)
    an = analyze(load("tma-swizzle-128b"))        # 8 rows of 128 bytes
    assert costmodel.tma_seconds_per_block(an) == pytest.approx(8 * costmodel.TMA_ROW_NS_BYTES / 128 * 1e-9)
    assert costmodel.tma_seconds_per_block(analyze(load("coalesced"))) == 0


def test_restrict_loads_of_one_array_overlap_across_stores_to_another():
    """grid-stride-loop: seven guarded iterations of out[i] = in[i]. Each guarded load waits
    for its own data (measured on the H100 and the H200: about one load in flight per warp,
    costmodel.GUARDED_LOADS_OVERLAP): the chain waits for DRAM seven times, plus each guard's
    branch. Unguarded loads of a __restrict__ array still overlap across stores to another;
    a scenario that loads the array it has just stored still waits for the store's run."""
    from viz.gpu.predict import analysis_of

    an, _ = analysis_of(load("grid-stride-loop"))
    total, chain = costmodel._chain(an, None, H100, True, False)
    waits = {what: (n, s) for what, n, s in chain}
    assert waits["DRAM load"][0] == 7 and waits["predicated access"][0] == 14
    assert total == pytest.approx(7 * H100.dram_latency_s + 14 * waits["predicated access"][1], rel=1e-9)
    free = scenario(global_array("a", shape="[64]") + global_array("b", shape="[64]")
                    + access("a[threadIdx.x]") + access("b[threadIdx.x]", op="store") + access("a[threadIdx.x + 32]"))
    t3, chain3 = costmodel._chain(analyze(free), None, H100, True, False)
    bars3 = dict((what, n) for what, n, _s in chain3)["__syncthreads"]
    assert t3 == pytest.approx(H100.dram_latency_s + bars3 * H100.syncthreads_s, rel=1e-9)
    same = scenario(global_array("a", shape="[64]") + access("a[threadIdx.x]")
                    + access("a[threadIdx.x + 32]", op="store") + access("a[threadIdx.x + 32]"))
    t2, chain2 = costmodel._chain(analyze(same), None, H100, True, False)
    bars = dict((what, n) for what, n, _s in chain2)["__syncthreads"]     # the generator's barriers around it
    assert t2 == pytest.approx(2 * H100.dram_latency_s + bars * H100.syncthreads_s, rel=1e-9)


def test_back_to_back_stores_go_to_l2_as_one_write_per_line():
    """float3-whole stores .x, .y and .z in three instructions in a row, each over the same
    12 sectors (3 lines) of a warp's 384 bytes with a third of their bytes; L1 sends them as
    one write: 12 stored sectors and 3 requests per warp, none partly written (as three
    writes: 36 sectors, 9 requests, 36 partly written). The instructions' own sectors (what
    Nsight Compute counts at L1) stay 36 a warp."""
    warps = 512
    r = analyze_reuse(load("float3-whole"), 1056, 50 << 20)
    assert sum(s.sectors for s in r.per_instruction.values() if s.op == "store") == 36 * warps
    assert (r.store_sectors, r.merged_store_sectors, r.partial_store_sectors) == (12 * warps, 24 * warps, 0)
    # the loads: 3 lines per warp for the first, L1 hits for the other two; the stores: 3 lines
    assert r.l2_requests == 3 * warps + 3 * warps


def test_a_barrier_keeps_two_stores_in_separate_writes():
    """Two stores to one array, every other float each: the generated kernel puts a barrier
    between them (codegen.plan_groups), so they are two writes of 8 sectors (2 lines) each
    per warp, every sector written in half."""
    text = """
[launch]
block = [256]
grid = [4]
[arrays.a]
space = "global"
type = "float"
shape = [2048]
[[access]]
op = "store"
at = "a[2*(blockIdx.x*blockDim.x + threadIdx.x)]"
[[access]]
op = "store"
at = "a[2*(blockIdx.x*blockDim.x + threadIdx.x) + 1]"
"""
    warps = 4 * 256 // 32
    r = analyze_reuse(loads(text, name="pair"), 1056, 50 << 20)
    assert (r.store_sectors, r.l2_requests, r.partial_store_sectors, r.merged_store_sectors) == \
        (16 * warps, 4 * warps, 16 * warps, 0)
