"""wgmma: a warpgroup's matrix multiply reading A and B from shared memory (Hopper, sm_90a).

``wgmma.mma_async.sync.aligned.m64nNkK.<d>.<a>.<b> d, a, b, scale-d, ...`` is issued by the
four warps of a warpgroup together. A (64 x K) comes from registers or from shared memory,
B (K x N) from shared memory; each shared operand is named by a 64-bit **matrix descriptor**
(PTX ISA, "Matrix Descriptor Format")::

    bits  0-13  start address >> 4          (the operand's first byte in the shared window)
    bits 16-29  leading dimension byte offset (LBO) >> 4
    bits 32-45  stride dimension byte offset (SBO) >> 4
    bits 49-51  base offset                   (the swizzle pattern's phase; see below)
    bits 62-63  swizzle: 0 none ("interleave"), 1 128B, 2 64B, 3 32B

The tensor cores read the operand as **core matrices**: 8 rows of 16 bytes each. K is 32
bytes for every element type (k16 f16/bf16, k8 tf32, k32 e4m3/e5m2/s8/u8), so a K-major
operand row is two 16-byte chunks; A is 64 x 32 bytes (16 core matrices, 2,048 bytes), B is
N x 32 bytes (N/4 core matrices). Where the rows of each core matrix lie follows CUTLASS's
GMMA layout atoms (cute/atom/mma_traits_sm90_gmma.hpp), in bytes, T = 16 bytes, W the
swizzle width (32, 64, 128 bytes):

    K-major,  none:     row r of core matrix (mn i, k j) at start + i*SBO + j*LBO + r*16
    K-major,  swizzled: start + i*SBO + r*W + j*16
    MN-major, none:     row r (a K row) of core matrix (mn chunk c, k group j) at start + c*SBO + j*LBO + r*16
    MN-major, swizzled: start + (c div W/16)*LBO + (c mod W/16)*16 + j*SBO + r*W

then the swizzle of the absolute shared address (the TMA's: the 16-byte chunk bits [4, 4+b)
XOR bits [7, 7+b), b = 3, 2, 1 for 128B, 64B, 32B). MN-major (``imm-trans-a/b`` = 1) exists
for f16/bf16 only.

**The rule** (how the reads become wavefronts, Nsight Compute's ``..._shared_op_gmma``
counters) is in ``RULE`` and ``phases``; how it was found is docs/memory-model.md, "wgmma
reads of shared memory": each core matrix is one phase of 128 bytes; a phase costs as many
wavefronts as the most distinct 16-byte chunks that fall on one group of four banks;
``conflicts = wavefronts - ideal`` with ideal = bytes / 128. A warpgroup instruction counts
once for its shared reads (Nsight Compute: 6,144 bytes and 48 wavefronts per
m64n128k16 f16 instruction) and 4 times in ``sm__inst_executed_pipe_tensor_op_gmma`` (one
per warp).

A trace records one record per warp (``record_code``): its 32 x 8-byte slots carry the two
descriptors in 16-bit pieces (lanes 0-3: A, 4-7: B) and a tag (lane 8); ``count_records``
counts the warpgroup's reads on the record of its first warp (warp % 4 == 0).

Pure Python and numpy (no Qt, no numba): the model, the trace side and the scenario op all
call it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar
from functools import lru_cache

import numpy as np

from ..access_figures import AccessFigures, given

# ---------------------------------------------------------------------------- counters

WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"
BYTES = "sm__sass_data_bytes_mem_shared_op_gmma.sum"
INSTRUCTIONS = "sm__inst_executed_pipe_tensor_op_gmma.sum"
GMMA_METRICS = (INSTRUCTIONS, WAVEFRONTS, CONFLICTS, BYTES)
GMMA_LABELS = {
    INSTRUCTIONS: "wgmma warp instructions (tensor pipe)",
    WAVEFRONTS: "wgmma shared wavefronts",
    CONFLICTS: "wgmma shared bank conflicts",
    BYTES: "wgmma shared bytes read",
}
WARPS_PER_GROUP = 4

# ---------------------------------------------------------------------------- descriptors

SWIZZLES = {0: "none", 1: "128B", 2: "64B", 3: "32B"}
SWIZZLE_CODE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SWIZZLE_WIDTH = {0: 16, 1: 128, 2: 64, 3: 32}      # bytes of one swizzled row (none: one 16-byte chunk)
SWIZZLE_BITS = {0: 0, 1: 3, 2: 2, 3: 1}
CHUNK = 16                                         # bytes of one core-matrix row
ROWS = 8                                           # rows of one core matrix
PHASE_BYTES = 128                                  # bytes one wavefront delivers (32 banks x 4 bytes)
K_BYTES = 32                                       # bytes of K of every wgmma operand row
M = 64


@dataclass(frozen=True)
class Descriptor:
    """A decoded 64-bit wgmma matrix descriptor (byte values)."""

    start: int                # shared-window byte offset of the operand
    lbo: int                  # leading dimension byte offset
    sbo: int                  # stride dimension byte offset
    base_offset: int          # 0-7
    swizzle: int              # 0 none, 1 128B, 2 64B, 3 32B
    raw: int = 0

    @property
    def swizzle_name(self) -> str:
        return SWIZZLES[self.swizzle]

    @property
    def text(self) -> str:
        return (f"start {self.start}, LBO {self.lbo}, SBO {self.sbo}, swizzle {self.swizzle_name}"
                + (f", base offset {self.base_offset}" if self.base_offset else ""))

    def as_dict(self) -> dict:
        return {"start": self.start, "lbo": self.lbo, "sbo": self.sbo, "base_offset": self.base_offset,
                "swizzle": self.swizzle_name, "raw": f"0x{self.raw:016x}"}


def decode(desc: int) -> Descriptor:
    """The fields of a 64-bit matrix descriptor."""
    d = int(desc) & (2**64 - 1)
    return Descriptor(start=(d & 0x3FFF) << 4, lbo=((d >> 16) & 0x3FFF) << 4, sbo=((d >> 32) & 0x3FFF) << 4,
                      base_offset=(d >> 49) & 7, swizzle=(d >> 62) & 3, raw=d)


def encode(start: int, lbo: int, sbo: int, swizzle: int | str = 0, base_offset: int = 0) -> int:
    """The 64-bit descriptor of those fields (byte values; the low 4 bits are dropped as the
    hardware drops them, the start address to 18 bits)."""
    sw = SWIZZLE_CODE[swizzle] if isinstance(swizzle, str) else int(swizzle)
    if sw not in SWIZZLES or not 0 <= base_offset <= 7:
        raise ValueError(f"swizzle {swizzle!r} / base offset {base_offset!r} out of range")
    return ((int(start) & 0x3FFFF) >> 4) | (((int(lbo) & 0x3FFFF) >> 4) << 16) | \
        (((int(sbo) & 0x3FFFF) >> 4) << 32) | (int(base_offset) << 49) | (sw << 62)


def swizzle_address(addr: int, swizzle: int) -> int:
    """The byte address after the swizzle (absolute shared address bits; TMA's pattern)."""
    b = SWIZZLE_BITS[swizzle]
    if not b:
        return addr
    return addr ^ (((addr >> 7) & ((1 << b) - 1)) << 4)


def canonical(swizzle: int | str, major: str, mn: int = M) -> tuple[int, int]:
    """(LBO, SBO) of a dense operand tile of ``mn`` rows in the canonical layout (CUTLASS's
    GMMA atoms, 16 deep in K): none: core matrices K-adjacent 128 bytes apart, MN-adjacent
    256; swizzled K-major: 8-row groups one atom (8 x W bytes) apart (LBO unused: 16);
    swizzled MN-major: K groups one atom apart, MN atoms two atoms apart."""
    sw = SWIZZLE_CODE[swizzle] if isinstance(swizzle, str) else int(swizzle)
    if sw == 0:
        return 128, 256
    w = SWIZZLE_WIDTH[sw]
    if major == "K":
        return 16, 8 * w
    return 16 * w, 8 * w


# ---------------------------------------------------------------------------- PTX forms

# wgmma.mma_async[.sp].sync.aligned.m64nNkK.dtype.atype.btype[.satfinite | .and.popc]
OP_RE = re.compile(r"^wgmma\.mma_async(?P<sp>\.sp)?\.sync\.aligned\.m64n(?P<n>\d+)k(?P<k>\d+)"
                   r"\.(?P<d>f16|f32|s32)\.(?P<a>f16|bf16|tf32|e4m3|e5m2|s8|u8|b1)\.(?P<b>f16|bf16|tf32|e4m3|e5m2|s8|u8|b1)"
                   r"(?P<rest>(\.[\w]+)*)$")
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1, "u8": 1, "b1": 0.125}
K_OF = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32, "b1": 256}
SASS = "HGMMA"                 # f16/bf16/tf32; QGMMA (fp8), IGMMA (int8), BGMMA (b1): the same reads
SASS_FORMS = ("HGMMA", "QGMMA", "IGMMA", "BGMMA")
GMMA_SASS_WIDTH = 4            # bytes "a lane" the reconciliation reads off them, whatever the types (IGMMA.S8 is
                               # no 1-byte read): the kind counts A's and B's bytes itself


