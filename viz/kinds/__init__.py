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

Each kind is parsed by ``viz.kinds.build`` (called from ``viz.scenario``), counted by its
module (called from ``viz.engine``) and emitted by ``viz.gpu.codegen``. Their counters
are Nsight Compute's own metrics for the kind (``KIND_METRICS``), beside the ten; how the
H100 counts them is in docs/memory-model.md.
"""

from __future__ import annotations

KIND_OPS = ("cp.async", "atomic", "tma.load")   # format 3 access kinds parsed by viz.kinds.build

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
KIND_METRICS = LDGSTS_METRICS + ATOM_METRICS + GLOBAL_ATOM_METRICS + TMA_METRICS
# How the app's Figures panel names them (viz/app/figures.py; Chinese in zh_CN.toml).
KIND_METRIC_LABELS = {
    "smsp__inst_executed_op_ldgsts.sum": "cp.async instructions",
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum": "TMA global sectors read",
    "smsp__inst_executed_op_shared_atom.sum": "shared atomic instructions",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum": "shared atomic wavefronts",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum": "shared atomic bank conflicts",
    "smsp__sass_inst_executed_op_global_atom.sum": "global atomic instructions (ATOM)",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": "global atomic requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum": "global atomic sectors",
    "smsp__inst_executed_op_global_red.sum": "global reduction instructions (RED)",
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": "global reduction requests",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum": "global reduction sectors",
}


def is_kind(op: str) -> bool:
    return op in KIND_OPS


def uses_kinds(sc) -> bool:
    return any(a.op in KIND_OPS for a in sc.accesses)


__all__ = ["KIND_OPS", "KIND_METRICS", "KIND_METRIC_LABELS", "LDGSTS_METRICS", "ATOM_METRICS", "GLOBAL_ATOM_METRICS", "TMA_METRICS", "is_kind", "uses_kinds"]
