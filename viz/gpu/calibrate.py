"""``warpviz calibrate``: microbenchmarks that measure the GPU at hand (no Qt; PyCUDA only
through ``runner.Session``).

Each figure of ``viz.gpu.calibration`` comes from one kernel of
``kernels/calibrate/calibrate.cu``, run ``SETS`` times (5 with ``--quick``); the figure is
the median of the sets and its spread is (p90 - p10) / median over them. Bandwidths and
latencies come from CUDA events around launches queued back to back behind a spin kernel
(``Session.batch_times``: GPU time, never the host's); figures per clock per SM come from
the SM's own cycle counter (``clock64``) read by each block, with one block per SM (a
large dynamic shared allocation keeps a second block off), so they do not depend on a
guessed clock. ``plausibility`` checks every figure against what the device's
specifications allow. The document is written atomically (``save``).

``measure`` runs inside the GPU process (``CalibrationSession.calibrate``); everything else here is
pure and tested without a GPU. The command itself is ``viz.gpu.cli.cmd_calibrate``.
"""

from __future__ import annotations

import datetime as _dt
import json
import sys
from pathlib import Path

import numpy as np

from .. import assets
from ..errors import safe_text
from ..fileio import write_atomic
from .calibration import CALIBRATION_DIR, FORMAT, LOADED_STREAMS, slug
from .runner import Session, gpu_state

SETS = 7
QUICK_SETS = 5
WARMUP_MS = 1000.0    # GPU time of DRAM reads before the first figure (clocks, TLBs)
L2_PLACEMENTS = 7     # placements of the L2-read buffer, 24 MiB apart (7 x 24 + 12 MiB fit the 512 MiB buffer)
L2_WRITE_PLACEMENTS = 15   # of the L2-write buffer, 24 MiB apart (15 x 24 + 8 MiB fit the 512 MiB buffer)
ONE_BLOCK_PER_SM_SHARED = 116 * 1024   # the H100's (228 KiB a SM); measure() takes it from the GPU's description
RUN_SPREAD_MAX = 0.05   # --runs N: a figure whose runs differ by more ((max - min) / median) fails the calibration
HOST_FIGURES = ("launch_host_us",)   # the host's (Python's) time, not the GPU's: no 5% promise, not in the model
# Figures whose runs may differ by more than 5% when the difference is this small (their unit):
# an empty launch's GPU time is a property of the process's launch queue: 1.26, 1.30 and 1.37
# us in three processes on the H200, each tight within itself (0.11 us, 8.6%); it adds no more
# to any prediction. The loaded latency at the copy's saturation (8 streams a SM) queues:
# 1,096, 1,102 and 1,151 ns (5.0%) on the H200.
RUN_SPREAD_ABS = {"launch_overhead_us": 0.2, "launch_touch_us": 0.2, "loaded_latency_ns_8": 100.0, "loaded_latency_ns_4": 100.0}


def one_block_per_sm_shared(gpu) -> int:
    """Dynamic shared bytes that leave room for only one block per SM: more than half the SM's
    shared memory (the H100: 116 KiB of 228)."""
    return gpu.shared_per_sm_bytes // 2 + 2048

