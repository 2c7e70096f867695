"""ldmatrix and stmatrix (m8n8, b16): the matrix kinds of scenario format 3.

A warp instruction ``ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16`` moves N (1, 2 or
4) 8x8 matrices of 16-bit elements between shared memory and registers. Each lane gives
the shared address of one 16-byte row: lanes 0-7 the rows of matrix 0, lanes 8-15 those
of matrix 1, and so on; with .x1 only lanes 0-7's addresses are used, with .x2 lanes
0-15. Every lane of the warp must execute it (``.sync.aligned``), so a scenario may not
guard it with ``when``.

Registers: lane l receives, of each matrix i, register i holding the elements
(row l/4, columns 2*(l%4) and 2*(l%4)+1); with .trans the matrix is transposed on the
way, so the lane gets (rows 2*(l%4) and 2*(l%4)+1, column l/4). ``stmatrix`` is the
same map backwards.

How the H100 serves the rows (measured, docs/memory-model.md "ldmatrix and stmatrix"): like
a 16-byte shared access whose phases are the matrices, one phase of 8 lanes per matrix,
without the pair merge of LDS.128 (``PAIR_MERGE``); ``warp_wavefronts`` is the plain
reference of that rule, the engine counts it with its compiled shared-memory counter.
LDSM and STSM have instruction counters of their own (``LDSM_INST_METRIC``,
``STSM_INST_METRIC``). This module is pure Python (no Qt, no numba).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..i18n import tr
from ..gpus import BANK_BYTES, BANK_MASK, WARP, WORD_SHIFT
from ..scenario_parts import access_text

ROW_BYTES = 16            # one row of 8 b16 elements
ROWS = 8                  # rows (and columns) of one matrix
OP_RE = re.compile(r"^\s*(ldmatrix|stmatrix)\.x([124])(\.trans)?\s*$")
OP_NAMES = tuple(f"{k}.x{n}{t}" for k in ("ldmatrix", "stmatrix") for n in (1, 2, 4) for t in ("", ".trans"))

# Nsight Compute counts LDSM and STSM warp instructions in counters of their own (neither is in
# smsp__inst_executed_op_shared_ld / _st: both read 0 in all 365 probes); their wavefronts and
# bank conflicts count with the shared loads / stores. Measured on the H100: docs/memory-model.md.
LDSM_INST_METRIC = "smsp__inst_executed_op_ldsm.sum"
STSM_INST_METRIC = "smsp__inst_executed_op_shared_stsm.sum"


@dataclass(frozen=True)
class MatrixOp:
    """One of ``OP_NAMES``: which instruction, how many matrices, transposed or not."""

    kind: str                 # "ldmatrix" | "stmatrix"
    num: int                  # 1, 2 or 4 matrices
    trans: bool = False

    @property
    def text(self) -> str:
        return f"{self.kind}.x{self.num}" + (".trans" if self.trans else "")

    @property
    def is_load(self) -> bool:
        return self.kind == "ldmatrix"

    @property
    def op(self) -> str:
        """The plain op it counts as: "load" (ldmatrix) or "store" (stmatrix)."""
        return "load" if self.is_load else "store"

    @property
    def lanes_used(self) -> int:
        """Lanes whose row address the instruction reads: 8 per matrix."""
        return ROWS * self.num

    @property
    def ptx(self) -> str:
        return f"{self.kind}.sync.aligned.m8n8.x{self.num}" + (".trans" if self.trans else "") + ".shared.b16"

    @property
    def inst_metric(self) -> str:
        """The Nsight Compute counter of these warp instructions."""
        return LDSM_INST_METRIC if self.is_load else STSM_INST_METRIC

    @property
    def sass(self) -> str:
        """The SASS mnemonic ptxas emits (LDSM.16.M88, LDSM.16.MT88.2, STSM.16.M88.4 ...; seen on the H100)."""
        return ("LDSM" if self.is_load else "STSM") + (".16.MT88" if self.trans else ".16.M88") + \
            ("" if self.num == 1 else f".{self.num}")


def parse_op(text: object) -> MatrixOp | None:
    """``"ldmatrix.x4"``, ``"stmatrix.x2.trans"`` ... -> MatrixOp; anything else None."""
    if not isinstance(text, str):
        return None
    m = OP_RE.match(text)
    if not m:
        return None
    return MatrixOp(m.group(1), int(m.group(2)), bool(m.group(3)))


def looks_like_matrix_op(text: object) -> bool:
    """A misspelt matrix op ("ldmatrix", "ldmatrix.x3", "ldsm.x4"): the loader says what is allowed."""
    return isinstance(text, str) and bool(re.match(r"\s*(ld|st)(matrix|sm)", text, re.I))


def matrix_of_lane(lane: int) -> int:
    """The matrix whose row lane ``lane`` addresses (lanes 0-7: 0, 8-15: 1, ...)."""
    return (lane % WARP) // ROWS


def row_of_lane(lane: int) -> int:
    return lane % ROWS


def fragment(lane: int, matrix: int, trans: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two (row, column) elements of ``matrix`` that register ``matrix`` of ``lane``
    holds (its low half first)."""
    r, c = (lane % WARP) // 4, 2 * (lane % 4)
    if trans:
        return (c, r), (c + 1, r)
    return (r, c), (r, c + 1)


