"""Frames: one warp instruction told as a short story, a pure function of its WarpDetail.

The story follows docs/memory-model.md step by step:

1. ``compute``  - each active lane evaluates its index expression into a byte address;
2. ``request``  - the warp issues one request (shared: words in banks, split in phases;
   global: the bytes it asks for);
3. ``wavefront`` (shared) - one frame per wavefront: every bank delivers at most one
   distinct 32-bit word, so the k-th distinct word a bank owes goes out in wavefront k
   of its phase;
   ``line`` (global) - one frame per 128-byte line touched, with its 32-byte sectors;
4. ``summary``  - the figures Nsight Compute counts for this instruction.

A warp instruction where no lane is active issues nothing: it is one ``idle`` frame.

This module imports no Qt. The captions go through ``viz.i18n.tr`` so they follow the
interface language. ``Cursor`` and ``Timeline`` give an app (or the exporter) pure
stepping over instruction, block, warp and frame.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Callable

from .i18n import language, sep, tr
from .kinds.registry import forms, kind_of, kinds
from .scenario import Scenario
from .scenario_parts import access_text
from .warp import LINE, SECTOR, WarpDetail, warp_detail

KINDS = ("compute", "request", "wavefront", "line", "summary", "idle")


@dataclass(frozen=True)
class Frame:
    """One picture of the story. ``wavefront`` is 0-based over the whole instruction."""

    kind: str                 # one of KINDS
    index: int                # position in the instruction's frames, 0-based
    count: int                # frames of this instruction
    wavefront: int | None     # wavefront served in this frame (shared), else None
    line: int | None          # line id (byte_addr // 128) moved in this frame (global), else None
    caption: str              # one plain sentence, in the interface language
    phase: int | None = None  # phase the wavefront belongs to (shared)
    step: int | None = None   # k of "k of n" for wavefront/line frames, 0-based
    steps: int = 0            # n of "k of n"

    @property
    def is_last(self) -> bool:
        return self.index == self.count - 1


def _plural(n: int, one: str, many: str, **fmt) -> str:
    return tr(one if n == 1 else many, n=n, **fmt)


def _count(n: int, noun: str) -> str:
    """``"1 word"`` / ``"5 words"``, through the catalog (nouns: lane, word, bank, sector, line, phase)."""
    return tr(NOUNS[noun][0] if n == 1 else NOUNS[noun][1], n=n)


NOUNS = {
    "lane": ("1 lane", "{n} lanes"), "word": ("1 word", "{n} words"), "bank": ("1 bank", "{n} banks"),
    "sector": ("1 sector", "{n} sectors"), "line": ("1 line", "{n} lines"),
    "phase": ("1 phase", "{n} phases"), "wavefront": ("1 wavefront", "{n} wavefronts"),
    "byte": ("1 byte", "{n} bytes"),
}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}".rstrip("0").rstrip(".")


def conflict_ways(detail: WarpDetail) -> int:
    """The worst phase's wavefront count: an n-way conflict needs n wavefronts in one phase."""
    if not detail.wavefront_phase:
        return 0
    return max(detail.wavefront_phase.count(p) for p in set(detail.wavefront_phase))


# The ops, the traced instructions' kinds and the memory spaces as a reader meets them: as
# written in English (the CLI's words); in another language under these names (the catalogue's
# keys). Instructions (cp.async, ldmatrix, stmatrix) stay as written in every language.
OP_NAMES = {"load": "load", "store": "store",
            # each kind's caption (Kind.name; a kind named as its op stays as written)
            **{k.op: k.name for k in kinds() if k.name and k.name != k.op}}
KIND_NAMES = {f.kind: f.name for f in forms() if f.name}      # each trace kind's caption (TraceForm.name)
SPACE_NAMES = {"shared": "shared memory", "global": "global memory", "generic": "generic address"}


def _named(names: dict[str, str], word: str) -> str:
    return word if language() == "en" or word not in names else tr(names[word])


def op_name(op: str) -> str:
    """A scenario's op (load, store, atomic, tma.load, cp.async) in the interface language."""
    return _named(OP_NAMES, op)


