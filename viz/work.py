"""How much work a scenario's whole-launch analysis is, known before it starts.

``viz.engine.analyze`` evaluates every warp instruction over every thread of the launch,
chunk by chunk (``CHUNK_THREADS`` threads at a time). Its cost depends on the launch, the
number of instructions and the expressions, and on which of its two paths an instruction
takes (module docstring of ``viz.engine``): an address of the form ``block_part +
thread_part`` whose active lanes do not mix blocks and threads is counted once per distinct
``block_part mod 128`` and scattered to the blocks; anything else is counted lane by lane.

``estimate`` follows the same rules without evaluating anything (the form of each
expression, ``viz.lanes.lane_form``, is read off its tree), in *lane operations* (about
3.5 ns each on a 2-core 2026 development machine: ``benchmarks/bench_work.py``).
A scenario above ``MAX_WORK`` is refused when it is loaded, with the key to change, so no
file can keep a command busy for minutes or fill the memory with per-warp results.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

from .gpus import BANK_ROW_BYTES, LINE_BYTES

from .expr import Binary, Call, Node, Num, walk
from .lanes import lane_form

CHUNK_THREADS = 1 << 21   # threads the engine materialises at once on its full path
CLASS_MODULUS = math.lcm(BANK_ROW_BYTES, LINE_BYTES)   # 32 banks x 4 bytes = one 128-byte line = 4 sectors (viz.gpus)

MAX_WORK = 2_000_000_000  # lane operations one analysis may take (about 7 s here)
CHUNK = 150_000           # the fixed cost of one chunk of one instruction (Python and numpy calls)
COUNT = 25                # counting one lane: banks or sectors, bounds, alignment
CELL = 4                  # one (block, warp) entry of an instruction's per-warp results
REV_BIT = 16              # rev(x, bits) loops over the bits, about 7 whole-grid operations (12 ns a lane) each
BOX_ROW = 4               # tma.load: one row of the box, per block

_FAULTING = ("/", "%", "<<", ">>")


def node_cost(tree: Node | None) -> int:
    """Lane operations per lane to evaluate ``tree``: each node 1, a rev() ``REV_BIT`` per bit
    (its width if a literal, else the most, 62)."""
    if tree is None:
        return 0
    cost = 0
    for n in walk(tree):
        if isinstance(n, Call) and n.func == "rev":
            bits = n.args[1].value if isinstance(n.args[1], Num) and 0 <= n.args[1].value <= 62 else 62
            cost += 1 + REV_BIT * bits
        else:
            cost += 1
    return cost


def may_fault(tree: Node | None) -> bool:
    """Whether evaluating ``tree`` can fault on some lane (a division, a shift or a rev whose
    right side is not a literal that is safe): a fault's lanes are a whole-grid mask."""
    if tree is None:
        return False
    for n in walk(tree):
        if isinstance(n, Call) and n.func == "rev":
            if not (isinstance(n.args[1], Num) and 0 <= n.args[1].value <= 62):
                return True
        elif isinstance(n, Binary) and n.op in _FAULTING:
            r = n.right
            if not isinstance(r, Num) or (r.value == 0 if n.op in ("/", "%") else not 0 <= r.value <= 63):
                return True
    return False


_THREAD_NAMES = ("threadIdx.x", "threadIdx.y", "threadIdx.z", "tid", "lane", "warp")
_BLOCK_NAMES = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
LAUNCH_FORMS = {**{n: "T" for n in _THREAD_NAMES}, **{n: "B" for n in _BLOCK_NAMES}}


@dataclass(frozen=True)
class Work:
    """An analysis' estimated cost: ``total`` lane operations of ``instructions`` warp
    instructions (per thread) over ``blocks`` blocks; of it, at most ``counted`` lanes go
    through the counting functions and ``chunks`` chunks are evaluated (the tests hold the
    engine to these bounds)."""

    total: int
    instructions: int
    blocks: int
    counted: int = 0
    chunks: int = 0


def _access_cost(sc, a, blocks: int) -> tuple[int, int, int]:
    """(lane operations, lanes counted, chunks evaluated) of one warp instruction of access
    ``a`` over ``blocks`` blocks."""
    launch = sc.launch
    nt, nw = launch.threads_per_block, launch.warps_per_block
    per_chunk = max(1, CHUNK_THREADS // nt)
    chunks = -(-blocks // per_chunk)
    lanes = blocks * nt
    cells = blocks * nw
    arr = sc.array(a.array)
    trees = [*a.indices, a.when, arr.layout]
    if a.source is not None:            # cp.async's global side, the TMA's box origin
        trees += [*a.source.indices, a.source.when, sc.array(a.source.array).layout]
    nodes = sum(node_cost(t) for t in trees)
    base = chunks * CHUNK + cells * CELL
    if a.op not in ("load", "store"):        # the kinds (viz.kinds, above this layer): counted lane by lane
        extra = blocks * BOX_ROW * a.option("box", (0, 0))[0]    # a tma.load's box rows (no other kind has a box)
        sides = 2 if a.source is not None else 1
        return base + sides * lanes * (COUNT + nodes) + extra, sides * lanes, sides * chunks
    forms = dict(LAUNCH_FORMS)
    index_forms = [lane_form(t, forms) for t in a.indices]
    forms["col"] = index_forms[-1]
    if len(index_forms) == 2:
        forms["row"] = index_forms[0]
    elem = lane_form(arr.layout, forms)
    if a.when is not None:
        mask = lane_form(a.when, LAUNCH_FORMS)
    else:
        mask = "T" if a.matrix is not None else "C"
    if blocks > 1 and elem != "F" and mask in ("C", "B", "T"):      # the residue shortcut
        counted = min(blocks, 2 * CLASS_MODULUS * chunks) * nt     # one block per residue (and mask) per chunk
        node_lanes = lanes if any(may_fault(t) for t in trees) else blocks + nt * chunks
        return base + counted * COUNT + node_lanes * nodes, counted, chunks
    return base + lanes * (COUNT + nodes), lanes, chunks


def instruction_counts(sc) -> list[int]:
    """Warp instructions per thread of each access: its loop points times its parts."""
    return [(len(sc.loop_points(a)) if a.loops else 1) * len(a.parts) for a in sc.accesses]


def estimate(sc, blocks: int | None = None, counts: list[int] | None = None) -> Work:
    """The cost of ``viz.engine.analyze(sc)`` (over ``blocks`` blocks instead of the launch's;
    ``counts``: ``instruction_counts(sc)`` if known)."""
    nblocks = sc.launch.blocks if blocks is None else blocks
    counts = instruction_counts(sc) if counts is None else counts
    total = counted = chunks = 0
    for a, n in zip(sc.accesses, counts):
        cost, lanes, evaluated = _access_cost(sc, a, nblocks)
        total, counted, chunks = total + n * cost, counted + n * lanes, chunks + n * evaluated
    return Work(total, sum(counts), nblocks, counted, chunks)


def blocks_within(sc, budget: int = MAX_WORK, counts: list[int] | None = None) -> int:
    """The most blocks (0 if not even one) whose analysis stays within ``budget``."""
    counts = instruction_counts(sc) if counts is None else counts
    lo, hi = 0, sc.launch.blocks
    while lo < hi:                      # the cost grows with the blocks
        mid = (lo + hi + 1) // 2
        if estimate(sc, mid, counts).total <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


__all__ = ["MAX_WORK", "CHUNK_THREADS", "CLASS_MODULUS", "Work", "estimate", "blocks_within", "node_cost",
           "may_fault", "instruction_counts"]
