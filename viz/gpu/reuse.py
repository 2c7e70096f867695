"""Where a launch's global sectors come from: L1, L2 or DRAM (pure numpy, no GPU).

The cost model (``viz.gpu.costmodel``) needs, for each global load, how many of its
sectors a cache already holds, and how many bytes DRAM must move. Both follow from the
addresses the engine evaluates (``viz.engine.evaluate_instruction``), replayed in program
order over a window of blocks:

* **L1** (per SM, not coherent): a load sector that the same block touched with an
  earlier load hits in L1. Stores do not allocate in L1. A ``.volatile`` global load
  (``viz.gpu.codegen.repeated_accesses``: a thread reads a word twice) is a strong load that
  bypasses L1, so it never hits there.
* **L2** (device wide, ``l2_bytes``): a sector touched earlier in the window hits in L2.
  The window is the whole replica when its global arrays fit in half of L2 (data stays
  from block to block), else one wave of co-resident blocks (``wave_blocks``, in launch
  order): reuse further apart than that is assumed evicted.
* **DRAM**: every 64-byte half line touched in a window is moved once (DRAM moves 64-byte
  halves: a sector whose neighbour is not touched still costs 64 bytes, measured on H100
  with stride-16 floats), loads as reads, stores as writes.

Windows are replayed on a sample of blocks (at most ``max_lanes`` thread-instructions) and
scaled to the replica; replicas are distinct data, so a launch's figures are a replica's
times the number of replicas. Nothing here reads a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..engine import evaluate_instruction
from ..gpus import SECTOR_BYTES, WARP
from ..scenario import Scenario, expand_instructions

MAX_LANES = 6_000_000      # thread-instructions replayed per window (the rest is scaled)


@dataclass
class InstrReuse:
    """One global warp instruction's sectors in a window, by where they are served."""

    number: int
    op: str
    sectors: int = 0
    l1_hits: int = 0
    l2_hits: int = 0
    requests: int = 0
    l1_waits: int = 0      # L1 hits on a sector still being fetched: they wait like a miss
    l2_waits: int = 0      # L2 hits on a sector still coming from DRAM


@dataclass
class Reuse:
    """A replica's global traffic by level (already scaled from the window)."""

    load_sectors: int = 0
    store_sectors: int = 0
    l1_hit_sectors: float = 0.0
    l2_sectors: float = 0.0          # sectors that reach L2 (L1 load misses + stores)
    l2_requests: float = 0.0         # their requests: one per warp instruction and 128-byte line
    partial_store_sectors: float = 0.0   # store sectors a warp writes only in part
    merged_store_sectors: float = 0.0    # stored sectors that went out in a write with an earlier store's
    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    dram_scatter_bytes: float = 0.0  # of the reads, those a gather scatters over DRAM pages (SCATTER_PAGES)
    window: str = "replica"          # "replica" or "wave"
    sampled_blocks: int = 0
    blocks: int = 0
    per_instruction: dict[int, InstrReuse] = field(default_factory=dict)

    @property
    def dram_bytes(self) -> float:
        return self.dram_read_bytes + self.dram_write_bytes

    def add_sectors(self, stats) -> None:
        """Adds each instruction's sectors (``InstrReuse``): a load's to the loaded ones and,
        for its L1 misses, to L2's; a store's to the stored ones and to L2's."""
        for st in stats:
            if st.op == "load":
                self.load_sectors += st.sectors
                self.l1_hit_sectors += st.l1_hits
                self.l2_sectors += st.sectors - st.l1_hits
            else:
                self.store_sectors += st.sectors
                self.l2_sectors += st.sectors

    def as_dict(self) -> dict:
        return {"l1_hit_sectors": round(self.l1_hit_sectors), "l2_sectors": round(self.l2_sectors),
                "l2_requests": round(self.l2_requests),
                "partial_store_sectors": round(self.partial_store_sectors),
                "merged_store_sectors": round(self.merged_store_sectors),
                "dram_read_bytes": round(self.dram_read_bytes), "dram_write_bytes": round(self.dram_write_bytes),
                "dram_scatter_bytes": round(self.dram_scatter_bytes),
                "window": self.window, "sampled_blocks": self.sampled_blocks}