def kind_name(kind: str) -> str:
    """A traced instruction's kind (load, store, atomic, reduction, cp.async...) in the interface language."""
    return _named(KIND_NAMES, kind)


def space_name(space: str) -> str:
    """A memory space (shared, global, generic) in the interface language."""
    return _named(SPACE_NAMES, space)


def access_op(a) -> str:
    """What an access does, as a reader meets it: the matrix op as written (ldmatrix.x4), a
    traced atomic that is no add by its kind (atomic operation, reduction: its option "name"),
    else its op in the interface language (load, store, atomic add, cp.async...)."""
    m = getattr(a, "matrix", None)
    if m is not None:
        return m.text
    named = a.option("name") if hasattr(a, "option") else None
    return kind_name(named) if named else op_name(a.op)


def _op_text(d: WarpDetail) -> str:
    """"load" / "store" in the interface language, or the matrix op as written (ldmatrix.x4)."""
    return access_op(d.access)


def _compute_caption(d: WarpDetail) -> str:
    n = d.active_lanes
    m = getattr(d.access, "matrix", None)
    if m is not None:
        return tr("Lanes 0-{last} compute the addresses of the {rows} rows of {op} {at}: lane l gives row l % 8 "
                  "of matrix l / 8.", last=m.lanes_used - 1, rows=m.lanes_used, op=m.text, at=access_text(d))
    return _plural(n, "1 active lane computes its address for {op} {at}.",
                   "{n} active lanes compute their addresses for {op} {at}.",
                   op=access_op(d.access), at=access_text(d))


def _request_caption(d: WarpDetail) -> str:
    k = kind_of(d.op)
    if k is not None and k.request_caption is not None:     # the kind's own (Kind.request_caption: a TMA copy)
        return k.request_caption(d, _count)
    side = ldgsts_side(d)
    if side == "cg":
        return tr("The warp sends one cp.async.cg (LDGSTS): {lanes} copy {bytes} from global memory into shared "
                  "memory. No counter shows a wavefront of its shared side (the LDGSTS wavefront counter reads 0 on "
                  "the H100), so none is drawn or counted here; its global side is the other instruction of the "
                  "same line.", lanes=_count(d.active_lanes, "lane"), bytes=_count(d.bytes_requested, "byte"))
    if d.space == "shared":
        words = _count(len(d.bank_words), "word")
        banks = _count(len({bw.bank for bw in d.bank_words}), "bank")
        if getattr(d.access, "matrix", None) is not None:
            return tr("The warp sends one {op}: {words} in {banks}, served one 8x8 matrix (8 rows of 16 bytes) "
                      "per phase.", op=d.access.matrix.text, words=words, banks=banks)
        if d.size <= 4:
            return tr("The warp sends one shared {op} request: {words} in {banks}, one phase for all "
                      "32 lanes.", op=access_op(d.access), words=words, banks=banks)
        per = len(d.phases[0])
        if per > (16 if d.size == 8 else 8):
            # Measured on the H100: wide loads that repeat addresses in lane pairs merge phases.
            return tr("The warp sends one shared {op} request: {words} in {banks}; its lanes repeat "
                      "addresses in pairs, so this {size}-byte load is served in phases of {per} lanes, "
                      "not {usual}.", op=access_op(d.access), words=words, banks=banks, per=per, size=d.size,
                      usual=16 if d.size == 8 else 8)
        return tr("The warp sends one shared {op} request: {words} in {banks}; a {size}-byte access "
                  "is served in phases of {per} lanes.", op=access_op(d.access), words=words, banks=banks,
                  per=per, size=d.size)
    return tr("The warp sends one global {op} request for {bytes}: they touch {sectors} in {lines}.",
              op=access_op(d.access), bytes=_count(d.bytes_requested, "byte"), sectors=_count(len(d.sectors), "sector"),
              lines=_count(len(d.lines), "line"))