@dataclass(frozen=True)
class WgmmaOp:
    """What the opcode and the operands of one wgmma.mma_async say."""

    n: int
    k: int
    dtype: str                 # accumulator type
    atype: str
    btype: str
    a_shared: bool = True      # A from a descriptor (shared memory), else registers
    trans_a: bool = False      # A MN-major (imm-trans-a = 1)
    trans_b: bool = False      # B MN-major (imm-trans-b = 1)
    a_operand: str = ""        # the descriptor register (or "" for registers)
    b_operand: str = ""

    @property
    def shape(self) -> str:
        return f"m64n{self.n}k{self.k}"

    @property
    def a_major(self) -> str:
        return "MN" if self.trans_a else "K"

    @property
    def b_major(self) -> str:
        return "MN" if self.trans_b else "K"

    @property
    def a_bytes(self) -> int:
        return M * K_BYTES if self.a_shared else 0

    @property
    def b_bytes(self) -> int:
        return self.n * K_BYTES

    @property
    def bytes(self) -> int:
        """Shared bytes one warpgroup instruction reads (A 64 x 32 bytes when from shared, B N x 32)."""
        return self.a_bytes + self.b_bytes

    @property
    def text(self) -> str:
        return (f"wgmma {self.shape}.{self.dtype}.{self.atype}.{self.btype}, A from "
                + (f"shared ({self.a_major}-major)" if self.a_shared else "registers")
                + f", B {self.b_major}-major")

    def as_dict(self) -> dict:
        return {"shape": self.shape, "n": self.n, "k": self.k, "dtype": self.dtype, "atype": self.atype,
                "btype": self.btype, "a": "shared" if self.a_shared else "registers", "a_major": self.a_major,
                "b_major": self.b_major, "bytes": self.bytes}


def is_wgmma(opcode: str) -> bool:
    """A dense ``wgmma.mma_async`` this kind records (the sparse ``.sp`` form is not)."""
    m = OP_RE.match(opcode)
    return bool(m) and not m.group("sp")


def _split_operands(text: str) -> list[str]:
    """Top-level comma-separated operands (``{...}`` kept whole)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _imm(text: str) -> int | None:
    t = text.strip()
    try:
        return int(t, 0)
    except ValueError:
        return None


def parse(opcode: str, operands: str) -> WgmmaOp | None:
    """The WgmmaOp of one instruction (opcode, operand text without the `;`), or None where it
    is no dense wgmma.mma_async or its operands do not read as one."""
    m = OP_RE.match(opcode)
    if not m or m.group("sp"):
        return None
    n, k = int(m.group("n")), int(m.group("k"))
    a, b = m.group("a"), m.group("b")
    if K_OF.get(a) != k or not 8 <= n <= 256 or n % 8:
        return None
    ops = _split_operands(operands)
    if len(ops) < 4:
        return None
    a_op, b_op = ops[1], ops[2]
    a_shared = not a_op.startswith("{")
    rest = ops[3:]                      # scale-d, [imm-scale-a, imm-scale-b, [imm-trans-a,] imm-trans-b]
    trans_a = trans_b = False
    if a in ("f16", "bf16") and len(rest) >= 4:
        if a_shared and len(rest) >= 5:
            trans_a, trans_b = _imm(rest[3]) == 1, _imm(rest[4]) == 1
        elif not a_shared:
            trans_b = _imm(rest[3]) == 1
    return WgmmaOp(n, k, m.group("d"), a, b, a_shared, trans_a, trans_b, a_op if a_shared else "", b_op)


def parse_ptx_line(text: str) -> WgmmaOp | None:
    """The WgmmaOp of a PTX line (``[@p] wgmma.mma_async... ;``), or None."""
    s = text.split("//", 1)[0].strip().rstrip(";").strip()
    s = re.sub(r"^@!?%?[\w$]+\s+", "", s)
    parts = s.split(None, 1)
    if len(parts) != 2:
        return None
    return parse(parts[0], parts[1])


# ---------------------------------------------------------------------------- core matrices


@dataclass(frozen=True)
class CoreMatrix:
    """One 8 x 16-byte core matrix an operand is read as: its rows' shared byte addresses
    (after the swizzle)."""

    operand: str               # "A" | "B"
    mn: int                    # MN index: K-major 8-row group, MN-major 16-byte MN chunk
    k: int                     # K index: K-major 16-byte chunk (0, 1), MN-major 8-row group (0, 1)
    rows: tuple[int, ...]      # 8 byte addresses

    @property
    def banks(self) -> tuple[tuple[int, int], ...]:
        """(first, last) bank of each row's four words."""
        return tuple((((a >> 2) & 31), ((a >> 2) + 3) & 31) for a in self.rows)


