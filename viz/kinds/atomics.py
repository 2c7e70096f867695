"""Atomics: how the H100 counts ``atomicAdd`` on shared (ATOMS) and global memory (ATOM / RED).

The rules (docs/memory-model.md, "Atomics"), measured on the H100 with
tools/probes/cp_async_tma_atomics.sh (one warp, one instruction, 75 address patterns) and
tools/probes/atomics.sh:

* ``atomicAdd(&h[i], 1)`` on shared memory whose result is unused (``result = "unused"``):
  nvcc emits ``ATOMS.POPC.INC``, and that instruction combines the lanes that hit one
  address (one atomic per distinct address, adding the number of lanes), so it takes as
  many wavefronts as its busiest bank has *distinct words*. Same-address contention costs
  nothing (only for ``+ 1``: a weighted ``atomicAdd`` is an ``ATOMS.ADD``).
* ``atom.shared.add`` with its old value read (``result = "used"``, ``ATOMS.ADD``): the
  lanes that hit one bank are served one per wavefront (lanes on different banks go
  together), so it takes as many wavefronts as its busiest bank has *active lanes*: 32
  lanes on one address are 32 wavefronts in this PTX form.
* A global atomic is one request per warp instruction, like a load: ``RED`` when the
  result is unused, ``ATOM`` when it is read, each under its own Nsight Compute names. Its
  sectors are not the distinct sectors of a load: lanes on one address go one after
  another, so a sector counts as often as its busiest address has lanes
  (``atomic_sector_counts``).
* Warp aggregation (``aggregate``, ``viz.kinds.build.aggregation``): on an address that is
  the same for every lane and that ptxas can prove so, ptxas turns an integer atomicAdd into
  one lane's atomic: the highest active lane (a global add whose result is unused), or lane
  31 when the whole warp is active (an add whose old value is read: a warp scan first;
  with lanes off, every lane does its own).

Shared atomics count in ``..._shared_op_atom`` (conflicts = wavefronts - 1), global ones in
``..._global_op_{atom,red}``; none in the ten.
"""

from __future__ import annotations

import numpy as np

from ..counting import InstrStats, count_addresses, evaluate_instruction
from ..gpus import BANK_MASK, SECTOR_SHIFT, WARP, WORD_SHIFT
from ..kernels_numba import njit

ATOM_INST = "smsp__inst_executed_op_shared_atom.sum"
ATOM_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
ATOM_CONF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"
# Global atomics, by the SASS instruction: ATOM (the old value is read) and RED (it is not).
GLOBAL_ATOMIC = {
    "used": ("smsp__sass_inst_executed_op_global_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
             "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"),
    "unused": ("smsp__inst_executed_op_global_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"),
}


@njit(cache=True, nogil=True)
def atom_counts(addr, mask, per_lane, wavefronts, phases, active, deepest):
    """Per (block, warp): wavefronts of one 4-byte shared atomic: the busiest bank's
    distinct words (``per_lane`` False) or active lanes (True)."""
    nb, nt = addr.shape
    nw = wavefronts.shape[1]
    words = np.empty(WARP, np.int64)
    for b in range(nb):
        for w in range(nw):
            n = 0
            for t in range(w * WARP, min(nt, w * WARP + WARP)):
                if mask[b, t]:
                    words[n] = addr[b, t] >> WORD_SHIFT
                    n += 1
            active[b, w] = n
            if n == 0:
                continue
            best = 0
            for i in range(n):
                c = 0
                for j in range(n):
                    if (words[j] & BANK_MASK) != (words[i] & BANK_MASK):
                        continue
                    if per_lane:
                        c += 1
                        continue
                    dup = False
                    for q in range(j):
                        if words[q] == words[j]:
                            dup = True
                            break
                    if not dup:
                        c += 1
                if c > best:
                    best = c
            wavefronts[b, w] = best
            phases[b, w] = 1
            deepest[b, w] = best


@njit(cache=True, nogil=True)
def atomic_sector_counts(addr, mask, sectors):
    """Per (block, warp): the 32-byte sectors one global atomic warp instruction sends, as
    the H100 counts them (``l1tex__t_sectors_pipe_lsu_mem_global_op_{red,atom}``): lanes on
    one address are served one after another, each pass a sector access, so a sector counts
    as many times as its most-shared address has lanes (32 lanes on one word: 32 sectors;
    16 words of 2 lanes in 2 sectors: 4). Measured on 117 one-warp probes of RED and ATOM,
    4 and 8 bytes, every one equal (tools/probes/atomics.sh)."""
    nb, nt = addr.shape
    nw = sectors.shape[1]
    a = np.empty(WARP, np.int64)
    for b in range(nb):
        for w in range(nw):
            n = 0
            for t in range(w * WARP, min(nt, w * WARP + WARP)):
                if mask[b, t]:
                    a[n] = addr[b, t]
                    n += 1
            total = 0
            for i in range(n):
                first = True                    # the first lane of its sector: count the sector once
                for j in range(i):
                    if a[j] >> SECTOR_SHIFT == a[i] >> SECTOR_SHIFT:
                        first = False
                        break
                if not first:
                    continue
                best = 0
                for j in range(i, n):           # the busiest address of this sector
                    if a[j] >> SECTOR_SHIFT != a[i] >> SECTOR_SHIFT:
                        continue
                    c = 0
                    for q in range(n):
                        if a[q] == a[j]:
                            c += 1
                    if c > best:
                        best = c
                total += best
            sectors[b, w] = total


