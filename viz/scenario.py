"""Scenarios: TOML in, validated immutable model objects out (contract: SCENARIO_FORMAT.md).

Loading never executes anything: the TOML is parsed by ``tomllib``, every expression by
``viz.expr``. Every problem is a ``ScenarioError`` naming the file, the access or field,
and what to change.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

import numpy as np

from . import assets
from .i18n import language
from .expr import BUILTIN_NAMES, FUNCTIONS, ExprError, Node, names, parse, parse_access
from .layout import TMA_SWIZZLES, LayoutError, Swizzle, check_bijection, layout_swizzle, offset_tree, parse_swizzle
from .layout_text import AuthoredLayout, check as check_layout, fit, parse_layout
from .types import ElemType, all_type_names, named_type, struct

FORMAT_VERSION = 2
FORMAT_2_SWIZZLES = ("tma:", "Sw<", "Swizzle<")   # swizzles that came with format 2

# Limits (H100, compute capability 9.0) and of the analysis itself.
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
MAX_SHARED_BYTES = 227 * 1024  # the most dynamic shared memory one block may use on H100
MAX_LAUNCH_THREADS = 1 << 26   # what the analysis will take on (64 Mi threads)
MAX_INSTRUCTIONS = 100_000     # warp instructions per thread over all accesses
GLOBAL_ALIGN = 256
SHARED_ALIGN = 128

TOP_KEYS = {"format", "title", "notes", "tags", "launch", "params", "arrays", "access",
            "expected", "expect_error", "timing", "name", "title_zh", "notes_zh"}
ARRAY_KEYS = {"space", "type", "fields", "shape", "pad", "swizzle", "layout", "offset", "init"}
ACCESS_KEYS = {"op", "at", "for", "when", "note"}


class ScenarioError(ValueError):
    """A scenario that cannot be used: where (file, field or access), what, and the fix."""

    def __init__(self, source: str, where: str, problem: str, fix: str = "", line: int | None = None):
        self.source, self.where, self.problem, self.fix, self.line = source, where, problem, fix, line
        super().__init__(self.message())

    def message(self) -> str:
        loc = self.source + (f", line {self.line}" if self.line else "")
        text = f"{loc}: {self.where}: {self.problem}" if self.where else f"{loc}: {self.problem}"
        if self.fix:
            fix = self.fix.rstrip(".")
            fix = fix[:1].upper() + fix[1:]
            text += f". {fix}" + ("" if fix.endswith(("?", "!")) else ".")
        elif not text.endswith("."):
            text += "."
        return text


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
        return -(-self.threads_per_block // 32)

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
            extra.append(f"pad {self.pad}")
        if self.swizzle.kind == "layout":
            extra.append(f"layout {self.swizzle.text}")
        elif not self.swizzle.is_identity:
            extra.append(f"swizzle {self.swizzle.text}")
        if self.offset:
            extra.append(f"offset {self.offset} B")
        tail = f" ({', '.join(extra)})" if extra else ""
        return f"{self.space} {self.type.name} {self.name}{dims}{tail}"


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

    @property
    def size(self) -> int:
        return self.parts[0][1]

    def label(self) -> str:
        return f"access {self.index} ({self.op} {self.text})"


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


@dataclass(frozen=True)
class Scenario:
    title: str
    notes: str
    tags: tuple[str, ...]
    launch: Launch
    params: Mapping[str, int]
    arrays: tuple[Array, ...]
    accesses: tuple[Access, ...]
    source: str = "<scenario>"
    name: str = ""
    text: str = ""
    expected: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    expect_error: str | None = None
    timing: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    format: int = FORMAT_VERSION
    title_zh: str = ""             # optional Chinese title and notes (the app shows them in Chinese)
    notes_zh: str = ""

    @property
    def shown_title(self) -> str:
        """The title in the interface language (``title_zh`` when Chinese and given)."""
        return localized(self.title, self.title_zh)

    @property
    def shown_notes(self) -> str:
        """The notes in the interface language (``notes_zh`` when Chinese and given)."""
        return localized(self.notes, self.notes_zh)

    def array(self, name: str) -> Array:
        return next(a for a in self.arrays if a.name == name)

    @property
    def shared_bytes(self) -> int:
        shared = [a for a in self.arrays if a.space == "shared"]
        return max((a.start + a.footprint for a in shared), default=0)

    def instructions(self) -> list[Instruction]:
        return expand_instructions(self)


# ---------------------------------------------------------------------------- loading


def localized(english: str, chinese: str) -> str:
    """``chinese`` when the interface language is Chinese and there is one, else ``english``."""
    return chinese if chinese and language().startswith("zh") else english


def builtin_names() -> list[str]:
    return sorted(p.stem for p in assets.scenario_dir().glob("*.toml"))


def runnable_builtins() -> list[tuple[str, "Scenario"]]:
    """Every built-in as (name, scenario), except the lessons in an error (``expect_error``)."""
    return [(n, sc) for n in builtin_names() if not (sc := load(n)).expect_error]


def resolve(file_or_name: str) -> Path:
    """A path to a file, or a built-in's name; raises ScenarioError if neither exists."""
    p = Path(file_or_name)
    if p.suffix == ".toml" or p.exists() or "/" in file_or_name or "\\" in file_or_name:
        if not p.exists():
            raise ScenarioError(str(p), "", "no such file", "check the path, or give a built-in name "
                                "(see `warpviz list`)")
        return p
    builtin = assets.scenario_dir() / f"{file_or_name}.toml"
    if builtin.exists():
        return builtin
    close = difflib.get_close_matches(file_or_name, builtin_names(), n=3)
    hint = f"did you mean {', '.join(close)}?" if close else "`warpviz list` shows the built-ins"
    raise ScenarioError(file_or_name, "", "is neither a file nor a built-in scenario", hint)


