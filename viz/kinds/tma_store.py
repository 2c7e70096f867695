"""The tma.store kind of scenarios: a 2-D tile copy by the tensor-memory accelerator from
shared memory to global memory (UTMASTG), issued by thread 0 of the block after every thread
has written the tile: ``at`` is the box's first element in the global tensor, ``from`` the
whole shared tile, read in the tile's swizzle (none, ``tma:32B``, ``tma:64B``, ``tma:128B``).

Parsed by ``viz.kinds.build.parse_tma_store`` (the same checks as ``tma.load``, keys swapped),
counted by ``viz.kinds.async_copy.analyze_tma`` with the trace side's own functions
(``viz.kinds.tma_copy.expand``: a store's sectors are those of its bytes in bounds; parts of
the box past the tensor's edge write nothing), its CUDA from ``viz.kinds.codegen.tma_lines``.
"""

from __future__ import annotations

from .analyze import count_tma, tma_figures
from .build import EXAMPLES, KEYS, parse_tma_store
from .registry import Kind
from .report import tma_store_rows
from .tma_copy import TMA_ST_SECTORS
from .tma_load import box_seconds

TMA_STORE_METRICS = (TMA_ST_SECTORS,)


def _codegen(a, arr, sc, rename, k):
    from .codegen import tma_lines

    return tma_lines(a, arr, sc, rename, k)


def request_caption(d, count) -> str:
    """``Kind.request_caption``: one copy of the whole box from the tile, by thread 0."""
    from ..i18n import tr

    a = d.access
    box = a.option("box")
    return tr("Thread 0 issues one TMA store of the {r} x {c} box from {name} to {at}: the tensor-memory "
              "accelerator reads the tile in its swizzle without the banks' load and store path, so no "
              "wavefront is counted; parts of the box past the tensor's edge write nothing.", r=box[0], c=box[1],
              name=a.array, at=a.source.text)


KIND = Kind(
    op="tma.store", keys=frozenset(KEYS["tma.store"]), example=EXAMPLES["tma.store"], parse=parse_tma_store,
    count=count_tma, figures=tma_figures,
    metrics=TMA_STORE_METRICS, metric_labels={TMA_ST_SECTORS: "TMA store sectors"},
    reasons=tma_store_rows,
    through_banks=False,     # the TMA reads the tile itself, not through the banks' path
    name="TMA store", sass_opcodes=("UTMASTG",), codegen=_codegen, codegen_whole=True,
    # the store's time: the load's measured per-row term (box_seconds), not measured for stores
    copy_engine=True, copy_in_l2=False, copy_per_replica=True, engine_seconds=box_seconds,
    request_caption=request_caption,
)
FORMS = ()
KINDS = (KIND,)
UNRECORDED = ()
