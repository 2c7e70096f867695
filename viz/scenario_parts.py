"""The parts of a scenario as data: its launch, arrays, accesses and warp instructions, and
ScenarioError (where, what, the fix) with ``line_of`` to find a field's line in the text.

Below the parser (``viz.scenario``), the access kinds (``viz.kinds``) and the engine: each of
them builds or reads these objects. ``viz.scenario`` re-exports every name here.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .errors import WarpvizError
from .expr import Node
from .gpus import WARP
from .i18n import sep, tr
from .layout import Swizzle
from .types import ElemType


class ScenarioError(WarpvizError, ValueError):
    """A scenario that cannot be used: where (file, field or access), what, and the fix."""

    def __init__(self, source: str, where: str, problem: str, fix: str = "", line: int | None = None):
        self.source, self.where, self.problem, self.fix, self.line = source, where, problem, fix, line
        super().__init__(self.message())

    def message(self) -> str:
        """The one paragraph shown to the user, in the interface language (English for the CLI)."""
        loc = self.source + (tr(", line {line}", line=self.line) if self.line else "")
        colon = sep(": ")
        where = where_text(self.where)
        text = f"{loc}{colon}{where}{colon}{self.problem}" if where else f"{loc}{colon}{self.problem}"
        stop = sep(".")
        if self.fix:
            fix = self.fix.rstrip(".。")
            fix = fix[:1].upper() + fix[1:]
            text += sep(". ") + fix + ("" if fix.endswith(("?", "!", "？", "！")) else stop)
        elif not text.endswith((".", "。")):
            text += stop
        return _one_paragraph(text)


MAX_MESSAGE = 1000   # characters of a message; a file's long value is cut, not printed whole


def _one_paragraph(text: str) -> str:
    """One line (a value with line breaks in it is written with spaces), and not endless."""
    text = re.sub(r"[\r\n\v\f\x85\u2028\u2029]+", " ", text)
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1] + "…"


_ACCESS_WHERE = re.compile(r"access (\d+)(?: \((load|store) (.*)\))?", re.S)


def where_text(where: str) -> str:
    """A ScenarioError's ``where`` ("access 2 (load tile[r][c])", "TOML syntax", "arrays.tile") as
    shown: the words translated, TOML keys and code kept."""
    m = _ACCESS_WHERE.fullmatch(where)
    if m and m.group(2):
        return tr("access {k} ({op} {at})", k=m.group(1), op=tr(m.group(2)), at=m.group(3))
    if m:
        return tr("access {k}", k=m.group(1))
    if where == "TOML syntax":
        return tr("TOML syntax")
    return where


@dataclass(frozen=True)
class Launch:
    block: tuple[int, int, int]
    grid: tuple[int, int, int]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // WARP)

    @property
    def threads(self) -> int:
        return self.blocks * self.threads_per_block


@dataclass(frozen=True)
class Array:
    name: str
    space: str                 # "global" | "shared"
    type: ElemType
    shape: tuple[int, ...]     # 1 or 2 extents
    pad: int
    swizzle: Swizzle
    offset: int                # bytes after the aligned start
    start: int                 # aligned start of the allocation (bytes)
    layout: Node               # element offset over row, col

    @property
    def base(self) -> int:
        """Byte address of element offset 0 (aligned start + offset)."""
        return self.start + self.offset

    @property
    def row_pitch(self) -> int:
        return self.shape[1] + self.pad if len(self.shape) == 2 else self.shape[0]

    @property
    def elements(self) -> int:
        return self.shape[0] * self.row_pitch if len(self.shape) == 2 else self.shape[0]

    @property
    def nbytes(self) -> int:
        return self.elements * self.type.size

    @property
    def footprint(self) -> int:
        return self.offset + self.nbytes

    def describe(self) -> str:
        dims = "".join(f"[{d}]" for d in self.shape)
        extra = []
        if self.pad:
            extra.append(tr("pad {n}", n=self.pad))
        if self.swizzle.kind == "layout":
            extra.append(tr("layout {kind}", kind=self.swizzle.text))
        elif not self.swizzle.is_identity:
            extra.append(tr("swizzle {kind}", kind=self.swizzle.text))
        if self.offset:
            extra.append(tr("offset {n} B", n=self.offset))
        tail = sep(" (") + sep(", ").join(extra) + sep(")") if extra else ""
        decl = f"{self.type.name} {self.name}{dims}"
        text = tr("shared {decl}", decl=decl) if self.space == "shared" else tr("global {decl}", decl=decl)
        return text + tail


@dataclass(frozen=True)
class Loop:
    var: str
    start: Node
    stop: Node
    step: Node
    text: str


@dataclass(frozen=True)
class Access:
    index: int
    op: str                    # "load" | "store"
    text: str                  # the `at` text as written
    array: str
    indices: tuple[Node, ...]
    field: str | None
    loops: tuple[Loop, ...]
    when: Node | None
    when_text: str | None
    parts: tuple[tuple[int, int], ...]  # (byte offset in the element, size) per instruction
    line: int | None = None
    source: "Access | None" = None     # format 3 kinds (viz.kinds): cp.async's global source, TMA's box origin
    options: tuple[tuple[str, Any], ...] = ()   # format 3 kinds: cache, result, box, swizzle ...
    matrix: object = None               # ldmatrix / stmatrix (format 3, a viz.kinds.ldmatrix.MatrixOp): op is then "load" / "store"

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    @property
    def size(self) -> int:
        return self.parts[0][1]

    @property
    def op_text(self) -> str:
        """The op as the file writes it: "load", "store", "ldmatrix.x4" ..."""
        return self.matrix.text if self.matrix is not None else self.op

    def label(self) -> str:
        return f"access {self.index} ({self.op_text} {self.text})"


@dataclass(frozen=True)
class Instruction:
    """One warp instruction: an access at one loop point, one part of the element."""

    number: int
    access: int
    loop: tuple[tuple[str, int], ...]
    part: int
    byte_offset: int
    size: int

    def loop_text(self) -> str:
        return ", ".join(f"{k} = {v}" for k, v in self.loop)


_HEADER = re.compile(r"\s*\[")
_ACCESS_HEADER = re.compile(r"\s*\[\[\s*access\s*\]\]")
_TABLE_HEADER = re.compile(r"\s*\[\s*([^\[\]]*?)\s*\]")


@dataclass(frozen=True)
class _TextIndex:
    """Where the tables of a scenario's text start, found in one pass over its lines."""

    lines: list[str]
    headers: list[int]             # 0-based line of every table header, in order
    accesses: list[int]            # of every [[access]]
    tables: dict[str, int]         # a [table]'s name -> its first header line


