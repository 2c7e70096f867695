"""Access kinds, one module per kind, and the one table of them (``viz.kinds.registry``) that
every layer reads: the parser (viz.scenario), the engine, the reasons, the per-warp detail,
the PTX instrumenter, the SASS reconciliation, the trace analysis, CUDA generation, random
checks, the cost model and the app.

* ``viz.kinds.plain``: plain loads and stores (``ld``/``ldu``/``st``, scalar and vector) in a trace.
* ``viz.kinds.ldmatrix``: ``ldmatrix`` / ``stmatrix`` (scenario ops ``ldmatrix.x4`` ...; in a trace).
* ``viz.kinds.cp_async``: ``cp.async`` (LDGSTS), a copy of 4, 8 or 16 bytes per lane from
  global memory straight into shared memory.
* ``viz.kinds.atomic``: ``atomicAdd`` on a 4-byte shared int (ATOMS) or on a global int,
  float or double (ATOM when the result is read, RED when it is not), with ptxas's warp
  aggregation of a uniform address; ``atom`` / ``red`` in a trace.
* ``viz.kinds.tma_load``: ``tma.load``, a 2-D tile copy by the tensor-memory accelerator
  (UTMALDG) in the destination array's swizzle (scenarios).
* ``viz.kinds.wgmma``: ``wgmma.mma_async`` reading A and B from shared memory through matrix
  descriptors (scenario op ``wgmma``; in a trace, its descriptors recorded in the record's slots).
* ``viz.kinds.tma_store``: ``tma.store``, a 2-D tile copy from shared to global memory by
  the TMA (UTMASTG), counted with ``viz.kinds.tma_copy``'s functions (scenarios).
* ``viz.kinds.unrecorded``: memory PTX no kind records yet (the trace says it is incomplete).

Each module says what it is with ``KINDS`` (its ``Kind``s), ``FORMS`` (its ``TraceForm``s) and
``UNRECORDED``; ``REGISTERED`` below lists the modules once, in order. A new kind is its
module plus one line there. The counters are Nsight Compute's own metrics for the kind
(``KIND_METRICS``), beside the ten; how the H100 counts them is in docs/memory-model.md.
"""

from __future__ import annotations

from . import atomic, cp_async, ldmatrix, plain, tma_copy, tma_load, tma_store, unrecorded, wgmma
from .registry import Kind, kind_of, kinds, register, register_form, register_unrecorded

# The table: every kind module, in order (scenario kinds: cp.async, atomic, tma.load, tma.store; trace
# forms are tried in this order; the unrecorded patterns come last).
REGISTERED = (
    plain,
    ldmatrix,
    cp_async,
    atomic,
    tma_load,
    tma_store,     # a TMA store of a shared tile to a global box (scenarios)
    tma_copy,      # TMA and bulk copies in traces, and the TMA unit's control instructions
    wgmma,
    unrecorded,
)

for _m in REGISTERED:
    for _k in getattr(_m, "KINDS", ()):
        register(_k)
    for _f in getattr(_m, "FORMS", ()):
        register_form(_f)
    for _u in getattr(_m, "UNRECORDED", ()):
        register_unrecorded(_u)

LDGSTS_METRICS = cp_async.LDGSTS_METRICS
ATOM_METRICS = atomic.ATOM_METRICS
GLOBAL_ATOM_METRICS = atomic.GLOBAL_ATOM_METRICS
TMA_METRICS = tma_load.TMA_METRICS

KIND_OPS = tuple(k.op for k in kinds())   # format 3 access kinds: cp.async, atomic, tma.load
KIND_METRICS = tuple(m for k in kinds() for m in k.metrics)
# How the app's Figures panel names them (viz/app/figures.py; Chinese in zh_CN.toml).
KIND_METRIC_LABELS = {m: label for k in kinds() for m, label in k.metric_labels.items()}


def is_kind(op: str) -> bool:
    return kind_of(op) is not None


def uses_kinds(sc) -> bool:
    return any(a.op in KIND_OPS for a in sc.accesses)


__all__ = ["Kind", "kind_of", "kinds", "REGISTERED", "KIND_OPS", "KIND_METRICS", "KIND_METRIC_LABELS",
           "LDGSTS_METRICS", "ATOM_METRICS", "GLOBAL_ATOM_METRICS", "TMA_METRICS", "is_kind", "uses_kinds"]