def holders(matrix_row: int, column: int, trans: bool) -> int:
    """The lane that holds element (row, column) of a matrix (inverse of ``fragment``)."""
    if trans:
        matrix_row, column = column, matrix_row
    return 4 * matrix_row + column // 2


def fragment_table(op: MatrixOp) -> list[list[tuple[int, int, int, int]]]:
    """Per lane: (matrix, register, row, column) of each b16 element it ends with (ldmatrix)
    or gives (stmatrix), in register order, low half first."""
    out = []
    for lane in range(WARP):
        mine = []
        for i in range(op.num):
            for row, col in fragment(lane, i, op.trans):
                mine.append((i, i, row, col))
        out.append(mine)
    return out


# ---------------------------------------------------------------------------- the H100 rule

# The rows of one matrix (8 lanes, 8 x 16 bytes = 32 banks' worth) form one phase, exactly
# like a quarter-warp phase of a 16-byte LDS/STS; a phase takes as many wavefronts as the
# most distinct 32-bit words any one bank must deliver. Unlike LDS.128, lanes that repeat
# addresses in pairs do not merge phases. Measured on the H100: all 365 probes of
# tools/probes/ldmatrix_wavefronts.sh agree (docs/memory-model.md, "ldmatrix and stmatrix").
PAIR_MERGE = False


def phases_of(op: MatrixOp) -> tuple[tuple[int, ...], ...]:
    """The lanes of each phase: one phase per matrix."""
    return tuple(tuple(range(ROWS * i, ROWS * i + ROWS)) for i in range(op.num))


