"""The PTX instrumenter: find every instruction that touches global or shared memory and
record, per warp-level execution, what it did.

``nvcc -ptx -lineinfo`` turns the user's source into PTX; ``parse`` finds the memory
instructions that a registered kind records (``viz.kinds.registry``: its ``TraceForm``s;
today ``ld``/``st`` of every width and vector, predicated or not, ``atom``, ``red``,
``ldmatrix``, ``stmatrix``, ``cp.async``) with their source line (``.loc``), and those that
touch memory but no kind records (``viz.kinds.unrecorded``), whose executions are counted
as events so that the trace can say it is not complete;
``instrument`` inserts before each one a straight-line block (no branch, so the kernel's
control flow is unchanged) that:

* takes the warp's ``activemask`` and the ballot of the instruction's predicate,
* computes each lane's byte address from the instruction's own address operand
  (``isspacep.shared``/``isspacep.global`` resolve a generic address per lane, and a
  shared one is turned into its offset in the shared window),
* lets the lowest active lane take a record slot with one ``atom.global.add`` on a
  counter, broadcasts it (``shfl.sync``) and, when the slot is below the capacity and the
  block is selected, writes the record: every lane its 8-byte address, the leader the
  header (static instruction id, linear block, warp, active mask, predicate mask, shared
  mask, global mask).

The recorder is steered through constant memory (``__wv_ctl``: record buffer, counter,
capacity, block filter; ``__wv_blocks``: a bitmap of the selected blocks), so the
kernel's parameters stay as they are and the same launch runs the plain and the
instrumented kernel. A first run with capacity 0 only counts; the second records.

The standard library and the kinds' table only: the tests run it on PTX that nvcc makes
without a GPU.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from ..errors import WarpvizError
from ..kinds.cp_async import source_operand
from ..kinds.registry import form_of, forms, trace_kind, unrecorded_of

# Events: instructions that touch no memory but whose executions are counted per warp
# (``cp.async.commit_group``/``wait_group``/``wait_all``: ptxas may emit never-true
# ``@!PT LDS`` for them, docs/GPU.md). Their records carry ids from EVENT_BASE on; the
# trace command counts them into the trace's header and drops them from the records.
EVENT_BASE = 1 << 20
_EVENT = re.compile(r"^cp\.async\.(commit_group|wait_group|wait_all)\b")
# Memory instructions no kind records (viz.kinds.unrecorded) are counted the same way, as
# events of this kind; the trace's header lists them (``unrecorded``) and is not complete.
UNRECORDED_KIND = "unrecorded"
RECORD_BYTES = 288           # 32-byte header + 32 lanes x 8-byte address
HEADER_WORDS = 8             # id, block, warp, active, predicate, shared, global, 0
BITMAP_WORDS = 2048          # __wv_blocks: blocks 0..65535 can be selected one by one
CTL_SYMBOL = "__wv_ctl"
BITMAP_SYMBOL = "__wv_blocks"

_TYPES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
          "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
          "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}
# Every pattern here runs on one line of text from a file someone sent, so each is linear in
# the line's length: a word is matched possessively (``*+``: a line of 100,000 letters and no
# `;` made ``[\w.:]*`` give back one letter at a time, quadratic), a bracket or a
# parenthesis stops at the next opening one (``[^\[\]]``, ``[^()]``: `[[[[...` and
# `.func (.func (...` scanned to the line's end from each opening one).
_INSTR = re.compile(r"^(?P<guard>@(?P<neg>!)?(?P<pred>%?[\w$]++)\s++)?(?P<opcode>[a-z][\w.:]*+)\s*+(?P<operands>.*?);\s*+(//.*)?$")
_LOC = re.compile(r"^\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
_FILE = re.compile(r'^\.file\s+(\d+)\s+"([^"]*)"')
_FUNC = re.compile(r"\.(entry|func)\s+(?:\([^()]*\)\s*)?([\w$]+)")
_REG = re.compile(r"^\.reg\s+\.(\w+)\s+(%?[\w$]+?)(?:<\d+>)?\s*;")
_VAR = re.compile(r"\.(shared|global)\s+(?:\.align\s+\d+\s+)?\.\w+\s+([\w$]+)")
_ADDR = re.compile(r"\[([^\[\]]*)\]")


class PtxError(WarpvizError, ValueError):
    """PTX the instrumenter cannot handle (said with the line)."""


@dataclass(frozen=True)
class MemInstr:
    """One static memory instruction (one memory operand of it, for cp.async)."""

    id: int
    line_no: int          # 1-based line in the PTX
    ptx: str              # the instruction's text, as in the PTX
    function: str
    opcode: str
    kind: str             # the trace kind (viz.kinds.registry.trace_kinds: load | store | atomic | ...),
                          # "event" or "unrecorded" for the counted non-records (EVENT_BASE on)
    op: str               # load | store (the direction of this operand's access)
    space: str            # global | shared | generic
    width: int            # bytes per lane (vector and matrix rows included)
    predicate: str        # "" or "%p3" / "!%p3"
    address: str          # the address operand, e.g. "%rd5+16"
    operand: int          # which [..] of the instruction (cp.async: 0 = shared dst, 1 = global src)
    file: str             # source file of the .loc before it ("" without line info)
    line: int             # source line (0 without line info)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Parsed:
    lines: list[str]
    instrs: list[MemInstr]
    files: dict[int, str]
    skipped: list[tuple[int, str]]          # (line, text) memory instructions no kind records (also in events)
    regions: list["SkipRegion"] = None      # forward branches over straight-line code with shared loads/stores
    events: list[MemInstr] = None           # instructions whose executions are counted (EVENT_BASE + k): cp.async
                                            # group instructions (kind "event") and unrecorded memory ("unrecorded")


@dataclass(frozen=True)
class SkipRegion:
    """``@%p bra L`` over straight-line code (no label, branch, barrier or call before L)
    that holds explicit shared loads/stores. ptxas may turn such a branch into predication;
    then a warp whose lanes all take the branch still executes the LDS/STS (no lane on),
    and Nsight Compute counts it. The recorder writes a *skip record* per shared
    instruction of the region for such a warp; the analysis counts it only where the
    plain kernel's SASS shows the instruction predicated."""

    line_no: int          # the branch's PTX line (1-based)
    predicate: str        # "%p3" or "!%p3": the branch is taken where it holds
    ids: tuple[int, ...]  # the shared load/store instructions inside, and the global entry of each cp.async


