"""Warp instructions of a launch from its compiled kernel: SASS, basic blocks, loops.

The cost model's *instruction issue* term needs every warp instruction a launch issues
(Nsight Compute's ``smsp__inst_executed.sum``), not only the memory ones the engine
counts. A shape-based guess (``costmodel.estimate_instructions``) misses what ptxas does:
unrolled loops, address arithmetic, a rolled ``#pragma unroll 1`` loop's counter and
branch. This module reads the compiled kernel instead (no Qt, no PyCUDA; cuobjdump or
nvdisasm from the CUDA toolkit or the ``nvidia-cuda-cuobjdump`` wheel, found with
``viz.toolchain.compile.find_tool``):

1. **SASS** of a cubin (``sass_text``), parsed per function (``parse_sass``): address,
   predicate, opcode, branch target of every instruction.
2. **Control flow** (``Cfg``): basic blocks (a block starts at a branch target or after a
   branch or EXIT), their edges, dominators, and natural loops (a back edge ``u -> h``
   where ``h`` dominates ``u``; loops with one header are merged). Every block belongs to
   its innermost loop, or to the top level: those are the *regions*.
3. **Profile** (``profile_of``): per region its static instructions, its memory
   instructions by kind (``KINDS``: global load / store, shared load / store, ldmatrix,
   stmatrix, atomic, cp.async, TMA), its parent region and depth. The profile is plain
   JSON, stored in a results file beside the kernel's registers, so the count can be
   made again without any CUDA tool (``dynamic_instructions``).
4. **Dynamic count** (``dynamic_instructions``): the engine knows how many warps the
   launch has and how many memory instructions of each kind its warps execute
   (``engine_counts``: warp instructions with an active lane, from ``Analysis.stats``).
   The top region runs once per warp. Every loop and conditional stretch with memory
   instructions runs ``x_r`` times in all; for each kind ``k``,
   ``sum_r mem[r][k] * x_r = count[k] - mem[top][k] * warps``. Those equations are solved
   by least squares in the scaled unknowns ``y_r = x_r / p_r``, taking the solution
   nearest to the prior ``p_r`` (``y = 1 + pinv(A) (b - A 1)``), then clipped at 0 and
   solved again without the clipped regions. The prior comes from the structure alone:
   the parent's prior times the loop's trip count when the SASS shows it (a counter from
   0 stepped by an immediate and compared with an immediate), times ``CONDITIONAL_PRIOR``
   for a stretch a branch can skip. So a loop whose kinds separate it from the others
   (gemm_tiled: LDG + STS in the tile loop, LDS in the k loop) is solved exactly; regions
   with the same mix of kinds (a 4x unrolled loop and its remainder loop, the steps of a
   tree reduction) share their count as the priors say (their sum is exact); a skippable
   stretch holding the same kind as code that always runs (the never-taken sink store of
   every generated kernel) takes none of it. A conditional stretch runs at most as often
   as its parent. Regions without memory instructions follow: a stretch that guards (or
   is guarded by) a loop or conditional stretch runs as often as that unit is entered
   (its executions over its static trips), at most as often as its parent; a loop without
   any runs its trips per pass of its parent. The estimate is
   ``sum_r instructions[r] * x_r``.

Limits: code a warp skips without memory instructions in it (the other side of an
``if``) counts as if it ran, unless it guards a unit with memory instructions. A memory
instruction predicated off for a whole warp is issued but not counted by the engine, so
its region looks busier than it is. Loops of one mix split by their priors, not by what
they ran. A subroutine (CALL ... RET, such as a 64-bit division's slow path) counts once
per executed call site, as if every call took it. A cycle without a dominating header
(irreducible; ptxas was not seen to emit one) is not a loop: its blocks count once per pass
of the region around them. Indirect branches (BRX) end a block with no known successor.
"""

from __future__ import annotations

import bisect
import json
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import WarpvizError
from ..kinds.registry import kind_of, kinds as _kinds

PROFILE_VERSION = 1
# Names the profiles cached beside the cubins: a profile made before the control bits were
# read (no ``issue_cycles``) is not reused.
_CACHE_TAG = "c2"
# The prior of a conditional stretch with memory instructions, relative to its parent: when
# the counts cannot tell it from code that always runs (the never-taken sink store of every
# generated kernel beside its real stores), the code that always runs takes them.
CONDITIONAL_PRIOR = 1e-3

# Memory kinds, as the engine names its instructions (``engine_kind``) and as SASS opcodes.
# Each access kind is its op, with the SASS opcodes its Kind names (viz.kinds.registry).
KINDS = ("global.load", "global.store", "shared.load", "shared.store", "ldmatrix", "stmatrix") + \
    tuple(k.op for k in _kinds())
_OPCODE_KIND = {
    "LDG": "global.load", "STG": "global.store", "LDS": "shared.load", "STS": "shared.store",
    "LDSM": "ldmatrix", "STSM": "stmatrix",
    **{op: k.op for k in _kinds() for op in k.sass_opcodes},
    # Generic (flat) accesses: in a kernel the engine models, through pointers to its global arrays.
    "LD": "global.load", "ST": "global.store",
}
_BRANCH = {"BRA", "JMP"}
_INDIRECT = {"BRX", "JMX"}
_CALL = {"CALL"}
_RETURN = {"RET"}
_EXIT = {"EXIT", "KILL"}


