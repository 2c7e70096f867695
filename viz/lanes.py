"""Evaluate an expression tree over every thread of a group of blocks at once.

Values live on a grid of ``n_blocks × n_threads`` (blocks of one chunk × threads of a
block), but most index arithmetic never needs the whole grid: ``blockIdx.x * TILE`` is one
number per block, ``threadIdx.y * W + threadIdx.x`` one per thread. A ``Lanes`` value keeps
the separable form ``block_part[b] + thread_part[t]`` as long as the operations allow
(sums, and products or left shifts by a constant), and only materialises the full grid
when an operation mixes the two non-linearly (``blockIdx.x ^ threadIdx.x``). The analysis
engine uses the separable form to evaluate a launch without ever building its full
address array when it does not need to.

Per-lane faults (division by zero, shifts outside 0..63, ``rev`` widths outside 0..62)
are not raised at once: C only faults on lanes that actually execute the operation, so a
fault is carried as a mask through ``?:``, ``&&`` and ``||`` and reported by the caller
for the first *active* lane that hits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from .i18n import tr
from .expr import Binary, Call, Cond, Name, Node, Num, Unary

I64 = np.int64


class Lanes:
    """An int64 value per (block, thread): separable ``b + t`` or a full grid ``f``.

    ``b`` has shape ``(n_blocks, 1)`` or ``()``; ``t`` has shape ``(1, n_threads)`` or is
    None; ``f`` has shape ``(n_blocks, n_threads)`` or is None. When ``f`` is set, ``b``
    and ``t`` are unused.
    """

    __slots__ = ("b", "t", "f")

    def __init__(self, b=None, t=None, f=None):
        self.b = np.asarray(b if b is not None else 0, dtype=I64)
        self.t = None if t is None else np.asarray(t, dtype=I64)
        self.f = None if f is None else np.asarray(f, dtype=I64)

    @classmethod
    def const(cls, value: int) -> "Lanes":
        return cls(b=np.int64(value))

    @property
    def is_full(self) -> bool:
        return self.f is not None

    @property
    def is_scalar(self) -> bool:
        return self.f is None and self.t is None and self.b.ndim == 0

    @property
    def block_only(self) -> bool:
        return self.f is None and self.t is None

    @property
    def thread_only(self) -> bool:
        return self.f is None and self.b.ndim == 0

    def scalar(self) -> int:
        return int(self.b)

    def natural(self) -> np.ndarray:
        """The value in its smallest broadcastable shape."""
        if self.f is not None:
            return self.f
        if self.t is None:
            return self.b
        return self.b + self.t

    def full(self, shape: tuple[int, int]) -> np.ndarray:
        return np.broadcast_to(self.natural(), shape)


@dataclass
class Fault:
    """Lanes (a mask broadcastable to the grid) where an operation is undefined."""

    mask: np.ndarray
    node: Node
    problem: str


@dataclass
class Space:
    """The names visible to an expression, as Lanes values, and the grid shape."""

    names: Mapping[str, Lanes]
    shape: tuple[int, int]


_CMP = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
        "==": np.equal, "!=": np.not_equal}


def _c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C division: truncate toward zero (a - fmod(a, b) is an exact multiple of b)."""
    return (a - np.fmod(a, b)) // b


