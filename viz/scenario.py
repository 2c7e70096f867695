"""Scenarios: TOML in, validated immutable model objects out (reference: docs/scenario-format.md).

Loading never executes anything: the TOML is parsed by ``tomllib``, every expression by
``viz.expr``. Every problem is a ``ScenarioError`` naming the file, the access or field,
and what to change.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections import ChainMap
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

import numpy as np

from . import assets
from .i18n import language, sep, tr
from .fileio import inside
from .expr import BUILTIN_NAMES, FUNCTIONS, ExprError, Node, names, parse, parse_access
from .lanes import evaluate_exact
from .layout import TMA_SWIZZLES, LayoutError, Swizzle, check_bijection, layout_swizzle, offset_tree, parse_swizzle
from .layout_text import AuthoredLayout, check as check_layout, fit, parse_layout
from .types import ElemType, all_type_names, named_type, struct
from .kinds import KIND_OPS   # noqa: F401 - format 3 access kinds cp.async, atomic, tma.load (viz.kinds)
from .kinds.registry import kind_of
from .kinds.ldmatrix import OP_NAMES as MATRIX_OPS, MatrixOp, looks_like_matrix_op, parse_op as parse_matrix_op
from .scenario_parts import (MAX_MESSAGE, Access, Array, Instruction, Launch, Loop, ScenarioError,  # noqa: F401
                             line_of, where_text)
from .work import CHUNK as WORK_CHUNK, MAX_WORK

FORMAT_VERSION = 3
FORMAT_2_SWIZZLES = ("tma:", "Sw<", "Swizzle<")   # swizzles that came with format 2

# Limits (H100, compute capability 9.0) and of the analysis itself.
MAX_BLOCK_THREADS = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)
MAX_SHARED_BYTES = 227 * 1024  # the most dynamic shared memory one block may use on H100
MAX_LAUNCH_THREADS = 1 << 26   # what the analysis will take on (64 Mi threads)
MAX_INSTRUCTIONS = 100_000     # warp instructions per thread over all accesses (the work bound: viz.work)
MAX_GPU_MEMORY = 192 * 2**30  # more global memory than any GPU has (H100 80 GB, H200 141 GB, B200 180 GB)
MAX_ARRAY_BYTES = 2**52       # 4 PiB: the arrays of one space together, far past any GPU; keeps addresses in 64 bits
MAX_TEXT_BYTES = 4 * 2**20    # a scenario file (the built-ins are 1 to 6 KiB)
MAX_FIELDS = 1024             # fields of one struct (the built-ins have 2 to 4)
MAX_ACCESSES = 8192           # [[access]] tables of one scenario (the built-ins have 1 to 12; each costs the
                              # analysis at least WORK_CHUNK lane operations, so MAX_WORK alone allowed 13,333)
assert MAX_ACCESSES <= MAX_WORK // WORK_CHUNK
GLOBAL_ALIGN = 256
SHARED_ALIGN = 128

TOP_KEYS = {"format", "title", "notes", "tags", "launch", "params", "arrays", "access",
            "expected", "expect_error", "timing", "name", "title_zh", "notes_zh", "compare", "focus"}
ARRAY_KEYS = {"space", "type", "fields", "shape", "pad", "swizzle", "layout", "offset", "init"}
ACCESS_KEYS = {"op", "at", "for", "when", "note"}


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
    compare: str = ""          # the scenario to compare with (Ctrl+M): a built-in's name or a relative path
    title_zh: str = ""             # optional Chinese title and notes (the app shows them in Chinese)
    notes_zh: str = ""
    focus: int = 0             # the warp instruction (from 1) the scenario is about: the app opens there; 0: the first

    @property
    def shown_title(self) -> str:
        """The title in the interface language (``title_zh`` when Chinese and given)."""
        return localized(self.title, self.title_zh)

    @property
    def shown_notes(self) -> str:
        """The notes in the interface language (``notes_zh`` when Chinese and given)."""
        return localized(self.notes, self.notes_zh)

    def array(self, name: str) -> Array:
        try:
            return self._arrays_by_name[name]
        except KeyError:
            raise StopIteration(name) from None     # as before: the name is always one of the arrays

    @cached_property
    def _arrays_by_name(self) -> dict[str, Array]:
        return {a.name: a for a in self.arrays}

    @property
    def shared_bytes(self) -> int:
        shared = [a for a in self.arrays if a.space == "shared"]
        return max((a.start + a.footprint for a in shared), default=0)

    def instructions(self) -> list[Instruction]:
        return expand_instructions(self)

    def loop_points(self, access: Access) -> list[dict[str, int]]:
        """The loop variables' values at each loop point of ``access`` (``viz.work`` counts them)."""
        return loop_points(self, access)


# ---------------------------------------------------------------------------- loading


def localized(english: str, chinese: str) -> str:
    """``chinese`` when the interface language is Chinese and there is one, else ``english``."""
    return chinese if chinese and language().startswith("zh") else english


def builtin_names() -> list[str]:
    return sorted(p.stem for p in assets.scenario_dir().glob("*.toml"))


def runnable_builtins() -> list[tuple[str, "Scenario"]]:
    """Every built-in as (name, scenario), except the lessons in an error (``expect_error``)."""
    return [(n, sc) for n in builtin_names() if not (sc := load(n)).expect_error]


def _exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):       # a name too long for the system, a NUL byte
        return False


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except (OSError, ValueError):       # a name too long for the system, a NUL byte
        return False


