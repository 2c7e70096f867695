"""Whole-launch analysis speed: the 2048x2048 shared-tile transpose (16.8 M lane accesses).

Times, in one run and on one core:
  engine            viz.engine.analyze (numba, separable/residue shortcut on)
  engine, no shortcut  the same compiled counting over every block's full address grid
  plain numpy       the same rules written as straightforward vectorised numpy
                    (full address grids, sort-based distinct counting)
and checks that all three give identical metrics. Prints lane accesses per second and
the ratio engine / numpy. Run: .venv/bin/python benchmarks/bench_engine.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from viz.engine import METRIC_NAMES, analyze, evaluate_instruction  # noqa: E402
from viz.scenario import loads  # noqa: E402

SCENARIO = """
title = "2048 x 2048 transpose through a 32 x 32 shared tile"
[launch]
block = [32, 8]
grid = [64, 64]
[params]
W = 2048
TILE = 32
ROWS = 8
[arrays.src]
space = "global"
type = "float"
shape = ["W * W"]
[arrays.dst]
space = "global"
type = "float"
shape = ["W * W"]
[arrays.tile]
space = "shared"
type = "float"
shape = [32, 32]
[[access]]
op = "load"
at = "src[(blockIdx.y*TILE + threadIdx.y + j)*W + blockIdx.x*TILE + threadIdx.x]"
for = { j = "0:TILE:ROWS" }
[[access]]
op = "store"
at = "tile[threadIdx.y + j][threadIdx.x]"
for = { j = "0:TILE:ROWS" }
[[access]]
op = "load"
at = "tile[threadIdx.x][threadIdx.y + j]"
for = { j = "0:TILE:ROWS" }
[[access]]
op = "store"
at = "dst[(blockIdx.x*TILE + threadIdx.y + j)*W + blockIdx.y*TILE + threadIdx.x]"
for = { j = "0:TILE:ROWS" }
"""


def numpy_analyze(sc) -> dict[str, int]:
    """docs/memory-model.md in plain numpy: full grids, sort, count distinct per warp."""
    m = dict.fromkeys(METRIC_NAMES, 0)
    nb, nt = sc.launch.blocks, sc.launch.threads_per_block
    nw = sc.launch.warps_per_block
    blocks, threads = np.arange(nb), np.arange(nt)
    for ins in sc.instructions():
        acc = sc.accesses[ins.access]
        arr = sc.array(acc.array)
        lv = evaluate_instruction(sc, ins, blocks, threads)
        addr = np.broadcast_to(lv.addr.natural(), (nb, nt))
        mask = np.broadcast_to(lv.mask, (nb, nt))
        pad = nw * 32 - nt
        addr = np.pad(addr, ((0, 0), (0, pad))).reshape(nb * nw, 32)
        mask = np.pad(mask, ((0, 0), (0, pad))).reshape(nb * nw, 32)
        issued = mask.any(axis=1)
        op = "ld" if acc.op == "load" else "st"
        if arr.space == "global":
            sectors = np.where(mask, addr >> 5, -1)
            s = np.sort(sectors, axis=1)
            distinct = (s[:, 1:] != s[:, :-1]) & (s[:, 1:] >= 0)
            count = distinct.sum(axis=1) + (s[:, 0] >= 0)
            m[f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum"] += int(issued.sum())
            m[f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum"] += int(count.sum())
            continue
        size = ins.size
        per_phase = 32 if size <= 4 else (16 if size == 8 else 8)
        nwords = max(1, size // 4)
        words = (addr >> 2)[:, :, None] + np.arange(nwords)
        phase = np.broadcast_to((np.arange(32) // per_phase)[None, :, None], words.shape)
        live = np.broadcast_to(mask[:, :, None], words.shape)
        # key orders (phase, bank, word); inactive lanes sort last
        key = np.where(live, (phase.astype(np.int64) << 58) | ((words & 31) << 52) | (words >> 5), np.iinfo(np.int64).max)
        key = np.sort(key.reshape(len(key), -1), axis=1)
        new_word = np.ones(key.shape, bool)
        new_word[:, 1:] = key[:, 1:] != key[:, :-1]
        new_word &= key != np.iinfo(np.int64).max
        group = key >> 52  # (phase, bank)
        rows = np.broadcast_to(np.arange(len(key))[:, None], key.shape)
        counts = np.zeros((len(key), 32 // per_phase * 32), np.int64)
        sel = new_word
        np.add.at(counts, (rows[sel], ((group[sel] >> 6) * 32 + (group[sel] & 63))), 1)
        per_phase_wf = counts.reshape(len(key), 32 // per_phase, 32).max(axis=2)
        wf = int(per_phase_wf.sum())
        phases = int((per_phase_wf > 0).sum())
        m[f"smsp__inst_executed_op_shared_{op}.sum"] += int(issued.sum())
        m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"] += wf
        m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum"] += wf - phases
    return m


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sc = loads(SCENARIO, "bench-transpose-2048.toml")
    lanes = sc.launch.threads * len(sc.instructions())
    t0 = time.perf_counter()
    analyze(sc)  # loads (or compiles, on a cold cache) the numba functions
    first = time.perf_counter() - t0
    t_engine, an = best_of(lambda: analyze(sc), args.repeat)
    t_full, an_full = best_of(lambda: analyze(sc, shortcuts=False), args.repeat)
    t_numpy, m_numpy = best_of(lambda: numpy_analyze(sc), max(1, args.repeat - 1))
    assert an.metrics == an_full.metrics == m_numpy, "the three implementations disagree"
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, {cpu}; numba on 1 thread")
    print(f"scenario: {sc.title}: {sc.launch.threads:,} threads x {len(sc.instructions())} instructions "
          f"= {lanes:,} lane accesses")
    print(f"first call (cache load + run): {first:.3f} s")
    for name, t in (("engine", t_engine), ("engine, no shortcut", t_full), ("plain numpy", t_numpy)):
        print(f"{name:<22} {t:8.3f} s   {lanes / t / 1e6:9.1f} M lane accesses/s")
    print(f"engine / numpy: {t_numpy / t_engine:.1f}x faster; engine without shortcut / numpy: "
          f"{t_numpy / t_full:.1f}x")
    print("metrics:", {k.split("__")[1]: v for k, v in an.metrics.items() if v})


if __name__ == "__main__":
    main()
