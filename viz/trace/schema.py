"""The schema of a trace's ``header.json``: one declarative table (``HEADER``) and the small
checker that walks it (standard library only).

Every field that warpviz reads from a header is listed in ``HEADER`` with its JSON type,
its range (numbers), its length (strings, lists, tables) and, for the fields of an
instruction table entry, the value it takes when absent. ``check(HEADER, header)`` returns
the header with those defaults filled in (and the launch's ``block`` and ``grid`` as three
extents), or raises ``SchemaError`` naming the field (``instructions[3].width``) and what
is wrong with it. Fields the table does not name are kept as they are (a newer warpviz may
add some); ``depth`` bounds how deeply any part of the document nests.

A hand-written checker rather than a JSON Schema library: warpviz depends on none, and the
checks it needs (CUDA's per-axis launch limits, extents filled to three, defaults, a
message that names the field and says what it must be) are a few lines here.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..kinds.registry import forms, trace_kinds

SHORT = 4096                    # characters of a name, a version, a PTX line, a file name
TEXT = 32 << 20                 # characters of a text (the launch file, a CUDA source): the header's own cap
MAX_INSTRUCTIONS = 65_536       # static memory instructions of one kernel (ids below the events' 2**20)
MAX_EVENTS = 65_536
MAX_SOURCES = 256               # CUDA source files carried in the header
MAX_ARGS = 1024                 # kernel parameters (CUDA's parameter space: 32 KiB)
MAX_TABLE = 1024                # entries of the small tables (gpu, ncu, ncu_other, sass_guard.predicated)
MAX_SASS_LINES = 1 << 20
MAX_LINE = 1 << 30              # a source or PTX line number
MAX_BUFFER_COUNT = 256 << 30    # elements of one kernel buffer (a launch file's bound on bytes)
MAX_SHARED_BYTES = 227 * 1024   # dynamic shared memory per block (H100's opt-in maximum)
MAX_DEPTH = 32                  # nesting of the whole document (the shipped traces nest 4 deep)
WIDTHS = (1, 2, 4, 8, 16, 32)   # bytes per lane of a PTX memory access (vectors and matrix rows included)
KINDS = trace_kinds()      # every registered trace kind (viz.kinds.registry): load, store, ...
BLOCK_LIMITS = (1024, 1024, 64)          # CUDA: threadIdx extents (and 1024 threads per block)
GRID_LIMITS = (2**31 - 1, 65535, 65535)  # CUDA: blockIdx extents
MAX_BLOCK_THREADS = 1024


class SchemaError(ValueError):
    """A header field that does not fit the table: ``where`` (``launch.grid[0]``) and ``problem``."""

    def __init__(self, where: str, problem: str):
        self.where, self.problem = where, problem
        super().__init__(f"{where}: {problem}")


_MISSING = object()


_KIND_NAMES = ((type(None), "null"), (bool, "true/false"), (int, "a whole number"), (float, "a number"),
               (str, "a string"), (list, "a list"), (dict, "a table"))     # bool before int: a bool is an int


def _kind(v: Any) -> str:
    """The JSON type of a parsed value, as a message names it."""
    return next((name for t, name in _KIND_NAMES if isinstance(v, t)), type(v).__name__)


def _shown(v: Any) -> str:
    text = repr(v) if not isinstance(v, (list, dict)) else _kind(v)
    return text if len(text) <= 40 else text[:37] + "..."


# ---------------------------------------------------------------------------- the specs


@dataclass(frozen=True)
class Spec:
    nullable: bool = field(default=False, kw_only=True)     # null is accepted too

    def check(self, v: Any, where: str) -> Any:
        if v is None and self.nullable:
            return None
        return self._check(v, where)

    def _check(self, v: Any, where: str) -> Any:
        raise NotImplementedError

    def what(self) -> str:
        raise NotImplementedError

    def fail(self, v: Any, where: str, extra: str = "") -> None:
        null = " or null" if self.nullable else ""
        raise SchemaError(where, f"is {_shown(v)}{extra}; it must be {self.what()}{null}")


@dataclass(frozen=True)
class Text(Spec):
    max_len: int = SHORT
    choices: tuple[str, ...] | None = None

    def what(self) -> str:
        if self.choices:
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        return f"a string of at most {self.max_len:,} characters"

    def _check(self, v, where):
        if not isinstance(v, str):
            self.fail(v, where)
        if len(v) > self.max_len:
            raise SchemaError(where, f"is a string of {len(v):,} characters; it must be at most {self.max_len:,}")
        if self.choices is not None and v not in self.choices:
            self.fail(v, where)
        return v


@dataclass(frozen=True)
class Int(Spec):
    lo: int = 0
    hi: int = 2**63 - 1
    choices: tuple[int, ...] | None = None

    def what(self) -> str:
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        return f"a whole number from {self.lo:,} to {self.hi:,}"

    def _check(self, v, where):
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(v, where)
        if not self.lo <= v <= self.hi or (self.choices is not None and v not in self.choices):
            self.fail(v, where)
        return v


@dataclass(frozen=True)
class Number(Spec):
    """A finite JSON number (an integer is a number too)."""

    lo: float = -1e300
    hi: float = 1e300

    def what(self) -> str:
        return f"a number from {self.lo:g} to {self.hi:g}"

    def _check(self, v, where):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not self.lo <= v <= self.hi:
            self.fail(v, where)
        return v


@dataclass(frozen=True)
class Bool(Spec):
    def what(self) -> str:
        return "true or false"

    def _check(self, v, where):
        if not isinstance(v, bool):
            self.fail(v, where)
        return v


@dataclass(frozen=True)
class Scalar(Spec):
    """A string (short), a number or true/false: a value shown as it is (the GPU's properties)."""

    def what(self) -> str:
        return f"a string of at most {SHORT:,} characters, a number or true/false"

    def _check(self, v, where):
        if isinstance(v, str) and len(v) <= SHORT or isinstance(v, (bool, int)):
            return v
        if isinstance(v, float) and -1e300 <= v <= 1e300:
            return v
        self.fail(v, where)


@dataclass(frozen=True)
class ListOf(Spec):
    item: Spec = None
    max_len: int = 0
    min_len: int = 0

    def what(self) -> str:
        return f"a list of {self.min_len:,} to {self.max_len:,} entries, each {self.item.what()}"

    def _check(self, v, where):
        if not isinstance(v, list):
            self.fail(v, where)
        if not self.min_len <= len(v) <= self.max_len:
            raise SchemaError(where, f"has {len(v):,} entries; it must have {self.min_len:,} to {self.max_len:,}")
        return [self.item.check(x, f"{where}[{k}]") for k, x in enumerate(v)]


@dataclass(frozen=True)
class Dims(Spec):
    """A launch's block or grid: 1 to 3 extents, each from 1 to CUDA's limit on that axis;
    filled to three extents."""

    limits: tuple[int, int, int] = (1, 1, 1)
    max_product: int | None = None

    def what(self) -> str:
        axes = ", ".join(f"{a} at most {n:,}" for a, n in zip("xyz", self.limits))
        total = f" ({self.max_product:,} in all)" if self.max_product else ""
        return f"a list of 1 to 3 whole numbers, each at least 1 ({axes}){total}"

    def _check(self, v, where):
        if not isinstance(v, list) or not 1 <= len(v) <= 3:
            self.fail(v, where)
        for k, (n, lim) in enumerate(zip(v, self.limits)):
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= lim:
                raise SchemaError(f"{where}[{k}]", f"is {_shown(n)}; the {'xyz'[k]} extent must be a whole number "
                                  f"from 1 to {lim:,} (CUDA's limit)")
        out = list(v) + [1] * (3 - len(v))
        if self.max_product is not None and out[0] * out[1] * out[2] > self.max_product:
            raise SchemaError(where, f"is {out[0]} x {out[1]} x {out[2]} = {out[0] * out[1] * out[2]:,}; it must be "
                              f"at most {self.max_product:,} (CUDA's limit)")
        return out


@dataclass(frozen=True)
class Field:
    spec: Spec
    required: bool = False
    default: Any = _MISSING          # filled in when the field is absent


@dataclass(frozen=True)
class Record(Spec):
    """A table with named fields (others are kept as they are)."""

    fields: Mapping[str, Field] = field(default_factory=dict)

    def what(self) -> str:
        return "a table"

    def _check(self, v, where):
        if not isinstance(v, dict):
            self.fail(v, where)
        out = dict(v)
        for name, f in self.fields.items():
            at = f"{where}.{name}" if where else name
            if name not in v:
                if f.required:
                    raise SchemaError(at, f"is missing; it must be {f.spec.what()}")
                if f.default is not _MISSING:
                    out[name] = f.default
                continue
            out[name] = f.spec.check(v[name], at)
        return out


@dataclass(frozen=True)
class MapOf(Spec):
    """A table whose keys are names (strings of at most ``SHORT`` characters) and whose
    values all follow ``value``."""

    value: Spec = None
    max_len: int = MAX_TABLE

    def what(self) -> str:
        return f"a table of at most {self.max_len:,} entries, each {self.value.what()}"

    def _check(self, v, where):
        if not isinstance(v, dict):
            self.fail(v, where)
        if len(v) > self.max_len:
            raise SchemaError(where, f"has {len(v):,} entries; it must have at most {self.max_len:,}")
        out = {}
        for k, x in v.items():
            if len(k) > SHORT:
                raise SchemaError(where, f"has a key of {len(k):,} characters; keys must be at most {SHORT:,}")
            out[k] = self.value.check(x, f"{where}[{k[:40]!r}]")
        return out


# ---------------------------------------------------------------------------- the table

def _opt(spec: Spec, default: Any = _MISSING) -> Field:
    return Field(spec, False, default)


def _req(spec: Spec) -> Field:
    return Field(spec, True)


_INSTRUCTION_TEXT = {name: _opt(Text(), "") for name in ("ptx", "function", "opcode", "predicate", "address", "file")}

# What the plain kernel's SASS does with a PTX memory instruction (``viz.trace.reconcile``).
SASS_STATES = ("same", "fused", "member", "split", "removed", "aggregated", "uncertain")
MAX_GROUP = 64                  # PTX accesses in one fused group, SASS instructions of one PTX line
SASS_INFO = Record(nullable=True, fields={
    "state": _req(Text(choices=SASS_STATES)),
    "certain": _opt(Bool(), False),
    "sass": _opt(ListOf(Text(), MAX_GROUP), []),
    "width": _opt(Int(0, 32), 0),
    "ptx_width": _opt(Int(0, 32), 0),
    "group": _opt(ListOf(Int(0, MAX_INSTRUCTIONS - 1), MAX_GROUP), []),
    "first": _opt(Int(0, MAX_INSTRUCTIONS - 1, nullable=True), None),
    "parts": _opt(Int(1, 16), 1),
    "leader": _opt(Text(choices=("", "highest", "lane31-full-warp")), ""),
    "atomic_rule": _opt(Text(choices=("", "words", "lanes")), ""),
    "sass_op": _opt(Text(choices=("", "atom", "red")), ""),
    "ptx_lines": _opt(ListOf(Int(0, MAX_LINE), MAX_GROUP), []),
    "source_lines": _opt(ListOf(Int(0, MAX_LINE), MAX_GROUP), []),
    "note": _opt(Text(TEXT), ""),
})

INSTRUCTION = Record(fields={
    "id": _req(Int(0, MAX_INSTRUCTIONS - 1)),       # also its position in the table (checked by tracefile)
    "kind": _req(Text(choices=KINDS)),
    "op": _req(Text(choices=("load", "store"))),
    "space": _req(Text(choices=("global", "shared", "generic"))),
    "width": _req(Int(choices=WIDTHS)),
    **_INSTRUCTION_TEXT,
    "line": _opt(Int(0, MAX_LINE), 0),
    "line_no": _opt(Int(0, MAX_LINE), 0),
    "operand": _opt(Int(0, 15), 0),
    "sass_predicated": _opt(Bool(nullable=True), None),
    "ptx_width": _opt(Int(choices=WIDTHS)),         # the PTX's width where the SASS's differs (fused, split)
    "sass": _opt(SASS_INFO, None),
})

EVENT = Record(fields={
    "id": _opt(Int(0, 2**31 - 1), 0),
    **_INSTRUCTION_TEXT,
    "kind": _opt(Text(), "event"),
    "op": _opt(Text(), "none"),
    "space": _opt(Text(), "none"),
    "width": _opt(Int(0, 32), 0),
    "line": _opt(Int(0, MAX_LINE), 0),
    "line_no": _opt(Int(0, MAX_LINE), 0),
    "operand": _opt(Int(0, 15), 0),
    "executed": _opt(Int(0, 2**63 - 1), 0),
})
# A memory instruction no kind records (viz.kinds.unrecorded), counted per warp-level execution.
UNRECORDED = Record(fields={
    "id": _opt(Int(0, 2**31 - 1), 0),
    **_INSTRUCTION_TEXT,
    "line": _opt(Int(0, MAX_LINE), 0),          # source line (0 without line information)
    "line_no": _opt(Int(0, MAX_LINE), 0),       # PTX line
    "why": _opt(Text(TEXT), ""),
    "executed": _opt(Int(0, 2**63 - 1), 0),     # warp-level executions
})

COUNTERS = MapOf(value=Number(nullable=True), nullable=True)

HEADER = Record(fields={
    "format": _req(Text()),
    "version": _req(Int(1, 2**31 - 1)),
    "records": _opt(Int(0, 2**63 - 1)),
    "title": _opt(Text()),
    "name": _opt(Text()),
    "kernel": _opt(Text()),
    "notes": _opt(Text(TEXT)),
    "compare": _opt(Text()),
    "launch": _req(Record(fields={
        "block": _req(Dims(limits=BLOCK_LIMITS, max_product=MAX_BLOCK_THREADS)),
        "grid": _req(Dims(limits=GRID_LIMITS)),
        "shared_bytes": _opt(Int(0, MAX_SHARED_BYTES)),
        "args": _opt(ListOf(Record(fields={
            "type": _opt(Text()),
            "count": _opt(Int(0, MAX_BUFFER_COUNT)),
            "fill": _opt(Text()),
            "value": _opt(Number()),
        }), MAX_ARGS)),
    })),
    "launch_file": _opt(Text(TEXT)),
    "launch_file_name": _opt(Text()),
    "source_name": _opt(Text()),
    "sources": _opt(MapOf(value=Text(TEXT), max_len=MAX_SOURCES)),
    "sources_left_out": _opt(ListOf(Record(fields={     # files the line information named, not carried
        "file": _opt(Text(), ""),
        "why": _opt(Text(), ""),
    }), MAX_SOURCES)),
    "gpu": _opt(MapOf(value=Scalar(nullable=True))),
    "driver": _opt(Text(nullable=True)),
    "nvcc": _opt(Text(nullable=True)),
    "arch": _opt(Text(nullable=True)),
    "warpviz": _opt(Text(nullable=True)),
    "recorded_blocks": _opt(Text(TEXT)),
    "complete": _opt(Bool()),
    # every warp-level execution of every recorded instruction of every block recorded (complete
    # also needs no unrecorded memory instruction to have run); absent in older traces: = complete
    "records_complete": _opt(Bool()),
    # memory instructions no kind records, with their executions; absent in older traces: unknown
    "unrecorded": _opt(ListOf(UNRECORDED, MAX_EVENTS)),
    "note": _opt(Text(TEXT)),
    "instructions": _req(ListOf(INSTRUCTION, MAX_INSTRUCTIONS)),
    "events": _opt(ListOf(EVENT, MAX_EVENTS)),
    "skip_regions": _opt(ListOf(Record(fields={
        "ptx_line": _opt(Int(0, MAX_LINE)),
        "predicate": _opt(Text()),
        "instructions": _opt(ListOf(Int(0, MAX_INSTRUCTIONS - 1), MAX_INSTRUCTIONS)),
    }), MAX_INSTRUCTIONS)),
    "sass_guard": _opt(Record(nullable=True, fields={
        "problems": _opt(ListOf(Text(TEXT), MAX_SASS_LINES)),
        "note": _opt(Text(TEXT)),
        "sass": _opt(ListOf(Text(), MAX_SASS_LINES)),
        "predicated": _opt(MapOf(value=Bool(nullable=True), max_len=MAX_INSTRUCTIONS, nullable=True)),
    })),
    "sass_map": _opt(Record(nullable=True, fields={
        "tool": _opt(Text(nullable=True)),
        "certain": _opt(Bool(), False),
        "notes": _opt(ListOf(Text(TEXT), MAX_INSTRUCTIONS), []),
        "uncertain": _opt(ListOf(Int(0, MAX_INSTRUCTIONS - 1), MAX_INSTRUCTIONS), []),
        "fused": _opt(ListOf(Int(0, MAX_INSTRUCTIONS - 1), MAX_INSTRUCTIONS), []),
        "removed": _opt(ListOf(Int(0, MAX_INSTRUCTIONS - 1), MAX_INSTRUCTIONS), []),
        # SASS a kind explains (TraceForm.builds: "tensor_maps", SASS that builds tensor maps on the device)
        **{b[1]: _opt(Text(TEXT), "") for f in forms() for b in f.builds},
    })),
    "ncu": _opt(COUNTERS),
    "ncu_other": _opt(COUNTERS),
})


# ---------------------------------------------------------------------------- the checks


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply ``value`` nests lists and tables (a scalar: 0), counted up to ``limit + 1``
    (without recursion: a hostile document may nest thousands deep)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            items = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        stack.extend((x, d + 1) for x in items if isinstance(x, (dict, list)))
    return deepest


def check(spec: Spec, value: Any) -> Any:
    """``value`` checked against ``spec`` (defaults filled in); SchemaError names the field."""
    d = depth(value)
    if d > MAX_DEPTH:
        raise SchemaError("(the document)", f"nests more than {MAX_DEPTH} lists or tables deep")
    return spec.check(value, "")


def blocks_text(blocks: list[int] | None) -> str:
    """The header's ``recorded_blocks``: "all", or the blocks as ranges ("0-15,63")."""
    if blocks is None:
        return "all"
    out, i = [], 0
    while i < len(blocks):
        j = i
        while j + 1 < len(blocks) and blocks[j + 1] == blocks[j] + 1:
            j += 1
        out.append(str(blocks[i]) if i == j else f"{blocks[i]}-{blocks[j]}")
        i = j + 1
    return ",".join(out)


__all__ = ["HEADER", "source_line", "INSTRUCTION", "SASS_INFO", "SASS_STATES", "EVENT", "SchemaError", "check", "depth", "MAX_INSTRUCTIONS", "MAX_DEPTH",
           "WIDTHS", "KINDS", "BLOCK_LIMITS", "GRID_LIMITS", "blocks_text", "PARTIAL_NOTES", "partial_note", "note_parts",
           "records_complete", "unrecorded_ran", "set_unrecorded", "UNRECORDED"]


# The recorder's notes on a partial trace (the header's ``note``), as English templates: the
# recorder fills them (``partial_note``, viz.trace.pipeline); ``note_parts`` splits a note back
# into its templates and values, so that the app shows it translated (template and values,
# never text read from the file as a template). A note in no known form is shown as it is.
PARTIAL_NOTES = {
    "over-limit": "the whole launch needs {executed:,} records, over the limit of {limit:,}: recorded blocks "
                  "{blocks} only",
    "size-limit": "recorded {recorded:,} of {executed:,} warp-level executions (the size limit)",
    "runs-differ": "the counting run saw {counted:,} executions and the recording run {recorded:,} (the kernel's "
                   "control flow depends on timing or data it changes)",
    "unrecorded": "{instructions:,} memory instructions that warpviz does not record ran {executed:,} warp-level "
                  "executions: their traffic is in no figure",
}
_NOTE_JOIN = "; "


def partial_note(*parts: tuple[str, dict]) -> str:
    """The header's ``note`` of ``(key of PARTIAL_NOTES, values)`` parts, joined by "; "."""
    return _NOTE_JOIN.join(PARTIAL_NOTES[key].format(**values) for key, values in parts)


def _note_pattern(template: str) -> re.Pattern:
    out = []
    for literal, field, spec, _conv in string.Formatter().parse(template):
        out.append(re.escape(literal))
        if field is not None:
            out.append(rf"(?P<{field}>\d{{1,3}}(?:,\d{{3}})*)" if spec == "," else rf"(?P<{field}>[0-9,\-]{{1,200}})")
    return re.compile("".join(out))


_NOTE_PATTERNS = {key: _note_pattern(t) for key, t in PARTIAL_NOTES.items()}


def note_parts(note: str) -> list[tuple[str, dict]] | None:
    """``note`` as the ``partial_note`` parts it was made of (numbers as ints, the blocks as
    text); None when any part of it is in no known form (a note of another version: shown as is)."""
    if not isinstance(note, str) or not note or len(note) > 4000:
        return None
    out = []
    for piece in note.split(_NOTE_JOIN):
        for key, rx in _NOTE_PATTERNS.items():
            m = rx.fullmatch(piece)
            if m:
                values = m.groupdict()
                out.append((key, {k: v if k == "blocks" else int(v.replace(",", "")) for k, v in values.items()}))
                break
        else:
            return None
    return out


def records_complete(header: dict, default: bool = False) -> bool:
    """Whether every block's every execution of every recorded instruction is in the trace
    (``records_complete``; an older trace's ``complete``, which meant that)."""
    v = header.get("records_complete", header.get("complete", default))
    return bool(v)


def set_unrecorded(header: dict, entries: list[dict]) -> dict:
    """Put the memory instructions no kind records (``entries``: each with ``executed``, its
    warp-level executions) in a new trace's header: ``unrecorded``; ``records_complete`` keeps
    what ``complete`` said of the recording; ``complete`` becomes false, and the note says so
    (``PARTIAL_NOTES["unrecorded"]``), when any of them ran. Returns the header."""
    header["unrecorded"] = list(entries)
    header["records_complete"] = bool(header.get("complete", False))
    ran = [d for d in entries if int(d.get("executed") or 0) > 0]
    if ran:
        header["complete"] = False
        part = PARTIAL_NOTES["unrecorded"].format(instructions=len(ran),
                                                  executed=sum(int(d["executed"]) for d in ran))
        header["note"] = _NOTE_JOIN.join(p for p in (header.get("note") or "", part) if p)
    return header


def unrecorded_ran(header: dict) -> list[dict] | None:
    """The memory instructions no kind records that ran (``unrecorded`` entries with executions),
    or None where the trace does not say (written before warpviz listed them: unknown)."""
    u = header.get("unrecorded")
    if not isinstance(u, list):
        return None
    return [d for d in u if isinstance(d, dict) and int(d.get("executed") or 0) > 0]


def source_line(header: dict, ins: dict) -> str:
    """The CUDA source line of an instruction (stripped), or ""."""
    line = int(ins.get("line") or 0)
    if not line:
        return ""
    sources = header.get("sources") or {}
    name = str(ins.get("file", "")).rsplit("/", 1)[-1]
    text = sources.get(name)
    if text is None and len(sources) == 1:
        text = next(iter(sources.values()))
    lines = str(text or "").splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


_ASM = re.compile(r"\b(asm|__asm__|__asm)\b")
ASM_LOOK_BACK = 40              # lines an inline-asm statement may span above its .loc line


def _source_text(header: dict, ins: dict) -> str | None:
    sources = header.get("sources") or {}
    name = str(ins.get("file", "")).rsplit("/", 1)[-1]
    text = sources.get(name)
    if text is None and len(sources) == 1:
        text = next(iter(sources.values()))
    return None if text is None else str(text)


def mnemonic(opcode: str) -> str:
    """What an instruction's line shows of it: ``ldmatrix`` of ``ldmatrix.sync.aligned...``,
    ``cp.async`` of ``cp.async.cg.shared.global``."""
    parts = str(opcode).split(".")
    return ".".join(parts[:2]) if parts[0] == "cp" and len(parts) > 1 else parts[0]


def mnemonic_line(header: dict, ins: dict, cache: dict | None = None) -> int:
    """The source line to show for an instruction. nvcc's ``.loc`` of an inline-asm instruction
    is the asm statement's last line (its operand list, ``: "=r"(r0) : "r"(row));``); where
    that line does not name the instruction's mnemonic and belongs to an ``asm`` statement,
    the statement's line that does is returned. Otherwise (no source, not asm, no such line)
    the ``.loc`` line itself."""
    line = int(ins.get("line") or 0)
    if not line:
        return line
    key = str(ins.get("file", ""))
    lines = cache.get(key) if cache is not None else None
    if lines is None:               # a header's files are split once (``cache``), not once per instruction
        lines = (_source_text(header, ins) or "").splitlines()
        if cache is not None:
            cache[key] = lines
    if not 0 < line <= len(lines):
        return line
    word = mnemonic(str(ins.get("opcode", "")))
    if not word or word in lines[line - 1]:
        return line
    start = None
    for k in range(line - 1, max(0, line - 1 - ASM_LOOK_BACK) - 1, -1):     # 0-based, the .loc line first
        if k < line - 1 and lines[k].rstrip().endswith(";") and not _ASM.search(lines[k]):
            break                                   # an earlier statement ended: not inside an asm
        if _ASM.search(lines[k]):
            start = k
            break
    if start is None:
        return line
    for k in range(start, line):
        if word in lines[k]:
            return k + 1
    return line


def shown_sources(header: dict) -> list[tuple[str, str]]:
    """The trace's carried sources in the order the Source panel lists them: the files its
    instructions' lines are in first (a Triton kernel's Python, a CUDA file), then the rest
    (the PTX a Triton trace carries too), each group in the header's order. So the listing
    opens on the code a reader wrote, not on the PTX."""
    sources = header.get("sources") or {}
    named = {str(ins.get("file", "")).rsplit("/", 1)[-1] for ins in header.get("instructions") or []
             if ins.get("line")}
    items = [(str(k), str(v)) for k, v in sources.items()]
    return [x for x in items if x[0] in named] + [x for x in items if x[0] not in named]
