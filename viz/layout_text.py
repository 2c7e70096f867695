"""Layouts as their authors write them: CuTe layouts and Triton shared layouts.

An array's ``layout`` in a scenario may be written the way CUTLASS/CuTe or Triton print it:

- CuTe: ``(8,(4,16)):(64,(16,1))`` - a hierarchical shape and a congruent stride; the
  logical coordinate of each mode is split colexicographically over its sub-shape and the
  offset is the inner product with the strides. A swizzle may be composed in front,
  ``Sw<3,3,3> o (8,64):(64,1)`` (CuTe's ``Swizzle<B,M,S>``: the B bits at [M+S, M+S+B) are
  XOR-ed into [M, M+B) of the element offset), optionally with CuTe's printed offset
  ``Sw<3,3,3> o _0 o (8,64):(64,1)``. ``_N`` (CuTe's static integers) reads as N. A shape
  without strides gets CuTe's default, column-major (``LayoutLeft``) strides.
- Triton: ``SwizzledSharedLayout(vec, perPhase, maxPhase, order)`` (also with keywords,
  or as the IR's ``#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>``):
  phase = (row / perPhase) % maxPhase and the column becomes col ^ ((vec * phase) % C),
  which is Triton's ``((col / vec) ^ phase) * vec + col % vec`` whenever vec * maxPhase <= C.
  ``NVMMASharedLayout(128)`` (32, 64 or 128-byte swizzle, ``transposed``,
  ``element_bitwidth``) is the swizzled layout with vec = 16 B / element, perPhase =
  128 / swizzle bytes, maxPhase = swizzle bytes / 16, on rows of exactly the swizzle's width.

Each parses into the project's expression tree (``viz.expr``) over ``row`` and ``col``
(``col`` alone for a 1-D array), so the analysis, the single-warp view, the bijection
check and the generated CUDA kernel all use it unchanged. Nothing here imports Qt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

import numpy as np

from .expr import Binary, Name, Node, Num
from .layout import LayoutError

Tree = Union[int, tuple]          # a CuTe int-tuple: an int or a tuple of int-tuples
ROW, COL = Name("row"), Name("col")
MAX_ENUMERATE = 1 << 22           # elements a layout is checked over (bijection, bounds)


@dataclass(frozen=True)
class CuteSwizzle:
    """CuTe ``Swizzle<B,M,S>`` on an integer offset."""

    b: int
    m: int
    s: int

    def __call__(self, o):
        bit_mask = (1 << self.b) - 1
        if self.s >= 0:
            return o ^ ((o >> self.s) & (bit_mask << self.m))
        return o ^ ((o & (bit_mask << self.m)) << -self.s)

    def tree(self, o: Node) -> Node:
        bit_mask = (1 << self.b) - 1
        if self.b == 0:
            return o
        if self.s >= 0:
            moved = _bin("&", _bin(">>", o, Num(self.s)), Num(bit_mask << self.m))
        else:
            moved = _bin("<<", _bin("&", o, Num(bit_mask << self.m)), Num(-self.s))
        return _bin("^", o, moved)

    def text(self) -> str:
        return f"Sw<{self.b},{self.m},{self.s}>"


@dataclass(frozen=True)
class AuthoredLayout:
    """A parsed layout: its text, kind, logical extents (None where the array gives them)
    and what it needs to become a tree over ``row``/``col``."""

    text: str
    kind: str                          # "cute" | "triton" | "nvmma"
    shape: Tree | None = None          # CuTe shape (hierarchical)
    stride: Tree | None = None
    swizzle: CuteSwizzle | None = None
    offset: int = 0
    vec: int = 1                       # Triton swizzled parameters
    per_phase: int = 1
    max_phase: int = 1
    order: tuple[int, int] = (1, 0)
    swizzle_bytes: int = 0             # NVMMA
    element_bits: int | None = None

    # -- logical extents --------------------------------------------------

    @property
    def rank(self) -> int | None:
        if self.kind != "cute":
            return 2
        return len(self.shape) if isinstance(self.shape, tuple) else 1

    def extents(self) -> tuple[int, ...] | None:
        """The array shape this layout implies (CuTe), or None (Triton: the array says)."""
        if self.kind != "cute":
            return None
        if isinstance(self.shape, tuple):
            if len(self.shape) == 1:
                return (size(self.shape),)
            return tuple(size(m) for m in self.shape)
        return (self.shape,)

    def is_bijection_claimed(self) -> bool:
        """Triton's and NVMMA's layouts are permutations by construction; a CuTe layout is
        one when its strides make it injective (checked by ``check``)."""
        return self.kind != "cute"

    # -- trees --------------------------------------------------------------

    def tree(self, extents: tuple[int, ...], elem_size: int) -> Node:
        """Element offset as a tree over ``row``, ``col`` (``col`` alone for 1-D)."""
        if self.kind == "cute":
            if len(extents) == 2:
                modes = self.shape if isinstance(self.shape, tuple) else (self.shape,)
                strides = self.stride if isinstance(self.stride, tuple) else (self.stride,)
                o = _add(_mode_tree(ROW, modes[0], strides[0]), _mode_tree(COL, modes[1], strides[1]))
            else:
                o = _mode_tree(COL, self.shape, self.stride)
            if self.offset:
                o = _add(Num(self.offset), o)
            return self.swizzle.tree(o) if self.swizzle else o
        vec, per_phase, max_phase, order = self.swizzled_params(elem_size)
        rows, cols = extents
        inner, outer = (COL, ROW) if order == (1, 0) else (ROW, COL)
        n_inner = cols if order == (1, 0) else rows
        phase = _bin("%", _div(outer, per_phase), Num(max_phase)) if max_phase > 1 else Num(0)
        xor = _bin("%", _mul(phase, vec), Num(n_inner)) if max_phase > 1 else None
        phys = inner if xor is None else _bin("^", inner, xor)
        return _add(_mul(outer, n_inner), phys)

    def swizzled_params(self, elem_size: int) -> tuple[int, int, int, tuple[int, int]]:
        if self.kind == "nvmma":
            if self.swizzle_bytes == 0:
                return 1, 1, 1, self.order
            return (max(1, 16 // elem_size), 128 // self.swizzle_bytes, self.swizzle_bytes // 16, self.order)
        return self.vec, self.per_phase, self.max_phase, self.order

    # -- direct evaluation (numpy, for the picture and the checks) -----------

    def evaluate(self, extents: tuple[int, ...], elem_size: int) -> np.ndarray:
        """Every element's offset: an array of ``extents`` (rows x cols, or n)."""
        from .lanes import Evaluator, Lanes, Space

        if len(extents) == 2:
            r = np.arange(extents[0], dtype=np.int64).reshape(-1, 1)
            c = np.arange(extents[1], dtype=np.int64).reshape(1, -1)
            names = {"row": Lanes(b=r), "col": Lanes(t=c)}
            shape = extents
        else:
            names = {"col": Lanes(t=np.arange(extents[0], dtype=np.int64).reshape(1, -1))}
            shape = (1, extents[0])
        value, faults = Evaluator(Space(names, shape)).evaluate(self.tree(extents, elem_size))
        if faults:
            raise LayoutError(f"layout {self.text!r}: {faults[0].problem}")
        return np.array(value.full(shape)).reshape(extents)


