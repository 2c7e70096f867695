"""TMA tensor copies and bulk copies in a trace: ``cp.async.bulk.tensor`` (loads, stores),
``cp.reduce.async.bulk.tensor``, ``cp.async.bulk.prefetch.tensor``, ``cp.async.bulk``,
``cp.reduce.async.bulk`` and ``cp.async.bulk.prefetch``, everything about them in one place:

* the PTX forms the recorder takes (``match``, ``parse_operands``), as two trace kinds:
  ``tma`` (through a tensor map) and ``bulk`` (a plain byte range);
* the PTX recording block (``recording_block``): where the instruction is issued, every lane
  whose predicate holds writes a record of its own (a TMA is issued per lane: several lanes
  of one warp issue several copies) holding the 128 bytes of the tensor map, read at that
  moment through a generic address (so a ``__grid_constant__`` parameter, a map in global
  memory and one built on the device with ``tensormap.replace`` all work), the coordinates,
  the shared address, the mbarrier, the multicast mask, the cache policy and the lane; a
  warp in which no lane issues writes one record with no lane, so the warp-level executions
  are all known;
* decoding a record (``decode_record``) and a tensor map (``decode_map``: the byte layout
  measured with tools/gpu/probe_tma_maps.py on the H200, ``MAP_LAYOUT``);
* expanding one copy into what it touches (``expand``): the global rows of its box (the
  parts out of bounds fetch nothing), their 32-byte sectors and 128-byte lines, and the
  shared bytes written (or read) in the swizzled layout (CuTe ``Swizzle<B,4,3>`` on the
  shared byte address, as for the scenario kind ``tma.load``);
* its Nsight Compute counters (``COUNTERS``) and how a trace's records count into them
  (``count_records``), their labels and captions.

Standard library and numpy only: the model and the trace side both use it.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

import numpy as np

from ..i18n import tr

# ---------------------------------------------------------------------------- the forms

KIND_TENSOR = "tma"          # trace kind of the tensor-map forms
KIND_BULK = "bulk"           # trace kind of the byte-range forms
TRACE_KINDS = (KIND_TENSOR, KIND_BULK)     # the copies (KIND_CONTROL apart)
RECORD_FLAG = 2              # a trace record's flags: a TMA / bulk record (its operands in the payload)
PAYLOAD_SLOTS = 32           # 8-byte slots of a record's payload (the 32 lanes' address slots)
MAX_RANK = 5
MAX_BOX_BYTES = 256 << 10     # a box larger than this cannot land in shared memory (Hopper: 228 KiB a block)

# Nsight Compute's counters (TRACE_FORMAT.md, "Hopper's own memory path"; names checked on the H200)
TMA_LD_SECTORS = "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"
TMA_LD_BYTES = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"
TMA_ST_SECTORS = "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum"
TMA_RED_SECTORS = "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum"
TMA_PIPE = "sm__inst_executed_pipe_tma.sum"
TMA_REQUESTS = "l1tex__tmain_requests.sum"
TMA_SASS_LD = "sm__sass_inst_executed_op_tma_ld.sum"
TMA_SASS_ST = "sm__sass_inst_executed_op_tma_st.sum"
TMA_SASS_RED = "sm__sass_inst_executed_op_tma_red.sum"
COUNTERS = (TMA_LD_SECTORS, TMA_LD_BYTES, TMA_ST_SECTORS, TMA_RED_SECTORS, TMA_PIPE, TMA_REQUESTS, TMA_SASS_LD,
            TMA_SASS_ST, TMA_SASS_RED)
COUNTER_LABELS = {
    TMA_LD_SECTORS: "TMA load sectors", TMA_LD_BYTES: "TMA load bytes", TMA_ST_SECTORS: "TMA store sectors",
    TMA_RED_SECTORS: "TMA reduction sectors", TMA_PIPE: "TMA-pipe instructions", TMA_REQUESTS: "TMA requests",
    TMA_SASS_LD: "TMA load instructions", TMA_SASS_ST: "TMA store instructions",
    TMA_SASS_RED: "TMA reduction instructions",
}

# SASS opcodes (no modifiers) of these forms, for the SASS reconciliation: (space, class)
SASS_OPCODES = {
    "UTMALDG": ("global", KIND_TENSOR), "UTMASTG": ("global", KIND_TENSOR), "UTMAREDG": ("global", KIND_TENSOR),
    "UTMAPF": ("global", KIND_TENSOR), "UBLKCP": ("global", KIND_BULK), "UBLKRED": ("global", KIND_BULK),
    "UBLKPF": ("global", KIND_BULK),
}
# PTX lines that build a tensor map on the device (Triton's tl.make_tensor_descriptor):
# ptxas makes shared loads and stores of them that come from no PTX memory instruction
BUILDS_MAP = re.compile(r"^(@!?%?[\w$]+\s+)?tensormap\.(replace|cp_fenceproxy)\b")

_OPCODE_TENSOR = re.compile(r"^cp\.(reduce\.)?async\.bulk\.(prefetch\.)?tensor\.([1-5])d\.")
_OPCODE_BULK = re.compile(r"^cp\.(reduce\.)?async\.bulk\.(prefetch\.)?(shared|global|L2)")


@dataclass(frozen=True)
class Form:
    """What the opcode of one TMA / bulk instruction says."""

    kind: str                 # "tma" | "bulk"
    direction: str            # "load" (global -> shared) | "store" | "reduce" (shared -> global)
                              # | "prefetch" (global -> L2) | "copy" (shared::cta -> shared::cluster)
    rank: int                 # tensor forms: 1..5; bulk: 0
    mode: str                 # "tile" | "im2col" | "im2col::w" | "tile::gather4" | ...; bulk: ""
    multicast: bool
    cache_hint: bool
    mbarrier: bool
    redop: str                # reductions: "add", "min", ... ("" otherwise)
    dtype: str                # bulk reductions: ".u32" ...

    @property
    def recorded_fully(self) -> bool:
        """Can warpviz expand it into its accesses? (im2col and gather4 are recorded, not expanded.)"""
        return self.kind == KIND_BULK or self.mode == "tile"


def match(opcode: str) -> Form | None:
    """The form of a TMA / bulk-copy opcode, or None (anything else, ``cp.async.bulk.commit_group``
    and ``wait_group`` included: they move nothing)."""
    parts = opcode.split(".")
    if len(parts) < 4 or parts[0] != "cp":
        return None
    reduce = parts[1] == "reduce"
    rest = parts[2:] if reduce else parts[1:]
    if rest[:2] != ["async", "bulk"]:
        return None
    if len(rest) > 2 and rest[2] in ("commit_group", "wait_group"):
        return None
    m = _OPCODE_TENSOR.match(opcode)
    mode = ""
    rank = 0
    if m:
        kind = KIND_TENSOR
        rank = int(m.group(3))
        mode = "tile"
        for p in parts:
            if p.startswith(("im2col", "tile::", "im2col_no_offs")):
                mode = p
    elif _OPCODE_BULK.match(opcode):
        kind = KIND_BULK
    else:
        return None
    prefetch = "prefetch" in parts
    spaces = [p for p in parts if p.split("::")[0] in ("shared", "global")]
    if prefetch:
        direction = "prefetch"
    elif reduce:
        direction = "reduce"
    elif spaces and spaces[0].startswith("shared"):
        direction = "copy" if len(spaces) > 1 and spaces[1].startswith("shared") else "load"
    else:
        direction = "store"
    if reduce and spaces and spaces[0].startswith("shared"):
        direction = "copy"          # cp.reduce.async.bulk.shared::cluster.shared::cta: shared -> shared
    redops = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
    redop = next((p for p in parts if p in redops), "") if reduce else ""
    dtype = next((p for p in parts[2:] if re.fullmatch(r"(u|s|f|b|bf)\d+|noftz", p) and p != "noftz"), "")
    return Form(kind, direction, rank, mode, any(p.startswith("multicast") for p in parts),
                any(p.endswith("cache_hint") for p in parts), any(p.startswith("mbarrier") for p in parts),
                redop, dtype)


def trace_kind(opcode: str) -> tuple[str, str, str] | None:
    """(trace kind, direction, space) for the instrumenter's instruction table, or None."""
    f = match(opcode)
    if f is None:
        return None
    return f.kind, f.direction, "global"


@dataclass(frozen=True)
class Operands:
    """The operand texts of one instruction (registers, immediates or symbols as written)."""

    map: str = ""                     # tensor forms: the tensor map's address
    coords: tuple[str, ...] = ()      # tensor forms: one per dimension
    shared: str = ""                  # the shared address (destination of a load, source of a store)
    shared2: str = ""                 # copy: the destination in the cluster's shared memory
    global_: str = ""                 # bulk forms: the global address
    size: str = ""                    # bulk forms: bytes
    mbarrier: str = ""
    cta_mask: str = ""                # multicast: 16-bit mask of the cluster's CTAs
    policy: str = ""                  # .L2::cache_hint: the 64-bit cache policy
    im2col: tuple[str, ...] = ()      # im2col offsets (16-bit each)


