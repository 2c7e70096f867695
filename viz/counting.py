"""Counting one warp instruction over a launch: the lanes' addresses (evaluated block by thread),
their checks (bounds, alignment, faults named by lane) and the compiled counting of banks and
sectors, with ``InstrStats`` to hold the result.

Below the engine (``viz.engine.analyze`` runs these over every instruction) and the access
kinds (``viz.kinds`` count with them); ``viz.engine`` re-exports every name here.
"""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field

import numpy as np

from .i18n import sep, tr
from .gpus import SECTOR_BYTES, WARP
from .kernels_numba import global_counts, shared_counts
from .lanes import Constants, Evaluator, Fault, Lanes, Space
from .scenario_parts import Access, Array, Instruction, ScenarioError
from .work import CLASS_MODULUS  # a row of banks (32 x 4 B): viz.gpus

@dataclass
class InstrStats:
    """One warp instruction over the whole launch."""

    instruction: Instruction
    space: str
    op: str
    size: int
    warp_instructions: int = 0   # warps with an active lane
    active_lanes: int = 0
    wavefronts: int = 0          # shared
    phases: int = 0              # shared: phases with an active lane
    sectors: int = 0             # global
    lines: int = 0               # global
    paired: int = 0              # shared loads: warp instructions whose lanes repeat addresses in pairs
    deepest: int = 0             # shared: the most wavefronts any one phase of any warp took
    bytes_used: int = 0          # global: distinct bytes the active lanes ask for, summed over warps
    per_warp: np.ndarray = field(default=None, repr=False)  # (blocks, warps): wavefronts or sectors
    per_warp_active: np.ndarray = field(default=None, repr=False)  # (blocks, warps): active lanes
    kind_metrics: dict | None = None  # format 3 kinds (viz.kinds): launch totals under Nsight Compute's names
    matrix: object = None        # the access's MatrixOp (ldmatrix / stmatrix), else None

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.phases

    @property
    def requests(self) -> int:
        return self.warp_instructions if self.space == "global" else 0

    @property
    def bytes_requested(self) -> int:
        return self.active_lanes * self.size

    @property
    def bytes_moved(self) -> int:
        return self.sectors * SECTOR_BYTES


# ---------------------------------------------------------------------------- spaces