# ---------------------------------------------------------------------------- int-tuples


def size(t: Tree) -> int:
    if isinstance(t, tuple):
        out = 1
        for x in t:
            out *= size(x)
        return out
    return t


def flatten(t: Tree) -> list[int]:
    if isinstance(t, tuple):
        return [x for e in t for x in flatten(e)]
    return [t]


def congruent(a: Tree, b: Tree) -> bool:
    if isinstance(a, tuple) != isinstance(b, tuple):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return True


def show(t: Tree) -> str:
    if isinstance(t, tuple):
        return "(" + ",".join(show(x) for x in t) + ")"
    return str(t)


def column_major(t: Tree) -> Tree:
    """CuTe's default (LayoutLeft) strides: the exclusive prefix product, left to right."""
    acc = [1]

    def walk(x):
        if isinstance(x, tuple):
            return tuple(walk(e) for e in x)
        s = acc[0]
        acc[0] *= x
        return s
    return walk(t)


# ---------------------------------------------------------------------------- trees


def _bin(op: str, a: Node, b: Node) -> Node:
    return Binary(op, a, b)


def _add(a: Node, b: Node) -> Node:
    if isinstance(a, Num) and a.value == 0:
        return b
    if isinstance(b, Num) and b.value == 0:
        return a
    return _bin("+", a, b)