_BRA = re.compile(r"^@(!)?(%[\w$]+)\s+bra(?:\.uni)?\s+([\w$]+)\s*;")
_LABEL = re.compile(r"^([\w$]+):")
_BARRIER = re.compile(r"^(@!?%[\w$]+\s+)?(bra|ret|exit|bar|barrier|call|brx|trap)\b")


def _width(parts: list[str], form, operands: str) -> int:
    if form.width is not None:
        return form.width(parts, operands)      # the kind's own (ldmatrix: a 16-byte row; cp.async: its size)
    size = 0
    vec = 1
    for p in parts:
        if p in _TYPES:
            size = _TYPES[p]
        m = re.fullmatch(r"v(\d+)", p)
        if m:
            vec = int(m.group(1))
    return size * vec


def classify(opcode: str) -> tuple[str, str] | None:
    """(kind, space) of a memory opcode that a registered kind records (``viz.kinds.registry``:
    the first ``TraceForm`` that accepts it), or None: not a memory instruction, outside the
    global and shared spaces, or one no kind records (``unrecorded``)."""
    got = form_of(opcode)
    return None if got is None else (got[0].kind, got[1])


def unrecorded(opcode: str) -> str | None:
    """Why a PTX opcode that moves data to or from memory is not recorded
    (``viz.kinds.unrecorded``), or None (recorded, or no such instruction)."""
    u = unrecorded_of(opcode)
    return None if u is None else u.why


def _one_statement_a_line(lines: list[str]) -> list[str]:
    """``lines`` with a line that holds several statements, one of them a memory instruction,
    split into one line a statement (``{ .reg .pred p; setp.ne.b32 p, %r1, 0; @p cp.async...; }``:
    inline asm written on one line). Every other line stays as it is, so PTX with one
    statement a line (nvcc's own, Triton's) keeps its line numbers."""
    out: list[str] = []
    for raw in lines:
        code = raw.split("//", 1)[0]
        parts = [p.strip() for p in code.split(";")]
        if code.count(";") < 2 and not code.strip().startswith("{") or \
                not any(classify(_INSTR_WORD.match(p).group(1)) or unrecorded(_INSTR_WORD.match(p).group(1))
                        for p in parts if _INSTR_WORD.match(p)):
            out.append(raw)
            continue
        indent = raw[:len(raw) - len(raw.lstrip())]
        rest = code.strip()
        i, n = 0, len(rest)          # walked by index: cutting `rest` down each time was quadratic
        while i < n:
            c = rest[i]
            if c.isspace():
                i += 1
            elif c in "{}":
                out.append(indent + c)
                i += 1
            else:
                j = rest.find(";", i)
                if j < 0:
                    out.append(indent + rest[i:].strip())
                    break
                out.append(indent + rest[i:j].strip() + ";")
                i = j + 1
    return out


_INSTR_WORD = re.compile(r"^[{}\s]*(?:@!?%?[\w$]+\s+)?([a-z][\w.:]*)")


