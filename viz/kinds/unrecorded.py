"""PTX that moves data to or from memory and that no registered kind records (yet).

The PTX instrumenter (``viz.trace.ptx``) finds every instruction of these forms, counts its
warp-level executions (as events: ids from ``EVENT_BASE``) and the trace says it is not
complete: ``complete: false`` and an ``unrecorded`` list in its header, shown by ``analyze``,
the app and ``validate``. A kind that records one of them registers a ``TraceForm``: the
forms are tried first, so its entry here simply stops matching.

Left out on purpose (they move no data a warp reads or writes, or stay outside the two
spaces a trace counts): ``prefetch``, ``prefetchu``, ``cp.async.bulk.prefetch`` (a hint that
brings lines into a cache), ``applypriority``, ``discard``, ``createpolicy`` (cache policy),
``mbarrier.*`` and ``cp.async.mbarrier.arrive`` (synchronisation objects, served by the
SYNCS unit, not the LSU's data pipe), the commit / wait / fence instructions, ``isspacep``,
``cvta``, ``mapa`` (address arithmetic), and ``.local``, ``.param``, ``.const`` accesses
(Nsight Compute counts them under other names than the shared and global counters).
"""

from __future__ import annotations

from .registry import Unrecorded

UNRECORDED = (
    Unrecorded(r"cp\.async\.bulk\.(?!commit_group|wait_group|prefetch)",
               "a TMA or bulk copy (cp.async.bulk): the copy engine moves it, not the warp's lanes"),
    Unrecorded(r"cp\.reduce\.async\.bulk\.",
               "a TMA or bulk reduction (cp.reduce.async.bulk)"),
    Unrecorded(r"wgmma\.mma_async\.",
               "a warpgroup MMA reading its matrices from shared memory through descriptors (wgmma)"),
    Unrecorded(r"tcgen05\.(alloc|ld|st|cp|shift|mma|commit)\b",
               "a Blackwell tensor-memory instruction (tcgen05)"),
    Unrecorded(r"(ld|ldu|st|atom|red)\.(.*\.)?shared::cluster\b",
               "distributed shared memory (.shared::cluster): maybe another CTA's, not a bank access of this one"),
    Unrecorded(r"ldmatrix\.(.*\.)?shared::cluster\b|stmatrix\.(.*\.)?shared::cluster\b",
               "distributed shared memory (.shared::cluster)"),
    Unrecorded(r"(st|red)\.async\b",
               "an asynchronous store or reduction into distributed shared memory (st.async / red.async)"),
    Unrecorded(r"st\.bulk\b", "a bulk store (st.bulk)"),
    Unrecorded(r"(tex|tld4|suld|sust|sured)\.", "a texture or surface access"),
    Unrecorded(r"multimem\.(ld_reduce|st|red)\b", "a multimem access (memory of several GPUs)"),
    Unrecorded(r"wmma\.(load|store)\.", "a WMMA fragment load or store (wmma.load / wmma.store)"),
    Unrecorded(r"tensormap\.(replace|cp_fenceproxy)\b", "a tensor map written in memory (tensormap.*)"),
    Unrecorded(r"clusterlaunchcontrol\.try_cancel\b", "a cluster launch control response written to shared memory"),
)
FORMS = ()
KINDS = ()