def _wavefront_caption(d: WarpDetail, k: int) -> str:
    words = [bw for bw in d.bank_words if bw.wavefront == k]
    lanes = sorted({ln for bw in words for ln in bw.lanes})
    banks = len({bw.bank for bw in words})
    done = sum(1 for ln in d.lanes if ln.active and ln.wavefront <= k)
    waiting = d.active_lanes - done
    head = tr("Wavefront {k} of {n}", k=k + 1, n=d.wavefronts)
    fmt = dict(words=_count(len(words), "word"), lanes=_count(len(lanes), "lane"))
    if d.op == "store" or getattr(kind_of(d.op), "writes", False):      # writes (a kind's Kind.writes)
        body = _plural(banks, "1 bank stores {words} from {lanes}", "{n} banks store {words} from {lanes}", **fmt)
    else:
        body = _plural(banks, "1 bank delivers {words} to {lanes}", "{n} banks deliver {words} to {lanes}", **fmt)
        if any(len(bw.lanes) > 1 for bw in words):
            body += tr(" (broadcast)")
    if waiting:
        tail = _plural(waiting, "; 1 lane still waits.", "; {n} lanes still wait.")
    else:
        tail = tr("; every lane is served.")
    return head + sep(": ") + body + tail


def _line_caption(d: WarpDetail, k: int, line: int) -> str:
    secs = [s for s in d.sectors if s.line == line]
    used = sum(sum(s.used) for s in secs)
    start = line * LINE
    return _plural(len(secs), "Line {k} of {lines} (bytes {a}-{b}): 1 of its 4 sectors moves; the warp "
                   "asked for {used} of its {moved} bytes.",
                   "Line {k} of {lines} (bytes {a}-{b}): {n} of its 4 sectors move; the warp asked "
                   "for {used} of their {moved} bytes.", k=k + 1, lines=len(d.lines), a=start,
                   b=start + LINE - 1, used=used, moved=len(secs) * SECTOR)


def ldgsts_side(d: WarpDetail) -> str | None:
    """A traced cp.async's shared side: "ca" (its wavefronts are LDGSTS wavefronts, outside the
    ten) or "cg" (no counter shows one); None otherwise (``viz.trace.analysis.ldgsts_side``)."""
    if d.op != "cp.async" or d.space != "shared":
        return None
    side = d.access.option("cache")
    return side if side in ("ca", "cg") and d.access.option("number") is not None else None


def summary_caption(d: WarpDetail) -> str:
    side = ldgsts_side(d)
    if side == "cg":
        return tr("Summary: cp.async.cg, no shared wavefront counted (its shared side is in no wavefront counter).")
    if d.space == "shared":
        wf, ph = d.wavefronts, d.active_phases
        head = tr("Summary: {wf} for {ph}", wf=_count(wf, "wavefront"), ph=_count(ph, "phase"))
        if side == "ca":
            head = _plural(wf, "Summary: 1 LDGSTS wavefront for {ph} (not in the ten metrics)",
                           "Summary: {n} LDGSTS wavefronts for {ph} (not in the ten metrics)", ph=_count(ph, "phase"))
        conflicts = d.conflicts
        if conflicts == 0:
            return head + tr(" = no bank conflicts")
        tail = _plural(conflicts, " = 1 bank conflict ({ways}-way)", " = {n} bank conflicts ({ways}-way)",
                       ways=conflict_ways(d))
        return head + tail
    sectors = len(d.sectors)
    return tr("Summary: 1 request, {sectors}, {lines}: {used} of {moved} bytes used "
              "({eff}% sector efficiency).", sectors=_count(sectors, "sector"),
              lines=_count(len(d.lines), "line"), used=d.bytes_requested, moved=sectors * SECTOR,
              eff=_pct(d.sector_efficiency))


def frames(detail: WarpDetail) -> tuple[Frame, ...]:
    """The frames of one warp instruction (see the module docstring for the story)."""
    d = detail
    if not d.issued:
        return (Frame("idle", 0, 1, None, None,
                      tr("No lane of this warp is active here, so the warp issues nothing."),
                      steps=0),)
    steps: list[tuple[str, int | None, int | None, int | None, int | None, str]] = []
    steps.append(("compute", None, None, None, None, _compute_caption(d)))
    steps.append(("request", None, None, None, None, _request_caption(d)))
    if d.space == "shared":
        for k in range(d.wavefronts):
            steps.append(("wavefront", k, None, d.wavefront_phase[k], k, _wavefront_caption(d, k)))
        n_steps = d.wavefronts
    else:
        for k, line in enumerate(d.lines):
            steps.append(("line", None, line, None, k, _line_caption(d, k, line)))
        n_steps = len(d.lines)
    steps.append(("summary", None, None, None, None, summary_caption(d)))
    count = len(steps)
    return tuple(Frame(kind, i, count, wf, line, cap, phase=ph, step=st, steps=n_steps)
                 for i, (kind, wf, line, ph, st, cap) in enumerate(steps))