class SassError(WarpvizError, ValueError):
    """SASS text this module cannot read (names the line)."""


@dataclass(frozen=True)
class Instr:
    addr: int
    opcode: str                 # with modifiers: "LDG.E.128.CONSTANT"
    operands: str = ""
    pred: str | None = None     # "P0", "!P1"; "cond" for a branch with a condition operand
                                #  (BRA.DIV UR4, ...); None when unpredicated (or @PT)
    target: int | None = None   # branch / call target address
    ctrl: int | None = None     # the 23 control bits ptxas scheduled (``control_bits``), when the listing has them

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]

    @property
    def stall(self) -> int:
        """Cycles the warp waits before its next instruction may issue (at least 1)."""
        return max(1, self.ctrl & 0xF) if self.ctrl is not None else 1

    @property
    def write_barrier(self) -> int | None:
        """The scoreboard this instruction sets when its result is ready (variable latency)."""
        b = (self.ctrl >> 5) & 7 if self.ctrl is not None else 7
        return None if b == 7 else b

    @property
    def read_barrier(self) -> int | None:
        """The scoreboard it sets until its source registers are read (a store's data)."""
        b = (self.ctrl >> 8) & 7 if self.ctrl is not None else 7
        return None if b == 7 else b

    @property
    def waits_on(self) -> tuple[int, ...]:
        """The scoreboards this instruction waits for before it issues."""
        m = (self.ctrl >> 11) & 0x3F if self.ctrl is not None else 0
        return tuple(b for b in range(6) if m >> b & 1)

    @property
    def kind(self) -> str | None:
        """The engine's memory kind of this instruction, or None (also for ``@!PT``, never
        executed: ptxas's placeholder LDS beside an LDGSTS)."""
        if self.pred in ("!PT", "!UPT"):
            return None
        return _OPCODE_KIND.get(self.base)


# ---------------------------------------------------------------------------- SASS text


def sass_text(cubin: bytes, timeout: float = 120) -> str | None:
    """The SASS of a cubin (``cuobjdump --dump-sass``, else ``nvdisasm -c``), or None when
    neither tool is there or it fails."""
    from .compile import find_tool

    for tool, args in (("cuobjdump", ["--dump-sass"]), ("nvdisasm", ["-c", "-hex"])):
        exe = find_tool(tool)
        if not exe:
            continue
        with tempfile.TemporaryDirectory(prefix="warpviz-sass-") as tmp:
            path = Path(tmp) / "k.cubin"
            path.write_bytes(cubin)
            try:
                proc = subprocess.run([exe, *args, str(path)], capture_output=True, text=True, timeout=timeout)
            except (OSError, subprocess.SubprocessError):
                continue
        if proc.returncode == 0 and "/*0000*/" in proc.stdout:
            return proc.stdout
    return None


_ADDR_LINE = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s*(.*)$")
_ENC_LINE = re.compile(r"^\s*/\*\s*0x([0-9a-fA-F]{16})\s*\*/\s*$")      # the high 64 bits of an instruction


def control_bits(high: int) -> int:
    """The 23 control bits of a Volta-and-later instruction from its high 64-bit word (bits
    105-127 of the 128): stall cycles (4 bits), yield (1), write scoreboard (3; 7: none),
    read scoreboard (3), wait mask (6 scoreboards), register reuse (4)."""
    return (high >> 41) & 0x7FFFFF
_CUOBJ_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
_NVDIS_FUNC = re.compile(r"^\s*\.text\.([A-Za-z_$][\w$.]*):\s*$")
_LABEL = re.compile(r"^\s*(\.L[\w$.]*|[A-Za-z_$][\w$.]*):\s*$")
_PRED = re.compile(r"^@(!?U?P[0-7T])\s+")
_HEX_TARGET = re.compile(r"^(0x[0-9a-fA-F]+)\b")
_LABEL_TARGET = re.compile(r"`\((\.?[\w$.]+)\)")


