"""What a generated kernel leaves in global memory, computed on the CPU with numpy.

The generated kernel (``viz.gpu.codegen``) gives every thread a 16-byte *carry*: a load
puts the bytes it read into the carry, a store writes the carry's bytes. Running the
same program here over every thread of the launch (at R = 1) predicts the output
buffer byte for byte, so a copy is checked as a copy, a transpose as a transpose, and
any scenario's addresses are checked against the GPU's (a wrong address writes a wrong
place).

Only what is determined is compared. A byte is *unknown* when two threads write it
between the same barriers (shared) or in the same launch (global), when a thread reads a
byte that another thread writes in that span (a race in the scenario's program), or
when it came from such a byte or from a carry no load had filled. Unknown bytes are
skipped, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import evaluate_instruction
from ..scenario import KIND_OPS, Instruction, Scenario, loop_points
from .codegen import carry_pos, plan_groups

MAX_WORK = 60_000_000  # threads x instructions x bytes beyond which the check is skipped


@dataclass
class Prediction:
    """The expected global buffer (one replica) and which of its bytes are determined."""

    data: np.ndarray      # uint8, the global footprint
    known: np.ndarray     # bool, same shape
    written: np.ndarray   # bool: some store of the launch writes this byte

    @property
    def checked_bytes(self) -> int:
        return int((self.known & self.written).sum())


@dataclass
class CheckResult:
    status: str           # "passed" | "failed" | "not determined" | "skipped"
    detail: str
    checked_bytes: int = 0
    wrong_bytes: int = 0

    def as_dict(self) -> dict:
        return {"status": self.status, "detail": self.detail, "checked_bytes": self.checked_bytes,
                "wrong_bytes": self.wrong_bytes}


def _program(sc: Scenario):
    """(group index, instruction) in the generated kernel's order."""
    number = 0
    for g_index, g in enumerate(plan_groups(sc)):
        for pt in loop_points(sc, g.accesses[0]):
            loop = tuple(pt.items())
            for a in g.accesses:
                for p, (off, size) in enumerate(a.parts):
                    yield g_index, a, Instruction(number, a.index, loop, p, off, size)
                    number += 1


def global_footprint(sc: Scenario) -> int:
    return max((a.start + a.footprint for a in sc.arrays if a.space == "global"), default=0)


def work_estimate(sc: Scenario) -> int:
    from ..scenario import expand_instructions

    return sc.launch.threads * sum(ins.size for ins in expand_instructions(sc))


def predict(sc: Scenario, initial: np.ndarray) -> Prediction:
    """Run the generated kernel's program on the CPU from ``initial`` global bytes."""
    nb, tpb = sc.launch.blocks, sc.launch.threads_per_block
    blocks = np.arange(nb, dtype=np.int64)
    threads = np.arange(tpb, dtype=np.int64)
    gid = (blocks.reshape(-1, 1) * tpb + threads.reshape(1, -1))          # (nb, tpb)
    gmem = initial.astype(np.uint8).copy()
    gknown = np.ones(gmem.shape, bool)
    gwritten = np.zeros(gmem.shape, bool)
    sbytes = max(sc.shared_bytes, 1)
    smem = np.zeros((nb, sbytes), np.uint8)
    sknown = np.zeros((nb, sbytes), bool)
    carry = np.zeros((nb, tpb, 16), np.uint8)
    cknown = np.zeros((nb, tpb, 16), bool)
    program = list(_program(sc))
    evaluated = {}

    def lanes(ins: Instruction):
        key = (ins.access, ins.loop, ins.part)
        if key not in evaluated:
            lv = evaluate_instruction(sc, ins, blocks, threads)
            addr = np.broadcast_to(lv.addr.full((nb, tpb)), (nb, tpb))
            mask = np.broadcast_to(lv.mask, (nb, tpb))
            evaluated[key] = (addr, mask)
        return evaluated[key]

    # Writers of every global byte over the launch, and of every shared byte per group.
    NONE, MANY = -1, -2
    g_writer = np.full(gmem.shape, NONE, np.int64)
    s_writer: dict[int, np.ndarray] = {}
    for g_index, a, ins in program:
        if a.op != "store":
            continue
        arr = sc.array(a.array)
        addr, mask = lanes(ins)
        if arr.space == "global":
            _note_writers(g_writer, addr[mask], gid[mask], ins.size, NONE, MANY)
        else:
            w = s_writer.setdefault(g_index, np.full((nb, sbytes), NONE, np.int64))
            bidx = np.broadcast_to(blocks.reshape(-1, 1), (nb, tpb))
            flat = bidx[mask] * sbytes + addr[mask]
            _note_writers(w.reshape(-1), flat, gid[mask], ins.size, NONE, MANY)
    for g_index, a, ins in program:
        arr = sc.array(a.array)
        addr, mask = lanes(ins)
        pos = carry_pos(a, ins.byte_offset, ins.size)
        bi, ti = np.nonzero(mask)
        base = addr[bi, ti]
        me = gid[bi, ti]
        for k in range(ins.size):
            at = base + k
            if arr.space == "global":
                if a.op == "load":
                    w = g_writer[at]
                    ok = gknown[at] & ((w == NONE) | (w == me))
                    carry[bi, ti, pos + k] = gmem[at]
                    cknown[bi, ti, pos + k] = ok
                else:
                    w = g_writer[at]
                    gmem[at] = carry[bi, ti, pos + k]
                    gknown[at] = cknown[bi, ti, pos + k] & (w != MANY)
                    gwritten[at] = True
            else:
                flat = bi * sbytes + at
                w = s_writer.get(g_index)
                wv = w.reshape(-1)[flat] if w is not None else np.full(flat.shape, NONE)
                if a.op == "load":
                    ok = sknown.reshape(-1)[flat] & ((wv == NONE) | (wv == me))
                    carry[bi, ti, pos + k] = smem.reshape(-1)[flat]
                    cknown[bi, ti, pos + k] = ok
                else:
                    smem.reshape(-1)[flat] = carry[bi, ti, pos + k]
                    sknown.reshape(-1)[flat] = cknown[bi, ti, pos + k] & (wv != MANY)
    return Prediction(gmem, gknown, gwritten)