def frame_count(detail: WarpDetail) -> int:
    """compute + request + (wavefronts or lines) + summary; 1 when nothing is issued."""
    if not detail.issued:
        return 1
    return 3 + (detail.wavefronts if detail.space == "shared" else len(detail.lines))


# ---------------------------------------------------------------------------- side by side


def paired_length(a: int, b: int) -> int:
    """How many frames two stories shown side by side have (compare mode, a comparison
    export): the longer story's. The shorter one holds its last frame (``held``)."""
    return max(a, b)


def held(fs: tuple[Frame, ...], j: int) -> Frame:
    """Frame ``j`` of a story shown beside a longer one: past its end, its last frame."""
    return fs[max(0, min(j, len(fs) - 1))]


def paired_frames(fa: tuple[Frame, ...], fb: tuple[Frame, ...]) -> list[tuple[Frame, Frame]]:
    """The frames of two stories side by side, in step (``paired_length``, ``held``)."""
    return [(held(fa, j), held(fb, j)) for j in range(paired_length(len(fa), len(fb)))]


# ---------------------------------------------------------------------------- stepping


def lru_get(cache, key, size: int, make):
    """``cache[key]`` (an OrderedDict kept to ``size`` entries, least recently used out first),
    made by ``make()`` when missing."""
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = make()
        if len(cache) > size:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return hit


@dataclass(frozen=True)
class Bounds:
    """How many instructions (per thread), blocks and warps (per block) a scenario has."""

    instructions: int
    blocks: int
    warps: int

    @classmethod
    def of(cls, scenario: Scenario) -> "Bounds":
        lw = scenario.launch
        return cls(len(scenario.instructions()), lw.blocks, lw.warps_per_block)


FrameCount = Callable[["Cursor"], int]


def _clamp(v: int, n: int) -> int:
    return max(0, min(v, n - 1))


@dataclass(frozen=True)
class Cursor:
    """A position: warp instruction number, linear block, warp in the block, frame.

    Every step returns a new Cursor; ``frame_count(cursor)`` tells how many frames the
    instruction at that position has (``Timeline.frame_count`` computes it). Steps stop
    at the ends instead of wrapping.
    """

    instruction: int = 0
    block: int = 0
    warp: int = 0
    frame: int = 0

    def clamped(self, bounds: Bounds, frame_count: FrameCount) -> "Cursor":
        c = Cursor(_clamp(self.instruction, bounds.instructions), _clamp(self.block, bounds.blocks),
                   _clamp(self.warp, bounds.warps), 0)
        return replace(c, frame=_clamp(self.frame, frame_count(c)))

    def step_frame(self, delta: int, bounds: Bounds, frame_count: FrameCount) -> "Cursor":
        """Next/previous frame; past an instruction's last frame into the next instruction."""
        c = self
        for _ in range(abs(delta)):
            if delta > 0:
                if c.frame + 1 < frame_count(c):
                    c = replace(c, frame=c.frame + 1)
                elif c.instruction + 1 < bounds.instructions:
                    c = replace(c, instruction=c.instruction + 1, frame=0)
                else:
                    break
            else:
                if c.frame > 0:
                    c = replace(c, frame=c.frame - 1)
                elif c.instruction > 0:
                    prev = replace(c, instruction=c.instruction - 1, frame=0)
                    c = replace(prev, frame=frame_count(prev) - 1)
                else:
                    break
        return c

    def step_instruction(self, delta: int, bounds: Bounds, frame_count: FrameCount) -> "Cursor":
        """Another instruction of the same warp, from its first frame."""
        return replace(self, instruction=_clamp(self.instruction + delta, bounds.instructions), frame=0)

    def _keep_frame(self, moved: "Cursor", frame_count: FrameCount) -> "Cursor":
        # Stepping across warps/blocks keeps the point of the story: the summary stays the
        # summary, otherwise the same frame number where the new warp has it.
        n_old, n_new = frame_count(self), frame_count(replace(moved, frame=0))
        frame = n_new - 1 if self.frame == n_old - 1 else _clamp(self.frame, n_new)
        return replace(moved, frame=frame)

    def step_warp(self, delta: int, bounds: Bounds, frame_count: FrameCount) -> "Cursor":
        return self._keep_frame(replace(self, warp=_clamp(self.warp + delta, bounds.warps)), frame_count)

    def step_block(self, delta: int, bounds: Bounds, frame_count: FrameCount) -> "Cursor":
        return self._keep_frame(replace(self, block=_clamp(self.block + delta, bounds.blocks)), frame_count)

    def home(self, bounds: Bounds, frame_count: FrameCount, whole: bool = False) -> "Cursor":
        """First frame of this instruction (``whole``: of the first instruction)."""
        return replace(self, instruction=0 if whole else self.instruction, frame=0)

    def end(self, bounds: Bounds, frame_count: FrameCount, whole: bool = False) -> "Cursor":
        """Last frame of this instruction (``whole``: of the last instruction)."""
        c = replace(self, instruction=bounds.instructions - 1 if whole else self.instruction, frame=0)
        return replace(c, frame=frame_count(c) - 1)

    def at_end(self, bounds: Bounds, frame_count: FrameCount) -> bool:
        return self.instruction == bounds.instructions - 1 and self.frame == frame_count(self) - 1