def core_matrices(operand: str, desc: Descriptor, mn_rows: int, major: str) -> list[CoreMatrix]:
    """The core matrices of an operand of ``mn_rows`` rows (A: 64, B: N) and 32 bytes of K, in
    the order the model reads them (MN first, then K)."""
    sw, w = desc.swizzle, SWIZZLE_WIDTH[desc.swizzle]
    out = []
    if major == "K":
        for i in range(mn_rows // ROWS):
            for j in range(K_BYTES // CHUNK):
                if sw == 0:
                    rows = [desc.start + i * desc.sbo + j * desc.lbo + r * CHUNK for r in range(ROWS)]
                else:
                    rows = [desc.start + i * desc.sbo + r * w + j * CHUNK for r in range(ROWS)]
                out.append(CoreMatrix(operand, i, j, tuple(swizzle_address(a, sw) for a in rows)))
    else:
        chunks = mn_rows * 2 // CHUNK          # MN-major: f16/bf16 only (2 bytes an element)
        per = max(1, w // CHUNK)
        for c in range(chunks):
            for j in range(2):
                if sw == 0:
                    rows = [desc.start + c * desc.sbo + j * desc.lbo + r * CHUNK for r in range(ROWS)]
                else:
                    rows = [desc.start + (c // per) * desc.lbo + (c % per) * CHUNK + j * desc.sbo + r * w
                            for r in range(ROWS)]
                out.append(CoreMatrix(operand, c, j, tuple(swizzle_address(a, sw) for a in rows)))
    return out


# ---------------------------------------------------------------------------- the rule

RULE = "core-matrix"   # each core matrix is one phase (see the module doc and docs/memory-model.md)


def phases(cms: list[CoreMatrix]) -> list[tuple[int, ...]]:
    """The phases of a warpgroup instruction's reads: lists of 16-byte row addresses, each
    served together (one core matrix each)."""
    return [cm.rows for cm in cms]


def phase_wavefronts(rows) -> int:
    """Wavefronts of one phase: the most distinct 16-byte chunks on one group of four banks
    (a chunk aligned to 16 bytes covers banks 4q..4q+3, q = (address / 16) % 8); rows on one
    address are read once."""
    per: dict[int, set[int]] = {}
    for a in rows:
        per.setdefault((a >> 4) & 7, set()).add(a >> 4)
    return max((len(s) for s in per.values()), default=0)


@dataclass(frozen=True)
class WgmmaCount:
    """One warpgroup instruction's shared reads, by the rule."""

    bytes: int
    wavefronts: int
    ideal: int
    per_phase: tuple[int, ...]                 # wavefronts of each phase, in order

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal


def operand_matrices(op: WgmmaOp, desc_a: int | None, desc_b: int) -> list[CoreMatrix]:
    """Every core matrix one warpgroup instruction reads from shared memory: A's (when from
    shared memory) then B's."""
    cms = []
    if op.a_shared and desc_a is not None:
        cms += core_matrices("A", decode(desc_a), M, op.a_major)
    cms += core_matrices("B", decode(desc_b), op.n, op.b_major)
    return cms


@lru_cache(maxsize=65536)
def count(op: WgmmaOp, desc_a: int | None, desc_b: int) -> WgmmaCount:
    """The shared-memory figures of one warpgroup instruction (cached: a kernel reuses a few
    descriptors many times)."""
    cms = operand_matrices(op, desc_a, desc_b)
    per = tuple(phase_wavefronts(p) for p in phases(cms))
    nbytes = len(cms) * ROWS * CHUNK
    return WgmmaCount(nbytes, sum(per), nbytes // PHASE_BYTES, per)


def rows_batch(descs: np.ndarray, mn_rows: int, major: str) -> np.ndarray:
    """``core_matrices`` of many descriptors at once: (n, core matrices, 8) int64 row addresses
    after the swizzle, in the same order (the trace analysis' vectorised path)."""
    d = np.asarray(descs, np.uint64).reshape(-1)
    start = ((d & np.uint64(0x3FFF)) << np.uint64(4)).astype(np.int64)
    lbo = (((d >> np.uint64(16)) & np.uint64(0x3FFF)) << np.uint64(4)).astype(np.int64)
    sbo = (((d >> np.uint64(32)) & np.uint64(0x3FFF)) << np.uint64(4)).astype(np.int64)
    sw = ((d >> np.uint64(62)) & np.uint64(3)).astype(np.int64)
    width = np.array([SWIZZLE_WIDTH[k] for k in range(4)], np.int64)[sw]
    r = np.arange(ROWS, dtype=np.int64)
    cms = []
    if major == "K":
        for i in range(mn_rows // ROWS):
            for j in range(K_BYTES // CHUNK):
                none = start[:, None] + i * sbo[:, None] + j * lbo[:, None] + r * CHUNK
                swz = start[:, None] + i * sbo[:, None] + r * width[:, None] + j * CHUNK
                cms.append(np.where((sw == 0)[:, None], none, swz))
    else:
        per = np.maximum(1, width // CHUNK)
        for c in range(mn_rows * 2 // CHUNK):
            for j in range(2):
                none = start[:, None] + c * sbo[:, None] + j * lbo[:, None] + r * CHUNK
                swz = (start + (c // per) * lbo + (c % per) * CHUNK + j * sbo)[:, None] + r * width[:, None]
                cms.append(np.where((sw == 0)[:, None], none, swz))
    a = np.stack(cms, axis=1) if cms else np.zeros((d.size, 0, ROWS), np.int64)
    bits = np.array([SWIZZLE_BITS[k] for k in range(4)], np.int64)[sw][:, None, None]
    return a ^ (((a >> 7) & ((1 << bits) - 1)) << 4)


def count_batch(op: WgmmaOp, desc_a: np.ndarray | None, desc_b: np.ndarray) -> tuple[np.ndarray, int, int]:
    """(wavefronts of each descriptor pair, ideal, bytes) of one warpgroup instruction each:
    ``count`` for many pairs at once (the same rule)."""
    parts = []
    if op.a_shared and desc_a is not None:
        parts.append(rows_batch(desc_a, M, op.a_major))
    parts.append(rows_batch(desc_b, op.n, op.b_major))
    rows = np.concatenate(parts, axis=1) >> 4                    # 16-byte chunks, (n, phases, 8)
    srt = np.sort(rows, axis=-1)
    first = np.ones(srt.shape, bool)
    first[..., 1:] = srt[..., 1:] != srt[..., :-1]               # each distinct chunk once
    grp = srt & 7
    per = np.zeros(srt.shape[:2], np.int64)
    for q in range(8):
        np.maximum(per, ((grp == q) & first).sum(axis=-1), out=per)
    nbytes = rows.shape[1] * ROWS * CHUNK
    return per.sum(axis=1), nbytes // PHASE_BYTES, nbytes


BATCH = 4096         # descriptor pairs counted at a time (bounded temporaries: ~80 x 8 rows each)
CACHED = 256         # at most this many distinct pairs go through the cached scalar ``count``


# ---------------------------------------------------------------------------- trace records

SLOT_A = 0          # lanes 0-3: descriptor A, 16 bits each (low first)
SLOT_B = 4          # lanes 4-7: descriptor B
SLOT_TAG = 8        # lane 8: TAG
TAG = 0x4757        # "GW": a wgmma record


def record_code(a_operand: str | None, b_operand: str) -> list[str]:
    """PTX that puts this lane's 8-byte slot into %wvd0 (the recorder writes it where a plain
    access writes the lane's address): lanes 0-3 the 16-bit pieces of descriptor A (0 when A
    comes from registers), lanes 4-7 those of B, lane 8 ``TAG``, the others 0. Uses only the
    recording block's own registers (%wvr9, %wvr10, %wvd0-%wvd2, %wvp1, %wvp2)."""

    def value(reg: str | None) -> str:
        if not reg:
            return "0"
        v = _imm(reg)
        return str(v & (2**64 - 1)) if v is not None else reg

    return [
        "mov.u32 %wvr10, %laneid;",
        "and.b32 %wvr9, %wvr10, 3;",
        "shl.b32 %wvr9, %wvr9, 4;",
        f"mov.b64 %wvd1, {value(a_operand)};",
        f"mov.b64 %wvd2, {value(b_operand)};",
        f"setp.lt.u32 %wvp1, %wvr10, {SLOT_B};",
        "selp.b64 %wvd1, %wvd1, %wvd2, %wvp1;",
        "shr.b64 %wvd1, %wvd1, %wvr9;",
        "and.b64 %wvd0, %wvd1, 65535;",
        f"setp.ge.u32 %wvp2, %wvr10, {SLOT_TAG};",
        "@%wvp2 mov.u64 %wvd0, 0;",
        f"setp.eq.u32 %wvp2, %wvr10, {SLOT_TAG};",
        f"@%wvp2 mov.u64 %wvd0, {TAG};",
    ]


def descriptors(slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(descriptor A, descriptor B, tagged) of records' slots ((n, 32) lane values)."""
    s = np.asarray(slots).astype(np.int64) & 0xFFFF
    sh = np.array([0, 16, 32, 48], np.uint64)
    a = (s[:, SLOT_A:SLOT_A + 4].astype(np.uint64) << sh).sum(axis=1, dtype=np.uint64)
    b = (s[:, SLOT_B:SLOT_B + 4].astype(np.uint64) << sh).sum(axis=1, dtype=np.uint64)
    tagged = np.asarray(slots)[:, SLOT_TAG].astype(np.int64) == TAG
    return a, b, tagged


def remapped_wavefronts(op: WgmmaOp, desc_a: int | None, desc_b: int, remap) -> int:
    """Wavefronts of one warpgroup instruction whose shared bytes are re-mapped by ``remap``
    ((int64 byte addresses) -> int64 new addresses: a replay under another layout,
    ``viz.trace.replay``). Each core matrix is still one phase; its rows' bytes are read from
    their new places, and the phase costs the most distinct 4-byte words any one bank must
    deliver. Where every row stays one aligned 16-byte chunk this is ``phase_wavefronts`` (a
    chunk's four words sit on the four banks of its group), so the identity gives ``count``'s
    figures exactly; a layout that splits a row is counted by its words."""
    cms = operand_matrices(op, desc_a, desc_b)
    if not cms:
        return 0
    rows = np.asarray([cm.rows for cm in cms], np.int64)                      # (phases, 8)
    byte = rows[:, :, None] + np.arange(CHUNK, dtype=np.int64)                 # (phases, 8, 16)
    words = (np.asarray(remap(byte.reshape(-1)), np.int64) >> 2).reshape(len(cms), -1)
    total = 0
    for ph in words:
        total += int(np.bincount(np.unique(ph) & 31, minlength=32).max())
    return total


def count_records(op: WgmmaOp, slots: np.ndarray, warps: np.ndarray, pred: np.ndarray, remap=None) -> dict:
    """The gmma counters of some records of one static wgmma (one record per warp): the
    tensor-pipe instruction count (one per warp whose predicate held) and, on the record of
    each warpgroup's first warp, the warpgroup's shared reads. Returns the totals by counter
    name and ``per_record`` (each record's wavefronts), ``phases`` (ideal wavefronts). ``remap``:
    the shared bytes re-mapped (a replay, ``remapped_wavefronts``)."""
    n = int(slots.shape[0])
    per = np.zeros(n, np.int64)
    ideal = np.zeros(n, np.int64)
    nbytes = np.zeros(n, np.int64)
    issued = np.asarray(pred).astype(np.uint32) != 0
    lead = issued & (np.asarray(warps).astype(np.int64) % WARPS_PER_GROUP == 0)
    if n:
        lead &= descriptors(slots)[2]        # a record without the tag carries no descriptors: no reads
    if n and lead.any():
        da, db, _ = descriptors(slots)
        pairs = np.stack([da, db], axis=1)[lead]
        uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
        inv = np.asarray(inv).reshape(-1)
        wf_u = np.zeros(len(uniq), np.int64)
        if remap is not None:
            for u, (a, b) in enumerate(uniq):
                wf_u[u] = remapped_wavefronts(op, int(a) if op.a_shared else None, int(b), remap)
        elif len(uniq) <= CACHED:
            for u, (a, b) in enumerate(uniq):
                wf_u[u] = count(op, int(a) if op.a_shared else None, int(b)).wavefronts
        else:                        # many distinct descriptors (a hostile file, or a huge kernel): vectorised
            for lo in range(0, len(uniq), BATCH):
                chunk = uniq[lo:lo + BATCH]
                wf_u[lo:lo + len(chunk)] = count_batch(op, chunk[:, 0] if op.a_shared else None, chunk[:, 1])[0]
        per[lead] = wf_u[inv]
        ideal[lead] = op.bytes // PHASE_BYTES
        nbytes[lead] = op.bytes
    return {INSTRUCTIONS: int(issued.sum()), WAVEFRONTS: int(per.sum()), CONFLICTS: int((per - ideal).sum()),
            BYTES: int(nbytes.sum()), "per_record": per, "phases": int(ideal.sum())}


def op_of(ins: dict) -> WgmmaOp | None:
    """The WgmmaOp of a trace's instruction entry (its PTX text)."""
    return parse_ptx_line(str(ins.get("ptx", "")))


def count_trace_rows(ins: dict, slots: np.ndarray, warps: np.ndarray, pred: np.ndarray) -> dict:
    """``count_records`` for a trace's instruction entry. An entry whose PTX does not read as a
    wgmma counts nothing (the trace's header was checked; its PTX text is the file's word)."""
    op = op_of(ins)
    n = int(np.asarray(slots).shape[0])
    if op is None:
        return {**dict.fromkeys(GMMA_METRICS, 0), "phases": 0, "per_record": np.zeros(n, np.int64)}
    return count_records(op, slots, warps, pred)


def access_figures(ins: dict, own: dict) -> dict:
    """What ``analyze``'s JSON adds to a traced wgmma's entry (``TraceForm.figures``): ``wgmma``
    (the op and its counters) and its figures: wavefronts, the ideal (bytes / 128) and bank
    conflicts of its shared reads, bytes, per warpgroup instruction."""
    op = op_of(ins)
    if op is None:
        return {}
    nbytes = int(own.get(BYTES, 0))
    wf = int(own.get(WAVEFRONTS, 0))
    ph = wf - int(own.get(CONFLICTS, 0))
    groups = nbytes // op.bytes if op.bytes else 0
    return {
        "wgmma": {**op.as_dict(), "warpgroup_instructions": groups, "rule": RULE,
                  "counters": {k: int(own.get(k, 0)) for k in GMMA_METRICS}, "descriptors": []},
        "bytes_requested": nbytes, "wavefronts": wf, "phases": ph, "bank_conflicts": wf - ph,
        "wavefronts_per_instruction": round(wf / groups, 4) if groups else 0.0,
        "ideal_wavefronts_per_instruction": round(ph / groups, 4) if groups else 0.0,
    }


def table_text(d: AccessFigures) -> str:
    """``analyze``'s line of a traced wgmma's figures."""
    w = d.kind_figures("wgmma")
    if not isinstance(w, dict):
        return "its PTX is no wgmma.mma_async that warpviz reads: nothing is counted for it"
    return (f"{w['shape']} {w['atype']}, A from {w['a']}, {w['warpgroup_instructions']:,} warpgroup instructions: "
            f"{d.bytes_requested:,} shared bytes in {d.wavefronts:,} wavefronts (ideal {d.phases:,}, "
            f"conflicts {d.bank_conflicts:,}); {w['counters'][INSTRUCTIONS]:,} tensor-pipe warp instructions")


def explain_rows(d: AccessFigures) -> list[tuple[str, str, str]]:
    """(figure, value, why) rows of a traced wgmma (``analyze``'s reasons, the Figures panel)."""
    from ..i18n import tr

    w = d.kind_figures("wgmma")
    if not isinstance(w, dict):         # a trace entry whose PTX does not read as a wgmma (a file that lies)
        return [("", "", tr("its PTX is no wgmma.mma_async that warpviz reads: nothing is counted for it"))]
    groups = max(1, w["warpgroup_instructions"])
    rows = [("warpgroup instructions", f"{w['warpgroup_instructions']:,}",
             tr("the four warps of a warpgroup issue one wgmma together; its shared reads count once")),
            ("bytes read", f"{d.bytes_requested:,}",
             tr("{per} per instruction: A 64 x 32 bytes (when from shared memory) and B N x 32 bytes",
                per=f"{d.bytes_requested / groups:,.0f}")),
            ("wavefronts", f"{d.wavefronts:,}",
             tr("{per} per instruction: each 8 x 16-byte core matrix is one phase, costing the most distinct "
                "16-byte rows on one group of four banks", per=f"{d.wavefronts / groups:g}")),
            ("bank conflicts", f"{d.bank_conflicts:,}", tr("wavefronts beyond bytes / 128")),
            ("tensor-pipe instructions", f"{w['counters'][INSTRUCTIONS]:,}",
             tr("one per warp: 4 per warpgroup instruction"))]
    for dd in w["descriptors"][:2]:
        a = dd["a"]
        a_text = "registers" if a == "registers" else \
            f"start {a['start']}, LBO {a['lbo']}, SBO {a['sbo']}, {a['swizzle']}"
        b = dd["b"]
        rows.append(("descriptors", f"{dd['warpgroup_instructions']:,}x",
                     f"A: {a_text}; B: start {b['start']}, LBO {b['lbo']}, SBO {b['sbo']}, {b['swizzle']}"))
    return rows


# ---------------------------------------------------------------------------- the picture's model


@dataclass(frozen=True)
class GmmaRow:
    """One 16-byte row of one core matrix, as one warpgroup instruction reads it."""

    operand: str
    matrix: int                # core matrix index within its operand, in read order
    mn: int
    k: int
    row: int
    byte_addr: int
    banks: tuple[int, int]
    phase: int                 # 0-based phase (core matrix over all operands)
    wavefront: int             # 1-based wavefront within its phase
    conflict: bool             # it waits for another row of its phase on the same banks


def rows_of(op: WgmmaOp, desc_a: int | None, desc_b: int) -> list[GmmaRow]:
    """Every row the instruction reads, with its banks, phase and wavefront (the picture)."""
    cms = operand_matrices(op, desc_a, desc_b)
    out = []
    seen: dict[str, int] = {}
    for p, cm in enumerate(cms):
        idx = seen.get(cm.operand, 0)
        seen[cm.operand] = idx + 1
        order: dict[int, list[int]] = {}
        for r, a in enumerate(cm.rows):
            lst = order.setdefault((a >> 4) & 7, [])
            if a >> 4 not in lst:
                lst.append(a >> 4)
            wf = lst.index(a >> 4) + 1
            out.append(GmmaRow(cm.operand, idx, cm.mn, cm.k, r, a, (((a >> 2) & 31), ((a >> 2) + 3) & 31),
                               p, wf, wf > 1))
    return out


def to_text(op: WgmmaOp, desc_a: int | None, desc_b: int) -> str:
    """A plain-text table of one instruction's core matrices on the banks (the ``matrix`` view)."""
    c = count(op, desc_a if op.a_shared else None, desc_b)
    lines = [op.text]
    if op.a_shared and desc_a is not None:
        lines.append(f"A: {decode(desc_a).text}")
    lines.append(f"B: {decode(desc_b).text}")
    lines.append(f"{c.bytes:,} bytes in {c.wavefronts} wavefronts (ideal {c.ideal}, {c.conflicts} bank conflicts)")
    lines.append("operand  matrix  (mn,k)  row  byte addr  banks  wf")
    for r in rows_of(op, desc_a if op.a_shared else None, desc_b):
        mark = "  conflict" if r.conflict else ""
        lines.append(f"  {r.operand:<6} {r.matrix:>6}  ({r.mn},{r.k}){'':<2} {r.row:>3}  {r.byte_addr:>9}  "
                     f"{r.banks[0]:>2}-{r.banks[1]:<2} {r.wavefront:>3}{mark}")
    return "\n".join(lines)


@dataclass(frozen=True)
class GmmaMap:
    """What ``viz.render.gmma_view`` draws for one warpgroup wgmma: each core matrix (a phase)
    as one line across the 8 groups of four banks, every row on the group its 16 bytes fall
    on, with its wavefront; rows that wait for another row of their phase are marked."""

    view: ClassVar[str] = "gmma_view"    # its painter: viz.render.gmma_view (viz.render.painter.paint_kind_map)
    op: WgmmaOp
    title: str                 # the instruction as written (PTX, or the scenario's operands)
    where: str                 # block, warpgroup, instruction
    desc_a: int | None
    desc_b: int
    rows: tuple[GmmaRow, ...]
    bytes: int
    wavefronts: int
    ideal: int

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal

    @property
    def phases(self) -> int:
        return len({r.phase for r in self.rows})

    @property
    def text(self) -> str:
        return f"{self.op.shape} {self.title}"

    def natural_size(self, scale: float = 1.0) -> tuple[int, int]:
        """Every number at 16 px: a line per core matrix."""
        return int(1400 * scale), int((260 + 30 * self.phases) * scale)

    def phase_rows(self, phase: int) -> list[GmmaRow]:
        return [r for r in self.rows if r.phase == phase]

    def to_text(self) -> str:
        head = [f"{self.op.text}  {self.title}  ({self.where})"]
        return "\n".join(head + to_text(self.op, self.desc_a, self.desc_b).split("\n")[1:])


def gmma_map(op: WgmmaOp, desc_a: int | None, desc_b: int, title: str, where: str) -> GmmaMap:
    a = desc_a if op.a_shared else None
    c = count(op, a, desc_b)
    return GmmaMap(op, title, where, a, desc_b, tuple(rows_of(op, a, desc_b)), c.bytes, c.wavefronts, c.ideal)


def scenario_gmma_map(scenario, instr, block: int, warp: int) -> GmmaMap:
    """The GmmaMap of a scenario's wgmma instruction, as the warpgroup of ``warp`` in ``block``
    issues it."""
    from ..i18n import tr

    access = scenario.accesses[instr.access]
    nw = scenario.launch.warps_per_block
    groups = nw // WARPS_PER_GROUP
    g = min(warp // WARPS_PER_GROUP, max(0, groups - 1))
    da, db = scenario_descriptors(scenario, instr, access, np.array([block], np.int64), groups)
    where = tr("block {b} · warpgroup {g} (warps {w0}-{w1})", b=block, g=g, w0=4 * g, w1=4 * g + 3) + " · " + \
        tr("instruction {k}", k=instr.number + 1) + (f" ({instr.loop_text()})" if instr.loop else "")
    title = f"A = {access.option('a')}, B = {access.text}"
    return gmma_map(scenario_op(access), int(da[0][g]) if da is not None else None, int(db[0][g]), title, where)


def trace_gmma_map(trace, instr_id: int, block: int, warp: int, number: int) -> GmmaMap:
    """The GmmaMap of a traced wgmma at its first recorded execution by ``warp`` of ``block``
    (any warp of the warpgroup carries the same descriptors)."""
    from ..i18n import tr

    ins = trace.instructions[instr_id]
    op = op_of(ins)
    if op is None:
        raise ValueError(f"instruction {number} is not a wgmma.mma_async warpviz reads")
    rows = np.flatnonzero((trace.instr == instr_id) & (trace.block == block) & (trace.warp == warp))
    slots = trace.addresses(rows[:1])
    da, db, _ = descriptors(slots)
    g = warp // WARPS_PER_GROUP
    where = tr("block {b} · warpgroup {g} (warps {w0}-{w1})", b=block, g=g, w0=4 * g, w1=4 * g + 3) + " · " + \
        tr("instruction {k}", k=number)
    return gmma_map(op, int(da[0]) if op.a_shared else None, int(db[0]), " ".join(str(ins.get("ptx", "")).split())[:160],
                    where)


def detail_gmma_map(detail) -> GmmaMap | None:
    """The GmmaMap of a per-warp detail (``viz.warp.WarpDetail``) of a wgmma: a scenario's (its
    access's options) or a trace's (the record's slots are the lanes' "addresses", the PTX in
    the access's option "ptx"); None for any other access or one that does not read as a wgmma."""
    from ..i18n import tr

    access = detail.access
    if getattr(access, "op", "") != "wgmma":
        return None
    ptx = access.option("ptx")
    if ptx is None:
        return scenario_gmma_map(detail.scenario, detail.instruction, detail.block, detail.warp)
    op = parse_ptx_line(str(ptx))
    if op is None:
        return None
    slots = np.array([[ln.byte_addr if ln.exists and ln.active else 0 for ln in detail.lanes]], np.int64)
    da, db, _ = descriptors(slots)
    g = detail.warp // WARPS_PER_GROUP
    where = tr("block {b} · warpgroup {g} (warps {w0}-{w1})", b=detail.block, g=g, w0=4 * g, w1=4 * g + 3) + " · " + \
        tr("instruction {k}", k=int(access.option("number") or detail.instruction.number + 1))
    return gmma_map(op, int(da[0]) if op.a_shared else None, int(db[0]), " ".join(str(ptx).split())[:160], where)


# ---------------------------------------------------------------------------- scenarios (format 3)
#
#   [[access]]
#   op = "wgmma"
#   a = "As[0][kk * 16]"     # A's first element in a shared array (or "registers"); a bare name: its first
#   b = "Bs[0][kk * 16]"     # B's first element
#   n = 128                  # N (default: from B's array); dtype = "f16" (bf16, tf32, e4m3, e5m2, s8, u8)
#   a_major = "K"            # or "MN" (f16 / bf16 only); b_major likewise
#   a_lbo / a_sbo / b_lbo / b_sbo = bytes   # the descriptor's offsets (default: the canonical layout)
#   for = ["kk in 0..4"]
#
# The operand's swizzle is its array's: none, tma:32B, tma:64B, tma:128B (the TMA writes its tile in
# the same pattern, so a tma.load tile feeds a wgmma as it does on the GPU). The first element is
# evaluated for the first thread of each warpgroup (tid = 128 g: write `warp / 4` for the warpgroup).

SCENARIO_KEYS = frozenset({"op", "a", "b", "n", "dtype", "a_major", "b_major", "a_lbo", "a_sbo", "b_lbo", "b_sbo",
                           "for", "note"})
EXAMPLE = 'op = "wgmma", a = "As", b = "Bs", n = 64'
SCENARIO_DTYPES = ("f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8")
ACCUMULATOR = {"f16": "f32", "bf16": "f32", "tf32": "f32", "e4m3": "f32", "e5m2": "f32", "s8": "s32", "u8": "s32"}
TMA_SWIZZLE_CODE = {"none": 0, "tma:128B": 1, "tma:64B": 2, "tma:32B": 3}


def _operand_swizzle(arr) -> str:
    return "none" if arr.swizzle.is_identity else arr.swizzle.text


def _element_text(b, k: int, raw: dict, key: str) -> str:
    from ..i18n import tr

    v = raw.get(key)
    if not isinstance(v, str) or not v.strip():
        b.fail(f"access {k}", tr("wgmma needs {key} = \"ARRAY[...]\", the operand's first element in a shared array",
                                 key=key), tr("e.g. {example}", example=EXAMPLE), key=key if key in raw else "op")
    name = v.strip()
    if re.fullmatch(r"[A-Za-z_]\w*", name) and name in b.arrays:
        return name + "[0]" * len(b.arrays[name].shape)
    return name


def _offset_key(b, k: int, raw: dict, key: str, default: int, where: str) -> int:
    from ..i18n import tr

    v = raw.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 1 << 18 or v % 16:
        b.fail(where, tr("{key} must be a byte offset: a multiple of 16 from 0 to 262,128, not {v!r}", key=key, v=v),
               tr("the descriptor keeps bits 4-17 of it (PTX ISA, matrix descriptor)"), key=key)
    return v


def parse_scenario(b, k: int, raw: dict):
    """The Access of an ``op = "wgmma"`` table (``b``: the scenario builder)."""
    from dataclasses import replace

    from ..i18n import tr
    from .build import parse_plain

    dtype = raw.get("dtype", "f16")
    if dtype not in SCENARIO_DTYPES:
        b.fail(f"access {k}", tr("dtype must be one of {names}, not {v!r}", names=", ".join(SCENARIO_DTYPES), v=dtype),
               tr("write dtype = \"f16\""), key="dtype")
    esize = int(ELEMENT_BYTES[dtype])
    if b.launch_threads % 128:
        b.fail(f"access {k}", tr("a wgmma is issued by warpgroups of 128 threads; the block has {n} threads",
                                 n=b.launch_threads),
               tr("make the block a multiple of 128 threads (block = [128])"), key="op")
    b_text = _element_text(b, k, raw, "b")
    bacc = parse_plain(b, k, {**{x: raw[x] for x in ("for",) if x in raw}, "b": b_text}, "wgmma", "b", "load")
    where = f"access {k} (wgmma {bacc.text})"
    a_raw = raw.get("a", "registers")
    aacc = None
    if a_raw != "registers":
        a_text = _element_text(b, k, raw, "a")
        aacc = parse_plain(b, k, {**{x: raw[x] for x in ("for",) if x in raw}, "a": a_text}, "wgmma", "a", "load")
    opts: dict = {"dtype": dtype}
    for name, acc in (("a", aacc), ("b", bacc)):
        major = raw.get(f"{name}_major", "K")
        if major not in ("K", "MN"):
            b.fail(where, tr("{key} must be \"K\" or \"MN\", not {v!r}", key=f"{name}_major", v=major),
                   tr("K: K is the contiguous dimension (imm-trans 0); MN: M or N is (imm-trans 1)"),
                   key=f"{name}_major")
        if major == "MN" and dtype not in ("f16", "bf16"):
            b.fail(where, tr("only f16 and bf16 operands can be MN-major (transposed); {dtype} is K-major only",
                             dtype=dtype), tr("write {key} = \"K\"", key=f"{name}_major"), key=f"{name}_major")
        opts[f"{name}_major"] = major
        if acc is None:
            continue
        arr = b.arrays[acc.array]
        if arr.space != "shared":
            b.fail(where, tr("wgmma reads {key} from shared memory, but {name} is a global array", key=name,
                             name=arr.name), tr("name a shared array in {key}", key=name), key=name)
        if arr.pad or acc.field is not None or arr.type.size != esize:
            b.fail(where, tr("{key}: {name} must be a dense array of {n}-byte elements ({dtype}), without pad or "
                             "fields", key=name, name=arr.name, n=esize, dtype=dtype),
                   tr("declare it with a {n}-byte type and no pad", n=esize), key=name)
        swz = _operand_swizzle(arr)
        if swz not in TMA_SWIZZLE_CODE:
            b.fail(where, tr("{key}: a wgmma descriptor reads no swizzle, tma:32B, tma:64B or tma:128B; {name} has "
                             "{swz}", key=name, name=arr.name, swz=swz),
                   tr("give {name} swizzle = \"tma:128B\" (or tma:64B, tma:32B), or none", name=arr.name), key=name)
        code = TMA_SWIZZLE_CODE[swz]
        if code:
            w = SWIZZLE_WIDTH[code]
            row = arr.shape[-1] * esize
            if len(arr.shape) != 2 or row != w:
                b.fail(where, tr("{key}: with swizzle {swz} each row of {name} must be {w} bytes (one swizzle row), "
                                 "not {row}", key=name, swz=swz, name=arr.name, w=w, row=row),
                       tr("declare {name} with shape = [ROWS, {cols}]", name=arr.name, cols=w // esize), key=name)
            if arr.base % (8 * w):
                b.fail(where, tr("{key}: {name} starts at shared byte {base}; the {swz} pattern repeats every {r} "
                                 "bytes, so the array must start at a multiple of {r}", key=name, name=arr.name,
                                 base=arr.base, swz=swz, r=8 * w),
                       tr("declare it first among the shared arrays (or align the ones before it)"), key=name)
        lbo, sbo = canonical(code, major)
        opts[f"{name}_swizzle"] = code
        opts[f"{name}_lbo"] = _offset_key(b, k, raw, f"{name}_lbo", lbo, where)
        opts[f"{name}_sbo"] = _offset_key(b, k, raw, f"{name}_sbo", sbo, where)
    barr = b.arrays[bacc.array]
    n = raw.get("n")
    if n is None:
        n = barr.shape[0] if opts["b_major"] == "K" and len(barr.shape) == 2 else \
            (barr.shape[-1] if len(barr.shape) == 2 else 0)
    if not isinstance(n, int) or isinstance(n, bool) or not 8 <= n <= 256 or n % 8:
        b.fail(where, tr("n must be a multiple of 8 from 8 to 256, not {v!r}", v=n),
               tr("write n = 64 (the N of m64nNk{k})", k=K_OF[dtype]), key="n" if "n" in raw else "b")
    opts["n"] = n
    opts["a"] = "registers" if aacc is None else aacc.text
    return replace(bacc, op="wgmma", source=aacc, parts=((0, 16),), when=None, when_text=None,
                   options=tuple(sorted(opts.items())))


def scenario_op(access) -> WgmmaOp:
    dtype = access.option("dtype")
    return WgmmaOp(access.option("n"), K_OF[dtype], ACCUMULATOR[dtype], dtype, dtype, access.source is not None,
                   access.option("a_major") == "MN", access.option("b_major") == "MN")


def encode_many(start: np.ndarray, lbo: int, sbo: int, swizzle: int) -> np.ndarray:
    """``encode`` of many start addresses with one LBO, SBO and swizzle (uint64)."""
    st = (np.asarray(start, np.int64) & 0x3FFFF) >> 4
    const = (((int(lbo) & 0x3FFFF) >> 4) << 16) | (((int(sbo) & 0x3FFFF) >> 4) << 32) | (int(swizzle) << 62)
    return st.astype(np.uint64) | np.uint64(const)


def scenario_descriptors(scenario, instr, access, blocks: np.ndarray, groups: int):
    """(descriptor A or None, descriptor B) arrays ((blocks, groups) uint64 each) of one
    instruction: the operands' first elements evaluated for each warpgroup's first thread."""
    from ..counting import evaluate_instruction

    tids = np.arange(groups, dtype=np.int64) * 128
    out = []
    for name, acc in (("a", access.source), ("b", access)):
        if acc is None:
            out.append(None)
            continue
        lv = evaluate_instruction(scenario, instr, blocks, tids, access=acc)
        arr = scenario.array(acc.array)
        # the logical (row-major) element: the hardware applies the swizzle to the address itself
        idx = [np.broadcast_to(v.natural(), (len(blocks), groups)).astype(np.int64) for v in lv.indices]
        elem = idx[0] * arr.shape[1] + idx[1] if len(idx) == 2 else idx[0]
        start = arr.base + elem * arr.type.size
        out.append(encode_many(start, access.option(f"{name}_lbo"), access.option(f"{name}_sbo"),
                               access.option(f"{name}_swizzle")))
    return out


def _check_inside(scenario, instr, access, op, da, db, block: int, group: int) -> None:
    """Every row the instruction reads lies inside its operand's array (a ScenarioError otherwise)."""
    from ..counting import describe_lane
    from ..i18n import tr
    from ..scenario_parts import ScenarioError

    for name, acc, desc, mn, major in (("a", access.source, da, M, op.a_major), ("b", access, db, op.n, op.b_major)):
        if acc is None:
            continue
        arr = scenario.array(acc.array)
        rows = [a for cm in core_matrices(name.upper(), decode(desc), mn, major) for a in cm.rows]
        lo, hi = min(rows), max(rows) + CHUNK
        if lo < arr.base or hi > arr.base + arr.nbytes:
            raise ScenarioError(
                scenario.source, access.label(),
                tr("{key} reads shared bytes {lo} to {hi}, outside {name} (bytes {b0} to {b1}) at {lane}", key=name,
                   lo=lo, hi=hi - 1, name=arr.name, b0=arr.base, b1=arr.base + arr.nbytes - 1,
                   lane=describe_lane(scenario, block, 128 * group, instr)),
                tr("make {name} larger, or the operand's start, LBO or SBO smaller", name=arr.name), access.line)


def analyze_scenario(scenario, instr, access, ctx):
    """One wgmma over the launch: every warpgroup of every block issues it; its shared reads
    count once per warpgroup (on its first warp), 4 tensor-pipe warp instructions."""
    from ..counting import InstrStats

    op = scenario_op(access)
    groups = ctx.nw // WARPS_PER_GROUP
    st = InstrStats(instr, "shared", "wgmma", 16)
    per_warp = np.zeros((ctx.nblocks, ctx.nw), np.int32)
    per_active = np.zeros((ctx.nblocks, ctx.nw), np.uint8)
    per_active[:, :groups * WARPS_PER_GROUP] = 32
    wf = ideal = nbytes = 0
    checked: set = set()
    for blocks in ctx.chunks():
        da, db = scenario_descriptors(scenario, instr, access, blocks, groups)
        pairs = np.stack([da if da is not None else np.zeros_like(db), db], axis=-1).reshape(-1, 2)
        uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
        inv = np.asarray(inv).reshape(len(blocks), groups)
        for u, (a, b) in enumerate(uniq.tolist()):
            key = (a, b)
            if key not in checked:
                hit = np.argwhere(inv == u)[0]
                _check_inside(scenario, instr, access, op, a if da is not None else None, b,
                              int(blocks[hit[0]]), int(hit[1]))
                checked.add(key)
        if len(uniq) <= CACHED:
            cs = [count(op, int(a) if da is not None else None, int(b)) for a, b in uniq.tolist()]
            wf_u = np.array([c.wavefronts for c in cs], np.int64)
            st.deepest = max(st.deepest, max((max(c.per_phase, default=0) for c in cs), default=0))
        else:
            wf_u = np.concatenate([count_batch(op, uniq[lo:lo + BATCH, 0] if da is not None else None,
                                               uniq[lo:lo + BATCH, 1])[0] for lo in range(0, len(uniq), BATCH)])
            st.deepest = max(st.deepest, 1)
        per = wf_u[inv]                                  # (blocks, groups)
        wf += int(per.sum())
        ideal += per.size * (op.bytes // PHASE_BYTES)
        nbytes += per.size * op.bytes
        per_warp[blocks[0]:blocks[-1] + 1, 0:groups * WARPS_PER_GROUP:WARPS_PER_GROUP] = per
        ctx.step(instr)
    issued = WARPS_PER_GROUP * groups * ctx.nblocks
    st.warp_instructions = issued
    st.active_lanes = 32 * issued
    st.wavefronts, st.phases = wf, ideal
    st.per_warp, st.per_warp_active = per_warp, per_active
    st.kind_metrics = {INSTRUCTIONS: issued, WAVEFRONTS: wf, CONFLICTS: wf - ideal, BYTES: nbytes}
    return st


def scenario_figures(access, rows, d: dict) -> None:
    """``Analysis.per_access`` of a wgmma: its op, operands and per-warpgroup figures."""
    op = scenario_op(access)
    groups = sum(s.warp_instructions for s in rows) // WARPS_PER_GROUP
    wf, ph = sum(s.wavefronts for s in rows), sum(s.phases for s in rows)
    d.update(idle_phases=0, max_wavefronts_per_phase=max((s.deepest for s in rows), default=0),
             wgmma={**op.as_dict(), "warpgroup_instructions": groups, "rule": RULE,
                    "a_operand": access.option("a"), "b_operand": access.text,
                    "counters": dict(d.get("kind_metrics") or {})},
             bytes_requested=groups * op.bytes,
             wavefronts_per_instruction=round(wf / groups, 4) if groups else 0.0,
             ideal_wavefronts_per_instruction=round(ph / groups, 4) if groups else 0.0)


def scenario_reasons(d: AccessFigures) -> list[tuple[str, str, str]]:
    """The reasons of a scenario's wgmma (the Figures panel, ``analyze``)."""
    w = given(d.kind_figures("wgmma"))
    return explain_rows(d.replace(wgmma={**w, "descriptors": []}))


def _count_scenario(scenario, instr, access, ctx):
    return analyze_scenario(scenario, instr, access, ctx)


def _codegen(a, arr, sc, rename, k):
    return wgmma_lines(a, arr, sc, rename, k)


def _ptx_op_text(op: WgmmaOp, nd: int) -> tuple[str, str]:
    """(the wgmma.mma_async line of inline PTX with operand numbers from ``nd`` on, the PTX
    type of the accumulator constraint): D is %0..%(nd-1), then A (a descriptor, or four
    registers), B, and the scale-d flag."""
    dregs = ",".join(f"%{i}" for i in range(nd))
    if op.a_shared:
        a, nxt = f"%{nd}", nd + 1
    else:
        a, nxt = "{" + ",".join(f"%{nd + i}" for i in range(4)) + "}", nd + 4
    b, flag = f"%{nxt}", f"%{nxt + 1}"
    if op.atype in ("f16", "bf16"):
        tail = ", 1, 1" + (f", {int(op.trans_a)}" if op.a_shared else "") + f", {int(op.trans_b)}"
    elif op.atype in ("s8", "u8"):
        tail = ""
    else:
        tail = ", 1, 1"
    text = (f"wgmma.mma_async.sync.aligned.{op.shape}.{op.dtype}.{op.atype}.{op.btype} {{{dregs}}}, {a}, {b}, "
            f"wv_p{tail};")
    return text, flag


def wgmma_lines(a, arr, sc, rename, k: int) -> list[str]:
    """CUDA C of one scenario wgmma (``viz.gpu.codegen``): every thread of a warpgroup builds the
    two descriptors from the operands' first elements (evaluated as for the warpgroup's first
    thread, as the model does), then fence, the wgmma with D = A x B (scale-d false), commit
    and wait; the accumulators enter the kernel's running hash. Compiled for sm_90a."""
    from .codegen import c_comment

    op = scenario_op(a)
    bx, by, _bz = sc.launch.block
    ren = dict(rename)
    ren.update({"tid": "wv_gt", "lane": "0LL", "warp": "(wv_gt / 32)", "threadIdx.x": f"(wv_gt % {bx}LL)",
                "threadIdx.y": f"(wv_gt / {bx}LL % {by}LL)", "threadIdx.z": f"(wv_gt / {bx * by}LL)"})
    out = ["// " + c_comment(f"access {a.index}: wgmma {op.shape}.{op.atype}, A = {a.option('a')}, B = {a.text}", 400),
           "{", "  const long long wv_gt = wv_tid / 128 * 128;   // the warpgroup's first thread", "  (void)wv_gt;"]
    descs = []
    from ..expr import to_cuda

    for name, acc in (("a", a.source), ("b", a)):
        if acc is None:
            continue
        oarr = sc.array(acc.array)
        idx = ["wv_row", "wv_col"] if len(acc.indices) == 2 else ["wv_col"]
        out.append("  {")
        for nm, node in zip(idx, acc.indices):
            out.append(f"    const long long {nm} = {to_cuda(node, ren)};")
        # the logical (row-major) element: the hardware applies the swizzle to the address itself
        elem = f"wv_row * {oarr.shape[1]}LL + wv_col" if len(acc.indices) == 2 else "wv_col"
        out.append(f"    wv_{name}s = wv_sbase + (unsigned)({oarr.base}LL + ({elem}) * {oarr.type.size}LL);")
        out.append("  }")
        lbo, sbo, swz = a.option(f"{name}_lbo"), a.option(f"{name}_sbo"), a.option(f"{name}_swizzle")
        descs.append(f"  const unsigned long long wv_d{name} = (unsigned long long)((wv_{name}s & 0x3FFFFu) >> 4) | "
                     f"((unsigned long long){lbo >> 4}u << 16) | ((unsigned long long){sbo >> 4}u << 32) | "
                     f"((unsigned long long){swz}u << 62);")
    out[4:4] = ["  unsigned " + ", ".join(f"wv_{n}s = 0" for n in ("a", "b") if n == "b" or a.source is not None) + ";"]
    out += descs
    nd = op.n // 2
    acc_t, con = ("unsigned", "r") if op.dtype == "s32" else ("float", "f")
    out.append(f"  {acc_t} wv_c[{nd}];")
    out.append(f"  for (int wv_i = 0; wv_i < {nd}; ++wv_i) wv_c[wv_i] = 0;")
    text, flag = _ptx_op_text(op, nd)
    outs = ", ".join(f'"+{con}"(wv_c[{i}])' for i in range(nd))
    ins = (['"l"(wv_da)'] if op.a_shared else [f'"r"(wv_v[{i}])' for i in range(4)]) + ['"l"(wv_db)', '"r"(0)']
    body = "\\n".join(["{", ".reg .pred wv_p;", f"setp.ne.b32 wv_p, {flag}, 0;", "wgmma.fence.sync.aligned;", text,
                       "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", "}"])
    out.append(f'  asm volatile("{body}"')
    out.append(f"    : {outs}")
    out.append(f"    : {', '.join(ins)} : \"memory\");")
    keep = "wv_c[0]" if con == "r" else "__float_as_uint(wv_c[0])"
    out.append(f"  wv_acc += {keep};")
    out.append("}")
    return out


# ---------------------------------------------------------------------------- matching its SASS (TraceForm.sass_match)

# nvdisasm -gp output (the SASS reconciliation's reading, viz.trace.reconcile)
_SASS_PTX_LINE = re.compile(r'^\s*//## File "\.nv_debug_ptx_txt", line (\d+)')
_SASS_FUNC = re.compile(r"^\s*\.text\.([A-Za-z_$][\w$.]*):\s*$")
_SASS_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(.*?)\s*;")

_ARRIVE = re.compile(r"^(?:@!?U?P[0-7T]\s+)?WARPGROUP\.ARRIVE\b")
_GMMA_SHAPE = re.compile(r"^[A-Z]GMMA\.(\d+)x(\d+)x(\d+)")
_PTX_FENCE = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?wgmma\.fence\b")
_PTX_COMMIT = re.compile(r"^\s*(?:@!?%[\w$]+\s+)?wgmma\.commit_group\b")


def warpgroup_arrives(text: str) -> dict[str, list[tuple[int, int]]]:
    """{function: [(address, PTX line)]} of the ``WARPGROUP.ARRIVE`` that ptxas makes of each
    ``wgmma.fence``, from ``nvdisasm -gp`` output."""
    out: dict[str, list[tuple[int, int]]] = {}
    func, line = None, 0
    for raw in text.splitlines():
        m = _SASS_FUNC.match(raw)
        if m:
            func, line = m.group(1), 0
            continue
        m = _SASS_PTX_LINE.match(raw)
        if m:
            line = int(m.group(1))
            continue
        m = _SASS_INSTR.match(raw)
        if m and func is not None and _ARRIVE.match(m.group(2).strip()):
            out.setdefault(func, []).append((int(m.group(1), 16), line))
    return out


def _gmma_signature(a) -> tuple:
    """(m, n, k, A from registers) of an HGMMA / QGMMA / IGMMA / BGMMA."""
    m = _GMMA_SHAPE.match(a.opcode)
    body = re.sub(r"^@!?U?P[0-7T]\s+", "", a.text)
    ops = [o.strip() for o in body.split(None, 1)[1].split(",")] if len(body.split(None, 1)) > 1 else []
    a_regs = len(ops) > 1 and re.fullmatch(r"R\d+", ops[1]) is not None
    return (tuple(int(x) for x in m.groups()) if m else None, a_regs)


def _ptx_signature(r: dict) -> tuple:
    op = parse(r.get("opcode", ""), r.get("address", ""))
    if op is None:
        return (None, None)
    return ((64, op.n, op.k), not op.a_shared)


def _ptx_wgmma_groups(prow: list[dict], ptx_lines: list[str]) -> list[tuple[int, list[dict]]]:
    """The PTX's ``wgmma.mma_async`` in their commit groups, each (the line of the
    ``wgmma.fence`` that opens it or 0, its members in line order). A group ends at a
    ``wgmma.commit_group``, a ``wgmma.fence`` after members, or a function's start."""
    at: dict[int, int] = {}          # 1-based line -> group index
    fences: list[int] = []
    gid, members = 0, 0
    fences.append(0)
    for k, ln in enumerate(ptx_lines, 1):
        s = ln.strip()
        if re.search(r"\.(entry|func)\s", s) or _PTX_COMMIT.match(s) or (_PTX_FENCE.match(s) and members):
            gid, members = gid + 1, 0
            fences.append(0)
        if _PTX_FENCE.match(s):
            fences[gid] = k
        at[k] = gid
        if s.startswith("wgmma.mma_async") or re.match(r"^@!?%[\w$]+\s+wgmma\.mma_async", s):
            members += 1
    groups: dict[int, list[dict]] = {}
    for r in sorted((r for r in prow if r["kind"] == "wgmma"), key=lambda r: r["line_no"]):
        groups.setdefault(at.get(r["line_no"], -1), []).append(r)
    return [(fences[g] if 0 <= g < len(fences) else 0, rs) for g, rs in sorted(groups.items())]


def match_wgmma(gmma: list, prow: list[dict], ptx_lines: list[str],
                arrives: dict[str, list[tuple[int, int]]]) -> tuple[dict[int, list], list]:
    """Each HGMMA / QGMMA / IGMMA / BGMMA to its ``wgmma.mma_async``: ({PTX id: [SASS]},
    unmatched). The line information ptxas gives these instructions is that of the code that
    built their descriptors (another ``wgmma``'s line, or one of another loop), so they are
    matched by commit group: the SASS group (a run of them up to the one that carries
    ``gsb0``, or up to the next ``WARPGROUP.ARRIVE``) goes to the PTX commit group whose
    ``wgmma.fence`` line its ``WARPGROUP.ARRIVE`` carries, member by member in order, when the
    shapes and A's source (registers or a descriptor) agree; else to the one PTX group with
    the same shapes; else it stays unmatched. Several SASS groups of one PTX group (ptxas
    unrolled or duplicated the code) are copies: each execution runs one of them."""
    pgroups = _ptx_wgmma_groups(prow, ptx_lines)
    psigs = [[_ptx_signature(r) for r in rs] for _f, rs in pgroups]
    # segments: the GMMA after one WARPGROUP.ARRIVE, each in runs that end at a gsb0
    segments: list[list[list]] = []
    last: object = None
    for a in sorted(gmma, key=lambda a: (a.function, a.addr)):
        if last is None or last.function != a.function or any(last.addr < x < a.addr
                                                               for x, _ln in arrives.get(a.function, ())):
            segments.append([[a]])
        elif re.search(r"\bgsb0\b", last.text):
            segments[-1].append([a])
        else:
            segments[-1][-1].append(a)
        last = a

    def pick(g: list) -> int | None:
        before = [ln for x, ln in arrives.get(g[0].function, ()) if x < g[0].addr]
        fence = before[-1] if before else 0
        sig = [_gmma_signature(a) for a in g]
        same = [k for k, ps in enumerate(psigs) if ps == sig]
        by_fence = [k for k in same if fence and pgroups[k][0] == fence]
        return by_fence[0] if len(by_fence) == 1 else same[0] if len(same) == 1 else None

    got: dict[int, list] = {}
    unmatched: list = []
    for seg in segments:
        picks = [pick(g) for g in seg]
        if None in picks and len(seg) > 1:     # a gsb0 inside a commit group: the runs together may be it
            whole = pick([a for g in seg for a in g])
            if whole is not None:
                seg, picks = [[a for g in seg for a in g]], [whole]
        for g, k in zip(seg, picks):
            if k is None:
                unmatched.extend(g)
                continue
            for r, a in zip(pgroups[k][1], g):
                got.setdefault(r["id"], []).append(a)
    return got, unmatched



def match_sass(gmma: list, prow: list[dict], ptx_lines: list[str], sass_text: str) -> tuple[dict, list]:
    """``TraceForm.sass_match``: ``match_wgmma`` with the ``WARPGROUP.ARRIVE`` of ``sass_text``."""
    return match_wgmma(gmma, prow, ptx_lines, warpgroup_arrives(sass_text))


def _make_kind():
    """The scenario kind (``viz.kinds.registry.Kind``), with the fields this registry has."""
    from dataclasses import fields

    from .registry import Kind

    have = {f.name for f in fields(Kind)}
    extra = {"name": "wgmma", "writes": False, "codegen": _codegen, "codegen_whole": True,
             "phase_caption": "a warpgroup's wgmma: one phase per 8 x 16-byte core matrix",
             "picture_map": detail_gmma_map, "matrix_map": scenario_gmma_map, "arch_specific": ("wgmma.mma_async",)}
    return Kind(op="wgmma", keys=SCENARIO_KEYS, example=EXAMPLE, parse=parse_scenario, count=_count_scenario,
                metrics=GMMA_METRICS, metric_labels=GMMA_LABELS, figures=scenario_figures, reasons=scenario_reasons,
                through_banks=False, **{k: v for k, v in extra.items() if k in have})


def _form_record_code(ins) -> list[str]:
    """``TraceForm.record_code`` on the kinds registry: the MemInstr's address is the whole
    operand text there (``slots = "operands"``)."""
    op = parse(ins.opcode, ins.address)
    if op is None:                       # cannot happen for an instruction ``is_wgmma`` accepted
        return ["mov.u64 %wvd0, 0;"]
    return record_code(op.a_operand or None, op.b_operand)


def _form_count(trace, ins: dict, rows) -> dict:
    got = count_trace_rows(ins, trace.addresses(rows), trace.warp[rows], trace.pred[rows])
    return {k: got[k] for k in GMMA_METRICS}


def _form_replay(trace, ins: dict, rows, remap, ten) -> dict:
    """``TraceForm.replay``: the gmma counters of some records with the shared bytes their
    core matrices read re-mapped (``remapped_wavefronts``)."""
    op = op_of(ins)
    if op is None:
        return {k: 0 for k in GMMA_METRICS}
    got = count_records(op, trace.addresses(rows), trace.warp[rows], trace.pred[rows], remap=remap)
    return {k: got[k] for k in GMMA_METRICS}


def _make_forms() -> tuple:
    """The trace form (``viz.kinds.registry.TraceForm``): the PTX it records (dense
    ``wgmma.mma_async``; the sparse form stays unrecorded), the record's slots, its counters and
    what analyze shows of it."""
    try:
        from .registry import TraceForm
    except ImportError:
        return ()
    from dataclasses import fields

    have = {f.name for f in fields(TraceForm)}
    kw = dict(kind="wgmma", heads=("wgmma",), accept=lambda parts: is_wgmma(".".join(parts)), space="shared",
              # 4 bytes "a lane": the width the SASS reconciliation reads off HGMMA / QGMMA (its reads are
              # counted by the kind, A's and B's bytes, not by lanes)
              roles=(("load", "shared", 0),), width=lambda parts, operands: 4,
              sass={k: "shared" for k in SASS_FORMS}, sass_class="wgmma", counts_shared=False, counts_global=False,
              ten_spaces=(), slots="operands", record_code=_form_record_code, count=_form_count,
              counters=dict(GMMA_LABELS), detail_op="wgmma", detail_options=lambda ins: (("ptx", str(ins.get("ptx", ""))),),
              name="wgmma", figures=access_figures, reasons=explain_rows, summary=table_text,
              sass_width=GMMA_SASS_WIDTH, sass_match=match_sass, matrix_map=trace_gmma_map, replay=_form_replay,
              older_unrecorded={"wgmma.mma_async": "warpgroup MMA (tl.dot): reads its A/B tiles from shared memory "
                                                   "through descriptors"})
    return (TraceForm(**{k: v for k, v in kw.items() if k in have}),)


# What this module registers: REGISTERED of viz/kinds/__init__.py takes KINDS, FORMS and UNRECORDED.
KINDS = (_make_kind(),)
FORMS = _make_forms()
UNRECORDED = ()


__all__ = ["Descriptor", "decode", "encode", "swizzle_address", "canonical", "WgmmaOp", "parse", "parse_ptx_line",
           "is_wgmma", "CoreMatrix", "core_matrices", "operand_matrices", "phases", "phase_wavefronts", "count",
           "WgmmaCount", "record_code", "descriptors", "count_records", "rows_of", "to_text", "GmmaRow",
           "GMMA_METRICS", "GMMA_LABELS", "WAVEFRONTS", "CONFLICTS", "BYTES", "INSTRUCTIONS", "RULE", "TAG",
           "SASS_FORMS", "SWIZZLES", "SWIZZLE_CODE", "parse_scenario", "analyze_scenario", "scenario_op",
           "scenario_descriptors", "scenario_figures", "scenario_reasons", "SCENARIO_KEYS", "EXAMPLE", "op_of",
           "count_trace_rows", "access_figures", "explain_rows", "table_text", "GmmaMap", "gmma_map",
           "scenario_gmma_map", "trace_gmma_map", "detail_gmma_map", "rows_batch", "count_batch"]
