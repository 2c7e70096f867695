"""cp.async (LDGSTS) and TMA 2-D tile copies (UTMALDG): how the H100 counts them.

The rules (docs/memory-model.md, "cp.async, TMA tile copies and shared atomics"),
measured with tools/probes/cp_async_tma_atomics.sh (122 cp.async and 59 TMA probes):

* ``cp.async`` is one request per warp in the ten's global-load metrics
  (``l1tex__t_requests/sectors_pipe_lsu_mem_global_op_ld``) and one instruction in
  ``smsp__inst_executed_op_ldgsts``. Its sectors: ``.ca`` as an LDG of that width (the
  distinct 32-byte sectors); ``.cg`` (L1 bypassed) counts, after dropping the lanes whose
  16-byte shared destination a later lane overwrites, the distinct pairs (global
  128-byte line, shared 32-byte sector). ptxas puts three predicated-off ``LDS`` before
  an LDGSTS (before the first only of LDGSTS that follow one another), which count in
  ``smsp__inst_executed_op_shared_ld`` (three per warp instruction: the generated kernel
  keeps each cp.async in a region of its own); no
  wavefront of the ten counts LDGSTS.
* The shared side (the figures, not a counter of its own on the H100): phases as for a
  store of that width, each taking as many wavefronts as its busiest bank has *lanes*
  (lanes on one address are not merged); ``.ca``'s ``op_ldgsts`` bank conflicts add the
  L1 data-array conflicts of the global reads, and ``.cg`` counts none.
* ``tma.load``: one copy per block (thread 0); the box lands in the tile's swizzle (CuTe
  ``Swizzle<1|2|3,4,3>`` on byte offsets, measured element by element), reads the box's
  sectors row by row (``l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld``) and counts
  in none of the ten. warpviz refuses a box whose first byte is not 16-byte aligned.
"""

from __future__ import annotations

import numpy as np

from ..counting import InstrStats, count_chunk, describe_lane, evaluate_instruction
from ..gpus import BANK_BYTES, BANK_MASK, BANK_ROW_BYTES, BANKS, LINE_SHIFT, SECTOR_SHIFT, WARP, WORD_SHIFT
from ..i18n import tr
from ..kernels_numba import njit
from ..scenario_parts import ScenarioError, line_of

LD_REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LD_SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LDGSTS_INST = "smsp__inst_executed_op_ldgsts.sum"
SHARED_LD_INST = "smsp__inst_executed_op_shared_ld.sum"
TMA_SECTORS = "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"
DUMMY_LDS = 3   # predicated-off LDS that ptxas puts before an LDGSTS (counted per warp running the access)


@njit(cache=True, nogil=True)
def ldgsts_shared(addr, mask, size, wavefronts, phases, deepest):
    """Per (block, warp): the shared side of a cp.async of ``size`` bytes: phases of 32, 16
    or 8 lanes; each takes as many wavefronts as its busiest bank has lane-words;
    ``deepest``: the most wavefronts one phase of the warp took."""
    nb, nt = addr.shape
    nw = wavefronts.shape[1]
    per = WARP if size <= BANK_BYTES else BANK_ROW_BYTES // size   # 32, 16 or 8 lanes
    words = size // BANK_BYTES if size >= BANK_BYTES else 1
    count = np.zeros(BANKS, np.int64)
    for b in range(nb):
        for w in range(nw):
            wf = 0
            ph = 0
            deep = 0
            for p in range(0, WARP, per):
                count[:] = 0
                any_active = False
                for t in range(w * WARP + p, min(nt, w * WARP + p + per)):
                    if mask[b, t]:
                        any_active = True
                        for q in range(words):
                            count[((addr[b, t] >> WORD_SHIFT) + q) & BANK_MASK] += 1
                if any_active:
                    ph += 1
                    m = count.max()
                    wf += m
                    if m > deep:
                        deep = m
            wavefronts[b, w] = wf
            phases[b, w] = ph
            deepest[b, w] = deep


@njit(cache=True, nogil=True)
def cg_sectors(gaddr, saddr, mask, out):
    """Per (block, warp): the sectors of a cp.async.cg: lanes whose 16-byte shared slot a
    later lane writes again are dropped; the rest count distinct (global line, shared sector)."""
    nb, nt = gaddr.shape
    nw = out.shape[1]
    keys = np.empty(WARP, np.int64)
    for b in range(nb):
        for w in range(nw):
            n = 0
            for t in range(w * WARP, min(nt, w * WARP + WARP)):
                if not mask[b, t]:
                    continue
                later = False
                for u in range(t + 1, min(nt, w * WARP + WARP)):
                    if mask[b, u] and (saddr[b, u] >> 4) == (saddr[b, t] >> 4):
                        later = True
                        break
                if later:
                    continue
                k = (gaddr[b, t] >> LINE_SHIFT) * 2147483648 + (saddr[b, t] >> SECTOR_SHIFT)
                seen = False
                for i in range(n):
                    if keys[i] == k:
                        seen = True
                        break
                if not seen:
                    keys[n] = k
                    n += 1
            out[b, w] = n


