"""Access kinds beyond plain loads and stores (scenario format 3), one module per kind: each parses,
counts and describes its kind, below the parser (viz.scenario) and the engine, above viz.counting.

* ``ldmatrix`` / ``stmatrix`` (``viz.kinds.ldmatrix``).

* ``cp.async`` (``viz.kinds.async_copy``): LDGSTS, a copy of 4, 8 or 16 bytes per lane
  from global memory straight into shared memory.
* ``tma.load`` (``viz.kinds.async_copy``): a 2-D tile copy by the tensor-memory
  accelerator (UTMALDG), issued by one thread of the block, written into shared memory
  in the destination array's swizzle (none, ``tma:32B``, ``tma:64B``, ``tma:128B``).
* ``atomic`` (``viz.kinds.atomics``): ``atomicAdd`` on a 4-byte shared int (ATOMS) or on a
  global int, float or double (ATOM when the result is read, RED when it is not), with
  ptxas's warp aggregation of a uniform address.

Each kind is one ``Kind`` of ``viz.kinds.registry``, registered at the end of this file: parsed
by ``viz.kinds.build`` (called from ``viz.scenario``), counted by its module (called from
``viz.engine``), described by ``viz.kinds.analyze`` and ``viz.kinds.report`` (called from
``viz.report``) and emitted by ``viz.gpu.codegen``. Their counters are Nsight Compute's own
metrics for the kind (``KIND_METRICS``), beside the ten; how the H100 counts them is in
docs/memory-model.md.
"""

from __future__ import annotations

from .analyze import atomic_active_lanes, count_atomic, count_cp_async, count_tma, cp_async_figures, tma_figures
from .build import EXAMPLES, KEYS, _atomic, _cp_async, _tma
from .registry import Kind, kind_of, kinds, register
from .report import extra_rows, tma_rows

# Nsight Compute metrics that only the kinds of this package produce (present on the H100:
# tools/gpu/session/kinds_validate.sh lists them from `ncu --query-metrics`).
LDGSTS_METRICS = (
    "smsp__inst_executed_op_ldgsts.sum",
)
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
TMA_METRICS = (
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum",
)


def _ldgsts_rule(d: dict) -> str:
    return "ldgsts"


def _atom_rule(d: dict) -> str:
    return "atom_add" if (d.get("options") or {}).get("result") == "used" else "atom_inc"


def _atomic_per_lane(access) -> bool:
    return access.option("result") == "used"


def _always(access) -> bool:
    return True


register(Kind(
    op="cp.async", keys=frozenset(KEYS["cp.async"]), example=EXAMPLES["cp.async"], parse=_cp_async,
    count=count_cp_async, figures=cp_async_figures,
    metrics=LDGSTS_METRICS, metric_labels={
        "smsp__inst_executed_op_ldgsts.sum": "cp.async instructions",
    },
    shared_rule=_ldgsts_rule, extra_reasons=extra_rows,
    # a bank takes one write per lane: lanes on one word are not merged (measured)
    per_lane=_always,
))
register(Kind(
    op="atomic", keys=frozenset(KEYS["atomic"]), example=EXAMPLES["atomic"], parse=_atomic,
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
))
register(Kind(
    op="tma.load", keys=frozenset(KEYS["tma.load"]), example=EXAMPLES["tma.load"], parse=_tma,
    count=count_tma, figures=tma_figures,
    metrics=TMA_METRICS, metric_labels={
        "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum": "TMA global sectors read",
    },
    reasons=tma_rows,
    through_banks=False,     # the TMA writes the tile itself, not through the banks' path
))

# HOOK(wgmma): the wgmma kind (viz.kinds.wgmma); on the kinds registry it is one line of REGISTERED
from . import wgmma as _wgmma  # noqa: E402

for _k in _wgmma.KINDS:
    register(_k)

KIND_OPS = tuple(k.op for k in kinds())   # format 3 access kinds: cp.async, atomic, tma.load
KIND_METRICS = tuple(m for k in kinds() for m in k.metrics)
# How the app's Figures panel names them (viz/app/figures.py; Chinese in zh_CN.toml).
KIND_METRIC_LABELS = {m: label for k in kinds() for m, label in k.metric_labels.items()}


def is_kind(op: str) -> bool:
    return kind_of(op) is not None


def uses_kinds(sc) -> bool:
    return any(a.op in KIND_OPS for a in sc.accesses)


__all__ = ["Kind", "kind_of", "kinds", "KIND_OPS", "KIND_METRICS", "KIND_METRIC_LABELS", "LDGSTS_METRICS", "ATOM_METRICS", "GLOBAL_ATOM_METRICS", "TMA_METRICS", "is_kind", "uses_kinds"]
