"""The CLI's readable table and JSON document, built from an Analysis (no computing here)."""

from __future__ import annotations

from . import __version__
from .access_figures import AccessFigures, given
from .engine import Analysis
from .errors import safe_text
from .i18n import tr
from .kinds.registry import kind_of
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
        "accesses": [{**d.to_dict(), "instruction_numbers": numbers[d.index]} for d in an.per_access()],
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


def count_text(x) -> str:
    """A figure as a reason states it: 1,234, or two decimals when it is not an integer."""
    return f"{x:,}" if isinstance(x, int) else f"{x:,.2f}"


def per_text(a: int, b: int) -> str:
    """a / b as a reason states an average: two decimals."""
    return f"{a / b:,.2f}"


def _sizes(d: AccessFigures) -> str:
    return " + ".join(str(b) for b in given(d.part_bytes))


def access_size_text(d: AccessFigures) -> str:
    """The bytes one lane accesses: `4 B`, or `12 B in 2 instructions: 8 + 4 B` for a whole struct."""
    d = AccessFigures.of(d)
    parts = given(d.part_bytes)
    if len(parts) == 1:
        return f"{parts[0]} B"
    return tr("{bytes} B in {n} instructions: {sizes} B", bytes=given(d.element_bytes), n=len(parts), sizes=_sizes(d))


def _instructions_why(d: AccessFigures) -> str:
    k, points, parts = given(d.instructions_per_warp), given(d.loop_points), len(given(d.part_bytes))
    if points == 1 and parts == 1:
        return tr("one per warp, counted only where a lane is active")
    if parts == 1:
        return tr("{k} per warp (one per loop point), counted only where a lane is active", k=k)
    if points == 1:
        return tr("{k} per warp (one per part of the element: {sizes} B), counted only where a lane is active",
                  k=k, sizes=_sizes(d))
    return tr("{k} per warp ({points} loop points x {parts} parts of the element: {sizes} B), counted only "
              "where a lane is active", k=k, points=points, parts=parts, sizes=_sizes(d))


def _lanes_why(d: AccessFigures) -> str:
    inst, active = d.warp_instructions, d.active_lanes
    if active == 32 * inst:
        return tr("all 32 lanes are active in every warp instruction")
    if d.matrix_op:
        return tr("{lanes} on average per warp instruction: {op} reads the row addresses of the first {n} lanes "
                  "only (8 per matrix)", lanes=_avg(active, inst), op=d.matrix_op, n=8 * given(d.matrices))
    if d.when:
        return tr("{lanes} on average per warp instruction: the lanes whose `when` holds (inactive lanes "
                  "make no access)", lanes=_avg(active, inst))
    return tr("{lanes} on average per warp instruction: the block size is not a multiple of 32, so its "
              "last warp is partial", lanes=_avg(active, inst))


def _phase_rule(g: dict) -> str | None:
    """What decides the phases of one access size, stating the pair rule only where it applied."""
    size, n, paired = g["access_bytes"], g["warp_instructions"], g["paired_instructions"]
    if n == 0:
        return None
    if size <= 4:
        return tr("{size}-byte accesses: one phase for all 32 lanes", size=size)
    if paired == 0:
        return tr("8-byte accesses: two half-warp phases") if size == 8 else \
            tr("16-byte accesses: four quarter-warp phases")
    if paired == n:
        return tr("8-byte load whose lanes repeat addresses in pairs: one 32-lane phase instead of two "
                  "half-warp phases") if size == 8 else \
            tr("16-byte load whose lanes repeat addresses in pairs: two 16-lane phases instead of four "
               "quarter-warp phases")
    if size == 8:
        return tr("8-byte load: two half-warp phases, but one 32-lane phase in the {paired} of {n} warp "
                  "instructions whose lanes repeat addresses in pairs", paired=f"{paired:,}", n=f"{n:,}")
    return tr("16-byte load: four quarter-warp phases, but two 16-lane phases in the {paired} of {n} warp "
              "instructions whose lanes repeat addresses in pairs", paired=f"{paired:,}", n=f"{n:,}")


def _phases_why(d: AccessFigures) -> str:
    if d.matrix_op:
        rules = [tr("16-byte rows of {op}: one phase per 8x8 matrix", op=d.matrix_op)]
    else:
        rules = [r for g in given(d.phases_by_size) if (r := _phase_rule(g))]
    idle = given(d.idle_phases)
    if idle == 1:
        rules.append(tr("1 phase with no active lane costs nothing"))
    elif idle > 1:
        rules.append(tr("{n} phases with no active lane cost nothing", n=f"{idle:,}"))
    return tr("{ideal} per instruction ({rule})", ideal=_avg(given(d.phases), d.warp_instructions),
              rule=tr("; ").join(rules))  # the list separator: "；" in Chinese