def split_top(text: str) -> list[str]:
    """Operands split at the commas outside brackets and braces."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


class OperandError(ValueError):
    pass


def parse_operands(form: Form, text: str) -> Operands:
    """The operands of an instruction of ``form`` (its text after the opcode, no ``;``)."""
    ops = split_top(text)
    brackets = [o for o in ops if o.startswith("[")]
    plain = [o for o in ops if not o.startswith(("[", "{"))]
    braces = [o for o in ops if o.startswith("{")]

    def inner(o: str) -> str:
        return o.strip()[1:-1].strip()

    if form.kind == KIND_TENSOR:
        tm = next((b for b in brackets if "{" in b), None)
        if tm is None:
            raise OperandError("no [tensorMap, {coordinates}] operand")
        body = inner(tm)
        head, _, coords = body.partition(",")
        coords = coords.strip()
        if not (coords.startswith("{") and coords.endswith("}")):
            raise OperandError(f"the coordinates `{coords}` are not a {{...}} vector")
        cs = tuple(c.strip() for c in coords[1:-1].split(",") if c.strip())
        if len(cs) != form.rank and form.mode == "tile":
            raise OperandError(f"{len(cs)} coordinates for a {form.rank}-D copy")
        others = [inner(b) for b in brackets if b is not tm]
        shared = mbar = ""
        if form.direction == "load":
            # [dstMem], [tensorMap, coords], [mbar]
            shared = others[0] if others else ""
            mbar = others[1] if len(others) > 1 else ""
        elif form.direction in ("store", "reduce"):
            shared = others[0] if others else ""
        im2col = tuple(c.strip() for b in braces for c in b[1:-1].split(",") if c.strip())
        mask, policy = _tail(form, plain)
        return Operands(map=head.strip(), coords=cs, shared=shared, mbarrier=mbar, cta_mask=mask, policy=policy,
                        im2col=im2col)
    # bulk: [dst], [src], size[, [mbar]][, ctaMask][, policy][, byteMask]
    addr = [inner(b) for b in brackets]
    size = plain[0] if plain else ""
    rest = plain[1:]
    if form.direction == "prefetch":
        return Operands(global_=addr[0] if addr else "", size=size, policy=rest[0] if form.cache_hint and rest else "")
    if form.direction == "load":
        mask, policy = _tail(form, rest)
        return Operands(shared=addr[0] if addr else "", global_=addr[1] if len(addr) > 1 else "", size=size,
                        mbarrier=addr[2] if len(addr) > 2 else "", cta_mask=mask, policy=policy)
    if form.direction == "copy":
        return Operands(shared2=addr[0] if addr else "", shared=addr[1] if len(addr) > 1 else "", size=size,
                        mbarrier=addr[2] if len(addr) > 2 else "")
    return Operands(global_=addr[0] if addr else "", shared=addr[1] if len(addr) > 1 else "", size=size,
                    policy=rest[0] if form.cache_hint and rest else "")


def _tail(form: Form, plain: list[str]) -> tuple[str, str]:
    """(ctaMask, cache policy) among the plain operands after the brackets."""
    k = 0
    mask = policy = ""
    if form.multicast and k < len(plain):
        mask = plain[k]
        k += 1
    if form.cache_hint and k < len(plain):
        policy = plain[k]
    return mask, policy


# ---------------------------------------------------------------------------- the record

# payload layout (32 x 8 bytes, little-endian): slots 0..15 the tensor map's 128 bytes; then
SLOT_COORDS = 16            # 16, 17, 18 (low word): coordinates 0..4 as s32
SLOT_SHARED = 18            # high word: the shared address (shared window offset)
SLOT_MBAR = 19              # low word: the mbarrier's shared address; high word: the multicast mask
SLOT_POLICY = 20            # the 64-bit cache policy
SLOT_ADDRESS = 21           # tensor forms: the tensor map's generic address; bulk: the global address
                            # (copy: the destination's shared::cluster address)
SLOT_SIZE = 22              # low word: bulk size in bytes; high word: the number of issuing lanes in the warp
SLOT_IM2COL = 23            # im2col offsets: 4 x 16 bits
SLOT_LANE = 24              # low word: the issuing lane (0xffffffff: none issued); high word: 1 + rank among issuers


def recording_block(ins, widths: dict, symbols: set, instr_id: int, prologue, address_code, reg_bits,
                    ctl_symbol: str, record_bytes: int) -> list[str]:
    """The straight-line PTX recorded before ``ins`` (a ``viz.trace.ptx.MemInstr`` of kind
    ``tma`` or ``bulk``). No branch: the kernel's control flow stays as it is. ``prologue``,
    ``address_code`` and ``reg_bits`` are the instrumenter's (``viz.trace.ptx``).

    The warp's leader takes max(1, issuing lanes) record slots with one atomic; each issuing
    lane writes its own record (header + 256-byte payload); a warp with no issuing lane
    writes one record with no lane (header word 5 = 0), so every warp-level execution is
    known. Header words: id, block, warp, active, predicate, issuing lane's bit, 0, flags 2."""
    form = match(ins.opcode)
    m = re.match(r"^(?:@!?%?[\w$]+\s+)?[a-z][\w.:]*\s+(.*?);?\s*(//.*)?$", ins.ptx.strip())
    ops = parse_operands(form, m.group(1) if m else "")
    c = ["{", ".reg .pred %wvp<8>;", ".reg .b32 %wvr<16>;", ".reg .b64 %wvd<8>;", ".reg .b32 %wtr<24>;",
         ".reg .b64 %wtd<32>;", "activemask.b32 %wvr0;"]
    if ins.predicate:
        c.append(f"vote.sync.ballot.b32 %wvr1, {ins.predicate}, %wvr0;")
    else:
        c.append("mov.b32 %wvr1, %wvr0;")
    prologue(c)
    c += [
        "popc.b32 %wtr0, %wvr1;",                    # issuing lanes
        "max.u32 %wtr1, %wtr0, 1;",                  # record slots this warp takes
        "and.pred %wvp5, %wvp0, %wvp4;",
        f"ld.const.u64 %wvd3, [{ctl_symbol}+8];",
        "mov.u32 %wvr11, -1;",
        "@%wvp5 atom.global.add.u32 %wvr11, [%wvd3], %wtr1;",
        "shfl.sync.idx.b32 %wvr11, %wvr11, %wvr5, 31, %wvr0;",
        "mov.u32 %wtr2, %lanemask_lt;",
        "and.b32 %wtr2, %wtr2, %wvr1;",
        "popc.b32 %wtr2, %wtr2;",                    # rank among the issuing lanes
        "shr.b32 %wtr3, %wvr1, %wvr4;",
        "and.b32 %wtr3, %wtr3, 1;",
        "setp.ne.u32 %wvp1, %wtr3, 0;",              # this lane issues
        "setp.eq.u32 %wvp2, %wtr0, 0;",
        "and.pred %wvp2, %wvp2, %wvp0;",             # no lane issues: the leader writes
        "or.pred %wvp3, %wvp1, %wvp2;",
        "add.u32 %wtr4, %wvr11, %wtr2;",
        f"ld.const.u32 %wvr12, [{ctl_symbol}+16];",
        "setp.lt.u32 %wvp6, %wtr4, %wvr12;",
        "setp.ne.u32 %wvp7, %wvr11, -1;",
        "and.pred %wvp6, %wvp6, %wvp7;",
        "and.pred %wvp6, %wvp6, %wvp3;",             # this lane writes a record
        "and.pred %wvp7, %wvp6, %wvp1;",             # ... with its operands
        f"ld.const.u64 %wvd4, [{ctl_symbol}];",
        f"mul.wide.u32 %wvd5, %wtr4, {record_bytes};",
        "add.s64 %wvd4, %wvd4, %wvd5;",
        "mov.u32 %wtr5, 1;",
        "shl.b32 %wtr5, %wtr5, %wvr4;",
        "selp.b32 %wtr5, %wtr5, 0, %wvp1;",
        f"mov.u32 %wvr13, {instr_id};",
        "mov.u32 %wvr14, 0;",
        f"mov.u32 %wvr15, {RECORD_FLAG};",
        "@%wvp6 st.global.v4.u32 [%wvd4], {%wvr13, %wvr6, %wvr7, %wvr0};",
        "@%wvp6 st.global.v4.u32 [%wvd4+16], {%wvr1, %wtr5, %wvr14, %wvr15};",
    ]
    for k in range(PAYLOAD_SLOTS):
        c.append(f"mov.u64 %wtd{k}, 0;")
    # the tensor map: its 128 bytes through a generic address, by the lanes that write operands
    if form.kind == KIND_TENSOR:
        c += _generic_address(ops.map, "%wtd31", widths, symbols, reg_bits)
        for k in range(0, 16, 2):
            c.append(f"@%wvp7 ld.v2.u64 {{%wtd{k}, %wtd{k + 1}}}, [%wtd31+{8 * k}];")
        c.append(f"mov.u64 %wtd{SLOT_ADDRESS}, %wtd31;")
        coords = list(ops.coords[:MAX_RANK]) + ["0"] * (MAX_RANK - min(MAX_RANK, len(ops.coords)))
        for k in range(0, 6, 2):
            lo = _u32(coords[k] if k < MAX_RANK else "0", "%wtr6", reg_bits)
            hi = _u32(coords[k + 1], "%wtr7", reg_bits) if k + 1 < MAX_RANK else \
                _u32(ops.shared or "0", "%wtr7", reg_bits, address=True)
            c += lo + hi + [f"mov.b64 %wtd{SLOT_COORDS + k // 2}, {{%wtr6, %wtr7}};"]
    else:
        c += _u32("0", "%wtr6", reg_bits) + _u32(ops.shared or "0", "%wtr7", reg_bits, address=True)
        c.append(f"mov.b64 %wtd{SLOT_SHARED}, {{%wtr6, %wtr7}};")
        target = ops.shared2 if form.direction == "copy" else ops.global_
        c += _u64(target or "0", f"%wtd{SLOT_ADDRESS}", reg_bits, symbols)
    c += _u32(ops.mbarrier or "0", "%wtr8", reg_bits, address=True)
    c += _u32(ops.cta_mask or "0", "%wtr9", reg_bits)
    c.append(f"mov.b64 %wtd{SLOT_MBAR}, {{%wtr8, %wtr9}};")
    if ops.policy:
        c += _u64(ops.policy, f"%wtd{SLOT_POLICY}", reg_bits, symbols)
    c += _u32(ops.size or "0", "%wtr10", reg_bits)
    c.append(f"mov.b64 %wtd{SLOT_SIZE}, {{%wtr10, %wtr0}};")
    offs = list(ops.im2col[:4]) + ["0"] * (4 - min(4, len(ops.im2col)))
    for k, o in enumerate(offs):
        c += _u32(o, f"%wtr{11 + k}", reg_bits)
        c.append(f"and.b32 %wtr{11 + k}, %wtr{11 + k}, 65535;")
    c += ["shl.b32 %wtr12, %wtr12, 16;", "or.b32 %wtr11, %wtr11, %wtr12;",
          "shl.b32 %wtr14, %wtr14, 16;", "or.b32 %wtr13, %wtr13, %wtr14;",
          f"mov.b64 %wtd{SLOT_IM2COL}, {{%wtr11, %wtr13}};",
          "selp.b32 %wtr15, %wvr4, -1, %wvp1;",
          "add.u32 %wtr16, %wtr2, 1;",
          "selp.b32 %wtr16, %wtr16, 0, %wvp1;",
          f"mov.b64 %wtd{SLOT_LANE}, {{%wtr15, %wtr16}};"]
    for k in range(0, PAYLOAD_SLOTS, 2):
        c.append(f"@%wvp6 st.global.v2.u64 [%wvd4+{32 + 8 * k}], {{%wtd{k}, %wtd{k + 1}}};")
    c.append("}")
    return c


