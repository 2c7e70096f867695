"""The atomic kind: ``atomicAdd`` on shared (ATOMS) and global memory (ATOM / RED).

Scenario side: ``op = "atomic"`` (parsed by ``viz.kinds.build``, counted by
``viz.kinds.atomics`` with numba, described by ``viz.kinds.analyze``, CUDA from
``viz.kinds.codegen.atomic_body``). Trace side: PTX ``atom``/``red`` of global, shared or
generic memory (not ``.shared::cluster``, not ``red.async``): trace kinds "atomic" and
"reduction" (a global ``atom`` whose result is never read is a RED in the SASS), counted
by the same rules, with their own Nsight Compute counters. The rules are in
``viz.kinds.atomics``'s docstring and docs/memory-model.md, "Atomics".
"""

from __future__ import annotations

import re

from ..access_figures import AccessFigures
from .analyze import atomic_active_lanes, count_atomic
from .build import EXAMPLES, KEYS, parse_atomic
from .plain import plain_accept
from .registry import Kind, TraceForm

ATOM_METRICS = (
    "smsp__inst_executed_op_shared_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum",
)
GLOBAL_ATOM_METRICS = (
    "smsp__sass_inst_executed_op_global_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "smsp__inst_executed_op_global_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
)
SHARED_ATOM_WAVEFRONTS = ATOM_METRICS[1]
SHARED_ATOM_CONFLICTS = ATOM_METRICS[2]


def _atom_rule(d: AccessFigures) -> str:
    return "atom_add" if (d.options or {}).get("result") == "used" else "atom_inc"


def _atomic_per_lane(access) -> bool:
    return access.option("result") == "used"


def _codegen(a, arr, sc, rename, k):
    from .codegen import atomic_body

    return atomic_body(a, arr, sc, rename)


def _random_text(r):
    from .random_text import atomic_text

    return atomic_text(r)


KIND = Kind(
    op="atomic", keys=frozenset(KEYS["atomic"]), example=EXAMPLES["atomic"], parse=parse_atomic,
    count=count_atomic,
    metrics=ATOM_METRICS + GLOBAL_ATOM_METRICS, metric_labels={
        "smsp__inst_executed_op_shared_atom.sum": "shared atomic instructions",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum": "shared atomic wavefronts",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum": "shared atomic bank conflicts",
        "smsp__sass_inst_executed_op_global_atom.sum": "global atomic instructions (ATOM)",
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": "global atomic requests",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum": "global atomic sectors",
        "smsp__inst_executed_op_global_red.sum": "global reduction instructions (RED)",
        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": "global reduction requests",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum": "global reduction sectors",
    },
    shared_rule=_atom_rule,
    # an atomic whose old value is read serves every lane's word on its own (measured)
    per_lane=_atomic_per_lane, active_lanes=atomic_active_lanes,
    name="atomic add", sass_opcodes=("ATOMS", "ATOMG", "ATOM", "RED", "REDG"), codegen=_codegen, random_text=_random_text,
)


# ---------------------------------------------------------------------------- in a trace


def atomic_rule(ins: dict) -> str:
    """How a shared atomic's wavefronts are counted (viz.kinds.atomics): "words" (the busiest
    bank's distinct words: ``ATOMS.POPC.INC``, nvcc's ``atomicAdd(&h[i], 1)`` with the result
    unused) or "lanes" (every lane in turn: ``ATOMS.ADD`` and the rest). From the SASS where
    the trace has it, else from the PTX: an ``add`` of the constant 1 is taken to be a POPC.INC."""
    info = ins.get("sass") or {}
    if info.get("atomic_rule"):
        return info["atomic_rule"]
    text = " ".join(ins.get("ptx", "").split()).rstrip(";")
    return "words" if ".add." in ins.get("opcode", "") + "." and text.endswith(", 1") else "lanes"


def _trace_shared(ins: dict, addr, sh):
    """A traced shared atomic's (wavefronts, phases, active lanes) per record."""
    from .atomics import count_atomic as counts

    wf, ph, act, _deep = counts(addr, sh, 1, atomic_rule(ins) == "lanes")
    return wf, ph, act


def _trace_global(addr, gl):
    """A traced global atomic's sectors per record: lanes on one address go one after another."""
    from .atomics import count_global_atomic

    return count_global_atomic(addr, gl, 1)