def source_values(scenario, instr, access, blocks, threads):
    """The lane values of a kind's global side (cp.async's ``from``, the TMA's box origin);
    its errors name the kind, the key (``from``; a tma.store's ``at``) and its line."""
    try:
        return evaluate_instruction(scenario, instr, blocks, threads, access=access.source)
    except ScenarioError as err:
        key = _tensor_key(access)
        where = f"access {access.index} ({access.op} {access.text}, {key} = {access.source.text})"
        fix = err.fix
        if access.op in ("tma.load", "tma.store"):     # no `when` on a TMA copy: the box's first element must fit
            fix = tr("keep the box's first element inside {g} (the box itself may run past the tensor's edge)",
                     g=access.source.array)
        raise ScenarioError(err.source, where, err.problem, fix,
                            line_of(scenario.text, f"access {access.index}", key) or err.line) from None


def analyze_cp_async(scenario, instr, access, ctx):
    """One cp.async warp instruction over the launch (``ctx``: viz.engine._KindContext)."""
    st = InstrStats(instr, "shared", "cp.async", instr.size)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    sectors = lines = used = 0
    cg = access.option("cache") == "cg"
    for blocks in ctx.chunks():
        dst = evaluate_instruction(scenario, instr, blocks, ctx.threads, access=access)
        src = source_values(scenario, instr, access, blocks, ctx.threads)
        nb, nt = dst.shape
        saddr = np.ascontiguousarray(np.broadcast_to(dst.addr.natural(), (nb, nt)), np.int64)
        mask = np.ascontiguousarray(np.broadcast_to(dst.mask, (nb, nt)), np.bool_)
        wf = np.zeros((nb, ctx.nw), np.int32)
        ph = np.zeros((nb, ctx.nw), np.int32)
        deep = np.zeros((nb, ctx.nw), np.int32)
        ldgsts_shared(saddr, mask, instr.size, wf, ph, deep)
        sec, ln, act, distinct, _z = count_chunk("global", instr.size, src, ctx.nw, ctx.shortcuts, True)
        if cg:
            gaddr = np.ascontiguousarray(np.broadcast_to(src.addr.natural(), (nb, nt)), np.int64)
            sec = np.zeros((nb, ctx.nw), np.int32)
            cg_sectors(gaddr, saddr, mask, sec)
        b0 = int(blocks[0])
        per_warp[b0:b0 + nb] = np.minimum(wf, 255)
        per_active[b0:b0 + nb] = act
        st.warp_instructions += int((act > 0).sum())
        st.active_lanes += int(act.sum())
        st.wavefronts += int(wf.sum())
        st.phases += int(ph.sum())
        st.deepest = max(st.deepest, int(deep.max(initial=0)))
        sectors += int(sec.sum())
        lines += int(ln.sum())
        used += int(distinct.sum()) * instr.size
        ctx.step(instr)
    st.sectors, st.lines, st.bytes_used = sectors, lines, used
    st.per_warp, st.per_warp_active = per_warp, per_active
    # ptxas's three predicated-off LDS before each LDGSTS (the generated kernel keeps every
    # cp.async in a region of its own, so they run once per warp instruction)
    dummies = DUMMY_LDS * st.warp_instructions
    st.kind_metrics = {LD_REQ: st.warp_instructions, LD_SEC: sectors, LDGSTS_INST: st.warp_instructions,
                       SHARED_LD_INST: dummies}
    return st


