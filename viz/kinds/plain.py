"""Plain loads and stores: ``ld``/``ldu``/``st`` of global, shared or generic memory, scalar
and vector (``.v2``, ``.v4``), counted by the model's own rules (``viz.counting``). A scenario's
``op = "load"`` / ``"store"`` is the model's own access (no ``Kind``); this module says which
PTX a trace records as one, and which SASS it becomes.

Not recorded as a plain access (``viz.kinds.unrecorded`` lists them): ``.shared::cluster``
(distributed shared memory, maybe another CTA's: not a bank access of this SM's shared
memory), ``st.async`` / ``red.async`` (remote shared memory with an mbarrier), ``st.bulk``.
``.param``, ``.local``, ``.const``, ``.tex`` and ``.surf`` are outside a trace's two spaces.
"""

from __future__ import annotations

from .registry import TraceForm

OUTSIDE_SPACES = ("param", "local", "const", "tex", "surf")


def plain_accept(parts: list[str]) -> bool:
    """An ``ld``/``st``/``atom``/``red`` opcode (split at dots) that a trace records: not async,
    not bulk, no space outside global/shared/generic, not cluster shared memory."""
    if any(p.startswith(("async", "bulk")) for p in parts[1:]):
        return False
    if any(p.split("::")[0] in OUTSIDE_SPACES for p in parts[1:]):
        return False
    return "shared::cluster" not in parts


FORMS = (
    TraceForm(kind="load", heads=("ld", "ldu"), name="load", accept=plain_accept, roles=(("load", "", 0),),
              sass={"LDS": "shared", "LDG": "global", "LD": "generic"}, latency="load", skip_spaces=("shared",),
              sass_kind={"global": "global.load", "shared": "shared.load"}),
    TraceForm(kind="store", heads=("st",), name="store", accept=plain_accept, roles=(("store", "", 0),),
              sass={"STS": "shared", "STG": "global", "ST": "generic"}, skip_spaces=("shared",),
              sass_kind={"global": "global.store", "shared": "shared.store"}),
)
KINDS = ()
UNRECORDED = ()