def parse(text: str) -> Parsed:
    """The memory instructions of a PTX module, with their source lines."""
    lines = _one_statement_a_line(text.split("\n"))
    files: dict[int, str] = {}
    for ln in lines:
        m = _FILE.match(ln.strip())
        if m:
            files[int(m.group(1))] = m.group(2)
    instrs: list[MemInstr] = []
    events: list[MemInstr] = []
    skipped: list[tuple[int, str]] = []
    func = ""
    loc = (0, 0)
    for i, raw in enumerate(lines):
        s = raw.strip()
        if not s or s.startswith("//"):
            continue
        fm = _FUNC.search(s)
        if fm and not s.startswith("call"):
            func = fm.group(2)
            continue
        lm = _LOC.match(s)
        if lm:
            f, line = int(lm.group(1)), int(lm.group(2))
            if lm.group(4) and _is_system(files.get(f, "")):
                f, line = int(lm.group(4)), int(lm.group(5))
            elif _is_library(files.get(f, "")) and "//" in s:
                f, line = _inlined_from_comment(s.split("//", 1)[1], files, (f, line))
            loc = (f, line)
            continue
        if s.startswith(".") or s.endswith(":") or s in ("{", "}"):
            continue
        m = _INSTR.match(s)
        if not m:
            continue
        opcode = m.group("opcode")
        if _EVENT.match(opcode):
            pred = ("!" if m.group("neg") else "") + m.group("pred") if m.group("guard") else ""
            srcfile, srcline = files.get(loc[0], ""), loc[1]
            events.append(MemInstr(EVENT_BASE + len(events), i + 1, s, func, opcode, "event", "none", "none", 0,
                                   pred, "0", 0, srcfile, srcline))
            continue
        got = form_of(opcode)
        if got is None:
            why = unrecorded(opcode)
            if why is not None:
                # memory no kind records: its executions are counted like an event's, and the
                # trace says it is incomplete (viz.kinds.unrecorded)
                pred = ("!" if m.group("neg") else "") + m.group("pred") if m.group("guard") else ""
                srcfile, srcline = files.get(loc[0], ""), loc[1]
                skipped.append((i + 1, s))
                events.append(MemInstr(EVENT_BASE + len(events), i + 1, s, func, opcode, UNRECORDED_KIND, "none",
                                       "none", 0, pred, "0", 0, srcfile, srcline))
            continue
        form, space = got
        kind = form.kind
        operands = m.group("operands")
        if form.read is not None:
            # a kind that reads its own operands (one MemInstr: TraceForm.read)
            try:
                op, sp, width, address = form.read(opcode, operands)
            except ValueError as err:
                raise PtxError(f"PTX line {i + 1}: {err} in `{s}`") from None
            pred = ("!" if m.group("neg") else "") + m.group("pred") if m.group("guard") else ""
            instrs.append(MemInstr(len(instrs), i + 1, s, func, opcode, kind, op, sp, width, pred, address, 0,
                                   files.get(loc[0], ""), loc[1]))
            continue
        addrs = _ADDR.findall(operands)
        if form.slots == "operands":
            # a kind whose records carry operands (its TraceForm.record_code reads them): the
            # whole operand text is its "address"
            addrs = [operands.strip()] * (1 + max((k for _op, _sp, k in form.roles), default=0))
        if not addrs:
            raise PtxError(f"PTX line {i + 1}: no address operand in `{s}`")
        pred = ""
        if m.group("guard"):
            pred = ("!" if m.group("neg") else "") + m.group("pred")
        parts = opcode.split(".")
        width = _width(parts, form, operands)
        srcfile, srcline = files.get(loc[0], ""), loc[1]
        for op, sp, k in form.roles:
            sp = sp or space
            if k >= len(addrs):
                raise PtxError(f"PTX line {i + 1}: no address operand {k + 1} in `{s}`")
            instrs.append(MemInstr(len(instrs), i + 1, s, func, opcode, kind, op, sp, width, pred,
                                   addrs[k].strip(), k, srcfile, srcline))
    starts = [i for i, ln in enumerate(lines) if _FUNC.search(ln.strip()) and not ln.strip().startswith("call")]
    for f in forms():          # a kind's own reading of the PTX around its instructions (atomics: RED)
        if f.post_parse is not None:
            instrs = f.post_parse(lines, instrs, starts)
    return Parsed(lines, instrs, files, skipped, find_regions(lines, instrs), events)


def find_regions(lines: list[str], instrs: list[MemInstr]) -> list[SkipRegion]:
    by_line: dict[int, list[MemInstr]] = {}
    for ins in instrs:
        by_line.setdefault(ins.line_no, []).append(ins)
    out = []
    for i, raw in enumerate(lines):
        m = _BRA.match(raw.strip())
        if not m:
            continue
        target = m.group(3)
        ids: list[int] = []
        ok = False
        for j in range(i + 1, len(lines)):
            t = lines[j].strip()
            lm = _LABEL.match(t)
            if lm:
                ok = lm.group(1) == target
                break
            if _BARRIER.match(t):
                break
            for ins in by_line.get(j + 1, []):
                f = trace_kind(ins.kind)     # its form's skip_spaces: explicit LDS/STS, an LDGSTS's global entry
                if f is not None and ins.space in f.skip_spaces:
                    ids.append(ins.id)
        if ok and ids:
            out.append(SkipRegion(i + 1, ("!" if m.group(1) else "") + m.group(2), tuple(ids)))
    return out


def _is_system(path: str) -> bool:
    return "/include/" in path and ("cuda" in path or "targets" in path)


def _is_library(path: str) -> bool:
    """A file of the compiler's own library: CUDA's headers, Triton's language (tl.max,
    tl.sum... are Python functions of triton/language that Triton inlines)."""
    p = path.replace("\\", "/")
    return _is_system(p) or "/triton/language/" in p or "/triton/runtime/" in p


_FRAME = re.compile(r"([\w.\-]+):(\d+):\d+")