def _detail_options(ins: dict) -> tuple:
    """A traced atomic drawn as the scenario kind: the rule its counting uses ("result": "used"
    serves lane by lane), and its name where it is not an add ("atomic operation" / "reduction")."""
    kind = ins.get("kind")
    used = kind == "atomic" if ins["space"] == "global" else atomic_rule(ins) == "lanes"
    options: tuple = (("result", "used" if used else "unused"),)
    if ".add." not in str(ins.get("opcode", "")) + ".":
        options += (("name", kind),)       # not an add: "atomic operation" / "reduction"
    return options


_OPERAND_WORD = re.compile(r"%?[\w$]+")


def unused_atomics_are_reductions(lines: list[str], instrs: list, starts: list[int]) -> list:
    """A global ``atom`` whose result register is never read is a RED in the SASS (ptxas
    drops the return; measured on the H100: Nsight Compute counts it in
    ``smsp__inst_executed_op_global_red``): its trace kind becomes "reduction"
    (``TraceForm.post_parse``: ``lines`` the PTX, ``instrs`` the parser's ``MemInstr``s,
    ``starts`` the lines where functions start). Registers are per function, so the search
    stays inside the instruction's function. The words of each function are counted once
    (searching the function's lines again for each atomic was quadratic: 20,000 atomics
    whose results go unused took minutes)."""
    import bisect
    from collections import Counter
    from dataclasses import replace

    counted: dict[tuple[int, int], Counter] = {}
    out = []
    for ins in instrs:
        if ins.kind == "atomic" and ins.space == "global":
            dest = ins.ptx.split(None, 2)[1].rstrip(",") if not ins.ptx.startswith("@") else \
                ins.ptx.split(None, 3)[2].rstrip(",")
            at = ins.line_no - 1
            k = bisect.bisect_left(starts, at)
            lo = starts[k - 1] if k > 0 else 0
            k2 = k + 1 if k < len(starts) and starts[k] == at else k      # the first start after the line
            hi = starts[k2] if k2 < len(starts) else len(lines)
            words = counted.get((lo, hi))
            if words is None:
                words = counted[(lo, hi)] = Counter(w for j in range(lo, hi) for w in _OPERAND_WORD.findall(lines[j]))
            own = _OPERAND_WORD.findall(lines[at]).count(dest) if lo <= at < hi else 0
            if words[dest] - own <= 0:
                ins = replace(ins, kind="reduction")
        out.append(ins)
    return out


_SASS = {"ATOMS": "shared", "ATOMG": "global", "RED": "global", "REDG": "global", "ATOM": "generic",
         "REDAS": "shared"}
# What ``atom`` and ``red`` have in common: one SASS class, the shared atomic's counters and
# counting, drawn as the scenario kind ``atomic``.
_SHARED_COUNTERS = {"smsp__inst_executed_op_shared_atom.sum": "shared atomic instructions",
                    SHARED_ATOM_WAVEFRONTS: "shared atomic wavefronts",
                    SHARED_ATOM_CONFLICTS: "shared atomic bank conflicts"}
_COMMON = dict(accept=plain_accept, roles=(("load", "", 0),), sass=_SASS, sass_class="atomic",
               wavefront_counters={"shared": (SHARED_ATOM_WAVEFRONTS, SHARED_ATOM_CONFLICTS)},
               counts_shared=False, ten_spaces=(), count_shared=_trace_shared, count_global=_trace_global,
               detail_op="atomic", detail_options=_detail_options, global_write=True,
               sass_kind={"global": "atomic", "shared": "atomic"})
FORMS = (
    TraceForm(kind="atomic", heads=("atom",), name="atomic operation", post_parse=unused_atomics_are_reductions,
              instruction_counter={"global": "smsp__sass_inst_executed_op_global_atom.sum",
                                   "shared": "smsp__inst_executed_op_shared_atom.sum"},
              request_counters={"global": GLOBAL_ATOM_METRICS[1:3]},
              counters={"smsp__sass_inst_executed_op_global_atom.sum": "global atomic instructions",
                        **_SHARED_COUNTERS,
                        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": "global atomic requests",
                        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum": "global atomic sectors"},
              latency="atomic",     # performed at L2, its old value used
              **_COMMON),
    TraceForm(kind="reduction", heads=("red",), name="reduction",
              instruction_counter={"global": "smsp__inst_executed_op_global_red.sum",
                                   "shared": "smsp__inst_executed_op_shared_atom.sum"},
              request_counters={"global": GLOBAL_ATOM_METRICS[4:6]},
              counters={"smsp__inst_executed_op_global_red.sum": "global reduction instructions",
                        **_SHARED_COUNTERS,
                        "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": "global reduction requests",
                        "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum": "global reduction sectors"},
              **_COMMON),
)
KINDS = (KIND,)
UNRECORDED = ()
