"""The cp.async kind: LDGSTS, a copy of 4, 8 or 16 bytes per lane from global memory straight
into shared memory.

Scenario side: ``op = "cp.async"`` (parsed by ``viz.kinds.build``, counted by
``viz.kinds.async_copy`` with numba, described by ``viz.kinds.analyze`` / ``viz.kinds.report``,
CUDA from ``viz.kinds.codegen.cp_async_body``, random scenarios from
``viz.kinds.random_text.cp_async_text``). Trace side: PTX ``cp.async.{ca,cg}.shared.global``
(not the bulk copies, not the group and mbarrier instructions): trace kind "cp.async", two
operands (the shared destination, recorded with no counting of its own, and the global
source, counted as a load's sectors and as one LDGSTS instruction).
"""

from __future__ import annotations

import re

from ..access_figures import AccessFigures
from .analyze import count_cp_async, cp_async_figures
from .build import EXAMPLES, KEYS, parse_cp_async
from .registry import Kind, TraceForm
from .report import extra_rows

LDGSTS_METRICS = (
    "smsp__inst_executed_op_ldgsts.sum",
)


def _ldgsts_rule(d: AccessFigures) -> str:
    return "ldgsts"


def _always(access) -> bool:
    return True


def _codegen(a, arr, sc, rename, k):
    from .codegen import cp_async_body

    return cp_async_body(a, arr, sc, rename)


def _random_text(r):
    from .random_text import cp_async_text

    return cp_async_text(r)


KIND = Kind(
    op="cp.async", keys=frozenset(KEYS["cp.async"]), example=EXAMPLES["cp.async"], parse=parse_cp_async,
    count=count_cp_async, figures=cp_async_figures,
    metrics=LDGSTS_METRICS, metric_labels={
        "smsp__inst_executed_op_ldgsts.sum": "cp.async instructions",
    },
    shared_rule=_ldgsts_rule, extra_reasons=extra_rows,
    # a bank takes one write per lane: lanes on one word are not merged (measured)
    per_lane=_always,
    name="cp.async", sass_opcodes=("LDGSTS",), codegen=_codegen, random_text=_random_text, copy_engine=True,
)


# ---------------------------------------------------------------------------- in a trace


def _accept(parts: list[str]) -> bool:
    return len(parts) >= 2 and parts[1] == "async" and not any(
        p.startswith(("bulk", "commit", "wait", "mbarrier")) for p in parts[2:])


def _copy_width(parts, operands: str) -> int:
    nums = re.findall(r"\]\s*,\s*(0[xX][0-9a-fA-F]+|\d+)", operands)    # Triton writes the size in hex
    return (int(nums[-1], 16) if nums[-1][:2].lower() == "0x" else int(nums[-1])) if nums else 16


def source_operand(opcode: str, operands: str) -> str | None:
    """The operand of a ``cp.async`` that says whether a lane reads global memory at all:
    ``src-size`` (a register or number: 0 bytes read, the shared destination zero-filled) or
    ``ignore-src`` (a predicate), written after ``cp-size``; None when it has neither.
    Triton masks its loads so (``cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ],
    0x10, %r2;`` with ``%r2`` 0 on masked lanes)."""
    tail = operands.rsplit("]", 1)[-1]
    ops = [t.strip() for t in tail.split(",") if t.strip()]
    # ops: cp-size, then src-size or ignore-src, then a cache policy (with .L2::cache_hint)
    if "L2::cache_hint" in opcode:
        ops = ops[:-1]
    return ops[1] if len(ops) >= 2 else None


def zero_fill_code(ins, opcode: str, operands: str, bits_of) -> list[str]:
    """PTX that clears, in the global-lane mask (%wvr3), the lanes of a ``cp.async``'s global
    operand that read nothing from global memory: ``src-size`` 0 or ``ignore-src`` true
    (``TraceForm.mask_code``; ``bits_of(register)``: its width, 0 for a predicate). On the H100
    such a lane makes no global request or sector (Triton's masked softmax and matmul: Nsight
    Compute counted half the requests a trace of every lane gave). A ValueError for an operand
    that is neither a number nor a register."""
    if ins.space != "global":
        return []
    op = source_operand(opcode, operands)
    if op is None:
        return []
    if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)", op):
        return ["mov.b32 %wvr3, 0;"] if int(op, 0) == 0 else []
    if not re.fullmatch(r"%?[A-Za-z_$][\w$]*", op):
        raise ValueError(f"cp.async's source size `{op}` is not a number or a register")
    if bits_of(op) == 0:                   # a predicate: ignore-src
        return [f"vote.sync.ballot.b32 %wvr9, {op}, %wvr0;", "not.b32 %wvr9, %wvr9;",
                "and.b32 %wvr3, %wvr3, %wvr9;"]
    test = f"setp.ne.u64 %wvp1, {op}, 0;" if bits_of(op) == 64 else f"setp.ne.u32 %wvp1, {op}, 0;"
    return [test, "vote.sync.ballot.b32 %wvr9, %wvp1, %wvr0;", "and.b32 %wvr3, %wvr3, %wvr9;"]


FORMS = (
    TraceForm(kind="cp.async", heads=("cp",), accept=_accept, space="shared",
              roles=(("store", "shared", 0), ("load", "global", 1)), width=_copy_width,
              sass={"LDGSTS": "shared"},
              # the table names only the global operand, so each instruction counts once
              instruction_counter={"global": "smsp__inst_executed_op_ldgsts.sum"},
              predicated_off_counts=True, counts_shared=False, ten_spaces=("global",), detail_op="cp.async",
              mask_code=zero_fill_code, skip_spaces=("global",),
              latency="",            # asynchronous: waited for at wait_group
              counters={"smsp__inst_executed_op_ldgsts.sum": "cp.async instructions"},
              sass_kind={"global": "cp.async"}, fuses=False),
)
KINDS = (KIND,)
UNRECORDED = ()