def _inlined_from_comment(comment: str, files: dict[int, str], loc: tuple[int, int]) -> tuple[int, int]:
    """Triton's PTX writes where a library line was inlined only in the comment after its
    ``.loc`` (``standard.py:170:27 @[ standard.py:191:40 @[ kernel.py:45:37 ] ]``): the
    outermost frame in a file of the module that is not a library file, else ``loc``."""
    by_name: dict[str, int] = {}
    for k, path in files.items():
        if not _is_library(path):
            by_name.setdefault(path.replace("\\", "/").rsplit("/", 1)[-1], k)
    for name, line, in reversed([(m.group(1), m.group(2)) for m in _FRAME.finditer(comment[:2000])]):
        if name in by_name:
            return by_name[name], int(line)
    return loc


# ---------------------------------------------------------------------------- instrumenting


def _reg_widths(lines: list[str]) -> dict[str, int]:
    """Register prefix -> bits, from the .reg declarations (per module; nvcc uses one naming)."""
    out: dict[str, int] = {}
    for ln in lines:
        m = _REG.match(ln.strip())
        if m:
            t = m.group(1)
            bits = 64 if t.endswith("64") else 32 if t.endswith("32") else 16 if t.endswith("16") else 0
            out[m.group(2)] = bits
    return out


def _symbols(lines: list[str]) -> set[str]:
    out = set()
    for ln in lines:
        s = ln.strip()
        if s.startswith("//"):
            continue
        m = _VAR.search(s)
        if m and not s.startswith(("ld", "st", "mov", "cvta")):
            out.add(m.group(2))
    return out


def _reg_bits(name: str, widths: dict[str, int]) -> int:
    if name in widths:
        return widths[name]
    m = re.match(r"(%[A-Za-z_$]+?)\d+$", name)
    if m and m.group(1) in widths:
        return widths[m.group(1)]
    return 64 if name.startswith("%rd") else 32


def _address_code(addr: str, widths: dict[str, int], symbols: set[str], lineno: int) -> list[str]:
    """PTX that puts the address operand's value into %wvd0 (u64)."""
    a = addr.replace(" ", "")
    m = re.fullmatch(r"([%\w$.]+?)?(?:\+(-?(?:0x[0-9a-fA-F]+|\d+)))?", a)
    if not m or not (m.group(1) or m.group(2)):
        raise PtxError(f"PTX line {lineno}: address operand `[{addr}]` is not register/symbol + offset")
    base, off = m.group(1), m.group(2)
    offset = int(off, 0) if off else 0
    out = []
    if base is None or re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", base or ""):
        value = offset + (int(base, 0) if base else 0)
        return [f"mov.u64 %wvd0, {value};"]
    if base.startswith("%"):
        if _reg_bits(base, widths) == 64:
            out.append(f"add.s64 %wvd0, {base}, {offset};")
        else:
            out.append(f"cvt.u64.u32 %wvd0, {base};")
            if offset:
                out.append(f"add.s64 %wvd0, %wvd0, {offset};")
    else:
        out.append(f"mov.u64 %wvd0, {base};")
        if offset:
            out.append(f"add.s64 %wvd0, %wvd0, {offset};")
    return out


def recording_block(ins: MemInstr, widths: dict[str, int], symbols: set[str]) -> list[str]:
    """The straight-line PTX recorded before ``ins`` (see the module doc)."""
    c = [
        "{",
        ".reg .pred %wvp<8>;",
        ".reg .b32 %wvr<16>;",
        ".reg .b64 %wvd<8>;",
        "activemask.b32 %wvr0;",
    ]
    if ins.predicate:
        c.append(f"vote.sync.ballot.b32 %wvr1, {ins.predicate}, %wvr0;")
    else:
        c.append("mov.b32 %wvr1, %wvr0;")
    form = trace_kind(ins.kind) if ins.space != "none" else None
    operands = form is not None and form.slots == "operands"
    if operands:
        # the 32 slots carry what the kind's record_code puts in %wvd0 (after the prologue,
        # which gives it the lane in %wvr4); no lane is a shared or global address
        c += ["mov.u64 %wvd0, 0;", "mov.b32 %wvr2, 0;", "mov.b32 %wvr3, 0;"]
    else:
        c += _address_code(ins.address, widths, symbols, ins.line_no)
    if operands:
        pass                                             # its masks are set above: no lane is an address
    elif ins.space == "generic":
        c += ["isspacep.shared %wvp1, %wvd0;",
              "isspacep.global %wvp2, %wvd0;",
              "vote.sync.ballot.b32 %wvr2, %wvp1, %wvr0;",
              "vote.sync.ballot.b32 %wvr3, %wvp2, %wvr0;",
              "@%wvp1 cvta.to.shared.u64 %wvd0, %wvd0;"]
    elif ins.space == "shared":
        c += ["mov.b32 %wvr2, %wvr0;", "mov.b32 %wvr3, 0;"]
    elif ins.space == "none":                            # an event: no address
        c += ["mov.b32 %wvr2, 0;", "mov.b32 %wvr3, 0;"]
    else:
        c += ["mov.b32 %wvr2, 0;", "mov.b32 %wvr3, %wvr0;"]
    if form is not None and form.mask_code is not None:
        # the kind clears, from the lane masks, the lanes that touch nothing (cp.async's zero fill)
        m = _INSTR.match(ins.ptx.strip())
        try:
            c += form.mask_code(ins, m.group("opcode") if m else ins.opcode, m.group("operands") if m else "",
                                lambda reg: _reg_bits(reg, widths))
        except ValueError as err:
            raise PtxError(f"PTX line {ins.line_no}: {err}") from None
    _prologue(c)
    if operands and form.record_code is not None:
        c += list(form.record_code(ins))
    c += [
        "and.pred %wvp5, %wvp0, %wvp4;",                 # the leader of a recorded block
        # the slot: one atomic by the leader, broadcast to the warp
        f"ld.const.u64 %wvd3, [{CTL_SYMBOL}+8];",
        "mov.u32 %wvr11, -1;",
        "@%wvp5 atom.global.add.u32 %wvr11, [%wvd3], 1;",
        "shfl.sync.idx.b32 %wvr11, %wvr11, %wvr5, 31, %wvr0;",
        f"ld.const.u32 %wvr12, [{CTL_SYMBOL}+16];",
        "setp.lt.u32 %wvp6, %wvr11, %wvr12;",
        f"ld.const.u64 %wvd4, [{CTL_SYMBOL}];",
        f"mul.wide.u32 %wvd5, %wvr11, {RECORD_BYTES};",
        "add.s64 %wvd4, %wvd4, %wvd5;",
        "mul.wide.u32 %wvd5, %wvr4, 8;",
        "add.s64 %wvd6, %wvd4, %wvd5;",
        "@%wvp6 st.global.u64 [%wvd6+32], %wvd0;",
        "and.pred %wvp7, %wvp6, %wvp0;",
        f"mov.u32 %wvr13, {ins.id};",
        "mov.u32 %wvr14, 0;",
        "@%wvp7 st.global.v4.u32 [%wvd4], {%wvr13, %wvr6, %wvr7, %wvr0};",
        "@%wvp7 st.global.v4.u32 [%wvd4+16], {%wvr1, %wvr2, %wvr3, %wvr14};",
        "}",
    ]
    return c