def resolve(file_or_name: str) -> Path:
    """A path to a file, or a built-in's name; raises ScenarioError if neither exists."""
    if not isinstance(file_or_name, (str, Path)):
        raise ScenarioError(repr(file_or_name)[:80], "", tr("a scenario is named by a file's path or a built-in's "
                                                           "name (a string), not {type}", type=type(file_or_name).__name__),
                            tr("give a path or a name, e.g. \"transpose-tile\""))
    file_or_name = str(file_or_name)
    p = Path(file_or_name)
    if p.suffix == ".toml" or _exists(p) or "/" in file_or_name or "\\" in file_or_name:
        if not _exists(p):
            raise ScenarioError(_short(str(p)), "", tr("no such file"),
                                tr("check the path, or give a built-in name (see `warpviz list`)"))
        return p
    builtin = assets.scenario_dir() / f"{file_or_name}.toml"
    if re.fullmatch(r"[A-Za-z0-9_.-]{1,200}", file_or_name) and _exists(builtin):
        return builtin
    file_or_name = _short(file_or_name)
    close = difflib.get_close_matches(file_or_name, builtin_names() + assets.trace_names(), n=3)  # traces too
    hint = tr("did you mean {names}?", names=', '.join(close)) if close else tr("`warpviz list` shows the built-ins")
    raise ScenarioError(file_or_name, "", tr("is neither a file nor a built-in scenario"), hint)


def load(file_or_name: str | Path, overrides: Mapping[str, str] | None = None) -> Scenario:
    path = resolve(file_or_name)
    text = read_text(path)
    is_builtin = path.parent.resolve() == assets.scenario_dir().resolve()
    return loads(text, source=str(path), name=path.stem if is_builtin else path.stem,
                 overrides=overrides)


def read_text(path: Path) -> str:
    """A scenario file's text: a regular file (not a FIFO or a device, which could block or never
    end) of at most MAX_TEXT_BYTES bytes of UTF-8 (``viz.fileio.read_bytes_limited``, the one
    bounded reader); anything else is a ScenarioError."""
    from .fileio import ReadRefused, read_bytes_limited

    fix = tr("check the file's permissions and that it is UTF-8 text")
    try:
        data = read_bytes_limited(path, MAX_TEXT_BYTES, "scenario")
    except ReadRefused as err:
        if err.kind in ("folder", "special"):
            raise ScenarioError(str(path), "", tr("is not a regular file"),
                                tr("give a scenario file (.toml), not a folder, a pipe or a device")) from None
        if err.kind == "large":
            raise ScenarioError(str(path), "", tr("is {size}, larger than the {max} a scenario may be",
                                                  size=size_text(err.size), max=size_text(MAX_TEXT_BYTES)),
                                tr("a scenario is a short text file: check that this is the right file")) from None
        if err.kind == "grew":
            raise ScenarioError(str(path), "", tr("is larger than the {max} a scenario may be",
                                                  max=size_text(MAX_TEXT_BYTES)),
                                tr("a scenario is a short text file: check that this is the right file")) from None
        raise ScenarioError(str(path), "", tr("cannot be read ({err})", err=err.problem), fix) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ScenarioError(str(path), "", tr("cannot be read ({err})", err=err), fix) from None


def loads(text: str, source: str = "<scenario>", name: str = "",
          overrides: Mapping[str, str] | None = None) -> Scenario:
    """Parse and validate scenario TOML text."""
    if not isinstance(text, str):
        raise ScenarioError(str(source), "", tr("scenario text must be a string, not {type}",
                                                type=type(text).__name__), tr("pass the TOML text as a str"))
    if len(text) > MAX_TEXT_BYTES:
        raise ScenarioError(str(source), "", tr("the text is {n:,} characters long, more than the {max:,} a scenario "
                                                "may have", n=len(text), max=MAX_TEXT_BYTES),
                            tr("a scenario is a short text: check that this is the right one"))
    if overrides is not None and not (isinstance(overrides, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in overrides.items())):
        raise ScenarioError(str(source), "--set", tr("param overrides must map names to strings"),
                            tr("e.g. {example}", example='{"PAD": "1"}'))
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise ScenarioError(source, "TOML syntax", tr("the TOML is nested too deeply to read"),
                            tr("a scenario nests tables and arrays a few levels at most"), None) from None
    except tomllib.TOMLDecodeError as err:
        msg = str(err)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else None
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        if m:
            problem += f" (column {m.group(2)})"
        raise ScenarioError(source, "TOML syntax", problem, tr("fix the TOML syntax on that line (strings need "
                                                               "quotes, tables [name], arrays [1, 2])"), line) from None
    return _Builder(data, source, name, text, overrides or {}).build()


def size_text(nbytes: int) -> str:
    """Bytes in binary units: 512 B, 4.0 KiB, 3.6 TiB."""
    value, unit = float(nbytes), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            break
        value /= 1024
    return f"{nbytes} B" if unit == "B" else f"{value:.1f}".removesuffix(".0") + f" {unit}"


def warnings(sc: Scenario) -> list[str]:
    """What is allowed but cannot run on a real GPU: a global array (or all of them together)
    larger than any GPU's memory. The analysis still runs; the app and `warpviz analyze` say so."""
    from .i18n import tr

    out = []
    limit = size_text(MAX_GPU_MEMORY)
    glob = [a for a in sc.arrays if a.space == "global"]
    for a in glob:
        if a.footprint > MAX_GPU_MEMORY:
            out.append(tr("global array {name} is {size} ({elements} elements of {type}, {bytes} bytes), more than "
                          "any GPU's memory ({limit}): no GPU could run this launch; the analysis still runs",
                          name=a.name, size=size_text(a.footprint), elements=f"{a.elements:,}", type=a.type.name,
                          bytes=f"{a.footprint:,}", limit=limit))
    total = max((a.start + a.footprint for a in glob), default=0)
    if total > MAX_GPU_MEMORY and not any(a.footprint > MAX_GPU_MEMORY for a in glob):
        out.append(tr("the global arrays together are {size} ({bytes} bytes: {names}), more than any GPU's memory "
                      "({limit}): no GPU could run this launch; the analysis still runs",
                      size=size_text(total), bytes=f"{total:,}", names=", ".join(a.name for a in glob), limit=limit))
    return out


