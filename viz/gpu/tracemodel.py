"""The cost model's Workload of a traced launch (pure numpy: no GPU, no nvcc, no Qt).

A scenario's Workload (``costmodel.workload``) comes from the engine's analysis and from
addresses the engine evaluates. A trace already holds what the launch did: every warp-level
execution of every memory instruction, in each warp's own order, with its 32 addresses. So:

* **counts**: sectors, shared wavefronts, 128-byte lines and memory warp instructions are
  ``viz.trace.analysis.analyze_trace``'s (the figures that equal Nsight Compute's), summed over
  the trace's instructions, atomics and ``cp.async`` included;
* **reuse** (``trace_reuse``): ``viz.gpu.reuse``'s rules (L1, L2, DRAM half lines, L2 requests
  per warp instruction and line, gathers scattered over DRAM pages) replayed on the recorded global
  addresses instead of evaluated ones. The order is each warp's own record order; warps are
  interleaved by their position in it (the k-th memory instruction of every warp before the
  (k+1)-th of any), as ``reuse`` interleaves a scenario's warps instruction by instruction.
  A load sector hits in L1 when an earlier cached load of the same block touched it (stores,
  atomics, ``cp.async.cg``, ``.volatile``/``.cg``/``.cv`` loads do not allocate there), in L2
  when any earlier access of the window touched it; DRAM moves every 64-byte half line touched
  in a window once. The window is the launch when its buffers fit in half of L2 (every shipped
  trace), else one wave of co-resident blocks in launch order. Hits on a sector fetched fewer
  than ``reuse.IN_FLIGHT`` memory instructions earlier in the same run wait for it. A timed
  launch whose rotated buffer sets all fit in half of L2 (``plan.l2_resident``, as for
  ``bench``'s entries: every shipped trace) starts with its data in L2: first touches hit
  there and DRAM moves nothing. A warp's back-to-back plain stores go to L2 as one write
  (``merge_stores``): their sectors count once there, partly written only when all of them
  together leave bytes out, and one request per line;
* **the latency chain** (``trace_chain``): ``costmodel._chain``'s rules on each warp's recorded
  sequence: loads issue back to back and overlap (up to ``costmodel.LOADS_IN_FLIGHT``) until a
  global store or atomic, a shared store after shared loads, a barrier, or a loop's back edge
  (``back_edges``: the warp's next record comes from an earlier PTX line - or the same
  instruction again; a ``cp.async``'s two recorded sides on one line are one instruction - so
  the compiler kept that loop rolled; a warp issues in order, and the iteration's use of its loads comes before
  the next iteration's loads - ``costmodel``'s ``serial_loops`` for ``#pragma unroll 1``, seen
  in the trace); a barrier waits for the block's slowest warp. The barriers a warp passes between two of its records come from
  the PTX (``tracebench.ptx_flow``: ``bar.sync`` lines and loops, stored with the results); a
  trace without them has no barrier in its chain. A barrier segment lasts at least the
  block's shared wavefronts in it through the SM's pipe (``costmodel.shared_burst_s``, from
  ``shared_wavefronts``). The launch's chain is its slowest block's;
* **warp instructions** (every SASS instruction, for the issue term) and a warp's own
  issue: ``instructions_and_own_issue``: counted from the plain kernel's SASS profile
  (``viz.toolchain.sass``, with its control bits) and the trace's memory instructions by kind where
  the entry's resources hold the profile, else the hand-written-kernel estimate of
  ``costmodel.estimate_instructions`` (a prologue and epilogue per warp, a few instructions
  per recorded memory instruction) and no own issue;
* **registers and shared memory** per block: the compiled plain kernel's (``ptxas -v``, and
  the launch file's dynamic shared memory), from ``tracebench.plain_build``.

Nothing here reads a measured time or counter of the launch it predicts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np

from ..kinds.registry import forms, trace_kind
from ..gpus import LINE_BYTES, SECTOR_BYTES
from . import costmodel
from .reuse import IN_FLIGHT, InstrReuse, Reuse

# the trace kinds whose lanes are counted on global memory (their TraceForm's counts_global)
GLOBAL_KINDS = tuple(f.kind for f in forms() if f.counts_global)
# The most records the cost model replays (its chains are per-record Python loops: about
# 10 s per 100,000 records on a laptop core); the shipped traces have at most 22,400.
MAX_MODEL_RECORDS = 200_000


def _flat_ids(trace) -> tuple[np.ndarray, np.ndarray, int]:
    """(warp key per record: block x warps + warp, position of each record in its warp's
    own order, warps per block)."""
    nw = trace.warps_per_block
    key = trace.block.astype(np.int64) * nw + trace.warp.astype(np.int64)
    n = key.size
    pos = np.zeros(n, np.int64)
    if n:
        # records are ordered by block, then warp, then the warp's own order (tracefile)
        starts = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
        first = np.repeat(starts, np.diff(np.r_[starts, n]))
        pos = np.arange(n, dtype=np.int64) - first
    return key, pos, nw


def _l1_allocates(ins: dict) -> bool:
    """Does a global load of this instruction allocate its sectors in L1?"""
    op = ins["opcode"]
    if ins["kind"] != "load":
        return False      # stores, atomics and reductions (L2), cp.async (.cg: L2 only; .ca: not modelled)
    return not any(t in op.split(".") for t in ("volatile", "cg", "cv", "relaxed", "acquire"))


def _ptx_order(trace) -> np.ndarray:
    """Each record's place in the PTX: (line, instruction id) as one number. One PTX line can
    hold two of the trace's instructions - a ``cp.async``'s shared and global sides, recorded
    one after the other in id order - and they are one instruction, not a loop's two
    iterations."""
    ids = trace.instr.astype(np.int64)
    line = np.asarray([int(i.get("line_no") or 0) for i in trace.instructions], np.int64)[ids]
    return line * (len(trace.instructions) + 1) + ids


def back_edges(trace) -> np.ndarray:
    """For each record, whether its warp came to it over a loop's back edge: its place in the
    PTX (``_ptx_order``: its line, then its instruction on that line) is not after the place
    of the warp's previous record (a new iteration of a loop the compiler kept rolled, as
    ``#pragma unroll 1`` does)."""
    n = trace.records
    if not n:
        return np.zeros(0, bool)
    order = _ptx_order(trace)
    _key, pos, _ = _flat_ids(trace)
    out = np.zeros(n, bool)
    out[1:] = (order[1:] <= order[:-1]) & (pos[1:] > 0)
    return out


