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
from collections.abc import Mapping
from typing import Callable

import numpy as np

from .i18n import tr
from .expr import Binary, Call, Cond, Name, Node, Num, Unary, children, fold

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


class Constants(Mapping):
    """Integer names (params) seen as Lanes constants, made on lookup: a Space over a
    scenario's params costs nothing per evaluation, however many params there are
    (``ChainMap(local_names, Constants(params))``)."""

    def __init__(self, values: Mapping[str, int]):
        self._values = values

    def __getitem__(self, key: str) -> Lanes:
        return Lanes.const(self._values[key])

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


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
        """Post-order over an explicit stack (``expr.fold``): a tree of any depth evaluates without recursion."""
        return fold(node, self._apply)

    def _apply(self, node: Node, args: list[tuple[Lanes, list[Fault]]]) -> tuple[Lanes, list[Fault]]:
        """One node, its operands already evaluated (``args``, in order)."""
        if isinstance(node, Num):
            return Lanes.const(node.value), []
        if isinstance(node, Name):
            try:
                return self.space.names[node.name], []
            except KeyError:
                raise KeyError(node.name) from None
        if isinstance(node, Unary):
            v, faults = args[0]
            if node.op == "-":
                if not v.is_full:
                    return Lanes(b=-v.b, t=None if v.t is None else -v.t), faults
                return Lanes(f=-v.f), faults
            if node.op == "~":
                return self._combine(np.invert, v), faults
            return self._combine(lambda a: (a == 0).astype(I64), v), faults
        if isinstance(node, Binary):
            return self._binary(node, *args)
        if isinstance(node, Cond):
            (c, fc), (a, fa), (b, fb) = args
            taken = c.natural() != 0
            faults = fc + [Fault(f.mask & taken, f.node, f.problem) for f in fa]
            faults += [Fault(f.mask & ~taken, f.node, f.problem) for f in fb]
            return self._combine(lambda t, x, y: np.where(t != 0, x, y), c, a, b), _live(faults)
        if isinstance(node, Call):
            (x, fx), (y, fy) = args
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
        raise TypeError(f"not an expression node: {type(node).__name__}")

    def _binary(self, node: Binary, left: tuple[Lanes, list[Fault]],
                right: tuple[Lanes, list[Fault]]) -> tuple[Lanes, list[Fault]]:
        op = node.op
        x, fx = left
        y, fy = right
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


def _op_text(node: Node, width: int = 80) -> str:
    from .expr import to_text

    text = to_text(node)
    return text if len(text) <= width else text[:width - 1] + "…"


# ---------------------------------------------------------------------------- forms

# The shape a value takes in the Evaluator, read off the tree without evaluating it:
# "C" one number, "B" one per block, "T" one per thread, "S" block part + thread part,
# "F" the full grid. ``viz.work`` uses it to know which path of the engine an address takes.
_BLOCKISH, _THREADISH = ("C", "B"), ("C", "T")


def _combined_form(forms) -> str:
    """``Evaluator._combine``: one part if every operand has it, else the full grid."""
    if all(f in _BLOCKISH for f in forms):
        return "B" if "B" in forms else "C"
    if all(f in _THREADISH for f in forms):
        return "T" if "T" in forms else "C"
    return "F"


def _joined_form(x: str, y: str) -> str:
    """``Evaluator._linear`` for + and -: the block parts add, the thread parts add."""
    has_b = x in ("B", "S") or y in ("B", "S")
    has_t = x in ("T", "S") or y in ("T", "S")
    return "S" if has_b and has_t else "B" if has_b else "T" if has_t else "C"