def cp_async_source(ins: MemInstr) -> str | None:
    """The operand of a ``cp.async`` that says whether a lane reads global memory at all
    (``viz.kinds.cp_async.source_operand``), or None."""
    m = _INSTR.match(ins.ptx.strip())
    return None if not m else source_operand(m.group("opcode"), m.group("operands"))


def _prologue(c: list[str]) -> None:
    """Leader (%wvp0 / %wvr5), lane (%wvr4), linear block (%wvr6), warp (%wvr7) and the
    block filter (%wvp4: this block is recorded), from the active mask in %wvr0."""
    c += [
        "mov.u32 %wvr4, %laneid;",
        "neg.s32 %wvr5, %wvr0;",
        "and.b32 %wvr5, %wvr5, %wvr0;",
        "bfind.u32 %wvr5, %wvr5;",
        "setp.eq.u32 %wvp0, %wvr4, %wvr5;",
        "mov.u32 %wvr6, %ctaid.z;", "mov.u32 %wvr7, %nctaid.y;", "mov.u32 %wvr8, %ctaid.y;",
        "mad.lo.u32 %wvr6, %wvr6, %wvr7, %wvr8;",
        "mov.u32 %wvr7, %nctaid.x;", "mov.u32 %wvr8, %ctaid.x;",
        "mad.lo.u32 %wvr6, %wvr6, %wvr7, %wvr8;",
        "mov.u32 %wvr7, %tid.z;", "mov.u32 %wvr8, %ntid.y;", "mov.u32 %wvr9, %tid.y;",
        "mad.lo.u32 %wvr7, %wvr7, %wvr8, %wvr9;",
        "mov.u32 %wvr8, %ntid.x;", "mov.u32 %wvr9, %tid.x;",
        "mad.lo.u32 %wvr7, %wvr7, %wvr8, %wvr9;",
        "shr.u32 %wvr7, %wvr7, 5;",
        f"ld.const.u32 %wvr8, [{CTL_SYMBOL}+20];",
        "shr.u32 %wvr9, %wvr6, 5;",
        f"min.u32 %wvr9, %wvr9, {BITMAP_WORDS - 1};",
        "mul.wide.u32 %wvd1, %wvr9, 4;",
        f"mov.u64 %wvd2, {BITMAP_SYMBOL};",
        "add.s64 %wvd1, %wvd1, %wvd2;",
        "ld.const.u32 %wvr9, [%wvd1];",
        "and.b32 %wvr10, %wvr6, 31;",
        "shr.u32 %wvr9, %wvr9, %wvr10;",
        "and.b32 %wvr9, %wvr9, 1;",
        f"setp.lt.u32 %wvp3, %wvr6, {BITMAP_WORDS * 32};",
        "setp.eq.and.u32 %wvp3, %wvr9, 1, %wvp3;",
        "setp.eq.u32 %wvp4, %wvr8, 0;",
        "or.pred %wvp4, %wvp4, %wvp3;",
    ]


