"""Reconcile a PTX-level trace with what the GPU executes: the plain kernel's SASS.

The recorder instruments PTX, but ``ptxas`` rewrites the memory instructions it assembles:
it fuses scalar accesses of consecutive addresses into one wider access (four
``ld.shared.f32`` of ``As[ty][k..k+3]`` become one ``LDS.128``), removes or moves accesses,
splits one, and aggregates an atomic on a warp-uniform address into one lane's atomic.
Nsight Compute counts the SASS. This module decides, per static PTX memory instruction,
what the SASS does with it (``reconcile``), and rewrites the recorded stream to match
(``apply``), so that the trace, its picture and its figures are what the GPU ran.

What the SASS says comes from ``nvdisasm -gp`` on the plain cubin: every SASS instruction
carries the PTX line it was assembled from (the ``.nv_debug_line_sass`` section that
``ptxas --generate-line-info`` writes). Per PTX memory instruction ``p``:

* one SASS access of p's width (or several: ptxas duplicated or unrolled the code; each
  execution of p runs one of them): **same**, nothing to rewrite;
* one SASS access of ``k`` times p's width: ptxas **fused** p with the ``k - 1`` PTX
  accesses that continue it (same function, space and direction, same address register,
  same predicate, offsets one width apart, no SASS access of their own). The group's
  lowest address is its first member; in the trace the first member's records become
  accesses of the wide width and the others' records go. ``apply`` checks every recorded
  execution first: the members ran in the same warps, with the same lanes, at addresses
  one width apart, the first aligned to the wide width. Several SASS accesses of the one
  wide width from p (ptxas unrolled or peeled the loop again: copies of 4, 2 and 1
  iterations, each reading an iteration's group with one wide access) are the same fusion,
  each execution running one copy;
* ``n`` SASS accesses of p's width / ``n``: ptxas **split** it; each record becomes ``n``;
* no SASS access, and not fused into another: ptxas **removed** it; its records go;
* an atomic whose SASS runs under a predicate the PTX does not have (after a warp vote):
  ptxas **aggregated** the warp's lanes on one uniform address into one lane's atomic
  (the highest active lane; the form with a per-lane fallback uses lane 31 when the whole
  warp is active and every lane otherwise). ``apply`` checks that every recorded execution
  has one address;
* anything else (a SASS access of another width, one moved out of a loop the PTX runs it
  in, a fusion whose group is not unique): **uncertain**: the records stay as the PTX
  ran them and the instruction says why; so does ``validate``. A loop that ptxas unrolled
  again reading consecutive iterations' elements with wide accesses that do not line up
  with one iteration's PTX accesses (``partial[w]`` from w = 1: the LDS.128 at the aligned
  address before, the last element by an LDS of its own or inside the next copy's
  LDS.128) is one: how many accesses a pass runs depends on which copies run.

A form may match its SASS by a rule of its own (``TraceForm.sass_match``): a ``wgmma.mma_async``
is matched with its HGMMA / QGMMA / IGMMA / BGMMA by commit group, not by line
(``viz.kinds.wgmma.match_sass``: ptxas gives those the line of their descriptor arithmetic).

An instruction uncertain only in how its executions map onto the SASS (a width, a group;
not an access ptxas moved, nor a loop that waits on memory) that never ran in a recording
leaves that recording certain: ``apply`` says so on it and leaves it out of
``sass_map.uncertain``.

Standard library and numpy only (the SASS text is made by ``sass_with_ptx_lines``, which
needs ``nvdisasm`` from the CUDA toolkit or the ``nvidia-cuda-nvdisasm`` wheel).
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..kinds.registry import forms, sass_classes, trace_kind
from .tracefile import PAYLOAD_FLAG

# SASS opcode (without modifiers) -> (space, class) of the PTX instructions it can come from:
# each kind's TraceForm names its SASS opcodes (viz.kinds.registry).
SASS_CLASS = sass_classes()
# class -> its form's own rule (TraceForm.sass_match, sass_width)
_SASS_MATCH = {f.sass_class or f.kind: f.sass_match for f in forms() if f.sass_match is not None}
_SASS_WIDTH = {f.sass_class or f.kind: f.sass_width for f in forms() if f.sass_width}


def _form(r: dict):
    """The form of a PTX row (its trace kind's first form; a plain load's when it has none)."""
    return trace_kind(r.get("kind")) or trace_kind("load")
STATES = ("same", "fused", "member", "split", "removed", "aggregated", "uncertain")
TOOL = "nvdisasm -gp"

_PTX_LINE = re.compile(r'^\s*//## File "\.nv_debug_ptx_txt", line (\d+)')
_FUNC = re.compile(r"^\s*\.text\.([A-Za-z_$][\w$.]*):\s*$")
_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^\s*([\w$.]+):\s*(//.*)?$")
_BRANCH = re.compile(r"^(@!?%[\w$]+\s+)?bra(\.uni)?\s+([\w$]+)\s*;")


@dataclass(frozen=True)
class SassAccess:
    """One SASS memory instruction of the plain kernel, with the PTX line it came from."""

    function: str
    addr: int
    text: str            # "@P0 LDS.128 R8, [R16+0x10]"
    opcode: str          # "LDS.128"
    pred: str            # "" or "P0" / "!P0"
    ptx_line: int        # 0: no line information
    space: str
    cls: str             # load | store | atomic | ldmatrix | stmatrix | cp.async
    width: int           # bytes per lane
    uniform: bool        # the address is in uniform registers only ([UR7], [UR4+0x10])
    depth: int = 0       # loop depth in the SASS control flow
    guarded: bool = False   # inside a conditional forward branch's span (``@P2 BRA `(.L_x_1)`` ... ``.L_x_1:``)


@dataclass(frozen=True)
class SassInfo:
    """What the SASS does with one PTX memory instruction (``STATES``)."""

    state: str
    certain: bool
    sass: tuple[str, ...] = ()        # the SASS instruction(s)
    width: int = 0                    # the SASS access width (fused: the group's; split: a part's)
    ptx_width: int = 0
    group: tuple[int, ...] = ()       # fused: the members' ids, lowest address first
    first: int | None = None          # member: the group's first instruction
    parts: int = 1                    # split: SASS accesses per PTX execution
    leader: str = ""                  # aggregated: "highest" | "lane31-full-warp"
    atomic_rule: str = ""             # shared atomics: "words" (ATOMS.POPC.INC) | "lanes" (served lane by lane)
    sass_op: str = ""                 # atomics: "atom" | "red" as the SASS has them
    ptx_lines: tuple[int, ...] = ()   # PTX lines of the group (fused) or of the instruction
    source_lines: tuple[int, ...] = ()
    note: str = ""
    # uncertain only in how its recorded executions map onto the SASS (not in whether or how
    # often the GPU runs it): a recording in which it never ran does not depend on it (``apply``)
    runs_only: bool = False

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("runs_only")
        for k in ("sass", "group", "ptx_lines", "source_lines"):
            d[k] = list(d[k])
        return d


# ---------------------------------------------------------------------------- the SASS


def sass_with_ptx_lines(cubin: bytes, timeout: float = 120) -> str | None:
    """``nvdisasm -gp -c`` of a cubin (each SASS instruction under the PTX line it came from),
    or None without nvdisasm or when it fails."""
    from ..toolchain.compile import find_tool

    exe = find_tool("nvdisasm")
    if not exe:
        return None
    with tempfile.TemporaryDirectory(prefix="warpviz-sass-") as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(cubin)
        try:
            proc = subprocess.run([exe, "-gp", "-c", str(path)], capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
    if proc.returncode != 0 or "/*0000*/" not in proc.stdout:
        return None
    return proc.stdout


def sass_width(opcode: str) -> int:
    parts = opcode.split(".")
    base = parts[0]
    if base in ("LDSM", "STSM"):
        return 16
    for p in parts[1:]:
        if p == "128":
            return 16
        if p in ("64", "F64", "U64", "S64"):
            return 8
        if p in ("U8", "S8"):
            return 1
        if p in ("U16", "S16"):
            return 2
    return 4


def _address(operands: str) -> str:
    body = re.sub(r"desc\[[^\]]*\]", "", operands)
    m = re.search(r"\[([^\]]*)\]", body)
    return m.group(1) if m else ""


def _uniform(addr: str) -> bool:
    regs = re.findall(r"\b(U?R[Z\d]+|U?RZ)\b", addr)
    return bool(regs) and all(r.startswith("U") for r in regs if r not in ("RZ",)) and \
        any(r.startswith("UR") and r != "URZ" for r in regs)


def parse_sass_lines(text: str) -> dict[str, list[SassAccess]]:
    """{function: [SassAccess in address order]} from ``nvdisasm -gp -c`` output. The
    never-true ``@!PT LDS`` that ptxas puts before an LDGSTS is not an access."""
    from ..toolchain.sass import Cfg, parse_sass

    out: dict[str, list[SassAccess]] = {}
    func = None
    line = 0
    code: dict[str, list[tuple[int, str]]] = {}      # every instruction: (address, text), for the guard walk
    labels: dict[str, dict[str, int]] = {}           # label -> address of the instruction after it
    pending: list[str] = []
    for raw in text.splitlines():
        m = _FUNC.match(raw)
        if m:
            func = m.group(1)
            out.setdefault(func, [])
            line = 0
            continue
        lm = _LABEL.match(raw)
        if lm and func is not None and not raw.lstrip().startswith("/*"):
            pending.append(lm.group(1))
            continue
        im = _INSTR.match(raw)
        if im and func is not None:
            addr = int(im.group(1), 16)
            for lab in pending:
                labels.setdefault(func, {})[lab] = addr
            pending = []
            code.setdefault(func, []).append((addr, im.group(2).strip()))
        m = _PTX_LINE.match(raw)
        if m:
            line = int(m.group(1))
            continue
        if func is None:
            continue
        m = _INSTR.match(raw)
        if not m:
            continue
        body = m.group(2).strip()
        pred = ""
        pm = re.match(r"^@(!?U?P[0-7T])\s+", body)
        if pm:
            pred = pm.group(1)
            body_op = body[pm.end():]
        else:
            body_op = body
        if pred in ("!PT", "!UPT"):
            # ptxas's never-true loads (`@!PT LDS RZ, [RZ]`) are no access, but
            # Nsight Compute counts each execution as a shared load: kept, of class "never-true",
            # for the TMA control lines that own them (a fence.proxy.async after cp.async groups)
            if body_op.split(None, 1)[0].split(".")[0] == "LDS":
                out[func].append(SassAccess(func, int(m.group(1), 16), body, "LDS", pred, line, "shared",
                                            "never-true", 4, False))
            continue
        if pred in ("PT", "UPT"):
            pred = ""
        parts = body_op.split(None, 1)
        opcode = parts[0]
        base = opcode.split(".")[0]
        if base not in SASS_CLASS:
            continue
        space, cls = SASS_CLASS[base]
        addr = _address(parts[1] if len(parts) > 1 else "")
        # a form that says its SASS's width (wgmma's HGMMA / QGMMA / IGMMA / BGMMA: 4 bytes "a lane" whatever
        # the types; the kind counts A's and B's bytes itself), else the opcode's
        width = _SASS_WIDTH.get(cls) or sass_width(opcode)
        out[func].append(SassAccess(func, int(m.group(1), 16), body, opcode, pred, line, space, cls,
                                    width, _uniform(addr)))
    # an access that a warp whose guard predicate holds on every lane never reaches
    # (ptxas branches around a predicated PTX line's code) runs only in warps with a lane on
    for name, accs in out.items():
        if code.get(name):
            out[name] = _mark_guarded(accs, code[name], labels.get(name, {}))
    # loop depth of each access, from the SASS control flow (viz.toolchain.sass)
    try:
        funcs = parse_sass(text)
    except Exception:  # noqa: BLE001 - a listing the CFG cannot read: depths stay 0
        funcs = {}
    for name, accs in out.items():
        ins = funcs.get(name)
        if not ins or not accs:
            continue
        out[name] = _with_depths(accs, ins, Cfg(ins))
    return out


_BRA_TEXT = re.compile(r"^(?:@(!?)(U?P[0-7T])\s+)?BRA\b")
_PRED_TEXT = re.compile(r"^@(!?)(U?P[0-7])\s+")


def _guard_of(acc: SassAccess, code: list[tuple[int, str]]) -> str | None:
    """The predicate register whose value true on every lane means "no lane of this warp is on"
    for an access: its own (``@!P1 LDS``: P1), else that of the last conditional branch before
    it (``@P1 BRA``: P1); None where it has neither."""
    m = _PRED_TEXT.match(acc.text)
    if m:
        return m.group(2) if m.group(1) else None     # @P1 LDS runs where P1 holds: no guard to walk
    for addr, text in reversed(code):
        if addr >= acc.addr:
            continue
        b = _BRA_TEXT.match(text)
        if b and b.group(2) and b.group(2) not in ("PT", "UPT"):
            return b.group(2) if not b.group(1) else None
    return None


def _reached_with(guard: str, code: list[tuple[int, str]], labels: dict[str, int], limit: int = 200_000) -> set[int]:
    """Addresses a warp reaches from the function's start when ``guard`` holds on every lane:
    ``@guard BRA`` is taken, ``@!guard BRA`` is not, a branch on another predicate goes both
    ways, an unconditional one is taken, EXIT ends the way."""
    index = {a: k for k, (a, _t) in enumerate(code)}
    seen: set[int] = set()
    todo = [0]
    steps = 0
    while todo and steps < limit:
        k = todo.pop()
        while 0 <= k < len(code) and code[k][0] not in seen and steps < limit:
            steps += 1
            addr, text = code[k]
            seen.add(addr)
            b = _BRA_TEXT.match(text)
            if b:
                t = re.search(r"\.L_x_\d+", text)
                target = index.get(labels.get(t.group(0), -1)) if t else None
                neg, pred = b.group(1), b.group(2)
                if pred is None or pred in ("PT", "UPT") and not neg:
                    taken, falls = True, False
                elif pred == guard:
                    taken, falls = not neg, bool(neg)
                else:
                    taken = falls = True
                if taken and target is not None:
                    todo.append(target)
                if not falls:
                    break
            elif text.split()[0 if not text.startswith("@") else 1:][:1] == ["EXIT"] and not text.startswith("@"):
                break
            k += 1
    return seen


def _mark_guarded(accs: list[SassAccess], code: list[tuple[int, str]], labels: dict[str, int]) -> list[SassAccess]:
    walks: dict[str, set[int]] = {}
    out = []
    for a in accs:
        g = _guard_of(a, code)
        if g is None:
            out.append(a)
            continue
        if g not in walks:
            walks[g] = _reached_with(g, code, labels)
        out.append(replace(a, guarded=a.addr not in walks[g]))
    return out


def _with_depths(accs: list[SassAccess], ins: list, cfg) -> list[SassAccess]:
    index = {i.addr: k for k, i in enumerate(ins)}
    block_of = {}
    for blk in cfg.blocks:
        for k in range(blk.start, blk.end):
            block_of[k] = blk.index
    inner = cfg.innermost()
    out = []
    for a in accs:
        k = index.get(a.addr)
        b = block_of.get(k) if k is not None else None
        loop = inner.get(b) if b is not None else None
        out.append(replace(a, depth=0 if loop is None else cfg.loops[loop].depth))
    return out


# ---------------------------------------------------------------------------- the PTX side


def _building_lines(ptx_lines: list[str]) -> dict[int, tuple]:
    """PTX lines (1-based) whose SASS memory instructions come from no PTX memory instruction,
    each with the ``TraceForm.builds`` entry that says so (a tensor map built on the device:
    ptxas makes shared loads and stores and a global atomic exchange of ``tensormap.replace``)."""
    out: dict[int, tuple] = {}
    for f in forms():
        for b in f.builds:
            for k, ln in enumerate(ptx_lines):
                if b[2].match(ln.strip()):
                    out.setdefault(k + 1, b)
    return out


def ptx_class(ins) -> tuple[str, str]:
    """(space, class) of a PTX memory instruction (``viz.trace.ptx.MemInstr`` or its dict)."""
    kind = ins["kind"] if isinstance(ins, dict) else ins.kind
    space = ins["space"] if isinstance(ins, dict) else ins.space
    f = trace_kind(kind)
    cls = (f.sass_class or f.kind) if f is not None else kind      # atom and red are one SASS class
    return space, cls


def _compatible(ptx: tuple[str, str], sass: SassAccess) -> bool:
    space, cls = ptx
    if cls != sass.cls:
        return False
    return space == sass.space or space == "generic" or cls == "cp.async"


def split_address(addr: str) -> tuple[str, int]:
    """``"%r7+16"`` -> ("%r7", 16); ``"sym"`` -> ("sym", 0)."""
    a = addr.replace(" ", "")
    m = re.fullmatch(r"([%\w$.]+?)?(?:\+(-?(?:0x[0-9a-fA-F]+|\d+)))?", a)
    if not m:
        return a, 0
    return m.group(1) or "", int(m.group(2), 0) if m.group(2) else 0


def _ptx_cfgs(ptx: str):
    """Per function of the PTX: (statements as (0-based line, text), ``viz.toolchain.sass.Cfg`` of
    its branches, one instruction per statement)."""
    from ..toolchain.sass import Cfg, Instr

    lines = ptx.split("\n")
    func_starts = [i for i, ln in enumerate(lines) if re.search(r"\.(entry|func)\s", ln) and
                   not ln.strip().startswith(("call", "//"))]
    func_starts.append(len(lines))
    for lo, hi in zip(func_starts, func_starts[1:]):
        stmts: list[tuple[int, str]] = []       # (line index, statement)
        labels: dict[str, int] = {}
        for i in range(lo, hi):
            s = lines[i].strip()
            if not s or s.startswith(("//", ".", "{", "}")):
                continue
            m = _LABEL.match(s)
            if m and not s.endswith(";"):
                labels[m.group(1)] = len(stmts)
                continue
            if s.endswith(";") or ";" in s:
                stmts.append((i, s))
        if not stmts:
            continue
        instrs = []
        for k, (i, s) in enumerate(stmts):
            bm = _BRANCH.match(s)
            if bm:
                target = labels.get(bm.group(3))
                instrs.append(Instr(16 * k, "BRA", "", "P0" if bm.group(1) else None,
                                    16 * target if target is not None else None))
            elif re.match(r"^(@!?%[\w$]+\s+)?(ret|exit)\b", s):
                instrs.append(Instr(16 * k, "EXIT", "", "P0" if s.startswith("@") else None))
            else:
                instrs.append(Instr(16 * k, "NOP"))
        try:
            cfg = Cfg(instrs)
        except Exception:  # noqa: BLE001 - unreadable control flow: no loops
            continue
        yield stmts, cfg


def ptx_loop_depths(ptx: str) -> dict[int, int]:
    """PTX line (1-based) -> loop depth of the statement on it (the natural loops of each
    function's branches, as ``viz.toolchain.sass.Cfg`` finds them in SASS)."""
    out: dict[int, int] = {}
    for stmts, cfg in _ptx_cfgs(ptx):
        inner = cfg.innermost()
        for blk in cfg.blocks:
            loop = inner.get(blk.index)
            d = 0 if loop is None else cfg.loops[loop].depth
            for k in range(blk.start, blk.end):
                out[stmts[k][0] + 1] = d
    return out


# a read of memory that another thread may be writing while this one runs: what a loop that
# waits for a flag, a barrier's count or a lock reads
_SYNC_READ = re.compile(r"^(?:@!?%[\w$]+\s+)?(?:ld\.(?:[\w.]*\.)?(?:acquire|volatile|relaxed|mmio)\b|ld\.volatile\b|"
                        r"atom\.)")
_NO_DEST = ("st.", "red.", "bar.", "barrier.", "membar", "fence", "cp.async", "prefetch", "bra", "ret", "exit",
            "call", "mbarrier.arrive")


def _operands(stmt: str) -> tuple[str, list[str], list[str]]:
    """(opcode, registers written, registers read) of one PTX statement (its guard read)."""
    s = stmt.split("//")[0].strip().rstrip(";").strip()
    reads = []
    g = re.match(r"^@!?(%[\w$]+)\s+", s)
    if g:
        reads.append(g.group(1))
        s = s[g.end():]
    parts = s.split(None, 1)
    op = parts[0] if parts else ""
    rest = parts[1] if len(parts) > 1 else ""
    ops = [x for x in re.split(r",(?![^{\[]*[}\]])", rest)]
    regs = lambda t: re.findall(r"%[\w$]+", t)   # noqa: E731
    if not ops or op.startswith(_NO_DEST):
        return op, [], reads + [r for t in ops for r in regs(t)]
    return op, regs(ops[0]), reads + [r for t in ops[1:] for r in regs(t)]


def ptx_wait_loops(ptx: str) -> dict[int, tuple[int, int, str]]:
    """PTX line (1-based) -> (first line, last line, the read) of the loop it is in when that
    loop waits on memory: a branch in the loop depends on a value an ``ld.acquire`` /
    ``ld.volatile`` / ``ld.relaxed`` or an ``atom`` in the loop read (a spin on a flag, a
    barrier's count, a lock: cooperative groups' multi-warp tiles sync this way). How often
    its statements run depends on the timing of other warps."""
    out: dict[int, tuple[int, int, str]] = {}
    for stmts, cfg in _ptx_cfgs(ptx):
        for loop in cfg.loops:
            ks = sorted(k for b in loop.blocks for k in range(cfg.blocks[b].start, cfg.blocks[b].end))
            body = [stmts[k] for k in ks]
            reads = [s for _i, s in body if _SYNC_READ.match(s)]
            if not reads:
                continue
            tainted = {r for s in reads for r in _operands(s)[1]}
            changed = True
            while changed:
                changed = False
                for _i, s in body:
                    _op, dst, src = _operands(s)
                    if dst and set(src) & tainted and not set(dst) <= tainted:
                        tainted.update(dst)
                        changed = True
            waits = any(_BRANCH.match(s) and (g := re.match(r"^@!?(%[\w$]+)", s)) and g.group(1) in tainted
                        for _i, s in body)
            if not waits:
                continue
            lo, hi = body[0][0] + 1, body[-1][0] + 1
            read = " ".join(reads[0].split())
            for i, _s in body:
                if i + 1 not in out or out[i + 1][1] - out[i + 1][0] > hi - lo:    # the innermost such loop
                    out[i + 1] = (lo, hi, read)
    return out


# ---------------------------------------------------------------------------- the mapping


def reconcile(ptx: str, instrs: list, sass_text: str | None) -> dict:
    """The SASS's view of every PTX memory instruction: {"tool", "certain", "notes",
    "instructions": {id: SassInfo}}. ``instrs``: ``viz.trace.ptx.MemInstr`` (or dicts) of
    the plain PTX; ``sass_text``: ``sass_with_ptx_lines`` of its cubin, or None (then every
    instruction is ``uncertain``: the SASS could not be read)."""
    rows = [i if isinstance(i, dict) else i.as_dict() for i in instrs]
    if sass_text is None:
        note = ("the SASS could not be read (nvdisasm is not installed): the trace holds the PTX's accesses, which "
                "ptxas may have fused, split or removed")
        return {"tool": None, "certain": False, "notes": [note],
                "instructions": {r["id"]: SassInfo("uncertain", False, ptx_width=r["width"],
                                                   ptx_lines=(r["line_no"],), source_lines=(r["line"],), note=note)
                                 for r in rows}}
    sass = parse_sass_lines(sass_text)
    depths = ptx_loop_depths(ptx)
    ptx_lines = ptx.split("\n")
    info: dict[int, SassInfo] = {}
    notes: list[str] = []
    # PTX lines are unique in the module, and ptxas may assemble a .func into its caller's
    # code: the SASS of every function is matched against every PTX memory instruction
    accs = [a for f in sass.values() for a in f]
    built: dict[tuple, list[SassAccess]] = {}
    info.update(_reconcile_function("the kernel", rows, accs, depths, ptx_lines, notes, built, sass_text))
    waits = ptx_wait_loops(ptx)
    for r in rows:
        if r["line_no"] in waits:
            lo, hi, read = waits[r["line_no"]]
            note = (f"it is in a loop that waits for memory other threads write (PTX lines {lo}\u2013{hi}, "
                    f"`{read}`): how many times it runs depends on the timing of the other warps, so the "
                    "recording's count and Nsight Compute's (of the plain kernel) can differ")
            v = info[r["id"]]
            info[r["id"]] = replace(v, certain=False, runs_only=False, note=f"{v.note}; {note}" if v.note else note)
    certain = all(v.certain for v in info.values()) and not notes
    out = {"tool": TOOL, "certain": certain, "notes": notes, "instructions": info}
    for b, accs_b in built.items():     # SASS that a kind explains (TraceForm.builds): not unmatched
        out[b[0]] = {"note": b[3](accs_b), "header": b[1],
                     "sass": [f"{a.text} (PTX line {a.ptx_line})" for a in accs_b]}
    return out


def _reconcile_function(func: str, prow: list[dict], accs: list[SassAccess], depths: dict[int, int],
                        ptx_lines: list[str], notes: list[str], built_out: dict | None = None,
                        sass_text: str = "") -> dict[int, SassInfo]:
    by_line: dict[int, list[dict]] = {}
    for r in prow:
        by_line.setdefault(r["line_no"], []).append(r)
    attributed: dict[int, list[SassAccess]] = {}     # PTX id -> its SASS accesses
    stray: list[SassAccess] = []
    loop_parts: dict[int, list[SassAccess]] = {}     # an atomic's compare-and-swap loop: its LDS
    builds = _building_lines(ptx_lines)              # lines whose SASS a kind explains (TraceForm.builds)
    built: dict[tuple, list[SassAccess]] = {}
    own: dict[str, list[SassAccess]] = {}            # classes a form matches by its own rule (TraceForm.sass_match)
    for a in accs:
        if a.cls in _SASS_MATCH:
            own.setdefault(a.cls, []).append(a)
            continue
        ctl = [r for r in by_line.get(a.ptx_line, []) if _form(r).owns_line]
        if ctl:             # every SASS instruction of its line is its own (a TMA control instruction)
            attributed.setdefault(ctl[0]["id"], []).append(a)
            continue
        if a.cls == "never-true":       # counted with its cp.async (ptx.sass_ldgsts) or by a control line
            continue
        cands = [r for r in by_line.get(a.ptx_line, []) if _compatible(ptx_class(r), a)]
        if not cands and a.ptx_line in builds:
            built.setdefault(builds[a.ptx_line], []).append(a)
            continue
        if not cands:
            atom = [r for r in by_line.get(a.ptx_line, []) if ptx_class(r)[1] == "atomic"]
            if atom:
                loop_parts.setdefault(atom[0]["id"], []).append(a)
            else:
                stray.append(a)
            continue
        for r in cands:                 # cp.async: both operands of the line
            attributed.setdefault(r["id"], []).append(a)
    for cls, lst in own.items():     # matched by the form's own rule (wgmma: by commit group)
        got_own, unmatched = _SASS_MATCH[cls](lst, prow, ptx_lines, sass_text or "")
        for rid, got in got_own.items():
            attributed.setdefault(rid, []).extend(got)
        stray.extend(unmatched)
    out: dict[int, SassInfo] = {}
    members: set[int] = set()
    segments = ptx_segments(ptx_lines)
    # fused groups first: they claim PTX instructions that have no SASS of their own
    for r in prow:
        got = attributed.get(r["id"], [])
        if not got or len({a.width for a in got}) != 1 or not _form(r).fuses:
            continue
        a = got[0]
        if a.width <= r["width"] or a.width % r["width"]:
            continue
        group, why = _fusion_group(r, a, prow, attributed, members, ptx_lines, segments)
        if group is None:
            note = (f"the SASS access is {a.width} bytes a lane (`{a.text}`), the PTX {r['width']}: {why}"
                    if len(got) == 1 else _reunrolled_note(r, got, attributed, prow, depths, why))
            out[r["id"]] = _info(r, "uncertain", False, got, note=note, runs_only=True)
            continue
        members.update(g["id"] for g in group)
        lines = tuple(g["line_no"] for g in group)
        src = tuple(g["line"] for g in group)
        first = group[0]
        span = f"{min(lines)}\u2013{max(lines)}" if len(set(lines)) > 1 else str(lines[0])
        srcs = sorted(set(s for s in src if s))
        src_text = (f", source line{'s' if len(srcs) > 1 else ''} {', '.join(map(str, srcs))}" if srcs else "")
        note = (f"ptxas fused {len(group)} PTX {_what(r)} of {r['width']} bytes (PTX lines {span}{src_text}) into "
                f"one {a.opcode} of {a.width} bytes a lane")
        if len(got) > 1:
            note += (f", in each of the {len(got)} copies of this code in the SASS (ptxas unrolled or peeled the "
                     "loop again; every execution runs one of them)")
        ids = tuple(g["id"] for g in group)
        for g in group:
            if g["id"] == first["id"]:
                out[g["id"]] = _info(g, "fused", True, got, width=a.width, group=ids, ptx_lines=lines,
                                     source_lines=src, note=note)
            else:
                out[g["id"]] = _info(g, "member", True, got, width=a.width, group=ids, first=first["id"],
                                     ptx_lines=lines, source_lines=src,
                                     note=f"{note}; its accesses are those of the first (PTX line {first['line_no']})")
    for r in prow:
        if r["id"] in out:
            continue
        got = attributed.get(r["id"], [])
        out[r["id"]] = _single(r, got, depths, stray, notes, loop_parts.get(r["id"], []))
    wider = {ptx_class(r) for r in prow if out[r["id"]].state == "uncertain" and out[r["id"]].width > r["width"]}
    for r in prow:
        v = out[r["id"]]
        if v.state == "removed" and ptx_class(r) in wider:
            out[r["id"]] = replace(v, state="uncertain", certain=False, runs_only=True, note=(
                "no SASS instruction comes from this PTX line: ptxas removed it, or made it part of a wider access "
                "that warpviz could not pin down (see the uncertain instructions of this kernel)"))
    if built_out is not None:
        for b, lst in built.items():
            built_out.setdefault(b, []).extend(lst)
    if stray:
        texts = ", ".join(f"`{a.text}` (PTX line {a.ptx_line or '?'})" for a in stray[:6])
        more = f" and {len(stray) - 6} more" if len(stray) > 6 else ""
        notes.append(f"{func}: {len(stray)} SASS memory instruction(s) come from no PTX memory instruction of their "
                     f"kind: {texts}{more}")
    return out


def _reunrolled_note(r: dict, got: list[SassAccess], attributed: dict, prow: list[dict], depths: dict[int, int],
                     why: str) -> str:
    """Why a PTX access whose SASS copies are all one wider width makes no fusion group: in a
    loop, ptxas unrolled it again and reads consecutive iterations' elements together."""
    a = got[0]
    texts = ", ".join(f"`{x.text}`" for x in got[:4]) + (f" and {len(got) - 4} more" if len(got) > 4 else "")
    head = (f"its {len(got)} SASS accesses ({texts}) are {a.width} bytes a lane, the PTX {r['width']}: {why}")
    if depths.get(r["line_no"], 0) == 0:
        return head
    reg = split_address(r["address"])[0]
    wider = sorted({q["line_no"] for q in prow if q["id"] != r["id"] and q["function"] == r["function"]
                    and split_address(q["address"])[0] == reg and ptx_class(q) == ptx_class(r)
                    and attributed.get(q["id"])})
    many = len(wider) > 1
    also = (f" (PTX line{'s' if many else ''} {', '.join(map(str, wider))} of the same address register "
            f"ha{'ve' if many else 's'} SASS accesses of {'their' if many else 'its'} own)") if wider else ""
    return (f"{head}. ptxas unrolled this loop again and reads consecutive iterations' elements with wider "
            f"accesses that do not line up with one iteration's PTX accesses{also}: how many SASS accesses a pass "
            "through the loop runs depends on which of the copies run, which the trip count decides and the "
            "recorded PTX accesses do not show")


def _what(r: dict) -> str:
    return {"load": "loads", "store": "stores"}.get(r["kind"], f"{r['kind']} accesses")


def _info(r: dict, state: str, certain: bool, got: list[SassAccess], **kw) -> SassInfo:
    kw.setdefault("ptx_lines", (r["line_no"],))
    kw.setdefault("source_lines", (r["line"],))
    kw.setdefault("width", got[0].width if got else 0)
    return SassInfo(state, certain, tuple(a.text for a in got), ptx_width=r["width"], **kw)


_SEGMENT_END = re.compile(r"^(@!?%[\w$]+\s+)?(bra|brx|ret|exit|call|trap|bar|barrier|membar|fence)\b")
_DEST = re.compile(r"^(?:@!?%[\w$]+\s+)?([a-z][\w.:]*)\s+(%[\w$]+)\s*,")


def ptx_segments(ptx_lines: list[str]) -> list[int]:
    """The straight-line stretch of its function that each PTX line (0-based) is in: a new
    one starts at a branch target's label and after a branch, return, call, barrier or
    fence. ptxas fuses memory accesses only within one such stretch (it moves no shared or
    global access across a barrier or a fence, and a loop body that nvcc unrolled into
    copies has a ``bar.sync`` or a label between them)."""
    targets = set()
    for ln in ptx_lines:
        for m in re.finditer(r"\b(?:bra|brx\.idx)(?:\.uni)?\s+([\w$]+)", ln):
            targets.add(m.group(1))
    out, seg = [], 0
    for ln in ptx_lines:
        s = ln.strip()
        m = _LABEL.match(s)
        if (m and m.group(1) in targets) or re.search(r"\.(entry|func)\s", s):
            seg += 1
        out.append(seg)
        if _SEGMENT_END.match(s):
            seg += 1
    return out


def _writes(ptx_lines: list[str], reg: str, lo: int, hi: int) -> bool:
    """Whether a PTX statement on lines lo < line < hi (1-based) writes register ``reg``
    (its first operand, for every statement but stores, reductions and barriers)."""
    for ln in ptx_lines[lo:hi - 1]:
        m = _DEST.match(ln.strip())
        if m and m.group(2) == reg and not m.group(1).startswith(("st.", "red.", "bar", "cp.", "prefetch")):
            return True
    return False


def _fusion_group(r: dict, a: SassAccess, prow: list[dict], attributed: dict, taken: set[int],
                  ptx_lines: list[str] = (), segments: list[int] = ()):
    """The PTX accesses ptxas fused into ``a`` (attributed to ``r``), lowest address first,
    or (None, why). With the PTX's lines, only accesses in r's straight-line stretch
    (``ptx_segments``) with no write of the address register between them and r count:
    copies of the same code in other stretches (a loop nvcc peeled or unrolled across a
    ``__syncthreads``) are not candidates."""
    w, k = r["width"], a.width // r["width"]
    reg, off = split_address(r["address"])

    def seg(q):
        n = q["line_no"] - 1
        return segments[n] if 0 <= n < len(segments) else None

    same = {}
    for q in prow:
        if q["id"] in taken or q["function"] != r["function"] or ptx_class(q) != ptx_class(r) or q["width"] != w \
                or q["predicate"] != r["predicate"]:
            continue
        qreg, qoff = split_address(q["address"])
        if qreg != reg:
            continue
        if q["id"] != r["id"] and attributed.get(q["id"]):
            continue
        if segments and (seg(q) != seg(r) or _writes(ptx_lines, reg, *sorted((q["line_no"], r["line_no"])))):
            continue
        same.setdefault(qoff, []).append(q)
    starts = []
    for j in range(k):
        lo = off - j * w
        run = [same.get(lo + i * w, []) for i in range(k)]
        if all(len(x) == 1 for x in run):
            starts.append([x[0] for x in run])
    if len(starts) == 1:
        return starts[0], ""
    if not starts and any(len(v) > 1 for v in same.values()):
        return None, (f"several PTX accesses of {w} bytes at the same offset from `{reg}` could be in it (copies of "
                      "the same code that no barrier, label or write of the register separates)")
    if not starts:
        return None, (f"no {k} PTX accesses of {w} bytes at consecutive offsets from `{reg}` without SASS of their "
                      "own were found to make it")
    return None, f"{len(starts)} groups of PTX accesses could make it"


def _single(r: dict, got: list[SassAccess], depths: dict[int, int], stray: list, notes: list,
            extra: list[SassAccess] = ()) -> SassInfo:
    w = r["width"]
    f = _form(r)
    said = f.sass_note(got) if f.sass_note is not None else None
    if said is not None:                # the form's own reading of its SASS (a TMA copy, a TMA control instruction)
        got, note = said
        return _info(r, "same", True, list(got), width=w, note=note)
    if not got:
        compatible_stray = [a for a in stray if _compatible(ptx_class(r), a)]
        if compatible_stray:
            return _info(r, "uncertain", False, got, note=(
                f"no SASS instruction comes from this PTX line, and {len(compatible_stray)} SASS access(es) of its "
                "kind come from lines without one: ptxas may have moved it"))
        return _info(r, "removed", True, got, width=0,
                     note="ptxas removed it: no SASS instruction comes from this PTX line")
    if r["kind"] in ("atomic", "reduction"):
        return _atomic(r, got, extra)
    widths = {a.width for a in got}
    pdepth = depths.get(r["line_no"], 0)
    if widths == {w}:
        if len(got) == 1 and got[0].depth < pdepth:
            return _info(r, "uncertain", False, got, note=(
                f"ptxas moved it out of a loop: the PTX runs it in a loop {pdepth} deep, the SASS (`{got[0].text}`) "
                f"{got[0].depth} deep, so the GPU may run it less often than the trace records"))
        note = "" if len(got) == 1 else (f"{len(got)} copies in the SASS (ptxas duplicated or unrolled the code): "
                                         "each execution runs one of them")
        return _info(r, "same", True, got, note=note)
    if len(widths) == 1 and len(got) > 1:
        part = next(iter(widths))
        if part < w and w % part == 0 and len(got) == w // part:
            return _info(r, "split", True, got, width=part, parts=len(got), note=(
                f"ptxas split it into {len(got)} SASS accesses of {part} bytes a lane"))
    texts = ", ".join(f"`{a.text}`" for a in got[:4])
    return _info(r, "uncertain", False, got, runs_only=True, note=(
        f"the SASS accesses from this PTX line ({texts}) are not its {w} bytes a lane"))


def _atomic(r: dict, got: list[SassAccess], extra: list[SassAccess] = ()) -> SassInfo:
    """An atomic's SASS: per lane, or aggregated by ptxas into one lane (module doc)."""
    ops = {a.opcode.split(".")[0] for a in got}
    sass_op = "red" if ops <= {"RED", "REDG"} else "atom"
    rule = "words" if all(".POPC.INC" in a.opcode for a in got) else "lanes"
    kw = {"sass_op": sass_op, "atomic_rule": rule if r["space"] in ("shared", "generic") else ""}
    if extra or any(".CAS" in a.opcode for a in got):
        texts = ", ".join(f"`{a.text}`" for a in [*got, *extra][:4])
        return _info(r, "uncertain", False, [*got, *extra], note=(
            f"a compare-and-swap loop in the SASS ({texts}): each lane retries until no other lane interfered, "
            "so what it costs depends on the contention, which the trace does not record"), **kw)
    if any(a.width != r["width"] for a in got):
        return _info(r, "uncertain", False, got, note=f"its SASS atomic is {got[0].width} bytes a lane, the PTX "
                     f"{r['width']}", **kw)
    if r["predicate"]:
        return _info(r, "same", True, got, **kw) if len(got) == 1 else _info(
            r, "uncertain", False, got, note="several SASS atomics come from this predicated PTX atomic", **kw)
    preds = [a.pred for a in got]
    if len(got) == 1 and not preds[0]:
        return _info(r, "same", True, got, **kw)
    if len(got) == 1 and preds[0]:
        return _info(r, "aggregated", True, got, leader="highest", note=(
            f"ptxas aggregated the warp's lanes on one address (`{got[0].text}`): the highest active lane does one "
            "atomic for all of them"), **kw)
    if len(got) == 2 and sorted(p.startswith("!") for p in preds) == [False, True]:
        return _info(r, "aggregated", True, got, leader="lane31-full-warp", note=(
            "ptxas aggregated the warp's lanes on one address: with the whole warp active lane 31 does one atomic "
            "(after a warp scan), otherwise every lane does its own"), **kw)
    return _info(r, "uncertain", False, got, note="its SASS atomics are not a form warpviz knows", **kw)


# ---------------------------------------------------------------------------- rewriting the records


class Mismatch(Exception):
    """The records do not bear out the SASS's mapping (said why)."""


def apply(trace, mapping: dict):
    """The trace rewritten to what the SASS executes (module doc), with each instruction's
    ``sass`` entry and the header's ``sass_map``. A fused group, split or aggregation that
    the records do not bear out stays as recorded and is marked uncertain with the reason.
    Returns a new Trace (the input is not changed)."""
    from .tracefile import Trace, lane_bits

    if trace.header.get("sass_map"):
        raise ValueError("this trace was already rewritten to its SASS (its header has a sass_map)")
    header = dict(trace.header)
    table = [dict(i) for i in header["instructions"]]
    infos: dict[int, SassInfo] = dict(mapping["instructions"])
    n = trace.records
    keep = np.ones(n, bool)
    pred = trace.pred.copy()
    repeat = np.ones(n, np.int64)
    step = np.zeros(n, np.int64)            # split: the part's byte step
    addr_cache: dict[int, np.ndarray] = {}
    unexecuted: set[int] = set()
    order = np.argsort(trace.instr, kind="stable")
    bounds = np.searchsorted(trace.instr[order], np.arange(len(table) + 1))

    def rows(k: int) -> np.ndarray:
        return order[bounds[k]:bounds[k + 1]] if k < len(table) else np.zeros(0, np.int64)

    def addrs(k: int) -> np.ndarray:
        if k not in addr_cache:
            addr_cache[k] = trace.addresses(rows(k))
        return addr_cache[k]

    for k, info in list(infos.items()):
        if k >= len(table):
            continue
        try:
            if info.state == "fused":
                _check_group(trace, info, rows, addrs, lane_bits)
                for m in info.group[1:]:
                    keep[rows(m)] = False
            elif info.state == "removed":
                keep[rows(k)] = False
            elif info.state == "split":
                r = rows(k)
                live = r[trace.flags[r] == 0]
                repeat[live] = info.parts
                step[live] = info.width
            elif info.state == "aggregated":
                r = rows(k)
                live = r[trace.flags[r] == 0]
                pred[live] = _leaders(trace, live, addrs(k)[trace.flags[r] == 0], info.leader, lane_bits)
        except Mismatch as err:
            infos[k] = replace(info, state="uncertain", certain=False, note=f"{info.note}; but {err}: the trace "
                               "keeps the accesses as the PTX ran them")
            if info.state == "fused":
                for m in info.group[1:]:
                    infos[m] = replace(infos[m], state="uncertain", certain=False, first=None,
                                       note=infos[k].note)
    # an instruction uncertain only in how its executions map that never ran: nothing to map
    for k, info in list(infos.items()):
        if k < len(table) and not info.certain and info.runs_only and rows(k).size == 0:
            infos[k] = replace(info, note=f"{info.note}; it did not run in this recording, so the trace does not "
                               "depend on it")
            unexecuted.add(k)
    # a member whose group was not borne out keeps its records (set above); others go
    for k, info in infos.items():
        if k < len(table):
            table[k]["sass"] = info.as_dict()
            if info.state == "fused":
                table[k]["ptx_width"] = table[k]["width"]
                table[k]["width"] = info.width
            elif info.state == "split":
                table[k]["ptx_width"] = table[k]["width"]
                table[k]["width"] = info.width
            if info.sass_op and table[k]["space"] in ("global", "generic") and \
                    table[k]["kind"] in ("atomic", "reduction"):
                table[k]["kind"] = "reduction" if info.sass_op == "red" else "atomic"
    header["instructions"] = table
    uncertain = sorted(k for k, v in infos.items() if not v.certain and k not in unexecuted)
    header["sass_map"] = {"tool": mapping.get("tool"), "certain": not uncertain and not mapping.get("notes"),
                          "notes": list(mapping.get("notes", [])), "uncertain": uncertain,
                          "fused": sorted(k for k, v in infos.items() if v.state == "fused"),
                          "removed": sorted(k for k, v in infos.items() if v.state == "removed")}
    for v in mapping.values():              # SASS a kind explains (TraceForm.builds), under its header key
        if isinstance(v, dict) and "header" in v and "note" in v:
            header["sass_map"][v["header"]] = v["note"]
    idx = np.repeat(np.flatnonzero(keep), repeat[keep])
    part = np.zeros(idx.size, np.int64)
    if idx.size:
        starts = np.r_[0, np.flatnonzero(idx[1:] != idx[:-1]) + 1]
        part = np.arange(idx.size) - np.repeat(starts, np.diff(np.r_[starts, idx.size]))
    base = trace.base[idx].astype(np.int64)
    has = trace.active[idx] != 0
    base = np.where(has, base + part * step[idx], base).astype(np.uint64)
    tma = idx[trace.flags[idx] == PAYLOAD_FLAG]     # the payload records' rows follow them
    payload = trace.payload[trace.payload_rows(tma)] if tma.size else None
    return Trace(header, trace.instr[idx].copy(), trace.block[idx].copy(), trace.warp[idx].copy(),
                 trace.active[idx].copy(), pred[idx].copy(), trace.shared[idx].copy(), trace.global_[idx].copy(),
                 base, trace.offset[idx].copy(), trace.flags[idx].copy(), trace.path, payload)


def _check_group(trace, info: SassInfo, rows, addrs, lane_bits) -> None:
    """Raise Mismatch unless every execution of the group's first member pairs with one of
    each other member in the same warp, with the same lanes, ``ptx_width`` bytes further
    each, the first address a multiple of the fused width."""
    f = info.group[0]
    rf = rows(f)
    rf_live = rf[trace.flags[rf] == 0]
    af = addrs(f)[trace.flags[rf] == 0]
    pf = lane_bits(trace.pred[rf_live])
    w = info.ptx_width
    for j, m in enumerate(info.group[1:], 1):
        rm = rows(m)
        rm_live = rm[trace.flags[rm] == 0]
        if rm_live.size != rf_live.size:
            raise Mismatch(f"the group's PTX line {info.ptx_lines[j]} ran {rm_live.size:,} times and its first "
                           f"{rf_live.size:,}")
        if rm_live.size == 0:
            continue
        if (trace.block[rm_live] != trace.block[rf_live]).any() or (trace.warp[rm_live] != trace.warp[rf_live]).any():
            raise Mismatch(f"the group's PTX line {info.ptx_lines[j]} ran in other warps than its first")
        if (trace.pred[rm_live] != trace.pred[rf_live]).any():
            raise Mismatch(f"the group's PTX line {info.ptx_lines[j]} ran with other lanes than its first")
        am = addrs(m)[trace.flags[rm] == 0]
        bad = ((am - af) != j * w) & pf
        if bad.any():
            r = int(np.argwhere(bad)[0][0])
            raise Mismatch(f"in block {int(trace.block[rf_live[r]])} warp {int(trace.warp[rf_live[r]])} the group's "
                           f"PTX line {info.ptx_lines[j]} is not {j * w} bytes after its first")
    if rf_live.size and ((af % info.width != 0) & pf).any():
        raise Mismatch(f"a first address is not a multiple of {info.width}")


def _leaders(trace, live: np.ndarray, addr: np.ndarray, leader: str, lane_bits) -> np.ndarray:
    """The predicate masks of an aggregated atomic's records: one lane where ptxas's form
    has one lane do it (Mismatch where a record's lanes are on several addresses)."""
    p = trace.pred[live].astype(np.uint32)
    bits = lane_bits(p)
    if not live.size:
        return p
    big = np.iinfo(np.int64).max
    lo = np.where(bits, addr, big).min(axis=1)
    hi = np.where(bits, addr, -1).max(axis=1)
    if ((lo != hi) & bits.any(axis=1)).any():
        raise Mismatch("a recorded execution has its lanes on several addresses")
    x = p.copy()
    for sh in (1, 2, 4, 8, 16):
        x |= x >> np.uint32(sh)
    highest = (x - (x >> np.uint32(1))).astype(np.uint32)
    if leader == "highest":
        return highest
    full = trace.active[live] == np.uint32(0xFFFFFFFF)
    return np.where(full & (p != 0), np.uint32(1 << 31), p).astype(np.uint32)


def reconcile_build(build) -> dict:
    """The mapping of a ``viz.trace.build.Build``: the plain cubin's SASS against its PTX.
    A listing this module cannot read leaves every instruction uncertain, with the reason
    (a recording never fails for it)."""
    try:
        return reconcile(build.ptx, build.instrs, sass_with_ptx_lines(build.cubin))
    except Exception as err:  # noqa: BLE001 - an unexpected listing: say so on every instruction
        m = reconcile(build.ptx, build.instrs, None)
        note = f"the SASS could not be matched with the PTX ({type(err).__name__}: {str(err)[:200]})"
        m["notes"] = [note]
        m["instructions"] = {k: replace(v, note=note) for k, v in m["instructions"].items()}
        return m


__all__ = ["SassAccess", "SassInfo", "reconcile", "reconcile_build", "apply", "sass_with_ptx_lines",
           "parse_sass_lines", "ptx_loop_depths", "ptx_wait_loops", "ptx_segments", "sass_width", "split_address", "STATES", "TOOL", "Mismatch"]
