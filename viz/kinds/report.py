"""The reasons (``viz.report.explain_access``) of the format 3 kinds' figures."""

from __future__ import annotations

from ..access_figures import AccessFigures, given
from ..i18n import tr


def _n(x) -> str:
    return f"{x:,}"


def _avg(a: int, b: int) -> str:
    return f"{a / b:,.2f}"


def extra_rows(d: AccessFigures) -> list[tuple[str, str, str]]:
    """Rows after the shared rows of a cp.async: its global side (its kind's ``extra_reasons``)."""
    inst = d.warp_instructions
    if inst:
        per = _avg(given(d.sectors), inst)
        if (d.options or {}).get("cache") == "cg":
            sectors = tr("{per} per request: cp.async.cg (L1 bypassed) counts the distinct pairs of global 128-byte "
                         "line and shared 32-byte sector, over the lanes whose 16-byte shared slot no later lane "
                         "writes again", per=per)
        else:
            sectors = tr("{per} per request: the distinct 32-byte sectors the active lanes copy from, as an LDG of "
                         "the same width", per=per)
        return [
            ("requests", _n(given(d.requests)), tr("the global side of cp.async: one per warp instruction, as an "
                                                      "LDG of the same width")),
            ("sectors", _n(given(d.sectors)), sectors),
        ]
    return []


def tma_rows(d: AccessFigures) -> list[tuple[str, str, str]]:
    """A tma.load: one instruction per block, the box's bytes, the swizzle it writes."""
    inst = d.warp_instructions
    box = given(d.box)
    return [
        ("warp instructions", _n(inst), tr("one per block: thread 0 issues the copy for the whole block")),
        ("bytes copied", _n(given(d.bytes_copied)), tr("{per} per copy: a box of {r} x {c} elements",
                                                    per=_n(given(d.bytes_copied) // inst) if inst else "0",
                                                    r=box[0], c=box[1])),
        ("swizzle", given(d.swizzle), tr("where the TMA writes each 16-byte chunk of a row (the tile's swizzle)")),
    ]


def tma_store_rows(d: AccessFigures) -> list[tuple[str, str, str]]:
    """A tma.store: one instruction per block, the bytes written in bounds, the sectors."""
    inst = d.warp_instructions
    box = given(d.box)
    return [
        ("warp instructions", _n(inst), tr("one per block: thread 0 issues the copy for the whole block")),
        ("bytes written", _n(given(d.bytes_copied)), tr("the box's bytes inside the tensor, of a box of {r} x {c} "
                                                     "elements per copy: parts past the tensor's edge write nothing",
                                                     r=box[0], c=box[1])),
        ("sectors", _n(given(d.sectors)), tr("the 32-byte sectors of the bytes written, row by row "
                                         "(l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st)")),
        ("swizzle", given(d.swizzle), tr("where the TMA reads each 16-byte chunk of a row (the tile's swizzle)")),
    ]