def shared_rule(d: AccessFigures) -> str:
    """How the access's shared side is served, as its reasons name it: ``"plain"`` (LDS/STS:
    a bank delivers each distinct word once per phase), ``"matrix"`` (LDSM/STSM: one phase
    per 8x8 matrix, the same rule over its rows), ``"ldgsts"`` (cp.async: a bank takes one
    write per lane, lanes on one word are not merged), ``"atom_add"`` (ATOMS.ADD: a bank
    serves its active lanes one per wavefront) or ``"atom_inc"`` (ATOMS.POPC.INC: a bank's
    distinct words, the lanes on one word added up in one go)."""
    d = AccessFigures.of(d)
    if d.matrix_op:
        return "matrix"
    kind = kind_of(d.kind)
    if kind is not None and kind.shared_rule is not None:   # cp.async, atomic (viz.kinds)
        return kind.shared_rule(d)
    return "plain"


_WAVEFRONTS_WHY = {
    "plain": "{per} per instruction: each phase costs the most distinct 32-bit words any one bank must deliver",
    "matrix": "{per} per instruction: each phase (one 8x8 matrix) costs the most distinct 32-bit words any one "
              "bank holds among its 8 rows",
    "ldgsts": "{per} per instruction: each phase costs the most writes any one bank takes, one per lane and "
              "word (LDGSTS does not merge lanes that write the same word)",
    "atom_add": "{per} per instruction: the bank with the most active lanes serves them one per wavefront "
                "(ATOMS.ADD); lanes on different banks go together",
    "atom_inc": "{per} per instruction: the most distinct words any one bank holds (ATOMS.POPC.INC adds up the "
                "lanes on one word in one go)",
}

# (no conflict, every phase equally deep, deepest and average) per rule
_CONFLICTS_WHY = {
    "plain": ("every phase is one wavefront: no bank must deliver two distinct words in one phase (lanes that "
              "ask for the same word share it)",
              "wavefronts - phases: in every phase the busiest bank delivers {ways} distinct words ({ways}-way "
              "conflict)",
              "wavefronts - phases: in the worst phase one bank delivers {ways} distinct words ({ways}-way "
              "conflict); the busiest bank of a phase delivers {avg} on average"),
    "matrix": ("every phase is one wavefront: the 8 rows of each matrix lie on distinct banks (a row whose "
               "address several lanes give is moved once)",
               "wavefronts - phases: in every matrix the busiest bank holds {ways} distinct words of its rows "
               "({ways}-way conflict)",
               "wavefronts - phases: in the worst matrix one bank holds {ways} distinct words of its rows "
               "({ways}-way conflict); the busiest bank of a matrix holds {avg} on average"),
    "ldgsts": ("every phase is one wavefront: no bank takes two writes in one phase",
               "wavefronts - phases: in every phase the busiest bank takes {ways} writes, one per lane and word "
               "({ways}-way conflict; lanes that write the same word are not merged)",
               "wavefronts - phases: in the worst phase one bank takes {ways} writes, one per lane and word "
               "({ways}-way conflict); the busiest bank of a phase takes {avg} on average"),
    "atom_add": ("every warp instruction is one wavefront: no bank has two active lanes",
                 "wavefronts - phases: in every warp instruction the busiest bank serves {ways} lanes one after "
                 "another ({ways}-way conflict), whether they share an address or not",
                 "wavefronts - phases: in the worst warp instruction one bank serves {ways} lanes one after "
                 "another ({ways}-way conflict); the busiest bank of a warp instruction serves {avg} on average"),
    "atom_inc": ("every warp instruction is one wavefront: no bank holds two distinct words (the lanes on one "
                 "word are added up in one go)",
                 "wavefronts - phases: in every warp instruction the busiest bank holds {ways} distinct words "
                 "({ways}-way conflict)",
                 "wavefronts - phases: in the worst warp instruction one bank holds {ways} distinct words "
                 "({ways}-way conflict); the busiest bank of a warp instruction holds {avg} on average"),
}


def _wavefronts_why(d: AccessFigures) -> str:
    return tr(_WAVEFRONTS_WHY[shared_rule(d)], per=_avg(given(d.wavefronts), d.warp_instructions))


def _conflicts_why(d: AccessFigures) -> str:
    wf, ph, deepest = given(d.wavefronts), given(d.phases), given(d.max_wavefronts_per_phase)
    none, every, worst = _CONFLICTS_WHY[shared_rule(d)]
    if wf == ph:
        return tr(none)
    if wf == deepest * ph:
        return tr(every, ways=deepest)
    return tr(worst, ways=deepest, avg=_avg(wf, ph))


def _bytes_why(d: AccessFigures) -> str:
    inst, br = d.warp_instructions, d.bytes_requested
    if len(given(d.part_bytes)) == 1:
        return tr("{per} B per request: {lanes} active lanes x {size} B", per=_avg(br, inst),
                  lanes=_avg(d.active_lanes, inst), size=given(d.part_bytes)[0])
    return tr("{per} B per request: each active lane asks for {bytes} B in {n} instructions "
              "({sizes} B)", per=_avg(br, inst), bytes=given(d.element_bytes), n=len(given(d.part_bytes)),
              sizes=_sizes(d))