def parse_sass(text: str) -> dict[str, list[Instr]]:
    """{function: [Instr in address order]} from cuobjdump's or nvdisasm's SASS listing.
    Lines without an instruction (headers, encodings, labels, ``.byte`` data) are skipped;
    branch targets are hex addresses (cuobjdump) or labels (nvdisasm -c)."""
    funcs: dict[str, list[list]] = {}
    labels: dict[str, dict[str, int]] = {}
    cur: str | None = None
    pending: list[str] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _CUOBJ_FUNC.match(line) or _NVDIS_FUNC.match(line)
        if m:
            cur = m.group(1)
            funcs.setdefault(cur, [])
            labels.setdefault(cur, {})
            pending = []
            continue
        if cur is None:
            continue
        lm = _LABEL.match(line)
        if lm:
            pending.append(lm.group(1))
            continue
        am = _ADDR_LINE.match(line)
        if not am:
            em = _ENC_LINE.match(line)
            if em and funcs[cur] and funcs[cur][-1][3] is None:
                funcs[cur][-1][3] = control_bits(int(em.group(1), 16))
            continue
        body = am.group(2).strip()
        if not body or body.startswith(".") or body.startswith("/*"):
            continue        # data (.byte) or an encoding line
        addr = int(am.group(1), 16)
        for lb in pending:
            labels[cur][lb] = addr
        pending = []
        funcs[cur].append([addr, body, lineno, None])
    out: dict[str, list[Instr]] = {}
    for name, rows in funcs.items():
        instrs = []
        for addr, body, lineno, ctrl in rows:
            code = body.split(";")[0].strip()
            if not code:
                continue
            pred = None
            pm = _PRED.match(code)
            if pm:
                pred = None if pm.group(1) in ("PT", "UPT") else pm.group(1)
                code = code[pm.end():]
            parts = code.split(None, 1)
            opcode = parts[0]
            operands = parts[1].strip() if len(parts) > 1 else ""
            target = None
            base = opcode.split(".")[0]
            if base in _BRANCH or base in _CALL:
                # The target is the last operand: `BRA 0x380`, `BRA.DIV UR4, 0x1d0`,
                # `BRA.U !UP0, 0x2a0`, nvdisasm's `BRA `(.L_x_3)`.
                last = operands.rsplit(",", 1)[-1].strip()
                hm = _HEX_TARGET.match(last)
                lm2 = _LABEL_TARGET.search(last)
                if hm:
                    target = int(hm.group(1), 16)
                elif lm2 and lm2.group(1) in labels[name]:
                    target = labels[name][lm2.group(1)]
                elif base in _BRANCH:
                    raise SassError(f"line {lineno}: branch target {operands!r} not understood")
                if base in _BRANCH and pred is None and "," in operands:
                    pred = "cond"     # a condition among the operands: it may fall through too
            instrs.append(Instr(addr, opcode, operands, pred, target, ctrl))
        instrs.sort(key=lambda i: i.addr)
        out[name] = instrs
    return out


# ---------------------------------------------------------------------------- control flow


@dataclass
class Block:
    index: int
    start: int                  # index of the first instruction
    end: int                    # one past the last
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass
class Loop:
    header: int                 # block index
    blocks: frozenset
    latches: tuple              # blocks with a back edge to the header
    parent: int | None = None   # index in Cfg.loops
    depth: int = 1


class Cfg:
    """Basic blocks, dominators and natural loops of one function's instructions."""

    def __init__(self, instrs: list[Instr]):
        self.instrs = list(instrs)
        self.blocks: list[Block] = []
        self.calls: list[tuple[int, int]] = []       # (calling block, callee block)
        self._build()
        self.reachable = self._reach()
        self.idom = self._dominators()
        self.loops = self._loops()

    def _build(self) -> None:
        ins = self.instrs
        if not ins:
            return
        by_addr = {i.addr: k for k, i in enumerate(ins)}
        leaders = {0}
        for k, i in enumerate(ins):
            b = i.base
            if i.target is not None and i.target in by_addr:
                leaders.add(by_addr[i.target])
            if b in _BRANCH or b in _INDIRECT or b in _EXIT or b in _RETURN or b in _CALL:
                if k + 1 < len(ins):
                    leaders.add(k + 1)
        starts = sorted(leaders)
        block_of = {}
        for n, s in enumerate(starts):
            e = starts[n + 1] if n + 1 < len(starts) else len(ins)
            self.blocks.append(Block(n, s, e))
            block_of[s] = n
        for blk in self.blocks:
            last = ins[blk.end - 1]
            b = last.base
            nxt = blk.index + 1 if blk.index + 1 < len(self.blocks) else None
            succ: list[int] = []
            if b in _BRANCH:
                if last.target in by_addr:
                    succ.append(block_of[by_addr[last.target]])
                if last.pred is not None and nxt is not None:
                    succ.append(nxt)
            elif b in _EXIT or b in _RETURN:
                if last.pred is not None and nxt is not None:
                    succ.append(nxt)
            elif b in _INDIRECT:
                pass        # unknown targets: the rest is reached only through labels we cannot see
            else:
                if b in _CALL and last.target in by_addr:
                    self.calls.append((blk.index, block_of[by_addr[last.target]]))
                if nxt is not None:
                    succ.append(nxt)
            for s in dict.fromkeys(succ):
                blk.succs.append(s)
                self.blocks[s].preds.append(blk.index)

    def _reach(self) -> set[int]:
        if not self.blocks:
            return set()
        seen = {0}
        todo = [0]
        while todo:
            b = todo.pop()
            for s in self.blocks[b].succs:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
            if not todo:                       # a subroutine: reached through a reachable CALL
                todo = [c for caller, c in self.calls if caller in seen and c not in seen]
                seen.update(todo)
        return seen

    def main(self) -> set[int]:
        """Blocks reached from the entry without entering a subroutine."""
        seen = {0} if self.blocks else set()
        todo = list(seen)
        while todo:
            for s in self.blocks[todo.pop()].succs:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        return seen

    def _rpo(self, root: int) -> list[int]:
        order, seen = [], set()
        stack = [(root, iter(self.blocks[root].succs))]
        seen.add(root)
        while stack:
            node, it = stack[-1]
            for s in it:
                if s not in seen and s in self.reachable:
                    seen.add(s)
                    stack.append((s, iter(self.blocks[s].succs)))
                    break
            else:
                stack.pop()
                order.append(node)
        return order[::-1]

    def _dominators(self) -> dict[int, int | None]:
        """Immediate dominators (Cooper, Harvey and Kennedy), per root: the entry and each
        subroutine's first block."""
        idom: dict[int, int | None] = {}
        roots = [0] + sorted({c for _, c in self.calls} - {0}) if self.blocks else []
        for root in roots:
            if root in idom:
                continue
            rpo = [b for b in self._rpo(root) if b not in idom or b == root]
            pos = {b: k for k, b in enumerate(rpo)}
            dom = {root: root}
            changed = True
            while changed:
                changed = False
                for b in rpo[1:]:
                    ps = [p for p in self.blocks[b].preds if p in dom and p in pos]
                    if not ps:
                        continue
                    new = ps[0]
                    for p in ps[1:]:
                        a, c = new, p
                        while a != c:
                            while pos[a] > pos[c]:
                                a = dom[a]
                            while pos[c] > pos[a]:
                                c = dom[c]
                        new = a
                    if dom.get(b) != new:
                        dom[b] = new
                        changed = True
            for b, d in dom.items():
                idom.setdefault(b, None if b == root else d)
        return idom

    def dominates(self, a: int, b: int) -> bool:
        while b is not None:
            if a == b:
                return True
            b = self.idom.get(b)
        return False

    def _loops(self) -> list[Loop]:
        bodies: dict[int, set[int]] = {}
        latches: dict[int, list[int]] = {}
        for blk in self.blocks:
            if blk.index not in self.reachable:
                continue
            for s in blk.succs:
                if s in self.idom and self.dominates(s, blk.index):
                    body = bodies.setdefault(s, {s})
                    latches.setdefault(s, []).append(blk.index)
                    todo = [blk.index]
                    while todo:
                        n = todo.pop()
                        if n in body:
                            continue
                        body.add(n)
                        todo.extend(p for p in self.blocks[n].preds if p in self.reachable)
        loops = [Loop(h, frozenset(b), tuple(latches[h])) for h, b in bodies.items()]
        loops.sort(key=lambda lp: (len(lp.blocks), self.blocks[lp.header].start))
        for k, lp in enumerate(loops):
            for j in range(k + 1, len(loops)):
                if lp.blocks < loops[j].blocks or (lp.blocks == loops[j].blocks and j != k):
                    lp.parent = j
                    break
        # Sort outer first, so parents come before children, and fix the parent indices.
        order = sorted(range(len(loops)), key=lambda k: (-len(loops[k].blocks), self.blocks[loops[k].header].start))
        new = {old: n for n, old in enumerate(order)}
        out = []
        for old in order:
            lp = loops[old]
            lp.parent = new[lp.parent] if lp.parent is not None else None
            out.append(lp)
        for lp in out:
            lp.depth = 1 if lp.parent is None else out[lp.parent].depth + 1
        return out

    def innermost(self) -> dict[int, int | None]:
        """{block: index of its innermost loop, or None at the top level} (reachable blocks)."""
        out: dict[int, int | None] = {b: None for b in self.reachable}
        for k, lp in enumerate(self.loops):     # outer first: inner loops overwrite
            for b in lp.blocks:
                out[b] = k
        return out


