"""Instructions of a traced kernel that touch shared memory but are not recorded.

The recorder instruments the PTX memory instructions it knows (``viz.trace.ptx``). A
warpgroup MMA (``wgmma.mma_async``: Triton's ``tl.dot`` on the H100) reads its A and B tiles
from shared memory through matrix descriptors, not through an address a lane holds, so no
record of it exists and its shared reads appear in no figure. Until they are traced, the
Source panel and ``analyze`` say so, per source line, from the PTX the trace carries (a
Triton trace carries its kernel's PTX in ``sources``). Nothing here imports Qt.
"""

from __future__ import annotations

import re

from ..kinds.registry import forms

# what reads shared memory without a recorded lane address in traces made before a kind recorded it, and how a
# reader knows it (TraceForm.older_unrecorded: wgmma.mma_async)
UNRECORDED = {op: why for f in forms() for op, why in f.older_unrecorded.items()}
_RECORDS = {f.kind for f in forms() if f.older_unrecorded}
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
MAX_PTX_LINES = 400_000          # a carried PTX is bounded by the trace's header limits; this bounds the scan


def unrecorded(header: dict) -> list[dict]:
    """Per (file, line, mnemonic): how many such instructions the carried PTX has there, in
    source order: ``{"file", "line", "mnemonic", "count", "why"}``. Empty when the trace
    carries no PTX or the PTX has none."""
    found: dict[tuple[str, int, str], int] = {}
    # PTX lines this trace did record (a newer trace: its instruction table has them, of the kind that records them)
    recorded = {ins.get("line_no") for ins in header.get("instructions") or [] if isinstance(ins, dict)
                and ins.get("kind") in _RECORDS}
    for name, text in (header.get("sources") or {}).items():
        if not str(name).endswith(".ptx"):
            continue
        lines = str(text).splitlines()[:MAX_PTX_LINES]
        files = {m.group(1): m.group(2).rsplit("/", 1)[-1] for m in map(_FILE.match, lines) if m}
        where = ("", 0)
        for number, ln in enumerate(lines, start=1):
            m = _LOC.match(ln)
            if m:
                where = (files.get(m.group(1), ""), int(m.group(2)))
                continue
            s = ln.strip()
            for op in UNRECORDED:
                if s.startswith(op) and number not in recorded:
                    key = (where[0], where[1], op)
                    found[key] = found.get(key, 0) + 1
    return [{"file": f, "line": n, "mnemonic": op, "count": c, "why": UNRECORDED[op]}
            for (f, n, op), c in sorted(found.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2]))]


def note(u: dict) -> str:
    """One line on an ``unrecorded`` entry, in the interface language."""
    from ..i18n import tr

    return tr("{n} x {op} not recorded: {why}; those shared reads are in no figure here",
              n=u["count"], op=u["mnemonic"], why=tr(u["why"]))


__all__ = ["unrecorded", "note", "UNRECORDED"]