def block_coords(scenario, linear: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gx, gy, _ = scenario.launch.grid
    return linear % gx, (linear // gx) % gy, linear // (gx * gy)


def thread_coords(scenario, tid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bx, by, _ = scenario.launch.block
    return tid % bx, (tid // bx) % by, tid // (bx * by)


def make_space(scenario, blocks: np.ndarray, threads: np.ndarray,
               loop: dict[str, int]) -> Space:
    """Names for blocks × threads (any subsets): builtins, params and loop variables."""
    b = np.asarray(blocks, np.int64).reshape(-1, 1)
    t = np.asarray(threads, np.int64).reshape(1, -1)
    bxs = block_coords(scenario, b)
    txs = thread_coords(scenario, t)
    names: dict[str, Lanes] = {}
    for axis, v in zip("xyz", bxs):
        names[f"blockIdx.{axis}"] = Lanes(b=v)
    for axis, v in zip("xyz", txs):
        names[f"threadIdx.{axis}"] = Lanes(t=v)
    for axis, n in zip("xyz", scenario.launch.block):
        names[f"blockDim.{axis}"] = Lanes.const(n)
    for axis, n in zip("xyz", scenario.launch.grid):
        names[f"gridDim.{axis}"] = Lanes.const(n)
    names["tid"] = Lanes(t=t)
    names["lane"] = Lanes(t=t % WARP)
    names["warp"] = Lanes(t=t // WARP)
    for k, v in loop.items():
        names[k] = Lanes.const(v)
    return Space(ChainMap(names, Constants(scenario.params)), (b.shape[0], t.shape[1]))


@dataclass
class LaneValues:
    """One instruction evaluated over blocks × threads (kept in separable form)."""

    addr: Lanes                 # byte address
    mask: np.ndarray            # bool, broadcastable to the grid
    indices: list[Lanes]
    elem: Lanes                 # element offset after pad/swizzle
    shape: tuple[int, int]


def evaluate_instruction(scenario, instr: Instruction, blocks: np.ndarray,
                         threads: np.ndarray, access: Access | None = None) -> LaneValues:
    """Addresses and active lanes of one instruction (of ``access``, default the
    instruction's own; a cp.async passes its global source); raises ScenarioError naming the lane."""
    access = access or scenario.accesses[instr.access]
    arr = scenario.array(access.array)
    loop = dict(instr.loop)
    space = make_space(scenario, blocks, threads, loop)
    ev = Evaluator(space)
    shape = space.shape
    exists = np.ones((1, 1), bool)
    if access.when is not None:
        wv, faults = ev.evaluate(access.when)
        _raise_faults(scenario, access, instr, faults, exists, blocks, threads, "when")
        mask = wv.natural() != 0
    elif access.matrix is not None:
        # ldmatrix / stmatrix: every lane executes it, only the first 8 per matrix give a row
        mask = (np.asarray(threads, np.int64) % WARP < access.matrix.lanes_used).reshape(1, -1)
    else:
        mask = np.ones((1, 1), bool)
    mask = np.asarray(mask).reshape(_mask_shape(mask))
    indices = []
    for k, node in enumerate(access.indices):
        v, faults = ev.evaluate(node)
        _raise_faults(scenario, access, instr, faults, mask, blocks, threads, "at")
        indices.append(v)
    for k, (v, extent) in enumerate(zip(indices, arr.shape)):
        _check_bounds(scenario, access, instr, arr, k, v, extent, mask, blocks, threads)
    coords = {"col": indices[-1]}
    if len(indices) == 2:
        coords["row"] = indices[0]
    lay = Space(ChainMap(coords, Constants(scenario.params)), shape)
    elem, faults = Evaluator(lay).evaluate(arr.layout)
    _raise_faults(scenario, access, instr, faults, mask, blocks, threads, "layout")
    esize = arr.type.size
    offset = arr.base + instr.byte_offset
    if elem.is_full:
        addr = Lanes(f=elem.f * esize + offset)
    else:
        addr = Lanes(b=elem.b * esize + offset, t=None if elem.t is None else elem.t * esize)
    _check_alignment(scenario, access, instr, arr, addr, mask, blocks, threads)
    if access.matrix is not None:
        _check_row_end(scenario, access, instr, arr, addr, mask, blocks, threads)
    return LaneValues(addr, mask, indices, elem, shape)


def _mask_shape(mask: np.ndarray) -> tuple[int, int]:
    m = np.asarray(mask)
    return (1, 1) if m.ndim == 0 else m.shape


def _active_extremes(v: Lanes, mask: np.ndarray, shape) -> tuple[int, int] | None:
    """Min and max of v over the active lanes, without building the grid when separable."""
    m = np.asarray(mask)
    if not v.is_full and (m.shape[0] == 1 or m.shape[1] == 1):
        b = v.b.reshape(-1)
        t = v.t.reshape(-1) if v.t is not None else np.zeros(1, np.int64)
        if m.shape[0] == 1 and m.shape[1] == 1:
            if not m[0, 0]:
                return None
        elif m.shape[0] == 1:
            sel = m.reshape(-1)
            if not sel.any():
                return None
            t = t[sel] if t.size == sel.size else t
        else:
            sel = m.reshape(-1)
            if not sel.any():
                return None
            b = b[sel] if b.size == sel.size else b
        return int(b.min() + t.min()), int(b.max() + t.max())
    full = np.broadcast_to(v.natural(), shape)
    mm = np.broadcast_to(m, shape)
    if not mm.any():
        return None
    sel = full[mm]
    return int(sel.min()), int(sel.max())


def _first_lane(cond: np.ndarray, shape) -> tuple[int, int]:
    c = np.broadcast_to(cond, shape)
    flat = int(np.argmax(c.reshape(-1)))
    return divmod(flat, shape[1])


def describe_lane(scenario, block: int, tid: int, instr: Instruction) -> str:
    bx, by, bz = (int(x) for x in block_coords(scenario, np.int64(block)))
    tx, ty, tz = (int(x) for x in thread_coords(scenario, np.int64(tid)))
    loop = f"{sep(', ')}{instr.loop_text()}" if instr.loop else ""
    return tr("block ({bx},{by},{bz}) thread ({tx},{ty},{tz}) [warp {warp}, lane {lane}]", bx=bx, by=by, bz=bz,
              tx=tx, ty=ty, tz=tz, warp=tid // WARP, lane=tid % WARP) + loop


def _raise_faults(scenario, access, instr, faults: list[Fault], mask, blocks, threads, what):
    shape = (len(blocks), len(threads))
    for f in faults:
        hit = np.broadcast_to(f.mask, shape) & np.broadcast_to(mask, shape)
        if hit.any():
            bi, ti = _first_lane(hit, shape)
            lane = describe_lane(scenario, int(blocks[bi]), int(threads[ti]), instr)
            fix = tr("guard it with `when`, or change the expression") if what != "when" else tr("change the condition")
            raise ScenarioError(scenario.source, access.label(), tr("{problem} at {lane}", problem=f.problem,
                                                                    lane=lane), fix, access.line)


def _check_bounds(scenario, access: Access, instr, arr: Array, k: int, v: Lanes, extent: int,
                  mask, blocks, threads):
    shape = (len(blocks), len(threads))
    ext = _active_extremes(v, mask, shape)
    if ext is None or (ext[0] >= 0 and ext[1] < extent):
        return
    full = np.broadcast_to(v.natural(), shape)
    bad = ((full < 0) | (full >= extent)) & np.broadcast_to(mask, shape)
    bi, ti = _first_lane(bad, shape)
    value = int(full[bi, ti])
    lane = describe_lane(scenario, int(blocks[bi]), int(threads[ti]), instr)
    dim = ("row" if k == 0 else "column") if len(arr.shape) == 2 else "index"
    kind = "negative" if value < 0 else "out of bounds"
    raise ScenarioError(
        scenario.source, access.label(),
        tr("{dim} {value} of {name} is {kind} (valid: 0..{last}) at {lane}", dim=tr(dim), value=value, name=arr.name,
           kind=tr(kind), last=extent - 1, lane=lane),
        tr("guard the access with `when`, or make the array larger"), access.line)


def _check_alignment(scenario, access, instr, arr: Array, addr: Lanes, mask, blocks, threads):
    size = instr.size
    if size == 1:
        return
    shape = (len(blocks), len(threads))
    if not addr.is_full:
        bad_b = (addr.b % size) != 0
        bad_t = (addr.t % size) != 0 if addr.t is not None else np.zeros((), bool)
        if not bad_b.any() and not bad_t.any():
            return
    nat = addr.natural()
    bad = ((np.broadcast_to(nat, shape) % size) != 0) & np.broadcast_to(mask, shape)
    if not bad.any():
        return
    bi, ti = _first_lane(bad, shape)
    a = int(np.broadcast_to(nat, shape)[bi, ti])
    lane = describe_lane(scenario, int(blocks[bi]), int(threads[ti]), instr)
    if access.matrix is not None:
        raise ScenarioError(
            scenario.source, access.label(),
            tr("{op} row address {a} (byte offset {offset} in {name}) is not 16-byte aligned at {lane}; each lane "
               "gives the start of a 16-byte row and the GPU faults on a misaligned one", op=access.matrix.text,
               a=a, offset=a - arr.start, name=arr.name, lane=lane),
            tr("make at name the first element of a 16-byte row (for a half array, a column that is a multiple "
               "of 8, and rows of a multiple of 16 bytes)"), access.line)
    raise ScenarioError(
        scenario.source, access.label(),
        tr("misaligned {size}-byte access: byte address {a} (offset {offset} in {name}) is not a multiple of {size} "
           "at {lane}; the GPU faults on this (misaligned address)", size=size, a=a, offset=a - arr.start,
           name=arr.name, lane=lane),
        tr("an {size}-byte access must be aligned to {size} bytes: fix the array's offset or the index", size=size)
        if size == 8 else
        tr("a {size}-byte access must be aligned to {size} bytes: fix the array's offset or the index", size=size),
        access.line)


def _check_row_end(scenario, access, instr, arr: Array, addr: Lanes, mask, blocks, threads):
    """ldmatrix / stmatrix: each lane's 16-byte row must lie inside the array."""
    shape = (len(blocks), len(threads))
    ext = _active_extremes(addr, mask, shape)
    end = arr.base + arr.nbytes
    if ext is None or ext[1] + 16 <= end:
        return
    nat = np.broadcast_to(addr.natural(), shape)
    bad = (nat + 16 > end) & np.broadcast_to(mask, shape)
    bi, ti = _first_lane(bad, shape)
    a = int(nat[bi, ti])
    lane = describe_lane(scenario, int(blocks[bi]), int(threads[ti]), instr)
    raise ScenarioError(
        scenario.source, access.label(),
        tr("the 16-byte row at byte offset {offset} runs past the end of {name} ({n} bytes) at {lane}",
           offset=a - arr.base, name=arr.name, n=arr.nbytes, lane=lane),
        tr("point at at the first element of a row that has 16 bytes left in the array"), access.line)


# ---------------------------------------------------------------------------- counting


def count_addresses(space: str, size: int, addr: np.ndarray, mask: np.ndarray, nw: int, is_load: bool):
    """(primary, secondary, active, extra, extra2) per (block, warp): shared (wavefronts, phases,
    active, paired, deepest) (see ``shared_counts``); global (sectors, lines, active, distinct
    addresses, zeros) (see ``global_counts``)."""
    n = addr.shape[0]
    out = tuple(np.zeros((n, nw), np.int32) for _ in range(5))
    addr = np.ascontiguousarray(addr, np.int64)
    mask = np.ascontiguousarray(mask, np.bool_)
    if space == "shared":
        shared_counts(addr, mask, size, is_load, *out)
    else:
        global_counts(addr, mask, *out[:4])
    return out


def count_chunk(space: str, size: int, lv: LaneValues, nw: int, shortcuts: bool = True,
                is_load: bool = True):
    """Per (block, warp) figures for one chunk: five arrays, as ``count_addresses`` returns them."""
    nb, nt = lv.shape
    m = np.asarray(lv.mask)
    addr = lv.addr
    separable = not addr.is_full and (m.shape[0] == 1 or m.shape[1] == 1)
    if shortcuts and separable and nb > 1:
        b = np.broadcast_to(addr.b.reshape(-1, 1), (nb, 1))
        key = b % CLASS_MODULUS
        if m.shape[0] == nb and m.shape[1] == 1 and nb > 1:
            key = key + CLASS_MODULUS * m.astype(np.int64)
        _, first, inverse = np.unique(key.reshape(-1), return_index=True, return_inverse=True)
        t = addr.t if addr.t is not None else np.zeros((1, nt), np.int64)
        rep_addr = b[first] + np.broadcast_to(t, (1, nt))
        rep_mask = np.broadcast_to(m[first] if m.shape[0] == nb and nb > 1 else m, (len(first), nt))
        inv = inverse.reshape(-1)
        return tuple(x[inv] for x in count_addresses(space, size, rep_addr, rep_mask, nw, is_load))
    full_addr = np.broadcast_to(addr.natural(), (nb, nt))
    full_mask = np.broadcast_to(m, (nb, nt))
    return count_addresses(space, size, full_addr, full_mask, nw, is_load)
