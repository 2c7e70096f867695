"""The CLI's readable table and JSON document, built from an Analysis (no computing here)."""

from __future__ import annotations

from . import __version__
from .engine import Analysis
from .i18n import tr
from .scenario import warnings


def to_json(an: Analysis) -> dict:
    sc = an.scenario
    numbers = instruction_numbers(sc)
    lw = sc.launch
    return {
        "scenario": sc.title,
        "name": sc.name,
        "warpviz": __version__,
        "launch": {"block": list(lw.block), "grid": list(lw.grid), "threads": lw.threads,
                   "warps": lw.blocks * lw.warps_per_block},
        "params": dict(sc.params),
        "warnings": warnings(sc),
        "metrics": an.metrics,
        "accesses": [{**d, "instruction_numbers": numbers[d["index"]]} for d in an.per_access()],
    }


def instruction_numbers(sc) -> dict[int, list[int]]:
    """Per access index, its [first, last] warp instruction numbers, counted from 1 as the
    app's header and `warpviz export -i` count them ([] when its loops run zero times).
    An access's ``index`` stays the contract's 0-based position of its [[access]] table."""
    out: dict[int, list[int]] = {a.index: [] for a in sc.accesses}
    for i in sc.instructions():
        nums = out[i.access]
        if nums:
            nums[1] = i.number + 1
        else:
            nums.extend((i.number + 1, i.number + 1))
    return out


def numbers_text(nums: list[int]) -> str:
    if not nums:
        return tr("no instructions")
    if nums[0] == nums[1]:
        return tr("instruction {k}", k=nums[0])
    return tr("instructions {a}-{b}", a=nums[0], b=nums[1])


def _n(x) -> str:
    return f"{x:,}" if isinstance(x, int) else f"{x:,.2f}"


def explain_access(d: dict) -> list[tuple[str, str, str]]:
    """(figure, value, one-line why) rows for one access; the why follows the interface language."""
    inst = d["warp_instructions"]
    rows = [("warp instructions", _n(inst),
             tr("{k} per warp (loop points x parts), counted only where a lane is active",
                k=d["instructions_per_warp"]))]
    if inst == 0:
        rows.append(("", "", tr("no lane is active: the warp issues nothing")))
        return rows
    lanes = d["active_lanes"] / inst
    rows.append(("active lanes", f"{lanes:.2f}/warp", tr("lanes whose `when` holds (inactive lanes make no access)")))
    size = d["access_bytes"]
    if d["space"] == "shared":
        wf, ph = d["wavefronts"], d["phases"]
        per, ideal = wf / inst, ph / inst
        if d["op"] == "load":
            phase_rule = {8: "8-byte load: two half-warp phases, one where lanes repeat addresses in pairs",
                          16: "16-byte load: four quarter-warp phases, two where lanes repeat addresses in pairs"}
        else:
            phase_rule = {8: "8-byte store: two half-warp phases", 16: "16-byte store: four quarter-warp phases"}
        rows.append(("wavefronts", _n(wf),
                     tr("{per} per instruction: each phase costs the most distinct 32-bit words any one bank "
                        "must deliver", per=f"{per:.2f}")))
        rows.append(("phases", _n(ph), tr("{ideal} per instruction ({rule})", ideal=f"{ideal:.2f}",
                                          rule=tr(phase_rule.get(size, "one phase for 1-4 byte accesses")))))
        if wf > ph:
            rows.append(("bank conflicts", _n(wf - ph),
                         tr("wavefronts - phases: on average the busiest bank delivers {avg} distinct "
                            "words per phase ({ways}-way conflict)", avg=f"{per / ideal:.1f}",
                            ways=f"{per / ideal:.0f}")))
        else:
            rows.append(("bank conflicts", "0", tr("every phase is one wavefront: no bank holds two distinct words "
                         "(shared words are broadcast)")))
    else:
        sec, lines = d["sectors"], d["lines"]
        rows.append(("requests", _n(inst), tr("one per warp instruction with an active lane, whatever the width")))
        rows.append(("sectors", _n(sec),
                     tr("{per} per request: the distinct 32-byte sectors the active lanes' bytes touch",
                        per=f"{sec / inst:.2f}")))
        rows.append(("lines", _n(lines), tr("{per} per request: distinct 128-byte lines (4 sectors each)",
                                            per=f"{lines / inst:.2f}")))
        rows.append(("bytes requested", _n(d["bytes_requested"]),
                     tr("{lanes} lanes x {size} B per request", lanes=f"{lanes:.1f}", size=size)))
        rows.append(("bytes moved", _n(d["bytes_moved"]), tr("sectors x 32 B")))
        eff = d["sector_efficiency"] * 100
        why = tr("every byte moved is used") if eff >= 99.99 else \
            tr("{pct}% of the moved bytes are not used by the warp", pct=f"{100 - eff:.0f}")
        rows.append(("sector efficiency", f"{eff:.1f}%", tr("bytes requested / bytes moved: {why}", why=why)))
    return rows


def to_table(an: Analysis) -> str:
    sc = an.scenario
    lw = sc.launch
    dims = lambda t: "x".join(str(x) for x in t)  # noqa: E731
    out = [sc.title + (f"  [{sc.name}]" if sc.name else ""),
           f"launch: grid {dims(lw.grid)}, block {dims(lw.block)} = {lw.threads:,} threads, "
           f"{lw.blocks * lw.warps_per_block:,} warps ({lw.warps_per_block} per block)"]
    if sc.params:
        out.append("params: " + ", ".join(f"{k} = {v}" for k, v in sc.params.items()))
    for w in warnings(sc):
        out.append(tr("warning: {w}", w=w))
    numbers = instruction_numbers(sc)
    for d in an.per_access():
        arr = sc.array(d["array"])
        a = sc.accesses[d["index"]]
        loops = "".join(f"  for {lp.var} = {lp.text}" for lp in a.loops)
        when = f"  when {a.when_text}" if a.when_text else ""
        out.append("")
        out.append(f"access {d['index']}: {d['op']} {a.text}   ({arr.describe()}, {d['access_bytes']} B){loops}{when}"
                   f"   [{numbers_text(numbers[d['index']])}]")
        for name, value, why in explain_access(d):
            out.append(f"  {name:<18} {value:>14}   {why}" if name else f"  {'':<18} {'':>14}   {why}")
    out.append("")
    out.append("totals (Nsight Compute metric names):")
    for k, v in an.metrics.items():
        out.append(f"  {k:<58} {v:>14,}")
    return "\n".join(out)
