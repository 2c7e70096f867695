"""The engine's side of each kind (``viz.engine.analyze`` and ``Analysis.per_access`` reach them
through ``viz.kinds.registry``): its counting, imported when first needed (numba), its figures,
and the lanes a warp's detail shows issuing it."""

from __future__ import annotations

from .registry import kind_of


def analyze_kind(scenario, instr, access, ctx):
    """The InstrStats of one warp instruction of a format 3 kind (with ``kind_metrics``)."""
    return kind_of(access.op).count(scenario, instr, access, ctx)


def count_cp_async(scenario, instr, access, ctx):
    from .async_copy import analyze_cp_async

    return analyze_cp_async(scenario, instr, access, ctx)


def count_tma(scenario, instr, access, ctx):
    from .async_copy import analyze_tma

    return analyze_tma(scenario, instr, access, ctx)


def count_atomic(scenario, instr, access, ctx):
    from .atomics import analyze_atomic

    return analyze_atomic(scenario, instr, access, ctx)


def kind_figures(access, rows) -> dict:
    """Extra per-access figures of a kind (``Analysis.per_access``): its counters, and what its
    kind adds (cp.async: the global side, requests and sectors, beside the shared side's wavefronts)."""
    metrics: dict[str, int] = {}
    for s in rows:
        for k, v in (s.kind_metrics or {}).items():
            metrics[k] = metrics.get(k, 0) + v
    d = {"kind": access.op, "kind_metrics": metrics, "options": {k: v for k, v in access.options}}
    kind = kind_of(access.op)
    if kind is not None and kind.figures is not None:
        kind.figures(access, rows, d)
    return d


def cp_async_figures(access, rows, d: dict) -> None:
    inst = sum(s.warp_instructions for s in rows)
    sec = sum(s.sectors for s in rows)
    d.update(source=access.source.text, source_array=access.source.array, requests=inst, sectors=sec,
             lines=sum(s.lines for s in rows), bytes_moved=sec * 32,
             sectors_per_request=round(sec / inst, 4) if inst else 0.0)


def tma_figures(access, rows, d: dict) -> None:
    d.update(source=access.source.text, source_array=access.source.array,
             box=list(access.option("box")), swizzle=access.option("swizzle"),
             bytes_copied=sum(s.bytes_used for s in rows), sectors=sum(s.sectors for s in rows),
             wavefronts=0, phases=0, bank_conflicts=0)


def atomic_active_lanes(access, mask, threads: int):
    """ptxas's warp aggregation of an atomic: one lane does it (``mask``: one warp's lanes)."""
    if (access.option("aggregate") or "none") == "none":
        return mask
    from .atomics import aggregate_mask

    return aggregate_mask(mask[None, :], access.option("aggregate"), threads)[0]


__all__ = ["analyze_kind", "kind_figures", "count_cp_async", "count_tma", "count_atomic", "cp_async_figures",
           "tma_figures", "atomic_active_lanes"]