@lru_cache(maxsize=8)
def _text_index(text: str) -> _TextIndex:
    lines = text.splitlines()
    headers, accesses, tables = [], [], {}
    for i, ln in enumerate(lines):
        if not _HEADER.match(ln):
            continue
        headers.append(i)
        if _ACCESS_HEADER.match(ln):
            accesses.append(i)
        elif (m := _TABLE_HEADER.match(ln)) is not None:
            tables.setdefault(m.group(1), i)
    return _TextIndex(lines, headers, accesses, tables)


def line_of(text: str, where: str, key: str | None = None) -> int | None:
    """Best-effort 1-based line for a field path ("access 2", "arrays.tile") in TOML text.

    The text is indexed once (cached), so asking for every access of a long file is linear."""
    idx = _text_index(text)
    lines = idx.lines
    top = where.split(".")[0].split(" ")[0]
    if top in ("format", "title", "notes", "tags", "expect_error", "title_zh", "notes_zh", "compare") or (not where and key):
        name = key or top
        first = idx.headers[0] if idx.headers else len(lines)
        pattern = re.compile(rf"\s*{re.escape(name)}\s*=")
        for i in range(first):
            if pattern.match(lines[i]):
                return i + 1
        return None
    m = re.match(r"access (\d+)", where)
    if m:
        k = int(m.group(1))
        start = idx.accesses[k] if k < len(idx.accesses) else None
    else:
        m = re.match(r"arrays\.([A-Za-z_]\w*)", where)
        section = f"arrays.{m.group(1)}" if m else where.split(".")[0]
        start = idx.tables.get(section)
    if start is None:
        return None
    if key:
        nxt = bisect.bisect_right(idx.headers, start)
        stop = idx.headers[nxt] if nxt < len(idx.headers) else len(lines)
        pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
        for i in range(start + 1, stop):
            if pattern.match(lines[i]):
                return i + 1
    return start + 1


def access_text(detail) -> str:
    """The access as written, with its loop point (``detail``: a ``viz.warp.WarpDetail``, or anything
    with its ``access`` and ``instruction``), e.g. ``tile[threadIdx.x][threadIdx.y + j] (j = 0)``."""
    text = detail.access.text
    if len(detail.access.parts) > 1:
        off, size = detail.access.parts[detail.instruction.part]
        text += " " + tr("(bytes {a}-{b} of the element)", a=off, b=off + size - 1)
    loop = detail.instruction.loop_text()
    return text + sep(" (") + loop + sep(")") if loop else text
