"""Dispatch from ``viz.engine.analyze`` to each kind's counting."""

from __future__ import annotations


def analyze_kind(scenario, instr, access, ctx):
    """The InstrStats of one warp instruction of a format 3 kind (with ``kind_metrics``)."""
    if access.op == "cp.async":
        from .async_copy import analyze_cp_async

        return analyze_cp_async(scenario, instr, access, ctx)
    if access.op == "tma.load":
        from .async_copy import analyze_tma

        return analyze_tma(scenario, instr, access, ctx)
    from .atomics import analyze_atomic

    return analyze_atomic(scenario, instr, access, ctx)


def kind_figures(access, rows) -> dict:
    """Extra per-access figures of a kind (``Analysis.per_access``): its counters, and for
    cp.async the global side (requests, sectors) beside the shared side's wavefronts."""
    metrics: dict[str, int] = {}
    for s in rows:
        for k, v in (s.kind_metrics or {}).items():
            metrics[k] = metrics.get(k, 0) + v
    d = {"kind": access.op, "kind_metrics": metrics, "options": {k: v for k, v in access.options}}
    if access.op == "cp.async":
        inst = sum(s.warp_instructions for s in rows)
        sec = sum(s.sectors for s in rows)
        d.update(source=access.source.text, source_array=access.source.array, requests=inst, sectors=sec,
                 lines=sum(s.lines for s in rows), bytes_moved=sec * 32,
                 sectors_per_request=round(sec / inst, 4) if inst else 0.0)
    elif access.op == "tma.load":
        d.update(source=access.source.text, source_array=access.source.array,
                 box=list(access.option("box")), swizzle=access.option("swizzle"),
                 bytes_copied=sum(s.bytes_used for s in rows), sectors=sum(s.sectors for s in rows),
                 wavefronts=0, phases=0, bank_conflicts=0)
    return d