def warp_wavefronts(op: MatrixOp, rows: list[int]) -> tuple[int, int]:
    """(wavefronts, ideal) of one warp's instruction from its 32 lanes' row byte addresses
    (only the first ``op.lanes_used`` matter). The engine counts the same with its compiled
    shared-memory counter; this plain version is the reference the tests compare with."""
    wf = 0
    for lanes in phases_of(op):
        per_bank: dict[int, set[int]] = {}
        for ln in lanes:
            w0 = rows[ln] >> WORD_SHIFT
            for q in range(ROW_BYTES // BANK_BYTES):
                per_bank.setdefault((w0 + q) & BANK_MASK, set()).add(w0 + q)
        wf += max(len(s) for s in per_bank.values())
    return wf, op.num


# ---------------------------------------------------------------------------- the picture's model


@dataclass(frozen=True)
class MatrixRow:
    """One 16-byte row of one matrix, as the warp instruction moves it."""

    matrix: int
    row: int
    lane: int                 # the lane that gives its address
    byte_addr: int
    banks: tuple[int, int]    # first and last bank of its 4 words
    wavefront: int            # 1-based wavefront that moves it (the last of its words)


@dataclass(frozen=True)
class MatrixMap:
    """What ``viz.render.matrix_view`` draws for one warp instruction of ldmatrix/stmatrix:
    each matrix's 8 rows in memory (who gives the address, which banks, which wavefront)
    and, for each of its 64 elements, the lane whose register holds it."""

    op: MatrixOp
    title: str                # the access as written
    where: str                # block, warp, instruction
    rows: tuple[MatrixRow, ...]
    holder: tuple[tuple[tuple[int, ...], ...], ...]   # [matrix][row][column] -> lane
    wavefronts: int
    conflicts: int

    @property
    def text(self) -> str:
        """A one-line name (an SVG's title): the op and the access."""
        return f"{self.op.text} {self.title}"

    def default_across(self) -> int:
        """Matrices side by side (.x1, .x2) or 2 x 2 (.x4)."""
        return 2 if self.op.num == 4 else self.op.num

    def natural_size(self, scale: float = 1.0, across: int | None = None) -> tuple[int, int]:
        """Every number at 16 px or more, with ``across`` matrices a row (default
        ``default_across``; 1: one above the other, for a narrow window, whose headings
        take more lines)."""
        across = max(1, min(self.op.num, across or self.default_across()))
        down = -(-self.op.num // across)
        w = 120 + across * 560
        if across < self.default_across() or across == 1 and self.op.num > 1:
            return int(max(680, w) * scale), int((320 + down * 420) * scale)
        return int(max(960, w) * scale), int((230 + down * 420) * scale)

    def to_text(self) -> str:
        out = [f"{self.op.text}  {self.title}  ({self.where})",
               f"{self.wavefronts} wavefronts, {self.conflicts} bank conflicts; "
               + ("lane l holds (row 2*(l%4) and 2*(l%4)+1, column l/4) of each matrix" if self.op.trans else
                  "lane l holds (row l/4, columns 2*(l%4) and 2*(l%4)+1) of each matrix")]
        for i in range(self.op.num):
            out.append("")
            out.append(f"matrix {i} (register {i} of every lane)")
            out.append("  row  lane  byte addr  banks  wf | lanes holding columns 0-7")
            for r in self.rows:
                if r.matrix != i:
                    continue
                lanes = " ".join(f"{x:>2}" for x in self.holder[i][r.row])
                out.append(f"  {r.row:>3}  {r.lane:>4}  {r.byte_addr:>9}  {r.banks[0]:>2}-{r.banks[1]:<2} {r.wavefront:>3} | {lanes}")
        return "\n".join(out)


def matrix_map(detail) -> MatrixMap:
    """The MatrixMap of one warp instruction (a ``viz.warp.WarpDetail`` of a matrix access)."""
    op = detail.access.matrix
    if op is None:
        raise ValueError("not an ldmatrix / stmatrix access")
    rows = []
    for ln in detail.lanes[: op.lanes_used]:
        rows.append(MatrixRow(matrix_of_lane(ln.lane), row_of_lane(ln.lane), ln.lane, ln.byte_addr,
                              (ln.banks[0], ln.banks[-1]), ln.wavefront + 1))
    holder = tuple(tuple(tuple(holders(r, c, op.trans) for c in range(ROWS)) for r in range(ROWS))
                   for _ in range(op.num))
    where = tr("block ({x},{y},{z}) · warp {w}", x=detail.block_xyz[0], y=detail.block_xyz[1],
               z=detail.block_xyz[2], w=detail.warp) + " · " + tr("instruction {k}", k=detail.instruction.number + 1)
    return MatrixMap(op, access_text(detail), where, tuple(rows), holder, detail.wavefronts, detail.conflicts)


__all__ = ["MatrixMap", "MatrixRow", "matrix_map", "MatrixOp", "parse_op", "OP_NAMES", "ROW_BYTES", "fragment", "fragment_table", "holders",
           "matrix_of_lane", "row_of_lane", "phases_of", "warp_wavefronts", "LDSM_INST_METRIC", "STSM_INST_METRIC",
           "looks_like_matrix_op"]


# ---------------------------------------------------------------------------- in a trace


def matrix_lanes(opcode: str) -> int:
    """Lanes that give a row address to ``ldmatrix``/``stmatrix``: 8 per 8x8 matrix
    (``.x1`` 8, ``.x2`` 16, ``.x4`` 32)."""
    for n in (1, 2, 4):
        if f".x{n}." in opcode + ".":
            return 8 * n
    return WARP


def _row_width(parts, operands) -> int:
    return ROW_BYTES                    # each lane gives the address of one 16-byte row


def _accept(parts: list[str]) -> bool:
    return "shared::cluster" not in parts


from .registry import TraceForm  # noqa: E402

FORMS = (
    TraceForm(kind="ldmatrix", heads=("ldmatrix",), accept=_accept, roles=(("load", "", 0),), width=_row_width,
              sass={"LDSM": "shared"}, instruction_counter={"shared": "smsp__inst_executed_op_ldsm.sum"},
              counts_global=False, lanes=matrix_lanes, latency="shared", shared_pipe=True,
              counters={"smsp__inst_executed_op_ldsm.sum": "ldmatrix instructions"},
              sass_kind={"shared": "ldmatrix"}, fuses=False),
    # stmatrix is counted only at the SM level on the H100 (no smsp__ counter)
    TraceForm(kind="stmatrix", heads=("stmatrix",), accept=_accept, roles=(("store", "", 0),), width=_row_width,
              sass={"STSM": "shared"}, instruction_counter={"shared": "sm__sass_inst_executed_op_shared_stsm.sum"},
              counts_global=False, lanes=matrix_lanes, shared_pipe=True, sass_kind={"shared": "stmatrix"},
              counters={"sm__sass_inst_executed_op_shared_stsm.sum": "stmatrix instructions"}, fuses=False),
)
KINDS = ()
UNRECORDED = ()