# key -> (unit, how it is measured)
FIGURES: dict[str, tuple[str, str]] = {
    "sm_clock_mhz": ("MHz", "One thread spins 20 ms on %globaltimer and counts clock64 cycles: the SM clock while "
                             "the GPU is busy (every per-clock figure is measured in cycles, this converts them)."),
    "dram_read_gbps": ("GB/s", "wv_read streams a 1 GiB buffer (20x the L2) with ld.global.cs.v4 (float4), "
                                "grid-stride, 4 loads in flight per thread, 4 blocks of 512 per SM; bytes read / time."),
    "dram_write_gbps": ("GB/s", "wv_write stores 16 bytes per thread (st.global.cs.v4) over a 1 GiB buffer, grid-stride; "
                                 "bytes written / time."),
    "dram_copy_gbps": ("GB/s", "cudaMemcpy device to device of 512 MiB; (bytes read + bytes written) / time."),
    "l2_read_gbps": ("GB/s", "wv_read_l2 re-reads a 12 MiB buffer 128 times with ld.global.cg.v4 (L2 only, L1 "
                              "skipped), grid-stride, each pass rotated by 16 KiB; after the first pass every load hits "
                              "L2; bytes / time; the median over seven placements of the buffer."),
    "l2_write_gbps": ("GB/s", "wv_write_l2 writes an 8 MiB buffer 64 times with coalesced st.global.v4 (whole lines), "
                               "grid-stride; it stays in L2; bytes / time."),
    "l2_scatter_gsectors": ("G sectors/s", "wv_l2_scatter: every lane loads 4 bytes (ld.global.cg, L1 skipped) from its "
                                           "own pseudo-random sector of an 8 MiB L2-resident buffer, 4 loads in flight "
                                           "per thread: 32 one-sector L2 requests per warp instruction; sectors / time."),
    "dram_scatter_gbps": ("GB/s", "wv_l2_scatter over a 1 GiB buffer (20x the L2): every lane loads 4 bytes from its "
                                  "own pseudo-random sector, so each load makes DRAM move a 64-byte chunk far from the "
                                  "last one; 64 bytes x loads / time."),
    "l2_partial_gstores": ("G stores/s", "wv_l2_partial: a naive transpose's column write into an 8 MiB L2-resident "
                                         "matrix of 1024-float rows: every lane stores 4 bytes into a different line "
                                         "(4 of its sector's 32 bytes; 8 neighbouring warps fill a sector); partly "
                                         "written sectors stored / time."),
    "l2_partial_dram_gstores": ("G stores/s", "wv_l2_partial over a 256 MiB matrix (5x the L2): the same column "
                                              "writes with DRAM's write-back behind them; stores / time."),
    "l1_read_gbps": ("GB/s", "wv_read_l1: one block of 1024 threads per SM re-reads its own 16 KiB 4096 times with "
                              "coalesced ld.global.ca.v4, 640 bytes further on each time (hits in L1 after the first "
                              "pass); all SMs' bytes / time."),
    "l1_sectors_per_clk_sm": ("sectors/clk/SM", "The same L1-hit loop: 32-byte sectors a block loads / the cycles "
                                                "(clock64) its SM took."),
    "shared_wavefronts_per_clk_sm": ("wavefronts/clk/SM", "wv_shared mode 0: 32 warps per SM issue conflict-free LDS.32 "
                                                          "(ld.volatile.shared, lane l reads word l: 1 wavefront "
                                                          "each), 16 per loop step; wavefronts / SM cycles."),
    "shared_conflict32_wavefronts_per_clk_sm": ("wavefronts/clk/SM", "wv_shared mode 1, the check: LDS.32 where all 32 "
                                                                     "lanes hit one bank at 32 different words (32 "
                                                                     "wavefronts each); wavefronts / SM cycles."),
    "shared_lds128_wavefronts_per_clk_sm": ("wavefronts/clk/SM", "wv_shared mode 3: conflict-free LDS.128 (512 bytes "
                                                                 "a warp: 4 wavefronts each); wavefronts / SM cycles."),
    "lsu_inst_per_clk_sm": ("warp-instructions/clk/SM", "wv_shared mode 2: LDS.32 where every lane reads the same word "
                                                        "(1 wavefront each, so the issue of shared loads or the shared "
                                                        "pipe bounds it); warp-level instructions / SM cycles."),
    "launch_overhead_us": ("us", "An empty kernel (1 block of 32) launched 200 times back to back behind a spin "
                                 "kernel; GPU time per launch."),
    "launch_touch_us": ("us", "wv_touch (one thread loads a word and stores it plus one; 1 block of 32) launched 200 "
                              "times back to back behind a spin kernel; GPU time per launch: a kernel that reads and "
                              "writes memory, which the cost model adds to every launch when calibrated."),
    "launch_host_us": ("us", "Host (Python + PyCUDA) time to queue one launch while the GPU is busy: a launch loop "
                             "is this slow when the kernels are shorter."),
    "empty_grid_us": ("us", "An empty kernel of 65536 blocks of 256 threads, launched back to back behind a spin "
                            "kernel; GPU time per launch: what launching and retiring blocks costs."),
    "block_ns_per_sm": ("ns", "(empty_grid_us - launch_overhead_us) / (65536 blocks / SMs): the time an SM spends "
                              "starting and retiring one empty block of 256 threads."),
    "syncthreads_ns": ("ns", "wv_sync: one block of 256 threads per SM runs 20000 __syncthreads, each after one "
                             "dependent multiply-add; SM cycles per step / SM clock."),
    "syncthreads_1024_ns": ("ns", "As syncthreads_ns with 1024 threads (32 warps) per block."),
    "dram_latency_ns": ("ns", "wv_chase: one thread follows a random cycle of 8-byte pointers 256 bytes apart over "
                              "256 MiB (ld.global.cg), each set from a fresh part of the cycle; time / dependent loads."),
    "l2_latency_ns": ("ns", "wv_chase over 8 MiB (32768 pointers 256 bytes apart, ld.global.cg) after one pass has "
                            "brought it into L2; time / dependent loads."),
    "l1_latency_ns": ("ns", "wv_chase over 16 KiB (128 pointers 128 bytes apart, ld.global.ca) after one pass has "
                            "brought it into L1; time / dependent loads."),
    "shared_latency_ns": ("ns", "wv_chase_shared: one thread follows a random cycle of 1024 shared-memory addresses "
                                "(each LDS.32 loads the next address); time / dependent loads."),
    "ffma_latency_clk": ("clk", "wv_dep op 0, the check: one warp alone runs 64000 dependent FFMAs (each adds to the "
                                "result of the one before); SM cycles / instructions. ptxas schedules these with a "
                                "fixed stall count: the figure should equal it."),
    "shfl_latency_clk": ("clk", "wv_dep op 1: one warp alone runs 64000 dependent SHFL.BFLY; SM cycles / instructions: "
                                "from a shuffle's issue to the issue of the next, which waits for its result."),
    "mufu_latency_clk": ("clk", "wv_dep op 2: one warp alone runs 64000 dependent MUFU.EX2 (ex2.approx.ftz.f32, as "
                                "__expf uses); SM cycles / instructions."),
    "const_latency_clk": ("clk", "wv_dep op 3: one warp alone follows a cycle of 64 indices in constant memory (each "
                                 "LDC loads the next index); SM cycles / loads."),
    "other_latency_clk": ("clk", "wv_dep op 4: one warp alone runs 64000 dependent BREV (variable-latency integer "
                                 "work, as conversions); SM cycles / instructions."),
}
for _k in (0, 1, 2, 4, 8):
    FIGURES[f"loaded_latency_ns_{_k}"] = (
        "ns", f"wv_loaded: one thread follows a random cycle of 4-byte indices 4 KiB apart (ld.global.cg) while "
              f"{_k} block{'' if _k == 1 else 's'} of 256 threads per SM copy 2 x 256 MiB (5x the L2) grid-stride; "
              "cycles per dependent load / SM clock; at_gbps: the copy's own DRAM rate (read + write), timed alone. "
              "The cost model's loaded-latency curve (extra wait by DRAM rate).")
del _k


# wv_dep's ops in order (kernels/calibrate/calibrate.cu)
DEP_KEYS = ("ffma_latency_clk", "shfl_latency_clk", "mufu_latency_clk", "const_latency_clk", "other_latency_clk")


