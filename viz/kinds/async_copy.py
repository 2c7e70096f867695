"""cp.async (LDGSTS) and TMA 2-D tile copies (UTMALDG): how the H100 counts them.

The rules (docs/memory-model.md, "cp.async" and "TMA tile copies"), measured with
tools/gpu/session/h12async.sh:

* ``cp.async`` of N bytes: the global side is an LDG of N bytes (requests and sectors,
  counted by Nsight Compute in the ten's ``..._global_op_ld`` metrics and again in the
  ``ldgsts`` ones); the shared side is written like an STS of N bytes (phases of 32, 16
  or 8 lanes; a phase takes as many wavefronts as its busiest bank has distinct words),
  counted only in the ``..._shared_op_ldgsts`` metrics.
* ``tma.load``: one instruction per block (thread 0), the box written into the tile in the
  tile's swizzle; the copy itself does not pass the LSU pipe, so no shared-memory metric of
  the ten or of LDGSTS counts it.
"""

from __future__ import annotations

import numpy as np

from ..i18n import tr
from ..scenario import ScenarioError

LD_REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
LD_SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LDGSTS_INST = "smsp__inst_executed_op_ldgsts.sum"
LDGSTS_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"
LDGSTS_CONF = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"


def source_values(scenario, instr, access, blocks, threads):
    """The lane values of a kind's global side (cp.async's ``from``, the TMA's box origin);
    its errors name the kind, the key ``from`` and its line."""
    from ..engine import evaluate_instruction
    from ..scenario import line_of

    try:
        return evaluate_instruction(scenario, instr, blocks, threads, access=access.source)
    except ScenarioError as err:
        where = f"access {access.index} ({access.op} {access.text}, from = {access.source.text})"
        raise ScenarioError(err.source, where, err.problem, err.fix,
                            line_of(scenario.text, f"access {access.index}", "from") or err.line) from None


def analyze_cp_async(scenario, instr, access, ctx):
    """One cp.async warp instruction over the launch (``ctx``: viz.engine._KindContext)."""
    from ..engine import InstrStats, count_chunk, evaluate_instruction

    st = InstrStats(instr, "shared", "cp.async", instr.size)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    sectors = lines = used = 0
    for blocks in ctx.chunks():
        dst = evaluate_instruction(scenario, instr, blocks, ctx.threads, access=access)
        src = source_values(scenario, instr, access, blocks, ctx.threads)
        wf, ph, act, _e1, deep = count_chunk("shared", instr.size, dst, ctx.nw, ctx.shortcuts, False)
        sec, ln, _a, distinct, _z = count_chunk("global", instr.size, src, ctx.nw, ctx.shortcuts, True)
        b0 = int(blocks[0])
        per_warp[b0:b0 + len(blocks)] = wf
        per_active[b0:b0 + len(blocks)] = act
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
    st.kind_metrics = {
        LD_REQ: st.warp_instructions, LD_SEC: sectors,
        LDGSTS_INST: st.warp_instructions, LDGSTS_WF: st.wavefronts, LDGSTS_CONF: st.wavefronts - st.phases,
    }
    return st


def tma_origins(scenario, instr, access, blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The box's first (row, col) in the tensor for each block; a box that leaves the tensor
    is a ScenarioError naming the block and the fix."""
    from ..engine import describe_lane

    lv = source_values(scenario, instr, access, blocks, np.zeros(1, np.int64))
    rows = np.broadcast_to(lv.indices[0].natural(), (len(blocks), 1))[:, 0]
    cols = np.broadcast_to(lv.indices[1].natural(), (len(blocks), 1))[:, 0]
    brows, bcols = access.option("box")
    garr = scenario.array(access.source.array)
    gr, gc = garr.shape
    bad = (rows + brows > gr) | (cols + bcols > gc)
    if bad.any():
        i = int(np.argmax(bad))
        lane = describe_lane(scenario, int(blocks[i]), 0, instr)
        raise ScenarioError(
            scenario.source, access.label(),
            tr("the box [{r}, {c}] starting at {g}[{row}][{col}] leaves the tensor {g}[{gr}][{gc}] at {lane}",
               r=brows, c=bcols, g=garr.name, row=int(rows[i]), col=int(cols[i]), gr=gr, gc=gc, lane=lane),
            tr("make from's row at most {mr} and its column at most {mc}, or make the box smaller (box = [ROWS, "
               "COLS])", mr=gr - brows, mc=gc - bcols), access.line)
    return rows, cols


def analyze_tma(scenario, instr, access, ctx):
    """One tma.load over the launch: one instruction per block."""
    from ..engine import InstrStats

    st = InstrStats(instr, "shared", "tma.load", instr.size)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active[:, 0] = 1
    nbytes = access.option("bytes")
    brows, bcols = access.option("box")
    esize = scenario.array(access.array).type.size
    garr = scenario.array(access.source.array)
    sectors = 0
    for blocks in ctx.chunks():
        rows, cols = tma_origins(scenario, instr, access, blocks)
        first = garr.base + (cols * esize)
        last = first + bcols * esize - 1
        sectors += int(((last // 32) - (first // 32) + 1).sum()) * brows
        ctx.step(instr)
    st.warp_instructions = ctx.nblocks
    st.active_lanes = ctx.nblocks
    st.sectors = sectors
    st.bytes_used = nbytes * ctx.nblocks
    st.per_warp, st.per_warp_active = per_warp, per_active
    st.kind_metrics = {}
    return st


__all__ = ["analyze_cp_async", "analyze_tma", "tma_origins"]