def barriers_between(trace, flow: dict | None) -> np.ndarray:
    """For each record, the barriers its warp passed since its previous record (0 for a
    warp's first record: the barriers before it are counted from the kernel's start), from
    the PTX's barrier lines and loops (``tracebench.ptx_flow``)."""
    n = trace.records
    out = np.zeros(n, np.int64)
    bars = np.asarray(sorted((flow or {}).get("barriers") or []), np.int64)
    if not n or not bars.size:
        return out
    loops = [tuple(x) for x in (flow or {}).get("loops") or []]
    line = np.asarray([int(i.get("line_no") or 0) for i in trace.instructions], np.int64)[trace.instr]
    is_back = back_edges(trace)
    key, pos, _ = _flat_ids(trace)

    def count(lo: int, hi: int) -> int:       # barriers strictly between PTX lines lo and hi
        return int(np.searchsorted(bars, hi) - np.searchsorted(bars, lo, side="right"))

    cache: dict = {}
    for r in range(n):
        b = int(line[r])
        a = int(line[r - 1]) if pos[r] else 0
        k = (a, b, bool(is_back[r]))
        if k not in cache:
            if not is_back[r]:     # forward in the PTX (a cp.async's second side: the same line, none between)
                cache[k] = count(a, b)
            else:
                # a back edge: from a to the loop's branch, then from its label to b
                enclosing = [lp for lp in loops if lp[0] <= b and lp[1] >= a]
                if enclosing:
                    head, back = min(enclosing, key=lambda lp: lp[1] - lp[0])
                    cache[k] = count(a, back + 1) + count(head - 1, b)
                else:
                    cache[k] = 0
        out[r] = cache[k]
    return out