def source() -> str:
    return (assets.kernels_dir() / "calibrate" / "calibrate.cu").read_text(encoding="utf-8")


def figure(values, unit: str, how: str, cycles: float | None = None) -> dict:
    """A figure from its per-set values: median, spread (p90 - p10) / median in percent."""
    from .plan import Timing

    vals = [float(v) for v in values]
    t = Timing(tuple(vals))
    out = {"value": _round(t.median_ms), "unit": unit, "spread_pct": round(100 * t.spread, 2), "runs": len(vals),
           "how": how, "sets": [_round(v) for v in vals]}
    if cycles is not None:
        out["cycles"] = round(cycles, 2)
    if t.spread >= 0.05:
        out["noisy"] = True     # as a timing is: the spread is shown, the figure is not held to 5%
    return out


def _round(v: float) -> float:
    return float(f"{v:.5g}")


# ---------------------------------------------------------------------------- on the GPU


def measure(session, quick: bool = False, verbose: bool = False) -> dict:
    """Every microbenchmark on ``session`` (a ``runner.Session``); returns the figures and
    the GPU's state before and after (see ``document``)."""
    from ..toolchain.compile import compile_cubin

    drv = session.driver
    sets = QUICK_SETS if quick else SETS
    info = session.info
    sms = int(info["sm_count"])
    from .. import gpus

    match = gpus.for_device(info.get("name"), info.get("compute_capability"))
    gpu = match.description
    one_block = one_block_per_sm_shared(gpu)
    optin = int(info.get("max_shared_per_block_optin") or 0)
    if not match.exact and optin:       # a GPU with no description: what its driver says a block may have
        one_block = min(optin, optin // 2 + 2048)
    cubin = compile_cubin(source())
    figs: dict[str, dict] = {}
    state_before = gpu_state()

    def say(key):
        if verbose:
            f = figs[key]
            print(f"calibrate: {key} = {f['value']:g} {f['unit']} (spread {f['spread_pct']:.1f}%)", file=sys.stderr,
                  flush=True)

    def fn(name: str, fmt: str, shared: int = 0):
        f = drv.kernel(cubin, name).prepare(fmt)
        f.allow_shared(shared)
        return f

    def add(key, values, cycles=None, at_gbps=None):
        unit, how = FIGURES[key]
        figs[key] = figure(values, unit, how, cycles)
        if at_gbps is not None:
            figs[key]["at_gbps"] = _round(at_gbps)
        say(key)

    def per_launch_ms(launch, target_ms: float = 1.0) -> list[float]:
        warm, _ = session.batch_times(launch, 2, 1)
        per = max(1, min(400, round(target_ms / max(1e-4, warm[0]))))
        times, _ = session.batch_times(launch, per, sets)
        return times

    sink = session.alloc(256)
    out = session.alloc(256)
    cyc = session.alloc(8 * sms)
    host2 = np.zeros(2, np.uint64)
    hostc = np.zeros(sms, np.uint64)

    # -- the clock (after 180 ms of DRAM reads that ramp it up) -----------------
    big = (512 << 20) if quick else (1 << 30)
    buf = session.alloc(big)
    session.fill_random(buf, big)
    rd = fn("wv_read", "PQP")

    def read(_i, n16=big // 16):
        rd.launch((sms * 4, 1, 1), (512, 1, 1), int(buf), n16, int(sink))

    # Clocks up and TLBs warm: DRAM reads for WARMUP_MS of GPU time. 180 ms was not enough on
    # a freshly started H100: its first quick run read L2 at 7.48 TB/s and wrote it at 3.63,
    # the next one (same process) at 7.90 and 3.81.
    done_ms = 0.0
    while done_ms < WARMUP_MS:
        t, _ = session.batch_times(read, 50, 1)
        done_ms += 50 * float(t[0])
    clk = fn("wv_clock", "QP")
    mhz = []
    for _ in range(3):
        clk.launch((1, 1, 1), (1, 1, 1), 20_000_000, int(out))
        drv.synchronize()
        drv.download(host2, out)
        mhz.append(1e3 * float(host2[0]) / float(host2[1]))
    add("sm_clock_mhz", mhz)
    clock_mhz = figs["sm_clock_mhz"]["value"]

    # -- DRAM --------------------------------------------------------------------
    add("dram_read_gbps", [big / (t * 1e-3) / 1e9 for t in per_launch_ms(read)])
    wr = fn("wv_write", "PQ")
    add("dram_write_gbps", [big / (t * 1e-3) / 1e9 for t in per_launch_ms(
        lambda _i: wr.launch((sms * 4, 1, 1), (512, 1, 1), int(buf), big // 16))])
    half = big // 2
    add("dram_copy_gbps", [2 * half / (t * 1e-3) / 1e9 for t in per_launch_ms(
        lambda _i: drv.copy_async(int(buf) + half, int(buf), half))])

    # -- L2 hits -------------------------------------------------------------------
    # The rate depends on where the buffer's lines sit in L2 (its two partitions), which
    # changes with every allocation: the figure is the median over seven placements (24 MiB
    # apart in the big buffer), so two runs agree (one placement gave 7.7 and 8.2 TB/s in two
    # quick runs; the median of three, 7.91 and 7.42 TB/s in two quick runs on a freshly
    # started H100).
    l2_bytes, passes = 12 << 20, 128
    l2 = fn("wv_read_l2", "PQiP")
    l2_times = []
    for place in range(L2_PLACEMENTS):
        l2_times += per_launch_ms(lambda _i, o=place * (24 << 20): l2.launch(
            (sms * 4, 1, 1), (512, 1, 1), int(buf) + o, l2_bytes // 16, passes // (2 if quick else 1), int(sink)))
    add("l2_read_gbps", [l2_bytes * (passes // (2 if quick else 1)) / (t * 1e-3) / 1e9 for t in l2_times])

    # -- L2 request and partial-store rates ------------------------------------------------
    # L2 writes: like the reads, the rate depends on where the buffer's lines sit in L2 (one
    # placement read 3,642, 3,760 and 3,662 GB/s in three runs on the H100, 4,141 and 3,904 in
    # two on the H200, each run tight within itself; seven placements of one H200 run gave
    # 3,769 to 4,146): the median over L2_WRITE_PLACEMENTS placements, each warmed first
    # (per_launch_ms), 8 MiB each (well inside the 50 MiB H100 and 60 MiB H200 L2), 64
    # passes (512 MiB written a launch, about 0.13 ms). With seven, two calls of --runs 3 on
    # the H200 agreed within 0.3% (3,983 and 3,973 GB/s), their runs within 4.9%.
    wl2 = fn("wv_write_l2", "PQi")
    w_bytes, w_passes = 8 << 20, 64
    w_times = []
    for place in range(L2_WRITE_PLACEMENTS):
        w_times += per_launch_ms(lambda _i, o=place * (24 << 20): wl2.launch(
            (sms * 4, 1, 1), (512, 1, 1), int(buf) + o, w_bytes // 16, w_passes))
    add("l2_write_gbps", [w_bytes * w_passes / (t * 1e-3) / 1e9 for t in w_times])
    threads = sms * 4 * 512
    sc_it = 32 if quick else 64
    scat = fn("wv_l2_scatter", "PIiP")
    add("l2_scatter_gsectors", [threads * sc_it * 4 / (t * 1e-3) / 1e9 for t in per_launch_ms(
        lambda _i: scat.launch((sms * 4, 1, 1), (512, 1, 1), int(buf), (1 << 18) - 1, sc_it, int(sink)))])
    add("dram_scatter_gbps", [threads * sc_it * 4 * 64 / (t * 1e-3) / 1e9 for t in per_launch_ms(
        lambda _i: scat.launch((sms * 4, 1, 1), (512, 1, 1), int(buf), (1 << 25) - 1 if not quick else
                                      (1 << 24) - 1, sc_it, int(sink)))])
    part = fn("wv_l2_partial", "PIi")
    for key, rows in (("l2_partial_gstores", 2048), ("l2_partial_dram_gstores", 65536)):
        add(key, [threads * sc_it / (t * 1e-3) / 1e9 for t in per_launch_ms(
            lambda _i, r=rows: part.launch((sms * 4, 1, 1), (512, 1, 1), int(buf), r, sc_it))])

    # -- per-clock loops: one block per SM, cycles per block --------------------------
    def cycles_sets(launch) -> tuple[list[float], list[float]]:
        """(ms per launch, median cycles of the blocks) for each set."""
        launch(0)
        drv.synchronize()
        ms, cycles = [], []
        for _ in range(sets):
            t, _ = session.batch_times(launch, 1, 1)
            drv.download(hostc, cyc)
            ms.append(t[0])
            cycles.append(float(np.median(hostc.astype(np.float64))))
        return ms, cycles

    iters = 2048 if quick else 4096
    l1 = fn("wv_read_l1", "PiPP", one_block)
    ms, cyc_l1 = cycles_sets(lambda _i: l1.launch((sms, 1, 1), (1024, 1, 1), int(buf), iters, int(sink),
                                                         int(cyc), shared=one_block))
    block_bytes = 1024 * 8 * 16 * iters
    add("l1_read_gbps", [sms * block_bytes / (t * 1e-3) / 1e9 for t in ms])
    add("l1_sectors_per_clk_sm", [block_bytes / 32 / c for c in cyc_l1])

    sh = fn("wv_shared", "iiPP", one_block)
    modes = {0: ("shared_wavefronts_per_clk_sm", 8192, 1), 1: ("shared_conflict32_wavefronts_per_clk_sm", 256, 32),
             3: ("shared_lds128_wavefronts_per_clk_sm", 2048, 4), 2: ("lsu_inst_per_clk_sm", 8192, None)}
    for mode, (key, it, wf) in modes.items():
        it = it // 2 if quick else it
        _ms, cy = cycles_sets(lambda _i, m=mode, n=it: sh.launch((sms, 1, 1), (1024, 1, 1), m, n, int(sink),
                                                                        int(cyc), shared=one_block))
        inst = 32 * it * 16                              # warp-level loads of one block (32 warps)
        add(key, [inst * (wf or 1) / c for c in cy])

    # -- launches and barriers ---------------------------------------------------------
    em = fn("wv_empty", "")
    times, _ = session.batch_times(lambda _i: em.launch((1, 1, 1), (32, 1, 1)), 200, sets)
    add("launch_overhead_us", [1e3 * t for t in times])
    tch = fn("wv_touch", "P")
    times, _ = session.batch_times(lambda _i: tch.launch((1, 1, 1), (32, 1, 1), int(sink)), 200, sets)
    add("launch_touch_us", [1e3 * t for t in times])
    host_us = []
    for _ in range(sets):
        session.batch_times(lambda _i: em.launch((1, 1, 1), (32, 1, 1)), 200, 1)
        host_us.append(1e6 * session.enqueue_s)
    add("launch_host_us", host_us)
    grid_times, _ = session.batch_times(lambda _i: em.launch((65536, 1, 1), (256, 1, 1)), 20, sets)
    add("empty_grid_us", [1e3 * t for t in grid_times])
    base_us = figs["launch_overhead_us"]["value"]
    add("block_ns_per_sm", [1e3 * (1e3 * t - base_us) / (65536 / sms) for t in grid_times])

    sy = fn("wv_sync", "iPP", one_block)
    n_sync = 20000
    for key, threads in (("syncthreads_ns", 256), ("syncthreads_1024_ns", 1024)):
        _ms, cy = cycles_sets(lambda _i, th=threads: sy.launch((sms, 1, 1), (th, 1, 1), n_sync, int(sink),
                                                                      int(cyc), shared=one_block))
        per = [c / n_sync for c in cy]
        add(key, [1e3 * p / clock_mhz for p in per], cycles=float(np.median(per)))

    # -- latency chains -------------------------------------------------------------------
    ch = fn("wv_chase", "PiiP")
    rng = np.random.default_rng(12345)

    def chain(region: int, gap: int, cache: int, steps: int, fresh: bool) -> tuple[list[float], float]:
        n = region // gap
        mem = session.alloc(region)
        try:
            base = int(mem)
            order = rng.permutation(n)
            host = np.zeros(region // 8, np.uint64)
            host[order * (gap // 8)] = (base + np.roll(order, -1) * gap).astype(np.uint64)
            drv.upload(mem, host)
            starts = [base + int(order[(k * steps) % n]) * gap for k in range(sets + 1)]
            if not fresh:    # one full pass first, so the region sits in the cache
                ch.launch((1, 1, 1), (32, 1, 1), starts[0], 2 * n, cache, int(out))
            times, cycles = [], []
            for k in range(1, sets + 1):
                t, _ = session.batch_times(
                    lambda _i, s=starts[k]: ch.launch((1, 1, 1), (32, 1, 1), s, steps, cache, int(out)), 1, 1)
                drv.download(host2, out)
                times.append(1e6 * t[0] / steps)
                cycles.append(float(host2[1]) / steps)
            return times, float(np.median(cycles))
        finally:
            mem.free()

    buf.free()
    for key, region, gap, cache, steps, fresh in (
            ("dram_latency_ns", 256 << 20, 256, 0, 10000 if quick else 20000, True),
            ("l2_latency_ns", 8 << 20, 256, 0, 20000 if quick else 50000, False),
            ("l1_latency_ns", 16 << 10, 128, 1, 50000 if quick else 100000, False)):
        ns, cy = chain(region, gap, cache, steps, fresh)
        add(key, ns, cycles=cy)

    loaded_latency(session, fn, sets, quick, add, clock_mhz, sms)

    cs = fn("wv_chase_shared", "PiiP")
    n = 1024
    order = rng.permutation(n)
    nxt = np.zeros(n, np.uint32)
    nxt[order] = np.roll(order, -1)
    nbuf = session.alloc(4 * n)
    drv.upload(nbuf, nxt)
    steps = 50000 if quick else 100000
    ns, cycles = [], []
    for _ in range(sets):
        t, _ = session.batch_times(lambda _i: cs.launch((1, 1, 1), (32, 1, 1), int(nbuf), n, steps, int(out)),
                                   1, 1)
        drv.download(host2, out)
        ns.append(1e6 * t[0] / steps)
        cycles.append(float(host2[1]) / steps)
    add("shared_latency_ns", ns, cycles=float(np.median(cycles)))

    # -- a warp's dependent issue: cycles from an instruction to the next that uses its result
    dep = fn("wv_dep", "iiIP")
    ctab_sym = dep.symbol("wv_ctab")
    ctab, ctab_bytes = ctab_sym.address, ctab_sym.nbytes
    perm = rng.permutation(ctab_bytes // 4)
    nxt_c = np.zeros(ctab_bytes // 4, np.uint32)
    nxt_c[perm] = np.roll(perm, -1)
    drv.upload(ctab, nxt_c)
    dep_steps = 500 if quick else 2000
    for op, key in enumerate(DEP_KEYS):
        dep.launch((1, 1, 1), (32, 1, 1), op, 16, 1, int(out))      # warm: the code in the caches
        per = []
        for k in range(sets):
            dep.launch((1, 1, 1), (32, 1, 1), op, dep_steps, k, int(out))
            drv.synchronize()
            drv.download(host2, out)
            per.append(float(host2[0]) / (dep_steps * 32))
        add(key, per)
    for b in (nbuf, sink, out, cyc):
        b.free()
    return {"device": dict(info), "figures": figs, "state_before": state_before, "state_after": gpu_state(),
            "sets": sets}




def loaded_latency(session, fn, sets: int, quick: bool, add, clock_mhz: float, sms: int) -> None:
    """The loaded-latency curve (``loaded_latency_ns_K``, one figure per K streaming blocks
    per SM, each with the copy's own DRAM rate ``at_gbps``): ``wv_loaded``'s chase while its
    other blocks copy 2 x 256 MiB (5x the L2) ``passes`` times."""
    drv = session.driver
    nodes, spacing = 65536, 1024                     # 65536 nodes 4 KiB apart (256 MiB of indices)
    rng = np.random.default_rng(5)
    order = rng.permutation(nodes)
    words = np.zeros(nodes * spacing, np.uint32)
    words[order * spacing] = (np.roll(order, -1) * spacing).astype(np.uint32)
    n4 = ((128 if quick else 256) << 20) // 16
    chase, src, dst, out = (session.alloc(words.nbytes), session.alloc(n4 * 16), session.alloc(n4 * 16),
                            session.alloc(16))
    try:
        drv.upload(chase, words)
        del words
        session.fill_random(src, n4 * 16)
        ld = fn("wv_loaded", "PIPPPQI")
        host = np.zeros(2, np.uint64)
        steps = 1000 if quick else 1500
        for per_sm in LOADED_STREAMS:
            grid = (1 + sms * per_sm, 1, 1)
            passes = 12 if per_sm else 0

            def launch(st, g=grid, p=passes):
                ld.launch(g, (256, 1, 1), int(chase), st, int(out), int(src), int(dst), n4, p)

            launch(200)                                  # warm: clocks, TLBs, the chase's code
            drv.synchronize()
            gbps = 0.0
            if per_sm:
                t, _ = session.batch_times(lambda _i: launch(0), 1, 3)
                gbps = 2 * n4 * 16 * passes / (float(np.median(t)) * 1e-3) / 1e9
            ns = []
            for _ in range(max(3, sets // 2)):
                launch(steps)
                drv.synchronize()
                drv.download(host, out)
                ns.append(1e3 * float(host[0]) / steps / clock_mhz)
            add(f"loaded_latency_ns_{per_sm}", ns, at_gbps=gbps)
    finally:
        for b in (chase, src, dst, out):
            b.free()


class CalibrationSession(Session):
    """A ``runner.Session`` that also runs ``measure``: what the GPU process serves for
    ``warpviz calibrate`` (``worker.ProcessSession(child=CHILD)``)."""

    def calibrate(self, quick: bool = False, verbose: bool = False) -> dict:
        """The microbenchmarks of ``warpviz calibrate`` (``measure``)."""
        return measure(self, quick=quick, verbose=verbose)


CHILD = "viz.gpu.calibrate:CalibrationSession"   # worker.ProcessSession(child=CHILD)


# ---------------------------------------------------------------------------- pure


def combine_runs(raws: list[dict]) -> dict:
    """One ``measure`` result from several (separate GPU processes): each figure's sets
    are all the runs' sets, its value their median; ``run_values`` keeps each run's own."""
    if len(raws) == 1:
        return raws[0]
    first = raws[0]
    figs = {}
    for key, f in first["figures"].items():
        parts = [r["figures"][key] for r in raws if key in r.get("figures", {})]
        sets = [v for p in parts for v in p["sets"]]
        cyc = [p["cycles"] for p in parts if "cycles" in p]
        g = figure(sets, f["unit"], f["how"], float(np.median(cyc)) if cyc else None)
        g["run_values"] = [p["value"] for p in parts]
        g["run_spread_pct"] = run_spread_pct(g["run_values"])
        at = [p["at_gbps"] for p in parts if isinstance(p.get("at_gbps"), (int, float))]
        if at:
            g["at_gbps"] = _round(float(np.median(at)))
        figs[key] = g
    return {**first, "figures": figs, "state_after": raws[-1].get("state_after"), "sets": sum(r["sets"] for r in raws),
            "runs": len(raws)}


def run_spread_pct(values) -> float:
    """How far a figure's runs are apart: (max - min) / median, in percent."""
    vals = [float(v) for v in values]
    med = float(np.median(vals)) if vals else 0.0
    return round(100 * (max(vals) - min(vals)) / abs(med), 2) if vals and med else 0.0


def unstable(doc: dict) -> dict[str, float]:
    """The figures whose runs (``--runs N``) disagree: {key: run spread %}. A figure is the
    median over its runs, so one run apart does not move it: a figure is unstable when no
    majority of its runs ((N + 2) // 2: 2 of 2, 2 of 3, 3 of 5) lies within RUN_SPREAD_MAX
    (of the median) of each other. A difference below ``RUN_SPREAD_ABS`` (the figure's unit) is
    none; the host's own figures (HOST_FIGURES) are not held to it. The L2 rates of one process
    can sit 2-5% above the others' (its buffers land differently in L2: the H200's L2 read runs
    8,872, 8,435 and 8,445 GB/s in one call, 8,483, 8,581 and 8,405 in another)."""
    out = {}
    for key, f in doc.get("figures", {}).items():
        if key in HOST_FIGURES or not isinstance(f, dict) or len(f.get("run_values") or []) < 2:
            continue
        vals = sorted(float(v) for v in f["run_values"])
        med = abs(float(np.median(vals)))
        k = (len(vals) + 2) // 2           # a majority: the k closest runs must agree
        closest = min(vals[i + k - 1] - vals[i] for i in range(len(vals) - k + 1))
        if closest > max(RUN_SPREAD_MAX * med, RUN_SPREAD_ABS.get(key, 0.0)):
            out[key] = run_spread_pct(vals)
    return out


def plausibility(device: dict, figures: dict, gpu=None) -> dict[str, dict]:
    """Every figure against what this GPU's own description (``viz.gpus``: its SMs, boost
    clock, DRAM peak, bytes per clock) allows: ``{key: {"ok": bool, "expected": "low..high:
    why"}}``. The device's own report (``device``: the worker's SM count, clock and DRAM
    peak) wins over the description's specification where it has one. Limits are wide on
    purpose: they catch a broken microbenchmark (a load the compiler removed, a buffer in
    the wrong cache), not a slow card. No rule compares two memories' rates by another
    GPU's ratios: the H200 writes L2 (3.7 TB/s) slower than it reads DRAM (4.5 TB/s)."""
    from .. import gpus

    if gpu is None:
        gpu = gpus.for_device(device.get("name"), device.get("compute_capability")).description
    sms = float(device.get("sm_count") or gpu.sm_count)
    max_mhz = float(device.get("clock_mhz") or gpu.boost_clock_mhz)
    peak = float(device.get("peak_bandwidth_gbs") or gpu.dram_peak_gbps)
    l1_bytes = gpu.l1_bytes_per_clk_sm
    l1_sectors = l1_bytes / gpu.sector_bytes

    def v(key):
        f = figures.get(key)
        return float(f["value"]) if isinstance(f, dict) else None

    mhz = v("sm_clock_mhz") or max_mhz
    dram = v("dram_read_gbps") or 0.8 * peak
    l2_read = v("l2_read_gbps")
    l1_peak = sms * l1_bytes * mhz * 1e6 / 1e9
    l2_cap = sms * 64 * mhz * 1e6 / 1e9               # 64 bytes per clock per SM: above any L2 so far
    l2_sectors_cap = (l2_read or 1e5) / gpu.sector_bytes * 1.05   # G sectors/s: the coalesced L2 rate, 5% slack
    rules = {
        "sm_clock_mhz": (0.7 * max_mhz, 1.01 * max_mhz, f"at most the {max_mhz:.0f} MHz boost clock"),
        "dram_read_gbps": (0.7 * peak, peak, f"70-100% of the {peak:.0f} GB/s DRAM peak"),
        "dram_write_gbps": (0.6 * peak, peak, f"60-100% of the {peak:.0f} GB/s DRAM peak"),
        "dram_copy_gbps": (0.6 * peak, peak, f"60-100% of the {peak:.0f} GB/s DRAM peak"),
        "l2_read_gbps": (1.5 * dram, l2_cap, "above 1.5x DRAM, at most 64 bytes per clock per SM"),
        "l2_write_gbps": (0.25 * l2_read if l2_read else 0.5 * dram, l2_cap,
                          "at least a quarter of the L2 read rate, at most 64 bytes per clock per SM"),
        "l2_scatter_gsectors": (0.05 * l2_read / gpu.sector_bytes if l2_read else 1.0, l2_sectors_cap,
                                "at most the coalesced L2 sector rate"),
        "dram_scatter_gbps": (0.1 * dram, 1.02 * peak, f"10-100% of the {peak:.0f} GB/s DRAM peak"),
        "l2_partial_gstores": (1.0, l2_sectors_cap, "at most the coalesced L2 sector rate"),
        "l2_partial_dram_gstores": (0.5, l2_sectors_cap, "at most the coalesced L2 sector rate"),
        "l1_read_gbps": (0.4 * l1_peak, 1.02 * l1_peak, f"40-100% of {l1_peak:.0f} GB/s ({l1_bytes} B/clk/SM)"),
        "l1_sectors_per_clk_sm": (0.4 * l1_sectors, 1.02 * l1_sectors,
                                  f"at most {l1_sectors:g} ({l1_bytes} bytes per clock per SM)"),
        "shared_wavefronts_per_clk_sm": (0.4, 1.02, f"at most 1 ({gpu.banks} banks x {gpu.bank_bytes} bytes per clock)"),
        "shared_conflict32_wavefronts_per_clk_sm": (0.4, 1.02, "at most 1, like the conflict-free loop"),
        "shared_lds128_wavefronts_per_clk_sm": (0.4, 1.02, f"at most 1 ({gpu.banks} banks x {gpu.bank_bytes} bytes "
                                                           f"per clock)"),
        "lsu_inst_per_clk_sm": (0.2, 1.02, "at most 1: each broadcast LDS.32 is one shared wavefront"),
        "launch_overhead_us": (0.3, 20.0, "a few microseconds"),
        "launch_touch_us": (0.9 * (v("launch_overhead_us") or 0.3), 20.0, "at least an empty launch, a few microseconds"),
        "launch_host_us": (0.3, 200.0, "a few to tens of microseconds of Python"),
        "empty_grid_us": (v("launch_overhead_us") or 0.3, 2000.0, "more than one empty launch"),
        "block_ns_per_sm": (1.0, 2000.0, "some ns to some hundreds of ns"),
        "syncthreads_ns": (1.0, 200.0, "tens of cycles"),
        "syncthreads_1024_ns": (1.0, 400.0, "tens of cycles"),
        "dram_latency_ns": (250.0, 1500.0, "some hundreds of ns"),
        "l2_latency_ns": (60.0, 600.0, "between L1 and DRAM"),
        "l1_latency_ns": (5.0, 80.0, "some tens of cycles"),
        "shared_latency_ns": (3.0, 60.0, "some tens of cycles"),
        "ffma_latency_clk": (2.0, 8.0, "a few cycles (ptxas's stall between dependent FFMAs)"),
        "shfl_latency_clk": (4.0, 100.0, "some tens of cycles"),
        "mufu_latency_clk": (4.0, 100.0, "some tens of cycles"),
        "const_latency_clk": (4.0, 200.0, "tens of cycles (a constant-cache hit)"),
        "other_latency_clk": (2.0, 100.0, "some cycles to tens of cycles"),
    }
    for k in LOADED_STREAMS:
        rules[f"loaded_latency_ns_{k}"] = (50.0, 5000.0, "tens of ns to some microseconds")
    out = {}
    for key, (lo, hi, why) in rules.items():
        val = v(key)
        if val is None:
            continue
        out[key] = {"ok": bool(lo <= val <= hi), "expected": f"{float(f'{lo:.4g}'):g}..{float(f'{hi:.4g}'):g}: {why}"}
    order = [("l1_latency_ns", "l2_latency_ns"), ("l2_latency_ns", "dram_latency_ns"),
             ("dram_read_gbps", "l2_read_gbps")]
    for a, b in order:
        if v(a) is not None and v(b) is not None and not v(a) < v(b) and b in out:
            out[b] = {"ok": False, "expected": f"more than {a} ({v(a):g})"}
    # The loaded-latency curve: the copies' rates within the DRAM peak, rising with the streams.
    prev = None
    for k in LOADED_STREAMS:
        f = figures.get(f"loaded_latency_ns_{k}")
        at = f.get("at_gbps") if isinstance(f, dict) else None
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            continue
        key = f"loaded_latency_ns_{k}"
        if not 0 <= at <= 1.05 * peak or (k and at <= 0):
            out[key] = {"ok": False, "expected": f"a copy rate (at_gbps {at:g}) from 0 to the {peak:.0f} GB/s peak"}
        elif prev is not None and at < 0.9 * prev:
            out[key] = {"ok": False, "expected": f"a copy rate (at_gbps {at:g}) no lower than with fewer streams "
                                                 f"({prev:g})"}
        prev = at if k else prev
    return out


def document(raw: dict, label: str | None = None, tool: str = "warpviz calibrate", now: str | None = None) -> dict:
    """The calibration document (``viz.gpu.calibration``'s format) from ``measure``'s result."""
    from .. import __version__

    dev = raw["device"]
    now = now or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    figs = raw["figures"]
    checks = plausibility(dev, figs)
    device = {"name": dev.get("name"), "sm_count": dev.get("sm_count"), "clock_mhz": dev.get("clock_mhz"),
              "driver": dev.get("driver"), "cuda": dev.get("cuda_driver_api"),
              "compute_capability": dev.get("compute_capability"), "memory_clock_mhz": dev.get("memory_clock_mhz"),
              "peak_bandwidth_gbs": dev.get("peak_bandwidth_gbs"), "l2_bytes": dev.get("l2_bytes")}
    return {"format": FORMAT, "device": device, "measured": now[:10], "measured_at": now,
            "label": label or f"{dev.get('name')}, measured {now[:10]} with {tool}", "tool": tool,
            "warpviz": __version__, "sets": raw.get("sets"), "runs": raw.get("runs", 1),
            "gpu_state": {"before": raw.get("state_before"), "after": raw.get("state_after")},
            "figures": figs, "checks": checks}


def default_path(device_name: str) -> Path:
    return CALIBRATION_DIR / f"{slug(device_name)}.json"


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def save(doc: dict, path) -> None:
    """Write atomically: a temporary file beside the target, then a rename."""
    write_atomic(path, dumps(doc))


def format_table(doc: dict) -> str:
    """The readable summary: figure, value, spread, plausibility."""
    dev = doc["device"]
    state = (doc.get("gpu_state") or {}).get("before") or {}
    s = lambda v: safe_text(v, 120)  # noqa: E731  (the file's word: cut and escaped, viz.errors)
    lines = [f"{s(dev.get('name'))} ({s(dev.get('sm_count'))} SMs, driver {s(dev.get('driver'))}, CUDA "
             f"{s(dev.get('cuda'))}), {s(doc.get('measured_at', doc.get('measured')))}; nvidia-smi SM clock "
             f"{s(state.get('sm_clock_mhz', '?'))} MHz of {s(state.get('max_sm_clock_mhz', '?'))}", "",
             f"{'figure':<42} {'value':>12} {'unit':<26} {'spread':>7}  check"]
    for key, f in doc["figures"].items():
        c = (doc.get("checks") or {}).get(key)
        mark = "-" if c is None else ("ok" if c["ok"] else f"IMPLAUSIBLE, expected {s(c['expected'])}")
        if f["spread_pct"] >= 5:
            mark += " (noisy)"
        if f.get("run_values") and len(f["run_values"]) > 1:
            sp = run_spread_pct(f["run_values"])
            mark += f"; runs {sp:.1f}% apart" + (" UNSTABLE" if key in unstable({"figures": {key: f}}) else "")
        lines.append(f"{s(key):<42} {f['value']:>12g} {s(f['unit']):<26} {f['spread_pct']:>6.1f}%  {mark}")
    return "\n".join(lines)


def format_markdown(doc: dict) -> str:
    """The figures as a Markdown table (docs/GPU.md's "Calibration" section)."""
    lines = ["| figure | value | spread | plausible? (expected) | how it is measured |", "|---|---|---|---|---|"]
    for key, f in doc["figures"].items():
        c = (doc.get("checks") or {}).get(key)
        ok = "-" if c is None else f"{'yes' if c['ok'] else '**no**'} ({safe_text(c['expected'], 120)})"
        ok = ok.replace("|", "/")
        cyc = f" = {f['cycles']:g} cycles" if "cycles" in f else ""
        val = f"{f['value']:,.0f}" if abs(f["value"]) >= 1000 else f"{f['value']:.4g}"
        spread = f"{f['spread_pct']:.1f}% of {f['runs']}"
        if f["spread_pct"] >= 5:
            spread += ", **noisy**"
        if f.get("run_values"):
            spread += "; runs " + " / ".join(f"{v:.4g}" for v in f["run_values"])
        lines.append(f"| `{safe_text(key, 120)}` | {val} {safe_text(f['unit'], 120)}{cyc} | {spread} | {ok} | "
                     f"{safe_text(f['how'], 2000)} |")
    return "\n".join(lines)


def read(path) -> dict:
    """A calibration document from a file, or CalibrationError naming the file and the fix."""
    from .calibration import Calibration, CalibrationError, read_json

    path = Path(path)
    doc = read_json(path)            # bounded, regular file only (a FIFO is refused, not waited on)
    Calibration.from_json(doc, str(path))      # the same checks as the cost model's loader
    if not isinstance(doc.get("device"), dict):
        raise CalibrationError(f"{path}: \"device\" must be an object with the GPU's name")
    for key, f in doc.get("figures", {}).items():
        for field in ("unit", "spread_pct", "runs", "how"):
            if field not in f:
                raise CalibrationError(f"{path}: figures.{key} has no \"{field}\"; run `warpviz calibrate` again")
    doc["checks"] = plausibility(doc["device"], doc.get("figures", {}))    # by today's rules
    return doc


__all__ = ["unstable", "run_spread_pct", "RUN_SPREAD_MAX", "one_block_per_sm_shared", "LOADED_STREAMS", "measure", "CalibrationSession", "CHILD", "combine_runs", "plausibility", "document", "save", "format_table", "format_markdown", "read", "FIGURES",
           "default_path", "source", "figure"]