def _note_writers(writer: np.ndarray, addr: np.ndarray, who: np.ndarray, size: int, none: int, many: int):
    """Record who writes each byte; a byte written by two different threads becomes MANY."""
    for k in range(size):
        at = (addr + k).reshape(-1)
        ids = who.reshape(-1)
        if at.size == 0:
            continue
        order = np.lexsort((ids, at))
        at_s, id_s = at[order], ids[order]
        first = np.ones(at_s.shape, bool)
        first[1:] = at_s[1:] != at_s[:-1]
        # Distinct writers per address within this instruction.
        uniq_at = at_s[first]
        starts = np.nonzero(first)[0]
        ends = np.append(starts[1:], at_s.size)
        lo = id_s[starts]
        hi = id_s[ends - 1]
        multi = lo != hi
        prev = writer[uniq_at]
        new = np.where(multi, many, lo)
        merged = np.where(prev == none, new, np.where((prev == many) | (new == many) | (prev != new), many, prev))
        writer[uniq_at] = merged


def check(sc: Scenario, initial: np.ndarray, result: np.ndarray) -> CheckResult:
    """Compare the GPU's global buffer after one launch with the prediction."""
    if any(a.op in KIND_OPS for a in sc.accesses):
        return CheckResult("not determined", "the result check does not simulate cp.async, atomics or TMA "
                           "copies (their counters are checked by warpviz validate)")
    if not any(a.op == "store" and sc.array(a.array).space == "global" for a in sc.accesses):
        return CheckResult("not determined", "the scenario stores nothing to global memory")
    if work_estimate(sc) > MAX_WORK:
        return CheckResult("skipped", "too large to simulate on the CPU")
    pred = predict(sc, initial)
    sel = pred.known & pred.written
    n = int(sel.sum())
    if n == 0:
        return CheckResult("not determined", "every stored byte depends on a race between threads "
                           "or on a value no load provided")
    wrong = sel & (result != pred.data)
    nw = int(wrong.sum())
    if nw:
        at = int(np.argmax(wrong))
        where = _describe_byte(sc, at)
        return CheckResult("failed", f"{nw} of {n} determined bytes differ; first at {where}: "
                           f"GPU {int(result[at])}, expected {int(pred.data[at])}", n, nw)
    return CheckResult("passed", f"all {n} determined output bytes equal the prediction", n, 0)


def _describe_byte(sc: Scenario, at: int) -> str:
    for a in sc.arrays:
        if a.space == "global" and a.start <= at < a.start + a.footprint:
            rel = at - a.base
            if rel < 0:
                return f"{a.name}, {-rel} bytes before element 0"
            elem, byte = divmod(rel, a.type.size)
            if len(a.shape) == 2:
                return f"{a.name} element offset {elem} (row {elem // a.row_pitch}), byte {byte}"
            return f"{a.name}[{elem}] byte {byte}"
    return f"byte {at}"


__all__ = ["predict", "check", "Prediction", "CheckResult", "global_footprint"]