def skip_block(region: SkipRegion) -> list[str]:
    """Before ``@%p bra L``: if every active lane takes the branch, the leader writes one
    skip record (header word 7 = 1, no lane on) per shared instruction of the region."""
    n = len(region.ids)
    c = ["{", ".reg .pred %wvp<8>;", ".reg .b32 %wvr<16>;", ".reg .b64 %wvd<8>;",
         "activemask.b32 %wvr0;",
         f"vote.sync.ballot.b32 %wvr1, {region.predicate}, %wvr0;",   # lanes that take the branch
         "setp.eq.u32 %wvp1, %wvr1, %wvr0;"]                          # ... all of them
    _prologue(c)
    c += [
        "and.pred %wvp5, %wvp0, %wvp4;",
        "and.pred %wvp5, %wvp5, %wvp1;",
        f"ld.const.u64 %wvd3, [{CTL_SYMBOL}+8];",
        "mov.u32 %wvr11, -1;",
        f"@%wvp5 atom.global.add.u32 %wvr11, [%wvd3], {n};",
        f"ld.const.u32 %wvr12, [{CTL_SYMBOL}+16];",
        f"ld.const.u64 %wvd4, [{CTL_SYMBOL}];",
        "mov.u32 %wvr14, 0;",
        "mov.u32 %wvr15, 1;",
    ]
    for k, ins_id in enumerate(region.ids):
        c += [
            f"add.u32 %wvr9, %wvr11, {k};",
            "setp.lt.u32 %wvp6, %wvr9, %wvr12;",
            "and.pred %wvp7, %wvp6, %wvp5;",
            "setp.ne.u32 %wvp2, %wvr11, -1;",
            "and.pred %wvp7, %wvp7, %wvp2;",
            f"mul.wide.u32 %wvd5, %wvr9, {RECORD_BYTES};",
            "add.s64 %wvd6, %wvd4, %wvd5;",
            f"mov.u32 %wvr13, {ins_id};",
            "@%wvp7 st.global.v4.u32 [%wvd6], {%wvr13, %wvr6, %wvr7, %wvr0};",
            "@%wvp7 st.global.v4.u32 [%wvd6+16], {%wvr14, %wvr14, %wvr14, %wvr15};",
        ]
    c.append("}")
    return c


def _own_block(ins: MemInstr, widths: dict[str, int], symbols: set[str]) -> list[str] | None:
    """The recording block of a kind that records its own way (``TraceForm.block``), or None."""
    form = trace_kind(ins.kind) if ins.space != "none" else None
    if form is None or form.block is None:
        return None
    try:
        return list(form.block(ins, widths, symbols, _prologue, _address_code, lambda r: _reg_bits(r, widths),
                               CTL_SYMBOL, RECORD_BYTES))
    except PtxError:
        raise
    except ValueError as err:
        raise PtxError(f"PTX line {ins.line_no}: {err} in `{ins.ptx}`") from None


def _declarations() -> list[str]:
    return [f".const .align 8 .b8 {CTL_SYMBOL}[48];",
            f".const .align 4 .b32 {BITMAP_SYMBOL}[{BITMAP_WORDS}];"]


def instrument(text: str) -> tuple[str, list[MemInstr]]:
    """The instrumented PTX and its static instruction table (``instrument_full`` also
    gives the skip regions)."""
    out, instrs, _ = instrument_full(text)
    return out, instrs


def check_block(ins: MemInstr) -> list[str]:
    """Fault finding (``instrument_full(check=True)``, used only after a kernel faulted):
    appended to the recording block of a global or generic access. A lane whose global
    address lies outside [``__wv_ctl+24``, ``__wv_ctl+32``) (the launch's buffers) or is
    not aligned to the access width is switched off for the instruction, which this block
    then issues itself; the first warp with such lanes writes its instruction id, block,
    warp, bad-lane mask and every lane's address into the counter buffer (bytes 16..288),
    so the run completes and the host can say which instruction and lanes faulted."""
    raw = ins.ptx
    bare = re.sub(r"^@!?%[\w$]+\s+", "", raw)
    w = max(1, ins.width)
    c = [
        f"ld.const.u64 %wvd5, [{CTL_SYMBOL}+24];",
        f"ld.const.u64 %wvd6, [{CTL_SYMBOL}+32];",
        "setp.lt.u64 %wvp1, %wvd0, %wvd5;",
        f"add.s64 %wvd7, %wvd0, {w};",
        "setp.gt.u64 %wvp2, %wvd7, %wvd6;",
        "or.pred %wvp1, %wvp1, %wvp2;",
    ]
    if w & (w - 1) == 0 and w > 1:
        c += [f"and.b64 %wvd7, %wvd0, {w - 1};", "setp.ne.u64 %wvp2, %wvd7, 0;", "or.pred %wvp1, %wvp1, %wvp2;"]
    c += [
        "and.b32 %wvr9, %wvr1, %wvr3;",            # predicate-true global lanes
        "shr.u32 %wvr9, %wvr9, %wvr4;",
        "and.b32 %wvr9, %wvr9, 1;",
        "setp.ne.u32 %wvp2, %wvr9, 0;",
        "and.pred %wvp1, %wvp1, %wvp2;",           # this lane would fault
        "vote.sync.ballot.b32 %wvr10, %wvp1, %wvr0;",
        "setp.ne.u32 %wvp2, %wvr10, 0;",
        "and.pred %wvp3, %wvp2, %wvp0;",
        f"ld.const.u64 %wvd3, [{CTL_SYMBOL}+8];",
        "mov.u32 %wvr11, 1;",
        "@%wvp3 atom.global.exch.b32 %wvr11, [%wvd3+4], 1;",
        "shfl.sync.idx.b32 %wvr11, %wvr11, %wvr5, 31, %wvr0;",
        "setp.eq.and.u32 %wvp3, %wvr11, 0, %wvp2;",  # the first warp with bad lanes
        "and.pred %wvp4, %wvp3, %wvp0;",
        f"mov.u32 %wvr13, {ins.id};",
        "@%wvp4 st.global.v4.u32 [%wvd3+16], {%wvr13, %wvr6, %wvr7, %wvr10};",
        "mul.wide.u32 %wvd7, %wvr4, 8;",
        "add.s64 %wvd7, %wvd3, %wvd7;",
        "@%wvp3 st.global.u64 [%wvd7+32], %wvd0;",
        "not.pred %wvp1, %wvp1;",
    ]
    if ins.predicate:
        neg = ins.predicate.startswith("!")
        reg = ins.predicate.lstrip("!")
        if neg:
            c += [f"not.pred %wvp2, {reg};", "and.pred %wvp1, %wvp1, %wvp2;"]
        else:
            c += [f"and.pred %wvp1, %wvp1, {reg};"]
    c.append(f"@%wvp1 {bare}")
    return c


