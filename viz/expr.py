"""The expression language: C integer expressions parsed into an immutable tree.

A scenario's text is data. It is tokenised and parsed by a small precedence (Pratt)
parser into the node types below; nothing is ever handed to Python's ``eval``. The same
tree is evaluated vectorised over the threads of a launch (``viz.lanes``) and printed as
CUDA C (``to_cuda``) for the generated kernels.

Semantics are C's on 64-bit integers: ``/`` and ``%`` truncate toward zero, comparisons
and logical operators give 0 or 1, ``&&``/``||`` short-circuit, ``c ? a : b`` evaluates
only the taken branch (which matters for division by zero).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, TypeVar

from .errors import WarpvizError
from .i18n import sep, tr

# Hostile-input guards: a scenario expression is short; these bounds are far above any
# real index expression and far below anything that could exhaust the interpreter.
MAX_TEXT = 2000
MAX_DEPTH = 64
MAX_NODES = 1000
MAX_LITERAL = 2**62

BUILTIN_NAMES = frozenset(
    [f"{base}.{axis}" for base in ("threadIdx", "blockIdx", "blockDim", "gridDim") for axis in "xyz"]
    + ["tid", "lane", "warp"]
)
FUNCTIONS = {"min": 2, "max": 2, "rev": 2}

BINARY_OPS = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^",
              "<", "<=", ">", ">=", "==", "!=", "&&", "||")
UNARY_OPS = ("-", "+", "~", "!")

# C precedence, loosest first. Binary operators are left-associative; ?: is right.
_PRECEDENCE = {
    "||": 2, "&&": 3, "|": 4, "^": 5, "&": 6,
    "==": 7, "!=": 7, "<": 8, "<=": 8, ">": 8, ">=": 8,
    "<<": 9, ">>": 9, "+": 10, "-": 10, "*": 11, "/": 11, "%": 11,
}
_TERNARY_PRECEDENCE = 1
_UNARY_PRECEDENCE = 12


class ExprError(WarpvizError, ValueError):
    """A problem in an expression's text: ``column`` is 1-based, ``fix`` says what to do."""

    def __init__(self, problem: str, column: int | None = None, fix: str = "", text: str = ""):
        self.problem = problem
        self.column = column
        self.fix = fix
        self.text = text
        super().__init__(self.describe())

    def describe(self) -> str:
        where = tr(" at column {column}", column=self.column) if self.column else ""
        msg = f"{self.problem}{where}"
        if self.text and self.column:
            msg += tr(" in `{excerpt}`", excerpt=_excerpt(self.text, self.column))
        if self.fix:
            msg += f"{sep('. ')}{self.fix[:1].upper()}{self.fix[1:]}"
        return msg