def count_global_atomic(addr: np.ndarray, mask: np.ndarray, nw: int) -> np.ndarray:
    """(blocks, warps) sectors of one global atomic (``atomic_sector_counts``)."""
    out = np.zeros((addr.shape[0], nw), np.int32)
    atomic_sector_counts(np.ascontiguousarray(addr, np.int64), np.ascontiguousarray(mask, np.bool_), out)
    return out


def full_warps(mask: np.ndarray, nt: int) -> int:
    """Warps of ``mask`` (blocks, threads) whose 32 lanes are all active."""
    mask = np.asarray(mask, bool)
    nw = nt // WARP
    if not mask.size or nw == 0:
        return 0
    return int(mask[:, :nw * WARP].reshape(mask.shape[0], nw, WARP).all(axis=2).sum())


def count_atomic(addr: np.ndarray, mask: np.ndarray, nw: int, per_lane: bool = False):
    n = addr.shape[0]
    out = tuple(np.zeros((n, nw), np.int32) for _ in range(4))
    atom_counts(np.ascontiguousarray(addr, np.int64), np.ascontiguousarray(mask, np.bool_), per_lane, *out)
    return out


def aggregate_mask(mask: np.ndarray, aggregate: str, nt: int) -> np.ndarray:
    """The lanes that execute an atomic after ptxas's warp aggregation (module doc): ``mask``
    (blocks, threads) of the lanes that reach it, ``nt`` threads per block. "highest": the
    highest active lane of each warp; "lane31-full-warp": lane 31 where all 32 lanes of the
    warp are active, every active lane otherwise; "none": ``mask``."""
    mask = np.asarray(mask, bool)
    if aggregate == "none" or not mask.size:
        return mask
    nb = mask.shape[0]
    nw = -(-nt // WARP)
    full = np.zeros((nb, nw * WARP), bool)
    full[:, :nt] = mask
    m = full.reshape(nb, nw, WARP)
    out = np.zeros_like(m)
    any_ = m.any(axis=2)
    if aggregate == "highest":
        top = 31 - np.argmax(m[:, :, ::-1], axis=2)
        b, w = np.nonzero(any_)
        out[b, w, top[b, w]] = True
    elif aggregate == "lane31-full-warp":
        whole = m.all(axis=2)
        out[:] = m
        out[whole] = False
        out[whole, 31] = True
    else:
        raise ValueError(f"unknown aggregation {aggregate!r}")
    return out.reshape(nb, nw * WARP)[:, :nt]


def analyze_atomic(scenario, instr, access, ctx):
    """One atomic warp instruction over the launch (shared or global)."""
    arr = scenario.array(access.array)
    space = arr.space
    st = InstrStats(instr, space, "atomic", instr.size)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    aggregate = access.option("aggregate") or "none"
    nt = len(ctx.threads)
    fallback = 0
    for blocks in ctx.chunks():
        lv = evaluate_instruction(scenario, instr, blocks, ctx.threads, access=access)
        nb = len(blocks)
        addr = np.broadcast_to(lv.addr.natural(), (nb, nt))
        reach = np.broadcast_to(lv.mask, (nb, nt))
        if space == "shared" and aggregate == "lane31-full-warp":
            # ptxas's form has two ATOMS: lane 31's for a whole warp and every lane's own
            # for a partial one; a whole warp executes the second with every lane off, and
            # smsp__inst_executed_op_shared_atom counts it (H100: 2 a warp, the SASS-level
            # counter 1)
            fallback += full_warps(reach, nt)
        mask = aggregate_mask(reach, aggregate, nt)
        b0 = int(blocks[0])
        if space == "shared":
            wf, ph, act, deep = count_atomic(addr, mask, ctx.nw, access.option("result") == "used")
            st.wavefronts += int(wf.sum())
            st.phases += int(ph.sum())
            st.deepest = max(st.deepest, int(deep.max(initial=0)))
        else:
            _sec, lines, act, distinct, _ = count_addresses("global", instr.size, addr, mask, ctx.nw, True)
            wf = count_global_atomic(addr, mask, ctx.nw)
            st.sectors += int(wf.sum())
            st.lines += int(lines.sum())
            st.bytes_used += int(distinct.sum()) * instr.size
        per_warp[b0:b0 + nb] = np.minimum(wf, 255)
        per_active[b0:b0 + nb] = act
        st.warp_instructions += int((act > 0).sum())
        st.active_lanes += int(act.sum())
        ctx.step(instr)
    st.per_warp, st.per_warp_active = per_warp, per_active
    if space == "shared":
        st.kind_metrics = {ATOM_INST: st.warp_instructions + fallback, ATOM_WF: st.wavefronts,
                           ATOM_CONF: st.wavefronts - st.phases}
    else:
        inst, req, sec = GLOBAL_ATOMIC[access.option("result")]
        st.kind_metrics = {inst: st.warp_instructions, req: st.warp_instructions, sec: st.sectors}
    return st


__all__ = ["analyze_atomic", "atom_counts", "count_atomic", "atomic_sector_counts", "count_global_atomic", "full_warps", "aggregate_mask", "GLOBAL_ATOMIC", "ATOM_INST", "ATOM_WF",
           "ATOM_CONF"]