def instrument_full(text: str, check: bool = False) -> tuple[str, list[MemInstr], list[SkipRegion]]:
    """``check``: the fault-finding variant (``check_block``), not for recording traces.
    Events (``parse(text).events``) are recorded too, with ids from ``EVENT_BASE``."""
    parsed = parse(text)
    lines = parsed.lines
    widths = _reg_widths(lines)
    symbols = _symbols(lines)
    by_line: dict[int, list[MemInstr]] = {}
    for ins in parsed.instrs + parsed.events:
        by_line.setdefault(ins.line_no, []).append(ins)
    branches = {r.line_no: r for r in parsed.regions}
    out: list[str] = []
    declared = False
    for i, raw in enumerate(lines):
        n = i + 1
        if n in branches:
            indent = raw[:len(raw) - len(raw.lstrip())] or "\t"
            out += [indent + x for x in skip_block(branches[n])]
        checked = False
        if n in by_line:
            indent = raw[:len(raw) - len(raw.lstrip())] or "\t"
            for ins in by_line[n]:
                own = _own_block(ins, widths, symbols)
                block = own or recording_block(ins, widths, symbols)
                # cp.async: its global source (operand 1) is checked; the copy is issued by the block
                if check and not checked and ins.space in ("global", "generic") and own is None:
                    block = block[:-1] + check_block(ins) + ["}"]
                    checked = True
                out += [indent + x for x in block]
        if not checked:
            out.append(raw)
        if not declared and raw.strip().startswith(".address_size"):
            out += _declarations()
            declared = True
    if not declared:
        raise PtxError("the PTX has no .address_size line (is it PTX from nvcc?)")
    return "\n".join(out), parsed.instrs, parsed.regions


# ---------------------------------------------------------------------------- SASS guard

# SASS opcodes the recorder itself never emits: their numbers must not change.
UNTOUCHED_SASS = ("LDG", "LDS", "STS", "LDSM", "STSM", "ATOMS", "LDGSTS", "LD", "ST", "RED", "ATOM", "LDL", "STL")


def sass_opcode_counts(lines: list[str]) -> dict[str, int]:
    """Opcode (without modifiers) -> count, over ``compile.memory_lines`` output. The
    never-true ``@!PT LDS`` that ptxas puts before an LDGSTS are left out: they load
    nothing, the analysis counts them from the plain kernel's SASS, and ptxas emits a
    different number of them in the instrumented kernel (3 and 2 in ``ldmatrix_cpasync``)."""
    out: dict[str, int] = {}
    for ln in lines:
        if _never_true(ln):
            continue
        text = ln.split("*/", 1)[-1].strip()
        toks = text.split()
        if toks and toks[0].startswith("@"):
            toks = toks[1:]
        if not toks:
            continue
        op = toks[0].split(".")[0]
        out[op] = out.get(op, 0) + 1
    return out


def compare_sass(original: list[str], instrumented: list[str], sites: int,
                 regions: list[SkipRegion] = (), own_sites: dict[str, int] | None = None) -> list[str]:
    """Problems: memory opcodes whose count the instrumentation changed. The recorder adds,
    per instrumented site, one ATOMG and three STG (a lane's address, two header halves),
    and per skip region one ATOMG and two STG per shared instruction in it."""
    a, b = sass_opcode_counts(original), sass_opcode_counts(instrumented)
    extra = {"ATOMG": sites + len(regions), "STG": 3 * sites + 2 * sum(len(r.ids) for r in regions)}
    for op, n in (own_sites or {}).items():     # what kinds' own recording blocks add (TraceForm.recorder_sass)
        extra[op] = extra.get(op, 0) + n
    problems = []
    for op in sorted(set(a) | set(b)):
        want = a.get(op, 0) + extra.get(op, 0)
        if b.get(op, 0) != want:
            problems.append(f"{op}: {a.get(op, 0)} in the plain kernel, {b.get(op, 0)} instrumented "
                            f"(expected {want})")
    return problems


