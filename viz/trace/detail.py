"""A trace as a source for the picture: one warp-level execution of a recorded instruction
as a ``WarpDetail``, and stepping over each warp's dynamic instruction stream.

The lane addresses come from the recording; everything else (phases, banks, wavefronts,
sectors, lines) is computed by ``viz.warp.lanes_detail``, the function a scenario's warp
instructions go through, so the picture of a trace follows the same engine rules.

A warp's stream is its recorded executions in the order it ran them (instruction k of n
of that warp). A skip record (every lane branched around a shared load/store) is part of
the stream only where ptxas predicated the instruction, i.e. where the warp did execute it
with no lane on (``viz.trace.analysis``): it shows as the "no lane active" frame.

The picture needs a scenario-shaped frame (launch, one "array" and one "access" per static
instruction): ``trace_scenario`` builds one. Its arrays describe themselves by the PTX
instruction, its accesses by the CUDA source line. Nothing here imports Qt.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..frames import Bounds, Cursor, Frame, frames, held, lru_get, paired_length
from ..kinds.registry import trace_kind
from ..layout import COL, Swizzle
from ..scenario import Access, Array, Instruction, Launch, Scenario
from ..types import ElemType, named_type
from ..warp import WarpDetail, lanes_detail
from . import TraceError
from .analysis import instruction_numbers, ldgsts_side, mask_bits, matrix_op as traced_matrix
from .schema import blocks_text, source_line
from .tracefile import PAYLOAD_FLAG, Trace, load


@dataclass(frozen=True)
class TraceArray(Array):
    """The memory one static instruction touches; it describes itself by its PTX."""

    ptx: str = ""

    def describe(self) -> str:
        return " ".join(self.ptx.rstrip(";").split())


def elem_type(ins: dict) -> ElemType:
    """The element type of an instruction's access, from its PTX opcode and width."""
    op, w = ins.get("opcode", ""), int(ins["width"])
    flt = ".f32" in op or ".f64" in op or ".f16" in op
    name = {1: "char", 2: "half" if flt else "short", 4: "float" if flt else "int",
            8: ("float2" if ".f32" in op else "double" if flt else "int2"),
            16: ("float4" if ".f32" in op else "double2" if ".f64" in op else "int4")}.get(w)
    t = named_type(name) if name else None
    return t if t is not None and t.size == w else ElemType(f"b{8 * w}", w, w)


def access_label(header: dict, ins: dict) -> str:
    """What the header's first line shows: the source line and where it is, else the PTX."""
    code = source_line(header, ins)
    where = f"{str(ins.get('file', '')).rsplit('/', 1)[-1]}:{ins['line']}" if ins.get("line") else ""
    if code:
        return f"{code}  ({where})"
    return " ".join(str(ins.get("ptx", "")).rstrip(";").split())


def traced_access(ins: dict, label: str, name: str, t: ElemType, number: int = 0) -> Access:
    """The access of one static instruction, shaped as the scenario kind it is: an
    ``ldmatrix``/``stmatrix`` carries its MatrixOp (phases are its 8x8 matrices), a
    ``cp.async`` is op "cp.async" (each lane's word written on its own), an ``atom``/``red``
    is op "atomic" with the rule its counting uses ("result": "used" serves lane by lane);
    anything else a load or a store. Only the description changes: the Figures count the
    record by ``viz.trace.analysis`` whatever this says. ``number``: the instruction's number
    among the traced kernel's (``analysis.instruction_numbers``), option "number"."""
    form = trace_kind(ins.get("kind"))
    op = "store" if ins["op"] == "store" else "load"
    options: tuple = ()
    matrix = traced_matrix(ins)
    if matrix is not None:
        op = matrix.op
    elif form is not None and form.detail_op:       # drawn as its scenario kind (cp.async, atomic)
        op = form.detail_op
        if form.detail_options is not None:
            options = tuple(form.detail_options(ins))
        side = ldgsts_side(ins)
        if side is not None:        # a cp.async's shared side: .ca's LDGSTS wavefronts, or .cg's none (viz.trace.analysis)
            options += (("cache", side),)
    options += (("number", number),)
    return Access(int(ins["id"]), op, label, name, (), None, (), None, None, ((0, int(ins["width"])),),
                  int(ins.get("line") or 0) or None, options=options, matrix=matrix)


