"""Layouts: where element (row, col) of a 2-D array lives, as expression trees.

A layout is a pure function from coordinates to an element offset. Each swizzle of the
contract is written as a tree over the names ``row`` and ``col`` (and ``o``, the linear
offset, for CuTe), so one definition serves the vectorised analysis, the single-warp
view, the bijection check and the generated CUDA kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .errors import WarpvizError
from .i18n import sep, tr
from .expr import Binary, Name, Node, Num, Call, parse, names as expr_names

SWIZZLE_KINDS = ("none", "xor", "xor:K", "diagonal", "bitrev", "bitrev-xor", "cute:B,M,S", "Sw<B,M,S>",
                 "tma:32B", "tma:64B", "tma:128B", "expr:EXPR")
TMA_SWIZZLES = {"tma:32B": (1, 32), "tma:64B": (2, 64), "tma:128B": (3, 128)}   # B bits, span in bytes


class LayoutError(WarpvizError, ValueError):
    def __init__(self, problem: str, fix: str = ""):
        self.problem, self.fix = problem, fix
        super().__init__(problem + (f"{sep('. ')}{fix}" if fix else ""))


@dataclass(frozen=True)
class Swizzle:
    """A parsed swizzle: ``kind`` and its tree for the physical column (or offset)."""

    text: str
    kind: str
    column: Node | None  # physical column over row, col (None for "none" and cute)
    cute: tuple[int, int, int] | None = None
    tree: Node | None = None   # the whole element offset (an array's ``layout``, see viz.layout_text)

    @property
    def is_identity(self) -> bool:
        return self.kind == "none"


def _b(op, a, b):
    return Binary(op, a, b)


ROW, COL, OFF = Name("row"), Name("col"), Name("o")


def _log2(c: int) -> int:
    return c.bit_length() - 1


def parse_swizzle(text: str, cols: int | None, params: dict[str, int], elem_size: int | None = None) -> Swizzle:
    """Parse a swizzle spec of the contract's table for rows of ``cols`` columns (of
    ``elem_size``-byte elements: the tma: swizzles act on bytes)."""
    if not isinstance(text, str):
        raise LayoutError(tr("swizzle must be a string, not {type}", type=type(text).__name__),
                          tr("use one of: {names}", names=', '.join(SWIZZLE_KINDS)))
    spec = text.strip()
    if spec == "none":
        return Swizzle(spec, "none", None)
    sw = re.fullmatch(r"(?:Sw|Swizzle)\s*<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>", spec)
    if sw or spec.startswith("cute:"):
        try:
            b, m, s = (int(x) for x in (sw.groups() if sw else spec[5:].split(",")))
        except ValueError:
            raise LayoutError(tr("swizzle {spec!r}: cute needs three integers B,M,S", spec=spec),
                              tr("e.g. \"cute:5,0,5\" for CuTe Swizzle<5,0,5>")) from None
        if not (0 <= b <= 16 and 0 <= m <= 30 and 0 <= s <= 30) or (s < b and b > 0):
            raise LayoutError(tr("swizzle {spec!r}: CuTe Swizzle<B,M,S> needs 0<=B<=16, 0<=M,S<=30 and S>=B",
                                 spec=spec),
                              tr("e.g. cute:5,0,5 (32 columns of 4-byte words) or cute:3,2,3"))
        return Swizzle(spec, "cute", None, (b, m, s))
    if spec in TMA_SWIZZLES:
        return _tma(spec, cols, elem_size)
    if spec.lower().startswith("tma:"):
        raise LayoutError(f"unknown swizzle {spec!r}", "the TMA swizzles are tma:32B, tma:64B and tma:128B")
    if cols is None:
        raise LayoutError(tr("swizzle {spec!r} needs a 2-D array (its rows are what it permutes)", spec=spec),
                          tr("give the array shape = [ROWS, COLS], or use a cute: swizzle on a 1-D array"))
    if spec.startswith("expr:"):
        tree = parse(spec[5:])
        unknown = expr_names(tree) - {"row", "col"} - set(params)
        if unknown:
            raise LayoutError(tr("swizzle {spec!r} uses unknown name(s) {names}", spec=spec,
                                 names=', '.join(sorted(unknown))),
                              tr("an expr: swizzle may use row, col and the params"))
        return Swizzle(spec, "expr", tree)
    pow2 = cols > 0 and cols & (cols - 1) == 0
    if spec in ("xor", "bitrev", "bitrev-xor") or spec.startswith("xor:"):
        if not pow2:
            raise LayoutError(tr("swizzle {spec!r} needs a power-of-two number of columns, not {cols}", spec=spec,
                                 cols=cols),
                              tr("use pad, diagonal or an expr: swizzle for other widths"))
    bits = _log2(cols) if cols > 0 else 0
    row_mod = _b("%", ROW, Num(cols))
    if spec == "xor":
        return Swizzle(spec, "xor", _b("^", COL, row_mod))
    if spec.startswith("xor:"):
        try:
            k = int(spec[4:], 0)
        except ValueError:
            raise LayoutError(tr("swizzle {spec!r}: the mask after xor: must be an integer", spec=spec),
                              tr("e.g. \"xor:4\"")) from None
        if not 0 <= k < cols:
            raise LayoutError(tr("swizzle {spec!r}: mask {k} must be between 0 and {last}", spec=spec, k=k,
                                 last=cols - 1))
        return Swizzle(spec, "xor", _b("^", COL, Num(k)))
    if spec == "diagonal":
        return Swizzle(spec, "diagonal", _b("%", _b("+", COL, ROW), Num(cols)))
    if spec == "bitrev":
        return Swizzle(spec, "bitrev", Call("rev", (COL, Num(bits))))
    if spec == "bitrev-xor":
        return Swizzle(spec, "bitrev-xor", _b("^", COL, Call("rev", (row_mod, Num(bits)))))
    raise LayoutError(tr("unknown swizzle {spec!r}", spec=spec), tr("use one of: {names}",
                                                                    names=', '.join(SWIZZLE_KINDS)))


def _tma(spec: str, cols: int | None, elem_size: int | None) -> Swizzle:
    """The tensor-memory accelerator's swizzle: CuTe Swizzle<B,4,3> on the byte offset, on
    rows exactly the swizzle's span; in elements, Swizzle<B, 4 - log2(size), 3>."""
    bits, span = TMA_SWIZZLES[spec]
    if cols is None or elem_size is None:
        raise LayoutError(f"swizzle {spec!r} needs a 2-D array whose rows are {span} bytes",
                          f"give shape = [ROWS, {span} / element size]")
    if elem_size not in (1, 2, 4, 8, 16):
        raise LayoutError(f"swizzle {spec!r} moves 16-byte chunks; a {elem_size}-byte element does not fit them",
                          "use an element of 1, 2, 4, 8 or 16 bytes")
    if cols * elem_size != span:
        raise LayoutError(f"swizzle {spec!r} needs rows of {span} bytes ({span // elem_size} elements), "
                          f"not {cols * elem_size}", f"make the array's shape [ROWS, {span // elem_size}]")
    return Swizzle(spec, "cute", None, (bits, 4 - _log2(elem_size), 3))