IN_FLIGHT = 16   # a hit on a sector that a load at most this many loads earlier fetched waits for it
PAGE_SECTORS = 64    # a DRAM page of 2 KiB
SCATTER_PAGES = 8    # a warp's load whose sectors lie in this many pages or more is a gather: the DRAM
                     # chunks it fetches first are scattered reads (calibration's dram_scatter_gbps)


def _global_instructions(sc: Scenario):
    """The global warp instructions in the order a thread runs them (the generator's groups
    in turn; in a group with loops, loop point by loop point)."""
    from .codegen import plan_groups

    instrs = [i for i in expand_instructions(sc) if sc.array(sc.accesses[i.access].array).space == "global"]
    by_key: dict = {}
    for i in instrs:
        by_key.setdefault((i.access, i.loop), []).append(i)
    out = []
    for g in plan_groups(sc):
        idx = {a.index for a in g.accesses}
        points = []
        for i in instrs:
            if i.access in idx and i.loop not in points:
                points.append(i.loop)
        for pt in points:
            for a in g.accesses:
                out.extend(by_key.pop((a.index, pt), []))
    for rest in by_key.values():       # (none: every access is in a group)
        out.extend(rest)
    return out


def _barrier_accesses(sc: Scenario) -> set[int]:
    """The accesses the generated kernel puts a barrier before (``codegen.plan_groups``)."""
    from .codegen import plan_groups

    return {g.accesses[0].index for g in plan_groups(sc) if g.barrier_before and g.accesses}


def _runs(sc: Scenario, instrs, serial_loops: bool = False) -> list[int]:
    """For each global instruction (program order), the run of loads in flight together it
    belongs to: a barrier, a global store, or an access with a ``when`` (the generated kernel
    waits for it alone) ends a run, so a later load finds the earlier ones arrived."""
    barrier_at = _barrier_accesses(sc)
    run, out, seen, prev = 0, [], set(), None
    for i in instrs:
        a = sc.accesses[i.access]
        if serial_loops and i.loop and i.loop != prev:
            run += 1                    # a loop that is not unrolled waits for each iteration
        prev = i.loop
        if a.index in barrier_at and a.index not in seen:
            run += 1
        seen.add(a.index)
        if a.when is not None:
            run += 1
        out.append(run)
        if a.op == "store" or a.when is not None:
            run += 1
    return out


def _writes(sc: Scenario, instrs, serial_loops: bool = False) -> list[int]:
    """For each global instruction (program order), the L2 write it goes out in: a store
    joins the previous instruction's write when that one is a store too, with no barrier, no
    ``when`` and no iteration of a loop kept rolled between (L1 sends a warp's back-to-back
    stores to a line as one write: ``viz.gpu.tracemodel.merge_stores``); every other
    instruction is its own."""
    barrier_at = _barrier_accesses(sc)
    out, n, seen, prev_loop, prev_store = [], -1, set(), None, False
    for i in instrs:
        a = sc.accesses[i.access]
        fence = (a.index in barrier_at and a.index not in seen) or (serial_loops and i.loop and i.loop != prev_loop)
        store = a.op == "store" and a.when is None
        if not (store and prev_store and not fence):
            n += 1
        out.append(n)
        seen.add(a.index)
        prev_loop, prev_store = i.loop, store
    return out


def _volatile_accesses(sc: Scenario) -> set[int]:
    from .codegen import may_repeat, repeated_accesses

    rep = repeated_accesses(sc)
    if rep is None:
        rep = {a.index for a in sc.accesses if sc.array(a.array).space == "global" and may_repeat(a, sc)}
    return rep