def trace_scenario(trace: Trace) -> Scenario:
    """A scenario-shaped frame for the painter: the trace's launch, one array and one access
    per static instruction (no expressions: the addresses are recorded)."""
    h = trace.header
    launch = Launch(trace.block_dim, trace.grid_dim)
    none = Swizzle("none", "none", None)
    arrays, accesses, numbers = [], [], instruction_numbers(trace)   # the one numbering (viz.trace.analysis)
    for ins in trace.instructions:
        # a matrix op moves rows of 8 b16 elements: its array's element is the b16 (as a scenario's half)
        t = named_type("half") if traced_matrix(ins) is not None else elem_type(ins)
        name = f"instruction{ins['id']}"
        space = "shared" if ins["space"] == "shared" else "global"
        arrays.append(TraceArray(name, space, t, (1,), 0, none, 0, 0, COL, ptx=str(ins.get("ptx", ""))))
        accesses.append(traced_access(ins, access_label(h, ins), name, t, numbers.get(int(ins["id"]), 0)))
    path = str(trace.path) if trace.path is not None else "<trace>"
    return Scenario(title=h.get("title") or h.get("kernel", ""), notes=h.get("notes", ""), tags=("trace",),
                    launch=launch, params={}, arrays=tuple(arrays), accesses=tuple(accesses), source=path,
                    name=h.get("name", ""), text=h.get("launch_file", ""))