def _efficiency_why(d: AccessFigures) -> str:
    requested, used, moved = d.bytes_requested, given(d.bytes_used), given(d.bytes_moved)
    why = tr("every byte moved is used") if used == moved else \
        tr("{pct}% of the moved bytes are not used by the warp", pct=f"{100 * (moved - used) / moved:.1f}")
    if requested > used:
        why += tr("; {pct}% of the requested bytes are asked for again by another lane (one sector serves "
                  "them all)", pct=f"{100 * (requested - used) / requested:.1f}")
    return why


def explain_access(d: AccessFigures) -> list[tuple[str, str, str]]:
    """(figure, value, one-line why) rows for one access; the why follows the interface language.

    Each why states only what holds for this access: every number in it is one of the
    access's figures (checked by tests/test_report_reasons.py), and a rule is named only
    where it applied (the pair rule of wide loads, idle phases, partial warps). ``d``: a
    figures record (``viz.access_figures``), or an entry of ``analyze --json``'s ``accesses``."""
    d = AccessFigures.of(d)
    kind = kind_of(d.kind)
    if kind is not None and kind.reasons is not None:    # viz.kinds: a tma.load, a tile copy by the TMA
        return kind.reasons(d)
    inst = d.warp_instructions
    rows = [("warp instructions", _n(inst), _instructions_why(d))]
    if inst == 0:
        rows.append(("", "", tr("no lane is active: the warp issues nothing")))
        return rows
    lanes = d.active_lanes / inst
    rows.append(("active lanes", tr("{n}/warp", n=f"{lanes:.2f}"), _lanes_why(d)))
    if d.space == "shared":
        wf, ph = given(d.wavefronts), given(d.phases)
        rows.append(("wavefronts", _n(wf), _wavefronts_why(d)))
        rows.append(("phases", _n(ph), _phases_why(d)))
        rows.append(("bank conflicts", _n(wf - ph), _conflicts_why(d)))
        if kind is not None and kind.extra_reasons is not None:   # cp.async: its global side
            rows.extend(kind.extra_reasons(d))
    else:
        sec, lines = given(d.sectors), given(d.lines)
        rows.append(("requests", _n(inst), tr("one per warp instruction with an active lane, whatever the width")))
        rows.append(("sectors", _n(sec),
                     tr("{per} per request: the distinct 32-byte sectors the active lanes' bytes touch",
                        per=_avg(sec, inst))))
        rows.append(("lines", _n(lines), tr("{per} per request: distinct 128-byte lines (4 sectors each)",
                                            per=_avg(lines, inst))))
        rows.append(("bytes requested", _n(d.bytes_requested), _bytes_why(d)))
        rows.append(("bytes moved", _n(given(d.bytes_moved)), tr("sectors x 32 B")))
        eff = given(d.sector_efficiency) * 100
        rows.append(("sector efficiency", f"{eff:.1f}%", tr("bytes requested / bytes moved: {why}",
                                                           why=_efficiency_why(d))))
    return rows


def to_table(an: Analysis) -> str:
    sc = an.scenario
    lw = sc.launch
    dims = lambda t: "x".join(str(x) for x in t)  # noqa: E731
    out = [safe_text(sc.title) + (f"  [{safe_text(sc.name)}]" if sc.name else ""),   # the file's word: cut, escaped
           f"launch: grid {dims(lw.grid)}, block {dims(lw.block)} = {lw.threads:,} threads, "
           f"{lw.blocks * lw.warps_per_block:,} warps ({lw.warps_per_block} per block)"]
    if sc.params:
        out.append("params: " + ", ".join(f"{k} = {v}" for k, v in sc.params.items()))
    for w in warnings(sc):
        out.append(tr("warning: {w}", w=w))
    numbers = instruction_numbers(sc)
    for d in an.per_access():
        arr = sc.array(given(d.array))
        a = sc.accesses[d.index]
        loops = "".join(f"  for {lp.var} = {lp.text}" for lp in a.loops)
        when = f"  when {a.when_text}" if a.when_text else ""
        out.append("")
        out.append(f"access {d.index}: {d.matrix_op or d.op} {a.text}   ({arr.describe()}, {access_size_text(d)}){loops}{when}"
                   f"   [{numbers_text(numbers[d.index])}]")
        for name, value, why in explain_access(d):
            out.append(f"  {name:<18} {value:>14}   {why}" if name else f"  {'':<18} {'':>14}   {why}")
    out.append("")
    out.append("totals (Nsight Compute metric names):")
    for k, v in an.metrics.items():
        out.append(f"  {k:<58} {v:>14,}")
    return "\n".join(out)


_n, _avg = count_text, per_text      # the short names the reasons above use