def launch_order(sc: Scenario, replicas: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``count`` blocks the GPU starts, as (replica, block of the scenario). The
    generated kernel's grid is (gx x replicas, gy, gz), started x fastest: a replica's
    blocks are contiguous only when gy = gz = 1; otherwise its rows are gx x replicas
    blocks apart, and data they share is reused that far apart."""
    gx, gy, gz = sc.launch.grid
    i = np.arange(min(count, sc.launch.blocks * replicas), dtype=np.int64)
    x_all = i % (gx * replicas)
    rest = i // (gx * replicas)
    y, z = rest % gy, rest // gy
    return x_all // gx, (x_all % gx) + gx * (y + gy * z)


def analyze_reuse(sc: Scenario, wave_blocks: int, l2_bytes: int, max_lanes: int = MAX_LANES,
                  replicas: int = 1, blocks_total: int | None = None, serial_loops: bool = False,
                  resident: bool = False) -> Reuse:
    """A replica's reuse (see the module docstring); ``wave_blocks`` = SMs x resident blocks.
    The window is the blocks, in launch order over all ``replicas``, whose data fits in
    half of L2 (at least one wave): reuse between blocks further apart is lost.
    ``resident``: the launch runs again and again over data that fits in half of L2 (the
    timed loop's buffer sets together): the previous launches left it in L2, so every
    sector that misses L1 hits L2 and DRAM moves nothing."""
    instrs = _global_instructions(sc)
    nb, tpb = sc.launch.blocks, sc.launch.threads_per_block
    out = Reuse(blocks=nb)
    if not instrs:
        return out
    # ``blocks_total``: ``sc`` is the first rows of a larger launch (predict.analysis_of).
    total = (blocks_total or nb) * max(1, replicas)
    footprint = sum(a.footprint for a in sc.arrays if a.space == "global")
    # Bytes a block brings into L2: the sectors block 0 touches (a gather's are scattered),
    # at least its share of the arrays.
    first = np.zeros(1, np.int64)
    threads0 = np.arange(tpb, dtype=np.int64)
    touched = set()
    for ins in instrs:
        lv0 = evaluate_instruction(sc, ins, first, threads0)
        a0 = np.broadcast_to(lv0.addr.natural(), (1, tpb))[np.broadcast_to(np.asarray(lv0.mask), (1, tpb))]
        touched.update((a0 // SECTOR_BYTES).tolist())
    per_block = max(32, 32 * len(touched), footprint // max(1, blocks_total or nb))
    window = int(min(total, max(wave_blocks, (l2_bytes // 2) // per_block)))
    if footprint * max(1, replicas) <= l2_bytes // 2:
        window = total                  # the whole launch's arrays fit in half of L2
    out.window = "launch" if window >= total else "wave" if window <= wave_blocks else "L2"
    per_block_lanes = max(1, tpb * len(instrs))
    sample = max(1, min(window, max_lanes // per_block_lanes))
    # The window's first blocks in launch order (they run together).
    rep, blocks = launch_order(sc, max(1, replicas), sample)
    sample = len(blocks)
    out.sampled_blocks = int(sample)
    volatile = _volatile_accesses(sc)
    threads = np.arange(tpb, dtype=np.int64)
    nw = -(-tpb // WARP)
    warp_of = np.broadcast_to(threads // WARP, (sample, tpb))
    slot = np.arange(sample, dtype=np.int64)           # the block's place in the window
    block_of = np.broadcast_to(slot.reshape(-1, 1), (sample, tpb))
    rep_of = np.broadcast_to(rep.reshape(-1, 1), (sample, tpb))
    span = max(1, -(-(max((a.start + a.footprint for a in sc.arrays if a.space == "global"), default=0)) // 32) + 1)
    span += -span % 4                                   # a multiple of 4: a line never spans two replicas
    span2 = span * (int(rep.max()) + 1)                 # sector keys over the sampled replicas
    stats = {i.number: InstrReuse(i.number, sc.accesses[i.access].op) for i in instrs}
    parts_sec, parts_bsec, parts_ins, parts_l1ok, parts_load, parts_wline, parts_spread = [], [], [], [], [], [], []
    store_bytes: dict = {}
    write_of = np.asarray(_writes(sc, instrs, serial_loops), np.int64)
    for n, ins in enumerate(instrs):
        acc = sc.accesses[ins.access]
        lv = evaluate_instruction(sc, ins, blocks, threads)
        addr = np.broadcast_to(lv.addr.natural(), (sample, tpb))
        mask = np.broadcast_to(np.asarray(lv.mask), (sample, tpb))
        if not mask.any():
            continue
        # Replicas are distinct data: sector r x span + s.
        sec = addr[mask] // SECTOR_BYTES + rep_of[mask] * span
        # One request per warp with an active lane; its sectors are the warp's distinct ones.
        wkey, lanes = np.unique((block_of[mask] * nw + warp_of[mask]) * span2 + sec, return_counts=True)
        sectors = wkey % span2
        st = stats[ins.number]
        st.requests += len(np.unique(wkey // span2))
        st.sectors += len(sectors)
        parts_sec.append(sectors)
        parts_bsec.append((wkey // span2 // nw) * span2 + sectors)
        parts_wline.append(wkey // 4)                  # (block, warp, 128-byte line): one L2 request
        # How many DRAM pages each warp's sectors lie in (the same for all its sectors).
        wk = wkey // span2
        pages = np.unique(wk * (span2 // PAGE_SECTORS + 1) + sectors // PAGE_SECTORS) // (span2 // PAGE_SECTORS + 1)
        uw, cnt = np.unique(pages, return_counts=True)
        parts_spread.append(cnt[np.searchsorted(uw, wk)])
        parts_ins.append(np.full(len(sectors), n, np.int64))
        is_load = acc.op == "load"
        if not is_load:   # bytes each warp writes per sector, summed over the stores of its write
            store_bytes.setdefault(int(write_of[n]), []).append((wkey, lanes * ins.size))
        parts_l1ok.append(np.full(len(sectors), is_load and acc.index not in volatile))
        parts_load.append(np.full(len(sectors), is_load))
    if not parts_sec:
        return out
    # Program order is the order of these arrays: an occurrence is a hit when an earlier
    # one touched the same sector (L2: anywhere in the window; L1: an earlier cached load
    # of the same block). np.unique's return_index gives each key's first occurrence.
    sec = np.concatenate(parts_sec)
    bsec = np.concatenate(parts_bsec)
    ins_of = np.concatenate(parts_ins)
    l1ok = np.concatenate(parts_l1ok)
    is_load = np.concatenate(parts_load)
    wline = np.concatenate(parts_wline)
    spread = np.concatenate(parts_spread)
    run_of = np.asarray(_runs(sc, instrs, serial_loops), np.int64)
    first2 = np.zeros(len(sec), bool)
    _, f2, inv2 = np.unique(sec, return_index=True, return_inverse=True)
    first2[f2] = True
    l1hit = np.zeros(len(sec), bool)
    l1wait = np.zeros(len(sec), bool)
    idx = np.flatnonzero(l1ok)
    if len(idx):
        first1 = np.zeros(len(idx), bool)
        _, f1, inv1 = np.unique(bsec[idx], return_index=True, return_inverse=True)
        first1[f1] = True
        l1hit[idx[~first1]] = True
        # A hit on a sector an earlier load of the block fetched no more than IN_FLIGHT loads
        # before (the same instruction's other warps included) finds it still on its way.
        src = idx[f1[inv1.reshape(-1)]]
        near = (ins_of[idx] - ins_of[src] < IN_FLIGHT) & (run_of[ins_of[idx]] == run_of[ins_of[src]])
        l1wait[idx[~first1 & near]] = True
    l2hit = ~l1hit & ~first2
    if resident:
        l2hit = ~l1hit                  # the previous launches left every sector in L2
    # L2 requests: the distinct (write, warp, line) of the sectors that miss L1 (a write: an
    # instruction, or back-to-back stores sent together, ``_writes``).
    go = ~l1hit
    w_of = write_of[ins_of]
    order = np.lexsort((wline[go], w_of[go]))
    wl, io = wline[go][order], w_of[go][order]
    requests = int(np.count_nonzero(np.diff(wl) != 0) + np.count_nonzero(np.diff(io) != 0)
                   - np.count_nonzero((np.diff(wl) != 0) & (np.diff(io) != 0)) + (1 if len(wl) else 0))
    src2 = f2[inv2.reshape(-1)]
    l2wait = l2hit & (ins_of - ins_of[src2] < IN_FLIGHT) & (run_of[ins_of] == run_of[ins_of[src2]])
    if resident:
        l2wait &= ~first2
    n_ins = len(instrs)
    l1c = np.bincount(ins_of[l1hit], minlength=n_ins)
    l2c = np.bincount(ins_of[l2hit], minlength=n_ins)
    l1w = np.bincount(ins_of[l1wait], minlength=n_ins)
    l2w = np.bincount(ins_of[l2wait], minlength=n_ins)
    for n, ins in enumerate(instrs):
        stats[ins.number].l1_waits += int(l1w[n])
        stats[ins.number].l2_waits += int(l2w[n])
        stats[ins.number].l1_hits += int(l1c[n])
        stats[ins.number].l2_hits += int(l2c[n])
    chunks = {"load": np.unique(sec[is_load] // 2), "store": np.unique(sec[~is_load] // 2)}
    # The DRAM read chunks a gather fetches first: the warp that touched each first spread
    # its sectors over SCATTER_PAGES pages or more.
    li = np.flatnonzero(is_load)
    scattered = 0
    if len(li):
        _, fl = np.unique(sec[li] // 2, return_index=True)
        scattered = int(np.count_nonzero(spread[li[fl]] >= SCATTER_PAGES))
    # Each write (``_writes``: back-to-back stores, the parts .x, .y, .z of a float3 among
    # them) stores a warp's sector once, however many of its stores wrote to it; a sector it
    # writes only in part (fewer than 32 bytes in all) is merged in L2.
    partial = 0
    merged = 0
    for pieces in store_bytes.values():
        keys = np.concatenate([k for k, _ in pieces])
        nbytes = np.concatenate([b for _, b in pieces])
        u, inv = np.unique(keys, return_inverse=True)
        partial += int(np.count_nonzero(np.bincount(inv, weights=nbytes) < SECTOR_BYTES))
        merged += len(keys) - len(u)
    scale = nb / sample
    out.add_sectors(stats.values())
    out.store_sectors -= merged
    out.l2_sectors -= merged
    out.merged_store_sectors = merged * scale
    out.load_sectors = round(out.load_sectors * scale)
    out.store_sectors = round(out.store_sectors * scale)
    out.l1_hit_sectors *= scale
    out.l2_sectors *= scale
    out.dram_read_bytes = len(chunks["load"]) * 64 * scale
    out.dram_write_bytes = len(chunks["store"]) * 64 * scale
    out.l2_requests = requests * scale
    out.dram_scatter_bytes = scattered * 64 * scale
    if resident:
        out.window = "resident"
        out.dram_read_bytes = out.dram_write_bytes = out.dram_scatter_bytes = 0.0
    if out.window == "launch" and not resident:
        # Everything fits in half of L2: no byte crosses DRAM twice, whatever a sample of a
        # few blocks (a long GEMM loop) suggests when scaled up.
        def arrays_of(op):
            names = {sc.accesses[i.access].array for i in instrs if sc.accesses[i.access].op == op}
            return sum(-(-a.footprint // 64) * 64 for a in sc.arrays if a.name in names)

        share = nb / (blocks_total or nb)     # the caller scales a first-rows analysis back up
        full = out.dram_read_bytes
        out.dram_read_bytes = min(out.dram_read_bytes, arrays_of("load") * share)
        if full:
            out.dram_scatter_bytes *= out.dram_read_bytes / full
        out.dram_write_bytes = min(out.dram_write_bytes, arrays_of("store") * share)
        # Every loaded sector misses L2 once over the whole launch, however the sample of its
        # first blocks paid for first touches: spread the misses evenly over the loads.
        l1_miss = sum(st.sectors - st.l1_hits for st in stats.values() if st.op == "load") * scale
        m = min(1.0, out.dram_read_bytes / 32 / l1_miss) if l1_miss else 1.0
        for st in stats.values():
            if st.op == "load" and sample < total:
                st.l2_hits = int(round((st.sectors - st.l1_hits) * (1 - m)))
                st.l2_waits = min(st.l2_waits, st.l2_hits)
    out.partial_store_sectors = partial * scale
    out.per_instruction = stats
    return out


__all__ = ["Reuse", "InstrReuse", "analyze_reuse", "MAX_LANES"]