def lane_form(node: Node, forms: Mapping[str, str]) -> str:
    """The form ("C", "B", "T", "S" or "F") the Evaluator gives ``node``'s value when the
    names have ``forms`` (missing names are constants). Same rules as ``Evaluator``:
    ``+``/``-`` keep the separable form, ``*`` and ``<<`` by a constant too, every other
    operation keeps one part only if all its operands have only that part."""
    def form(n: Node, args: list[str]) -> str:
        if isinstance(n, Num):
            return "C"
        if isinstance(n, Name):
            return forms.get(n.name, "C")
        if isinstance(n, Unary) and n.op == "-":
            return args[0]
        if isinstance(n, Binary) and "F" not in args and (
                n.op in ("+", "-") or (n.op == "*" and "C" in args) or (n.op == "<<" and args[1] == "C")):
            x, y = args
            return _joined_form(x, y) if n.op in ("+", "-") else y if n.op == "*" and x == "C" else x
        return _combined_form(args)

    return fold(node, form)


# ---------------------------------------------------------------------------- one exact value

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def evaluate_exact(node: Node, names: Mapping[str, int]) -> int:
    """The value of an expression over constants (params, loop variables), exactly.

    The same C semantics as ``Evaluator`` on one lane (``/`` and ``%`` truncate, ``&&``,
    ``||`` and ``?:`` evaluate only what C evaluates), on Python integers, so a result that
    leaves 64 bits is refused instead of wrapping around. Raises ``ExprError`` with the
    problem (division by zero, a bad shift or ``rev`` width, an overflow, an unknown name).
    Walks the tree with an explicit stack; reads ``names`` without copying it.
    """
    from .expr import ExprError

    vals: list[int] = []
    stack: list[tuple[Node, int]] = [(node, 0)]
    while stack:
        n, state = stack.pop()
        if isinstance(n, Num):
            vals.append(n.value)
            continue
        if isinstance(n, Name):
            if n.name not in names:
                raise ExprError(tr("unknown name {n!r}", n=n.name))
            vals.append(int(names[n.name]))
            continue
        if isinstance(n, Cond):
            if state == 0:
                stack += [(n, 1), (n.test, 0)]
            else:
                stack.append((n.then if vals.pop() != 0 else n.other, 0))
            continue
        if isinstance(n, Binary) and n.op in ("&&", "||"):
            if state == 0:
                stack += [(n, 1), (n.left, 0)]
            elif state == 1:
                lhs = vals.pop() != 0
                if lhs == (n.op == "||"):          # decided: && by a false left side, || by a true one
                    vals.append(int(lhs))
                else:
                    stack += [(n, 2), (n.right, 0)]
            else:
                vals.append(int(vals.pop() != 0))
            continue
        kids = children(n)
        if state == 0:
            stack.append((n, 1))
            stack.extend((k, 0) for k in reversed(kids))
            continue
        args = vals[len(vals) - len(kids):]
        del vals[len(vals) - len(kids):]
        value = _exact(n, args)
        if not INT64_MIN <= value <= INT64_MAX:
            raise ExprError(tr("`{expr}` is {value}, which does not fit in 64 bits", expr=_op_text(n), value=value))
        vals.append(value)
    return vals[0]


def _exact(n: Node, args: list[int]) -> int:
    from .expr import ExprError

    if isinstance(n, Unary):
        a = args[0]
        return -a if n.op == "-" else ~a if n.op == "~" else int(a == 0)
    if isinstance(n, Call):
        a, b = args
        if n.func == "min":
            return min(a, b)
        if n.func == "max":
            return max(a, b)
        if not 0 <= b <= 62:
            raise ExprError(tr("rev(x, bits) needs bits between 0 and 62"))
        return sum(((a >> k) & 1) << (b - 1 - k) for k in range(b))
    a, b = args
    op = n.op
    if op in ("/", "%"):
        if b == 0:
            raise ExprError(tr("division by zero in `{expr}`", expr=_op_text(n)))
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)      # C: toward zero
        return q if op == "/" else a - b * q
    if op in ("<<", ">>"):
        if not 0 <= b <= 63:
            raise ExprError(tr("shift by a count outside 0..63 in `{expr}`", expr=_op_text(n)))
        return a << b if op == "<<" else a >> b
    return _EXACT[op](a, b)


_EXACT: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
}