def load(file_or_name: str | Path, overrides: Mapping[str, str] | None = None) -> Scenario:
    path = resolve(str(file_or_name))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioError(str(path), "", f"cannot be read ({err})", "check the file's permissions and "
                            "that it is UTF-8 text") from None
    is_builtin = path.parent.resolve() == assets.scenario_dir().resolve()
    return loads(text, source=str(path), name=path.stem if is_builtin else path.stem,
                 overrides=overrides)


def loads(text: str, source: str = "<scenario>", name: str = "",
          overrides: Mapping[str, str] | None = None) -> Scenario:
    """Parse and validate scenario TOML text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else None
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        if m:
            problem += f" (column {m.group(2)})"
        raise ScenarioError(source, "TOML syntax", problem, "fix the TOML syntax on that line "
                            "(strings need quotes, tables [name], arrays [1, 2])", line) from None
    return _Builder(data, source, name, text, overrides or {}).build()


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise ScenarioError("--set", item, "expected NAME=VALUE", "e.g. --set PAD=1")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def line_of(text: str, where: str, key: str | None = None) -> int | None:
    """Best-effort 1-based line for a field path ("access 2", "arrays.tile") in TOML text."""
    lines = text.splitlines()
    start = None
    top = where.split(".")[0].split(" ")[0]
    if top in ("format", "title", "notes", "tags", "expect_error", "title_zh", "notes_zh") or (not where and key):
        name = key or top
        for i, ln in enumerate(lines):
            if re.match(r"\s*\[", ln):
                break
            if re.match(rf"\s*{re.escape(name)}\s*=", ln):
                return i + 1
        return None
    m = re.match(r"access (\d+)", where)
    if m:
        k = int(m.group(1))
        hits = [i for i, ln in enumerate(lines) if re.match(r"\s*\[\[\s*access\s*\]\]", ln)]
        if k < len(hits):
            start = hits[k]
    else:
        m = re.match(r"arrays\.([A-Za-z_]\w*)", where)
        section = f"arrays.{m.group(1)}" if m else where.split(".")[0]
        for i, ln in enumerate(lines):
            if re.match(rf"\s*\[\s*{re.escape(section)}\s*\]", ln):
                start = i
                break
    if start is None:
        return None
    if key:
        for i in range(start + 1, len(lines)):
            if re.match(r"\s*\[", lines[i]):
                break
            if re.match(rf"\s*{re.escape(key)}\s*=", lines[i]):
                return i + 1
    return start + 1


class _Builder:
    def __init__(self, data: dict, source: str, name: str, text: str, overrides: Mapping[str, str]):
        self.data, self.source, self.name, self.text, self.overrides = data, source, name, text, overrides

    def fail(self, where: str, problem: str, fix: str = "", key: str | None = None):
        raise ScenarioError(self.source, where, problem, fix, line_of(self.text, where, key))

    def unknown_keys(self, table: dict, allowed: set[str], where: str):
        for k in table:
            if k not in allowed:
                close = difflib.get_close_matches(k, sorted(allowed), n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(sorted(allowed))}"
                self.fail(where, f"unknown key {k!r}", hint, key=k)

    # -- top level ---------------------------------------------------------

    def build(self) -> Scenario:
        d = self.data
        self.unknown_keys(d, TOP_KEYS, "")
        fmt = d.get("format", 1)       # a file without `format` was written before it existed
        if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt < 1:
            self.fail("format", f"format must be a positive integer, not {fmt!r}", f"write format = {FORMAT_VERSION}")
        if fmt > FORMAT_VERSION:
            self.fail("format", f"this file uses scenario format {fmt}, newer than this warpviz reads "
                      f"(format {FORMAT_VERSION})", "update warpviz to open it")
        title = self.string(d, "title", "", required=False) or self.name or "untitled scenario"
        notes = self.string(d, "notes", "", required=False)
        title_zh = self.string(d, "title_zh", "", required=False)
        notes_zh = self.string(d, "notes_zh", "", required=False)
        tags = d.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            self.fail("tags", "tags must be a list of strings", 'e.g. tags = ["shared", "swizzle"]')
        self.format = fmt
        self.params = self.build_params(d.get("params", {}))
        launch = self.build_launch(d.get("launch"))
        arrays = self.build_arrays(d.get("arrays"))
        self.arrays = {a.name: a for a in arrays}
        raw_access = d.get("access")
        if not isinstance(raw_access, list) or not raw_access:
            self.fail("access", "a scenario needs at least one [[access]] table",
                      'add one: [[access]] with op = "load" and at = "src[threadIdx.x]"')
        accesses = tuple(self.build_access(k, a) for k, a in enumerate(raw_access))
        expected = d.get("expected", {})
        if not isinstance(expected, dict) or not all(isinstance(v, int) for v in expected.values()):
            self.fail("expected", "expected must be a table of metric names to integers")
        expect_error = d.get("expect_error")
        if expect_error is not None and not isinstance(expect_error, str):
            self.fail("expect_error", "expect_error must be a string")
        timing = d.get("timing", {})
        if not isinstance(timing, dict):
            self.fail("timing", "timing must be a table")
        sc = Scenario(title=title, notes=notes, tags=tuple(tags), launch=launch,
                      params=MappingProxyType(dict(self.params)), arrays=arrays, accesses=accesses,
                      source=self.source, name=self.name, text=self.text,
                      expected=MappingProxyType(dict(expected)), expect_error=expect_error,
                      timing=MappingProxyType(dict(timing)), format=fmt, title_zh=title_zh, notes_zh=notes_zh)
        count = sum(len(a.parts) * self.iterations(a) for a in accesses)
        if count > MAX_INSTRUCTIONS:
            self.fail("access", f"the accesses expand to {count} warp instructions per thread, more than "
                      f"the {MAX_INSTRUCTIONS} the analysis takes", "use fewer loop iterations")
        return sc

    def string(self, d: dict, key: str, where: str, required: bool = True) -> str:
        v = d.get(key)
        if v is None:
            if required:
                self.fail(where or key, f"missing {key!r}")
            return ""
        if not isinstance(v, str):
            self.fail(f"{where}.{key}" if where else key, f"{key} must be a string, not {type(v).__name__}",
                      f'write it in quotes, e.g. {key} = "..."', key=key)
        return v

    # -- params ------------------------------------------------------------

    def build_params(self, raw: Any) -> dict[str, int]:
        if not isinstance(raw, dict):
            self.fail("params", "params must be a table of NAME = integer")
        params: dict[str, int] = {}
        for k, v in raw.items():
            self.check_name(k, "params", "param")
            if k in self.overrides:
                v = self.overrides[k]
            params[k] = self.constant(v, f"params.{k}", params, key=k, where_section="params")
        for k in self.overrides:
            if k not in raw:
                close = difflib.get_close_matches(k, list(raw), n=1)
                hint = f"did you mean {close[0]}?" if close else \
                    f"the params are: {', '.join(raw) or '(none)'}"
                raise ScenarioError(self.source, f"--set {k}", f"{k!r} is not a param of this scenario", hint)
        return params

    def check_name(self, k: str, where: str, what: str):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            self.fail(where, f"{what} name {k!r} is not an identifier", "use letters, digits and _")
        if k in BUILTIN_NAMES or k in FUNCTIONS or k in ("threadIdx", "blockIdx", "blockDim", "gridDim",
                                                         "row", "col"):
            self.fail(where, f"{what} name {k!r} is reserved", "pick another name", key=k)

    def constant(self, v: Any, where: str, scope: Mapping[str, int], key: str | None = None,
                 where_section: str | None = None, allow_negative: bool = True) -> int:
        """An integer, or an expression string over params (and outer loop variables)."""
        section = where_section or where
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            self.fail(section, f"{where} must be an integer or an expression string, not {v!r}",
                      "e.g. 32 or \"TILE * 2\"", key=key)
        if isinstance(v, int):
            value = v
        else:
            value = self.eval_const(v, where, scope, section, key)
        if abs(value) > 2**62:
            self.fail(section, f"{where} = {value} is too large", "keep constants below 2^62", key=key)
        if not allow_negative and value < 0:
            self.fail(section, f"{where} must not be negative (it is {value})", key=key)
        return value

    def eval_const(self, text: str, where: str, scope: Mapping[str, int], section: str,
                   key: str | None) -> int:
        from .lanes import Evaluator, Lanes, Space

        tree = self.expr(text, where, section, key)
        unknown = names(tree) - set(scope)
        if unknown:
            n = sorted(unknown)[0]
            close = difflib.get_close_matches(n, list(scope), n=1)
            hint = f"did you mean {close[0]}?" if close else "only params (and outer loop variables) may be used here"
            self.fail(section, f"{where}: unknown name {n!r} in `{text}`", hint, key=key)
        space = Space({k: Lanes.const(v) for k, v in scope.items()}, (1, 1))
        value, faults = Evaluator(space).evaluate(tree)
        if faults:
            self.fail(section, f"{where}: {faults[0].problem}", key=key)
        return value.scalar()

    def expr(self, text: Any, where: str, section: str, key: str | None = None) -> Node:
        try:
            return parse(text)
        except ExprError as err:
            self.fail(section, f"{where}: {err.describe()}", key=key)

    # -- launch ------------------------------------------------------------

    def build_launch(self, raw: Any) -> Launch:
        if not isinstance(raw, dict):
            self.fail("launch", "missing [launch] table", "add [launch] with block = [...] and grid = [...]")
        self.unknown_keys(raw, {"block", "grid"}, "launch")
        dims = {}
        for key, limits in (("block", MAX_BLOCK_DIM), ("grid", MAX_GRID_DIM)):
            v = raw.get(key)
            if v is None:
                self.fail("launch", f"missing launch.{key}", f"e.g. {key} = [256]", key=key)
            if isinstance(v, (int, str)) and not isinstance(v, bool):
                v = [v]
            if not isinstance(v, list) or not 1 <= len(v) <= 3:
                self.fail("launch", f"launch.{key} must be 1 to 3 numbers", f"e.g. {key} = [32, 8]", key=key)
            nums = [self.constant(x, f"launch.{key}", self.params, key=key, where_section="launch") for x in v]
            nums += [1] * (3 - len(nums))
            for axis, (n, lim) in enumerate(zip(nums, limits)):
                if n < 1:
                    self.fail("launch", f"launch.{key} {'xyz'[axis]} is {n}; every dimension must be at least 1",
                              key=key)
                if n > lim:
                    self.fail("launch", f"launch.{key} {'xyz'[axis]} is {n}, above the GPU's limit of {lim}",
                              key=key)
            dims[key] = tuple(nums)
        launch = Launch(dims["block"], dims["grid"])
        if launch.threads_per_block > MAX_BLOCK_THREADS:
            self.fail("launch", f"a block of {launch.threads_per_block} threads is more than the "
                      f"{MAX_BLOCK_THREADS} a block may have", "make launch.block smaller", key="block")
        if launch.threads > MAX_LAUNCH_THREADS:
            self.fail("launch", f"the launch has {launch.threads:,} threads, more than the "
                      f"{MAX_LAUNCH_THREADS:,} warpviz analyses", "use a smaller grid (the counts per "
                      "warp do not change with the grid size for regular patterns)", key="grid")
        self.launch = launch
        return launch

    # -- arrays ------------------------------------------------------------

    def build_arrays(self, raw: Any) -> tuple[Array, ...]:
        if not isinstance(raw, dict) or not raw:
            self.fail("arrays", "a scenario needs at least one array",
                      'add e.g. [arrays.src] with space = "global", type = "float", shape = [1024]')
        out = []
        next_start = {"global": 0, "shared": 0}
        for name, spec in raw.items():
            where = f"arrays.{name}"
            self.check_name(name, where, "array")
            if name in self.params:
                self.fail(where, f"array {name!r} has the same name as a param", "rename one of them")
            if not isinstance(spec, dict):
                self.fail(where, "an array must be a table", f"write [arrays.{name}] with space, type, shape")
            self.unknown_keys(spec, ARRAY_KEYS, where)
            space = spec.get("space", "global")
            if space not in ("global", "shared"):
                self.fail(where, f"space must be \"global\" or \"shared\", not {space!r}", key="space")
            etype = self.build_type(spec, where)
            authored = self.build_layout(spec, where) if "layout" in spec else None
            shape_raw = spec.get("shape")
            if shape_raw is None and authored is not None and authored.extents() is not None:
                shape_raw = list(authored.extents())
            if isinstance(shape_raw, (int, str)) and not isinstance(shape_raw, bool):
                shape_raw = [shape_raw]
            if not isinstance(shape_raw, list) or not 1 <= len(shape_raw) <= 2:
                self.fail(where, "shape must be 1 or 2 extents", "e.g. shape = [1024] or shape = [32, 32]",
                          key="shape")
            shape = tuple(self.constant(x, f"{where}.shape", self.params, key="shape", where_section=where)
                          for x in shape_raw)
            for n in shape:
                if n < 1:
                    self.fail(where, f"every extent of shape must be at least 1 (got {list(shape)})", key="shape")
                if n > 2**40:
                    self.fail(where, f"extent {n} is too large", key="shape")
            pad = self.constant(spec.get("pad", 0), f"{where}.pad", self.params, key="pad",
                                where_section=where, allow_negative=False)
            if pad and len(shape) != 2:
                self.fail(where, "pad adds elements per row, so it needs a 2-D shape", "use shape = [ROWS, COLS]",
                          key="pad")
            offset = self.constant(spec.get("offset", 0), f"{where}.offset", self.params, key="offset",
                                   where_section=where, allow_negative=False)
            cols = shape[1] if len(shape) == 2 else None
            if authored is not None:
                swz = self.fit_layout(authored, spec, shape, etype, pad, where)
            else:
                swz_text = spec.get("swizzle", "none")
                if isinstance(swz_text, str) and swz_text.strip().startswith(FORMAT_2_SWIZZLES):
                    self.need_format(2, f"swizzle = \"{swz_text}\"", where, "swizzle")
                try:
                    swz = parse_swizzle(swz_text, cols, self.params, etype.size)
                    if swz.text in TMA_SWIZZLES and pad:
                        raise LayoutError(f"swizzle {swz.text!r} is written by the TMA on rows of exactly its "
                                          "span, so pad cannot be used with it", "remove pad")
                    check_bijection(swz, shape[0], cols, pad, self.params)
                except (LayoutError, ExprError) as err:
                    self.fail(where, str(err), key="swizzle")
            align = GLOBAL_ALIGN if space == "global" else SHARED_ALIGN
            start = -(-next_start[space] // align) * align
            arr = Array(name, space, etype, shape, pad, swz, offset, start, offset_tree(swz, cols, pad))
            next_start[space] = start + arr.footprint
            out.append(arr)
        shared_total = next_start["shared"]
        if shared_total > MAX_SHARED_BYTES:
            self.fail("arrays", f"the shared arrays need {shared_total:,} bytes, more than the "
                      f"{MAX_SHARED_BYTES:,} bytes one block may use on an H100", "make them smaller")
        return tuple(out)

    def need_format(self, version: int, what: str, where: str, key: str) -> None:
        if self.format < version:
            self.fail(where, f"{what} is part of scenario format {version}, but the file declares "
                      f"format {self.format}" if "format" in self.data else
                      f"{what} is part of scenario format {version}",
                      f"add format = {version} at the top of the file", key=key)

    def build_layout(self, spec: dict, where: str) -> AuthoredLayout:
        """An array's ``layout`` as CuTe or Triton write it (viz.layout_text)."""
        self.need_format(2, "layout", where, "layout")
        if "swizzle" in spec:
            self.fail(where, "give either layout or swizzle, not both", "a layout already says where each "
                      "element goes; put a CuTe swizzle in front of it: layout = \"Sw<3,3,3> o (8,64):(64,1)\"",
                      key="swizzle")
        try:
            return parse_layout(spec["layout"])
        except LayoutError as err:
            self.fail(where, err.problem, err.fix, key="layout")

    def fit_layout(self, authored: AuthoredLayout, spec: dict, shape: tuple[int, ...], etype: ElemType,
                   pad: int, where: str) -> Swizzle:
        try:
            extents = fit(authored, tuple(shape) if "shape" in spec else None, etype.size)
            if authored.kind != "cute" and pad:
                raise LayoutError(f"layout {authored.text!r} places every element itself, so pad cannot be "
                                  "used with it", "remove pad")
            check_layout(authored, extents, etype.size, pad)
        except LayoutError as err:
            self.fail(where, err.problem, err.fix, key="layout")
        return layout_swizzle(authored.text, authored.tree(extents, etype.size))

    def build_type(self, spec: dict, where: str) -> ElemType:
        has_type, has_fields = "type" in spec, "fields" in spec
        if has_type == has_fields:
            self.fail(where, "give either type or fields (a struct), not both" if has_type else
                      "missing type", 'e.g. type = "float", or fields = ["r:float", "g:float"]')
        if has_type:
            name = spec["type"]
            t = named_type(name) if isinstance(name, str) else None
            if t is None:
                close = difflib.get_close_matches(str(name), all_type_names(), n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"types: {', '.join(all_type_names())}"
                self.fail(where, f"unknown type {name!r}", hint, key="type")
            return t
        raw = spec["fields"]
        if not isinstance(raw, list) or not raw:
            self.fail(where, "fields must be a non-empty list of \"name:type\" strings", key="fields")
        fields = []
        for f in raw:
            m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*:\s*(\w+)\s*", f) if isinstance(f, str) else None
            t = named_type(m.group(2)) if m else None
            if not m or t is None:
                self.fail(where, f"field {f!r} must be \"name:type\" with a known type",
                          f"types: {', '.join(all_type_names())}", key="fields")
            if any(m.group(1) == n for n, _ in fields):
                self.fail(where, f"field {m.group(1)!r} appears twice", key="fields")
            fields.append((m.group(1), t))
        return struct(fields)

    # -- accesses ----------------------------------------------------------

    def build_access(self, k: int, raw: Any) -> Access:
        where = f"access {k}"
        if not isinstance(raw, dict):
            self.fail(where, "an access must be a table", "write [[access]] with op and at")
        self.unknown_keys(raw, ACCESS_KEYS, where)
        op = raw.get("op")
        if op not in ("load", "store"):
            self.fail(where, f"op must be \"load\" or \"store\", not {op!r}", key="op")
        at = self.string(raw, "at", where)
        line = line_of(self.text, where)
        try:
            ax = parse_access(at)
        except ExprError as err:
            self.fail(where, f"at = \"{_short(at)}\": {err.describe()}", key="at")
        where = f"access {k} ({op} {_short(at)})"
        arr = self.arrays.get(ax.array)
        if arr is None:
            close = difflib.get_close_matches(ax.array, list(self.arrays), n=1)
            hint = f"did you mean {close[0]}?" if close else f"arrays: {', '.join(self.arrays)}"
            self.fail(where, f"unknown array {ax.array!r}", hint, key="at")
        if len(ax.indices) != len(arr.shape):
            self.fail(where, f"{arr.name} has {len(arr.shape)} dimension(s) but the access gives "
                      f"{len(ax.indices)} index(es)",
                      f"write {arr.name}" + ("[i]" if len(arr.shape) == 1 else "[row][col]"), key="at")
        loops = self.build_loops(raw.get("for"), where, k)
        scope = set(self.params) | set(BUILTIN_NAMES) | {lp.var for lp in loops}
        for node in ax.indices:
            self.check_names(node, scope, where, "at", at)
        when = None
        when_text = raw.get("when")
        if when_text is not None:
            when = self.expr(when_text, f"when = \"{when_text}\"", where, key="when")
            self.check_names(when, scope, where, "when", when_text)
        parts = self.access_parts(arr, ax.field, where)
        return Access(k, op, at, arr.name, ax.indices, ax.field, loops, when,
                      when_text, parts, line)

    def access_parts(self, arr: Array, fld: str | None, where: str) -> tuple[tuple[int, int], ...]:
        t = arr.type
        if fld is None:
            return t.whole_parts
        f = t.field(fld)
        if f is None:
            names_ = [x.name for x in t.fields]
            hint = f"{t.name} has: {', '.join(names_)}" if names_ else f"{t.name} has no fields or components"
            self.fail(where, f"{arr.name} has no field or component {fld!r}", hint, key="at")
        return tuple((f.offset + o, s) for o, s in f.type.whole_parts)

    def check_names(self, node: Node, scope: set[str], where: str, key: str, text: str):
        unknown = names(node) - scope
        if unknown:
            n = sorted(unknown)[0]
            close = difflib.get_close_matches(n, sorted(scope), n=1)
            hint = f"did you mean {close[0]}?" if close else \
                "names are threadIdx.x, blockIdx.x, blockDim.x, gridDim.x (.y .z), tid, lane, warp, " \
                "the params and the loop variables"
            self.fail(where, f"unknown name {n!r} in {key} = \"{text}\"", hint, key=key)

    def build_loops(self, raw: Any, where: str, k: int) -> tuple[Loop, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, dict):
            self.fail(where, "for must be a table of loop variables", 'e.g. for = { j = "0:32:8" }', key="for")
        loops: list[Loop] = []
        for var, spec in raw.items():
            self.check_name(var, where, "loop variable")
            if var in self.params:
                self.fail(where, f"loop variable {var!r} has the same name as a param", "rename it", key="for")
            if not isinstance(spec, str):
                spec = str(spec) if isinstance(spec, int) and not isinstance(spec, bool) else None
            pieces = _split_range(spec) if spec else None
            if not pieces or len(pieces) not in (2, 3):
                self.fail(where, f"loop {var} = {raw.get(var)!r} must be \"start:stop\" or \"start:stop:step\"",
                          'e.g. for = { j = "0:32:8" }', key="for")
            nodes = [self.expr(p, f"loop {var} = \"{spec}\"", where, key="for") for p in pieces]
            if len(nodes) == 2:
                nodes.append(parse("1"))
            scope = set(self.params) | {lp.var for lp in loops}
            for n in nodes:
                self.check_names(n, scope, where, f"loop {var}", spec)
            loops.append(Loop(var, nodes[0], nodes[1], nodes[2], spec))
        # Validate bounds now: zero steps and runaway loops are errors of the file.
        self.loop_points(loops, where)
        return tuple(loops)

    def loop_points(self, loops, where: str) -> list[dict[str, int]]:
        points: list[dict[str, int]] = [{}]
        for lp in loops:
            nxt = []
            for pt in points:
                scope = {**self.params, **pt}
                start, stop, step = (self.const_node(n, f"loop {lp.var}", scope, where)
                                     for n in (lp.start, lp.stop, lp.step))
                if step == 0:
                    self.fail(where, f"loop {lp.var} = \"{lp.text}\" has step 0 and would never end",
                              "give a non-zero step", key="for")
                count = max(0, -(-(stop - start) // step)) if step > 0 else max(0, -(-(start - stop) // -step))
                if count * max(1, len(points)) > MAX_INSTRUCTIONS:
                    self.fail(where, f"loop {lp.var} = \"{lp.text}\" runs {count:,} times, too many to analyse",
                              f"keep the loops below {MAX_INSTRUCTIONS:,} instructions", key="for")
                nxt.extend({**pt, lp.var: start + i * step} for i in range(count))
            points = nxt
        return points

    def const_node(self, node: Node, what: str, scope: Mapping[str, int], where: str) -> int:
        from .lanes import Evaluator, Lanes, Space

        space = Space({k: Lanes.const(v) for k, v in scope.items()}, (1, 1))
        value, faults = Evaluator(space).evaluate(node)
        if faults:
            self.fail(where, f"{what}: {faults[0].problem}", key="for")
        return value.scalar()

    def iterations(self, a: Access) -> int:
        return len(self.loop_points(a.loops, a.label())) if a.loops else 1


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _split_range(spec: str) -> list[str] | None:
    """Split "start:stop:step" on the colons that are not part of a ?: inside a piece."""
    pieces, cur, depth, pending = [], [], 0, 0
    for ch in spec:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "?":
            pending += 1
        if ch == ":" and depth == 0:
            if pending:
                pending -= 1
            else:
                pieces.append("".join(cur))
                cur = []
                continue
        cur.append(ch)
    pieces.append("".join(cur))
    if any(not p.strip() for p in pieces):
        return None
    return pieces


def loop_points(scenario: Scenario, access: Access) -> list[dict[str, int]]:
    b = _Builder({}, scenario.source, scenario.name, scenario.text, {})
    b.params = dict(scenario.params)
    return b.loop_points(access.loops, access.label())


def expand_instructions(scenario: Scenario) -> list[Instruction]:
    """Program order: each access's loop points (outermost first), each part of the element."""
    out: list[Instruction] = []
    for a in scenario.accesses:
        for pt in loop_points(scenario, a):
            for p, (off, size) in enumerate(a.parts):
                out.append(Instruction(len(out), a.index, tuple(pt.items()), p, off, size))
    return out


def with_params(scenario: Scenario, overrides: Mapping[str, Any]) -> Scenario:
    """Re-validate the scenario's text with params overridden (a sweep point)."""
    return loads(scenario.text, scenario.source, scenario.name, {k: str(v) for k, v in overrides.items()})


__all__ = ["Scenario", "ScenarioError", "Array", "Access", "Launch", "Instruction", "load", "loads",
           "resolve", "builtin_names", "runnable_builtins", "expand_instructions", "with_params", "parse_overrides", "replace"]