# ---------------------------------------------------------------------------- profile


_ISETP_IMM = re.compile(r"ISETP\.(NE|LT|GE)\.[\w.]*AND\s+!?U?P\d,\s*U?PT,\s*(U?R\d+),\s*(-?0x[0-9a-fA-F]+|-?\d+)")
_STEP = re.compile(r"^(?:IADD3|VIADD|IADD|UIADD3)(?:\.\w+)*$")


def _static_trips(cfg: Cfg, lp: Loop) -> int | None:
    """A loop's trip count when the SASS shows it: the latch compares a counter with an
    immediate (``ISETP.NE.AND P0, PT, R17, 0x20``), the loop steps that counter by an
    immediate, and the counter starts at 0 (set from RZ before the loop). None otherwise."""
    ins = cfg.instrs
    for latch in lp.latches:
        blk = cfg.blocks[latch]
        for k in range(blk.end - 1, blk.start - 1, -1):
            i = ins[k]
            if i.base not in ("ISETP", "UISETP"):
                continue
            m = _ISETP_IMM.match(f"{i.opcode} {i.operands}")
            if not m:
                continue
            reg, limit = m.group(2), int(m.group(3), 0)
            step = None
            for b in lp.blocks:
                for j in range(cfg.blocks[b].start, cfg.blocks[b].end):
                    o = ins[j]
                    ops = [x.strip() for x in o.operands.split(",")]
                    if _STEP.match(o.opcode) and ops and ops[0] == reg and reg in ops[1:]:
                        imm = [x for x in ops[1:] if re.fullmatch(r"-?0x[0-9a-fA-F]+|-?\d+", x)]
                        if len(imm) == 1:
                            step = int(imm[0], 0)
            if not step or step <= 0 or limit <= 0:
                return None
            # The counter starts from zero before the loop (MOV/IMAD.MOV R, RZ / CS2R).
            for b in cfg.reachable - set(lp.blocks):
                for j in range(cfg.blocks[b].start, cfg.blocks[b].end):
                    o = ins[j]
                    ops = [x.strip() for x in o.operands.split(",")]
                    if ops and ops[0] == reg and (o.base in ("MOV", "IMAD", "CS2R") and
                                                  all(x in ("RZ", "SRZ", "0x0", "0") for x in ops[1:]
                                                      if x != reg)):
                        return -(-limit // step) if limit % step == 0 else None
            return None
    return None


# What a warp waits for on a scoreboard, by the instruction that set it (``latency_class``):
# "global" and "shared" loads (the cost model's latency chain has their waits; the issue
# between such a load and its first use overlaps that wait), a class of variable-latency
# ALU work with a calibrated latency each (``LATENCY_CLASSES``), or "memory" for the rest
# (a store's registers read, a barrier on copies): taken as ready.
LATENCY_CLASSES = ("shfl", "mufu", "s2r", "const", "other")
MEMORY_CLASSES = ("global", "shared")
_SHARED_BASES = {"LDS", "LDSM", "ATOMS"}
_GLOBAL_BASES = {"LDG", "LD", "ATOM", "ATOMG", "RED", "REDG", "LDL"}
_MEMORY_BASES = {"STG", "STS", "ST", "STL", "STSM", "LDGSTS", "UTMALDG", "UTMASTG", "UBLKCP", "SYNCS",
                 "LDGDEPBAR", "DEPBAR", "MEMBAR", "CCTL", "ERRBAR", "FENCE", "ARRIVES", "UTMACCTL", "UTMAPF",
                 "LDTRAM"}


def latency_class(i: Instr) -> str:
    """What a wait on the scoreboard ``i`` sets costs: "global" / "shared" (a load's wait,
    the latency chain's), "memory" (ready), or one of ``LATENCY_CLASSES``."""
    b = i.base
    if b in _SHARED_BASES:
        return "shared"
    if b in _GLOBAL_BASES:
        return "global"
    if b in _MEMORY_BASES or i.kind:
        return "memory"
    if b == "SHFL":
        return "shfl"
    if b == "MUFU":
        return "mufu"
    if b in ("S2R", "S2UR"):
        return "s2r"
    if b in ("LDC", "LDCU"):
        return "const"
    return "other"


def issue_of(seq: list[Instr]) -> tuple[int, list]:
    """One pass of a region's instructions (in address order) as one warp alone issues them:
    (its issue cycles, its waits). Each instruction issues ``stall`` cycles after the one
    before it (the control bits ptxas scheduled: the fixed latencies of the ALU pipes, 1
    when the next instruction is independent); that sum is ``issue_cycles``. An instruction
    that waits on a scoreboard set earlier in the pass by a load or by variable-latency ALU
    work (``latency_class``) adds a wait ``[class, t_set, t_wait]``, both times in the pass's
    stall cycles, which ``issue_cycles_of`` turns into cycles with the device's measured
    latencies. A scoreboard set in an earlier pass (the previous loop trip) is taken as
    ready."""
    t = 0
    last: dict[int, tuple[str, int]] = {}
    waits: list = []
    for i in seq:
        for b in i.waits_on:
            if b in last:
                cls, t_set = last.pop(b)
                if cls != "memory":
                    waits.append([cls, t_set, t])
        if i.write_barrier is not None:
            last[i.write_barrier] = (latency_class(i), t)
        if i.read_barrier is not None:
            last[i.read_barrier] = ("memory", t)
        t += i.stall
    return t, waits


def issue_cycles_of(region: dict, latency: dict[str, float]) -> float:
    """Cycles one pass of a profiled region takes a warp alone beyond its loads' waits: its
    issue cycles, plus its waits on variable-latency ALU results (``latency``: cycles from
    issue to a dependent instruction's issue, by class; each wait delays everything after
    it), minus the cycles it issues while a load of its own is in flight (from the load to
    its first use, at most ``latency["global"]`` / ``["shared"]``, the least a load waits):
    those hide under the load's wait, which the latency chain counts whole."""
    delay, hidden = 0.0, []
    step_at, step_delay = [], []            # from wait step_at[i] on, everything is step_delay[i] later
    for cls, t_set, t_wait in region.get("waits", ()):
        i = bisect.bisect_right(step_at, t_set)
        p, c = t_set + (step_delay[i - 1] if i else 0.0), t_wait + delay
        lat = latency.get(cls, 0.0)
        if cls in MEMORY_CLASSES:
            if c > p and lat > 0:
                hidden.append((p, min(c, p + lat)))
        elif p + lat > c:
            delay += p + lat - c
            step_at.append(t_wait)
            step_delay.append(delay)
    covered, end = 0.0, float("-inf")
    for lo, hi in sorted(hidden):
        lo = max(lo, end)
        if hi > lo:
            covered += hi - lo
            end = hi
    return max(0.0, float(region.get("issue_cycles", region.get("instructions", 0))) + delay - covered)


def profile_of(instrs: list[Instr], name: str = "") -> dict:
    """The static profile of one function (module docstring, point 3): JSON-able.

    ``regions[0]`` is the top level; then one region per loop (``loop``: its header's
    address, ``trips``: its trip count per entry when the SASS shows it); then the
    conditional stretches: ``conditional`` ones hold memory instructions (an unknown
    count of their own), ``follows`` ones hold none and run as often as the units they
    guard or are guarded by (the largest of those units' entries, at most their parent's
    count). ``untimed`` (only when there are any): {base opcode: static count} of the
    tensor-core MMA and TMA / bulk-copy instructions, which the cost model does not time
    (``viz.gpu.caveats``)."""
    cfg = Cfg(instrs)
    inner = cfg.innermost()
    regions = [{"loop": None, "parent": None, "depth": 0, "instructions": 0, "memory": {}}]
    for lp in cfg.loops:
        regions.append({"loop": f"0x{instrs[cfg.blocks[lp.header].start].addr:04x}",
                        "parent": 0 if lp.parent is None else lp.parent + 1, "depth": lp.depth,
                        "instructions": 0, "memory": {}, "trips": _static_trips(cfg, lp)})
    # A block runs on every pass through its region when it dominates every place a pass
    # ends: the loop's latches, or for the top level every EXIT (an early @P EXIT too).
    main = cfg.main()
    exits = [b for b in main if not cfg.blocks[b].succs or instrs[cfg.blocks[b].end - 1].base in _EXIT]
    heads: dict[int, int] = {cfg.loops[k].header: k + 1 for k in range(len(cfg.loops))}   # head block -> unit
    mem_of: dict[int, dict] = {}
    cond: dict[int, bool] = {}
    for b in sorted(cfg.reachable):
        blk = cfg.blocks[b]
        mem: dict[str, int] = {}
        for i in instrs[blk.start:blk.end]:
            if i.kind:
                mem[i.kind] = mem.get(i.kind, 0) + 1
        mem_of[b] = mem
        r = inner[b]
        ends = exits if r is None else list(cfg.loops[r].latches)
        cond[b] = b in main and not all(cfg.dominates(b, e) for e in ends)

    def region_of(b: int) -> int:
        return 0 if inner[b] is None else inner[b] + 1

    unit_of: dict[int, int] = {}
    groups: dict[tuple, int] = {}
    for b in sorted(cfg.reachable):          # conditional stretches with memory: unknowns
        if cond[b] and mem_of[b]:
            key = ("c", region_of(b), tuple(sorted(mem_of[b])))
            if key not in groups:
                groups[key] = len(regions)
                par = region_of(b)
                regions.append({"loop": None, "parent": par, "depth": regions[par]["depth"], "instructions": 0,
                                "memory": {}, "conditional": True,
                                "at": f"0x{instrs[cfg.blocks[b].start].addr:04x}"})
            unit_of[b] = groups[key]
            heads.setdefault(b, groups[key])
    # A loop with no memory instruction in it (ptxas hoisted a guarded load out of its
    # one-trip loop) runs as often as the units beside it that it guards or follows.
    has_mem = [False] * len(cfg.loops)
    for k, lp in enumerate(cfg.loops):
        has_mem[k] = any(mem_of[b] for b in lp.blocks)
    for k, lp in enumerate(cfg.loops):
        if has_mem[k]:
            continue
        u, par = k + 1, regions[k + 1]["parent"]
        follows = sorted({v for h, v in heads.items() if v != u and regions[v]["parent"] == par
                          and (regions[v].get("conditional") or (regions[v]["loop"] and has_mem[v - 1]))
                          and (cfg.dominates(lp.header, h) or cfg.dominates(h, lp.header))})
        if follows:
            regions[u]["follows"] = follows
    for b in sorted(cfg.reachable):          # conditional stretches without memory: follow a unit
        if not cond[b] or mem_of[b]:
            continue
        par = region_of(b)
        follows = sorted({u for h, u in heads.items() if u != par and regions[u]["parent"] == par
                          and (cfg.dominates(b, h) or cfg.dominates(h, b))})
        if not follows:
            continue
        key = ("f", par, tuple(follows))
        if key not in groups:
            groups[key] = len(regions)
            regions.append({"loop": None, "parent": par, "depth": regions[par]["depth"], "instructions": 0,
                            "memory": {}, "follows": list(follows),
                            "at": f"0x{instrs[cfg.blocks[b].start].addr:04x}"})
        unit_of[b] = groups[key]
    # A subroutine's code outside its loops (CALL ... RET: a 64-bit division's slow path)
    # runs once per call: its count is the sum of its call sites' counts.
    sub = [b for b in sorted(cfg.reachable) if b not in main and inner[b] is None]
    if sub:
        sites = [unit_of.get(c, region_of(c)) for c, _callee in cfg.calls if c in cfg.reachable]
        regions.append({"loop": None, "parent": 0, "depth": 0, "instructions": 0, "memory": {},
                        "calls": sites, "at": f"0x{instrs[cfg.blocks[sub[0]].start].addr:04x}"})
        for b in sub:
            unit_of[b] = len(regions) - 1
    blocks_of: dict[int, list[int]] = {}
    for b in sorted(cfg.reachable):
        blk = cfg.blocks[b]
        u = unit_of.get(b, region_of(b))
        blocks_of.setdefault(u, []).append(b)
        rg = regions[u]
        rg["instructions"] += blk.end - blk.start
        for k, v in mem_of[b].items():
            rg["memory"][k] = rg["memory"].get(k, 0) + v
    scheduled = all(i.ctrl is not None for i in instrs)
    for u, rg in enumerate(regions):
        rg["memory"] = dict(sorted(rg["memory"].items()))
        if scheduled:
            seq = [i for b in blocks_of.get(u, []) for i in instrs[cfg.blocks[b].start:cfg.blocks[b].end]]
            rg["issue_cycles"], rg["waits"] = issue_of(seq)
    out = {"version": PROFILE_VERSION, "function": name,
           "static_instructions": sum(r["instructions"] for r in regions), "regions": regions}
    untimed = untimed_sass(i.base for i in instrs)   # tensor-core MMA and bulk copies the model does not time
    if untimed:
        out["untimed"] = untimed
    return out



# SASS base opcodes: tensor-core MMA (Hopper's warpgroup ones and the warp-level ones) and
# TMA / bulk copies.
SASS_MMA = frozenset({"HGMMA", "IGMMA", "QGMMA", "BGMMA", "HMMA", "IMMA", "DMMA", "BMMA", "QMMA", "OMMA",
                      "UTCHMMA", "UTCIMMA", "UTCQMMA", "UTCOMMA", "UTCMMA"})
SASS_COPIES = frozenset({"UTMALDG", "UTMASTG", "UTMAREDG", "UBLKCP", "UBLKRED"})

def untimed_sass(opcodes) -> dict[str, int]:
    """{SASS base opcode: static count} of the tensor-core and bulk-copy instructions among
    ``opcodes`` (base opcodes, ``HGMMA`` of ``HGMMA.64x64x16.F32``)."""
    out: dict[str, int] = {}
    for op in opcodes:
        if op in SASS_MMA or op in SASS_COPIES:
            out[op] = out.get(op, 0) + 1
    return dict(sorted(out.items()))

def profiles_of_cubin(cubin: bytes) -> dict[str, dict] | None:
    """{function: profile} of every function in a cubin, or None without cuobjdump/nvdisasm."""
    text = sass_text(cubin)
    if text is None:
        return None
    try:
        return {name: profile_of(ins, name) for name, ins in parse_sass(text).items() if ins}
    except SassError:
        return None     # a listing this parser cannot read: the cost model keeps the shape estimate


def kernel_profile(source: str, function: str, use_cache: bool = True) -> dict | None:
    """The profile of ``function`` in ``source`` compiled as the bench compiles it
    (``compile.compile_cubin``: sm_90, ``NVCC_FLAGS``), with the nvcc version that made it;
    None without cuobjdump / nvdisasm or when the cubin has no such function. Raises
    GpuUnavailable without nvcc, CompileError when nvcc refuses the source. Cached beside
    the cubins, by the cubin's hash."""
    import hashlib

    from ..cachedir import touch, trim
    from .compile import cache_dir, compile_cubin, nvcc_version

    cubin = compile_cubin(source)
    key = hashlib.sha256(cubin).hexdigest()[:32]
    cached = cache_dir() / f"{key}.sass{PROFILE_VERSION}{_CACHE_TAG}.json"
    profiles = None
    if use_cache and cached.exists():
        from ..fileio import ReadRefused, read_json_limited

        try:        # a damaged entry (not JSON, nested deeply, a special file) is built again
            touch(cached)
            profiles = read_json_limited(cached, 64 << 20, "cached SASS profile")
        except (OSError, ReadRefused):
            profiles = None
        if not isinstance(profiles, dict) or not all(isinstance(v, dict) for v in profiles.values()):
            profiles = None
    if profiles is None:
        profiles = profiles_of_cubin(cubin)
        if profiles is None:
            return None
        for p in profiles.values():
            p["nvcc"] = nvcc_version()
        if use_cache:
            from ..fileio import write_atomic

            write_atomic(cached, json.dumps(profiles))
            trim()                  # the compile cache's cap (viz.cachedir)
    return profiles.get(function)


def check_profile(p) -> dict:
    """A profile read back from a file, checked: raises ValueError naming the field."""
    if not isinstance(p, dict) or p.get("version") != PROFILE_VERSION:
        raise ValueError(f"sass profile: version must be {PROFILE_VERSION}")
    regs = p.get("regions")
    if not isinstance(regs, list) or not regs:
        raise ValueError("sass profile: 'regions' must be a non-empty list")
    for k, r in enumerate(regs):
        if not isinstance(r, dict) or not isinstance(r.get("instructions"), int) or r["instructions"] < 0:
            raise ValueError(f"sass profile: regions[{k}].instructions must be a non-negative integer")
        par = r.get("parent")
        if k == 0 and par is not None or k and (not isinstance(par, int) or not 0 <= par < k):
            raise ValueError(f"sass profile: regions[{k}].parent must name an earlier region")
        for key in ("follows", "calls"):
            refs = r.get(key)
            low = 0 if key == "calls" else 1        # a call site may be the top level
            if refs is not None and (not isinstance(refs, list) or
                                     any(not isinstance(u, int) or not low <= u < len(regs) or u == k for u in refs)):
                raise ValueError(f"sass profile: regions[{k}].{key} must list other regions by index")
        trips = r.get("trips")
        if trips is not None and (not isinstance(trips, int) or trips < 1):
            raise ValueError(f"sass profile: regions[{k}].trips must be a positive integer or null")
        mem = r.get("memory", {})
        if not isinstance(mem, dict) or any(kk not in KINDS or not isinstance(v, int) or v < 0
                                            for kk, v in mem.items()):
            raise ValueError(f"sass profile: regions[{k}].memory must map kinds {KINDS} to counts")
        ic = r.get("issue_cycles")
        if ic is not None and (not isinstance(ic, int) or ic < r["instructions"]):
            raise ValueError(f"sass profile: regions[{k}].issue_cycles must be an integer, at least its instructions")
        waits = r.get("waits", [])
        if not isinstance(waits, list) or any(
                not isinstance(w, list) or len(w) != 3 or w[0] not in LATENCY_CLASSES + MEMORY_CLASSES
                or not all(isinstance(v, int) and v >= 0 for v in w[1:]) or w[1] > w[2] for w in waits):
            raise ValueError(f"sass profile: regions[{k}].waits must list [class, set, wait] with a class of "
                             f"{LATENCY_CLASSES + MEMORY_CLASSES} and cycles 0 <= set <= wait")
    return p


# ---------------------------------------------------------------------------- dynamic count


def engine_kind(s) -> str | None:
    """The memory kind of one of the engine's InstrStats (``KINDS``)."""
    if kind_of(s.op) is not None:          # an access kind: its op
        return s.op
    if getattr(s, "matrix", None) is not None:
        return "ldmatrix" if s.op == "load" else "stmatrix"
    if s.space in ("global", "shared") and s.op in ("load", "store"):
        return f"{s.space}.{s.op}"
    return None


def engine_counts(an) -> tuple[dict[str, int], int]:
    """({kind: warp instructions with an active lane}, warps) of an analysed scenario."""
    counts: dict[str, int] = {}
    for s in an.stats:
        k = engine_kind(s)
        if k:
            counts[k] = counts.get(k, 0) + int(s.warp_instructions)
    sc = an.scenario
    warps = sc.launch.blocks * (-(-sc.launch.threads_per_block // 32))
    return counts, warps


@dataclass(frozen=True)
class Estimate:
    instructions: float             # warp instructions of the launch
    executions: tuple               # per region: times it ran in all
    residual: float                 # memory instructions the solution misses (sum |A x - b|)
    memory: float                   # memory instructions the engine counts (the b side)
    issue_cycles: float = 0.0       # all warps' own issue cycles (``issue_cycles_of`` per region); 0: no control bits

    def as_dict(self) -> dict:
        return {"instructions": round(self.instructions), "executions": [round(x, 3) for x in self.executions],
                "residual": round(self.residual, 3), "memory": round(self.memory),
                "issue_cycles": round(self.issue_cycles)}


def dynamic_instructions(profile: dict, counts: dict[str, float], warps: float,
                         latency: dict[str, float] | None = None) -> Estimate:
    """Warp instructions of a launch of ``warps`` warps whose warps execute ``counts``
    memory instructions by kind (module docstring, point 4); with ``latency`` (cycles by
    ``LATENCY_CLASSES``) and a profile with control bits, also the warps' own issue cycles
    (``issue_cycles_of`` of each region times its executions)."""
    import numpy as np

    regs = profile["regions"]
    n = len(regs)
    kinds = sorted(set(KINDS) | set(counts))
    M = np.array([[float(regs[k].get("memory", {}).get(kd, 0)) for kd in kinds] for k in range(n)])  # regions x kinds
    b_all = np.array([float(counts.get(kd, 0)) for kd in kinds])
    x = np.zeros(n)
    x[0] = float(warps)
    # Priors from the structure alone (so the split between loops the counts cannot tell
    # apart does not move with the counts): the parent's prior times the static trip count.
    prior = np.zeros(n)
    prior[0] = max(float(warps), 1.0)
    for k in range(1, n):
        r = regs[k]
        prior[k] = prior[r["parent"]] * (r.get("trips") or 1) * (CONDITIONAL_PRIOR if r.get("conditional") else 1)
    solved = [k for k in range(1, n) if not regs[k].get("follows") and "calls" not in regs[k] and M[k].any()]
    rhs = b_all - M[0] * x[0]
    active = list(solved)
    while active:
        A = M[active].T * prior[active]       # kinds x active, columns scaled by the priors
        y0 = np.ones(len(active))
        y = y0 + np.linalg.pinv(A) @ (rhs - A @ y0)
        neg = [a for a, v in zip(active, y) if v < 0]
        for a, v in zip(active, y):
            x[a] = max(0.0, v) * prior[a]
        if not neg:
            break
        for a in neg:
            x[a] = 0.0
        active = [a for a in active if a not in neg]
    for k in solved:               # a conditional stretch runs at most as often as its parent
        if regs[k].get("conditional"):
            x[k] = min(x[k], x[regs[k]["parent"]])
    for k in range(1, n):          # parents first: the rest follow what was solved
        if k in solved:
            continue
        r = regs[k]
        if "calls" in r:
            x[k] = sum(x[c] for c in r["calls"] if c < k)
        elif r.get("follows"):
            entries = max(x[u] / (regs[u].get("trips") or 1) for u in r["follows"])
            x[k] = min(x[r["parent"]], entries) * (r.get("trips") or 1)
        else:                      # a loop with no memory instruction: its trips per parent pass
            x[k] = x[r["parent"]] * (r.get("trips") or 1)
    total = float(sum(regs[k]["instructions"] * x[k] for k in range(n)))
    resid = float(np.abs(M.T @ x - b_all).sum())
    cycles = 0.0
    if latency is not None and all("issue_cycles" in r for r in regs):
        cycles = float(sum(issue_cycles_of(regs[k], latency) * x[k] for k in range(n)))
    return Estimate(total, tuple(float(v) for v in x), resid, float(b_all.sum()), cycles)


__all__ = ["Instr", "Cfg", "parse_sass", "sass_text", "profile_of", "profiles_of_cubin", "dynamic_instructions",
           "engine_counts", "engine_kind", "Estimate", "KINDS", "check_profile", "SassError", "kernel_profile",
           "LATENCY_CLASSES", "MEMORY_CLASSES", "latency_class", "issue_of", "issue_cycles_of",
           "control_bits"]
