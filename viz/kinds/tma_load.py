"""The tma.load kind of scenarios: a 2-D tile copy by the tensor-memory accelerator
(UTMALDG), issued by one thread of the block, written into shared memory in the destination
array's swizzle (none, ``tma:32B``, ``tma:64B``, ``tma:128B``).

Parsed by ``viz.kinds.build``, counted by ``viz.kinds.async_copy`` (numba), described by
``viz.kinds.analyze`` / ``viz.kinds.report``, CUDA from ``viz.kinds.codegen.tma_lines`` (a
real tensor map, ``viz.kinds.tensormap``), random scenarios from
``viz.kinds.random_text.tma_text``. A trace does not record TMA copies through this kind:
``cp.async.bulk.tensor`` is listed in ``viz.kinds.unrecorded`` until a kind records it.
"""

from __future__ import annotations

from .analyze import count_tma, tma_figures
from .build import EXAMPLES, KEYS, parse_tma
from .registry import Kind
from .report import tma_rows

TMA_METRICS = (
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum",
)


# How long an SM's TMA takes over one box, by the box's rows and row width: blocks of one
# box each (swizzle none, 64 threads) timed on the H100 (tools/probes/tma_box_timing.sh,
# assets/measurements/h100-tma-2026-11-23.json): a block cost 10.5-10.9 ns per row of 16
# bytes, 5.1-5.3 per row of 32 bytes and no more than starting a block with 64-byte rows,
# and boxes of 64 and 128 rows took as long as boxes of 32: time per box = min(rows, 32) x
# TMA_ROW_NS_BYTES / row bytes. Not a microbenchmark of calibrate (yet): a measured table,
# like the cost model's LOADED_LATENCY_H100.
TMA_ROW_NS_BYTES = 168.0     # ns x bytes: the median of the six probes not bound by block starts
TMA_ROW_CAP = 32


def box_seconds(access, sc, count: int) -> float:
    """The cost model's term of ``count`` executions of one tma.load (``Kind.engine_seconds``):
    count x min(rows, TMA_ROW_CAP) x TMA_ROW_NS_BYTES / row bytes."""
    rows, cols = access.option("box")
    row_bytes = cols * sc.array(access.source.array).type.size
    return count * min(rows, TMA_ROW_CAP) * TMA_ROW_NS_BYTES / row_bytes * 1e-9


def _codegen(a, arr, sc, rename, k):
    from .codegen import tma_lines

    return tma_lines(a, arr, sc, rename, k)


def _random_text(r):
    from .random_text import tma_text

    return tma_text(r)


def request_caption(d, count) -> str:
    """``Kind.request_caption``: one copy of the whole box, by thread 0."""
    from ..i18n import tr

    a = d.access
    box = a.option("box")
    return tr("Thread 0 issues one TMA copy of the {r} x {c} box ({bytes}) into {name}: the tensor-memory "
              "accelerator writes it in the tile's swizzle without the banks' load and store path, so no "
              "wavefront is counted; `warpviz layout` draws where each element lands.", r=box[0], c=box[1],
              bytes=count(a.option("bytes"), "byte"), name=a.array)


KIND = Kind(
    op="tma.load", keys=frozenset(KEYS["tma.load"]), example=EXAMPLES["tma.load"], parse=parse_tma,
    count=count_tma, figures=tma_figures,
    metrics=TMA_METRICS, metric_labels={
        "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum": "TMA global sectors read",
    },
    reasons=tma_rows,
    through_banks=False,     # the TMA writes the tile itself, not through the banks' path
    name="TMA copy", sass_opcodes=("UTMALDG",), codegen=_codegen, codegen_whole=True, random_text=_random_text,
    copy_engine=True, copy_in_l2=False, copy_per_replica=False, engine_seconds=box_seconds,
    request_caption=request_caption,
)
FORMS = ()
KINDS = (KIND,)
UNRECORDED = ()