def _mul(a: Node, k: int) -> Node:
    if k == 0:
        return Num(0)
    if k == 1:
        return a
    if isinstance(a, Num):
        return Num(a.value * k)
    return _bin("*", a, Num(k))


def _div(a: Node, k: int) -> Node:
    return a if k == 1 else _bin("/", a, Num(k))


def _mode_tree(x: Node, shape: Tree, stride: Tree) -> Node:
    """sum_k ((x / P_k) % s_k) * d_k over the leaves (colexicographic split of x)."""
    leaves = list(zip(flatten(shape), flatten(stride)))
    out: Node = Num(0)
    prefix = 1
    for k, (s, d) in enumerate(leaves):
        last = all(s2 == 1 for s2, _ in leaves[k + 1:])
        if s != 1 and d != 0:
            coord = _div(x, prefix)
            if not last:
                coord = _bin("%", coord, Num(s))
            out = _add(out, _mul(coord, d))
        prefix *= s
    return out


# ---------------------------------------------------------------------------- parsing

_TOKEN = re.compile(r"\s*(?:(?P<num>-?_?\d+)|(?P<word>[A-Za-z_#][\w.#]*)|(?P<op>[(),:<>\[\]{}=]))")


class _Tokens:
    def __init__(self, text: str):
        self.text = text
        self.toks: list[tuple[str, str, int]] = []
        i = 0
        while i < len(text):
            if text[i:].strip() == "":
                break
            m = _TOKEN.match(text, i)
            if not m:
                j = len(text) - len(text[i:].lstrip())
                raise LayoutError(f"layout {text!r}: unexpected {text[j]!r} at column {j + 1}",
                                  _FIX_ALL)
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind), m.start(kind) + 1))
            i = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise LayoutError(f"layout {self.text!r} ends too early", _FIX_ALL)
        self.i += 1
        return tok

    def expect(self, what: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != what:
            got = "the end" if tok is None else repr(tok[1])
            col = f" at column {tok[2]}" if tok else ""
            raise LayoutError(f"layout {self.text!r}: expected {what!r} but found {got}{col}", _FIX_ALL)
        self.i += 1

    def int(self) -> int:
        kind, text, col = self.take()
        if kind == "word" and text in ("true", "false", "True", "False"):
            return int(text.lower() == "true")
        if kind != "num":
            raise LayoutError(f"layout {self.text!r}: expected a number at column {col}, found {text!r}", _FIX_ALL)
        return int(text.replace("_", ""))

    def done(self) -> bool:
        return self.peek() is None


_FIX_ALL = ('write a CuTe layout like "(8,(4,16)):(64,(16,1))" or "Sw<3,3,3> o (8,64):(64,1)", or a Triton '
            'layout like "SwizzledSharedLayout(8, 1, 8, [1, 0])" or "NVMMASharedLayout(128)"')


def parse_layout(text: str) -> AuthoredLayout:
    """Parse CuTe or Triton layout text; raises LayoutError naming the problem and the fix."""
    if not isinstance(text, str):
        raise LayoutError(f"layout must be a string, not {type(text).__name__}", _FIX_ALL)
    spec = text.strip()
    if not spec:
        raise LayoutError("layout is empty", _FIX_ALL)
    if len(spec) > 2000:
        raise LayoutError(f"layout is {len(spec)} characters long, more than the 2000 allowed",
                          "write a shorter layout")
    toks = _Tokens(spec)
    first = toks.peek()
    if first[0] == "word" and _triton_name(first[1]):
        return _parse_triton(toks, spec)
    return _parse_cute(toks, spec)


def _parse_cute(toks: _Tokens, spec: str) -> AuthoredLayout:
    swz = None
    offset = 0
    tok = toks.peek()
    if tok[0] == "word" and tok[1] in ("Sw", "Swizzle", "cute::Swizzle"):
        toks.take()
        toks.expect("<")
        b = toks.int()
        toks.expect(",")
        m = toks.int()
        toks.expect(",")
        s = toks.int()
        toks.expect(">")
        swz = check_cute_swizzle(b, m, s, spec)
        _expect_o(toks, spec)
        tok = toks.peek()
        nxt = toks.toks[toks.i + 1] if toks.i + 1 < len(toks.toks) else None
        if tok is not None and tok[0] == "num" and nxt is not None and nxt[1] == "o":   # "_0 o"
            offset = toks.int()
            if offset < 0:
                raise LayoutError(f"layout {spec!r}: the offset {offset} is negative",
                                  "CuTe prints the composed offset as _0; write Sw<B,M,S> o (shape):(stride)")
            _expect_o(toks, spec)
    shape = _int_tuple(toks, spec, "shape")
    if toks.peek() is not None and toks.peek()[1] == ":":
        toks.take()
        stride = _int_tuple(toks, spec, "stride")
    else:
        stride = column_major(shape)
    if not toks.done():
        kind, t, col = toks.peek()
        raise LayoutError(f"layout {spec!r}: unexpected {t!r} at column {col} after the layout", _FIX_ALL)
    if not congruent(shape, stride):
        raise LayoutError(f"layout {spec!r}: the shape {show(shape)} and the stride {show(stride)} do not have "
                          "the same nesting", "give one stride for every extent, nested the same way, e.g. "
                          "(8,(4,16)):(64,(16,1))")
    for s in flatten(shape):
        if s < 1:
            raise LayoutError(f"layout {spec!r}: every extent of the shape must be at least 1, not {s}",
                              "CuTe shapes are positive")
    if isinstance(shape, tuple) and len(shape) > 2:
        raise LayoutError(f"layout {spec!r} has rank {len(shape)}; an array is 1-D or 2-D",
                          f"group modes into two, e.g. ({show(shape[0])},({','.join(show(x) for x in shape[1:])}))")
    return AuthoredLayout(spec, "cute", shape, stride, swz, offset)


def _expect_o(toks: _Tokens, spec: str) -> None:
    tok = toks.peek()
    if tok is None or tok[1] != "o":
        got = "the end" if tok is None else repr(tok[1])
        raise LayoutError(f"layout {spec!r}: expected 'o' (composition) after the swizzle, found {got}",
                          'write "Sw<3,3,3> o (8,64):(64,1)"')
    toks.take()


def _int_tuple(toks: _Tokens, spec: str, what: str) -> Tree:
    depth = 0

    def one() -> Tree:
        nonlocal depth
        tok = toks.peek()
        if tok is not None and tok[1] == "(":
            toks.take()
            depth += 1
            if depth > 16:
                raise LayoutError(f"layout {spec!r}: the {what} is nested more than 16 levels deep")
            items = [one()]
            while toks.peek() is not None and toks.peek()[1] == ",":
                toks.take()
                items.append(one())
            toks.expect(")")
            depth -= 1
            return tuple(items)
        if tok is None or tok[0] != "num":
            got = "the end" if tok is None else repr(tok[1])
            col = f" at column {tok[2]}" if tok else ""
            raise LayoutError(f"layout {spec!r}: expected a number or '(' in the {what}, found {got}{col}",
                              _FIX_ALL)
        value = toks.int()
        if abs(value) > 1 << 40:
            raise LayoutError(f"layout {spec!r}: {value} in the {what} is too large")
        return value
    return one()


def check_cute_swizzle(b: int, m: int, s: int, spec: str) -> CuteSwizzle:
    if not (0 <= b <= 16 and 0 <= m <= 30 and abs(s) <= 30) or (b > 0 and abs(s) < b):
        raise LayoutError(f"{spec!r}: CuTe Swizzle<B,M,S> needs 0 <= B <= 16, 0 <= M <= 30 and |S| >= B "
                          f"(got B={b}, M={m}, S={s})",
                          "e.g. Sw<3,3,3> (128-byte rows of 2-byte elements) or Sw<5,0,5> (32 floats a row)")
    return CuteSwizzle(b, m, s)


# -- Triton ---------------------------------------------------------------------

_TRITON_KEYS = {
    "vec": "vec", "perphase": "per_phase", "per_phase": "per_phase", "maxphase": "max_phase",
    "max_phase": "max_phase", "order": "order", "swizzlingbytewidth": "swizzle_bytes",
    "swizzle_byte_width": "swizzle_bytes", "swizzle": "swizzle_bytes", "transposed": "transposed",
    "elementbitwidth": "element_bits", "element_bitwidth": "element_bits", "rank": "rank",
    "fp4padded": "fp4", "fp4_padded": "fp4", "ctalayout": "cta", "cta_layout": "cta",
}
_SWIZZLED_ARGS = ("vec", "per_phase", "max_phase", "order")
_NVMMA_ARGS = ("swizzle_bytes", "element_bits", "rank", "transposed")   # Gluon's order


def _triton_name(word: str) -> str | None:
    w = word.split(".")[-1].lower().lstrip("#")
    if w in ("swizzledsharedlayout", "swizzled_shared", "ttg.swizzled_shared", "triton_gpu.shared"):
        return "triton"
    if w in ("nvmmasharedlayout", "nvmma_shared", "ttg.nvmma_shared"):
        return "nvmma"
    if word.lower().lstrip("#") in ("ttg.swizzled_shared", "triton_gpu.swizzled_shared"):
        return "triton"
    if word.lower().lstrip("#") in ("ttg.nvmma_shared", "triton_gpu.nvmma_shared"):
        return "nvmma"
    return None


def _parse_triton(toks: _Tokens, spec: str) -> AuthoredLayout:
    kind = _triton_name(toks.take()[1])
    names = _SWIZZLED_ARGS if kind == "triton" else _NVMMA_ARGS
    close_for = {"(": ")", "<": ">"}
    tok = toks.take()
    if tok[1] not in close_for:
        raise LayoutError(f"layout {spec!r}: expected '(' after the layout's name", _FIX_ALL)
    closing = close_for[tok[1]]
    braces = False
    if toks.peek() is not None and toks.peek()[1] == "{":
        toks.take()
        braces = True
    values: dict[str, object] = {}
    pos = 0
    while toks.peek() is not None and toks.peek()[1] not in ("}", closing):
        tok = toks.peek()
        nxt = toks.toks[toks.i + 1] if toks.i + 1 < len(toks.toks) else None
        if tok[0] == "word" and nxt is not None and nxt[1] == "=":
            key = _TRITON_KEYS.get(tok[1].lower())
            if key is None or (key not in names and key not in ("fp4", "cta")):
                allowed = ", ".join(names)
                raise LayoutError(f"layout {spec!r}: unknown parameter {tok[1]!r}", f"the parameters are {allowed}")
            toks.take()
            toks.take()
        else:
            if pos >= len(names):
                raise LayoutError(f"layout {spec!r}: too many parameters", f"the parameters are {', '.join(names)}")
            key = names[pos]
            pos += 1
        if key in values:
            raise LayoutError(f"layout {spec!r}: {key} is given twice")
        values[key] = _list(toks, spec) if (toks.peek() and toks.peek()[1] == "[") else toks.int()
        if toks.peek() is not None and toks.peek()[1] == ",":
            toks.take()
    if braces:
        toks.expect("}")
    toks.expect(closing)
    if not toks.done():
        raise LayoutError(f"layout {spec!r}: unexpected {toks.peek()[1]!r} after the layout", _FIX_ALL)
    if kind == "triton":
        return _swizzled(spec, values)
    return _nvmma(spec, values)


def _list(toks: _Tokens, spec: str) -> tuple[int, ...]:
    toks.expect("[")
    items = []
    while toks.peek() is not None and toks.peek()[1] != "]":
        items.append(toks.int())
        if toks.peek() is not None and toks.peek()[1] == ",":
            toks.take()
    toks.expect("]")
    return tuple(items)


def _pow2(v: object) -> bool:
    return isinstance(v, int) and v >= 1 and v & (v - 1) == 0


def _order(spec: str, values: dict) -> tuple[int, int]:
    order = values.get("order", (1, 0))
    if not isinstance(order, tuple) or sorted(order) != [0, 1]:
        raise LayoutError(f"layout {spec!r}: order must be [1, 0] (rows, the last dimension contiguous) or "
                          f"[0, 1] (columns contiguous), not {list(order) if isinstance(order, tuple) else order}",
                          "warpviz arrays are 2-D: write order = [1, 0]")
    return tuple(order)


def _swizzled(spec: str, values: dict) -> AuthoredLayout:
    missing = [k for k in ("vec", "per_phase", "max_phase") if k not in values]
    if missing:
        raise LayoutError(f"layout {spec!r}: missing {', '.join(missing)}",
                          "write SwizzledSharedLayout(vec, perPhase, maxPhase, order), e.g. "
                          "SwizzledSharedLayout(8, 1, 8, [1, 0])")
    for k in ("vec", "per_phase", "max_phase"):
        v = values[k]
        if not _pow2(v):
            raise LayoutError(f"layout {spec!r}: {k} = {v} is not a power of two",
                              f"Triton's swizzled layouts need powers of two; try {_near_pow2(v)}")
    return AuthoredLayout(spec, "triton", vec=values["vec"], per_phase=values["per_phase"],
                          max_phase=values["max_phase"], order=_order(spec, values))


def _nvmma(spec: str, values: dict) -> AuthoredLayout:
    sw = values.get("swizzle_bytes")
    if sw not in (0, 32, 64, 128):
        raise LayoutError(f"layout {spec!r}: the swizzle width must be 0, 32, 64 or 128 bytes, not {sw}",
                          "write NVMMASharedLayout(128) (or 32, 64; 0 for no swizzle)")
    bits = values.get("element_bits")
    if bits is not None and bits not in (8, 16, 32, 64):
        raise LayoutError(f"layout {spec!r}: element_bitwidth {bits} is not 8, 16, 32 or 64",
                          "give the element's width in bits, e.g. 16 for half")
    rank = values.get("rank", 2)
    if rank != 2:
        raise LayoutError(f"layout {spec!r}: rank {rank}; warpviz draws 2-D shared tiles", "write rank = 2")
    transposed = values.get("transposed", 0)
    order = (0, 1) if transposed else (1, 0)
    return AuthoredLayout(spec, "nvmma", order=order, swizzle_bytes=sw, element_bits=bits)


def _near_pow2(v: object) -> str:
    if not isinstance(v, int) or v < 1:
        return "1"
    lo = 1 << (v.bit_length() - 1)
    return str(lo) if lo == v else f"{lo} or {lo * 2}"


# ---------------------------------------------------------------------------- arrays


def fit(layout: AuthoredLayout, shape: tuple[int, ...] | None, elem_size: int) -> tuple[int, ...]:
    """The array's logical extents for ``layout``: the given shape (checked against the
    layout) or the CuTe layout's own. Raises LayoutError naming the fix."""
    own = layout.extents()
    if shape is None:
        if own is None:
            raise LayoutError(f"layout {layout.text!r} needs the array's shape",
                              "give shape = [ROWS, COLS] (warpviz layout: --shape ROWS,COLS)")
        return own
    if own is not None:
        if len(own) != len(shape) or any(a != b for a, b in zip(own, shape)):
            dims = "x".join(map(str, own))
            want = ", ".join(map(str, own))
            raise LayoutError(f"layout {layout.text!r} is {dims} but the array's shape is {list(shape)}",
                              f"make the shape [{want}] or leave it out (the layout gives it)")
        return tuple(shape)
    if len(shape) != 2:
        raise LayoutError(f"layout {layout.text!r} is a 2-D shared layout but the array is 1-D",
                          "give shape = [ROWS, COLS] (warpviz layout: --shape ROWS,COLS)")
    rows, cols = shape
    vec, per_phase, max_phase, order = layout.swizzled_params(elem_size)
    inner = cols if order == (1, 0) else rows
    inner_name = "COLS" if order == (1, 0) else "ROWS"
    if layout.kind == "nvmma":
        if layout.element_bits is not None and layout.element_bits != 8 * elem_size:
            raise LayoutError(f"layout {layout.text!r} is for {layout.element_bits}-bit elements but the "
                              f"array's are {8 * elem_size}-bit", f"write element_bitwidth = {8 * elem_size}")
        if elem_size not in (1, 2, 4, 8):
            raise LayoutError(f"layout {layout.text!r}: NVMMA layouts hold 1-, 2-, 4- or 8-byte elements, "
                              f"not {elem_size}-byte ones", "use half, float, int or double")
        if layout.swizzle_bytes and inner * elem_size != layout.swizzle_bytes:
            span = layout.swizzle_bytes // elem_size
            raise LayoutError(f"layout {layout.text!r}: a {layout.swizzle_bytes}-byte swizzle needs rows of "
                              f"{layout.swizzle_bytes} bytes ({span} elements), not {inner * elem_size}",
                              f"make {inner_name} = {span}")
    if not _pow2(inner):
        raise LayoutError(f"layout {layout.text!r}: the contiguous extent {inner} is not a power of two",
                          f"Triton's shared layouts need powers of two; make {inner_name} {_near_pow2(inner)}")
    return tuple(shape)


def check(layout: AuthoredLayout, extents: tuple[int, ...], elem_size: int, pad: int = 0,
          array: bool = True) -> np.ndarray | None:
    """The layout must stay inside the array's storage (rows x (cols + pad) elements, or n)
    and give every element its own place. Returns every element's offset (None for an
    array above MAX_ENUMERATE elements, whose bounds alone are checked). With ``array``
    False (a layout drawn on its own, as CuTe's print_layout does) only negative offsets
    are refused: the codomain is then whatever the layout reaches."""
    n = 1
    for e in extents:
        n *= e
    if n > MAX_ENUMERATE:
        if not array:
            raise LayoutError(f"layout {layout.text!r} covers {n:,} elements, more than the {MAX_ENUMERATE:,} "
                              "warpviz draws", "draw a smaller tile")
        _check_bounds(layout, extents, pad)
        return None
    off = layout.evaluate(extents, elem_size)
    flat = off.reshape(-1)
    storage = extents[0] * (extents[1] + pad) if len(extents) == 2 else extents[0]
    lo, hi = int(flat.min()), int(flat.max())
    if lo < 0:
        k = int(np.argmin(flat))
        raise LayoutError(f"layout {layout.text!r} sends {_name(k, extents)} to offset {lo}, before the "
                          "array's start", "use non-negative strides")
    if not array:
        return off
    if hi >= storage:
        k = int(np.argmax(flat))
        where = f"{list(extents)}" + (f" with pad = {pad}" if pad else "")
        if len(extents) == 2:
            need = -(-(hi + 1) // extents[0]) - extents[1]
            fix = (f"add pad = {need} (rows of {extents[1] + need} elements hold it), or change the strides "
                   "so that the largest offset stays below the array's size")
        else:
            fix = f"make the strides smaller, or the array 2-D with pad (it needs {hi + 1} elements)"
        raise LayoutError(f"layout {layout.text!r}: its codomain overflows the array: {_name(k, extents)} "
                          f"lands on offset {hi}, but the array {where} holds {storage} elements", fix)
    order = np.argsort(flat, kind="stable")
    s = flat[order]
    dup = np.nonzero(s[1:] == s[:-1])[0]
    if dup.size:
        a, b = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise LayoutError(f"layout {layout.text!r} is not one-to-one: {_name(a, extents)} and "
                          f"{_name(b, extents)} both land on offset {int(s[dup[0]])}",
                          "give every element its own place (no stride 0, no overlapping modes)")
    return off


def offset_bounds(layout: AuthoredLayout) -> tuple[int, int]:
    """Bounds on a CuTe layout's offsets without enumerating them: the sums of the negative
    and of the positive (extent - 1) x stride; with a swizzle, below the next power of two
    that holds both those offsets and the bits the swizzle XORs into."""
    leaves = list(zip(flatten(layout.shape), flatten(layout.stride)))
    lo = layout.offset + sum(min(0, (e - 1) * d) for e, d in leaves)
    hi = layout.offset + sum(max(0, (e - 1) * d) for e, d in leaves)
    if layout.swizzle is not None and layout.swizzle.b and hi >= 0:
        # every offset is below 2^bits(hi); the XOR sets bits of its field only
        sw = layout.swizzle
        field = ((1 << sw.b) - 1) << (sw.m if sw.s >= 0 else sw.m - sw.s)
        hi = (1 << max(hi.bit_length(), field.bit_length())) - 1
    return lo, hi


def _check_bounds(layout: AuthoredLayout, extents: tuple[int, ...], pad: int) -> None:
    """An array too large to enumerate: Triton's layouts are permutations by construction;
    a CuTe layout's offsets lie between the sums of its negative and positive (extent - 1) x
    stride, and a swizzle only sets bits of its target field. (Not one-to-one is then not
    looked for.)"""
    if layout.kind != "cute":
        return
    lo, hi = offset_bounds(layout)
    storage = extents[0] * (extents[1] + pad) if len(extents) == 2 else extents[0]
    if lo < 0:
        raise LayoutError(f"layout {layout.text!r} reaches offset {lo}, before the array's start",
                          "use non-negative strides")
    if hi >= storage:
        raise LayoutError(f"layout {layout.text!r}: its codomain overflows the array: it reaches offset {hi}, "
                          f"but the array {list(extents)} holds {storage} elements",
                          "change the strides so that the largest offset stays below the array's size")


def _name(k: int, extents: tuple[int, ...]) -> str:
    if len(extents) == 2:
        return f"(row {k // extents[1]}, column {k % extents[1]})"
    return f"element {k}"


# ---------------------------------------------------------------------------- the map


@dataclass(frozen=True)
class LayoutMap:
    """The logical-to-physical map of a layout on an array: every element's offset (in
    elements) and the shared-memory bank of its first byte. 1-D layouts are one row."""

    text: str
    kind: str
    type_name: str
    elem_size: int
    offsets: np.ndarray            # (rows, cols) int64
    one_d: bool = False

    @property
    def rows(self) -> int:
        return int(self.offsets.shape[0])

    @property
    def cols(self) -> int:
        return int(self.offsets.shape[1])

    @property
    def one_to_one(self) -> bool:
        flat = self.offsets.reshape(-1)
        return len(np.unique(flat)) == flat.size

    @property
    def banks(self) -> np.ndarray:
        """The bank of each element's first byte: (offset x size / 4) mod 32."""
        return (self.offsets * self.elem_size // 4) % 32

    def natural_size(self, scale: float = 1.0) -> tuple[int, int]:
        """The picture size (even numbers) at which viz.render.layout_map writes every offset
        and its bank at 16 px (times ``scale``). Estimated from character counts, generously
        (monospace digits are 0.6 em in DejaVu Sans Mono and Noto Sans Mono), so that the
        model can size a picture without Qt."""
        from .i18n import tr

        def est(text: str, px: float, em: float) -> float:
            return sum(px * (1.0 if ord(ch) > 0x2e7f else em) for ch in text)

        px, line = 16 * scale, 16 * scale * 1.25
        digits = max(len(str(int(self.offsets.max()))), len(str(self.cols - 1)), 3)
        cell_w, cell_h = est("0" * digits, px, 0.62) + 14 * scale, 2 * line + 8 * scale
        margin = 12 * scale
        row_w = est(str(self.rows - 1), 22 * scale, 0.62) + 16 * scale
        title = est(self.text, 24 * scale, 0.72) + est("   " + tr("{type} ({size} B), {shape}").format(
            type=self.type_name, size=self.elem_size, shape=self.shape_text()), 18 * scale, 0.62)
        legend = est(tr("Each cell: the element's offset. Colour: its bank, (offset × {size} B / 4) mod 32.").format(
            size=self.elem_size), 16 * scale, 0.62)
        width = max(2 * margin + row_w + self.cols * cell_w, 2 * margin + max(title, legend, 32 * 30 * scale),
                    640 * scale)
        head = 24 * 1.6 * scale + 16 * 1.5 * scale + 38 * scale + line + 4 * scale + 16 * 1.5 * scale
        height = max(2 * margin + head + self.rows * cell_h, 360 * scale)
        return int(-(-width // 2) * 2), int(-(-height // 2) * 2)

    def shape_text(self) -> str:
        return f"{self.cols}" if self.one_d else f"{self.rows} x {self.cols}"

    def to_text(self) -> str:
        """CuTe's ``print_layout`` table: column indices, then each row's offsets."""
        w = max(len(str(int(self.offsets.max()))), len(str(self.cols - 1)), 1)
        rw = len(str(self.rows - 1))
        cell = w + 2
        sep = " " * (rw + 3) + "+" + ("-" * cell + "+") * self.cols
        head = " " * (rw + 3) + "".join(str(c).rjust(cell) + " " for c in range(self.cols)).rstrip()
        lines = [self.text, head, sep]
        for r in range(self.rows):
            cells = "|".join(f" {int(v):>{w}} " for v in self.offsets[r])
            lines += [f" {str(r).rjust(rw)}  |{cells}|", sep]
        return "\n".join(lines)


def layout_map(text: str, shape: tuple[int, ...] | None = None, type_name: str = "half",
               pad: int = 0) -> LayoutMap:
    """Parse, fit and check ``text`` on an array of ``shape`` (a CuTe layout gives its own)
    of ``type_name`` elements; raises LayoutError with the problem and the fix."""
    from .types import all_type_names, named_type

    etype = named_type(type_name) if isinstance(type_name, str) else None
    if etype is None:
        raise LayoutError(f"unknown type {type_name!r}", f"types: {', '.join(all_type_names())}")
    lay = parse_layout(text)
    extents = fit(lay, tuple(shape) if shape is not None else None, etype.size)
    off = check(lay, extents, etype.size, pad, array=False)
    one_d = len(extents) == 1
    return LayoutMap(lay.text, lay.kind, etype.name, etype.size, off.reshape(1, -1) if one_d else off, one_d)