def _excerpt(text: str, column: int, width: int = 40) -> str:
    start = max(0, column - 1 - width // 2)
    piece = text[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


# ---------------------------------------------------------------------------- tree


@dataclass(frozen=True, eq=False, repr=False)
class Node:
    """Base of all expression nodes; ``pos`` is the 1-based column in the source.

    Equality, hashing, ``repr`` and pickling walk the tree with an explicit stack (a
    dataclass's generated methods would recurse once per level, and a 900-term ``1+1+...``
    is 450 levels deep), so no tree is too deep to compare, print or copy.
    """

    pos: int = field(default=0, kw_only=True)

    def _head(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node):
            return NotImplemented
        return structure(self) == structure(other)

    def __hash__(self) -> int:
        return hash(structure(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({to_text(self)!r})"

    def __reduce__(self):
        return _rebuild, (_flatten(self),)


@dataclass(frozen=True, eq=False, repr=False)
class Num(Node):
    value: int

    def _head(self) -> tuple:
        return ("Num", self.value)


@dataclass(frozen=True, eq=False, repr=False)
class Name(Node):
    name: str

    def _head(self) -> tuple:
        return ("Name", self.name)


@dataclass(frozen=True, eq=False, repr=False)
class Unary(Node):
    op: str
    operand: Node

    def _head(self) -> tuple:
        return ("Unary", self.op)


@dataclass(frozen=True, eq=False, repr=False)
class Binary(Node):
    op: str
    left: Node
    right: Node

    def _head(self) -> tuple:
        return ("Binary", self.op)


@dataclass(frozen=True, eq=False, repr=False)
class Cond(Node):
    test: Node
    then: Node
    other: Node

    def _head(self) -> tuple:
        return ("Cond",)


@dataclass(frozen=True, eq=False, repr=False)
class Call(Node):
    func: str
    args: tuple[Node, ...]

    def _head(self) -> tuple:
        return ("Call", self.func, len(self.args))


T = TypeVar("T")


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Cond):
        return (node.test, node.then, node.other)
    if isinstance(node, Call):
        return node.args
    return ()


def fold(node: Node, visit: Callable[[Node, list[T]], T]) -> T:
    """``visit(n, the values of n's children)`` for every node, children first, and the root's
    value. Post-order over an explicit stack: a tree of any depth is folded without recursion."""
    results: list[T] = []
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        kids = children(n)
        if kids and not ready:
            stack.append((n, True))
            stack.extend((k, False) for k in reversed(kids))
            continue
        args = results[len(results) - len(kids):]
        del results[len(results) - len(kids):]
        results.append(visit(n, args))
    return results[0]


def walk(node: Node) -> Iterator[Node]:
    """Every node, iteratively (no recursion, so no depth limit is needed to walk)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))


def names(node: Node) -> set[str]:
    return {n.name for n in walk(node) if isinstance(n, Name)}


def structure(node: Node) -> tuple:
    """The tree in pre-order as a flat tuple of node heads (kind, operator or value, arity):
    equal exactly when the trees are equal, whatever the columns (``pos``)."""
    return tuple(n._head() for n in _preorder(node))


def _preorder(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def _flatten(node: Node) -> tuple:
    return tuple((n._head(), n.pos) for n in _preorder(node))


def _rebuild(flat: tuple) -> Node:
    """The tree ``_flatten`` wrote (pickle, copy.deepcopy), built without recursion."""
    out: list[Node] = []
    for head, pos in reversed(flat):       # post-order from the end: children come first
        kind = head[0]
        if kind == "Num":
            out.append(Num(head[1], pos=pos))
        elif kind == "Name":
            out.append(Name(head[1], pos=pos))
        elif kind == "Unary":
            out.append(Unary(head[1], out.pop(), pos=pos))
        elif kind == "Binary":
            left = out.pop()
            out.append(Binary(head[1], left, out.pop(), pos=pos))
        elif kind == "Cond":
            test, then = out.pop(), out.pop()
            out.append(Cond(test, then, out.pop(), pos=pos))
        else:
            args = tuple(out.pop() for _ in range(head[2]))
            out.append(Call(head[1], args, pos=pos))
    return out[0]


# ---------------------------------------------------------------------------- tokens

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<num>0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(?P<suffix>[uUlL]*)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)
  | (?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~!<>?:(),\[\]])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # "num" | "name" | "op" | "end"
    text: str
    pos: int
    value: int = 0


def tokenize(text: str) -> list[Token]:
    if len(text) > MAX_TEXT:
        raise ExprError(tr("expression is {n} characters long, more than the {max} allowed", n=len(text), max=MAX_TEXT),
                        fix=tr("split the computation into params or a shorter formula"))
    tokens: list[Token] = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            ch = text[i]
            raise ExprError(tr("unexpected character {ch!r}", ch=ch), i + 1,
                            tr("expressions use C integer syntax: numbers, names, + - * / % << >> & | ^ ~ ! "
                               "comparisons, && || ?: and min/max/rev"), text)
        if m.group("ws") is None:
            if m.group("num") is not None:
                literal = m.group("num")
                value = int(literal, 0) if literal[:2].lower() in ("0x", "0b") else int(literal, 10)
                if value > MAX_LITERAL:
                    raise ExprError(tr("number {literal} is too large (more than 2^62)", literal=literal), i + 1,
                                    tr("use a smaller constant"), text)
                tokens.append(Token("num", m.group(0), i + 1, value))
            elif m.group("name") is not None:
                tokens.append(Token("name", m.group("name"), i + 1))
            else:
                tokens.append(Token("op", m.group("op"), i + 1))
        i = m.end()
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


# ---------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0
        self.nodes = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def error(self, problem: str, tok: Token, fix: str = "") -> ExprError:
        return ExprError(problem, tok.pos, fix, self.text)

    def expect(self, op: str) -> Token:
        tok = self.peek()
        if tok.kind != "op" or tok.text != op:
            got = tr("the end of the expression") if tok.kind == "end" else f"{tok.text!r}"
            raise self.error(tr("expected {op!r} but found {got}", op=op, got=got), tok)
        return self.take()

    def count(self, node: Node) -> Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ExprError(tr("expression has more than {max} parts", max=MAX_NODES), node.pos,
                            tr("simplify it or move constants into params"), self.text)
        return node

    def parse(self) -> Node:
        if self.peek().kind == "end":
            raise ExprError(tr("the expression is empty"), None, tr("write an integer expression, e.g. threadIdx.x"))
        node = self.expression(0)
        tok = self.peek()
        if tok.kind != "end":
            raise self.error(tr("unexpected {text!r} after a complete expression", text=tok.text), tok,
                             tr("check for a missing operator or an extra parenthesis"))
        return node

    def expression(self, min_prec: int) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(tr("expression is nested more than {max} levels deep", max=MAX_DEPTH), self.peek(),
                             tr("flatten it or move parts into params"))
        try:
            left = self.unary()
            while True:
                tok = self.peek()
                if tok.kind != "op":
                    break
                if tok.text == "?" and min_prec <= _TERNARY_PRECEDENCE:
                    self.take()
                    then = self.expression(0)
                    self.expect(":")
                    other = self.expression(_TERNARY_PRECEDENCE)
                    left = self.count(Cond(left, then, other, pos=tok.pos))
                    continue
                prec = _PRECEDENCE.get(tok.text)
                if prec is None or prec < min_prec:
                    break
                self.take()
                right = self.expression(prec + 1)
                left = self.count(Binary(tok.text, left, right, pos=tok.pos))
            return left
        finally:
            self.depth -= 1

    def unary(self) -> Node:
        tok = self.peek()
        if tok.kind == "op" and tok.text in UNARY_OPS:
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.error(tr("expression is nested more than {max} levels deep", max=MAX_DEPTH), tok,
                                 tr("remove the repeated unary operators"))
            try:
                operand = self.unary()
            finally:
                self.depth -= 1
            if tok.text == "+":
                return operand
            return self.count(Unary(tok.text, operand, pos=tok.pos))
        return self.primary()

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind == "num":
            return self.count(Num(tok.value, pos=tok.pos))
        if tok.kind == "name":
            nxt = self.peek()
            if nxt.kind == "op" and nxt.text == "(":
                return self.call(tok)
            if "." in tok.text and tok.text not in BUILTIN_NAMES:
                raise self.error(tr("unknown name {text!r}", text=tok.text), tok,
                                 tr("dotted names are threadIdx/blockIdx/blockDim/gridDim with .x, .y or .z"))
            return self.count(Name(tok.text, pos=tok.pos))
        if tok.kind == "op" and tok.text == "(":
            node = self.expression(0)
            self.expect(")")
            return node
        if tok.kind == "end":
            raise self.error(tr("the expression ends too early"), tok, tr("complete the last operator's operand"))
        raise self.error(tr("unexpected {text!r}", text=tok.text), tok, tr("expected a number, a name or '('"))

    def call(self, name_tok: Token) -> Node:
        func = name_tok.text
        if func not in FUNCTIONS:
            raise self.error(tr("unknown function {func!r}", func=func), name_tok,
                             tr("the functions are min(a, b), max(a, b) and rev(x, bits)"))
        self.expect("(")
        args: list[Node] = []
        if not (self.peek().kind == "op" and self.peek().text == ")"):
            while True:
                args.append(self.expression(0))
                if self.peek().kind == "op" and self.peek().text == ",":
                    self.take()
                    continue
                break
        self.expect(")")
        if len(args) != FUNCTIONS[func]:
            raise self.error(tr("{func}() takes {n} arguments, not {got}", func=func, n=FUNCTIONS[func],
                                got=len(args)), name_tok)
        return self.count(Call(func, tuple(args), pos=name_tok.pos))


def parse(text: str) -> Node:
    """Parse one C integer expression into a tree; raises ExprError naming the column."""
    if not isinstance(text, str):
        raise ExprError(tr("expected an expression as a string, got {type}", type=type(text).__name__),
                        fix=tr("write it in quotes, e.g. \"threadIdx.x * 2\""))
    return _Parser(text).parse()


def depth(node: Node) -> int:
    best = 0
    stack = [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in children(n))
    return best


# ---------------------------------------------------------------------------- access

_ACCESS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[")


@dataclass(frozen=True)
class AccessExpr:
    """``NAME[i]`` or ``NAME[i][j]``, optionally ``.field``."""

    array: str
    indices: tuple[Node, ...]
    field: str | None


def parse_access(text: str) -> AccessExpr:
    if not isinstance(text, str):
        raise ExprError(tr("expected an access as a string, got {type}", type=type(text).__name__),
                        fix=tr("write it in quotes, e.g. \"src[threadIdx.x]\""))
    if len(text) > MAX_TEXT:
        raise ExprError(tr("access is {n} characters long, more than the {max} allowed", n=len(text), max=MAX_TEXT))
    m = _ACCESS.match(text)
    if not m:
        raise ExprError(tr("an access must be NAME[index] or NAME[row][col], optionally followed by .field"),
                        1, tr("e.g. at = \"src[blockIdx.x*blockDim.x + threadIdx.x]\""), text)
    array = m.group(1)
    pos = m.end()  # just after '['
    indices: list[Node] = []
    while True:
        close = _matching_bracket(text, pos - 1)
        inner = text[pos:close]
        try:
            indices.append(parse(inner))
        except ExprError as err:
            col = (err.column + pos) if err.column else pos + 1
            raise ExprError(err.problem, col, err.fix, text) from None
        rest = text[close + 1:]
        stripped = rest.lstrip()
        if stripped.startswith("["):
            pos = close + 1 + (len(rest) - len(stripped)) + 1
            continue
        break
    if len(indices) > 2:
        raise ExprError(tr("{n} indices; arrays have 1 or 2 dimensions", n=len(indices)), pos, "", text)
    fld = None
    rest = text[close + 1:].strip()
    if rest:
        fm = re.fullmatch(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)", rest)
        if not fm:
            raise ExprError(tr("unexpected {rest!r} after the index", rest=rest), close + 2,
                            tr("only a .field (struct field or vector component x y z w) may follow"), text)
        fld = fm.group(1)
    return AccessExpr(array, tuple(indices), fld)


def _matching_bracket(text: str, open_pos: int) -> int:
    level = 0
    for k in range(open_pos, len(text)):
        if text[k] == "[":
            level += 1
        elif text[k] == "]":
            level -= 1
            if level == 0:
                return k
    raise ExprError(tr("'[' is never closed"), open_pos + 1, tr("add the missing ']'"), text)


# ---------------------------------------------------------------------------- CUDA


def to_cuda(node: Node, rename: Mapping[str, str] | None = None) -> str:
    """Print the tree as a fully parenthesised CUDA C ``long long`` expression.

    Names are mapped through ``rename`` (builtins become the kernel's ``long long``
    locals, so ``threadIdx.x - 1`` is signed as in the model). Functions become the
    ``wv_min``/``wv_max``/``wv_rev`` helpers of the kernel prelude. Comparisons and
    logical operators are cast back to ``long long`` so every value stays 64-bit.
    """
    return _print(node, rename or {}, cuda=True)


def to_text(node: Node) -> str:
    """Print the tree back in the expression language (fully parenthesised)."""
    return _print(node, {}, cuda=False)


def _print(node: Node, rename: Mapping[str, str], cuda: bool) -> str:
    def text_of(n: Node, args: list[str]) -> str:
        if isinstance(n, Num):
            return f"{n.value}LL" if cuda else str(n.value)
        if isinstance(n, Name):
            return rename.get(n.name, n.name)
        if isinstance(n, Unary):
            text = f"({n.op}{args[0]})"
            return f"((long long){text})" if cuda and n.op == "!" else text
        if isinstance(n, Binary):
            text = f"({args[0]} {n.op} {args[1]})"
            boolean = n.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||")
            return f"((long long){text})" if cuda and boolean else text
        if isinstance(n, Cond):
            return f"({args[0]} ? {args[1]} : {args[2]})"
        prefix = "wv_" if cuda else ""                                      # a Call
        return f"{prefix}{n.func}({', '.join(args)})"

    return fold(node, text_of)       # the tree is bounded, but printing must never recurse