class TraceSource:
    """A loaded trace with its per-warp instruction streams, ready to draw."""

    is_trace = True

    def __init__(self, trace: Trace):
        self.trace = trace
        self.header = trace.header
        self.scenario = trace_scenario(trace)
        lw = self.scenario.launch
        self.blocks, self.warps = lw.blocks, lw.warps_per_block
        counted = np.array([ins.get("sass_predicated") is True for ins in trace.instructions], bool)
        keep = (trace.flags == 0) | counted[trace.instr] if trace.records else np.zeros(0, bool)
        if trace.records:       # a payload record (a TMA / bulk copy) issued by a lane is drawn
            keep |= (trace.flags == PAYLOAD_FLAG) & (trace.shared != 0)
        self.rows = np.flatnonzero(keep)            # in file order: block, warp, then the warp's own order
        key = trace.block[self.rows].astype(np.int64) * self.warps + trace.warp[self.rows].astype(np.int64)
        self._key = key
        self.recorded_blocks = sorted({int(b) for b in np.unique(trace.block)})

    @classmethod
    def open(cls, path: str | Path, progress=None, cancelled=None) -> "TraceSource":
        """Load and check a trace file (``tracefile.load``: progress and cancel as it takes them)."""
        return cls(load(path, progress, cancelled))

    @property
    def title(self) -> str:
        return self.scenario.title

    @property
    def name(self) -> str:
        return str(self.trace.path.name) if self.trace.path is not None else (self.scenario.name or "trace")

    def recorded_text(self) -> str:
        """The recorded blocks as ranges, e.g. ``0-3,7``."""
        return blocks_text(self.recorded_blocks)

    def stream(self, block: int, warp: int) -> np.ndarray:
        """The record rows of one warp, in the order it executed them."""
        k = block * self.warps + warp
        lo, hi = np.searchsorted(self._key, [k, k + 1])
        return self.rows[lo:hi]

    def stream_length(self, block: int, warp: int) -> int:
        k = block * self.warps + warp
        lo, hi = np.searchsorted(self._key, [k, k + 1])
        return int(hi - lo)

    def first_execution(self, instrs, block: int = 0, warp: int = 0) -> tuple[int, int, int] | None:
        """(block, warp, k): where one of the static instructions ``instrs`` first runs in
        the stream of ``warp`` of ``block``, else of the first warp of that block that runs
        one, else of the first warp of the grid (in block, then warp order); None when none
        of them was recorded running."""
        ids = np.asarray(sorted(instrs), np.int64)
        for w in [warp] + [x for x in range(self.warps) if x != warp]:
            rows = self.stream(block, w)
            hit = np.flatnonzero(np.isin(self.trace.instr[rows], ids))
            if hit.size:
                return block, w, int(hit[0])
        mine = np.flatnonzero(np.isin(self.trace.instr[self.rows], ids))
        if not mine.size:
            return None
        j = int(mine[0])                      # the first such record in block, warp order
        key = int(self._key[j])
        b, w = divmod(key, self.warps)
        lo = int(np.searchsorted(self._key, key))
        return b, w, j - lo

    def check(self, block: int, warp: int) -> None:
        if not 0 <= block < self.blocks:
            raise IndexError(f"block {block} is outside the grid (0..{self.blocks - 1})")
        if not 0 <= warp < self.warps:
            raise IndexError(f"warp {warp} is outside the block (0..{self.warps - 1})")

    def detail(self, block: int, warp: int, k: int) -> WarpDetail:
        """Instruction ``k`` (0-based) of the stream of ``warp`` in ``block``."""
        self.check(block, warp)
        rows = self.stream(block, warp)
        if not 0 <= k < len(rows):
            raise IndexError(f"warp {warp} of block {block} executed {len(rows)} recorded memory "
                             f"instruction(s); there is no instruction {k + 1}")
        return self.record_detail(int(rows[k]), k, len(rows))

    def record_detail(self, row: int, k: int = 0, n: int = 0) -> WarpDetail:
        t, sc = self.trace, self.scenario
        sid = int(t.instr[row])
        ins = t.instructions[sid]
        access, arr = sc.accesses[sid], sc.arrays[sid]
        block, warp = int(t.block[row]), int(t.warp[row])
        tpb = sc.launch.threads_per_block
        nl = max(0, min(32, tpb - warp * 32))
        addr = t.addresses(slice(row, row + 1))[0, :nl]
        if int(t.flags[row]) == PAYLOAD_FLAG:   # its form says which lanes to draw (TraceForm.drawn)
            return self._payload_detail(row, k, n, sid, ins, access, arr, block, warp, nl)
        skip = bool(t.flags[row])
        pred = mask_bits(t.pred[row:row + 1])[0, :nl] & (not skip)
        if access.matrix is not None:       # .x1/.x2: only lanes 0-7 / 0-15 give a row (as counted)
            pred[access.matrix.lanes_used:] = False
        sh = pred & mask_bits(t.shared[row:row + 1])[0, :nl]
        gl = pred & mask_bits(t.global_[row:row + 1])[0, :nl]
        if ins["space"] == "shared":
            space, mask = "shared", sh
        elif ins["space"] == "global":
            space, mask = "global", gl
        else:   # a generic address: the picture shows the part most lanes went to
            space, mask = ("shared", sh) if sh.sum() > gl.sum() else ("global", gl)
        form = trace_kind(ins.get("kind"))
        if form is not None and not form.ten_spaces and not form.detail_op:
            # a kind whose records enter none of the ten and that has no drawing of its own (TMA
            # control: tensormap.replace, fences): its figures are its SASS's, per instruction
            # (analyze's `tma_control`), so the picture draws no lane's wavefront or sector either
            mask = np.zeros_like(mask)
        bx, by, _ = sc.launch.block
        gx, gy, _ = sc.launch.grid
        threads = [((tid % bx), (tid // bx) % by, tid // (bx * by)) for tid in range(warp * 32, warp * 32 + nl)]
        block_xyz = (block % gx, (block // gx) % gy, block // (gx * gy))
        instr = Instruction(k, sid, (), 0, 0, int(ins["width"]))
        d = lanes_detail(sc, instr, access, arr, block, block_xyz, warp, addr, mask, threads, space=space,
                         instruction_count=n)
        if space == "shared" and ldgsts_side(ins) == "cg":
            # no counter shows a wavefront of a cp.async.cg's shared side (the LDGSTS one reads 0 on
            # the H100): the picture draws none, as analyze and the Source panel count none
            d = replace(d, bank_words=(), wavefronts=0, wavefront_phase=(), active_phases=0,
                        lanes=tuple(replace(ln, words=(), banks=(), word_wavefronts=(), wavefront=-1)
                                    for ln in d.lanes))
        return d


    def _payload_detail(self, row, k, n, sid, ins, access, arr, block, warp, nl) -> WarpDetail:
        """A payload record drawn as the 16-byte chunks in shared memory its form names
        (``TraceForm.drawn``: an issued TMA or bulk copy's first 32 chunks, where the map's
        swizzle puts them; a 128-byte row is a phase of 8 chunks on the 32 banks); the whole
        copy's figures are in ``analyze``."""
        t, sc = self.trace, self.scenario
        form = trace_kind(ins.get("kind"))
        chunks = list(form.drawn(ins, t.payload[t.payload_rows([row])[0]])) if form is not None and \
            form.drawn is not None else []
        addr = np.zeros(nl, np.int64)
        mask = np.zeros(nl, bool)
        for i, a in enumerate(chunks[:nl]):
            addr[i], mask[i] = a, True
        bx, by, _ = sc.launch.block
        gx, gy, _ = sc.launch.grid
        threads = [((tid % bx), (tid // bx) % by, tid // (bx * by)) for tid in range(warp * 32, warp * 32 + nl)]
        block_xyz = (block % gx, (block // gx) % gy, block // (gx * gy))
        instr = Instruction(k, sid, (), 0, 0, 16)
        return lanes_detail(sc, instr, access, arr, block, block_xyz, warp, addr, mask, threads, space="shared",
                            instruction_count=n)


class TraceTimeline:
    """``viz.frames.Timeline`` for a trace: the cursor's ``instruction`` is the position in
    its warp's own stream, so the bounds depend on the warp. ``paired_with``: as
    ``viz.frames.Timeline``'s (compare mode)."""

    paired_with = None

    def __init__(self, source: TraceSource, cache_size: int = 256):
        self.source = source
        self.scenario = source.scenario
        self._cache: OrderedDict[tuple[int, int, int], tuple[WarpDetail, tuple[Frame, ...]]] = OrderedDict()
        self._cache_size = cache_size
        self.bounds = self.bounds_at(Cursor())

    def bounds_at(self, c: Cursor) -> Bounds:
        s = self.source
        b = min(max(c.block, 0), s.blocks - 1)
        w = min(max(c.warp, 0), s.warps - 1)
        return Bounds(max(1, s.stream_length(b, w)), s.blocks, s.warps)

    def instruction_count(self, c: Cursor) -> int:
        return self.source.stream_length(c.block, c.warp)

    def _entry(self, c: Cursor):
        n = self.source.stream_length(c.block, c.warp)
        if n == 0:
            return None
        k = min(max(c.instruction, 0), n - 1)
        def make():
            d = self.source.detail(c.block, c.warp, k)
            return d, frames(d)
        return lru_get(self._cache, (k, c.block, c.warp), self._cache_size, make)

    def detail(self, c: Cursor) -> WarpDetail | None:
        """None for a warp that executed no recorded memory instruction (or a block not recorded)."""
        e = self._entry(c)
        return e[0] if e else None

    def frames(self, c: Cursor) -> tuple[Frame, ...]:
        e = self._entry(c)
        if e is None:
            from ..i18n import tr

            return (Frame("idle", 0, 1, None, None, tr("This warp executed no recorded memory instruction."),
                          steps=0),)
        return e[1]

    def frame(self, c: Cursor) -> Frame:
        return held(self.frames(c), c.frame)

    def frame_count(self, c: Cursor) -> int:
        n = len(self.frames(c))
        return n if self.paired_with is None else paired_length(n, self.paired_with(c))

    def clamp(self, c: Cursor) -> Cursor:
        return c.clamped(self.bounds_at(c), self.frame_count)

    def step(self, c: Cursor, unit: str, delta: int) -> Cursor:
        """``unit``: "frame", "instruction", "warp" or "block"; the result is clamped to its warp's stream."""
        fn = {"frame": Cursor.step_frame, "instruction": Cursor.step_instruction,
              "warp": Cursor.step_warp, "block": Cursor.step_block}[unit]
        moved = fn(c, delta, self.bounds_at(c), self.frame_count)
        if unit in ("warp", "block"):
            n = max(1, self.source.stream_length(moved.block, moved.warp))
            if moved.instruction >= n:
                last = replace(moved, instruction=n - 1, frame=0)
                moved = replace(last, frame=self.frame_count(last) - 1 if c.frame == self.frame_count(c) - 1
                                else min(moved.frame, self.frame_count(last) - 1))
        return moved

    def home(self, c: Cursor, whole: bool = False) -> Cursor:
        return c.home(self.bounds_at(c), self.frame_count, whole)

    def end(self, c: Cursor, whole: bool = False) -> Cursor:
        return c.end(self.bounds_at(c), self.frame_count, whole)


def open_source(path: str | Path) -> TraceSource:
    """Load a trace for drawing (TraceError for a missing, corrupt, truncated or newer file)."""
    return TraceSource(load(path))


__all__ = ["TraceSource", "TraceTimeline", "TraceArray", "trace_scenario", "traced_access", "traced_matrix", "open_source", "access_label",
           "source_line", "elem_type", "TraceError"]
