"""Analysis of a trace with the engine's own counting rules.

The engine counts one instruction over (rows of) 32 lane addresses and masks
(``viz.counting.count_addresses`` -> ``viz.kernels_numba.shared_counts`` / ``global_counts``). A
scenario's rows are (block, warp) pairs computed from expressions; a trace's rows are the
recorded warp-level executions, fed to the very same functions with one warp per row.
Nothing is counted here that the engine does not count.

What a recording adds (as Nsight Compute counts it, docs/GPU.md):

* A shared load/store executed by a warp whose lanes are all predicated off still counts
  as an executed instruction (``smsp__inst_executed_op_shared_*``) with no wavefront; a
  scenario never has such a warp, a real kernel does. A global request needs an active lane.
  Where the PTX branches around a shared load/store and ptxas predicated it in the plain
  kernel (``sass_predicated`` in the instruction table), the warps that branched around
  it (skip records, ``viz.trace.ptx.SkipRegion``) count as such executions.
* Generic addresses are split per lane into their shared and global parts. The shared
  part costs wavefronts (and conflicts) like a shared access, but the instruction is a
  generic LD/ST, not an LDS/STS, so it does not count in ``smsp__inst_executed_op_shared_*``;
  the global part is a request with its sectors (measured on the H100, docs/GPU.md).
* ``cp.async`` (LDGSTS): its global side counts as a global load request with its sectors;
  its shared side counts in none of the ten. ``ldmatrix`` costs shared-load wavefronts,
  ``stmatrix`` shared-store wavefronts (neither is an LDS/STS instruction); their
  ``.x1``/``.x2`` forms take row addresses from lanes 0..7 / 0..15 only.
  Their instructions, and ``atom``/``red``, are reported under their own Nsight Compute
  names, outside the ten.
* A generic ``atom``/``red`` (a generic ``ATOM``: cooperative groups' barriers on a
  ``block_tile_memory`` in shared memory) is split per lane too: its shared lanes cost
  shared atomic wavefronts and conflicts by the shared atomics' rules, its global lanes
  global atomic requests and sectors; it counts as no ATOMS/ATOMG/RED instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..access_figures import AccessFigures, given
from ..counting import count_addresses
from ..engine import GLOBAL_METRICS, METRIC_NAMES, SHARED_METRICS
from ..errors import safe_text
from ..kinds.atomic import atomic_rule  # noqa: F401 - the atomic kind's rule, named here before
from ..kinds.ldmatrix import matrix_lanes  # noqa: F401 - ldmatrix's lanes, named here before
from ..kinds.registry import TraceForm, forms, trace_kind
from .schema import unrecorded_ran
from ..gpus import SECTOR_BYTES, WARP
from .tracefile import PAYLOAD_FLAG, Trace, lane_bits

# Nsight Compute's names on the H100 (`ncu --query-metrics --chip gh100`; there is no
# smsp__inst_executed_op_global_atom, and stmatrix is counted only at the SM level), each
# from its kind's TraceForm (viz.kinds.registry): (trace kind, space) -> instruction counter.
OTHER_METRICS = {(f.kind, sp): name for f in forms() for sp, name in f.instruction_counter.items()}
# Atomics' own memory counters, counted by the rules of the scenario kind ``atomic``
# (viz.kinds.atomics): a shared atomic's wavefronts and bank conflicts, a global ATOM's or
# RED's requests and sectors.
SHARED_ATOM_WAVEFRONTS, SHARED_ATOM_CONFLICTS = trace_kind("atomic").wavefront_counters["shared"]
GLOBAL_ATOMIC_METRICS = {f.kind: f.request_counters["global"] for f in forms() if "global" in f.request_counters}
# The shared side of a cp.async (LDGSTS) is in none of the ten (docs/memory-model.md, "cp.async
# (LDGSTS)"): for ``.ca`` this SASS-level counter shows the wavefronts the model counts (each
# phase as many as its busiest bank has lane-words); for ``.cg`` it reads 0 on the H100, so a
# ``.cg`` copy's shared side has no wavefront anywhere (``ldgsts_side``).
LDGSTS_WAVEFRONTS = "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"


def ldgsts_side(ins: dict) -> str | None:
    """For the shared operand of a traced ``cp.async``: "ca" (its LDGSTS wavefronts are counted,
    outside the ten) or "cg" (no counter shows a wavefront of it); None for any other instruction."""
    if ins.get("kind") != "cp.async" or ins.get("space") != "shared":
        return None
    return "cg" if ".cg" in str(ins.get("opcode", "")) + "." else "ca"


# Every counter outside the ten that a trace reports (what ``--validate`` asks Nsight Compute for).
OTHER_METRIC_NAMES = tuple(sorted(set(OTHER_METRICS.values()) | {n for f in forms() for n in f.counters}
                                  | {n for f in forms() for pair in f.wavefront_counters.values() for n in pair}
                                  | {n for f in forms() for pair in f.request_counters.values() for n in pair}))


def _form(ins: dict) -> TraceForm:
    """The registered form of a trace instruction's kind (a checked trace holds only those)."""
    f = trace_kind(ins.get("kind"))
    if f is None:
        raise KeyError(f"no registered kind {ins.get('kind')!r}")
    return f


def matrix_op(ins: dict):
    """The ``viz.kinds.ldmatrix.MatrixOp`` of a traced ``ldmatrix``/``stmatrix`` instruction
    (``.x1``/``.x2``/``.x4``, ``.trans``), as a scenario's ``op = "ldmatrix.x4"`` has it;
    None for any other instruction."""
    from ..kinds.ldmatrix import MatrixOp

    kind = ins.get("kind")
    if kind not in ("ldmatrix", "stmatrix"):
        return None
    parts = str(ins.get("opcode", "")).split(".")
    num = next((int(p[1:]) for p in parts if p in ("x1", "x2", "x4")), 4)
    return MatrixOp(kind, num, "trans" in parts)