def _rev(x: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Reverse the low ``bits`` bits of x (higher bits are dropped), per lane."""
    x = np.asarray(x, I64)
    bits = np.asarray(bits, I64)
    out = np.zeros(np.broadcast_shapes(x.shape, bits.shape), I64)
    top = int(bits.max()) if bits.size else 0
    for k in range(top):
        bit = (x >> k) & 1
        out |= np.where(k < bits, bit << np.maximum(bits - 1 - k, 0), 0)
    return out


_ARITH: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
    "<<": np.left_shift, ">>": np.right_shift,
}


class Evaluator:
    """Evaluates trees in one Space; collects per-lane faults instead of raising."""

    def __init__(self, space: Space):
        self.space = space

    def evaluate(self, node: Node) -> tuple[Lanes, list[Fault]]:
        with np.errstate(all="ignore"):
            return self._eval(node)

    # -- combination rules --------------------------------------------------

    def _combine(self, fn, *vals: Lanes) -> Lanes:
        """Apply an elementwise fn in the smallest form the operands allow."""
        if all(v.block_only for v in vals):
            return Lanes(b=fn(*[v.b for v in vals]))
        if all(v.thread_only for v in vals):
            out = fn(*[v.natural() for v in vals])
            out = np.asarray(out, I64)
            return Lanes(b=out) if out.ndim == 0 else Lanes(t=out)
        shape = self.space.shape
        return Lanes(f=np.asarray(fn(*[v.full(shape) for v in vals]), I64))

    def _linear(self, op: str, x: Lanes, y: Lanes) -> Lanes | None:
        """Keep b + t separable through +, -, and * or << by a constant."""
        if x.is_full or y.is_full:
            return None
        if op in ("+", "-"):
            f = np.add if op == "+" else np.subtract
            t = x.t if y.t is None else (f(0, y.t) if x.t is None else f(x.t, y.t))
            return Lanes(b=f(x.b, y.b), t=t)
        if op == "*" and (x.is_scalar or y.is_scalar):
            k, v = (x.scalar(), y) if x.is_scalar else (y.scalar(), x)
            return Lanes(b=v.b * k, t=None if v.t is None else v.t * k)
        if op == "<<" and y.is_scalar and 0 <= y.scalar() < 64:
            k = y.scalar()
            return Lanes(b=x.b << k, t=None if x.t is None else x.t << k)
        return None

    # -- tree walk ---------------------------------------------------------

    def _eval(self, node: Node) -> tuple[Lanes, list[Fault]]:
        if isinstance(node, Num):
            return Lanes.const(node.value), []
        if isinstance(node, Name):
            try:
                return self.space.names[node.name], []
            except KeyError:
                raise KeyError(node.name) from None
        if isinstance(node, Unary):
            v, faults = self._eval(node.operand)
            if node.op == "-":
                if not v.is_full:
                    return Lanes(b=-v.b, t=None if v.t is None else -v.t), faults
                return Lanes(f=-v.f), faults
            if node.op == "~":
                return self._combine(np.invert, v), faults
            return self._combine(lambda a: (a == 0).astype(I64), v), faults
        if isinstance(node, Binary):
            return self._binary(node)
        if isinstance(node, Cond):
            c, fc = self._eval(node.test)
            a, fa = self._eval(node.then)
            b, fb = self._eval(node.other)
            taken = c.natural() != 0
            faults = fc + [Fault(f.mask & taken, f.node, f.problem) for f in fa]
            faults += [Fault(f.mask & ~taken, f.node, f.problem) for f in fb]
            return self._combine(lambda t, x, y: np.where(t != 0, x, y), c, a, b), _live(faults)
        if isinstance(node, Call):
            (x, fx), (y, fy) = (self._eval(a) for a in node.args)
            faults = fx + fy
            if node.func == "min":
                return self._combine(np.minimum, x, y), faults
            if node.func == "max":
                return self._combine(np.maximum, x, y), faults
            bits = y.natural()
            bad = (bits < 0) | (bits > 62)
            if np.any(bad):
                faults.append(Fault(bad, node, tr("rev(x, bits) needs bits between 0 and 62")))
            return self._combine(lambda a, n: _rev(a, np.clip(n, 0, 62)), x, y), faults
        raise TypeError(f"not an expression node: {node!r}")

    def _binary(self, node: Binary) -> tuple[Lanes, list[Fault]]:
        op = node.op
        x, fx = self._eval(node.left)
        y, fy = self._eval(node.right)
        if op in ("&&", "||"):
            lhs = x.natural() != 0
            # The right operand only runs where the left one did not decide.
            runs = lhs if op == "&&" else ~lhs
            faults = fx + [Fault(f.mask & runs, f.node, f.problem) for f in fy]
            if op == "&&":
                fn = lambda a, b: ((a != 0) & (b != 0)).astype(I64)  # noqa: E731
            else:
                fn = lambda a, b: ((a != 0) | (b != 0)).astype(I64)  # noqa: E731
            return self._combine(fn, x, y), _live(faults)
        faults = fx + fy
        if op in ("/", "%"):
            d = y.natural()
            zero = d == 0
            if np.any(zero):
                faults.append(Fault(zero, node, tr("division by zero in `{expr}`", expr=_op_text(node))))
                y = self._combine(lambda a: np.where(a == 0, 1, a), y)
            fn = _c_div if op == "/" else np.fmod
            return self._combine(fn, x, y), faults
        if op in ("<<", ">>"):
            s = y.natural()
            bad = (s < 0) | (s > 63)
            if np.any(bad):
                faults.append(Fault(bad, node, tr("shift by a count outside 0..63 in `{expr}`", expr=_op_text(node))))
                y = self._combine(lambda a: np.clip(a, 0, 63), y)
        lin = self._linear(op, x, y)
        if lin is not None:
            return lin, faults
        if op in _CMP:
            cmp = _CMP[op]
            return self._combine(lambda a, b: cmp(a, b).astype(I64), x, y), faults
        return self._combine(_ARITH[op], x, y), faults


def _live(faults: list[Fault]) -> list[Fault]:
    return [f for f in faults if np.any(f.mask)]


def _op_text(node: Binary) -> str:
    from .expr import to_text

    return to_text(node)