def _sass_address(line: str) -> int | None:
    """The address of a SASS line (``/*07b0*/ ...``), or None where it has none."""
    m = re.match(r"\s*/\*([0-9a-fA-F]+)\*/", line)
    return int(m.group(1), 16) if m else None


def _never_true(line: str) -> bool:
    """``@!PT LDS RZ, [RZ]``: a load under the never-true predicate. ptxas puts three before
    every LDGSTS (cp.async) on sm_90 (measured: docs/GPU.md); they are no PTX instruction."""
    toks = line.split("*/", 1)[-1].split()
    return bool(toks) and toks[0] == "@!PT"


def predicated_shared(lines: list[str]) -> int:
    """SASS LDS/STS that run under a predicate (``@P0 STS ...``; not the never-true ``@!PT``)."""
    n = 0
    for ln in lines:
        toks = ln.split("*/", 1)[-1].split()
        if len(toks) > 1 and toks[0].startswith("@") and not _never_true(ln) and \
                toks[1].split(".")[0] in ("LDS", "STS"):
            n += 1
    return n


def sass_ldgsts(original: list[str], instrs: list[MemInstr]) -> dict[int, tuple[bool, int]] | None:
    """Per ``cp.async`` of the PTX (its global entry's id): (is its LDGSTS predicated in the
    plain SASS, how many never-true ``@!PT LDS`` stand right before it). The k-th cp.async
    of the PTX is taken to be the k-th LDGSTS; None where their numbers differ."""
    cps = [i for i in instrs if i.kind == "cp.async" and i.space == "global"]
    sites: list[tuple[bool, int]] = []
    run = 0
    last = None             # the address of the previous never-true LDS of the run
    for ln in original:
        toks = ln.split("*/", 1)[-1].split()
        if not toks:
            continue
        here = _sass_address(ln)
        if _never_true(ln) and len(toks) > 1 and toks[1].split(".")[0] == "LDS":
            # a run is the never-true loads right before the LDGSTS, one
            # instruction (16 bytes) apart; one elsewhere (ptxas puts one before the MEMBAR of a
            # fence.proxy.async after cp.async groups) is not the next LDGSTS's
            run = run + 1 if (run and last is not None and here is not None and here - last == 16) else 1
            last = here
            continue
        if run and last is not None and here is not None and here - last != 16:
            run = 0
        pred = toks[0].startswith("@")
        op = (toks[1] if pred and len(toks) > 1 else toks[0]).split(".")[0]
        if op == "LDGSTS":
            sites.append((pred, run))
        run = 0
    if len(sites) != len(cps):
        return None
    return {i.id: site for i, site in zip(cps, sites)}


def sass_predicated(original: list[str], instrs: list[MemInstr]) -> dict[int, bool] | None:
    """Which explicit shared loads/stores of the PTX ptxas predicated in the plain kernel:
    the k-th ld.shared of the PTX is taken to be the k-th LDS of the SASS (and st.shared /
    STS), which holds while ptxas keeps their number and order. None where the numbers
    differ (then nothing is assumed)."""
    out: dict[int, bool] = {}
    for ptx_kind, sass_op in (("load", "LDS"), ("store", "STS")):
        ptx = [i for i in instrs if i.space == "shared" and i.kind == ptx_kind]
        sass = []
        for ln in original:
            if _never_true(ln):
                continue
            toks = ln.split("*/", 1)[-1].split()
            pred = bool(toks) and toks[0].startswith("@")
            if pred:
                toks = toks[1:]
            if toks and toks[0].split(".")[0] == sass_op:
                sass.append(pred)
        if len(sass) != len(ptx):
            return None
        for i, p in zip(ptx, sass):
            out[i.id] = p
    cp = sass_ldgsts(original, instrs)
    for k, (p, _) in (cp or {}).items():
        out[k] = p
    return out


def predication_note(original: list[str], instrs: list[MemInstr]) -> str:
    """A note when ptxas predicated shared loads/stores that the PTX branches around.

    Nsight Compute counts a predicated LDS/STS for every warp that reaches it, also with all
    lanes off; the recorder sits inside the PTX branch and sees only the warps that enter
    it. Wavefronts, conflicts and the global metrics are not affected."""
    in_ptx = sum(1 for i in instrs if i.space == "shared" and i.kind in ("load", "store") and i.predicate)
    in_sass = predicated_shared(original)
    if in_sass > in_ptx:
        return (f"ptxas predicated {in_sass - in_ptx} shared load/store instruction(s) that the PTX branches "
                "around: a warp whose lanes all skip them still executes them, and Nsight Compute counts it in "
                "smsp__inst_executed_op_shared_ld/st; the trace sees only warps that enter the branch, so those two "
                "counts can be lower than Nsight Compute's (wavefronts, conflicts and global metrics are unaffected)")
    return ""


__all__ = ["EVENT_BASE", "MemInstr", "Parsed", "parse", "instrument", "classify", "PtxError", "RECORD_BYTES", "HEADER_WORDS",
           "CTL_SYMBOL", "BITMAP_SYMBOL", "BITMAP_WORDS", "compare_sass", "predication_note", "predicated_shared",
           "SkipRegion", "skip_block", "sass_ldgsts", "instrument_full", "check_block", "find_regions", "sass_predicated", "sass_opcode_counts", "UNTOUCHED_SASS"]