class Timeline:
    """A scenario's warp details and frames by cursor, computed on demand and cached.

    ``Timeline(sc).frame_count`` is the ``FrameCount`` the Cursor steps need. In compare
    mode ``paired_with`` gives the other side's frame count at a cursor: the longer story
    then sets the length (``paired_length``) and this side holds its last frame.
    """

    paired_with: FrameCount | None = None

    def __init__(self, scenario: Scenario, cache_size: int = 256):
        self.scenario = scenario
        self.bounds = Bounds.of(scenario)
        self._instructions = scenario.instructions()
        self._cache: OrderedDict[tuple[int, int, int], tuple[WarpDetail, tuple[Frame, ...]]] = OrderedDict()
        self._cache_size = cache_size

    def _entry(self, c: Cursor) -> tuple[WarpDetail, tuple[Frame, ...]]:
        def make():
            d = warp_detail(self.scenario, self._instructions[c.instruction], c.block, c.warp)
            return d, frames(d)
        return lru_get(self._cache, (c.instruction, c.block, c.warp), self._cache_size, make)

    def detail(self, c: Cursor) -> WarpDetail:
        return self._entry(c)[0]

    def frames(self, c: Cursor) -> tuple[Frame, ...]:
        return self._entry(c)[1]

    def frame(self, c: Cursor) -> Frame:
        return held(self.frames(c), c.frame)

    def frame_count(self, c: Cursor) -> int:
        n = len(self.frames(c))
        return n if self.paired_with is None else paired_length(n, self.paired_with(c))

    # Convenience wrappers so callers need not pass bounds and frame_count around.
    def step(self, c: Cursor, unit: str, delta: int) -> Cursor:
        """``unit``: "frame", "instruction", "warp" or "block"."""
        fn = {"frame": Cursor.step_frame, "instruction": Cursor.step_instruction,
              "warp": Cursor.step_warp, "block": Cursor.step_block}[unit]
        return fn(c, delta, self.bounds, self.frame_count)

    def home(self, c: Cursor, whole: bool = False) -> Cursor:
        return c.home(self.bounds, self.frame_count, whole)

    def end(self, c: Cursor, whole: bool = False) -> Cursor:
        return c.end(self.bounds, self.frame_count, whole)


__all__ = ["Frame", "KINDS", "frames", "frame_count", "paired_length", "held", "paired_frames", "conflict_ways", "access_text", "summary_caption",
           "Cursor", "Bounds", "Timeline"]
