"""What an access kind is, and which kinds there are: one registry below the parser (``viz.scenario``)
and the engine (``viz.engine``), which find a kind here by its ``op`` and ask it what to do.

A kind (scenario format 3: ``cp.async``, ``atomic``, ``tma.load``) is a ``Kind``: how its table
is parsed into an ``Access``, how one of its warp instructions is counted, how it is described
(its figures, its Nsight Compute counters and their names, the reasons beside them) and the hints
the per-warp drawing needs. ``viz/kinds/__init__.py`` registers each kind once; nothing here
imports the rest of warpviz, so every layer above may ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping


def _never(access) -> bool:
    return False


@dataclass(frozen=True)
class Kind:
    """One access kind. The callables take warpviz's own objects (an ``Access``, a scenario, a
    figures dict ``d`` of ``Analysis.per_access``); those that need numba import it when called."""

    op: str                                    # what a scenario writes: op = "cp.async"
    keys: frozenset[str]                       # the keys its access table may have
    example: str                               # one access of the kind, for error messages
    parse: Callable                            # (builder, k, raw table) -> Access (viz.kinds.build)
    count: Callable                            # (scenario, instr, access, ctx) -> InstrStats (viz.engine)
    metrics: tuple[str, ...] = ()              # its Nsight Compute counters, beside the ten
    metric_labels: Mapping[str, str] = field(default_factory=dict)   # how the Figures panel names them
    figures: Callable | None = None            # (access, rows, d): its own per-access figures into d
    shared_rule: Callable | None = None        # (d) -> the shared rule its reasons name (viz.report)
    reasons: Callable | None = None            # (d) -> every (figure, value, why) row, instead of a load's
    extra_reasons: Callable | None = None      # (d) -> rows after a load's shared rows
    per_lane: Callable = _never                # draw hint: (access) -> shared words served lane by lane
    through_banks: bool = True                 # draw hint: False where the shared side skips the banks' path
    active_lanes: Callable | None = None       # draw hint: (access, mask, threads) -> the lanes that issue it


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add ``kind`` (its op must be new)."""
    if kind.op in _KINDS:
        raise ValueError(f"access kind {kind.op!r} is registered twice")
    _KINDS[kind.op] = kind
    return kind


def kind_of(op) -> Kind | None:
    """The kind whose op is ``op``, or None (a load, a store, a matrix op, or anything else a
    file may hold there, a non-string included)."""
    return _KINDS.get(op) if isinstance(op, str) else None


def kinds() -> tuple[Kind, ...]:
    """Every kind, in the order registered."""
    return tuple(_KINDS.values())


__all__ = ["Kind", "register", "kind_of", "kinds"]