def trace_reuse(trace, an, wave_blocks: int, l2_bytes: int, barriers: np.ndarray | None = None,
                warm: bool = False) -> Reuse:
    """The launch's global traffic by level (see the module docstring), per instruction id.
    ``warm``: the launch's buffers are already in L2 when it starts (``l2_resident``): a
    sector's first touch hits in L2 and DRAM moves nothing."""
    key, pos, nw = _flat_ids(trace)
    ins_tab = trace.instructions
    nb = trace.blocks
    out = Reuse(blocks=nb, sampled_blocks=nb)
    stats = {i["id"]: InstrReuse(i["id"], "load" if i["op"] == "load" else "store") for i in ins_tab
             if i["kind"] in GLOBAL_KINDS and i["space"] in ("global", "generic")}
    if not stats or not trace.records:
        return out
    keep = trace.flags == 0
    ids = trace.instr.astype(np.int64)
    is_glob = np.isin(ids, list(stats)) & keep
    # runs: a warp's loads in flight together end at a barrier, a global store or atomic
    breaks = np.zeros(trace.records, np.int64)
    if barriers is not None:
        breaks += barriers > 0
    breaks += back_edges(trace)       # a rolled loop's next iteration: its loads come after the last ones' use
    fence = np.cumsum(breaks)         # barriers and back edges so far (a warp's records are contiguous)
    kind = np.asarray([i["kind"] for i in ins_tab], object)[ids]
    ops = np.asarray([i["op"] for i in ins_tab], object)[ids]
    writes = np.asarray([i["op"] != "load" or trace_kind(i["kind"]).global_write for i in ins_tab], bool)
    store_like = is_glob & (writes[ids] if ins_tab else np.zeros(ids.shape, bool))
    # a store ends the run after itself: the next record starts a new one
    prev_store = np.r_[False, store_like[:-1]] & (pos > 0)
    breaks += prev_store
    run = np.zeros(trace.records, np.int64)
    if trace.records:
        c = np.cumsum(breaks)
        starts = np.flatnonzero(pos == 0)
        base = np.repeat(c[starts] - breaks[starts], np.diff(np.r_[starts, trace.records]))
        run = c - base
    gpos = np.zeros(trace.records, np.int64)     # position among the warp's global records
    if is_glob.any():
        cg = np.cumsum(is_glob)
        starts = np.flatnonzero(pos == 0)
        base = np.repeat(cg[starts] - is_glob[starts], np.diff(np.r_[starts, trace.records]))
        gpos = cg - base - 1
    rows = np.flatnonzero(is_glob)
    # L1 sends a warp's back-to-back plain stores (adjacent among its global records, no
    # barrier or loop back edge between) to L2 as one write per line (``merge_stores``)
    write = merge_stores(rows, key, is_glob & (ops == "store") & (kind == "store"), fence)
    addr = trace.addresses(rows)
    from ..trace.analysis import mask_bits

    lanes = mask_bits(trace.pred[rows]) & mask_bits(trace.global_[rows])
    width = np.asarray([int(i["width"]) for i in ins_tab], np.int64)[ids[rows]]
    r_idx, lane = np.nonzero(lanes)
    if not r_idx.size:
        return out
    a = addr[r_idx, lane]
    sec_raw = a // SECTOR_BYTES
    usec, sec = np.unique(sec_raw, return_inverse=True)
    sec = sec.reshape(-1)
    ns = len(usec)
    occ_key = r_idx.astype(np.int64) * ns + sec
    okey, lane_count = np.unique(occ_key, return_counts=True)
    o_row = okey // ns                  # index into rows
    o_sec = okey % ns
    rec = rows[o_row]
    blk = trace.block.astype(np.int64)[rec]
    buf_bytes = _buffer_bytes(trace)
    window_all = buf_bytes <= l2_bytes // 2
    if window_all or wave_blocks >= nb:
        win = np.zeros(len(rec), np.int64)
        out.window = "launch"
    else:
        win = blk // max(1, wave_blocks)
        out.window = "wave"
    # program order: position in the warp's global records, then block, then warp
    order = np.lexsort((key[rec], gpos[rec]))
    rec, o_sec, blk, win = rec[order], o_sec[order], blk[order], win[order]
    o_row = o_row[order]
    lane_count = lane_count[order]
    n_occ = len(rec)
    sec2 = win * ns + o_sec
    first2 = np.zeros(n_occ, bool)
    _, f2, inv2 = np.unique(sec2, return_index=True, return_inverse=True)
    inv2 = inv2.reshape(-1)
    first2[f2] = True
    rid = ids[rec]
    l1ok = np.asarray([_l1_allocates(i) for i in ins_tab], bool)[rid]
    is_load = ops[rec] == "load"
    l1hit = np.zeros(n_occ, bool)
    l1wait = np.zeros(n_occ, bool)
    g = gpos[rec]
    rn = run[rec]
    idx = np.flatnonzero(l1ok)
    if idx.size:
        bsec = blk[idx] * ns + o_sec[idx]
        first1 = np.zeros(idx.size, bool)
        _, f1, inv1 = np.unique(bsec, return_index=True, return_inverse=True)
        inv1 = inv1.reshape(-1)
        first1[f1] = True
        l1hit[idx[~first1]] = True
        src = idx[f1[inv1]]
        near = (g[idx] - g[src] < IN_FLIGHT) & (rn[idx] == rn[src])
        l1wait[idx[~first1 & near]] = True
    src2 = f2[inv2]
    # a hit on a sector still coming from DRAM waits for it; in a warm L2 nothing comes from DRAM
    l2wait = ~l1hit & ~first2 & (g - g[src2] < IN_FLIGHT) & (rn == rn[src2]) & (not warm)
    l2hit = ~l1hit if warm else ~l1hit & ~first2
    # per instruction
    for iid, st in stats.items():
        m = rid == iid
        if not m.any():
            continue
        st.sectors = int(m.sum())
        st.requests = int(len(np.unique(rec[m])))
        st.l1_hits = int((l1hit & m).sum())
        st.l2_hits = int((l2hit & m).sum())
        st.l1_waits = int((l1wait & m).sum())
        st.l2_waits = int((l2wait & m).sum())
    # DRAM: every 64-byte half line touched in a window, loads as reads, stores as writes
    chunk = win * (ns + 1) + np.searchsorted(usec // 2, usec[o_sec] // 2)
    out.dram_read_bytes = 0.0 if warm else float(len(np.unique(chunk[is_load])) * 64)
    out.dram_write_bytes = 0.0 if warm else float(len(np.unique(chunk[~is_load])) * 64)
    # L2 requests: one per record (a warp's execution; merged stores: their write) and 128-byte
    # line of its sectors that miss L1
    miss = ~l1hit
    line = usec[o_sec] // (LINE_BYTES // SECTOR_BYTES)
    w_row = write[o_row]
    out.l2_requests = float(np.unique(np.stack([w_row[miss], line[miss]], axis=1), axis=0).shape[0]) \
        if miss.any() else 0.0
    # the DRAM read chunks a gather fetches first: the record that touched each first spread its
    # sectors over reuse.SCATTER_PAGES DRAM pages or more (reuse.analyze_reuse's rule)
    if not warm and is_load.any():
        from .reuse import PAGE_SECTORS, SCATTER_PAGES

        pages = np.unique(np.stack([o_row, usec[o_sec] // PAGE_SECTORS], axis=1), axis=0)
        rows_u, per_row = np.unique(pages[:, 0], return_counts=True)
        spread = per_row[np.searchsorted(rows_u, o_row)]
        li = np.flatnonzero(is_load)
        _, fl = np.unique(chunk[li], return_index=True)
        out.dram_scatter_bytes = float(np.count_nonzero(spread[li[fl]] >= SCATTER_PAGES) * 64)
    if warm:
        out.window = "L2-resident"
    # stored sectors reach L2 once per write (merged stores: once for all of them); partly
    # written ones: fewer than 32 bytes of the sector written by the write's records
    wbytes = lane_count * width[o_row]
    st_i = np.flatnonzero(~is_load)
    out.add_sectors(stats.values())
    if st_i.size:
        wkey, winv = np.unique(np.stack([w_row[st_i], o_sec[st_i]], axis=1), axis=0, return_inverse=True)
        merged = np.bincount(winv.reshape(-1), weights=wbytes[st_i])
        out.partial_store_sectors = float(np.count_nonzero(merged < SECTOR_BYTES))
        out.merged_store_sectors = float(st_i.size - len(wkey))
        out.store_sectors -= out.merged_store_sectors
        out.l2_sectors -= out.merged_store_sectors
    out.per_instruction = stats
    return out


def merge_stores(rows: np.ndarray, key: np.ndarray, plain: np.ndarray, fence: np.ndarray) -> np.ndarray:
    """For each global record ``rows`` (in trace order: block, warp, the warp's own order),
    the L2 write it goes out in: a plain store (``plain``: not an atomic, reduction or
    ``cp.async``) joins the write of the warp's previous global record when that one is a
    plain store too and no barrier or loop back edge (``fence``: their running count per
    record) lies between; every other record is its own. The H100's L1 sends back-to-back
    stores of a warp to a 128-byte line as fewer writes: for an AoS update of 1 M 28-byte
    structs (six 4-byte stores per thread, each one FFMA apart in the SASS) Nsight Compute
    counted 1.88 M sectors and 0.47 M requests written to L2 (``lts__t_*_srcunit_tex_op_write``)
    where the stores themselves are 5.5 M sectors in 1.38 M warp-line stores, and for its
    32-byte twin (two 16-byte stores) 1.57 M sectors for 2.1 M (tools/gpu/ncu_breakdown.sh
    ``aos28_1m`` / ``aos32_1m``, 2026-11-26). How many merge varies (a store microbenchmark
    merged none of 8 back-to-back stores to a sector and a quarter of 6); the model merges all
    of them, an upper bound. Returns a write number per row.
    """
    n = len(rows)
    if not n:
        return np.zeros(0, np.int64)
    join = np.zeros(n, bool)
    prev, cur = rows[:-1], rows[1:]
    join[1:] = plain[cur] & plain[prev] & (key[cur] == key[prev]) & (fence[cur] == fence[prev])
    return np.cumsum(~join) - 1


def l2_resident(trace, device, buffer_sets: int | None = None) -> bool:
    """Is a timed launch's data in L2 when it starts? ``bench`` rotates ``buffer_sets`` sets
    of the launch's buffers (``plan.buffer_sets``: 8 for a small launch) and launches back to
    back: when all the sets fit in half of L2, the launch before the previous one on the same
    set left its data there (nothing else runs in between), so its loads hit in L2 and its
    write-backs stay there. Measured on the H100: ``copy_grid_stride`` (400 KB, 8 sets) ran in
    2.6 us where the DRAM latency of its seven dependent loads alone would take 2.3 us."""
    from .plan import DeviceLimits, buffer_sets as sets_of, l2_resident as resident

    nbytes = _buffer_bytes(trace)
    sets = buffer_sets if buffer_sets is not None else sets_of(nbytes, DeviceLimits(device.sm_count, device.l2_bytes))
    return resident(nbytes, sets, device.l2_bytes)


def _buffer_bytes(trace) -> int:
    """The launch's buffers (256-byte aligned, as the recorder lays them out)."""
    at = 0
    from ..trace.launch import BUFFER_TYPES

    for a in trace.header["launch"].get("args", []):
        t = a.get("type", "")
        if t.endswith("*"):
            at += -(-max(int(a.get("count", 0)) * BUFFER_TYPES.get(t, 1), 1) // 256) * 256
    return at


def _load_level(iid: int, reuse: Reuse, device) -> tuple[float, str]:
    s = SimpleNamespace(instruction=SimpleNamespace(number=iid))
    return costmodel._load_latency(s, reuse, device)


def shared_wavefronts(an) -> np.ndarray:
    """Each record's wavefronts through the SM's shared pipe (0 for a global access or a skip
    record): its shared loads and stores, ldmatrix / stmatrix and shared atomics, a fused
    group's wide access counted once (``analyze_trace``'s figures)."""
    vals = an.record_values()
    sp = np.asarray([i["space"] == "shared" or trace_kind(i["kind"]).shared_pipe for i in an.trace.instructions],
                    bool)
    if not sp.size:
        return np.zeros(an.trace.records, np.int64)
    return np.where(sp[an.trace.instr.astype(np.int64)], vals, 0)


def trace_chain(trace, reuse: Reuse, device, barriers: np.ndarray | None = None,
                wavefronts: np.ndarray | None = None) -> tuple[float, tuple]:
    """The launch's dependent chain (its slowest block's; see the module docstring):
    (seconds, ((what, count, seconds each), ...)) for the slowest warp of that block.
    ``wavefronts``: each record's shared-pipe wavefronts (``shared_wavefronts``): a barrier
    segment lasts at least the block's wavefronts in it at the SM's rate, plus a shared load's
    latency (``costmodel.shared_burst_s``)."""
    key, pos, nw = _flat_ids(trace)
    n = trace.records
    if not n:
        return 0.0, ()
    ins_tab = trace.instructions
    lat_of: dict[int, tuple[float, str]] = {}
    for i in ins_tab:
        f = trace_kind(i["kind"])            # what a record waits for: its kind's TraceForm.latency
        if i["op"] != "load" or not f.latency:
            continue                                               # a store, or asynchronous (cp.async: at wait_group)
        if i["space"] == "shared" or f.latency == "shared":
            lat_of[i["id"]] = (device.shared_latency_s, "shared")
        elif f.latency == "atomic":
            lat_of[i["id"]] = (device.l2_latency_s, "L2")    # performed at L2, its old value used
        else:
            lat_of[i["id"]] = _load_level(i["id"], reuse, device)
    stores_global = {i["id"] for i in ins_tab if i["space"] in ("global", "generic")
                     and (i["op"] != "load" or trace_kind(i["kind"]).global_write)}
    stores_shared = {i["id"] for i in ins_tab if i["space"] == "shared" and i["op"] != "load"}
    bars = barriers if barriers is not None else np.zeros(n, np.int64)
    back = back_edges(trace)
    ids = trace.instr
    flags = trace.flags
    blocks = trace.block
    level_s = {"shared": device.shared_latency_s, "L1": device.l1_latency_s, "L2": device.l2_latency_s,
               "DRAM": device.dram_latency_s}
    starts = np.r_[np.flatnonzero(pos == 0), n]
    block_segs: dict[int, list] = {}
    warp_counts: dict[int, dict] = {}
    wf = wavefronts if wavefronts is not None else np.zeros(n, np.int64)
    block_wf: dict[int, list] = {}
    for w in range(len(starts) - 1):
        lo, hi = int(starts[w]), int(starts[w + 1])
        segs = []
        seg_wf = []
        cur_wf = 0
        t = 0.0
        run_sum = run_max = 0.0
        run_shared = False
        counts = dict.fromkeys(level_s, 0)
        nbar = 0
        for r in range(lo, hi):
            if back[r]:
                # in-order issue: a rolled loop's next iteration starts after this one used its loads
                t += max(run_max, run_sum / costmodel.LOADS_IN_FLIGHT)
                run_sum = run_max = 0.0
                run_shared = False
            if bars[r]:
                t += max(run_max, run_sum / costmodel.LOADS_IN_FLIGHT)
                run_sum = run_max = 0.0
                run_shared = False
                for _ in range(int(bars[r])):
                    segs.append(t)
                    seg_wf.append(cur_wf)
                    t = 0.0
                    cur_wf = 0
                nbar += int(bars[r])
            if flags[r]:
                continue
            cur_wf += int(wf[r])
            iid = int(ids[r])
            if iid in stores_global or (iid in stores_shared and run_shared):
                t += max(run_max, run_sum / costmodel.LOADS_IN_FLIGHT)
                run_sum = run_max = 0.0
                run_shared = False
                continue
            lv = lat_of.get(iid)
            if lv is None:
                continue
            e, level = lv
            counts[level] += 1
            run_sum += e
            run_max = max(run_max, e)
            if level == "shared":
                run_shared = True
        t += max(run_max, run_sum / costmodel.LOADS_IN_FLIGHT)
        segs.append(t)
        seg_wf.append(cur_wf)
        b = int(blocks[lo])
        block_segs.setdefault(b, []).append(segs)
        block_wf.setdefault(b, []).append(seg_wf)
        warp_counts[w] = (b, counts, nbar, sum(segs))
    worst_block, worst_s, worst_burst = None, -1.0, (0, 0.0)
    for b, ws in block_segs.items():
        k = max(len(s) for s in ws)
        total = (k - 1) * device.syncthreads_s
        burst_n, burst_s = 0, 0.0
        for j in range(k):
            slowest = max(s[j] if j < len(s) else 0.0 for s in ws)
            pipe = costmodel.shared_burst_s(sum(v[j] if j < len(v) else 0 for v in block_wf[b]), device)
            if pipe > slowest:
                burst_n, burst_s = burst_n + 1, burst_s + pipe - slowest
            total += max(slowest, pipe)
        if total > worst_s:
            worst_block, worst_s, worst_burst = b, total, (burst_n, burst_s)
    # the slowest warp of that block: its counts describe the chain
    cand = [(v[3], v) for v in warp_counts.values() if v[0] == worst_block]
    _, (_b, counts, nbar, _s) = max(cand, key=lambda x: x[0])
    chain = tuple((f"{lv} load", float(c), level_s[lv]) for lv, c in counts.items()) + \
        (("__syncthreads", float(nbar), device.syncthreads_s),
         (costmodel.BURST_WHAT, float(worst_burst[0]), worst_burst[1] / max(1, worst_burst[0])))
    return worst_s, chain


# The memory kinds of ``viz.toolchain.sass`` (its ``KINDS``) of a trace's instructions: (kind, space) -> kind.
SASS_KINDS = {(f.kind, sp): k for f in forms() for sp, k in f.sass_kind.items()}     # each TraceForm's sass_kind


def sass_counts(an) -> tuple[dict[str, int], int]:
    """({memory kind: warp instructions}, warps) of a traced launch, in the form of
    ``viz.toolchain.sass.engine_counts``: the recorded executions with an active lane, plus the
    never-true ``@!PT LDS`` ptxas puts before each LDGSTS (SASS has them as LDS)."""
    counts: dict[str, int] = {}
    for s in an.stats:
        k = SASS_KINDS.get((s.instr["kind"], s.instr["space"]))
        if k is None:
            continue        # a generic LD/ST (SASS LD/ST, not a kind there), cp.async's shared side
        counts[k] = counts.get(k, 0) + int(s.warp_instructions)
        if s.never_true_lds:
            counts["shared.load"] = counts.get("shared.load", 0) + int(s.never_true_lds)
    warps = an.trace.blocks * an.trace.warps_per_block
    return counts, warps


def warp_instructions(an, resources: dict | None = None) -> tuple[float, str]:
    """Every SASS warp instruction the launch issues, and where the count comes from
    (``instructions_and_own_issue`` without the warps' own issue)."""
    n, how, _own = instructions_and_own_issue(an, resources)
    return n, how


def instructions_and_own_issue(an, resources: dict | None = None, device=costmodel.H100,
                               blocks: int | None = None) -> tuple[float, str, float]:
    """(every SASS warp instruction the launch issues, where the count comes from, an average
    warp's own issue in seconds: ``costmodel.Workload.own_issue_s``).

    Where ``resources`` holds the plain kernel's SASS profile (``resources["sass"]``, from
    ``viz.toolchain.sass.profile_of``, recorded by ``tracebench.plain_build`` when cuobjdump or
    nvdisasm is there), ``viz.toolchain.sass.dynamic_instructions`` counts them from it and the
    trace's memory instructions by kind ("from the compiled kernel's SASS"), and the
    profile's control bits give the warps' own issue. Otherwise the hand-written-kernel
    estimate of ``costmodel.estimate_instructions``: per warp a prologue and an epilogue, per
    recorded memory instruction its plain cost (global 3, shared 2) - it does not see
    arithmetic, so a loop of FMAs is under-counted - and no own issue."""
    profile = (resources or {}).get("sass")
    if profile:
        from ..toolchain.sass import dynamic_instructions  # noqa: PLC0415

        counts, warps = sass_counts(an)
        if blocks is not None:          # a partial trace: the warps of the blocks it holds
            warps = blocks * an.trace.warps_per_block
        est = dynamic_instructions(profile, counts, warps, device.latency_cycles())
        return float(est.instructions), "from the compiled kernel's SASS", \
            est.issue_cycles / max(1, warps) / device.clock_hz
    tr = an.trace
    warps = (tr.blocks if blocks is None else blocks) * tr.warps_per_block
    total = float(warps * (costmodel.SASS_PROLOGUE + costmodel.SASS_EPILOGUE))
    for s in an.stats:
        sp = "shared" if s.instr["space"] == "shared" or trace_kind(s.instr["kind"]).shared_pipe else "global"
        total += (s.warp_instructions + s.never_true_lds) * costmodel.SASS_PLAIN[sp]
    return total, "estimated from the kernel's shape", 0.0


# How alike the blocks a partial trace holds must be for them to stand for the grid's other
# blocks: the spread, (max - min) / mean, of their records and of their lane accesses.
ALIKE_SPREAD = 0.10


@dataclass(frozen=True)
class Coverage:
    """What part of its launch a trace lets the cost model see (``coverage``)."""

    grid_blocks: int          # blocks in the launch's grid
    recorded_blocks: int      # blocks with records in the trace
    used_blocks: int          # of those, the first ones the model replays (at most MAX_MODEL_RECORDS records)
    spread: float             # (max - min) / mean of records and lane accesses per used block (the larger)
    complete: bool            # the trace holds every block's every record

    @property
    def scale(self) -> float:
        """Grid blocks per replayed block: 1 for a whole launch, else what the counts are scaled by."""
        return 1.0 if self.complete and self.used_blocks == self.recorded_blocks else \
            self.grid_blocks / max(1, self.used_blocks)

    def text(self) -> str:
        if self.scale == 1:
            return "the whole launch"
        return (f"{self.used_blocks:,} of {self.grid_blocks:,} blocks, scaled by {self.scale:.4g} (the blocks "
                f"replayed are alike within {100 * self.spread:.1f}%; the others are taken to be alike too)")


def coverage(trace) -> Coverage:
    """How much of the launch a trace holds, and whether a prediction can stand on it.

    A complete trace of at most ``MAX_MODEL_RECORDS`` records is the whole launch. Otherwise
    (a partial trace: ``--blocks``, or the recorder's 4,000,000-record cap; or a complete one
    too long to replay) the model replays the trace's first blocks that fit in
    ``MAX_MODEL_RECORDS`` records and scales the launch's totals by grid blocks / those blocks.
    That holds only when those blocks stand for the rest, which the trace can show only in
    part: they must be at least two, and alike - their records and their lane accesses per
    block within ``ALIKE_SPREAD`` of each other (a tail block with fewer elements, a block the
    recorder cut short, data-dependent loops fail this). Otherwise a ``TraceError`` says why
    and what to record instead. The grid's other blocks are taken to be like the replayed
    ones (a kernel whose later blocks do other work is predicted as if they did not)."""
    from ..trace import TraceError

    grid = int(trace.blocks)
    header = trace.header
    from ..trace.schema import records_complete

    complete = records_complete(header, True)     # every block's records (unrecorded instructions aside)
    if not trace.records:
        return Coverage(grid, 0, 0, 0.0, complete)
    blocks, first, counts = np.unique(trace.block, return_index=True, return_counts=True)
    order = np.argsort(first)                  # the blocks as the records hold them
    blocks, counts = blocks[order], counts[order]
    fits = int(np.searchsorted(np.cumsum(counts), MAX_MODEL_RECORDS, side="right"))
    where = trace.path or "<trace>"
    if fits == 0:
        raise TraceError(where, "", f"one block of this launch has {int(counts[0]):,} records; the cost model "
                         f"replays at most {MAX_MODEL_RECORDS:,}", "no prediction can be made from this trace")
    if complete and fits == len(blocks):
        return Coverage(grid, len(blocks), len(blocks), 0.0, True)
    used = blocks[:fits]
    if fits < 2:
        raise TraceError(where, "", f"the trace holds {len(blocks):,} of the launch's {grid:,} blocks, and the cost "
                         f"model can replay only {fits} of them ({int(counts[0]):,} records; at most "
                         f"{MAX_MODEL_RECORDS:,}): one block cannot show whether the blocks are alike, so the whole "
                         "launch cannot be predicted from it", "record a launch with fewer records per block (a "
                         "smaller problem), or time it without a prediction")
    rows = int(np.sum(counts[:fits]))
    from ..trace.analysis import mask_bits

    lanes = mask_bits(trace.pred[:rows] & trace.active[:rows]).sum(axis=1)
    per_lanes = np.bincount(np.searchsorted(used, trace.block[:rows], sorter=np.argsort(used)).astype(np.int64),
                            weights=lanes, minlength=fits)
    spread = 0.0
    for v in (counts[:fits].astype(float), per_lanes):
        m = float(v.mean())
        if m > 0:
            spread = max(spread, float(v.max() - v.min()) / m)
    if spread > ALIKE_SPREAD:
        lo, hi = int(np.argmin(counts[:fits])), int(np.argmax(counts[:fits]))
        raise TraceError(where, "recorded_blocks", f"the trace holds {len(blocks):,} of the launch's {grid:,} blocks "
                         f"and its blocks do different work (records per block from {int(counts[lo]):,} in block "
                         f"{int(used[lo]):,} to {int(counts[hi]):,} in block {int(used[hi]):,}; lane accesses "
                         f"{100 * spread:.0f}% apart), so they cannot stand for the blocks it lacks",
                         "record every block (a smaller launch), or blocks that do the same work "
                         "(`warpviz trace --blocks 0-63` on a grid whose blocks are alike)")
    return Coverage(grid, len(blocks), fits, spread, complete and fits == len(blocks))


def first_blocks(trace, n: int):
    """The trace cut to the records of its first ``n`` blocks (records are ordered by block)."""
    from ..trace.tracefile import PAYLOAD_FLAG, Trace

    _b, first = np.unique(trace.block, return_index=True)
    starts = np.sort(first)
    rows = int(starts[n]) if n < len(starts) else trace.records
    cut = {k: getattr(trace, k)[:rows] for k in ("instr", "block", "warp", "active", "pred", "shared", "global_",
                                                 "base", "offset", "flags")}
    tma = np.flatnonzero(cut["flags"] == PAYLOAD_FLAG)      # the payload records' operands
    return Trace(header=trace.header, path=trace.path, payload=trace.payload[:tma.size], **cut)


def scaled(w: costmodel.Workload, cov: Coverage, reuse: Reuse, buffer_bytes: int, wave_blocks: int) -> costmodel.Workload:
    """The Workload of a launch of ``cov.grid_blocks`` blocks from that of its first
    ``cov.used_blocks`` (``coverage``): every count times ``cov.scale``; the chain (the
    slowest replayed block's) and a warp's own issue as they are. DRAM moves each 64-byte
    half line once per reuse window (``trace_reuse``), so the scaled DRAM bytes are at most
    the launch's buffers once per window: a launch whose blocks share data (a GEMM's rows
    and columns) is not charged once per block for it."""
    f = cov.scale
    windows = 1 if reuse.window in ("launch", "L2-resident") else -(-cov.grid_blocks // max(1, wave_blocks))
    cap = float(buffer_bytes) * windows
    read = min(w.dram_read_bytes * f, cap)
    write = min((w.dram_bytes - w.dram_read_bytes) * f, cap)
    return replace(w, blocks=cov.grid_blocks, sectors=round(w.sectors * f), wavefronts=round(w.wavefronts * f),
                   global_lines=round(w.global_lines * f), instructions=round(w.instructions * f),
                   global_instructions=round(w.global_instructions * f), dram_bytes=read + write,
                   dram_read_bytes=read, l2_sectors=w.l2_sectors * f, l2_requests=w.l2_requests * f,
                   l2_store_sectors=w.l2_store_sectors * f, dram_scatter_bytes=min(w.dram_scatter_bytes * f, read),
                   partial_store_sectors=w.partial_store_sectors * f, merged_store_sectors=w.merged_store_sectors * f,
                   warp_instructions=w.warp_instructions * f,
                   notes=w.notes + (f"predicted from {cov.text()}",))


def workload(trace, an, device=costmodel.H100, resources: dict | None = None,
             buffer_sets: int | None = None) -> costmodel.Workload:
    """The Workload of a traced launch (see the module docstring), timed over ``buffer_sets``
    rotated buffer sets (``plan.buffer_sets`` of its buffers when None). ``an``: the trace's
    analysis (made here when None). A partial trace, or one of more than MAX_MODEL_RECORDS
    records, is predicted from its first blocks and scaled to the grid where those blocks
    can stand for the rest, else refused with the reason (``coverage``), before any work."""
    cov = coverage(trace)
    if cov.used_blocks < cov.recorded_blocks:
        trace = first_blocks(trace, cov.used_blocks)
        an = None
    if an is None:
        from ..trace.analysis import analyze_trace

        an = analyze_trace(trace)
    res = resources or {}
    launch = trace.header["launch"]
    blocks = trace.blocks
    tpb = trace.threads_per_block
    registers = res.get("registers")
    shared_bytes = res.get("shared_bytes")
    if shared_bytes is None:
        shared_bytes = int(launch.get("shared_bytes", 0))
    occ = costmodel.occupancy(device, tpb, registers, shared_bytes)
    bars = barriers_between(trace, res.get("flow"))
    warm = l2_resident(trace, device, buffer_sets)
    reuse = trace_reuse(trace, an, device.sm_count * occ["blocks_per_sm"], device.l2_bytes, bars, warm)
    wf = shared_wavefronts(an)
    chain_s, chain = trace_chain(trace, reuse, device, bars, wf)
    loaded = replace(device, dram_latency_s=device.dram_latency_s + 1e-6)
    chain_loaded_s, _ = trace_chain(trace, reuse, loaded, bars, wf)
    st = an.stats
    model_blocks = None if cov.scale == 1 else cov.used_blocks
    winst, how, own_issue_s = instructions_and_own_issue(an, res, device, model_blocks)
    # where the cost model names the count's origin in the issue term (``Workload.instructions_from``)
    named = {"instructions_from": how} if "instructions_from" in costmodel.Workload.__dataclass_fields__ else {}
    w = costmodel.Workload(**named,
        blocks=blocks, threads_per_block=tpb,
        sectors=int(sum(s.sectors for s in st)), wavefronts=int(sum(s.wavefronts for s in st)),
        global_lines=int(sum(s.lines for s in st)),
        instructions=int(sum(s.warp_instructions + s.never_true_lds for s in st)),
        dram_bytes=reuse.dram_bytes, dram_read_bytes=reuse.dram_read_bytes, l2_sectors=reuse.l2_sectors,
        l2_requests=reuse.l2_requests, l2_store_sectors=reuse.store_sectors, dram_scatter_bytes=reuse.dram_scatter_bytes,
        partial_store_sectors=reuse.partial_store_sectors, merged_store_sectors=reuse.merged_store_sectors, chain_s=chain_s, chain_loaded_s=max(chain_loaded_s, chain_s),
        chain=chain, warp_instructions=winst, registers=registers, shared_bytes=shared_bytes,
        own_issue_s=own_issue_s,
        notes=(f"warp instructions {how}",) + (("its buffers stay in L2 between timed launches",) if warm else ()))
    if cov.scale == 1:
        return w
    return scaled(w, cov, reuse, _buffer_bytes(trace), device.sm_count * occ["blocks_per_sm"])


__all__ = ["MAX_MODEL_RECORDS", "ALIKE_SPREAD", "Coverage", "coverage", "first_blocks", "scaled", "workload", "trace_reuse", "trace_chain", "shared_wavefronts", "barriers_between", "back_edges", "warp_instructions", "sass_counts",
           "instructions_and_own_issue",
           "l2_resident"]