def recorder_sass(ins) -> dict[str, int]:
    """SASS memory opcodes the recording block of one TMA / bulk instruction adds beyond a
    plain site's one ATOMG and three STG (the instrumenter's SASS guard): 15 more STG (the
    header and the 256-byte payload, 16 bytes each: 18) and, for a tensor form, 8 generic LD
    of the tensor map (measured: ptxas 13.0, Triton's copy and nvcc's probe kernel)."""
    if ins.kind not in TRACE_KINDS:
        return {}
    out = {"STG": 2 + PAYLOAD_SLOTS // 2 - 3}
    if ins.kind == KIND_TENSOR:
        out["LD"] = 8
    return out


_IMM = re.compile(r"-?(0[xX][0-9a-fA-F]+|\d+)")


def _u32(op: str, dst: str, reg_bits, address: bool = False) -> list[str]:
    """PTX putting a 32-bit view of operand ``op`` (register, immediate, ``reg+off``) in ``dst``."""
    op = op.strip().replace(" ", "")
    if _IMM.fullmatch(op):
        return [f"mov.u32 {dst}, {int(op, 0) & 0xFFFFFFFF};"]
    m = re.fullmatch(r"(%[\w$]+)(?:\+(-?(?:0[xX][0-9a-fA-F]+|\d+)))?", op)
    if not m:
        # a symbol (a __shared__ variable): its shared address
        m2 = re.fullmatch(r"([A-Za-z_$][\w$]*)(?:\+(-?(?:0[xX][0-9a-fA-F]+|\d+)))?", op)
        if not m2:
            raise OperandError(f"operand `{op}` is not a register, a number or a symbol")
        out = [f"mov.u32 {dst}, {m2.group(1)};"]
        if m2.group(2):
            out.append(f"add.u32 {dst}, {dst}, {int(m2.group(2), 0)};")
        return out
    reg, off = m.group(1), m.group(2)
    bits = reg_bits(reg)
    if bits == 64:
        out = [f"cvt.u32.u64 {dst}, {reg};"]
    elif bits == 16:
        out = [f"cvt.u32.u16 {dst}, {reg};"]
    else:
        out = [f"mov.b32 {dst}, {reg};"]
    if off:
        out.append(f"add.u32 {dst}, {dst}, {int(off, 0)};")
    return out


def _u64(op: str, dst: str, reg_bits, symbols) -> list[str]:
    op = op.strip().replace(" ", "")
    if _IMM.fullmatch(op):
        return [f"mov.u64 {dst}, {int(op, 0) & 0xFFFFFFFFFFFFFFFF};"]
    m = re.fullmatch(r"([%\w$]+)(?:\+(-?(?:0[xX][0-9a-fA-F]+|\d+)))?", op)
    if not m:
        raise OperandError(f"operand `{op}` is not a register, a number or a symbol")
    reg, off = m.group(1), m.group(2)
    if reg.startswith("%"):
        bits = reg_bits(reg)
        out = [f"mov.b64 {dst}, {reg};"] if bits == 64 else [f"cvt.u64.u32 {dst}, {reg};"]
    else:
        out = [f"mov.u64 {dst}, {reg};"]
    if off:
        out.append(f"add.s64 {dst}, {dst}, {int(off, 0)};")
    return out


def _generic_address(op: str, dst: str, widths, symbols, reg_bits) -> list[str]:
    """The tensor map's generic address: a register holds one (Triton's and nvcc's
    ``cvta.param`` / ``cvta.global``); a kernel parameter's name is made generic with
    ``cvta.param``, a ``.const`` / ``.global`` variable's with ``cvta.const`` / ``cvta.global``."""
    op = op.strip().replace(" ", "")
    m = re.fullmatch(r"([%\w$]+)(?:\+(-?(?:0[xX][0-9a-fA-F]+|\d+)))?", op)
    if not m:
        raise OperandError(f"tensor map operand `{op}` is not a register or a symbol")
    reg, off = m.group(1), m.group(2)
    if reg.startswith("%"):
        out = [f"mov.b64 {dst}, {reg};"] if reg_bits(reg) == 64 else [f"cvt.u64.u32 {dst}, {reg};"]
    else:
        space = symbols.get(reg, "param") if isinstance(symbols, dict) else ("global" if reg in symbols else "param")
        out = [f"mov.u64 {dst}, {reg};", f"cvta.{space}.u64 {dst}, {dst};"]
    if off:
        out.append(f"add.s64 {dst}, {dst}, {int(off, 0)};")
    return out


# ---------------------------------------------------------------------------- the tensor map

# CUtensorMapDataType (the driver's enum) -> the map's element type field (HW_DTYPES, below)
CUDA_TO_HW = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 9, 9: 10, 10: 8, 11: 7, 12: 8}
SWIZZLE_NAMES = {0: "none", 1: "32B", 2: "64B", 3: "128B", 4: "128B.atom32B", 5: "128B.atom32B.flip8B",
                 6: "128B.atom64B"}
SWIZZLE_BITS = {0: 0, 1: 1, 2: 2, 3: 3}   # CuTe Swizzle<B,4,3> on the shared byte address
INTERLEAVE_NAMES = {0: "none", 1: "16B", 2: "32B"}