# The most (block, warp) cells the whole-launch heat map draws (a scenario's largest launch,
# ``viz.scenario.MAX_LAUNCH_THREADS`` / 32): a trace of a larger grid shows its first blocks.
HEAT_MAP_WARPS = 1 << 21
# Records counted at a time: the counting temporaries stay bounded (about 40 MB) whatever
# the trace's size.
COUNT_ROWS = 1 << 16


def heat_map_blocks(blocks: int, warps_per_block: int) -> int:
    """How many of a grid's first blocks the heat map draws: all of them when the grid has at
    most HEAT_MAP_WARPS warps."""
    return max(1, min(int(blocks), HEAT_MAP_WARPS // max(1, int(warps_per_block))))


def kernel_entry(header: dict) -> str:
    """The traced kernel's PTX entry name: the header's ``entry`` (a C++ kernel's mangled
    name), else its ``kernel``."""
    for key in ("entry", "kernel"):
        v = header.get(key)
        if isinstance(v, str) and v:
            return v
    return ""


def kernel_instructions(trace: Trace) -> list[int]:
    """The ids of the traced kernel's static memory instructions, in PTX order: those of its
    entry function (device functions inlined into it are its own), and any other that the
    recording saw run (a device function it called). The other kernels of the same source
    are left out. A trace whose instructions name no function of the entry keeps them all."""
    entry = kernel_entry(trace.header)
    ins = trace.instructions
    mine = [str(i.get("function", "")) == entry for i in ins]
    if not any(mine):
        return list(range(len(ins)))
    ran = np.bincount(trace.instr.astype(np.int64), minlength=len(ins))[:len(ins)] > 0 if trace.records \
        else np.zeros(len(ins), bool)
    return [k for k in range(len(ins)) if mine[k] or ran[k]]


def instruction_numbers(trace: Trace) -> dict[int, int]:
    """{static instruction id: its number}: the one numbering of a trace's instructions, their
    position (1..N) among the traced kernel's static memory instructions in PTX order
    (``kernel_instructions``). ``analyze``, its JSON, the Figures, the picture's header and
    ``export -i`` all use it. Instructions of other kernels have no number."""
    cached = getattr(trace, "_numbers", None)
    if cached is None:
        cached = {k: n for n, k in enumerate(kernel_instructions(trace), start=1)}
        try:
            object.__setattr__(trace, "_numbers", cached)
        except AttributeError:
            pass
    return cached


def instruction_number(trace: Trace, instr_id: int) -> int:
    """The number of one static instruction (``instruction_numbers``); 0 for an instruction of
    another kernel."""
    return instruction_numbers(trace).get(int(instr_id), 0)


def mask_bits(m: np.ndarray) -> np.ndarray:
    """(n,) uint32 lane masks -> (n, 32) bool (lane k = bit k)."""
    return lane_bits(m)


@dataclass
class TraceInstrStats:
    instr: dict
    executed: int = 0           # warp-level executions recorded
    warp_instructions: int = 0  # as the ten metrics count them (see the module doc)
    active_lanes: int = 0
    shared_instructions: int = 0
    wavefronts: int = 0
    phases: int = 0
    requests: int = 0
    sectors: int = 0
    lines: int = 0
    global_lanes: int = 0
    shared_lanes: int = 0
    skipped_warps: int = 0      # skip records: warps whose lanes all branched around it
    predicated_off: int = 0     # of those, counted as executed (ptxas predicated it)
    never_true_lds: int = 0     # cp.async: executions of the @!PT LDS ptxas puts before its LDGSTS
    # a cp.async.ca's shared side (ldgsts_side): its LDGSTS wavefronts, in per_access's
    # wavefronts / phases (what analyze, the JSON, the Source panel and the picture show), not
    # in ``wavefronts`` / ``phases`` / ``per_record`` (the ten, the heat map and viz.gpu's
    # timing model, calibrated without them, read those)
    ldgsts_wavefronts: int = 0
    ldgsts_phases: int = 0
    ldgsts_per_record: np.ndarray | None = field(default=None, repr=False)   # each record's, as per_record
    fallback_off: int = 0       # an aggregated shared atomic: whole warps' executions of the per-lane ATOMS, all lanes off
    mine: object = None         # a form that counts its records itself (TraceForm.stats): its RecordStats
    per_record: np.ndarray = field(default=None, repr=False)   # wavefronts + sectors of each of its records
    own: dict = field(default_factory=dict)   # counters its kind counts itself (TraceForm.count), by Nsight Compute name

    @property
    def is_atomic(self) -> bool:
        return self.instr["kind"] in ("atomic", "reduction")

    @property
    def counted(self) -> bool:
        """Does this instruction enter the ten metrics (any of them)? (its form's ``ten_spaces``)"""
        return self.instr["space"] in _form(self.instr).ten_spaces

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.phases


@dataclass
class TraceAnalysis:
    trace: Trace
    stats: list[TraceInstrStats]
    _values: np.ndarray | None = field(default=None, repr=False)
    # per_access (and what is built on it) also lists the kernel's instructions no warp ran
    never_executed: bool = False

    @property
    def metrics(self) -> dict[str, int]:
        m = dict.fromkeys(METRIC_NAMES, 0)
        for s in self.stats:
            for name, v in s.own.items():        # a kind that counts its records itself
                if name in m:
                    m[name] += v
            if not s.counted:
                continue
            op = s.instr["op"]
            inst, wf, conf = SHARED_METRICS[op]
            m[inst] += s.shared_instructions
            m[wf] += s.wavefronts
            m[conf] += s.conflicts
            req, sec = GLOBAL_METRICS[op]
            m[req] += s.requests
            m[sec] += s.sectors
        return m

    @property
    def other_metrics(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.stats:
            for name, v in s.own.items():        # a kind that counts its records itself (TraceForm.count)
                if name not in METRIC_NAMES:
                    out[name] = out.get(name, 0) + v
            # cp.async has two operands (shared destination, global source): its form names
            # only the global one, so each instruction counts once
            f, sp = _form(s.instr), s.instr["space"]
            name = f.instruction_counter.get(sp)
            if name is None:
                continue
            # a predicated-off LDGSTS still counts in smsp__inst_executed_op_ldgsts
            out[name] = out.get(name, 0) + s.executed + (s.predicated_off if f.predicated_off_counts else 0) \
                + s.fallback_off
            if sp in f.wavefront_counters:
                wf, conf = f.wavefront_counters[sp]
                out[wf] = out.get(wf, 0) + s.wavefronts
                out[conf] = out.get(conf, 0) + s.conflicts
            elif sp in f.request_counters:
                req, sec = f.request_counters[sp]
                out[req] = out.get(req, 0) + s.requests
                out[sec] = out.get(sec, 0) + s.sectors
        for s in self.stats:
            # a generic atomic (ATOM): the lanes whose address is in shared memory cost shared
            # atomic wavefronts, the others global requests and sectors; it is no ATOMS, RED
            # or ATOMG, so no instruction count of those
            if s.is_atomic and s.instr["space"] == "generic":
                if s.shared_lanes:
                    out[SHARED_ATOM_WAVEFRONTS] = out.get(SHARED_ATOM_WAVEFRONTS, 0) + s.wavefronts
                    out[SHARED_ATOM_CONFLICTS] = out.get(SHARED_ATOM_CONFLICTS, 0) + s.conflicts
                if s.global_lanes:
                    req, sec = GLOBAL_ATOMIC_METRICS[s.instr["kind"]]
                    out[req] = out.get(req, 0) + s.requests
                    out[sec] = out.get(sec, 0) + s.sectors
        return out

    def per_access(self, never_executed: bool | None = None) -> list[AccessFigures]:
        """One figures record (``viz.access_figures``) per static instruction of the traced
        kernel that executed (a warp ran it, or ptxas predicated it and warps ran it with every lane off), in PTX order.
        ``never_executed`` (default: the analysis's ``never_executed``) also lists the
        kernel's instructions that no recorded warp ran. ``index`` is the static instruction
        id, ``number`` the one numbering (``instruction_numbers``)."""
        show_all = self.never_executed if never_executed is None else never_executed
        numbers = instruction_numbers(self.trace)
        out = []
        for s in self.stats:
            ins = s.instr
            number = numbers.get(int(ins["id"]))
            if number is None or not (show_all or s.executed or s.warp_instructions):
                continue
            src = f"{ins['file'].rsplit('/', 1)[-1]}:{ins['line']}" if ins["line"] else "(no line information)"
            d = {"index": ins["id"], "number": number, "op": ins["op"], "kind": ins["kind"], "space": ins["space"],
                 "source": src, "file": ins["file"], "line": ins["line"], "ptx": ins["ptx"],
                 "function": ins["function"], "access_bytes": ins["width"], "executed": s.executed,
                 "counted_in_metrics": s.counted, "warp_instructions": s.warp_instructions,
                 "predicated_off_warps": s.predicated_off, "branched_around_warps": s.skipped_warps,
                 "never_true_shared_loads": s.never_true_lds,
                 "active_lanes": s.active_lanes, "bytes_requested": s.active_lanes * ins["width"]}
            info = ins.get("sass")
            if info:
                d["sass"] = {k: info[k] for k in ("state", "certain", "sass", "width", "group", "first", "ptx_lines",
                                                  "source_lines", "note")}
                if info.get("first") is not None:
                    d["sass"]["first_number"] = numbers.get(int(info["first"]), 0)
                d["ptx_width"] = ins.get("ptx_width") or ins["width"]
            if s.mine is not None:      # a form that counts its records itself: its own figures
                d.update(s.mine.figures)
                out.append(AccessFigures.from_dict(d))
                continue
            if s.is_atomic and (ins["space"] == "shared" or s.shared_lanes):
                d["atomic_rule"] = atomic_rule(ins)
            side = ldgsts_side(ins)
            if side is not None:
                d["ldgsts_side"] = side
            if s.shared_lanes or ins["space"] == "shared":
                wf, ph = s.wavefronts + s.ldgsts_wavefronts, s.phases + s.ldgsts_phases
                d.update(wavefronts=wf, phases=ph, bank_conflicts=wf - ph,
                         wavefronts_per_instruction=_ratio(wf, s.shared_instructions or s.warp_instructions),
                         ideal_wavefronts_per_instruction=_ratio(ph, s.shared_instructions or s.warp_instructions))
            if s.global_lanes or ins["space"] == "global":
                gb = s.global_lanes * ins["width"]
                d.update(requests=s.requests, sectors=s.sectors, lines=s.lines, bytes_moved=s.sectors * SECTOR_BYTES,
                         sectors_per_request=_ratio(s.sectors, s.requests),
                         lines_per_request=_ratio(s.lines, s.requests),
                         sector_efficiency=_ratio(gb, s.sectors * SECTOR_BYTES))
            f = _form(ins)
            if f.figures is not None:          # a kind's own figures (a wgmma's warpgroup instructions, bytes)
                d.update(f.figures(ins, dict(s.own)))
            out.append(AccessFigures.from_dict(d))
        return out

    def record_values(self) -> np.ndarray:
        """Wavefronts + sectors of every record (0 for a skip record), in file order."""
        if self._values is None:
            vals = np.zeros(self.trace.records, np.int64)
            rows = _rows_by_instruction(self.trace)
            for k, s in enumerate(self.stats):
                r = rows[k]
                if s.mine is not None:  # a form that counts its records itself: its records' figures
                    vals[r[self.trace.flags[r] == (PAYLOAD_FLAG if _form(s.instr).payload else 0)]] = \
                        s.mine.per_record
                    continue
                vals[r[self.trace.flags[r] == 0]] = s.per_record
            self._values = vals
        return self._values

    def per_warp(self, instr: int | None = None, blocks: int | None = None) -> np.ndarray:
        """Wavefronts + sectors per (block, warp) of the launch's first ``blocks`` blocks
        (default: as many as the heat map draws, ``heat_map_blocks``: the whole grid unless it
        has more than HEAT_MAP_WARPS warps), summed over the recorded executions of one static
        instruction (or of all): the heat map's data. Blocks and warps that were not recorded
        are 0. Its size is bounded whatever grid the header names."""
        t = self.trace
        nw = t.warps_per_block
        nb = heat_map_blocks(t.blocks, nw) if blocks is None else min(int(blocks), t.blocks)
        vals = self.record_values()
        keep = t.block < nb
        if instr is not None:
            keep &= t.instr == self.stats[instr].instr["id"]
        key = t.block[keep].astype(np.int64) * nw + t.warp[keep].astype(np.int64)
        out = np.bincount(key, weights=vals[keep], minlength=nb * nw) if key.size else np.zeros(nb * nw)
        return np.rint(out).astype(np.int64).reshape(nb, nw)

    def per_line(self) -> list[dict]:
        """Figures summed per source line, worst (most wavefronts + sectors beyond ideal) first."""
        rows: dict[tuple[str, int], dict] = {}
        for d in self.per_access():
            key = (given(d.file), given(d.line))
            r = rows.setdefault(key, {"source": given(d.source), "file": given(d.file), "line": given(d.line),
                                      "warp_instructions": 0, "wavefronts": 0, "bank_conflicts": 0, "sectors": 0,
                                      "requests": 0, "bytes_requested": 0})
            for k in ("warp_instructions", "wavefronts", "bank_conflicts", "sectors", "requests", "bytes_requested"):
                r[k] += getattr(d, k) or 0
            r["sectors"] += _line_sectors(d)
        return sorted(rows.values(), key=lambda r: (-(r["bank_conflicts"] + r["sectors"]), r["line"]))


def source_lines(an: "TraceAnalysis") -> list[dict]:
    """The Source panel's rows: per CUDA source line, its figures summed over its memory
    instructions (warp instructions, wavefronts, bank conflicts, requests, sectors, sector
    efficiency of its global accesses), its static instruction ids and their PTX, the worst
    first (most bank conflicts + sectors, as ``TraceAnalysis.per_line``)."""
    rows: dict[tuple[str, int], dict] = {}
    for d in an.per_access():
        r = rows.setdefault((given(d.file), given(d.line)), {
            "file": given(d.file), "line": given(d.line), "source": given(d.source), "warp_instructions": 0,
            "wavefronts": 0,
            "bank_conflicts": 0, "requests": 0, "sectors": 0, "global_bytes": 0, "instructions": [], "ptx": []})
        for k in ("warp_instructions", "wavefronts", "bank_conflicts", "requests", "sectors"):
            r[k] += getattr(d, k) or 0
        r["sectors"] += _line_sectors(d)
        r["global_bytes"] += round((d.sector_efficiency or 0.0) * (d.bytes_moved or 0))
        r["instructions"].append(d.index)
        r["ptx"].append(" ".join(given(d.ptx).split()))
    for r in rows.values():
        r["sector_efficiency"] = _ratio(r["global_bytes"], r["sectors"] * SECTOR_BYTES)
    return sorted(rows.values(), key=lambda r: (-(r["bank_conflicts"] + r["sectors"]), r["line"]))


def sass_text(d: AccessFigures) -> str:
    """One line on what the plain kernel's SASS does with an instruction of ``per_access``
    (``viz.trace.reconcile``), or "" where it runs as the PTX has it."""
    d = AccessFigures.of(d)
    info = d.sass
    if not info:
        return ""
    state = info["state"]
    if state == "member" and info.get("first") is not None:
        return f"fused by ptxas into instruction {_first_number(info)}: {info['note']}"
    if state == "uncertain":
        return f"not certain what the GPU runs: {info['note']}"
    return info["note"]


def _first_number(info: dict) -> int:
    """The number of the instruction a fused member went into (``instruction_numbers``)."""
    if "first_number" in info:
        return info["first_number"]
    return (info.get("first") or 0) + 1


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def _ldgsts_sites(trace: Trace) -> dict[int, tuple[bool, int]]:
    """Per cp.async (global entry id): (LDGSTS predicated, number of ``@!PT LDS`` before it),
    from the plain kernel's SASS stored in the trace (``ptx.sass_ldgsts``); {} without it."""
    from .ptx import MemInstr, sass_ldgsts

    sass = (trace.header.get("sass_guard") or {}).get("sass")
    if not sass:
        return {}
    fields = MemInstr.__dataclass_fields__
    # a checked header (tracefile.check_header) has every field of every entry (defaults filled in)
    instrs = [MemInstr(**{k: ins[k] for k in fields}) for ins in trace.instructions]
    return sass_ldgsts(sass, instrs) or {}


def _rows_by_instruction(trace: Trace) -> list[np.ndarray]:
    """The record rows of each static instruction (file order within each)."""
    order = np.argsort(trace.instr, kind="stable")
    bounds = np.searchsorted(trace.instr[order], np.arange(len(trace.instructions) + 1))
    return [order[bounds[k]:bounds[k + 1]] for k in range(len(trace.instructions))]


def analyze_trace(trace: Trace, progress=None, cancel=None) -> TraceAnalysis:
    """Every static instruction's figures (see the module docstring). The records are
    counted ``COUNT_ROWS`` at a time, so what this allocates beyond the trace is bounded;
    the work is bounded by what ``tracefile.load`` takes on (``MAX_RECORDS`` records of 32
    lanes, ``MAX_INSTRUCTIONS`` static instructions)."""
    sites = _ldgsts_sites(trace) if any(i["kind"] == "cp.async" for i in trace.instructions) else {}
    by_instr = _rows_by_instruction(trace)
    stats = []
    n_instr = len(trace.instructions)
    for k, ins in enumerate(trace.instructions):
        if cancel is not None and cancel():
            from ..engine import Cancelled

            raise Cancelled()
        rows = by_instr[k]
        f = _form(ins)
        if f.stats is not None:                     # the form counts its records itself (TraceForm.stats)
            stats.append(_own_stats(trace, ins, rows, f))
            continue
        skip = rows[trace.flags[rows] != 0]
        rows = rows[trace.flags[rows] == 0]
        st = TraceInstrStats(ins, executed=int(rows.size), skipped_warps=int(skip.size))
        st.per_record = np.zeros(rows.size, np.int32)
        for lo in range(0, rows.size, COUNT_ROWS):
            _count_rows(trace, ins, rows[lo:lo + COUNT_ROWS], st, lo)
        if rows.size and ins["kind"] in ("load", "store") and ins["space"] == "shared":
            # an explicit LDS/STS counts for every warp that executes it, even with all lanes
            # predicated off; a generic LD/ST or an LDSM is not an LDS/STS
            st.shared_instructions = int(rows.size)
        if ins["space"] == "shared":
            st.warp_instructions = int(rows.size)
        if skip.size and ins.get("sass_predicated") is True:
            # ptxas predicated it: the warps that branched around it in the PTX execute it
            # with no lane on, and Nsight Compute counts them (no wavefront)
            if ins["kind"] != "cp.async":
                st.shared_instructions += int(skip.size)
            st.warp_instructions += int(skip.size)
            st.predicated_off = int(skip.size)
        if ins["id"] in sites:
            # ptxas puts never-true `@!PT LDS RZ, [RZ]` before each LDGSTS; every warp that
            # reaches it executes them (also where the LDGSTS is predicated off), and Nsight
            # Compute counts each in smsp__inst_executed_op_shared_ld (no wavefront)
            st.never_true_lds = sites[ins["id"]][1] * (st.executed + st.predicated_off)
            st.shared_instructions += st.never_true_lds
        stats.append(st)
        if progress is not None:
            progress((k + 1) / max(1, n_instr), f"instruction {k + 1} of {n_instr}")
    return TraceAnalysis(trace, stats)


def _own_stats(trace: Trace, ins: dict, rows: np.ndarray, f: TraceForm) -> TraceInstrStats:
    """The figures of an instruction whose form counts its records itself (``TraceForm.stats``:
    a TMA box, a bulk copy, a TMA control instruction by its SASS)."""
    remap = getattr(trace, "shared_remap", None)
    if remap is not None and f.replay is not None:      # a replayed trace: its shared side re-mapped
        m = f.replay(trace, ins, rows, remap, METRIC_NAMES)
    else:
        m = f.stats(trace, ins, rows, METRIC_NAMES)
    st = TraceInstrStats(ins, executed=m.executed, warp_instructions=m.warp_instructions,
                         active_lanes=m.active_lanes, sectors=m.sectors, lines=m.lines, mine=m, own=dict(m.own))
    st.per_record = m.per_record
    return st


def _line_sectors(d: AccessFigures) -> int:
    """Sectors a form that counts its records itself adds to its source line's row."""
    f = trace_kind(d.kind)
    return f.line_sectors(d) if f is not None and f.line_sectors is not None else 0


def _count_rows(trace: Trace, ins: dict, rows: np.ndarray, st: TraceInstrStats, at: int) -> None:
    """Add the figures of some executed records of one static instruction to ``st``
    (``st.per_record[at:]`` gets theirs): the engine's own counting functions, one warp per row."""
    if not rows.size:
        return
    addr = trace.addresses(rows)
    pred = mask_bits(trace.pred[rows])
    f = _form(ins)
    if f.count is not None:
        # the kind counts its records itself (a TMA box, a wgmma's core matrices: TraceForm.count)
        remap = getattr(trace, "shared_remap", None)
        got = f.replay(trace, ins, rows, remap, METRIC_NAMES) if remap is not None and f.replay is not None \
            else f.count(trace, ins, rows)
        for name, v in got.items():
            st.own[name] = st.own.get(name, 0) + int(v)
    if f.lanes is not None:
        # ldmatrix .x1/.x2: only lanes 0..7 / 0..15 give row addresses; the others' are not used
        pred[:, f.lanes(ins["opcode"]):] = False
    sh = pred & mask_bits(trace.shared[rows])
    gl = pred & mask_bits(trace.global_[rows])
    width = int(ins["width"])
    is_load = ins["op"] == "load"
    counts_shared = f.counts_shared
    counts_global = f.counts_global
    mine = st.per_record[at:at + rows.size]
    if f.count_shared is not None and (ins["space"] == "shared" or (ins["space"] == "generic" and sh.any())):
        # the kind's own bank rule: a shared atomic, or the lanes of a generic one whose address is
        # in shared memory (cooperative groups' barriers): the busiest bank's distinct words or lanes
        wf, ph, act = f.count_shared(ins, addr, sh)
        info = ins.get("sass") or {}
        if info.get("state") == "aggregated" and info.get("leader") == "lane31-full-warp":
            # ptxas's second ATOMS (every lane's own, for a partial warp) runs with every
            # lane off in a whole warp, and smsp__inst_executed_op_shared_atom counts it
            st.fallback_off += int((trace.active[rows] == np.uint32(0xFFFFFFFF)).sum())
        st.wavefronts += int(wf.sum())
        st.phases += int(ph.sum())
        st.shared_lanes += int(act.sum())
        mine += wf[:, 0]
    elif ldgsts_side(ins) is not None:
        # a cp.async's shared side (viz.kinds.async_copy's rule): .ca as its LDGSTS wavefronts,
        # .cg none (the counter reads 0); its lanes are counted as shared lanes either way
        st.shared_lanes += int(sh.sum())
        if ldgsts_side(ins) == "ca":
            from ..kinds.async_copy import ldgsts_shared

            n = rows.size
            wf, ph, deep = (np.zeros((n, 1), np.int32) for _ in range(3))
            ldgsts_shared(np.ascontiguousarray(addr, np.int64), np.ascontiguousarray(sh), width, wf, ph, deep)
            st.ldgsts_wavefronts += int(wf.sum())
            st.ldgsts_phases += int(ph.sum())
            if st.ldgsts_per_record is None:
                st.ldgsts_per_record = np.zeros(st.per_record.size, np.int32)
            st.ldgsts_per_record[at:at + rows.size] += wf[:, 0]
    elif counts_shared and (ins["space"] == "shared" or sh.any()):
        p, s, a = count_addresses("shared", width, addr, sh, 1, is_load)[:3]
        st.wavefronts += int(p.sum())
        st.phases += int(s.sum())
        st.shared_lanes += int(a.sum())
        mine += p[:, 0]
    if counts_global and (ins["space"] == "global" or gl.any()):
        p, s, a = count_addresses("global", width, addr, gl, 1, is_load)[:3]
        if f.count_global is not None:
            # the kind's own sector rule (atomics: lanes on one address go one after another)
            p = f.count_global(addr, gl)
        st.sectors += int(p.sum())
        st.lines += int(s.sum())
        st.global_lanes += int(a.sum())
        st.requests += int((a > 0).sum())
        mine += p[:, 0]
    st.active_lanes += int(pred.sum())
    if ins["space"] != "shared":
        st.warp_instructions += int(pred.any(axis=1).sum())


# ---------------------------------------------------------------------------- reports


def explain_trace(d: AccessFigures) -> list[tuple[str, str, str]]:
    """(figure, value, one-line why) rows for one static instruction of a trace (a dict of
    ``TraceAnalysis.per_access``): the figures ``warpviz analyze FILE.wvtrace`` prints, each
    with what it counts. Figure names are those of ``viz.report.explain_access``."""
    d = AccessFigures.of(d)
    from ..i18n import tr
    from ..report import count_text as _n, per_text as _avg   # the short names of viz.report's rows

    inst = d.warp_instructions
    rows = [("warp instructions", _n(inst),
             tr("recorded warp-level executions: {n}; a warp counts where a lane executed it",
                n=_n(d.executed)))]
    rows += sass_rows(d)
    if d.predicated_off_warps:
        rows.append(("", f"+{d.predicated_off_warps:,}",
                     tr("warps with every lane off: ptxas predicated the instruction, so they execute it "
                        "and Nsight Compute counts them")))
    if d.never_true_shared_loads:
        rows.append(("", f"+{d.never_true_shared_loads:,}",
                     tr("never-true shared loads: the `@!PT LDS` that ptxas puts before this LDGSTS in the plain "
                        "SASS; every warp that reaches them executes them and Nsight Compute counts them as shared "
                        "loads (no wavefront)")))
    f = trace_kind(d.kind)
    if f is not None and f.explain is not None:      # a kind that explains all of its own figures
        return rows + list(f.explain(d))
    if given(d.executed) == 0:
        rows.append(("", "", tr("no lane is active: the warp issues nothing")))
        return rows
    rows.append(("active lanes", tr("{n}/warp", n=f"{d.active_lanes / given(d.executed):.2f}"),
                 tr("lanes whose predicate held, as recorded")))
    f = trace_kind(given(d.kind))
    if f is not None and f.reasons is not None:      # a kind that explains itself (wgmma)
        return rows + list(f.reasons(d))
    if d.wavefronts is not None:
        wf, ph = d.wavefronts, given(d.phases)
        per = max(1, given(d.executed))
        if d.atomic_rule == "lanes":
            why = tr("{per} per instruction: the atomic serves every lane in turn, so the busiest bank's active "
                     "lanes", per=_avg(wf, per))
        elif d.atomic_rule == "words":
            why = tr("{per} per instruction: lanes on one address are combined (ATOMS.POPC.INC), so the busiest "
                     "bank's distinct words", per=_avg(wf, per))
        elif d.ldgsts_side == "cg":
            rows.append(("wavefronts", "0", tr("cp.async.cg: no counter shows a wavefront of its shared side (the "
                                               "LDGSTS wavefront counter reads 0 on the H100), so none is drawn")))
            return rows + ([] if d.counted_in_metrics else
                           [("", "", tr("not in the ten metrics: Nsight Compute counts it under its own name"))])
        elif d.ldgsts_side == "ca":
            why = tr("{per} per instruction: LDGSTS wavefronts, the shared side of this cp.async.ca (each phase as "
                     "many as its busiest bank has lane-words); Nsight Compute shows them as {metric}, not in the ten",
                     per=_avg(wf, per), metric=LDGSTS_WAVEFRONTS.split(".")[0])
        else:
            why = tr("{per} per instruction: each phase costs the most distinct 32-bit words any one bank "
                     "must deliver", per=_avg(wf, per))
        rows.append(("wavefronts", _n(wf), why))
        rows.append(("phases", _n(ph), tr("{per} per instruction: the wavefronts with no bank conflict",
                                          per=_avg(ph, per))))
        rows.append(("bank conflicts", _n(wf - ph), tr("wavefronts beyond the phases")))
    if d.sectors is not None:
        req = given(d.requests)
        rows.append(("requests", _n(req), tr("one per warp instruction with an active lane, whatever the width")))
        if req:
            rows.append(("sectors", _n(d.sectors),
                         tr("{per} per request: the distinct 32-byte sectors the active lanes' bytes touch",
                            per=_avg(d.sectors, req))))
            rows.append(("lines", _n(d.lines), tr("{per} per request: distinct 128-byte lines (4 sectors each)",
                                                      per=_avg(given(d.lines), req))))
            rows.append(("bytes moved", _n(d.bytes_moved), tr("sectors x 32 B")))
            rows.append(("sector efficiency", f"{given(d.sector_efficiency) * 100:.1f}%",
                         tr("bytes the active lanes asked for / bytes moved")))
    if not d.counted_in_metrics:
        rows.append(("", "", tr("not in the ten metrics: Nsight Compute counts it under its own name")))
    return rows


def sass_rows(d: AccessFigures) -> list[tuple[str, str, str]]:
    """The "SASS" row of a traced instruction whose SASS is not its PTX (``viz.trace.reconcile``)."""
    d = AccessFigures.of(d)
    from ..i18n import tr

    info = d.sass
    if not info or (info["state"] == "same" and info["certain"]):
        return []
    op = " / ".join(dict.fromkeys(next((w for w in t.split() if not w.startswith("@")), "?")
                                  for t in info["sass"][:4])) or "-"
    lines = info.get("ptx_lines") or []
    span = (f"{min(lines)}\u2013{max(lines)}" if len(set(lines)) > 1 else str(lines[0])) if lines else "?"
    state = info["state"]
    if state == "fused":
        why = tr("ptxas fused {n} PTX accesses of {w} bytes (PTX lines {lines}) into this one access of {wide} bytes "
                 "a lane", n=len(info["group"]), w=d.ptx_width or d.access_bytes, lines=span,
                 wide=info["width"])
    elif state == "member":
        why = tr("fused by ptxas into instruction {k} (PTX lines {lines}): the GPU runs it as part of that access",
                 k=_first_number(info), lines=span)
    elif state == "removed":
        why = tr("ptxas removed it: the GPU does not run it")
    elif state == "split":
        why = tr("ptxas split it into several accesses of {w} bytes a lane", w=info["width"])
    elif state == "aggregated":
        why = tr("ptxas aggregated the warp's lanes on one address into one lane's atomic")
    elif state == "uncertain":
        why = tr("not certain what the GPU runs here: {note}", note=info["note"])
    else:
        why = info["note"]
    return [("SASS", op, why)]


def to_json(an: TraceAnalysis, never_executed: bool = False) -> dict:
    """The contract's JSON document of a trace: ``accesses`` are the traced kernel's
    instructions that executed (with ``never_executed``, all of them), each with its
    ``number``."""
    from .. import __version__

    h = an.trace.header
    launch = h["launch"]
    blocks, tpb = an.trace.blocks, an.trace.threads_per_block
    return {
        "scenario": h.get("title", h.get("kernel", "")),
        "name": h.get("name", ""),
        "warpviz": __version__,
        "launch": {"block": launch["block"], "grid": launch["grid"], "threads": blocks * tpb,
                   "warps": blocks * (-(-tpb // WARP))},
        "params": {},
        "metrics": an.metrics,
        "other_metrics": an.other_metrics,
        "accesses": [d.to_dict() for d in an.per_access(never_executed)],
        "trace": {"kernel": h.get("kernel"), "gpu": h.get("gpu", {}).get("name"), "records": an.trace.records,
                  "recorded_blocks": h.get("recorded_blocks"), "complete": h.get("complete", False),
                  "lane_accesses": an.trace.lane_accesses(), "nvcc": h.get("nvcc"), "driver": h.get("driver"),
                  "note": h.get("note", ""), "sass_map": h.get("sass_map"),
                  "instructions": len(instruction_numbers(an.trace)),
                  "events": [{k: e[k] for k in ("ptx", "line", "executed")} for e in h.get("events", [])],
                  # memory instructions no kind records, that ran (None: an older trace does not say)
                  "unrecorded": unrecorded_json(h),
                  # what the PTX the trace carries holds that reads shared memory unrecorded, by
                  # source line (viz.trace.unrecorded: also for traces older than "unrecorded")
                  "unrecorded_in_ptx": _unrecorded(h)},
        "lines": an.per_line(),
    }


def unrecorded_json(h: dict) -> list[dict] | None:
    """The trace's memory instructions that no kind records and that ran, as ``analyze --json``
    gives them (``trace.unrecorded``): instruction text, PTX line, source file and line,
    warp-level executions, why; None where the trace was written before warpviz listed them."""
    ran = unrecorded_ran(h)
    if ran is None:
        return None
    return [{"instruction": " ".join(str(d.get("ptx", "")).split()), "ptx_line": int(d.get("line_no") or 0),
             "file": d.get("file", ""), "line": int(d.get("line") or 0), "executed": int(d.get("executed") or 0),
             "why": d.get("why", "")} for d in ran]


def unrecorded_lines(h: dict, limit: int = 12) -> list[str]:
    """What ``analyze`` and ``trace --validate`` say of the memory instructions no kind records:
    one line each that ran (text, PTX line, source line, executions), or that an older trace
    does not say; nothing where every memory instruction that ran was recorded."""
    ran = unrecorded_json(h)
    if ran is None:
        return ["unrecorded memory instructions: unknown (a trace written before warpviz listed them; "
                "record it again to know)"]
    if not ran:
        return []
    out = [f"NOT RECORDED: {len(ran)} memory instruction(s) warpviz does not record ran "
           f"{sum(d['executed'] for d in ran):,} warp-level executions; their traffic is in no figure "
           "(Nsight Compute counts it):"]
    for d in ran[:limit]:
        where = f"{safe_text(str(d['file']).rsplit('/', 1)[-1], 120)}:{d['line']}" if d["line"] else "no source line"
        out.append(f"  PTX line {d['ptx_line']} ({where}): {safe_text(d['instruction'], 200)}  executed "
                   f"{d['executed']:,}  ({safe_text(d['why'], 200)})")
    if len(ran) > limit:
        out.append(f"  and {len(ran) - limit} more")
    return out


def to_table(an: TraceAnalysis, never_executed: bool = False) -> str:
    """``warpviz analyze FILE.wvtrace``: the traced kernel's instructions that executed (with
    ``never_executed``, all of them) by their number, the per-source-line table (worst
    first) and the totals."""
    h = an.trace.header
    numbers = instruction_numbers(an.trace)
    launch = h["launch"]
    dims = lambda t: "x".join(str(x) for x in t)  # noqa: E731
    # every text the header gave is the file's word: cut and escaped (viz.errors.safe_text)
    out = [f"{safe_text(h.get('title', h.get('kernel')))}  [trace of {safe_text(h.get('kernel'))}]",
           f"launch: grid {dims(launch['grid'])}, block {dims(launch['block'])}; recorded on "
           f"{safe_text(h.get('gpu', {}).get('name', 'an unknown GPU'))}: {an.trace.records:,} warp-level executions"]
    left = h.get("sources_left_out") or []
    if left:                # what the line information named and the trace does not carry, and why
        out.append("sources not carried: " + "; ".join(f"{safe_text(d.get('file'), 120)} ({safe_text(d.get('why'))})"
                                                        for d in left[:8])
                   + (f"; and {len(left) - 8} more" if len(left) > 8 else ""))
    if not h.get("complete", False):
        out.append(f"partial trace: {safe_text(h.get('note', 'not every block was recorded'), 2000)}")
    out += unrecorded_lines(h)
    smap = h.get("sass_map")
    if smap and not smap.get("certain", False):
        unc = smap.get("uncertain") or []
        unc = [numbers[k] for k in unc if k in numbers]
        out.append("SASS: not certain for " + (f"instruction(s) {', '.join(str(k) for k in unc[:12])}"
                                                + (" ..." if len(unc) > 12 else "") if unc else "the kernel")
                   + "; " + "; ".join(safe_text(n) for n in (smap.get("notes") or ["see each instruction"])[:12]))
    rows = an.per_access(never_executed)
    shown = len(rows)
    ran = sum(1 for d in rows if d.executed or d.warp_instructions)
    out.append(f"instructions: {ran} of the kernel's {len(numbers)} memory instructions executed"
               + ("" if never_executed or ran == len(numbers) else " (--all lists the others too)"))
    for u in _unrecorded(h):        # shared reads no record holds (tl.dot's wgmma): said, not silently missing
        out.append(f"not recorded: {safe_text(u['file'])}:{u['line']}  {u['count']} x {u['mnemonic']} ({u['why']}); "
                   "those shared reads are in no figure here")
    for d in rows:
        out.append("")
        out.append(f"instruction {given(d.number)}: {safe_text(d.source)}  {safe_text(' '.join(given(d.ptx).split()))}")
        f = trace_kind(d.kind)
        if f is not None and f.text is not None:    # a kind's own lines (TraceForm.text)
            out += list(f.text(d))
            continue
        parts = [f"{d.kind} {d.space} {d.access_bytes} B", f"executed {given(d.executed):,}",
                 f"active lanes {d.active_lanes:,}"]
        if d.predicated_off_warps:
            parts.append(f"+{d.predicated_off_warps:,} warps with every lane off (ptxas predicated it: counted)")
        if d.never_true_shared_loads:
            parts.append(f"+{d.never_true_shared_loads:,} never-true shared loads (@!PT LDS before the LDGSTS: "
                         "counted as shared loads)")
        f = trace_kind(given(d.kind))
        if f is not None and f.summary is not None:   # a kind's own line of figures (wgmma)
            parts.append(f.summary(d))
        elif d.ldgsts_side == "cg":
            parts.append("no shared wavefronts (cp.async.cg: no counter shows its shared side; the LDGSTS wavefront "
                         "counter reads 0)")
        elif d.ldgsts_side == "ca":
            parts.append(f"LDGSTS wavefronts {d.wavefronts:,} (ideal {given(d.phases):,}, conflicts "
                         f"{given(d.bank_conflicts):,}; {LDGSTS_WAVEFRONTS})")
        elif d.wavefronts is not None:
            parts.append(f"wavefronts {d.wavefronts:,} (ideal {given(d.phases):,}, "
                         f"conflicts {given(d.bank_conflicts):,})")
        if d.sectors is not None:
            parts.append(f"requests {given(d.requests):,}, sectors {given(d.sectors):,} "
                         f"({given(d.sectors_per_request):.2f}/request, "
                         f"efficiency {given(d.sector_efficiency) * 100:.1f}%)")
        if not d.counted_in_metrics:
            parts.append("not in the ten metrics")
        out.append("  " + "; ".join(parts))
        why = sass_text(d)
        if why:
            out.append(f"  SASS: {safe_text(why, 2000)}")
    if shown:
        out.append("")
        out += line_table(an)
    out.append("")
    out.append("totals (Nsight Compute metric names):")
    for k, v in an.metrics.items():
        out.append(f"  {k:<58} {v:>14,}")
    for k, v in an.other_metrics.items():
        out.append(f"  {k:<58} {v:>14,}")
    return "\n".join(out)


def _unrecorded(header: dict) -> list[dict]:
    from .unrecorded import unrecorded

    return unrecorded(header)


def line_table(an: TraceAnalysis) -> list[str]:
    """The per-source-line table of ``analyze``'s text: per CUDA line (``TraceAnalysis.per_line``,
    the worst first), its warp instructions, wavefronts, bank conflicts, requests and sectors
    in their own columns, its instructions' numbers and the line's code."""
    from .schema import blocks_text, source_line

    h = an.trace.header
    by_line: dict[tuple[str, int], list[int]] = {}
    for d in an.per_access():
        by_line.setdefault((given(d.file), given(d.line)), []).append(given(d.number))
    rows = an.per_line()
    head = ("source", "instructions", "warp instr", "wavefronts", "conflicts", "requests", "sectors")
    cells = []
    for r in rows:
        ins = {"file": r["file"], "line": r["line"]}
        nums = blocks_text(by_line.get((r["file"], r["line"]), []))
        cells.append((safe_text(r["source"]), nums, f"{r['warp_instructions']:,}", f"{r['wavefronts']:,}",
                      f"{r['bank_conflicts']:,}", f"{r['requests']:,}", f"{r['sectors']:,}",
                      safe_text(source_line(h, ins)) if r["line"] else ""))
    widths = [max(len(head[k]), *(len(c[k]) for c in cells)) for k in range(len(head))]
    fmt = lambda c: "  ".join(  # noqa: E731
        (c[k].ljust(widths[k]) if k < 2 else c[k].rjust(widths[k])) for k in range(len(head)))
    out = ["per source line (worst first: most bank conflicts + sectors):", "  " + fmt(head) + "  code"]
    for c in cells:
        out.append(("  " + fmt(c) + "  " + c[-1]).rstrip())
    return out


__all__ = ["LDGSTS_WAVEFRONTS", "ldgsts_side", "analyze_trace", "TraceAnalysis", "to_json", "to_table", "OTHER_METRICS", "OTHER_METRIC_NAMES",
           "GLOBAL_ATOMIC_METRICS", "SHARED_ATOM_WAVEFRONTS", "SHARED_ATOM_CONFLICTS", "atomic_rule", "sass_text", "explain_trace", "heat_map_blocks",
           "HEAT_MAP_WARPS", "COUNT_ROWS", "kernel_entry", "kernel_instructions", "instruction_numbers",
           "instruction_number", "line_table", "matrix_op"]
