"""Shared-memory atomics (ATOMS): how the H100 counts ``atomicAdd`` on shared memory.

The rules (docs/memory-model.md, "Shared atomics"), measured on the H100 with
tools/gpu/session/h12async-probe.sh (one warp, one instruction, 75 address patterns):

* ``atomicAdd(&h[i], 1)`` whose result is unused (``result = "unused"``): nvcc emits
  ``ATOMS.POPC.INC``, and that instruction combines the lanes that hit one address (one
  atomic per distinct address, adding the number of lanes), so it takes as many
  wavefronts as its busiest bank has *distinct words*. Same-address contention costs
  nothing (only for ``+ 1``: a weighted ``atomicAdd`` is an ``ATOMS.ADD``).
* ``atom.shared.add`` with its old value read (``result = "used"``, ``ATOMS.ADD``): the
  lanes that hit one bank are served one per wavefront (lanes on different banks go
  together), so it takes as many wavefronts as its busiest bank has *active lanes*: 32
  lanes on one address are 32 wavefronts in this PTX form.

Both count in ``..._shared_op_atom`` (conflicts = wavefronts - 1) and in none of the ten.
"""

from __future__ import annotations

import numpy as np

from ..kernels_numba import njit

ATOM_INST = "smsp__inst_executed_op_shared_atom.sum"
ATOM_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
ATOM_CONF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum"


@njit(cache=True, nogil=True)
def atom_counts(addr, mask, per_lane, wavefronts, phases, active, deepest):
    """Per (block, warp): wavefronts of one 4-byte shared atomic: the busiest bank's
    distinct words (``per_lane`` False) or active lanes (True)."""
    nb, nt = addr.shape
    nw = wavefronts.shape[1]
    words = np.empty(32, np.int64)
    for b in range(nb):
        for w in range(nw):
            n = 0
            for t in range(w * 32, min(nt, w * 32 + 32)):
                if mask[b, t]:
                    words[n] = addr[b, t] >> 2
                    n += 1
            active[b, w] = n
            if n == 0:
                continue
            best = 0
            for i in range(n):
                c = 0
                for j in range(n):
                    if (words[j] & 31) != (words[i] & 31):
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


def count_atomic(addr: np.ndarray, mask: np.ndarray, nw: int, per_lane: bool = False):
    n = addr.shape[0]
    out = tuple(np.zeros((n, nw), np.int32) for _ in range(4))
    atom_counts(np.ascontiguousarray(addr, np.int64), np.ascontiguousarray(mask, np.bool_), per_lane, *out)
    return out


def analyze_atomic(scenario, instr, access, ctx):
    """One shared atomic warp instruction over the launch."""
    from ..engine import InstrStats, evaluate_instruction

    st = InstrStats(instr, "shared", "atomic", instr.size)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    for blocks in ctx.chunks():
        lv = evaluate_instruction(scenario, instr, blocks, ctx.threads, access=access)
        nb, nt = lv.shape
        addr = np.broadcast_to(lv.addr.natural(), (nb, nt))
        mask = np.broadcast_to(lv.mask, (nb, nt))
        wf, ph, act, deep = count_atomic(addr, mask, ctx.nw, access.option("result") == "used")
        b0 = int(blocks[0])
        per_warp[b0:b0 + nb] = np.minimum(wf, 255)
        per_active[b0:b0 + nb] = act
        st.warp_instructions += int((act > 0).sum())
        st.active_lanes += int(act.sum())
        st.wavefronts += int(wf.sum())
        st.phases += int(ph.sum())
        st.deepest = max(st.deepest, int(deep.max(initial=0)))
        ctx.step(instr)
    st.per_warp, st.per_warp_active = per_warp, per_active
    st.kind_metrics = {ATOM_INST: st.warp_instructions, ATOM_WF: st.wavefronts, ATOM_CONF: st.wavefronts - st.phases}
    return st


__all__ = ["analyze_atomic", "atom_counts", "count_atomic"]