def tma_origins(scenario, instr, access, blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The box's first (row, col) in the tensor for each block. A box may run past the
    tensor's last row or column (the TMA fetches, or writes, nothing there); a first element
    outside the tensor, or one not 16-byte aligned, is a ScenarioError naming the block and
    the fix."""
    lv = source_values(scenario, instr, access, blocks, np.zeros(1, np.int64))
    rows = np.broadcast_to(lv.indices[0].natural(), (len(blocks), 1))[:, 0]
    cols = np.broadcast_to(lv.indices[1].natural(), (len(blocks), 1))[:, 0]
    brows, bcols = access.option("box")
    garr = scenario.array(access.source.array)
    gr, gc = garr.shape
    esize = garr.type.size
    misaligned = (garr.base + cols * esize) % 16 != 0
    if misaligned.any():
        i = int(np.argmax(misaligned))
        lane = describe_lane(scenario, int(blocks[i]), 0, instr)
        raise ScenarioError(
            scenario.source, access.label(),
            tr("the box starts at {g}[{row}][{col}], byte {b} of the tensor, not a multiple of 16, at {lane}; "
               "the TMA faults on such a copy", g=garr.name, row=int(rows[i]), col=int(cols[i]),
               b=int(garr.base + cols[i] * esize), lane=lane),
            tr("make {key}'s column a multiple of {n}", key=_tensor_key(access), n=max(1, 16 // esize)), access.line)
    bad = (rows < 0) | (cols < 0) | (rows >= gr) | (cols >= gc)
    if bad.any():
        i = int(np.argmax(bad))
        lane = describe_lane(scenario, int(blocks[i]), 0, instr)
        raise ScenarioError(
            scenario.source, access.label(),
            tr("the box's first element {g}[{row}][{col}] lies outside the tensor {g}[{gr}][{gc}] at {lane}",
               g=garr.name, row=int(rows[i]), col=int(cols[i]), gr=gr, gc=gc, lane=lane),
            tr("make {key}'s row 0 to {mr} and its column 0 to {mc} (the box itself may run past the edge)",
               key=_tensor_key(access), mr=gr - 1, mc=gc - 1), access.line)
    return rows, cols


def _tensor_key(access) -> str:
    return "at" if access.op == "tma.store" else "from"


def scenario_map(scenario, access):
    """The tensor map (``viz.kinds.tma_copy.TensorMap``) of a tma.load's or tma.store's tensor
    and box, and the TMA elements per scenario element: what the trace side decodes from
    the generated kernel's real map, so both sides count with the same functions."""
    from .codegen import data_type
    from .tma_copy import CUDA_TO_HW, SWIZZLE_NAMES, TensorMap

    garr = scenario.array(access.source.array)
    gr, gc = garr.shape
    esize = garr.type.size
    cuda_type, factor = data_type(esize)      # the generated kernel's map: UINT8/16/32 (8, 16 bytes: 2, 4 UINT32)
    dtype = CUDA_TO_HW[cuda_type]
    brows, bcols = access.option("box")
    swz = access.option("swizzle")
    code = {v: k for k, v in SWIZZLE_NAMES.items()}["none" if swz == "none" else swz[4:]]
    tm = TensorMap(garr.base, dtype, 2, (gc * factor, gr), (gc * esize,), (bcols * factor, brows), (1, 1),
                   swizzle=code)
    return tm, factor


def analyze_tma(scenario, instr, access, ctx):
    """One tma.load or tma.store over the launch: one instruction per block. Its sectors are
    the trace side's (``viz.kinds.tma_copy``: ``load_sectors``, the H200's rule for a load,
    out-of-bounds parts included; ``expand(...).sectors``, a store's bytes in bounds),
    counted once per distinct box origin."""
    from .tma_copy import TMA_ST_SECTORS, expand, load_sectors

    store = access.op == "tma.store"
    st = InstrStats(instr, "shared", access.op, instr.size)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active[:, 0] = 1
    nbytes = access.option("bytes")
    tm, factor = scenario_map(scenario, access)
    sectors = 0
    written = 0
    for blocks in ctx.chunks():
        rows, cols = tma_origins(scenario, instr, access, blocks)
        origins, times = np.unique(np.stack([np.asarray(rows, np.int64), np.asarray(cols, np.int64)], axis=1),
                                   axis=0, return_counts=True)
        for (r, c), n in zip(origins.tolist(), times.tolist()):
            coords = (c * factor, r)
            if store:
                ex = expand(tm, coords, with_shared=False)
                sectors += n * ex.sectors
                written += n * ex.global_bytes
            else:
                sectors += n * load_sectors(tm, coords)
        ctx.step(instr)
    st.warp_instructions = ctx.nblocks
    st.active_lanes = ctx.nblocks
    st.sectors = sectors
    st.bytes_used = written if store else nbytes * ctx.nblocks
    st.per_warp, st.per_warp_active = per_warp, per_active
    st.kind_metrics = {TMA_ST_SECTORS: sectors} if store else {TMA_SECTORS: sectors}
    return st


__all__ = ["analyze_cp_async", "analyze_tma", "tma_origins", "scenario_map", "ldgsts_shared", "cg_sectors"]
