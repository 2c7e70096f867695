"""One warp instruction in full detail: every lane, word, bank, wavefront, sector and line.

This is what the animation shows. It is computed with the same evaluator and checks as
the whole-launch engine, for one block, then laid out lane by lane. The wavefront a word
is served in follows docs/memory-model.md: within a phase, the k-th distinct word that a bank
must deliver goes out in the phase's k-th wavefront (words in order of the first lane that
asks for them); a lane is complete when the last of its words has been delivered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .engine import block_coords, evaluate_instruction, thread_coords
from .gpus import BANK_BYTES, BANKS, LINE_BYTES, PHASE_8, PHASE_16, SECTOR_BYTES, WARP
from .kernels_numba import wide_load_phases
from .kinds.registry import kind_of
from .scenario import Access, Array, Instruction, Scenario

SECTOR = SECTOR_BYTES     # viz.gpus: the GPU description's rules
LINE = LINE_BYTES


@dataclass(frozen=True)
class Lane:
    lane: int
    tid: int                      # thread index in the block (-1: no such thread)
    thread: tuple[int, int, int]
    exists: bool                  # False past the end of a partial warp
    active: bool                  # exists and `when` holds
    indices: tuple[int, ...]      # the index expression values ([i] or [row][col])
    elem: int                     # element offset after pad and swizzle
    byte_addr: int
    size: int
    phase: int                    # shared phase (or 0); -1 when inactive
    words: tuple[int, ...]        # 32-bit words covered (shared)
    banks: tuple[int, ...]        # their banks
    word_wavefronts: tuple[int, ...]  # wavefront (0-based, whole instruction) delivering each word
    wavefront: int                # wavefront that completes this lane; -1 when inactive (shared)
    sector: int                   # sector id = byte_addr // 32 (global); -1 when inactive
    line: int                     # line id = byte_addr // 128 (global)


@dataclass(frozen=True)
class BankWord:
    """One distinct word a bank delivers in one phase: served in ``wavefront``, to ``lanes``."""

    bank: int
    word: int
    phase: int
    wavefront: int
    lanes: tuple[int, ...]


@dataclass(frozen=True)
class SectorUse:
    sector: int
    line: int
    used: tuple[bool, ...]        # 32 flags: which bytes of the sector the warp asked for
    lanes: tuple[int, ...]


@dataclass(frozen=True)
class WarpDetail:
    scenario: Scenario
    instruction: Instruction
    access: Access
    array: Array
    block: int
    block_xyz: tuple[int, int, int]
    warp: int
    lanes: tuple[Lane, ...]
    space: str
    op: str
    size: int
    phases: tuple[tuple[int, ...], ...]   # lanes of each phase
    # shared
    bank_words: tuple[BankWord, ...]
    wavefronts: int
    wavefront_phase: tuple[int, ...]      # phase of each wavefront
    active_phases: int
    # global
    sectors: tuple[SectorUse, ...]
    lines: tuple[int, ...]
    # warp instructions in this warp's stream ("instruction k of n"); 0: the scenario's
    # count (a trace's warps each run their own number of instructions)
    instruction_count: int = 0

    @property
    def active_lanes(self) -> int:
        return sum(1 for ln in self.lanes if ln.active)

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.active_phases

    @property
    def bytes_requested(self) -> int:
        return self.active_lanes * self.size

    @property
    def sector_efficiency(self) -> float:
        return self.bytes_requested / (len(self.sectors) * SECTOR) if self.sectors else 0.0

    @property
    def issued(self) -> bool:
        return self.active_lanes > 0


def phase_lanes(size: int) -> tuple[tuple[int, ...], ...]:
    """One phase for 1/2/4-byte accesses, half-warps for 8 bytes, quarter-warps for 16."""
    per = WARP if size <= BANK_BYTES else (PHASE_8 if size == 8 else PHASE_16)
    return tuple(tuple(range(p, p + per)) for p in range(0, WARP, per))


def load_phase_lanes(size: int, addr: np.ndarray, mask: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """The phases of one warp's shared load, merged where lanes repeat addresses.

    The same compiled rule as the whole-launch engine (``wide_load_phases``): an 8-byte
    load whose lane pairs each ask for one address is one 32-lane phase; a 16-byte load's
    half-warp whose lane quads each ask for at most two addresses is one 16-lane phase.
    A load of at most a bank's width is one phase whatever its addresses (the compiled rule's
    first case): answered here without numba, so the first picture needs no compiled code.
    """
    if size <= BANK_BYTES:
        return phase_lanes(size)
    n = len(addr)
    a = np.zeros((1, WARP), np.int64)
    m = np.zeros((1, WARP), np.bool_)
    a[0, :n] = addr
    m[0, :n] = mask
    starts = np.zeros(4, np.int64)
    lengths = np.zeros(4, np.int64)
    count = wide_load_phases(a, m, 0, 0, WARP, size, starts, lengths)
    return tuple(tuple(range(int(starts[k]), int(starts[k] + lengths[k]))) for k in range(count))


def matrix_phases(op) -> tuple[tuple[int, ...], ...]:
    """ldmatrix / stmatrix: one phase of 8 lanes per matrix (viz.kinds.ldmatrix); lanes that
    give no row (.x1: 8-31, .x2: 16-31) belong to a last phase of their own, never active."""
    from .kinds.ldmatrix import phases_of

    phases = phases_of(op)
    rest = tuple(range(op.lanes_used, WARP))
    return phases + ((rest,) if rest else ())


def warp_detail(scenario: Scenario, instr: Instruction | int, block: int = 0, warp: int = 0) -> WarpDetail:
    """Everything about one warp instruction of one block (raises ScenarioError like analyze)."""
    if isinstance(instr, int):
        instr = scenario.instructions()[instr]
    launch = scenario.launch
    if not 0 <= block < launch.blocks:
        raise IndexError(f"block {block} is outside the grid (0..{launch.blocks - 1})")
    if not 0 <= warp < launch.warps_per_block:
        raise IndexError(f"warp {warp} is outside the block (0..{launch.warps_per_block - 1})")
    access = scenario.accesses[instr.access]
    arr = scenario.array(access.array)
    nt = launch.threads_per_block
    tids = np.arange(warp * WARP, min(nt, warp * WARP + WARP), dtype=np.int64)
    lv = evaluate_instruction(scenario, instr, np.array([block], np.int64), tids)
    shape = (1, len(tids))
    addr = np.broadcast_to(lv.addr.natural(), shape)[0]
    mask = np.broadcast_to(lv.mask, shape)[0]
    kind = kind_of(access.op)
    if kind is not None and kind.active_lanes is not None:   # an atomic: ptxas's warp aggregation
        mask = kind.active_lanes(access, mask, len(tids))
    idx = [np.broadcast_to(v.natural(), shape)[0] for v in lv.indices]
    elem = np.broadcast_to(lv.elem.natural(), shape)[0]
    bx, by, bz = (int(x) for x in block_coords(scenario, np.int64(block)))
    threads = [tuple(int(x) for x in thread_coords(scenario, np.int64(t))) for t in tids]
    return lanes_detail(scenario, instr, access, arr, block, (bx, by, bz), warp, addr, mask, threads,
                        indices=[tuple(int(v[ln]) for v in idx) for ln in range(len(tids))],
                        elems=[int(e) for e in elem])


def lanes_detail(scenario: Scenario, instr: Instruction, access: Access, arr: Array, block: int,
                 block_xyz: tuple[int, int, int], warp: int, addr: np.ndarray, mask: np.ndarray,
                 threads: list[tuple[int, int, int]], indices: list[tuple[int, ...]] | None = None,
                 elems: list[int] | None = None, space: str | None = None,
                 instruction_count: int = 0) -> WarpDetail:
    """The detail of one warp instruction from its lanes' byte addresses and mask.

    This is where lane addresses go in, whatever computed them: a scenario's expressions
    (``warp_detail``) or a recorded trace (``viz.trace.detail``). ``addr``/``mask`` hold the
    warp's existing lanes (fewer than 32 at the end of a partial warp), ``threads`` their
    thread coordinates. ``space`` defaults to the array's.
    """
    size = instr.size
    space = space or arr.space
    n = len(addr)
    tids = np.arange(warp * WARP, warp * WARP + n, dtype=np.int64)
    indices = indices if indices is not None else [()] * n
    elems = elems if elems is not None else [0] * n
    if getattr(access, "matrix", None) is not None:
        phases = matrix_phases(access.matrix)
    elif space == "shared" and access.op == "load":
        phases = load_phase_lanes(size, addr, mask)
    else:
        phases = phase_lanes(size)
    words_per_lane = 1 if size <= BANK_BYTES else size // BANK_BYTES

    # Shared: distinct words per bank per phase, in order of first request. A cp.async and an
    # atomic whose old value is read serve every lane's word on its own (viz.kinds: measured).
    kind = kind_of(access.op)
    per_lane = kind is not None and kind.per_lane(access)
    banks = kind is None or kind.through_banks        # the TMA writes the tile itself, not through the banks' path
    bank_words: list[BankWord] = []
    word_wf: dict[tuple[int, int], int] = {}
    wf_phase: list[int] = []
    active_phases = 0
    if space == "shared" and banks:
        for p, lanes_in in enumerate(phases):
            order: dict[int, dict[int, list[int]]] = {}
            for ln in lanes_in:
                if ln >= len(tids) or not mask[ln]:
                    continue
                w0 = int(addr[ln]) // BANK_BYTES
                for q in range(words_per_lane):
                    w = w0 + q
                    order.setdefault(w % BANKS, {}).setdefault((w, ln) if per_lane else w, []).append(ln)
            if not order:
                continue
            active_phases += 1
            base = len(wf_phase)
            depth = max(len(ws) for ws in order.values())
            wf_phase.extend([p] * depth)
            for bank in sorted(order):
                for k, (key, lanes_) in enumerate(order[bank].items()):
                    w = key[0] if per_lane else key
                    bank_words.append(BankWord(bank, w, p, base + k, tuple(lanes_)))
                    word_wf[(p, key)] = base + k

    sector_lanes: dict[int, list[int]] = {}
    sector_bytes: dict[int, list[bool]] = {}
    lanes: list[Lane] = []
    for ln in range(WARP):
        tid = warp * WARP + ln
        if ln >= len(tids):
            lanes.append(Lane(ln, -1, (-1, -1, -1), False, False, (), 0, 0, size, -1, (), (), (), -1, -1, -1))
            continue
        thread = threads[ln]
        active = bool(mask[ln])
        a = int(addr[ln])
        phase = next(p for p, ls in enumerate(phases) if ln in ls)
        words: tuple[int, ...] = ()
        wfs: tuple[int, ...] = ()
        sector = line = -1
        if active and space == "shared" and banks:
            words = tuple(a // BANK_BYTES + q for q in range(words_per_lane))
            wfs = tuple(word_wf[(phase, (w, ln) if per_lane else w)] for w in words)
        if active and space == "global":
            sector, line = a // SECTOR, a // LINE
            sector_lanes.setdefault(sector, []).append(ln)
            used = sector_bytes.setdefault(sector, [False] * SECTOR)
            for k in range(a % SECTOR, a % SECTOR + size):
                used[k] = True
        lanes.append(Lane(
            lane=ln, tid=tid, thread=thread, exists=True, active=active,
            indices=indices[ln], elem=elems[ln], byte_addr=a, size=size,
            phase=phase if active else -1, words=words, banks=tuple(w % BANKS for w in words),
            word_wavefronts=wfs, wavefront=max(wfs) if wfs else -1, sector=sector, line=line))
    sectors = tuple(SectorUse(s, s * SECTOR // LINE, tuple(sector_bytes[s]), tuple(sector_lanes[s]))
                    for s in sorted(sector_lanes))
    return WarpDetail(
        scenario=scenario, instruction=instr, access=access, array=arr, block=block,
        block_xyz=block_xyz, warp=warp, lanes=tuple(lanes), space=space, op=access.op,
        size=size, phases=phases, bank_words=tuple(bank_words), wavefronts=len(wf_phase),
        wavefront_phase=tuple(wf_phase), active_phases=active_phases, sectors=sectors,
        lines=tuple(sorted({s.line for s in sectors})), instruction_count=instruction_count)