def _looks_like_path(text: str) -> bool:
    return text.endswith(".toml") or "/" in text or "\\" in text


def compare_outside(compare: str, source: str = "") -> bool:
    """Does a ``compare`` value lead outside the scenario's own folder (an absolute path, a
    ``~``, ``..`` above the folder)? Such a value is refused, never opened: a scenario is
    anyone's file, and what it draws beside itself must be what its sender sent with it (the
    folder is decided on the names alone, as a trace's ``compare`` is: ``viz.fileio.inside``)."""
    if not compare:
        return False
    if compare.startswith("~") or os.path.isabs(compare) or Path(compare).is_absolute() or "\0" in compare:
        return True
    here = Path(source) if source else None
    folder = here.parent if here is not None and _is_file(here) else Path("scenario-folder")
    return not inside(folder, compare)


def compare_path(compare: str, source: str = "") -> Path | None:
    """The file that a ``compare`` value names, or None: a path relative to the scenario's
    own file (``source``) inside its folder, a sibling ``NAME.toml`` in its folder, or a
    built-in's name. A value that leads outside the folder names nothing (``compare_outside``)."""
    if not compare or compare_outside(compare, source):
        return None
    here = Path(source)
    folder = here.parent if _is_file(here) else None
    if folder is not None:
        for cand in (folder / compare, folder / f"{compare}.toml"):
            if cand.suffix == ".toml" and _is_file(cand) and cand.resolve() != here.resolve():
                return cand
    if not _looks_like_path(compare):
        builtin = assets.scenario_dir() / f"{compare}.toml"
        if _is_file(builtin):
            return builtin
    return None


def compare_in_text(text: str, source: str = "") -> Path | None:
    """The partner a scenario's text names, even when the rest of it is invalid (a lesson
    in an error still has its fixed version to compare with); None if it names none."""
    try:
        value = tomllib.loads(text).get("compare")
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    return compare_path(value.strip(), source) if isinstance(value, str) else None


def partner_name(name: str, names: Iterable[str]) -> str | None:
    """A name-based partner for a scenario without a ``compare`` key: its own variant
    (``NAME-pad`` first, then the shortest ``NAME-...``), else the scenario it is a variant
    of (``NAME`` for ``NAME-xor``) or that one's other variants, else the closest name."""
    others = [n for n in dict.fromkeys(names) if n != name]

    def best(cands: list[str], stem: str) -> str | None:
        if not cands:
            return None
        return min(cands, key=lambda n: (n[len(stem) + 1:] != "pad", not n.endswith("-pad"), len(n), n))

    got = best([n for n in others if n.startswith(name + "-")], name)
    if got:
        return got
    stem = name
    while "-" in stem:
        stem = stem.rsplit("-", 1)[0]
        if stem in others:
            return stem
        got = best([n for n in others if n.startswith(stem + "-")], stem)
        if got:
            return got
    close = difflib.get_close_matches(name, others, n=1, cutoff=0.0)
    return close[0] if close else None


def partner_path(sc: Scenario, candidates: Mapping[str, Path] | None = None) -> Path | None:
    """The file to compare ``sc`` with: its ``compare`` key, else ``partner_name`` among
    ``candidates`` (name -> file; default: the built-ins)."""
    named = compare_path(sc.compare, sc.source)
    if named is not None:
        return named
    if candidates is None:
        candidates = {n: assets.scenario_dir() / f"{n}.toml" for n in builtin_names()}
    own = sc.name or Path(sc.source).stem
    got = partner_name(own, candidates)
    return candidates[got] if got else None


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise ScenarioError("--set", item, tr("expected NAME=VALUE"), tr("e.g. --set PAD=1"))
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


