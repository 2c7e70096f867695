"""The current access as written, with one lane's values filled in (no Qt).

``tile[threadIdx.x][threadIdx.y + j]`` for lane 5 of warp 1, j = 8 reads
``tile[5][1 + 8]  ->  tile[5][9]  ->  element 174, byte 696, bank 14``.
"""

from __future__ import annotations

import re

from ..frames import access_op
from ..i18n import sep, tr
from ..warp import WarpDetail


def lane_values(detail: WarpDetail, lane: int) -> dict[str, int]:
    """Every name an expression may use, with its value for ``lane``."""
    ln = detail.lanes[lane]
    sc = detail.scenario
    tx, ty, tz = ln.thread
    values = {f"threadIdx.{a}": v for a, v in zip("xyz", (tx, ty, tz))}
    values.update({f"blockIdx.{a}": v for a, v in zip("xyz", detail.block_xyz)})
    values.update({f"blockDim.{a}": v for a, v in zip("xyz", sc.launch.block)})
    values.update({f"gridDim.{a}": v for a, v in zip("xyz", sc.launch.grid)})
    values.update(tid=ln.tid, lane=ln.lane, warp=detail.warp)
    values.update(dict(sc.params))
    values.update(dict(detail.instruction.loop))
    return values


def filled(text: str, values: dict[str, int]) -> str:
    """``text`` with each name replaced by its value (longest names first, whole words only)."""
    names = sorted(values, key=len, reverse=True)
    rx = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?![\w])")
    return rx.sub(lambda m: str(values[m.group(1)]), text)


def op_label(a) -> str:
    """What the access does, by its kind: ``ldmatrix.x4`` / ``stmatrix.x2.trans`` as written
    (not the "load" / "store" it counts as), else the op in the interface language."""
    return access_op(a)


def source_line(detail: WarpDetail, lane: int) -> str:
    """One line: the access, its values for ``lane``, the result and where it lands."""
    a = detail.access
    ln = detail.lanes[lane]
    head = f"{op_label(a)} {a.text}"
    if detail.instruction.loop:
        head += "   " + sep(" (").strip() + detail.instruction.loop_text() + sep(")")
    if not ln.exists:
        return head + "   " + tr("lane {lane}: no such thread (partial warp)", lane=lane)
    tx, ty, tz = ln.thread
    who = tr("lane {lane}, thread ({x},{y},{z})", lane=lane, x=tx, y=ty, z=tz)
    m = re.fullmatch(r"\s*(\w+)\s*(\[.*\])\s*(\.\w+)?\s*", a.text)
    body = filled(m.group(2), lane_values(detail, lane)) if m else filled(a.text, lane_values(detail, lane))
    field = m.group(3) or "" if m else ""
    result = a.array + "".join(f"[{v}]" for v in ln.indices) + field
    shown = f"{a.array}{body}{field}" if m else body     # a whole-array operand (a TMA tile): just its name
    if not ln.active:
        return f"{head}   |   {who}{sep(': ')}{shown}  ->  " + tr("inactive (when is false)")
    where = tr("element {e}, byte {b}", e=ln.elem, b=address_text(ln.byte_addr))
    if detail.space == "shared":
        if ln.banks:
            where += sep(", ") + tr("bank {bank}", bank=", ".join(str(b) for b in ln.banks))
    else:
        where += sep(", ") + global_place(detail, ln)
    steps = [shown] + ([result] if result != shown else [])
    return f"{head}   |   {who}{sep(': ')}" + "  ->  ".join(steps + [where])


def trace_source_line(detail: WarpDetail, lane: int) -> str:
    """A recorded trace's line: the CUDA source line, then ``lane``'s recorded address and
    where it landed (a trace records addresses, not the expression's values)."""
    a = detail.access
    head = f"{op_label(a)} {a.text}"
    ln = detail.lanes[lane]
    if not ln.exists:
        return head + "   " + tr("lane {lane}: no such thread (partial warp)", lane=lane)
    tx, ty, tz = ln.thread
    who = tr("lane {lane}, thread ({x},{y},{z})", lane=lane, x=tx, y=ty, z=tz)
    if not ln.active:
        return f"{head}   |   {who}{sep(': ')}" + tr("not active in this execution")
    where = tr("byte {b}", b=address_text(ln.byte_addr))
    if detail.space == "shared":
        if ln.banks:
            where += sep(", ") + tr("bank {bank}", bank=", ".join(str(b) for b in ln.banks))
    else:
        where += sep(", ") + global_place(detail, ln)
    return f"{head}   |   {who}{sep(': ')}{where}"


def address_text(a: int) -> str:
    """A byte address as the picture writes it (``viz.render.global_view``): hexadecimal for a
    traced kernel's device addresses (from 10**7 up), decimal for an array's small offsets."""
    return f"0x{a:x}" if a >= 10 ** 7 else str(a)


def global_place(detail: WarpDetail, ln) -> str:
    """Where a lane's global bytes land, in the picture's words: the line by its first byte and
    which of the request's lines it is, and the sector of that line (0-3)."""
    k, n = detail.lines.index(ln.line) + 1, len(detail.lines)
    return (tr("line at byte {a}", a=address_text(ln.line * 128)) + f" ({k}/{n})" + sep(", ")
            + tr("sector {k}", k=ln.sector % 4))