@dataclass(frozen=True)
class TensorMap:
    """A decoded CUtensorMap (dimension 0 innermost)."""

    address: int
    dtype: int                      # the element type field (HW_DTYPES: 7 = f32, 6 = f16 ...)
    rank: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]        # bytes, of dimensions 1..rank-1
    box: tuple[int, ...]
    estrides: tuple[int, ...]
    interleave: int = 0
    swizzle: int = 0
    l2: int = 0
    oob_nan: bool = False
    im2col: bool = False

    @property
    def esize(self) -> int:
        return HW_DTYPES.get(self.dtype, (1, ""))[0]

    @property
    def box_elements(self) -> tuple[int, ...]:
        """Elements the box holds along each dimension: ceil(box / element stride)."""
        return tuple(-(-b // max(1, e)) for b, e in zip(self.box, self.estrides))

    @property
    def box_bytes(self) -> int:
        n = self.esize
        for x in self.box_elements:
            n *= x
        return n

    def describe(self) -> str:
        dims = " x ".join(str(d) for d in reversed(self.dims))
        box = " x ".join(str(b) for b in reversed(self.box))
        return (f"{HW_DTYPES.get(self.dtype, (0, self.dtype))[1]} tensor [{dims}] at {self.address:#x}, box [{box}], "
                f"swizzle {SWIZZLE_NAMES.get(self.swizzle, self.swizzle)}")


class MapError(ValueError):
    """Tensor-map bytes that decode to no valid map (a record of a map that was not built yet,
    or bytes of another layout)."""


# The byte layout of the 128-byte CUtensorMap, measured on the H200 (driver 580.159, CUDA 13.0)
# with tools/gpu/probe_tma_maps.py: maps encoded by cuTensorMapEncodeTiled/Im2col with one field
# changed at a time (tests/data/tma/tensormaps.json). In 32-bit little-endian words:
#   w0, w1   the global address (64 bits, as given)
#   w2       bit 0 im2col; bits 4..6 rank - 1; 7..10 element type (HW_DTYPES); 11..12 interleave;
#            13..14 swizzle (0 none, 1 32B, 2 64B, 3 128B); 15 out-of-bounds NaN fill;
#            16 tf32 rounding; 17..18 L2 promotion
#   w3..w6   global stride of dimensions 1..4, in bytes >> 4 (low 32 bits); w7 bits 0..3 the
#            high bits of dimension 1's (strides of 2**36 bytes and more)
#   w8..w12  global size of dimensions 0..4, minus 1
#   w13      bits 3k..3k+2: element stride of dimension k, minus 1; bits 24..31: box size of
#            dimension 0 minus 1 (im2col: channels per pixel minus 1)
#   w14      bits 8(k-1)..: box size of dimension k (1..4) minus 1 (im2col: the corners)
#   w15      im2col: pixels per column minus 1
#   w16      the box's bytes (the driver's; a map built with tensormap.replace leaves it 0)
#   w18      the shared alignment the swizzle needs (16, 256, 512, 1024)
# The same fields tensormap.replace writes (its SASS edits bytes 0x8, 0xc, 0x1c, 0x20.., 0x34, 0x38).
MAP_LAYOUT: dict[str, tuple[int, int]] = {
    "address": (0, 64), "im2col": (64, 1), "rank": (68, 3), "dtype": (71, 4), "interleave": (75, 2),
    "swizzle": (77, 2), "oob": (79, 1), "tf32": (80, 1), "l2": (81, 2), "stride": (96, 32), "stride_hi": (224, 4),
    "dim": (256, 32), "estride": (416, 3), "box0": (440, 8), "box": (448, 8), "pixels": (480, 8), "box_bytes": (512, 32),
}
_STEP: dict[str, int] = {"stride": 32, "dim": 32, "estride": 3, "box": 8}
# the element type field (w2 bits 7..10): the PTX / hardware numbering, not CUtensorMapDataType's
HW_DTYPES = {0: (1, "u8"), 1: (2, "u16"), 2: (4, "u32"), 3: (4, "s32"), 4: (8, "u64"), 5: (8, "s64"), 6: (2, "f16"),
             7: (4, "f32"), 8: (4, "f32.ftz"), 9: (8, "f64"), 10: (2, "bf16")}


def _field(v: int, name: str, k: int = 0) -> int:
    off, bits = MAP_LAYOUT[name]
    return (v >> (off + k * _STEP.get(name, 0))) & ((1 << bits) - 1)


def decode_map(raw: bytes) -> TensorMap:
    """The tensor map encoded in ``raw`` (128 bytes), by ``MAP_LAYOUT``; MapError where the
    bytes are no map this warpviz reads (all zero: not built yet; an element type it does
    not know)."""
    if len(raw) != 128:
        raise MapError(f"a tensor map is 128 bytes, not {len(raw)}")
    v = int.from_bytes(raw, "little")
    if v == 0:
        raise MapError("the tensor map's 128 bytes are all zero when the copy is issued")
    rank = _field(v, "rank") + 1
    if rank > MAX_RANK:
        raise MapError(f"the tensor map says rank {rank}")
    code = _field(v, "dtype")
    if code not in HW_DTYPES:
        raise MapError(f"the tensor map's element type {code} is not one warpviz knows")
    dims = tuple(_field(v, "dim", k) + 1 for k in range(rank))
    strides = [_field(v, "stride", k) << 4 for k in range(rank - 1)]
    if strides:
        strides[0] |= _field(v, "stride_hi") << 36
    box = (_field(v, "box0") + 1,) + tuple(_field(v, "box", k - 1) + 1 for k in range(1, rank))
    estr = tuple(_field(v, "estride", k) + 1 for k in range(rank))
    return TensorMap(_field(v, "address"), code, rank, dims, tuple(strides), box, estr, _field(v, "interleave"),
                     _field(v, "swizzle"), _field(v, "l2"), bool(_field(v, "oob")), bool(_field(v, "im2col")))


def encode_map(tm: TensorMap) -> bytes:
    """The 128 bytes of ``tm`` in the layout ``decode_map`` reads (the fields the hardware uses;
    for tests, scenarios and pictures: the driver's own encoding is ``cuTensorMapEncodeTiled``)."""
    v = 0

    def put(name: str, value: int, k: int = 0) -> None:
        nonlocal v
        off, bits = MAP_LAYOUT[name]
        v |= (int(value) & ((1 << bits) - 1)) << (off + k * _STEP.get(name, 0))
    put("address", tm.address)
    put("im2col", int(tm.im2col))
    put("rank", tm.rank - 1)
    put("dtype", tm.dtype)
    put("interleave", tm.interleave)
    put("swizzle", tm.swizzle)
    put("oob", int(tm.oob_nan))
    put("l2", tm.l2)
    for k, s_ in enumerate(tm.strides):
        put("stride", s_ >> 4, k)
        if k == 0:
            put("stride_hi", s_ >> 36)
    for k, d in enumerate(tm.dims):
        put("dim", d - 1, k)
    for k, e in enumerate(tm.estrides):
        put("estride", e - 1, k)
    put("box0", tm.box[0] - 1)
    for k in range(1, tm.rank):
        put("box", tm.box[k] - 1, k - 1)
    put("box_bytes", tm.box_bytes)
    return v.to_bytes(128, "little")


@dataclass(frozen=True)
class Record:
    """One issued copy (or a warp's execution with no lane issuing: ``lane`` = -1)."""

    lane: int
    issuers: int
    rank_in_warp: int
    map_bytes: bytes
    coords: tuple[int, ...]
    shared: int
    mbarrier: int
    cta_mask: int
    policy: int
    address: int
    size: int
    im2col: tuple[int, ...]


def decode_record(slots) -> Record:
    """A record's payload (32 uint64 slots, or its 256 bytes) as a ``Record``."""
    raw = bytes(np.ascontiguousarray(np.asarray(slots, np.uint64)).view(np.uint8)) if not isinstance(
        slots, (bytes, bytearray)) else bytes(slots)
    if len(raw) != 8 * PAYLOAD_SLOTS:
        raise ValueError(f"a TMA record's payload is {8 * PAYLOAD_SLOTS} bytes, not {len(raw)}")
    w = struct.unpack("<64I", raw)
    s = lambda k: struct.unpack("<i", struct.pack("<I", k))[0]  # noqa: E731
    q = struct.unpack("<32Q", raw)
    coords = (s(w[32]), s(w[33]), s(w[34]), s(w[35]), s(w[36]))
    lane = w[2 * SLOT_LANE]
    return Record(-1 if lane == 0xFFFFFFFF else lane, w[2 * SLOT_SIZE + 1], max(0, w[2 * SLOT_LANE + 1] - 1),
                  raw[:128], coords, w[2 * SLOT_SHARED + 1], w[2 * SLOT_MBAR], w[2 * SLOT_MBAR + 1],
                  q[SLOT_POLICY], q[SLOT_ADDRESS], w[2 * SLOT_SIZE],
                  (w[2 * SLOT_IM2COL] & 0xFFFF, w[2 * SLOT_IM2COL] >> 16, w[2 * SLOT_IM2COL + 1] & 0xFFFF,
                   w[2 * SLOT_IM2COL + 1] >> 16))


# ---------------------------------------------------------------------------- expansion

@dataclass
class Expansion:
    """What one copy touches: its global rows (address, bytes) in bounds, their sectors and
    lines, the shared bytes (offset, bytes) in the swizzled layout, and the box's bytes."""

    rows: list[tuple[int, int]] = field(default_factory=list)     # global (address, bytes), in bounds
    sectors: int = 0
    lines: int = 0
    global_bytes: int = 0          # bytes in bounds
    shared: list[tuple[int, int]] = field(default_factory=list)   # shared (offset, bytes) written / read
    shared_bytes: int = 0          # the box's bytes (a load writes out-of-bounds parts filled)
    elements_in_bounds: int = 0
    elements: int = 0
    full_sectors: int = 0          # the sectors of the whole box, as if the tensor went on (a load counts these)


def swizzle_offset(addr, mode: int):
    """The shared byte address a TMA swizzle puts byte ``addr`` at: CuTe Swizzle<B,4,3> on the
    address (bits 4..4+B XOR-ed with bits 7..7+B), B = 1, 2, 3 for 32B, 64B, 128B."""
    b = SWIZZLE_BITS.get(mode, 0)
    if not b:
        return addr
    mask = (1 << b) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def box_rows(tm: TensorMap, coords) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row of the box (its dimension-0 run), as arrays: the row's index in the box
    (outer dimensions, dimension 1 fastest), its first element's global coordinates
    (n_rows, rank), and whether its outer coordinates are in bounds."""
    n = tm.box_elements
    c = np.asarray(list(coords)[:tm.rank], np.int64)
    outer = [np.arange(n[d], dtype=np.int64) * tm.estrides[d] + c[d] for d in range(1, tm.rank)]
    if outer:
        grids = np.meshgrid(*outer, indexing="ij")           # dimension 1 first
        cols = [g.reshape(-1, order="F") for g in grids]     # dimension 1 fastest
        coords_rows = np.stack([np.full(cols[0].size, c[0])] + cols, axis=1)
    else:
        coords_rows = c.reshape(1, 1)
    ok = np.ones(coords_rows.shape[0], bool)
    for d in range(1, tm.rank):
        ok &= (coords_rows[:, d] >= 0) & (coords_rows[:, d] < tm.dims[d])
    return np.arange(coords_rows.shape[0]), coords_rows, ok


LOAD_CHUNK = 128      # bytes of a box row the TMA fetches at a time (measured: the sectors of a load)


def load_sectors(tm: TensorMap, coords, rows=None, ok=None) -> int:
    """The sectors a TMA load counts (``l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld``),
    as the H200 counts them (tools/gpu/tma_validate.sh, 46 one-copy probes): every row of the
    box (``box[0]`` elements from the box's first column, whatever the element strides) is
    fetched in chunks of 128 bytes from the row's start; a chunk's bytes in bounds count the
    32-byte sectors their addresses touch, its bytes out of bounds (columns outside the
    tensor, or the whole chunk of a row outside it) count 32 bytes a sector, rounded up. So a
    box out of bounds costs as much as one in bounds: a 1000 x 1000 array in 64 x 64 boxes
    reads 131,072 sectors, as a 1024 x 1024 one; a 1-D box of 256 fp32 starting 76 elements
    before the end, 16 bytes into a sector: 35."""
    e = tm.esize
    if rows is None:
        _, rows, ok = box_rows(tm, coords)
    strides = np.asarray((0,) + tuple(tm.strides), np.int64)
    base = tm.address + (rows[:, 1:] * strides[1:tm.rank][None, :]).sum(axis=1) if tm.rank > 1 else \
        np.full(rows.shape[0], tm.address, np.int64)
    x0 = int(coords[0])
    row_bytes = tm.box[0] * e
    k = np.arange(0, row_bytes, LOAD_CHUNK, dtype=np.int64)               # chunk offsets in the row
    lo = x0 * e + k[None, :]                                                # byte offsets in the tensor's row
    hi = np.minimum(lo + LOAD_CHUNK, x0 * e + row_bytes)
    lo = np.broadcast_to(lo, (rows.shape[0], k.size))
    hi = np.broadcast_to(hi, (rows.shape[0], k.size))
    end = tm.dims[0] * e
    ilo = np.clip(lo, 0, end)
    ihi = np.clip(hi, 0, end)
    inside = (ihi > ilo) & ok[:, None]
    a0 = base[:, None] + ilo
    a1 = base[:, None] + ihi - 1
    in_sec = np.where(inside, a1 // 32 - a0 // 32 + 1, 0)
    left = np.where(ok[:, None], np.clip(np.minimum(hi, 0) - lo, 0, None), hi - lo)
    right = np.where(ok[:, None], np.clip(hi - np.maximum(lo, end), 0, None), 0)
    out_sec = -(-left // 32) + -(-right // 32)
    return int(in_sec.sum() + out_sec.sum())


def expand(tm: TensorMap, coords, shared: int = 0, with_shared: bool = True) -> Expansion:
    """The global rows, sectors and lines of one tile-mode copy of ``tm``'s box at ``coords``
    (dimension 0 first) and, with ``with_shared``, the shared bytes it writes (a load) or
    reads (a store) at shared address ``shared``, in the map's swizzle.

    Global side: each row of the box (a run along dimension 0) in bounds is fetched as the
    bytes of its in-bounds elements; a row's sectors are the 32-byte sectors those bytes
    touch, counted row by row (as the scenario kind ``tma.load``, measured on the H100);
    rows and elements out of bounds fetch nothing. With an element stride along dimension 0
    every element is its own run."""
    e = tm.esize
    n = tm.box_elements
    _, rows, ok = box_rows(tm, coords)
    x0 = int(coords[0])
    es0 = tm.estrides[0]
    xs = x0 + np.arange(n[0], dtype=np.int64) * es0
    inb = (xs >= 0) & (xs < tm.dims[0])
    out = Expansion()
    out.elements = int(np.prod(n))
    out.shared_bytes = tm.box_bytes
    strides = np.asarray((0,) + tuple(tm.strides), np.int64)
    out.full_sectors = load_sectors(tm, coords, rows, ok)
    if ok.any() and inb.any():
        base = tm.address + (rows[ok][:, 1:] * strides[1:tm.rank][None, :]).sum(axis=1) if tm.rank > 1 else \
            np.full(int(ok.sum()), tm.address, np.int64)
        # a row is fetched whole, from its first to its last element in bounds (element strides
        # along dimension 0 pick elements of it, measured: the sectors do not change)
        first = int(xs[inb][0])
        last = int(xs[inb][-1])
        starts = base + first * e
        lengths = np.full(starts.size, (last - first + 1) * e, np.int64)
        lo, hi = starts // 32, (starts + lengths - 1) // 32
        out.sectors = int((hi - lo + 1).sum())
        out.lines = int(((starts + lengths - 1) // 128 - starts // 128 + 1).sum())
        out.global_bytes = int(inb.sum()) * e * int(starts.size)
        out.rows = list(zip(starts.tolist(), lengths.tolist()))
        out.elements_in_bounds = int(ok.sum()) * int(inb.sum())
    if with_shared:
        row_bytes = n[0] * e
        nrows = rows.shape[0]
        lin = shared + np.arange(nrows, dtype=np.int64) * row_bytes
        if tm.swizzle in SWIZZLE_BITS and tm.swizzle:
            # 16-byte chunks move: list each chunk where it lands
            chunks = (lin[:, None] + np.arange(0, row_bytes, 16, dtype=np.int64)[None, :]).reshape(-1)
            phys = swizzle_offset(chunks, tm.swizzle)
            size = min(16, row_bytes)
            out.shared = [(int(a), size) for a in phys.tolist()]
        else:
            out.shared = [(int(a), int(row_bytes)) for a in lin.tolist()]
    return out


def expand_bulk(address: int, size: int) -> Expansion:
    """A bulk copy's global side: one run of ``size`` bytes at ``address``."""
    out = Expansion()
    if size > 0:
        out.rows = [(address, size)]
        out.sectors = out.full_sectors = (address + size - 1) // 32 - address // 32 + 1
        out.lines = (address + size - 1) // 128 - address // 128 + 1
        out.global_bytes = size
    return out


def shared_chunks(ins: dict, rec: Record, n: int = 32) -> list[int]:
    """The shared addresses of the first ``n`` 16-byte chunks a copy writes (a load) or reads
    (a store), in the order of the box (row by row), each where the map's swizzle puts it;
    [] where the map cannot be read (the picture then shows no lane)."""
    form = match(str(ins.get("opcode", "")))
    if form is None or rec.lane < 0:
        return []
    if form.kind == KIND_BULK:
        return [rec.shared + 16 * i for i in range(min(n, max(0, rec.size) // 16))]
    try:
        tm = decode_map(rec.map_bytes)
    except MapError:
        return []
    if tm.im2col or tm.box_bytes > MAX_BOX_BYTES:
        return []
    ex = expand(tm, rec.coords[:tm.rank], rec.shared)
    out: list[int] = []
    for a, size in ex.shared:
        for off in range(0, size, 16):
            out.append(a + off)
            if len(out) == n:
                return out
    return out


# ---------------------------------------------------------------------------- captions

def caption(form: Form) -> str:
    """One line saying what the instruction is (English; through tr)."""
    if form.kind == KIND_TENSOR:
        what = {"load": tr("TMA load"), "store": tr("TMA store"), "reduce": tr("TMA reduction"),
                "prefetch": tr("TMA prefetch to L2")}.get(form.direction, tr("TMA copy"))
        return tr("{what}, {rank}-D box through a tensor map ({mode} mode)", what=what, rank=form.rank,
                  mode=form.mode)
    what = {"load": tr("bulk copy global to shared"), "store": tr("bulk copy shared to global"),
            "reduce": tr("bulk reduction shared to global"), "prefetch": tr("bulk prefetch to L2"),
            "copy": tr("bulk copy to the cluster's shared memory")}.get(form.direction, tr("bulk copy"))
    return what


__all__ = ["KIND_CONTROL", "match_control", "control_address", "count_control", "CONTROL_SASS", "KIND_TENSOR", "KIND_BULK", "TRACE_KINDS", "RECORD_FLAG", "count_records", "counters_of", "figures", "summary", "TmaStats", "sass_executions", "Form", "match", "trace_kind", "Operands",
           "parse_operands", "OperandError", "recording_block", "recorder_sass", "TensorMap", "MapError", "decode_map",
           "Record", "decode_record", "Expansion", "expand", "expand_bulk", "swizzle_offset", "box_rows",
           "COUNTERS", "COUNTER_LABELS", "SASS_OPCODES", "BUILDS_MAP", "caption", "MAP_LAYOUT"]


# ---------------------------------------------------------------------------- counting a trace

def sass_executions(issuers: int) -> int:
    """SASS TMA instructions one warp-level execution runs: ptxas issues a TMA from uniform
    registers (``@UP0 UTMALDG.2D [UR4], [UR8]``), so a warp in which several lanes issue
    copies with different operands runs it once per issuing lane; a warp with one or no
    issuing lane runs it once."""
    return max(1, int(issuers))


@dataclass
class TmaStats:
    """One TMA / bulk instruction's figures over a trace's records."""

    form: Form
    warp_executions: int = 0        # warps that executed it (any lane's predicate)
    issued: int = 0                 # copies issued (lanes whose predicate held)
    issuing_warps: int = 0          # warp executions in which a lane issued
    sass_executions: int = 0        # SASS TMA instructions run (sass_executions per warp)
    sass_issuing: int = 0           # ... of them with the predicate on
    full_box_sectors: int = 0       # loads: the sectors of the whole box, out-of-bounds parts included
    sectors: int = 0
    lines: int = 0
    global_bytes: int = 0           # bytes in bounds
    box_bytes: int = 0              # bytes the boxes hold (shared side)
    out_of_bounds_elements: int = 0
    undecoded: int = 0              # issued copies whose tensor map could not be read
    maps: list = field(default_factory=list)       # distinct decoded maps (describe())
    per_record: np.ndarray = None   # sectors of each record
    counters: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    ten: dict = field(default_factory=dict)          # contributions to the ten metrics (control: its LDS/STS)


def _map_of(raw: bytes, cache: dict):
    tm = cache.get(raw)
    if tm is None and raw not in cache:
        try:
            tm = decode_map(raw)
        except MapError as err:
            tm = err
        cache[raw] = tm
    return tm


def count_records(form: Form, payload: np.ndarray, issuer_masks: np.ndarray) -> TmaStats:
    """The figures of one instruction of ``form`` from its records: ``payload`` (n, 32) uint64
    and ``issuer_masks`` (n,) uint32 (the record's issuing lane bit, 0 for a warp in which no
    lane issued)."""
    st = TmaStats(form)
    n = payload.shape[0]
    st.per_record = np.zeros(n, np.int64)
    cache: dict = {}
    for r in range(n):
        rec = decode_record(payload[r])
        if rec.lane < 0 or rec.rank_in_warp == 0:
            st.warp_executions += 1
            st.sass_executions += sass_executions(rec.issuers)
            if rec.lane >= 0:
                st.issuing_warps += 1
                st.sass_issuing += sass_executions(rec.issuers)
        if rec.lane < 0:
            continue
        st.issued += 1
        if form.direction == "prefetch":
            continue
        if form.kind == KIND_BULK:
            ex = expand_bulk(rec.address, rec.size) if form.direction != "copy" else Expansion(shared_bytes=rec.size)
            st.box_bytes += rec.size
        else:
            tm = _map_of(rec.map_bytes, cache)
            if not isinstance(tm, MapError) and tm.box_bytes > MAX_BOX_BYTES:
                tm = MapError(f"the tensor map's box is {tm.box_bytes:,} bytes, more than shared memory holds")
            if isinstance(tm, MapError) or not form.recorded_fully:
                st.undecoded += 1
                if isinstance(tm, MapError) and str(tm) not in st.problems:
                    st.problems.append(str(tm))
                continue
            d = tm.describe()
            if d not in st.maps:
                st.maps.append(d)
            ex = expand(tm, rec.coords[:tm.rank], rec.shared, with_shared=False)
            st.box_bytes += tm.box_bytes
            st.out_of_bounds_elements += ex.elements - ex.elements_in_bounds
            st.full_box_sectors += ex.full_sectors
        st.sectors += ex.sectors
        st.lines += ex.lines
        st.global_bytes += ex.global_bytes
        if form.kind == KIND_BULK:
            st.full_box_sectors += ex.sectors
        st.per_record[r] = ex.full_sectors if form.direction == "load" and form.kind == KIND_TENSOR else ex.sectors
    st.counters = counters_of(st)
    return st


def counters_of(st: TmaStats) -> dict[str, int]:
    """Nsight Compute's counters of one instruction's figures (TRACE_FORMAT.md's TMA rows), as
    the H200 counts them (tools/gpu/probe_tma.sh: Triton's copies, matmul and attention, and
    one-copy CUDA probes):

    * ``sm__inst_executed_pipe_tma`` and ``l1tex__tmain_requests``: every warp-level execution
      of a TMA-pipe instruction, with its (uniform) predicate on or off: a UTMALDG that 4 warps
      reach and 2 issue counts 4 (Triton's 64 x 64 copy: 1,536 = 256 blocks x (4 UTMALDG + a
      UTMACCTL and a UTMACMDFLUSH of the map));
    * ``sm__sass_inst_executed_op_tma_ld`` / ``_st`` / ``_red``: the executions with the
      predicate on (2 of those 4);
    * a load's sectors (``l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld``): the 32-byte
      sectors of every row of the box, out-of-bounds parts included (a 1000 x 1000 fp32 array
      copied in 64 x 64 boxes: 131,072, as for 1024 x 1024); its bytes: 32 per sector (a box of
      16-byte rows: 8 sectors, 256 bytes); a store's or reduction's sectors: those of its bytes
      in bounds (125,000 for the 1000 x 1000 array)."""
    f = st.form
    out: dict[str, int] = {TMA_PIPE: st.sass_executions, TMA_REQUESTS: st.sass_executions}
    if f.direction == "load":
        out[TMA_LD_SECTORS] = st.full_box_sectors
        out[TMA_LD_BYTES] = st.full_box_sectors * 32
        out[TMA_SASS_LD] = st.sass_issuing
    elif f.direction == "store":
        out[TMA_ST_SECTORS] = st.sectors
        out[TMA_SASS_ST] = st.sass_issuing
    elif f.direction == "reduce":
        out[TMA_RED_SECTORS] = st.sectors
        out[TMA_SASS_RED] = st.sass_issuing
    return out


def figures(st: TmaStats) -> dict:
    """The per-access entries of ``analyze --json`` for one TMA / bulk instruction (``tma``) or
    one TMA control instruction (``tma_control``)."""
    f = st.form
    if f.kind == KIND_CONTROL:
        return {"tma_control": {"warp_executions": st.warp_executions, "counters": {**st.ten, **st.counters},
                                "problems": list(st.problems)}}
    d = {"tma": {"form": f.kind, "direction": f.direction, "rank": f.rank, "mode": f.mode, "multicast": f.multicast,
                 "copies": st.issued, "warp_executions": st.warp_executions, "sass_executions": st.sass_executions,
                 "sectors": st.sectors, "lines": st.lines, "global_bytes": st.global_bytes,
                 "sectors_counted": st.full_box_sectors if f.direction == "load" else st.sectors,
                 "box_bytes": st.box_bytes, "out_of_bounds_elements": st.out_of_bounds_elements,
                 "maps": list(st.maps), "not_expanded": st.undecoded, "problems": list(st.problems),
                 "counters": dict(st.counters)}}
    return d


def explain_rows(t: dict) -> list[tuple[str, str, str]]:
    """(figure, value, why) rows of one TMA / bulk copy instruction (``figures``' ``tma`` entry)
    for the Figures panel and ``explain``."""
    n = lambda v: f"{int(v):,}"  # noqa: E731
    rows = [("copies", n(t["copies"]), tr("lanes whose predicate held: each issues one copy of its box")),
            ("sectors", n(t["sectors_counted"]),
             tr("the 32-byte sectors of every row of the boxes; a load counts its whole box, the parts out of "
                "bounds too, a store only its bytes in bounds")),
            ("lines", n(t["lines"]), tr("distinct 128-byte lines of each row in bounds")),
            ("bytes moved", n(32 * t["sectors_counted"]), tr("sectors x 32 B")),
            ("box bytes", n(t["box_bytes"]), tr("bytes the boxes hold in shared memory"))]
    if t["out_of_bounds_elements"]:
        rows.append(("out of bounds", n(t["out_of_bounds_elements"]),
                     tr("elements of the boxes outside the tensor: a load fills them, a store skips them")))
    if t["not_expanded"]:
        rows.append(("not expanded", n(t["not_expanded"]), "; ".join(t["problems"]) or t["mode"]))
    rs = t.get("replayed_shared")
    if rs:
        rows.append(("chunks moved", n(rs["moved"]),
                     tr("replayed: 16-byte chunks of the boxes in shared memory the new layout moves, of {n}",
                        n=n(rs["chunks"]))))
        rows.append(("chunks not whole", n(rs["not_whole"]),
                     tr("replayed: chunks the new layout moves off a 16-byte boundary or splits; the TMA writes whole "
                        "16-byte chunks in its map's swizzle, so the changed kernel cannot copy these with this map")))
    return rows


def summary(st: TmaStats) -> str:
    """One line of ``analyze``'s text for one TMA / bulk instruction."""
    f = st.form
    parts = [caption(f), f"{st.issued:,} copies by {st.warp_executions:,} warp executions"]
    if f.direction != "prefetch":
        parts.append(f"global sectors {st.sectors:,} (lines {st.lines:,}, {st.global_bytes:,} bytes in bounds)")
        parts.append(f"{st.box_bytes:,} bytes in shared memory")
    if st.out_of_bounds_elements:
        parts.append(f"{st.out_of_bounds_elements:,} elements out of bounds (fetch nothing)")
    if st.undecoded:
        parts.append(f"{st.undecoded:,} copies not expanded ({'; '.join(st.problems) or f.mode + ' mode'})")
    return "; ".join(parts)


# ---------------------------------------------------------------------------- the TMA unit's other instructions

# Instructions that build or publish a tensor map, or drive the TMA unit, without moving a
# tensor: recorded per warp (lanes, predicate, address) as trace kind ``tensormap``, and
# counted by the SASS ptxas makes of them (``count_control``). Triton's device-side
# descriptors (tl.make_tensor_descriptor) run all of them: ``tensormap.replace`` edits a
# map's bit fields in shared memory (LDS/STS read-modify-writes), ``tensormap.cp_fenceproxy``
# copies it to global memory (an LDS and an ATOMG.E.EXCH of 4 bytes per lane) and
# ``fence.proxy.tensormap`` / ``cp.async.bulk.commit_group`` become UTMACCTL / UTMACMDFLUSH,
# which Nsight Compute counts in sm__inst_executed_pipe_tma; ``fence.proxy.async`` may get a
# never-true ``@!PT LDS`` from ptxas (after cp.async groups: Triton's attention forward), which
# Nsight Compute counts as a shared load in every warp that reaches it.
KIND_CONTROL = "tensormap"
_CONTROL = re.compile(r"^(tensormap\.(replace|cp_fenceproxy)|fence\.proxy\.(tensormap|async)|"
                      r"cp\.async\.bulk\.(commit_group|wait_group))")
# TMA-pipe SASS opcodes that move no tensor (control): counted in sm__inst_executed_pipe_tma
CONTROL_SASS = ("UTMACCTL", "UTMACMDFLUSH", "UTMACMDFLUSHCTA", "UTMAPF")
SHARED_LD_INST = "smsp__inst_executed_op_shared_ld.sum"
SHARED_ST_INST = "smsp__inst_executed_op_shared_st.sum"
SHARED_LD_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_ST_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
GLOBAL_ATOM_INST = "smsp__sass_inst_executed_op_global_atom.sum"
GLOBAL_ATOM_REQ = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
GLOBAL_ATOM_SEC = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"


def match_control(opcode: str) -> tuple[str, str] | None:
    """(direction, space) of a TMA-unit control instruction, or None. ``tensormap.replace``
    writes the map in shared memory (or global, ``.global``); ``cp_fenceproxy`` writes it to
    global memory; the fence and the bulk group's commit and wait have no tensor."""
    if not _CONTROL.match(opcode):
        return None
    parts = opcode.split(".")
    if parts[0] == "tensormap" and parts[1] == "replace":
        return "store", ("global" if "global" in parts else "shared")
    if parts[0] == "tensormap":
        return "store", "global"
    if parts[0] == "fence":
        return "load", ("generic" if parts[2].startswith("tensormap") else "global")
    return "load", "global"


def control_address(opcode: str, operands: str) -> str:
    """The address operand the recorder takes for a control instruction ("0" where it has none)."""
    m = re.search(r"\[([^\[\]]*)\]", operands)
    return m.group(1).strip() if m else "0"


def count_control(sass: list[str], active: np.ndarray, pred: np.ndarray, addr: np.ndarray) -> dict[str, int]:
    """The counters of one control instruction over its records: ``sass`` the SASS instructions
    ptxas made of it (as ``viz.trace.reconcile`` attributes them; "[branch] " before one inside
    a conditional branch around the code), ``active`` / ``pred`` the records' lane masks,
    ``addr`` (n, 32) their lanes' addresses.

    A SASS instruction inside a branch runs only in the warps with a lane whose PTX predicate
    holds (ptxas branches around it: measured on the H200, Triton's tl.make_tensor_descriptor);
    one outside runs in every warp that reaches the PTX line, with no lane on where it is
    predicated and the PTX predicate holds for none (counted, no wavefront). A shared load or
    store of the map costs one wavefront (one word, or the 32 lanes' consecutive words of
    cp_fenceproxy); the ATOMG.E.EXCH of cp_fenceproxy is one request whose sectors are those
    of 4 bytes per lane from the map's address."""
    out: dict[str, int] = {}
    n = active.shape[0]
    if not n:
        return out
    live = (pred & active) != 0
    runs_live = int(live.sum())

    def add(k, v):
        if v:
            out[k] = out.get(k, 0) + int(v)
    for text in sass:
        guarded = text.startswith("[branch] ")
        toks = text.removeprefix("[branch] ").split()
        predicated = bool(toks) and toks[0].startswith("@")
        op = (toks[1] if predicated and len(toks) > 1 else toks[0] if toks else "").split(".")[0]
        runs = runs_live if guarded else n
        if toks and toks[0] in ("@!PT", "@!UPT"):
            # a never-true load (ptxas's `@!PT LDS RZ, [RZ]`, before the MEMBAR of a fence.proxy.async
            # after cp.async groups): every warp that reaches it runs it, no lane on
            if op == "LDS":
                add(SHARED_LD_INST, runs)
            continue
        on = runs_live if (guarded or predicated) else int((active != 0).sum())
        if op in ("LDS", "STS"):
            add(SHARED_LD_INST if op == "LDS" else SHARED_ST_INST, runs)
            add(SHARED_LD_WF if op == "LDS" else SHARED_ST_WF, on)
        elif op in ("ATOMG", "ATOM", "RED", "REDG"):
            add(GLOBAL_ATOM_INST, runs)
            add(GLOBAL_ATOM_REQ, on)
            sectors = 0
            for r in np.flatnonzero(live):
                lanes = np.flatnonzero((int(pred[r] & active[r]) >> np.arange(32)) & 1)
                base = int(addr[r, lanes[0]]) if lanes.size else 0
                sectors += len({(base + 4 * k) // 32 for k in range(32)})
            add(GLOBAL_ATOM_SEC, sectors)
        elif op in ("LDG", "STG"):        # tensormap.replace on a map in global memory
            add("l1tex__t_requests_pipe_lsu_mem_global_op_" + ("ld.sum" if op == "LDG" else "st.sum"), on)
            add("l1tex__t_sectors_pipe_lsu_mem_global_op_" + ("ld.sum" if op == "LDG" else "st.sum"), on)
        elif op in CONTROL_SASS:
            add(TMA_PIPE, runs)
            add(TMA_REQUESTS, runs)
    return out


# ---------------------------------------------------------------------------- the registry's hooks

def _read(opcode: str, operands: str) -> tuple[str, str, int, str]:
    """``TraceForm.read``: (direction, space, width, address text) of a TMA / bulk copy or a
    control instruction. A copy is "load" (global to shared, prefetch) or "store" (shared to
    global, reductions); its operands are parsed again from its PTX by ``recording_block``."""
    form = match(opcode)
    if form is None:
        ctl = match_control(opcode)
        if ctl is None:                       # cannot happen: the form accepted the opcode
            raise OperandError(f"`{opcode}` is no TMA instruction")
        return ctl[0], ctl[1], 4, control_address(opcode, operands)
    ops = parse_operands(form, operands)
    return ("load" if form.direction in ("load", "prefetch") else "store"), "global", 16, \
        ops.map or ops.global_ or ops.shared


def _block(ins, widths, symbols, prologue, address_code, reg_bits, ctl_symbol, record_bytes) -> list[str]:
    """``TraceForm.block``: a copy's recording block (a payload record per issuing lane)."""
    return recording_block(ins, widths, symbols, ins.id, prologue, address_code, reg_bits, ctl_symbol, record_bytes)


def _form_of_instruction(ins: dict) -> Form:
    words = [w for w in str(ins.get("ptx", "")).split() if not w.startswith("@")]
    return match(str(ins.get("opcode", ""))) or match(words[0] if words else "") or \
        Form(str(ins["kind"]), "load", 0, "unknown", False, False, False, "", "")


def _stats(trace, ins: dict, rows: np.ndarray, ten) -> "RecordStats":
    """``TraceForm.stats`` of a copy: ``count_records`` over its payload records (flags 2)."""
    from .registry import RecordStats

    rows = rows[trace.flags[rows] == RECORD_FLAG]
    payload = trace.payload[trace.payload_rows(rows)] if rows.size else np.zeros((0, PAYLOAD_SLOTS), np.uint64)
    t = count_records(_form_of_instruction(ins), payload, trace.shared[rows])
    return RecordStats(executed=t.warp_executions, warp_instructions=t.sass_executions, active_lanes=t.issued,
                       sectors=t.sectors, lines=t.lines, per_record=t.per_record, own=dict(t.counters),
                       figures={**figures(t), "bytes_requested": t.global_bytes}, detail=t)


def _popcount(masks: np.ndarray) -> int:
    m = np.ascontiguousarray(masks, dtype="<u4")
    return int(np.unpackbits(m.view(np.uint8)).sum())


def _control_stats(trace, ins: dict, rows: np.ndarray, ten) -> "RecordStats":
    """``TraceForm.stats`` of a control instruction (tensormap.replace, cp_fenceproxy, the TMA
    fence, the bulk group's commit): counted by the SASS ptxas makes of it (its ``sass``
    entry); without the SASS nothing is counted and its entry says so."""
    from .registry import RecordStats

    rows = rows[trace.flags[rows] == 0]
    info = ins.get("sass") or {}
    c = count_control(list(info.get("sass") or []), trace.active[rows], trace.pred[rows], trace.addresses(rows))
    t = TmaStats(Form(KIND_CONTROL, ins["op"], 0, "", False, False, False, "", ""),
                 warp_executions=int(rows.size), per_record=np.zeros(rows.size, np.int64))
    t.ten = {k: v for k, v in c.items() if k in ten}
    t.counters = {k: v for k, v in c.items() if k not in ten}
    if not info:
        t.problems.append("the plain kernel's SASS was not read: what ptxas made of it is not counted")
    return RecordStats(executed=int(rows.size), warp_instructions=int(rows.size),
                       active_lanes=_popcount(trace.pred[rows]), per_record=t.per_record,
                       own={**t.ten, **t.counters}, figures={**figures(t), "bytes_requested": t.global_bytes}, detail=t)


def shared_spans(form: Form, rec: Record, cache: dict) -> list[tuple[int, int]]:
    """The shared (offset, bytes) one issued copy writes (a load) or reads (a store), where the
    map's swizzle puts them; [] where warpviz does not expand it (prefetch, im2col, an unreadable
    map)."""
    if rec.lane < 0 or form.direction == "prefetch":
        return []
    if form.kind == KIND_BULK:
        return [(rec.shared, rec.size)] if rec.size > 0 else []
    tm = _map_of(rec.map_bytes, cache)
    if isinstance(tm, MapError) or not form.recorded_fully or tm.box_bytes > MAX_BOX_BYTES:
        return []
    return list(expand(tm, rec.coords[:tm.rank], rec.shared).shared)


REPLAY_BYTES = 1 << 22      # shared bytes re-mapped at a time by a replay (bounded temporaries)


def _replay(trace, ins: dict, rows: np.ndarray, remap, ten) -> "RecordStats":
    """``TraceForm.replay`` of a copy: its figures with its shared bytes re-mapped by the new
    layout (``viz.trace.replay``). Its global side and its counters do not change. A TMA writes
    (or reads) shared memory in whole 16-byte chunks, each where its map's swizzle puts it: the
    replay re-maps every byte of every chunk and counts the chunks (``chunks``), those the
    layout moves (``moved``) and those it leaves off a 16-byte boundary or splits
    (``not_whole``: the changed kernel cannot copy those with this tensor map or bulk copy).
    The entry ``replayed_shared`` is added only where a chunk moved or broke, so the identity
    layout gives ``analyze``'s figures exactly."""
    m = _stats(trace, ins, rows, ten)
    form = _form_of_instruction(ins)
    rows = rows[trace.flags[rows] == RECORD_FLAG]
    payload = trace.payload[trace.payload_rows(rows)] if rows.size else np.zeros((0, PAYLOAD_SLOTS), np.uint64)
    cache: dict = {}
    starts: list[np.ndarray] = []
    chunks = moved = broken = 0

    def flush() -> None:
        nonlocal moved, broken
        if not starts:
            return
        s = np.concatenate(starts)
        starts.clear()
        byte = s[:, None] + np.arange(16, dtype=np.int64)
        new = np.asarray(remap(byte.reshape(-1)), np.int64).reshape(byte.shape)
        moved += int((new[:, 0] != s).sum())
        broken += int(((new[:, 0] % 16 != 0) | (np.diff(new, axis=1) != 1).any(axis=1)).sum())

    held = 0
    for r in range(payload.shape[0]):
        for a, size in shared_spans(form, decode_record(payload[r]), cache):
            s = a + 16 * np.arange(-(-int(size) // 16), dtype=np.int64)
            starts.append(s)
            chunks += int(s.size)
            held += int(s.size) * 16
            if held >= REPLAY_BYTES:
                flush()
                held = 0
    flush()
    if moved or broken:
        t = m.figures["tma"]
        m.figures = {**m.figures, "tma": {**t, "replayed_shared": {"chunks": chunks, "moved": moved,
                                                                   "not_whole": broken}}}
    return m


def _line_sectors(d) -> int:
    """``TraceForm.line_sectors``: a copy's counted sectors (d: its figures record)."""
    return (d.kind_figures("tma") or {}).get("sectors_counted", 0)


def _text(d) -> list[str]:
    """``TraceForm.text``: analyze's lines of one copy (d: its figures record)."""
    from ..errors import safe_text

    t = d.kind_figures("tma")
    out = [f"  {t['form']} {t['direction']}: {t['copies']:,} copies by {t['warp_executions']:,} warp "
           f"executions; global sectors {t['sectors']:,} (lines {t['lines']:,}, {t['global_bytes']:,} "
           f"bytes in bounds"
           + (f"; {t['sectors_counted']:,} counted: a load counts its whole box" if
              t["sectors_counted"] != t["sectors"] else "")
           + f"); {t['box_bytes']:,} bytes in shared memory"
           + (f"; {t['out_of_bounds_elements']:,} elements out of bounds" if t["out_of_bounds_elements"]
              else "")
           + (f"; {t['not_expanded']:,} copies not expanded: {safe_text('; '.join(t['problems']))}"
              if t["not_expanded"] else "")]
    for m in t["maps"][:4]:
        out.append(f"  tensor map: {safe_text(m)}")
    rs = t.get("replayed_shared")
    if rs:
        out.append(f"  replayed: {rs['moved']:,} of {rs['chunks']:,} 16-byte chunks in shared memory moved, "
                   f"{rs['not_whole']:,} of them off a 16-byte boundary or split (the TMA cannot write those)")
    return out


def _control_text(d) -> list[str]:
    """``TraceForm.text``: analyze's line of a control instruction (d: its figures record)."""
    from ..errors import safe_text

    t = d.kind_figures("tma_control")
    counts = ", ".join(f"{k.split('__', 1)[-1].removesuffix('.sum')} {v:,}" for k, v in t["counters"].items())
    return [f"  TMA control: {t['warp_executions']:,} warp executions; what its SASS counts: "
            f"{counts or 'nothing'}" + (f"; {safe_text('; '.join(t['problems']))}" if t["problems"] else "")]


def _drawn(ins: dict, payload_row) -> list[int]:
    """``TraceForm.drawn``: the copy's first 32 16-byte chunks in shared memory."""
    return shared_chunks(ins, decode_record(payload_row), 32)


def _copy_sass_note(got: list):
    """``TraceForm.sass_note`` of a copy: one UTMA* / UBLK* (a uniform instruction)."""
    if not got:
        return None
    return got, ("" if len(got) == 1 else (f"{len(got)} copies in the SASS (ptxas duplicated or unrolled the code): "
                                           "each execution runs one of them"))


def _control_sass_note(got: list):
    """``TraceForm.sass_note`` of a control instruction: the SASS ptxas makes of it ("[branch] "
    marks an instruction inside a branch around the PTX line, see ``count_control``)."""
    from dataclasses import replace

    got = [replace(a, text=("[branch] " if a.guarded else "") + a.text) for a in got]
    return got, ((f"ptxas makes {len(got)} SASS instruction(s) of it: " + ", ".join(f"`{a.text}`" for a in got[:8]))
                 if got else "no SASS memory or TMA instruction comes from it")


def map_building_note(accs: list) -> str:
    """The note on the SASS memory instructions that build tensor maps on the device: ptxas
    makes shared loads and stores (a read-modify-write of the map's bit fields), a shared load
    and a global atomic exchange per lane (the copy to global memory) of them."""
    ops: dict[str, int] = {}
    for a in accs:
        op = a.opcode.split(".")[0]
        ops[op] = ops.get(op, 0) + 1
    what = ", ".join(f"{n} {op}" for op, n in sorted(ops.items()))
    return (f"{len(accs)} SASS memory instruction(s) ({what}) build tensor maps on the device (tensormap.replace "
            "edits the map's bit fields in shared memory with loads and stores; tensormap.cp_fenceproxy copies it "
            "to global memory with a shared load and a global atomic exchange per lane): they come from no PTX "
            "memory instruction")


# ---------------------------------------------------------------------------- the registry (viz.kinds.registry)

def _forms():
    """This module's TraceForms: the PTX forms it records (tried before viz.kinds.unrecorded's
    patterns), their SASS opcodes, counters and labels. The recording block (``recording_block``:
    a record per issuing lane, its operands in the trace's ``payload``) and the counting
    (``count_records`` / ``count_control``) are this module's own, called by the instrumenter and
    the analysis for these kinds."""
    from .registry import TraceForm

    def tensor(parts: list[str]) -> bool:
        f = match(".".join(parts))
        return f is not None and f.kind == KIND_TENSOR

    def bulk(parts: list[str]) -> bool:
        f = match(".".join(parts))
        return f is not None and f.kind == KIND_BULK

    def control(parts: list[str]) -> bool:
        return match_control(".".join(parts)) is not None

    common = dict(space="global", width=lambda parts, operands: 16, counts_shared=False, counts_global=False,
                  ten_spaces=(), slots="operands", counters=dict(COUNTER_LABELS),
                  read=_read, block=_block, recorder_sass=recorder_sass, payload=True, stats=_stats,
                  line_sectors=_line_sectors, explain=lambda d: explain_rows(d.kind_figures("tma")), text=_text, drawn=_drawn,
                  sass_note=_copy_sass_note, fuses=False, replay=_replay)
    return (
        TraceForm(KIND_TENSOR, ("cp",), name="TMA copy", accept=tensor,
                  sass={op: "global" for op, (_sp, k) in SASS_OPCODES.items() if k == KIND_TENSOR}, **common),
        TraceForm(KIND_BULK, ("cp",), name="bulk copy", accept=bulk,
                  sass={op: "global" for op, (_sp, k) in SASS_OPCODES.items() if k == KIND_BULK}, **common),
        TraceForm(KIND_CONTROL, ("tensormap", "fence", "cp"), name="TMA control", accept=control,
                  space="", width=lambda parts, operands: 4, counts_shared=False, counts_global=False, ten_spaces=(),
                  sass={op: "global" for op in ("UTMACCTL", "UTMACMDFLUSH")},
                  counters={TMA_PIPE: COUNTER_LABELS[TMA_PIPE], TMA_REQUESTS: COUNTER_LABELS[TMA_REQUESTS]},
                  read=_read, stats=_control_stats, text=_control_text, owns_line=True, sass_note=_control_sass_note,
                  fuses=False, builds=(("tensor_map_sass", "tensor_maps", BUILDS_MAP, map_building_note),)),
    )


FORMS = _forms()