class _Builder:
    def __init__(self, data: dict, source: str, name: str, text: str, overrides: Mapping[str, str]):
        self.data, self.source, self.name, self.text, self.overrides = data, source, name, text, overrides

    def fail(self, where: str, problem: str, fix: str = "", key: str | None = None):
        raise ScenarioError(self.source, where, problem, fix, line_of(self.text, where, key))

    def unknown_keys(self, table: dict, allowed: set[str], where: str):
        for k in table:
            if k not in allowed:
                close = difflib.get_close_matches(k, sorted(allowed), n=1)
                hint = tr("did you mean {close!r}?", close=close[0]) if close else tr("allowed keys: {names}",
                                                                                      names=', '.join(sorted(allowed)))
                self.fail(where, tr("unknown key {k!r}", k=k), hint, key=k)

    # -- top level ---------------------------------------------------------

    def build(self) -> Scenario:
        d = self.data
        self.unknown_keys(d, TOP_KEYS, "")
        fmt = d.get("format", 1)       # a file without `format` was written before it existed
        if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt < 1:
            self.fail("format", tr("format must be a positive integer, not {fmt!r}", fmt=fmt),
                      tr("write format = {n}", n=FORMAT_VERSION))
        if fmt > FORMAT_VERSION:
            self.fail("format", tr("this file uses scenario format {fmt}, newer than this warpviz reads (format "
                                   "{newest})", fmt=fmt, newest=FORMAT_VERSION), tr("update warpviz to open it"))
        title = self.string(d, "title", "", required=False) or self.name or "untitled scenario"
        notes = self.string(d, "notes", "", required=False)
        title_zh = self.string(d, "title_zh", "", required=False)
        notes_zh = self.string(d, "notes_zh", "", required=False)
        tags = d.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            self.fail("tags", tr("tags must be a list of strings"), tr("e.g. tags = [\"shared\", \"swizzle\"]"))
        self.format = fmt
        self.params = self.build_params(d.get("params", {}))
        launch = self.build_launch(d.get("launch"))
        self.launch_threads = launch.threads_per_block
        arrays = self.build_arrays(d.get("arrays"))
        self.arrays = {a.name: a for a in arrays}
        raw_access = d.get("access")
        if not isinstance(raw_access, list) or not raw_access:
            self.fail("access", tr("a scenario needs at least one [[access]] table"),
                      tr("add one: [[access]] with op = \"load\" and at = \"src[threadIdx.x]\""))
        if len(raw_access) > MAX_ACCESSES:       # refused before any is built (13,000 took 9 s to build and refuse)
            self.fail("access", tr("the scenario has {n:,} [[access]] tables, over the limit of {max:,}",
                                   n=len(raw_access), max=MAX_ACCESSES),
                      tr("split the scenario into several files, or use a loop (for) for repeated accesses"))
        accesses = tuple(self.build_access(k, a) for k, a in enumerate(raw_access))
        expected = d.get("expected", {})
        if not isinstance(expected, dict) or not all(isinstance(v, int) for v in expected.values()):
            self.fail("expected", tr("expected must be a table of metric names to integers"))
        expect_error = d.get("expect_error")
        if expect_error is not None and not isinstance(expect_error, str):
            self.fail("expect_error", tr("expect_error must be a string"))
        timing = d.get("timing", {})
        if not isinstance(timing, dict):
            self.fail("timing", tr("timing must be a table"))
        compare = self.build_compare(d.get("compare"))
        sc = Scenario(title=title, notes=notes, tags=tuple(tags), launch=launch,
                      params=MappingProxyType(dict(self.params)), arrays=arrays, accesses=accesses,
                      source=self.source, name=self.name, text=self.text,
                      expected=MappingProxyType(dict(expected)), expect_error=expect_error,
                      timing=MappingProxyType(dict(timing)), format=fmt, title_zh=title_zh, notes_zh=notes_zh, compare=compare)
        count = sum(len(a.parts) * self.iterations(a) for a in accesses)
        if count > MAX_INSTRUCTIONS:
            self.fail("access", tr("the accesses expand to {count} warp instructions per thread, more than the {max} "
                                   "the analysis takes", count=count, max=MAX_INSTRUCTIONS),
                      tr("use fewer loop iterations"))
        if "focus" in d:
            sc = replace(sc, focus=self.build_focus(d["focus"], count))
        check_work(sc)
        return sc

    def build_focus(self, raw: Any, count: int) -> int:
        """The optional ``focus``: the warp instruction (from 1, as the picture's header counts)
        the scenario is about; the app and a lesson open there."""
        if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= count:
            self.fail("focus", tr("focus must be a warp instruction's number from 1 to {n}, not {v}", n=count,
                                  v=repr(raw)[:40] if isinstance(raw, (int, str, float)) else type(raw).__name__),
                      tr("give the number the picture's header shows for the instruction (Instruction box), "
                         "e.g. focus = {n}", n=min(count, 9)))
        return raw

    def build_compare(self, raw: Any) -> str:
        """The optional ``compare`` key: a built-in's name, or a file relative to this one."""
        if raw is None:
            return ""
        text = self.string(self.data, "compare", "").strip()
        if not text:
            self.fail("compare", tr("compare is empty"), tr("name a built-in, e.g. compare = \"transpose-tile-pad\", "
                                                            "or leave the key out"), key="compare")
        here = Path(self.source)
        if compare_outside(text, self.source):
            self.fail("compare", tr("compare = \"{text}\" leads outside this scenario's folder; a scenario may "
                                    "only name a file in its own folder or below it", text=text),
                      tr("copy the other scenario next to this file and give its name (compare = \"other.toml\"), "
                         "or give a built-in's name (`warpviz list`)"), key="compare")
        target = compare_path(text, self.source)
        if target is not None and (target.resolve() == here.resolve() if _is_file(here) else text == self.name):
            self.fail("compare", tr("compare = \"{text}\" names this scenario itself", text=text),
                      tr("name another scenario, e.g. the fixed or the broken version of this one"), key="compare")
        if target is None:
            if _looks_like_path(text) and not _is_file(here):
                return text  # text without a file (e.g. pasted): a relative path cannot be checked here
            if _looks_like_path(text):
                self.fail("compare", tr("compare = \"{text}\": there is no such file next to {name} "
                                        "(looked for {path})", text=text, name=here.name, path=here.parent / text),
                          tr("give the path relative to this file's folder, or a built-in's name (`warpviz list`)"),
                          key="compare")
            close = difflib.get_close_matches(text, builtin_names(), n=3)
            hint = tr("did you mean {names}?", names=', '.join(close)) if close else \
                tr("give a built-in's name (`warpviz list`) or a .toml file's path relative to this file")
            self.fail("compare", tr("compare = \"{text}\" is not a built-in scenario", text=text), hint, key="compare")
        return text

    def string(self, d: dict, key: str, where: str, required: bool = True) -> str:
        v = d.get(key)
        if v is None:
            if required:
                self.fail(where or key, tr("missing {key!r}", key=key))
            return ""
        if not isinstance(v, str):
            self.fail(f"{where}.{key}" if where else key, tr("{key} must be a string, not {type}", key=key,
                                                             type=type(v).__name__),
                      tr("write it in quotes, e.g. {key} = \"...\"", key=key), key=key)
        return v

    # -- params ------------------------------------------------------------

    def build_params(self, raw: Any) -> dict[str, int]:
        if not isinstance(raw, dict):
            self.fail("params", tr("params must be a table of NAME = integer"))
        params: dict[str, int] = {}
        for k, v in raw.items():
            self.check_name(k, "params", "param")
            if k in self.overrides:
                v = self.overrides[k]
            params[k] = self.constant(v, f"params.{k}", params, key=k, where_section="params")
        for k in self.overrides:
            if k not in raw:
                close = difflib.get_close_matches(k, list(raw), n=1)
                hint = tr("did you mean {close}?", close=close[0]) if close else \
                    tr("the params are: {names}", names=', '.join(raw) or tr('(none)'))
                raise ScenarioError(self.source, f"--set {k}", tr("{k!r} is not a param of this scenario", k=k), hint)
        return params

    def check_name(self, k: str, where: str, what: str):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
            self.fail(where, tr("{what} name {k!r} is not an identifier", what=tr(what), k=k),
                      tr("use letters, digits and _"))
        if k in BUILTIN_NAMES or k in FUNCTIONS or k in ("threadIdx", "blockIdx", "blockDim", "gridDim",
                                                         "row", "col"):
            self.fail(where, tr("{what} name {k!r} is reserved", what=tr(what), k=k), tr("pick another name"), key=k)

    def constant(self, v: Any, where: str, scope: Mapping[str, int], key: str | None = None,
                 where_section: str | None = None, allow_negative: bool = True) -> int:
        """An integer, or an expression string over params (and outer loop variables)."""
        section = where_section or where
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            self.fail(section, tr("{where} must be an integer or an expression string, not {v!r}", where=where, v=v),
                      tr("e.g. 32 or \"TILE * 2\""), key=key)
        if isinstance(v, int):
            value = v
        else:
            value = self.eval_const(v, where, scope, section, key)
        if abs(value) > 2**62:
            self.fail(section, tr("{where} = {value} is too large", where=where, value=value),
                      tr("keep constants below 2^62"), key=key)
        if not allow_negative and value < 0:
            self.fail(section, tr("{where} must not be negative (it is {value})", where=where, value=value), key=key)
        return value

    def eval_const(self, text: str, where: str, scope: Mapping[str, int], section: str,
                   key: str | None) -> int:
        tree = self.expr(text, where, section, key)
        unknown = sorted(n for n in names(tree) if n not in scope)
        if unknown:
            n = unknown[0]
            close = difflib.get_close_matches(n, list(scope), n=1)
            hint = tr("did you mean {close}?", close=close[0]) if close else tr("only params (and outer loop "
                                                                                "variables) may be used here")
            self.fail(section, f"{where}{sep(': ')}" + tr("unknown name {n!r} in `{text}`", n=n, text=_short(text)), hint,
                      key=key)
        try:
            return evaluate_exact(tree, scope)
        except ExprError as err:
            self.fail(section, f"{where}{sep(': ')}{err.problem}", key=key)

    def expr(self, text: Any, where: str, section: str, key: str | None = None) -> Node:
        try:
            return parse(text)
        except ExprError as err:
            self.fail(section, f"{where}{sep(': ')}{err.describe()}", key=key)

    # -- launch ------------------------------------------------------------

    def build_launch(self, raw: Any) -> Launch:
        if not isinstance(raw, dict):
            self.fail("launch", tr("missing [launch] table"), tr("add [launch] with block = [...] and grid = [...]"))
        self.unknown_keys(raw, {"block", "grid"}, "launch")
        dims = {}
        for key, limits in (("block", MAX_BLOCK_DIM), ("grid", MAX_GRID_DIM)):
            v = raw.get(key)
            if v is None:
                self.fail("launch", tr("missing launch.{key}", key=key), tr("e.g. {key} = [256]", key=key), key=key)
            if isinstance(v, (int, str)) and not isinstance(v, bool):
                v = [v]
            if not isinstance(v, list) or not 1 <= len(v) <= 3:
                self.fail("launch", tr("launch.{key} must be 1 to 3 numbers", key=key), tr("e.g. {key} = [32, 8]",
                                                                                           key=key), key=key)
            nums = [self.constant(x, f"launch.{key}", self.params, key=key, where_section="launch") for x in v]
            nums += [1] * (3 - len(nums))
            for axis, (n, lim) in enumerate(zip(nums, limits)):
                if n < 1:
                    self.fail("launch", tr("launch.{key} {axis} is {n}; every dimension must be at least 1", key=key,
                                           axis='xyz'[axis], n=n),
                              key=key)
                if n > lim:
                    self.fail("launch", tr("launch.{key} {axis} is {n}, above the GPU's limit of {lim}", key=key,
                                           axis='xyz'[axis], n=n, lim=lim),
                              key=key)
            dims[key] = tuple(nums)
        launch = Launch(dims["block"], dims["grid"])
        if launch.threads_per_block > MAX_BLOCK_THREADS:
            self.fail("launch", tr("a block of {n} threads is more than the {max} a block may have",
                                   n=launch.threads_per_block, max=MAX_BLOCK_THREADS),
                      tr("make launch.block smaller"), key="block")
        if launch.threads > MAX_LAUNCH_THREADS:
            self.fail("launch", tr("the launch has {threads:,} threads, more than the {max:,} warpviz analyses",
                                   threads=launch.threads, max=MAX_LAUNCH_THREADS),
                      tr("use a smaller grid (the counts per warp do not change with the grid size for regular "
                         "patterns)"), key="grid")
        self.launch = launch
        return launch

    # -- arrays ------------------------------------------------------------

    def build_arrays(self, raw: Any) -> tuple[Array, ...]:
        if not isinstance(raw, dict) or not raw:
            self.fail("arrays", tr("a scenario needs at least one array"),
                      tr("add e.g. [arrays.src] with space = \"global\", type = \"float\", shape = [1024]"))
        out = []
        next_start = {"global": 0, "shared": 0}
        for name, spec in raw.items():
            where = f"arrays.{name}"
            self.check_name(name, where, "array")
            if name in self.params:
                self.fail(where, tr("array {name!r} has the same name as a param", name=name), tr("rename one of them"))
            if not isinstance(spec, dict):
                self.fail(where, tr("an array must be a table"), tr("write [arrays.{name}] with space, type, shape",
                                                                    name=name))
            self.unknown_keys(spec, ARRAY_KEYS, where)
            space = spec.get("space", "global")
            if space not in ("global", "shared"):
                self.fail(where, tr("space must be \"global\" or \"shared\", not {space!r}", space=space), key="space")
            etype = self.build_type(spec, where)
            authored = self.build_layout(spec, where) if "layout" in spec else None
            shape_raw = spec.get("shape")
            if shape_raw is None and authored is not None and authored.extents() is not None:
                shape_raw = list(authored.extents())
            if isinstance(shape_raw, (int, str)) and not isinstance(shape_raw, bool):
                shape_raw = [shape_raw]
            if not isinstance(shape_raw, list) or not 1 <= len(shape_raw) <= 2:
                self.fail(where, tr("shape must be 1 or 2 extents"), tr("e.g. shape = [1024] or shape = [32, 32]"),
                          key="shape")
            shape = tuple(self.constant(x, f"{where}.shape", self.params, key="shape", where_section=where)
                          for x in shape_raw)
            for n in shape:
                if n < 1:
                    self.fail(where, tr("every extent of shape must be at least 1 (got {shape})", shape=list(shape)),
                              key="shape")
                if n > 2**40:
                    self.fail(where, tr("extent {n} is too large", n=n), key="shape")
            pad = self.constant(spec.get("pad", 0), f"{where}.pad", self.params, key="pad",
                                where_section=where, allow_negative=False)
            if pad and len(shape) != 2:
                self.fail(where, tr("pad adds elements per row, so it needs a 2-D shape"),
                          tr("use shape = [ROWS, COLS]"),
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
            if start + arr.footprint > MAX_ARRAY_BYTES:
                what = (tr("{name} is {size} ({bytes:,} bytes)", name=name, size=size_text(arr.footprint),
                           bytes=arr.footprint) if start == 0 else
                        tr("the global arrays up to {name} take {size} ({bytes:,} bytes)", name=name,
                           size=size_text(start + arr.footprint), bytes=start + arr.footprint) if space == "global" else
                        tr("the shared arrays up to {name} take {size} ({bytes:,} bytes)", name=name,
                           size=size_text(start + arr.footprint), bytes=start + arr.footprint))
                self.fail(where, tr("{what}, more than the {max} warpviz can address (far more than any GPU has)",
                                    what=what, max=size_text(MAX_ARRAY_BYTES)),
                          tr("make shape smaller"), key="shape")
            next_start[space] = start + arr.footprint
            out.append(arr)
        shared_total = next_start["shared"]
        if shared_total > MAX_SHARED_BYTES:
            self.fail("arrays", tr("the shared arrays need {n:,} bytes, more than the {max:,} bytes one block may "
                                   "use on an H100", n=shared_total, max=MAX_SHARED_BYTES), tr("make them smaller"))
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
            self.fail(where, tr("give either type or fields (a struct), not both") if has_type else
                      tr("missing type"), tr("e.g. type = \"float\", or fields = [\"r:float\", \"g:float\"]"))
        if has_type:
            name = spec["type"]
            t = named_type(name) if isinstance(name, str) else None
            if t is None:
                close = difflib.get_close_matches(str(name), all_type_names(), n=1)
                hint = tr("did you mean {close!r}?", close=close[0]) if close else tr("types: {names}",
                                                                                      names=', '.join(all_type_names()))
                self.fail(where, tr("unknown type {name!r}", name=name), hint, key="type")
            return t
        raw = spec["fields"]
        if not isinstance(raw, list) or not raw:
            self.fail(where, tr("fields must be a non-empty list of \"name:type\" strings"), key="fields")
        if len(raw) > MAX_FIELDS:
            self.fail(where, tr("the struct has {n:,} fields, over the limit of {max:,}", n=len(raw), max=MAX_FIELDS),
                      tr("keep the fields the accesses read (a struct's other fields only set its size: pad it with "
                         "a wide field such as \"pad:int4\")"), key="fields")
        fields = []
        seen: set[str] = set()          # a set: the list's any() was quadratic (5,000 fields took 20 s)
        for f in raw:
            m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*:\s*(\w+)\s*", f) if isinstance(f, str) else None
            t = named_type(m.group(2)) if m else None
            if not m or t is None:
                self.fail(where, tr("field {f!r} must be \"name:type\" with a known type", f=f),
                          tr("types: {names}", names=', '.join(all_type_names())), key="fields")
            if m.group(1) in seen:
                self.fail(where, tr("field {name!r} appears twice", name=m.group(1)), key="fields")
            seen.add(m.group(1))
            fields.append((m.group(1), t))
        return struct(fields)

    # -- accesses ----------------------------------------------------------

    def build_access(self, k: int, raw: Any) -> Access:
        where = f"access {k}"
        if not isinstance(raw, dict):
            self.fail(where, tr("an access must be a table"), tr("write [[access]] with op and at"))
        if kind_of(raw.get("op")) is not None:   # cp.async, atomic, tma.load (scenario format 3: viz.kinds)
            from .kinds.build import build_kind_access

            return build_kind_access(self, k, raw)
        self.unknown_keys(raw, ACCESS_KEYS, where)
        op = raw.get("op")
        matrix = parse_matrix_op(op)
        if matrix is not None:
            self.need_format(3, f"op = \"{op}\"", where, "op")
            op = matrix.op
        elif looks_like_matrix_op(op):
            self.fail(where, tr("unknown matrix op {op!r}", op=op),
                      tr("write one of {names}", names=", ".join(MATRIX_OPS)), key="op")
        if op not in ("load", "store"):
            self.fail(where, tr("op must be \"load\" or \"store\", not {op!r}", op=op), key="op")
        at = self.string(raw, "at", where)
        line = line_of(self.text, where)
        try:
            ax = parse_access(at)
        except ExprError as err:
            self.fail(where, tr("at = \"{at}\": {problem}", at=_short(at), problem=err.describe()), key="at")
        where = f"access {k} ({matrix.text if matrix else op} {_short(at)})"
        arr = self.arrays.get(ax.array)
        if arr is None:
            close = difflib.get_close_matches(ax.array, list(self.arrays), n=1)
            hint = tr("did you mean {close}?", close=close[0]) if close else tr("arrays: {names}",
                                                                                names=', '.join(self.arrays))
            self.fail(where, tr("unknown array {array!r}", array=ax.array), hint, key="at")
        if len(ax.indices) != len(arr.shape):
            self.fail(where, tr("{name} has {n_shape} dimension(s) but the access gives {n_indices} index(es)",
                                name=arr.name, n_shape=len(arr.shape), n_indices=len(ax.indices)),
                      tr("write {code}", code=arr.name + ("[i]" if len(arr.shape) == 1 else "[row][col]")), key="at")
        loops = self.build_loops(raw.get("for"), where, k)
        scope = _Scope(self.params, BUILTIN_NAMES, {lp.var for lp in loops})
        for node in ax.indices:
            self.check_names(node, scope, where, "at", at)
        when = None
        when_text = raw.get("when")
        if when_text is not None:
            when = self.expr(when_text, f"when = \"{_short(str(when_text))}\"", where, key="when")
            self.check_names(when, scope, where, "when", when_text)
        if matrix is not None:
            self.check_matrix(matrix, arr, ax.field, when_text, where)
            parts: tuple[tuple[int, int], ...] = ((0, 16),)     # one 16-byte row per lane
        else:
            parts = self.access_parts(arr, ax.field, where)
        return Access(k, op, at, arr.name, ax.indices, ax.field, loops, when,
                      when_text, parts, line, matrix=matrix)

    def check_matrix(self, matrix: MatrixOp, arr: Array, fld: str | None, when_text, where: str) -> None:
        """What ldmatrix / stmatrix need beyond a plain access (viz.kinds.ldmatrix)."""
        if arr.space != "shared":
            self.fail(where, tr("{op} moves rows of shared memory, but {name} is a global array", op=matrix.text,
                                name=arr.name), tr("declare {name} with space = \"shared\"", name=arr.name), key="at")
        if fld is not None:
            self.fail(where, tr("{op} takes the address of a whole 16-byte row, not a field", op=matrix.text),
                      tr("remove .{field} from at", field=fld), key="at")
        if when_text is not None:
            self.fail(where, tr("{op} is .sync.aligned: every lane of the warp executes it, so it cannot have "
                                "when", op=matrix.text),
                      tr("remove when; with .x1 only lanes 0-7 give addresses, with .x2 lanes 0-15"), key="when")
        if self.launch_threads % 32:
            self.fail(where, tr("{op} needs whole warps, but the block has {n} threads", op=matrix.text,
                                n=self.launch_threads),
                      tr("make the block a multiple of 32 threads"), key="op")

    def access_parts(self, arr: Array, fld: str | None, where: str) -> tuple[tuple[int, int], ...]:
        t = arr.type
        if fld is None:
            return t.whole_parts
        f = t.field(fld)
        if f is None:
            names_ = [x.name for x in t.fields]
            hint = (tr("{name} has: {names}", name=t.name, names=', '.join(names_)) if names_
                    else tr("{name} has no fields or components", name=t.name))
            self.fail(where, tr("{name} has no field or component {fld!r}", name=arr.name, fld=fld), hint, key="at")
        return tuple((f.offset + o, s) for o, s in f.type.whole_parts)

    def check_names(self, node: Node, scope: "_Scope", where: str, key: str, text: str):
        unknown = sorted(n for n in names(node) if n not in scope)
        if unknown:
            n = unknown[0]
            close = difflib.get_close_matches(n, scope.sorted(), n=1)
            hint = tr("did you mean {close}?", close=close[0]) if close else \
                tr("names are threadIdx.x, blockIdx.x, blockDim.x, gridDim.x (.y .z), tid, lane, warp, the "
                   "params and the loop variables")
            self.fail(where, tr("unknown name {n!r} in {key} = \"{text}\"", n=n, key=key, text=_short(text)), hint,
                      key=key)

    def build_loops(self, raw: Any, where: str, k: int) -> tuple[Loop, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, dict):
            self.fail(where, tr("for must be a table of loop variables"),
                      tr("e.g. {example}", example='for = { j = "0:32:8" }'), key="for")
        loops: list[Loop] = []
        for var, spec in raw.items():
            self.check_name(var, where, "loop variable")
            if var in self.params:
                self.fail(where, tr("loop variable {var!r} has the same name as a param", var=var),
                          tr("rename it"), key="for")
            if not isinstance(spec, str):
                spec = str(spec) if isinstance(spec, int) and not isinstance(spec, bool) else None
            pieces = _split_range(spec) if spec else None
            if not pieces or len(pieces) not in (2, 3):
                self.fail(where, tr("loop {var} = {spec!r} must be \"start:stop\" or \"start:stop:step\"", var=var,
                                    spec=raw.get(var)),
                          tr("e.g. {example}", example='for = { j = "0:32:8" }'), key="for")
            nodes = [self.expr(p, tr("loop {var} = \"{spec}\"", var=var, spec=_short(spec)), where, key="for")
                     for p in pieces]
            if len(nodes) == 2:
                nodes.append(parse("1"))
            scope = _Scope(self.params, {lp.var for lp in loops})
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
                scope = ChainMap(pt, self.params)
                start, stop, step = (self.const_node(n, tr("loop {var}", var=lp.var), scope, where)
                                     for n in (lp.start, lp.stop, lp.step))
                if step == 0:
                    self.fail(where, tr("loop {var} = \"{text}\" has step 0 and would never end", var=lp.var,
                                        text=lp.text),
                              tr("give a non-zero step"), key="for")
                count = max(0, -(-(stop - start) // step)) if step > 0 else max(0, -(-(start - stop) // -step))
                if count * max(1, len(points)) > MAX_INSTRUCTIONS:
                    self.fail(where, tr("loop {var} = \"{text}\" runs {count:,} times, too many to analyse",
                                        var=lp.var, text=lp.text, count=count),
                              tr("keep the loops below {max:,} instructions", max=MAX_INSTRUCTIONS), key="for")
                nxt.extend({**pt, lp.var: start + i * step} for i in range(count))
            points = nxt
        return points

    def const_node(self, node: Node, what: str, scope: Mapping[str, int], where: str) -> int:
        try:
            return evaluate_exact(node, scope)
        except ExprError as err:
            self.fail(where, f"{what}{sep(': ')}{err.problem}", key="for")

    def iterations(self, a: Access) -> int:
        return len(self.loop_points(a.loops, a.label())) if a.loops else 1


class _Scope:
    """The names visible to an expression (params, built-in names, loop variables), looked
    up in place: nothing is copied per access, however many params there are."""

    def __init__(self, *parts):
        self.parts = parts

    def __contains__(self, name: object) -> bool:
        return any(name in p for p in self.parts)

    def sorted(self) -> list[str]:
        return sorted(set().union(*self.parts))


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
    b.params = scenario.params
    return b.loop_points(access.loops, access.label())


def check_work(sc: Scenario, budget: int = MAX_WORK) -> None:
    """Refuse a scenario whose whole-launch analysis is more work than ``budget`` lane operations
    (``viz.work.MAX_WORK`` unless a caller with its own bound says otherwise): a ScenarioError
    that names the grid, or the accesses, and the fix."""
    from .work import blocks_within, estimate, instruction_counts

    counts = instruction_counts(sc)
    work = estimate(sc, counts=counts)
    if work.total <= budget:
        return
    launch = sc.launch
    problem = tr("the analysis would take about {ops} lane operations ({n:,} warp instructions per thread, {blocks:,} "
                 "blocks of {threads:,} threads), more than the {max} warpviz takes on", ops=_big(work.total),
                 n=work.instructions, blocks=launch.blocks, threads=launch.threads_per_block, max=_big(budget))
    fit = blocks_within(sc, budget, counts=counts)
    if fit >= 1:
        grid = "[" + ", ".join(str(d) for d in _smaller_grid(launch.grid, fit)) + "]"
        fix = tr("analyse fewer blocks: at most {fit:,}, e.g. [launch] grid = {grid} (a regular pattern counts the "
                 "same per warp at any grid size), or use fewer loop iterations", fit=fit, grid=grid)
        raise ScenarioError(sc.source, "launch", problem, fix, line_of(sc.text, "launch", "grid") if sc.text else None)
    # Even one block is too much: the loops (or the accesses) are.
    biggest = max(zip(counts, sc.accesses), key=lambda c: c[0] if c[1].loops else 0)[1]
    if biggest.loops:
        fix = tr("even one block is too much: use fewer loop iterations (for), fewer accesses or simpler expressions")
        raise ScenarioError(sc.source, biggest.label(), problem, fix,
                            line_of(sc.text, f"access {biggest.index}", "for") if sc.text else None)
    fix = tr("even one block is too much: use fewer accesses or simpler expressions")
    raise ScenarioError(sc.source, "access", problem, fix, None)


def _big(n: int) -> str:
    """A work figure as its size, the same in every language: 2,000,000,000 is "2.0 × 10⁹"."""
    if n < 10**6:
        return f"{n:,}"
    exp = len(str(n)) - 1
    return f"{n / 10**exp:.1f} × 10" + str(exp).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _smaller_grid(grid: tuple[int, int, int], most: int) -> list[int]:
    """``grid`` shrunk (x first, then y, then z) to at most ``most`` blocks, trailing 1s dropped."""
    dims = list(grid)
    for axis in range(3):
        others = math.prod(dims) // dims[axis]
        if others * dims[axis] > most:
            dims[axis] = max(1, most // others)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return dims


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
           "resolve", "builtin_names", "compare_path", "compare_outside", "compare_in_text", "warnings", "size_text", "partner_name", "partner_path", "runnable_builtins", "expand_instructions", "with_params", "parse_overrides", "replace"]
