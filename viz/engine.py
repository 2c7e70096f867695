"""Whole-launch analysis: a pure function from a Scenario to per-instruction figures.

For every warp instruction (an access at one loop point, one part of its element) the
engine evaluates the addresses of every thread of the launch, checks them (bounds,
alignment, division by zero) and counts, per warp, what docs/memory-model.md says the
hardware does: wavefronts and phases for shared memory, sectors, lines and requests for
global memory. Totals carry Nsight Compute's metric names.

Speed: index arithmetic is evaluated in the separable form ``block_part + thread_part``
(``viz.lanes``). When an instruction's address is separable and its active mask does not
mix blocks and threads, a warp's figures depend on its block only through
``block_part mod 128`` (a 128-byte shift moves every word by whole rows of banks and
every sector by whole lines), so each distinct residue is counted once and the result is
scattered to all blocks. Otherwise the full address grid is built chunk by chunk.
Both paths run the same compiled counting functions (``viz.kernels_numba``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .gpus import BANK_BYTES, PHASE_8, PHASE_16, SECTOR_BYTES, WARP, GpuDescription
from .gpus import active as active_gpu, modelled as gpus_modelled
from .access_figures import AccessFigures
from .counting import (InstrStats, LaneValues, block_coords, count_chunk, describe_lane,  # noqa: F401
                       evaluate_instruction, make_space, thread_coords)   # one instruction's counting (viz.counting)
from .i18n import tr
from .kinds.analyze import kind_figures
from .kinds.registry import kind_of
from .kinds import ldmatrix as matrix_kind
from .scenario import KIND_OPS, Instruction, Scenario, ScenarioError, check_work  # noqa: F401
from .work import CHUNK_THREADS, MAX_WORK  # threads at once on the full path

SHARED_METRICS = {
    "load": ("smsp__inst_executed_op_shared_ld.sum",
             "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
             "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    "store": ("smsp__inst_executed_op_shared_st.sum",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
              "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
}
GLOBAL_METRICS = {
    "load": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
             "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    "store": ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
              "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
}
METRIC_NAMES = (
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
)

# Counters of an access kind's own, counted only where a scenario uses it (after the ten):
# LDSM and STSM warp instructions (viz.kinds.ldmatrix).
KIND_METRIC_NAMES = (matrix_kind.LDSM_INST_METRIC, matrix_kind.STSM_INST_METRIC)


class Cancelled(Exception):
    """The caller asked the analysis to stop."""


@dataclass
class Analysis:
    scenario: Scenario
    stats: list[InstrStats]
    device: GpuDescription | None = None    # the GPU it was counted for (viz.gpus); None: the reference

    @property
    def metrics(self) -> dict[str, int]:
        m = dict.fromkeys(METRIC_NAMES, 0)
        for s in self.stats:
            if s.kind_metrics is not None:     # cp.async, atomic, tma.load: their own counters
                for k, v in s.kind_metrics.items():
                    m[k] = m.get(k, 0) + v
                continue
            if s.space == "shared":
                inst, wf, conf = SHARED_METRICS[s.op]
                if s.matrix is not None:
                    # LDSM and STSM have instruction counters of their own (measured: docs/memory-model.md)
                    key = s.matrix.inst_metric
                    m[key] = m.get(key, 0) + s.warp_instructions
                else:
                    m[inst] += s.warp_instructions
                m[wf] += s.wavefronts
                m[conf] += s.conflicts
            else:
                req, sec = GLOBAL_METRICS[s.op]
                m[req] += s.requests
                m[sec] += s.sectors
        return m

    def per_access(self) -> list[AccessFigures]:
        """Figures per [[access]] of the file, summed over its loop points and parts (the figures
        record, ``viz.access_figures``)."""
        sc = self.scenario
        out = []
        by_access: dict[int, list[InstrStats]] = {}
        for s in self.stats:                  # one pass: a scan per access was quadratic in the accesses
            by_access.setdefault(s.instruction.access, []).append(s)
        for a in sc.accesses:
            arr = sc.array(a.array)
            rows = by_access.get(a.index, [])
            inst = sum(s.warp_instructions for s in rows)
            d = {
                "index": a.index, "op": a.op, "array": a.array, "at": a.text, "when": a.when_text or "",
                "space": arr.space,
                "type": arr.type.name, "access_bytes": a.size, "instructions_per_warp": len(rows),
                "loop_points": len(rows) // len(a.parts), "part_bytes": [size for _, size in a.parts],
                "element_bytes": sum(size for _, size in a.parts),
                "warp_instructions": inst,
                "active_lanes": sum(s.active_lanes for s in rows),
                "bytes_requested": sum(s.bytes_requested for s in rows),
            }
            if arr.space == "shared":
                wf = sum(s.wavefronts for s in rows)
                ph = sum(s.phases for s in rows)
                by_size: dict[int, dict] = {}
                for s in rows:
                    g = by_size.setdefault(s.size, {"access_bytes": s.size, "warp_instructions": 0,
                                                    "phases": 0, "paired_instructions": 0})
                    g["warp_instructions"] += s.warp_instructions
                    g["phases"] += s.phases
                    g["paired_instructions"] += s.paired
                # Phase slots of the issued instructions (after pairing) that had no active lane.
                slots = sum(g["warp_instructions"] * nominal_phases(size) - g["paired_instructions"]
                            * nominal_phases(size) // 2 for size, g in by_size.items())
                if a.matrix is not None:     # one phase per matrix, every one of them used
                    slots = inst * a.matrix.num
                    d.update(matrix_op=a.matrix.text, matrices=a.matrix.num, trans=a.matrix.trans)
                d.update(wavefronts=wf, phases=ph, bank_conflicts=wf - ph,
                         wavefronts_per_instruction=_ratio(wf, inst),
                         ideal_wavefronts_per_instruction=_ratio(ph, inst),
                         paired_instructions=sum(s.paired for s in rows),
                         idle_phases=slots - ph,
                         max_wavefronts_per_phase=max((s.deepest for s in rows), default=0),
                         phases_by_size=list(by_size.values()))
            else:
                sec = sum(s.sectors for s in rows)
                lines = sum(s.lines for s in rows)
                d.update(requests=inst, sectors=sec, lines=lines, bytes_moved=sec * SECTOR_BYTES,
                         bytes_used=sum(s.bytes_used for s in rows),
                         sectors_per_request=_ratio(sec, inst), lines_per_request=_ratio(lines, inst),
                         sector_efficiency=_ratio(d["bytes_requested"], sec * SECTOR_BYTES))
            if rows and rows[0].kind_metrics is not None:   # cp.async, atomic, tma.load
                d.update(kind_figures(a, rows))
            out.append(AccessFigures.from_dict(d))
        return out

    def per_warp(self, instr: int | None = None) -> np.ndarray:
        """Wavefronts (shared) or sectors (global) per (block, warp), one instruction or summed."""
        if instr is not None:
            return self.stats[instr].per_warp
        total = np.zeros(self.stats[0].per_warp.shape, np.int64)
        for s in self.stats:                # one instruction at a time: no copy of them all
            total += s.per_warp
        return total


def nominal_phases(size: int) -> int:
    """Phases of a warp instruction of this access size before the pair rule: 1, 2 (8 B) or 4 (16 B)."""
    return 1 if size <= BANK_BYTES else WARP // (PHASE_8 if size == 8 else PHASE_16)


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def analyze(scenario: Scenario, progress: Callable[[float, str], None] | None = None,
            cancel: Callable[[], bool] | None = None, shortcuts: bool = True,
            max_work: int = MAX_WORK, device: GpuDescription | None = None) -> Analysis:
    """Analyse every warp instruction of the launch (see module docstring) on ``device`` (a
    GPU description, ``viz.gpus``; default ``viz.gpus.active()``, the H100's unless
    ``$WARPVIZ_GPU`` names another). A scenario whose analysis would exceed ``max_work``
    lane operations (``viz.work``) is a ScenarioError before any of it runs (``loads``
    refuses such a file already; this catches one changed with ``replace``, such as a
    timing run's scaled launch); so is an access of a kind the device does not have (a
    ``tma.load`` on an sm_80 GPU) and a device whose rules the model does not count with."""
    check_work(scenario, max_work)
    device = device or active_gpu()
    check_device(scenario, device)
    launch = scenario.launch
    nt = launch.threads_per_block
    nw = launch.warps_per_block
    nblocks = launch.blocks
    per_chunk = max(1, CHUNK_THREADS // nt)
    threads = np.arange(nt, dtype=np.int64)
    instrs = scenario.instructions()
    stats: list[InstrStats] = []
    total_steps = max(1, len(instrs) * (-(-nblocks // per_chunk)))
    step = 0
    kinds = _KindContext(nblocks, nw, threads, per_chunk, cancel, progress, shortcuts, len(instrs), total_steps)
    for instr in instrs:
        access = scenario.accesses[instr.access]
        arr = scenario.array(access.array)
        kind = kind_of(access.op)          # cp.async, atomic, tma.load (viz.kinds)
        if kind is not None:
            kinds.done = step
            stats.append(kind.count(scenario, instr, access, kinds))
            step = kinds.done
            continue
        st = InstrStats(instr, arr.space, access.op, instr.size, matrix=access.matrix)
        per_warp = np.zeros((nblocks, nw), np.uint8)
        per_active = np.zeros((nblocks, nw), np.uint8)
        for b0 in range(0, nblocks, per_chunk):
            if cancel is not None and cancel():
                raise Cancelled()
            blocks = np.arange(b0, min(nblocks, b0 + per_chunk), dtype=np.int64)
            lv = evaluate_instruction(scenario, instr, blocks, threads)
            # ldmatrix: its phases (one per matrix) are a 16-byte load's without the pair merge
            pairing = access.op == "load" and (access.matrix is None or matrix_kind.PAIR_MERGE)
            p, s, a, e1, e2 = count_chunk(arr.space, instr.size, lv, nw, shortcuts, pairing)
            per_warp[b0:b0 + len(blocks)] = p
            per_active[b0:b0 + len(blocks)] = a
            issued = a > 0
            st.warp_instructions += int(issued.sum())
            st.active_lanes += int(a.sum())
            if arr.space == "shared":
                st.wavefronts += int(p.sum())
                st.phases += int(s.sum())
                st.paired += int(e1.sum())
                st.deepest = max(st.deepest, int(e2.max(initial=0)))
            else:
                st.sectors += int(p.sum())
                st.lines += int(s.sum())
                st.bytes_used += int(e1.sum()) * instr.size
            step += 1
            if progress is not None:
                progress(step / total_steps, tr("instruction {k} of {n}", k=instr.number + 1, n=len(instrs)))
        st.per_warp = per_warp
        st.per_warp_active = per_active
        stats.append(st)
    return Analysis(scenario, stats, device)


def check_device(scenario: Scenario, device: GpuDescription) -> None:
    """ScenarioError when ``device`` cannot run or the model cannot count ``scenario``."""
    if not gpus_modelled(device):
        raise ScenarioError(device.path or device.name, "",
                            tr("the {gpu}'s memory rules (banks, sectors, lines, phases) are not the ones warpviz "
                               "counts with", gpu=device.name),
                            tr("analyse it for a GPU whose description has the reference rules"))
    for access in scenario.accesses:
        op = "ldmatrix" if access.matrix is not None and access.op == "load" else \
            "stmatrix" if access.matrix is not None else access.op
        if device.lacks(op):
            raise ScenarioError(scenario.source, access.label(),
                                tr("the {gpu} ({target}) has no {op} accesses", gpu=device.name, target=device.target,
                                   op=op),
                                tr("analyse it for a GPU that has them (its description's rules.kinds)"),
                                access.line)


@dataclass
class _KindContext:
    """What a kind's counting (viz.kinds) needs from ``analyze``: the launch's chunks of
    blocks, cancel and progress."""

    nblocks: int
    nw: int
    threads: np.ndarray
    per_chunk: int
    cancel: Callable[[], bool] | None
    progress: Callable[[float, str], None] | None
    shortcuts: bool
    ninstr: int
    total_steps: int
    done: int = 0

    def chunks(self):
        for b0 in range(0, self.nblocks, self.per_chunk):
            if self.cancel is not None and self.cancel():
                raise Cancelled()
            yield np.arange(b0, min(self.nblocks, b0 + self.per_chunk), dtype=np.int64)

    def step(self, instr: Instruction) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done / self.total_steps, tr("instruction {k} of {n}", k=instr.number + 1,
                                                           n=self.ninstr))