def layout_swizzle(text: str, tree: Node) -> Swizzle:
    """An array's ``layout`` (CuTe or Triton text, see viz.layout_text) as its whole offset tree."""
    return Swizzle(text, "layout", None, tree=tree)


def offset_tree(swizzle: Swizzle, cols: int | None, pad: int) -> Node:
    """Element offset as a tree over ``row`` and ``col`` (``col`` alone for 1-D)."""
    if swizzle.tree is not None:
        return swizzle.tree
    if cols is None:
        linear: Node = COL
    else:
        phys = swizzle.column if swizzle.column is not None else COL
        linear = _b("+", _b("*", ROW, Num(cols + pad)), phys)
    if swizzle.cute is not None:
        b, m, s = swizzle.cute
        mask = ((1 << b) - 1) << m
        # CuTe Swizzle<B,M,S>: o ^ ((o >> S) & (((1<<B)-1) << M))
        return _cute(linear, mask, s)
    return linear


def _cute(o: Node, mask: int, s: int) -> Node:
    return _b("^", o, _b("&", _b(">>", o, Num(s)), Num(mask)))


def check_bijection(swizzle: Swizzle, rows: int, cols: int | None, pad: int,
                    params: dict[str, int]) -> None:
    """Each row's columns must land on distinct places inside the row (the whole array for
    CuTe, which permutes linear offsets); otherwise name two colliding columns."""
    from .lanes import Evaluator, Lanes, Space

    if swizzle.is_identity or swizzle.tree is not None:
        return  # an array's layout is checked by viz.layout_text.check
    ncols = cols if cols is not None else 1
    nrows = rows if cols is not None else 1
    total_cols = cols if cols is not None else rows
    if nrows * total_cols > 1 << 24:
        return  # too large to enumerate; the per-lane bounds check still guards accesses
    r = np.arange(nrows, dtype=np.int64).reshape(-1, 1)
    c = np.arange(total_cols, dtype=np.int64).reshape(1, -1)
    space = Space({"row": Lanes(b=r), "col": Lanes(t=c),
                   **{k: Lanes.const(v) for k, v in params.items()}}, (nrows, total_cols))
    tree = offset_tree(swizzle, cols, pad)
    value, faults = Evaluator(space).evaluate(tree)
    if faults:
        raise LayoutError(tr("swizzle {text!r}: {problem}", text=swizzle.text, problem=faults[0].problem))
    off = np.array(value.full((nrows, total_cols)))
    width = (cols + pad) if cols is not None else None
    if swizzle.kind != "cute" and cols is not None:
        phys = off - r * width
        bad = (phys < 0) | (phys >= width)
        if bad.any():
            i, j = map(int, np.argwhere(bad)[0])
            raise LayoutError(tr("swizzle {text!r} sends row {i}, column {j} to physical column {to}, outside "
                                 "0..{last}", text=swizzle.text, i=i, j=j, to=int(phys[i, j]), last=width - 1),
                              tr("the physical column must stay inside the row"))
        for i in range(nrows):
            _first_collision(phys[i], lambda a, b, i=i: tr("row {i}: columns {a} and {b}", i=i, a=a, b=b), swizzle)
    else:
        flat = off.reshape(-1)
        limit = nrows * (width if width else total_cols)
        bad = (flat < 0) | (flat >= limit)
        if bad.any():
            k = int(np.argmax(bad))
            raise LayoutError(tr("swizzle {text!r} sends element {element} to offset {to}, outside the array "
                                 "(0..{last})", text=swizzle.text, element=_rc(k, total_cols, cols), to=int(flat[k]),
                                 last=limit - 1),
                              tr("choose B, M, S so that the swizzle stays inside the array"))
        _first_collision(flat, lambda a, b: tr("{a} and {b}", a=_rc(a, total_cols, cols), b=_rc(b, total_cols, cols)),
                         swizzle)


def _rc(k: int, total_cols: int, cols: int | None) -> str:
    return tr("(row {row}, column {col})", row=k // total_cols, col=k % total_cols) if cols is not None else \
        tr("element {k}", k=k)


def _first_collision(values: np.ndarray, name, swizzle: Swizzle) -> None:
    order = np.argsort(values, kind="stable")
    s = values[order]
    dup = np.nonzero(s[1:] == s[:-1])[0]
    if dup.size:
        a, b = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise LayoutError(tr("swizzle {text!r} is not a bijection: {what} both land on {to}", text=swizzle.text,
                             what=name(a, b), to=int(s[dup[0]])),
                          tr("a swizzle must send every column of a row to a different place"))
